# r3q-sim --driver bnb runs the bnb job's decisions (the pool, the
# incumbent, copies by the bound's rank) over common/bnb on simulated
# workers.  Behaviour, not time: on Taillard's ta001 (tai20_5 #1) with
# tasks of 100 nodes on 8 workers it proves the published optimum, 1278,
# and the permutation recomputes to it; without copies (multiplicity 1)
# interrupting or not changes nothing, node for node; with the task of
# the smallest bound in 6 and 7 copies, on this seed, interrupting the
# losing copies explores fewer nodes in all than letting them run (by 4
# and 8 %), and interrupts some while --interrupt off interrupts none.
# The CSV counts the tasks given copies and those whose every copy went
# out: none without copies; with them, the copies sent lie between
# (m - 1) x the tasks given all and (m - 1) x the tasks given any.
# That is one seed's run, not a law: the interrupt changes the timing,
# so the order in which incumbents are found, and another seed or
# instance can explore more nodes with it (doc/algorithms.md §3.3; on
# ta001, seed 3 at 7 copies: 1.5 % more).  The same seed gives the
# same CSV byte for byte; and bad input
# (no --pfsp, a missing file, a bnb option without --driver bnb, a bad
# --multiplicity or --interrupt) gets an error naming it.  Without
# SimGrid r3q-sim is not built and the test is skipped.
. "${top_srcdir:-.}/tests/regress/lib.sh"

need_sim
F5=$top_srcdir/tests/data/taillard/tai20_5.txt
# Every figure pinned: a node's cost, the speeds and the jitter's seed.
BNB="--driver bnb --pfsp $F5 --instance 1 --workers 8 --ig 0 --node-budget 100
    --queue-factor 1 --latency 0.1 --speeds uniform:0.9:1.1 --noise 0.1
    --node-us 10 --seed 1"

# col FILE NAME: column NAME of the one row of --csv FILE.
col() {
	awk -F, -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	    NR == 2 { print $c[k] }' "$1"
}

# run NAME ARGS...: one job, its output in $T/NAME.out, CSV $T/NAME.csv.
run() {
	_n=$1
	shift
	# shellcheck disable=SC2086
	"$SIM" $BNB "$@" --csv "$T/$_n.csv" > "$T/$_n.out" 2> "$T/$_n.err" ||
	    fail "$_n: r3q-sim $*: $(cat "$T/$_n.err")"
	[ "$(col "$T/$_n.csv" proved)" = 1 ] || fail "$_n: not proved"
	[ "$(col "$T/$_n.csv" makespan)" = 1278 ] ||
	    fail "$_n: makespan $(col "$T/$_n.csv" makespan), not ta001's 1278"
}

run m1on --multiplicity 1,1 --interrupt on
grep -q '^makespan 1278 proved optimal' "$T/m1on.out" ||
    fail "no proved 1278 in: $(cat "$T/m1on.out")"
[ "$(col "$T/m1on.csv" tasks)" -gt 8 ] ||
    fail "ta001 in $(col "$T/m1on.csv" tasks) tasks: too few to spread"
ok "ta001: 1278 proved on 8 simulated workers"

run m1off --multiplicity 1,1 --interrupt off
for k in time_s cpu_s all_nodes tasks; do
	[ "$(col "$T/m1on.csv" $k)" = "$(col "$T/m1off.csv" $k)" ] ||
	    fail "multiplicity 1: $k $(col "$T/m1on.csv" $k) with interrupt, $(col "$T/m1off.csv" $k) without"
done
[ "$(col "$T/m1on.csv" duplicated)" = 0 ] || fail "multiplicity 1 duplicated nodes"
[ "$(col "$T/m1on.csv" multiplied)" = 0 ] && [ "$(col "$T/m1on.csv" full)" = 0 ] ||
    fail "multiplicity 1: multiplied '$(col "$T/m1on.csv" multiplied)', full '$(col "$T/m1on.csv" full)'"
ok "multiplicity 1: interrupting changes nothing"

for m in 6 7; do
	run "m${m}on" --multiplicity "$m,1" --interrupt on
	run "m${m}off" --multiplicity "$m,1" --interrupt off
	on=$(col "$T/m${m}on.csv" all_nodes)
	off=$(col "$T/m${m}off.csv" all_nodes)
	[ "$on" -lt "$off" ] ||
	    fail "multiplicity $m: $on nodes in all with interrupt, $off without"
	[ "$(col "$T/m${m}on.csv" copies)" -gt 0 ] || fail "multiplicity $m: no copies"
	[ "$(col "$T/m${m}on.csv" interrupted)" -gt 0 ] ||
	    fail "multiplicity $m: no copy interrupted"
	[ "$(col "$T/m${m}off.csv" interrupted)" = 0 ] ||
	    fail "multiplicity $m: copies interrupted with --interrupt off"
	for x in on off; do
		c=$(col "$T/m$m$x.csv" copies)
		mu=$(col "$T/m$m$x.csv" multiplied)
		fu=$(col "$T/m$m$x.csv" full)
		[ -n "$mu" ] && [ -n "$fu" ] && [ "$mu" -gt 0 ] &&
		    [ "$fu" -le "$mu" ] && [ "$c" -le $((mu * (m - 1))) ] &&
		    [ "$c" -ge $((fu * (m - 1))) ] ||
		    fail "multiplicity $m, interrupt $x: $c copies, $mu tasks given copies, $fu given all"
	done
	ok "multiplicity $m: $on nodes with interrupt, $off without"
done

run again --multiplicity 7,1 --interrupt on
cmp -s "$T/again.csv" "$T/m7on.csv" || fail "the same seed gave another run"
ok "the same seed, the same run"

# bad ARGS... -- WORD: r3q-sim fails with exit 64 and a message with WORD.
bad() {
	_w=$(eval "echo \${$#}")
	_args=
	while [ $# -gt 2 ]; do _args="$_args $1"; shift; done
	_rc=0
	# shellcheck disable=SC2086
	"$SIM" $_args > "$T/bad.out" 2> "$T/bad.err" || _rc=$?
	[ "$_rc" = 64 ] || [ "$_rc" = 65 ] ||
	    fail "r3q-sim$_args: exit $_rc, not a usage or data error"
	grep -q -- "$_w" "$T/bad.err" ||
	    fail "r3q-sim$_args: no '$_w' in: $(cat "$T/bad.err")"
}
bad --driver bnb --workers 8 -- --pfsp
bad --driver bnb --workers 8 --pfsp "$T/none.txt" -- "$T/none.txt"
bad --workers 8 --multiplicity 2 -- "--multiplicity is for --driver bnb"
bad --driver bnb --pfsp "$F5" --workers 8 --multiplicity 2,0 -- "--multiplicity: '2,0'"
bad --driver bnb --pfsp "$F5" --workers 8 --interrupt maybe -- "--interrupt: 'maybe'"
bad --driver bnb --pfsp "$F5" --instance 99 --workers 8 -- "$F5"
bad --driver nope --workers 8 -- "--driver: 'nope'"
ok "bad input: errors naming the culprit"
