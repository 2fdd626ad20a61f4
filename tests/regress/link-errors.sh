# workerd's errors on its link to the master say what to fix.  A transient
# one is retried with backoff: a refused connection reads "connection
# refused by HOST:PORT", not an OpenSSL error code, and workerd keeps
# trying.  One that retrying cannot cure is logged as permanent, with what
# to fix, and workerd exits 78 (EX_CONFIG): a master certificate not
# issued for the host dialled, a master from another CA ("certificate
# verify failed: unknown CA"), a master that rejects our certificate
# ("the master rejected our certificate: unknown CA") and a master that
# refuses our hello.  With retry_permanent = yes workerd keeps retrying
# instead, and the systemd units do not restart a daemon that exited 78.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2
"$MKCERTS" "$T/other" w9 > /dev/null
cat "$T/certs/ca.pem" "$T/other/ca.pem" > "$T/both.pem"

# wconf NAME PORT CA CERT [EXTRA]: $T/NAME.conf.
wconf() {
	printf 'master = 127.0.0.1:%s\nca = %s\ncert = %s.pem\nkey = %s.key\nreconnect_max = 500ms\n%b' \
	    "$2" "$3" "$4" "$4" "${5:-}" > "$T/$1.conf"
}

# permanent NAME MESSAGE: workerd on $T/NAME.conf logs MESSAGE as
# permanent, says what to fix, and exits 78.
permanent() {
	rc=0
	timeout 15 "$WORKERD" -d -v -f "$T/$1.conf" > "$T/$1.log" 2>&1 || rc=$?
	grep -qF -- "cannot use the master: $2" "$T/$1.log" ||
	    fail "$1: wanted '$2': $(cat "$T/$1.log")"
	grep -q "permanent: retrying cannot cure this; " "$T/$1.log" ||
	    fail "$1: not said to be permanent: $(cat "$T/$1.log")"
	grep -q "error:0000" "$T/$1.log" && fail "$1: an OpenSSL code: $(cat "$T/$1.log")"
	[ "$rc" -eq 78 ] || fail "$1: workerd exited $rc, not 78"
	ok "permanent, exit 78: $2"
}

# Refused: nothing listens on a port masterd just left.
start_master
dead=$PORT
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
wconf refused "$dead" "$T/certs/ca.pem" "$T/certs/w1"
"$WORKERD" -d -f "$T/refused.conf" > "$T/refused.log" 2>&1 &
wpid=$!
PIDS="$PIDS $wpid"
waitfor "[ \$(grep -c 'connection refused by 127.0.0.1:$dead' '$T/refused.log') -ge 3 ]" 10 ||
    fail "no 'connection refused by': $(cat "$T/refused.log")"
grep -q "error:0000\|TLS error" "$T/refused.log" &&
    fail "a refused connection reads as a TLS error: $(cat "$T/refused.log")"
kill -0 "$wpid" || fail "workerd gave up on a refused connection"
kill "$wpid"
ok "a refused connection says so and is retried"

mv "$T/masterd.log" "$T/masterd.0.log"
start_master

# A master certificate not issued for the host dialled (a fake master
# with w2's certificate on 127.0.0.1).
start_fake_master w2 synth
wconf name "$FAKE_PORT" "$T/certs/ca.pem" "$T/certs/w1"
permanent name "master certificate name 'w2' does not match 127.0.0.1"
grep -q "set 'master' to a name the master's certificate carries" "$T/name.log" ||
    fail "no fix for a name mismatch: $(cat "$T/name.log")"

# A master from another CA than ours.
wconf unknown "$PORT" "$T/other/ca.pem" "$T/other/w9"
permanent unknown "certificate verify failed: unknown CA: the certificate of 127.0.0.1:$PORT"
grep -qF "set 'ca' (now $T/other/ca.pem) to the CA that issued" "$T/unknown.log" ||
    fail "no fix for an unknown CA: $(cat "$T/unknown.log")"

# We trust the master's CA, but the master does not trust ours.
wconf rejected "$PORT" "$T/both.pem" "$T/other/w9"
permanent rejected "the master rejected our certificate: unknown CA"

# The master refuses our hello: a name that is not the certificate's.
wconf hello "$PORT" "$T/certs/ca.pem" "$T/certs/w1" 'name = impostor\n'
permanent hello "the master 127.0.0.1:$PORT refused us: worker says it is 'impostor'"

# retry_permanent = yes: the same refusal, retried.
wconf retry "$PORT" "$T/both.pem" "$T/other/w9" 'retry_permanent = yes\n'
"$WORKERD" -d -f "$T/retry.conf" > "$T/retry.log" 2>&1 &
wpid=$!
PIDS="$PIDS $wpid"
waitfor "[ \$(grep -c 'the master rejected our certificate' '$T/retry.log') -ge 3 ]" 10 ||
    fail "retry_permanent = yes did not retry: $(cat "$T/retry.log")"
grep -q "retrying anyway: retry_permanent = yes" "$T/retry.log" ||
    fail "retry_permanent = yes: $(cat "$T/retry.log")"
kill -0 "$wpid" || fail "workerd exited despite retry_permanent = yes"
kill "$wpid"
ok "retry_permanent = yes keeps retrying a permanent refusal"
master_alive

for u in masterd workerd; do
	grep -q '^RestartPreventExitStatus=78$' "$top_srcdir/etc/$u.service.in" ||
	    fail "$u.service.in restarts after status 78"
done
ok "the units do not restart a daemon that exited 78"
