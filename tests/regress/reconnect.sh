# When masterd goes away, workerd keeps trying with capped exponential
# backoff and rejoins by itself once masterd is back; a job then runs to
# the --local answer.  workerd refuses a "master" whose certificate does not
# carry the host it dialled, saying so and exiting 78, and masterd drops a
# peer that connects and says nothing once handshake_timeout has passed.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 20 --dim 10 --generations 5 --seed 5"

mkcerts w1 w2
MASTER_EXTRA="handshake_timeout = 500ms"
start_master
start_worker w1
start_worker w2
wait_workers 2

# A peer that connects and says nothing is dropped after the timeout.
timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; sleep 2" || true
grep -qE '127\.0\.0\.1:[0-9]+ \(unauthenticated\): no TLS handshake within handshake_timeout' "$T/masterd.log" ||
    fail "a silent peer was not dropped"
ok "a silent peer is dropped after handshake_timeout"

kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
waitfor "grep -q 'lost the master' '$T/w1.log'" 10 || fail "w1 did not notice"
# Let a few attempts fail, so backoff is exercised.
sleep 1.5
n=$(grep -c 'cannot reach the master' "$T/w1.log" || true)
[ "$n" -ge 2 ] || fail "w1 made $n reconnection attempts while masterd was down"
MASTER_EXTRA="handshake_timeout = 500ms"
sed -i "s/^listen = .*/listen = 127.0.0.1:$PORT/" "$T/masterd.conf"
"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd2.log" 2>&1 &
MASTER_PID=$!
PIDS="$PIDS $MASTER_PID"
waitfor "grep -q 'listening on' '$T/masterd2.log'" 10 || fail "masterd did not restart"
wait_workers 2
grep -q "the master restarted" "$T/w1.log" || fail "w1 did not see a new master"
ok "workers rejoined the restarted masterd by themselves ($n failed attempts)"

"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null
"$R3QCTL" es $ES --csv "$T/dist.csv" --quiet > /dev/null || fail "job failed"
cmp -s "$T/local.csv" "$T/dist.csv" || fail "answer differs after reconnect"
ok "a job after the restart has the --local answer"

# A fake master presenting w2's certificate, which is not valid for
# 127.0.0.1: workerd must refuse it.
start_fake_master w2 ridge-lu
fake=$FAKE_PID
fport=$FAKE_PORT
sed "s/^master = .*/master = 127.0.0.1:$fport/" "$T/w1.conf" > "$T/wf.conf"
rc=0
timeout 10 "$WORKERD" -d -f "$T/wf.conf" > "$T/wf.log" 2>&1 || rc=$?
grep -q "master certificate name 'w2' does not match 127.0.0.1" "$T/wf.log" ||
    fail "workerd accepted a master certificate without its address: $(cat "$T/wf.log")"
grep -q "joined master" "$T/wf.log" && fail "workerd joined an impostor master"
[ "$rc" -eq 78 ] || fail "workerd exited $rc after a certificate name mismatch"
ok "workerd refuses a master certificate not valid for the host it dialled"
