# The bnb job's protocol 6 (issue 18) on three single-CPU workers.
# Incumbent exchange: from NEH alone on ta013 and ta014 with long
# task per subproblem, the workers' better makespans come as news of
# running tasks, the master pushes them, and the other running searches
# prune with them (pruned_pushed > 0 over the runs).  Donation: with no
# node budget the root is one task, the pool runs dry at once, the idle
# workers get nodes donated by the running task, and no node is explored
# twice (duplicated 0), the optimum of --local proved.  Multiplicity 3,1
# with interrupt on and off, --split-depth 2, --resplit (seed 004) and
# --exchange 50ms all prove the optimum; on and off say how many copies
# ran on.  A Taillard file of one job on one machine is solved on the
# cluster; one over 500 jobs is refused by r3qctl with file:line before
# masterd hears of it.  Times are not asserted.
. "${top_srcdir:-.}/tests/regress/lib.sh"

F10=$top_srcdir/tests/data/taillard/tai20_10.txt

# jget FILE KEY: a field of r3qctl bnb --json's object.
jget() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# check OUT INSTANCE WANT: --json OUT proved WANT with a permutation that
# recomputes to it.
check() {
	python3 - "$1" "$3" <<'EOF' || fail "ta01$2: $(cat "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["proved"] is True and d["local"] is False, d
assert d["makespan"] == int(sys.argv[2]), d
assert sorted(d["permutation"]) == list(range(1, 21)), d
EOF
	_perm=$(python3 -c 'import json, sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["permutation"])))' "$1")
	_re=$(makespan "$F10" "$2" "$_perm")
	[ "$_re" = "$3" ] || fail "ta01$2: permutation '$_perm' recomputes to $_re"
}

mkcerts w1 w2 w3
start_master
start_worker w1
start_worker w2
start_worker w3
wait_workers 3

# The optima, from --local.
for i in 3 4 6; do
	"$R3QCTL" bnb pfsp "$F10" --instance "$i" --local > "$T/l$i" ||
	    fail "ta01$i --local failed"
	eval "opt$i=\$(sed -n 's/^makespan //p' \"\$T/l$i\")"
done

# Incumbent exchange: NEH's first bound, tasks of 20000 nodes.
pruned=0 news=0 improved=0
for i in 3 4; do
	eval "want=\$opt$i"
	"$R3QCTL" bnb pfsp "$F10" --instance "$i" --ig 0 --node-budget 20000 \
	    --json > "$T/x$i" 2> "$T/e" || fail "ta01$i: exit $?: $(cat "$T/e")"
	check "$T/x$i" "$i" "$want"
	[ "$(jget "$T/x$i" duplicated)" = 0 ] ||
	    fail "ta01$i: duplicated nodes: $(cat "$T/x$i")"
	pruned=$((pruned + $(jget "$T/x$i" pruned_pushed)))
	news=$((news + $(jget "$T/x$i" news)))
	improved=$((improved + $(jget "$T/x$i" improved)))
done
[ "$news" -gt 0 ] && [ "$improved" -gt 0 ] ||
    fail "no news of a better makespan from a running task: $(cat "$T/x3")"
grep -q "makespan .* (news of task " "$T/masterd.log" ||
    fail "masterd logged no makespan from news"
[ "$pruned" -gt 0 ] || fail "no node pruned by a pushed incumbent"
ok "incumbent exchange: $news news, $improved better, $pruned nodes pruned by pushes; optima proved"

# Donation: the root as one task, no budget.
"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --node-budget 1000000000 \
    --json > "$T/d4" 2> "$T/e" || fail "donation: exit $?: $(cat "$T/e")"
check "$T/d4" 4 "$opt4"
don=$(jget "$T/d4" donations)
[ "$don" -gt 0 ] || fail "donation: none: $(cat "$T/d4")"
[ "$(jget "$T/d4" duplicated)" = 0 ] || fail "donation: duplicated: $(cat "$T/d4")"
[ "$(jget "$T/d4" tasks)" -gt 1 ] || fail "donation: one task: $(cat "$T/d4")"
ok "donation: $don donations ($(jget "$T/d4" donated) nodes), 0 duplicated, $opt4 proved"

# Multiplicity, interrupt on and off.
for intr in on off; do
	"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --node-budget 2000 \
	    --multiplicity 3,1 --interrupt "$intr" --json > "$T/m$intr" \
	    2> "$T/e" || fail "multiplicity, interrupt $intr: exit $?: $(cat "$T/e")"
	check "$T/m$intr" 4 "$opt4"
	python3 - "$T/m$intr" "$intr" <<'EOF' || fail "interrupt $intr: $(cat "$T/m$intr")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["multiplicity"] == [3, 1] and d["interrupt"] == (sys.argv[2] == "on"), d
assert d["copies"] > 0, d
EOF
done
ok "multiplicity 3,1: interrupt on ($(jget "$T/mon" copies) extra copies), off ($(jget "$T/moff" lost_copies) losers' outputs, $(jget "$T/moff" duplicated) nodes twice); $opt4 proved"

# Split depth, re-split, exchange interval, a policy.
"$R3QCTL" bnb pfsp "$F10" --instance 6 --split-depth 2 --node-budget 3000 \
    --json > "$T/s6" 2> "$T/e" || fail "split-depth: exit $?: $(cat "$T/e")"
check "$T/s6" 6 "$opt6"
[ "$(jget "$T/s6" root_subproblems)" -gt 1 ] ||
    fail "split-depth 2: $(jget "$T/s6" root_subproblems) subproblems"
[ "$(jget "$T/s6" node_budget)" = 3000 ] || fail "node budget: $(cat "$T/s6")"
"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --node-budget 1000000000 \
    --resplit --json > "$T/r4" 2> "$T/e" || fail "resplit: exit $?: $(cat "$T/e")"
check "$T/r4" 4 "$opt4"
[ "$(jget "$T/r4" resplits)" -gt 0 ] && [ "$(jget "$T/r4" donations)" = 0 ] ||
    fail "resplit: $(cat "$T/r4")"
"$R3QCTL" bnb pfsp "$F10" --instance 4 --ig 0 --exchange 50ms --policy wq \
    --json > "$T/i4" 2> "$T/e" || fail "exchange 50ms: exit $?: $(cat "$T/e")"
check "$T/i4" 4 "$opt4"
[ "$(jget "$T/i4" exchange_ms)" = 50 ] && [ "$(jget "$T/i4" policy)" = wq ] ||
    fail "exchange 50ms: $(cat "$T/i4")"
ok "split depth 2 ($(jget "$T/s6" root_subproblems) subproblems), resplit ($(jget "$T/r4" resplits) re-splits, $(jget "$T/r4" duplicated) nodes twice), exchange 50ms under wq: optima proved"

# One job, one machine, on the cluster; 501 jobs refused before masterd.
H='number of jobs, number of machines, initial seed, upper bound and lower bound :\n'
P='processing times :\n'
printf '%b' "$H 1 1\n${P}7\n" > "$T/one.txt"
"$R3QCTL" bnb pfsp "$T/one.txt" > "$T/o1" 2> "$T/e" || fail "1 x 1: exit $?: $(cat "$T/e")"
grep -qx 'makespan 7' "$T/o1" && grep -qx 'proved yes' "$T/o1" ||
    fail "1 x 1: $(cat "$T/o1")"
njobs=$("$R3QCTL" jobs | grep -c bnb)
printf '%b' "$H 501 1\n" > "$T/big.txt"
rc=0
"$R3QCTL" bnb pfsp "$T/big.txt" > "$T/o" 2> "$T/e" || rc=$?
[ "$rc" -eq 65 ] || fail "501 jobs: exit $rc: $(cat "$T/e")"
grep -qF "$T/big.txt:2: 501 jobs: from 1 to 500" "$T/e" || fail "501 jobs: $(cat "$T/e")"
[ "$("$R3QCTL" jobs | grep -c bnb)" = "$njobs" ] || fail "501 jobs: a job was made"
ok "1 x 1 on the cluster; 501 jobs refused with file:line before any task"
master_alive
