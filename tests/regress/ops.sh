# Operating details: under systemd (JOURNAL_STREAM set, no -d) log lines go
# to stderr with a syslog priority prefix and no time stamp, while -d adds
# time stamps; `r3qctl cancel` stops a running job, withdraws its copies
# from the workers and says so; jobs and workers are listed.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2
cat > "$T/bad.conf" <<EOC
listen = 127.0.0.1:0
control = $T/bad.sock
ca = $T/certs/ca.pem
cert = $T/certs/nothere.pem
key = $T/certs/master.key
EOC
rc=0
JOURNAL_STREAM=8:9 "$MASTERD" -f "$T/bad.conf" 2> "$T/journal.out" || rc=$?
[ "$rc" -eq 1 ] || fail "masterd with a missing certificate exited $rc"
grep -qE '^<4>.*nothere\.pem: No such file or directory$' "$T/journal.out" ||
    fail "no priority-prefixed line: $(cat "$T/journal.out")"
"$MASTERD" -d -f "$T/bad.conf" 2> "$T/debug.out" || true
grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} masterd: .*nothere\.pem' "$T/debug.out" ||
    fail "-d lines lack time stamps: $(cat "$T/debug.out")"
ok "journal lines carry <priority> and no time stamp; -d lines a time stamp"

start_master
start_worker w1
start_worker w2
wait_workers 2
job=$("$R3QCTL" submit es --mu 10 --lambda 20 --dim 10 --generations 200 --lu 300)
waitfor "'$R3QCTL' result $job | grep -q 'generation [1-9]'" 30 ||
    fail "job made no progress"
"$R3QCTL" jobs | grep -qE "^$job +running" || fail "jobs does not show it running"
"$R3QCTL" cancel "$job" > "$T/cancel.out" || fail "cancel failed"
grep -q "job $job cancelled" "$T/cancel.out" || fail "cancel said: $(cat "$T/cancel.out")"
rc=0
"$R3QCTL" wait "$job" > "$T/wait.out" || rc=$?
[ "$rc" -eq 1 ] && grep -q "job $job cancelled: cancelled by a client" "$T/wait.out" ||
    fail "wait after cancel: rc $rc, $(cat "$T/wait.out")"
waitfor "'$R3QCTL' workers | awk 'NR > 1 && (\$7 != 0 || \$8 != 0) { bad = 1 } END { exit bad }'" 10 ||
    fail "copies left on the workers: $("$R3QCTL" workers)"
rc=0
"$R3QCTL" cancel "$job" > "$T/again.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "has already ended (cancelled)" "$T/again.out" ||
    fail "second cancel: rc $rc, $(cat "$T/again.out")"
rc=0
"$R3QCTL" cancel 999 > "$T/none.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "no such job 999" "$T/none.out" ||
    fail "cancel of an unknown job: rc $rc, $(cat "$T/none.out")"
ok "cancel stops a job, frees the workers, and refuses a finished or unknown job"
