/*
 * client: a libr3q client for bench/throughput.  It measures what an
 * external program sees when it runs no-op (echo, empty payload) tasks
 * through masterd's control socket, and prints one machine-readable line.
 *
 *	client throughput N [--method submit|map|both] [--policy P]
 *	    [--queue-factor Q|auto] [--kind K] [--input FILE]
 *	client rtt N [--policy P] [--queue-factor Q|auto]
 *	client queue N [--payload BYTES]
 *
 * throughput: N echo tasks with empty payloads as fast as possible, in
 * one job: "submit" is r3q_submit for each (futures kept), r3q_flush,
 * r3q_wait_all; "map" is one r3q_map of N empty buffers; "both" runs
 * submit then map in two jobs of the same connection and prints a line
 * for each.  Client CPU is getrusage(RUSAGE_SELF) user + system over the
 * span from the first submit to the last result, divided by N.  --kind
 * runs tasks of kind K instead (bench/kinds-cluster: configured kinds),
 * each with FILE's bytes as payload (--input; default empty); an echo
 * task's output must be its payload, another kind's may be anything.
 *
 * rtt: N times one echo task, submitted and r3q_future_get'd; the median
 * and 99th percentile of that round trip (the first task, on a fresh
 * connection and job, is left out).
 *
 * queue: N echo tasks of BYTES (default 8) payload, flushed, then
 * "queued" on stdout and a sleep until killed: for measuring masterd's
 * memory per queued task with no workers connected.
 *
 * The master comes from $R3Q_CONTROL (else the default control socket).
 * Exits 0, 1 if a task failed (the reason on stderr), 64 for a usage
 * error, 69 if masterd cannot be reached.
 */
#include <sys/resource.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "r3q.h"

#define CL_TIMEOUT	600000	/* ms: a wait longer than this is a hang */

static const char	*cl_policy;
static unsigned		 cl_qf;
static const char	*cl_kind = "echo";
static uint8_t		*cl_in;		/* every task's payload */
static size_t		 cl_inlen;

/* Is out the output a task of cl_kind should give? */
static int
output_ok(const void *out, size_t len)
{
	if (strcmp(cl_kind, "echo") != 0)
		return (1);
	return (len == cl_inlen && (len == 0 || memcmp(out, cl_in, len) == 0));
}

/* Read --input FILE into cl_in. */
static void
read_input(const char *path)
{
	FILE	*f;
	size_t	 n;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "client: %s: %s\n", path, strerror(errno));
		exit(64);
	}
	cl_in = malloc(1 << 20);
	n = cl_in != NULL ? fread(cl_in, 1, 1 << 20, f) : 0;
	if (ferror(f) || !feof(f)) {
		fprintf(stderr, "client: %s: unreadable or over 1 MiB\n", path);
		exit(64);
	}
	fclose(f);
	cl_inlen = n;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: client throughput N [--method submit|map|both] "
	    "[--policy P] [--queue-factor Q|auto]\n"
	    "           [--kind K] [--input FILE]\n"
	    "       client rtt N [--policy P] [--queue-factor Q|auto]\n"
	    "       client queue N [--payload BYTES]\n");
	exit(64);
}

static unsigned long
number(const char *name, const char *s)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0') {
		fprintf(stderr, "client: %s: '%s' is not a number\n", name, s);
		exit(64);
	}
	return (v);
}

static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* User + system CPU time of this process so far, in microseconds. */
static uint64_t
cpu_us(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	    1000000 + (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec));
}

/* A job with the benchmark's settings; NULL said on stderr. */
static struct r3q_job *
open_job(struct r3q *r, const char *name)
{
	struct r3q_job_options	 jo;
	struct r3q_job		*job;

	memset(&jo, 0, sizeof(jo));
	jo.name = name;
	jo.policy = cl_policy;
	jo.queue_factor = cl_qf;
	if ((job = r3q_job_open(r, &jo)) == NULL)
		fprintf(stderr, "client: opening a job: %s\n", r3q_error(r));
	return (job);
}

/* Close a job, waiting for its end; -1 said on stderr. */
static int
close_job(struct r3q *r, struct r3q_job *job)
{
	int	 rc;

	if ((rc = r3q_job_close(job)) != R3Q_OK) {
		fprintf(stderr, "client: closing job %" PRIu64 ": %s (%s)\n",
		    r3q_job_id(job), r3q_strerror(rc), r3q_error(r));
		return (-1);
	}
	return (0);
}

/* The line throughput prints for one method. */
static void
report(const char *method, size_t n, uint64_t ns, uint64_t cpu)
{
	double	 s = (double)ns / 1e9;

	printf("method=%s tasks=%zu wall_s=%.6f tasks_per_s=%.0f "
	    "client_cpu_us_per_task=%.3f\n", method, n, s, (double)n / s,
	    (double)cpu / (double)n);
	fflush(stdout);
}

/*
 * n echo tasks by r3q_submit, one flush, one wait for all: every future
 * is checked and freed after the clock stops.
 */
static int
run_submit(struct r3q *r, size_t n)
{
	struct r3q_job		*job;
	struct r3q_future	**fs;
	const void		*out;
	uint64_t		 t0, c0, t1, c1;
	size_t			 i, len;
	int			 rc, bad = 0;

	if ((job = open_job(r, "bench client submit")) == NULL)
		return (-1);
	if ((fs = calloc(n, sizeof(*fs))) == NULL) {
		fprintf(stderr, "client: out of memory\n");
		return (-1);
	}
	c0 = cpu_us();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if ((fs[i] = r3q_submit(job, cl_kind, cl_in, cl_inlen)) ==
		    NULL) {
			fprintf(stderr, "client: submit %zu: %s\n", i,
			    r3q_error(r));
			return (-1);
		}
	}
	if ((rc = r3q_flush(job)) != R3Q_OK) {
		fprintf(stderr, "client: flush: %s\n", r3q_strerror(rc));
		return (-1);
	}
	if ((rc = r3q_wait_all(fs, n, CL_TIMEOUT)) != R3Q_OK) {
		fprintf(stderr, "client: waiting for %zu tasks: %s\n", n,
		    r3q_strerror(rc));
		return (-1);
	}
	t1 = now_ns();
	c1 = cpu_us();

	for (i = 0; i < n; i++) {
		rc = r3q_future_result(fs[i], &out, &len);
		if (rc != R3Q_OK || !output_ok(out, len)) {
			if (bad++ < 5)
				fprintf(stderr, "client: task %zu: %s\n", i,
				    rc != R3Q_OK ? r3q_future_error(fs[i]) :
				    "wrong output");
		}
		r3q_future_free(fs[i]);
	}
	free(fs);
	if (bad) {
		fprintf(stderr, "client: %d of %zu tasks failed\n", bad, n);
		return (-1);
	}
	if (close_job(r, job) == -1)
		return (-1);
	report("submit", n, t1 - t0, c1 - c0);
	return (0);
}

/* n echo tasks as one r3q_map of empty buffers. */
static int
run_map(struct r3q *r, size_t n)
{
	struct r3q_job	*job;
	struct r3q_buf	*in, *out;
	uint64_t	 t0, c0, t1, c1;
	size_t		 i;
	int		 rc, bad = 0;

	if ((job = open_job(r, "bench client map")) == NULL)
		return (-1);
	in = calloc(n, sizeof(*in));
	out = calloc(n, sizeof(*out));
	if (in == NULL || out == NULL) {
		fprintf(stderr, "client: out of memory\n");
		return (-1);
	}
	for (i = 0; i < n; i++) {
		in[i].data = cl_in;
		in[i].len = cl_inlen;
	}
	c0 = cpu_us();
	t0 = now_ns();
	rc = r3q_map(job, cl_kind, in, n, out, CL_TIMEOUT);
	t1 = now_ns();
	c1 = cpu_us();
	if (rc != R3Q_OK)
		fprintf(stderr, "client: map of %zu tasks: %s\n", n,
		    r3q_strerror(rc));
	for (i = 0; i < n; i++) {
		if (out[i].status != R3Q_OK || !output_ok(out[i].data,
		    out[i].len)) {
			if (bad++ < 5)
				fprintf(stderr, "client: task %zu: %s\n", i,
				    out[i].status != R3Q_OK ?
				    (out[i].data != NULL ?
				    (const char *)out[i].data :
				    r3q_strerror(out[i].status)) :
				    "wrong output");
		}
		free(out[i].data);
	}
	free(in);
	free(out);
	if (rc != R3Q_OK || bad) {
		fprintf(stderr, "client: %d of %zu tasks failed\n", bad, n);
		return (-1);
	}
	if (close_job(r, job) == -1)
		return (-1);
	report("map", n, t1 - t0, c1 - c0);
	return (0);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* n + 1 single tasks one after the other; the first is left out. */
static int
run_rtt(struct r3q *r, size_t n)
{
	struct r3q_job		*job;
	struct r3q_future	*f;
	uint64_t		*v, t0;
	size_t			 i, p;
	int			 rc;

	if ((job = open_job(r, "bench client rtt")) == NULL)
		return (-1);
	if ((v = calloc(n + 1, sizeof(*v))) == NULL) {
		fprintf(stderr, "client: out of memory\n");
		return (-1);
	}
	for (i = 0; i <= n; i++) {
		t0 = now_ns();
		if ((f = r3q_submit(job, "echo", NULL, 0)) == NULL) {
			fprintf(stderr, "client: submit: %s\n", r3q_error(r));
			return (-1);
		}
		rc = r3q_future_get(f, CL_TIMEOUT, NULL, NULL);
		v[i] = now_ns() - t0;
		if (rc != R3Q_OK) {
			fprintf(stderr, "client: task %zu: %s\n", i,
			    r3q_future_error(f) != NULL ?
			    r3q_future_error(f) : r3q_strerror(rc));
			return (-1);
		}
		r3q_future_free(f);
	}
	if (close_job(r, job) == -1)
		return (-1);
	qsort(v + 1, n, sizeof(*v), cmp_u64);
	p = (size_t)(0.99 * (double)n + 0.999999);
	if (p < 1)
		p = 1;
	printf("tasks=%zu min_us=%.1f median_us=%.1f p99_us=%.1f "
	    "max_us=%.1f\n", n, v[1] / 1e3,
	    n % 2 ? v[(n + 1) / 2] / 1e3 : (v[n / 2] + v[n / 2 + 1]) / 2e3,
	    v[p] / 1e3, v[n] / 1e3);
	free(v);
	return (0);
}

/*
 * n tasks of len bytes, flushed and left queued: "queued" once the
 * library has written them all, then wait until killed.  Waiting on the
 * futures (which never resolve without workers) does the I/O.
 */
static int
run_queue(struct r3q *r, size_t n, size_t len)
{
	struct r3q_job		*job;
	struct r3q_future	**fs;
	char			*payload;
	size_t			 i;
	int			 rc;

	if ((job = open_job(r, "bench client queue")) == NULL)
		return (-1);
	fs = calloc(n, sizeof(*fs));
	payload = calloc(1, len + 1);
	if (fs == NULL || payload == NULL) {
		fprintf(stderr, "client: out of memory\n");
		return (-1);
	}
	memset(payload, 'q', len);
	for (i = 0; i < n; i++) {
		if ((fs[i] = r3q_submit(job, "echo", payload, len)) == NULL) {
			fprintf(stderr, "client: submit %zu: %s\n", i,
			    r3q_error(r));
			return (-1);
		}
	}
	if ((rc = r3q_flush(job)) != R3Q_OK) {
		fprintf(stderr, "client: flush: %s\n", r3q_strerror(rc));
		return (-1);
	}
	/* One short wait sends what the flush left in the buffer. */
	rc = r3q_wait_all(fs, n, 100);
	if (rc != R3Q_OK && rc != R3Q_ETIMEDOUT) {
		fprintf(stderr, "client: waiting: %s\n", r3q_strerror(rc));
		return (-1);
	}
	printf("queued\n");
	fflush(stdout);
	for (;;) {
		rc = r3q_wait_all(fs, n, 60000);
		if (rc == R3Q_OK) {
			fprintf(stderr, "client: queued tasks ran: are "
			    "workers connected?\n");
			return (-1);
		}
		if (rc != R3Q_ETIMEDOUT) {
			fprintf(stderr, "client: waiting: %s\n",
			    r3q_strerror(rc));
			return (-1);
		}
	}
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "method",		required_argument, NULL, 'm' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'q' },
		{ "payload",		required_argument, NULL, 'b' },
		{ "kind",		required_argument, NULL, 'k' },
		{ "input",		required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 }
	};
	struct r3q_options	 o;
	struct r3q		*r;
	const char		*mode, *method = "submit";
	char			 err[256];
	size_t			 n, len = 8;
	int			 ch, rc;

	if (argc < 3)
		usage();
	mode = argv[1];
	n = number("N", argv[2]);
	if (n == 0)
		usage();
	optind = 3;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			method = optarg;
			if (strcmp(method, "submit") != 0 &&
			    strcmp(method, "map") != 0 &&
			    strcmp(method, "both") != 0)
				usage();
			break;
		case 'p':
			cl_policy = optarg;
			break;
		case 'q':
			cl_qf = strcmp(optarg, "auto") == 0 ? R3Q_QF_AUTO :
			    (unsigned)number("--queue-factor", optarg);
			break;
		case 'b':
			len = number("--payload", optarg);
			break;
		case 'k':
			cl_kind = optarg;
			break;
		case 'i':
			read_input(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	memset(&o, 0, sizeof(o));
	if ((r = r3q_connect(&o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "client: %s\n", err);
		return (69);
	}
	if (strcmp(mode, "throughput") == 0) {
		rc = 0;
		if (strcmp(method, "map") != 0)
			rc = run_submit(r, n);
		if (rc == 0 && strcmp(method, "submit") != 0)
			rc = run_map(r, n);
	} else if (strcmp(mode, "rtt") == 0)
		rc = run_rtt(r, n);
	else if (strcmp(mode, "queue") == 0)
		rc = run_queue(r, n, len);
	else
		usage();
	r3q_close(r);
	return (rc == 0 ? 0 : 1);
}
