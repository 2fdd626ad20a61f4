# r3qctl exchange plan schedules a total exchange without a master: on the
# fatal matrix of 8 processors the portfolio finishes well under the 2h of
# caterpillar and open shop and within 1.55h; on a random matrix and on a
# hand-written matrix file every algorithm prints a schedule whose ratio
# to t_tb is at least 1; --json parses, and its events deliver every byte
# once, one send and one receive at a time per processor, with the
# completion time the last end; the same seed gives the same output;
# bad matrix files are refused with file:line: message and status 1,
# bad flags with the usage and status 64; -h and --help are help.
. "${top_srcdir:-.}/tests/regress/lib.sh"

export R3Q_CONTROL="$T/no.sock"
ALGOS="caterpillar openshop static dynamic improved lbos insertion portfolio"

# ratio_of FILE: the ratio on the summary line.
ratio_of() {
	sed -n 's/.*, ratio \([0-9.]*\),.*/\1/p' "$1"
}

# checkjson FILE [MAXRATIO]: the JSON schedule is valid.
checkjson() {
	python3 - "$1" "${2:-1e9}" <<'EOP' || fail "json check of $1"
import json, sys
d = json.load(open(sys.argv[1]))
p, ev, eps = d["p"], d["events"], 1e-9 * (1 + d["completion"])
assert d["ratio"] >= 1 - 1e-9, d["ratio"]
assert d["ratio"] <= float(sys.argv[2]), d["ratio"]
assert abs(d["completion"] / d["lower_bound"] - d["ratio"]) < 1e-9
assert abs(max(e["end"] for e in ev) - d["completion"]) <= eps
for side in ("src", "dst"):
    for q in range(p):
        mine = sorted((e for e in ev if e[side] == q), key=lambda e: e["start"])
        for a, b in zip(mine, mine[1:]):
            assert b["start"] >= a["end"] - eps, (side, q, a, b)
pairs = {}
for e in ev:
    assert e["src"] != e["dst"] and e["bytes"] > 0
    pairs.setdefault((e["src"], e["dst"]), []).append(e["piece"])
for k, v in pairs.items():
    assert sorted(v) == list(range(len(v))), (k, v)
assert len(pairs) == p * (p - 1), len(pairs)
EOP
}

# The fatal matrix: the known algorithms take 2h, the portfolio < 1.55h.
"$R3QCTL" exchange plan --fatal 8 > "$T/fatal" 2> "$T/err" ||
    fail "--fatal 8: $(cat "$T/err")"
grep -q '^exchange plan: 8 processors, fatal matrix, h 6\.' "$T/fatal" ||
    fail "--fatal 8: no summary: $(head -n 2 "$T/fatal")"
grep -q '^P7 sends:' "$T/fatal" || fail "--fatal 8: no P7"
h=$(sed -n 's/.*, h \([0-9.]*\) s,.*/\1/p' "$T/fatal")
for a in caterpillar openshop portfolio; do
	"$R3QCTL" exchange plan --fatal 8 --algo $a --json > "$T/f-$a.json" ||
	    fail "--fatal 8 --algo $a"
	checkjson "$T/f-$a.json"
done
python3 - "$T" "$h" <<'EOP' || fail "fatal 8: not 2h for caterpillar/openshop or not <= 1.55h for the portfolio"
import json, sys
t, h = sys.argv[1], float(sys.argv[2])
c = {a: json.load(open(f"{t}/f-{a}.json"))["completion"] / h
     for a in ("caterpillar", "openshop", "portfolio")}
print(c)
assert c["caterpillar"] >= 1.9 and c["openshop"] >= 1.9
assert c["portfolio"] <= 1.55
EOP
ok "--fatal 8: caterpillar and open shop 2h, the portfolio <= 1.55h"

# A random matrix, every algorithm; the same seed gives the same bytes.
for a in $ALGOS; do
	"$R3QCTL" exchange plan --random 8 --seed 3 --algo $a --json \
	    > "$T/r-$a.json" 2> "$T/err" || fail "--random 8 --algo $a"
	checkjson "$T/r-$a.json"
done
"$R3QCTL" exchange plan --random 8 --seed 3 > "$T/r1"
"$R3QCTL" exchange plan --random 8 --seed 3 > "$T/r2"
cmp -s "$T/r1" "$T/r2" || fail "--random 8 --seed 3 differs between runs"
"$R3QCTL" exchange plan --random 8 --seed 4 > "$T/r3"
cmp -s "$T/r1" "$T/r3" && fail "--seed 3 and --seed 4 gave the same"
python3 - "$T" $ALGOS <<'EOP' || fail "the portfolio is worse than an algorithm"
import json, sys
t = sys.argv[1]
c = {a: json.load(open(f"{t}/r-{a}.json"))["completion"] for a in sys.argv[2:]}
assert all(c["portfolio"] <= v for v in c.values()), c
EOP
ok "--random 8: every algorithm valid, ratio >= 1, portfolio the shortest, deterministic"

# A matrix file.
cat > "$T/m.txt" <<'EOM'
# four nodes; node 3 is behind a slow link
p 4
startup 0.0001
bandwidth
-    1e8  1e8  1e6
1e8  -    1e8  1e6
1e8  1e8  -    1e6
1e6  1e6  1e6  -
bytes
-        1000000  1000000  1000000
1000000  -        1000000  1000000
1000000  1000000  -        0
1000000  1000000  1000000  -
EOM
for a in $ALGOS; do
	"$R3QCTL" exchange plan --matrix "$T/m.txt" --algo $a > "$T/m-$a" \
	    2> "$T/err" || fail "--matrix --algo $a: $(cat "$T/err")"
	r=$(ratio_of "$T/m-$a")
	[ -n "$r" ] || fail "--matrix --algo $a: no ratio"
	awk -v r="$r" 'BEGIN { exit !(r >= 1) }' || fail "$a: ratio $r < 1"
done
"$R3QCTL" exchange plan --matrix "$T/m.txt" --json > "$T/m.json"
python3 - "$T/m.json" <<'EOP' || fail "matrix file: 2 -> 3 has no bytes, yet an event"
import json, sys
d = json.load(open(sys.argv[1]))
assert not [e for e in d["events"] if (e["src"], e["dst"]) == (2, 3)]
assert len({(e["src"], e["dst"]) for e in d["events"]}) == 11
EOP
ok "--matrix: every algorithm, a message of 0 bytes is none"

# Bad files: file:line: message, exit 1.
# badfile TEXT PATTERN
badfile() {
	printf '%b' "$1" > "$T/bad.txt"
	rc=0
	"$R3QCTL" exchange plan --matrix "$T/bad.txt" > "$T/out" 2> "$T/err" ||
	    rc=$?
	[ "$rc" -eq 1 ] || fail "exit $rc, not 1, for: $1"
	[ -s "$T/out" ] && fail "wrote to stdout for: $1"
	grep -qF "r3qctl: $T/bad.txt:$2" "$T/err" ||
	    fail "wanted '$T/bad.txt:$2', got: $(cat "$T/err")"
	return 0
}
badfile 'p 2\nstartup 0\nbandwidth\n- 1e8\n1e8\n' \
    "5: bandwidth: row 2 has 1 values, expected 2"
badfile 'p 3\nbandwidth -1\n' "2: bandwidth: '-1' is not above 0"
badfile 'p 2\nstartup 0\nbandwidth 0\n' "3: bandwidth: '0' is not above 0"
badfile 'p 2\n# c\nstartup NaN\n' "3: startup: 'NaN' is not a finite number"
badfile 'p 1\n' "1: p: '1' is not a whole number from 2"
badfile 'p 2\nstartup 0\nbandwidth 1\n' "3: no bytes section"
rc=0
"$R3QCTL" exchange plan --matrix "$T/missing.txt" > /dev/null 2> "$T/err" ||
    rc=$?
[ "$rc" -eq 1 ] && grep -q "missing.txt: No such file" "$T/err" ||
    fail "a missing file: exit $rc, $(cat "$T/err")"
ok "bad matrix files: file:line: message and exit 1"

# Usage errors: 64 with the usage on stderr; help: 0 on stdout.
for args in "exchange" "exchange bogus" "exchange plan" \
    "exchange plan --random 1" "exchange plan --fatal 2" \
    "exchange plan --random 4 --fatal 4" "exchange plan --algo fastest --random 4" \
    "exchange plan --random 4 extra" "exchange plan --seed x --random 4"; do
	rc=0
	# shellcheck disable=SC2086
	"$R3QCTL" $args > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 64 ] || fail "r3qctl $args: exit $rc, not 64"
	grep -q '^usage: ' "$T/err" || fail "r3qctl $args: no usage on stderr"
	[ -s "$T/out" ] && fail "r3qctl $args: wrote to stdout"
done
for args in "exchange -h" "exchange --help" "exchange plan -h" \
    "exchange plan --random 4 --help"; do
	rc=0
	# shellcheck disable=SC2086
	"$R3QCTL" $args > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "r3qctl $args: exit $rc"
	grep -q '^usage: r3qctl exchange plan' "$T/out" ||
	    fail "r3qctl $args: no usage on stdout"
	[ -s "$T/err" ] && fail "r3qctl $args: wrote to stderr"
done
ok "usage errors exit 64 with the usage on stderr; -h and --help exit 0"
