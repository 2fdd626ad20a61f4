# Under systemd (NOTIFY_SOCKET set) masterd and workerd say READY=1 once
# they serve, STATUS= lines with what they are doing (workers, jobs,
# generation; the master they joined), WATCHDOG=1 from the event loop at
# half of WATCHDOG_USEC, and STOPPING=1 on SIGTERM.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
# The listeners stop after 12 s (SAN_SLOW times that under a sanitizer).
"$TESTPEER" notify "$T/m.notify" $((12 * SAN_SLOW)) > "$T/m.msgs" 2>&1 &
PIDS="$PIDS $!"
"$TESTPEER" notify "$T/w.notify" $((12 * SAN_SLOW)) > "$T/w.msgs" 2>&1 &
PIDS="$PIDS $!"
waitfor "grep -q listening '$T/m.msgs' && grep -q listening '$T/w.msgs'" 5 ||
    fail "notify listeners did not start"

NOTIFY_SOCKET=$T/m.notify WATCHDOG_USEC=400000 start_master
unset NOTIFY_SOCKET WATCHDOG_USEC 2>/dev/null || true
NOTIFY_SOCKET=$T/w.notify WATCHDOG_USEC=400000 start_worker w1
wait_workers 1
"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 3 --quiet > /dev/null ||
    fail "job failed"
sleep 1

grep -qx 'READY=1' "$T/m.msgs" || fail "masterd sent no READY=1: $(cat "$T/m.msgs")"
grep -q '^STATUS=1 workers, 0 jobs running$' "$T/m.msgs" ||
    fail "masterd's STATUS does not count the worker: $(cat "$T/m.msgs")"
grep -qE '^STATUS=1 workers, 1 jobs running: job 1 batch [0-9]+$' "$T/m.msgs" ||
    fail "masterd's STATUS does not show the job: $(cat "$T/m.msgs")"
[ "$(grep -cx 'WATCHDOG=1' "$T/m.msgs")" -ge 3 ] ||
    fail "masterd pinged the watchdog fewer than 3 times"
ok "masterd: READY=1, STATUS with workers and jobs, WATCHDOG=1"

grep -qx 'READY=1' "$T/w.msgs" || fail "workerd sent no READY=1"
grep -qE '^STATUS=joined master 127\.0\.0\.1:[0-9]+ as w1, 1 CPUs$' "$T/w.msgs" ||
    fail "workerd's STATUS: $(cat "$T/w.msgs")"
[ "$(grep -cx 'WATCHDOG=1' "$T/w.msgs")" -ge 3 ] ||
    fail "workerd pinged the watchdog fewer than 3 times"
ok "workerd: READY=1, STATUS with its master, WATCHDOG=1"

kill "$MASTER_PID"
waitfor "grep -qx 'STOPPING=1' '$T/m.msgs'" 5 || fail "masterd sent no STOPPING=1"
waitfor "grep -q '^STATUS=no master' '$T/w.msgs'" 5 ||
    fail "workerd's STATUS did not say it lost the master"
ok "STOPPING=1 on SIGTERM; workerd's STATUS says it is retrying"
