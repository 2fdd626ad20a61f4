# Tasks apart from workerd and from each other (workerd.conf(5), "Slot
# users"): with slot_users, each execution slot's processes run as a user
# of their own.  Two tasks of an exec kind run at the same time on one
# workerd, each leaving a secret in the rest of its payload (unread on its
# standard input) and in a file of its working directory; each then tries
# to read the other's payload through /proc/PID/fd/0, the other's file
# (by path and through /proc/PID/cwd), workerd's key (0600, workerd's, in
# a directory the slot users may enter), workerd's /proc/PID/environ and fds, and
# to signal the other task and workerd.  With slot users every attempt
# fails, and the tasks hold no capability: under a workerd run as root,
# and under one run as an unprivileged user with the four capabilities
# workerd.service gives it (which refuses to start without them).  The
# same two tasks with slot_users = none (workerd's own user, root here,
# run_as_root = yes) succeed at each, so the test can fail.
# Also: a persistent kind runs as the slot users; a task past its timeout
# is killed with whatever it left running, and a process a task leaves
# in a session of its own is killed after it; the working directories are
# removed whatever a task left in them; workerd -n names missing slot
# users, and refuses slot_users = none under root without run_as_root.
# Needs root (useradd): the test's users, r3qiso<pid>-0 and -1, are made
# here and removed at the end.
. "${top_srcdir:-.}/tests/regress/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root to make the slot users and switch to them"
	exit 77
fi
for c in useradd userdel python3 timeout; do
	command -v "$c" > /dev/null ||
	    { echo "SKIP: $c is not installed"; exit 77; }
done

P=r3qiso$$-
U0=${P}0
U1=${P}1
# Readable by the slot users: the kinds' programs, the working
# directories, the rendezvous of the two tasks.  $T is 0700.
D=$(mktemp -d /tmp/r3q-iso.XXXXXX)
chmod 755 "$D"
iso_cleanup() {
	pkill -9 -u "$U0" 2>/dev/null || true
	pkill -9 -u "$U1" 2>/dev/null || true
	pkill -9 -u "${P}w" 2>/dev/null || true
	userdel "$U0" 2>/dev/null || true
	userdel "$U1" 2>/dev/null || true
	userdel "${P}w" 2>/dev/null || true
	rm -rf "$D"
}
trap 'iso_cleanup; cleanup' EXIT
for u in "$U0" "$U1"; do
	useradd --system --user-group --no-create-home --home-dir / \
	    --shell /usr/sbin/nologin "$u" || fail "useradd $u"
done

mkdir -m 755 "$D/work"
mkdir -m 1777 "$D/rv"

# The spy: "A SECRET_A" or "B SECRET_B" on its standard input.  It reads
# one byte (who it is) and leaves the rest in the pipe.
cat > "$D/spy.sh" <<'EOF'
#!/bin/sh
me=$(dd bs=1 count=1 2>/dev/null)
case $me in A) other=B ;; B) other=A ;; *) echo "bad payload"; exit 1 ;; esac
echo "FILE_SECRET_$me" > secret
echo "$$ $PWD" > "$RV/$me.tmp" && mv "$RV/$me.tmp" "$RV/$me"
n=0
while [ ! -s "$RV/$other" ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || { echo "$me alone"; exit 0; }
	sleep 0.1
done
read -r opid ocwd < "$RV/$other"
try() {
	if out=$(timeout 5 sh -c "$2" 2>/dev/null) && [ -n "$out" ]; then
		printf ' %s=ok' "$1"
	else
		printf ' %s=denied' "$1"
	fi
}
printf '%s %s' "$me" "$(id -un)"
try fd0 "cat /proc/$opid/fd/0 | grep -o SECRET_$other"
try cwd "grep -o FILE_SECRET_$other $ocwd/secret"
try proccwd "grep -o FILE_SECRET_$other /proc/$opid/cwd/secret"
try key "grep -o PRIVATE $KEY"
try environ "tr '\0' '\n' < /proc/$PPID/environ | head -n 1"
try wfd "ls /proc/$PPID/fd | head -n 1"
try kill "kill -0 $opid && echo y"
try killw "kill -0 $PPID && echo y"
printf ' umask=%s' "$(umask)"
try caps "awk '/^Cap(Inh|Prm|Eff|Amb):/ && \$2 !~ /^0+\$/' /proc/self/status"
echo
# Stay until the other has looked too.
touch "$RV/$me.done"
n=0
while [ ! -e "$RV/$other.done" ] && [ $n -lt 100 ]; do
	n=$((n + 1))
	sleep 0.1
done
EOF
# A task that outlives its timeout, with a child in the background.
cat > "$D/hang.sh" <<'EOF'
#!/bin/sh
sleep 3600 &
exec sleep 3600
EOF
# A task that leaves a process behind in a session of its own, out of
# its process group's reach.
cat > "$D/escape.sh" <<'EOF'
#!/bin/sh
setsid sleep 3600 < /dev/null > /dev/null 2>&1 &
sleep 0.2
echo left
EOF
# A persistent kind (workerd.conf(5), "Persistent kinds") that answers
# each task with the user it runs as.
cat > "$D/who.py" <<'EOF'
import os, pwd, struct, sys
i, o = sys.stdin.buffer, sys.stdout.buffer
while True:
    h = i.read(5)
    if len(h) < 5:
        break
    t, n = struct.unpack(">cI", h)
    i.read(n)
    if t != b"T":
        continue
    a = pwd.getpwuid(os.geteuid()).pw_name.encode()
    o.write(b"R" + struct.pack(">I", len(a)) + a)
    o.flush()
EOF
chmod 755 "$D/spy.sh" "$D/hang.sh" "$D/escape.sh" "$D/who.py"

mkcerts w1
# workerd's key where a slot user could reach the file, its owner's
# alone (0600) as workerd requires.
cp "$T/certs/w1.key" "$D/w1.key"
chmod 600 "$D/w1.key"
grep -q PRIVATE "$D/w1.key" || fail "the key has no PRIVATE line to look for"

start_master
KINDS="key = $D/w1.key
workdir = $D/work
exec spy = $D/spy.sh
env spy = RV=$D/rv
env spy = KEY=$D/w1.key
exec hang = $D/hang.sh
exec escape = $D/escape.sh
timeout hang = 1s
kill_grace hang = 200ms
exec who = persistent /usr/bin/python3 $D/who.py"

# spies NAME: the two spies, at the same time on the worker; their two
# lines in $T/NAME.out.
spies() {
	rm -f "$D/rv"/*
	printf 'A SECRET_A\nB SECRET_B\n' |
	    "$R3QCTL" map --timeout 60 spy > "$T/$1.out" 2> "$T/$1.err" ||
	    fail "map spy ($1): $(cat "$T/$1.err")"
	grep -q alone "$T/$1.out" &&
	    fail "the two tasks did not run at the same time ($1): $(cat "$T/$1.out")"
	[ "$(wc -l < "$T/$1.out")" -eq 2 ] ||
	    fail "expected two lines ($1): $(cat "$T/$1.out")"
}

# isolated NAME: the spies ran as the two slot users with umask 027 and
# every attempt failed; the working directories are gone; what a task
# leaves in a session of its own is killed; the persistent kind runs as
# the slot users; a task past its timeout is killed, background child
# too.
isolated() {
	grep -q "^A $P[01] " "$T/$1.out" && grep -q "^B $P[01] " "$T/$1.out" ||
	    fail "the tasks did not run as the slot users ($1): $(cat "$T/$1.out")"
	[ "$(awk '{ print $2 }' "$T/$1.out" | sort -u | wc -l)" -eq 2 ] ||
	    fail "the two tasks ran as one user ($1): $(cat "$T/$1.out")"
	ok "$1: two tasks at once run as two slot users: $(awk '{ printf "%s ", $2 }' "$T/$1.out")"
	for what in $ATTEMPTS; do
		grep -q " $what=ok" "$T/$1.out" &&
		    fail "$1: a task under a slot user could do $what: $(cat "$T/$1.out")"
		[ "$(grep -c " $what=denied" "$T/$1.out")" -eq 2 ] ||
		    fail "$1: no $what attempt: $(cat "$T/$1.out")"
	done
	[ "$(grep -c " umask=0027 " "$T/$1.out")" -eq 2 ] ||
	    fail "$1: the tasks' umask is not 027: $(cat "$T/$1.out")"
	ok "$1: neither task reads the other's payload (/proc/PID/fd/0) or files, workerd's key, environ or fds, nor signals the other or workerd, nor holds a capability"

	[ -z "$(find "$D/work" -mindepth 1 -print -quit)" ] ||
	    fail "$1: working directories left behind: $(find "$D/work" -mindepth 1 -ls)"
	ok "$1: the working directories are removed, with the files the tasks left"

	# Before any persistent process runs as a slot user: with one, the
	# slot's user is not swept.
	printf 'x\ny\n' | "$R3QCTL" map --timeout 60 escape > "$T/escape.out" 2> "$T/escape.err" ||
	    fail "$1: map escape: $(cat "$T/escape.err")"
	[ "$(grep -c '^left$' "$T/escape.out")" -eq 2 ] ||
	    fail "$1: escape: $(cat "$T/escape.out")"
	waitfor "! pgrep -u '$U0,$U1' sleep" 5 ||
	    fail "$1: a process a task left in a session of its own outlived it: $(pgrep -a -u "$U0,$U1")"
	ok "$1: what a task leaves running in a session of its own is killed after it"

	printf 'x\ny\nz\n' | "$R3QCTL" map --timeout 60 who > "$T/who.out" 2> "$T/who.err" ||
	    fail "$1: map who: $(cat "$T/who.err")"
	[ "$(grep -c "^$P[01]\$" "$T/who.out")" -eq 3 ] ||
	    fail "$1: the persistent kind did not run as the slot users: $(cat "$T/who.out")"
	ok "$1: a persistent kind's processes run as the slot users"

	echo x | "$R3QCTL" map --timeout 60 hang > "$T/hang.out" 2> "$T/hang.err" &&
	    fail "$1: a task past its timeout succeeded"
	grep -q "timeout after 1 s" "$T/hang.err" ||
	    fail "$1: the hung task's error: $(cat "$T/hang.err")"
	waitfor "! pgrep -u '$U0,$U1' sleep" 5 ||
	    fail "$1: the hung task's processes outlived it: $(pgrep -a -u "$U0,$U1")"
	ok "$1: a slot user's task past its timeout is killed with its background child"
}

# stop_worker PID: SIGTERM, and wait until it is gone.
stop_worker() {
	kill "$1"
	waitfor "! kill -0 $1" 30 || fail "workerd did not stop"
}

ATTEMPTS="fd0 cwd proccwd key environ wfd kill killw caps"

# workerd as root, slot users.
SLOT_USERS=$P WORKER_EXTRA="$KINDS"
start_worker w1 2
wait_workers 1
spies root-slots
isolated root-slots
stop_worker "$WPID_w1"

# workerd as an unprivileged user with the four capabilities of
# workerd.service (ambient, as systemd gives them): its key, certificate
# and configuration, and workdir, its own or readable.
W=${P}w
useradd --system --user-group --no-create-home --home-dir / \
    --shell /usr/sbin/nologin "$W" || fail "useradd $W"
cp "$T/certs/ca.pem" "$T/certs/w1.pem" "$D/"
chmod 644 "$D/ca.pem" "$D/w1.pem"
chown "$W:$W" "$D/w1.key" "$D/work"
sed -e "s|^ca = .*|ca = $D/ca.pem|" -e "s|^cert = .*|cert = $D/w1.pem|" \
    "$T/w1.conf" > "$D/w1.conf"
chmod 644 "$D/w1.conf"
CAPS=+setuid,+setgid,+chown,+kill
rc=0
setpriv --reuid="$W" --regid="$W" --clear-groups \
    "$WORKERD" -d -f "$D/w1.conf" > "$T/nocaps.log" 2>&1 || rc=$?
[ "$rc" -eq 78 ] &&
    grep -q "lacks CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL to run the kinds as the slot users" "$T/nocaps.log" ||
    fail "workerd without capabilities: status $rc: $(cat "$T/nocaps.log")"
ok "workerd as a user without the capabilities refuses to start, naming them"
setpriv --reuid="$W" --regid="$W" --clear-groups --inh-caps="$CAPS" \
    --ambient-caps="$CAPS" "$WORKERD" -d -v -f "$D/w1.conf" \
    >> "$T/w1caps.log" 2>&1 &
WPID_caps=$!
PIDS="$PIDS $WPID_caps"
wait_workers 1
spies user-slots
isolated user-slots
stop_worker "$WPID_caps"
chown root:root "$D/w1.key" "$D/work"

# The same two tasks as workerd's own user: every attempt succeeds.
SLOT_USERS=none WORKER_EXTRA="$KINDS"
start_worker w1 2
wait_workers 1
spies none
for what in $ATTEMPTS; do
	[ "$(grep -c " $what=ok" "$T/none.out")" -eq 2 ] ||
	    fail "with slot_users = none, $what failed (the test cannot tell): $(cat "$T/none.out")"
done
grep -q "kinds would run as root" "$T/w1.log" ||
    fail "no warning that the kinds run as root"
ok "with slot_users = none (and as root) the same tasks read and signal it all: the test can fail"
stop_worker "$WPID_w1"

# workerd -n: missing slot users, and root without run_as_root.
sed -e "s/^slot_users = .*/slot_users = r3qnosuch/" "$T/w1.conf" > "$T/bad.conf"
rc=0
"$WORKERD" -n -f "$T/bad.conf" > /dev/null 2> "$T/bad.err" || rc=$?
[ "$rc" -eq 78 ] && grep -q "slot users missing: r3qnosuch0, r3qnosuch1 " "$T/bad.err" ||
    fail "workerd -n with missing slot users: status $rc: $(cat "$T/bad.err")"
ok "workerd -n names the missing slot users"
# A program the slot users cannot reach ($T is 0700): every task would fail.
printf '#!/bin/sh\ncat\n' > "$T/hidden.sh"
chmod 755 "$T/hidden.sh"
{ sed -e "s/^slot_users = .*/slot_users = $P/" "$T/w1.conf"
  echo "exec hidden = $T/hidden.sh"; } > "$T/hidden.conf"
rc=0
"$WORKERD" -n -f "$T/hidden.conf" > /dev/null 2> "$T/hidden.err" || rc=$?
[ "$rc" -eq 78 ] &&
    grep -q "kind hidden: $T/hidden.sh: Permission denied as slot user ${P}0" "$T/hidden.err" ||
    fail "workerd -n with a program the slot users cannot run: status $rc: $(cat "$T/hidden.err")"
ok "workerd -n refuses a kind whose program the slot users cannot run"
sed -e "s/^slot_users = .*/slot_users = $P/" -e "s|^workdir = .*|workdir = $T|" \
    "$T/w1.conf" > "$T/wd.conf"
rc=0
"$WORKERD" -n -f "$T/wd.conf" > /dev/null 2> "$T/wd.err" || rc=$?
[ "$rc" -eq 78 ] &&
    grep -q "workdir $T: Permission denied as slot user ${P}0" "$T/wd.err" ||
    fail "workerd -n with a workdir the slot users cannot enter: status $rc: $(cat "$T/wd.err")"
ok "workerd -n refuses a workdir the slot users cannot pass through"
sed -e "s/^slot_users = .*/slot_users = none/" -e "/^run_as_root/d" \
    "$T/w1.conf" > "$T/root.conf"
rc=0
"$WORKERD" -n -f "$T/root.conf" > /dev/null 2> "$T/root.err" || rc=$?
[ "$rc" -eq 78 ] && grep -q "run_as_root" "$T/root.err" ||
    fail "workerd -n, root, slot_users = none: status $rc: $(cat "$T/root.err")"
rc=0
"$WORKERD" -d -f "$T/root.conf" > "$T/root.log" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -q "kinds would run as root.*run_as_root = yes" "$T/root.log" ||
    fail "workerd as root, slot_users = none: status $rc: $(cat "$T/root.log")"
ok "a root workerd refuses to run kinds as root unless run_as_root = yes"
