# Ctrl-C while r3qctl follows a job does what srun does: SIGINT (or
# SIGTERM, SIGHUP) to `r3qctl es` cancels the job it started, says
# "r3qctl: cancelled job N" and ends as the signal's status (130), even
# when the signal comes before masterd has answered the submission; so
# does SIGPIPE, when the reader of its output (head) goes away.  A signal
# ignored when r3qctl started (a background job of a script, nohup) stays
# ignored.  `es --detach` returns at once with the job running and
# says how to follow it.  Ctrl-C in `r3qctl wait` only stops following:
# it says the job continues, and the job does finish.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# A job long enough to be interrupted: 1 s a generation, 100 generations.
LONG="--mu 1 --lambda 1 --dim 2 --generations 100 --work-ms 1000"

# state JOB: the job's state as result --json says it.
state() {
	"$R3QCTL" result "$1" --json | sed -n 's/^{"job":[0-9]*,"state":"\([a-z]*\)".*/\1/p'
}

# running_job: wait until one job is running and has done a generation;
# print its id.
running_job() {
	waitfor "'$R3QCTL' jobs | awk '\$2 == \"running\" && \$4 > 0 { f = 1 } END { exit !f }'" 20 ||
	    fail "no job got going: $("$R3QCTL" jobs)"
	"$R3QCTL" jobs | awk '$2 == "running" { print $1 }'
}

# catching PID: wait up to 10 s until r3qctl has set up its handler for
# SIGINT (bit 2 of SigCgt).  In a build tree PID is first libtool's
# wrapper, a shell that catches SIGINT too and then execs r3qctl under the
# same pid: only r3qctl's own handler counts (a SIGINT between the two
# killed r3qctl before it could cancel, status 130 and nothing said).
catching() {
	_n=100
	while [ "$_n" -gt 0 ]; do
		_cgt=0
		case $(readlink "/proc/$1/exe" 2>/dev/null) in
		*r3qctl*) _cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' \
		    "/proc/$1/status") ;;
		esac
		[ $(( 16#${_cgt:-0} & 2 )) -ne 0 ] && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

mkcerts w1
start_master
start_worker w1 1
wait_workers 1

# es, SIGINT while it follows: the job is cancelled.  The shell that runs
# this test has no job control, so its background jobs start with SIGINT
# ignored; env gives r3qctl the default, as an interactive shell would.
env --default-signal=INT "$R3QCTL" es $LONG > "$T/es.out" 2> "$T/es.err" &
pid=$!
PIDS="$PIDS $pid"
job=$(running_job)
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "es after SIGINT: status $rc, not 130"
grep -qx "r3qctl: cancelled job $job" "$T/es.err" ||
    fail "es did not say it cancelled job $job: $(cat "$T/es.err")"
[ "$(state "$job")" = cancelled ] || fail "job $job is $(state "$job")"
"$R3QCTL" jobs | grep -qE "^$job +cancelled" || fail "jobs: $("$R3QCTL" jobs)"
waitfor "'$R3QCTL' workers | awk 'NR > 1 && (\$7 != 0 || \$8 != 0) { bad = 1 } END { exit bad }'" 10 ||
    fail "copies left on the worker: $("$R3QCTL" workers)"
ok "SIGINT to r3qctl es cancels its job, says so, and ends with status 130"

# A background job of a script ignores SIGINT; SIGTERM still cancels.
"$R3QCTL" es $LONG > "$T/bg.out" 2> "$T/bg.err" &
pid=$!
PIDS="$PIDS $pid"
job=$(running_job)
kill -INT "$pid"
sleep 1
kill -0 "$pid" 2> /dev/null || fail "SIGINT, ignored at start, stopped r3qctl"
[ "$(state "$job")" = running ] || fail "an ignored SIGINT left job $job $(state "$job")"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 143 ] && grep -qx "r3qctl: cancelled job $job" "$T/bg.err" &&
    [ "$(state "$job")" = cancelled ] ||
    fail "SIGTERM: status $rc, job $(state "$job"), $(cat "$T/bg.err")"
ok "a SIGINT ignored at start stays ignored; SIGTERM cancels (status 143)"

# The reader goes away after the header and generation 0: the next line
# meets a closed pipe, and the job is cancelled.
"$R3QCTL" es $LONG 2> "$T/pipe.err" | head -n 2 > "$T/pipe.out"
rc=${PIPESTATUS[0]}
job=$(sed -n 's/^job \([0-9]*\):.*/\1/p' "$T/pipe.out")
[ "$rc" -eq 141 ] && grep -qx "r3qctl: cancelled job $job" "$T/pipe.err" &&
    [ "$(state "$job")" = cancelled ] ||
    fail "SIGPIPE: status $rc, job '$job' $(state "$job"), $(cat "$T/pipe.err")"
ok "a reader that goes away (SIGPIPE) cancels the job too (status 141)"

# SIGINT before masterd answers the submission: r3qctl waits for the id
# and cancels the job all the same.
kill -STOP "$MASTER_PID"
env --default-signal=INT "$R3QCTL" es $LONG > "$T/early.out" 2> "$T/early.err" &
pid=$!
PIDS="$PIDS $pid"
catching "$pid" || { kill -CONT "$MASTER_PID"; fail "r3qctl catches no SIGINT"; }
kill -INT "$pid"
kill -CONT "$MASTER_PID"
rc=0
wait "$pid" || rc=$?
job=$(sed -n 's/^r3qctl: cancelled job \([0-9]*\)$/\1/p' "$T/early.err")
[ "$rc" -eq 130 ] && [ -n "$job" ] && [ "$(state "$job")" = cancelled ] ||
    fail "SIGINT before the answer: status $rc, $(cat "$T/early.err")"
grep -q '^gen ' "$T/early.out" && fail "the job ran on: $(cat "$T/early.out")"
"$R3QCTL" jobs | grep -E '^[0-9]+ ' | grep -q running &&
    fail "a job is left running: $("$R3QCTL" jobs)"
ok "SIGINT before masterd answered still cancels the job"

# --detach: back at once, the job running, and how to follow it said.
rc=0
timeout 10 "$R3QCTL" es $LONG --detach > "$T/detach.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "es --detach: status $rc, $(cat "$T/detach.out")"
job=$(sed -n 's/^job \([0-9]*\):.*/\1/p' "$T/detach.out")
[ -n "$job" ] && [ "$(state "$job")" = running ] ||
    fail "es --detach: job '$job' not running: $(cat "$T/detach.out")"
grep -q "r3qctl wait $job" "$T/detach.out" &&
    grep -q "r3qctl result $job" "$T/detach.out" ||
    fail "es --detach does not say how to follow the job: $(cat "$T/detach.out")"
"$R3QCTL" cancel "$job" > /dev/null
[ "$("$R3QCTL" es $LONG --detach --quiet)" -gt "$job" ] ||
    fail "es --detach --quiet does not print only the id"
"$R3QCTL" cancel "$((job + 1))" > /dev/null
"$R3QCTL" es $LONG --detach --json | grep -qE '^\{"job":[0-9]+\}$' ||
    fail "es --detach --json"
"$R3QCTL" cancel "$((job + 2))" > /dev/null
rc=0
"$R3QCTL" es $LONG --local --detach > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 64 ] || fail "es --local --detach: status $rc, not 64"
ok "es --detach returns at once, the job running, and says how to follow it"

# wait, SIGINT: it stops following; the job goes on and finishes.  The
# worker is stopped from before the submission until the job's state has
# been looked at, so that the job cannot end meanwhile however slowly
# r3qctl runs: under ASan on a loaded machine each r3qctl took 1-2 s, and
# the three of them between a generation seen and the state looked at
# left a 12-generation job 4 s to spare.  heartbeat_timeout (10 s) may
# declare the stopped worker lost: its tasks then wait in the queue, and
# it joins again when it goes on.
kill -STOP "$WPID_w1"
job=$("$R3QCTL" es --mu 1 --lambda 1 --dim 2 \
    --generations 4 --work-ms 1000 --detach --quiet) ||
    { kill -CONT "$WPID_w1"; fail "es --detach for wait"; }
env --default-signal=INT "$R3QCTL" wait "$job" > "$T/wait.out" 2> "$T/wait.err" &
pid=$!
PIDS="$PIDS $pid"
catching "$pid" || { kill -CONT "$WPID_w1"; fail "r3qctl wait catches no SIGINT"; }
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
st=$(state "$job")
kill -CONT "$WPID_w1"
[ "$rc" -eq 130 ] || fail "wait after SIGINT: status $rc, not 130"
grep -qx "r3qctl: job $job continues; r3qctl wait $job to follow it again" \
    "$T/wait.err" || fail "wait said: $(cat "$T/wait.err")"
[ "$st" = running ] || fail "job $job is $st after wait stopped"
"$R3QCTL" wait "$job" > "$T/wait2.out" || fail "job $job did not finish"
tail -n 1 "$T/wait2.out" | grep -qx "job $job done" || fail "$(cat "$T/wait2.out")"
ok "SIGINT to r3qctl wait leaves the job running, and it finishes"
master_alive
