# Configured kinds change under a running worker (SIGHUP, systemctl reload
# workerd): a kind is added, one removed and one changed while its tasks
# run; the running tasks finish under the definition they came with, the
# master hears of the new set at once, and a reload with a kind that does
# not open changes nothing.  Then relative suspect detection (seed 002)
# catches a worker whose exec kind hangs exactly as it catches one whose
# built-in kind does, and the ES still gives the --local answer.
. "${top_srcdir:-.}/tests/regress/lib.sh"

K=$T/k
mkdir -p "$K"
# The slow tasks must outlast a poll of r3qctl workers: 2 s, SAN_SLOW
# times that under a sanitizer (where one poll took 2.5 s on a loaded
# machine and the tasks were done before it saw them run).
cat > "$K/slow.sh" <<EOF
#!/bin/sh
cat > /dev/null
sleep $((2 * SAN_SLOW))
echo old
EOF
cat > "$K/slow2.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
echo new
EOF
cat > "$K/b.sh" <<'EOF'
#!/bin/sh
echo b
EOF
cat > "$K/hang.sh" <<'EOF'
#!/bin/sh
exec sleep 3600
EOF
# Ridge of the es payload (u32 lu, u32 flags, f64 work_ms, f64 x[]), as
# ridge-lu computes it, in about 100 ms (half way said after 50): a
# generation lasts longer than suspect_grace, so detection has time.
cat > "$K/ridge.py" <<'EOF'
import struct, sys, time
p = sys.stdin.buffer.read()
time.sleep(0.05)
sys.stderr.write("r3q: half\n")
sys.stderr.flush()
time.sleep(0.05)
x = struct.unpack("<%dd" % ((len(p) - 16) // 8), p[16:])
s = f = 0.0
for v in x:
    s += v
    f += s * s
sys.stdout.buffer.write(struct.pack("<d", f))
EOF
chmod 755 "$K"/*.sh

mkcerts w1 w2
MASTER_EXTRA="suspect_grace = 300ms
heartbeat_timeout = 60s
suspect_limit = 0"
start_master
WORKER_EXTRA="exec slow = $K/slow.sh
exec a = /bin/cat"
start_worker w1 2
wait_workers 1

# Two slow tasks run while the kinds change: a goes, b comes.
printf '1\n2\n' | "$R3QCTL" map slow > "$T/slow1.out" 2>&1 &
mpid=$!
waitfor "'$R3QCTL' workers | awk '\$1 == \"w1\" && \$8 == 2 { f = 1 } END { exit !f }'" $((10 * SAN_SLOW)) ||
    fail "the slow tasks did not start: $("$R3QCTL" workers)"
sed -i "s|^exec a = .*|exec b = $K/b.sh|" "$T/w1.conf"
kill -HUP "$WPID_w1"
waitfor "grep -qE 'worker w1 now runs kinds: ridge-lu .*slow b$' '$T/masterd.log'" 10 ||
    fail "the master did not hear of the new kinds"
wait $mpid || fail "the running tasks were disturbed: $(cat "$T/slow1.out")"
printf 'old\nold\n' | cmp -s - "$T/slow1.out" || fail "slow gave: $(cat "$T/slow1.out")"
ok "a reload adds and removes kinds; tasks of a kind that stays run on"

"$R3QCTL" workers > "$T/workers"
grep "^w1 " "$T/workers" | grep -q ',slow,b ' ||
    fail "r3qctl workers does not show the new kinds: $(cat "$T/workers")"
echo x | "$R3QCTL" map b > "$T/b.out" && grep -qx b "$T/b.out" ||
    fail "the new kind does not run"
ok "r3qctl workers lists the new set, and the new kind runs"

# A kind changed while its task runs: that task finishes as it began.
echo 1 | "$R3QCTL" map slow > "$T/slow2.out" 2>&1 &
mpid=$!
waitfor "'$R3QCTL' workers | awk '\$1 == \"w1\" && \$8 == 1 { f = 1 } END { exit !f }'" $((10 * SAN_SLOW)) ||
    fail "the slow task did not start"
sed -i "s|^exec slow = .*|exec slow = $K/slow2.sh|" "$T/w1.conf"
kill -HUP "$WPID_w1"
waitfor "grep -c 'reloaded' '$T/w1.log' | grep -qx 2" 10 || fail "no second reload"
wait $mpid || fail "the changed kind's task failed: $(cat "$T/slow2.out")"
grep -qx old "$T/slow2.out" || fail "the running task changed definition: $(cat "$T/slow2.out")"
echo 1 | "$R3QCTL" map slow > "$T/slow3.out" && grep -qx new "$T/slow3.out" ||
    fail "the next task did not run the new definition: $(cat "$T/slow3.out")"
ok "a changed kind: its running task ends under the old definition, the next runs the new"

echo "plugin bad = /nonexistent.so" >> "$T/w1.conf"
kill -HUP "$WPID_w1"
waitfor "grep -q 'keeping the running configuration' '$T/w1.log'" 10 ||
    fail "a broken reload was not refused"
echo x | "$R3QCTL" map b > "$T/b.out" && grep -qx b "$T/b.out" ||
    fail "a refused reload broke the kinds"
ok "a reload whose plugin is missing changes nothing"

# Suspect detection with an exec kind: w2's fit hangs, w1's does not.
kill "$WPID_w1"
wait "$WPID_w1" 2>/dev/null || true
WORKER_EXTRA="exec fit = /usr/bin/python3 $K/ridge.py"
start_worker w1 1
WORKER_EXTRA="exec fit = $K/hang.sh"
start_worker w2 1
wait_workers 2
ES="--mu 4 --lambda 12 --dim 6 --generations 3 --seed 5"
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
"$top_builddir/examples/es-client" $ES --kind fit --policy r3q \
    --csv "$T/fit.csv" > "$T/fit.out" 2>&1 || fail "es-client failed: $(cat "$T/fit.out")"
cmp -s "$T/local.csv" "$T/fit.csv" || fail "the ES answer differs"
grep -q 'worker w2 suspect:' "$T/masterd.log" ||
    fail "the worker whose exec kind hangs was never suspect"
"$R3QCTL" workers > "$T/workers"
susp=$(awk '$1 == "w2" { print $13 }' "$T/workers")
[ "${susp:-0}" -ge 1 ] || fail "r3qctl workers: w2 suspect ${susp:-?} times: $(cat "$T/workers")"
ok "a worker whose exec kind hangs becomes suspect; the ES gives the --local answer"
