# Join tokens (issue 25, "Join tokens"): masterd with ca_key makes tokens
# (r3qctl token create), kept hashed in its journal.  A workerd started
# with only flags and a token joins: it makes its key (0600) in its
# state directory, checks the master against the token's CA hash, gets a
# certificate by CSR, runs the tasks of an ES job (the --local answer,
# bit for bit), and at a restart uses that certificate without a token.
# Refused, each with its reason for the joiner and a log line with the
# peer's address: a wrong secret, an unknown, expired, revoked or used-up
# token, a name a connected worker holds, a CSR for a bad name (/ , NUL),
# with a key the CA does not take or a spoilt signature, and anything but
# a join request from a peer without a certificate.  A token of another
# cluster: the worker refuses the master and says why.  Without ca_key,
# tokens are disabled and say so.  A certificate is renewed over the
# worker's link before it ends (cert_lifetime 1m, renew_before 50s).
# Then failed guesses from one address are rate-limited.  Last (as root,
# on a small tmpfs), a join while the journal cannot be written is
# refused, to be tried again, and goes through once it can.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 30 --dim 10 --generations 8 --lu 50 --seed 5 --reevaluate-parents"

mkcerts w1
"$MKCERTS" "$T/other" w1 > /dev/null
C=$T/certs
"$R3QCTL" es --local $ES --csv "$T/local.csv" > "$T/local.out" ||
    fail "local run failed"

# 0. A token that is not one is refused at once; -n before a join.
hash=$(openssl x509 -in "$C/ca.pem" -outform DER | sha256sum | cut -d' ' -f1)
rc=0
"$WORKERD" -n -f /dev/null --state-dir "$T/s0" --join 127.0.0.1:1 \
    "r3q1.0123456789ab.0123456789ABCDEF0123456789abcdef.$hash" > "$T/out" 2>&1 || rc=$?
[ "$rc" = 64 ] && grep -q "join: not a join token: its secret is 32 lowercase hex digits" "$T/out" ||
    fail "a malformed token: $rc: $(cat "$T/out")"
! grep -q 0123456789ABCDEF "$T/out" || fail "the error repeats the secret"
"$WORKERD" -n -f /dev/null --state-dir "$T/s0" --join 127.0.0.1:1 \
    "r3q1.0123456789ab.0123456789abcdef0123456789abcdef.$hash" > "$T/out" 2>&1 ||
    fail "workerd -n before a join: $(cat "$T/out")"
grep -q "configuration OK (not joined yet" "$T/out" || fail "workerd -n before a join: $(cat "$T/out")"
ok "a malformed token is refused at once, without repeating it; -n before a join checks the configuration"

# 1. Without ca_key: disabled, and said so to r3qctl and to a joiner.
start_master
"$R3QCTL" token create > "$T/out" 2>&1 && fail "token create without ca_key worked"
grep -q "join tokens are disabled: masterd.conf has no ca_key" "$T/out" ||
    fail "token create without ca_key said: $(cat "$T/out")"
hash=$(openssl x509 -in "$C/ca.pem" -outform DER | sha256sum | cut -d' ' -f1)
fake="r3q1.000000000000.00000000000000000000000000000000.$hash"
rc=0
timeout 60 "$WORKERD" -d -N x1 --state-dir "$T/sx" \
    --join "127.0.0.1:$PORT" "$fake" > "$T/x1.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "the master at 127.0.0.1:$PORT wants a certificate from every peer: it takes no join tokens (its masterd.conf has no ca_key)" "$T/x1.log" ||
    fail "a joiner of a master without ca_key: $rc: $(tail -n 3 "$T/x1.log")"
[ ! -e "$T/sx/worker.key" ] || fail "a refused joiner kept a key"
ok "without ca_key: token create and a joiner are told join tokens are off"

kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
cp "$C/ca.key" "$T/open.key"
chmod 644 "$T/open.key"
sed "s|^journal = .*|journal = $T/j0.db\nca_key = $T/open.key|" "$T/masterd.conf" > "$T/open.conf"
rc=0
timeout 20 "$MASTERD" -d -f "$T/open.conf" > "$T/open.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "ca_key: permissions 0644 for '$T/open.key' are too open" "$T/open.log" ||
    fail "a ca_key open to others: $rc: $(tail -n 3 "$T/open.log")"
ok "a ca_key others may read is refused: $(grep -o 'permissions 0644.*too open' "$T/open.log")"

MASTER_EXTRA="ca_key = $C/ca.key"
mv "$T/masterd.log" "$T/masterd.0.log"
start_master
grep -q "join tokens on: ca_key $C/ca.key, CA sha256 " "$T/masterd.log" ||
    fail "masterd does not say join tokens are on"
tok=$("$R3QCTL" token create --uses 2 --ttl 1h 2> "$T/create.err") ||
    fail "token create: $(cat "$T/create.err")"
id=$(echo "$tok" | cut -d. -f2)
hash=$(openssl x509 -in "$C/ca.pem" -outform DER | sha256sum | cut -d' ' -f1)
echo "$tok" | grep -qE "^r3q1\.[0-9a-f]{12}\.[0-9a-f]{32}\.$hash\$" ||
    fail "token format: $tok"
grep -q "token $id: 2 joins until" "$T/create.err" || fail "create said: $(cat "$T/create.err")"
secret=$(echo "$tok" | cut -d. -f3)
! grep -rq "$secret" "$T/masterd.log" "$T"/journal.db* ||
    fail "the token's secret is in the log or the journal"
"$R3QCTL" token list > "$T/list" || fail "token list"
grep -qE "^$id +[0-9T:Z-]+ +[0-9T:Z-]+ +2/2 valid\$" "$T/list" ||
    fail "token list: $(cat "$T/list")"
! grep -q "$secret" "$T/list" || fail "token list shows the secret"
ok "token create prints r3q1.ID.SECRET.CA-SHA256; the secret is in no log, journal or list"

# 2. Two workers join with flags and the token only.
conf=
[ -e /usr/local/etc/r3q/workerd.conf ] && conf="-f /dev/null"
for w in j1 j2; do
	"$WORKERD" -d -v $conf -N $w -c 2 --state-dir "$T/s$w" \
	    --join "127.0.0.1:$PORT" "$tok" >> "$T/$w.log" 2>&1 &
	eval "WPID_$w=$!"
	PIDS="$PIDS $!"
done
wait_workers 2
for w in j1 j2; do
	[ "$(stat -c %a "$T/s$w/worker.key")" = 600 ] || fail "$w: its key is not 0600"
	[ "$(stat -c %a "$T/s$w")" = 700 ] || fail "$w: its state dir is not 0700"
	openssl x509 -in "$T/s$w/worker.pem" -noout -subject | grep -q "OU *= *worker, CN *= *$w" ||
	    fail "$w: certificate subject: $(openssl x509 -in "$T/s$w/worker.pem" -noout -subject)"
	openssl verify -CAfile "$C/ca.pem" "$T/s$w/worker.pem" > /dev/null ||
	    fail "$w: its certificate does not verify under the CA"
	grep -q "worker $w joined with token $id from 127.0.0.1:[0-9]*: certificate serial" "$T/masterd.log" ||
	    fail "no log line for $w's join"
done
ok "j1 and j2 joined: key 0600 in the state dir, a certificate OU=worker CN=name from the CA"
job=$("$R3QCTL" submit es $ES)
"$R3QCTL" wait "$job" > /dev/null || fail "the job failed"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the answer differs from --local"
ok "an ES job on the joined workers: the --local answer, bit for bit"

"$R3QCTL" token list > "$T/list"
grep -qE "^$id .* 0/2 used-up\$" "$T/list" || fail "token list after 2 joins: $(cat "$T/list")"
"$R3QCTL" certs > "$T/certs.out"
for w in j1 j2; do
	sn=$(openssl x509 -in "$T/s$w/worker.pem" -noout -serial | cut -d= -f2)
	grep -qE "^$w +$sn +[0-9T:Z-]+ +[0-9T:Z-]+ +$id +127\.0\.0\.1:[0-9]+\$" "$T/certs.out" ||
	    fail "certs does not list $w ($sn): $(cat "$T/certs.out")"
done
ok "token list: 0/2 used-up; certs lists name, serial, dates, token and address"

# 3. A restart uses the certificate: no token, no new certificate.
kill "$WPID_j1"
wait "$WPID_j1" 2>/dev/null || true
wait_workers 1
"$WORKERD" -d -v $conf -c 2 --state-dir "$T/sj1" -m "127.0.0.1:$PORT" \
    > "$T/j1b.log" 2>&1 &
WPID_j1=$!
PIDS="$PIDS $!"
wait_workers 2
! grep -q "joined the cluster" "$T/j1b.log" || fail "j1 joined again"
[ "$("$R3QCTL" certs | grep -c '^j1 ')" = 1 ] || fail "a new certificate for j1"
grep -q "worker j1: 2 execution threads" "$T/j1b.log" || fail "j1 did not take its certificate's name"
ok "restarted without a token or a name, j1 connects with its certificate (and its name)"

# 4. Refusals, each said to the joiner and logged with its address.
tok3=$("$R3QCTL" token create 2> /dev/null)
id3=$(echo "$tok3" | cut -d. -f2)
sec3=$(echo "$tok3" | cut -d. -f3)
# join NAME KEY [TOKEN]: what a joiner is answered.
join() {
	"$TESTPEER" join 127.0.0.1 "$PORT" "${3:-$id3.$sec3}" "$1" "$2"
}
# refused NAME KEY TOKEN MESSAGE: the answer and masterd's log line.
refused() {
	join "$1" "$2" "$3" > "$T/join.out" 2>&1
	grep -F "$4" "$T/join.out" | grep -q '^error: ' ||
	    fail "$1/$2: expected '$4', got: $(cat "$T/join.out")"
	grep -F "$4" "$T/masterd.log" |
	    grep -q '127\.0\.0\.1:[0-9]*: join refused' ||
	    fail "no log line with the address for '$4'"
	ok "refused: $4"
}
refused j9 ec "$id.$secret" "token $id is used up (2 joins)"
refused j9 ec "$id3.$secret" "unknown token or wrong secret ($id3)"
refused j9 ec "0123456789ab.$secret" "unknown token or wrong secret (0123456789ab)"
refused j2 ec "$id3.$sec3" "a worker named j2 is connected (from 127.0.0.1:"
refused "a/b" ec "$id3.$sec3" "bad worker name 'a/b': '/' at offset 1"
refused "a,b" ec "$id3.$sec3" "bad worker name 'a,b': ',' at offset 1"
refused 'a\0b' ec "$id3.$sec3" "bad worker name: a NUL byte at offset 1"
refused master ec "$id3.$sec3" "worker name 'master' is reserved"
refused j9 p521 "$id3.$sec3" "an EC key on curve secp521r1: the CA takes P-256 or P-384"
refused j9 rsa1024 "$id3.$sec3" "an RSA key of 1024 bits: the CA takes 2048 to 8192"
refused j9 badsig "$id3.$sec3" "the certificate signing request's signature does not verify"
join j9 hello > "$T/join.out" 2>&1
grep -q "error: unexpected hello message from a peer without a certificate (it may only send join_request)" "$T/join.out" &&
    grep -q "127\.0\.0\.1:[0-9]* (joiner): unexpected hello message" "$T/masterd.log" ||
    fail "a hello from a joiner: $(cat "$T/join.out")"
ok "a peer without a certificate may send nothing but a join request"
short=$("$R3QCTL" token create --ttl 1s 2> /dev/null | cut -d. -f2,3)
waitfor "'$R3QCTL' token list | grep -q '^${short%%.*} .* expired\$'" 10 ||
    fail "the 1s token did not expire: $("$R3QCTL" token list)"
refused j9 ec "$short" "token ${short%%.*} expired at"
"$R3QCTL" token revoke "$id3" | grep -q "token $id3 revoked" || fail "token revoke"
refused j9 ec "$id3.$sec3" "token $id3 was revoked"
"$R3QCTL" token list | grep -qE "^$id3 .* 1/1 revoked\$" || fail "token list after revoke: $("$R3QCTL" token list)"
"$R3QCTL" token revoke 0123456789ab > "$T/out" 2>&1 && fail "revoking an unknown token worked"
grep -q "no token 0123456789ab" "$T/out" || fail "revoke unknown: $(cat "$T/out")"
ok "token revoke: the token joins no more; an unknown id is said"

# A workerd with a wrong token: it exits 78 with the master's reason.
rc=0
timeout 60 "$WORKERD" -d $conf -N j9 --state-dir "$T/sj9" \
    --join "127.0.0.1:$PORT" "r3q1.$id.$sec3.$hash" > "$T/j9.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "the master 127.0.0.1:$PORT refused to join us: unknown token or wrong secret ($id)" "$T/j9.log" ||
    fail "workerd with a wrong token: $rc: $(tail -n 3 "$T/j9.log")"
[ ! -e "$T/sj9/worker.key" ] || fail "a refused worker kept a key"
ok "workerd with a wrong token exits 78: $(grep -o 'refused to join us: .*' "$T/j9.log")"

# 5. A token of another cluster: the worker refuses the master.
other=$(openssl x509 -in "$T/other/ca.pem" -outform DER | sha256sum | cut -d' ' -f1)
tok4=$("$R3QCTL" token create 2> /dev/null)
rc=0
n=$(grep -c "join refused" "$T/masterd.log")
timeout 60 "$WORKERD" -d $conf -N j8 --state-dir "$T/sj8" \
    --join "127.0.0.1:$PORT" "${tok4%.*}.$other" > "$T/j8.log" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "the master at 127.0.0.1 does not prove to be of this token's cluster: no certificate of its chain has the token's CA hash ${other:0:16}" "$T/j8.log" ||
    fail "another cluster's token: $rc: $(tail -n 3 "$T/j8.log")"
[ "$(grep -c "join refused" "$T/masterd.log")" = "$n" ] ||
    fail "the worker sent its token to a master it does not trust"
"$R3QCTL" token list | grep -qE "^$(echo "$tok4" | cut -d. -f2) .* 1/1 valid\$" ||
    fail "the token was used"
ok "a token for another cluster: the worker refuses the master, sends nothing"

# 6. Renewal: certificates of 1 minute, renewed 50 s before their end.
sed -i "s/^ca_key = .*/&\ncert_lifetime = 1m/" "$T/masterd.conf"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'reloaded' '$T/masterd.log'" 10 || fail "masterd did not reload"
tok5=$("$R3QCTL" token create 2> /dev/null)
printf 'renew_before = 50s\ncpus = 1\n' > "$T/j3.conf"
"$WORKERD" -d -v -f "$T/j3.conf" -N j3 --state-dir "$T/sj3" \
    --join "127.0.0.1:$PORT" "$tok5" > "$T/j3.log" 2>&1 &
PIDS="$PIDS $!"
waitfor "'$R3QCTL' workers | grep -q '^j3 '" 20 || fail "j3 did not join"
sn1=$(openssl x509 -in "$T/sj3/worker.pem" -noout -serial | cut -d= -f2)
waitfor "grep -q 'renewed our certificate' '$T/j3.log'" 40 ||
    fail "j3 did not renew its certificate"
sn2=$(openssl x509 -in "$T/sj3/worker.pem" -noout -serial | cut -d= -f2)
[ "$sn1" != "$sn2" ] || fail "the renewed certificate has the old serial"
grep -q "worker j3 (127.0.0.1:[0-9]*) renewed its certificate: serial $sn2 until" "$T/masterd.log" ||
    fail "masterd did not log the renewal"
"$R3QCTL" certs | grep -qE "^j3 +$sn2 .* renewal +127\.0\.0\.1:[0-9]+\$" ||
    fail "certs does not list the renewal: $("$R3QCTL" certs)"
[ "$(stat -c %a "$T/sj3/worker.key")" = 600 ] || fail "the renewed key is not 0600"
"$R3QCTL" workers | grep -q '^j3 ' || fail "j3 left at its renewal"
ok "j3 renewed its 1-minute certificate over its link ($sn1 -> $sn2), no operator action"

# 7. Failed guesses from one address are rate-limited (5, then one every
# 12 s): even the right token is refused then.
tok6=$("$R3QCTL" token create 2> /dev/null | cut -d. -f2,3)
i=0
while [ $i -lt 8 ]; do
	join j7 ec "0123456789ab.$secret" > "$T/guess.out" 2>&1
	grep -q "too many failed join attempts from 127.0.0.1" "$T/guess.out" && break
	i=$((i + 1))
done
[ $i -lt 8 ] || fail "8 wrong guesses, none refused for the rate"
[ $i -le 5 ] || fail "refused for the rate only after $i guesses"
join j7 ec "$tok6" > "$T/guess.out" 2>&1
grep -q "error: too many failed join attempts from 127.0.0.1 (5, then one every 12 s): try again in" "$T/guess.out" ||
    fail "the right token after the limit: $(cat "$T/guess.out")"
grep -q "127.0.0.1:[0-9]*: join refused: too many failed join attempts" "$T/masterd.log" ||
    fail "no log line for the rate limit"
ok "rate limit: refused after $i failed guesses, the right token too, until the bucket refills"
master_alive

# 8. A join while the journal cannot be written (a full disk).
small_fs 2m "a join on a full journal" || exit 0
cat > "$T/m2.conf" <<EOC
listen = 127.0.0.1:0
control = $T/ctl2.sock
ca = $C/ca.pem
cert = $C/master.pem
key = $C/master.key
journal = $JFS/journal.db
journal_retry = 200ms
ca_key = $C/ca.key
EOC
"$MASTERD" -d -v -f "$T/m2.conf" > "$T/m2.log" 2>&1 &
PIDS="$PIDS $!"
waitfor "grep -q 'listening on' '$T/m2.log'" 10 || fail "the second masterd did not start"
P2=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' "$T/m2.log")
R3Q_CONTROL=$T/ctl2.sock
tok7=$("$R3QCTL" token create --uses 2 2> /dev/null | cut -d. -f2,3)
dd if=/dev/zero of="$JFS/fill" bs=64k > /dev/null 2>&1 || true
"$R3QCTL" token create > "$T/out" 2>&1 && fail "token create on a full disk worked"
waitfor "grep -q 'the journal is stalled:' '$T/m2.log'" 20 ||
    fail "masterd did not stall on a full disk: $(cat "$T/out")"
"$TESTPEER" join 127.0.0.1 "$P2" "$tok7" jj ec > "$T/join.out" 2>&1
grep -q "^error: masterd cannot write its journal (.*): no join until it can" "$T/join.out" ||
    fail "a join on a stalled journal: $(cat "$T/join.out")"
grep -q "127\.0\.0\.1:[0-9]*: join refused: masterd cannot write its journal" "$T/m2.log" ||
    fail "no log line for the join on a stalled journal"
rm -f "$JFS/fill"
waitfor "grep -q 'journal .* can be written again, after' '$T/m2.log'" 20 ||
    fail "the journal did not resume"
"$TESTPEER" join 127.0.0.1 "$P2" "$tok7" jj ec > "$T/join.out" 2>&1
grep -q "^cert: /O=R3Q/OU=worker/CN=jj" "$T/join.out" ||
    fail "a join once the journal resumed: $(cat "$T/join.out")"
ok "a join while the journal cannot be written is refused (try again), then goes through"
