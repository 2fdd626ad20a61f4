# A Python client that ends cleanly acknowledges every outcome it read
# before it goes: masterd then holds nothing for it, and does not wait
# client_timeout (an hour here) for a client that will not come back.
# Four ways to end: Client.close(), the end of a with block, the end of
# the interpreter with the client still open (its finalizer at exit), and
# r3q.futures' own client at exit.  Each program prints its job; a
# reattach (r3q-testpeer badclient attach, the client's certificate)
# then reads the job's state: ended, with every outcome acknowledged
# (acked = seq).  Before libr3q acknowledged at r3q_close, the last
# outcomes of every such job stayed unacknowledged until client_timeout.
# Then masterd's log: the clients' ends are closes, not "Broken pipe".
# Each of these clients made one job: the one it printed.
. "${top_srcdir:-.}/tests/regress/lib.sh"

python_client tests/python

mkcerts w1
MASTER_EXTRA="client_timeout = 3600s"
start_master
WORKER_EXTRA="exec py-echo = persistent $PY -m r3q.serve kinds:echo
exec python = persistent $PY -m r3q.serve --any
env = PYTHONPATH=$PYTHONPATH"
start_worker w1 2
wait_workers 1
# Over TLS with the client certificate: the reattach below is that owner.
export R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$T/certs/ca.pem
export R3Q_CERT=$T/certs/client.pem R3Q_KEY=$T/certs/client.key
TLSC="-a $T/certs/ca.pem -c $T/certs/client.pem -k $T/certs/client.key"

# attached JOB N: the job ended with its N outcomes all acknowledged.
attached() {
	timeout 30 "$TESTPEER" $TLSC badclient 127.0.0.1 "$PORT" attach "$1" \
	    > "$T/att.$1" 2>&1 || fail "attach $1: $(cat "$T/att.$1")"
	grep -q "^attached: done, acked $2, seq $2\$" "$T/att.$1"
}

# job_ids: the ids of the jobs masterd knows, sorted for comm.
job_ids() { "$R3QCTL" jobs | awk 'NR > 1 { print $1 }' | sort; }

for how in close with exit futures; do
	job_ids > "$T/jobs.before"
	"${PYLIB[@]}" - "$how" > "$T/py.$how" 2> "$T/py.$how.err" <<'EOF' ||
import sys
import r3q
from r3q import _lib

def job_of(conn):
    return _lib.lib().r3q_job_id(conn.job)

how = sys.argv[1]
if how == "futures":
    from r3q import futures
    import kinds
    assert [f.result() for f in [futures.submit(kinds.square, i)
                                 for i in range(5)]] == [0, 1, 4, 9, 16]
    assert list(futures.map(kinds.square, range(7))) == \
        [i * i for i in range(7)]
    n = 5 + -(-7 // futures.last_chunksize)
    print(job_of(futures._client._state.driver.conn), n)
    sys.exit(0)
if how == "with":
    with r3q.Client() as c:
        assert c.map("py-echo", [b"a", b"b", b"c"]) == [b"a", b"b", b"c"]
        print(job_of(c._state.mconn), 3)
else:
    c = r3q.Client()
    assert c.map("py-echo", [b"a", b"b", b"c"]) == [b"a", b"b", b"c"]
    print(job_of(c._state.mconn), 3)
    if how == "close":
        c.close()
EOF
	    fail "the $how client failed: $(tail -n 5 "$T/py.$how.err")"
	read -r job n < "$T/py.$how"
	[ -n "$job" ] || fail "the $how client printed no job"
	# A client that uses map alone, or the futures alone, opens one
	# connection and so one job (a futures client had two, one empty).
	new=$(job_ids | comm -13 "$T/jobs.before" - | tr '\n' ' ')
	[ "$new" = "$job " ] ||
	    fail "the $how client made the jobs $new, not just $job: $("$R3QCTL" jobs)"
	# The client's last frames may still be on their way: wait for the
	# state, which without the acknowledgement holds for client_timeout.
	i=0
	until attached "$job" "$n"; do
		i=$((i + 1))
		[ "$i" -lt 50 ] ||
		    fail "$how: job $job did not end with its $n outcomes acknowledged: $(cat "$T/att.$job")"
		sleep 0.2
	done
	ok "a client ending by $how acknowledged its $n outcomes (job $job)"
done
grep -q "no client came back" "$T/masterd.log" &&
    fail "masterd waited for a client: $(grep "no client came back" "$T/masterd.log")"
master_alive
ok "masterd kept nothing for the clients that ended cleanly"
# r3q_close sends its last frames and goes; masterd's answers then meet
# a closed socket.  That is a close, logged as one (at debug level), not
# a warning: before, every Python program's end logged "Broken pipe".
grep -E "\((client|control)\): (Broken pipe|Connection reset by peer)\$" "$T/masterd.log" &&
    fail "a clean client end was logged as an error"
grep -q "(client): connection closed" "$T/masterd.log" ||
    fail "no client end was logged: $(grep "(client)" "$T/masterd.log" | tail -n 3)"
ok "a client's end is logged as a close, not as an error"
