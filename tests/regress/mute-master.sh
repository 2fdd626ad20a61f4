# A master (or relay) that takes workerd's hello and never answers it: the
# worker does not wait for ever (it did, behind a relay whose link had just
# died: CI, relay-netns.sh); after 30 s it says so, leaves and tries again.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
start_fake_master master mute
cat > "$T/w1.conf" <<EOC
master = 127.0.0.1:$FAKE_PORT
ca = $T/certs/ca.pem
cert = $T/certs/w1.pem
key = $T/certs/w1.key
reconnect_max = 500ms
EOC
"$WORKERD" -d -v -f "$T/w1.conf" > "$T/w1.log" 2>&1 &
WPID=$!
PIDS="$PIDS $WPID"
waitfor "grep -q 'hello taken' '$T/fake.out'" 10 ||
    fail "the fake master got no hello: $(cat "$T/fake.out")"
t0=$(date +%s)
waitfor "grep -q 'did not answer our hello in 30 s' '$T/w1.log'" 45 ||
    fail "workerd still waits for a welcome: $(cat "$T/w1.log")"
dt=$(($(date +%s) - t0))
[ "$dt" -ge 25 ] || fail "workerd left after ${dt} s, not about 30 s"
waitfor "grep -q '^closed' '$T/fake.out'" 5 ||
    fail "workerd did not close the connection: $(cat "$T/fake.out")"
# It tries again (the fake master serves one connection: now refused).
waitfor "grep -q 'connection refused by 127.0.0.1:$FAKE_PORT' '$T/w1.log'" 10 ||
    fail "workerd did not try again: $(tail -n 3 "$T/w1.log")"
kill -0 "$WPID" || fail "workerd exited"
ok "a master that never answers the hello: workerd leaves after ${dt} s and tries again"
