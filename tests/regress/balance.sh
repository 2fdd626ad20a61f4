# Balancing of held tasks (issue 19, seed 003): three workers, one of them
# five times slower, hold every task of each ES generation up front
# (queue_factor 16); under --balance power and global the slow worker's
# held tasks move to the others: the answer still equals --local, the
# metrics and r3qctl count moved tasks, r3qctl workers shows the Power the
# master measured, and every evaluation was done once (the job's count).
# Bad balance, balance_topology and power_interval values are refused with
# file:line, and a bad --balance by r3qctl.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 30 --dim 10 --generations 3 --seed 5 --work-ms 40"

# expect_bad TEXT PATTERN: masterd -n refuses TEXT at line 2 with PATTERN.
expect_bad() {
	printf '# balancing\n%b' "$1" > "$T/bad.conf"
	rc=0
	"$MASTERD" -n -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -qF "$T/bad.conf:2: $2" "$T/out" ||
	    fail "wanted status 78 and '$T/bad.conf:2: $2', got $rc: $(cat "$T/out")"
}
expect_bad 'balance = sideways\n' \
    "balance: 'sideways' is not one of none, one, power, global"
expect_bad 'balance_topology = star\n' \
    "balance_topology: 'star' is not one of ring, all, tree"
expect_bad 'power_interval = 5ms\n' "power_interval: '5ms' is not a duration"
expect_bad 'power_interval = 2h\n' "power_interval: '2h' is not a duration"
ok "bad balance, balance_topology and power_interval are config errors"
rc=0
"$R3QCTL" es --local $ES --balance sideways > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 64 ] && grep -q "balance: 'sideways' is not one of" "$T/out" ||
    fail "r3qctl took --balance sideways: $rc $(cat "$T/out")"
ok "r3qctl refuses a bad --balance"

mkcerts w1 w2 w3
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
MASTER_EXTRA="http = 127.0.0.1:0
power_interval = 200ms
balance_topology = all
suspect_grace = 1h"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
start_worker w1
start_worker w2
WORKER_EXTRA="speed = 0.2"
start_worker w3
WORKER_EXTRA=
wait_workers 3

metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    sed -n "s/^$1 //p"
}

for mode in power global; do
	before=$(metric r3q_tasks_moved_total)
	timeout 120 "$R3QCTL" es $ES --policy rwq --queue-factor 16 \
	    --balance "$mode" --csv "$T/$mode.csv" > "$T/$mode.out" ||
	    fail "$mode: the job failed: $(tail -n 5 "$T/$mode.out")"
	cmp -s "$T/local.csv" "$T/$mode.csv" ||
	    fail "$mode: the answer differs from --local"
	after=$(metric r3q_tasks_moved_total)
	[ "$after" -gt "$before" ] ||
	    fail "$mode: no task moved ($before -> $after)"
	n=$(sed -n "s/^balance $mode: \([0-9]*\) held tasks moved$/\1/p" \
	    "$T/$mode.out")
	[ "${n:-0}" -gt 0 ] || fail "$mode: r3qctl shows no moved task: $(cat "$T/$mode.out")"
	# (10+30)-ES, 3 generations: 10 parents then 30 offspring each.
	grep -q ", 100 evaluations," "$T/$mode.out" ||
	    fail "$mode: not every evaluation done once: $(grep summary "$T/$mode.out")"
	ok "balance $mode: the --local answer, $n tasks moved, none lost"
done

"$R3QCTL" workers > "$T/workers"
head -n 1 "$T/workers" | grep -q ' POWER ' || fail "no POWER column"
awk 'NR > 1 && $14 !~ /^[0-9]+\/[0-9]+$/ { bad = 1 } END { exit bad }' \
    "$T/workers" || fail "POWER is not master/heartbeat: $(cat "$T/workers")"
[ "$(metric r3q_withdrawals_total)" -ge "$(metric r3q_tasks_moved_total)" ] ||
    fail "more tasks moved than withdrawn"
metric 'r3q_worker_power{worker="w3"}' | grep -qE '^[0-9]+$' ||
    fail "no r3q_worker_power for w3"
ok "r3qctl workers shows Power; /metrics counts withdrawals and moves"
"$R3QCTL" report 1 -o "$T/report" > /dev/null || fail "r3qctl report failed"
grep -q 'data-moved="1"' "$T/report"/*.svg "$T/report"/*.html 2>/dev/null ||
    fail "the report marks no moved task"
ok "the report's Gantt chart marks the moved tasks"
master_alive
