# Idle batches cost the scheduler nothing: one client leaves 24,000
# closed one-task batches of a kind no worker offers, and an honest
# `r3qctl map echo` of 3,000 tasks beside them makes the scheduler look at
# a few batches per task (r3q_sched_batches_visited_total in /metrics),
# not at every idle batch on every result and refill (72 million looks
# where each event walked every batch).  Counts, not times: the times are
# bench/idle-batches's.
. "${top_srcdir:-.}/tests/regress/lib.sh"

IDLE=$top_builddir/tests/regress/r3q-idleclient
NIDLE=24000
NTASKS=3000

# metric NAME: its value in /metrics.
metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    sed -n "s/^$1 \([0-9]*\).*/\1/p"
}

mkcerts w1
MASTER_EXTRA="http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
[ -n "$HTTP_PORT" ] || fail "masterd did not say where HTTP listens"
start_worker w1 2
wait_workers 1

# The idle client: its stdin a fifo held open, so that it stays.
mkfifo "$T/idle.in"
"$IDLE" idle $NIDLE nobody-runs-this < "$T/idle.in" > "$T/idle.out" \
    2> "$T/idle.err" &
PIDS="$PIDS $!"
exec 7> "$T/idle.in"
waitfor "grep -q '^submitted' '$T/idle.out'" 120 ||
    fail "the idle client did not submit: $(cat "$T/idle.err")"
# pending N SECS: wait until masterd holds N tasks not yet ended.
pending() {
	_n=$(($2 * 10))
	while [ "$(metric r3q_tasks_pending)" != "$1" ]; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || return 1
		sleep 0.1
	done
}
pending $NIDLE 60 ||
    fail "masterd holds $(metric r3q_tasks_pending) tasks, not $NIDLE"
ok "one client left $NIDLE idle one-task batches"

before=$(metric r3q_sched_batches_visited_total)
[ -n "$before" ] || fail "no r3q_sched_batches_visited_total in /metrics"
seq 1 $NTASKS | timeout 300 "$R3QCTL" map echo > "$T/map.out" 2> "$T/map.err" ||
    fail "map: $(cat "$T/map.err")"
[ "$(wc -l < "$T/map.out")" -eq $NTASKS ] ||
    fail "map gave $(wc -l < "$T/map.out") outputs, not $NTASKS"
seq 1 $NTASKS | cmp -s - "$T/map.out" || fail "map's outputs are not its inputs"
after=$(metric r3q_sched_batches_visited_total)
visited=$((after - before))
echo "# $visited batches visited for $NTASKS tasks beside $NIDLE idle batches"
# A handful per task: the map's own batch at each result, refill and
# idle check; a walk of the idle batches would be $NIDLE per event.
[ "$visited" -le $((10 * NTASKS)) ] ||
    fail "the scheduler visited $visited batches for $NTASKS tasks"
[ "$(metric r3q_tasks_pending)" = $NIDLE ] ||
    fail "the idle batches did not stay: $(metric r3q_tasks_pending) pending"
ok "$NTASKS tasks beside them cost $visited batch visits, O(tasks)"
master_alive
exec 7>&-
