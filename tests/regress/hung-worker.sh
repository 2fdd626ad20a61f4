# A hung worker (SIGSTOP: its connection stays open, nothing comes from it)
# is declared lost after heartbeat_timeout; its tasks go back to the queue
# and the WQ job -- which would otherwise wait for it forever -- ends with
# the --local answer.  Resumed, the worker notices and rejoins.  Live
# workers show their last heartbeat in r3qctl workers.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# 60 generations (some 5 s): the worker must hang while the job runs, and
# on a loaded machine a poll of r3qctl can take a second.
ES="--mu 20 --lambda 40 --dim 20 --generations 60 --lu 250 --seed 4 --reevaluate-parents"

mkcerts w1 w2 w3
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
MASTER_EXTRA="heartbeat_timeout = 1500ms"
start_master
WORKER_EXTRA="heartbeat = 200ms"
start_worker w1
start_worker w2
start_worker w3
wait_workers 3
sleep 0.5
"$R3QCTL" workers > "$T/workers"
awk 'NR > 1 && $12 !~ /^[0-9.]+s$/ { bad = 1 } END { exit bad }' "$T/workers" ||
    fail "no last heartbeat shown: $(cat "$T/workers")"
ok "r3qctl workers shows each worker's last heartbeat"

job=$("$R3QCTL" submit es $ES --policy wq)
waitfor "'$R3QCTL' result $job | grep -qE 'generation ([2-9]|[1-5][0-9])\b'" 60 ||
    fail "job made no progress: $("$R3QCTL" result "$job" | head -n 3)"
kill -STOP "$WPID_w2"
waitfor "grep -q 'worker w2 .*nothing for [0-9]* ms (heartbeat_timeout); declaring it lost' '$T/masterd.log'" 10 ||
    fail "the hung worker was not declared lost"
ok "a hung worker is declared lost after heartbeat_timeout"
"$R3QCTL" wait "$job" > /dev/null || fail "the job did not finish"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "answer differs after the hang"
ok "the job finished with the --local answer"

kill -CONT "$WPID_w2"
wait_workers 3
ok "the resumed worker rejoined"
