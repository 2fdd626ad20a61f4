# Revocation behind a relay (issue 20): masterd's CRL sweep at SIGHUP
# reaches workers connected through a relay (the relay passes each
# worker's certificate when it opens its stream, protocol 7): the revoked
# one is dropped, its stream closed at the relay, the others stay, and
# when it comes back through the relay (whose own CRL is older) the master
# refuses its stream.  A relay reloading its own CRL (SIGHUP) drops a
# worker it revokes, and refuses it from then on at the handshake.
. "${top_srcdir:-.}/tests/regress/lib.sh"

"$MKCERTS" --relay r1 "$T/certs" w1 w2 w3 > /dev/null
C=$T/certs
# The master and the relay each read their own copy of the CRL.
cp "$C/crl.pem" "$T/mcrl.pem"
cp "$C/crl.pem" "$T/rcrl.pem"
MASTER_EXTRA="crl = $T/mcrl.pem"
start_master
RELAY_EXTRA="crl = $T/rcrl.pem"
start_relay r1
R1=$RPORT
MPORT=$PORT
PORT=$R1
start_worker w1
start_worker w2
start_worker w3
PORT=$MPORT
wait_workers 4
"$R3QCTL" workers > "$T/workers.out"
for w in w1 w2 w3; do
	grep -q "^$w via r1 " "$T/workers.out" || fail "no $w via r1: $(cat "$T/workers.out")"
done
ok "w1, w2, w3 connected through relay r1"

# The master's CRL revokes w1; the relay's does not (yet).
"$MKCERTS" --revoke w1 "$C" > "$T/revoke1.out" 2>&1 ||
    fail "mkcerts --revoke w1: $(cat "$T/revoke1.out")"
cp "$C/crl.pem" "$T/mcrl.pem"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'worker w1 (.*its certificate is now revoked' '$T/masterd.log'" 15 ||
    fail "masterd did not drop w1 behind the relay: $(grep -i revok "$T/masterd.log")"
waitfor "! '$R3QCTL' workers | grep -q '^w1 '" 15 || fail "w1 still listed: $("$R3QCTL" workers)"
waitfor "grep -q 'your certificate is revoked' '$T/w1.log'" 15 ||
    fail "w1 was not told: $(tail -n 5 "$T/w1.log")"
ok "masterd's CRL sweep drops w1 behind relay r1: $(grep -m 1 'w1 (.*now revoked' "$T/masterd.log" | sed 's/^[0-9:.]* masterd: //' | cut -c 1-120)"
# w1 comes back through r1 (whose CRL still takes it): the master refuses.
waitfor "grep -q 'relay r1: worker w1: its certificate is revoked' '$T/masterd.log'" 20 ||
    fail "w1 came back and was not refused: $(tail -n 5 "$T/masterd.log")"
sleep 1
"$R3QCTL" workers > "$T/workers.out"
! grep -q '^w1 ' "$T/workers.out" || fail "w1 joined again: $(cat "$T/workers.out")"
grep -q '^w2 via r1 ' "$T/workers.out" && grep -q '^w3 via r1 ' "$T/workers.out" &&
    grep -q '^r1 ' "$T/workers.out" || fail "more than w1 went: $(cat "$T/workers.out")"
ok "w1 coming back through a relay with an older CRL is refused by the master; r1, w2, w3 stay"

# The relay's own CRL: w2 revoked there, SIGHUP to the relay only.
"$MKCERTS" --revoke w2 "$C" > "$T/revoke2.out" 2>&1 ||
    fail "mkcerts --revoke w2: $(cat "$T/revoke2.out")"
cp "$C/crl.pem" "$T/rcrl.pem"
kill -HUP "$WPID_r1"
waitfor "grep -q 'relay: worker w2 (.*its certificate is now revoked' '$T/r1.log'" 15 ||
    fail "r1 did not drop w2: $(grep -i revok "$T/r1.log")"
waitfor "! '$R3QCTL' workers | grep -q '^w2 '" 15 || fail "w2 still listed: $("$R3QCTL" workers)"
# It comes back: the relay's handshake refuses it now.
waitfor "grep -q 'certificate verification failed: certificate revoked: .*CN=w2' '$T/r1.log'" 20 ||
    fail "r1 did not refuse w2 again: $(tail -n 5 "$T/r1.log")"
grep -q 'the master rejected our certificate: certificate revoked' "$T/w2.log" ||
    fail "w2 was not told: $(tail -n 3 "$T/w2.log")"
sleep 1
"$R3QCTL" workers > "$T/workers.out"
! grep -q '^w2 ' "$T/workers.out" || fail "w2 joined again: $(cat "$T/workers.out")"
grep -q '^w3 via r1 ' "$T/workers.out" || fail "w3 went too: $(cat "$T/workers.out")"
! grep -q "worker w2 (.*now revoked" "$T/masterd.log" ||
    fail "the master, not the relay, dropped w2"
ok "relay r1 reloading its CRL drops w2 and refuses it from then on; w3 stays"
master_alive
