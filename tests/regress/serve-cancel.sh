# Cancels against "python3 -m r3q.serve --any" as workerd sends them:
# pipelined tasks of 0-100 us and a cancel of the first of each pair
# within 200 us (tests/python/serve_cancel.py), 3 x 2,000 rounds.  Every
# task is answered once, in order, with its exact result or "cancelled".
# A cancel's SIGIO handler reads the same input as the process arming the
# interrupt; before it was kept out, it reordered or lost a chunk of the
# input within a few dozen rounds: a task answered "not a payload of
# r3q.futures", or the process waited for ever for one it had been sent
# (a map on the cluster that never ended).  Before that, in its own
# process, the guard: a SIGIO blocked during a read, or its handler due
# there, interrupts after the read and is not lost.  And a first task
# cancelled as its function ran made the process forget the script,
# which the next task imported again (its top level ran twice).
. "${top_srcdir:-.}/tests/regress/lib.sh"

PY=${PYTHON:-/usr/bin/python3}
src=$(cd "$top_srcdir" && pwd)
export PYTHONPATH=$src/python
# It ships itself, from the current directory, as a script's files go.
cp "$src/tests/python/serve_cancel.py" "$T/"
rc=0
(cd "$T" && timeout 600 "$PY" serve_cancel.py 2000 1 2 3) \
    > "$T/serve-cancel.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] ||
    fail "serve_cancel.py: exit status $rc; its last lines: $(tail -n 5 "$T/serve-cancel.out")"
cat "$T/serve-cancel.out"
ok "r3q.serve --any: 12,000 tasks, each answered once, in order, cancels in between"
