# A certificate speaks only for itself (doc/security.md).  A relay cannot
# have masterd sign a worker certificate in a stream's name, nor have its
# own certificate renewed into a worker's.  A stolen worker key renews
# once, not again once that renewal is in use (a renewal never used, as
# when its answer is lost, is revoked and replaced); `r3qctl certs revoke NAME` then revokes every
# certificate of the name (the join's, the renewal's, and a connected
# worker's made by mkcerts), drops the connected ones at once, refuses
# them at the handshake, and goes on refusing them after masterd
# restarts; `r3qctl certs` marks them revoked, and `certs crl` prints
# the CRL masterd signed.  `certs revoke SERIAL` revokes one certificate.  Run against the code before r3qctl certs
# revoke existed, the relay got "minted" and the stolen key renewed again.
. "${top_srcdir:-.}/tests/regress/lib.sh"

JOINPEER=$top_builddir/tests/regress/r3q-joinpeer
"$MKCERTS" --relay r1 "$T/certs" w1 > /dev/null
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key
cert_lifetime = 1h"
start_master

# 1. A relay asks for a certificate for the name of a stream it opened.
"$JOINPEER" relay 127.0.0.1 "$PORT" "$C/ca.pem" "$C/r1.pem" "$C/r1.key" r1 w9 \
    > "$T/relay.out" 2>&1 || fail "the relay got a certificate: $(cat "$T/relay.out")"
grep -q '^refused: ' "$T/relay.out" || fail "relay: $(cat "$T/relay.out")"
! "$R3QCTL" certs | grep -q '^w9 ' || fail "a certificate was issued for w9: $("$R3QCTL" certs)"
ok "a relay asking for w9's certificate over a stream: $(cat "$T/relay.out")"
"$JOINPEER" renew 127.0.0.1 "$PORT" "$C/ca.pem" "$C/r1.pem" "$C/r1.key" r1 "$T/r1new" \
    > "$T/r1renew.out" 2>&1 && fail "the relay's certificate was renewed: $(cat "$T/r1renew.out")"
grep -q "^refused: renewal refused" "$T/r1renew.out" || fail "relay renew: $(cat "$T/r1renew.out")"
ok "a relay's own certificate is not renewed into a worker's"

# 2. j1 joins with a token; its key is stolen; the thief renews.
tok=$("$R3QCTL" token create 2> /dev/null) || fail "token create"
"$WORKERD" -d -f /dev/null -N j1 --state-dir "$T/sj1" \
    --join "127.0.0.1:$PORT" "$tok" > "$T/j1.log" 2>&1 &
J1=$!
PIDS="$PIDS $J1"
waitfor "'$R3QCTL' workers | grep -q '^j1 '" 20 || fail "j1 did not join: $(tail -n 3 "$T/j1.log")"
cp "$T/sj1/worker.pem" "$T/stolen.pem"
cp "$T/sj1/worker.key" "$T/stolen.key"
chmod 600 "$T/stolen.key"
s1=$(openssl x509 -in "$T/stolen.pem" -noout -serial | cut -d= -f2)
kill "$J1"
wait "$J1" 2> /dev/null || true
waitfor "! '$R3QCTL' workers | grep -q '^j1 '" 15 || fail "j1 did not leave"
"$JOINPEER" renew 127.0.0.1 "$PORT" "$C/ca.pem" "$T/stolen.pem" "$T/stolen.key" j1 "$T/thief" \
    > "$T/renew.out" 2>&1 || fail "the stolen key did not renew: $(cat "$T/renew.out")"
s2=$(sed -n 's/^renewed: //p' "$T/renew.out")
[ -n "$s2" ] && [ "$s2" != "$s1" ] || fail "renewal: $(cat "$T/renew.out")"
ok "the stolen key renews: $s1 -> $s2"
# Again, its first renewal never used (as if the answer had been lost):
# granted, and that unused one is revoked.
"$JOINPEER" renew 127.0.0.1 "$PORT" "$C/ca.pem" "$T/stolen.pem" "$T/stolen.key" j1 "$T/thief2" \
    > "$T/renew2.out" 2>&1 || fail "a renewal whose answer was lost: $(cat "$T/renew2.out")"
s3=$(sed -n 's/^renewed: //p' "$T/renew2.out")
grep -q "certificate $s2, its last renewal, was never used: revoked" "$T/masterd.log" ||
    fail "the unused renewal $s2 was not revoked: $(grep -i renew "$T/masterd.log" | tail -n 3)"
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/thief.pem" "$T/thief.key" j1 \
    > "$T/hello2.out" 2>&1 && fail "the unused renewal $s2 was welcomed: $(cat "$T/hello2.out")"
ok "a renewal never used is replaced: $s1 -> $s3, $s2 revoked"
# Once the new one is in use, the old key renews no more.
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/thief2.pem" "$T/thief2.key" j1 \
    > "$T/hello3.out" 2>&1 || fail "$s3 was not welcomed: $(cat "$T/hello3.out")"
"$JOINPEER" renew 127.0.0.1 "$PORT" "$C/ca.pem" "$T/stolen.pem" "$T/stolen.key" j1 "$T/thief3" \
    > "$T/renew3.out" 2>&1 && fail "a certificate renewed twice: $(cat "$T/renew3.out")"
grep -q "was renewed already" "$T/renew3.out" || fail "second renewal: $(cat "$T/renew3.out")"
ok "a stolen key renews once ($s1 -> $s3 in use), not twice"
mv "$T/thief2.pem" "$T/thief.pem"
mv "$T/thief2.key" "$T/thief.key"
s2=$s3

# The thief runs j1 with the renewed certificate; w1 (mkcerts) runs too.
cat > "$T/thief.conf" <<EOC
master = 127.0.0.1:$PORT
ca = $C/ca.pem
cert = $T/thief.pem
key = $T/thief.key
cpus = 1
reconnect_max = 1s
EOC
chmod 600 "$T/thief.key"
"$WORKERD" -d -v -f "$T/thief.conf" > "$T/thief.log" 2>&1 &
PIDS="$PIDS $!"
start_worker w1
waitfor "'$R3QCTL' workers | grep -q '^j1 ' && '$R3QCTL' workers | grep -q '^w1 '" 15 ||
    fail "the thief and w1 are not both connected: $("$R3QCTL" workers)"

# 3. Revoke the name from the head node: both certificates, at once.
"$R3QCTL" certs revoke j1 > "$T/revoke.out" 2>&1 || fail "certs revoke j1: $(cat "$T/revoke.out")"
grep -q "^j1 .*$s1 " "$T/revoke.out" && grep -q "^j1 .*$s2 " "$T/revoke.out" ||
    fail "certs revoke j1 did not revoke both: $(cat "$T/revoke.out")"
waitfor "! '$R3QCTL' workers | grep -q '^j1 '" 15 || fail "the thief is still connected: $("$R3QCTL" workers)"
waitfor "grep -q 'your certificate is revoked\|certificate revoked' '$T/thief.log'" 15 ||
    fail "the thief was not told: $(tail -n 3 "$T/thief.log")"
"$R3QCTL" workers | grep -q '^w1 ' || fail "w1 went with j1"
"$R3QCTL" certs > "$T/certs.out"
[ "$(awk '$1 == "j1"' "$T/certs.out" | wc -l)" = 3 ] &&
    [ "$(awk '$1 == "j1" && $NF ~ /Z$/' "$T/certs.out" | wc -l)" = 3 ] ||
    fail "certs does not mark all three revoked: $(cat "$T/certs.out")"
ok "certs revoke j1: both certificates revoked, the thief dropped at once, w1 stays"
# The CRL in force, for relays' and workers' crl files: signed by the CA.
"$R3QCTL" certs crl > "$T/crl.pem" || fail "certs crl: $(cat "$T/crl.pem")"
openssl crl -in "$T/crl.pem" -CAfile "$C/ca.pem" -noout 2> "$T/crl.err" ||
    fail "the exported CRL does not verify under the CA: $(cat "$T/crl.err")"
openssl crl -in "$T/crl.pem" -noout -text > "$T/crl.txt"
grep -q "Serial Number: $s1" "$T/crl.txt" && grep -q "Serial Number: $s2" "$T/crl.txt" ||
    fail "the exported CRL lacks $s1 or $s2: $(cat "$T/crl.txt")"
ok "certs crl prints the CRL in force, signed by the CA, with both serials"

# Refused at the handshake, with either certificate.
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/thief.pem" "$T/thief.key" j1 \
    > "$T/hello.out" 2>&1 && fail "the renewed certificate was welcomed: $(cat "$T/hello.out")"
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/stolen.pem" "$T/stolen.key" j1 \
    > "$T/hello1.out" 2>&1 && fail "the joined certificate was welcomed: $(cat "$T/hello1.out")"
waitfor "grep -q 'certificate revoked' '$T/masterd.log'" 10 ||
    fail "masterd did not refuse at the handshake: $(tail -n 5 "$T/masterd.log")"
ok "both refused at the handshake: $(grep -m 1 -o 'certificate verification failed: certificate revoked' "$T/masterd.log")"

# 4. A worker of mkcerts, by name; then one certificate by serial.
"$R3QCTL" certs revoke w1 > "$T/revoke-w1.out" 2>&1 || fail "certs revoke w1: $(cat "$T/revoke-w1.out")"
waitfor "! '$R3QCTL' workers | grep -q '^w1 '" 15 || fail "w1 still connected"
"$R3QCTL" certs | grep -qE "^w1 +[0-9A-F]+ +- +- +- +- [0-9T:Z-]+Z\$" ||
    fail "certs does not list w1's revoked certificate: $("$R3QCTL" certs)"
ok "certs revoke w1 (a certificate of mkcerts, connected): dropped, and listed as revoked"
tok2=$("$R3QCTL" token create 2> /dev/null)
"$WORKERD" -d -f /dev/null -N j2 --state-dir "$T/sj2" \
    --join "127.0.0.1:$PORT" "$tok2" > "$T/j2.log" 2>&1 &
PIDS="$PIDS $!"
waitfor "'$R3QCTL' workers | grep -q '^j2 '" 20 || fail "j2 did not join"
s3=$(openssl x509 -in "$T/sj2/worker.pem" -noout -serial | cut -d= -f2)
"$R3QCTL" certs revoke "$s3" > "$T/revoke-s3.out" 2>&1 || fail "certs revoke $s3: $(cat "$T/revoke-s3.out")"
grep -q "^j2 .*$s3 " "$T/revoke-s3.out" || fail "certs revoke SERIAL: $(cat "$T/revoke-s3.out")"
waitfor "! '$R3QCTL' workers | grep -q '^j2 '" 15 || fail "j2 still connected"
"$R3QCTL" certs revoke nosuchworker > "$T/out" 2>&1 && fail "revoking an unknown name worked"
grep -q "no certificate was issued for a worker named nosuchworker" "$T/out" || fail "unknown name: $(cat "$T/out")"
ok "certs revoke SERIAL drops j2; an unknown name is said"

# 5. After a restart, from the journal.
kill "$MASTER_PID"
wait "$MASTER_PID" 2> /dev/null || true
mv "$T/masterd.log" "$T/masterd.1.log"
start_master
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/thief.pem" "$T/thief.key" j1 \
    > "$T/hello.out" 2>&1 && fail "after a restart the renewed certificate was welcomed"
"$JOINPEER" hello 127.0.0.1 "$PORT" "$C/ca.pem" "$T/sj2/worker.pem" "$T/sj2/worker.key" j2 \
    > "$T/hello.out" 2>&1 && fail "after a restart j2's certificate was welcomed"
waitfor "grep -q 'certificate revoked' '$T/masterd.log'" 10 || fail "no refusal after the restart"
[ "$("$R3QCTL" certs | grep -c '^j[12] ')" = 4 ] || fail "certs after the restart: $("$R3QCTL" certs)"
ok "after masterd restarts the revoked certificates are still refused at the handshake"
