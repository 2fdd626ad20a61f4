# A worker from a batch system, end to end (issue 25, "Workers from a
# batch system": "a worker started with only flags and a token joins, runs
# tasks and, on SIGTERM mid-job, hands back its held tasks; 0 lost, the
# job's answer unchanged, and the master logs the drain").  One workerd,
# with no configuration file (only flags and R3Q_ variables) and
# --join HOST:PORT TOKEN, its state in a fresh --state-dir: it joins (a
# certificate from masterd's CA), runs tasks of an ES job, and SIGTERM
# mid-job drains it: its held tasks go back to the master at once (logged
# with their count), it exits 0, no copy is killed, no worker is lost.
# Started again with the same state directory only (no token, no master),
# it uses the key, certificate and master's address it kept (no new
# certificate in r3qctl certs, the same serial), takes the tasks handed
# back, and the job's answer is the one of r3qctl es --local, bit for
# bit.
. "${top_srcdir:-.}/tests/regress/lib.sh"

mkcerts w0	# (mkcerts wants a worker; b1's certificate comes from its join)
C=$T/certs
MASTER_EXTRA="ca_key = $C/ca.key
http = 127.0.0.1:0"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
[ -n "$HTTP_PORT" ] || fail "masterd did not say where HTTP listens"
metric() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3" |
	    sed -n "s/^$1 //p"
}

# No file: the default one must not exist (an installed one would be
# read); then a file that says nothing stands for it.
NOFILE=""
if [ -e "${r3qconfdir:-/nonexistent}/workerd.conf" ]; then
	NOFILE="-f /dev/null"
	echo "# $r3qconfdir/workerd.conf exists here: -f /dev/null instead"
fi
S=$T/state
# start_batch FLAGS...: workerd b1 as a batch job step would start it:
# R3Q_ variables, flags, its state in $S, nothing in /etc.
start_batch() {
	# shellcheck disable=SC2086
	env R3Q_RECONNECT_MAX=1s R3Q_DRAIN_TIMEOUT=30s R3Q_CPUS=3 \
	    "$WORKERD" -d -v $NOFILE --state-dir "$S" "$@" >> "$T/b1.log" 2>&1 &
	WPID=$!
	PIDS="$PIDS $!"
}
# gone WHY: the worker exited with status 0 within 30 s.
gone() {
	waitfor "! kill -0 $WPID" 30 || fail "$1: the worker did not leave"
	_rc=0
	wait "$WPID" || _rc=$?
	[ "$_rc" -eq 0 ] || fail "$1: the worker exited with status $_rc"
}

ES="--mu 4 --lambda 30 --dim 4 --generations 2 --seed 11"
# shellcheck disable=SC2086
"$R3QCTL" es --local $ES --csv "$T/local.csv" --quiet > /dev/null ||
    fail "local run failed"

# 1. Join with a token, from flags and the environment only.
tok=$("$R3QCTL" token create --uses 1 --ttl 1h 2> "$T/create.err") ||
    fail "token create: $(cat "$T/create.err")"
id=$(echo "$tok" | cut -d. -f2)
[ ! -e "$S" ] || fail "the state directory exists before the join"
start_batch -N b1 --join "127.0.0.1:$PORT" "$tok"
wait_workers 1
grep -q "worker b1 joined with token $id from 127.0.0.1:[0-9]*: certificate serial" \
    "$T/masterd.log" || fail "masterd did not log b1's join"
[ "$(stat -c %a "$S/worker.key")" = 600 ] || fail "the key in the state dir is not 0600"
openssl verify -CAfile "$C/ca.pem" "$S/worker.pem" > /dev/null ||
    fail "b1's certificate does not verify under the CA"
sn=$(openssl x509 -in "$S/worker.pem" -noout -serial | cut -d= -f2)
"$R3QCTL" workers | awk '$1 == "b1"' | awk '{ exit !($3 == 3) }' ||
    fail "b1 does not have R3Q_CPUS=3 CPUs: $("$R3QCTL" workers)"
ok "a workerd with no file, only R3Q_ variables, flags and --join, joined: certificate $sn in $S"

# 2. Tasks of a job, then SIGTERM mid-job: 3 tasks running, up to 9 held
# (rwq, 4 per CPU); the held ones go back at once.
# shellcheck disable=SC2086
job=$("$R3QCTL" submit es $ES --work-ms $((500 * SAN_SLOW)) --policy rwq --queue-factor 4)
waitfor "[ \$('$R3QCTL' workers | awk '\$1 == \"b1\" {print \$7}') -ge 6 ]" 30 ||
    fail "b1 never held 6 tasks: $("$R3QCTL" workers)"
kill -TERM "$WPID"
gone "SIGTERM"
grep -qE 'worker b1 draining \(SIGTERM\): [1-9][0-9]* held tasks? handed back' \
    "$T/masterd.log" || fail "the master did not log the drain with its count"
grep -q 'worker b1 drained and left' "$T/masterd.log" ||
    fail "the master did not log that b1 left"
grep -q 'worker b1 .* lost' "$T/masterd.log" && fail "b1 was lost, not drained"
held=$(sed -n 's/.*worker b1 draining (SIGTERM): \([0-9]*\) held.*/\1/p' "$T/masterd.log")
n=$(metric r3q_tasks_handed_back_total)
[ "${n:-0}" -ge "$held" ] || fail "r3q_tasks_handed_back_total is ${n:-none}, not >= $held"
ok "SIGTERM mid-job: $held held tasks handed back (logged), status 0, not lost"

# 3. Started again with its state directory only (no token, no name, no
# master): the kept key, certificate and master; no new certificate.
[ "$(cat "$S/master")" = "127.0.0.1:$PORT" ] && [ "$(stat -c %a "$S/master")" = 600 ] ||
    fail "$S/master: $(ls -l "$S"; cat "$S/master")"
start_batch
wait_workers 1
grep -q "master 127.0.0.1:$PORT, kept in $S/master at the join" "$T/b1.log" ||
    fail "b1 did not take the master kept in $S"
"$R3QCTL" workers | grep -q '^b1 ' || fail "b1 did not come back: $("$R3QCTL" workers)"
[ "$(grep -c 'joined the cluster' "$T/b1.log")" = 1 ] ||
    fail "b1 joined $(grep -c 'joined the cluster' "$T/b1.log") times"
[ "$(grep -c 'worker b1 joined with token' "$T/masterd.log")" = 1 ] ||
    fail "masterd issued b1 a second certificate"
"$R3QCTL" certs > "$T/certs.out"
[ "$(grep -c '^b1 ' "$T/certs.out")" = 1 ] ||
    fail "r3qctl certs lists b1 $(grep -c '^b1 ' "$T/certs.out") times: $(cat "$T/certs.out")"
grep -qE "^b1 +$sn " "$T/certs.out" || fail "r3qctl certs: $(cat "$T/certs.out")"
[ "$(openssl x509 -in "$S/worker.pem" -noout -serial | cut -d= -f2)" = "$sn" ] ||
    fail "the certificate in $S changed"
ok "restarted with --state-dir only: the same key, certificate ($sn) and master, none issued"

timeout 120 "$R3QCTL" wait "$job" > /dev/null || fail "the job did not finish"
"$R3QCTL" result "$job" --csv "$T/dist.csv" > /dev/null
cmp -s "$T/local.csv" "$T/dist.csv" || fail "the answer differs from --local"
[ "$(metric r3q_copies_killed_total)" = 0 ] ||
    fail "copies killed: $(metric r3q_copies_killed_total)"
grep -E 'worker b1 .* lost|task [0-9]* lost' "$T/masterd.log" &&
    fail "masterd lost something"
ok "the job ends on the restarted worker: none killed, none lost, the answer of --local"
kill -TERM "$WPID"
gone "SIGTERM when idle"
master_alive
