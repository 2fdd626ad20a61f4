# Disk as a budget: the journal's bytes are bounded per client
# (max_journal_client) and in all (max_journal).  A client that has filled
# its share is refused at submit with an error naming the key, while
# another client keeps submitting and getting its results; the total cap
# refuses every client alike.  The bytes are counted again from the file
# after a restart, so the budget holds across one.  What a job kept for
# its client goes once the client has taken it (keep_acked = no): a closed
# job's at once, a running job's batches over and acknowledged when the
# client would otherwise be refused; the same client then goes on.
. "${top_srcdir:-.}/tests/regress/lib.sh"

JC=$top_builddir/tests/regress/r3q-jclient
mkcerts w1
MASTER_EXTRA="max_journal_client = 1M
max_journal = 4M"
start_master
start_worker w1 2
wait_workers 1

# A is the TLS client (CN=client), B the control socket's user.
as_a() {
	R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
	    R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key \
	    R3Q_CONTROL= "$JC" "$@"
}
as_b() {
	"$JC" "$@"
}

# A leaves 600 kB of payloads no worker takes (kind nokind): kept.
out=$(as_a hold nokind 100000 6) || fail "A's first 600 kB refused: $out"
[ "$out" = "held 6" ] || fail "A: $out"
# 600 kB more would pass its 1 MiB share.
out=$(as_a hold nokind 100000 6) && fail "A's share was not enforced: $out"
case $out in
"refused: client "*" has 58"*" KiB of 1 MiB journal"*"(max_journal_client)"*) ;;
*) fail "A's refusal does not name its share and max_journal_client: $out" ;;
esac
ok "a client past max_journal_client is refused, the error naming the key"

# B is another client: it submits and gets its results.
out=$(as_b fill echo 2000 50) || fail "B refused while A is full: $out"
[ "$out" = "ok 50" ] || fail "B: $out"
ok "another client keeps submitting and getting results"

# Each of B's jobs keeps 200 kB (payloads and outputs) until it is closed
# and its outcomes taken; then they go (keep_acked = no): six in a row
# fit B's 1 MiB share.
for i in 1 2 3 4 5 6; do
	out=$(as_b fill echo 2000 50) || fail "B's job $i refused: $out"
done
ok "a closed job's acknowledged payloads and outputs leave the journal"

# One job left open the while: ten batches of 200 kB in a row fit B's
# share too, its batches over and acknowledged leaving the journal when
# the next would pass it.
out=$(as_b rounds echo 2000 50 10) || fail "B's long job refused: $out"
[ "$out" = "ok 10" ] || fail "B's long job: $out"
ok "a running job's acknowledged batches leave the journal"

# Restart: the bytes are counted from the file again.
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
mv "$T/masterd.log" "$T/masterd.1.log"
sed -i "s/^listen = .*/listen = 127.0.0.1:$PORT/" "$T/masterd.conf"
"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
MASTER_PID=$!
PIDS="$PIDS $MASTER_PID"
waitfor "grep -q 'listening on' '$T/masterd.log'" 30 ||
    fail "masterd did not restart"
wait_workers 1
out=$(as_a hold nokind 100000 6) && fail "A's share forgotten after a restart: $out"
case $out in
*"(max_journal_client)"*) ;;
*) fail "A's refusal after a restart: $out" ;;
esac
out=$(as_a hold nokind 100000 3) || fail "A's room left refused: $out"
out=$(as_b fill echo 2000 50) || fail "B refused after the restart: $out"
ok "after a restart the accounting holds"

# The total, lowered to 1200K: A keeps 900 kB, so 400 kB more of B's are
# refused though B's own share is empty, and a small job still goes.
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
mv "$T/masterd.log" "$T/masterd.2.log"
sed -i -e "s/^listen = .*/listen = 127.0.0.1:$PORT/" \
    -e "s/^max_journal = .*/max_journal = 1200K/" "$T/masterd.conf"
"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
MASTER_PID=$!
PIDS="$PIDS $MASTER_PID"
waitfor "grep -q 'listening on' '$T/masterd.log'" 30 ||
    fail "masterd did not restart"
wait_workers 1
out=$(as_b hold nokind 100000 4) && fail "max_journal was not enforced: $out"
case $out in
"refused: the journal has "*" of 1.2 MiB"*"(max_journal)"*) ;;
*) fail "the total's refusal does not name max_journal: $out" ;;
esac
out=$(as_b fill echo 2000 10) || fail "a small job refused under the total: $out"
ok "max_journal refuses every client, the error naming the key"

master_alive
