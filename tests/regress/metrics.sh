# masterd's optional HTTP listener serves /metrics in the Prometheus text
# format and /status in JSON, with numbers that match what happened: two
# workers, one finished job of a known number of tasks, its results spread
# over the workers.  Other paths get 404; methods other than GET and HEAD
# are refused (501, as libevent answers).
. "${top_srcdir:-.}/tests/regress/lib.sh"

# get PATH [METHOD]: the raw HTTP answer from masterd.
get() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf '${2:-GET} $1 HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3"
}

mkcerts w1 w2
MASTER_EXTRA="http = 127.0.0.1:0
policy = wq"
start_master
HTTP_PORT=$(sed -n 's/.*http: .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/masterd.log")
[ -n "$HTTP_PORT" ] || fail "masterd did not say where HTTP listens"
start_worker w1
start_worker w2
wait_workers 2
# (5+10)-ES, 3 generations: 5 + 3 x 10 = 35 evaluations.
"$R3QCTL" es --mu 5 --lambda 10 --dim 5 --generations 3 --quiet > /dev/null ||
    fail "job failed"

get /metrics > "$T/metrics"
head -n 1 "$T/metrics" | grep -q "200 OK" || fail "/metrics: $(head -n 1 "$T/metrics")"
grep -q '^Content-Type: text/plain; version=0.0.4' "$T/metrics" ||
    fail "/metrics: not the Prometheus content type"
grep -qx 'r3q_workers_connected 2' "$T/metrics" || fail "workers_connected is not 2"
grep -qx 'r3q_tasks_done_total 35' "$T/metrics" || fail "tasks_done_total is not 35"
grep -qx 'r3q_jobs{state="done"} 1' "$T/metrics" || fail "no done job counted"
grep -qx 'r3q_tasks{state="queued"} 0' "$T/metrics" || fail "tasks left queued"
sum=$(sed -n 's/^r3q_worker_tasks_done_total{worker="w[12]"} //p' "$T/metrics" |
    awk '{ s += $1 } END { print s }')
[ "$sum" = 35 ] || fail "per-worker results add up to $sum, not 35"
# Every sample line belongs to a metric with HELP and TYPE.
for m in $(grep -v '^#' "$T/metrics" | sed -n 's/^\(r3q_[a-z_]*\).*/\1/p' | sort -u); do
	grep -q "^# TYPE $m " "$T/metrics" || fail "$m has no TYPE line"
done
grep -qx 'r3q_workers_suspect 0' "$T/metrics" &&
    grep -qx 'r3q_workers_cooling 0' "$T/metrics" &&
    grep -qE '^r3q_suspicions_total [0-9]+$' "$T/metrics" &&
    grep -qE '^r3q_worker_suspicions_total\{worker="w1"\} [0-9]+$' "$T/metrics" ||
    fail "/metrics lacks the suspect gauges and counters"
ok "/metrics: workers, tasks, jobs and per-worker counts are right"

get /status > "$T/status"
grep -q '^Content-Type: application/json' "$T/status" || fail "/status is not JSON"
body=$(sed '1,/^\r$/d' "$T/status")
echo "$body" | grep -q '"name":"w1"' && echo "$body" | grep -q '"name":"w2"' &&
    echo "$body" | grep -qE '"suspects":[0-9]+,"state":"ok"' ||
    fail "/status lacks the workers: $body"
echo "$body" | grep -q '"id":1,"state":"done","policy":"wq"' ||
    fail "/status lacks the job: $body"
ok "/status lists the workers and the job"

get /nope | head -n 1 | grep -q " 404 " || fail "/nope is not a 404"
get /metrics POST | head -n 1 | grep -q " 501 " || fail "POST is not refused"
master_alive
ok "other paths get 404, other methods 501 (libevent)"
