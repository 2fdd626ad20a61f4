# `r3qctl cancel` stops a running job, withdraws its copies from the
# workers and says so; it refuses a finished or unknown job; jobs and
# workers are listed.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2
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
