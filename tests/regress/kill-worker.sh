# A worker killed with SIGKILL in the middle of a job loses nothing: its
# tasks go back to the queue, a restarted worker of the same name joins,
# and the job ends with exactly the --local answer.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 30 --lambda 70 --dim 30 --generations 14 --lu 250 --seed 11 --reevaluate-parents"

mkcerts w1 w2 w3
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > "$T/local.out" ||
    fail "local run failed"
start_master
start_worker w1
start_worker w2
start_worker w3
wait_workers 3

job=$("$R3QCTL" submit es $ES --policy wq)
# Let it get going, then kill w2 while it holds work.
waitfor "'$R3QCTL' result $job | grep -qE 'generation ([3-9]|1[0-9])'" 60 ||
    fail "job made no progress"
kill -9 "$WPID_w2"
waitfor "grep -q 'worker w2 .* lost' '$T/masterd.log'" 10 ||
    fail "masterd did not notice w2 die"
ok "masterd noticed the killed worker"
wait_workers 2
start_worker w2
wait_workers 3
grep -c "worker w2 joined" "$T/masterd.log" | grep -q 2 ||
    fail "restarted w2 did not join"
ok "the restarted worker joined"

"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > "$T/dist.out"
cmp -s "$T/local.csv" "$T/dist.csv" || fail "bests differ after the kill"
answer "$T/dist.out" | cmp -s - "$(answer "$T/local.out" > "$T/l.ans"; echo "$T/l.ans")" ||
    fail "answer differs after the kill"
ok "job finished with the --local answer"
