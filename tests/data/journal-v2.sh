#!/bin/sh
# How tests/data/journal-v2.db and tests/data/journal-v2-report/ were made,
# with the masterd of schema version 2 (one task execution a row of spans):
#   top_builddir=/path/to/a/v2/build top_srcdir=. sh tests/data/journal-v2.sh
# Job 1, a (4+9)-ES under R3Q on two workers (one of 2 CPUs, one of 1 at
# half speed, 2 ms delay: replicas and withdrawn copies), ends; job 2 is
# still running when masterd stops (SIGTERM), so the file holds a finished
# job and one to resume.  Then a fresh masterd of the same build opens the
# file and r3qctl report draws job 1: those files are what every later
# masterd must draw from the same journal (tests/regress/journal-v2.sh).
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
job2=$("$R3QCTL" submit es --mu 4 --lambda 9 --dim 5 --generations 400 \
    --work-ms 30 --seed 3 --policy r3q)
waitfor "'$R3QCTL' result '$job2' --json | grep -q '\"generation\":3,'" 30 ||
    fail "job 2 did not run"
kill -TERM "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
[ ! -e "$T/journal.db-wal" ] || fail "masterd left a WAL"
cp "$T/journal.db" "$out/journal-v2.db"

# A fresh masterd, no worker: job 1 drawn from the journal.
for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
mv "$T/masterd.log" "$T/masterd.1.log"
start_master
rm -rf "$out/journal-v2-report"
"$R3QCTL" report "$job" -o "$out/journal-v2-report" \
    --trace "$out/journal-v2-report/trace.json" > /dev/null ||
    fail "r3qctl report failed"
"$R3QCTL" result "$job" --json > "$out/journal-v2-report/result.json"
echo "made $out/journal-v2.db (job $job done, job $job2 running) and" \
    "$out/journal-v2-report/"
