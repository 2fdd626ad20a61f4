# A journal of schema version 2 (one task execution a row, written by the
# masterd of that version: tests/data/journal-v2.db, made by
# tests/data/journal-v2.sh) is upgraded at open, and r3qctl report and
# result draw its finished job byte for byte as that masterd drew it
# (tests/data/journal-v2-report/).  Its running job resumes; what the new
# masterd journals for it (executions packed a loop pass a row) adds to
# its Gantt chart and draws the same report before and after a kill -9
# and restart.
. "${top_srcdir:-.}/tests/regress/lib.sh"

command -v sqlite3 > /dev/null || fail "sqlite3 missing (sqlite3)"
ref=$top_srcdir/tests/data/journal-v2-report
cp "$top_srcdir/tests/data/journal-v2.db" "$T/journal.db"
chmod 600 "$T/journal.db"
[ "$(sqlite3 "$T/journal.db" 'PRAGMA user_version')" = 2 ] ||
    fail "the fixture is not a version 2 journal"
mkcerts w1 w2
start_master
"$R3QCTL" report 1 -o "$T/rep" --trace "$T/rep/trace.json" > /dev/null ||
    fail "r3qctl report 1 failed"
"$R3QCTL" result 1 --json > "$T/rep/result.json" ||
    fail "r3qctl result 1 failed"
for f in report.html gantt.svg convergence.svg breakdown.svg trace.json \
    result.json; do
	cmp -s "$ref/$f" "$T/rep/$f" ||
	    fail "$f of the upgraded journal differs: $(diff "$ref/$f" "$T/rep/$f" | head -n 5)"
done
ok "the finished job of a version 2 journal draws byte for byte as before"

# Job 2 resumes on two workers; a few generations later it is cancelled.
# (result exits non-zero for a running job)
"$R3QCTL" result 2 --json > "$T/r2.json" || true
"$R3QCTL" report 2 -o "$T/r2" > /dev/null || fail "r3qctl report 2 failed"
bars0=$(grep -o 'class="bar"' "$T/r2/gantt.svg" | wc -l)
gen0=$(grep -oE '"generation":[0-9]+' "$T/r2.json" | tail -n 1 | cut -d: -f2)
WORKER_EXTRA="delay = 2ms" start_worker w1 2
WORKER_EXTRA="speed = 0.5
delay = 2ms" start_worker w2 1
wait_workers 2
waitfor "'$R3QCTL' result 2 --json | grep -q '\"generation\":$((gen0 + 3)),'" \
    $((30 * SAN_SLOW)) || fail "job 2 did not resume"
"$R3QCTL" cancel 2 > /dev/null || fail "r3qctl cancel 2 failed"
waitfor "'$R3QCTL' result 2 --json | grep -q '\"state\":\"cancelled\"'" 10 ||
    fail "job 2 not cancelled: $("$R3QCTL" result 2)"
# No worker left to report a late execution between the two reports.
# shellcheck disable=SC2154
kill -9 "$WPID_w1" "$WPID_w2"
waitfor "[ \$('$R3QCTL' workers | tail -n +2 | wc -l) -eq 0 ]" 15 ||
    fail "the workers are still listed: $("$R3QCTL" workers)"
"$R3QCTL" report 2 -o "$T/a" --trace "$T/a/trace.json" > /dev/null ||
    fail "r3qctl report 2 failed"
bars=$(grep -o 'class="bar"' "$T/a/gantt.svg" | wc -l)
[ "$bars" -gt "$bars0" ] || fail "$bars bars after the resume, $bars0 before"
[ "$(grep -o '"ph":"X"' "$T/a/trace.json" | wc -l)" -eq "$bars" ] ||
    fail "trace events differ from the $bars bars"
ok "the resumed job draws its executions from before and after the upgrade ($bars0, then $bars)"

crash_master
"$R3QCTL" report 2 -o "$T/b" --trace "$T/b/trace.json" > /dev/null ||
    fail "r3qctl report 2 after kill -9 failed"
for f in report.html gantt.svg convergence.svg breakdown.svg trace.json; do
	cmp -s "$T/a/$f" "$T/b/$f" ||
	    fail "$f of job 2 differs after kill -9: $(diff "$T/a/$f" "$T/b/$f" | head -n 5)"
done
"$R3QCTL" report 1 -o "$T/c" > /dev/null || fail "r3qctl report 1 failed"
for f in report.html gantt.svg; do
	cmp -s "$ref/$f" "$T/c/$f" || fail "$f of job 1 differs after kill -9"
done
ok "after kill -9 both jobs draw the same reports"
