#!/bin/sh
# journal_delay (issue 26, "durability for free"): messages to workers do
# not wait for the journal's commit, which follows within journal_delay;
# whatever reaches a client or r3qctl waits for it.  With journal_delay =
# 1s, the longest allowed, so that a missing commit would show:
#   1. an ES job commits far less often than with journal_delay = 0 (every
#      commit is a line of trace = journal, and r3q_journal_commits_total
#      in /metrics counts them);
#   2. a generation r3qctl was told of is journaled: killed with -9 right
#      after r3qctl printed generation K, masterd resumes the job with
#      every result of generations 0..K from the journal, although up to a
#      second of accepted results may have waited for their commit;
#   3. the job killed in the middle ends after the restart with the answer
#      of an undisturbed run (--local), every generation's best included;
#   4. the end of a job that r3qctl printed survives a kill -9 right after.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 30 --dim 10 --generations 40 --seed 5 --reevaluate-parents --work-ms 2"

mkcerts w1 w2
"$R3QCTL" es --local $ES --csv "$T/local.csv" > "$T/local.out" ||
    fail "local run failed"
answer "$T/local.out" > "$T/local.ans"
[ -s "$T/local.ans" ] || fail "local run printed no answer"

# Stop masterd cleanly (its journal stays) and start it again on the same
# port with journal_delay $1 (crash_master's restart, after a SIGTERM).
restart_master() {
	kill "$MASTER_PID" 2>/dev/null || true
	wait "$MASTER_PID" 2>/dev/null || true
	sed -i "s/^journal_delay = .*/journal_delay = $1/" "$T/masterd.conf"
	crash_master
}
commits() {
	grep -c 'trace journal .* commit of' "$1" || true
}

# 1. Commits: journal_delay 0 against 1s, the same job.
MASTER_EXTRA="trace = journal
http = 127.0.0.1:0
journal_delay = 0"
start_master
start_worker w1 2
start_worker w2 2
wait_workers 2
"$R3QCTL" es $ES --csv "$T/d0.csv" > "$T/d0.out" || fail "job (journal_delay 0) failed"
cmp -s "$T/local.csv" "$T/d0.csv" || fail "journal_delay 0: bests differ from --local"
c0=$(commits "$T/masterd.log")
restart_master 1s
wait_workers 2
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log" | tail -n 1)
# metric NAME: its value in masterd's /metrics.
metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    tr -d '\r' | sed -n "s/^$1 //p"
}
m0=$(metric r3q_journal_commits_total)
_off=$(wc -c < "$T/masterd.log")
"$R3QCTL" es $ES --csv "$T/d1.csv" > "$T/d1.out" || fail "job (journal_delay 1s) failed"
d1job=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$T/d1.out" | head -n 1)
cmp -s "$T/local.csv" "$T/d1.csv" || fail "journal_delay 1s: bests differ from --local"
m1=$(metric r3q_journal_commits_total)
tail -c +"$((_off + 1))" "$T/masterd.log" > "$T/d1.log"
c1=$(commits "$T/d1.log")
[ -n "$m0" ] && [ -n "$m1" ] || fail "no r3q_journal_commits_total in /metrics"
[ "$((m1 - m0))" -ge "$((c1 - 2))" ] && [ "$((m1 - m0))" -le "$((c1 + 2))" ] ||
    fail "r3q_journal_commits_total went up by $((m1 - m0)), the trace has $c1 commits"
echo "# commits: $c0 with journal_delay 0, $c1 with 1s (41 generations)"
# Every generation's report to r3qctl commits; results alone do not.
[ "$c1" -le 60 ] || fail "journal_delay 1s: $c1 commits for 41 generations"
[ "$((c1 * 3))" -lt "$c0" ] ||
    fail "journal_delay 1s: $c1 commits, not far fewer than $c0 with 0"
ok "journal_delay 1s: $c1 commits where 0 makes $c0, the same answer"
# Each generation's report reached r3qctl once, in order, before the end.
gens_once() {
	sed -n 's/^gen  *\([0-9]*\) .*/\1/p' "$1" |
	    awk -v n="$2" '$1 != NR - 1 { bad = 1 } END { exit (bad || NR != n) }'
}
for f in d0 d1; do
	gens_once "$T/$f.out" 41 ||
	    fail "$f: r3qctl es did not print generations 0-40 once each: $(grep -c '^gen' "$T/$f.out") lines"
done
ok "r3qctl es printed every generation once, in order"

# 2. What r3qctl printed is journaled: kill -9 right after generation K.
job=$("$R3QCTL" submit es $ES)
"$R3QCTL" wait "$job" > "$T/wait.out" 2>&1 &
wpid=$!
waitfor "grep -q '^gen  *8 ' '$T/wait.out'" 30 ||
    fail "job $job did not reach generation 8: $(cat "$T/wait.out")"
kill -9 "$MASTER_PID"
wait "$wpid" 2>/dev/null || true
k=$(sed -n 's/^gen  *\([0-9]*\) .*/\1/p' "$T/wait.out" | tail -n 1)
crash_master
waitfor "grep -q 'job $job resumed at generation' '$T/masterd.log'" 10 ||
    fail "job $job did not resume after kill -9"
g=$(sed -n "s/.*job $job resumed at generation \([0-9]*\) with \([0-9]*\) results.*/\1/p" \
    "$T/masterd.log" | head -n 1)
n=$(sed -n "s/.*job $job resumed at generation \([0-9]*\) with \([0-9]*\) results.*/\2/p" \
    "$T/masterd.log" | head -n 1)
# The results generations 0..k rest on: their tasks, as the undisturbed
# job of part 1 counted them.
need=$("$R3QCTL" result "$d1job" --json | grep -oE '"generation":[0-9]+,[^}]*' |
    sed -n 's/^"generation":\([0-9]*\),.*"tasks":\([0-9]*\).*/\1 \2/p' |
    awk -v k="$k" '$1 <= k { s += $2 } END { print s + 0 }')
[ "$need" -gt 0 ] || fail "no generation report of job $d1job"
[ -n "$g" ] && [ "$g" -ge "$k" ] && [ "$n" -ge "$need" ] ||
    fail "r3qctl printed generation $k (resting on $need results), but masterd resumed job $job at generation $g with $n results: it told r3qctl what it had not journaled"
ok "r3qctl printed generation $k ($need results); after kill -9 the job resumed at $g with $n"

# 3. It ends with the undisturbed answer.
"$R3QCTL" wait "$job" > "$T/wait2.out" 2>&1 || fail "wait $job after the restart failed: $(cat "$T/wait2.out")"
gens_once "$T/wait2.out" 41 ||
    fail "r3qctl wait, attached mid-job, did not print generations 0-40 once each"
"$R3QCTL" result "$job" --csv "$T/res.csv" > "$T/res.out" ||
    fail "result $job failed"
cmp -s "$T/local.csv" "$T/res.csv" ||
    fail "job $job after kill -9: bests differ from --local"
answer "$T/res.out" | cmp -s - "$T/local.ans" ||
    fail "job $job after kill -9: answer differs from --local"
ok "job $job, killed at generation $k, ends with the --local answer"

# 4. The end of a job r3qctl printed survives kill -9 at once.
wait_workers 2
"$R3QCTL" es $ES > "$T/end.out" || fail "last job failed"
kill -9 "$MASTER_PID"
job=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$T/end.out" | head -n 1)
crash_master
"$R3QCTL" result "$job" --json > "$T/end.json" || fail "result $job failed"
grep -q '"state":"done"' "$T/end.json" ||
    fail "job $job, done for r3qctl, is not done after kill -9: $(head -c 200 "$T/end.json")"
grep -q "job $job resumed" "$T/masterd.log" &&
    fail "job $job, done for r3qctl, resumed after kill -9"
ok "job $job, done for r3qctl, is done after kill -9"

master_alive
