# Relays (issue 20): workers behind a relay workerd, on loopback.  masterd,
# a relay r1 (a workerd with relay_listen and an OU=relay certificate,
# which runs tasks too), w1 and w2 behind it, w3 direct.  An ES job
# through the relay gives the --local answer; r3qctl workers shows the
# path ("w1 via r1"); the relay killed with SIGKILL mid-job loses its
# workers at once (one line, not a heartbeat_timeout each), and once it
# is back the job ends with the --local answer.  A worker with a list of
# masters fails over to the next (here: straight to the master).  Trust:
# a worker certificate cannot be a relay (workerd refuses to start, and
# masterd refuses relay messages from it), and a relay cannot open a
# stream for a name that did not prove itself to it.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 20 --lambda 60 --dim 20 --generations 12 --lu 300 --seed 5 --reevaluate-parents"

"$MKCERTS" --relay r1 "$T/certs" w1 w2 w3 w4 w5 > /dev/null
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > "$T/local.out" ||
    fail "local run failed"
answer "$T/local.out" > "$T/local.ans"
start_master


# A worker certificate cannot make a relay.
cat > "$T/bad.conf" <<EOC
master = 127.0.0.1:$PORT
ca = $T/certs/ca.pem
cert = $T/certs/w4.pem
key = $T/certs/w4.key
relay_listen = 127.0.0.1:0
EOC
rc=0
"$WORKERD" -d -f "$T/bad.conf" > "$T/bad.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "relay" "$T/bad.log" ||
    fail "workerd made a relay of a worker certificate (status $rc): $(cat "$T/bad.log")"
ok "a worker certificate cannot run a relay: $(head -n 1 "$T/bad.log")"

start_relay r1
RELAY_PORT=$RPORT
PORT_SAVE=$PORT
PORT=$RELAY_PORT
start_worker w1
start_worker w2
PORT=$PORT_SAVE
start_worker w3
wait_workers 4
"$R3QCTL" workers > "$T/workers.out"
grep -q '^w1 via r1 ' "$T/workers.out" && grep -q '^w2 via r1 ' "$T/workers.out" &&
    grep -q '^w3 ' "$T/workers.out" && ! grep -q '^w3 via' "$T/workers.out" &&
    grep -q '^r1 ' "$T/workers.out" || fail "workers: $(cat "$T/workers.out")"
ok "r3qctl workers shows the path: $(grep -c ' via r1 ' "$T/workers.out") workers via r1"

job=$("$R3QCTL" submit es $ES --policy wq)
"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish"
"$R3QCTL" result "$job" --csv "$T/d1.csv" > "$T/d1.out"
cmp -s "$T/local.csv" "$T/d1.csv" || fail "bests differ through the relay"
answer "$T/d1.out" | cmp -s - "$T/local.ans" || fail "answer differs through the relay"
"$R3QCTL" workers > "$T/workers.out"
for w in w1 w2; do
	awk -v w=$w '$1 == w && $2 == "via" { exit !($11 > 0) }' "$T/workers.out" ||
	    fail "$w did no task through the relay: $(cat "$T/workers.out")"
done
ok "an ES job through the relay gives the --local answer; w1 and w2 did tasks"

# w4 lists the relay first, then the master itself.
PORT_SAVE=$PORT
PORT="$RELAY_PORT, 127.0.0.1:$PORT_SAVE"
start_worker w4
PORT=$PORT_SAVE
wait_workers 5
"$R3QCTL" workers | grep -q '^w4 via r1 ' || fail "w4 did not join through the relay: $("$R3QCTL" workers)"

# The relay killed mid-job: its workers are lost at once, w4 fails over
# to the master, and the job still gives the --local answer once the
# relay is back.
job=$("$R3QCTL" submit es $ES --policy wq)
waitfor "'$R3QCTL' result $job | grep -qE 'generation ([3-9]|1[0-9])'" 60 ||
    fail "job made no progress"
t0=$(kill9_at "$WPID_r1")
# 3 workers, or 2 when w4's failover to the master itself (which drops
# its connection through r1) is read before r1's end of file.
waitfor "grep -qE 'relay r1 .* gone: its [23] workers lost with it' '$T/masterd.log'" 10 ||
    fail "masterd did not lose r1's workers at once"
t1=$(sed -n 's/^\([0-9:.]*\) masterd: relay r1 .* gone: .*/\1/p' "$T/masterd.log" | tail -n 1)
# The log's clock against date's: both local time of day.
ms=$(tod_ms "$t0" "$t1")
# Issue 20's target is < 50 ms for a broken TCP link (the relay's death
# is an EOF or a reset at once); the bound here is generous for a loaded
# machine, and still far below one heartbeat_timeout.
awk -v ms="$ms" 'BEGIN { exit !(ms < 2000) }' ||
    fail "masterd lost r1's workers ${ms} ms after the kill (target < 50 ms)"
ok "relay killed: masterd lost its workers at once, ${ms} ms after the kill (target < 50 ms)"
echo "# relay-detect-ms $ms"
waitfor "'$R3QCTL' workers | grep -q '^w4 .*127.0.0.1'" 20 &&
    ! "$R3QCTL" workers | grep -q '^w4 via' ||
    fail "w4 did not fail over to the master: $("$R3QCTL" workers)"
grep -q 'trying the next master in the list' "$T/w4.log" ||
    fail "w4 did not say it tried the next address"
ok "w4 failed over to the next address of its list, the master"
RELAY_ADDR=127.0.0.1:$RELAY_PORT start_relay r1
waitfor "[ \$('$R3QCTL' workers | grep -c ' via r1 ') -eq 2 ]" 30 ||
    fail "w1, w2 did not come back through the restarted relay: $("$R3QCTL" workers)"
grep -q 'relay r1 lost its master\|lost the master' "$T/w1.log" ||
    fail "w1 did not log why it reconnects"
ok "w1 and w2 came back through the restarted relay"
"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish after the relay came back"
"$R3QCTL" result "$job" --csv "$T/d2.csv" > "$T/d2.out"
cmp -s "$T/local.csv" "$T/d2.csv" || fail "bests differ after the relay was killed"
answer "$T/d2.out" | cmp -s - "$T/local.ans" || fail "answer differs after the relay was killed"
ok "job finished with the --local answer after the relay's death and return"
master_alive

# Trust.  Through the relay, w5 (a worker certificate) tries every message
# type: relay_control and relay_data reach the master inside w5's own
# stream, and are refused as from a worker; no stream opens for a name
# that did not prove itself to the relay.
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/w5.pem" -k "$T/certs/w5.key" \
    roles 127.0.0.1 "$RELAY_PORT" worker > "$T/roles.out" 2>&1 ||
    fail "roles through the relay: $(grep -E 'FAIL|tried|:' "$T/roles.out" | head -n 5)"
grep -qx 'worker relay_control refused' "$T/roles.out" &&
    grep -qx 'worker relay_data refused' "$T/roles.out" &&
    grep -qx 'worker heartbeat accepted' "$T/roles.out" ||
    fail "roles through the relay: $(cat "$T/roles.out")"
grep -q 'unexpected relay_control message from a worker' "$T/masterd.log" ||
    fail "masterd did not log the refused relay_control"
"$R3QCTL" workers > "$T/workers.out"
[ "$(tail -n +2 "$T/workers.out" | awk '{ print $1 }' | sort | tr '\n' ' ')" = "r1 w1 w2 w3 w4 " ] ||
    fail "unexpected workers after the trust test: $(cat "$T/workers.out")"
ok "a worker behind the relay cannot speak as a relay: relay_control and relay_data refused, no name asserted"
# Directly, a worker certificate's relay messages are refused too
# (roles.sh tries every type; here the two that matter).
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/w5.pem" -k "$T/certs/w5.key" \
    roles 127.0.0.1 "$PORT" worker > "$T/roles2.out" 2>&1 ||
    fail "roles at the master: $(grep -E 'FAIL|tried' "$T/roles2.out")"
grep -qx 'worker relay_control refused' "$T/roles2.out" ||
    fail "a worker certificate sent relay_control to the master"
ok "a worker certificate cannot pose as a relay at the master"
master_alive
