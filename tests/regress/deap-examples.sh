# DEAP's own example programs, as Debian's deap-doc installs them (never
# copies of ours), run through r3q.futures on a local cluster whose
# workers offer the generic kind python ("python3 -m r3q.serve --any"),
# configured once for all of them.  Each program is changed only at its
# imports, by sed at test time:
#   - onemax_island_scoop.py: "from scoop import futures" becomes "from
#     r3q import futures" (its toolbox.map(toolbox.algorithm, islands)
#     maps a function that is not evaluate, and that maps in turn);
#   - onemax_mp.py: "import multiprocessing" becomes "from r3q import
#     multiprocessing" (its Pool's map);
#   - tsp.py, symbreg.py, es/fctmin.py, es/cma_minfct.py: the two lines
#     DEAP's documentation gives, "from r3q import futures" after "from
#     deap import tools" and toolbox.register("map", futures.map) after
#     "toolbox = base.Toolbox()" (at module level: on the workers
#     futures.map runs in the process, so the import there starts no
#     client);
#   - es/cma_mo.py, whose evaluate toolbox.decorate wraps, the same two
#     lines (seeded by its own commented-out line, for both runs);
#   - gp/symbreg_harm.py, run after symbreg.py on the same worker
#     processes (both make an ephemeral constant rand101), the same two
#     lines; coev/hillis.py, which imports ../ga/sortingnetwork.py, the
#     same for its htoolbox, run with --files .,../ga/sortingnetwork.py;
#   - ga/evoknn_jmlr.py, its GA at module level with no __main__ guard:
#     "from r3q import futures" after its DEAP import and the register
#     line (seeded, 8 generations, printing its last population, for
#     both runs);
#   - es/onefifth.py, a (1+1)-ES that calls toolbox.evaluate directly, and
#     ga/onemax.py, which calls the builtin map: the same two lines, and
#     they send no task (doc/python.md says which calls are distributed).
# Two programs are also changed for both runs, local and R3Q alike, to fit
# CI's time or to be reproducible, never for R3Q: fctmin.py's
# "random.seed()" (a seed from the system's entropy, so no two runs agree)
# becomes "random.seed(64)" and its ngen=500 ngen=150; cma_minfct.py's
# ngen=250 becomes ngen=60 (250 generations of 600 evaluations took 45 s
# on a loaded machine).
# Each runs as "python3 -m r3q SCRIPT" from its directory, as a user runs
# it locally; tsp reads tsp/gr17.json (relative to its directory) at
# import, on the workers too, from the files shipped (--files).  The
# seeded programs (all but the island one) print the same logbook and
# hall of fame, bit for bit, as their unchanged local run; each sent its
# evaluations as tasks.  The island program cannot be bit-identical: its
# islands evolve in parallel, each with the random state of the worker
# process it runs in, where the local run draws them all from one state
# in turn; it must run, send a task per island and migration, and end.
. "${top_srcdir:-.}/tests/regress/lib.sh"

PY=${PYTHON:-/usr/bin/python3}
EX=/usr/share/doc/deap-doc/examples
[ -d "$EX/ga" ] || fail "$EX is missing (scripts/check installs deap-doc)"
"$PY" -c 'import deap, numpy' 2> /dev/null ||
    fail "$PY cannot import deap (scripts/check installs python3-deap)"
python_client

mkcerts w1 w2 w3
MASTER_EXTRA="suspect_limit = 0"
start_master
WORKER_EXTRA="exec python = persistent $PY -m r3q.serve --any
env = PYTHONPATH=$PYTHONPATH"
for w in w1 w2 w3; do start_worker "$w" 1; done
wait_workers 3

# Each worker's process starts and imports DEAP first: a first
# generation slowed by start-ups makes suspects and copies, which is not
# what this test is about.
"${PYLIB[@]}" -c 'from r3q import futures
import deap.tools, numpy
list(futures.map(abs, range(64), chunksize=1))' ||
    fail "the warm-up map failed"

TWO='/^from deap import tools$/a from r3q import futures
/^toolbox = base.Toolbox() *$/a toolbox.register("map", futures.map)'
mkdir "$T/mod" "$T/base"

# tasks NAME: how many tasks the job named NAME ran (r3qctl jobs).
tasks() {
	"$R3QCTL" jobs | awk -v n="$1" '$(NF-1) == n { s += $(NF-2) }
	    END { print s + 0 }'
}

# same DIR NAME SED [ARGS]: NAME.py locally and, changed by SED, on R3Q.
# BASE (a sed program), if set, changes it first for both runs.
same() {
	_d=$1 _n=$2 _sed=$3
	shift 3
	sed -e "${BASE:-}" "$EX/$_d/$_n.py" > "$T/base/$_n.py"
	[ -z "${BASE:-}" ] || ! cmp -s "$EX/$_d/$_n.py" "$T/base/$_n.py" ||
	    fail "$_n.py: the BASE sed changed nothing"
	sed -e "$_sed" "$T/base/$_n.py" > "$T/mod/$_n.py"
	cmp -s "$T/base/$_n.py" "$T/mod/$_n.py" &&
	    fail "$_n.py: the sed changed nothing"
	(cd "$EX/$_d" && "$PY" "$T/base/$_n.py") > "$T/$_n.local" 2> "$T/$_n.lerr" ||
	    fail "$_n.py locally: $(tail -n 5 "$T/$_n.lerr")"
	(cd "$EX/$_d" && "${PYLIB[@]}" -m r3q "$@" "$T/mod/$_n.py") \
	    > "$T/$_n.r3q" 2> "$T/$_n.rerr" ||
	    fail "$_n.py on R3Q: $(tail -n 5 "$T/$_n.rerr")"
	[ -s "$T/$_n.local" ] || fail "$_n.py printed nothing"
	cmp -s "$T/$_n.local" "$T/$_n.r3q" ||
	    fail "$_n.py: the outputs differ: $(diff "$T/$_n.local" "$T/$_n.r3q" | head -n 6)"
	_k=$(tasks "$_n.py")
	[ "$_k" -gt 0 ] || fail "$_n.py sent no tasks: $("$R3QCTL" jobs)"
	ok "DEAP's $_d/$_n.py: bit-identical to its local run, $_k tasks on R3Q"
}

same ga tsp "$TWO" --files tsp/gr17.json
same gp symbreg "$TWO" --files symbreg.py
# symbreg_harm.py after symbreg.py, on the same worker processes: each
# makes the ephemeral constant rand101 of a function of its own, which
# deap.gp refuses under one name in one process; the last program's go
# when the next one comes.
same gp symbreg_harm "$TWO" --files symbreg_harm.py
# hillis.py imports sortingnetwork from ../ga (sys.path.append("../ga")):
# --files names that file as the program reaches it, from its directory.
HILLIS='/^from deap import tools$/a from r3q import futures
/^htoolbox = base.Toolbox() *$/a htoolbox.register("map", futures.map)'
same coev hillis "$HILLIS" --files .,../ga/sortingnetwork.py
same ga onemax_mp 's/^import multiprocessing$/from r3q import multiprocessing/' \
    --files onemax_mp.py
BASE='s/^    random\.seed()$/    random.seed(64)/; s/ngen=500,/ngen=150,/' \
    same es fctmin "$TWO" --files fctmin.py
grep -q "^149[[:space:]]" "$T/fctmin.local" ||
    fail "fctmin.py did not run 150 generations: $(tail -n 2 "$T/fctmin.local")"
BASE='s/ngen=250,/ngen=60,/' same es cma_minfct "$TWO" --files cma_minfct.py
grep -q "^59[[:space:]]" "$T/cma_minfct.local" ||
    fail "cma_minfct.py did not run 60 generations: $(tail -n 2 "$T/cma_minfct.local")"
# cma_mo.py's evaluate is wrapped by toolbox.decorate (its
# ClosestValidPenalty), a function pickle cannot name: it goes as
# toolbox.evaluate.  Seeded as its own commented line says, for both runs.
BASE='s/^    # numpy.random.seed(128)$/    numpy.random.seed(128)/' \
    same es cma_mo "$TWO" --files cma_mo.py

# The island program: "from scoop import futures" -> "from r3q import
# futures"; it prints nothing: what it ran is in r3qctl jobs.
sed -e 's/^from scoop import futures$/from r3q import futures/' \
    "$EX/ga/onemax_island_scoop.py" > "$T/mod/island.py"
cmp -s "$EX/ga/onemax_island_scoop.py" "$T/mod/island.py" &&
    fail "onemax_island_scoop.py: the sed changed nothing"
# R3Q_TASK_COST=0: a task costs nothing, so every chunk is one call and
# each island is a task of its own (the sizer would otherwise group
# islands when it measures the master slow, as under a sanitizer).
(cd "$EX/ga" && R3Q_TASK_COST=0 "${PYLIB[@]}" -m r3q --files \
    onemax_island_scoop.py "$T/mod/island.py") > "$T/island.out" \
    2> "$T/island.err" ||
    fail "onemax_island_scoop.py on R3Q: $(tail -n 5 "$T/island.err")"
k=$(tasks island.py)
# 8 rounds (NGEN 40, FREQ 5) of 5 islands, each one toolbox.algorithm.
[ "$k" -eq 40 ] || fail "the island program ran $k tasks, not 40: $("$R3QCTL" jobs)"
ok "DEAP's onemax_island_scoop.py with r3q.futures: 40 tasks of toolbox.algorithm (eaSimple), each mapping its island's evaluations in the worker"

# evoknn_jmlr.py has no __main__ guard: its GA runs as it is imported.
# On the workers that import stops at its first toolbox.map: they do not
# run the GA each.  Seeded (before
# knn.py, which shuffles its data as it is imported), 8 generations
# instead of 50 and its last population's fitnesses printed, for both
# runs; beside knn.py and heart_scale.csv, which it reads from its
# directory.
K=$T/knn
mkdir "$K"
cp "$EX/ga/knn.py" "$EX/ga/heart_scale.csv" "$K/"
sed -e 's/^for gen in range(50):$/for gen in range(8):/' \
    -e 's/^import knn, random$/import random; random.seed(12); import knn/' \
    -e '$a print(sorted(ind.fitness.values for ind in population))' \
    "$EX/ga/evoknn_jmlr.py" > "$K/local.py"
# Its last line, on R3Q only, marks the end of the GA by the process that
# ran it: the client's, and no worker's.
sed -e '/^from deap import /a from r3q import futures' \
    -e '/^toolbox = base.Toolbox() *$/a toolbox.register("map", futures.map)' \
    -e "\$a open('$T/knn-end.%d' % __import__('os').getpid(), 'w').close()" \
    "$K/local.py" > "$K/evoknn_jmlr.py"
grep -q "range(8)" "$K/local.py" && grep -q "seed(12)" "$K/local.py" &&
    grep -q "futures.map" "$K/evoknn_jmlr.py" ||
    fail "evoknn_jmlr.py: the sed changed nothing"
(cd "$K" && "$PY" local.py) > "$T/knn.local" 2> "$T/knn.lerr" ||
    fail "evoknn_jmlr.py locally: $(tail -n 5 "$T/knn.lerr")"
(cd "$K" && "${PYLIB[@]}" -m r3q evoknn_jmlr.py) > "$T/knn.r3q" 2> "$T/knn.rerr" ||
    fail "evoknn_jmlr.py on R3Q: $(tail -n 5 "$T/knn.rerr")"
[ "$(wc -c < "$T/knn.local")" -gt 100 ] || fail "evoknn_jmlr.py printed $(cat "$T/knn.local")"
cmp -s "$T/knn.local" "$T/knn.r3q" ||
    fail "evoknn_jmlr.py: the outputs differ: $(diff "$T/knn.local" "$T/knn.r3q" | head -n 4)"
k=$(tasks evoknn_jmlr.py)
[ "$k" -gt 0 ] || fail "evoknn_jmlr.py sent no tasks: $("$R3QCTL" jobs)"
ends=$(cd "$T" && ls knn-end.* 2> /dev/null | tr '\n' ' ')
[ "$(echo $ends | wc -w)" -eq 1 ] ||
    fail "evoknn_jmlr.py's GA ran to its end in more than the client: $ends"
ok "DEAP's evoknn_jmlr.py, no __main__ guard: bit-identical to its local run, $k tasks; the GA ran in the client only"

# onemax.py calls the builtin map: the two lines change nothing there,
# and it says so by sending no task (doc/python.md says which calls go).
sed -e "$TWO" "$EX/ga/onemax.py" > "$T/mod/onemax.py"
(cd "$EX/ga" && "$PY" onemax.py) > "$T/onemax.local" 2>&1
(cd "$EX/ga" && "${PYLIB[@]}" -m r3q --files onemax.py "$T/mod/onemax.py") \
    > "$T/onemax.r3q" 2>&1 || fail "onemax.py on R3Q: $(tail -n 5 "$T/onemax.r3q")"
cmp -s "$T/onemax.local" "$T/onemax.r3q" || fail "onemax.py: the outputs differ"
[ "$(tasks onemax.py)" -eq 0 ] || fail "onemax.py sent tasks: $("$R3QCTL" jobs)"
ok "DEAP's onemax.py maps with the builtin map: the same output, no task sent"

# onefifth.py calls toolbox.evaluate(ind) itself, one individual at a
# time: with the two lines it runs as before, in the client, and sends no
# task.
sed -e "$TWO" "$EX/es/onefifth.py" > "$T/mod/onefifth.py"
cmp -s "$EX/es/onefifth.py" "$T/mod/onefifth.py" &&
    fail "onefifth.py: the sed changed nothing"
(cd "$EX/es" && "$PY" onefifth.py) > "$T/onefifth.local" 2>&1
(cd "$EX/es" && "${PYLIB[@]}" -m r3q --files onefifth.py "$T/mod/onefifth.py") \
    > "$T/onefifth.r3q" 2>&1 || fail "onefifth.py on R3Q: $(tail -n 5 "$T/onefifth.r3q")"
[ "$(wc -l < "$T/onefifth.local")" -gt 1000 ] ||
    fail "onefifth.py printed $(wc -l < "$T/onefifth.local") lines"
cmp -s "$T/onefifth.local" "$T/onefifth.r3q" || fail "onefifth.py: the outputs differ"
[ "$(tasks onefifth.py)" -eq 0 ] || fail "onefifth.py sent tasks: $("$R3QCTL" jobs)"
ok "DEAP's onefifth.py calls toolbox.evaluate directly: the same output, no task sent"

"$R3QCTL" workers | grep "withdrew kind python:" &&
    fail "the kind python was withdrawn: $("$R3QCTL" workers)"
master_alive
ok "the kind python served every program, withdrawn nowhere"
