# Issue 4's proof on real daemons: an ES job runs while workers are killed
# with SIGKILL and restarted at random, one worker is SIGSTOPped for good,
# and masterd itself is killed with SIGKILL once and restarted on its
# journal.  The answer equals r3qctl es --local bit for bit, the stopped
# worker is caught by relative suspect detection, and the journal shows
# every evaluation of every generation accepted exactly once.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# Long enough under a sanitizer for the master's crash to come mid-job.
MU=8 LAMBDA=16 GENS=$((12 * SAN_SLOW))
ES="--mu $MU --lambda $LAMBDA --dim 10 --generations $GENS --work-ms 150 --seed 3"

mkcerts w1 w2 w3 w4 w5
"$R3QCTL" es --local $ES --quiet > "$T/local.out" || fail "local run failed"
MASTER_EXTRA="suspect_grace = 300ms
heartbeat_timeout = 60s
suspect_limit = 0"
start_master
for w in w1 w2 w3 w4 w5; do start_worker $w; done
wait_workers 5
job=$("$R3QCTL" submit es $ES --policy r3q)

# The chaos: w5 stops for good; w1..w3 die and come back at random; w4
# stays healthy so the job can always progress.
sleep 1
kill -STOP "$WPID_w5"
i=0
while [ $i -lt 8 ]; do
	i=$((i + 1))
	sleep "0.$((3 + RANDOM % 6))"
	victim=w$((1 + RANDOM % 3))
	eval "kill -9 \$WPID_$victim" 2>/dev/null || true
	sleep 0.2
	start_worker "$victim"
	if [ $i -eq 4 ]; then
		# Before the crash: w5 has been caught, and r3qctl says so.
		waitfor "grep -q 'worker w5 suspect:' '$T/masterd.log'" 20 ||
		    fail "the stopped worker was never suspect"
		"$R3QCTL" workers > "$T/workers.out"
		susp=$(awk '$1 == "w5" { print $13 }' "$T/workers.out")
		[ "${susp:-0}" -ge 1 ] ||
		    fail "r3qctl workers: w5 suspect ${susp:-?} times: $(cat "$T/workers.out")"
		ok "the stopped worker is suspect, and r3qctl workers counts it"
		crash_master
		ok "masterd killed with SIGKILL and restarted mid-job"
	fi
done

"$R3QCTL" wait "$job" > /dev/null || fail "job did not finish"
"$R3QCTL" result "$job" > "$T/dist.out" || fail "no result"
answer "$T/dist.out" > "$T/d.ans"
answer "$T/local.out" > "$T/l.ans"
cmp -s "$T/l.ans" "$T/d.ans" || fail "answer differs: $(cat "$T/d.ans")"
ok "the job survived the chaos with the --local answer"

grep -q "resumed at generation" "$T/masterd.log" ||
    fail "masterd did not resume the job from its journal"
ok "the restarted masterd resumed the job from its journal"

# Every evaluation accounted for: stop masterd (the journal is
# exclusive while it runs) and count the accepted executions.
kill -CONT "$WPID_w5"
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
# (The executions are packed in the journal: spans.py unpacks them.)
spans="python3 $top_srcdir/tests/regress/spans.py"
dup=$($spans "$T/journal.db" "SELECT count(*) FROM (SELECT gen, idx
    FROM spans WHERE job = $job AND outcome = 0 GROUP BY gen, idx
    HAVING count(*) > 1)")
[ "$dup" = 0 ] || fail "$dup evaluations accepted twice"
$spans "$T/journal.db" "SELECT gen, count(DISTINCT idx) FROM spans
    WHERE job = $job AND outcome = 0 GROUP BY gen ORDER BY gen" \
    > "$T/counts"
want=$( (echo "0|$MU"; g=1; while [ $g -le $GENS ]; do
    echo "$g|$LAMBDA"; g=$((g + 1)); done) )
[ "$(cat "$T/counts")" = "$want" ] ||
    fail "accepted evaluations per generation: $(tr '\n' ' ' < "$T/counts")"
ok "every evaluation of every generation was accepted exactly once"
[ "$(sqlite3 "$T/journal.db" "SELECT state FROM jobs WHERE id = $job")" = done ] ||
    fail "the journal does not say the job is done"
[ "$(sqlite3 "$T/journal.db" "SELECT count(*) FROM results WHERE job = $job")" = 0 ] ||
    fail "a finished job's results stay in the journal"
ok "the finished job is journaled as done, without its results"
