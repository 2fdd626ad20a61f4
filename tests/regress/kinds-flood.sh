# A flood of kind names by one client leaves the others' kinds working:
# max_client_kinds bounds the distinct kinds one client's batches hold.
# A client on the control socket asks for 20 kinds under a cap of 8 and is
# refused at the ninth, with an error naming it and the cap; a client over
# TLS then gets new kinds of its own.  After masterd restarts on its
# journal the first client's batches hold their kinds again: it is still
# refused a new one, and the other is not.
. "${top_srcdir:-.}/tests/regress/lib.sh"

IDLE=$top_builddir/tests/regress/r3q-idleclient

mkcerts w1
MASTER_EXTRA="max_client_kinds = 8"
start_master

# tls CMD...: run CMD as the client of the TLS certificate.
tls() {
	R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
	    R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key \
	    R3Q_CONTROL=$T/none.sock "$@"
}

# flood NAME N PREFIX [tls]: r3q-idleclient kinds, its stdin a fifo held
# open on a descriptor so that its job keeps its client; waits for its
# verdict in $T/NAME.out.
fd=7
flood() {
	mkfifo "$T/$1.in"
	if [ "${4:-}" = tls ]; then
		tls "$IDLE" kinds "$2" "$3" < "$T/$1.in" > "$T/$1.out" \
		    2> "$T/$1.err" &
	else
		"$IDLE" kinds "$2" "$3" < "$T/$1.in" > "$T/$1.out" \
		    2> "$T/$1.err" &
	fi
	PIDS="$PIDS $!"
	eval "exec $fd> '$T/$1.in'"
	fd=$((fd + 1))
	waitfor "grep -qE '^(refused|accepted)' '$T/$1.out'" 30 ||
	    fail "$1: no verdict: $(cat "$T/$1.err")"
}

flood a 20 flood-
grep -q '^refused at 8: too many kinds: client .*max_client_kinds (8)' \
    "$T/a.out" || fail "the ninth kind was not refused so: $(cat "$T/a.out")"
ok "a client's ninth kind under max_client_kinds 8 is refused: $(cut -c1-120 "$T/a.out")"

flood b 3 other- tls
grep -q '^accepted 3' "$T/b.out" || fail "another client's kinds: $(cat "$T/b.out")"
ok "another client's new kinds are taken meanwhile"

# The same client again, in another job: it holds 8 kinds still.
flood a2 1 again-
grep -q '^refused at 0: too many kinds: client ' "$T/a2.out" ||
    fail "the client's kinds were not counted across jobs: $(cat "$T/a2.out")"
ok "the cap counts the client's kinds across its jobs"

sleep 1		# the journal has committed the batches
crash_master
flood a3 1 after-
grep -q '^refused at 0: too many kinds: client ' "$T/a3.out" ||
    fail "after a restart the flood's kinds were not held: $(cat "$T/a3.out")"
flood b2 2 fresh- tls
grep -q '^accepted 2' "$T/b2.out" ||
    fail "after a restart another client's kinds: $(cat "$T/b2.out")"
ok "after a restart the flood still holds its 8 kinds and the other client's new kinds are taken"
master_alive
