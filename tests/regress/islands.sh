# The island-model ES (issue 22): the cluster's answer equals
# `r3qctl islands --local` bit for bit (best, its island, every island's
# best, the digest of every final state); a worker killed -9 mid-epoch:
# its island runs again elsewhere from its state at the last migration,
# and the answer is still --local's; masterd killed -9 mid-run resumes
# from its journal to the same answer; bad input is refused by name.  With
# workers that have peer_listen, each migration's --migrant-bytes padding
# moves between them as a master-planned total exchange (exchanged_bytes),
# and the answer is still --local's.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ISL="--islands 4 --mu 10 --lambda 20 --dim 10 --generations 40
    --migrate-every 5 --migrants 2 --migrant-bytes 100000 --seed 3"

# The answer without the job's number and its time.
ans() {
	sed -e 's/"job":[0-9]*,//' -e 's/"elapsed_ns":[0-9]*,//' \
	    -e 's/"exchanged_bytes":[0-9]*,//' -e 's/"migration_ns":[0-9]*,//' \
	    -e 's/"exchanges":[0-9]*,//' -e 's/"exchanges_failed":[0-9]*,//' "$1"
}

# Bad input, each refused with a message naming the culprit.
bad() {
	_want=$1
	shift
	if "$R3QCTL" islands "$@" > "$T/bad.out" 2> "$T/bad.err"; then
		fail "islands $* was accepted"
	fi
	grep -q -- "$_want" "$T/bad.err" ||
	    fail "islands $*: no '$_want' in: $(cat "$T/bad.err")"
}
bad "islands 1: an island model needs from 3" --local --islands 1
bad "islands 2: an island model needs from 3" --local --islands 2
bad "migrants 11: an island sends from 1 to mu (10)" --local $ISL --migrants 11
bad "unknown exchange algorithm 'fastest'" --local --exchange-algo fastest
bad "migrate-every 50: must be from 1 to generations (40)" --local $ISL \
    --migrate-every 50
ok "bad input refused, naming the culprit"

"$R3QCTL" islands --local $ISL --json > "$T/local.json" ||
    fail "local run failed"
grep -q '"state":"done"' "$T/local.json" || fail "local run not done"
grep -q '"migrations":7,"migrant_bytes":8400000,' "$T/local.json" ||
    fail "local run: migrations not accounted: $(cat "$T/local.json")"
"$R3QCTL" islands --local $ISL --json --exchange-algo caterpillar \
    --seed 4 > "$T/local4.json" || fail "local run (seed 4) failed"
[ "$(ans "$T/local.json")" != "$(ans "$T/local4.json")" ] ||
    fail "another seed gives the same answer"
ok "--local: an answer, migrations accounted"

# epochs_done of job $1, as masterd says it.
epochs() {
	"$R3QCTL" result "$1" --json 2>/dev/null |
	    sed -n 's/.*"epochs_done":\([0-9]*\),.*/\1/p'
}

# waitfn SECONDS FUNCTION ARGS...: waitfor for this shell's functions.
waitfn() {
	_n=$(($1 * 10))
	shift
	while [ "$_n" -gt 0 ]; do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# Job $1 has done at least $2 epochs.
epochs_ge() {
	_e=$(epochs "$1")
	[ -n "$_e" ] && [ "$_e" -ge "$2" ]
}

# An islands job runs.
job_runs() {
	[ -n "$(running_job)" ]
}

# The running islands job's number.
running_job() {
	"$R3QCTL" jobs | awk '$2 == "running" && $7 == "islands" { print $1 }'
}

mkcerts w1 w2 w3
start_master
start_worker w1
start_worker w2
start_worker w3 2
wait_workers 3
"$R3QCTL" islands $ISL --json > "$T/one.json" || fail "cluster run failed"
[ "$(ans "$T/one.json")" = "$(ans "$T/local.json")" ] ||
    fail "cluster answer differs: $(cat "$T/one.json") vs $(cat "$T/local.json")"
ok "three workers (four CPUs) give the --local answer bit for bit"
"$R3QCTL" islands $ISL --policy rr --json > "$T/rr.json" ||
    fail "rr run failed"
[ "$(ans "$T/rr.json")" = "$(ans "$T/local.json")" ] ||
    fail "rr answer differs"
ok "under rr (replicas, outputs in any order) too"

# What only masterd can check: a task over its max_payload (1 MiB).
rc=0
"$R3QCTL" islands --mu 1000 --dim 100 --lambda 10 --migrants 1 \
    --generations 2 --migrate-every 1 > "$T/big.out" 2> "$T/big.err" || rc=$?
[ "$rc" -eq 1 ] || fail "a job over max_payload: exit $rc, not 1"
grep -q "an island's task is [0-9]* bytes, over max_payload" "$T/big.err" ||
    fail "a job over max_payload: $(cat "$T/big.err")"
"$R3QCTL" jobs | awk '$7 == "islands"' | grep -q running &&
    fail "the refused job runs"
ok "masterd refuses an island task over max_payload, naming it"

# A worker killed -9 mid-epoch: w2 alone runs every island one after the
# other (each epoch task lasts 300 ms), so when it dies it is running
# one; w1 and w3 then run that island's epoch again from its state at
# the last migration, and the rest.
kill -9 "$WPID_w1" "$WPID_w3"
wait_workers 1
"$R3QCTL" islands $ISL --work-ms 300 --json > "$T/kill.json" &
CPID=$!
PIDS="$PIDS $CPID"
waitfn 30 job_runs || fail "the job did not start"
job=$(running_job)
waitfn 60 epochs_ge "$job" 1 || fail "job $job made no progress"
kill -9 "$WPID_w2"
waitfor "grep -q 'worker w2 .* lost' '$T/masterd.log'" 15 ||
    fail "masterd did not notice w2 die"
e=$(epochs "$job")
[ "$e" -lt 8 ] || fail "job $job ended before w2 was killed"
start_worker w1
start_worker w3 2
wait "$CPID" || fail "the job failed after w2 was killed: $(cat "$T/kill.json")"
[ "$(ans "$T/kill.json")" = "$(ans "$T/local.json")" ] ||
    fail "answer differs after the kill: $(cat "$T/kill.json")"
kjob=$job
ok "w2 killed in epoch $e: w1 and w3 took its islands on, --local answer"

# masterd killed -9 mid-run resumes from its journal to the same answer.
"$R3QCTL" islands $ISL --work-ms 500 --json > "$T/crash.json" 2>&1 &
CPID=$!
PIDS="$PIDS $CPID"
waitfn 30 job_runs || fail "the job did not start"
job=$(running_job)
waitfn 60 epochs_ge "$job" 2 || fail "job $job made no progress"
crash_master
wait "$CPID" 2>/dev/null || true
waitfor "grep -q 'job $job resumed at epoch' '$T/masterd.log'" 15 ||
    fail "job $job did not resume"
wait_workers 2
"$R3QCTL" wait "$job" > /dev/null || fail "job $job failed after the crash"
"$R3QCTL" result "$job" --json > "$T/crash.json" ||
    fail "no result of job $job"
[ "$(ans "$T/crash.json")" = "$(ans "$T/local.json")" ] ||
    fail "answer differs after the crash: $(cat "$T/crash.json")"
ok "masterd killed at epoch $(sed -n 's/.*resumed at epoch \([0-9]*\).*/\1/p' "$T/masterd.log" | head -n 1): the resumed job gives the --local answer"

# The finished job as the journal keeps it, after another restart.
crash_master
"$R3QCTL" result "$job" --json > "$T/again.json" ||
    fail "no result of job $job after a restart"
[ "$(ans "$T/again.json")" = "$(ans "$T/local.json")" ] ||
    fail "the journal's answer differs: $(cat "$T/again.json")"
ok "a finished job's answer survives a restart"
master_alive

# The journal's spans of the job w2 died in (read with masterd stopped:
# it holds its journal exclusively): epochs before e all ran on w2, and an
# island of epoch e, under way when w2 died, ended on another worker.
kill -9 "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
if command -v sqlite3 >/dev/null 2>&1; then
	# (packed in the journal: spans.py unpacks them)
	spans="python3 $top_srcdir/tests/regress/spans.py"
	q="select count(*) from spans where job = $kjob and outcome = 0"
	n=$($spans "$T/journal.db" "$q and gen < $e and worker != 'w2'")
	[ "$n" -eq 0 ] || fail "epochs before $e ran off w2 ($n)"
	n=$($spans "$T/journal.db" "$q and gen = $e and worker != 'w2'")
	[ "$n" -ge 1 ] || fail "no island of epoch $e ended off w2"
	ok "the journal: epoch $e of job $kjob ended off w2, the epochs before on w2"
else
	echo "sqlite3 missing: where epoch $e ran is not checked"
fi

# Workers with peer links: the padding of every migration moves between
# the workers that ran the islands, as one master-planned total exchange.
kill -9 "$WPID_w1" "$WPID_w3" 2>/dev/null || true
crash_master
WORKER_EXTRA="peer_listen = 127.0.0.1:0"
start_worker w1 2
start_worker w2 2
wait_workers 2
"$R3QCTL" islands $ISL --work-ms 50 --json > "$T/peer.json" ||
    fail "the run with peer links failed: $(cat "$T/peer.json")"
[ "$(ans "$T/peer.json")" = "$(ans "$T/local.json")" ] ||
    fail "answer differs with peer links: $(cat "$T/peer.json")"
x=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["exchanged_bytes"])' "$T/peer.json")
[ "$x" -gt 0 ] || fail "no migrant bytes moved between workers: $(cat "$T/peer.json")"
grep -q "migrant exchange failed" "$T/masterd.log" &&
    fail "a migrant exchange failed: $(grep 'migrant exchange' "$T/masterd.log")"
ok "with peer links, $x bytes of migrants moved worker to worker; the --local answer"

