# The CRL reaches relays and workers without a restart or a file copy
# (doc/security.md, Revocation).  masterd signs its revocations with
# ca_key; `r3qctl certs revoke w1` sends the CRL it is then in force with
# to relay r1 and to worker w2 (peer_listen), each of which checks it
# against its CA and keeps it in state_dir/master-crl.pem.  r1 drops w1
# on its own CRL's word and refuses w1's next TLS handshake; w2's peer
# listener refuses w1's certificate too.  Restarted with no master to
# reach, r1 still refuses w1 (the kept CRL).  A fake master with a
# certificate of the CA pushing a CRL that another CA signed, or an
# older CRL of ours, is refused with a line saying why, and the kept CRL
# stays.  On the code before the push, r1 took w1's handshake and only
# masterd refused its stream.
. "${top_srcdir:-.}/tests/regress/lib.sh"

"$MKCERTS" --relay r1 "$T/certs" w1 w2 > /dev/null
C=$T/certs
# Another CA, of the same name: its CRL must not pass for ours.
"$MKCERTS" "$T/other" w9 > /dev/null
cp "$C/crl.pem" "$T/old-crl.pem"
mkdir -p "$T/sr1" "$T/sw2"
MASTER_EXTRA="ca_key = $C/ca.key"
start_master
MPORT=$PORT
RELAY_EXTRA="state_dir = $T/sr1"
start_relay r1
R1=$RPORT
PORT=$R1
start_worker w1
PORT=$MPORT
WORKER_EXTRA="peer_listen = 127.0.0.1:0
state_dir = $T/sw2"
start_worker w2
WORKER_EXTRA=
wait_workers 3
"$R3QCTL" workers | grep -q '^w1 via r1 ' || fail "w1 not via r1: $("$R3QCTL" workers)"
waitfor "grep -q 'peer: listening for other workers on' '$T/w2.log'" 10 ||
    fail "w2 has no peer listener: $(tail -n 3 "$T/w2.log")"
W2P=$(sed -n 's/.*peer: listening for other workers on [0-9.]*:\([0-9]*\).*/\1/p' "$T/w2.log" | tail -n 1)
[ ! -e "$T/sr1/master-crl.pem" ] || fail "r1 kept a CRL before any revocation"
ok "r1 with w1 behind it, w2 with a peer listener on $W2P"

# mkcerts' CRL (old-crl.pem) must be older than the master's, by a second.
sleep 1
"$R3QCTL" certs revoke w1 > "$T/revoke.out" 2>&1 || fail "certs revoke w1: $(cat "$T/revoke.out")"
waitfor "grep -q 'relay: worker w1 (.*its certificate is now revoked by .*master-crl.pem' '$T/r1.log'" 15 ||
    fail "r1 did not drop w1 on the master's CRL: $(grep -i 'crl\|revok' "$T/r1.log" | tail -n 5)"
waitfor "! '$R3QCTL' workers | grep -q '^w1 '" 15 || fail "w1 still listed: $("$R3QCTL" workers)"
ok "certs revoke w1: r1 drops w1 itself: $(grep -m 1 'relay: worker w1 (.*now revoked' "$T/r1.log" | sed 's/^[0-9:.]* workerd: //' | cut -c 1-100)"
# w1 comes back: r1's handshake refuses it, masterd never sees it.
waitfor "grep -q 'certificate verification failed: certificate revoked: .*CN=w1' '$T/r1.log'" 20 ||
    fail "r1 did not refuse w1's handshake: $(tail -n 5 "$T/r1.log")"
! grep -q 'relay r1: worker w1: its certificate is revoked' "$T/masterd.log" ||
    fail "w1's stream reached masterd after the push: $(grep 'relay r1: worker w1' "$T/masterd.log" | head -n 2)"
ok "w1 coming back is refused at r1's handshake, without a restart or a file copy"

# Kept beside the state, signed by the CA, mode 0644, w1 in it.
for d in sr1 sw2; do
	f=$T/$d/master-crl.pem
	waitfor "[ -s '$f' ]" 10 || fail "no $f"
	openssl crl -in "$f" -CAfile "$C/ca.pem" -noout 2> "$T/crl.err" ||
	    fail "$f does not verify: $(cat "$T/crl.err")"
	[ "$(stat -c %a "$f")" = 644 ] || fail "$f has mode $(stat -c %a "$f")"
done
s1=$(openssl x509 -in "$C/w1.pem" -noout -serial | cut -d= -f2)
openssl crl -in "$T/sr1/master-crl.pem" -noout -text | grep -q "Serial Number: $s1" ||
    fail "the kept CRL lacks w1's serial $s1"
grep -q 'the CRL from the master .*: 1 certificates revoked; in force' "$T/w2.log" ||
    fail "w2 did not put the CRL in force: $(grep -i crl "$T/w2.log")"
ok "r1 and w2 keep the CRL in state_dir/master-crl.pem (0644, signed by the CA)"

# w2's peer listener refuses w1's certificate now.
echo | timeout 10 openssl s_client -connect "127.0.0.1:$W2P" -CAfile "$C/ca.pem" \
    -cert "$C/w1.pem" -key "$C/w1.key" > "$T/sclient.out" 2>&1 || true
waitfor "grep -q 'peer: .*certificate revoked' '$T/w2.log'" 10 ||
    fail "w2's peer listener took w1: $(grep 'peer:' "$T/w2.log" | tail -n 3)"
ok "w2's peer listener refuses w1: $(grep -m 1 -o 'certificate verification failed: certificate revoked' "$T/w2.log")"

# Restart r1 with no master up: the kept CRL refuses w1 still.
cp "$T/sr1/master-crl.pem" "$T/kept.pem"
kill "$MASTER_PID" "$WPID_r1" "$WPID_w1" 2> /dev/null
wait "$MASTER_PID" "$WPID_r1" "$WPID_w1" 2> /dev/null || true
mv "$T/r1.log" "$T/r1.0.log"
RELAY_ADDR=127.0.0.1:$R1
start_relay r1 "$MPORT"
grep -q 'master-crl.pem: the master.s CRL, 1 certificates revoked' "$T/r1.log" ||
    fail "r1 did not take its kept CRL: $(head -n 5 "$T/r1.log")"
PORT=$R1
start_worker w1
PORT=$MPORT
waitfor "grep -q 'certificate verification failed: certificate revoked: .*CN=w1' '$T/r1.log'" 20 ||
    fail "after a restart r1 took w1: $(tail -n 5 "$T/r1.log")"
ok "r1 restarted without its master refuses w1 from the kept CRL"
kill "$WPID_r1" "$WPID_w1" 2> /dev/null
wait "$WPID_r1" "$WPID_w1" 2> /dev/null || true

# A fake master with a certificate of our CA pushes another CA's CRL,
# then an older CRL of ours: both refused, the kept one stays.
mv "$T/r1.log" "$T/r1.1.log"
RELAY_ADDR=
for case in forged older; do
	if [ "$case" = forged ]; then
		R3Q_TESTPEER_CRL=$T/other/crl.pem
		want='not signed by a CA in'
	else
		R3Q_TESTPEER_CRL=$T/old-crl.pem
		want='is older than the one held'
	fi
	export R3Q_TESTPEER_CRL
	start_fake_master master crl
	start_relay r1 "$FAKE_PORT"
	waitfor "grep -q 'refused the CRL from the master' '$T/r1.log'" 15 ||
	    fail "r1 took the $case CRL: $(grep -i crl "$T/r1.log")"
	grep -q "refused the CRL from the master .*$want" "$T/r1.log" ||
	    fail "$case CRL: $(grep 'refused the CRL' "$T/r1.log")"
	cmp -s "$T/kept.pem" "$T/sr1/master-crl.pem" || fail "the kept CRL changed after the $case one"
	kill "$WPID_r1" "$FAKE_PID" 2> /dev/null
	wait "$WPID_r1" "$FAKE_PID" 2> /dev/null || true
	ok "the $case CRL from a fake master is refused: $(grep -m 1 -o 'refused the CRL from the master.*' "$T/r1.log" | cut -c 1-150)"
	mv "$T/r1.log" "$T/r1.$case.log"
done
