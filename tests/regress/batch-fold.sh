# A batch job whose client closes a batch a task and waits for its result
# before the next (r3q.futures.map of one call in a loop; r3q_flush()
# after each task from C) makes a batch a task, so a job that runs for
# months has millions of batches.  masterd keeps the
# reports of its last 1,024 to 2,048 batches one by one and folds the
# older ones into the job's totals; before, it kept a report and a map
# entry a batch for as long as it ran (and a JobInfo, which carries the
# reports, grew until it passed the 16 MB frame limit).
#
# 2,100 such batches: r3qctl result counts them all, lists the last
# 1,076 after a line naming the 1,024 folded, and --json says
# generations_folded; r3qctl report says so too; r3qctl wait, which follows the job from its first
# batch, prints every batch's line across the fold; a masterd started
# again from the journal folds the same way and answers byte for byte as
# before; and a batch number the job has forgotten is still refused as
# closed (r3q-testpeer badclient forgotten).
. "${top_srcdir:-.}/tests/regress/lib.sh"

python_client tests/python
N=2100

mkcerts w1
start_master
WORKER_EXTRA="exec python = persistent $PY -m r3q.serve --any
env = PYTHONPATH=$PYTHONPATH"
start_worker w1 1
wait_workers 1

# The client says its job after its first batch, then waits for go: so
# that r3qctl wait follows it from there.
"${PYLIB[@]}" - "$N" "$T/job" "$T/go" > "$T/py.out" 2> "$T/py.err" <<'EOF' &
import os, sys, time
from r3q import futures
from r3q import _lib
import kinds

n, jobfile, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
assert list(futures.map(kinds.square, [0])) == [0]
job = _lib.lib().r3q_job_id(futures._client._state.driver.conn.job)
with open(jobfile + ".tmp", "w") as f:
    f.write("%d\n" % job)
os.rename(jobfile + ".tmp", jobfile)
while not os.path.exists(go):
    time.sleep(0.01)
for i in range(1, n):
    r = list(futures.map(kinds.square, [i]))
    assert r == [i * i], (i, r)
print("ok", job)
EOF
PYPID=$!
waitfor "[ -s '$T/job' ]" 60 || fail "the client did not start: $(cat "$T/py.err")"
job=$(cat "$T/job")
"$R3QCTL" wait "$job" > "$T/wait.out" 2>&1 &
WAITPID=$!
PIDS="$PIDS $WAITPID"
waitfor "grep -q '^gen ' '$T/wait.out'" 30 ||
    fail "r3qctl wait printed nothing: $(cat "$T/wait.out")"
touch "$T/go"
wait "$PYPID" || fail "the client failed: $(tail -n 5 "$T/py.err")"
grep -q "^ok $job\$" "$T/py.out" || fail "the client: $(cat "$T/py.out")"
waitfor "! kill -0 $WAITPID 2>/dev/null" 30 ||
    fail "r3qctl wait did not end: $(tail -n 3 "$T/wait.out")"
ok "$N batches of one task each, every result right"

# Every batch is counted; the table lists the kept ones after a line
# naming those folded.
"$R3QCTL" result "$job" > "$T/result.txt" || fail "result failed"
grep -q "^summary: job $job done, batch job .*, $N batches, $N tasks done," \
    "$T/result.txt" || fail "result's summary: $(grep summary "$T/result.txt")"
grep -q "^(batches 0-1023: folded, counted in the totals only)\$" \
    "$T/result.txt" || fail "no line for the folded batches: $(head -n 3 "$T/result.txt")"
rows=$(grep -cE '^ *[0-9]+ +- ' "$T/result.txt")
[ "$rows" -eq $((N - 1024)) ] || fail "result lists $rows batches, not $((N - 1024))"
first=$(grep -E '^ *[0-9]+ +- ' "$T/result.txt" | head -n 1 | awk '{ print $1 }')
[ "$first" -eq 1024 ] || fail "the first batch listed is $first, not 1024"
ok "r3qctl result: $N batches counted, 1,024 folded, the last $rows listed"

"$R3QCTL" result "$job" --json > "$T/result.json" || fail "result --json failed"
grep -q '"generations_folded":1024,' "$T/result.json" ||
    fail "--json has no generations_folded: $(head -c 600 "$T/result.json")"
listed=$(grep -o '"generation":' "$T/result.json" | wc -l)
[ "$listed" -eq $((N - 1024)) ] || fail "--json lists $listed batches"
grep -q "\"tasks_done\":$N," "$T/result.json" || fail "--json: tasks_done"
ok "result --json: generations_folded 1024, $listed listed"

# r3qctl report draws the batches listed and says how many were folded.
"$R3QCTL" report "$job" -o "$T/rep" > "$T/report.out" ||
    fail "report failed: $(cat "$T/report.out")"
grep -q "report.html: job $job, $N executions on 1 workers, $((N - 1024)) generations (the 1024 before them folded)\$" \
    "$T/report.out" || fail "report: $(cat "$T/report.out")"
ok "r3qctl report: the $((N - 1024)) batches listed, the 1024 folded named"

# r3qctl wait followed from the first batch: a line for each of the
# others, the folds notwithstanding, in order.
grep '^gen ' "$T/wait.out" | awk '{ print $2 }' > "$T/waitgens"
seen=$(wc -l < "$T/waitgens")
last=$(tail -n 1 "$T/waitgens")
[ "$last" -eq $((N - 1)) ] || fail "r3qctl wait's last batch is $last"
awk 'NR > 1 && $1 != prev + 1 { exit 1 } { prev = $1 }' "$T/waitgens" ||
    fail "r3qctl wait skipped batches: $(awk 'NR > 1 && $1 != p + 1 { print p, $1 } { p = $1 }' "$T/waitgens" | head -n 3)"
[ "$seen" -ge $((N - 2)) ] || fail "r3qctl wait printed $seen batches"
ok "r3qctl wait printed all $seen batches it followed, in order"

# The batch numbers a job has forgotten are still known, as runs: each
# comes back "closed", and one never opened in a gap is a new batch.
TLSC="-a $T/certs/ca.pem -c $T/certs/client.pem -k $T/certs/client.key"
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" forgotten > "$T/forgot" 2>&1 ||
    fail "forgotten: $(cat "$T/forgot")"
[ "$(grep -c '^got [0-9]* outcomes$' "$T/forgot")" -eq 2 ] &&
    grep -q '^got 5 outcomes$' "$T/forgot" ||
    fail "batches 20, 12, 9, 11, 10 were not all taken: $(cat "$T/forgot")"
for b in 1 9 10 11 12 20; do
	grep -q "^again $b: error: batch $b of job [0-9]* is closed\$" "$T/forgot" ||
	    fail "batch $b again: $(grep "^again $b:" "$T/forgot")"
done
grep -q "^again 15: answered\$" "$T/forgot" ||
    fail "batch 15, never opened: $(grep "^again 15:" "$T/forgot")"
ok "forgotten batch numbers stay closed; one never opened is new"

# A masterd started again (crash_master: kill -9, then start it again)
# loads the reports and folds them alike.
crash_master
"$R3QCTL" result "$job" --json > "$T/again.json" || fail "result after restart"
cmp -s "$T/result.json" "$T/again.json" ||
    fail "the job reads differently after a restart: $(diff "$T/result.json" "$T/again.json" | head -c 600)"
ok "after a restart, the journal's $N reports fold the same: the same answer"
master_alive
