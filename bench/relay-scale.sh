#!/bin/sh
# masterd's memory and CPU with N emulated workers (r3q-testpeer swarm)
# connected directly, then behind one relay, then behind 10 relays (N/10
# each) (issue 20, "Scale").  Then, in each setting, masterd's CPU per
# task: TASKS (10000) no-op tasks (kind echo, r3qctl map, policy wq),
# which the swarm answers at once; a table, and CSV in $CSV
# (relay-scale.csv).  The relays run tasks too (cpus = 1), as any relay.
# Run from the build directory:
#   top_builddir=. top_srcdir=.. sh ../bench/relay-scale.sh [N [TASKS]]
. "${top_srcdir:-.}/tests/regress/lib.sh"
N=${1:-1000}
TASKS=${2:-10000}
CSV=${CSV:-relay-scale.csv}
seq 1 "$TASKS" > "$T/tasks.in"
echo "setting,workers,tasks,masterd_cpu_ticks,us_per_task,wall_s,tasks_per_s,masterd_rss_kb" > "$CSV"
ROWS=""
# run_tasks LABEL: TASKS echo tasks; masterd's CPU for them, per task.
run_tasks() {
	_c0=$(cpu "$MASTER_PID")
	_t0=$(date +%s%N)
	"$R3QCTL" map --policy wq echo "$T/tasks.in" > "$T/tasks.out" ||
	    fail "$1: the map failed"
	_t1=$(date +%s%N)
	_c1=$(cpu "$MASTER_PID")
	[ "$(wc -l < "$T/tasks.out")" -eq "$TASKS" ] || fail "$1: outputs missing"
	_ticks=$((_c1 - _c0))
	_w=$(( (_t1 - _t0) / 1000000 ))
	_us=$(awk -v t="$_ticks" -v n="$TASKS" 'BEGIN { printf "%.1f", t * 10000 / n }')
	_ws=$(awk -v w="$_w" 'BEGIN { printf "%.2f", w / 1000 }')
	_tps=$(awk -v w="$_w" -v n="$TASKS" 'BEGIN { printf "%.0f", n * 1000 / (w > 0 ? w : 1) }')
	_row="$1,$N,$TASKS,$_ticks,$_us,$_ws,$_tps,$(rss "$MASTER_PID")"
	echo "$_row" >> "$CSV"
	ROWS="$ROWS $_row"
	echo "$1: $TASKS tasks on $N workers: masterd CPU $_ticks ticks, $_us us a task, $_ws s"
}
ulimit -n 16384
"$MKCERTS" --relay r1 --relay q1 --relay q2 --relay q3 --relay q4 \
    --relay q5 --relay q6 --relay q7 --relay q8 --relay q9 --relay q10 \
    "$T/certs" w1 > /dev/null
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start_master
base=$(rss "$MASTER_PID")
c0=$(cpu "$MASTER_PID")
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/client.pem" -k "$T/certs/client.key" \
    swarm 127.0.0.1 "$PORT" "$N" "$T/certs/ca.key" swarm echo > "$T/swarm1.out" 2>&1 &
S=$!
waitfor "grep -q 'workers joined' '$T/swarm1.out'" 300 || fail "swarm: $(cat "$T/swarm1.out")"
sleep 10
c1=$(cpu "$MASTER_PID")
echo "direct: $N workers: masterd RSS $(rss "$MASTER_PID") kB (idle $base kB), $(( ($(rss "$MASTER_PID") - base) * 1024 / N )) B a worker; CPU $(( c1 - c0 )) ticks to join and 10 s of heartbeats; $(cat "$T/swarm1.out" | head -n 1)"
run_tasks direct
kill "$S"; wait "$S" 2>/dev/null
kill "$MASTER_PID"; wait "$MASTER_PID" 2>/dev/null
rm -f "$T/journal.db"*; : > "$T/masterd.log"
start_master
base=$(rss "$MASTER_PID")
cat > "$T/r1.conf" <<EOC
master = 127.0.0.1:$PORT
ca = $T/certs/ca.pem
cert = $T/certs/r1.pem
key = $T/certs/r1.key
cpus = 1
relay_listen = 127.0.0.1:0
EOC
"$WORKERD" -d -f "$T/r1.conf" >> "$T/r1.log" 2>&1 &
R=$!
PIDS="$PIDS $R"
waitfor "grep -q 'listening on' '$T/r1.log'" 10 || fail "relay did not start"
RP=$(sed -n "s/.*listening on [0-9.]*:\([0-9]*\).*/\1/p" "$T/r1.log")
c0=$(cpu "$MASTER_PID")
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/client.pem" -k "$T/certs/client.key" \
    swarm 127.0.0.1 "$RP" "$N" "$T/certs/ca.key" swarm echo > "$T/swarm2.out" 2>&1 &
S=$!
waitfor "grep -q 'workers joined' '$T/swarm2.out'" 300 || fail "swarm via relay: $(cat "$T/swarm2.out")"
sleep 10
c1=$(cpu "$MASTER_PID")
echo "via 1 relay: $N workers: masterd RSS $(rss "$MASTER_PID") kB (idle $base kB), $(( ($(rss "$MASTER_PID") - base) * 1024 / N )) B a worker; CPU $(( c1 - c0 )) ticks; relay RSS $(rss "$R") kB; $(cat "$T/swarm2.out" | head -n 1)"
run_tasks 1-relay
kill "$S"; wait "$S" 2>/dev/null
kill "$R"; wait "$R" 2>/dev/null
kill "$MASTER_PID"; wait "$MASTER_PID" 2>/dev/null
rm -f "$T/journal.db"*; : > "$T/masterd.log"
start_master
base=$(rss "$MASTER_PID")
SW=""
c0=$(cpu "$MASTER_PID")
for i in 1 2 3 4 5 6 7 8 9 10; do
	sed -e "s/r1\./q$i./g" -e "s/^master = .*/master = 127.0.0.1:$PORT/" \
	    "$T/r1.conf" > "$T/q$i.conf"
	"$WORKERD" -d -f "$T/q$i.conf" >> "$T/q$i.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "Q$i=$!"
done
for i in 1 2 3 4 5 6 7 8 9 10; do
	waitfor "grep -q 'listening on' '$T/q$i.log'" 20 || fail "relay q$i did not start"
	QP=$(sed -n "s/.*listening on [0-9.]*:\([0-9]*\).*/\1/p" "$T/q$i.log")
	"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/client.pem" -k "$T/certs/client.key" \
	    swarm 127.0.0.1 "$QP" $((N / 10)) "$T/certs/ca.key" "s$i" echo > "$T/sw$i.out" 2>&1 &
	SW="$SW $!"
	PIDS="$PIDS $!"
done
for i in 1 2 3 4 5 6 7 8 9 10; do
	waitfor "grep -q 'workers joined' '$T/sw$i.out'" 300 || fail "swarm $i: $(cat "$T/sw$i.out")"
done
sleep 10
c1=$(cpu "$MASTER_PID")
qrss=0
for i in 1 2 3 4 5 6 7 8 9 10; do eval "q=\$Q$i"; qrss=$((qrss + $(rss "$q"))); done
echo "via 10 relays: $N workers: masterd RSS $(rss "$MASTER_PID") kB (idle $base kB), $(( ($(rss "$MASTER_PID") - base) * 1024 / N )) B a worker; CPU $(( c1 - c0 )) ticks; relays' RSS $qrss kB in all; $("$R3QCTL" workers | tail -n +2 | grep -c " ok ") workers listed"
run_tasks 10-relays
echo
printf '%-10s %8s %8s %12s %12s %8s %10s\n' setting workers tasks "cpu ticks" "us/task" "wall s" "tasks/s"
for r in $ROWS; do
	echo "$r" | awk -F, '{ printf "%-10s %8s %8s %12s %12s %8s %10s\n", $1, $2, $3, $4, $5, $6, $7 }'
done
echo "CSV: $CSV"
kill $SW 2>/dev/null
