#!/bin/sh
# The body of tests/regress/journal-vV.sh (V = 3, 4, ...; COUNT4 the SQL
# that counts job 4's results in version V's file).  A journal of schema
# version V, written by the masterd of that version
# (tests/data/journal-vV.db, made by tests/data/journal-vV.sh), is
# upgraded at open to version 5.  masterd starts on it although a batch
# job comes before an es job in it (the masterd of version 3 died there:
# "job_range_add: task id 80 out of order").  r3qctl report and result
# draw its finished job byte for byte as that masterd drew it
# (tests/data/journal-vV-report/).  Its running es job resumes from the
# upgraded results and gives the --local answer, generation by
# generation; its batch jobs wait for their clients.  After a kill -9 and
# a restart, the same again.
: "${V:?}" "${COUNT4:?}"
. "${top_srcdir:-.}/tests/regress/lib.sh"

command -v sqlite3 > /dev/null || fail "sqlite3 missing (sqlite3)"
ref=$top_srcdir/tests/data/journal-v$V-report
cp "$top_srcdir/tests/data/journal-v$V.db" "$T/journal.db"
chmod 600 "$T/journal.db"
[ "$(sqlite3 "$T/journal.db" 'PRAGMA user_version')" = "$V" ] ||
    fail "the fixture is not a version $V journal"
n4=$(sqlite3 "$T/journal.db" "$COUNT4")
mkcerts w1 w2
start_master
sleep 0.3
master_alive
grep -q "job 4 resumed at generation 4 with $n4 results from the journal" \
    "$T/masterd.log" ||
    fail "job 4 did not resume with its $n4 results: $(grep resumed "$T/masterd.log")"
for b in 2 3; do
	grep -q "batch job $b resumed from the journal" "$T/masterd.log" ||
	    fail "batch job $b did not resume"
done
ok "a version $V journal opens: batch jobs 2 and 3, es job 4 with its $n4 results"

"$R3QCTL" report 1 -o "$T/rep" --trace "$T/rep/trace.json" > /dev/null ||
    fail "r3qctl report 1 failed"
"$R3QCTL" result 1 --json > "$T/rep/result.json" ||
    fail "r3qctl result 1 failed"
for f in report.html gantt.svg convergence.svg breakdown.svg trace.json \
    result.json; do
	cmp -s "$ref/$f" "$T/rep/$f" ||
	    fail "$f of the upgraded journal differs: $(diff "$ref/$f" "$T/rep/$f" | head -n 5)"
done
ok "the finished job of a version $V journal draws byte for byte as before"

# Job 4 resumes on two workers; once past generation 9, it is cancelled
# and its bests so far are the --local run's, bit for bit.
ES="--mu 4 --lambda 9 --dim 5 --work-ms 30 --seed 3"
"$R3QCTL" es --local $ES --generations 9 --csv "$T/local.csv" > /dev/null ||
    fail "local run failed"
WORKER_EXTRA="delay = 2ms" start_worker w1 2
WORKER_EXTRA="speed = 0.5
delay = 2ms" start_worker w2 1
wait_workers 2
waitfor "'$R3QCTL' result 4 --json | grep -q '\"generation\":6,'" 30 ||
    fail "job 4 did not go on from generation 4"
crash_master
wait_workers 2
grep -q "job 4 resumed at generation" "$T/masterd.log" ||
    fail "job 4 did not resume after kill -9"
waitfor "'$R3QCTL' result 4 --json | grep -q '\"generation\":9,'" 30 ||
    fail "job 4 did not reach generation 9 after kill -9"
"$R3QCTL" cancel 4 > /dev/null || fail "cancel 4 failed"
"$R3QCTL" result 4 --csv "$T/job4.csv" > /dev/null 2>&1 || true
head -n 11 "$T/job4.csv" | cmp -s - "$T/local.csv" ||
    fail "job 4's generations 0-9 differ from --local: $(diff "$T/local.csv" "$T/job4.csv" | head -n 5)"
ok "es job 4 resumed from packed results, across a kill -9: generations 0-9 as --local"

[ "$(sqlite3 "$T/journal.db" 'PRAGMA user_version')" = 5 ] ||
    fail "the journal is not version 5 after the upgrade"
"$R3QCTL" jobs > "$T/jobs.out"
for b in 2 3; do
	grep -qE "^$b +running" "$T/jobs.out" ||
	    fail "batch job $b is not running: $(cat "$T/jobs.out")"
done
ok "batch jobs 2 and 3 still wait for their clients"
master_alive
