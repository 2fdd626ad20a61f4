# The report counts every copy.  On heterogeneous emulated workers under
# R3Q, replicas race their originals and the losers are withdrawn (held)
# or interrupted (running); an interrupted copy's report comes after its
# generation has ended.  r3qctl report must draw each of them: the
# replicas it draws (executions and withdrawals) are the replicas
# r3qctl result counts, its withdrawn marks the held terminations, its
# interrupted bars (and copies that finished before the cancel reached
# them) the running terminations, and the trace has one span per
# execution, interrupted ones included.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2 w3
start_master
start_worker w1 1
WORKER_EXTRA="speed = 0.35" start_worker w2 1
WORKER_EXTRA="speed = 2" start_worker w3 1
wait_workers 3
job=$("$R3QCTL" submit es --mu 5 --lambda 10 --dim 5 --generations 6 \
    --work-ms 80 --seed 11 --policy r3q --queue-factor 2)
"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish"
# The last interrupted copies report after the job's end.
sleep 1
"$R3QCTL" result "$job" --json > "$T/result.json"
num() {
	grep -oE "\"$1\":[0-9]+" "$T/result.json" | head -n 1 | cut -d: -f2
}
replicas=$(num replicas)
held=$(num killed_held)
running=$(num killed_running)
execs=$(num executions)
[ "${running:-0}" -gt 0 ] ||
    fail "no running copy was interrupted: $(cat "$T/result.json")"
"$R3QCTL" report "$job" -o "$T/rep" --trace "$T/trace.json" > /dev/null ||
    fail "r3qctl report failed"
line=$(grep -o 'task executions</th><td>[^<]*' "$T/rep/report.html" |
    sed 's/.*<td>//')
set -- $(echo "$line" | tr -c '0-9\n' ' ')
# N: done, lost race, interrupted, failed; were replicas
[ "$#" -eq 6 ] || fail "cannot read the summary: $line"
nexec=$1 lost=$3 intr=$4 xrep=$6
wline=$(grep -o 'withdrawn while queued</th><td>[^<]*' "$T/rep/report.html" |
    sed 's/.*<td>//')
set -- $(echo "$wline" | tr -c '0-9\n' ' ')
[ "$#" -eq 2 ] || fail "cannot read the withdrawals: $wline"
nwd=$1 wrep=$2
[ "$nexec" -eq "$execs" ] ||
    fail "the report draws $nexec executions, r3qctl result counts $execs"
[ $((xrep + wrep)) -eq "$replicas" ] ||
    fail "replicas drawn $xrep + $wrep withdrawn, sent $replicas"
[ "$nwd" -eq "$held" ] || fail "$nwd withdrawals drawn, $held held terminations"
[ $((intr + lost)) -eq "$running" ] ||
    fail "$intr interrupted + $lost lost races drawn, $running running terminations"
[ "$intr" -gt 0 ] || fail "no interrupted copy drawn"
ok "the report draws every copy: $replicas replicas, $nwd withdrawn, $intr interrupted + $lost lost races = $running running terminations"
[ "$(grep -o '"ph":"X"' "$T/trace.json" | wc -l)" -eq "$execs" ] ||
    fail "the trace lacks executions"
ok "the trace has one span per execution, interrupted ones included"
