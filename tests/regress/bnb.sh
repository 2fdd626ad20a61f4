# r3qctl bnb pfsp without --local: the master's bnb job on three
# single-CPU workers solves every instance of tai20_5.txt (ta001-ta010) to
# its optimum (the file's upper bounds, ta005's 1236 excepted: 1235),
# proved, agreeing with --local, and the
# permutation it prints recomputes to that makespan; ta014 (tai20_10.txt)
# with a small node budget takes many tasks and agrees too.  A search
# during which one worker is killed with SIGKILL and another is stopped
# with SIGSTOP (lost after heartbeat_timeout) still ends proved optimal:
# their subproblems go back to the pool.  masterd killed with SIGKILL in
# the middle of a search resumes it from its journal's snapshot, and the
# job still ends proved optimal.  Times are not asserted.
. "${top_srcdir:-.}/tests/regress/lib.sh"

F5=$top_srcdir/tests/data/taillard/tai20_5.txt
F10=$top_srcdir/tests/data/taillard/tai20_10.txt

# check OUT FILE INSTANCE WANT: OUT (r3qctl bnb's text) is proved with
# makespan WANT and a permutation that recomputes to it.
check() {
	_got=$(sed -n 's/^makespan //p' "$1")
	[ "$_got" = "$4" ] || fail "$2:$3: makespan '$_got', not $4: $(cat "$1")"
	grep -qx 'proved yes' "$1" || fail "$2:$3: not proved: $(cat "$1")"
	_perm=$(sed -n 's/^permutation //p' "$1")
	_re=$(makespan "$2" "$3" "$_perm")
	[ "$_re" = "$4" ] || fail "$2:$3: permutation '$_perm' recomputes to $_re"
}

# The running bnb job with at least $1 tasks done, if any.
running_job() {
	"$R3QCTL" jobs | awk -v n="$1" '$2 == "running" && $7 == "bnb" &&
	    $8 >= n { print $1 }'
}

# Wait up to 30 s for such a job; its id in job.
wait_running() {
	_n=300
	while [ "$_n" -gt 0 ]; do
		job=$(running_job "$1")
		[ -n "$job" ] && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

mkcerts w1 w2 w3
MASTER_EXTRA="heartbeat_timeout = 1500ms"
start_master
WORKER_EXTRA="heartbeat = 200ms"
start_worker w1
start_worker w2
start_worker w3
wait_workers 3

# Taillard's optima of ta001-ta010 (the file's upper bound of ta005, 1236,
# is older than its proof).
i=0
for ub in 1278 1359 1081 1293 1235 1195 1234 1206 1230 1108; do
	i=$((i + 1))
	"$R3QCTL" bnb pfsp "$F5" --instance "$i" > "$T/d$i" 2> "$T/e" ||
	    fail "ta00$i: exit $?: $(cat "$T/e")"
	check "$T/d$i" "$F5" "$i" "$ub"
	"$R3QCTL" bnb pfsp "$F5" --instance "$i" --local > "$T/l$i" ||
	    fail "ta00$i --local failed"
	check "$T/l$i" "$F5" "$i" "$ub"
done
ok "ta001-ta010 on the cluster: their optima, proved, as --local"

# A real search: no first upper bound from the heuristics' best, a small
# node budget, so that many tasks go out.
"$R3QCTL" bnb pfsp "$F10" --instance 4 --local > "$T/l14" ||
    fail "ta014 --local failed"
want=$(sed -n 's/^makespan //p' "$T/l14")
"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --node-budget 300 \
    > "$T/d14" 2> "$T/e" || fail "ta014: exit $?: $(cat "$T/e")"
check "$T/d14" "$F10" 4 "$want"
tasks=$(sed -n 's/^tasks //p' "$T/d14")
[ "$tasks" -ge 20 ] || fail "ta014: only $tasks tasks with a 300-node budget"
"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --node-budget 300 --json \
    > "$T/j14" || fail "ta014 --json failed"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["local"] is False and d["proved"] is True, d
assert d["makespan"] == int(sys.argv[2]), d
assert sorted(d["permutation"]) == list(range(1, 21)), d
' "$T/j14" "$want" || fail "ta014 --json: $(cat "$T/j14")"
ok "ta014 with a 300-node budget: $tasks tasks, proved $want, as --local"

# Faults: w2 killed, w3 stopped, in the middle of a longer search.
"$R3QCTL" bnb pfsp "$F10" --instance 3 --local > "$T/l13" ||
    fail "ta013 --local failed"
want=$(sed -n 's/^makespan //p' "$T/l13")
"$R3QCTL" bnb pfsp "$F10" --instance 3 --ig 0 --node-budget 200 \
    > "$T/d13" 2> "$T/e13" &
cpid=$!
wait_running 30 ||
    fail "ta013 made no progress: $("$R3QCTL" jobs)"
kill -9 "$WPID_w2"
kill -STOP "$WPID_w3"
wait "$cpid" || fail "ta013 with faults: exit $?: $(cat "$T/e13")"
kill -CONT "$WPID_w3"
check "$T/d13" "$F10" 3 "$want"
grep -q "worker w3 .*declaring it lost" "$T/masterd.log" ||
    echo "# (w3 was not declared lost before the end)"
ok "ta013 with a worker killed and one stopped: proved $want, as --local"

# masterd crashes in the middle of a search; the job resumes.
start_worker w2
wait_workers 3
"$R3QCTL" bnb pfsp "$F10" --instance 3 --ig 0 --node-budget 200 \
    > "$T/c13" 2> "$T/ec13" &
cpid=$!
wait_running 30 ||
    fail "ta013 (crash) made no progress: $("$R3QCTL" jobs)"
sleep 0.3
crash_master
wait "$cpid" 2>/dev/null || true
grep -q "job $job resumed with" "$T/masterd.log" ||
    fail "job $job did not resume: $(grep "job $job" "$T/masterd.log")"
"$R3QCTL" wait "$job" > /dev/null || fail "resumed job $job did not finish"
"$R3QCTL" result "$job" > "$T/r13" || fail "result $job failed"
check "$T/r13" "$F10" 3 "$want"
"$R3QCTL" result "$job" --json > "$T/rj13" || fail "result --json failed"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["driver"] == "bnb" and d["proved"] is True and d["open"] == 0, d
assert d["makespan"] == int(sys.argv[2]), d
assert sorted(d["permutation"]) == list(range(1, 21)), d
' "$T/rj13" "$want" || fail "result --json: $(cat "$T/rj13")"
ok "masterd killed mid-search: job $job resumed from its journal, proved $want"
master_alive
