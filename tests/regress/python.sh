# The Python package (python/r3q) on a real cluster on loopback: masterd
# and 3 single-CPU workers whose Python kinds are "python3 -m r3q.serve"
# persistent processes.  A DEAP program not written for R3Q (DEAP's
# (mu + lambda) evolution strategy on benchmarks.sphere, examples/python/
# es.py) gives the same logbook and hall of fame, bit for bit, with its
# toolbox's map on R3Q as with the builtin map: R3Q changes where the
# evaluations run, never the answer.  Then tests/python/test_r3q.py checks
# the API against the same cluster: map order, futures (result, timeout,
# cancel, wait, as_completed, callbacks), the Executor, remote exceptions
# with their text, a payload over max_payload, a closed client, Ctrl-C
# during map, a running task interrupted by its cancel (TaskCancelled in
# the function, the process serving on; not with --no-interrupt), r3q.serve
# through its pipes, unpicklable objects, and a module that does not import
# (every task fails naming the import error; no restart loop).  That kind
# is then withdrawn ('U'): each worker logs it, the master logs it and
# r3qctl workers shows it with the reason, the other kinds serve on, and a
# reload (SIGHUP) offers it again.  python3 -m r3q map runs a kind from
# the shell.  The generic kind python ("r3q.serve --any"): functions
# shipped by reference through Executor.map (the function mapped is the
# one that runs), r3q.futures, r3q.multiprocessing, Client.map_any under
# SciPy's differential_evolution, chunks and their sizes, the program's
# files sent again to a worker that lacks them, python3 -m r3q SCRIPT with
# creator classes made in main(), results against the allowlist (a
# hostile result never runs), and bad input refused with its name.  A
# named kind whose results are hostile pickles (py-hostile): no pickled
# path of a default client (map_pickled, codec="pickle", submit_pickled,
# the Executor, Pool) runs them; only trust_results() does.
. "${top_srcdir:-.}/tests/regress/lib.sh"

PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import deap, numpy' 2> /dev/null ||
    fail "$PY cannot import deap (scripts/check installs python3-deap)"
# Absolute paths: the kinds' processes run in directories of their own.
# PYLIB preloads ASan's runtime under scripts/check --sanitize.
python_client tests/python examples/python
export BROKEN_LOG=$T/broken.pids
export SLEEPY_LOG=$T/sleepy.log
if [ "${R3Q_SANITIZE:-}" = address ]; then
	# test_r3q.py's time bounds (a cancelled batch frees the workers
	# within seconds) took 10-13 s there instead of under 5: every
	# allocation of the interpreter goes through ASan.
	export R3Q_TIME_FACTOR=10
fi
: > "$BROKEN_LOG"

SERVE="persistent $PY -m r3q.serve"
mkcerts w1 w2 w3
# Tasks of very different lengths (py-slow) make suspects: none cools
# down, or a task that fails everywhere would wait for it.
MASTER_EXTRA="max_payload = 64K
suspect_limit = 0"
start_master
WORKER_EXTRA="exec deap-sphere = $SERVE --pickle es:toolbox.evaluate
exec py-echo = $SERVE kinds:echo
exec py-square = $SERVE --pickle kinds:square
exec py-fail = $SERVE --pickle kinds:fail
exec py-slow = $SERVE --pickle kinds:slow
exec py-sleepy = $SERVE --pickle kinds:sleepy
exec py-sleepy-ni = $SERVE --no-interrupt --pickle kinds:sleepy
exec py-unpicklable = $SERVE --pickle kinds:unpicklable
exec py-hostile = $SERVE --pickle kinds:hostile
exec py-broken = $SERVE broken:f
exec py-missing = $SERVE no_such_module:f
exec python = $SERVE --any
env = PYTHONPATH=$PYTHONPATH
env = BROKEN_LOG=$BROKEN_LOG
env = SLEEPY_LOG=$SLEEPY_LOG"
for w in w1 w2 w3; do start_worker "$w" 1; done
wait_workers 3

# DEAP's ES, seeded: builtin map, then R3Q's.
ES="$src/examples/python/es.py --seed 64 --ngen 40 --quiet"
"$PY" $ES > "$T/deap-local.out" 2> "$T/deap-local.err" ||
    fail "es.py with the builtin map: $(tail -n 5 "$T/deap-local.err")"
"${PYLIB[@]}" $ES --r3q deap-sphere > "$T/deap-r3q.out" 2> "$T/deap-r3q.err" ||
    fail "es.py on R3Q: $(tail -n 5 "$T/deap-r3q.err")"
[ "$(grep -c "^{'gen'" "$T/deap-local.out")" -eq 41 ] ||
    fail "es.py printed no logbook: $(head -n 3 "$T/deap-local.out")"
cmp -s "$T/deap-local.out" "$T/deap-r3q.out" ||
    fail "the logbooks differ: $(diff "$T/deap-local.out" "$T/deap-r3q.out" | head -n 6)"
"$R3QCTL" jobs > "$T/jobs"
grep -q "python" "$T/jobs" || fail "no job of the Python client: $(cat "$T/jobs")"
ok "DEAP's (mu + lambda) ES: the same logbook and best individual with R3Q's map as with the builtin map"

# The command line.
printf 'a\nbb\n\nccc\n' | "${PYLIB[@]}" -m r3q map py-echo > "$T/map.out" ||
    fail "python3 -m r3q map failed"
printf 'a\nbb\n\nccc\n' | cmp -s - "$T/map.out" ||
    fail "python3 -m r3q map gave: $(cat "$T/map.out")"
ok "python3 -m r3q map: outputs in input order"

export R3QCTL
timeout 900 "${PYLIB[@]}" -m unittest -v test_r3q > "$T/unittest.log" 2>&1 ||
    fail "tests/python/test_r3q.py: $(grep -E '^(FAIL|ERROR)|Error|assert' "$T/unittest.log" | head -n 20)"
grep -E ' \.\.\. ok$' "$T/unittest.log" | sed 's/^/ok - /'
master_alive
ok "the r3q API against the cluster (tests/python/test_r3q.py)"
# Bad input on the generic kind (lambdas, exceptions, a missing module, a
# hostile result, a script reading stdin) withdrew it nowhere.
"$R3QCTL" workers | grep "withdrew kind python:" &&
    fail "the kind python was withdrawn: $("$R3QCTL" workers)"
ok "bad input to the generic kind python withdrew it on no worker"

# The kinds whose module does not import were withdrawn, with why.
"$R3QCTL" workers > "$T/workers" || fail "r3qctl workers failed"
for w in w1 w2 w3; do
	grep -q "^$w: withdrew kind py-broken: .*RuntimeError: broken on purpose" \
	    "$T/workers" || fail "$w: py-broken not shown withdrawn: $(cat "$T/workers")"
	grep -q "^$w: withdrew kind py-missing: .*No module named 'no_such_module'" \
	    "$T/workers" || fail "$w: py-missing not shown withdrawn: $(cat "$T/workers")"
	grep -q "kind py-broken withdrawn: .*cannot load broken:f" "$T/$w.log" ||
	    fail "$w did not log the withdrawal: $(grep -i withdr "$T/$w.log")"
	awk -v w="$w" '$1 == w { print $5 }' "$T/workers" | grep -q py-broken &&
	    fail "$w still offers py-broken: $(cat "$T/workers")"
done
grep -q "worker w1 withdrew kind py-broken: .*broken on purpose" "$T/masterd.log" ||
    fail "masterd did not log the withdrawal"
ok "a kind that cannot load is withdrawn by each worker and shown with why"
# A reload offers it again (and starts a new process for it).
kill -HUP "$WPID_w1"
waitfor "'$R3QCTL' workers | awk '\$1 == \"w1\" { print \$5 }' | grep -q py-broken" 30 ||
    fail "w1 does not offer py-broken after a reload: $("$R3QCTL" workers)"
"$R3QCTL" workers | grep -q "^w1: withdrew" &&
    fail "w1 still shows a withdrawn kind after a reload: $("$R3QCTL" workers)"
ok "a reload offers a withdrawn kind again"
