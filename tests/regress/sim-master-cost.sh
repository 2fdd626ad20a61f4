# r3q-sim --master-cost MS gives masterd one CPU that every frame from or
# to a worker takes for MS, one frame after another.  In virtual time,
# which is deterministic: a batch of N tasks under WQ (one Assign and one
# result a task at least) takes at least the serial bound 2 N MS and
# longer than without a cost, under both networks; the run reports at
# least 2 N frames and a busy time of exactly frames x MS; a cost of 0 is
# the run without one; values that are no number, negative or above 60 s,
# and the flag with --driver bnb, are refused with an error naming it.
# Without SimGrid r3q-sim is not built and the test is skipped.
. "${top_srcdir:-.}/tests/regress/lib.sh"

need_sim

N=100
C=20
# total FILE: the run's total time in seconds, from its CSV.
total() {
	awk -F, 'NR == 2 { print $5 }' "$1"
}

for net in analytic simgrid; do
	"$SIM" --platform lan --network $net --batch $N --work-ms 100 \
	    --policy wq --csv "$T/free-$net.csv" > "$T/free-$net.out" 2>&1 ||
	    fail "$net: r3q-sim without --master-cost failed"
	grep -q '^master:' "$T/free-$net.out" &&
	    fail "$net: a master line without --master-cost"
	"$SIM" --platform lan --network $net --batch $N --work-ms 100 \
	    --policy wq --master-cost 0 --csv "$T/zero-$net.csv" \
	    > "$T/zero-$net.out" 2>&1 || fail "$net: --master-cost 0 failed"
	cmp -s "$T/free-$net.csv" "$T/zero-$net.csv" ||
	    fail "$net: --master-cost 0 changed the run"
	"$SIM" --platform lan --network $net --batch $N --work-ms 100 \
	    --policy wq --master-cost $C --csv "$T/cost-$net.csv" \
	    > "$T/cost-$net.out" 2>&1 ||
	    fail "$net: --master-cost $C failed: $(cat "$T/cost-$net.out")"
	grep -q "^summary: job 1 done, policy wq, batch of $N tasks, $N done" \
	    "$T/cost-$net.out" || fail "$net: not every task done"
	free=$(total "$T/free-$net.csv")
	cost=$(total "$T/cost-$net.csv")
	awk -v f="$free" -v c="$cost" -v n=$N -v ms=$C 'BEGIN {
		exit !(c >= 2 * n * ms / 1000 && c > f) }' ||
	    fail "$net: $cost s with --master-cost $C, $free s without: not above the serial bound $((2 * N * C)) ms and the free run"
	line=$(grep '^master:' "$T/cost-$net.out") ||
	    fail "$net: no master line with --master-cost"
	frames=$(echo "$line" | awk '{ print $2 }')
	busy=$(echo "$line" | sed 's/.*busy \([0-9.]*\) s.*/\1/')
	[ "$frames" -ge $((2 * N)) ] ||
	    fail "$net: $frames frames through the master, fewer than $((2 * N))"
	awk -v f="$frames" -v b="$busy" -v ms=$C 'BEGIN {
		d = b - f * ms / 1000; exit !(d < 1e-6 && d > -1e-6) }' ||
	    fail "$net: master busy $busy s for $frames frames of $C ms"
	ok "$net: $N tasks in $cost s with $C ms a frame ($frames frames), $free s without"
done

# bad VALUE: r3q-sim refuses --master-cost VALUE, naming the flag.
bad() {
	if "$SIM" --platform lan --batch 1 --master-cost "$1" \
	    > "$T/bad.out" 2>&1; then
		fail "--master-cost '$1' was accepted"
	fi
	grep -q -- "--master-cost: '$1' is not a number from 0 to 60000" \
	    "$T/bad.out" || fail "--master-cost '$1': $(cat "$T/bad.out")"
}
for v in -1 abc 20ms 60001 ''; do
	bad "$v"
done
"$SIM" --driver bnb --pfsp /dev/null --master-cost 5 > "$T/bad.out" 2>&1 &&
    fail "--master-cost with --driver bnb was accepted"
grep -q -- "--master-cost is for --driver es" "$T/bad.out" ||
    fail "--driver bnb --master-cost: $(cat "$T/bad.out")"
ok "bad --master-cost values are refused"
