# r3qctl bnb pfsp --local solves Taillard's ta001 (the first instance of
# tai20_5.txt) to the optimum the file gives, 1278, proved, and the
# permutation it prints, text or JSON, recomputes to that makespan;
# ta004 with the one-machine bound, forward branching and NEH alone takes
# a real search and agrees.  Every instance of tai20_5.txt (ta001-ta010)
# and three of tai20_10.txt are proved optimal with the defaults
# (bidirectional branching, LB2), their permutations recomputing to the
# optima; the times are printed, not asserted.  Malformed files are refused with file:line: and status 65, a
# missing one with 66; a distributed run without a master with 69, one
# with --max-nodes (only --local has it) with 64, --local with a flag
# only the cluster has (--policy, --multiplicity, --interrupt,
# --split-depth, --exchange, --resplit) with 64, and out-of-range values
# of those with 64.  No daemon runs.
. "${top_srcdir:-.}/tests/regress/lib.sh"

F=$top_srcdir/tests/data/taillard/tai20_5.txt

# The file's upper bound of the first instance: its optimum.
ub=$(awk 'NR == 2 { print $4 }' "$F")
[ "$ub" = 1278 ] || fail "tai20_5.txt: upper bound $ub, not 1278"

"$R3QCTL" bnb pfsp "$F" --instance 1 --local > "$T/out" 2> "$T/err" ||
    fail "bnb --local: exit $?: $(cat "$T/err")"
got=$(sed -n 's/^makespan //p' "$T/out")
[ "$got" = "$ub" ] || fail "ta001: makespan '$got', not $ub"
grep -qx 'proved yes' "$T/out" || fail "ta001: not proved: $(cat "$T/out")"
perm=$(sed -n 's/^permutation //p' "$T/out")
re=$(makespan "$F" 1 "$perm")
[ "$re" = "$ub" ] || fail "ta001: the permutation '$perm' recomputes to $re"
ok "ta001: makespan $ub proved, its permutation recomputes to it"

"$R3QCTL" bnb pfsp "$F" --instance 1 --local --json > "$T/json" ||
    fail "bnb --local --json: exit $?"
[ "$(wc -l < "$T/json")" -eq 1 ] || fail "--json: not one line"
python3 - "$T/json" "$ub" <<'EOF' || fail "--json: $(cat "$T/json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["makespan"] == int(sys.argv[2]), o
assert o["proved"] is True and o["lower_bound"] == o["makespan"], o
assert sorted(o["permutation"]) == list(range(1, 21)), o
assert o["jobs"] == 20 and o["machines"] == 5 and o["lb"] == "lb2", o
assert o["file_upper_bound"] == 1278 and o["file_lower_bound"] == 1232, o
EOF
perm=$(python3 -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["permutation"])))' "$T/json")
re=$(makespan "$F" 1 "$perm")
[ "$re" = "$ub" ] || fail "--json: the permutation recomputes to $re"
ok "ta001 --json: one object, the same optimum, its permutation recomputes"

# ta004, LB1 and forward branching from NEH alone: many subproblems.
"$R3QCTL" bnb pfsp "$F" --local --instance 4 --lb lb1 --ig 0 \
    --branching forward --node-budget 5000 > "$T/out4" ||
    fail "ta004: exit $?"
got=$(sed -n 's/^makespan //p' "$T/out4")
[ "$got" = 1293 ] || fail "ta004: makespan '$got', not 1293"
grep -qx 'proved yes' "$T/out4" || fail "ta004: not proved"
tasks=$(sed -n 's/^tasks //p' "$T/out4")
[ "$tasks" -gt 10 ] || fail "ta004: only $tasks subproblems"
re=$(makespan "$F" 4 "$(sed -n 's/^permutation //p' "$T/out4")")
[ "$re" = 1293 ] || fail "ta004: the permutation recomputes to $re"
ok "ta004 with lb1 from NEH: 1293 over $tasks subproblems"

# solved FILE INSTANCE OPTIMUM: the defaults prove OPTIMUM, and the
# permutation recomputes to it.
solved() {
	"$R3QCTL" bnb pfsp "$1" --local --instance "$2" > "$T/o" ||
	    fail "$1 $2: exit $?: $(cat "$T/o")"
	got=$(sed -n 's/^makespan //p' "$T/o")
	[ "$got" = "$3" ] || fail "$1 $2: makespan '$got', not $3"
	grep -qx 'proved yes' "$T/o" || fail "$1 $2: not proved"
	grep -q 'lb2, bidir branching$' "$T/o" || fail "$1 $2: $(head -1 "$T/o")"
	re=$(makespan "$1" "$2" "$(sed -n 's/^permutation //p' "$T/o")")
	[ "$re" = "$3" ] || fail "$1 $2: the permutation recomputes to $re"
	echo "# $(basename "$1") $2: $3 proved, $(sed -n 's/^nodes //p' \
	    "$T/o") nodes, $(sed -n 's/^time //p' "$T/o")"
}
i=0
for opt in 1278 1359 1081 1293 1235 1195 1234 1206 1230 1108; do
	i=$((i + 1))
	solved "$F" $i $opt
done
ok "ta001-ta010: every optimum proved with the defaults"
F10=$top_srcdir/tests/data/taillard/tai20_10.txt
solved "$F10" 4 1377
solved "$F10" 6 1397
solved "$F10" 9 1593
ok "ta014, ta016, ta019 (20 x 10): proved"

# bad NAME STATUS WANT TEXT: a file of TEXT is refused with STATUS and an
# error that starts with the file's name and WANT (its line and message).
bad() {
	printf '%b' "$4" > "$T/$1.txt"
	rc=0
	"$R3QCTL" bnb pfsp "$T/$1.txt" --local > "$T/o" 2> "$T/e" || rc=$?
	[ "$rc" -eq "$2" ] || fail "$1: exit $rc, not $2: $(cat "$T/e")"
	grep -qF "r3qctl: $T/$1.txt:$3" "$T/e" ||
	    fail "$1: '$(cat "$T/e")' lacks '$T/$1.txt:$3'"
	[ -s "$T/o" ] && fail "$1: wrote to stdout"
	return 0
}
H='number of jobs, number of machines, initial seed, upper bound and lower bound :\n'
P='processing times :\n'
bad count 65 "4: machine 1 has 2 processing times, not 3" "$H 3 1\n$P 1 2\n"
bad negative 65 "5: negative processing time -4 (job 2)" "$H 2 2\n$P 1 2\n3 -4\n"
bad nonint 65 "4: '1.5' is not an integer" "$H 2 1\n${P}1.5 2\n"
bad toomany 65 "2: 501 jobs: from 1 to 500" "$H 501 1\n"
bad toolong 65 "4: processing time 20000 (job 1) is over 10000" "$H 1 1\n${P}20000\n"
bad header 65 "1: expected the header" "jobs 3\n"
bad empty 65 "1: no instance in the file" ""
bad times 65 "3: expected 'processing times :'" "$H 1 1\n5\n"
ok "malformed files: file:line: message and status 65"

# n = 1 and m = 1 work.
printf '%b' "$H 1 1\n${P}7\n" > "$T/one.txt"
"$R3QCTL" bnb pfsp "$T/one.txt" --local > "$T/o1" || fail "1 x 1: exit $?"
grep -qx 'makespan 7' "$T/o1" || fail "1 x 1: $(cat "$T/o1")"
grep -qx 'permutation 1' "$T/o1" || fail "1 x 1: $(cat "$T/o1")"
ok "one job on one machine"

rc=0
"$R3QCTL" bnb pfsp "$F" --local --instance 11 2> "$T/e" || rc=$?
[ "$rc" -eq 65 ] || fail "instance 11: exit $rc"
grep -qF "$F:80: the file has 10 instances, not 11" "$T/e" ||
    fail "instance 11: $(cat "$T/e")"
rc=0
"$R3QCTL" bnb pfsp "$T/missing.txt" --local 2> "$T/e" || rc=$?
[ "$rc" -eq 66 ] || fail "missing file: exit $rc"
rc=0
R3Q_CONTROL=$T/none.sock "$R3QCTL" bnb pfsp "$F" --instance 1 --ig 0 \
    2> "$T/e" || rc=$?
[ "$rc" -eq 69 ] || fail "distributed: exit $rc"
grep -q "cannot reach masterd at $T/none.sock" "$T/e" ||
    fail "distributed: $(cat "$T/e")"
rc=0
R3Q_CONTROL=$T/none.sock "$R3QCTL" bnb pfsp "$F" --max-nodes 100 2> "$T/e" ||
    rc=$?
[ "$rc" -eq 64 ] || fail "distributed --max-nodes: exit $rc"
grep -qx "r3qctl: bnb: --max-nodes is not implemented yet (without --local)" \
    "$T/e" || fail "distributed --max-nodes: $(cat "$T/e")"
for flag in "--multiplicity 2" "--interrupt off" "--split-depth 3" \
    "--exchange 1s" "--resplit" "--policy wq"; do
	rc=0
	"$R3QCTL" bnb pfsp "$F" --local $flag > "$T/o" 2> "$T/e" || rc=$?
	[ "$rc" -eq 64 ] || fail "--local $flag: exit $rc"
	grep -qx "r3qctl: bnb: ${flag% *} is for the cluster (without --local)" \
	    "$T/e" || fail "--local $flag: $(cat "$T/e")"
done
for flag in "--multiplicity 17" "--multiplicity 2,0" "--split-depth 9" \
    "--interrupt maybe" "--exchange 0s"; do
	rc=0
	R3Q_CONTROL=$T/none.sock "$R3QCTL" bnb pfsp "$F" $flag 2> "$T/e" ||
	    rc=$?
	[ "$rc" -eq 64 ] || fail "$flag: exit $rc: $(cat "$T/e")"
done
ok "instance 11 (65), a missing file (66), no master (69), flags only --local or only the cluster has, and bad values (64)"
