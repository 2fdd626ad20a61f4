# r3q-sim (issue 23) runs the unchanged core and ES driver on SimGrid: on
# the paper's 7 LAN hosts, 5 generations, its answer -- best fitness, best
# individual and every generation's best -- equals `r3qctl es --local` bit
# for bit under WQ, RR, RWQ, R3Q and R3Q with queue_factor auto; with
# workers crashing, and with workers hanging (silent, connection open,
# caught by suspect detection and heartbeat_timeout), no task is lost and
# the answer is the same; the same seed gives the same CSVs byte for byte;
# a platform file runs; a malformed one, or an unknown option, gets a clear
# error; a batch job of N tasks runs, and task times replay from a CSV or
# a `r3qctl report --trace` file; --network analytic (no SimGrid comms)
# gives the same answers, with churn too, deterministically; every frame's
# size by the wire rules equals protobuf-c's; --stats' bound is at or above
# the efficiency reached.  Without SimGrid r3q-sim is not built and the test
# is skipped.
. "${top_srcdir:-.}/tests/regress/lib.sh"

need_sim

# Every frame's size, counted by the wire rules, is checked against
# protobuf-c's own count (r3q-sim(1), ENVIRONMENT): a run stops at the
# first that differs.
R3Q_SIM_CHECK_SIZES=1
export R3Q_SIM_CHECK_SIZES

ES="--mu 30 --lambda 70 --dim 30 --generations 5 --seed 3 --reevaluate-parents"
# The generations' bests, without their (simulated or real) times.
bests() {
	awk '/^gen / { print $2, $4 }' "$1"
}

# The reference: Ridge's values do not depend on the synthetic load.
"$R3QCTL" es --local $ES > "$T/local.out" || fail "es --local failed"
answer "$T/local.out" > "$T/local.ans"
bests "$T/local.out" > "$T/local.gens"
[ -s "$T/local.ans" ] && [ "$(wc -l < "$T/local.gens")" -eq 6 ] ||
    fail "es --local printed no answer"

# same NAME: the answer of the run in $T/NAME.out equals --local's.
same() {
	answer "$T/$1.out" | cmp -s - "$T/local.ans" ||
	    fail "$1: answer differs from es --local"
	bests "$T/$1.out" | cmp -s - "$T/local.gens" ||
	    fail "$1: generations' bests differ from es --local"
}

for p in wq rr rwq r3q r3q-auto; do
	qf="--queue-factor 2"; pol=$p
	[ "$p" = r3q-auto ] && { pol=r3q; qf="--queue-factor auto"; }
	# shellcheck disable=SC2086
	"$SIM" --platform lan --work-ms 100 --policy $pol $qf $ES \
	    > "$T/$p.out" 2> "$T/$p.err" || fail "r3q-sim --policy $p failed"
	same "$p"
	grep -q "^summary: job 1 done, policy $pol, 5 generations, 530 evaluations" \
	    "$T/$p.out" || fail "$p: no summary"
	grep -q '^efficiency: ' "$T/$p.out" || fail "$p: no efficiency"
done
grep -q '^replicas 0,' "$T/wq.out" || fail "wq sent replicas"
grep -q '^replicas 0,' "$T/r3q.out" && fail "r3q sent no replicas"
ok "7 LAN hosts: the answer of es --local under wq, rr, rwq, r3q, r3q-auto"

# Crashes: a worker dies every 5 s on average, back after 3 s.
"$SIM" --platform lan --work-ms 100 --mtbf 5s --repair 3s $ES \
    > "$T/crash.out" 2> "$T/crash.err" || fail "crash run failed"
same crash
grep -Eq '^churn: [1-9][0-9]* crashes, 0 hangs, [1-9][0-9]* workers lost .* 0 tasks lost$' \
    "$T/crash.out" || fail "crash run: $(grep churn "$T/crash.out")"
ok "crashing workers: no task lost, same answer"

# Hangs: a worker stops without closing; suspect detection replicates its
# tasks, heartbeat_timeout (2 s here) drops it.
"$SIM" --platform lan --work-ms 100 --mtbf 8s --repair 20s --hang-rate 1 \
    --heartbeat-timeout 2s $ES > "$T/hang.out" 2> "$T/hang.err" ||
    fail "hang run failed"
same hang
grep -Eq '^churn: 0 crashes, [1-9][0-9]* hangs, [1-9][0-9]* workers lost \([1-9][0-9]* by heartbeat_timeout\), [1-9][0-9]* suspicions, 0 tasks lost$' \
    "$T/hang.out" || fail "hang run: $(grep churn "$T/hang.out")"
ok "hanging workers: caught, no task lost, same answer"

# Determinism: a generated platform with churn and noise, twice.
GEN="--workers 40 --speeds lognormal:1:0.5 --latency uniform:1:20 --noise 0.2 --mtbf 20s --repair 5s --hang-rate 0.3 --work-ms 50 $ES"
for i in 1 2; do
	# shellcheck disable=SC2086
	"$SIM" $GEN --csv "$T/det$i.csv" --gen-csv "$T/detg$i.csv" \
	    > "$T/det$i.out" 2>&1 || fail "determinism run $i failed"
done
cmp -s "$T/det1.csv" "$T/det2.csv" || fail "same seed, different CSV"
cmp -s "$T/detg1.csv" "$T/detg2.csv" || fail "same seed, different generation CSV"
cmp -s "$T/det1.out" "$T/det2.out" || fail "same seed, different output"
same det1
head -n 1 "$T/det1.csv" | grep -qx 'granularity_ms,delay_ms,policy,generations,total_s,sync_s,comm_s,compute_s,efficiency,lower_bound_s,replicas,killed_held,killed_running' ||
    fail "CSV columns are not bench/policies'"
[ "$(wc -l < "$T/detg1.csv")" -eq 7 ] || fail "generation CSV has wrong length"
# shellcheck disable=SC2086
"$SIM" $GEN --seed 4 --csv "$T/det3.csv" > /dev/null 2>&1 ||
    fail "seed 4 run failed"
cmp -s "$T/det1.csv" "$T/det3.csv" && fail "seeds 3 and 4 gave the same CSV"
ok "the same seed gives the same CSV byte for byte"

# A platform file: the host named master and two workers (one with two
# cores).
cat > "$T/good.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master" speed="1Gf"/>
    <host id="a" speed="2Gf" core="2"/>
    <host id="b" speed="0.5Gf"/>
    <link id="la" bandwidth="125MBps" latency="1ms"/>
    <link id="lb" bandwidth="125MBps" latency="5ms"/>
    <route src="master" dst="a"><link_ctn id="la"/></route>
    <route src="master" dst="b"><link_ctn id="lb"/></route>
  </zone>
</platform>
XML
"$SIM" --platform "$T/good.xml" $ES > "$T/file.out" 2>&1 ||
    fail "platform file run failed: $(tail -n 3 "$T/file.out")"
same file
grep -q 'speed 4.50)$' "$T/file.out" || fail "platform file: speeds not read"
ok "a platform file runs"

# Bad input: a clear error naming the culprit, and no run.
printf '<?xml version="1.0"?>\n<platform version="4.1">\n <zone id="z" routing="Full">\n  <host id="master" speed="1Gf">\n </zone>\n' > "$T/bad.xml"
rc=0
"$SIM" --platform "$T/bad.xml" $ES > "$T/bad.out" 2> "$T/bad.err" || rc=$?
[ "$rc" -eq 65 ] || fail "malformed platform: exit $rc, want 65"
grep -q "bad.xml: not a SimGrid platform: .*bad.xml:[0-9]" "$T/bad.err" ||
    fail "malformed platform: $(cat "$T/bad.err")"
[ -s "$T/bad.out" ] && fail "malformed platform: it ran"
sed 's/"master"/"boss"/' "$T/good.xml" > "$T/nomaster.xml"
rc=0
"$SIM" --platform "$T/nomaster.xml" $ES > /dev/null 2> "$T/nomaster.err" || rc=$?
[ "$rc" -eq 65 ] && grep -q "no host named 'master'" "$T/nomaster.err" ||
    fail "platform without master: exit $rc, $(cat "$T/nomaster.err")"
rc=0
"$SIM" --bogus > /dev/null 2> "$T/opt.err" || rc=$?
[ "$rc" -eq 64 ] && grep -q "unknown option '--bogus'" "$T/opt.err" ||
    fail "unknown option: exit $rc, $(cat "$T/opt.err")"
rc=0
"$SIM" --speeds gauss:1 > /dev/null 2> "$T/dist.err" || rc=$?
[ "$rc" -eq 64 ] && grep -q "'gauss:1' is not a distribution" "$T/dist.err" ||
    fail "bad distribution: exit $rc, $(cat "$T/dist.err")"
rc=0
"$SIM" --platform lan --workers 10 > /dev/null 2> "$T/mix.err" || rc=$?
[ "$rc" -eq 64 ] || fail "--platform lan with --workers: exit $rc"
ok "bad platform files and options get a clear error"

# Workloads: a batch job of N synth tasks; task times replayed from a CSV
# trace and from the Chrome trace JSON of `r3qctl report --trace`.
"$SIM" --platform lan --batch 300 --work-ms 100 --policy r3q \
    --csv "$T/batch.csv" > "$T/batch.out" 2>&1 || fail "batch run failed"
grep -q '^summary: job 1 done, policy r3q, batch of 300 tasks, 300 done, ' \
    "$T/batch.out" || fail "batch: $(grep summary "$T/batch.out")"
grep -q '^efficiency: .* = 30.0 s of work' "$T/batch.out" ||
    fail "batch: $(grep efficiency "$T/batch.out")"
# queue_factor auto by default, as masterd: the CSV names it r3q-auto.
grep -q '^100,0,r3q-auto,1,' "$T/batch.csv" || fail "batch: CSV $(tail -n 1 "$T/batch.csv")"
printf 'duration_ms\n50\n# a comment\n\n150,x\n' > "$T/times.csv"
"$SIM" --platform lan --batch 40 --trace "$T/times.csv" --policy wq \
    > "$T/tcsv.out" 2>&1 || fail "CSV trace run failed: $(tail -n 2 "$T/tcsv.out")"
# 40 tasks of 50, 150, 50, ...: 4000 ms of work
grep -q '^efficiency: .* = 4.0 s of work' "$T/tcsv.out" ||
    fail "CSV trace: $(grep efficiency "$T/tcsv.out")"
cat > "$T/trace.json" <<'JSON'
{"displayTimeUnit":"ms","otherData":{"job":"3","policy":"r3q","state":"done"},"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"a"}},
{"name":"task 1","cat":"done","ph":"X","pid":1,"tid":1,"ts":0.000,"dur":200000.000,"args":{"gen":0,"task":1,"replica":0,"outcome":"done"}},
{"name":"task 2","cat":"lost","ph":"X","pid":1,"tid":1,"ts":0.000,"dur":90000.000,"args":{"gen":0,"task":2,"replica":1,"outcome":"lost"}},
{"name":"task 2","cat":"done","ph":"X","pid":1,"tid":1,"ts":200000.000,"dur":100000.000,"args":{"gen":0,"task":2,"replica":0,"outcome":"done"}}
]}
JSON
"$SIM" --platform lan --trace "$T/trace.json" $ES > "$T/tjson.out" 2>&1 ||
    fail "JSON trace run failed: $(tail -n 2 "$T/tjson.out")"
same tjson
# 530 tasks of 200, 100, 200, ... ms: 265 x 300 ms of work
grep -q '^efficiency: .* = 79.5 s of work' "$T/tjson.out" ||
    fail "JSON trace: $(grep efficiency "$T/tjson.out")"
printf '10\n-5\n' > "$T/neg.csv"
rc=0
"$SIM" --batch 5 --trace "$T/neg.csv" > /dev/null 2> "$T/neg.err" || rc=$?
[ "$rc" -eq 65 ] && grep -q 'neg.csv:2: a time must be above 0' "$T/neg.err" ||
    fail "bad trace: exit $rc, $(cat "$T/neg.err")"
printf '{"traceEvents":[\n]}\n' > "$T/empty.json"
rc=0
"$SIM" --batch 5 --trace "$T/empty.json" > /dev/null 2> "$T/empty.err" || rc=$?
[ "$rc" -eq 65 ] && grep -q 'empty.json: no task times' "$T/empty.err" ||
    fail "empty trace: exit $rc, $(cat "$T/empty.err")"
ok "batch jobs and trace replay (CSV, r3qctl report --trace JSON)"

# --network analytic: one actor, frames timed on SimGrid's routes instead
# of SimGrid comms.  The same answers under every policy, with crashes and
# hangs, on a platform file; deterministic; close to the simgrid model's
# measurements on the LAN grid (small frames on idle links).
for p in wq rr rwq r3q r3q-auto; do
	qf="--queue-factor 2"; pol=$p
	[ "$p" = r3q-auto ] && { pol=r3q; qf="--queue-factor auto"; }
	# shellcheck disable=SC2086
	"$SIM" --network analytic --platform lan --work-ms 100 --policy $pol \
	    $qf $ES > "$T/a-$p.out" 2> "$T/a-$p.err" ||
	    fail "r3q-sim --network analytic --policy $p failed"
	same "a-$p"
	grep -q "^summary: job 1 done, policy $pol, 5 generations, 530 evaluations" \
	    "$T/a-$p.out" || fail "analytic $p: no summary"
done
grep -q '^replicas 0,' "$T/a-wq.out" || fail "analytic wq sent replicas"
# The LAN grid's totals agree with the simgrid model's within 1 %.
for p in wq r3q; do
	a=$(sed -n 's/^summary: .* evaluations, \([0-9.]*\) s.*/\1/p' "$T/a-$p.out")
	b=$(sed -n 's/^summary: .* evaluations, \([0-9.]*\) s.*/\1/p' "$T/$p.out")
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0 && a / b > 0.99 && a / b < 1.01) }' ||
	    fail "analytic $p: total $a s against simgrid's $b s"
done
"$SIM" --network analytic --platform lan --work-ms 100 --mtbf 5s --repair 3s \
    $ES > "$T/a-crash.out" 2>&1 || fail "analytic crash run failed"
same a-crash
grep -Eq '^churn: [1-9][0-9]* crashes, 0 hangs, [1-9][0-9]* workers lost .* 0 tasks lost$' \
    "$T/a-crash.out" || fail "analytic crash run: $(grep churn "$T/a-crash.out")"
"$SIM" --network analytic --platform lan --work-ms 100 --mtbf 8s \
    --repair 20s --hang-rate 1 --heartbeat-timeout 2s $ES \
    > "$T/a-hang.out" 2>&1 || fail "analytic hang run failed"
same a-hang
grep -Eq '^churn: 0 crashes, [1-9][0-9]* hangs, [1-9][0-9]* workers lost \([1-9][0-9]* by heartbeat_timeout\), [1-9][0-9]* suspicions, 0 tasks lost$' \
    "$T/a-hang.out" || fail "analytic hang run: $(grep churn "$T/a-hang.out")"
for i in 1 2; do
	# shellcheck disable=SC2086
	"$SIM" --network analytic $GEN --csv "$T/adet$i.csv" \
	    > "$T/adet$i.out" 2>&1 || fail "analytic determinism run $i failed"
done
cmp -s "$T/adet1.csv" "$T/adet2.csv" || fail "analytic: same seed, different CSV"
cmp -s "$T/adet1.out" "$T/adet2.out" || fail "analytic: same seed, different output"
same adet1
"$SIM" --network analytic --platform "$T/good.xml" $ES > "$T/a-file.out" 2>&1 ||
    fail "analytic platform file run failed: $(tail -n 3 "$T/a-file.out")"
same a-file
rc=0
"$SIM" --network ns3 > /dev/null 2> "$T/net.err" || rc=$?
[ "$rc" -eq 64 ] && grep -q "'ns3' is not simgrid or analytic" "$T/net.err" ||
    fail "bad --network: exit $rc, $(cat "$T/net.err")"
ok "--network analytic: same answers, churn, determinism, platform file"

# r3q-sim(1) documents every option --help lists, and no other.
PAGE=$top_builddir/man/r3q-sim.1
[ -f "$PAGE" ] || fail "$PAGE is not built"
"$SIM" --help | grep -oE -- '--[a-z-]+' | grep -vx -- '--help' |
    sort -u > "$T/help.opts"
grep -oE 'Fl \\-[a-z\\-]+' "$PAGE" | sed 's/Fl \\-/--/; s/\\-/-/g' |
    grep -vx -- '--help' | sort -u > "$T/page.opts"
[ "$(wc -l < "$T/help.opts")" -gt 20 ] || fail "--help lists too few options"
diff "$T/help.opts" "$T/page.opts" > "$T/opts.diff" ||
    fail "--help and r3q-sim(1) differ: $(cat "$T/opts.diff")"
ok "r3q-sim(1) documents every option"

# --stats prints the bound no policy can beat: at or above the efficiency
# reached, at most 100 %; none once workers fail (the bound assumes none).
for p in wq r3q; do
	"$SIM" --network analytic --platform lan --work-ms 100 --delay 10 \
	    --policy $p $ES --quiet --stats > "$T/bound-$p.out" ||
	    fail "bound run ($p) failed"
	eff=$(sed -n 's/^efficiency: \([0-9.]*\) %.*/\1/p' "$T/bound-$p.out")
	max=$(sed -n 's/^bound: .* efficiency at most \([0-9.]*\) %.*/\1/p' \
	    "$T/bound-$p.out")
	[ -n "$eff" ] && [ -n "$max" ] || fail "$p: no efficiency or bound"
	awk -v e="$eff" -v m="$max" 'BEGIN { exit !(e <= m && m <= 100 && m > 0) }' ||
	    fail "$p: efficiency $eff % above the bound $max %, or a bound out of (0, 100]"
done
"$SIM" --network analytic --platform lan --work-ms 100 --mtbf 5s \
    --repair 3s $ES --quiet --stats > "$T/bound-churn.out" ||
    fail "bound run with churn failed"
grep -q '^bound:' "$T/bound-churn.out" && fail "a bound printed with churn"
ok "--stats: the bound is at or above the efficiency reached"

# The generations of 10 tasks a worker or more, alone (issue 23's scale
# target): 20 workers, mu 20 (generation 0: one task a worker) and lambda
# 180 (with the parents, 200 a generation): 2 of 3, at or above the whole
# job's efficiency, at or below their own bound; not printed when every
# generation has as many tasks.
"$SIM" --network analytic --workers 20 --speeds lognormal:1:0.5 \
    --latency 10 --work-ms 100 --mu 20 --lambda 180 --reevaluate-parents \
    --generations 2 --seed 1 --quiet --stats > "$T/busy.out" ||
    fail "busy-generations run failed"
line=$(grep '^generations of 10 tasks a worker or more: ' "$T/busy.out") ||
    fail "no line for the generations of 10 tasks a worker: $(cat "$T/busy.out")"
eff=$(sed -n 's/^efficiency: \([0-9.]*\) %.*/\1/p' "$T/busy.out")
busy=$(printf '%s\n' "$line" | sed -n 's/.*: 2 of 3, efficiency \([0-9.]*\) %.*/\1/p')
max=$(printf '%s\n' "$line" | sed -n 's/.* at most \([0-9.]*\) %.*/\1/p')
[ -n "$eff" ] && [ -n "$busy" ] && [ -n "$max" ] || fail "unreadable: $line"
awk -v e="$eff" -v b="$busy" -v m="$max" 'BEGIN { exit !(e < b && b <= m && m <= 100) }' ||
    fail "whole job $eff %, busy generations $busy % (bound $max %): want whole < busy <= bound"
"$SIM" --network analytic --workers 20 --latency 10 --work-ms 100 \
    --mu 200 --lambda 200 --generations 2 --seed 1 --quiet --stats |
    grep -q '^generations of 10 tasks' &&
    fail "a line for the busy generations when every generation is one"
ok "--stats: the generations of 10 tasks a worker alone ($busy % of at most $max %; the job $eff %)"
