# Pipelining of persistent kinds (workerd.conf(5), "Persistent kinds") on
# a real cluster: a process that sends 'P' (tests/kinds/ppipe.py) gets
# the next task's frame while it runs one ("sleep" answers queued=1 when
# the next frame came during it); one whose kind sets R3Q_PIPELINE=0 is
# not offered it and gets one task at a time; tasks cancelled while one
# of them runs and one is queued in the process's pipe (map --timeout)
# are reported failed and the process is kept (the same pid after: no
# kill, the queued task answered "cancelled before it started" or
# interrupted); and the outputs come in order.
. "${top_srcdir:-.}/tests/regress/lib.sh"

command -v python3 > /dev/null || fail "python3 is not installed (scripts/check installs it)"
PP=$top_srcdir/tests/kinds/ppipe.py
mkcerts w1
start_master
WORKER_EXTRA="exec pipe = persistent /usr/bin/python3 $PP
exec nopipe = persistent /usr/bin/python3 $PP
env nopipe = R3Q_PIPELINE=0"
start_worker w1 1
wait_workers 1

# One CPU, queue_factor 2: one task runs, the next is held, and handed to
# the process at once; the third comes from the master while the second
# runs (1 s is a generous round trip).
# three_sleeps KIND MS WANT: map three "sleep MS" to KIND (queue factor
# 2); each answer says whether another task was queued in the process
# when it ran: WANT is the three, space-separated.
three_sleeps() {
	printf 'sleep %s\n' "$2" "$2" "$2" |
	    "$R3QCTL" map --queue-factor 2 "$1" > "$T/$1.out" ||
	    fail "map $1 failed: $(cat "$T/$1.out")"
	[ "$(tr '\n' ' ' < "$T/$1.out")" = "$3 " ] ||
	    fail "$1: $(tr '\n' ' ' < "$T/$1.out") (want $3)"
}

three_sleeps pipe 1000 "queued=1 queued=1 queued=0"
ok "a process that sent 'P' gets the next task while it runs one"

three_sleeps nopipe 500 "queued=0 queued=0 queued=0"
ok "env KIND = R3Q_PIPELINE=0: no offer, one task at a time"

echo pid | "$R3QCTL" map pipe > "$T/pid1" || fail "map pid failed"
rc=0
printf 'sleep 20000\nsleep 20000\nsleep 20000\n' |
    "$R3QCTL" map --queue-factor 2 --timeout 3 pipe > "$T/tmo.out" 2>&1 ||
    rc=$?
[ "$rc" -ne 0 ] && grep -q "timed out" "$T/tmo.out" ||
    fail "map --timeout: rc $rc, $(cat "$T/tmo.out")"
waitfor "'$R3QCTL' workers | awk 'NR > 1 && (\$7 != 0 || \$8 != 0) { bad = 1 } END { exit bad }'" 20 ||
    fail "copies left on the worker: $("$R3QCTL" workers)"
echo pid | "$R3QCTL" map pipe > "$T/pid2" || fail "map pid after the cancel failed"
[ "$(cat "$T/pid1")" = "$(cat "$T/pid2")" ] ||
    fail "the process was replaced ($(cat "$T/pid1") then $(cat "$T/pid2")): $(tail -5 "$T/w1.log")"
ok "cancelled with a task queued: the process is kept"
seq 1 30 | sed 's/^/sleep /' | "$R3QCTL" map --queue-factor 2 pipe > "$T/many.out" ||
    fail "30 tasks failed"
[ "$(wc -l < "$T/many.out")" -eq 30 ] || fail "30 tasks: $(wc -l < "$T/many.out") outputs"
ok "30 short tasks pipelined, all answered"
