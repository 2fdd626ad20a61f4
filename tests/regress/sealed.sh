# Sealed frames (issue 26, "memory per worker"; common/seal.h): a worker
# offers by ALPN to seal, masterd agrees, writes its mark as its last TLS
# record, and both drop OpenSSL's per-connection state for ChaCha20-Poly1305
# under keys exported from the handshake.  A worker with sealed_frames = no
# keeps TLS records, and both kinds of worker run one job whose answer is
# --local's bit for bit, with frames of several records (a genome of 16 KB).
# A peer that agreed to seal and then sends TLS anyway, a record whose tag
# is wrong, a length out of range, a record replayed, or a record begun
# and not ended within frame_timeout is dropped with a line naming it and
# the fault, and harms nothing else.  A reload with
# sealed_frames = no stops the sealing of new connections; the CRL sweep
# still finds a sealed worker's certificate.  A relay seals its link up,
# and the workers below it, and drops a bad record as masterd does.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 20 --dim 2048 --generations 4 --lu 0 --seed 11"

"$MKCERTS" --relay r1 "$T/certs" w1 w2 w3 w4 w5 > /dev/null
C=$T/certs
"$R3QCTL" es --local $ES --csv "$T/local.csv" > "$T/local.out" ||
    fail "local run failed"

MASTER_EXTRA="crl = $C/crl.pem
frame_timeout = 2s"
start_master
start_worker w1
WORKER_EXTRA="sealed_frames = no"
start_worker w2
WORKER_EXTRA=
wait_workers 2
waitfor "grep -q 'sealed frames with 127.0.0.1:$PORT' '$T/w1.log'" 5 ||
    fail "w1 did not seal: $(tail -5 "$T/w1.log")"
grep -q '(w1): frames sealed from here on' "$T/masterd.log" ||
    fail "masterd did not seal w1"
! grep -q 'sealed frames with' "$T/w2.log" &&
    ! grep -q '(w2): frames sealed' "$T/masterd.log" ||
    fail "w2 sealed with sealed_frames = no"
ok "w1 seals (the default); w2, with sealed_frames = no, keeps TLS records"

"$R3QCTL" es $ES --policy rr --csv "$T/both.csv" > "$T/both.out" ||
    fail "the job failed: $(tail -5 "$T/both.out")"
cmp -s "$T/local.csv" "$T/both.csv" || fail "the bests differ from --local"
answer "$T/both.out" | cmp -s - "$(answer "$T/local.out" > "$T/l.ans";
    echo "$T/l.ans")" || fail "the answer differs from --local"
"$R3QCTL" workers > "$T/workers.out"
for w in w1 w2; do
	done_w=$(awk -v w=$w 'NR == 1 { e = index($0, "DONE") + 3 }
	    $1 == w { print substr($0, e - 7, 8) + 0 }' "$T/workers.out")
	[ "${done_w:-0}" -gt 0 ] || fail "$w did no task: $(cat "$T/workers.out")"
done
ok "a job on a sealed and a TLS worker (16 KB genomes) matches --local"

# Bad input on a connection that agreed to seal.
check_bad() {
	_what=$1 _line=$2
	"$TESTPEER" -a "$C/ca.pem" -c "$C/w3.pem" -k "$C/w3.key" sealbad \
	    127.0.0.1 "$PORT" "$_what" > "$T/bad-$_what.out" 2>&1
	grep -q 'closed by the peer' "$T/bad-$_what.out" ||
	    fail "$_what: masterd did not close: $(cat "$T/bad-$_what.out")"
	waitfor "grep -q '127.0.0.1:[0-9]* (w3): $_line' '$T/masterd.log'" 5 ||
	    fail "$_what: no line '$_line' in masterd.log: $(tail -3 "$T/masterd.log")"
}
check_bad early 'a TLS record where a sealed one was due'
check_bad tag 'a sealed record failed authentication'
check_bad length 'a sealed record of a length out of range'
check_bad replay 'a sealed record failed authentication'
check_bad stall '10 bytes of a sealed record, the rest not within frame_timeout'
grep -q 'worker w3 joined' "$T/masterd.log" ||
    fail "the replayed hello was not taken once"
master_alive || fail "masterd died"
wait_workers 2
"$R3QCTL" es $ES --policy wq --csv "$T/after.csv" > /dev/null ||
    fail "a job after the bad peers failed"
cmp -s "$T/local.csv" "$T/after.csv" || fail "after the bad peers: bests differ"
ok "TLS after the mark, a bad tag, a bad length, a replay, a record begun and never ended: each dropped with its fault named; the workers go on"

# A relay: its link up sealed, and a worker below it.
start_relay r1
waitfor "grep -q '(r1): frames sealed from here on' '$T/masterd.log'" 10 ||
    fail "masterd did not seal the relay's link"
MPORT=$PORT
PORT=$RPORT
start_worker w5
PORT=$MPORT
waitfor "grep -q 'worker w5 joined from .* via r1' '$T/masterd.log'" 15 ||
    fail "w5 did not join through r1: $(tail -3 "$T/w5.log")"
grep -q "sealed frames with 127.0.0.1:$RPORT" "$T/w5.log" &&
    grep -q 'relay: 127.0.0.1:[0-9]* (w5): frames sealed from here on' \
    "$T/r1.log" || fail "w5 and r1 did not seal"
"$TESTPEER" -a "$C/ca.pem" -c "$C/w3.pem" -k "$C/w3.key" sealbad \
    127.0.0.1 "$RPORT" tag > "$T/bad-relay.out" 2>&1
grep -q 'closed by the peer' "$T/bad-relay.out" ||
    fail "r1 did not close a bad record: $(cat "$T/bad-relay.out")"
waitfor "grep -q 'relay: .*(127.0.0.1:[0-9]*).*a sealed record failed authentication' '$T/r1.log'" 5 ||
    fail "r1 did not name the bad record: $(tail -3 "$T/r1.log")"
"$R3QCTL" es $ES --policy r3q --csv "$T/relay.csv" > /dev/null ||
    fail "a job with the relay failed"
cmp -s "$T/local.csv" "$T/relay.csv" || fail "with the relay: bests differ"
ok "a relay seals its link up and w5 below it, drops a bad record, and the job matches --local"

# The CRL sweep finds a sealed worker by what masterd kept of its
# certificate (revoke.sh checks the line's wording).
"$MKCERTS" --revoke w1 "$C" > /dev/null 2>&1 || fail "mkcerts --revoke w1"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'worker w1 (.*its certificate is now revoked' '$T/masterd.log'" 10 ||
    fail "the sealed w1 was not dropped by the CRL sweep"
ok "the CRL sweep drops a revoked sealed worker"

# A reload that turns sealing off: new connections keep TLS records.
echo "sealed_frames = no" >> "$T/masterd.conf"
kill -HUP "$MASTER_PID"
waitfor "[ \$(grep -c 'reloaded' '$T/masterd.log') -ge 2 ]" 5 ||
    fail "masterd did not reload"
start_worker w4
waitfor "grep -q 'worker w4 joined' '$T/masterd.log'" 10 ||
    fail "w4 did not join: $(tail -3 "$T/w4.log")"
! grep -q 'sealed frames with' "$T/w4.log" ||
    fail "w4 sealed after sealed_frames = no"
ok "after a reload with sealed_frames = no, a new worker keeps TLS records"
