# A restart finishes however many batches a client left behind.  One
# client makes 60,000 one-task batches of a kind no worker offers, each
# closed and its task cancelled, and goes away leaving its job running.
# masterd is restarted under a NOTIFY_SOCKET the test listens on: while it
# loads the journal it sends EXTEND_TIMEOUT_USEC (so that systemd's start
# timeout cannot kill a long load), then READY=1; the job comes back as it
# was (running, its batches, its outcomes counted), and takes a new batch.
# The batches over and acknowledged are dropped from the journal rather
# than made again and ended (which took minutes at 60,000).
. "${top_srcdir:-.}/tests/regress/lib.sh"

JC=$top_builddir/tests/regress/r3q-jclient
N=60000
mkcerts w1
start_master

id=$("$JC" ended $N nokind) || fail "r3q-jclient ended: $id"
[ "$id" = 1 ] || fail "the job is $id, not 1"
"$R3QCTL" jobs > "$T/jobs.before"
grep -Eq "^1 +running +r3q +$((N - 1)) " "$T/jobs.before" ||
    fail "job 1 is not running with $N batches: $(cat "$T/jobs.before")"
# Its report: a line for each of the last batches, one for the earlier
# ones folded (masterd keeps the last 1,024 to 2,048 one by one), and
# where it stands.
"$R3QCTL" result 1 > "$T/result.before"
folded=$(sed -n 's/^(batches 0-\([0-9]*\): folded, counted in the totals only)$/\1/p' \
    "$T/result.before")
[ -n "$folded" ] || fail "job 1's report folds none: $(head -n 3 "$T/result.before")"
rows=$(grep -c '^ *[0-9][0-9]* -  ' "$T/result.before")
[ "$rows" -ge 1024 ] && [ "$rows" -le 2048 ] &&
    [ $((rows + folded + 1)) -eq $N ] ||
    fail "job 1's report has $rows batches after $((folded + 1)) folded, not $N: $(tail -n 3 "$T/result.before")"
grep -qx "job 1 running: generation $((N - 1)), best so far 0" \
    "$T/result.before" || fail "job 1: $(tail -n 1 "$T/result.before")"

# Restart under a NOTIFY_SOCKET the test reads (up to 10 minutes: a bound
# for a hung masterd, not a timing assertion).
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
"$TESTPEER" notify "$T/m.notify" 600 > "$T/m.msgs" 2>&1 &
PIDS="$PIDS $!"
waitfor "grep -q listening '$T/m.msgs'" 5 || fail "notify listener did not start"
mv "$T/masterd.log" "$T/masterd.1.log"
sed -i "s/^listen = .*/listen = 127.0.0.1:$PORT/" "$T/masterd.conf"
NOTIFY_SOCKET=$T/m.notify "$MASTERD" -d -v -f "$T/masterd.conf" \
    >> "$T/masterd.log" 2>&1 &
MASTER_PID=$!
PIDS="$PIDS $MASTER_PID"
waitfor "grep -qx 'READY=1' '$T/m.msgs'" 600 || fail "masterd sent no READY=1"

# EXTEND_TIMEOUT_USEC while loading, before READY=1.
ext=$(grep -n '^EXTEND_TIMEOUT_USEC=[1-9][0-9]*$' "$T/m.msgs" | head -n 1 |
    cut -d: -f1)
ready=$(grep -nx 'READY=1' "$T/m.msgs" | head -n 1 | cut -d: -f1)
[ -n "$ext" ] || fail "no EXTEND_TIMEOUT_USEC while loading: $(cat "$T/m.msgs")"
[ "$ext" -lt "$ready" ] || fail "EXTEND_TIMEOUT_USEC came after READY=1"
grep -q '^STATUS=loading the journal' "$T/m.msgs" ||
    fail "no STATUS while loading: $(cat "$T/m.msgs")"
ok "EXTEND_TIMEOUT_USEC and a STATUS while loading, then READY=1"

"$R3QCTL" jobs > "$T/jobs.after"
grep -Eq "^1 +running +r3q +$((N - 1)) " "$T/jobs.after" ||
    fail "job 1 after the restart: $(cat "$T/jobs.after")"
grep -Eq "^3 +cancelled " "$T/jobs.after" ||
    fail "job 3 after the restart: $(cat "$T/jobs.after")"
"$R3QCTL" result 1 > "$T/result.after"
cmp -s "$T/result.before" "$T/result.after" ||
    fail "job 1's report changed: $(diff "$T/result.before" "$T/result.after" | head)"
grep -q "batch job 1: [0-9]* batches over and acknowledged dropped" \
    "$T/masterd.log" || fail "the ended batches were loaded, not dropped"
ok "the job is as it was: running, its $N batches and their reports"

# And masterd serves: a new job of another kind gets its results.
start_worker w1
wait_workers 1
out=$("$JC" fill echo 100 20) || fail "a new job after the restart: $out"
[ "$out" = "ok 20" ] || fail "a new job after the restart: $out"
master_alive
ok "masterd serves after the restart"
