# Users' own task kinds on a real cluster on loopback (workerd.conf(5),
# "Configured kinds"): the examples run through r3qctl map (an exec kind
# in shell) and through libr3q (the ES of es-client over a persistent
# Python kind, a persistent C kind and a C plugin), and each gives the
# built-in ridge-lu's answer, r3qctl es --local's, bit for bit.  Every
# failure mode of a kind fails its task with an error that says which,
# and harms nothing else: the worker goes on serving.  workerd -n lists
# the kinds and refuses a broken one with file:line.
. "${top_srcdir:-.}/tests/regress/lib.sh"

EX=$top_srcdir/examples
PLUGIN=$top_builddir/examples/.libs/ridge-plugin.so
[ -x "$top_builddir/examples/es-client" ] || fail "examples/es-client is not built"
[ -f "$PLUGIN" ] || fail "$PLUGIN is not built"
[ -x "$top_builddir/examples/persistent" ] || fail "examples/persistent is not built"
command -v python3 > /dev/null || fail "python3 is not installed (scripts/check installs it)"

# The failure modes, as small programs.
K=$T/k
mkdir -p "$K"
cat > "$K/exit3.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
echo "no good input" >&2
exit 3
EOF
cat > "$K/segv.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
kill -SEGV $$
EOF
cat > "$K/hang.sh" <<'EOF'
#!/bin/sh
exec sleep 3600
EOF
cat > "$K/big.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
head -c 300000 /dev/zero
EOF
cat > "$K/noread.sh" <<'EOF'
#!/bin/sh
echo fine
EOF
cat > "$K/env.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
env | grep -v '^PWD=' | sort | tr '\n' ' '
pwd | sed 's|.*/r3q-env-.*|workdir-ok|'
EOF
cat > "$K/once.py" <<'EOF'
import struct, sys
i, o = sys.stdin.buffer, sys.stdout.buffer
t, n = struct.unpack(">cI", i.read(5))
i.read(n)
o.write(b"R" + struct.pack(">I", 4) + b"once")
o.flush()
EOF
chmod 755 "$K"/*.sh

mkcerts w1 w2
MASTER_EXTRA="client_timeout = 1m"
start_master
WORKER_EXTRA="exec sphere = $EX/sphere.sh
exec ridge-py = persistent /usr/bin/python3 $EX/persistent.py
exec ridge-c = persistent $top_builddir/examples/persistent
plugin ridge-so = $PLUGIN
exec fail-exit = $K/exit3.sh
exec fail-signal = $K/segv.sh
exec hang = $K/hang.sh
timeout hang = 1s
kill_grace hang = 200ms
exec big = $K/big.sh
exec noread = $K/noread.sh
exec env = $K/env.sh
env env = FOO=bar baz
env = OMP_NUM_THREADS=1
exec once = persistent /usr/bin/python3 $K/once.py
plugin pfail = $top_builddir/tests/plugins/.libs/fail.so
plugin pspin = $top_builddir/tests/plugins/.libs/spin.so
timeout pspin = 1s
max_output = 100K"
start_worker w1 2
start_worker w2 1
wait_workers 2

"$WORKERD" -n -f "$T/w1.conf" > "$T/n.out" 2> "$T/n.err" ||
    fail "workerd -n refused the kinds: $(cat "$T/n.err")"
grep -qx "kind ridge-lu: built in" "$T/n.out" &&
grep -q "^kind ridge-py: persistent exec /usr/bin/python3 $EX/persistent.py; timeout none, kill_grace 2s, env OMP_NUM_THREADS=1 PATH=" "$T/n.out" &&
grep -q "^kind hang: exec $K/hang.sh; timeout 1s, kill_grace 200ms" "$T/n.out" &&
grep -q "^kind ridge-so: plugin $PLUGIN; timeout none" "$T/n.out" ||
    fail "workerd -n does not list the kinds: $(cat "$T/n.out")"
ok "workerd -n lists every kind with its command, timeout and environment"

"$WORKERD" -nv -f "$T/w1.conf" > "$T/nv.out" 2> "$T/nv.err" || fail "workerd -nv failed"
"$WORKERD" -nv -f "$T/nv.out" > "$T/nv2.out" 2> "$T/nv2.err" || fail "workerd -nv output does not read back: $(cat "$T/nv2.err")"
cmp -s "$T/nv.out" "$T/nv2.out" || fail "workerd -nv output reads back differently"
ok "workerd -nv prints the kinds in the file's syntax, which reads back"
if [ "$(id -u)" = 0 ]; then
	grep -q "warning: the configured kinds would run as root" "$T/nv.err" ||
	    fail "no warning that the kinds run as root: $(cat "$T/nv.err")"
	grep -q "the configured kinds would run as root" "$T/w1.log" ||
	    fail "workerd did not warn at start that the kinds run as root"
	ok "workerd -n and workerd at start warn that the kinds would run as root"
fi

"$R3QCTL" workers > "$T/workers"
for k in sphere ridge-py ridge-c ridge-so once; do
	grep "^w1 " "$T/workers" | grep -q "$k" ||
	    fail "r3qctl workers does not list kind $k: $(cat "$T/workers")"
done
ok "r3qctl workers lists the configured kinds"

# The exec example through r3qctl map: outputs in input order.
printf '1 2 3\n4 5\n0\n-1.5\n' | "$R3QCTL" map sphere > "$T/sphere.out" ||
    fail "r3qctl map sphere failed"
printf '14\n41\n0\n2.25\n' | cmp -s - "$T/sphere.out" ||
    fail "sphere gave: $(cat "$T/sphere.out")"
ok "an exec kind in shell (examples/sphere.sh) through r3qctl map"

# The persistent and plugin examples through libr3q: the ES's answer.
ES="--mu 6 --lambda 12 --dim 8 --generations 4 --seed 9"
"$R3QCTL" es --local $ES --lu 40 --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
for k in ridge-py ridge-c ridge-so; do
	"$top_builddir/examples/es-client" $ES --lu 40 --kind "$k" \
	    --csv "$T/$k.csv" > "$T/$k.out" 2>&1 ||
	    fail "es-client --kind $k failed: $(cat "$T/$k.out")"
	cmp -s "$T/local.csv" "$T/$k.csv" ||
	    fail "kind $k's ES differs from ridge-lu's: $(diff "$T/local.csv" "$T/$k.csv" | head -5)"
done
ok "persistent Python, persistent C and plugin kinds give ridge-lu's answer bit for bit"

# Failure modes: the task fails, and says why.
failing() {
	_kind=$1 _want=$2
	echo x | "$R3QCTL" map --timeout 60 "$_kind" > "$T/f.out" 2> "$T/f.err" &&
	    fail "kind $_kind succeeded"
	grep -q -- "$_want" "$T/f.err" ||
	    fail "kind $_kind: expected '$_want', got: $(cat "$T/f.err")"
}
failing fail-exit "exit status 3.*no good input"
failing fail-signal "signal 11"
failing hang "timeout after 1 s"
failing big "max_output"
failing pfail "bad individual: 1 bytes"
failing pspin "timeout after 1 s"
ok "non-zero exit, a signal, a timeout, too much output, a plugin's error and a plugin's timeout fail the task, saying which"

head -c 400000 /dev/zero | tr '\0' 'a' | "$R3QCTL" map noread > "$T/noread.out" ||
    fail "a kind that reads no input failed"
grep -qx fine "$T/noread.out" || fail "noread gave: $(cat "$T/noread.out")"
ok "a program that reads none of a 400 KB payload still succeeds"

echo x | "$R3QCTL" map env > "$T/env.out" || fail "kind env failed"
grep -qx "FOO=bar baz OMP_NUM_THREADS=1 PATH=/usr/local/bin:/usr/bin:/bin workdir-ok" "$T/env.out" ||
    fail "the environment is not exactly the configured one: $(cat "$T/env.out")"
ok "a kind's environment is exactly what the file gives, in a working directory of its own"
# The other copy of the task may still be being interrupted when map
# returns: its directory goes once its process is reaped.
waitfor '! ls -d /var/tmp/r3q-env-*' 10 ||
    fail "working directories left behind: $(ls -d /var/tmp/r3q-env-*)"
ok "working directories are removed"

# A persistent process that exits after its first task is started again.
seq 1 6 | "$R3QCTL" map --timeout 60 once > "$T/once.out" 2> "$T/once.err" || true
[ "$(grep -c '^once$' "$T/once.out")" -ge 2 ] ||
    fail "the one-task server was not restarted: $(cat "$T/once.out" "$T/once.err")"
echo x | "$R3QCTL" map once > /dev/null || fail "kind once is broken for good"
ok "a persistent process that exits is restarted for the next task"

kill -0 "$WPID_w1" && kill -0 "$WPID_w2" || fail "a worker died"
master_alive
ok "both workers and the master survived every failure"

# A broken kind is refused with file:line.
printf 'plugin bad = /nonexistent.so\n' > "$T/bad1.conf"
"$WORKERD" -n -f "$T/bad1.conf" > /dev/null 2> "$T/bad.err" && fail "a missing plugin was accepted"
grep -q "^$T/bad1.conf:1: plugin bad: /nonexistent.so: No such file" "$T/bad.err" ||
    fail "missing plugin: $(cat "$T/bad.err")"
printf 'exec ridge-lu = /bin/cat\n' > "$T/bad2.conf"
"$WORKERD" -n -f "$T/bad2.conf" > /dev/null 2> "$T/bad.err" && fail "a built-in name was taken"
grep -q "^$T/bad2.conf:1: exec ridge-lu: 'ridge-lu' is a built-in kind" "$T/bad.err" ||
    fail "built-in name: $(cat "$T/bad.err")"
printf 'timeout nosuch = 1s\n' > "$T/bad3.conf"
"$WORKERD" -n -f "$T/bad3.conf" > /dev/null 2> "$T/bad.err" && fail "an option for no kind was accepted"
grep -q "^$T/bad3.conf:1: no 'exec nosuch' or 'plugin nosuch' line" "$T/bad.err" ||
    fail "undefined kind: $(cat "$T/bad.err")"
printf 'plugin abi = %s\n' "$top_builddir/tests/plugins/.libs/abi99.so" > "$T/bad5.conf"
"$WORKERD" -n -f "$T/bad5.conf" > /dev/null 2> "$T/bad.err" && fail "a plugin of another ABI was accepted"
grep -q "^$T/bad5.conf:1: plugin abi: .*abi99.so: plugin ABI 99, workerd speaks 1" "$T/bad.err" ||
    fail "ABI mismatch: $(cat "$T/bad.err")"
printf 'plugin norun = %s\n' "$top_builddir/tests/plugins/.libs/no-run.so" > "$T/bad6.conf"
"$WORKERD" -n -f "$T/bad6.conf" > /dev/null 2> "$T/bad.err" && fail "a plugin without run was accepted"
grep -q "no symbol r3q_plugin_run" "$T/bad.err" ||
    fail "missing symbol: $(cat "$T/bad.err")"
printf 'plugin initfail = %s\n' "$top_builddir/tests/plugins/.libs/init-fail.so" > "$T/bad7.conf"
cat "$T/w1.conf" | grep -v '^plugin\|^exec\|^timeout\|^env\|^kill_grace' >> "$T/bad7.conf"
"$WORKERD" -d -f "$T/bad7.conf" > /dev/null 2> "$T/bad.err" && fail "a plugin whose init fails was started"
grep -q "init failed" "$T/bad.err" || fail "init failure: $(cat "$T/bad.err")"
printf 'exec rel = bin/cat\n' > "$T/bad4.conf"
"$WORKERD" -n -f "$T/bad4.conf" > /dev/null 2> "$T/bad.err" && fail "a relative path was accepted"
grep -q "^$T/bad4.conf:1: exec rel: 'bin/cat' is not an absolute path" "$T/bad.err" ||
    fail "relative path: $(cat "$T/bad.err")"
ok "workerd -n refuses a missing plugin, another ABI, a missing symbol, a built-in name, an undefined kind, a relative path; a failing init stops start-up"

cp "$T/w1.conf" "$T/loose.conf"
chmod 666 "$T/loose.conf"
"$WORKERD" -n -f "$T/loose.conf" > /dev/null 2> "$T/loose.err" ||
    fail "workerd -n failed on a loose file: $(cat "$T/loose.err")"
grep -q "warning: $T/loose.conf is writable by everyone" "$T/loose.err" ||
    fail "no warning for a world-writable workerd.conf: $(cat "$T/loose.err")"
ok "workerd -n warns when others can write workerd.conf"
