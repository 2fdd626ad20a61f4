# A certificate acts only as its role (issue 24, "Identity" and "Bad
# input").  r3q-testpeer roles sends every message type of the wire schema
# -- the Envelope's oneof, read from the protobuf-c descriptor, so a new
# type is covered at once -- on a worker session before and after its
# hello, and on a client session: a worker certificate can never act as a
# client (every client request on a worker session is refused and the
# session closed), a client certificate never as a worker, and a type no
# peer may send (a Welcome, an Assign, a reply) is refused on every
# session.  A certificate from the right CA that has expired (made with
# openssl ca), one with no role (no OU), and one with the master's role
# are refused, each with a log line that names the certificate.  masterd
# serves on throughout.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
C=$T/certs
start_master

for m in worker prehello; do
	"$TESTPEER" -a "$C/ca.pem" -c "$C/w1.pem" -k "$C/w1.key" \
	    roles 127.0.0.1 "$PORT" "$m" > "$T/$m.out" 2>&1 ||
	    fail "$m: $(grep -E 'FAIL|tried' "$T/$m.out")"
	n=$(sed -n "s/^$m: \([0-9]*\) message types tried, 0 wrong$/\1/p" "$T/$m.out")
	[ "${n:-0}" -ge 20 ] || fail "$m: $(tail -n 3 "$T/$m.out")"
done
grep -qx 'worker submit_es refused' "$T/worker.out" &&
    grep -qx 'worker list_workers refused' "$T/worker.out" &&
    grep -qx 'worker heartbeat accepted' "$T/worker.out" ||
    fail "worker session: $(cat "$T/worker.out")"
ok "worker certificate: all $n message types tried; every client request refused, before and after hello"

"$TESTPEER" -a "$C/ca.pem" -c "$C/client.pem" -k "$C/client.key" \
    roles 127.0.0.1 "$PORT" client > "$T/client.out" 2>&1 ||
    fail "client: $(grep -E 'FAIL|tried' "$T/client.out")"
grep -qx 'client hello refused' "$T/client.out" &&
    grep -qx 'client results refused' "$T/client.out" &&
    grep -qx 'client list_workers accepted' "$T/client.out" ||
    fail "client session: $(cat "$T/client.out")"
ok "client certificate: every worker message (hello, results, ...) refused"
grep -q 'unexpected submit_es message from a worker' "$T/masterd.log" &&
    grep -q 'unexpected results message from a client' "$T/masterd.log" ||
    fail "the refusals are not logged with the message type"
ok "each refusal is logged, naming the message type"
master_alive

# Certificates signed by the right CA with openssl ca: one that expired,
# one without a role.
cat > "$T/ca.cnf" <<EOF
[ca]
default_ca = t
[t]
database = $T/ca.db
serial = $T/ca.srl
certificate = $C/ca.pem
private_key = $C/ca.key
new_certs_dir = $T
default_md = sha256
policy = any
unique_subject = no
x509_extensions = leaf
[any]
organizationName = optional
organizationalUnitName = optional
commonName = supplied
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
EOF
: > "$T/ca.db"
echo 1000 > "$T/ca.srl"
# sign NAME SUBJECT openssl-ca-options...: $C/NAME.pem and $C/NAME.key.
sign() {
	_n=$1 _s=$2
	shift 2
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -keyout "$C/$_n.key" -subj "$_s" -out "$T/$_n.csr" \
	    > "$T/sign.out" 2>&1 || fail "openssl req $_n: $(cat "$T/sign.out")"
	chmod 600 "$C/$_n.key"
	openssl ca -batch -notext -config "$T/ca.cnf" -in "$T/$_n.csr" \
	    -out "$C/$_n.pem" "$@" > "$T/sign.out" 2>&1 ||
	    fail "openssl ca $_n: $(cat "$T/sign.out")"
}
sign old /O=R3Q/OU=worker/CN=old -startdate 20200101000000Z \
    -enddate 20200102000000Z
sign noou /O=R3Q/CN=noou -days 30
openssl x509 -in "$C/noou.pem" -noout -subject | grep -q 'OU' &&
    fail "noou.pem has an OU"

# hold NAME: connect with NAME's certificate; the master must close.
hold() {
	timeout 30 "$TESTPEER" -a "$C/ca.pem" -c "$C/$1.pem" -k "$C/$1.key" \
	    roles 127.0.0.1 "$PORT" hold > "$T/hold-$1.out" 2>&1 || true
	grep -q 'closed\|handshake failed' "$T/hold-$1.out" ||
	    fail "$1: the master kept the connection: $(cat "$T/hold-$1.out")"
}

hold old
waitfor "grep -q 'certificate has expired: /O=R3Q/OU=worker/CN=old (serial 1000), expired on 2020-01-02 00:00:00 UTC' '$T/masterd.log'" 10 ||
    fail "no log line naming the expired certificate: $(grep -i expired "$T/masterd.log")"
ok "an expired certificate from the right CA is refused: $(grep -o 'certificate has expired: .*' "$T/masterd.log" | head -n 1)"

hold noou
waitfor "grep -q 'refused: certificate /O=R3Q/CN=noou (serial 1001) has no role (OU)' '$T/masterd.log'" 10 ||
    fail "no log line naming the certificate without a role: $(grep -i 'refused' "$T/masterd.log")"
ok "a certificate from the right CA with no role (OU) is refused, named in the log"

hold master
waitfor "grep -q \"refused: certificate /O=R3Q/OU=master/CN=master (serial [0-9A-F]*) has role 'master', not worker, relay or client\" '$T/masterd.log'" 10 ||
    fail "no log line naming the master certificate used by a peer"
ok "a peer with the master's certificate is refused, named in the log"

"$TESTPEER" -a "$C/ca.pem" -c "$C/w1.pem" -k "$C/w1.key" \
    connect 127.0.0.1 "$PORT" hello > "$T/hello.out" 2>&1 ||
    fail "a good worker cannot join after all that: $(cat "$T/hello.out")"
master_alive
ok "masterd serves on"
