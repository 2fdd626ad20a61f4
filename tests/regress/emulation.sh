# The grid emulation and the paper's measurements: workers of speeds 1, 2
# and 3 behind an emulated delay run an R3Q job with a synthetic load; the
# answer equals --local; the result reports replicas, losing copies
# terminated held and running (adding up to what was replicated away),
# a time breakdown that adds up to the total, and an efficiency; the
# fast worker did more tasks than the slow one; the same job under
# queue_factor auto (R3Q's speed-aware tail) gives the same answer.  Bad emulation options
# are refused with a message.
. "${top_srcdir:-.}/tests/regress/lib.sh"

ES="--mu 10 --lambda 30 --dim 10 --generations 4 --seed 9 --reevaluate-parents --work-ms 30"

mkcerts w1 w2 w3
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"
start_master
for i in 1 2 3; do
	WORKER_EXTRA="speed = $i
delay = 5ms"
	start_worker "w$i"
done
wait_workers 3
"$R3QCTL" workers > "$T/workers"
grep -qE '^w3 .* 3\.00 ' "$T/workers" || fail "w3's speed not shown: $(cat "$T/workers")"

# The paper's R3Q (queue_factor 2; auto, the default, is below).
"$R3QCTL" es $ES --policy r3q --queue-factor 2 --csv "$T/dist.csv" --json > "$T/r.json" ||
    fail "job failed"
cmp -s "$T/local.csv" "$T/dist.csv" || fail "answer differs from --local"
ok "an R3Q job on emulated speeds and delay gives the --local answer"

num() { grep -oE "\"$1\":[^,}]*" "$T/r.json" | head -n 1 | cut -d: -f2; }
rep=$(num replicas); kh=$(num killed_held); kr=$(num killed_running)
[ "$rep" -gt 0 ] || fail "R3Q sent no replicas"
[ $((kh + kr)) -gt 0 ] || fail "no losing copy was terminated"
[ $((kh + kr)) -le "$rep" ] || fail "more copies terminated ($kh+$kr) than replicas ($rep)"
ok "replicas $rep, losing copies terminated: $kh held, $kr running"

awk -v t="$(num elapsed)" -v s="$(num sync)" -v c="$(num comm)" \
    -v p="$(num compute)" -v e="$(num efficiency)" 'BEGIN {
	if (s + c + p > t * 1.02 || s + c + p < t * 0.8) exit 1
	if (e <= 0.2 || e > 1.05) exit 2
}' || fail "implausible breakdown or efficiency: $(head -c 600 "$T/r.json")"
ok "sync + comm + compute adds up to the total; efficiency $(num efficiency)"

"$R3QCTL" workers > "$T/workers2"
d1=$(awk '$1 == "w1" { print $9 }' "$T/workers2")
d3=$(awk '$1 == "w3" { print $9 }' "$T/workers2")
[ "$d3" -gt "$d1" ] || fail "w3 (speed 3) did $d3 tasks, w1 (speed 1) $d1"
ok "the speed-3 worker did more tasks ($d3) than the speed-1 worker ($d1)"

# queue_factor auto: R3Q's tail is speed-aware (a replica only where it
# can win, from the workers' estimates); the answer must not change.
"$R3QCTL" es $ES --policy r3q --queue-factor auto --csv "$T/auto.csv" \
    --json > "$T/ra.json" || fail "job with queue_factor auto failed"
cmp -s "$T/local.csv" "$T/auto.csv" ||
    fail "queue_factor auto: answer differs from --local"
ok "R3Q with queue_factor auto (the speed-aware tail) gives the --local answer"

"$R3QCTL" result 1 > "$T/table"
[ "$(grep -cE '^ +[0-9]+ ' "$T/table")" -eq 5 ] ||
    fail "result table does not have one row per generation: $(cat "$T/table")"
ok "r3qctl result prints a row per generation"

rc=0
"$WORKERD" -n -f /dev/null --load-profile 5:1.0 > "$T/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "times must start at 0" "$T/out" ||
    fail "a bad load profile was accepted: $(cat "$T/out")"
rc=0
"$WORKERD" -n -f /dev/null --speed 0 > "$T/out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "speed: '0' is not a number above 0" "$T/out" ||
    fail "speed 0 was accepted: $(cat "$T/out")"
"$WORKERD" -nv -f "$T/w1.conf" --load-profile 0:1,10:0.35 --speed 2.5 \
    --delay 30ms > "$T/out" 2>&1 || fail "good emulation options refused"
grep -q '^load_profile = "0:1,10:0.35"$' "$T/out" && grep -q '^speed = 2.5$' "$T/out" &&
    grep -q '^delay = 30ms$' "$T/out" || fail "-nv lost an option: $(cat "$T/out")"
ok "emulation options are checked and printed"
