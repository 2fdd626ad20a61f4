# masterd's optional HTTP listener serves /metrics in the Prometheus text
# format and /status in JSON, with numbers that match what happened: two
# workers, one finished job of a known number of tasks, its results spread
# over the workers.  Other paths get 404; methods other than GET and HEAD
# are refused (501, as libevent answers).  A value not known yet is null in
# /status, never 0: a worker's round trip and task time before its first
# result, a job's generation and best before its generation 0 ends, the
# efficiency of a job without a synthetic load or before a generation;
# /metrics has no efficiency sample until it is known, and r3qctl result
# --json says null too.
. "${top_srcdir:-.}/tests/regress/lib.sh"

# get PATH [METHOD]: the raw HTTP answer from masterd.
get() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT
	    printf '${2:-GET} $1 HTTP/1.0\r\nHost: x\r\n\r\n' >&3; cat <&3"
}

# status: the body of /status, checked to be JSON where jq is at hand.
status() {
	get /status | sed '1,/^\r$/d' > "$T/status.json"
	if command -v jq > /dev/null; then
		jq . "$T/status.json" > /dev/null ||
		    fail "/status is not JSON: $(cat "$T/status.json")"
	fi
	cat "$T/status.json"
}

# job_status JOB: the job's object in /status.
job_status() {
	status | grep -oE "\{\"id\":$1,[^}]*\}"
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
body=$(status)
[ "$(echo "$body" | grep -oE '"rtt":null,"task_time":null' | wc -l)" -eq 2 ] ||
    fail "/status: workers with no result have a round trip or task time: $body"
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

# Job 1 had no synthetic load: its efficiency is unknown, not 0.
j=$(job_status 1)
echo "$j" | grep -qE '"generation":3,"best":[0-9][-+0-9.e]*,' &&
    echo "$j" | grep -q '"efficiency":null}' ||
    fail "/status: job 1 without --work-ms: $j"
echo "$body" | grep -qE '"rtt":[0-9][-+0-9.e]*,"task_time":[0-9][-+0-9.e]*' ||
    fail "/status: no worker has a round trip and task time after a job: $body"
"$R3QCTL" result 1 --json | grep -q '"lower_bound":null,"efficiency":null,' ||
    fail "result --json: $("$R3QCTL" result 1 --json)"
ok "/status and result --json: no efficiency without a synthetic load is null"

# Job 2, synthetic, on stopped workers: no generation, best or efficiency
# yet; then, once a generation is done, an efficiency.
kill -STOP "$WPID_w1" "$WPID_w2"
job=$("$R3QCTL" submit es --mu 2 --lambda 2 --dim 2 --generations 100 \
    --work-ms 100) || { kill -CONT "$WPID_w1" "$WPID_w2"; fail "submit failed"; }
j=$(job_status "$job")
get /metrics > "$T/metrics2"
"$R3QCTL" result "$job" --json > "$T/r2.json" || true	# 1: not done
kill -CONT "$WPID_w1" "$WPID_w2"
echo "$j" | grep -qE '"state":"running",.*"generation":null,"best":null,.*"efficiency":null}' ||
    fail "/status: job $job before its generation 0: $j"
grep -q "^r3q_job_efficiency{job=\"$job\"}" "$T/metrics2" &&
    fail "/metrics: an efficiency for job $job before it is known"
grep -q '"best":null,' "$T/r2.json" && grep -q '"efficiency":null,' "$T/r2.json" ||
    fail "result --json before generation 0: $(cat "$T/r2.json")"
n=200
until job_status "$job" | grep -qE '"efficiency":[0-9][-+0-9.e]*}'; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "/status: no efficiency for job $job: $(job_status "$job")"
	sleep 0.1
done
job_status "$job" | grep -q '"state":"running",' || fail "job $job ended too soon"
get /metrics | grep -qE "^r3q_job_efficiency\{job=\"$job\"\} [0-9.]+$" ||
    fail "/metrics: no efficiency for the running job $job"
"$R3QCTL" cancel "$job" > /dev/null
ok "/status, /metrics, result --json: unknown until a generation, then an efficiency"

get /nope | head -n 1 | grep -q " 404 " || fail "/nope is not a 404"
get /metrics POST | head -n 1 | grep -q " 501 " || fail "POST is not refused"
master_alive
ok "other paths get 404, other methods 501 (libevent)"
