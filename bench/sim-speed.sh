#!/bin/sh
# r3q-sim's own speed (issue 23, target 4): two builds side by side.
# usage: bench/sim-speed.sh BEFORE AFTER [WORKERS [RUNS]]
#   BEFORE, AFTER: r3q-sim binaries (e.g. a copy of main's build/sim/r3q-sim
#   and this tree's).  Runs them in turn (before, after, before, ...) RUNS
#   times (default 3) on the scale case of bench/results/simulate-out/sim-speed.txt,
#     r3q-sim --network analytic --workers N --speeds lognormal:1:0.5 \
#       --latency 10 --work-ms 1000 --mu N --lambda 9N --reevaluate-parents \
#       --generations 2 --seed 1 --quiet --stats --policy r3q --queue-factor auto
#   (N = WORKERS, default 10000), prints each run's `simulator:' figures,
#   the medians and the ratio, and checks that both give the same results
#   (every line but the simulator's own costs).  On a shared machine compare
#   CPU seconds, and runs taken in the same minutes.
B=${1:?usage: bench/sim-speed.sh BEFORE AFTER [WORKERS [RUNS]]}
A=${2:?usage: bench/sim-speed.sh BEFORE AFTER [WORKERS [RUNS]]}
N=${3:-10000}
R=${4:-3}
T=$(mktemp -d /tmp/sim-speed.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
run() {
	"$1" --network analytic --workers $N --speeds lognormal:1:0.5 \
	    --latency 10 --work-ms 1000 --mu $N --lambda $((9 * N)) \
	    --reevaluate-parents --generations 2 --seed 1 --quiet --stats \
	    --policy r3q --queue-factor auto
}
# the results without the simulator's own costs (wall, CPU, us a frame)
results() {
	grep -v -E '^(simulator|network):' "$1" |
	    sed -E 's/, [0-9.]+ s inside:.*$//; s/: [0-9.]+ a task; the rest.*$//'
}
echo "# $N workers, $R runs each, $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ $i -le $R ]; do
	for w in before after; do
		[ $w = before ] && bin=$B || bin=$A
		run "$bin" > "$T/$w.$i" || { echo "$w run $i failed" >&2; exit 1; }
		results "$T/$w.$i" > "$T/$w.res"
		sed -n -E "s/^simulator: .* ([0-9]+) executions in ([0-9.]+) s wall: ([0-9]+) tasks\/s, ([0-9.]+) MiB max RSS; ([0-9.]+) s CPU: ([0-9]+) tasks\/CPU-s/$w \1 \2 \3 \4 \5 \6/p" \
		    "$T/$w.$i" >> "$T/all"
	done
	cmp -s "$T/before.res" "$T/after.res" ||
	    { echo "results differ (run $i):"; diff "$T/before.res" "$T/after.res"; }
	i=$((i + 1))
done
awk '
{ n[$1]++; ex[$1] = $2; w[$1, n[$1]] = $3; c[$1, n[$1]] = $6; m[$1, n[$1]] = $5
  printf "%-6s run %d: %d executions, %.3f s wall (%d tasks/s), %.3f s CPU (%d tasks/CPU-s), %.1f MiB max RSS\n", $1, n[$1], $2, $3, $4, $6, $7, $5 }
function med(a, k, cnt,    i, j, t, v) {
	for (i = 1; i <= cnt; i++) v[i] = a[k, i]
	for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return (cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2)
}
END {
	for (k in n) { W[k] = med(w, k, n[k]); C[k] = med(c, k, n[k]); M[k] = med(m, k, n[k]) }
	printf "%-6s median: %.3f s wall = %d tasks/s, %.3f s CPU = %d tasks/CPU-s, %.1f MiB max RSS\n", "before", W["before"], ex["before"] / W["before"], C["before"], ex["before"] / C["before"], M["before"]
	printf "%-6s median: %.3f s wall = %d tasks/s, %.3f s CPU = %d tasks/CPU-s, %.1f MiB max RSS\n", "after", W["after"], ex["after"] / W["after"], C["after"], ex["after"] / C["after"], M["after"]
	printf "after/before: wall x %.3f, CPU x %.3f (%.2fx as fast in CPU)\n", W["after"] / W["before"], C["after"] / C["before"], C["before"] / C["after"]
}' "$T/all"
