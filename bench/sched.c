/*
 * bench/sched: what the scheduling core costs per task.  One batch of N
 * tasks is submitted to 16 workers of one CPU under RWQ (queue factor 2,
 * so no tail replication blurs the count), every copy the core assigns
 * comes back as a result in the order it was sent, and the time from the
 * submit to the last result over N is one sample; the median of the runs
 * is printed.  The cases: (a) sched_submit(), all priority 0 (the ES
 * generation), (b) sched_batch_add() with random priorities in
 * [0, 65536), (c) sched_batch_add() with copies = 2 (the losing copy is
 * cancelled, never answered).  The core runs in virtual time; only this
 * program reads a clock.  A measurement, not a test.
 *
 * usage: bench/sched [--csv file] [--runs n] [--max n]
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/sched.h"

#define NWORKERS	16
#define RUNS_MAX	31

enum bcase {
	CASE_FIFO = 0,
	CASE_PRIO,
	CASE_COPIES,
	CASE_COUNT
};

static const char *const case_names[CASE_COUNT] = {
	"prio 0 (submit)", "random prio", "copies 2"
};

static const char *const case_keys[CASE_COUNT] = {
	"fifo", "priority", "copies2"
};

/* A copy out on a worker, in the order the core sent it. */
struct out {
	uint32_t	 o_wid;
	uint64_t	 o_task;
};

/* The FIFO of copies out: at most NWORKERS x 2 plus a burst. */
struct ring {
	struct out	*r_v;
	size_t		 r_size;	/* a power of two */
	size_t		 r_head;
	size_t		 r_len;
};

/* Exit with a message: the bench cannot go on. */
static void
die(const char *what)
{
	fprintf(stderr, "sched: %s\n", what);
	exit(1);
}

/* The monotonic clock in ns. */
static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		die("clock_gettime");
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* xorshift64: reproducible priorities. */
static uint64_t
xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (*x);
}

/* Append a copy to the FIFO, growing it. */
static void
ring_push(struct ring *r, uint32_t wid, uint64_t task)
{
	struct out	*v;
	size_t		 i, size;

	if (r->r_len == r->r_size) {
		size = r->r_size > 0 ? r->r_size * 2 : 256;
		if ((v = calloc(size, sizeof(*v))) == NULL)
			die("out of memory");
		for (i = 0; i < r->r_len; i++)
			v[i] = r->r_v[(r->r_head + i) & (r->r_size - 1)];
		free(r->r_v);
		r->r_v = v;
		r->r_size = size;
		r->r_head = 0;
	}
	v = &r->r_v[(r->r_head + r->r_len++) & (r->r_size - 1)];
	v->o_wid = wid;
	v->o_task = task;
}

/* Take the oldest copy out of the FIFO; 0 if it is empty. */
static int
ring_pop(struct ring *r, struct out *o)
{
	if (r->r_len == 0)
		return (0);
	*o = r->r_v[r->r_head];
	r->r_head = (r->r_head + 1) & (r->r_size - 1);
	r->r_len--;
	return (1);
}

/* Drain the core's actions: assignments join the FIFO; 1 at BATCH_DONE. */
static int
drain(struct sched *s, struct ring *r)
{
	struct sched_action	 a;
	int			 done = 0;

	while (sched_next_action(s, &a)) {
		if (a.type == SCHED_ASSIGN)
			ring_push(r, a.wid, a.task);
		else if (a.type == SCHED_BATCH_DONE)
			done = 1;
	}
	return (done);
}

/*
 * One run: ns per task for submit + assign + done of n tasks.  The
 * workers join and the task list is built before the clock starts.
 */
static double
run(enum bcase bc, size_t n, uint64_t seed)
{
	struct sched_batch_config	 cfg;
	struct sched_task		*v;
	struct sched			*s;
	struct ring			 r;
	struct out			 o;
	uint64_t			*ids, t0, t1, now = 1;
	unsigned char			*done;
	size_t				 i;
	uint32_t			 w;
	int				 finished;

	memset(&cfg, 0, sizeof(cfg));
	memset(&r, 0, sizeof(r));
	cfg.policy = SCHED_POLICY_RWQ;
	cfg.queue_factor = 2;
	if ((s = sched_new()) == NULL)
		die("sched_new");
	for (w = 1; w <= NWORKERS; w++)
		if (sched_worker_join(s, w, 1, 1, 0) == -1)
			die("sched_worker_join");
	if ((v = calloc(n, sizeof(*v))) == NULL ||
	    (ids = calloc(n, sizeof(*ids))) == NULL ||
	    (done = calloc(n + 1, 1)) == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		ids[i] = v[i].id = i + 1;
		if (bc == CASE_PRIO)
			v[i].priority = (int32_t)(xorshift(&seed) % 65536);
		if (bc == CASE_COPIES)
			v[i].copies = 2;
	}

	t0 = now_ns();
	if (bc == CASE_FIFO) {
		if (sched_submit(s, 1, &cfg, ids, n, now) == -1)
			die("sched_submit");
	} else if (sched_batch_open(s, 1, &cfg, now) == -1 ||
	    sched_batch_add(s, 1, v, n, now) == -1 ||
	    sched_batch_close(s, 1, now) == -1)
		die("sched_batch_*");
	finished = drain(s, &r);
	while (!finished && ring_pop(&r, &o)) {
		if (done[o.o_task])
			continue;	/* a losing copy, cancelled */
		if (sched_done(s, o.o_wid, o.o_task, ++now) == SCHED_ACCEPT)
			done[o.o_task] = 1;
		finished = drain(s, &r);
	}
	t1 = now_ns();
	if (!finished)
		die("the batch did not finish");

	sched_free(s);
	free(r.r_v);
	free(done);
	free(ids);
	free(v);
	return ((double)(t1 - t0) / (double)n);
}

/* Order samples for qsort(). */
static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Say how to call it, and exit. */
static void
usage(void)
{
	fprintf(stderr, "usage: sched [--csv file] [--runs n] [--max n]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option	 opts[] = {
		{ "csv",	required_argument, NULL, 'c' },
		{ "runs",	required_argument, NULL, 'r' },
		{ "max",	required_argument, NULL, 'm' },
		{ NULL,		0,		   NULL, 0 }
	};
	static const size_t		 sizes[] = { 1000, 100000, 1000000 };
	double				 med[CASE_COUNT][3], x[RUNS_MAX];
	const char			*csv = NULL;
	size_t				 i, k, max = SIZE_MAX;
	int				 ch, runs = 5, c;
	FILE				*f;

	while ((ch = getopt_long(argc, argv, "c:r:m:", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			csv = optarg;
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1 || runs > RUNS_MAX)
				usage();
			break;
		case 'm':
			max = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}

	printf("ns per task, submit + assign + done, %d workers, RWQ, "
	    "median of %d\n\n", NWORKERS, runs);
	printf("%-18s %10s %10s %10s\n", "case", "1k", "100k", "1M");
	for (c = 0; c < CASE_COUNT; c++) {
		printf("%-18s", case_names[c]);
		for (i = 0; i < 3; i++) {
			med[c][i] = -1;
			if (sizes[i] > max) {
				printf(" %10s", "-");
				continue;
			}
			for (k = 0; k < (size_t)runs; k++)
				x[k] = run((enum bcase)c, sizes[i], 0x9e3779b9 + k);
			qsort(x, (size_t)runs, sizeof(x[0]), cmp_double);
			med[c][i] = x[runs / 2];
			printf(" %10.1f", med[c][i]);
			fflush(stdout);
		}
		printf("\n");
	}
	if (csv == NULL)
		return (0);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}
	fprintf(f, "case,tasks,workers,runs,ns_per_task\n");
	for (c = 0; c < CASE_COUNT; c++)
		for (i = 0; i < 3; i++)
			if (med[c][i] >= 0)
				fprintf(f, "%s,%zu,%d,%d,%.1f\n", case_keys[c],
				    sizes[i], NWORKERS, runs, med[c][i]);
	if (fclose(f) == EOF) {
		perror(csv);
		return (1);
	}
	printf("\nCSV: %s\n", csv);
	return (0);
}
