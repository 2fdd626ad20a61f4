# r3qctl es and r3qctl wait show one plain line per generation wherever
# their output goes: into a file, into a pipe (as `scripts/demo | tee`
# does) and on a terminal alike, with no carriage return or terminal
# escape, each line passed on as its generation ends rather than when the
# job is over.  --quiet leaves the lines out, and es --json prints only its
# one JSON line.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 5 --lambda 10 --dim 5 --generations 4 --seed 3"

# check_gens FILE: one progress line per generation 0 to 4, in order, and
# nothing a terminal would interpret.
check_gens() {
	grep '^gen ' "$1" | awk '{ print $2 }' | tr '\n' ' ' > "$T/gens"
	[ "$(cat "$T/gens")" = "0 1 2 3 4 " ] ||
	    fail "$1: generations $(cat "$T/gens"), not 0 to 4: $(cat "$1")"
	grep -E '^gen +[0-9]+  best [-+0-9.e]+ +elapsed +[0-9.]+s$' "$1" |
	    wc -l | grep -qx 5 || fail "$1: malformed progress lines: $(cat "$1")"
	if LC_ALL=C grep -q "$(printf '[\r\033]')" "$1"; then
		fail "$1: carriage return or escape in the output"
	fi
}

mkcerts w1
start_master
start_worker w1 2
wait_workers 1

"$R3QCTL" es $ES > "$T/file.out" || fail "es into a file failed"
check_gens "$T/file.out"
answer "$T/file.out" | grep -q '^best fitness: ' || fail "no result after the lines"
"$R3QCTL" es $ES | cat > "$T/pipe.out" || fail "es into a pipe failed"
check_gens "$T/pipe.out"
script -qec "R3Q_CONTROL=$R3Q_CONTROL $R3QCTL es $ES" /dev/null |
    tr -d '\r' > "$T/tty.out"
check_gens "$T/tty.out"
for f in file pipe tty; do
	grep '^gen ' "$T/$f.out" | sed 's/elapsed .*//' > "$T/$f.gens"
done
cmp -s "$T/file.gens" "$T/tty.gens" && cmp -s "$T/file.gens" "$T/pipe.gens" ||
    fail "a terminal, a pipe and a file get other lines"
ok "es: one plain line per generation into a file, a pipe and a terminal"

"$R3QCTL" es $ES --quiet > "$T/quiet.out" || fail "es --quiet failed"
grep -q '^gen ' "$T/quiet.out" && fail "es --quiet printed progress"
"$R3QCTL" es $ES --json | cat > "$T/json.out" || fail "es --json failed"
[ "$(wc -l < "$T/json.out")" -eq 1 ] && grep -qE '^\{"job":[0-9]+,.*\}$' "$T/json.out" ||
    fail "es --json printed more than its JSON: $(cat "$T/json.out")"
ok "es --quiet prints no progress, es --json only its JSON"

job=$("$R3QCTL" submit es $ES)
"$R3QCTL" wait "$job" | cat > "$T/wait.out" || fail "wait into a pipe failed"
check_gens "$T/wait.out"
tail -n 1 "$T/wait.out" | grep -qx "job $job done" || fail "wait: $(cat "$T/wait.out")"
"$R3QCTL" wait --quiet "$job" > "$T/waitq.out" || fail "wait --quiet failed"
[ "$(cat "$T/waitq.out")" = "job $job done" ] ||
    fail "wait --quiet: $(cat "$T/waitq.out")"
ok "wait: the same lines into a pipe, only the last with --quiet"

# A line reaches the pipe when its generation ends, not when the job does:
# with a second a task the job is still running when generation 0 shows.
"$R3QCTL" es --mu 1 --lambda 1 --dim 2 --generations 100 --work-ms 1000 |
    cat > "$T/live.out" &
PIDS="$PIDS $!"
waitfor "grep -q '^gen    0 ' '$T/live.out'" 20 ||
    fail "no line for generation 0 in the pipe: $(cat "$T/live.out")"
job=$(sed -n 's/^job \([0-9]*\):.*/\1/p' "$T/live.out")
"$R3QCTL" jobs | grep -qE "^$job +running" ||
    fail "job $job is not running any more: $("$R3QCTL" jobs)"
"$R3QCTL" cancel "$job" > /dev/null
ok "each line goes down the pipe as its generation ends"
