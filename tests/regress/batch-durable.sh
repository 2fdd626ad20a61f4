# A batch job loses nothing and repeats nothing: when the client's
# connection breaks (a relay dropped and brought back), libr3q reconnects
# and reattaches and every output comes exactly once; when masterd is
# killed -9 under a running batch job and restarted on its journal, the
# job resumes and the client gets the rest; a client that stays away
# longer than client_timeout loses its job, journaled as cancelled.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2
# client_timeout: long enough for libr3q to reconnect through a new
# relay and reattach (under a sanitizer on a loaded machine that took
# over 2 s: SAN_SLOW times longer there), short enough to wait out below.
MASTER_EXTRA="client_timeout = $((2 * SAN_SLOW))s"
# Every message 10 ms late and queue_factor 2 (auto would hide the delay
# behind longer queues): a batch of a few hundred echo tasks lasts a
# few seconds, long enough to break things under it.
WORKER_EXTRA="delay = 10ms"
start_master
# Again on the same port, with the same journal, a fresh log.
restart_master() {
	mv "$T/masterd.log" "$T/masterd-$1.log"
	sed -i "s/^listen = .*/listen = 127.0.0.1:$PORT/" "$T/masterd.conf"
	"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
	MASTER_PID=$!
	PIDS="$PIDS $MASTER_PID"
	waitfor "grep -q 'listening on' '$T/masterd.log'" 10 ||
	    fail "masterd did not restart"
}
start_worker w1
start_worker w2
wait_workers 2

# Through a relay the test can drop.
"$TESTPEER" relay 0 127.0.0.1 "$PORT" > "$T/relay.out" 2>&1 &
RELAY=$!
PIDS="$PIDS $RELAY"
waitfor "grep -q '^port ' '$T/relay.out'" 5 || fail "relay did not start"
RPORT=$(sed -n 's/^port //p' "$T/relay.out")
seq 1 600 > "$T/in"
R3Q_MASTER=127.0.0.1:$RPORT R3Q_CA=$T/certs/ca.pem \
    R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key \
    timeout 120 "$R3QCTL" map --queue-factor 2 echo "$T/in" > "$T/out1" 2> "$T/err1" &
MAP=$!
waitfor "grep -q \"job .* 'map echo' opened by tls:client\" '$T/masterd.log'" 10 ||
    fail "the client's job did not open"
sleep 1
kill "$RELAY"
wait "$RELAY" 2>/dev/null || true
sleep 0.5
"$TESTPEER" relay "$RPORT" 127.0.0.1 "$PORT" > "$T/relay2.out" 2>&1 &
PIDS="$PIDS $!"
wait "$MAP" || fail "map through a broken link failed: $(cat "$T/err1")"
cmp -s "$T/in" "$T/out1" || fail "outputs lost or repeated over a broken link"
grep -q "attached, acknowledged" "$T/masterd.log" ||
    fail "the client did not reattach"
ok "a broken client connection: reattached, every output exactly once"

# masterd killed -9 under a running batch job, restarted on its journal.
seq 1 600 | sed 's/^/t/' > "$T/in2"
timeout 120 "$R3QCTL" map --queue-factor 2 echo "$T/in2" > "$T/out2" 2> "$T/err2" &
MAP=$!
waitfor "[ \$(grep -c \"'map echo' opened by unix:root\" '$T/masterd.log') -ge 1 ]" 10 ||
    fail "the job did not open"
sleep 1
kill -9 "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
restart_master 1
wait "$MAP" || fail "map across a masterd restart failed: $(cat "$T/err2")"
cmp -s "$T/in2" "$T/out2" || fail "outputs lost or repeated across the restart"
grep -q "batch job [0-9]* resumed from the journal" "$T/masterd.log" ||
    fail "the job was not resumed"
ok "masterd killed -9 under a batch job: resumed, every output exactly once"

# A client that goes away for longer than client_timeout loses its job.
echo 1 | "$R3QCTL" map no-such-kind > /dev/null 2>&1 &
MAP=$!
waitfor "'$R3QCTL' jobs | grep -q 'waiting: no worker offers kind no-such-kind'" 10 ||
    fail "the job did not start"
job=$("$R3QCTL" jobs | awk '$2 == "running" { print $1 }' | tail -n 1)
kill -9 "$MAP"
wait "$MAP" 2>/dev/null || true
waitfor "'$R3QCTL' jobs | grep -qE '^$job +cancelled'" $((10 * SAN_SLOW)) ||
    fail "the job outlived client_timeout: $("$R3QCTL" jobs)"
grep -q "job $job cancelled: its client stayed away longer than client_timeout" \
    "$T/masterd.log" || fail "no log line says why"
waitfor "grep -q 'job $job: no client came back for client_timeout; 1 outcomes' '$T/masterd.log'" 10 ||
    fail "the ended job kept its outcomes in memory"
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
restart_master 2
"$R3QCTL" jobs | grep -qE "^$job +cancelled" ||
    fail "the journal forgot the cancel: $("$R3QCTL" jobs)"
ok "a client away longer than client_timeout: its job is cancelled and journaled"
