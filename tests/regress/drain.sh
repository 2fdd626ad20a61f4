# Workers from a batch system: a workerd started with no configuration
# file, only flags and R3Q_ variables (flags winning), takes its CPUs from
# SLURM_CPUS_ON_NODE when that is the smallest count, never more than its
# affinity mask allows, joins and runs tasks of an ES job.
# SIGTERM mid-job drains it: the tasks it holds go back to the master at
# once (the master logs the drain and how many), it leaves with status 0,
# nothing is lost (no running copy is killed) and the job's answer is the
# one of --local.  --lifetime drains by itself; r3qctl drain from the
# head node shows a draining state and the worker leaves; a task still
# running when drain_timeout runs out is interrupted and handed back.
# A reload (SIGHUP) applies a changed lifetime.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1 w2
C=$T/certs
MASTER_EXTRA="http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
[ -n "$HTTP_PORT" ] || fail "masterd did not say where HTTP listens"
metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    sed -n "s/^$1 //p"
}

# No file: the default one must not exist (an installed one would be
# read); then a file that says nothing stands for it.
NOFILE=""
if [ -e "${r3qconfdir:-/nonexistent}/workerd.conf" ]; then
	NOFILE="-f /dev/null"
	echo "# $r3qconfdir/workerd.conf exists here: -f /dev/null instead"
fi

# start_env NAME FLAGS...: workerd with only the environment and flags.
start_env() {
	_n=$1
	shift
	# shellcheck disable=SC2086
	env R3Q_MASTER="127.0.0.1:$PORT" R3Q_CA="$C/ca.pem" \
	    R3Q_CERT="$C/$_n.pem" R3Q_KEY="$C/$_n.key" R3Q_RECONNECT_MAX=1s \
	    R3Q_SPEED=2 R3Q_CPUS="${CPUS:-3}" \
	    SLURM_CPUS_ON_NODE="${SLURM_ON:-1}" \
	    "$WORKERD" -d -v $NOFILE --speed 1 "$@" >> "$T/$_n.log" 2>&1 &
	eval "WPID_$_n=$!"
	PIDS="$PIDS $!"
}
# row NAME: its line of r3qctl workers.
row() {
	"$R3QCTL" workers | awk -v n="$1" '$1 == n'
}
# gone PID: it exited with status 0 within 30 s.
gone() {
	waitfor "! kill -0 $1" 30 || fail "$2: the worker did not leave"
	_rc=0
	wait "$1" || _rc=$?
	[ "$_rc" -eq 0 ] || fail "$2: the worker exited with status $_rc"
}

# cpus 0 (R3Q_CPUS=0): the smallest of the machine's counts and Slurm's.
CPUS=0 start_env w2
wait_workers 1
r=$(row w2)
[ "$(echo "$r" | awk '{print $3}')" = 1 ] ||
    fail "SLURM_CPUS_ON_NODE=1 did not give 1 CPU: $r"
[ "$(echo "$r" | awk '{print $4}')" = 1.00 ] ||
    fail "--speed 1 did not win over R3Q_SPEED=2: $r"
grep -q 'execution threads (SLURM_CPUS_ON_NODE)' "$T/w2.log" ||
    fail "workerd does not say where its CPU count came from"
kill -TERM "$WPID_w2"
gone "$WPID_w2" "w2 idle"
ok "a worker with no file, only R3Q_ variables and flags, joins: 1 CPU from SLURM_CPUS_ON_NODE, a flag over the environment"
# A node's count above the affinity mask (two tasks of a step on one
# node each see the node's) is capped by the mask.
aff=$(nproc)
mv "$T/w2.log" "$T/w2.0.log"
CPUS=0 SLURM_ON=4096 start_env w2
wait_workers 1
r=$(row w2)
n=$(echo "$r" | awk '{print $3}')
[ "$n" -ge 1 ] && [ "$n" -le "$aff" ] ||
    fail "SLURM_CPUS_ON_NODE=4096 on $aff CPUs gave $n: $r"
grep -qE "execution threads \((the affinity mask|the cgroup's CPU quota)\)" "$T/w2.log" ||
    fail "SLURM_CPUS_ON_NODE=4096 decided: $(grep 'execution threads' "$T/w2.log")"
kill -TERM "$WPID_w2"
gone "$WPID_w2" "w2 idle"
mv "$T/w2.log" "$T/w2.1.log"
ok "SLURM_CPUS_ON_NODE=4096 on a mask of $aff CPUs: $n ($(sed -n 's/.*execution threads (\(.*\)).*/\1/p' "$T/w2.1.log"))"

start_env w1 --drain-timeout 30s
wait_workers 1
[ "$(row w1 | awk '{print $3}')" = 3 ] || fail "R3Q_CPUS=3: $(row w1)"

# -f /dev/null (the batch scripts' "no file") is no file anyone could
# change: no alarm about who may write it.
"$WORKERD" -n -f /dev/null -m "127.0.0.1:$PORT" --ca "$C/ca.pem" \
    --cert "$C/w1.pem" --key "$C/w1.key" > "$T/null.out" 2>&1 ||
    fail "workerd -n -f /dev/null: $(cat "$T/null.out")"
! grep -q "writable\|owned by" "$T/null.out" ||
    fail "workerd -n -f /dev/null warns: $(cat "$T/null.out")"
ok "-f /dev/null: no warning about who may write it"

# A bad value in the environment is named.
rc=0
R3Q_CPUS=many "$WORKERD" -n $NOFILE > "$T/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -q "R3Q_CPUS: cpus: 'many'" "$T/bad.out" ||
    fail "R3Q_CPUS=many: status $rc: $(cat "$T/bad.out")"
ok "a bad R3Q_ variable is refused, named"

# SIGTERM mid-job, w1 alone: 3 tasks running, 9 held while the queue
# lasts (rwq, 4 per CPU); the held ones go back at once, the job waits
# for w2.  (The answer does not depend on work_ms: --local runs without.)
ES="--mu 4 --lambda 30 --dim 4 --generations 2 --seed 11"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES --work-ms 500 --policy rwq --queue-factor 4)
waitfor "[ \$('$R3QCTL' workers | awk '\$1 == \"w1\" {print \$7}') -ge 6 ]" 30 ||
    fail "w1 never held 6 tasks: $("$R3QCTL" workers)"
kill -TERM "$WPID_w1"
gone "$WPID_w1" "SIGTERM"
grep -qE 'worker w1 draining \(SIGTERM\): [1-9][0-9]* held tasks? handed back' \
    "$T/masterd.log" || fail "the master did not log the drain with its count"
grep -q 'worker w1 drained and left' "$T/masterd.log" ||
    fail "the master did not log that w1 left"
grep -q 'worker w1 .* lost' "$T/masterd.log" && fail "w1 was lost, not drained"
start_worker w2 4
timeout 120 "$R3QCTL" wait "$job" > /dev/null || fail "the job did not finish"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the answer differs from --local"
[ "$(metric r3q_copies_killed_total)" = 0 ] ||
    fail "copies killed: $(metric r3q_copies_killed_total)"
n=$(metric r3q_tasks_handed_back_total)
[ "${n:-0}" -ge 1 ] || fail "r3q_tasks_handed_back_total is ${n:-none}"
ok "SIGTERM mid-job: $(sed -n 's/.*worker w1 draining (SIGTERM): \([0-9]*\) held.*/\1/p' "$T/masterd.log") held tasks handed back, status 0, none killed, the answer of --local"

# --lifetime: the worker drains by itself and leaves.
start_env w1 --lifetime 2s
waitfor "grep -q 'worker w1 draining (lifetime 2s reached)' '$T/masterd.log'" 30 ||
    fail "--lifetime 2s: no drain logged"
gone "$WPID_w1" "--lifetime"
[ "$(grep -c 'worker w1 drained and left' "$T/masterd.log")" -eq 2 ] ||
    fail "--lifetime: the master did not log that w1 left"
ok "--lifetime 2s: the worker drains by itself and leaves with status 0"

# r3qctl drain, with a task running longer than drain_timeout: the worker
# shows as draining, then hands its running tasks back and leaves.
kill -TERM "$WPID_w2"
gone "$WPID_w2" "w2 idle"
ES2="--mu 3 --lambda 3 --dim 2 --generations 1 --seed 3"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES2 --csv "$T/local2.csv" --quiet > /dev/null ||
    fail "local run failed"
# drain_timeout 5 s, so that r3qctl workers still sees w1 draining on a
# machine made slow by load or a sanitizer; tasks of 12 s outlast it.
start_env w1 --drain-timeout 5s
wait_workers 1
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES2 --work-ms 12000 --policy wq)
waitfor "[ \$('$R3QCTL' workers | awk '\$1 == \"w1\" {print \$8}') -eq 3 ]" 30 ||
    fail "w1 does not run 3 tasks: $("$R3QCTL" workers)"
"$R3QCTL" drain w1 > "$T/drain.out" 2>&1 || fail "r3qctl drain: $(cat "$T/drain.out")"
grep -q '^w1: draining' "$T/drain.out" || fail "r3qctl drain said: $(cat "$T/drain.out")"
row w1 | grep -q ' draining ' || fail "r3qctl workers: $(row w1)"
grep -q 'worker w1 asked to drain by' "$T/masterd.log" ||
    fail "the master did not log the request"
gone "$WPID_w1" "r3qctl drain"
# The 12 s tasks started at most a few seconds before the drain: they are
# still running 5 s into it.
k=$(sed -n 's/.*drain_timeout (5s) ran out: interrupting \([0-9]*\) running tasks\{0,1\} to hand.*/\1/p' \
    "$T/w1.log")
[ "${k:-0}" -ge 1 ] || fail "w1 did not interrupt its tasks: $(tail -n 5 "$T/w1.log")"
n=$(sed -n 's/.*worker w1 handed back \([0-9]*\) more tasks\{0,1\} (interrupted: the drain ran out of time)$/\1/p' \
    "$T/masterd.log" | awk '{ s += $1 } END { print s + 0 }')
[ "$n" -eq "$k" ] || fail "the master took $n running tasks back, not $k"
[ "$(metric r3q_copies_killed_total)" = 0 ] ||
    fail "copies killed: $(metric r3q_copies_killed_total)"
ok "r3qctl drain: state draining, drain_timeout 5s interrupts $k running tasks and hands them back, none killed"
"$R3QCTL" drain w1 > "$T/drain.out" 2>&1 && fail "r3qctl drain of a worker not there succeeded"
grep -q "no worker named 'w1' is connected" "$T/drain.out" ||
    fail "r3qctl drain of nobody: $(cat "$T/drain.out")"
start_worker w2 3
timeout 120 "$R3QCTL" wait "$job" > /dev/null || fail "the job did not finish"
"$R3QCTL" result "$job" --csv "$T/dist2.csv" > /dev/null
cmp -s "$T/local2.csv" "$T/dist2.csv" || fail "the answer differs from --local"
ok "the tasks handed back run on w2: the answer of --local"

# lifetime on a reload (SIGHUP): started for an hour, told 1s, counted
# from the start: it drains at once.
printf 'lifetime = 1h\n' > "$T/life.conf"
start_env w1 -f "$T/life.conf"
wait_workers 2
printf 'lifetime = 1s\n' > "$T/life.conf"
kill -HUP "$WPID_w1"
waitfor "grep -q 'reload: lifetime 1s: draining in [0-9]* ms' '$T/w1.log'" 20 ||
    fail "the reload did not apply lifetime: $(tail -n 3 "$T/w1.log")"
waitfor "grep -q 'worker w1 draining (lifetime 1s reached)' '$T/masterd.log'" 30 ||
    fail "lifetime 1s by a reload: no drain logged"
gone "$WPID_w1" "lifetime by a reload"
ok "a reload (SIGHUP) applies a shorter lifetime: the worker drains and leaves"
master_alive
