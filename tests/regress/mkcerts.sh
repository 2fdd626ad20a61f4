# scripts/mkcerts is a small CA: a new CA directory is its owner's alone
# (0700), ca.key and every key are 0600 (a loosened ca.key is put back),
# --days and --ca-days set the validity, --key-type makes ECDSA P-256 (the
# default), P-384, RSA or Ed25519 keys, bad values exit 64, a reused CA
# stays the same and signs keys of another type, --help says where ca.key
# lives and when to use an existing PKI; and a master and a worker with
# RSA and with Ed25519 certificates do join over TLS.  A relay's
# certificate carries --relay-host names, never the master's --host ones.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# days FILE: the validity of a certificate, in days.
days() {
	nb=$(date -d "$(openssl x509 -in "$1" -noout -startdate | cut -d= -f2)" +%s)
	na=$(date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s)
	echo $(((na - nb) / 86400))
}

# keytype FILE: the first line of a private key's text form.
keytype() {
	openssl pkey -in "$1" -noout -text | head -n 1
}

"$MKCERTS" --help > "$T/help" || fail "mkcerts --help exited $?"
for w in ca.key "existing PKI" OU=master OU=worker --key-type --ca-days --revoke crl.pem \
    "mode 0600"; do
	grep -qF -- "$w" "$T/help" || fail "mkcerts --help does not mention $w"
done
! grep -qi throwaway "$T/help" || fail "mkcerts --help calls its CA throwaway"
ok "mkcerts --help says where ca.key lives and when to use an existing PKI"

D=$T/ca
"$MKCERTS" "$D" w1 > "$T/out" || fail "mkcerts: $(cat "$T/out")"
[ "$(stat -c %a "$D")" = 700 ] || fail "new CA directory is mode $(stat -c %a "$D")"
for f in ca master w1 client; do
	[ "$(stat -c %a "$D/$f.key")" = 600 ] || fail "$f.key is mode $(stat -c %a "$D/$f.key")"
	[ "$(stat -c %a "$D/$f.pem")" = 644 ] || fail "$f.pem is mode $(stat -c %a "$D/$f.pem")"
	keytype "$D/$f.key" | grep -q '(256 bit)' || fail "$f.key: $(keytype "$D/$f.key")"
done
openssl x509 -in "$D/w1.pem" -noout -subject | grep -q 'OU *= *worker, CN *= *w1' ||
    fail "w1.pem: $(openssl x509 -in "$D/w1.pem" -noout -subject)"
[ "$(days "$D/ca.pem")" = 3650 ] || fail "CA valid $(days "$D/ca.pem") days"
[ "$(days "$D/w1.pem")" = 825 ] || fail "w1.pem valid $(days "$D/w1.pem") days"
grep -q "ca.key stays in $D" "$T/out" || fail "mkcerts does not say where ca.key stays"
ok "defaults: directory 0700, keys 0600, ECDSA P-256, CA 3650 days, leaves 825"

ca=$(openssl x509 -in "$D/ca.pem" -noout -fingerprint)
chmod 644 "$D/ca.key"
"$MKCERTS" --key-type ed25519 --days 30 "$D" w2 > "$T/out" 2> "$T/err" ||
    fail "mkcerts w2: $(cat "$T/out" "$T/err")"
[ "$(openssl x509 -in "$D/ca.pem" -noout -fingerprint)" = "$ca" ] ||
    fail "a second run replaced the CA"
[ "$(stat -c %a "$D/ca.key")" = 600 ] || fail "ca.key left mode $(stat -c %a "$D/ca.key")"
grep -q 'now mode 0600' "$T/err" || fail "mkcerts did not say it fixed ca.key"
keytype "$D/w2.key" | grep -q ED25519 || fail "w2.key: $(keytype "$D/w2.key")"
[ "$(days "$D/w2.pem")" = 30 ] || fail "w2.pem valid $(days "$D/w2.pem") days"
openssl verify -CAfile "$D/ca.pem" "$D/w2.pem" > /dev/null ||
    fail "w2.pem does not verify against the reused CA"
ok "a reused CA stays, its key goes back to 0600, signs an Ed25519 worker for 30 days"

for kt in ec:P-384:'(384 bit)' rsa:'(3072 bit' rsa:2048:'(2048 bit' ed25519:ED25519; do
	t=${kt%:*} want=${kt##*:}
	rm -rf "$T/k"
	"$MKCERTS" --key-type "$t" --days 10 --ca-days 20 "$T/k" w1 > "$T/out" 2>&1 ||
	    fail "mkcerts --key-type $t: $(cat "$T/out")"
	for f in ca master w1 client; do
		keytype "$T/k/$f.key" | grep -qF "$want" ||
		    fail "--key-type $t: $f.key is $(keytype "$T/k/$f.key")"
	done
	[ "$(days "$T/k/ca.pem")" = 20 ] || fail "--ca-days 20: $(days "$T/k/ca.pem") days"
	[ "$(days "$T/k/w1.pem")" = 10 ] || fail "--days 10: $(days "$T/k/w1.pem") days"
done
ok "--key-type ec:P-384, rsa, rsa:2048 and ed25519; --days and --ca-days"

for args in "--key-type dsa" "--key-type rsa:1024" "--days 0" \
    "--ca-days 10 --days 20" "--ca-days x"; do
	rc=0
	# shellcheck disable=SC2086
	"$MKCERTS" $args "$T/bad" w1 > "$T/out" 2>&1 || rc=$?
	[ "$rc" = 64 ] || fail "mkcerts $args exited $rc: $(cat "$T/out")"
	[ ! -e "$T/bad" ] || fail "mkcerts $args made $T/bad"
done
ok "bad --key-type, --days and --ca-days exit 64 and make nothing"

# The daemons accept what mkcerts makes, whatever the key type.
for t in rsa ed25519; do
	rm -rf "$T/certs"
	"$MKCERTS" --key-type "$t" "$T/certs" "w$t" > /dev/null
	start_master
	start_worker "w$t"
	wait_workers 1
	kill "$MASTER_PID" 2>/dev/null || true
	wait "$MASTER_PID" 2>/dev/null || true
	eval "kill \$WPID_w$t" 2>/dev/null || true
	mv "$T/masterd.log" "$T/masterd-$t.log"
done
ok "a master and a worker with RSA and with Ed25519 certificates join"

# --revoke: a directory without a CA gets none made; a name without a
# certificate, or a certificate of another CA, is refused.
rc=0
"$MKCERTS" --revoke w1 "$T/noca" > "$T/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q 'has no CA' "$T/out" || fail "--revoke without a CA: $rc: $(cat "$T/out")"
[ ! -e "$T/noca/ca.pem" ] || fail "--revoke without a CA made one"
rc=0
"$MKCERTS" --revoke nosuch "$D" > "$T/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no certificate $D/nosuch.pem" "$T/out" || fail "--revoke nosuch: $rc: $(cat "$T/out")"
rc=0
"$MKCERTS" --revoke "$T/k/w1.pem" "$D" > "$T/out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "was not issued by $D/ca.pem" "$T/out" || fail "--revoke of another CA's: $rc: $(cat "$T/out")"
"$MKCERTS" --revoke "$D/w2.pem" "$D" > "$T/out" 2>&1 || fail "--revoke FILE: $(cat "$T/out")"
openssl crl -in "$D/crl.pem" -noout -text | grep -q "Serial Number: $(openssl x509 -in "$D/w2.pem" -noout -serial | cut -d= -f2)" ||
    fail "--revoke FILE: w2 is not in crl.pem"
ok "--revoke refuses a directory without a CA, a missing name and another CA's certificate; takes a file"

# A relay's certificate carries the names its workers dial (--relay-host),
# never the master's (--host): it must not pass for the master.
"$MKCERTS" --host head.example.org --host 10.9.9.9 --relay r1 \
    --relay-host gw.example.org --relay-host 10.8.8.8 "$T/rel" w1 > "$T/out" 2>&1 ||
    fail "--relay with --relay-host: $(cat "$T/out")"
san=$(openssl x509 -in "$T/rel/r1.pem" -noout -ext subjectAltName | tail -n 1)
case $san in
*head.example.org*|*10.9.9.9*) fail "a relay certificate carries the master's --host names: $san" ;;
esac
case $san in
*DNS:gw.example.org*"IP Address:10.8.8.8"*) ;;
*) fail "a relay certificate lacks its --relay-host names: $san" ;;
esac
msan=$(openssl x509 -in "$T/rel/master.pem" -noout -ext subjectAltName | tail -n 1)
case $msan in
*gw.example.org*|*10.8.8.8*) fail "the master certificate carries --relay-host names: $msan" ;;
*DNS:head.example.org*) ;;
*) fail "the master certificate lacks its --host names: $msan" ;;
esac
ok "a relay certificate has its --relay-host names, not the master's --host names: $san"

# --client USER: a client certificate of USER's own (OU=client, CN=USER),
# without a worker name; a reserved or repeated name exits 64, naming it.
"$MKCERTS" --client alice --client bob "$T/cli" > "$T/out" 2>&1 ||
    fail "--client alice --client bob: $(cat "$T/out")"
for u in alice bob; do
	openssl x509 -in "$T/cli/$u.pem" -noout -subject |
	    grep -q "OU = client, CN = $u\$" ||
	    fail "$u.pem: $(openssl x509 -in "$T/cli/$u.pem" -noout -subject)"
	[ "$(stat -c %a "$T/cli/$u.key")" = 600 ] || fail "$u.key is not 0600"
done
openssl x509 -in "$T/cli/client.pem" -noout -subject |
    grep -q "OU = client, CN = client\$" || fail "the shared client.pem is gone"
for args in "--client client" "--client ca" "--client bad/name" \
    "--client w1 :w1" "--client x --client x" "--relay r1 --client r1"; do
	rc=0
	# shellcheck disable=SC2086
	"$MKCERTS" ${args%:*} "$T/cli" $(echo "$args" | sed -n 's/.*://p') \
	    > "$T/out" 2>&1 || rc=$?
	[ "$rc" = 64 ] && grep -qE "reserved|bad client name|given (twice|as)" "$T/out" ||
	    fail "mkcerts $args exited $rc: $(cat "$T/out")"
done
ok "--client USER issues USER.pem (OU=client, CN=USER) beside the shared client.pem; bad names exit 64"
