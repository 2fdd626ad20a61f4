# A client's spin (r3q(3), common/spin.h), through r3qctl map, which is
# libr3q: a wait for the only task in flight polls the connection before
# it sleeps (poll with no timeout, again and again: strace counts them),
# a wait for many tasks does not, spin = 0 never does; each way every
# output comes back in order.  A bad R3Q_SPIN, or a bad spin in the
# R3Q_CONFIG file, is refused naming the variable or the file before
# anything reaches the master, and R3Q_SPIN wins over the file.
. "${top_srcdir:-.}/tests/regress/lib.sh"

command -v strace > /dev/null || fail "strace is not installed (scripts/deps.sh installs it)"

mkcerts w1
start_master
start_worker w1 1
wait_workers 1
seq 1 50 > "$T/in"

# Under ASan, LeakSanitizer cannot run in a traced process (it stops the
# process with a fatal error at exit): the runs under strace leave leaks
# to the others.
ASAN_TRACED=${ASAN_OPTIONS:-}
[ "${R3Q_SANITIZE:-}" != address ] || ASAN_TRACED=$ASAN_TRACED:detect_leaks=0

# polls SPIN ARGS...: r3qctl map ARGS with R3Q_SPIN=SPIN under strace;
# sets ZERO (polls that did not wait) and WAITS (polls that could).
polls() {
	_sp=$1
	shift
	R3Q_SPIN=$_sp ASAN_OPTIONS=$ASAN_TRACED strace -f -e trace=poll \
	    -o "$T/st" "$R3QCTL" map "$@" echo "$T/in" > "$T/out" 2> "$T/err" ||
	    fail "r3qctl map $* with R3Q_SPIN=$_sp: status $?: $(cat "$T/err")"
	cmp -s "$T/in" "$T/out" ||
	    fail "r3qctl map $* with R3Q_SPIN=$_sp: outputs differ from the input: $(head -c 300 "$T/out")"
	ZERO=$(grep -c 'poll(.*, 0)' "$T/st" || :)
	WAITS=$(grep 'poll(' "$T/st" | grep -vc 'poll(.*, 0)' || :)
}

# One task in flight at a time: every wait is a lone one.  A limit of 1s
# (the largest) polls whatever the round trip under strace.
polls 1s --window 1
[ "$ZERO" -ge 50 ] && [ "$WAITS" -lt 25 ] ||
    fail "spin 1s, 50 lone waits: $ZERO polls without waiting (want one a wait at least), $WAITS that could wait (want few)"
ok "spin 1s: 50 lone waits polled $ZERO times and slept $WAITS times; outputs in order"
polls 0 --window 1
[ "$ZERO" -lt 10 ] && [ "$WAITS" -ge 50 ] ||
    fail "spin 0, 50 lone waits: $ZERO polls without waiting (want none), $WAITS that could wait (want one a wait)"
ok "spin 0: the same waits slept at once ($WAITS polls that wait, $ZERO that do not)"
polls 1s
[ "$ZERO" -lt 25 ] ||
    fail "spin 1s, a map of 50 in flight: $ZERO polls without waiting (a wait for many tasks must not poll)"
ok "spin 1s, 50 tasks in flight: $ZERO polls without waiting, outputs in order"
polls ""
ok "the default spin: outputs in order"

# Bad values, from the environment and from the file.
for v in bogus 2s 1m -1 "5 us" 1.5ms; do
	if R3Q_SPIN=$v "$R3QCTL" map echo "$T/in" > "$T/out" 2> "$T/err"; then
		fail "R3Q_SPIN='$v' was taken"
	fi
	grep -qF "R3Q_SPIN: bad spin '$v'" "$T/err" ||
	    fail "R3Q_SPIN='$v': the error does not name it: $(cat "$T/err")"
done
ok "R3Q_SPIN bogus, 2s, 1m, -1, '5 us', 1.5ms: refused, naming R3Q_SPIN"
printf 'spin = 3x\n' > "$T/client.conf"
if R3Q_CONFIG=$T/client.conf "$R3QCTL" map echo "$T/in" > "$T/out" 2> "$T/err"; then
	fail "spin = 3x in R3Q_CONFIG's file was taken"
fi
grep -qF "$T/client.conf: spin: bad spin '3x'" "$T/err" ||
    fail "spin = 3x: the error does not name the file and the key: $(cat "$T/err")"
ok "spin = 3x in the R3Q_CONFIG file: refused, naming the file and the key"
R3Q_SPIN=0 R3Q_CONFIG=$T/client.conf "$R3QCTL" map echo "$T/in" > "$T/out" 2> "$T/err" ||
    fail "R3Q_SPIN=0 over a bad spin in the file: $(cat "$T/err")"
cmp -s "$T/in" "$T/out" || fail "R3Q_SPIN=0 over the file: outputs differ"
ok "R3Q_SPIN wins over the file's spin"

# What was refused never reached the master: the four runs under strace
# and the last one are its only jobs.
n=$("$R3QCTL" jobs | tail -n +2 | wc -l)
[ "$n" -eq 5 ] || fail "the master has $n jobs, want 5: $("$R3QCTL" jobs)"
ok "the refused runs opened no job"
