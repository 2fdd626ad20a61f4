#!/bin/sh
# Owners say how their client authenticated: unix:NAME on the control
# socket, tls:CN with a client certificate, so that a certificate whose CN
# is a Unix user's name (mkcerts --client root) owns nothing of that
# user's.  Such a client asks for the user's batch job and es job with
# every request that names a job (attach, submit, close a batch, cancel
# tasks, acknowledge outputs, close, cancel, query, trace) and with
# r3qctl result, wait, cancel and report, and gets "no such job N" each
# time, the same words as for a job that does not exist; the jobs stay
# running; the operators' token and drain are refused to it.  Two named clients (alice, bob) see only their own jobs; the
# control socket sees every job, with its qualified owner.  A journal of
# an older masterd (tests/data/journal-v4.db) named owners bare: at load
# "root", a user of this host, becomes unix:root, which a CN=root
# certificate cannot touch, and a name that is no user (zq-carol, written
# into the fixture) becomes tls:zq-carol, which its certificate still
# owns.  Caps on live batches: with max_batches_job 3 and
# max_batches_client 5, alice's fourth batch in one job and her sixth in
# all are refused with errors naming the cap and her, while bob still
# opens batches; once a job of hers ends, its batches no longer count.
. "${top_srcdir:-.}/tests/regress/lib.sh"

me=$(id -un)
case $me in
ca|master|client|alice|bob|zq-carol)
	echo "SKIP: the test's user is named $me, one of the names it issues"
	exit 77
	;;
esac
mkcerts w1
"$MKCERTS" --client "$me" --client alice --client bob --client zq-carol \
    "$T/certs" > /dev/null || fail "mkcerts --client failed"
openssl x509 -in "$T/certs/$me.pem" -noout -subject |
    grep -q "OU = client, CN = $me\$" ||
    fail "mkcerts --client $me: $(openssl x509 -in "$T/certs/$me.pem" -noout -subject)"
ok "mkcerts --client issues named client certificates (OU=client, CN=$me)"

MASTER_EXTRA="max_batches_job = 3
max_batches_client = 5"
start_master

# as NAME badclient MODE ARGS: r3q-testpeer's batch client as NAME.
as() {
	_n=$1
	shift
	"$TESTPEER" -a "$T/certs/ca.pem" -c "$T/certs/$_n.pem" \
	    -k "$T/certs/$_n.key" "$@"
}
# tls NAME ARGS: r3qctl over TLS only, as NAME.
tls() {
	_n=$1
	shift
	R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem \
	    R3Q_CERT=$T/certs/$_n.pem R3Q_KEY=$T/certs/$_n.key \
	    R3Q_CONTROL=$T/none.sock timeout 60 "$R3QCTL" "$@"
}
# nosuch WHO JOB FILE: every request of badclient touch in FILE got "no
# such job JOB".
nosuch() {
	[ "$(grep -c ": error: no such job $2\$" "$3")" -eq 9 ] ||
	    fail "$1 on job $2: $(cat "$3")"
}

# The user's jobs on the control socket: a batch job (map, of a kind no
# worker offers: it waits) and an es job (no worker: it waits).
echo 1 | timeout 120 "$R3QCTL" map no-such-kind > /dev/null 2>&1 &
MAPPID=$!
PIDS="$PIDS $MAPPID"
waitfor "'$R3QCTL' jobs | grep -q 'waiting: no worker offers kind no-such-kind'" 10 ||
    fail "the map job does not wait: $("$R3QCTL" jobs)"
bjob=$("$R3QCTL" jobs | awk '$2 == "running" && $7 == "batch" { print $1 }' |
    tail -n 1)
ejob=$("$R3QCTL" submit es --mu 2 --lambda 4 --dim 2 --generations 50) ||
    fail "submit es on the control socket failed"
"$R3QCTL" jobs > "$T/jobs.out"
grep -qE "^$bjob +running .*\\(unix:$me\\)\$" "$T/jobs.out" &&
    grep -qE "^$ejob +running .*\\(unix:$me\\)\$" "$T/jobs.out" ||
    fail "the control socket's jobs are not unix:$me's: $(cat "$T/jobs.out")"
ok "jobs of the control socket belong to unix:$me"

as "$me" badclient 127.0.0.1 "$PORT" touch "$bjob" > "$T/touch-b" 2>&1
nosuch "CN=$me" "$bjob" "$T/touch-b"
as "$me" badclient 127.0.0.1 "$PORT" touch "$ejob" > "$T/touch-e" 2>&1
nosuch "CN=$me" "$ejob" "$T/touch-e"
as "$me" badclient 127.0.0.1 "$PORT" touch 999999 > "$T/touch-n" 2>&1
nosuch "CN=$me" 999999 "$T/touch-n"
sed "s/$ejob\$/999999/" "$T/touch-e" | cmp -s - "$T/touch-n" ||
    fail "another's job and no job are told apart: $(diff "$T/touch-e" "$T/touch-n")"
grep -q "client tls:$me .* asked for job $bjob of unix:$me: refused" \
    "$T/masterd.log" || fail "the refusal is not logged with both owners"
for c in result wait cancel report; do
	rc=0
	tls "$me" $c "$ejob" > "$T/$c.out" 2> "$T/$c.err" || rc=$?
	[ "$rc" -ne 0 ] && grep -q "no such job $ejob\$" "$T/$c.err" ||
	    fail "r3qctl $c over TLS as CN=$me: status $rc: $(cat "$T/$c.err" "$T/$c.out")"
done
tls "$me" jobs > "$T/tjobs" 2>&1 || fail "jobs over TLS: $(cat "$T/tjobs")"
grep -qE "^($bjob|$ejob) " "$T/tjobs" &&
    fail "CN=$me lists unix:$me's jobs: $(cat "$T/tjobs")"
"$R3QCTL" jobs > "$T/jobs.out"
grep -qE "^$bjob +running " "$T/jobs.out" &&
    grep -qE "^$ejob +running " "$T/jobs.out" ||
    fail "unix:$me's jobs were touched: $(cat "$T/jobs.out")"
for c in "token list" "drain w1"; do
	rc=0
	# shellcheck disable=SC2086
	tls "$me" $c > "$T/adm.out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] && grep -q "control socket" "$T/adm.out" ||
	    fail "r3qctl $c over TLS as CN=$me: status $rc: $(cat "$T/adm.out")"
done
ok "CN=$me over TLS: 'no such job' for unix:$me's jobs in all 9 requests and r3qctl result, wait, cancel, report, as for no job; no operator's command"

# Two named clients, each with a batch job.
as alice badclient 127.0.0.1 "$PORT" batches 1 > "$T/alice0" 2>&1
ajob=$(sed -n 's/^job //p' "$T/alice0")
grep -q '^batch 1: accepted$' "$T/alice0" || fail "alice: $(cat "$T/alice0")"
as bob badclient 127.0.0.1 "$PORT" batches 1 > "$T/bob0" 2>&1
bojob=$(sed -n 's/^job //p' "$T/bob0")
grep -q '^batch 1: accepted$' "$T/bob0" || fail "bob: $(cat "$T/bob0")"
as bob badclient 127.0.0.1 "$PORT" touch "$ajob" > "$T/touch-a" 2>&1
nosuch bob "$ajob" "$T/touch-a"
as alice badclient 127.0.0.1 "$PORT" jobs > "$T/ajobs" 2>&1
as bob badclient 127.0.0.1 "$PORT" jobs > "$T/bjobs" 2>&1
[ "$(cat "$T/ajobs")" = "job $ajob running tls:alice" ] &&
    [ "$(cat "$T/bjobs")" = "job $bojob running tls:bob" ] ||
    fail "alice sees: $(cat "$T/ajobs"); bob sees: $(cat "$T/bjobs")"
"$R3QCTL" jobs > "$T/jobs.out"
grep -qE "^$ajob .*\\(tls:alice\\)\$" "$T/jobs.out" &&
    grep -qE "^$bojob .*\\(tls:bob\\)\$" "$T/jobs.out" ||
    fail "the control socket does not see both: $(cat "$T/jobs.out")"
ok "alice and bob see only their own jobs; the control socket sees both, as tls:alice and tls:bob"

# Caps: alice holds 1 live batch already.
as alice badclient 127.0.0.1 "$PORT" batches 4 > "$T/alice1" 2>&1
j1=$(sed -n 's/^job //p' "$T/alice1")
[ "$(grep -c ': accepted$' "$T/alice1")" -eq 3 ] &&
    grep -q "^batch 4: error: too many batches: job $j1 of tls:alice has 3 not ended (max_batches_job)" "$T/alice1" ||
    fail "max_batches_job 3: $(cat "$T/alice1")"
as alice badclient 127.0.0.1 "$PORT" batches 2 > "$T/alice2" 2>&1
j2=$(sed -n 's/^job //p' "$T/alice2")
grep -q '^batch 1: accepted$' "$T/alice2" &&
    grep -q "^batch 2: error: too many batches: tls:alice has 5 not ended in its jobs (max_batches_client)" "$T/alice2" ||
    fail "max_batches_client 5: $(cat "$T/alice2")"
as bob badclient 127.0.0.1 "$PORT" batches 2 > "$T/bob1" 2>&1
[ "$(grep -c ': accepted$' "$T/bob1")" -eq 2 ] ||
    fail "bob cannot open batches while alice is at her cap: $(cat "$T/bob1")"
as alice badclient 127.0.0.1 "$PORT" cancel "$j1" > "$T/cancel1" 2>&1
grep -q '^cancelled$' "$T/cancel1" || fail "alice cancel $j1: $(cat "$T/cancel1")"
as alice badclient 127.0.0.1 "$PORT" batches 1 "$j2" > "$T/alice3" 2>&1
grep -q '^batch 2: accepted$' "$T/alice3" ||
    fail "alice's ended batches still count: $(cat "$T/alice3")"
ok "max_batches_job and max_batches_client refuse alice's batches, naming the cap and her; bob still opens his; ended ones do not count"
master_alive
kill "$MAPPID" 2>/dev/null || true

# An older masterd's journal: bare owners.
command -v sqlite3 > /dev/null || fail "sqlite3 missing (sqlite3)"
kill "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
mv "$T/masterd.log" "$T/masterd-1.log"
cp "$top_srcdir/tests/data/journal-v4.db" "$T/journal.db"
chmod 600 "$T/journal.db"
python3 - "$T/journal.db" <<'EOF' || fail "cannot give job 3 of the fixture a bare owner zq-carol"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(extra,) = db.execute("SELECT extra FROM jobs WHERE id = 3").fetchone()
old = b"\x62\x04root"
assert extra.count(old) == 1, extra
db.execute("UPDATE jobs SET extra = ? WHERE id = 3",
           (extra.replace(old, b"\x62\x08zq-carol"),))
db.commit()
EOF
MASTER_EXTRA=
start_master
waitfor "grep -q 'batch job 3 resumed from the journal' '$T/masterd.log'" 10 ||
    fail "the fixture's batch jobs did not resume"
"$R3QCTL" jobs > "$T/jobs.out"
grep -qE "^2 +running .*\\(unix:root\\)\$" "$T/jobs.out" &&
    grep -qE "^3 +running .*\\(tls:zq-carol\\)\$" "$T/jobs.out" ||
    fail "bare owners of the fixture: $(cat "$T/jobs.out")"
grep -q "jobs of an older masterd's journal owned by root are now unix:root's" "$T/masterd.log" &&
    grep -q "jobs of an older masterd's journal owned by zq-carol are now tls:zq-carol's" "$T/masterd.log" ||
    fail "the qualified owners are not logged: $(grep "older masterd" "$T/masterd.log")"
if [ "$me" = root ]; then
	rootcert=$me
else
	"$MKCERTS" --client root "$T/certs" > /dev/null ||
	    fail "mkcerts --client root failed"
	rootcert=root
fi
as "$rootcert" badclient 127.0.0.1 "$PORT" touch 2 > "$T/touch-2" 2>&1
nosuch "CN=root" 2 "$T/touch-2"
as zq-carol badclient 127.0.0.1 "$PORT" jobs > "$T/cjobs" 2>&1
[ "$(cat "$T/cjobs")" = "job 3 running tls:zq-carol" ] ||
    fail "zq-carol does not own job 3: $(cat "$T/cjobs")"
as zq-carol badclient 127.0.0.1 "$PORT" attach 3 > "$T/catt" 2>&1
grep -q '^attached: running' "$T/catt" ||
    fail "zq-carol cannot attach to job 3: $(cat "$T/catt")"
ok "an older journal's bare owners: root is unix:root, out of CN=root's reach; zq-carol is tls:zq-carol, still its certificate's"
master_alive
