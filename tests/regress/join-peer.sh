# A join token is a credential, and a joining workerd gives it to masterd
# only (masterd.conf(5), "Join tokens"; workerd(8), JOINING).  Each peer
# below holds a certificate of the token's own CA that is valid for the
# host the joiner dials, as an outsider could come by one (a relay's, or
# a worker's named after the host), and listens where the joiner looks
# for its master: the joiner must refuse it, say why, and send it nothing
# (the token's secret never reaches the peer).  Then the token leaves the
# joined workerd's command line (ps, /proc/PID/cmdline) and may come from
# the standard input, and a configuration file holding a token (join =)
# that others may read is refused, as a private key is.  As root: a
# state directory that cannot be written (a read-only file system, as
# under a unit without StateDirectory=) is refused before the token is
# spent; a join by hand as root in a directory of the daemons' user
# leaves files that user owns; workerd -n -u USER checks that USER can
# read the configuration file itself.
. "${top_srcdir:-.}/tests/regress/lib.sh"

"$MKCERTS" --relay r1 "$T/certs" localhost w1 > /dev/null
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key"
start_master
tok=$("$R3QCTL" token create --uses 4 --ttl 1h 2> /dev/null) ||
    fail "token create"
secret=$(echo "$tok" | cut -d. -f3)
conf=
[ -e /usr/local/etc/r3q/workerd.conf ] && conf="-f /dev/null"

# A TLS server with certificate NAME of the CA that records what it is
# sent in $T/peer-NAME.out; sets SPORT.
peer_start() {
	: > "$T/peer-$1.out"
	# (s_server ends at the end of its input: keep that open.)
	sleep 60 | openssl s_server -accept 127.0.0.1:0 -cert "$C/$1.pem" \
	    -key "$C/$1.key" -cert_chain "$C/ca.pem" -tls1_3 -naccept 1 \
	    > "$T/peer-$1.out" 2>&1 &
	PIDS="$PIDS $!"
	waitfor "grep -q '^ACCEPT' '$T/peer-$1.out'" 10 ||
	    fail "openssl s_server with $1's certificate did not start"
	SPORT=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$T/peer-$1.out")
}

# 1. A relay's certificate (OU=relay, SAN localhost and 127.0.0.1).
for host in 127.0.0.1 localhost; do
	peer_start r1
	rc=0
	timeout 30 "$WORKERD" -d $conf -N j1 --state-dir "$T/s1" \
	    --join "$host:$SPORT" "$tok" > "$T/j1.log" 2>&1 || rc=$?
	[ "$rc" = 78 ] && grep -q "the peer at $host is not a master (role 'relay', name 'r1')" "$T/j1.log" ||
	    fail "a joiner at a relay's certificate ($host): $rc: $(tail -n 3 "$T/j1.log")"
	sleep 0.5
	! grep -aq "$secret" "$T/peer-r1.out" ||
	    fail "the joiner sent its token to a relay's certificate ($host)"
	[ ! -e "$T/s1/worker.key" ] || fail "a refused joiner kept a key"
done
ok "a joiner refuses a relay's certificate, sends it nothing: $(grep -o 'is not a master.*name .r1.' "$T/j1.log")"

# 2. A worker's certificate named after the host (CN=localhost, no
# subjectAltName): the host is never taken from a CN.
peer_start localhost
rc=0
timeout 30 "$WORKERD" -d $conf -N j2 --state-dir "$T/s2" \
    --join "localhost:$SPORT" "$tok" > "$T/j2.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "refusing this master" "$T/j2.log" ||
    fail "a joiner at a worker certificate CN=localhost: $rc: $(tail -n 3 "$T/j2.log")"
sleep 0.5
! grep -aq "$secret" "$T/peer-localhost.out" ||
    fail "the joiner sent its token to a worker's certificate CN=localhost"
ok "a joiner refuses a worker's certificate for CN=localhost: $(grep -o 'does not verify.*: refusing' "$T/j2.log" | head -n 1)"

# The token was not spent on them.
"$R3QCTL" token list | grep -qE " 4/4 valid\$" ||
    fail "the refused joins spent the token: $("$R3QCTL" token list)"

# 3. The real master: the token leaves the command line once read.
"$WORKERD" -d $conf -N j3 --state-dir "$T/s3" \
    --join "127.0.0.1:$PORT" "$tok" > "$T/j3.log" 2>&1 &
J3=$!
PIDS="$PIDS $J3"
wait_workers 1
tr '\0' ' ' < "/proc/$J3/cmdline" > "$T/cmdline"
! grep -q "$secret" "$T/cmdline" ||
    fail "the token is in workerd's command line: $(cat "$T/cmdline")"
grep -q -- "--join 127.0.0.1:$PORT x" "$T/cmdline" ||
    fail "workerd's command line: $(cat "$T/cmdline")"
ok "the token leaves /proc/PID/cmdline once read: $(cat "$T/cmdline" | sed 's/ *$//')"

# 4. ... or comes from the standard input ("-").
echo "$tok" | "$WORKERD" -d $conf -N j4 --state-dir "$T/s4" \
    --join "127.0.0.1:$PORT" - > "$T/j4.log" 2>&1 &
PIDS="$PIDS $!"
wait_workers 2
rc=0
"$WORKERD" -n $conf --state-dir "$T/s5" --join "127.0.0.1:$PORT" - \
    < /dev/null > "$T/j5.log" 2>&1 || rc=$?
[ "$rc" = 64 ] && grep -q "no token on the standard input" "$T/j5.log" ||
    fail "--join - with no input: $rc: $(cat "$T/j5.log")"
ok "--join HOST:PORT - reads the token from the standard input"

# 5. join = in a file others may read is refused; 0640 is fine.
printf 'join = 127.0.0.1:%s %s\nstate_dir = %s\n' "$PORT" "$tok" "$T/s6" \
    > "$T/join.conf"
chmod 644 "$T/join.conf"
rc=0
"$WORKERD" -n -f "$T/join.conf" > "$T/j6.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "$T/join.conf: permissions 0644 are too open for a file that holds a join token" "$T/j6.log" ||
    fail "a 0644 workerd.conf with join =: $rc: $(cat "$T/j6.log")"
! grep -q "$secret" "$T/j6.log" || fail "the refusal repeats the token"
chmod 640 "$T/join.conf"
"$WORKERD" -n -f "$T/join.conf" > "$T/j6.log" 2>&1 ||
    fail "a 0640 workerd.conf with join =: $(cat "$T/j6.log")"
ok "a workerd.conf with join = that others may read is refused; 0640 passes"

# 6.-8. As root only.
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: a read-only state_dir, files for its owner, -n -u on the file: they need root"
	exit 0
fi
if small_fs 1m "a read-only state_dir"; then
	mount -o remount,ro "$JFS" || fail "cannot remount $JFS read-only"
	rc=0
	timeout 30 "$WORKERD" -d $conf -N j6 --state-dir "$JFS" \
	    --join "127.0.0.1:$PORT" "$tok" > "$T/j6.log" 2>&1 || rc=$?
	[ "$rc" = 78 ] && grep -q "state_dir $JFS cannot be written by uid 0: Read-only file system; so no token is spent" "$T/j6.log" ||
	    fail "a read-only state_dir: $rc: $(cat "$T/j6.log")"
	"$R3QCTL" token list | grep -qE " 2/4 valid\$" ||
	    fail "a join into a read-only state_dir spent a use: $("$R3QCTL" token list)"
	ok "a state_dir that cannot be written is refused before the token is spent"
fi

chmod 711 "$T"
mkdir -m 700 "$T/s7"
chown nobody: "$T/s7"
"$WORKERD" -d $conf -N j7 --state-dir "$T/s7" \
    --join "127.0.0.1:$PORT" "$tok" > "$T/j7.log" 2>&1 &
PIDS="$PIDS $!"
wait_workers 3
for f in worker.key worker.pem ca.pem master; do
	[ "$(stat -c %U "$T/s7/$f")" = nobody ] ||
	    fail "root's join left $f owned by $(stat -c %U:%G "$T/s7/$f")"
done
[ "$(stat -c %a "$T/s7/worker.key")" = 600 ] || fail "worker.key is not 0600"
ok "root's join in a directory of user nobody leaves files nobody owns (key 0600)"

printf 'join = 127.0.0.1:%s %s\nstate_dir = %s\n' "$PORT" "$tok" "$T/s8" \
    > "$T/j8.conf"
chmod 600 "$T/j8.conf"
rc=0
"$WORKERD" -n -u nobody -f "$T/j8.conf" > "$T/j8.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "$T/j8.conf: user nobody cannot read it: Permission denied" "$T/j8.log" ||
    fail "-n -u nobody of a 0600 root file: $rc: $(cat "$T/j8.log")"
chgrp nogroup "$T/j8.conf"
chmod 640 "$T/j8.conf"
"$WORKERD" -n -u nobody -f "$T/j8.conf" > "$T/j8.log" 2>&1 ||
    fail "-n -u nobody of a root:nogroup 0640 file: $(cat "$T/j8.log")"
ok "workerd -n -u USER refuses a configuration file USER cannot read"
