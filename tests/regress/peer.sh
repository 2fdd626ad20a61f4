# Worker-to-worker links and exchanges (issue 22), on loopback.  Three
# workers with peer_listen: they advertise it (r3qctl workers), the master
# measures the link matrix (r3qctl links --measure) and runs a total
# exchange planned by common/xchg (r3qctl exchange run), predicted vs
# measured.  Trust: a client certificate at a worker's peer_listen is
# refused and logged; an order sent by another worker (not the master)
# is refused, logged, and the worker connects nowhere.  Failure: a worker
# killed in the middle of an exchange makes it fail, naming the worker,
# within a bounded time; stopped (SIGSTOP, a hang), the same.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2 w3 w4
start_master
WORKER_EXTRA="peer_listen = 127.0.0.1:0
peer_delay = 2ms"
for w in w1 w2 w3; do start_worker $w; done
wait_workers 3
for w in w1 w2 w3; do
	waitfor "grep -q 'peer: listening for other workers on' '$T/$w.log'" 10 ||
	    fail "$w does not listen for peers"
done
P1=$(sed -n 's/.*peer: listening for other workers on 127.0.0.1:\([0-9]*\).*/\1/p' "$T/w1.log" | tail -n 1)
[ -n "$P1" ] || fail "no peer port for w1"

# The master knows each worker's peer address.
"$R3QCTL" workers > "$T/workers.out"
grep -q "127.0.0.1:$P1" "$T/workers.out" ||
    fail "r3qctl workers does not show w1's peer address: $(cat "$T/workers.out")"
ok "workers advertise their peer address"

# Links come up and are measured: 6 ordered pairs.
"$R3QCTL" links --measure --bytes 2M > "$T/links.out" 2> "$T/links.err" ||
    fail "links --measure failed: $(cat "$T/links.err")"
n=$(awk 'NR > 1 && $4 > 0 && $3 > 0 { n++ } END { print n + 0 }' "$T/links.out")
[ "$n" -eq 6 ] || fail "expected 6 measured links, got: $(cat "$T/links.out")"
# peer_delay = 2 ms is in each start-up
awk 'NR > 1 && $3 < 2000 { bad = 1 } END { exit bad }' "$T/links.out" ||
    fail "a start-up below peer_delay: $(cat "$T/links.out")"
"$R3QCTL" links --json > "$T/links.json"
grep -q '"startup_us"' "$T/links.json" || fail "links --json: $(cat "$T/links.json")"
ok "links measured: $(awk 'NR == 2 { print $1 "->" $2 ": " $3 " us, " $4 " MB/s" }' "$T/links.out")"

# A non-worker certificate at a peer_listen is refused, and logged.
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/client.pem" \
    -k "$T/certs/client.key" peerorder 127.0.0.1 "$P1" w2 127.0.0.1:1 \
    > "$T/client-peer.out" 2>&1 || true
waitfor "grep -q \"refused client: its certificate has role 'client', not worker\" '$T/w1.log'" 10 ||
    fail "w1 did not refuse a client certificate: $(cat "$T/client-peer.out")"
ok "a client certificate is refused at peer_listen"

# A worker (w4, not even connected to the master) sends w1 an order to
# probe an address of its choosing: refused, logged, nothing dialled.
python3 - "$T/lure" <<'EOF' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1] + ".port", "w").write("%d\n" % s.getsockname()[1])
s.settimeout(20)
try:
    c, a = s.accept()
    open(sys.argv[1] + ".hit", "w").write("connected\n")
except socket.timeout:
    pass
EOF
LURE_PID=$!
PIDS="$PIDS $LURE_PID"
waitfor "[ -s '$T/lure.port' ]" 10 || fail "lure did not start"
LPORT=$(cat "$T/lure.port")
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/w4.pem" -k "$T/certs/w4.key" \
    peerorder 127.0.0.1 "$P1" w2 "127.0.0.1:$LPORT" > "$T/forged.out" 2>&1 ||
    fail "w1 did not close on a forged order: $(cat "$T/forged.out")"
grep -q "refused a peer_order message from worker w4" "$T/w1.log" ||
    fail "w1 did not log the forged order"
sleep 1
[ ! -e "$T/lure.hit" ] || fail "w1 connected where a forged order said"
ok "a forged order is refused and nothing is dialled"

# An exchange completes: predicted vs measured.
"$R3QCTL" exchange run --bytes 1M > "$T/ex.out" 2> "$T/ex.err" ||
    fail "exchange run failed: $(cat "$T/ex.err" "$T/ex.out")"
grep -q '^measured: ' "$T/ex.out" || fail "no measured time: $(cat "$T/ex.out")"
grep -q '^algorithm:  .*, 6 events' "$T/ex.out" ||
    grep -q '^algorithm:  ' "$T/ex.out" || fail "no algorithm: $(cat "$T/ex.out")"
"$R3QCTL" exchange run --algo caterpillar --bytes 512K --json > "$T/ex.json" ||
    fail "exchange run --algo caterpillar failed"
grep -q '"ok":true' "$T/ex.json" || fail "caterpillar exchange: $(cat "$T/ex.json")"
n=$(grep -c '"pred_start"' "$T/ex.json")
[ "$n" -eq 6 ] || fail "caterpillar: expected 6 events, got $n"
grep -q '"end":-1' "$T/ex.json" && fail "an event without a measured end"
ok "exchange: $(sed -n 's/^measured: *//p' "$T/ex.out")"

# A bad algorithm is refused, naming it.
if "$R3QCTL" exchange run --algo nosuch > "$T/bad.out" 2>&1; then
	fail "an unknown algorithm was accepted"
fi
grep -q "nosuch" "$T/bad.out" || fail "the refusal does not name the algorithm: $(cat "$T/bad.out")"

# A worker killed mid-exchange: the exchange fails within a bounded time,
# naming it, and masterd goes on.
n=$(grep -c 'exchange [0-9]* among 3 workers: ' "$T/masterd.log")
"$R3QCTL" exchange run --bytes 200M --timeout 60s > "$T/kill.out" 2> "$T/kill.err" &
EX_PID=$!
PIDS="$PIDS $EX_PID"
waitfor "[ \$(grep -c 'exchange [0-9]* among 3 workers: ' '$T/masterd.log') -gt $n ]" 20 ||
    fail "the big exchange did not start"
sleep 0.5
kill -0 "$EX_PID" || fail "the big exchange was over before w3 could be killed"
kill -9 "$WPID_w3"
t0=$(date +%s)
waitfor "! kill -0 $EX_PID" 20 || fail "the exchange did not end within 20 s of w3's death"
t1=$(date +%s)
wait "$EX_PID" && fail "the exchange succeeded without w3"
grep -q "w3" "$T/kill.err" || fail "the failure does not name w3: $(cat "$T/kill.err")"
ok "w3 killed mid-exchange: failed in $((t1 - t0)) s: $(cat "$T/kill.err")"
master_alive

# A hung worker (stopped): bounded by the timeout, naming it.
start_worker w3
wait_workers 3
"$R3QCTL" exchange run --bytes 64K > /dev/null 2>&1 || true
n=$(grep -c 'exchange [0-9]* among 3 workers: ' "$T/masterd.log")
"$R3QCTL" exchange run --bytes 100M --timeout 3s > "$T/hang.out" 2> "$T/hang.err" &
EX_PID=$!
PIDS="$PIDS $EX_PID"
waitfor "[ \$(grep -c 'exchange [0-9]* among 3 workers: ' '$T/masterd.log') -gt $n ]" 20 ||
    fail "the exchange with a hang did not start"
kill -STOP "$WPID_w2"
waitfor "! kill -0 $EX_PID" 25 || { kill -CONT "$WPID_w2"; fail "a hung worker hung the exchange"; }
kill -CONT "$WPID_w2"
wait "$EX_PID" && fail "the exchange succeeded with w2 stopped"
grep -q "exchange failed" "$T/hang.err" || fail "no failure said: $(cat "$T/hang.err")"
ok "w2 stopped: $(cat "$T/hang.err")"
master_alive
