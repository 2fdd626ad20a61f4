# Batch jobs through libr3q: the ES written as a client equals
# `r3qctl es --local` under every policy; examples/futures; r3qctl map
# (order, -0, --json, failures, 100,000 tasks); a kind nobody offers waits
# and says so; the bad requests libr3q never sends are refused with a
# clear error; a TLS client sees only its own jobs; a worker certificate
# is no client; a client that stops reading is paused, not buffered; two
# failures in one frame keep their own reasons.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ESCLIENT=$top_builddir/examples/es-client
FUTURES=$top_builddir/examples/futures
ES="--mu 10 --lambda 20 --dim 10 --generations 6 --lu 20 --seed 11"
TLSC="-a $T/certs/ca.pem -c $T/certs/client.pem -k $T/certs/client.key"

mkcerts w1 w2 w3 bad
MASTER_EXTRA="client_buffer = 64K"
start_master
start_worker w1
start_worker w2
start_worker w3
wait_workers 3

# The paper's ES as a client: bit for bit the in-process answer.
"$R3QCTL" es --local $ES --csv "$T/local.csv" > "$T/local.out" ||
    fail "local run failed"
answer "$T/local.out" > "$T/local.ans"
for p in wq rr rwq r3q; do
	timeout 120 "$ESCLIENT" $ES --policy "$p" --csv "$T/$p.csv" \
	    > "$T/$p.out" 2>&1 || fail "es-client under $p: $(tail -3 "$T/$p.out")"
	cmp -s "$T/local.csv" "$T/$p.csv" || fail "$p: bests differ"
	answer "$T/$p.out" | cmp -s - "$T/local.ans" || fail "$p: answer differs"
done
ok "examples/es-client equals r3qctl es --local under wq, rr, rwq, r3q"
"$R3QCTL" jobs | grep -qE '^[0-9]+ +done +r3q .* batch +[0-9]+ es-client \(' ||
    fail "r3qctl jobs does not show the client's job: $("$R3QCTL" jobs)"
ok "r3qctl jobs lists batch jobs with their driver, name and owner"

timeout 60 "$FUTURES" > "$T/futures.out" 2>&1 ||
    fail "examples/futures: $(cat "$T/futures.out")"
grep -q "^cancelled " "$T/futures.out" && grep -q "^signalled" "$T/futures.out" ||
    fail "examples/futures: $(cat "$T/futures.out")"
ok "examples/futures: submit, wait any, cancel, signal from a thread"

# r3qctl map: input order, whatever order the results come in.
seq 1 2000 > "$T/in"
timeout 60 "$R3QCTL" map echo "$T/in" > "$T/out" || fail "map failed"
cmp -s "$T/in" "$T/out" || fail "map output differs from its input"
printf 'a b\0c\0\0d' | timeout 30 "$R3QCTL" map -0 echo > "$T/out0" ||
    fail "map -0 failed"
printf 'a b\0c\0\0d\0' | cmp -s - "$T/out0" || fail "map -0: $(od -c "$T/out0")"
printf 'x"y\n' | timeout 30 "$R3QCTL" map --json echo > "$T/json" ||
    fail "map --json failed"
grep -q '"index":1' "$T/json" && grep -q '"status":"ok"' "$T/json" &&
    grep -q '"output":"x\\"y"' "$T/json" || fail "map --json: $(cat "$T/json")"
ok "r3qctl map keeps input order, with -0 and --json"

# Several clients and jobs at once share the workers; each gets its own.
for c in 1 2 3; do
	seq "$c" 3 3000 | sed "s/^/c$c-/" > "$T/cin$c"
	timeout 120 "$R3QCTL" map echo "$T/cin$c" > "$T/cout$c" 2>&1 &
	eval "CPID$c=\$!"
done
for c in 1 2 3; do
	eval "wait \$CPID$c" || fail "concurrent client $c failed: $(tail -2 "$T/cout$c")"
	cmp -s "$T/cin$c" "$T/cout$c" || fail "concurrent client $c got others' outputs"
done
ok "three clients at once, each with its own job and outputs"

# A task that fails everywhere: stderr names it, the status says so.
printf '1\nabc\n2\n' > "$T/in3"
rc=0
timeout 60 "$R3QCTL" map ridge-lu "$T/in3" > "$T/out3" 2> "$T/err3" || rc=$?
[ "$rc" -eq 1 ] || fail "map with a failing task exited $rc"
grep -q 'task 2 (line 2).*ridge-lu' "$T/err3" || fail "map's error: $(cat "$T/err3")"
ok "a task that fails on every machine makes map exit 1 and say which"

# 100,000 tasks in one client, all outstanding at once.
seq 1 100000 > "$T/big"
timeout 300 "$R3QCTL" map echo "$T/big" > "$T/bigout" || fail "100,000 tasks failed"
cmp -s "$T/big" "$T/bigout" || fail "100,000 tasks: outputs differ"
ok "100,000 futures outstanding in one client"

# A kind no worker offers: the job waits and says why.
echo 1 | timeout 60 "$R3QCTL" map no-such-kind > /dev/null 2>&1 &
MAPPID=$!
waitfor "'$R3QCTL' jobs | grep -q 'waiting: no worker offers kind no-such-kind'" 10 ||
    fail "jobs does not say why: $("$R3QCTL" jobs)"
ok "a job of a kind nobody offers waits, and r3qctl jobs says so"
waiting=$("$R3QCTL" jobs | awk '$2 == "running" { print $1 }' | tail -n 1)

# Requests libr3q never sends.
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" refusals > "$T/ref" 2>&1 ||
    fail "refusals: $(cat "$T/ref")"
expect() {
	grep -q "^$1: $2" "$T/ref" || fail "$1: want '$2', got: $(grep "^$1:" "$T/ref")"
}
expect oversize "error: task 1: payload of 2097152 bytes is over max_payload"
expect empty "error: batch 1 of job [0-9]* has no tasks"
expect priority "error: task 1: priority 1099511627776 is out of range"
expect copies "error: task 1: copies 17 is out of range"
expect nokind "error: bad kind name"
expect batch0 "error: batch numbers start at 1"
expect nojob "error: no such job"
expect good "accepted"
expect afterclose "error: batch 2 of job [0-9]* is closed"
expect again "accepted"
expect dupkey-ok "accepted"
expect kindmix "error: batch 3 has kind echo, not other-kind"
expect dupframe "error: task key 7 appears twice"
expect nobatch "error: job [0-9]* has no batch 99"
expect ackbeyond "error: job [0-9]* has [0-9]* results, not 1000000"
ok "bad requests are refused whole, each with an error naming the culprit"

# A TLS client sees and touches only its own jobs.
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" attach "$waiting" > "$T/att" 2>&1
grep -q "error: no such job $waiting" "$T/att" ||
    fail "attach to another's job: $(cat "$T/att")"
grep -q "client tls:client .* asked for job $waiting of unix:$(id -un): refused" "$T/masterd.log" ||
    fail "the refusal is not logged with both names"
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" jobs > "$T/tj" 2>&1
grep -q "^job $waiting " "$T/tj" && fail "a TLS client sees root's job"
grep -q " tls:client$" "$T/tj" || fail "a TLS client does not see its own jobs: $(cat "$T/tj")"
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" cancel "$waiting" > "$T/tc" 2>&1
grep -q "error: no such job $waiting" "$T/tc" || fail "cancel of another's job: $(cat "$T/tc")"
"$R3QCTL" jobs | grep -qE "^$waiting +running" || fail "root's job was touched"
ok "a TLS client cannot reattach to, see or cancel another's job"
kill "$MAPPID" 2>/dev/null || true
wait "$MAPPID" 2>/dev/null || true
waitfor "'$R3QCTL' jobs | grep -qE '^$waiting +cancelled'" 10 ||
    fail "r3qctl map killed did not cancel its job: $("$R3QCTL" jobs)"
ok "a map interrupted cancels its job"

# A worker certificate is not a client's.
rc=0
echo 1 | R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
    R3Q_CERT=$T/certs/w1.pem R3Q_KEY=$T/certs/w1.key \
    timeout 30 "$R3QCTL" map echo > "$T/wc.out" 2> "$T/wc.err" || rc=$?
[ "$rc" -ne 0 ] || fail "a worker certificate ran a client's job"
grep -q "expected hello" "$T/masterd.log" || fail "masterd did not refuse it"
echo hi | R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
    R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key \
    timeout 30 "$R3QCTL" map echo > "$T/tls.out" || fail "map over TLS failed"
[ "$(cat "$T/tls.out")" = hi ] || fail "map over TLS: $(cat "$T/tls.out")"
ok "a worker certificate cannot be a client; a client certificate can, over TLS"

# A client that stops reading: masterd stops reading it, memory stays bounded.
"$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" noread 200 3 > "$T/nr" 2>&1 ||
    fail "noread: $(cat "$T/nr")"
grep -q "^got 200 outcomes" "$T/nr" || fail "noread: $(cat "$T/nr")"
grep -q "client tls:client .* is not reading its results" "$T/masterd.log" ||
    fail "masterd did not pause the client"
grep -q "client tls:client .* reads its results again" "$T/masterd.log" ||
    fail "masterd did not resume the client"
ok "a client that stops reading is paused, then gets all its results"

# Two failures in one Results frame: each task keeps its own reason.
stop_master() {
	kill "$MASTER_PID"
	wait "$MASTER_PID" 2>/dev/null || true
}
for w in w1 w2 w3; do eval "kill \$WPID_$w"; done
waitfor "[ \$('$R3QCTL' workers | tail -n +2 | wc -l) -eq 0 ]" 10 ||
    fail "workers did not leave"
stop_master
mv "$T/masterd.log" "$T/masterd-1.log"
MASTER_EXTRA="max_attempts = 1"
start_master
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/bad.pem" -k "$T/certs/bad.key" \
    hostile 127.0.0.1 "$PORT" failframe ridge-lu > "$T/hostile.out" 2>&1 &
FAILPEER=$!
PIDS="$PIDS $FAILPEER"
wait_workers 1
job=$("$R3QCTL" submit es --mu 2 --lambda 4 --dim 2 --generations 2 --policy rwq)
timeout 30 "$R3QCTL" wait "$job" > /dev/null 2>&1 || true
"$R3QCTL" result "$job" > "$T/res" 2>&1 || true
grep -qE "task ([0-9]+) failed on worker bad: failed \(injected failure of task \1\)" \
    "$T/res" || fail "the job's error: $(head -3 "$T/res")"
grep -q "tasks 2" "$T/hostile.out" || fail "the worker never had two tasks at once"
ok "two failures in one frame: the job's error names its own task's reason"

# Outputs over the limits: masterd's max_payload, a worker's max_output.
# The failframe peer goes first, by its pid: a job spec (%1) names
# whichever job bash numbered first, which once was masterd.
kill "$FAILPEER" 2>/dev/null || true
wait "$FAILPEER" 2>/dev/null || true
waitfor "! '$R3QCTL' workers | grep -q '^bad '" $((10 * SAN_SLOW)) ||
    fail "the failframe peer did not leave"
"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/bad.pem" -k "$T/certs/bad.key" \
    hostile 127.0.0.1 "$PORT" bigout echo > "$T/bigout.out" 2>&1 &
BIG=$!
PIDS="$PIDS $BIG"
waitfor "'$R3QCTL' workers | grep -q '^bad .*echo'" 10 || fail "bigout did not join"
rc=0
echo small | timeout 30 "$R3QCTL" map echo > /dev/null 2> "$T/big.err" || rc=$?
[ "$rc" -eq 1 ] || fail "an output over max_payload: map exited $rc"
grep -q "output of 2097153 bytes is over max_payload (1048576)" "$T/big.err" ||
    fail "an output over max_payload: $(cat "$T/big.err")"
kill "$BIG"
wait "$BIG" 2>/dev/null || true
waitfor "! '$R3QCTL' workers | grep -q '^bad '" 10 || fail "bigout did not leave"
WORKER_EXTRA="max_output = 100"
start_worker w1
wait_workers 1
rc=0
printf '%0200d\nshort\n' 0 | timeout 30 "$R3QCTL" map echo > "$T/mo.out" 2> "$T/mo.err" ||
    rc=$?
[ "$rc" -eq 1 ] || fail "an output over max_output: map exited $rc"
grep -q "output of 200 bytes is over max_output (100)" "$T/mo.err" ||
    fail "an output over max_output: $(cat "$T/mo.err")"
[ "$(cat "$T/mo.out")" = short ] || fail "the other task's output: $(cat "$T/mo.out")"
ok "an output over masterd's max_payload or a worker's max_output fails its task, saying so"

# r3qctl result and report for a batch job.
job=$("$R3QCTL" jobs | awk '$7 == "batch" { j = $1 } END { print j }')
"$R3QCTL" result "$job" > "$T/bres" || fail "result of a batch job"
grep -q "summary: job $job .* batch job 'map echo' of unix:root" "$T/bres" ||
    fail "result of a batch job: $(cat "$T/bres")"
"$R3QCTL" report "$job" -o "$T/brep" > /dev/null || fail "report of a batch job"
[ -s "$T/brep/report.html" ] || fail "no report for a batch job"
ok "r3qctl result and report work for batch jobs"
