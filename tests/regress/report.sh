# r3qctl report: the Gantt chart has one lane per worker slot and one bar
# per task execution of the job (as r3qctl result --json counts them),
# every file is well-formed XML, the trace is one event per execution, and
# after masterd restarts the same report comes out of its journal.
. "${top_srcdir:-.}/tests/regress/lib.sh"

command -v xmllint > /dev/null || fail "xmllint missing (libxml2-utils)"
mkcerts w1 w2
start_master
WORKER_EXTRA="delay = 2ms" start_worker w1 2
WORKER_EXTRA="speed = 0.5
delay = 2ms" start_worker w2 1
wait_workers 2
job=$("$R3QCTL" submit es --mu 4 --lambda 9 --dim 5 --generations 4 \
    --work-ms 60 --seed 2 --policy r3q)
"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish"
# A losing copy still running when the job ended is one more execution
# when it stops: count them once the workers hold and run nothing.
waitfor "'$R3QCTL' workers | awk 'NR > 1 && (\$7 != 0 || \$8 != 0) { bad = 1 } END { exit bad }'" 10 ||
    fail "copies left on the workers: $("$R3QCTL" workers)"
# An interrupted copy is counted when its worker reports it, which can
# come after the core counts it as no longer running: read the count
# until it has stayed the same for a second.
execs=-1
for _i in $(seq 1 50); do
	"$R3QCTL" result "$job" --json > "$T/result.json"
	_n=$(grep -oE '"executions":[0-9]+' "$T/result.json" | cut -d: -f2)
	if [ "$_n" = "$execs" ]; then
		_same=$((_same + 1))
		[ "$_same" -ge 4 ] && break
	else
		execs=$_n
		_same=0
	fi
	sleep 0.25
done
[ "${execs:-0}" -ge 13 ] || fail "too few executions: $execs"

"$R3QCTL" report "$job" -o "$T/rep" --trace "$T/trace.json" > "$T/rep.out" ||
    fail "r3qctl report failed"
for f in report.html gantt.svg convergence.svg breakdown.svg; do
	xmllint --noout "$T/rep/$f" 2> "$T/xml.err" ||
	    fail "$f is not well-formed: $(cat "$T/xml.err")"
done
ok "report.html and the three SVG files are well-formed"
grep -q '2.0 ms one way' "$T/rep/report.html" ||
    fail "the summary lacks the workers' emulated delay"
lanes=$(grep -o 'class="lane"' "$T/rep/gantt.svg" | wc -l)
[ "$lanes" -eq 3 ] || fail "$lanes lanes for 3 worker slots"
bars=$(grep -o 'class="bar"' "$T/rep/gantt.svg" | wc -l)
[ "$bars" -eq "$execs" ] || fail "$bars bars for $execs executions"
ok "the Gantt chart has one lane per slot and one bar per execution ($bars)"
grep -q 'data-replica="1"' "$T/rep/gantt.svg" ||
    fail "no replica in the Gantt chart of an R3Q job"
[ "$(grep -o '"ph":"X"' "$T/trace.json" | wc -l)" -eq "$execs" ] ||
    fail "trace events differ from the executions"
grep -q '"traceEvents"' "$T/trace.json" || fail "not a trace-event file"
ok "the trace has one complete event per execution"

"$R3QCTL" report "$job" -o "$T/zoom" --generations 2-3 > /dev/null ||
    fail "zoomed report failed"
zb=$(grep -o 'class="bar"' "$T/zoom/gantt.svg" | wc -l)
[ "$zb" -gt 0 ] && [ "$zb" -lt "$bars" ] || fail "zoom kept $zb of $bars bars"
grep -o 'data-gen="[0-9]*"' "$T/zoom/gantt.svg" | grep -qv 'data-gen="[23]"' &&
    fail "zoom to 2-3 shows other generations"
ok "--generations 2-3 draws only those generations"
rc=0
"$R3QCTL" report "$job" --generations 3-1 > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 64 ] || fail "a bad range exited $rc"
rc=0
"$R3QCTL" report 999 -o "$T/none" > "$T/none.err" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "no such job 999" "$T/none.err" ||
    fail "report of an unknown job: rc $rc $(cat "$T/none.err")"
ok "bad ranges and unknown jobs are refused"

crash_master
"$R3QCTL" report "$job" -o "$T/again" > /dev/null ||
    fail "no report after the restart"
cmp -s "$T/rep/gantt.svg" "$T/again/gantt.svg" ||
    fail "the Gantt chart changed across the restart"
cmp -s "$T/rep/report.html" "$T/again/report.html" ||
    fail "report.html changed across the restart"
ok "after a masterd crash the journal gives the same report"

# journal_retention: a finished job older than that is dropped from the
# journal at start-up, with a log line, and is gone.
echo "journal_retention = 1s" >> "$T/masterd.conf"
sleep 1.2
crash_master
grep -q "journal: dropped 1 jobs finished more than 1s ago" "$T/masterd.log" ||
    fail "journal_retention dropped nothing"
rc=0
"$R3QCTL" report "$job" -o "$T/gone" > "$T/gone.err" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "no such job $job" "$T/gone.err" ||
    fail "the job outlived journal_retention: $(cat "$T/gone.err")"
ok "journal_retention drops finished jobs from the journal"
