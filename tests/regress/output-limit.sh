# output_limit (issue 24, "Bounded everything"), end to end: a control
# client that asks to follow a running ES job (a JobQuery with watch, as
# `r3qctl wait` sends) and then reads nothing gets a GenReport a
# generation all the same.  masterd pauses it at client_buffer and, as
# the reports pile up past output_limit, drops it with one log line
# naming it, long before output_timeout would; what it held for it stays
# within output_limit and a frame.  Beside it an honest `r3qctl wait` on
# the same job keeps reading to the job's end, an honest map gets its
# outputs, the workers stay connected, and an ES job afterwards gives the
# `r3qctl es --local` answer.  The drop is counted in
# r3q_peers_dropped_total{limit="output_limit"}.
. "${top_srcdir:-.}/tests/regress/lib.sh"

LIMIT=131072
ES="--mu 5 --lambda 10 --dim 10 --generations 6 --lu 20 --seed 7"

mkcerts w1 w2
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
MASTER_EXTRA="http = 127.0.0.1:0
client_buffer = 64K
worker_buffer = 64K
output_limit = 128K
output_timeout = 600s"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
start_worker w1 2
start_worker w2 2
wait_workers 2

# A job of many quick generations: a report each, about 70 bytes.
long=$("$R3QCTL" submit es --mu 1 --lambda 2 --dim 2 --lu 0 \
    --generations 1000000 --seed 1)
timeout $((600 * SAN_SLOW)) "$R3QCTL" wait "$long" > "$T/wait.out" 2>&1 &
WAITPID=$!
PIDS="$PIDS $WAITPID"
python3 - "$T/ctl.sock" "$long" <<'EOF' > "$T/watch.out" 2>&1 &
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
def varint(n):
    b = b""
    while True:
        if n < 0x80:
            return b + bytes([n])
        b += bytes([n & 0x7f | 0x80])
        n >>= 7
q = b"\x08" + varint(int(sys.argv[2])) + b"\x10\x01"  # JobQuery job, watch
body = b"\xfa\x01" + varint(len(q)) + q                # Envelope field 31
s.sendall(b"R3Q\x01" + struct.pack(">I", len(body)) + body)
print("watching", flush=True)
time.sleep(3600)
EOF
NPID=$!
PIDS="$PIDS $NPID"
seq 1 3000 > "$T/in"
timeout $((120 * SAN_SLOW)) "$R3QCTL" map echo "$T/in" > "$T/out" 2> "$T/map.err" ||
    fail "the honest map beside it: $(cat "$T/map.err")"
cmp -s "$T/in" "$T/out" || fail "the honest map's outputs differ from its inputs"
waitfor "grep -q 'more than output_limit' '$T/masterd.log'" $((120 * SAN_SLOW)) ||
    fail "the watcher that does not read was not dropped: $(grep -E 'not reading|dropped' "$T/masterd.log" | tail -n 3)"
master_alive
line=$(grep -E "client [^ ]+ \(control, pid $NPID\) dropped: [0-9]+ bytes queued for it, more than output_limit \($LIMIT\)" \
    "$T/masterd.log") || fail "the drop line: $(grep 'more than output_limit' "$T/masterd.log")"
[ "$(grep -c 'more than output_limit' "$T/masterd.log")" -eq 1 ] ||
    fail "not one drop, one line: $(grep 'more than output_limit' "$T/masterd.log")"
grep -qE "client [^ ]+ \(control, pid $NPID\) is not reading its results: [0-9]+ bytes queued \(client_buffer\)" \
    "$T/masterd.log" || fail "the watcher was not paused first"
grep -q 'output_timeout' "$T/masterd.log" && fail "a peer was dropped by output_timeout"
queued=$(echo "$line" | sed 's/.*dropped: \([0-9]*\) bytes.*/\1/')
# Past the limit by one GenReport frame at most.
[ "$queued" -le $((LIMIT + 1024)) ] ||
    fail "masterd held $queued bytes for the watcher (output_limit $LIMIT)"
ok "a watcher that never reads is paused, then dropped past output_limit with $queued bytes held"

# The honest watcher is still there and reading: the job's end reaches it.
kill -0 "$WAITPID" 2>/dev/null || fail "the honest r3qctl wait ended: $(tail -n 3 "$T/wait.out")"
"$R3QCTL" cancel "$long" > /dev/null || fail "cancel of the long job"
rc=0
wait "$WAITPID" || rc=$?
grep -q "^job $long cancelled" "$T/wait.out" ||
    fail "r3qctl wait (status $rc) did not see the job's end: $(tail -n 3 "$T/wait.out")"
gens=$(grep -c '^gen ' "$T/wait.out" || true)
[ "$gens" -gt 100 ] || fail "r3qctl wait saw $gens generations: $(head -n 3 "$T/wait.out")"
[ "$(grep -c ' dropped: ' "$T/masterd.log")" -eq 1 ] ||
    fail "another peer was dropped: $(grep ' dropped: ' "$T/masterd.log")"
grep -qE 'worker w[12] .*(lost|dropped|not reading)' "$T/masterd.log" &&
    fail "a worker was disturbed: $(grep -E 'worker w[12] ' "$T/masterd.log" | tail -n 3)"
[ "$(grep -c 'worker w[12] joined' "$T/masterd.log")" -eq 2 ] ||
    fail "a worker joined again: $(grep 'joined' "$T/masterd.log")"
job=$("$R3QCTL" submit es $ES)
timeout $((120 * SAN_SLOW)) "$R3QCTL" wait "$job" > /dev/null ||
    fail "the ES job did not finish: $("$R3QCTL" result "$job" | tail -n 3)"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the ES answer differs from --local"
ok "beside it, an honest r3qctl wait ($gens generations) and map keep going, the workers stay, an ES job keeps its answer"

metrics=$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3")
echo "$metrics" | grep -qE '^r3q_peers_dropped_total\{limit="output_limit"\} 1\s*$' ||
    fail "the drop is not counted: $(echo "$metrics" | grep dropped_total)"
ok "the drop is counted in r3q_peers_dropped_total{limit=\"output_limit\"}"
