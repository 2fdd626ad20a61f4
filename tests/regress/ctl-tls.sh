# Every r3qctl command reaches masterd through libr3q, over mutual TLS as
# over the control socket.  With R3Q_MASTER, R3Q_CA, R3Q_CERT and R3Q_KEY
# (a client certificate, OU=client) and R3Q_CONTROL naming no socket,
# jobs, workers, submit, wait, result, es, cancel and report work over
# TLS; the client sees only its own jobs; what masterd keeps for the
# control socket's operators (token, certs, drain) is refused with
# masterd's reason, status 1.  With R3Q_MASTER but no R3Q_CERT, r3qctl
# names the missing variable (status 69); with nothing set and no default
# socket it says how to reach a master over TLS.  token create prints the
# workerd command that joins, with the address masterd advertises, the
# token on its standard input.  A TLS client's close is logged as a
# close, not as a TLS error ("unexpected eof").
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w1
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key"
start_master
start_worker w1
wait_workers 1

# tls ARGS...: r3qctl over TLS only (the control socket named is absent).
tls() {
	R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$C/ca.pem R3Q_CERT=$C/client.pem \
	    R3Q_KEY=$C/client.key R3Q_CONTROL=$T/none.sock \
	    timeout 60 "$R3QCTL" "$@"
}
# refused WHAT MESSAGE ARGS...: over TLS, status 1 with masterd's reason.
refused() {
	_what=$1
	_msg=$2
	shift 2
	rc=0
	tls "$@" > "$T/ref.out" 2> "$T/ref.err" || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "r3qctl: $_msg" "$T/ref.err" ||
	    fail "$_what over TLS: status $rc: $(cat "$T/ref.err")"
}

# An operator's job, on the control socket: TLS clients do not see it.
ajob=$("$R3QCTL" submit es --mu 2 --lambda 4 --dim 2 --generations 2)
"$R3QCTL" wait "$ajob" > /dev/null || fail "the operator's job $ajob failed"

tls workers > "$T/workers.out" 2> "$T/err" ||
    fail "workers over TLS: $(cat "$T/err")"
head -n 1 "$T/workers.out" | grep -q '^NAME  *ADDRESS  *CPUS' ||
    fail "workers over TLS: $(cat "$T/workers.out")"
awk '$1 == "w1"' "$T/workers.out" | grep -q . ||
    fail "workers over TLS does not list w1: $(cat "$T/workers.out")"
ok "workers over TLS lists w1"

job=$(tls submit es --mu 2 --lambda 4 --dim 2 --generations 3 2> "$T/err") ||
    fail "submit es over TLS: $(cat "$T/err")"
[ "$job" -gt "$ajob" ] || fail "submit es over TLS printed '$job'"
tls wait "$job" > "$T/wait.out" 2> "$T/err" ||
    fail "wait over TLS: $(cat "$T/err") $(cat "$T/wait.out")"
grep -q '^gen    3  best ' "$T/wait.out" && tail -n 1 "$T/wait.out" |
    grep -qx "job $job done" || fail "wait over TLS said: $(cat "$T/wait.out")"
ok "submit es and wait over TLS: job $job followed, generation by generation, to its end"

tls result "$job" > "$T/result.out" 2> "$T/err" ||
    fail "result over TLS: $(cat "$T/err")"
grep -q '^best fitness: ' "$T/result.out" &&
    grep -q "^summary: job $job done, policy " "$T/result.out" ||
    fail "result over TLS: $(cat "$T/result.out")"
tls result "$job" --json | grep -q "^{\"job\":$job,\"state\":\"done\"," ||
    fail "result --json over TLS: $(tls result "$job" --json 2>&1)"
ok "result over TLS, as a table and as JSON"

tls jobs > "$T/jobs.out" 2> "$T/err" || fail "jobs over TLS: $(cat "$T/err")"
grep -qE "^$job +done .* \\(tls:client\\)\$" "$T/jobs.out" ||
    fail "jobs over TLS does not list job $job of client: $(cat "$T/jobs.out")"
grep -qE "^$ajob " "$T/jobs.out" &&
    fail "jobs over TLS lists the operator's job $ajob: $(cat "$T/jobs.out")"
refused "result of the operator's job" "no such job $ajob" result "$ajob"
ok "jobs over TLS: the client's own job, not the operator's"

tls es --mu 2 --lambda 4 --dim 2 --generations 2 > "$T/es.out" 2> "$T/err" ||
    fail "es over TLS: $(cat "$T/err")"
grep -q '^best fitness: ' "$T/es.out" || fail "es over TLS: $(cat "$T/es.out")"
ok "es over TLS submits, follows and prints the result"

long=$(tls submit es --mu 10 --lambda 20 --dim 10 --generations 100000 --lu 64)
tls cancel "$long" > "$T/cancel.out" 2> "$T/err" ||
    fail "cancel over TLS: $(cat "$T/err")"
grep -qx "job $long cancelled" "$T/cancel.out" ||
    fail "cancel over TLS said: $(cat "$T/cancel.out")"
rc=0
tls wait "$long" > "$T/wait2.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "job $long cancelled: cancelled by a client" "$T/wait2.out" ||
    fail "wait after cancel over TLS: status $rc: $(cat "$T/wait2.out")"
ok "cancel over TLS stops the client's job"

tls report "$job" -o "$T/rep" > "$T/report.out" 2> "$T/err" ||
    fail "report over TLS: $(cat "$T/err")"
grep -q "^$T/rep/report.html: job $job, " "$T/report.out" &&
    [ -s "$T/rep/gantt.svg" ] || fail "report over TLS: $(cat "$T/report.out")"
ok "report over TLS draws the job"

# What only the control socket's operators may do: masterd's reasons.
refused "token create" "join tokens are managed on the control socket only" \
    token create
refused "token list" "join tokens are managed on the control socket only" \
    token list
refused "certs" "join tokens are managed on the control socket only" certs
refused "drain" "cannot drain worker w1: only an operator on the control socket may" \
    drain w1
ok "token, certs and drain over TLS are refused with masterd's reason"

# R3Q_MASTER without R3Q_CERT: the variable is named.
rc=0
R3Q_MASTER=127.0.0.1:$PORT R3Q_CA=$C/ca.pem R3Q_KEY=$C/client.key \
    "$R3QCTL" jobs > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" -eq 69 ] && grep -qF "r3qctl: master 127.0.0.1:$PORT: R3Q_CERT is not set" "$T/err" ||
    fail "R3Q_MASTER without R3Q_CERT: status $rc: $(cat "$T/err")"
[ -s "$T/out" ] && fail "R3Q_MASTER without R3Q_CERT wrote: $(cat "$T/out")"
ok "R3Q_MASTER without R3Q_CERT: $(cat "$T/err")"

# Nothing says where: the default socket, and how to use TLS instead.
def=$(sed -n 's/.* else at the control socket \$R3Q_CONTROL, else \(.*\)$/\1/p' \
    <<EOF
$("$R3QCTL" -h | tr '\n' ' ' | sed 's/ *$//')
EOF
)
if [ -n "$def" ] && [ ! -e "$def" ]; then
	rc=0
	env -u R3Q_CONTROL "$R3QCTL" workers > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 69 ] && grep -qF "r3qctl: cannot reach masterd at $def: No such file or directory (set R3Q_MASTER=host:port with R3Q_CERT, R3Q_KEY, R3Q_CA for TLS)" "$T/err" ||
	    fail "no socket, no R3Q_MASTER: status $rc: $(cat "$T/err")"
	ok "no socket and no R3Q_MASTER: $(cat "$T/err")"
else
	echo "# the default socket '$def' exists here: not tried"
fi

# token create on the control socket: the join command to paste, with
# the address masterd advertises (its listen address), R3Q_MASTER or not.
tok=$(R3Q_MASTER=192.0.2.1:1 "$R3QCTL" -s "$T/ctl.sock" token create 2> "$T/create.err") ||
    fail "token create: $(cat "$T/create.err")"
grep -qxF "  workerd --join 127.0.0.1:$PORT -" "$T/create.err" ||
    fail "token create with R3Q_MASTER: $(cat "$T/create.err")"
tok=$("$R3QCTL" token create 2> "$T/create.err") ||
    fail "token create: $(cat "$T/create.err")"
grep -qxF "  workerd --join 127.0.0.1:$PORT -" "$T/create.err" ||
    fail "token create without R3Q_MASTER: $(cat "$T/create.err")"
! grep -q "$tok" "$T/create.err" || fail "the token is in the command line printed"
"$R3QCTL" certs | head -n 1 | grep -q '^NAME  *SERIAL' ||
    fail "certs on the control socket: $("$R3QCTL" certs 2>&1)"
ok "token create prints the workerd command that joins"
# The TLS clients above closed as clients do: no error in masterd's log.
! grep -q "unexpected eof\|TLS error" "$T/masterd.log" ||
    fail "a client's close is logged as an error: $(grep -m 3 "unexpected eof\|TLS error" "$T/masterd.log")"
grep -q "(client): connection closed" "$T/masterd.log" ||
    fail "no plain close logged: $(grep -m 3 'client)' "$T/masterd.log")"
ok "TLS clients that close are no error: $(grep -m 1 -o '(client): connection closed.*' "$T/masterd.log")"
master_alive
