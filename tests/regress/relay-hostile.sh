# A relay speaks for its link, not for machines it names.  A peer holding
# a relay's certificate (r3q-testpeer relayhostile) lies about the
# workers behind it:
#  - it names two workers (w3 and w4, whose certificates it passes on, as
#    a relay that once carried them could) that answer every task with the
#    same made-up output: under verify = 2, alone, they verify nothing:
#    the job fails, each task unverifiable, rather than end with their
#    answer; beside two honest direct workers the job keeps its --local
#    answer and the relay is outvoted;
#  - r3qctl workers marks its workers as relayed, their address and
#    certificate as the relay's word, and shows the certificate's own end
#    rather than the one the relay made up;
#  - it claims the name of a directly connected worker: refused, with the
#    reason, and the direct one stays, also when the stream was opened
#    before the worker connected and says its hello after; it claims an
#    absent worker's name and gets it, until that worker connects
#    directly and takes it back;
#  - it cannot invent a worker: a stream without a certificate, or with
#    one another CA issued, is refused, saying why;
#  - it opens 12 streams where max_relay_workers is 5: 7 are refused with
#    an error naming the relay and the key, and a direct worker still
#    joins.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 20 --dim 10 --generations 4 --lu 150 --seed 7 --reevaluate-parents"

"$MKCERTS" --relay r1 "$T/certs" w1 w2 w3 w4 w5 > /dev/null
C=$T/certs
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
MASTER_EXTRA="max_relay_workers = 5"
start_master

# rh NAME MODE ARGS...: the lying relay r1 in the background, its output
# in $T/NAME.out; sets RH.
rh() {
	_n=$1
	shift
	"$TESTPEER" -a "$C/ca.pem" -c "$C/r1.pem" -k "$C/r1.key" \
	    relayhostile 127.0.0.1 "$PORT" r1 "$@" > "$T/$_n.out" 2>&1 &
	RH=$!
	PIDS="$PIDS $RH"
}
rh_stop() {
	kill "$RH" 2>/dev/null || true
	wait "$RH" 2>/dev/null || true
}

# 1. Alone, under verify = 2: two made-up machines agree on a forgery.
rh forge forge ridge-lu "$C" w3 w4
waitfor "[ \$(grep -c 'welcomed as' '$T/forge.out') -eq 2 ]" 15 ||
    fail "the relay's streams were not welcomed: $(cat "$T/forge.out")"
wait_workers 3
job=$("$R3QCTL" submit es $ES --verify 2)
timeout 120 "$R3QCTL" wait "$job" > "$T/wait.out" 2>&1 &&
    fail "a job verified by one relay's word alone finished: $(tail -n 3 "$T/wait.out")"
"$R3QCTL" result "$job" > "$T/result.out" 2>&1 || true
grep -q 'no other machine here could vote' "$T/result.out" "$T/wait.out" ||
    fail "the failure does not say why: $(tail -n 5 "$T/result.out")"
grep -q 'tasks [1-9]' "$T/forge.out" || fail "the relay was given no task"
ok "verify 2 behind one relay alone: the job fails, unverifiable"

# 2. r3qctl workers: what the relay asserted is marked as its word, and
# the certificate's end is the certificate's (824 days, as mkcerts makes
# them), not the made-up one the relay sent beside it (the year 2100).
"$R3QCTL" workers > "$T/workers.out"
grep -q '^w3 via r1 .* 198\.51\.100\.7:4242(r1-says) ' "$T/workers.out" ||
    fail "the asserted address is shown as a fact: $(cat "$T/workers.out")"
grep '^w3 via r1 ' "$T/workers.out" | grep -q ' [0-9]*d(r1-says) ' ||
    fail "the certificate is not marked as r1's word: $(cat "$T/workers.out")"
grep '^w3 via r1 ' "$T/workers.out" | grep -qE ' 2[0-9]{4}d' &&
    fail "the relay's made-up certificate end is shown: $(cat "$T/workers.out")"
grep -q '^r1  .* 127\.0\.0\.1:[0-9]* ' "$T/workers.out" ||
    fail "the relay itself: $(cat "$T/workers.out")"
ok "r3qctl workers marks what a relay asserted"

# 3. Beside two honest direct workers: the answer is --local's.
start_worker w1
start_worker w2
wait_workers 5
job=$("$R3QCTL" submit es $ES --verify 2)
timeout 120 "$R3QCTL" wait "$job" > /dev/null ||
    fail "the job did not finish beside honest workers: $("$R3QCTL" result "$job" | tail -n 3)"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" ||
    fail "one relay's two made-up workers changed the answer"
grep -q 'worker w[34] suspect: .*disagreed with the verified one' "$T/masterd.log" ||
    fail "the forgery was not noticed"
ok "verify 2 beside honest workers: one relay's forgery changes no answer"
rh_stop
waitfor "! grep -q '^w3 ' <<EOF
\$('$R3QCTL' workers)
EOF" 10 || fail "the relay's workers did not leave with it"

# 4. A relay claims a directly connected worker's name.
rh claim claim "$C" w1
wait "$RH" || fail "the claim was not refused: $(cat "$T/claim.out")"
grep -q "stream 1 refused: refused by the master: worker w1 is connected directly" \
    "$T/claim.out" || fail "no reason given: $(cat "$T/claim.out")"
grep -q "relay r1 (.*): stream 1 for 'w1' refused: worker w1 is connected directly" \
    "$T/masterd.log" || fail "masterd did not say it refused r1's claim"
grep -q 'worker w1 connected again' "$T/masterd.log" &&
    fail "masterd dropped the real w1 for the relay's claim"
"$R3QCTL" workers | grep -q '^w1 ' || fail "the real w1 is gone"
"$R3QCTL" workers | grep -q '^w1 via' && fail "w1 is now the relay's"
ok "a relay cannot take a directly connected worker's name"

# 5. An absent worker's name: the relay gets it until the real one comes.
rh claim5 claim "$C" w5
waitfor "grep -q 'welcomed as w5' '$T/claim5.out'" 15 ||
    fail "the claim of an absent name: $(cat "$T/claim5.out")"
start_worker w5
waitfor "grep -q 'stream 1 closed' '$T/claim5.out'" 15 ||
    fail "the real w5 did not take its name back: $(cat "$T/claim5.out")"
wait "$RH" || true
waitfor "'$R3QCTL' workers | grep -q '^w5 [^v]'" 10 ||
    fail "w5 is not the direct one: $("$R3QCTL" workers)"
ok "a direct worker takes its name back from a relay's claim"

# 5b. A stream opened for w2 while w2 was away says its hello once the
# real w2 is connected directly: refused at the hello, w2 stays.
kill "$WPID_w2"
wait "$WPID_w2" 2>/dev/null || true
waitfor "! '$R3QCTL' workers | grep -q '^w2 '" 15 || fail "w2 did not leave"
rh late late "$C" w2
waitfor "grep -q 'stream 1 open' '$T/late.out'" 15 ||
    fail "the stream for an absent w2: $(cat "$T/late.out")"
start_worker w2
waitfor "'$R3QCTL' workers | grep -q '^w2 '" 15 || fail "w2 did not come back"
kill -USR1 "$RH"
wait "$RH" || fail "the late hello was not refused: $(cat "$T/late.out")"
grep -q "stream 1 error: refused by the master: worker w2 is connected directly" \
    "$T/late.out" || fail "no reason for the late hello: $(cat "$T/late.out")"
grep -q "worker w2 via r1 refused: worker w2 is connected directly" \
    "$T/masterd.log" || fail "masterd did not log the late claim"
"$R3QCTL" workers | grep -q '^w2 via' && fail "w2 is now the relay's"
"$R3QCTL" workers | grep -q '^w2 ' || fail "the real w2 is gone"
ok "a relayed hello never replaces a direct worker that came meanwhile"

# 6. Invented workers: no certificate, or one of another CA.
rh ghost claim "$T/nowhere" ghost
wait "$RH" || fail "a worker with no certificate was welcomed: $(cat "$T/ghost.out")"
grep -q "stream 1 refused: refused by the master: the relay passed no certificate for it" \
    "$T/ghost.out" || fail "no certificate: $(cat "$T/ghost.out")"
"$MKCERTS" "$T/other" ghost > /dev/null
rh ghost2 claim "$T/other" ghost
wait "$RH" || fail "another CA's worker was welcomed: $(cat "$T/ghost2.out")"
grep -q "stream 1 refused: refused by the master: its certificate does not verify against the master's CA" \
    "$T/ghost2.out" || fail "another CA's certificate: $(cat "$T/ghost2.out")"
ok "a relay cannot invent a worker: no certificate, or another CA's, is refused"

# 7. A flood of streams past max_relay_workers = 5.
rh flood flood "$C" w3 12
wait "$RH" || fail "the flood: $(cat "$T/flood.out")"
grep -q '^flood: 7 of 12 refused$' "$T/flood.out" ||
    fail "max_relay_workers did not hold: $(cat "$T/flood.out")"
grep -q '^reason: relay r1 has 5 streams open (max_relay_workers)$' \
    "$T/flood.out" || fail "the refusal does not name the relay: $(cat "$T/flood.out")"
grep -q "relay r1 (.*): [0-9]* stream(s) refused .*(max_relay_workers)" \
    "$T/masterd.log" || fail "masterd did not log the relay's flood"
"$TESTPEER" -a "$C/ca.pem" -c "$C/w4.pem" -k "$C/w4.key" \
    connect 127.0.0.1 "$PORT" hello > "$T/w4.out" 2>&1 ||
    fail "a direct worker was refused after the flood: $(cat "$T/w4.out")"
master_alive
ok "max_relay_workers refuses a relay's streams past it, naming the relay"
