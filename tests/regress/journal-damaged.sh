# A damaged journal (issue 24, "Bad input"): truncated in the middle of a
# page, or with a page overwritten, masterd refuses to start, with status
# 1 and one line naming the file and what SQLite found, and without
# touching the file; the undamaged journal still starts and lists the job
# it holds.  (tests/unit/test_journal tries every page.)
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
start_master
start_worker w1
wait_workers 1
"$R3QCTL" es --mu 10 --lambda 30 --dim 10 --generations 20 --seed 3 --quiet \
    > "$T/job.out" || fail "job failed"
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
[ ! -e "$T/journal.db-wal" ] || fail "the WAL outlived a clean stop"
cp "$T/journal.db" "$T/good.db"
size=$(wc -c < "$T/good.db")
[ "$size" -ge 16384 ] || fail "the journal is too small to damage: $size bytes"

# start_damaged NAME: masterd on the damaged journal must refuse to start.
start_damaged() {
	cp "$T/journal.db" "$T/$1.db"
	: > "$T/$1.log"
	rc=0
	timeout 30 "$MASTERD" -d -f "$T/masterd.conf" > "$T/$1.log" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "$1: masterd exited $rc, not 1: $(cat "$T/$1.log")"
	grep -q "journal $T/journal.db: .*damaged" "$T/$1.log" ||
	    fail "$1: no line names the journal as damaged: $(cat "$T/$1.log")"
	cmp -s "$T/journal.db" "$T/$1.db" || fail "$1: masterd changed the file"
	! grep -qi "assert\|sanitizer\|segmentation" "$T/$1.log" ||
	    fail "$1: masterd crashed"
}

# Truncated in the middle of its last page but one.
head -c $((size - 4096 - 1000)) "$T/good.db" > "$T/journal.db"
start_damaged truncated
ok "a journal truncated mid-page: refused, named, untouched"

# Page 3 overwritten (a b-tree page of the schema's first tables).
cp "$T/good.db" "$T/journal.db"
printf '%4096s' '' | tr ' ' '\245' |
    dd of="$T/journal.db" bs=4096 seek=2 conv=notrunc 2>/dev/null
start_damaged overwritten
ok "a journal with a page overwritten: refused, named, untouched"

cp "$T/good.db" "$T/journal.db"
: > "$T/masterd.log"
start_master
"$R3QCTL" jobs | grep -qE '^1 +done' || fail "the sound journal lost its job: $("$R3QCTL" jobs)"
ok "the undamaged journal starts and lists its job"
