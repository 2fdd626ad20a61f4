# The HTTP listener (/metrics, /status) under the caps of issue 24
# ("Bounded everything"): at max_http connections it stops accepting,
# says so in one line and counts it, and takes the waiting ones once a
# connection closes; connect_rate applies to it as to the TLS port, with
# the same bucket per address: past the burst a connection is closed
# before a byte of it is read, in one log line, counted.  No address holds
# more than its share (max_http_per_addr, by default a quarter of
# max_http): one that holds max_http idle connections leaves room for a
# monitor on another address (127.0.0.2), and one on its own address gets
# its scrape in place of the oldest idle one.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1

# http_port: the port masterd logged for its HTTP listener.
http_port() {
	sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log"
}

# get PATH: the raw HTTP answer.
get() {
	timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET $1 HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3"
}

restart_master() {
	kill "$MASTER_PID"
	wait "$MASTER_PID" 2>/dev/null || true
	mv "$T/masterd.log" "$T/masterd-$1.log"
	start_master
	HTTP_PORT=$(http_port)
}

# max_http 4: four idle connections held, a fifth waits for one of them
# (all from one address, whose share is here the whole).
MASTER_EXTRA="http = 127.0.0.1:0
max_http = 4
max_http_per_addr = 4
connect_rate = 0
output_timeout = 30s"
start_master
HTTP_PORT=$(http_port)
python3 - "$HTTP_PORT" "$T/hold.go" <<'EOF' > "$T/hold.out" 2>&1 &
import os, socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1])))
         for i in range(4)]
print("holding", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.1)
for s in socks:
    s.close()
print("closed", flush=True)
time.sleep(1)
EOF
HOLD=$!
PIDS="$PIDS $HOLD"
waitfor "grep -q holding '$T/hold.out'" 10 || fail "could not open 4 connections"
waitfor "grep -q 'http: 4 connections open (max_http); not accepting more until one closes' '$T/masterd.log'" 10 ||
    fail "masterd did not say it reached max_http"
# The fifth: connected by the kernel, not answered while the four stay.
python3 - "$HTTP_PORT" <<'EOF' > "$T/fifth.out" 2>&1 &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
t0 = time.time()
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print("answered after %.1fs: %s" % (time.time() - t0,
      data.split(b"\r\n", 1)[0].decode()), flush=True)
EOF
FIFTH=$!
PIDS="$PIDS $FIFTH"
sleep 2
grep -q answered "$T/fifth.out" &&
    fail "a fifth connection was served beyond max_http 4: $(cat "$T/fifth.out")"
master_alive
touch "$T/hold.go"
waitfor "grep -q '^answered after .*200 OK' '$T/fifth.out'" 20 ||
    fail "the fifth connection was not served once the others closed: $(cat "$T/fifth.out")"
wait "$HOLD" 2>/dev/null || true
get /metrics > "$T/metrics" || fail "no /metrics after the cap"
grep -qE '^r3q_refused_total\{cap="max_http"\} [1-9]' "$T/metrics" ||
    fail "max_http not counted: $(grep refused_total "$T/metrics")"
ok "at max_http masterd stops accepting HTTP, says so, and serves the waiting connection once one closes"

# Many idle connections opened and closed: each freed, none kept.
python3 - "$HTTP_PORT" <<'EOF' > "$T/churn.out" 2>&1
import socket, sys
for i in range(200):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.close()
print("done")
EOF
sleep 1
n=$(ls "/proc/$MASTER_PID/fd" | wc -l)
get /status > /dev/null || fail "no /status after 200 connections"
m=$(ls "/proc/$MASTER_PID/fd" | wc -l)
[ "$m" -le "$((n + 2))" ] && [ "$n" -lt 60 ] ||
    fail "masterd holds $n then $m descriptors after 200 HTTP connections"
ok "200 HTTP connections come and go: masterd keeps no descriptor of them ($n open)"

# connect_rate 2 a second, burst 10, on the HTTP port.
MASTER_EXTRA="http = 127.0.0.1:0
connect_rate = 2
connect_burst = 10"
restart_master 1
python3 - "$HTTP_PORT" <<'EOF' > "$T/rate.out" 2>&1
import socket, sys
socks = []
for i in range(30):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET /status HTTP/1.0\r\nHost: x\r\n\r\n")
    socks.append(s)
served = refused = 0
for s in socks:
    s.settimeout(10)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    if data.startswith(b"HTTP/1.") and b" 200 " in data.split(b"\r\n")[0]:
        served += 1
    elif data == b"":
        refused += 1
print("served", served, "refused", refused)
EOF
served=$(sed -n 's/^served \([0-9]*\) refused.*/\1/p' "$T/rate.out")
refused=$(sed -n 's/.* refused \([0-9]*\)$/\1/p' "$T/rate.out")
[ -n "$served" ] && [ "$served" -ge 10 ] && [ "$served" -le 16 ] &&
    [ "$refused" -eq $((30 - served)) ] ||
    fail "connect_rate on HTTP: $(cat "$T/rate.out") of 30"
n=$(grep -c "connection from 127.0.0.1 refused: more than connect_rate (2 a second, burst 10)" \
    "$T/masterd.log")
[ "$n" -eq 1 ] || fail "$n log lines for the refused HTTP connections"
sleep 1
get /metrics > "$T/metrics" || fail "no /metrics once the rate allows it"
grep -qE "^r3q_refused_total\{cap=\"connect_rate\"\} $refused\$" "$T/metrics" ||
    fail "connect_rate refusals: $(grep connect_rate "$T/metrics") (refused $refused)"
ok "connect_rate closes HTTP connections past it unread, with one log line: $served served, $refused refused"
master_alive

# max_http 8, so each address's share is 2: one process on 127.0.0.1
# opens 8 idle connections and holds them; a monitor on 127.0.0.2, and
# one on 127.0.0.1 itself, still get /metrics.
MASTER_EXTRA="http = 127.0.0.1:0
max_http = 8
connect_rate = 0
output_timeout = 30s"
restart_master 2
python3 - "$HTTP_PORT" "$T/hog.go" <<'EOF2' > "$T/hog.out" 2>&1 &
import os, socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1])))
         for i in range(8)]
print("holding", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.1)
EOF2
HOG=$!
PIDS="$PIDS $HOG"
waitfor "grep -q holding '$T/hog.out'" 10 || fail "could not open 8 connections"
waitfor "grep -q 'http: 127.0.0.1 holds 2 connections (max_http_per_addr 2): its oldest idle one closed for a new one' '$T/masterd.log'" 10 ||
    fail "masterd did not close 127.0.0.1's oldest idle connection past its share"
# scrape SOURCE: /metrics from that source address, or the reason not.
scrape() {
	python3 - "$HTTP_PORT" "$1" <<'EOF2'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10,
                                 source_address=(sys.argv[2], 0))
    s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    sys.stdout.write(data.decode("utf-8", "replace"))
except OSError as e:
    print("no answer from %s: %s" % (sys.argv[2], e))
EOF2
}
scrape 127.0.0.2 > "$T/scrape2" 2>&1
head -n 1 "$T/scrape2" | grep -q '^HTTP/1\.[01] 200 ' ||
    fail "a scrape from 127.0.0.2 failed while 127.0.0.1 holds 8 idle connections: $(head -n 3 "$T/scrape2")"
scrape 127.0.0.1 > "$T/scrape1" 2>&1
head -n 1 "$T/scrape1" | grep -q '^HTTP/1\.[01] 200 ' ||
    fail "a scrape from 127.0.0.1 failed while it holds its share idle: $(head -n 3 "$T/scrape1")"
grep -qE '^r3q_refused_total\{cap="max_http_per_addr"\} [1-9]' "$T/scrape1" ||
    fail "max_http_per_addr not counted: $(grep refused_total "$T/scrape1")"
touch "$T/hog.go"
ok "one address holding max_http idle connections keeps its share (2 of 8): monitors on 127.0.0.2 and 127.0.0.1 still scrape"
master_alive
