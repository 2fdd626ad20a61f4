# Relays (issue 20) under WAN emulation, on loopback: a relay's `delay`
# is its link's, the paper's one Internet hop (workerd.conf(5)).  r1 is a
# relay with delay D; w1 behind it has no delay of its own; w2 is direct
# with delay D; w3 behind r1 has its own delay D too (two hops).  After a
# job, the master's round trips (r3qctl workers, RTT): w2's is about 4 D
# (2 D each way), w1's the same (the relay's delay once, not twice), w3's
# about 8 D.  Bounds, generous for a loaded machine but apart enough to
# tell 1x from 2x: w1 and w2 in [3 D, 6 D), w3 at least 6 D.
. "${top_srcdir:-.}/tests/regress/lib.sh"

D=100
"$MKCERTS" --relay r1 "$T/certs" w1 w2 w3 > /dev/null
start_master

RELAY_EXTRA="delay = ${D}ms"
start_relay r1

MPORT=$PORT
PORT=$RPORT
start_worker w1
WORKER_EXTRA="delay = ${D}ms" start_worker w3
PORT=$MPORT
WORKER_EXTRA="delay = ${D}ms" start_worker w2
waitfor "[ \$('$R3QCTL' workers | tail -n +2 | wc -l) -eq 4 ]" 30 ||
    fail "expected 4 workers, have: $("$R3QCTL" workers)"
"$R3QCTL" workers > "$T/workers.out"
grep -q '^w1 via r1 ' "$T/workers.out" && grep -q '^w3 via r1 ' "$T/workers.out" &&
    grep -q '^w2 ' "$T/workers.out" || fail "workers: $(cat "$T/workers.out")"

# Short tasks, so that each worker's round trip is sampled a few times.
"$R3QCTL" es --mu 4 --lambda 16 --dim 5 --generations 4 --lu 1 --seed 3 \
    --policy wq --quiet > "$T/es.out" 2>&1 || fail "the job failed: $(cat "$T/es.out")"

# rtt NAME: its RTT column in ms (the name may be "NAME via PATH").
rtt() {
	"$R3QCTL" workers | awk -v w="$1" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == "RTT") c = i; next }
		$1 == w { k = c + ($2 == "via" ? 2 : 0); v = $k
			if (v !~ /ms$/) { print "-"; exit }
			sub(/ms$/, "", v); printf "%d", v; exit }'
}
r1=$(rtt r1)
w1=$(rtt w1)
w2=$(rtt w2)
w3=$(rtt w3)
"$R3QCTL" workers > "$T/workers.out"
echo "# relay-delay D=${D}ms rtt-ms direct-w2 $w2 relayed-w1 $w1 relay-r1 $r1 two-hops-w3 $w3"
for v in "$w1" "$w2" "$w3"; do
	case $v in ''|*[!0-9]*) fail "no round trip measured: $(cat "$T/workers.out")" ;; esac
done
[ "$w2" -ge $((3 * D)) ] && [ "$w2" -lt $((6 * D)) ] ||
    fail "direct w2 with delay ${D} ms: round trip ${w2} ms, not about $((4 * D))"
[ "$w1" -ge $((3 * D)) ] ||
    fail "w1 behind r1 (delay ${D} ms): round trip ${w1} ms, under 3 x ${D}: the relay's delay does not hold what it carries"
[ "$w1" -lt $((6 * D)) ] ||
    fail "w1 behind r1 (delay ${D} ms): round trip ${w1} ms, about twice a direct worker's (${w2} ms)"
ok "a worker behind a relay with delay ${D} ms: round trip ${w1} ms, a direct one's with that delay ${w2} ms (about 4 x ${D}: the hop's delay once)"
[ "$w3" -ge $((6 * D)) ] ||
    fail "w3 (delay ${D} ms) behind r1 (delay ${D} ms): round trip ${w3} ms, not the two hops' (about $((8 * D)))"
ok "a worker with its own delay behind it: ${w3} ms, the two delays added"
master_alive
