# A one-node Slurm cluster on this machine for the Slurm tests (slurm.sh,
# factory.sh), from Debian's slurm-wlm and munge: munged, slurmctld and
# slurmd in the foreground, as root, with their configuration, state,
# logs and a munge key of their own in $T/slurm, on ports of their own, so
# that a Slurm the machine runs is left alone.  Sourced after lib.sh.
#
# slurm_start prints a SKIP line naming what is missing and exits 77
# (not root, a program not installed, a daemon that does not start).
# After it, SLURM_CONF points at the cluster's slurm.conf for sbatch,
# squeue, scancel and scontrol; slurm_stop (at exit) cancels every job,
# waits for the steps to end and stops the daemons.
# slurm_shipped copies the built Slurm scripts to $T/slurm-share with the
# paths of this build in place of the installed ones ($SLURMDIR).

SLURM_KILLWAIT=${SLURM_KILLWAIT:-20}

# A TCP port nobody listens on now.
slurm_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

slurm_start() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: a one-node Slurm cluster: slurmd runs as root"
		exit 77
	fi
	for _p in munged slurmctld slurmd sbatch srun squeue scancel scontrol; do
		if ! command -v "$_p" > /dev/null 2>&1 &&
		    ! [ -x "/usr/sbin/$_p" ]; then
			echo "SKIP: a one-node Slurm cluster: $_p is not" \
			    "installed (Debian: apt-get install slurm-wlm munge)"
			exit 77
		fi
	done
	PATH=$PATH:/usr/sbin
	_S=$T/slurm
	mkdir -p "$_S/state" "$_S/spool" "$_S/munge"
	chmod 700 "$_S/munge"
	head -c 1024 /dev/urandom > "$_S/munge/munge.key"
	chmod 600 "$_S/munge/munge.key"
	munged -F -f --socket="$_S/munge/sock" --key-file="$_S/munge/munge.key" \
	    --pid-file="$_S/munge/pid" --log-file="$_S/munge/log" \
	    --seed-file="$_S/munge/seed" > "$T/munged.log" 2>&1 &
	SLURM_PIDS=$!
	_h=$(hostname -s)
	SLURM_NODE=$_h
	SLURM_CPUS=$(nproc)
	cat > "$_S/slurm.conf" <<EOC
ClusterName=r3qtest
SlurmctldHost=$_h(127.0.0.1)
SlurmctldPort=$(slurm_free_port)
SlurmdPort=$(slurm_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$_S/munge/sock
CryptoType=crypto/munge
StateSaveLocation=$_S/state
SlurmdSpoolDir=$_S/spool
SlurmctldPidFile=$_S/slurmctld.pid
SlurmdPidFile=$_S/slurmd.pid
SlurmctldLogFile=$_S/slurmctld.log
SlurmdLogFile=$_S/slurmd.log
SlurmctldDebug=verbose
SlurmdDebug=verbose
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=$SLURM_KILLWAIT
MinJobAge=300
NodeName=$_h NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS State=UNKNOWN
PartitionName=r3q Nodes=$_h Default=YES MaxTime=INFINITE State=UP
EOC
	SLURM_CONF=$_S/slurm.conf
	export SLURM_CONF
	trap 'slurm_stop; cleanup' EXIT
	waitfor "[ -S '$_S/munge/sock' ]" 10 || {
		echo "SKIP: a one-node Slurm cluster: munged did not start:" \
		    "$(tail -n 2 "$T/munged.log" "$_S/munge/log" 2>/dev/null)"
		exit 77
	}
	slurmctld -D -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	slurmd -D -f "$SLURM_CONF" -N "$_h" > "$T/slurmd.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	waitfor "sinfo -h -o %t 2>/dev/null | grep -qx idle" 30 || {
		echo "SKIP: a one-node Slurm cluster: the node is not idle:" \
		    "$(sinfo -h 2>&1 | head -n 2) $(tail -n 3 "$_S/slurmctld.log" "$_S/slurmd.log" 2>&1)"
		exit 77
	}
	echo "# Slurm $(sinfo -V | cut -d' ' -f2): node $_h, $SLURM_CPUS CPUs," \
	    "KillWait $SLURM_KILLWAIT s, SLURM_CONF=$SLURM_CONF"
}

slurm_stop() {
	if [ -n "${SLURM_CONF:-}" ]; then
		scancel --full --quiet --partition=r3q 2>/dev/null || true
		# The steps end (SIGKILL after KillWait at most) before slurmd.
		waitfor "[ -z \"\$(squeue -h 2>/dev/null)\" ]" \
		    $((SLURM_KILLWAIT + 10)) || true
	fi
	for _p in ${SLURM_PIDS:-}; do kill "$_p" 2>/dev/null || true; done
	sleep 1
	for _p in ${SLURM_PIDS:-}; do kill -9 "$_p" 2>/dev/null || true; done
}

# slurm_shipped: the built scripts, as make install would put them, but
# naming this build's workerd and the copy in $SLURMDIR.
# R3Q_SLURMDIR=/usr/share/r3q/slurm (a packaged node) runs the installed
# scripts instead, as they are.
slurm_shipped() {
	if [ -n "${R3Q_SLURMDIR:-}" ]; then
		SLURMDIR=$R3Q_SLURMDIR
		echo "# the installed scripts in $SLURMDIR"
		return 0
	fi
	SLURMDIR=$T/slurm-share
	mkdir -p "$SLURMDIR"
	for _f in r3q-workers.sbatch r3q-slurm-worker; do
		[ -f "$top_builddir/slurm/$_f" ] ||
		    fail "$top_builddir/slurm/$_f is not built"
		_sb=$(sed -n 's|^WORKERD=\(.*\)/workerd$|\1|p' \
		    "$top_builddir/slurm/r3q-slurm-worker")
		_sd=$(sed -n 's|^exec srun .*||; s|^    \(/.*\)/r3q-slurm-worker$|\1|p' \
		    "$top_builddir/slurm/r3q-workers.sbatch")
		[ -n "$_sb" ] && [ -n "$_sd" ] || fail "slurm_shipped: no paths in the scripts"
		sed -e "s|$_sb/workerd|$(cd "$top_builddir" && pwd)/workerd/workerd|g" \
		    -e "s|$_sd/|$SLURMDIR/|g" "$top_builddir/slurm/$_f" > "$SLURMDIR/$_f"
		chmod +x "$SLURMDIR/$_f"
	done
}

# slurm_job_state JOB: its state (RUNNING, COMPLETED, CANCELLED, ...).
slurm_job_state() {
	scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# slurm_job_log JOB: what slurmctld and slurmd logged of it, the last
# lines (for a failure's message).
slurm_job_log() {
	grep -h -E "JobId=$1[^0-9]|job $1[^0-9]|\[$1\.|jobid \[$1\]" \
	    "$_S/slurmctld.log" "$_S/slurmd.log" 2>/dev/null | sort | tail -n 12
}
