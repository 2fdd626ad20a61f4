# The island ES's peer exchange with a worker that dies or hangs in the
# middle of it (issue 22, "Bad input"): three workers with peer_listen
# move every migration's --migrant-bytes padding between them, one
# exchange of some hundred MB at a time.  A worker killed -9 in the middle
# of an exchange: the exchange fails at once naming it, the job goes on
# on the other two (the next exchanges among them complete) and gives the
# --local answer.  A worker stopped (SIGSTOP) in the middle of one: the
# exchange fails when masterd declares it lost (heartbeat_timeout), the
# job ends within a bounded time with the --local answer, nothing hangs.
# A job cancelled in the middle of one: the exchange is given up, and the
# next one between the same workers completes.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# 4 islands on 1 + 1 + 2 CPUs: 10 of the 12 island pairs cross workers.
MB=${R3Q_ISLANDS_FAULT_MB:-24000000}
ISL="--islands 4 --mu 10 --lambda 20 --dim 10 --generations 25
    --migrate-every 5 --migrants 2 --migrant-bytes $MB --seed 5
    --policy wq --work-ms 100"

# The answer without the job's number, its time and its exchanges.
ans() {
	sed -e 's/"job":[0-9]*,//' -e 's/"elapsed_ns":[0-9]*,//' \
	    -e 's/"exchanged_bytes":[0-9]*,//' \
	    -e 's/"migration_ns":[0-9]*,//' -e 's/"exchanges":[0-9]*,//' \
	    -e 's/"exchanges_failed":[0-9]*,//' "$1"
}

# A field of a JSON answer.
field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

"$R3QCTL" islands --local $ISL --json > "$T/local.json" ||
    fail "local run failed"

# 3 s, so that SIGSTOP is seen soon; under a sanitizer 9 s: a healthy
# ASan workerd moving 28 MB on a loaded machine went 3.4 s without a
# heartbeat, and an exchange failed that should not have.
MASTER_EXTRA="heartbeat_timeout = $((3 * SAN_SLOW))s"
mkcerts w1 w2 w3
start_master
WORKER_EXTRA="peer_listen = 127.0.0.1:0"
start_worker w1
start_worker w2
start_worker w3 2
wait_workers 3
# The links measured now, so that every exchange of the job is one.
"$R3QCTL" links --measure --bytes 4M > "$T/links.out" 2>&1 ||
    fail "links --measure: $(cat "$T/links.out")"

# The id of the first exchange among 3 workers begun after line $1 of
# masterd's log.
begun3() {
	tail -n "+$1" "$T/masterd.log" |
	    sed -n 's/.*exchange \([0-9]*\) among 3 workers: .*/\1/p' |
	    head -n 1
}

# fault SIGNAL WORKER: run the job, send WORKER the signal in the middle
# of an exchange among the three; the exchange fails naming it.
fault() {
	_from=$(($(wc -l < "$T/masterd.log") + 1))
	"$R3QCTL" islands $ISL --json > "$T/$1.json" 2> "$T/$1.err" &
	CPID=$!
	PIDS="$PIDS $CPID"
	waitfor "[ -n \"\$(tail -n +$_from '$T/masterd.log' | sed -n 's/.*exchange \([0-9]*\) among 3 workers: .*/\1/p')\" ]" 60 ||
	    fail "$1: no exchange among the three workers began"
	X=$(begun3 "$_from")
	eval "kill -$1 \$WPID_$2"
	T0=$(date +%s)
	grep -q "exchange $X among 3 workers (" "$T/masterd.log" &&
	    fail "$1: exchange $X ended before $2 got SIG$1: make it longer (R3Q_ISLANDS_FAULT_MB, now $MB)"
	waitfor "grep -q 'exchange $X failed: ' '$T/masterd.log'" 30 ||
	    fail "$1: exchange $X did not fail within 30 s of $2's SIG$1"
	WHY=$(sed -n "s/.*exchange $X failed: //p" "$T/masterd.log" | head -n 1)
	echo "$WHY" | grep -q "$2" ||
	    fail "$1: exchange $X failed without naming $2: $WHY"
	grep -q "job [0-9]*: migrant exchange failed: $WHY" "$T/masterd.log" ||
	    fail "$1: the island job did not log the failed exchange"
	_n=0
	while kill -0 "$CPID" 2>/dev/null; do
		[ "$_n" -lt 600 ] || fail "$1: the job did not end within 60 s of the fault"
		sleep 0.1
		_n=$((_n + 1))
	done
	wait "$CPID" || fail "$1: the job failed: $(cat "$T/$1.json" "$T/$1.err")"
	[ "$(ans "$T/$1.json")" = "$(ans "$T/local.json")" ] ||
	    fail "$1: answer differs: $(cat "$T/$1.json") vs $(cat "$T/local.json")"
	# That one alone: those after it, without the worker, complete.
	[ "$(field "$T/$1.json" exchanges_failed)" -eq 1 ] ||
	    fail "$1: the job counts $(field "$T/$1.json" exchanges_failed) failed exchanges, not 1: $(grep 'exchange [0-9]* failed' "$T/masterd.log")"
	[ "$(($(field "$T/$1.json" exchanges) + 1))" -eq 4 ] ||
	    fail "$1: not every other migration of 4 was an exchange that completed: $(cat "$T/$1.json")"
	SECS=$(($(date +%s) - T0))
}

# killed -9: the exchange fails at once; those after it, among w1 and w3,
# complete.
fault 9 w2
[ "$(field "$T/9.json" exchanged_bytes)" -gt 0 ] ||
    fail "9: nothing exchanged: $(cat "$T/9.json")"
ok "w2 killed -9 in exchange $X ($WHY): the job went on without it, --local answer ${SECS} s later"

# SIGSTOP: lost after heartbeat_timeout, the exchange fails with it.
start_worker w2
wait_workers 3
fault STOP w2
ok "w2 stopped in exchange $X ($WHY): the job ended with the --local answer ${SECS} s later"

# Cancelled in the middle of an exchange (w1 and w3 left): the exchange
# is given up and logged, the workers drop their part of it, and the next
# job's exchange between the same two completes.
_from=$(($(wc -l < "$T/masterd.log") + 1))
# (200 MB a message: the exchange lasts long enough for r3qctl cancel)
"$R3QCTL" islands $ISL --migrant-bytes 200000000 --json > "$T/cancel.json" 2>&1 &
CPID=$!
PIDS="$PIDS $CPID"
waitfor "tail -n +$_from '$T/masterd.log' | grep -q 'exchange [0-9]* among 2 workers: '" 60 ||
    fail "cancel: no exchange began"
X=$(tail -n "+$_from" "$T/masterd.log" |
    sed -n 's/.*exchange \([0-9]*\) among 2 workers: .*/\1/p' | head -n 1)
job=$(tail -n "+$_from" "$T/masterd.log" |
    sed -n 's/.*job \([0-9]*\) (islands) submitted.*/\1/p' | head -n 1)
[ -n "$job" ] || fail "cancel: no islands job was submitted"
"$R3QCTL" cancel "$job" > /dev/null || fail "cancel: r3qctl cancel $job failed"
grep -q "exchange $X among 2 workers (" "$T/masterd.log" &&
    fail "cancel: exchange $X ended before job $job was cancelled"
waitfor "grep -q 'exchange $X failed: cancelled' '$T/masterd.log'" 15 ||
    fail "cancel: exchange $X of job $job was not given up"
wait "$CPID" && fail "cancel: the cancelled job exited 0"
ISL2="--islands 4 --mu 10 --lambda 20 --dim 10 --generations 10
    --migrate-every 5 --migrants 2 --migrant-bytes 4000000 --seed 5
    --policy wq --work-ms 100"
"$R3QCTL" islands --local $ISL2 --json > "$T/local2.json" ||
    fail "local run (2) failed"
"$R3QCTL" islands $ISL2 --json > "$T/after.json" 2>&1 ||
    fail "cancel: the next job failed: $(cat "$T/after.json")"
[ "$(ans "$T/after.json")" = "$(ans "$T/local2.json")" ] ||
    fail "cancel: the next job's answer differs: $(cat "$T/after.json")"
[ "$(field "$T/after.json" exchanges)" -eq 1 ] &&
    [ "$(field "$T/after.json" exchanges_failed)" -eq 0 ] ||
    fail "cancel: the next job's exchange did not complete: $(cat "$T/after.json"; grep 'exchange [0-9]* failed' "$T/masterd.log")"
"$R3QCTL" result "$(field "$T/after.json" job)" > "$T/after.txt" ||
    fail "cancel: no result of the next job"
grep -q '^peer exchanges 1, 0 failed, [0-9.]* s in migration ([0-9.]* % of the job)$' \
    "$T/after.txt" || fail "cancel: no time in migration: $(cat "$T/after.txt")"
ok "job $job cancelled in exchange $X: given up, the next job's exchange completed"
master_alive
