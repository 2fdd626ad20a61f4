# SIGHUP makes masterd read its configuration and TLS files again without
# dropping a worker or a job: a new default policy applies to the next
# job, a new master certificate is presented to new connections, and a
# broken file is refused with file:line while the running configuration
# stays.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 5 --lambda 10 --dim 5 --generations 20 --lu 100 --seed 2"

mkcerts w1
MASTER_EXTRA="policy = wq"
start_master
start_worker w1
wait_workers 1

# A job runs across the reload.
job=$("$R3QCTL" submit es $ES)
sed -i 's/^policy = wq$/policy = rr/' "$T/masterd.conf"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'reloaded .*default policy rr' '$T/masterd.log'" 5 ||
    fail "masterd did not reload"
"$R3QCTL" wait "$job" > /dev/null || fail "the running job did not survive"
"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 2 > "$T/after.out" ||
    fail "job after reload failed"
grep -q "policy rr" "$T/after.out" || fail "the new default policy did not apply"
grep -q "worker w1 .* lost" "$T/masterd.log" && fail "reload dropped a worker"
[ "$("$R3QCTL" workers | tail -n +2 | wc -l)" -eq 1 ] || fail "worker gone"
ok "a new default policy applies; the job and the worker carried on"

# New certificate for the master, same CA: new connections get it.
"$MKCERTS" --host master.example.org "$T/certs" w1 > /dev/null
want=$(openssl x509 -in "$T/certs/master.pem" -noout -fingerprint -sha256)
kill -HUP "$MASTER_PID"
waitfor "[ \$(grep -c 'reloaded' '$T/masterd.log') -ge 2 ]" 5 ||
    fail "second reload not logged"
got=$(timeout 5 openssl s_client -connect "127.0.0.1:$PORT" \
    -cert "$T/certs/client.pem" -key "$T/certs/client.key" \
    -CAfile "$T/certs/ca.pem" < /dev/null 2> /dev/null |
    openssl x509 -noout -fingerprint -sha256)
[ "$got" = "$want" ] || fail "masterd presents the old certificate ($got)"
ok "new connections get the reloaded certificate"

# A broken file changes nothing.
echo "bogus = 1" >> "$T/masterd.conf"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'masterd.conf:[0-9]*: unknown key .bogus.; keeping the running configuration' '$T/masterd.log'" 5 ||
    fail "a broken config on reload was not reported"
master_alive
"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 2 > "$T/after2.out" ||
    fail "job after a failed reload failed"
grep -q "policy rr" "$T/after2.out" || fail "a failed reload changed the policy"
ok "a broken config on SIGHUP is refused and nothing changes"

# workerd: a new master address in its config moves it there on SIGHUP;
# a broken file changes nothing.
sed -e "s|^control = .*|control = $T/ctl2.sock|" -e "s|^listen = .*|listen = 127.0.0.1:0|" \
    -e "s|^journal = .*|journal = $T/journal2.db|" \
    -e '/^bogus/d' "$T/masterd.conf" > "$T/m2.conf"
"$MASTERD" -d -f "$T/m2.conf" > "$T/m2.log" 2>&1 &
PIDS="$PIDS $!"
waitfor "grep -q 'listening on' '$T/m2.log'" 10 || fail "second masterd did not start"
port2=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' "$T/m2.log")
echo "bogus = 1" >> "$T/w1.conf"
kill -HUP "$WPID_w1"
waitfor "grep -q 'w1.conf:[0-9]*: unknown key .bogus.; keeping the running configuration' '$T/w1.log'" 5 ||
    fail "workerd did not report its broken config"
kill -0 "$WPID_w1" || fail "workerd died on a broken config"
sed -i -e '/^bogus/d' -e "s/^master = .*/master = 127.0.0.1:$port2/" "$T/w1.conf"
kill -HUP "$WPID_w1"
waitfor "[ \$('$R3QCTL' -s '$T/ctl2.sock' workers | tail -n +2 | wc -l) -eq 1 ]" 10 ||
    fail "w1 did not move to the second master: $(tail -n 5 "$T/w1.log")"
"$R3QCTL" -s "$T/ctl2.sock" es --mu 5 --lambda 10 --dim 5 --generations 2 \
    --quiet > /dev/null || fail "job on the second master failed"
ok "workerd moves to a new master on SIGHUP and refuses a broken config"
