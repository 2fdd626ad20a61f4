#!/bin/sh
# The body of tests/data/journal-vV.sh (V = 3, 4, ...): how a journal of
# schema version V and the report its masterd draws were made, with the
# masterd of that version:
#   V=4 top_builddir=/path/to/a/v4/build top_srcdir=. sh tests/data/journal-fixture.sh
# Job 1, a (4+9)-ES under R3Q on two workers, ends.  Job 2, r3qctl map echo
# of lines of 8 to 300 bytes (the longer outputs in their own rows of
# outputs), and job 3, r3qctl map synth of lines that are no synth payload
# (each task fails, with its error), keep their clients; job 4, an ES, is
# still running when masterd stops (SIGTERM).  So the file holds a
# finished job and three to resume, with results of every shape.  Then a
# fresh masterd of the same build opens it, job 1 alone, and r3qctl report
# draws job 1: what every later masterd must draw from the same journal
# (tests/regress/journal-vV.sh).
: "${V:?set V, the schema version of the build}"
. "${top_srcdir:-.}/tests/regress/lib.sh"

out=$top_srcdir/tests/data
mkcerts w1 w2
start_master
WORKER_EXTRA="delay = 2ms" start_worker w1 2
WORKER_EXTRA="speed = 0.5
delay = 2ms" start_worker w2 1
wait_workers 2
job=$("$R3QCTL" submit es --mu 4 --lambda 9 --dim 5 --generations 4 \
    --work-ms 30 --seed 2 --policy r3q)
"$R3QCTL" wait "$job" > /dev/null || fail "job 1 did not finish"

# Two map jobs whose input stays open: their clients keep them running.
mkfifo "$T/in2" "$T/in3"
"$R3QCTL" map echo "$T/in2" > "$T/map2.out" 2>&1 &
PIDS="$PIDS $!"
exec 3> "$T/in2"
for n in 8 64 65 100 300 1; do
	awk -v n="$n" 'BEGIN { s = ""; for (i = 0; i < n; i++)
	    s = s sprintf("%c", 97 + i % 26); print s }' >&3
done
waitfor "[ \$(wc -l < '$T/map2.out') -ge 6 ]" 30 ||
    fail "map echo did not answer: $(cat "$T/map2.out")"
"$R3QCTL" map synth "$T/in3" > "$T/map3.out" 2>&1 &
PIDS="$PIDS $!"
exec 4> "$T/in3"
printf 'not a payload\nnor this\n' >&4
waitfor "grep -c synth '$T/map3.out' | grep -q 2" 30 ||
    fail "map synth did not fail its tasks: $(cat "$T/map3.out")"

job4=$("$R3QCTL" submit es --mu 4 --lambda 9 --dim 5 --generations 400 \
    --work-ms 30 --seed 3 --policy r3q)
waitfor "'$R3QCTL' result '$job4' --json | grep -q '\"generation\":3,'" 30 ||
    fail "job 4 did not run"
kill -TERM "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
[ ! -e "$T/journal.db-wal" ] || fail "masterd left a WAL"
[ "$(sqlite3 "$T/journal.db" 'PRAGMA user_version')" = "$V" ] ||
    fail "this build's journal is not version $V"
cp "$T/journal.db" "$out/journal-v$V.db"
exec 3>&- 4>&-

# A fresh masterd, no worker: job 1 drawn from the journal, alone in it
# (version 3's masterd died at start on the whole file: a batch job loaded
# before an es job, "job_range_add: task id 80 out of order", mended in 4).
for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
mv "$T/masterd.log" "$T/masterd.1.log"
sqlite3 "$T/journal.db" "DELETE FROM jobs WHERE id <> $job" ||
    fail "sqlite3 could not keep job $job alone"
start_master
rm -rf "$out/journal-v$V-report"
"$R3QCTL" report "$job" -o "$out/journal-v$V-report" \
    --trace "$out/journal-v$V-report/trace.json" > /dev/null ||
    fail "r3qctl report failed"
"$R3QCTL" result "$job" --json > "$out/journal-v$V-report/result.json"
echo "made $out/journal-v$V.db (job $job done, jobs 2-$job4 running) and" \
    "$out/journal-v$V-report/"
