# A batch job that ended while its client was away keeps the outcomes the
# client has not acknowledged for one more client_timeout; when masterd
# restarts on its journal in between, the job comes back ended, and a
# client that reattaches gets those outcomes (exactly once) and masterd
# lives on.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
MASTER_EXTRA="client_timeout = $((3 * SAN_SLOW))s"
start_master
TLSC="-a $T/certs/ca.pem -c $T/certs/client.pem -k $T/certs/client.key"

# A job of a kind nobody offers, opened over TLS as "client": its client
# goes away, client_timeout cancels it, its one outcome not acknowledged.
echo 1 | R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
    R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key \
    "$R3QCTL" map no-such-kind > /dev/null 2>&1 &
MAP=$!
waitfor "'$R3QCTL' jobs | grep -q 'waiting: no worker offers kind no-such-kind'" 10 ||
    fail "the job did not start: $("$R3QCTL" jobs)"
job=$("$R3QCTL" jobs | awk '$2 == "running" { print $1 }' | tail -n 1)
kill -9 "$MAP"
wait "$MAP" 2>/dev/null || true
waitfor "grep -q 'job $job cancelled: its client stayed away' '$T/masterd.log'" $((20 * SAN_SLOW)) ||
    fail "the job was not cancelled"
sleep 0.5	# its loop pass's commit
crash_master
master_alive
ok "job $job ended with an outcome not acknowledged; masterd restarted on its journal"

timeout 30 "$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" attach "$job" > "$T/att" 2>&1 ||
    fail "attach: $(cat "$T/att")"
master_alive
grep -q '^attached: cancelled, acked 0, seq 1$' "$T/att" ||
    fail "attach: $(cat "$T/att")"
grep -q '^outcome seq 1 batch 1 key 1 status 3: ' "$T/att" ||
    fail "the outcome: $(cat "$T/att")"
grep -q "batch job $job (cancelled) from the journal: 1 outcomes not yet acknowledged" \
    "$T/masterd.log" || fail "not logged: $(grep "batch job" "$T/masterd.log")"
ok "a client reattaches to the ended job and gets its outcome; masterd lives on"

# Without a client for client_timeout the outcome leaves memory, and the
# journal says so: after another restart it does not come back.
waitfor "grep -q 'job $job: no client came back for client_timeout; 1 outcomes' '$T/masterd.log'" $((20 * SAN_SLOW)) ||
    fail "the outcome stayed in memory"
sleep 0.5
crash_master
timeout 30 "$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" attach "$job" > "$T/att2" 2>&1 ||
    fail "attach again: $(cat "$T/att2")"
grep -q '^attached: cancelled, acked 1, seq 1$' "$T/att2" ||
    fail "attach again: $(cat "$T/att2")"
master_alive
ok "after client_timeout the outcome is gone for good, journaled"
