# Broken configuration files are refused with `file:line: message` and
# exit status 78 (EX_CONFIG) by `-n` and at start-up, for both daemons;
# `-nv` prints the effective configuration, which parses again to itself;
# unreadable TLS files stop masterd with status 78 and a message naming the
# file, logged with a priority prefix under systemd and a time stamp with
# -d; a journal masterd cannot use is named, and one that another masterd
# holds is said to be held by it, with its pid.  A 100,000-line config
# loads (the last value of a key winning) or is refused at a cap (kinds,
# env) naming its line; a 100,000-byte line is too long.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# expect_conf DAEMON TEXT PATTERN: -n on TEXT exits 78 saying PATTERN.
expect_conf() {
	printf '%b' "$2" > "$T/bad.conf"
	rc=0
	"$1" -n -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] || fail "$1 -n exited $rc for: $2"
	grep -qF "$T/bad.conf:$3" "$T/out" ||
	    fail "$1: wanted '$T/bad.conf:$3', got: $(cat "$T/out")"
	ok "$(basename "$1"): $3"
}

expect_conf "$MASTERD" 'listen = 127.0.0.1:7411\nbogus = 1\n' \
    "2: unknown key 'bogus'"
expect_conf "$MASTERD" '# c\npolicy = fifo\n' \
    "2: policy: 'fifo' is not one of wq, rr, rwq, r3q"
expect_conf "$MASTERD" 'queue_factor = 0\n' \
    "1: queue_factor: '0' is not a whole number from 1 to 128"
expect_conf "$MASTERD" 'max_frame = lots\n' "1: max_frame: 'lots' is not a size"
expect_conf "$MASTERD" 'listen = 127.0.0.1:99999\n' \
    "1: listen: '127.0.0.1:99999' is not host:port"
expect_conf "$MASTERD" 'handshake_timeout = 5 s\n' \
    "1: handshake_timeout: '5 s' is not a duration"
expect_conf "$MASTERD" '\n\njournal\n' "3: expected 'key = value'"
expect_conf "$MASTERD" 'max_job_memory = 8G\n' \
    " max_job_memory (8589934592 bytes) must not be above max_memory (4294967296)"
expect_conf "$MASTERD" 'max_memory = 64K\n' \
    "1: max_memory: '64K' is not a size from 1048576"
expect_conf "$WORKERD" 'cpus = many\n' "1: cpus: 'many' is not a whole number"
expect_conf "$WORKERD" 'master = [::1\n' "1: master: '[::1' is not host:port"
expect_conf "$WORKERD" 'reconnect_max = 10ms\n' \
    "1: reconnect_max: '10ms' is not a duration from 100ms"

# A file named with -f must exist.
rc=0
"$MASTERD" -n -f "$T/missing.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -q "missing.conf: No such file" "$T/out" ||
    fail "missing -f file: rc $rc, $(cat "$T/out")"
ok "masterd: a missing -f file is an error"

# A broken file stops the daemon at start-up, not only under -n.
printf 'policy = lifo\n' > "$T/bad.conf"
rc=0
"$MASTERD" -d -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] || fail "masterd started on a broken config (rc $rc)"
ok "masterd refuses to start on a broken config"

# -nv prints a config that parses again to the same config.  -n checks
# the TLS files too, so each daemon gets its own.
mkcerts w1
for d in "$MASTERD" "$WORKERD"; do
	c=master
	[ "$d" = "$WORKERD" ] && c=w1
	printf 'max_frame = 1M\nca = %s\ncert = %s\nkey = %s\n' \
	    "$T/certs/ca.pem" "$T/certs/$c.pem" "$T/certs/$c.key" > "$T/a.conf"
	"$d" -nv -f "$T/a.conf" > "$T/p1.conf" || fail "$d -nv failed"
	grep -q '^max_frame = 1M$' "$T/p1.conf" || fail "$d -nv lost max_frame"
	"$d" -nv -f "$T/p1.conf" > "$T/p2.conf" || fail "$d -nv of its output"
	cmp -s "$T/p1.conf" "$T/p2.conf" || fail "$d: -nv output does not round-trip"
	ok "$(basename "$d") -nv output parses again to itself"
done

# A 100,000-line config (issue 24, "Bad input") loads, or is refused at a
# cap with file:line and status 78; never a crash (scripts/check
# --sanitize runs this under ASan) or a hang (timeout 120 on a loaded
# machine; it takes about a second).  big FILE HEAD FORMAT: HEAD, then
# FORMAT 100,000 times with the line's index as %d.
big() {
	{ printf '%b\n' "$2"
	  awk -v f="$3" 'BEGIN { for (i = 0; i < 100000; i++) printf f "\n", i }'
	} > "$1"
}
tls() {
	printf '%s = %s\n' ca "$T/certs/ca.pem" cert "$T/certs/$1.pem" \
	    key "$T/certs/$1.key"
}
# masterd: comments, blank lines and one key 100,000 times; the last wins.
big "$T/big.conf" "$(tls master)" '# line %d\n\npolicy = rr'
echo 'policy = wq' >> "$T/big.conf"
[ "$(wc -l < "$T/big.conf")" -eq 300004 ] || fail "big.conf is not 300,004 lines"
timeout 120 "$MASTERD" -nv -f "$T/big.conf" > "$T/big.out" 2>&1 ||
    fail "masterd -nv on 300,004 lines: $(tail -n 3 "$T/big.out")"
grep -qE '^policy = "?wq"?$' "$T/big.out" || fail "the last policy did not win"
ok "masterd: a 300,004-line config loads, the last value winning"
# workerd: the same, then 100,000 kinds and 100,000 env lines, refused at
# the 129th kind and the 257th entry.
big "$T/big.conf" "master = 127.0.0.1:7411\n$(tls w1)" '# %d\n\ncpus = 3'
timeout 120 "$WORKERD" -nv -f "$T/big.conf" > "$T/big.out" 2>&1 ||
    fail "workerd -nv on 300,004 lines: $(tail -n 3 "$T/big.out")"
grep -qE '^cpus = "?3"?$' "$T/big.out" || fail "workerd lost cpus: $(head "$T/big.out")"
ok "workerd: a 300,004-line config loads"
for c in 'exec k%d = /bin/true:133: more than 128 kinds' \
    'env = A%d=1:261: env: more than 256 entries'; do
	big "$T/big.conf" "master = 127.0.0.1:7411\n$(tls w1)" "${c%%:*}"
	rc=0
	timeout 120 "$WORKERD" -n -f "$T/big.conf" > "$T/big.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] || fail "workerd -n exited $rc on 100,000 '${c%%:*}'"
	grep -qF "$T/big.conf:${c#*:}" "$T/big.out" ||
	    fail "wanted '$T/big.conf:${c#*:}', got: $(head -c 300 "$T/big.out")"
	ok "workerd: 100,000 '${c%% *} ...' lines are refused at line ${c#*:}"
done
# One line of 100,000 bytes, for both.
for d in "$MASTERD" "$WORKERD"; do
	awk 'BEGIN { printf "policy = "; for (i = 0; i < 100000; i++) printf "x"; print "" }' \
	    > "$T/long.conf"
	rc=0
	"$d" -n -f "$T/long.conf" > "$T/long.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -qF "$T/long.conf:1: line too long" "$T/long.out" ||
	    fail "$d on a 100,000-byte line: rc $rc, $(head -c 300 "$T/long.out")"
	ok "$(basename "$d"): a 100,000-byte line is refused as too long"
done

# Missing TLS files are named.
cat > "$T/m.conf" <<EOC
listen = 127.0.0.1:0
control = $T/ctl.sock
ca = $T/certs/ca.pem
cert = $T/certs/nothere.pem
key = $T/certs/master.key
EOC
rc=0
"$MASTERD" -d -f "$T/m.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 78 ] && grep -q "nothere.pem: No such file" "$T/out" ||
    fail "missing certificate: rc $rc, $(cat "$T/out")"
ok "masterd names a missing certificate file"

# The same failure, logged as systemd wants it (JOURNAL_STREAM set, no -d):
# a priority prefix and no time stamp; with -d, a time stamp.
grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} masterd: .*nothere\.pem' "$T/out" ||
    fail "-d lines lack time stamps: $(cat "$T/out")"
rc=0
JOURNAL_STREAM=8:9 "$MASTERD" -f "$T/m.conf" 2> "$T/journal.out" || rc=$?
[ "$rc" -eq 78 ] || fail "masterd with a missing certificate exited $rc"
grep -qE '^<4>.*nothere\.pem: No such file or directory$' "$T/journal.out" ||
    fail "no priority-prefixed line: $(cat "$T/journal.out")"
ok "journal lines carry <priority> and no time stamp; -d lines a time stamp"

# A journal masterd cannot use is named, and masterd exits 1 without
# touching it: a missing directory, a file that is not a database, and a
# journal another masterd holds.
jconf() {
	cat > "$T/j.conf" <<EOC
listen = 127.0.0.1:0
control = $T/$2.sock
ca = $T/certs/ca.pem
cert = $T/certs/master.pem
key = $T/certs/master.key
journal = $1
EOC
}
jconf "$T/no/dir/journal.db" j1
rc=0
"$MASTERD" -d -f "$T/j.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "journal $T/no/dir/journal.db" "$T/out" ||
    fail "journal in a missing directory: rc $rc, $(cat "$T/out")"
head -c 8192 /dev/urandom > "$T/garbage.db"
cp "$T/garbage.db" "$T/garbage.orig"
jconf "$T/garbage.db" j2
rc=0
"$MASTERD" -d -f "$T/j.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "journal $T/garbage.db" "$T/out" ||
    fail "garbage journal: rc $rc, $(cat "$T/out")"
cmp -s "$T/garbage.db" "$T/garbage.orig" || fail "masterd wrote to a garbage journal"
jconf "$T/shared.db" j3
"$MASTERD" -d -f "$T/j.conf" > "$T/first.out" 2>&1 &
first=$!
PIDS="$PIDS $first"
waitfor "grep -q 'listening on' '$T/first.out'" 10 || fail "first masterd did not start"
jconf "$T/shared.db" j4
rc=0
"$MASTERD" -d -f "$T/j.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "second masterd on one journal: rc $rc, $(cat "$T/out")"
grep -q "journal $T/shared.db: another masterd (pid $first) holds it" "$T/out" ||
    fail "second masterd on one journal does not name the holder: $(cat "$T/out")"
grep -q "database is locked" "$T/out" &&
    fail "second masterd on one journal says SQLite's words: $(cat "$T/out")"
kill -0 "$first" || fail "the first masterd died"
ok "an unusable journal is named and masterd exits 1"
ok "a journal held by another masterd names that masterd and its pid"
