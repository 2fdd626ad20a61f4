# Token guesses are bounded per source address and in all (doc/security.md).
# 253 loopback addresses (127.0.0.2 to 127.0.0.254) guess in turn, 10
# rounds: none gets more wrong answers than its own bucket holds (5, and
# one more every 12 s of the run), although in a table of fixed slots
# some of them would share one and reset each other (before, 46-57 of
# them got all 10).  An unknown id and a wrong secret get the same answer
# (tokens.sh).  Then with join_rate_global = 10, guesses from 6 fresh
# addresses are refused "from all addresses" past 10 (and what the run's
# length gives back), and so is the right token while the bound holds.
. "${top_srcdir:-.}/tests/regress/lib.sh"

JOINPEER=$top_builddir/tests/regress/r3q-joinpeer
mkcerts w1
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key
join_rate_global = 0"
start_master

srcs=
i=2
while [ $i -le 254 ]; do
	srcs="$srcs 127.0.0.$i"
	i=$((i + 1))
done
t0=$(date +%s)
"$JOINPEER" guess 127.0.0.1 "$PORT" 10 $srcs > "$T/guess.out" 2> "$T/guess.err" ||
    fail "r3q-joinpeer guess: $(tail -n 3 "$T/guess.err")"
secs=$(( $(date +%s) - t0 + 1 ))
# What a bucket of 5 refilled one every 12 s can give in secs.
bound=$(( 5 + (secs + 11) / 12 ))
max=$(sed -n 's/^max wrong //p' "$T/guess.out")
over=$(awk -v b="$bound" '$2 == "wrong" && $3 > b' "$T/guess.out" | wc -l)
[ -n "$max" ] && [ "$over" = 0 ] ||
    fail "$over of 253 sources got more than $bound wrong answers in $secs s: $(awk -v b="$bound" '$3 > b' "$T/guess.out" | head -n 5)"
busy=$(awk '$2 == "wrong" && $5 > 0' "$T/guess.out" | wc -l)
[ "$busy" = 253 ] || fail "only $busy of 253 sources were told to slow down"
ok "253 sources, 10 rounds each in ${secs}s: at most $max wrong answers each (bound $bound), every source then refused"

kill "$MASTER_PID"
wait "$MASTER_PID" 2> /dev/null || true
mv "$T/masterd.log" "$T/masterd.1.log"
MASTER_EXTRA="ca_key = $C/ca.key
join_rate_global = 10"
start_master
t0=$(date +%s)
"$JOINPEER" guess 127.0.0.1 "$PORT" 3 127.0.1.1 127.0.1.2 127.0.1.3 127.0.1.4 127.0.1.5 127.0.1.6 \
    > "$T/global.out" 2> "$T/guess.err" || fail "r3q-joinpeer guess: $(tail -n 3 "$T/guess.err")"
secs=$(( $(date +%s) - t0 + 1 ))
wrong=$(awk '$1 != "max" && $2 == "wrong" { n += $3 } END { print n + 0 }' "$T/global.out")
global=$(awk '$2 == "wrong" { n += $7 } END { print n + 0 }' "$T/global.out")
bound=$(( 10 + (secs * 10 + 59) / 60 ))
[ "$wrong" -le "$bound" ] && [ "$global" -gt 0 ] ||
    fail "join_rate_global 10: $wrong wrong answers (bound $bound), $global refused globally: $(cat "$T/global.out")"
tok=$("$R3QCTL" token create 2> /dev/null | cut -d. -f2,3)
# One more guess first, so that the bucket is empty just now.
"$JOINPEER" guess 127.0.0.1 "$PORT" 1 127.0.1.7 > /dev/null 2>&1
"$TESTPEER" join 127.0.0.1 "$PORT" "$tok" g1 ec > "$T/g1.out" 2>&1
grep -q "^error: too many failed join attempts from all addresses (join_rate_global 10 a minute)" "$T/g1.out" ||
    fail "the right token under the global bound: $(cat "$T/g1.out")"
ok "join_rate_global 10: $wrong wrong answers from 6 sources in ${secs}s, $global refused from all addresses, the right token too"
