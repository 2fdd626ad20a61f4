# The shipped Slurm integration (slurm/README) against a real Slurm: a
# one-node cluster of Debian's slurm-wlm that the test starts itself
# (slurm-lib.sh), and the built r3q-workers.sbatch and r3q-slurm-worker
# as they are installed, but for the paths of this build.  Submitted with
# only R3Q_MASTER and a join token (or R3Q_CERTS) in the environment:
#  - a worker joins, named HOST-JOBID-TASK, with no warning about
#    -f /dev/null, and runs an ES job: the answer of --local, bit for bit;
#  - drain_timeout comes from the cluster's KillWait (scontrol);
#  - scancel during tasks longer than a second: the worker drains and
#    exits 0 before KillWait runs out, nothing lost or killed, the
#    tasks handed back run on the next job's worker, the --local answer;
#  - sbatch -n2 -c1 on a node of 2 CPUs: two workers of 1 CPU each
#    (SLURM_CPUS_PER_TASK, the affinity mask), not 2 each;
#  - after each job its state directory, key and certificate, is gone;
#  - the variant with certificates in a shared directory (R3Q_CERTS)
#    joins as the node's host name;
#  - a 2-minute job: the script's #SBATCH --signal=TERM@60 drains the
#    worker before the time limit, and the job completes (not TIMEOUT).
# Skips, on a line of its own, without root or slurm-wlm and munge.
. "${top_srcdir:-.}/tests/regress/lib.sh"
. "${top_srcdir:-.}/tests/regress/slurm-lib.sh"

t0=$(date +%s)
slurm_start
slurm_shipped
H=$SLURM_NODE
mkcerts "$H"
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key
http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    sed -n "s/^$1 //p"
}
mkdir -p "$T/tmp"
chmod 700 "$T/tmp"

# submit ARGS...: sbatch the shipped script with only what a user sets;
# prints the job id.
submit() {
	env -u R3Q_CONTROL R3Q_MASTER="127.0.0.1:$PORT" TMPDIR="$T/tmp" \
	    sbatch --parsable --chdir="$T" "$@" "$SLURMDIR/r3q-workers.sbatch"
}
# gone_job JOB SECONDS: the job has ended within SECONDS; if not, what
# its workers and the processes of its step were doing.
gone_job() {
	waitfor "[ -z \"\$(squeue -h -j $1 2>/dev/null)\" ]" "$2" ||
	    fail "job $1 did not end: $(squeue -j "$1" 2>&1 | tail -n 1)
its output: $(tail -n 8 "$T/r3q-workers-$1.out" 2>&1)
its processes: $(ps -eo pid,ppid,stat,etime,wchan:24,args | grep -E 'workerd|r3q-slurm|srun|slurmstepd' | grep -v grep)
Slurm on it: $(slurm_job_log "$1")"
}
# no_state: no state directory is left in the jobs' TMPDIR.
no_state() {
	[ -z "$(ls -A "$T/tmp")" ] || fail "left in TMPDIR: $(ls -lR "$T/tmp")"
}

ES="--mu 4 --lambda 12 --dim 4 --generations 3 --seed 17"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"

# 1. A token, one worker: join, name, an ES job, the --local answer.
tok=$("$R3QCTL" token create --uses 1 --ttl 1h 2> /dev/null) ||
    fail "token create"
j1=$(R3Q_TOKEN=$tok submit -n1 -c1 --time=10) || fail "sbatch failed"
w1=$H-$j1-0
waitfor "'$R3QCTL' workers | grep -q '^$w1 '" 60 ||
    fail "worker $w1 did not join: $(slurm_job_state "$j1") $(cat "$T/r3q-workers-$j1.out" 2>/dev/null | tail -n 5)"
out=$T/r3q-workers-$j1.out
grep -q "r3q-workers: job $j1, KillWait $SLURM_KILLWAIT s: drain_timeout $((SLURM_KILLWAIT - 5))s" "$out" ||
    fail "the script's first line: $(head -n 3 "$out")"
! grep -q "writable\|owned by" "$out" || fail "a warning: $(grep 'writable\|owned by' "$out")"
[ -n "$(ls -A "$T/tmp")" ] || fail "no state directory in TMPDIR while the job runs"
ok "sbatch r3q-workers.sbatch with R3Q_MASTER and R3Q_TOKEN: worker $w1 joined; drain_timeout $((SLURM_KILLWAIT - 5))s from KillWait $SLURM_KILLWAIT s"
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES)
timeout 120 "$R3QCTL" wait "$job" > /dev/null || fail "the ES job failed"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the answer differs from --local"
ok "an ES job on $w1: the answer of --local, bit for bit"
ES2="--mu 2 --lambda 6 --dim 4 --generations 2 --seed 5"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES2 --csv "$T/local2.csv" --quiet > /dev/null ||
    fail "local run failed"

# 2. scancel during tasks of 4 s: the worker drains, exits 0 within
# KillWait, nothing lost; a second job's worker runs what it handed back.
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES2 --work-ms 4000 --policy rwq --queue-factor 3)
waitfor "[ \$('$R3QCTL' workers | awk '\$1 == \"$w1\" {print \$8}') -ge 1 ]" 30 ||
    fail "$w1 runs no task: $("$R3QCTL" workers)"
sleep 1
tc=$(date +%s)
scancel "$j1"
gone_job "$j1" $((SLURM_KILLWAIT + 15))
td=$(($(date +%s) - tc))
grep -qE "worker $w1 draining \(SIGTERM\)" "$T/masterd.log" ||
    fail "the master did not log a drain: $(grep "$w1" "$T/masterd.log" | tail -n 3)"
grep -q "worker $w1 drained and left" "$T/masterd.log" ||
    fail "$w1 did not drain and leave: $(grep "$w1" "$T/masterd.log" | tail -n 3)"
! grep -q "worker $w1 .*lost" "$T/masterd.log" || fail "$w1 was lost"
grep -q "interrupting" "$out" && fail "the drain interrupted running tasks: $(grep interrupting "$out")"
[ "$td" -lt "$SLURM_KILLWAIT" ] || fail "the job took $td s to end, KillWait is $SLURM_KILLWAIT s"
no_state
ok "scancel mid-task: $w1 drained ($(sed -n "s/.*worker $w1 draining (SIGTERM): \([0-9]*\) held.*/\1/p" "$T/masterd.log") held handed back), the job ended in $td s < KillWait $SLURM_KILLWAIT s; its state directory is gone"
tok=$("$R3QCTL" token create --uses 1 --ttl 1h 2> /dev/null)
j2=$(R3Q_TOKEN=$tok submit -n1 -c"$SLURM_CPUS" --time=10) || fail "sbatch failed"
timeout 120 "$R3QCTL" wait "$job" > /dev/null || fail "the ES job after scancel failed"
"$R3QCTL" result "$job" --csv "$T/dist2.csv" > /dev/null
cmp -s "$T/local2.csv" "$T/dist2.csv" || fail "after scancel, the answer differs from --local"
[ "$(metric r3q_copies_killed_total)" = 0 ] ||
    fail "copies killed: $(metric r3q_copies_killed_total)"
ok "the job finished on $H-$j2-0: 0 lost, 0 killed, the answer of --local"
scancel "$j2"
gone_job "$j2" $((SLURM_KILLWAIT + 15))
no_state

# 3. sbatch -n2 -c1: two workers of one CPU each.
if [ "$SLURM_CPUS" -ge 2 ]; then
	tok=$("$R3QCTL" token create --uses 2 --ttl 1h 2> /dev/null)
	j3=$(R3Q_TOKEN=$tok submit -n2 -c1 --time=10) || fail "sbatch failed"
	waitfor "[ \$('$R3QCTL' workers | grep -c '^$H-$j3-') -eq 2 ]" 60 ||
	    fail "two workers of job $j3 did not join: $("$R3QCTL" workers)"
	for i in 0 1; do
		c=$("$R3QCTL" workers | awk -v n="$H-$j3-$i" '$1 == n {print $3}')
		[ "$c" = 1 ] || fail "$H-$j3-$i has $c CPUs: $("$R3QCTL" workers)"
	done
	why=$(sed -n 's/.*execution threads (\(.*\)).*/\1/p' "$T/r3q-workers-$j3.out" | sort -u)
	ok "sbatch -n2 -c1 on $SLURM_CPUS CPUs: $H-$j3-0 and $H-$j3-1 have 1 CPU each ($why)"
	scancel "$j3"
	gone_job "$j3" $((SLURM_KILLWAIT + 15))
	no_state
	ok "after scancel, both state directories are gone"
else
	echo "SKIP: sbatch -n2 -c1: this node has $SLURM_CPUS CPU"
fi

# 5 (while 4 runs). The time limit: the script's #SBATCH --signal=TERM@60
# drains the worker before the limit of 2 minutes; the job completes.
tok=$("$R3QCTL" token create --uses 1 --ttl 1h 2> /dev/null)
j5=$(R3Q_TOKEN=$tok submit -n1 -c1 --time=2) || fail "sbatch failed"
w5=$H-$j5-0

# 4. Certificates in a shared directory: the worker is the node.
j4=$(R3Q_CERTS=$C submit -n1 -c1 --time=10) || fail "sbatch failed"
waitfor "'$R3QCTL' workers | grep -q '^$H '" 60 ||
    fail "worker $H did not join: $(cat "$T/r3q-workers-$j4.out" 2>/dev/null | tail -n 5)"
scancel "$j4"
gone_job "$j4" $((SLURM_KILLWAIT + 15))
grep -q "worker $H drained and left" "$T/masterd.log" || fail "$H did not drain"
ok "R3Q_CERTS: worker $H joined with its certificate, drained at scancel"
waitfor "grep -q 'worker $w5 drained and left' '$T/masterd.log'" 150 ||
    fail "$w5 did not drain before its time limit: $(slurm_job_state "$j5") $(grep "$w5" "$T/masterd.log" | tail -n 2)
Slurm on it: $(slurm_job_log "$j5")"
gone_job "$j5" 30
st=$(slurm_job_state "$j5")
[ "$st" = COMPLETED ] ||
    fail "job $j5 ended $st, not COMPLETED ($(scontrol show job "$j5" 2>/dev/null |
    grep -o 'ExitCode=[0-9:]*\|Reason=[^ ]*' | tr '\n' ' '); its output: $(tail -n 5 "$T/r3q-workers-$j5.out" 2>/dev/null))
Slurm on it: $(slurm_job_log "$j5")"
grep -q "worker $w5 draining (SIGTERM)" "$T/masterd.log" || fail "$w5 drained for another reason"
no_state
ok "time limit 2 min: #SBATCH --signal=TERM@60 drained $w5 before it; the job COMPLETED, its state gone"
master_alive
echo "# the Slurm test took $(($(date +%s) - t0)) s"
