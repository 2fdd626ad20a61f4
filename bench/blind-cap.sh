#!/bin/sh
# The speed-aware tail's blind replicas (SCHED_BLIND_COPIES in
# common/sched/sched.c): two r3q-sim builds side by side on small jobs on
# large clusters, where every blind worker used to take a copy of every
# task, and on the scale case of bench/simulate (10 tasks a worker).
# usage: bench/blind-cap.sh BEFORE AFTER [CSV]
#   BEFORE, AFTER: r3q-sim binaries.  Prints, per case and build, the
#   simulated total, efficiency, replicas, executions and the simulator's
#   CPU (most of it the core's when replicas flood); CSV to CSV if given.
B=${1:?usage: bench/blind-cap.sh BEFORE AFTER [CSV]}
A=${2:?usage: bench/blind-cap.sh BEFORE AFTER [CSV]}
CSV=${3:-/dev/null}
T=$(mktemp) || exit 1
trap 'rm -f "$T"' EXIT
echo "build,workers,latency_ms,tasks_per_gen,generations,total_s,efficiency,replicas,executions,cpu_s" > "$CSV"
run() {	# build-name binary workers latency mu lambda gens [extra]
	name=$1 bin=$2 n=$3 lat=$4 mu=$5 la=$6 g=$7
	shift 7
	"$bin" --network analytic --workers "$n" --speeds lognormal:1:0.5 \
	    --latency "$lat" --work-ms 1000 --mu "$mu" --lambda "$la" \
	    --generations "$g" --seed 1 --quiet --stats --policy r3q \
	    --queue-factor auto "$@" > "$T" 2>&1 || { cat "$T"; exit 1; }
	tot=$(sed -n 's/^summary: .* evaluations, \([0-9.]*\) s.*/\1/p' "$T")
	eff=$(sed -n 's/^efficiency: \([0-9.]*\) %.*/\1/p' "$T")
	rep=$(sed -n 's/^replicas \([0-9]*\),.*/\1/p' "$T")
	ex=$(sed -n 's/^simulator: .* \([0-9]*\) executions in .*/\1/p' "$T")
	cpu=$(sed -n 's/^simulator: .*; \([0-9.]*\) s CPU.*/\1/p' "$T")
	tpg=$(( $# > 0 ? mu + la : la ))
	printf "%-7s %6s %4s ms %7s %3s %9s s %6s %% %8s %8s %8s s\n" \
	    "$name" "$n" "$lat" "$tpg" "$g" "$tot" "$eff" "$rep" "$ex" "$cpu"
	echo "$name,$n,$lat,$tpg,$g,$tot,$eff,$rep,$ex,$cpu" >> "$CSV"
}
echo "# $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg); lognormal speeds (sigma 0.5), 1000 ms tasks, r3q-auto, seed 1"
printf "%-7s %6s %7s %7s %3s %11s %8s %8s %8s %10s\n" build workers link tasks/g gen total eff replicas execs "CPU"
echo "## small jobs on large clusters (mu = lambda = tasks/g, 3 generations)"
for n in 100 1000 10000; do
	for k in 10 100; do
		run before "$B" $n 10 $k $k 3
		run after "$A" $n 10 $k $k 3
	done
done
echo "## the scale case: 10 tasks a worker a generation, 2 generations"
for n in 1000 10000; do
	for lat in 10 100; do
		run before "$B" $n $lat $n $((9 * n)) 2 --reevaluate-parents
		run after "$A" $n $lat $n $((9 * n)) 2 --reevaluate-parents
	done
done
