#!/bin/sh
# Do two r3q-sim builds give the same results?  (bench/results/simulate-out/sim-speed.txt)
# usage: bench/sim-ident.sh BEFORE AFTER
# Runs both on 13 configurations (generated platforms under --network
# analytic with 100, 1,000 and 10,000 workers and other policies and links,
# the paper's LAN and WAN grids and 100 generated workers under SimGrid's
# own network model, churn with --mtbf/--repair/--hang-rate under both
# models, a batch job with noise) and compares every line printed but the
# simulator's own costs (wall, CPU, us a frame), and the --csv and
# --gen-csv files, byte for byte.  Prints DIFF for each that differs.
B=${1:?usage: bench/sim-ident.sh BEFORE AFTER}
A=${2:?usage: bench/sim-ident.sh BEFORE AFTER}
T=$(mktemp -d /tmp/sim-ident.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
a() {
	echo "--network analytic --workers $1 --speeds lognormal:1:0.5 --latency 10 --work-ms 1000 --mu $1 --lambda $((9 * $1)) --reevaluate-parents --generations 2 --seed 1 --quiet --stats --policy r3q --queue-factor auto"
}
all() {
	bin=$1 d=$2
	mkdir -p "$d"
	run() {
		name=$1; shift
		"$bin" "$@" --csv "$d/$name.csv" --gen-csv "$d/$name.gcsv" \
		    > "$d/$name.raw" 2>&1
		echo "rc $?" >> "$d/$name.raw"
		grep -v -E '^(simulator|network):' "$d/$name.raw" |
		    sed -E 's/, [0-9.]+ s inside:.*$//; s/: [0-9.]+ a task; the rest.*$//' \
		    > "$d/$name.out"
	}
	run a10k $(a 10000)
	run a100 $(a 100)
	run a1000 $(a 1000)
	run a1000-rr $(a 1000) --policy rr
	run a1000-wq100 $(a 1000) --latency 100 --policy wq
	run lan100 --platform lan --work-ms 100 --generations 20 --seed 1 --policy r3q --queue-factor auto --stats
	run lan500-2 --platform lan --work-ms 500 --generations 20 --seed 2 --policy r3q --queue-factor 2 --stats
	run wan100-rwq --platform wan --delay 30 --work-ms 100 --generations 10 --seed 3 --policy rwq --stats
	run sg100 --workers 100 --speeds lognormal:1:0.5 --latency 10 --work-ms 1000 --mu 100 --lambda 900 --reevaluate-parents --generations 2 --seed 1 --policy r3q --queue-factor auto --stats
	run churn-a1000 $(a 1000) --latency 100 --mtbf 60s --repair 10s --hang-rate 0.1 --noise 0.2
	run churn-a10k $(a 10000) --latency 100 --mtbf 1h --repair 10m --hang-rate 0.01
	run churn-lan --platform lan --work-ms 100 --mtbf 5s --repair 3s --hang-rate 0.3 --generations 10 --seed 5 --stats
	run batch-a --network analytic --workers 500 --speeds uniform:0.5:2 --latency uniform:1:50 --batch 20000 --work-ms 200 --noise 0.3 --policy r3q --queue-factor auto --seed 7 --stats
}
all "$B" "$T/before"
all "$A" "$T/after"
n=0 bad=0
for f in "$T"/before/*.out "$T"/before/*.csv "$T"/before/*.gcsv; do
	n=$((n + 1))
	cmp -s "$f" "$T/after/${f##*/}" || { echo "DIFF ${f##*/}"; bad=$((bad + 1)); }
done
echo "$n files compared, $bad differ"
[ $bad -eq 0 ]
