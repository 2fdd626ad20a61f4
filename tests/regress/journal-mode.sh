# The journal is a credential (masterd(8), JOURNAL): a new one and its
# -wal and -shm files are mode 0600; a journal, -wal or -shm that group or
# others may read is made 0600 at start-up with a warning naming each
# file, and masterd then runs from it as before.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
start_master
"$R3QCTL" jobs > /dev/null || fail "r3qctl jobs"
for f in "$T/journal.db" "$T/journal.db-wal" "$T/journal.db-shm"; do
	[ -e "$f" ] || continue
	m=$(stat -c %a "$f")
	[ "$m" = 600 ] || fail "$f is mode $m, not 600"
done
ok "a new journal and its -wal/-shm are 0600"

kill -9 "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
chmod 644 "$T/journal.db"
[ -e "$T/journal.db-wal" ] && chmod 640 "$T/journal.db-wal"
mv "$T/masterd.log" "$T/masterd.0.log"
start_master
grep -q "journal file $T/journal.db was mode 0644, open to others: made 0600" "$T/masterd.log" ||
    fail "no warning for a 0644 journal: $(grep journal "$T/masterd.log")"
if [ -e "$T/journal.db-wal" ]; then
	m=$(stat -c %a "$T/journal.db-wal")
	[ "$m" = 600 ] || fail "the -wal file is mode $m"
fi
[ "$(stat -c %a "$T/journal.db")" = 600 ] || fail "the journal is mode $(stat -c %a "$T/journal.db")"
"$R3QCTL" jobs > /dev/null || fail "r3qctl jobs after the repair"
ok "a 0644 journal is made 0600 at start-up: $(grep -o 'journal file .*made 0600' "$T/masterd.log" | head -n 1)"
