#!/bin/sh
# masterd's trace (masterd -T, the trace key; issue 26): each scheduling
# decision, journal commit and frame is logged for the subsystems asked
# for, and for no other; a reload changes the set; -T overrides the key;
# an unknown subsystem is refused naming it.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
MASTER_EXTRA="trace = sched"
start_master
start_worker w1
wait_workers 1

"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 2 --lu 20 --seed 3 \
    --json > "$T/job1.json" || fail "job 1 failed"
done1=$(grep -oE '"tasks_done":[0-9]+' "$T/job1.json" | cut -d: -f2)
assigns=$(grep -c 'trace sched [0-9.]* assign task [0-9]* worker w1' \
    "$T/masterd.log" || true)
accepted=$(grep -c 'trace sched [0-9.]* result task [0-9]* worker w1: accepted' \
    "$T/masterd.log" || true)
[ "$assigns" -ge "$done1" ] ||
    fail "$assigns assign trace lines for $done1 tasks"
[ "$accepted" -eq "$done1" ] ||
    fail "$accepted accepted results traced for $done1 tasks"
grep -q 'trace \(net\|journal\)' "$T/masterd.log" &&
    fail "net or journal traced though only sched was asked for"
ok "trace = sched: $assigns assignments and $accepted results for $done1 tasks, nothing else"

# A reload switches to journal and net.
sed -i 's/^trace = sched$/trace = journal, net/' "$T/masterd.conf"
kill -HUP "$MASTER_PID"
waitfor "grep -q 'reloaded' '$T/masterd.log'" 5 || fail "no reload"
mark=$(wc -l < "$T/masterd.log")
"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 2 --lu 20 --seed 3 \
    > /dev/null || fail "job 2 failed"
tail -n +"$mark" "$T/masterd.log" > "$T/after.log"
grep -q 'trace sched' "$T/after.log" && fail "sched still traced after the reload"
grep -qE 'trace net [0-9.]+ 127\.0\.0\.1:[0-9]+ \(w1\) > assign id [0-9]+, [0-9]+ bytes' \
    "$T/after.log" || fail "no Assign frame traced"
grep -qE 'trace net [0-9.]+ 127\.0\.0\.1:[0-9]+ \(w1\) < results id [0-9]+, [0-9]+ bytes' \
    "$T/after.log" || fail "no Results frame traced"
grep -qE 'trace journal [0-9.]+ commit of [0-9]+ rows in [0-9]+ us' \
    "$T/after.log" || fail "no commit traced"
ok "after a reload: frames in and out and commits traced, no decisions"

# -T overrides the key; -nv prints what applies.
"$MASTERD" -n -v -T sched,net -f "$T/masterd.conf" > "$T/nv.out" 2>&1 ||
    fail "masterd -n -T failed: $(cat "$T/nv.out")"
grep -q '^trace = "sched,net"$' "$T/nv.out" ||
    fail "-T did not override the key: $(grep trace "$T/nv.out")"
ok "-T sched,net overrides the trace key"

# Unknown subsystems are refused, naming them.
"$MASTERD" -n -T sched,bogus -f "$T/masterd.conf" > "$T/bad.out" 2>&1 &&
    fail "masterd took -T bogus"
grep -q "unknown subsystem 'bogus'" "$T/bad.out" ||
    fail "no clear error for -T bogus: $(cat "$T/bad.out")"
sed 's/^trace = .*/trace = sched, frobs/' "$T/masterd.conf" > "$T/bad.conf"
"$MASTERD" -n -f "$T/bad.conf" > "$T/bad2.out" 2>&1 &&
    fail "masterd took trace = frobs"
grep -q "bad.conf:[0-9]*: .*unknown subsystem 'frobs'" "$T/bad2.out" ||
    fail "no file:line error for trace = frobs: $(cat "$T/bad2.out")"
ok "unknown subsystems refused with their name (flag) and file:line (key)"
master_alive
