# Priorities and copies end to end, through libr3q, masterd and the core:
# on one single-CPU worker under WQ a batch's tasks run lowest priority
# first whatever order they were submitted in; a task with copies = 2
# runs on both workers at once, and its output comes back once.
. "${top_srcdir:-.}/tests/regress/lib.sh"

PRIO=$top_builddir/tests/regress/r3q-prioclient

mkcerts w1 w2
start_master
start_worker w1
wait_workers 1
timeout 60 "$PRIO" order 50 > "$T/order" 2> "$T/order.err" ||
    fail "order: $(cat "$T/order.err")"
seq 0 49 | cmp -s - "$T/order" || fail "not in priority order: $(tr '\n' ' ' < "$T/order")"
ok "50 tasks submitted in a shuffled order ran lowest priority first"

start_worker w2
wait_workers 2
timeout 60 "$PRIO" copies 2 > "$T/copies" 2> "$T/copies.err" ||
    fail "copies: $(cat "$T/copies.err")"
grep -q '^copied job ' "$T/copies" || fail "copies: $(cat "$T/copies")"
job=$(sed -n 's/^copied job //p' "$T/copies")
"$R3QCTL" result "$job" > "$T/res"
grep -q "1 tasks done" "$T/res" || fail "the task counted twice: $(cat "$T/res")"
grep -q "^replicas 1," "$T/res" || fail "no second copy: $(cat "$T/res")"
ok "a task with copies = 2 ran as two copies and came back once"
