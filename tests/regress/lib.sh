# Shared helpers for the regress tests: a throwaway CA, a masterd on a
# free loopback port, workerd instances, and cleanup of everything started.
# Sourced by each test; needs top_builddir and top_srcdir (make check sets
# them; by hand: top_builddir=. top_srcdir=. sh tests/regress/x.sh).

set -eu

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
MASTERD=$top_builddir/masterd/masterd
WORKERD=$top_builddir/workerd/workerd
R3QCTL=$top_builddir/ctl/r3qctl
TESTPEER=$top_builddir/tests/regress/r3q-testpeer
MKCERTS=$top_srcdir/scripts/mkcerts

# workerd reads every key from R3Q_KEY too (issue 25), and clients read
# R3Q_MASTER, R3Q_CERT...: what the caller's shell exports must not reach
# the daemons and clients a test starts.  The harness's own stay.
for _v in $(env | sed -n 's/^\(R3Q_[A-Z0-9_]*\)=.*/\1/p'); do
	case $_v in
	R3Q_SANITIZE|R3Q_SANITIZER_DIR|R3Q_LIBASAN|R3Q_SLURMDIR) ;;
	*) unset "$_v" ;;
	esac
done
unset SLURM_CPUS_ON_NODE SLURM_CPUS_PER_TASK

T=$(mktemp -d /tmp/r3q-regress.XXXXXX)
PIDS=""
MASTER_PID=""

# Under scripts/check --sanitize or --tsan (R3Q_SANITIZE is set) every
# process runs several times slower: a test whose events must happen while
# a job still runs makes the job SAN_SLOW times longer, never its
# assertions weaker.
SAN_SLOW=1
[ -z "${R3Q_SANITIZE:-}" ] || SAN_SLOW=3
# Under a sanitizer a process's RSS also holds the sanitizer's shadow
# memory, the redzones around each block and (ASan) up to 256 MB of freed
# blocks in quarantine, and its allocator does not give memory back to the
# kernel as glibc's malloc_trim does.  So there an RSS bound of N kB holds
# as san_rss N = 2N + 256 MB (still far below the gigabytes an unbounded
# peer takes), and SAN_RSS_RELEASE is 0: what a test says about memory
# given back is checked by the plain build's run.
SAN_RSS_RELEASE=1
[ -z "${R3Q_SANITIZE:-}" ] || SAN_RSS_RELEASE=0
san_rss() {
	if [ -z "${R3Q_SANITIZE:-}" ]; then
		echo "$1"
	else
		echo $((2 * $1 + 256 * 1024))
	fi
}

# r3q-testpeer badclient takes this long a silence as "no answer": 1 s,
# 5 under a sanitizer (ASan on a loaded machine took 2 s to refuse a
# 2 MB payload, which batch.sh then read as accepted).
if [ -n "${R3Q_SANITIZE:-}" ]; then
	R3Q_PEER_WAIT=5
	export R3Q_PEER_WAIT
fi

cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# A UBSan report goes to the process's stderr, not to the log_path
	# of scripts/check (ASan's runtime ignores it for UBSan): keep the
	# daemons' logs that have one where scripts/check looks.
	# Only a report's own lines count (the same pattern as
	# scripts/check's): install.sh keeps source files here that name the
	# sanitizers, and ASan's warning about SimGrid's stack switches is
	# not a report.  Not in the copies of the sources install.sh makes
	# (src, b-*), whose scripts and docs quote such lines.
	if [ -n "${R3Q_SANITIZER_DIR:-}" ]; then
		grep -rlsIE --exclude-dir=src --exclude-dir='b-*' \
		    '[0-9]+:[0-9]+: runtime error: |(ERROR|WARNING): [A-Za-z]*Sanitizer:' "$T" |
		while read -r _f; do
			cp "$_f" "$R3Q_SANITIZER_DIR/$(basename "$0" .sh).$(basename "$_f").$$"
		done || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap "exit 130" INT TERM

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "--- $f (last 15 lines)" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

ok() {
	echo "ok - $*"
}

# Wait up to $2 seconds (default 10) for a command to succeed.
waitfor() {
	_cmd=$1
	_n=$(( ${2:-10} * 10 ))
	while [ "$_n" -gt 0 ]; do
		if sh -c "$_cmd" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# Certificates for the master, the given workers and a client.
mkcerts() {
	"$MKCERTS" "$T/certs" "$@" >/dev/null
}

# Start masterd on a free port; sets PORT and R3Q_CONTROL.
start_master() {
	cat > "$T/masterd.conf" <<EOC
listen = 127.0.0.1:0
control = $T/ctl.sock
ca = $T/certs/ca.pem
cert = $T/certs/master.pem
key = $T/certs/master.key
journal = $T/journal.db
${MASTER_EXTRA:-}
EOC
	"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
	MASTER_PID=$!
	PIDS="$PIDS $MASTER_PID"
	waitfor "grep -q 'listening on' '$T/masterd.log'" 10 ||
	    fail "masterd did not start"
	PORT=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\),.*/\1/p' \
	    "$T/masterd.log" | tail -n 1)
	R3Q_CONTROL=$T/ctl.sock
	export R3Q_CONTROL
}

# python_client [DIR...]: the environment of a test's Python clients: PY,
# R3Q_LIBRARY (the libr3q built here), PYTHONPATH (the tree's python/ and
# each DIR of the source tree), and PYLIB, the command that runs them.
# Under scripts/check --sanitize libr3q is built with ASan, whose runtime
# must come first in a process: python3 is not instrumented, so PYLIB
# preloads it, leak checks off (CPython keeps its objects at exit by
# design; libr3q's leaks are tests/unit/test_lib's to find).
python_client() {
	PY=${PYTHON:-/usr/bin/python3}
	src=$(cd "$top_srcdir" && pwd)
	LIBR3Q=$(cd "$top_builddir" && pwd)/lib/.libs/libr3q.so.0
	[ -f "$LIBR3Q" ] || fail "$LIBR3Q is not built"
	export R3Q_LIBRARY=$LIBR3Q
	PYTHONPATH=$src/python
	for _d in "$@"; do
		PYTHONPATH=$PYTHONPATH:$src/$_d
	done
	export PYTHONPATH
	PYLIB=("$PY")
	if [ "${R3Q_SANITIZE:-}" = address ]; then
		PYLIB=(env LD_PRELOAD="${R3Q_LIBASAN:?}"
		    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$PY")
	fi
}

# Start workerd NAME [CPUS]; its pid is in WPID_NAME.  WORKER_EXTRA adds
# lines to its config.  The kinds' processes run as workerd's own user
# (root under make check), not as slot users: a kind's program in $T
# (mode 0700) could not be run by them; isolation.sh tests slot users,
# and SLOT_USERS=PREFIX names some.
start_worker() {
	_name=$1
	cat > "$T/$_name.conf" <<EOC
master = 127.0.0.1:$PORT
ca = $T/certs/ca.pem
cert = $T/certs/$_name.pem
key = $T/certs/$_name.key
cpus = ${2:-1}
reconnect_max = 1s
slot_users = ${SLOT_USERS:-none}
run_as_root = yes
${WORKER_EXTRA:-}
EOC
	"$WORKERD" -d -v -f "$T/$_name.conf" >> "$T/$_name.log" 2>&1 &
	eval "WPID_$_name=$!"
	PIDS="$PIDS $!"
}

# Start workerd NAME as a relay (relay_listen, an OU=relay certificate) on
# a free port, its master at UPSTREAM-PORT (default PORT); RPORT is its
# port.  RELAY_ADDR sets relay_listen, RELAY_EXTRA adds config lines.
start_relay() {
	_rn=$1
	cat > "$T/$_rn.conf" <<EOC
master = 127.0.0.1:${2:-$PORT}
ca = $T/certs/ca.pem
cert = $T/certs/$_rn.pem
key = $T/certs/$_rn.key
cpus = 1
reconnect_max = 1s
relay_listen = ${RELAY_ADDR:-127.0.0.1:0}
${RELAY_EXTRA:-}
EOC
	"$WORKERD" -d -v -f "$T/$_rn.conf" >> "$T/$_rn.log" 2>&1 &
	eval "WPID_$_rn=$!"
	PIDS="$PIDS $!"
	waitfor "grep -q 'relay $_rn listening on' '$T/$_rn.log'" 10 ||
	    fail "relay $_rn did not start"
	RPORT=$(sed -n "s/.*relay $_rn listening on [0-9.]*:\([0-9]*\).*/\1/p" \
	    "$T/$_rn.log" | tail -n 1)
}

# Wait until masterd lists N workers.
wait_workers() {
	waitfor "[ \$('$R3QCTL' workers | tail -n +2 | wc -l) -eq $1 ]" 15 ||
	    fail "expected $1 workers, have: $("$R3QCTL" workers)"
}

# The lines of r3qctl output that must match a reference bit for bit.
answer() {
	grep -E '^(best fitness|best individual):' "$1"
}

# Check masterd is still running.
master_alive() {
	kill -0 "$MASTER_PID" 2>/dev/null || fail "masterd died"
}

# Start a fake master (r3q-testpeer serve) presenting certificate CERT and
# assigning one task of KIND; sets FAKE_PID and FAKE_PORT, output in
# $T/fake.out.
start_fake_master() {
	"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/$1.pem" \
	    -k "$T/certs/$1.key" serve 0 "$2" > "$T/fake.out" 2>&1 &
	FAKE_PID=$!
	PIDS="$PIDS $FAKE_PID"
	waitfor "grep -q '^port ' '$T/fake.out'" 5 || fail "fake master did not start"
	FAKE_PORT=$(sed -n 's/^port //p' "$T/fake.out")
}

# Kill masterd with SIGKILL (a crash) and start it again on the same port
# with the same journal; its earlier log moves to masterd.N.log.
crash_master() {
	kill -9 "$MASTER_PID" 2>/dev/null || true
	wait "$MASTER_PID" 2>/dev/null || true
	_n=1
	while [ -f "$T/masterd.$_n.log" ]; do _n=$((_n + 1)); done
	mv "$T/masterd.log" "$T/masterd.$_n.log"
	sed -i "s/^listen = .*/listen = 127.0.0.1:$PORT/" "$T/masterd.conf"
	"$MASTERD" -d -v -f "$T/masterd.conf" >> "$T/masterd.log" 2>&1 &
	MASTER_PID=$!
	PIDS="$PIDS $MASTER_PID"
	waitfor "grep -q 'listening on' '$T/masterd.log'" 10 ||
	    fail "masterd did not restart"
}

# makespan FILE INSTANCE PERM...: the makespan of PERM (1-based) on the
# instance, recomputed from the file with awk.
makespan() {
	awk -v want="$2" -v perm="$3" '
	/^ *number of jobs/ { inst++; hdr = 1; next }
	inst == want && hdr == 1 { n = $1; m = $2; hdr = 0; next }
	/processing times/ { row = 0; next }
	inst == want && NF > 0 { row++; for (j = 1; j <= NF; j++) p[row, j] = $j }
	END {
		k = split(perm, pi, " ")
		if (k != n) { print "bad"; exit }
		for (i = 1; i <= m; i++) c[i] = 0
		for (t = 1; t <= k; t++) {
			j = pi[t]
			if (seen[j]++ || j < 1 || j > n) { print "bad"; exit }
			for (i = 1; i <= m; i++) {
				prev = i > 1 ? c[i - 1] : 0
				c[i] = (c[i] > prev ? c[i] : prev) + p[i, j]
			}
		}
		print c[m]
	}' "$1"
}

# small_fs SIZE WHAT: a tmpfs of SIZE mounted at $T/jfs ($JFS) for a test
# of a full disk, unmounted when the test ends.  When it cannot be made
# (not root, no mount) it prints a SKIP line naming WHAT and returns 1.
small_fs() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $2: mounting a tmpfs needs root"
		return 1
	fi
	JFS=$T/jfs
	mkdir -p "$JFS"
	if ! mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$JFS" \
	    2> "$T/mount.err"; then
		echo "SKIP: $2: cannot mount a tmpfs: $(cat "$T/mount.err")"
		return 1
	fi
	trap small_fs_cleanup EXIT
}
small_fs_cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	umount "$JFS" 2>/dev/null || umount -l "$JFS" 2>/dev/null || true
	cleanup
}

# kill9_at PID: SIGKILL it, print the local time of day just before (the
# clock read and the kill in one process: $(date) then kill took 25 ms
# on a loaded machine, as much as what is measured).
kill9_at() {
	python3 -c 'import os, sys, time
t = time.time()
os.kill(int(sys.argv[1]), 9)
print(time.strftime("%H:%M:%S", time.localtime(t)) + ".%06d" % int(t % 1 * 1e6))' "$1" 2>/dev/null || {
		date +%H:%M:%S.%N
		kill -9 "$1"
	}
}

# tod_ms T0 T1: milliseconds from T0 to T1, both local times of day
# (HH:MM:SS.frac, as kill9_at and the daemons' logs print them).
tod_ms() {
	awk -v t0="$1" -v t1="$2" 'BEGIN {
	split(t1, a, ":"); split(t0, b, ":")
	d = (a[1] - b[1]) * 3600 + (a[2] - b[2]) * 60 + (a[3] - b[3])
	if (d < 0) d += 86400
	printf "%.1f", d * 1000 }'
}

# SIM: r3q-sim, which is built only where configure found SimGrid; a test
# that needs it is skipped (77) without it, saying why.
need_sim() {
	SIM=$top_builddir/sim/r3q-sim
	if [ ! -x "$SIM" ]; then
		echo "SKIP: sim/r3q-sim is not built (configure did not find SimGrid, libsimgrid-dev >= 3.32)"
		exit 77
	fi
}
