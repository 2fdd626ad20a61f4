# Bad input harms nothing else.  While a job runs, masterd is sent plain
# TCP, TLS with no certificate, a certificate from another CA, garbage
# frames, an oversized length, an unknown message type, a protocol version
# mismatch and a worker whose hello name differs from its certificate:
# each gets a log line naming the peer, only that connection is closed,
# and the job finishes with the --local answer.  Then workerd is given a
# task of an unknown kind by a fake master: it fails that task with a
# status and keeps running.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 30 --lambda 70 --dim 30 --generations 10 --lu 200 --seed 3 --reevaluate-parents"

mkcerts w1 w2 bad
"$MKCERTS" "$T/other" w1 > /dev/null
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
start_master
start_worker w1
start_worker w2
wait_workers 2
job=$("$R3QCTL" submit es $ES)

peer() {
	"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/$1.pem" \
	    -k "$T/certs/$1.key" connect 127.0.0.1 "$PORT" "$2"
}

# expect_log PATTERN WHAT: masterd logged PATTERN.
expect_log() {
	waitfor "grep -qE '$1' '$T/masterd.log'" 5 ||
	    fail "$2: no log line matching '$1'"
	ok "$2"
}

timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; printf 'GET / HTTP/1.0\r\n\r\n' >&3; cat <&3 > /dev/null" || true
expect_log '127\.0\.0\.1:[0-9]+ \(unauthenticated\): TLS error: .*http request' \
    "plain TCP (HTTP) to the TLS port"

timeout 5 openssl s_client -connect "127.0.0.1:$PORT" \
    -CAfile "$T/certs/ca.pem" < /dev/null > /dev/null 2>&1 || true
expect_log '127\.0\.0\.1:[0-9]+ \(unauthenticated\): TLS error: .*peer did not return a certificate' \
    "TLS client without a certificate"

"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/other/w1.pem" -k "$T/other/w1.key" \
    connect 127.0.0.1 "$PORT" hello > "$T/peer.out" 2>&1 &&
    fail "a certificate from another CA was welcomed"
expect_log '127\.0\.0\.1:[0-9]+ \(unauthenticated\): certificate verification failed' \
    "certificate from another CA"

peer bad garbage > "$T/peer.out" || fail "garbage: $(cat "$T/peer.out")"
expect_log '\(bad\): bad frame magic' "garbage bytes over TLS"

peer bad oversize > "$T/peer.out" || fail "oversize: $(cat "$T/peer.out")"
expect_log '\(bad\): frame of 4294967040 bytes exceeds the limit of 65536 \(before hello' \
    "a frame longer than max_frame"

peer bad unknown > "$T/peer.out" || fail "unknown: $(cat "$T/peer.out")"
grep -q "error: unknown message type" "$T/peer.out" ||
    fail "unknown type: peer got $(cat "$T/peer.out")"
expect_log '\(bad\): unknown message type' "an unknown message type"

peer bad version > "$T/peer.out" || fail "version: $(cat "$T/peer.out")"
grep -qE "worker speaks 99, master speaks [0-9]+" "$T/peer.out" ||
    fail "version: peer got $(cat "$T/peer.out")"
expect_log '\(bad\): protocol version mismatch: worker speaks 99, master speaks [0-9]+' \
    "a protocol version mismatch"

# A worker that claims another name than its certificate's.
"$WORKERD" -d -f "$T/w1.conf" -N impostor > "$T/impostor.log" 2>&1 &
PIDS="$PIDS $!"
expect_log 'worker says it is .impostor. but its certificate names .w1.' \
    "a hello whose name differs from the certificate"
kill $! 2>/dev/null || true

master_alive
"$R3QCTL" workers | grep -q '^w1 ' || fail "w1 was dropped"
"$R3QCTL" workers | grep -q '^w2 ' || fail "w2 was dropped"
"$R3QCTL" wait "$job" > /dev/null || fail "the job did not survive"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the job's answer changed"
ok "masterd kept both workers and the job, with the --local answer"

# workerd given a task kind it does not know.
start_fake_master master nope
fake=$FAKE_PID
fport=$FAKE_PORT
sed "s/^master = .*/master = 127.0.0.1:$fport/" "$T/w1.conf" > "$T/wf.conf"
"$WORKERD" -d -f "$T/wf.conf" > "$T/wf.log" 2>&1 &
wf=$!
PIDS="$PIDS $wf"
wait "$fake" || fail "fake master: $(cat "$T/fake.out")"
grep -q "task 5: unknown-kind: unknown task kind 'nope'" "$T/fake.out" ||
    fail "unknown kind: got $(cat "$T/fake.out")"
sleep 0.2
kill -0 "$wf" || fail "workerd died on an unknown task kind"
grep -q "unknown task kind 'nope'" "$T/wf.log" || fail "workerd did not log it"
ok "workerd fails an unknown task kind with a status and keeps running"
