# masterd out of file descriptors.  Its open-files limit is cut to 40
# while it runs (prlimit), and 60 emulated workers (r3q-testpeer swarm)
# try to join: masterd takes what fits, then stops accepting for a second
# at a time with one log line each time (not one per failed accept(),
# which would fill the disk), keeps serving the workers it has, and once
# the swarm goes away takes new connections again: a real workerd joins
# and a job runs to the --local answer.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 4 --lambda 8 --dim 10 --generations 3 --lu 0 --seed 5"

command -v prlimit > /dev/null || fail "prlimit (util-linux) is needed"
mkcerts w1
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
start_master
prlimit --nofile=40:40 --pid "$MASTER_PID" ||
    fail "cannot lower masterd's limit"

"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/client.pem" \
    -k "$T/certs/client.key" swarm 127.0.0.1 "$PORT" 60 \
    "$T/certs/ca.key" > "$T/swarm.out" 2>&1 &
SWARM=$!
PIDS="$PIDS $SWARM"
waitfor "grep -q 'no new connections for 1s' '$T/masterd.log'" 20 ||
    fail "masterd did not pause accepting at its limit"
ok "masterd at its limit pauses accepting"
sleep 3
master_alive
n=$(grep -c 'no new connections for 1s' "$T/masterd.log")
[ "$n" -ge 1 ] && [ "$n" -le 8 ] ||
    fail "$n pause lines in about 3 s: one per second expected"
grep -qF 'Too many open files' "$T/masterd.log" ||
    fail "the pause line does not say why"
joined=$(grep -c ' joined from ' "$T/masterd.log" || true)
[ "$joined" -ge 10 ] && [ "$joined" -lt 60 ] ||
    fail "$joined swarm workers joined under a limit of 40 descriptors"
ok "$joined workers joined, $n pause lines in about 3 s"

kill -TERM "$SWARM" 2>/dev/null || true
wait "$SWARM" 2>/dev/null || true
waitfor "! \"$R3QCTL\" workers | grep -q swarm-" 10 ||
    fail "the swarm's connections did not go"
start_worker w1
wait_workers 1
"$R3QCTL" es $ES --csv "$T/dist.csv" --quiet > /dev/null ||
    fail "job failed after the pause"
cmp -s "$T/local.csv" "$T/dist.csv" ||
    fail "the answer differs from --local"
ok "descriptors freed: a worker joins and the job gives the --local answer"
