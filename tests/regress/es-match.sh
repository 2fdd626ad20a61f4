# An ES job gives exactly the `r3qctl es --local` answer -- best fitness,
# best individual and every generation's best, bit for bit -- on one
# worker, and on three workers under each policy (WQ, RR, RWQ, R3Q).
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 30 --lambda 70 --dim 30 --generations 12 --lu 40 --seed 7 --reevaluate-parents"

mkcerts w1 w2 w3
"$R3QCTL" es --local $ES --csv "$T/local.csv" > "$T/local.out" ||
    fail "local run failed"
[ "$(wc -l < "$T/local.csv")" -eq 14 ] || fail "local CSV has wrong length"
answer "$T/local.out" > "$T/local.ans"
[ -s "$T/local.ans" ] || fail "local run printed no answer"

start_master
start_worker w1
wait_workers 1
"$R3QCTL" es $ES --policy wq --csv "$T/one.csv" > "$T/one.out" ||
    fail "job on one worker failed"
cmp -s "$T/local.csv" "$T/one.csv" || fail "one worker: bests differ"
answer "$T/one.out" | cmp -s - "$T/local.ans" || fail "one worker: answer differs"
ok "one worker matches --local"

start_worker w2 2
start_worker w3 2
wait_workers 3
for p in wq rr rwq r3q; do
	"$R3QCTL" es $ES --policy $p --csv "$T/$p.csv" > "$T/$p.out" ||
	    fail "job under $p failed"
	cmp -s "$T/local.csv" "$T/$p.csv" || fail "$p: bests differ"
	answer "$T/$p.out" | cmp -s - "$T/local.ans" || fail "$p: answer differs"
	grep -q "policy $p" "$T/$p.out" || fail "$p: job did not run under $p"
	ok "three workers under $p match --local"
done

# The same job submitted, waited for and read back.
job=$("$R3QCTL" submit es $ES)
"$R3QCTL" wait "$job" > "$T/wait.out" || fail "wait $job failed"
grep -q "job $job done" "$T/wait.out" || fail "wait did not say done"
"$R3QCTL" result "$job" --csv "$T/res.csv" > "$T/res.out"
cmp -s "$T/local.csv" "$T/res.csv" || fail "result --csv differs"
"$R3QCTL" result "$job" --json > "$T/res.json"
grep -q "\"state\":\"done\"" "$T/res.json" || fail "result --json: no state"
best=$(sed -n 's/^best fitness: //p' "$T/local.out")
grep -q "\"best\":$best," "$T/res.json" || fail "result --json: best differs"
"$R3QCTL" jobs | grep -qE "^$job +done" || fail "jobs does not list $job"
ok "submit, wait, result --csv/--json, jobs"
