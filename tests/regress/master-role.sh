# The master's identity is its certificate's role, not only its CA and
# name: workerd joins only a peer whose certificate says OU=master.  A fake
# master presenting a worker's certificate that is valid for the name
# dialled (a subjectAltName DNS:localhost) is refused as "not a master
# (role 'worker')", permanently: workerd exits 78 without sending it a
# hello.  A worker's certificate whose CN only is the name dialled
# (CN=localhost, no subjectAltName) is refused earlier, at the name: a CN
# is never taken for a host.  masterd refuses to start with a worker's
# certificate, and the real master, with its own, is joined at that same
# name.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 localhost
# A worker's certificate (OU=worker) with a subjectAltName for localhost,
# as an outsider might come by one: the CA signs what it is asked to.
C=$T/certs
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$C/wsan.key" -subj "/O=R3Q/OU=worker/CN=wsan" \
    -out "$T/wsan.csr" > /dev/null 2>&1 || fail "openssl req"
printf 'subjectAltName = DNS:localhost\nextendedKeyUsage = serverAuth, clientAuth\n' \
    > "$T/wsan.ext"
openssl x509 -req -in "$T/wsan.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
    -CAcreateserial -days 2 -extfile "$T/wsan.ext" -out "$C/wsan.pem" \
    > /dev/null 2>&1 || fail "openssl x509 -req"
chmod 600 "$C/wsan.key"

# against_fake CERT: w1 dialling localhost, where a fake master presents
# certificate CERT; its exit status in rc, its log in $T/wf.log.
against_fake() {
	start_fake_master "$1" synth
	sed -e "s/@PORT@/$FAKE_PORT/" > "$T/wf.conf" <<EOC
master = localhost:@PORT@
ca = $T/certs/ca.pem
cert = $T/certs/w1.pem
key = $T/certs/w1.key
reconnect_max = 1s
EOC
	rc=0
	timeout 10 "$WORKERD" -d -f "$T/wf.conf" > "$T/wf.log" 2>&1 || rc=$?
	! grep -q "joined master" "$T/wf.log" ||
	    fail "workerd joined a worker posing as its master: $(cat "$T/wf.log")"
}

against_fake localhost
grep -qF "master certificate name 'localhost' does not match localhost (it has no subjectAltName, and a CN is never taken for a host)" \
    "$T/wf.log" || fail "no word of the missing subjectAltName: $(cat "$T/wf.log")"
[ "$rc" -eq 78 ] || fail "workerd exited $rc, not 78, after a CN-only peer"
wait "$FAKE_PID" 2>/dev/null || true
grep -q "handshake failed" "$T/fake.out" ||
    fail "the handshake with a CN-only peer went through: $(cat "$T/fake.out")"
ok "workerd refuses a certificate whose CN only names the host and exits 78"

against_fake wsan
grep -qF "peer at localhost:$FAKE_PORT is not a master or a relay (role 'worker', name 'wsan')" \
    "$T/wf.log" || fail "no word of the peer's role: $(cat "$T/wf.log")"
grep -q "permanent" "$T/wf.log" || fail "not said to be permanent: $(cat "$T/wf.log")"
[ "$rc" -eq 78 ] || fail "workerd exited $rc, not 78, after a non-master peer"
wait "$FAKE_PID" 2>/dev/null || true
grep -q "no hello" "$T/fake.out" || fail "the fake master got a hello: $(cat "$T/fake.out")"
ok "workerd refuses a worker's certificate as its master and exits 78"

# masterd with a worker's certificate does not start.
cat > "$T/bad.conf" <<EOC
listen = 127.0.0.1:0
control = $T/bad.sock
journal = none
ca = $T/certs/ca.pem
cert = $T/certs/localhost.pem
key = $T/certs/localhost.key
EOC
rc=0
timeout 10 "$MASTERD" -d -f "$T/bad.conf" > "$T/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -qF "$T/certs/localhost.pem: role 'worker', masterd needs 'master'" \
    "$T/bad.out" || fail "masterd with a worker's certificate: status $rc: $(cat "$T/bad.out")"
grep -q "listening on" "$T/bad.out" && fail "masterd listened with a worker's certificate"
ok "masterd refuses to start with a worker's certificate"

# The real master, at the same name, is joined.
start_master
sed -i "s/^master = .*/master = localhost:$PORT/" "$T/wf.conf"
"$WORKERD" -d -f "$T/wf.conf" > "$T/w1.log" 2>&1 &
PIDS="$PIDS $!"
wait_workers 1
grep -q "joined master localhost:$PORT as w1" "$T/w1.log" ||
    fail "w1 did not join the real master: $(cat "$T/w1.log")"
ok "workerd joins the real master (OU=master) at the same name"
