/*
 * masterd's SQLite journal: everything written comes back after a close
 * and a reopen (fitness values bit for bit), a duplicate result is refused,
 * close commits, a second opener and foreign or newer files are refused
 * with a message naming the file, prune/drop/delete remove exactly their
 * rows, and after kill -9 a reopen sees exactly what was committed.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../../masterd/journal.h"

#define MAXROWS		32
#define NTHROUGHPUT	20000
#define BATCH		100

/* The scratch directory of one test and the journal's path in it. */
struct tdir {
	char		 dir[64];
	char		 path[128];
};

/* What the load callbacks collected. */
struct loaded {
	size_t			 n;
	struct journal_job	 jobs[MAXROWS];
	char			 params[MAXROWS][64];
	char			 extra[MAXROWS][64];
	struct journal_result	 results[MAXROWS];
	struct journal_span	 spans[MAXROWS];
	uint32_t		 gens[MAXROWS];
	char			 reports[MAXROWS][64];
	size_t			 reportlen[MAXROWS];
	int			 stop_at;	/* row to fail at, 0 none */
};

/* Fitness values that must survive bit for bit. */
static const uint64_t fitbits[] = {
	UINT64_C(0x3fb999999999999a),	/* 0.1 */
	UINT64_C(0x8000000000000000),	/* -0.0 */
	UINT64_C(0xfff8000000dead01),	/* negative quiet NaN, payload */
	UINT64_C(0x7ff0000000000000),	/* +inf */
	UINT64_C(0xfff0000000000000),	/* -inf */
	UINT64_C(0x0008000000000000),	/* DBL_MIN / 2, subnormal */
	UINT64_C(0x7fe1ccf385ebc8a0),	/* 1e308 */
	UINT64_C(0x0000000000000001),	/* smallest subnormal */
};
#define NFIT	(sizeof fitbits / sizeof fitbits[0])

/* A double from its bits. */
static double
dbl(uint64_t bits)
{
	double	 d;

	memcpy(&d, &bits, sizeof d);
	return (d);
}

/* The bits of a double. */
static uint64_t
bits(double d)
{
	uint64_t	 u;

	memcpy(&u, &d, sizeof u);
	return (u);
}

/* A fresh scratch directory for each test. */
static int
setup(void **state)
{
	struct tdir	*t;

	if ((t = calloc(1, sizeof *t)) == NULL)
		return (-1);
	strcpy(t->dir, "/tmp/test_journal.XXXXXX");
	if (mkdtemp(t->dir) == NULL) {
		free(t);
		return (-1);
	}
	snprintf(t->path, sizeof t->path, "%s/journal.db", t->dir);
	*state = t;
	return (0);
}

/* Remove the scratch directory and whatever the test left in it. */
static int
teardown(void **state)
{
	struct tdir	*t = *state;
	struct dirent	*de;
	DIR		*d;
	char		 p[512];

	if ((d = opendir(t->dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(p, sizeof p, "%s/%s", t->dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(t->dir);
	free(t);
	return (0);
}

/* Open the test's journal, failing the test if that fails. */
static struct journal *
topen(const struct tdir *t)
{
	struct journal	*j;
	char		 err[512];

	j = journal_open(t->path, err, sizeof err);
	if (j == NULL)
		fail_msg("%s", err);
	return (j);
}

/* Assert that a journal call failed with a message naming the file. */
static void
assert_failed(struct journal *j, int r, const char *what)
{
	assert_int_equal(r, -1);
	assert_non_null(strstr(journal_error(j), journal_path(j)));
	assert_non_null(strstr(journal_error(j), what));
}

/* Assert the row counts. */
static void
assert_stats(struct journal *j, uint64_t wjobs, uint64_t wresults,
    uint64_t wspans)
{
	uint64_t	 a, b, c;

	assert_int_equal(journal_stats(j, &a, &b, &c), 0);
	assert_int_equal(a, wjobs);
	assert_int_equal(b, wresults);
	assert_int_equal(c, wspans);
}

/* Load callback: copy a job and its blobs. */
static int
load_job(void *arg, const struct journal_job *job)
{
	struct loaded	*l = arg;

	if (l->stop_at != 0 && (size_t)l->stop_at == l->n + 1)
		return (-1);
	if (l->n == MAXROWS || job->paramslen > sizeof l->params[0] ||
	    job->extralen > sizeof l->extra[0])
		return (-1);
	l->jobs[l->n] = *job;
	if (job->paramslen > 0)
		memcpy(l->params[l->n], job->params, job->paramslen);
	if (job->extralen > 0)
		memcpy(l->extra[l->n], job->extra, job->extralen);
	l->jobs[l->n].params = job->params == NULL ? NULL : l->params[l->n];
	l->jobs[l->n].extra = job->extra == NULL ? NULL : l->extra[l->n];
	l->n++;
	return (0);
}

/* Load callback: copy a result. */
static int
load_result(void *arg, const struct journal_result *r)
{
	struct loaded	*l = arg;

	if (l->stop_at != 0 && (size_t)l->stop_at == l->n + 1)
		return (-1);
	if (l->n == MAXROWS)
		return (-1);
	l->results[l->n++] = *r;
	return (0);
}

/* Load callback: copy a generation report. */
static int
load_gen(void *arg, uint32_t gen, const void *blob, size_t len)
{
	struct loaded	*l = arg;

	if (l->n == MAXROWS || len > sizeof l->reports[0])
		return (-1);
	l->gens[l->n] = gen;
	if (len > 0)
		memcpy(l->reports[l->n], blob, len);
	l->reportlen[l->n++] = len;
	return (0);
}

/* Load callback: copy a span. */
static int
load_span(void *arg, const struct journal_span *sp)
{
	struct loaded	*l = arg;

	if (l->n == MAXROWS)
		return (-1);
	l->spans[l->n++] = *sp;
	return (0);
}

/* Load callback: count results (any number). */
static int
count_result(void *arg, const struct journal_result *r)
{
	uint64_t	*n = arg;

	if (r->idx != *n % BATCH || r->gen != *n / BATCH ||
	    bits(r->fitness) != bits((double)*n / 7.0))
		return (-1);
	(*n)++;
	return (0);
}

/* How many results a job has. */
static size_t
nresults(struct journal *j, uint64_t job)
{
	struct loaded	*l;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	assert_int_equal(journal_load_results(j, job, load_result, l), 0);
	n = l->n;
	free(l);
	return (n);
}

/* How many generation reports a job has. */
static size_t
ngens(struct journal *j, uint64_t job)
{
	struct loaded	*l;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	assert_int_equal(journal_load_gens(j, job, load_gen, l), 0);
	n = l->n;
	free(l);
	return (n);
}

/* How many spans a job has. */
static size_t
nspans(struct journal *j, uint64_t job)
{
	struct loaded	*l;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	assert_int_equal(journal_load_spans(j, job, load_span, l), 0);
	n = l->n;
	free(l);
	return (n);
}

/* Add a result, failing the test if that fails. */
static void
add_result(struct journal *j, uint64_t job, uint32_t gen, uint32_t idx,
    double fitness)
{
	struct journal_result	 r;

	memset(&r, 0, sizeof r);
	r.job = job;
	r.gen = gen;
	r.idx = idx;
	r.fitness = fitness;
	if (journal_result_add(j, &r) != 0)
		fail_msg("%s", journal_error(j));
}

/* Add a job with one result, one report and one span. */
static void
add_job(struct journal *j, uint64_t id, const char *state, uint64_t ended)
{
	struct journal_job	 job;
	struct journal_span	 sp;

	memset(&job, 0, sizeof job);
	job.id = id;
	job.params = "p";
	job.paramslen = 1;
	snprintf(job.state, sizeof job.state, "%s", state);
	job.submitted_ns = 1;
	job.ended_ns = ended;
	assert_int_equal(journal_job_put(j, &job), 0);
	add_result(j, id, 0, 0, 1.5);
	assert_int_equal(journal_gen_put(j, id, 0, "r", 1), 0);
	memset(&sp, 0, sizeof sp);
	sp.job = id;
	sp.task = id * 10;
	snprintf(sp.worker, sizeof sp.worker, "w1");
	assert_int_equal(journal_span_add(j, &sp), 0);
}

/*
 * Every table survives a close and a reopen: meta, jobs with all their
 * fields (ids above INT64_MAX in unsigned order), results bit for bit,
 * reports, spans in (start, task) order.  The file is 0600.
 */
static void
test_roundtrip(void **state)
{
	static const char	 params[] = "\0\1\2binary\377";
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_job	 job;
	struct journal_span	 sp;
	struct loaded		*l;
	struct stat		 sb;
	uint64_t		 v;
	size_t			 i;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	assert_string_equal(journal_path(j), t->path);
	assert_int_equal(journal_meta_get(j, "next_task", &v), 1);
	assert_int_equal(journal_meta_set(j, "next_task", 42), 0);
	assert_int_equal(journal_meta_set(j, "big", UINT64_MAX), 0);
	assert_int_equal(journal_meta_set(j, "next_task", 43), 0);

	memset(&job, 0, sizeof job);
	job.id = UINT64_MAX;
	job.params = params;
	job.paramslen = sizeof params;
	strcpy(job.state, "running");
	job.submitted_ns = UINT64_C(1700000000123456789);
	job.gen = 7;
	job.first_task = UINT64_C(0x8000000000000001);
	strcpy(job.error, "");
	assert_int_equal(journal_job_put(j, &job), 0);

	job.id = 5;
	job.params = "old";
	job.paramslen = 3;
	assert_int_equal(journal_job_put(j, &job), 0);
	job.params = "xy";
	job.paramslen = 2;
	strcpy(job.state, "failed");
	job.ended_ns = UINT64_C(1700000000999999999);
	job.gen = 0;
	job.first_task = 0;
	strcpy(job.error, "worker w3: ridge_lu: singular matrix");
	job.extra = "best";
	job.extralen = 4;
	assert_int_equal(journal_job_put(j, &job), 0);

	for (i = 0; i < NFIT; i++)
		add_result(j, 5, (uint32_t)(NFIT - i), (uint32_t)i,
		    dbl(fitbits[i]));
	add_result(j, UINT64_MAX, UINT32_MAX, UINT32_MAX, DBL_MAX);

	assert_int_equal(journal_gen_put(j, 5, 1, "one", 3), 0);
	assert_int_equal(journal_gen_put(j, 5, 0, "zero", 4), 0);
	assert_int_equal(journal_gen_put(j, 5, 1, "uno", 3), 0);
	assert_int_equal(journal_gen_put(j, 5, 2, NULL, 0), 0);

	memset(&sp, 0, sizeof sp);
	sp.job = 5;
	sp.gen = 1;
	sp.idx = 2;
	sp.task = 100;
	strcpy(sp.worker, "worker-with-a-long-name.example.org");
	sp.slot = 3;
	sp.start_ns = UINT64_C(0x8000000000000000);
	sp.end_ns = UINT64_MAX;
	sp.outcome = 4;
	sp.replica = 1;
	assert_int_equal(journal_span_add(j, &sp), 0);
	sp.start_ns = 10;
	sp.end_ns = 20;
	sp.task = 102;
	sp.replica = 0;
	assert_int_equal(journal_span_add(j, &sp), 0);
	sp.task = 101;
	assert_int_equal(journal_span_add(j, &sp), 0);
	assert_int_equal(journal_commit(j), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	assert_int_equal(stat(t->path, &sb), 0);
	assert_int_equal(sb.st_mode & 077, 0);

	j = topen(t);
	assert_int_equal(journal_meta_get(j, "next_task", &v), 0);
	assert_int_equal(v, 43);
	assert_int_equal(journal_meta_get(j, "big", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(journal_meta_get(j, "missing", &v), 1);
	assert_stats(j, 2, NFIT + 1, 3);

	/* Jobs in unsigned id order, every field intact. */
	assert_int_equal(journal_load_jobs(j, load_job, l), 0);
	assert_int_equal(l->n, 2);
	assert_int_equal(l->jobs[0].id, 5);
	assert_int_equal(l->jobs[0].paramslen, 2);
	assert_memory_equal(l->jobs[0].params, "xy", 2);
	assert_string_equal(l->jobs[0].state, "failed");
	assert_true(l->jobs[0].submitted_ns == UINT64_C(1700000000123456789));
	assert_true(l->jobs[0].ended_ns == UINT64_C(1700000000999999999));
	assert_int_equal(l->jobs[0].gen, 0);
	assert_int_equal(l->jobs[0].first_task, 0);
	assert_string_equal(l->jobs[0].error,
	    "worker w3: ridge_lu: singular matrix");
	assert_int_equal(l->jobs[0].extralen, 4);
	assert_memory_equal(l->jobs[0].extra, "best", 4);
	assert_true(l->jobs[1].id == UINT64_MAX);
	assert_int_equal(l->jobs[1].paramslen, sizeof params);
	assert_memory_equal(l->jobs[1].params, params, sizeof params);
	assert_string_equal(l->jobs[1].state, "running");
	assert_int_equal(l->jobs[1].ended_ns, 0);
	assert_int_equal(l->jobs[1].gen, 7);
	assert_true(l->jobs[1].first_task == UINT64_C(0x8000000000000001));
	assert_string_equal(l->jobs[1].error, "");
	assert_null(l->jobs[1].extra);
	assert_int_equal(l->jobs[1].extralen, 0);

	/* Results in (gen, idx) order, fitness bit for bit. */
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_results(j, 5, load_result, l), 0);
	assert_int_equal(l->n, NFIT);
	for (i = 0; i < NFIT; i++) {
		assert_int_equal(l->results[i].job, 5);
		assert_int_equal(l->results[i].gen, i + 1);
		assert_int_equal(l->results[i].idx, NFIT - 1 - i);
		assert_true(bits(l->results[i].fitness) ==
		    fitbits[NFIT - 1 - i]);
	}
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_results(j, UINT64_MAX, load_result, l),
	    0);
	assert_int_equal(l->n, 1);
	assert_true(l->results[0].job == UINT64_MAX);
	assert_true(l->results[0].gen == UINT32_MAX);
	assert_true(l->results[0].idx == UINT32_MAX);
	assert_true(bits(l->results[0].fitness) == bits(DBL_MAX));

	/* Reports in gen order, the last put winning. */
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_gens(j, 5, load_gen, l), 0);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->gens[0], 0);
	assert_int_equal(l->reportlen[0], 4);
	assert_memory_equal(l->reports[0], "zero", 4);
	assert_int_equal(l->gens[1], 1);
	assert_int_equal(l->reportlen[1], 3);
	assert_memory_equal(l->reports[1], "uno", 3);
	assert_int_equal(l->gens[2], 2);
	assert_int_equal(l->reportlen[2], 0);

	/* Spans in (start, task) order, start above INT64_MAX last. */
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_spans(j, 5, load_span, l), 0);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->spans[0].task, 101);
	assert_int_equal(l->spans[1].task, 102);
	assert_int_equal(l->spans[2].task, 100);
	assert_int_equal(l->spans[0].start_ns, 10);
	assert_int_equal(l->spans[0].end_ns, 20);
	assert_true(l->spans[2].start_ns == UINT64_C(0x8000000000000000));
	assert_true(l->spans[2].end_ns == UINT64_MAX);
	assert_int_equal(l->spans[2].job, 5);
	assert_int_equal(l->spans[2].gen, 1);
	assert_int_equal(l->spans[2].idx, 2);
	assert_string_equal(l->spans[2].worker,
	    "worker-with-a-long-name.example.org");
	assert_int_equal(l->spans[2].slot, 3);
	assert_int_equal(l->spans[2].outcome, 4);
	assert_int_equal(l->spans[2].replica, 1);
	assert_int_equal(nspans(j, UINT64_MAX), 0);

	journal_close(j);
	free(l);
}

/*
 * A second result for the same individual is refused and changes
 * nothing, committed or still pending; the pending transaction goes on.
 */
static void
test_duplicate(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_result	 r;
	struct loaded		*l;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	add_result(j, 1, 0, 0, 0.25);
	assert_int_equal(journal_commit(j), 0);
	add_result(j, 1, 0, 1, 0.5);

	memset(&r, 0, sizeof r);
	r.job = 1;
	r.fitness = 99.0;
	assert_failed(j, journal_result_add(j, &r), "duplicate result");
	r.idx = 1;
	assert_failed(j, journal_result_add(j, &r), "duplicate result");
	add_result(j, 1, 0, 2, 0.75);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_load_results(j, 1, load_result, l), 0);
	assert_int_equal(l->n, 3);
	assert_true(l->results[0].fitness == 0.25);
	assert_true(l->results[1].fitness == 0.5);
	assert_true(l->results[2].fitness == 0.75);
	journal_close(j);
	free(l);
}

/* Writes never committed are committed by journal_close. */
static void
test_close_commits(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	uint64_t	 v;

	j = topen(t);
	assert_int_equal(journal_meta_set(j, "k", 7), 0);
	add_job(j, 3, "running", 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_meta_get(j, "k", &v), 0);
	assert_int_equal(v, 7);
	assert_stats(j, 1, 1, 1);
	journal_close(j);
}

/*
 * While one journal is open, a second open of the file fails with a
 * message naming it, from this process and from another, and the first
 * goes on working.
 */
static void
test_locked(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j, *j2;
	char		 err[512], c;
	int		 p[2], status;
	pid_t		 pid;

	/* Fork before anything is open: SQLite is not fork-safe. */
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		j2 = journal_open(t->path, err, sizeof err);
		if (j2 != NULL)
			_exit(3);
		if (strstr(err, t->path) == NULL ||
		    strstr(err, "locked") == NULL)
			_exit(4);
		_exit(0);
	}
	close(p[0]);

	/* Nothing pending: the lock is the connection's, not a write's. */
	j = topen(t);
	add_result(j, 1, 0, 0, 1.0);
	assert_int_equal(journal_commit(j), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(p[1]);

	j2 = journal_open(t->path, err, sizeof err);
	assert_null(j2);
	assert_non_null(strstr(err, t->path));
	assert_non_null(strstr(err, "locked"));

	add_result(j, 1, 0, 1, 2.0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(nresults(j, 1), 2);
	journal_close(j);
}

/*
 * Prune removes only finished jobs that ended before the cut, with all
 * their rows, comparing times as unsigned.
 */
static void
test_prune(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	struct loaded	*l;
	uint64_t	 big = UINT64_C(1) << 63;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	add_job(j, 1, "running", 0);
	add_job(j, 2, "done", 100);
	add_job(j, 3, "failed", 300);
	add_job(j, 4, "done", 0);
	add_job(j, 5, "cancelled", big + 10);
	add_job(j, 6, "running", 50);
	assert_int_equal(journal_commit(j), 0);
	assert_stats(j, 6, 6, 6);

	assert_int_equal(journal_prune(j, 100, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(journal_prune(j, 200, &n), 0);
	assert_int_equal(n, 1);
	assert_stats(j, 5, 5, 5);
	assert_int_equal(nresults(j, 2), 0);
	assert_int_equal(ngens(j, 2), 0);
	assert_int_equal(nspans(j, 2), 0);

	assert_int_equal(journal_prune(j, big + 5, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(nresults(j, 3), 0);
	assert_int_equal(nresults(j, 5), 1);
	assert_int_equal(journal_prune(j, UINT64_MAX, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(journal_prune(j, UINT64_MAX, NULL), 0);
	journal_close(j);

	j = topen(t);
	assert_stats(j, 3, 3, 3);
	assert_int_equal(journal_load_jobs(j, load_job, l), 0);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->jobs[0].id, 1);
	assert_int_equal(l->jobs[1].id, 4);
	assert_int_equal(l->jobs[2].id, 6);
	assert_int_equal(ngens(j, 1), 1);
	assert_int_equal(ngens(j, 5), 0);
	assert_int_equal(nspans(j, 4), 1);
	assert_int_equal(nspans(j, 5), 0);
	journal_close(j);
	free(l);
}

/* results_drop forgets a job's results only. */
static void
test_results_drop(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;

	j = topen(t);
	add_job(j, 1, "done", 10);
	add_result(j, 1, 0, 1, 2.0);
	add_job(j, 2, "running", 0);
	assert_int_equal(journal_results_drop(j, 1), 0);
	assert_int_equal(journal_results_drop(j, 9), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_stats(j, 2, 1, 2);
	assert_int_equal(nresults(j, 1), 0);
	assert_int_equal(nresults(j, 2), 1);
	assert_int_equal(ngens(j, 1), 1);
	assert_int_equal(nspans(j, 1), 1);
	/* The dropped results may be written again. */
	add_result(j, 1, 0, 0, 3.0);
	journal_close(j);
}

/* job_delete removes a job and every row of it, and nothing else. */
static void
test_job_delete(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;

	j = topen(t);
	add_job(j, 1, "running", 0);
	add_job(j, 2, "running", 0);
	assert_int_equal(journal_commit(j), 0);
	assert_int_equal(journal_job_delete(j, 1), 0);
	assert_int_equal(journal_job_delete(j, 77), 0);
	journal_close(j);

	j = topen(t);
	assert_stats(j, 1, 1, 1);
	assert_int_equal(nresults(j, 1), 0);
	assert_int_equal(ngens(j, 1), 0);
	assert_int_equal(nspans(j, 1), 0);
	assert_int_equal(nresults(j, 2), 1);
	assert_int_equal(ngens(j, 2), 1);
	journal_close(j);
}

/* A callback that returns -1 stops the load, which then fails. */
static void
test_load_stop(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	struct loaded	*l;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	add_job(j, 1, "running", 0);
	add_job(j, 2, "running", 0);
	add_result(j, 1, 0, 1, 1.0);
	l->stop_at = 2;
	assert_failed(j, journal_load_jobs(j, load_job, l),
	    "stopped by caller");
	assert_int_equal(l->n, 1);
	memset(l, 0, sizeof *l);
	l->stop_at = 1;
	assert_failed(j, journal_load_results(j, 1, load_result, l),
	    "stopped by caller");
	assert_int_equal(l->n, 0);
	/* A stopped load leaves nothing behind: it can run again. */
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_jobs(j, load_job, l), 0);
	assert_int_equal(l->n, 2);
	journal_close(j);
	free(l);
}

/* Garbage is refused, named and left alone; an empty file is adopted. */
static void
test_garbage(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	unsigned char	 junk[4096], back[4096];
	char		 err[512];
	size_t		 i;
	int		 fd;

	for (i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)(i * 7919 + 13 + (i >> 3));
	fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, junk, sizeof junk), sizeof junk);
	close(fd);

	j = journal_open(t->path, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, t->path));
	assert_non_null(strstr(err, "not a database"));

	fd = open(t->path, O_RDONLY);
	assert_true(fd != -1);
	assert_int_equal(read(fd, back, sizeof back), sizeof back);
	close(fd);
	assert_memory_equal(junk, back, sizeof junk);

	fd = open(t->path, O_WRONLY | O_TRUNC);
	assert_true(fd != -1);
	close(fd);
	j = topen(t);
	assert_stats(j, 0, 0, 0);
	journal_close(j);
}

/* Create an SQLite file outside the journal, running sql in it. */
static void
mkforeign(const char *path, const char *sql)
{
	sqlite3	*db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A newer schema version and someone else's database are refused. */
static void
test_foreign(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	char		 err[512];

	mkforeign(t->path, "CREATE TABLE t (x); PRAGMA user_version = 99");
	j = journal_open(t->path, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, t->path));
	assert_non_null(strstr(err, "schema version 99 is newer"));

	mkforeign(t->path, "PRAGMA user_version = 0");
	j = journal_open(t->path, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, t->path));
	assert_non_null(strstr(err, "not a journal"));
}

/* A file in a missing directory, or a directory, cannot be opened. */
static void
test_missing_dir(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	char		 path[256], err[512];

	snprintf(path, sizeof path, "%s/nonexistent/journal.db", t->dir);
	err[0] = '\0';
	j = journal_open(path, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file"));

	j = journal_open(t->dir, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, t->dir));
}

/*
 * kill -9 after a commit and more writes: a reopen sees exactly the
 * committed rows.  The child cannot use cmocka's asserts; it reports
 * trouble by exiting instead of dying.
 */
static void
test_crash(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_job	 job;
	struct journal_result	 r;
	struct loaded		*l;
	char			 err[512];
	uint32_t		 i;
	int			 status;
	pid_t			 pid;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if ((j = journal_open(t->path, err, sizeof err)) == NULL)
			_exit(2);
		memset(&r, 0, sizeof r);
		r.job = 1;
		for (i = 0; i < 10; i++) {
			r.idx = i;
			r.fitness = dbl(fitbits[i % NFIT]);
			if (journal_result_add(j, &r) != 0)
				_exit(3);
		}
		if (journal_commit(j) != 0)
			_exit(4);
		for (; i < 20; i++) {
			r.idx = i;
			if (journal_result_add(j, &r) != 0)
				_exit(5);
		}
		memset(&job, 0, sizeof job);
		job.id = 1;
		strcpy(job.state, "running");
		if (journal_job_put(j, &job) != 0 ||
		    journal_meta_set(j, "k", 1) != 0)
			_exit(6);
		kill(getpid(), SIGKILL);
		_exit(7);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status))
		fail_msg("child exited %d", WEXITSTATUS(status));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	assert_stats(j, 0, 10, 0);
	assert_int_equal(journal_load_results(j, 1, load_result, l), 0);
	assert_int_equal(l->n, 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(l->results[i].idx, i);
		assert_true(bits(l->results[i].fitness) == fitbits[i % NFIT]);
	}
	assert_int_equal(journal_meta_get(j, "k", &(uint64_t){ 0 }), 1);
	journal_close(j);
	free(l);
}

/*
 * 20000 results in commits of 100 all come back.  A sanity check, not a
 * benchmark: nothing is timed.
 */
static void
test_throughput(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	uint64_t	 i, n = 0;

	j = topen(t);
	for (i = 0; i < NTHROUGHPUT; i++) {
		add_result(j, 9, (uint32_t)(i / BATCH), (uint32_t)(i % BATCH),
		    (double)i / 7.0);
		if (i % BATCH == BATCH - 1)
			assert_int_equal(journal_commit(j), 0);
	}
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_load_results(j, 9, count_result, &n), 0);
	assert_int_equal(n, NTHROUGHPUT);
	assert_stats(j, 0, NTHROUGHPUT, 0);
	journal_close(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_duplicate, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_close_commits, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_locked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_results_drop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_job_delete, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_load_stop, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_dir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throughput, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
