# r3q-factory(8) against a real Slurm (slurm-lib.sh): batch workers that
# follow the queue.  With min 0, max 2 and 1-CPU jobs of the shipped
# r3q-workers.sbatch, each with a join token of its own:
#  - no task waiting: no job;
#  - an ES job waits: the factory grows from 0 to 2 workers, which join
#    and run it (the answer of --local, bit for bit);
#  - once the tasks are done and idle has passed, it drains them: back to
#    0 workers and no job in Slurm's queue, no state left in TMPDIR;
#  - a job whose walltime nears is drained drain_before it, and replaced
#    while tasks wait;
#  - a job Slurm refuses has its token revoked.
# Prints the timeline (tasks waiting, jobs, workers joined and draining).
# Skips, on a line of its own, without root or slurm-wlm and munge.
. "${top_srcdir:-.}/tests/regress/lib.sh"
. "${top_srcdir:-.}/tests/regress/slurm-lib.sh"

t0=$(date +%s)
slurm_start
slurm_shipped
mkcerts unused
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key
http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
mkdir -p "$T/tmp"
chmod 700 "$T/tmp"

# factory ARGS...: r3q-factory in the background, its log $T/factory.log.
factory() {
	env -u R3Q_CONTROL TMPDIR="$T/tmp" python3 "$top_builddir/slurm/r3q-factory" \
	    --master "127.0.0.1:$PORT" --http "127.0.0.1:$HTTP_PORT" \
	    --control "$T/ctl.sock" --r3qctl "$R3QCTL" \
	    --script "$SLURMDIR/r3q-workers.sbatch" --workdir "$T" \
	    --job-name r3q-factory-test --cpus 1 --interval 1 "$@" \
	    >> "$T/factory.log" 2>&1 &
	FPID=$!
	PIDS="$PIDS $FPID"
}
# Counts, as commands for waitfor: the factory's jobs in Slurm's queue,
# batch workers connected.
cat > "$T/njobs" <<EOC
#!/bin/sh
squeue -h -n r3q-factory-test | wc -l
EOC
cat > "$T/nworkers" <<EOC
#!/bin/sh
'$R3QCTL' workers | grep -cE '^[^ ]+-[0-9]+-[0-9]+ '
EOC
chmod +x "$T/njobs" "$T/nworkers"
# timeline: the factory's log as a table.
timeline() {
	echo "# time          tasks-waiting jobs-queued jobs-running joined draining  event"
	sed -n 's/^\([0-9:.]*\) r3q-factory: tasks waiting \([0-9]*\); jobs queued \([0-9]*\), running \([0-9]*\); workers joined \([0-9]*\), draining \([0-9]*\)$/\1 \2 \3 \4 \5 \6/p
	    s/^\([0-9:.]*\) r3q-factory: \(submitted\|drained\|cancelled\)\(.*\)/\1 - - - - - \2\3/p' \
	    "$T/factory.log" |
	    awk '{ printf "# %-12s %13s %11s %12s %6s %8s ", $1, $2, $3, $4, $5, $6
		for (i = 7; i <= NF; i++) printf " %s", $i; printf "\n" }'
}

ES="--mu 4 --lambda 12 --dim 4 --generations 3 --seed 23"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"

factory --min 0 --max 2 --tasks-per-cpu 2 --time 10 --idle 5
sleep 4
[ "$("$T/njobs")" = 0 ] || fail "jobs with no task waiting: $(squeue)"
grep -q "tasks waiting 0; jobs queued 0, running 0; workers joined 0" "$T/factory.log" ||
    fail "the factory did not start: $(tail -n 5 "$T/factory.log")"
ok "no task waiting: no job"

# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES --work-ms 1500)
waitfor "[ \$($T/nworkers) -eq 2 ]" 60 ||
    fail "not 2 workers: $("$R3QCTL" workers) $(tail -n 5 "$T/factory.log")"
ok "tasks waiting: the factory grew from 0 to 2 workers"
timeout 150 "$R3QCTL" wait "$job" > /dev/null || fail "the ES job failed"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the answer differs from --local"
ok "the ES job on the factory's workers: the answer of --local, bit for bit"
waitfor "[ \$($T/njobs) -eq 0 ] && [ \$($T/nworkers) -eq 0 ]" 60 ||
    fail "not back to 0: $(squeue) $("$R3QCTL" workers) $(tail -n 5 "$T/factory.log")"
grep -q "drained worker .* (idle)" "$T/factory.log" || fail "no idle drain logged"
waitfor "tail -n 1 '$T/factory.log' | grep -q 'tasks waiting 0; jobs queued 0, running 0; workers joined 0, draining 0'" 10 ||
    fail "the factory did not see the end: $(tail -n 3 "$T/factory.log")"
! grep -q " lost" "$T/masterd.log" || fail "a worker was lost: $(grep ' lost' "$T/masterd.log")"
[ -z "$(ls -A "$T/tmp")" ] || fail "left in TMPDIR: $(ls -lR "$T/tmp")"
n=$(grep -c "submitted job" "$T/factory.log")
u=$("$R3QCTL" token list | grep -c " 0/1 used-up")
[ "$u" = "$n" ] || fail "$n jobs, $u tokens used: $("$R3QCTL" token list)"
ok "idle: drained back to 0 workers and 0 jobs; $n tokens of one use, all used; no state left"
grep -q "r3q-factory: round failed" "$T/factory.log" &&
    fail "a round failed: $(grep 'round failed' "$T/factory.log")"
echo "# timeline of r3q-factory --min 0 --max 2 --cpus 1 (ES: 12 tasks a generation of 1.5 s):"
timeline
kill "$FPID"
wait "$FPID" 2> /dev/null || true
mv "$T/factory.log" "$T/factory.1.log"

# Walltime: jobs of 1 minute drained 50 s before it, replaced while tasks
# wait.
factory --min 0 --max 1 --tasks-per-cpu 1 --time 1 --drain-before 50 --idle 3
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es --mu 2 --lambda 4 --dim 2 --generations 12 --seed 3 --work-ms 2000)
waitfor "grep -q 'drained worker .* (walltime in [0-9]* s)' '$T/factory.log'" 60 ||
    fail "no drain before the walltime: $(tail -n 5 "$T/factory.log")"
waitfor "[ \$(grep -c 'submitted job' '$T/factory.log') -ge 2 ]" 30 ||
    fail "the drained worker was not replaced: $(tail -n 5 "$T/factory.log")"
# A job Slurm refuses (no such partition): its token is revoked.
env -u R3Q_CONTROL python3 "$top_builddir/slurm/r3q-factory" \
    --master "127.0.0.1:$PORT" --http "127.0.0.1:$HTTP_PORT" \
    --control "$T/ctl.sock" --r3qctl "$R3QCTL" --once \
    --script "$SLURMDIR/r3q-workers.sbatch" --workdir "$T" \
    --job-name r3q-factory-bad --submit-arg=--partition=nonesuch \
    > "$T/bad.log" 2>&1 || fail "r3q-factory --once: $(cat "$T/bad.log")"
grep -q "round failed: sbatch: exit 1: .*partition" "$T/bad.log" ||
    fail "a refused job: $(cat "$T/bad.log")"
"$R3QCTL" token list | grep -q " revoked$" ||
    fail "its token was not revoked: $("$R3QCTL" token list)"
ok "a job Slurm refuses: the round says why, its token is revoked"
"$R3QCTL" cancel "$job" > /dev/null 2>&1 || true
waitfor "[ \$($T/njobs) -eq 0 ]" 60 || fail "jobs left: $(squeue)"
! grep -q " lost" "$T/masterd.log" || fail "a worker was lost: $(grep ' lost' "$T/masterd.log")"
ok "walltime 1 min: $(sed -n 's/.*\(drained worker .* (walltime in [0-9]* s)\).*/\1/p' "$T/factory.log" | head -n 1), replaced; none lost"
echo "# timeline of r3q-factory --max 1 --time 1 --drain-before 50:"
timeline
master_alive
echo "# the factory test took $(($(date +%s) - t0)) s"
