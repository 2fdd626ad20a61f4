# A program whose tasks no worker can take says why instead of hanging
# without a word: a cluster whose workers do not offer the generic kind
# python yet (the administrator has not enabled it), and a named kind no
# worker offers, from Client.map and from r3qctl map.  Such tasks wait
# (workers come and go): after five seconds without an outcome the
# client asks masterd why (r3q_job_waiting) and prints it once on
# stderr, with the workerd.conf line for kind python; once a worker
# offering the kinds joins, the programs finish with their answers.  A
# program whose tasks run says nothing.
. "${top_srcdir:-.}/tests/regress/lib.sh"

python_client tests/python

mkcerts w1 w2
start_master
WORKER_EXTRA="exec other = /bin/cat"
start_worker w1 1
wait_workers 1

mkdir "$T/prog"
cat > "$T/prog/futures_prog.py" <<'EOF'
from r3q import futures

def f(x):
    return x * 3

if __name__ == "__main__":
    print(list(futures.map(f, range(5))))
EOF
cat > "$T/prog/named.py" <<'EOF'
import r3q
with r3q.Client(name="named") as c:
    print(c.map("late", [b"a", b"b"]))
EOF
(cd "$T/prog" && exec "${PYLIB[@]}" -m r3q futures_prog.py) \
    > "$T/fut.out" 2> "$T/fut.err" &
FUT=$!
"${PYLIB[@]}" "$T/prog/named.py" > "$T/named.out" 2> "$T/named.err" &
NAMED=$!
printf 'x\ny\n' | "$R3QCTL" map late > "$T/map.out" 2> "$T/map.err" &
MAP=$!

waitfor "grep -q 'waits: no worker offers kind python' '$T/fut.err'" 40 ||
    fail "r3q.futures said nothing of kind python: $(cat "$T/fut.err")"
grep -q 'exec python = persistent /usr/bin/python3 -m r3q.serve --any' \
    "$T/fut.err" || fail "no workerd.conf line: $(cat "$T/fut.err")"
grep -q 'r3qctl workers' "$T/fut.err" ||
    fail "r3qctl workers not named: $(cat "$T/fut.err")"
waitfor "grep -q 'waits: no worker offers kind late' '$T/named.err'" 40 ||
    fail "Client.map said nothing of kind late: $(cat "$T/named.err")"
waitfor "grep -q 'r3qctl: job [0-9]* waits: no worker offers kind late' \
    '$T/map.err'" 40 || fail "r3qctl map said nothing: $(cat "$T/map.err")"
kill -0 "$FUT" 2>/dev/null && kill -0 "$NAMED" 2>/dev/null &&
    kill -0 "$MAP" 2>/dev/null ||
    fail "a waiting program ended: $(cat "$T"/*.err)"
ok "a program whose kind no worker offers says so, and waits"

WORKER_EXTRA="exec python = persistent $PY -m r3q.serve --any
exec late = /bin/cat
env = PYTHONPATH=$PYTHONPATH"
start_worker w2 1
wait_workers 2
timeout 60 tail --pid="$FUT" -f /dev/null; wait "$FUT" ||
    fail "the futures program failed: $(cat "$T/fut.err")"
timeout 60 tail --pid="$NAMED" -f /dev/null; wait "$NAMED" ||
    fail "the named-kind program failed: $(cat "$T/named.err")"
[ "$(cat "$T/fut.out")" = "[0, 3, 6, 9, 12]" ] ||
    fail "futures program: $(cat "$T/fut.out")"
[ "$(cat "$T/named.out")" = "[b'a', b'b']" ] ||
    fail "named program: $(cat "$T/named.out")"
timeout 60 tail --pid="$MAP" -f /dev/null; wait "$MAP" ||
    fail "r3qctl map failed: $(cat "$T/map.err")"
[ "$(cat "$T/map.out")" = "$(printf 'x\ny')" ] ||
    fail "r3qctl map: $(cat "$T/map.out")"
[ "$(grep -c waits "$T/fut.err")" -eq 1 ] ||
    fail "said more than once: $(cat "$T/fut.err")"
ok "all finish once a worker offers their kinds, having said it once"

# Tasks that run (longer than the five seconds): nothing said.
cat > "$T/prog/slow.py" <<'EOF'
import time
from r3q import futures

def nap(x):
    time.sleep(7)
    return x

if __name__ == "__main__":
    print(futures.submit(nap, 1).result())
EOF
(cd "$T/prog" && timeout 60 "${PYLIB[@]}" -m r3q slow.py) \
    > "$T/slow.out" 2> "$T/slow.err" ||
    fail "slow program: $(cat "$T/slow.err")"
[ "$(cat "$T/slow.out")" = 1 ] && [ ! -s "$T/slow.err" ] ||
    fail "slow program: $(cat "$T/slow.out" "$T/slow.err")"
ok "a task that runs long is waited for without a word"
