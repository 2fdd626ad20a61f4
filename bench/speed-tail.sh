#!/bin/sh
# Speed-aware tail (issue 23, target 2): the grid of bench/simulate-out/speed-tail.txt.
# usage: bench/speed-tail.sh R3Q-SIM [scale|lan|all]
# One simulation at a time, niced; prints the command and the lines that matter.
sim=${1:?usage: $0 r3q-sim [scale|lan|all]}
what=${2:-all}
run() {
	echo "== r3q-sim $*"
	nice "$sim" "$@" --quiet --stats 2>&1 | grep -E '^(summary:|time:|replicas |efficiency:|bound:|simulator:|core:)'
}
if [ "$what" = scale ] || [ "$what" = all ]; then
	for n in 100 1000 10000; do
		for lat in 10 100; do
			for seed in 1 2 3; do
				run --network analytic --workers $n \
				    --speeds lognormal:1:0.5 --latency $lat \
				    --work-ms 1000 --mu $n --lambda $((9 * n)) \
				    --reevaluate-parents --generations 2 \
				    --seed $seed --policy r3q --queue-factor auto
			done
		done
	done
fi
if [ "$what" = lan ] || [ "$what" = all ]; then
	for ms in 100 500 1000; do
		for qf in auto 2; do
			for seed in 1 2 3; do
				run --platform lan --work-ms $ms --generations 20 \
				    --seed $seed --policy r3q --queue-factor $qf
			done
		done
	done
fi
