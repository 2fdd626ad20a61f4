# Worker-to-worker exchanges over real, rate-limited links.
# Four workers, each in its own network namespace, joined by veth pairs to
# a bridge in a fifth namespace (where masterd runs); each worker's egress
# is shaped by tc htb, one class per destination, so every ordered pair
# (i, j) has its own rate.  netem is not available, so the start-up cost is
# peer_delay, emulated in workerd.  Checks, only on the sides a loaded
# machine cannot move (it can only make things slower): all 12 links are
# measured, none above 1.2 x its configured rate nor with a start-up below
# peer_delay; an exchange of a few MB per event ends no sooner than 0.85 x
# its schedule's prediction; the fatal matrix's exchange runs with
# caterpillar and the portfolio; an island ES job whose migrants (1 MB a
# message) cross these links gives the answer of r3qctl islands --local,
# bytes moved worker to worker.  The figures that load moves (each link
# within 20 % of its rate, the exchange within 15 % of its prediction,
# the portfolio measurably sooner than caterpillar) are printed, and
# asserted only in the benchmark (PEER_NETNS_BENCH, below): make check
# holds no timing assertion.
#
# PEER_NETNS_BENCH=FILE (bench/exchange --real): after the checks, run
# caterpillar, open shop and the portfolio on both matrices, print a table
# and write it to FILE as CSV; then the island ES with each of them on the
# uneven links, its time in migration as a share of the job's, a table and
# FILE with .csv replaced by -islands.csv.  Needs root and ip netns: SKIP
# otherwise.
. "${top_srcdir:-.}/tests/regress/lib.sh"

NS=r3x$$
P=4
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: peer-netns.sh needs root for ip netns and tc"
	exit 77
fi
if ! command -v ip > /dev/null 2>&1 || ! command -v tc > /dev/null 2>&1 ||
    ! ip netns add "${NS}h" 2> "$T/netns.err"; then
	echo "SKIP: cannot make a network namespace: $(cat "$T/netns.err" 2>/dev/null)"
	exit 77
fi
cleanup_ns() {
	# What runs in our namespaces (ours alone), then the namespaces.
	for k in h 1 2 3 4; do
		for p in $(ip netns pids "$NS$k" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null || true
		done
	done
	ip netns del "${NS}h" 2>/dev/null || true
	for k in 1 2 3 4; do ip netns del "${NS}$k" 2>/dev/null || true; done
}
trap 'cleanup_ns; cleanup' EXIT

# Rate of i -> j in Mbit/s (MB/s x 8): uneven, every one its own.
rate() {
	case "$1$2" in
	12) echo 24 ;; 13) echo 40 ;; 14) echo 32 ;;
	21) echo 48 ;; 23) echo 24 ;; 24) echo 40 ;;
	31) echo 32 ;; 32) echo 48 ;; 34) echo 24 ;;
	41) echo 40 ;; 42) echo 32 ;; 43) echo 48 ;;
	esac
}

ip netns exec "${NS}h" ip link add br0 type bridge || fail "ip link add bridge"
ip -n "${NS}h" addr add 10.79.0.1/24 dev br0
ip -n "${NS}h" link set br0 up
ip -n "${NS}h" link set lo up
for k in 1 2 3 4; do
	ip netns add "${NS}$k" || fail "ip netns add"
	ip link add "v$k" netns "${NS}$k" type veth peer name "b$k" netns "${NS}h" ||
	    fail "ip link add veth"
	ip -n "${NS}$k" addr add "10.79.0.1$k/24" dev "v$k"
	ip -n "${NS}$k" link set lo up
	ip -n "${NS}$k" link set "v$k" up
	ip -n "${NS}h" link set "b$k" master br0
	ip -n "${NS}h" link set "b$k" up
	# htb: small packets (ACKs) first and unshaped, then one class per
	# destination worker, everything else (the master) unshaped.
	tc -n "${NS}$k" qdisc add dev "v$k" root handle 1: htb default 99 r2q 100 ||
	    { echo "SKIP: tc htb is not available"; exit 77; }
	tc -n "${NS}$k" class add dev "v$k" parent 1: classid 1:99 htb rate 1gbit quantum 60000
	tc -n "${NS}$k" class add dev "v$k" parent 1: classid 1:1 htb rate 1gbit quantum 60000 prio 0
	tc -n "${NS}$k" filter add dev "v$k" parent 1: protocol ip prio 1 u32 \
	    match ip protocol 6 0xff match u16 0x0000 0xff80 at 2 flowid 1:1
	for j in 1 2 3 4; do
		[ "$j" != "$k" ] || continue
		tc -n "${NS}$k" class add dev "v$k" parent 1: classid "1:1$j" htb \
		    rate "$(rate $k $j)mbit" burst 15k cburst 15k prio 1
		tc -n "${NS}$k" filter add dev "v$k" parent 1: protocol ip prio 2 \
		    u32 match ip dst "10.79.0.1$j/32" flowid "1:1$j"
	done
done
# (exec: in the background, $! is the daemon itself, which cleanup kills)
in_ns() { _ns=$1; shift; exec ip netns exec "$NS$_ns" "$@"; }

"$MKCERTS" --host 10.79.0.1 "$T/certs" w1 w2 w3 w4 > /dev/null
cat > "$T/masterd.conf" <<EOC
listen = 10.79.0.1:0
control = $T/ctl.sock
ca = $T/certs/ca.pem
cert = $T/certs/master.pem
key = $T/certs/master.key
journal = $T/journal.db
EOC
in_ns h "$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
MASTER_PID=$!
PIDS="$PIDS $MASTER_PID"
waitfor "grep -q 'listening on' '$T/masterd.log'" 10 || fail "masterd did not start"
PORT=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' "$T/masterd.log" | tail -n 1)
R3Q_CONTROL=$T/ctl.sock
export R3Q_CONTROL
for k in 1 2 3 4; do
	cat > "$T/w$k.conf" <<EOC
master = 10.79.0.1:$PORT
ca = $T/certs/ca.pem
cert = $T/certs/w$k.pem
key = $T/certs/w$k.key
cpus = 1
reconnect_max = 1s
peer_listen = 10.79.0.1$k:7412
peer_delay = 10ms
EOC
	in_ns "$k" "$WORKERD" -d -v -f "$T/w$k.conf" >> "$T/w$k.log" 2>&1 &
	PIDS="$PIDS $!"
done
wait_workers 4

# timing CHECK MESSAGE: in the benchmark a failure; in make check, where a
# loaded machine may slow a sender below its link (3.86 of 6 MB/s seen
# under a sanitizer), a printed figure.
timing() {
	if eval "$1"; then
		return 0
	fi
	[ -n "${PEER_NETNS_BENCH:-}" ] && fail "$2"
	echo "figure (asserted only by bench/exchange --real): $2"
}

# The matrix: no link above 1.2 x its rate (the shaping holds), every
# start-up at least peer_delay; within 20 % of its rate in the benchmark.
"$R3QCTL" links --measure --bytes 3M > "$T/links.out" 2> "$T/links.err" ||
    fail "links --measure: $(cat "$T/links.err")"
cat "$T/links.out"
n=0
while read -r src dst su mbs age; do
	[ "$src" != SRC ] || continue
	want=$(rate "${src#w}" "${dst#w}")
	awk -v m="$mbs" -v w="$want" 'BEGIN { exit !(m / (w / 8) < 1.2) }' ||
	    fail "$src -> $dst: measured $mbs MB/s, above its configured $(awk -v w="$want" 'BEGIN { print w / 8 }') MB/s"
	timing "awk -v m=$mbs -v w=$want 'BEGIN { exit !(m / (w / 8) > 0.8) }'" \
	    "$src -> $dst: measured $mbs MB/s, below 0.8 x its configured $(awk -v w="$want" 'BEGIN { print w / 8 }') MB/s"
	awk -v s="$su" 'BEGIN { exit !(s >= 10000) }' ||
	    fail "$src -> $dst: start-up $su us, below peer_delay"
	n=$((n + 1))
done < "$T/links.out"
[ "$n" -eq 12 ] || fail "expected 12 links, got $n"
ok "12 links measured, none above its configured rate"

# An exchange of 2 MB per event: no sooner than the links allow (0.85 x
# the prediction); within 15 % of it in the benchmark.
"$R3QCTL" exchange run --bytes 2M > "$T/ex.out" 2> "$T/ex.err" ||
    fail "exchange run: $(cat "$T/ex.err" "$T/ex.out")"
cat "$T/ex.out"
r=$(sed -n 's/^measured: .*(\([0-9.]*\) x predicted.*/\1/p' "$T/ex.out")
awk -v r="$r" 'BEGIN { exit !(r > 0.85) }' ||
    fail "measured / predicted = $r: sooner than the links allow"
timing "awk -v r=$r 'BEGIN { exit !(r < 1.15) }'" \
    "measured / predicted = $r, more than 15 % over the prediction"
ok "an exchange of 2 MB an event ended at $r x its prediction"

# The fatal matrix, built: all links at 4 MB/s, the fatal sizes (x = 1 MB).
for k in 1 2 3 4; do
	for j in 1 2 3 4; do
		[ "$j" != "$k" ] || continue
		tc -n "${NS}$k" class change dev "v$k" parent 1: classid "1:1$j" \
		    htb rate 32mbit burst 15k cburst 15k prio 1
	done
done
"$R3QCTL" links --measure --bytes 2M > "$T/links2.out" 2> "$T/links2.err" ||
    fail "links --measure (uniform): $(cat "$T/links2.err")"
fatal() {
	"$R3QCTL" exchange run --fatal --bytes 1M --algo "$1" > "$T/fatal-$1.out" \
	    2> "$T/fatal-$1.err" || fail "fatal, $1: $(cat "$T/fatal-$1.err")"
	sed -n 's/^measured: *\([0-9.]*\) s.*/\1/p' "$T/fatal-$1.out"
}
tc_=$(fatal caterpillar)
tp_=$(fatal portfolio)
echo "fatal matrix, p = 4, x = 1 MB at 4 MB/s: caterpillar $tc_ s, portfolio $tp_ s"
[ -n "$tc_" ] && [ -n "$tp_" ] ||
    fail "the fatal matrix's exchanges printed no time: $(cat "$T/fatal-caterpillar.out" "$T/fatal-portfolio.out")"
timing "awk -v c=$tc_ -v p=$tp_ 'BEGIN { exit !(p < 0.9 * c) }'" \
    "the portfolio ($tp_ s) is not measurably sooner than caterpillar ($tc_ s)"
ok "fatal matrix: portfolio $tp_ s, caterpillar $tc_ s"

# The island ES through the namespaces: one island a worker (wq, each
# epoch 100 ms), 1 MB a migrant message over the 4 MB/s links.
ISL="--islands 4 --mu 10 --lambda 20 --dim 10 --generations 20
    --migrate-every 5 --migrants 2 --migrant-bytes 1000000 --seed 7
    --policy wq --work-ms 100"
# The answer without the job's number, its time and its exchanges.
ans() {
	sed -e 's/"job":[0-9]*,//' -e 's/"elapsed_ns":[0-9]*,//' \
	    -e 's/"exchanged_bytes":[0-9]*,//' -e 's/"migration_ns":[0-9]*,//' \
	    -e 's/"exchanges":[0-9]*,//' -e 's/"exchanges_failed":[0-9]*,//' "$1"
}
jfield() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}
"$R3QCTL" islands --local $ISL --json > "$T/isl-local.json" ||
    fail "islands --local failed"
"$R3QCTL" islands $ISL --json > "$T/isl.json" 2> "$T/isl.err" ||
    fail "the island job failed: $(cat "$T/isl.json" "$T/isl.err")"
[ "$(ans "$T/isl.json")" = "$(ans "$T/isl-local.json")" ] ||
    fail "the island job's answer differs from --local's: $(cat "$T/isl.json") vs $(cat "$T/isl-local.json")"
x=$(jfield "$T/isl.json" exchanged_bytes)
[ "$x" -gt 0 ] || fail "the island job moved no bytes worker to worker: $(cat "$T/isl.json")"
[ "$(jfield "$T/isl.json" exchanges_failed)" -eq 0 ] ||
    fail "an exchange of the island job failed: $(grep 'exchange [0-9]* failed' "$T/masterd.log")"
ok "the island job through the namespaces: --local's answer, $x bytes worker to worker in $(jfield "$T/isl.json" exchanges) exchanges"

[ -n "${PEER_NETNS_BENCH:-}" ] || exit 0

# bench/exchange --real: the algorithms side by side, measured / t_tb.
echo "matrix,algorithm,winner,t_tb_s,predicted_s,measured_s,measured_over_t_tb,measured_over_predicted" > "$PEER_NETNS_BENCH"
bench_run() {
	"$R3QCTL" exchange run $1 --algo "$2" --json > "$T/bench.json" 2>&1 ||
	    fail "bench: $2 on $3: $(cat "$T/bench.json")"
	python3 - "$T/bench.json" "$3" "$2" >> "$PEER_NETNS_BENCH" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
print("%s,%s,%s,%.6f,%.6f,%.6f,%.4f,%.4f" % (sys.argv[2], sys.argv[3],
    a["algo"], a["t_tb"], a["predicted"], a["measured"],
    a["measured"] / a["t_tb"], a["measured"] / a["predicted"]))
EOF
}
for a in caterpillar openshop portfolio; do bench_run "--fatal --bytes 1M" $a fatal; done
for k in 1 2 3 4; do
	for j in 1 2 3 4; do
		[ "$j" != "$k" ] || continue
		tc -n "${NS}$k" class change dev "v$k" parent 1: classid "1:1$j" \
		    htb rate "$(rate $k $j)mbit" burst 15k cburst 15k prio 1
	done
done
"$R3QCTL" links --measure --bytes 3M > /dev/null || fail "bench: links --measure"
for a in caterpillar openshop portfolio; do bench_run "--bytes 2M" $a uneven; done
echo "bench/exchange --real: $P workers in namespaces, measured completion / t_tb"
awk -F, '{ printf "%-8s %-12s %-34s %9s %12s %11s %19s %23s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' \
    "$PEER_NETNS_BENCH"

# The island ES on the uneven links, one job an algorithm: its time in
# migration (masterd's wall time in the peer exchanges, migration_ns)
# over the job's (elapsed_ns).  4 islands on the 4 workers, 7 migrations
# of 2 MB a message, each epoch 200 ms of (sleeping) work.
ICSV=${PEER_NETNS_BENCH%.csv}-islands.csv
[ "$ICSV" != "$PEER_NETNS_BENCH" ] || ICSV=$PEER_NETNS_BENCH-islands.csv
ISL="--islands 4 --mu 10 --lambda 20 --dim 10 --generations 40
    --migrate-every 5 --migrants 2 --migrant-bytes 2000000 --seed 7
    --policy wq --work-ms 200"
echo "algorithm,migrations,exchanges,exchanges_failed,exchanged_bytes,migration_s,job_s,migration_share,equals_local" > "$ICSV"
for a in caterpillar openshop portfolio; do
	"$R3QCTL" islands --local $ISL --exchange-algo "$a" --json \
	    > "$T/isl-local.json" || fail "bench: islands --local failed"
	"$R3QCTL" islands $ISL --exchange-algo "$a" --json > "$T/isl-$a.json" ||
	    fail "bench: the island job with $a failed: $(cat "$T/isl-$a.json")"
	[ "$(ans "$T/isl-$a.json")" = "$(ans "$T/isl-local.json")" ] ||
	    fail "bench: the island job with $a: answer differs from --local's"
	eq=yes
	python3 - "$T/isl-$a.json" "$a" "$eq" >> "$ICSV" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
print("%s,%d,%d,%d,%d,%.3f,%.3f,%.4f,%s" % (sys.argv[2], a["migrations"],
    a["exchanges"], a["exchanges_failed"], a["exchanged_bytes"],
    a["migration_ns"] / 1e9, a["elapsed_ns"] / 1e9,
    a["migration_ns"] / a["elapsed_ns"], sys.argv[3]))
EOF
done
echo "bench/exchange --real: the island ES, time in migration / job time (uneven links)"
awk -F, '{ printf "%-12s %10s %9s %16s %15s %11s %8s %15s %12s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' \
    "$ICSV"
