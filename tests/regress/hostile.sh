# A worker speaks only for the work it holds.  Beside honest workers, a
# peer holding a valid worker certificate lies by hand (r3q-testpeer
# hostile) and cannot change or stall a job:
#  - results for task ids it was never given are dropped, said in a
#    rate-limited log line naming it, counted in a metric, and it is
#    disconnected; the job keeps its --local answer;
#  - a worker that fails every task it runs, each failure said three times
#    in one frame, fails no job under any policy: its tasks go to other
#    machines, and it is suspect and cooling, with the evidence shown;
#  - a worker that takes tasks and never starts them stalls neither a WQ
#    nor an RWQ job;
#  - "cancelled" results it sends by the thousand add no executions;
#  - an error text holding a newline cannot forge a line of masterd's log;
#  - an aborted job's tasks leave no warning behind;
#  - under verify = 2, a worker that answers every task with a made-up
#    output changes no answer: it is outvoted, reported and cooled down.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 20 --dim 10 --generations 6 --lu 150 --seed 7 --reevaluate-parents"

mkcerts w1 w2 bad
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
MASTER_EXTRA="http = 127.0.0.1:0
suspect_limit = 2"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
start_worker w1
start_worker w2
wait_workers 2

# hostile MODE [ARG]: run the lying peer in the background; sets HPID.
hostile() {
	"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/bad.pem" \
	    -k "$T/certs/bad.key" hostile 127.0.0.1 "$PORT" "$@" \
	    > "$T/hostile.out" 2>&1 &
	HPID=$!
	PIDS="$PIDS $HPID"
}

# same_answer JOB WHAT: the job ended with the --local answer.
same_answer() {
	timeout 120 "$R3QCTL" wait "$1" > /dev/null ||
	    fail "$2: the job did not finish: $("$R3QCTL" result "$1" | tail -n 3)"
	"$R3QCTL" result "$1" --csv "$T/dist.csv" > /dev/null
	cmp -s "$T/local.csv" "$T/dist.csv" ||
	    fail "$2: the answer differs from --local"
}

# Forged results, while generation 0 (task ids from 1) runs.
job=$("$R3QCTL" submit es $ES)
hostile forge 200
waitfor "grep -q 'closed by the master' '$T/hostile.out'" 10 ||
    fail "the forger was not disconnected: $(cat "$T/hostile.out")"
grep -q "worker bad (.*): 1 result for work it does not hold dropped" \
    "$T/masterd.log" || fail "no log line naming the forger"
n=$(grep -c "worker bad .*for work it does not hold dropped" "$T/masterd.log")
[ "$n" -le 2 ] || fail "$n log lines for one forger: not rate-limited"
grep -q "results for work this worker does not hold; disconnecting it" \
    "$T/masterd.log" || fail "no line saying the forger was disconnected"
ok "a forger's results are dropped, logged once and it is disconnected"
timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" > "$T/metrics"
grep -qE '^r3q_results_refused_total (6[4-9]|[7-9][0-9]|[1-9][0-9]{2,})$' \
    "$T/metrics" || fail "refused results not counted: $(grep refused "$T/metrics")"
grep -q '^r3q_workers_refused_total 1$' "$T/metrics" ||
    fail "the disconnected forger is not counted"
ok "the metrics count the refused results and the worker"
same_answer "$job" "forged results"
ok "the job kept its --local answer"

# A worker that fails everything, under every policy.
for pol in wq rr rwq r3q; do
	hostile failall ridge-lu
	waitfor "[ \$('$R3QCTL' workers | grep -c '^bad ') -eq 1 ]" 10 ||
	    fail "the failing worker did not join"
	# On a loaded machine one job may end before the worker has failed
	# suspect_limit tasks: up to three jobs, each with the right answer.
	for try in 1 2 3; do
		job=$("$R3QCTL" submit es $ES --policy "$pol")
		same_answer "$job" "$pol with a failing worker"
		"$R3QCTL" workers > "$T/workers"
		grep -q '^bad .* cooling ' "$T/workers" && break
	done
	grep -q '^bad .* cooling ' "$T/workers" ||
	    fail "$pol: the failing worker is not cooling: $(cat "$T/workers")"
	grep -q 'failed on it and succeeded on w[12]' "$T/workers" ||
	    fail "$pol: no evidence shown: $(cat "$T/workers")"
	kill "$HPID"
	wait "$HPID" 2>/dev/null || true
	waitfor "! '$R3QCTL' workers | grep -q '^bad '" 10 ||
	    fail "the failing worker did not leave"
	ok "$pol: a worker failing every task thrice fails no job, and cools down"
done
grep -q "worker bad suspect: task [0-9]* failed on it and succeeded on w[12]" \
    "$T/masterd.log" || fail "the log does not name the failing worker"

# A worker that holds tasks and never runs them, beside one honest worker.
kill "$WPID_w2"
wait_workers 1
for pol in wq rwq; do
	hostile silent ridge-lu
	waitfor "[ \$('$R3QCTL' workers | grep -c '^bad ') -eq 1 ]" 10 ||
	    fail "the silent worker did not join"
	job=$("$R3QCTL" submit es $ES --policy "$pol")
	same_answer "$job" "$pol beside a silent worker"
	grep -q 'tasks [1-9]' "$T/hostile.out" ||
	    fail "the silent worker was given no task"
	kill "$HPID"
	wait "$HPID" 2>/dev/null || true
	waitfor "! '$R3QCTL' workers | grep -q '^bad '" 10 ||
	    fail "the silent worker did not leave"
	ok "$pol: a worker that never starts its tasks does not stall the job"
done

# Thousands of "cancelled" results for the tasks it holds.
hostile cancelspam ridge-lu
waitfor "[ \$('$R3QCTL' workers | grep -c '^bad ') -eq 1 ]" 10 ||
    fail "the spamming worker did not join"
job=$("$R3QCTL" submit es $ES --policy r3q)
same_answer "$job" "cancelled spam"
"$R3QCTL" result "$job" --json > "$T/result.json"
execs=$(sed -n 's/.*"executions": *\([0-9]*\).*/\1/p' "$T/result.json")
done_=$(sed -n 's/.*"tasks_done": *\([0-9]*\).*/\1/p' "$T/result.json")
[ -n "$execs" ] && [ -n "$done_" ] || fail "no counts in $(cat "$T/result.json")"
[ "$execs" -lt $((2 * done_)) ] ||
    fail "$execs executions for $done_ tasks: fake cancellations were recorded"
ok "fake cancellations add no executions ($execs for $done_ tasks)"
kill "$HPID"
wait "$HPID" 2>/dev/null || true

# An error text with a newline.
hostile errorlog
wait "$HPID" || fail "errorlog peer: $(cat "$T/hostile.out")"
waitfor "grep -q 'reports: x.n12:00:00.000 masterd: job 1 cancelled by admin' '$T/masterd.log'" 5 ||
    fail "the error text was not logged"
grep -q '^12:00:00.000 masterd: job 1' "$T/masterd.log" &&
    fail "a peer forged a line of masterd's log"
grep -q 'reports: x\\n12:00' "$T/masterd.log" ||
    fail "the newline was not escaped"
ok "a peer's text stays on its own log line, escaped"

# An aborted job's pending tasks are dropped quietly.
# Long enough that a loaded machine still sees it running (50
# generations of this ES can end within one r3qctl poll); it is cancelled
# at its first progress.
job=$("$R3QCTL" submit es $ES --generations 2000)
waitfor "'$R3QCTL' result $job | grep -qE 'generation [1-9]'" 30 ||
    fail "job made no progress"
"$R3QCTL" cancel "$job" > /dev/null
sleep 0.5
grep -q 'assign of task' "$T/masterd.log" &&
    fail "warnings about an aborted job's tasks: $(grep 'assign of task' "$T/masterd.log" | head -n 3)"
master_alive
ok "no warning about an aborted job's tasks"

# A liar, under verify = 2, beside two honest workers.
start_worker w2
wait_workers 2
hostile liar ridge-lu
waitfor "[ \$('$R3QCTL' workers | grep -c '^bad ') -eq 1 ]" 10 ||
    fail "the liar did not join"
job=$("$R3QCTL" submit es $ES --verify 2)
same_answer "$job" "a liar under verify 2"
"$R3QCTL" result "$job" | grep -q 'each verified by 2 workers' ||
    fail "the result does not say the job was verified"
"$R3QCTL" workers > "$T/workers"
grep -q '^bad .* cooling ' "$T/workers" ||
    fail "the liar is not cooling: $(cat "$T/workers")"
grep -q 'disagreed with the verified one' "$T/workers" ||
    fail "no evidence against the liar: $(cat "$T/workers")"
ok "verify 2: a liar is outvoted and cools down; the answer is --local's"
"$R3QCTL" submit es $ES --verify 6 > "$T/v6.out" 2>&1 &&
    fail "verify 6 was accepted"
grep -q "verify" "$T/v6.out" || fail "verify 6: $(cat "$T/v6.out")"
ok "verify out of range is refused"
