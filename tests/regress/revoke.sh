# Revocation (issue 24, "Identity"): `mkcerts --revoke NAME` adds NAME's
# certificate to DIR/crl.pem; masterd and workerd read `crl` at start and
# at every SIGHUP.  At the reload masterd disconnects the revoked worker
# and the revoked client, one log line each, keeps the others, and
# refuses the revoked ones from then on (the worker exits 78 saying its
# certificate is revoked).  A CRL that does not parse, or that another CA
# signed, refuses the reload and the old one stays in force; at start-up
# it refuses to start (78), and -n says why.  A new certificate for the
# same name joins.  workerd checks the master's certificate against its
# crl too: a revoked master is refused by a new worker, and dropped by a
# running one at its reload, and so does libr3q (r3qctl map) with
# R3Q_CRL.  A CRL past its next update is taken, with a warning, and
# still revokes.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2 w3
C=$T/certs
[ -f "$C/crl.pem" ] || fail "mkcerts made no crl.pem"
openssl crl -in "$C/crl.pem" -noout -CAfile "$C/ca.pem" 2> "$T/err" ||
    fail "crl.pem does not verify: $(cat "$T/err")"
! openssl crl -in "$C/crl.pem" -noout -text | grep -q 'Serial Number' ||
    fail "a new crl.pem revokes something"
ok "mkcerts writes an empty crl.pem signed by the CA"

MASTER_EXTRA="crl = $C/crl.pem"
WORKER_EXTRA="crl = $C/crl.pem
retry_permanent = no"
start_master
grep -q "$C/crl.pem: 0 certificates revoked" "$T/masterd.log" ||
    fail "masterd does not say it read the CRL"
start_worker w1
start_worker w2
wait_workers 2
"$TESTPEER" -a "$C/ca.pem" -c "$C/client.pem" -k "$C/client.key" \
    roles 127.0.0.1 "$PORT" hold > "$T/hold.out" 2>&1 &
HOLD=$!
PIDS="$PIDS $HOLD"
waitfor "grep -q connected '$T/hold.out'" 10 || fail "the client did not connect"
ok "with an empty crl, workers and a client connect"

cp "$C/client.pem" "$T/oldclient.pem"
cp "$C/client.key" "$T/oldclient.key"
cp "$C/w1.pem" "$T/oldw1.pem"
cp "$C/w1.key" "$T/oldw1.key"
"$MKCERTS" --revoke w1 --revoke client "$C" > "$T/revoke.out" 2>&1 ||
    fail "mkcerts --revoke: $(cat "$T/revoke.out")"
sn=$(openssl x509 -in "$T/oldw1.pem" -noout -serial | cut -d= -f2)
grep -q "revoked $C/w1.pem (serial $sn)" "$T/revoke.out" &&
    grep -q "wrote $C/crl.pem (2 revoked)" "$T/revoke.out" ||
    fail "mkcerts --revoke said: $(cat "$T/revoke.out")"
openssl crl -in "$C/crl.pem" -noout -text | grep -q "Serial Number: $sn" ||
    fail "crl.pem does not list w1's serial $sn"
! cmp -s "$C/client.pem" "$T/oldclient.pem" ||
    fail "the revoked client certificate was not replaced"
"$MKCERTS" --revoke w1 "$C" > "$T/again.out" 2>&1 &&
    grep -q 'was revoked already' "$T/again.out" ||
    fail "revoking twice: $(cat "$T/again.out")"
ok "mkcerts --revoke w1 --revoke client: crl.pem lists them, a new client certificate is issued"

kill -HUP "$MASTER_PID"
waitfor "grep -q 'worker w1 (.*): its certificate is now revoked by $C/crl.pem: /O=R3Q/OU=worker/CN=w1 (serial $sn), revoked on' '$T/masterd.log'" 10 ||
    fail "masterd did not drop w1 at the reload"
waitfor "grep -q 'client client (.*): its certificate is now revoked' '$T/masterd.log'" 10 ||
    fail "masterd did not drop the client at the reload"
[ "$(grep -c 'is now revoked' "$T/masterd.log")" -eq 2 ] ||
    fail "not one line each: $(grep 'is now revoked' "$T/masterd.log")"
waitfor "grep -q 'closed: your certificate is revoked' '$T/hold.out'" 10 ||
    fail "the client was not told: $(cat "$T/hold.out")"
wait_workers 1
"$R3QCTL" workers | grep -q '^w2 ' || fail "w2 was dropped too"
ok "at the reload masterd disconnects the revoked worker and client (one line each), keeps w2"

# w1 tries again and is refused in the handshake: it exits 78.
rc=0
waitfor "! kill -0 $WPID_w1" 20 || fail "workerd w1 is still running"
wait "$WPID_w1" || rc=$?
[ "$rc" -eq 78 ] || fail "workerd w1 exited $rc, not 78"
grep -q 'the master rejected our certificate: certificate revoked' "$T/w1.log" &&
    grep -q "our certificate ($C/w1.pem) is revoked" "$T/w1.log" ||
    fail "w1 does not say why: $(tail -n 5 "$T/w1.log")"
grep -q "certificate revoked: /O=R3Q/OU=worker/CN=w1 (serial $sn)" "$T/masterd.log" ||
    fail "masterd does not name the revoked certificate it refused"
ok "the revoked worker is refused afterwards and exits 78 saying its certificate is revoked"

# hold CERT KEY: a client connection the master must refuse.
refused_client() {
	timeout 30 "$TESTPEER" -a "$C/ca.pem" -c "$1" -k "$2" \
	    roles 127.0.0.1 "$PORT" hold > "$T/refused.out" 2>&1 || true
	grep -q 'closed: TLS: .*revoked\|handshake failed' "$T/refused.out" ||
	    fail "$3: $(cat "$T/refused.out")"
}
refused_client "$T/oldclient.pem" "$T/oldclient.key" "the revoked client was let in"
ok "the revoked client is refused afterwards"

# A CRL that does not parse, or that is another CA's: the reload is
# refused and the old CRL stays.
cp "$C/crl.pem" "$T/good-crl.pem"
"$MKCERTS" "$T/other" x > /dev/null
for bad in junk other; do
	case $bad in
	junk) printf -- '-----BEGIN X509 CRL-----\nbm90IGEgY3Js\n-----END X509 CRL-----\n' > "$C/crl.pem"
	      want="$C/crl.pem: cannot read the CRL" ;;
	other) cp "$T/other/crl.pem" "$C/crl.pem"
	       want="$C/crl.pem: not signed by a CA in $C/ca.pem" ;;
	esac
	n=$(grep -c 'keeping the running configuration' "$T/masterd.log" || true)
	kill -HUP "$MASTER_PID"
	waitfor "[ \$(grep -c 'keeping the running configuration' '$T/masterd.log') -gt $n ]" 10 ||
	    fail "$bad CRL: the reload was not refused"
	grep "keeping the running configuration" "$T/masterd.log" | tail -n 1 |
	    grep -qF "reload: $want" ||
	    fail "$bad CRL: $(grep 'keeping the running' "$T/masterd.log" | tail -n 1)"
	master_alive
	refused_client "$T/oldclient.pem" "$T/oldclient.key" \
	    "after a $bad CRL the old CRL is no longer in force"
	"$R3QCTL" workers | grep -q '^w2 ' || fail "$bad CRL: w2 was dropped"
	ok "a $bad CRL refuses the reload ($want); the old one stays in force"

	rc=0
	"$MASTERD" -n -f "$T/masterd.conf" > "$T/n.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -qF "$want" "$T/n.out" ||
	    fail "masterd -n with a $bad CRL: status $rc: $(cat "$T/n.out")"
	sed "s/^listen = .*/listen = 127.0.0.1:0/; s|^control = .*|control = $T/ctl2.sock|" \
	    "$T/masterd.conf" > "$T/m2.conf"
	rc=0
	timeout 10 "$MASTERD" -d -f "$T/m2.conf" > "$T/m2.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -qF "$want" "$T/m2.out" ||
	    fail "masterd started with a $bad CRL: status $rc: $(cat "$T/m2.out")"
	rc=0
	"$WORKERD" -n -f "$T/w2.conf" > "$T/n.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -qF "$want" "$T/n.out" ||
	    fail "workerd -n with a $bad CRL: status $rc: $(cat "$T/n.out")"
	ok "with a $bad CRL, masterd and workerd -n and masterd's start-up exit 78"
done
cp "$T/good-crl.pem" "$C/crl.pem"

# A new certificate for w1 joins.
"$MKCERTS" "$C" w1 > /dev/null
start_worker w1
wait_workers 2
ok "a new certificate for w1 joins"

# workerd checks the master's certificate against its crl.
cp "$C/master.pem" "$T/oldmaster.pem"
"$MKCERTS" --revoke master "$C" > "$T/revoke.out" 2>&1 ||
    fail "mkcerts --revoke master: $(cat "$T/revoke.out")"
grep -q "wrote $C/master.pem" "$T/revoke.out" ||
    fail "the revoked master certificate was not replaced: $(cat "$T/revoke.out")"
start_worker w3
rc=0
waitfor "! kill -0 $WPID_w3" 20 || fail "w3 took a revoked master"
wait "$WPID_w3" || rc=$?
[ "$rc" -eq 78 ] && grep -q "the certificate of 127.0.0.1:$PORT is revoked (our crl)" "$T/w3.log" ||
    fail "w3: status $rc: $(tail -n 5 "$T/w3.log")"
ok "a new worker refuses the revoked master's certificate (78)"
kill -HUP "$WPID_w2"
waitfor "grep -q \"the master's certificate is now revoked by $C/crl.pem\" '$T/w2.log'" 10 ||
    fail "w2 kept its revoked master at its reload: $(tail -n 5 "$T/w2.log")"
ok "a running worker drops its revoked master at its reload"
master_alive

# libr3q checks the master's certificate against its crl too (R3Q_CRL,
# or crl in R3Q_CONFIG's file): the same master is refused with it and
# taken without it.
tlsmap() {
	R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$C/ca.pem R3Q_CERT=$C/client.pem \
	    R3Q_KEY=$C/client.key R3Q_CONTROL=$T/none.sock \
	    timeout 60 "$R3QCTL" map echo "$@"
}
rc=0
echo hi | R3Q_CRL=$C/crl.pem tlsmap > "$T/lc.out" 2> "$T/lc.err" || rc=$?
[ "$rc" -ne 0 ] || fail "libr3q took a revoked master with R3Q_CRL"
grep -q "TLS handshake with 127.0.0.1: certificate revoked (crl $C/crl.pem)" "$T/lc.err" ||
    fail "libr3q with R3Q_CRL: $(cat "$T/lc.err")"
printf 'crl = %s\n' "$C/crl.pem" > "$T/client.conf"
rc=0
echo hi | R3Q_CONFIG=$T/client.conf tlsmap > "$T/lc.out" 2> "$T/lc.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "certificate revoked (crl $C/crl.pem)" "$T/lc.err" ||
    fail "libr3q with crl in R3Q_CONFIG: status $rc: $(cat "$T/lc.err")"
echo hi | tlsmap > "$T/lc.out" 2> "$T/lc.err" ||
    fail "without a crl libr3q refused the master: $(cat "$T/lc.err")"
[ "$(cat "$T/lc.out")" = hi ] || fail "without a crl: $(cat "$T/lc.out")"
rc=0
echo hi | R3Q_CRL=$T/none.pem tlsmap > "$T/lc.out" 2> "$T/lc.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "$T/none.pem: No such file or directory" "$T/lc.err" ||
    fail "libr3q with a missing crl: status $rc: $(cat "$T/lc.err")"
echo "not a crl" > "$T/bad.pem"
rc=0
echo hi | R3Q_CRL=$T/bad.pem tlsmap > "$T/lc.out" 2> "$T/lc.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "$T/bad.pem: " "$T/lc.err" ||
    fail "libr3q with a bad crl: status $rc: $(cat "$T/lc.err")"
ok "libr3q refuses a revoked master with R3Q_CRL or crl in its config file; a crl that cannot be read is an error naming it"

# A CRL past its next update still revokes what it lists (refusing every
# peer would stop the cluster); masterd says it is out of date.
cat > "$T/crl.cnf" <<EOC
[ca]
default_ca = r3q
[r3q]
database = $C/ca.db
crlnumber = $C/crlnumber
certificate = $C/ca.pem
private_key = $C/ca.key
EOC
openssl ca -batch -config "$T/crl.cnf" -md sha256 -gencrl \
    -crl_lastupdate 20200101000000Z -crl_nextupdate 20200201000000Z \
    -out "$C/crl.pem" > "$T/gencrl.out" 2>&1 ||
    fail "openssl ca -gencrl: $(cat "$T/gencrl.out")"
openssl crl -in "$C/crl.pem" -noout -nextupdate | grep -q 2020 ||
    fail "the CRL made is not out of date"
n=$(grep -c 'reloaded ' "$T/masterd.log")
kill -HUP "$MASTER_PID"
waitfor "[ \$(grep -c 'reloaded ' '$T/masterd.log') -gt $n ]" 10 ||
    fail "a reload with an out-of-date CRL was refused: $(tail -n 3 "$T/masterd.log")"
grep -q "CRL $C/crl.pem: its next update was due on 2020-02-01 00:00:00 UTC" "$T/masterd.log" ||
    fail "masterd does not say the CRL is out of date"
refused_client "$T/oldclient.pem" "$T/oldclient.key" \
    "an out-of-date CRL let the revoked client in"
"$R3QCTL" workers | grep -q '^w1 ' || fail "w1 (new certificate) was dropped"
ok "a CRL past its next update is taken with a warning and still revokes"
master_alive
