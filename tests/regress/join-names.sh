# A token gives a new name, not a known one (doc/security.md): the name
# of a worker that said hello (w1, now offline) or of a certificate
# issued before (j5) is refused to a token made for any name, and goes
# to a token made for it (r3qctl token create --name), which gives no
# other name.  token create prints a workerd command that, pasted with
# the token on its standard input, joins (the master's own address); a
# token's --cert-lifetime bounds its certificates, and their renewals.  Before --name, the
# token holder got w1's certificate.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key"
start_master
start_worker w1
wait_workers 1
kill "$WPID_w1"
wait "$WPID_w1" 2> /dev/null || true
waitfor "! '$R3QCTL' workers | grep -q '^w1 '" 15 || fail "w1 did not leave"

tok=$("$R3QCTL" token create --uses 3 2> /dev/null | cut -d. -f2,3)
"$TESTPEER" join 127.0.0.1 "$PORT" "$tok" w1 ec > "$T/w1.out" 2>&1
grep -q "^error: w1 is the name of a worker this master knows: it goes only to a token made for it (r3qctl token create --name w1)" "$T/w1.out" ||
    fail "a token holder asking for offline w1's name: $(cat "$T/w1.out")"
grep -q "join refused: w1 is the name of a worker" "$T/masterd.log" || fail "no log line"
ok "a token for any name does not give the name of offline w1"
"$TESTPEER" join 127.0.0.1 "$PORT" "$tok" j5 ec > "$T/j5.out" 2>&1
grep -q "^cert: .*CN=j5" "$T/j5.out" || fail "j5: $(cat "$T/j5.out")"
"$TESTPEER" join 127.0.0.1 "$PORT" "$tok" j5 ec > "$T/j5b.out" 2>&1
grep -q "^error: j5 is the name of a worker this master knows" "$T/j5b.out" ||
    fail "a second j5 from a token: $(cat "$T/j5b.out")"
ok "a name issued before (j5) is not given again"

named=$("$R3QCTL" token create --name w1 2> "$T/create.err" | cut -d. -f2,3)
nid=${named%%.*}
"$R3QCTL" token list | grep -qE "^$nid .* 1/1 valid +w1\$" ||
    fail "token list does not show the name: $("$R3QCTL" token list)"
grep -q "token $nid: 1 join as w1 until" "$T/create.err" || fail "create: $(cat "$T/create.err")"
"$TESTPEER" join 127.0.0.1 "$PORT" "$named" j6 ec > "$T/j6.out" 2>&1
grep -q "^error: token $nid is for worker w1, not j6" "$T/j6.out" || fail "--name w1 for j6: $(cat "$T/j6.out")"
"$TESTPEER" join 127.0.0.1 "$PORT" "$named" w1 ec > "$T/w1b.out" 2>&1
grep -q "^cert: .*OU=worker.*CN=w1" "$T/w1b.out" || fail "--name w1: $(cat "$T/w1b.out")"
ok "a token made --name w1 gives w1, and no other name"
"$R3QCTL" token create --name 'a/b' > "$T/out" 2>&1 && fail "--name a/b taken"
grep -q -- "--name a/b: a worker name" "$T/out" || fail "--name a/b: $(cat "$T/out")"
ok "a bad --name is refused: $(cat "$T/out")"

# token create prints a command to paste; --cert-lifetime 2h.
"$R3QCTL" token create --cert-lifetime 2h > "$T/tok" 2> "$T/create.err" ||
    fail "token create --cert-lifetime: $(cat "$T/create.err")"
line=$(grep '^  workerd --join ' "$T/create.err" | sed 's/^  //')
[ "$line" = "workerd --join 127.0.0.1:$PORT -" ] || fail "the command printed: $(cat "$T/create.err")"
# Paste it (workerd from the build tree), the token on its standard input.
now=$(date +%s)
"$WORKERD" ${line#workerd } -d -f /dev/null -N p1 --state-dir "$T/sp1" \
    < "$T/tok" > "$T/p1.log" 2>&1 &
PIDS="$PIDS $!"
waitfor "'$R3QCTL' workers | grep -q '^p1 '" 20 || fail "the pasted command did not join: $(tail -n 3 "$T/p1.log")"
end=$(date -d "$(openssl x509 -in "$T/sp1/worker.pem" -noout -enddate | cut -d= -f2)" +%s)
left=$((end - now))
[ "$left" -gt 7000 ] && [ "$left" -le 7260 ] || fail "--cert-lifetime 2h gave $left s"
ok "the printed '$line', pasted with the token, joins; its certificate lives 2h ($left s)"
# A renewal (with p1's key, over its own connection) keeps the 2h.
"$top_builddir/tests/regress/r3q-joinpeer" renew 127.0.0.1 "$PORT" "$C/ca.pem" \
    "$T/sp1/worker.pem" "$T/sp1/worker.key" p1 "$T/p1new" > "$T/renew.out" 2>&1 ||
    fail "p1's renewal: $(cat "$T/renew.out")"
now=$(date +%s)
end=$(date -d "$(openssl x509 -in "$T/p1new.pem" -noout -enddate | cut -d= -f2)" +%s)
left=$((end - now))
[ "$left" -gt 7000 ] && [ "$left" -le 7260 ] || fail "the renewal of a 2h certificate gave $left s"
ok "its renewal lives 2h too ($left s), not masterd's cert_lifetime"
"$R3QCTL" token create --cert-lifetime 10s > "$T/out" 2>&1 && fail "--cert-lifetime 10s taken"
grep -q -- "--cert-lifetime 10s: a duration from 1m" "$T/out" || fail "--cert-lifetime 10s: $(cat "$T/out")"
ok "a --cert-lifetime under a minute is refused"

# advertise: the address joiners dial, printed as it is.
kill "$MASTER_PID"
wait "$MASTER_PID" 2> /dev/null || true
mv "$T/masterd.log" "$T/masterd.1.log"
MASTER_EXTRA="ca_key = $C/ca.key
advertise = head.example.org:7411"
start_master
"$R3QCTL" token create 2>&1 > /dev/null | grep -q '^  workerd --join head.example.org:7411 -$' ||
    fail "advertise is not printed: $("$R3QCTL" token create 2>&1 > /dev/null)"
ok "with advertise = head.example.org:7411, token create prints it"
