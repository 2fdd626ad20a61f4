# Keys and expiry (issue 24, "Identity").  A private key that its group or
# others may read is refused, as OpenSSH refuses one ("permissions 0644
# for 'x.key' are too open"): by masterd -n, workerd -n and their
# start-up (status 78), by a reload (which keeps the running files), and
# by libr3q (r3qctl over TLS); 0600 and 0400 pass.  Both daemons warn 30
# days before their certificate or the CA expires, at start and at every
# reload; masterd exports the dates as r3q_cert_expiry_seconds and each
# worker's as r3q_worker_cert_expiry_seconds; r3qctl workers marks a
# worker whose certificate expires within 30 days and says when, and
# does not mark one with 100 days left.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# A CA of 20 days and certificates of 10: every date is near.
"$MKCERTS" --ca-days 20 --days 10 "$T/certs" w1 > /dev/null
"$MKCERTS" --days 100 "$T/certs" w2 > /dev/null
C=$T/certs
# Whole days left are rounded down from whole seconds: read within the
# second they were made, the certificates have 10 days left, not 9 (the
# CI of 362acc7 under ASan, where masterd started 0.9 s after mkcerts).
sleep 1

# refused DAEMON CONF KEY MODE: -n and start-up exit 78 on a key of MODE.
refused() {
	chmod "$4" "$3"
	want="permissions 0$4 for '$3' are too open"
	for how in -n -d; do
		rc=0
		if [ "$1" = masterd ]; then bin=$MASTERD; else bin=$WORKERD; fi
		timeout 10 "$bin" "$how" -f "$2" > "$T/out" 2>&1 || rc=$?
		[ "$rc" -eq 78 ] && grep -qF "$want" "$T/out" ||
		    fail "$1 $how with a key of mode $4: status $rc: $(cat "$T/out")"
	done
	said=$(grep -o 'permissions .*' "$T/out" | head -n 1)
	chmod 600 "$3"
}

printf 'listen = 127.0.0.1:0\ncontrol = %s\njournal = none\nca = %s\ncert = %s\nkey = %s\n' \
    "$T/n.sock" "$C/ca.pem" "$C/master.pem" "$C/master.key" > "$T/mn.conf"
printf 'master = 127.0.0.1:1\nca = %s\ncert = %s\nkey = %s\n' \
    "$C/ca.pem" "$C/w1.pem" "$C/w1.key" > "$T/wn.conf"
refused masterd "$T/mn.conf" "$C/master.key" 644
refused masterd "$T/mn.conf" "$C/master.key" 640
refused workerd "$T/wn.conf" "$C/w1.key" 640
refused workerd "$T/wn.conf" "$C/w1.key" 604
chmod 400 "$C/w1.key"
"$WORKERD" -n -f "$T/wn.conf" > "$T/out" 2>&1 || fail "workerd -n refused a 0400 key: $(cat "$T/out")"
chmod 600 "$C/w1.key"
"$MASTERD" -n -f "$T/mn.conf" > "$T/out" 2>&1 || fail "masterd -n refused a 0600 key: $(cat "$T/out")"
ok "keys of mode 0644, 0640, 0604 refused by -n and start-up (78): $said"

MASTER_EXTRA="http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
[ -n "$HTTP_PORT" ] || fail "masterd did not say where HTTP listens"

# The key is loosened while masterd runs: the reload is refused.
chmod 644 "$C/master.key"
kill -HUP "$MASTER_PID"
waitfor "grep -q \"reload: permissions 0644 for '$C/master.key' are too open.*keeping the running configuration\" '$T/masterd.log'" 10 ||
    fail "a reload with a loose key was not refused: $(tail -n 3 "$T/masterd.log")"
chmod 600 "$C/master.key"
master_alive
ok "a reload with a key of mode 0644 is refused, masterd runs on"

# libr3q, for r3qctl over TLS (r3qctl map is a libr3q client).
chmod 644 "$C/client.key"
rc=0
echo 1 | R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$C/ca.pem R3Q_CERT=$C/client.pem \
    R3Q_KEY=$C/client.key timeout 30 "$R3QCTL" map echo > "$T/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -qF "permissions 0644 for '$C/client.key' are too open" "$T/out" ||
    fail "r3qctl over TLS with a key of mode 0644: status $rc: $(cat "$T/out")"
chmod 600 "$C/client.key"
ok "libr3q (r3qctl map over TLS) refuses a client key of mode 0644"

# Expiry warnings.
end() { date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }
grep -q "certificate $C/master.pem expires in 9 days, on .*: issue masterd a new one" "$T/masterd.log" ||
    fail "masterd did not warn of its certificate: $(grep -i expire "$T/masterd.log")"
grep -q "CA certificate $C/ca.pem expires in 19 days" "$T/masterd.log" ||
    fail "masterd did not warn of the CA: $(grep -i expire "$T/masterd.log")"
n=$(grep -c "CA certificate $C/ca.pem expires" "$T/masterd.log")
kill -HUP "$MASTER_PID"
waitfor "[ \$(grep -c 'CA certificate $C/ca.pem expires' '$T/masterd.log') -gt $n ]" 10 ||
    fail "masterd did not warn again at the reload"
ok "masterd warns of its certificate (9 days) and the CA (19 days) at start and at a reload"

start_worker w1
start_worker w2
# (wait_workers counts lines, and w1's certificate adds one.)
waitfor "[ \$('$R3QCTL' workers | grep -cE '^w[12] ') -eq 2 ]" 15 ||
    fail "w1 and w2 did not join: $("$R3QCTL" workers)"
waitfor "grep -q 'certificate $C/w1.pem expires in 9 days' '$T/w1.log'" 10 ||
    fail "workerd did not warn of its certificate: $(grep -i expire "$T/w1.log")"
grep -q "CA certificate $C/ca.pem expires in 19 days" "$T/w1.log" ||
    fail "workerd did not warn of the CA"
! grep -q "certificate $C/w2.pem expires" "$T/w2.log" ||
    fail "workerd w2 warned of a certificate with 100 days left"
n=$(grep -c "certificate $C/w1.pem expires" "$T/w1.log")
kill -HUP "$WPID_w1"
waitfor "[ \$(grep -c 'certificate $C/w1.pem expires' '$T/w1.log') -gt $n ]" 10 ||
    fail "workerd did not warn again at the reload"
ok "workerd warns of its certificate and the CA at start and at a reload, not of one with 100 days"

"$R3QCTL" workers > "$T/workers"
grep -qE '^w1 .* 9d! ' "$T/workers" || fail "w1 is not marked: $(cat "$T/workers")"
grep -qE '^w2 .* 99d ' "$T/workers" || fail "w2's certificate: $(cat "$T/workers")"
grep -q '^w1: its certificate expires in 9 days, on ' "$T/workers" ||
    fail "r3qctl workers does not say when w1's certificate expires"
! grep -q '^w2: its certificate' "$T/workers" || fail "w2 flagged"
echo hi | R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$C/ca.pem R3Q_CERT=$C/client.pem \
    R3Q_KEY=$C/client.key timeout 30 "$R3QCTL" map echo > "$T/out" 2>&1 &&
    [ "$(cat "$T/out")" = hi ] || fail "r3qctl map over TLS with a 0600 key: $(cat "$T/out")"
ok "r3qctl workers marks w1 (9d!) and says when its certificate expires; w2 (99d) is not marked"

timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" > "$T/metrics"
for kv in "r3q_cert_expiry_seconds{cert=\"master\"} $(end "$C/master.pem")" \
    "r3q_cert_expiry_seconds{cert=\"ca\"} $(end "$C/ca.pem")" \
    "r3q_worker_cert_expiry_seconds{worker=\"w1\"} $(end "$C/w1.pem")" \
    "r3q_worker_cert_expiry_seconds{worker=\"w2\"} $(end "$C/w2.pem")"; do
	grep -qxF "$kv" "$T/metrics" ||
	    fail "/metrics lacks '$kv': $(grep cert_expiry "$T/metrics")"
done
ok "/metrics: r3q_cert_expiry_seconds (master, ca) and r3q_worker_cert_expiry_seconds match the certificates"
