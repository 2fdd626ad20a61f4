/*
 * masterd's SQLite journal: everything written comes back after a close
 * and a reopen (outputs byte for byte, es fitness values bit for bit,
 * tasks and batches in order), a duplicate result or task is refused,
 * close commits, a second opener and foreign or newer files are refused
 * with a message naming the file, prune/drop/delete remove exactly their
 * rows, after kill -9 a reopen sees exactly what was committed, and a
 * version 1 journal -- one made here from the version 1 schema, and one
 * written by the masterd of that version (tests/data/journal-v1.db) -- is
 * upgraded in place with its fitness values as es outputs, or left alone
 * if the upgrade fails.  Outputs too large to stay in their results row
 * come back like small ones and go with drop, delete and prune.  Task
 * executions, packed a commit's at a time since version 3, come back
 * field for field in version 2's order, and the version 2 journal of
 * masterd 4def72e (tests/data/journal-v2.db) loads each job's exactly as
 * version 2 did.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
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
#include "es/payload.h"

#ifndef TEST_DATADIR
#define TEST_DATADIR	"tests/data"
#endif

/* The schema version journal_open() leaves (JOURNAL_VERSION in journal.c). */
#define SCHEMA_NOW	5

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
	char			 extra[MAXROWS][128];
	struct journal_result	 results[MAXROWS];
	uint8_t			 outputs[MAXROWS][64];
	char			 errors[MAXROWS][64];
	struct journal_task	 tasks[MAXROWS];
	uint8_t			 payloads[MAXROWS][64];
	struct journal_batch	 batches[MAXROWS];
	char			 kinds[MAXROWS][32];
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

/* Load callback: copy a result, its output and its error. */
static int
load_result(void *arg, const struct journal_result *r)
{
	struct loaded	*l = arg;

	if (l->stop_at != 0 && (size_t)l->stop_at == l->n + 1)
		return (-1);
	if (l->n == MAXROWS || r->outlen > sizeof l->outputs[0] ||
	    r->error == NULL || strlen(r->error) >= sizeof l->errors[0])
		return (-1);
	l->results[l->n] = *r;
	if (r->outlen > 0)
		memcpy(l->outputs[l->n], r->output, r->outlen);
	l->results[l->n].output = r->output == NULL ? NULL : l->outputs[l->n];
	strcpy(l->errors[l->n], r->error);
	l->results[l->n].error = l->errors[l->n];
	l->n++;
	return (0);
}

/* Load callback: copy a task and its payload. */
static int
load_task(void *arg, const struct journal_task *t)
{
	struct loaded	*l = arg;

	if (l->n == MAXROWS || t->len > sizeof l->payloads[0])
		return (-1);
	l->tasks[l->n] = *t;
	if (t->len > 0)
		memcpy(l->payloads[l->n], t->payload, t->len);
	l->tasks[l->n].payload = t->payload == NULL ? NULL :
	    l->payloads[l->n];
	l->n++;
	return (0);
}

/* Load callback: copy a batch and its kind. */
static int
load_batch(void *arg, const struct journal_batch *b)
{
	struct loaded	*l = arg;

	if (l->n == MAXROWS || b->kind == NULL ||
	    strlen(b->kind) >= sizeof l->kinds[0])
		return (-1);
	l->batches[l->n] = *b;
	strcpy(l->kinds[l->n], b->kind);
	l->batches[l->n].kind = l->kinds[l->n];
	l->n++;
	return (0);
}

/* The fitness of an es result: its 8-byte output decoded. */
static double
fitness(const struct journal_result *r)
{
	double	 f;

	if (es_output_decode(r->output, r->outlen, &f) == -1)
		fail_msg("result (%u, %u): output of %zu bytes", r->gen,
		    r->idx, r->outlen);
	return (f);
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
	double		 f;

	if (r->idx != *n % BATCH || r->gen != *n / BATCH ||
	    es_output_decode(r->output, r->outlen, &f) == -1 ||
	    bits(f) != bits((double)*n / 7.0))
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

/* How many tasks a job has. */
static size_t
ntasks(struct journal *j, uint64_t job)
{
	struct loaded	*l;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	assert_int_equal(journal_load_tasks(j, job, load_task, l), 0);
	n = l->n;
	free(l);
	return (n);
}

/* How many batches a job has. */
static size_t
nbatches(struct journal *j, uint64_t job)
{
	struct loaded	*l;
	size_t		 n;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	assert_int_equal(journal_load_batches(j, job, load_batch, l), 0);
	n = l->n;
	free(l);
	return (n);
}

/* Add a result, failing the test if that fails. */
static void
add_result(struct journal *j, uint64_t job, uint32_t gen, uint32_t idx,
    double f)
{
	struct journal_result	 r;
	uint8_t			 out[ES_OUTPUT_LEN];

	es_output_encode(out, f);
	memset(&r, 0, sizeof r);
	r.job = job;
	r.gen = gen;
	r.idx = idx;
	r.output = out;
	r.outlen = sizeof out;
	if (journal_result_add(j, &r) != 0)
		fail_msg("%s", journal_error(j));
}

/* Add a job with one result, report, span, task and batch. */
static void
add_job(struct journal *j, uint64_t id, const char *state, uint64_t ended)
{
	struct journal_job	 job;
	struct journal_span	 sp;
	struct journal_task	 tk;
	struct journal_batch	 b;

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
	memset(&tk, 0, sizeof tk);
	tk.job = id;
	tk.payload = "t";
	tk.len = 1;
	assert_int_equal(journal_task_add(j, &tk), 0);
	memset(&b, 0, sizeof b);
	b.job = id;
	b.kind = "k";
	assert_int_equal(journal_batch_put(j, &b), 0);
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
	strcpy(job.driver, "batch");
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
	strcpy(job.driver, "es");
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
	assert_string_equal(l->jobs[0].driver, "es");
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
	assert_string_equal(l->jobs[1].driver, "batch");
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
		assert_true(bits(fitness(&l->results[i])) ==
		    fitbits[NFIT - 1 - i]);
	}
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_results(j, UINT64_MAX, load_result, l),
	    0);
	assert_int_equal(l->n, 1);
	assert_true(l->results[0].job == UINT64_MAX);
	assert_true(l->results[0].gen == UINT32_MAX);
	assert_true(l->results[0].idx == UINT32_MAX);
	assert_true(bits(fitness(&l->results[0])) == bits(DBL_MAX));

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
 * A second result for the same individual changes nothing, committed or
 * still pending: the first journaled is the one that loads (masterd takes
 * only a task's first result; the journal keeps that promise on load).
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
	r.output = "99";
	r.outlen = 2;
	assert_int_equal(journal_result_add(j, &r), 0);
	r.idx = 1;
	assert_int_equal(journal_result_add(j, &r), 0);
	add_result(j, 1, 0, 2, 0.75);
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_results(j, 1, load_result, l), 0);
	assert_int_equal(l->n, 3);
	assert_true(fitness(&l->results[1]) == 0.5);
	memset(l, 0, sizeof *l);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_load_results(j, 1, load_result, l), 0);
	assert_int_equal(l->n, 3);
	assert_true(fitness(&l->results[0]) == 0.25);
	assert_true(fitness(&l->results[1]) == 0.5);
	assert_true(fitness(&l->results[2]) == 0.75);
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

/* Collect tokens and certificates of a load. */
struct tk_seen {
	struct journal_token	 t[4];
	struct journal_cert	 c[4];
	size_t			 nt, nc;
};

static int
tk_token(void *arg, const struct journal_token *t)
{
	struct tk_seen	*ts = arg;

	if (ts->nt == 4)
		return (-1);
	ts->t[ts->nt++] = *t;
	return (0);
}

static int
tk_cert(void *arg, const struct journal_cert *c)
{
	struct tk_seen	*ts = arg;

	if (ts->nc == 4)
		return (-1);
	ts->c[ts->nc++] = *c;
	return (0);
}

/*
 * Join tokens and the certificates issued (issue 25): their tables are
 * made at open, rows are replaced whole, read back in order, and kept
 * across a close; the job tables are untouched.
 */
static void
test_tokens(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_token	 a, b, got;
	struct journal_cert	 c;
	struct tk_seen		 ts;

	memset(&a, 0, sizeof a);
	snprintf(a.id, sizeof a.id, "0123456789ab");
	snprintf(a.hash, sizeof a.hash, "%064d", 7);
	a.created = 100;
	a.expires = UINT64_MAX - 1;	/* above INT64_MAX: its bits kept */
	a.uses = 2;
	b = a;
	snprintf(b.id, sizeof b.id, "ba9876543210");
	b.created = 200;
	b.revoked = 1;
	memset(&c, 0, sizeof c);
	snprintf(c.serial, sizeof c.serial, "7F00AA");
	snprintf(c.name, sizeof c.name, "node1");
	c.issued = 150;
	c.not_after = 1000;
	snprintf(c.token, sizeof c.token, "%s", a.id);
	snprintf(c.addr, sizeof c.addr, "192.0.2.1:4000");

	j = topen(t);
	assert_int_equal(journal_token_get(j, a.id, &got), 1);
	assert_int_equal(journal_token_put(j, &b), 0);
	assert_int_equal(journal_token_put(j, &a), 0);
	a.used = 1;
	assert_int_equal(journal_token_put(j, &a), 0);
	assert_int_equal(journal_cert_add(j, &c), 0);
	snprintf(c.serial, sizeof c.serial, "7F00AB");
	c.token[0] = '\0';
	c.issued = 160;
	assert_int_equal(journal_cert_add(j, &c), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_token_get(j, a.id, &got), 0);
	assert_string_equal(got.hash, a.hash);
	assert_int_equal(got.used, 1);
	assert_int_equal(got.uses, 2);
	assert_true(got.expires == UINT64_MAX - 1);
	assert_int_equal(got.revoked, 0);
	memset(&ts, 0, sizeof ts);
	assert_int_equal(journal_load_tokens(j, tk_token, &ts), 0);
	assert_int_equal(ts.nt, 2);
	assert_string_equal(ts.t[0].id, a.id);	/* oldest first */
	assert_string_equal(ts.t[1].id, b.id);
	assert_int_equal(ts.t[1].revoked, 1);
	assert_int_equal(journal_load_certs(j, tk_cert, &ts), 0);
	assert_int_equal(ts.nc, 2);
	assert_string_equal(ts.c[0].serial, "7F00AA");
	assert_string_equal(ts.c[0].token, a.id);
	assert_string_equal(ts.c[0].addr, "192.0.2.1:4000");
	assert_string_equal(ts.c[1].token, "");
	assert_int_equal(ts.c[1].not_after, 1000);
	assert_stats(j, 0, 0, 0);
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
	assert_int_equal(ntasks(j, 2), 0);
	assert_int_equal(nbatches(j, 2), 0);
	assert_int_equal(ntasks(j, 3), 1);
	assert_int_equal(nbatches(j, 3), 1);

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
	assert_int_equal(ntasks(j, 3), 0);
	assert_int_equal(nbatches(j, 3), 0);
	assert_int_equal(ntasks(j, 5), 0);
	assert_int_equal(nbatches(j, 5), 0);
	assert_int_equal(ntasks(j, 6), 1);
	assert_int_equal(nbatches(j, 6), 1);
	journal_close(j);
	free(l);
}

/* results_drop forgets a job's results only, not its tasks or batches. */
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
	assert_int_equal(ntasks(j, 1), 1);
	assert_int_equal(nbatches(j, 1), 1);
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
	assert_int_equal(ntasks(j, 1), 0);
	assert_int_equal(nbatches(j, 1), 0);
	assert_int_equal(nresults(j, 2), 1);
	assert_int_equal(ngens(j, 2), 1);
	assert_int_equal(ntasks(j, 2), 1);
	assert_int_equal(nbatches(j, 2), 1);
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
	uint8_t			 out[ES_OUTPUT_LEN];
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
		r.output = out;
		r.outlen = sizeof out;
		for (i = 0; i < 10; i++) {
			r.idx = i;
			es_output_encode(out, dbl(fitbits[i % NFIT]));
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
		assert_true(bits(fitness(&l->results[i])) == fitbits[i % NFIT]);
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

/* One expected result of test_outputs, and how far the check has got. */
struct wantres {
	uint32_t	 gen, idx, status;
	uint64_t	 seq;
	const void	*output;
	size_t		 outlen;
	const char	*error;		/* as loaded */
};
struct wantlist {
	const struct wantres	*w;
	size_t			 n, i;
};

/*
 * Load callback: the next result is the next wanted one, its output
 * compared where it lies, in the journal, during the callback.
 */
static int
check_result(void *arg, const struct journal_result *r)
{
	struct wantlist		*wl = arg;
	const struct wantres	*w;

	if (wl->i == wl->n)
		return (-1);
	w = &wl->w[wl->i++];
	if (r->gen != w->gen || r->idx != w->idx || r->status != w->status ||
	    r->seq != w->seq || r->outlen != w->outlen ||
	    r->error == NULL || strcmp(r->error, w->error) != 0)
		return (-1);
	if (w->outlen == 0)
		return (r->output == NULL ? 0 : -1);
	return (memcmp(r->output, w->output, w->outlen) == 0 ? 0 : -1);
}

/*
 * Outputs of 0 bytes, 8 bytes and 1 MiB come back byte for byte with
 * their status, delivery number and error, in (gen, idx) order; an empty
 * output loads as NULL, a missing error as "".
 */
static void
test_outputs(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_result	 r;
	struct wantlist		 wl;
	struct wantres		 want[6];
	uint8_t			*big, eight[ES_OUTPUT_LEN];
	size_t			 i, bigsz = 1 << 20;

	big = malloc(bigsz);
	assert_non_null(big);
	for (i = 0; i < bigsz; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 11));
	es_output_encode(eight, -0.0);

	/* In (gen, idx) order; written in another. */
	want[0] = (struct wantres){ 0, 0, 0, 1, NULL, 0, "" };
	want[1] = (struct wantres){ 0, 1, 0, 2, eight, sizeof eight, "" };
	want[2] = (struct wantres){ 0, 2, 5, 0, NULL, 0,
	    "worker w3: kind synth failed: exit 1" };
	want[3] = (struct wantres){ 0, 3, 0, 4, NULL, 0, "" };
	want[4] = (struct wantres){ 1, 0, 0, UINT64_MAX, big, bigsz, "" };
	want[5] = (struct wantres){ UINT32_MAX, 7, UINT32_MAX, 6, "x", 1,
	    "both" };

	j = topen(t);
	for (i = 6; i-- > 0;) {
		memset(&r, 0, sizeof r);
		r.job = 3;
		r.gen = want[i].gen;
		r.idx = want[i].idx;
		r.status = want[i].status;
		r.seq = want[i].seq;
		r.output = want[i].output;
		r.outlen = want[i].outlen;
		r.error = want[i].error;
		if (i == 0)
			r.error = NULL;
		if (i == 3)
			r.output = "not empty";	/* but 0 bytes of it */
		if (journal_result_add(j, &r) != 0)
			fail_msg("%s", journal_error(j));
	}
	/* Still in the pending transaction: the same. */
	wl = (struct wantlist){ want, 6, 0 };
	assert_int_equal(journal_load_results(j, 3, check_result, &wl), 0);
	assert_int_equal(wl.i, 6);
	journal_close(j);

	j = topen(t);
	wl = (struct wantlist){ want, 6, 0 };
	assert_int_equal(journal_load_results(j, 3, check_result, &wl), 0);
	assert_int_equal(wl.i, 6);
	assert_int_equal(nresults(j, 4), 0);
	assert_stats(j, 0, 6, 0);
	journal_close(j);
	free(big);
}

/*
 * Tasks added as one run (a client's frame) load one by one, in order,
 * with their payloads; a run whose tasks do not follow each other is
 * refused, and a damaged run fails the load with a message.
 */
static void
test_task_runs(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_task	 tk[5];
	struct loaded		*l;
	sqlite3			*db;
	char			 pay[5][8];
	size_t			 i;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	memset(tk, 0, sizeof tk);
	for (i = 0; i < 5; i++) {
		tk[i].job = 3;
		tk[i].gen = 2;
		tk[i].idx = 10 + (uint32_t)i;
		tk[i].key = (UINT64_C(1) << 40) + i;
		tk[i].priority = -(int32_t)i;
		tk[i].copies = (uint32_t)i;
		snprintf(pay[i], sizeof pay[i], "p%zu", i);
		tk[i].payload = i == 2 ? NULL : pay[i];
		tk[i].len = i == 2 ? 0 : strlen(pay[i]);
	}
	assert_int_equal(journal_tasks_add(j, tk, 5), 0);
	tk[1].idx = 99;
	assert_int_equal(journal_tasks_add(j, tk, 2), -1);
	assert_non_null(strstr(journal_error(j), "follow each other"));
	assert_int_equal(journal_commit(j), 0);
	assert_int_equal(journal_load_tasks(j, 3, load_task, l), 0);
	assert_int_equal(l->n, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(l->tasks[i].gen, 2);
		assert_int_equal(l->tasks[i].idx, 10 + i);
		assert_true(l->tasks[i].key == (UINT64_C(1) << 40) + i);
		assert_int_equal(l->tasks[i].priority, -(int32_t)i);
		assert_int_equal(l->tasks[i].copies, i);
		if (i == 2) {
			assert_null(l->tasks[i].payload);
			assert_int_equal(l->tasks[i].len, 0);
		} else {
			assert_int_equal(l->tasks[i].len, strlen(pay[i]));
			assert_memory_equal(l->tasks[i].payload, pay[i],
			    strlen(pay[i]));
		}
	}
	journal_close(j);
	/* Cut the run short behind the journal's back. */
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE tasks SET run = "
	    "substr(run, 1, 30)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	j = topen(t);
	l->n = 0;
	assert_int_equal(journal_load_tasks(j, 3, load_task, l), -1);
	assert_non_null(strstr(journal_error(j), "are damaged"));
	journal_close(j);
	free(l);
}

/*
 * A batch job's driver, tasks and batches come back: tasks in (gen, idx)
 * order with every field (priorities negative too), a second task with the
 * same (gen, idx) refused, batches in gen order with the last put winning.
 */
static void
test_tasks_batches(void **state)
{
	static const struct {
		uint32_t	 gen, idx;
		uint64_t	 key;
		int32_t		 priority;
		uint32_t	 copies;
		const char	*payload;
		size_t		 len;
	}			 tw[] = {	/* in (gen, idx) order */
		{ 0, 0, 0, INT32_MAX, 3, "\0\1\2", 3 },
		{ 0, 1, UINT64_MAX, INT32_MIN, 2, NULL, 0 },
		{ 1, 0, 7, -5, 1, "abc", 3 },
		{ 2, 5, UINT64_C(1) << 63, 0, 0, "x", 1 },
	};
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_job	 job;
	struct journal_task	 tk;
	struct journal_batch	 b;
	struct loaded		*l;
	size_t			 i, n = sizeof tw / sizeof tw[0];

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	memset(&job, 0, sizeof job);
	job.id = 8;
	strcpy(job.driver, "batch");
	strcpy(job.state, "running");
	assert_int_equal(journal_job_put(j, &job), 0);
	for (i = n; i-- > 0;) {
		memset(&tk, 0, sizeof tk);
		tk.job = 8;
		tk.gen = tw[i].gen;
		tk.idx = tw[i].idx;
		tk.key = tw[i].key;
		tk.priority = tw[i].priority;
		tk.copies = tw[i].copies;
		tk.payload = tw[i].payload;
		tk.len = tw[i].len;
		assert_int_equal(journal_task_add(j, &tk), 0);
	}
	tk.gen = 0;
	tk.idx = 1;
	assert_failed(j, journal_task_add(j, &tk), "duplicate task");
	memset(&tk, 0, sizeof tk);
	tk.job = 9;
	assert_int_equal(journal_task_add(j, &tk), 0);

	memset(&b, 0, sizeof b);
	b.job = 8;
	b.gen = 2;
	b.client = 9;
	b.kind = "render";
	assert_int_equal(journal_batch_put(j, &b), 0);
	b.gen = 0;
	b.client = UINT64_MAX;
	b.kind = "synth";
	b.closed = 1;
	assert_int_equal(journal_batch_put(j, &b), 0);
	b.gen = 1;
	b.client = 0;
	b.kind = NULL;
	b.closed = 0;
	assert_int_equal(journal_batch_put(j, &b), 0);
	b.gen = 2;
	b.client = 10;
	b.kind = "render2";
	b.closed = 1;
	assert_int_equal(journal_batch_put(j, &b), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);

	j = topen(t);
	assert_int_equal(journal_load_jobs(j, load_job, l), 0);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->jobs[0].driver, "batch");

	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_tasks(j, 8, load_task, l), 0);
	assert_int_equal(l->n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(l->tasks[i].job, 8);
		assert_int_equal(l->tasks[i].gen, tw[i].gen);
		assert_int_equal(l->tasks[i].idx, tw[i].idx);
		assert_true(l->tasks[i].key == tw[i].key);
		assert_int_equal(l->tasks[i].priority, tw[i].priority);
		assert_int_equal(l->tasks[i].copies, tw[i].copies);
		assert_int_equal(l->tasks[i].len, tw[i].len);
		if (tw[i].len == 0)
			assert_null(l->tasks[i].payload);
		else
			assert_memory_equal(l->tasks[i].payload,
			    tw[i].payload, tw[i].len);
	}
	assert_int_equal(ntasks(j, 9), 1);

	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_batches(j, 8, load_batch, l), 0);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->batches[0].gen, 0);
	assert_true(l->batches[0].client == UINT64_MAX);
	assert_string_equal(l->batches[0].kind, "synth");
	assert_int_equal(l->batches[0].closed, 1);
	assert_int_equal(l->batches[1].gen, 1);
	assert_int_equal(l->batches[1].client, 0);
	assert_string_equal(l->batches[1].kind, "");
	assert_int_equal(l->batches[1].closed, 0);
	assert_int_equal(l->batches[2].gen, 2);
	assert_int_equal(l->batches[2].client, 10);
	assert_string_equal(l->batches[2].kind, "render2");
	assert_int_equal(l->batches[2].closed, 1);
	assert_int_equal(l->batches[2].job, 8);
	assert_int_equal(nbatches(j, 9), 0);
	journal_close(j);
	free(l);
}

/*
 * Schema version 1, as masterd before batch jobs (928b752) created it, with
 * the version.  Its results hold each fitness as the bits of the double in
 * an INTEGER (journal_bind_u64 of the memcpy'd bits).
 */
static const char v1_schema_sql[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY, params BLOB, state TEXT, "
	"    submitted INTEGER, ended INTEGER, gen INTEGER, "
	"    first_task INTEGER, error TEXT, extra BLOB);"
	"CREATE TABLE results (job INTEGER, gen INTEGER, idx INTEGER, "
	"    fitness INTEGER, PRIMARY KEY (job, gen, idx)) WITHOUT ROWID;"
	"CREATE TABLE gens (job INTEGER, gen INTEGER, report BLOB, "
	"    PRIMARY KEY (job, gen)) WITHOUT ROWID;"
	"CREATE TABLE spans (job INTEGER, gen INTEGER, idx INTEGER, "
	"    task INTEGER, worker TEXT, slot INTEGER, start INTEGER, "
	"    \"end\" INTEGER, outcome INTEGER, replica INTEGER);"
	"CREATE INDEX spans_job ON spans (job);"
	"PRAGMA user_version = 1;";

/* The fitness values of the version 1 journal made by mkv1(). */
static const uint64_t v1bits[] = {
	UINT64_C(0x8000000000000000),	/* -0.0 */
	UINT64_C(0x01a56e1fc2f8f359),	/* 1e-300 */
	UINT64_C(0x405edd2f1a9fbe77),	/* 123.456 */
	UINT64_C(0xfff8000000dead01),	/* negative quiet NaN, payload */
	UINT64_C(0x7ff0000000000000),	/* +inf */
};
#define NV1	(sizeof v1bits / sizeof v1bits[0])

/* Run SQL in an open database, failing the test with SQLite's message. */
static void
sqlexec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
}

/*
 * A version 1 journal as masterd of that version left it: a finished job
 * whose results were dropped, a running job with results of two
 * generations (fitness values from v1bits, the last one's NULL if
 * badfit), reports, spans and meta.
 */
static void
mkv1(const char *path, int badfit)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	size_t		 i;
	uint64_t	 u;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlexec(db, "PRAGMA journal_mode = WAL");
	sqlexec(db, v1_schema_sql);
	sqlexec(db, "INSERT INTO meta VALUES ('next_task', 12);"
	    "INSERT INTO jobs VALUES (1, x'0a0102', 'done', 100, 200, 3, 0, "
	    "    '', x'6265737400');"
	    "INSERT INTO jobs VALUES (2, x'0a0304', 'running', 300, 0, 1, 7, "
	    "    '', NULL);"
	    "INSERT INTO gens VALUES (1, 0, x'01'), (1, 1, x'0102'), "
	    "    (2, 0, x'02');"
	    "INSERT INTO spans VALUES (2, 0, 0, 5, 'w1', 0, 1000, 2000, 0, 0),"
	    "    (2, 0, 1, 6, 'w1', 1, 1500, 2500, 0, 1);");
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO results "
	    "(job, gen, idx, fitness) VALUES (2, ?1, ?2, ?3)", -1, &st, NULL),
	    SQLITE_OK);
	for (i = 0; i < NV1; i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)(i / 3));
		sqlite3_bind_int64(st, 2, (sqlite3_int64)(i % 3));
		u = v1bits[i];
		if (badfit && i == NV1 - 1)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, (sqlite3_int64)u);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* An integer a query on a closed journal answers. */
static sqlite3_int64
sqlint(const char *path, const char *sql)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	sqlite3_int64	 v;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	return (v);
}

/* A journal's schema as text: every table's and index's SQL, by name. */
static void
sqlschema(const char *path, char *buf, size_t len)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	size_t		 off = 0;
	int		 n;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT name, sql FROM "
	    "sqlite_master ORDER BY name", -1, &st, NULL), SQLITE_OK);
	buf[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		n = snprintf(buf + off, len - off, "%s: %s\n",
		    sqlite3_column_text(st, 0),
		    sqlite3_column_type(st, 1) == SQLITE_NULL ? "-" :
		    (const char *)sqlite3_column_text(st, 1));
		assert_true(n > 0 && (size_t)n < len - off);
		off += (size_t)n;
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/*
 * The journal at t->path has the same tables, columns and indexes as a
 * new journal's, and has and lacks what the caller names.
 */
static void
assert_fresh_schema(struct tdir *t, const char *has, const char *lacks)
{
	struct journal	*j;
	char		*a, *b, fresh[512];

	a = malloc(4096);
	b = malloc(4096);
	assert_non_null(a);
	assert_non_null(b);
	snprintf(fresh, sizeof fresh, "%s/fresh.db", t->dir);
	j = journal_open(fresh, b, 4096);
	if (j == NULL)
		fail_msg("%s", b);
	journal_close(j);
	sqlschema(t->path, a, 4096);
	sqlschema(fresh, b, 4096);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, has));
	if (lacks != NULL)
		assert_null(strstr(a, lacks));
	free(a);
	free(b);
}

/* Count what a load gives: batches and tasks by gen, results. */
static int
cb_batch(void *arg, const struct journal_batch *b)
{
	uint32_t	*n = arg;

	n[b->gen < 8 ? b->gen : 7] |= 1;
	return (0);
}

static int
cb_task(void *arg, const struct journal_task *tk)
{
	uint32_t	*n = arg;

	n[tk->gen < 8 ? tk->gen : 7] += 2;
	return (0);
}

static size_t	 cb_outlen[8][2];	/* by gen, idx */

static int
cb_result(void *arg, const struct journal_result *r)
{
	if (r->gen < 8 && r->idx < 2)
		cb_outlen[r->gen][r->idx] = r->outlen;
	(*(size_t *)arg)++;
	return (0);
}

static int
cb_job(void *arg, const struct journal_job *jj)
{
	(void)jj;
	(*(size_t *)arg)++;
	return (0);
}

/*
 * A running batch job's batches closed, over and acknowledged go whole
 * (journal_compact()), the others stay, and the results stay, those
 * of the batches dropped without their outputs; the bytes
 * the journal counts for the job (payloads, large outputs, packed
 * results) are the same counted as written and counted from the file
 * after a reopen, drop with the rows, and journal_rows_drop() leaves the
 * job's row alone.
 */
static void
test_compact_bytes(void **state)
{
	static const struct {
		uint32_t	 gen, idx, n;	/* a run of n tasks */
		size_t		 len;		/* each payload */
	}			 runs[] = {
		{ 0, 0, 2, 100 },	/* closed, over, acknowledged */
		{ 1, 0, 1, 10 },	/* closed, its outcome not taken */
		{ 2, 0, 2, 5 },		/* closed, one task not over */
		{ 3, 0, 1, 7 },		/* open, over, acknowledged */
		{ 4, 0, 1, 9 },		/* closed, over, acknowledged */
		{ 4, 1, 1, 9 },
	};
	static const struct {
		uint32_t	 gen, idx;
		uint64_t	 seq;
		size_t		 outlen;
	}			 res[] = {
		{ 0, 0, 1, 0 }, { 0, 1, 2, 100 }, { 1, 0, 11, 3 },
		{ 2, 0, 3, 0 }, { 3, 0, 4, 0 }, { 4, 0, 5, 0 }, { 4, 1, 6, 0 },
	};
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_job	 job;
	struct journal_task	 tk[2];
	struct journal_batch	 b;
	struct journal_result	 r;
	uint8_t			 pay[128], out[128];
	uint32_t		 seen[8];
	uint64_t		 before, after, payloads = 0;
	size_t			 i, k, n, nres;

	memset(pay, 'p', sizeof pay);
	memset(out, 'o', sizeof out);
	j = topen(t);
	assert_int_equal(journal_bytes_all(j), 0);
	memset(&job, 0, sizeof job);
	job.id = 5;
	strcpy(job.driver, "batch");
	strcpy(job.state, "running");
	assert_int_equal(journal_job_put(j, &job), 0);
	for (i = 0; i < 5; i++) {
		memset(&b, 0, sizeof b);
		b.job = 5;
		b.gen = (uint32_t)i;
		b.client = 100 + i;
		b.kind = "k";
		b.closed = i != 3;
		assert_int_equal(journal_batch_put(j, &b), 0);
	}
	for (i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		memset(tk, 0, sizeof tk);
		for (k = 0; k < runs[i].n; k++) {
			tk[k].job = 5;
			tk[k].gen = runs[i].gen;
			tk[k].idx = runs[i].idx + (uint32_t)k;
			tk[k].key = i * 10 + k;
			tk[k].payload = pay;
			tk[k].len = runs[i].len;
			payloads += runs[i].len;
		}
		assert_int_equal(journal_tasks_add(j, tk, runs[i].n), 0);
	}
	assert_int_equal(journal_bytes(j, 5), payloads);
	for (i = 0; i < sizeof res / sizeof res[0]; i++) {
		memset(&r, 0, sizeof r);
		r.job = 5;
		r.gen = res[i].gen;
		r.idx = res[i].idx;
		r.seq = res[i].seq;
		r.output = res[i].outlen > 0 ? out : NULL;
		r.outlen = res[i].outlen;
		assert_int_equal(journal_result_add(j, &r), 0);
	}
	assert_int_equal(journal_commit(j), 0);
	/* The payloads, the large output and the packed rows. */
	before = journal_bytes(j, 5);
	assert_true(before > payloads + 100);
	assert_int_equal(journal_bytes_all(j), before);
	journal_close(j);
	j = topen(t);
	assert_int_equal(journal_bytes(j, 5), before);

	/* Acknowledged up to 10: batches 0 and 4 go, 1, 2 and 3 stay. */
	assert_int_equal(journal_compact(j, 5, 10, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(journal_commit(j), 0);
	/* Their payloads (218 bytes) and the large output (100) went. */
	after = journal_bytes(j, 5);
	assert_true(after <= before - 318);
	assert_true(after >= before - 318 - 8);
	memset(seen, 0, sizeof seen);
	assert_int_equal(journal_load_batches(j, 5, cb_batch, seen), 0);
	assert_int_equal(journal_load_tasks(j, 5, cb_task, seen), 0);
	assert_int_equal(seen[0], 0);
	assert_int_equal(seen[1], 1 + 2);
	assert_int_equal(seen[2], 1 + 4);
	assert_int_equal(seen[3], 1 + 2);
	assert_int_equal(seen[4], 0);
	nres = 0;
	memset(cb_outlen, 0xff, sizeof cb_outlen);
	assert_int_equal(journal_load_results(j, 5, cb_result, &nres), 0);
	assert_int_equal(nres, sizeof res / sizeof res[0]);
	/* The results stay; the dropped batches' without their outputs. */
	assert_int_equal(cb_outlen[0][0], 0);
	assert_int_equal(cb_outlen[0][1], 0);
	assert_int_equal(cb_outlen[1][0], 3);
	assert_int_equal(cb_outlen[4][1], 0);
	/* Nothing more to drop: the same again drops nothing. */
	assert_int_equal(journal_compact(j, 5, 10, &n), 0);
	assert_int_equal(n, 0);
	journal_close(j);
	j = topen(t);
	assert_int_equal(journal_bytes(j, 5), after);

	/* What an ended job kept for its client goes; its row stays. */
	assert_int_equal(journal_rows_drop(j, 5), 0);
	assert_int_equal(journal_commit(j), 0);
	assert_int_equal(journal_bytes(j, 5), 0);
	assert_int_equal(journal_bytes_all(j), 0);
	memset(seen, 0, sizeof seen);
	assert_int_equal(journal_load_batches(j, 5, cb_batch, seen), 0);
	assert_int_equal(journal_load_tasks(j, 5, cb_task, seen), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(seen[i], 0);
	nres = 0;
	assert_int_equal(journal_load_results(j, 5, cb_result, &nres), 0);
	assert_int_equal(nres, 0);
	n = 0;
	assert_int_equal(journal_load_jobs(j, cb_job, &n), 0);
	assert_int_equal(n, 1);
	journal_close(j);
}

/*
 * A version 1 journal is upgraded at open: its jobs load as es jobs with
 * every field intact, each fitness as es_output_encode() of the same
 * double (-0.0, a NaN's payload, 1e-300 bit for bit), status 0, seq 0;
 * reports, spans and meta are unchanged; the version is 2 and the schema
 * is the same as a new journal's.  A second open finds nothing to do.
 */
static void
test_upgrade_v1(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct loaded		*l;
	uint8_t			 enc[ES_OUTPUT_LEN];
	uint64_t		 v;
	size_t			 i;
	int			 pass;

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	mkv1(t->path, 0);
	for (pass = 0; pass < 2; pass++) {
		j = topen(t);
		memset(l, 0, sizeof *l);
		assert_int_equal(journal_load_jobs(j, load_job, l), 0);
		assert_int_equal(l->n, 2);
		assert_string_equal(l->jobs[0].driver, "es");
		assert_string_equal(l->jobs[0].state, "done");
		assert_int_equal(l->jobs[0].paramslen, 3);
		assert_memory_equal(l->jobs[0].params, "\x0a\x01\x02", 3);
		assert_int_equal(l->jobs[0].submitted_ns, 100);
		assert_int_equal(l->jobs[0].ended_ns, 200);
		assert_int_equal(l->jobs[0].gen, 3);
		assert_int_equal(l->jobs[0].extralen, 5);
		assert_memory_equal(l->jobs[0].extra, "best", 5);
		assert_string_equal(l->jobs[1].driver, "es");
		assert_string_equal(l->jobs[1].state, "running");
		assert_int_equal(l->jobs[1].first_task, 7);
		assert_null(l->jobs[1].extra);

		memset(l, 0, sizeof *l);
		assert_int_equal(journal_load_results(j, 2, load_result, l),
		    0);
		assert_int_equal(l->n, NV1);
		for (i = 0; i < NV1; i++) {
			assert_int_equal(l->results[i].gen, i / 3);
			assert_int_equal(l->results[i].idx, i % 3);
			assert_int_equal(l->results[i].status, 0);
			assert_int_equal(l->results[i].seq, 0);
			assert_string_equal(l->results[i].error, "");
			assert_int_equal(l->results[i].outlen, ES_OUTPUT_LEN);
			es_output_encode(enc, dbl(v1bits[i]));
			assert_memory_equal(l->results[i].output, enc,
			    sizeof enc);
			assert_true(bits(fitness(&l->results[i])) ==
			    v1bits[i]);
		}
		assert_int_equal(nresults(j, 1), 0);
		assert_int_equal(ngens(j, 1), 2);
		assert_int_equal(ngens(j, 2), 1);
		memset(l, 0, sizeof *l);
		assert_int_equal(journal_load_spans(j, 2, load_span, l), 0);
		assert_int_equal(l->n, 2);
		assert_int_equal(l->spans[1].task, 6);
		assert_int_equal(l->spans[1].slot, 1);
		assert_int_equal(l->spans[1].end_ns, 2500);
		assert_int_equal(l->spans[1].replica, 1);
		assert_string_equal(l->spans[1].worker, "w1");
		assert_int_equal(ntasks(j, 2), 0);
		assert_int_equal(nbatches(j, 2), 0);
		assert_int_equal(journal_meta_get(j, "next_task", &v), 0);
		assert_int_equal(v, 12);
		assert_stats(j, 2, NV1, 2);
		journal_close(j);
		assert_int_equal(sqlint(t->path, "PRAGMA user_version"), SCHEMA_NOW);
	}

	assert_fresh_schema(t, "tasks: ", "fitness");
	free(l);
}

/*
 * An upgrade that fails (a result without a fitness) is refused with a
 * message naming the file, and leaves the file at version 1, as it was.
 */
static void
test_upgrade_fails(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	char		 err[512];

	mkv1(t->path, 1);
	j = journal_open(t->path, err, sizeof err);
	assert_null(j);
	assert_non_null(strstr(err, t->path));
	assert_non_null(strstr(err, "upgrading from version 1"));
	assert_non_null(strstr(err, "fitness"));
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 1);
	assert_int_equal(sqlint(t->path, "SELECT count(fitness) FROM results"),
	    NV1 - 1);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM sqlite_master "
	    "WHERE name IN ('tasks', 'batches', 'results_v1')"), 0);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM "
	    "pragma_table_info('jobs') WHERE name = 'driver'"), 0);
}

/* What the version 1 fixture's results said before the upgrade. */
struct v1rows {
	size_t		 n, i;
	uint64_t	 job[64];
	uint32_t	 gen[64], idx[64];
	uint64_t	 fit[64];
	size_t		 bad;		/* rows that did not match */
};

/* Load callback: the next fixture result, compared with its version 1 row. */
static int
check_v1row(void *arg, const struct journal_result *r)
{
	struct v1rows	*v = arg;
	uint8_t		 enc[ES_OUTPUT_LEN];
	double		 f;

	while (v->i < v->n && v->job[v->i] != r->job)
		v->i++;
	if (v->i == v->n)
		return (-1);
	es_output_encode(enc, dbl(v->fit[v->i]));
	if (r->gen != v->gen[v->i] || r->idx != v->idx[v->i] ||
	    r->status != 0 || r->seq != 0 || r->error == NULL ||
	    r->error[0] != '\0' || r->outlen != ES_OUTPUT_LEN ||
	    memcmp(r->output, enc, sizeof enc) != 0 ||
	    es_output_decode(r->output, r->outlen, &f) == -1 ||
	    !isfinite(f))
		v->bad++;
	v->i++;
	return (0);
}

/* Copy a file, failing the test if that fails. */
static void
copyfile(const char *from, const char *to)
{
	char	 buf[8192];
	ssize_t	 n;
	int	 in, out;

	if ((in = open(from, O_RDONLY)) == -1)
		fail_msg("%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(out != -1);
	while ((n = read(in, buf, sizeof buf)) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/*
 * The journal that masterd 928b752 (schema version 1) wrote for two
 * (2+4)-ES jobs, seed 7 and 8, dim 3 (tests/data/journal-v1.db; its commit
 * says how it was made): job 1 finished its 3 generations (4 reports, 14
 * spans, results dropped at the end as that masterd did), job 2 was
 * running when masterd stopped (5 reports, 20 results: 2 in generation
 * 0, 4 in each of 1 to 4, 2 so far in 5, and 20 spans).  Upgraded, both
 * load as es jobs and every result is the 8-byte output of the fitness
 * the file held, a finite double.
 */
static void
test_upgrade_fixture(void **state)
{
	static const uint32_t	 pergen[] = { 2, 4, 4, 4, 4, 2 };
	struct tdir		*t = *state;
	struct journal		*j;
	struct loaded		*l;
	struct v1rows		*v;
	sqlite3			*db;
	sqlite3_stmt		*st;
	uint32_t		 n[6] = { 0 };
	size_t			 i;

	copyfile(TEST_DATADIR "/journal-v1.db", t->path);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 1);

	/* The version 1 rows, read before the upgrade. */
	v = calloc(1, sizeof *v);
	assert_non_null(v);
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT job, gen, idx, "
	    "fitness FROM results ORDER BY job, gen, idx", -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		assert_true(v->n < 64);
		assert_int_equal(sqlite3_column_type(st, 3), SQLITE_INTEGER);
		v->job[v->n] = (uint64_t)sqlite3_column_int64(st, 0);
		v->gen[v->n] = (uint32_t)sqlite3_column_int64(st, 1);
		v->idx[v->n] = (uint32_t)sqlite3_column_int64(st, 2);
		v->fit[v->n] = (uint64_t)sqlite3_column_int64(st, 3);
		v->n++;
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	assert_int_equal(v->n, 20);

	l = calloc(1, sizeof *l);
	assert_non_null(l);
	j = topen(t);
	assert_int_equal(journal_load_jobs(j, load_job, l), 0);
	assert_int_equal(l->n, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(l->jobs[i].id, i + 1);
		assert_string_equal(l->jobs[i].driver, "es");
		assert_true(l->jobs[i].paramslen > 0);
		assert_true(l->jobs[i].submitted_ns > 0);
	}
	assert_string_equal(l->jobs[0].state, "done");
	assert_true(l->jobs[0].ended_ns > l->jobs[0].submitted_ns);
	assert_string_equal(l->jobs[1].state, "running");
	assert_int_equal(l->jobs[1].ended_ns, 0);

	assert_int_equal(ngens(j, 1), 4);
	assert_int_equal(nresults(j, 1), 0);
	assert_int_equal(nspans(j, 1), 14);
	assert_int_equal(ngens(j, 2), 5);
	assert_int_equal(nspans(j, 2), 20);
	assert_int_equal(ntasks(j, 2), 0);
	assert_int_equal(nbatches(j, 2), 0);

	assert_int_equal(journal_load_results(j, 2, check_v1row, v), 0);
	assert_int_equal(v->i, v->n);
	assert_int_equal(v->bad, 0);
	for (i = 0; i < v->n; i++) {
		assert_true(v->gen[i] < 6);
		n[v->gen[i]]++;
	}
	assert_memory_equal(n, pergen, sizeof n);

	memset(l, 0, sizeof *l);
	assert_int_equal(journal_load_spans(j, 2, load_span, l), 0);
	for (i = 0; i < l->n; i++) {
		assert_int_equal(l->spans[i].job, 2);
		assert_string_equal(l->spans[i].worker, "w1");
		assert_true(l->spans[i].end_ns >= l->spans[i].start_ns);
	}
	assert_stats(j, 2, 20, 34);
	journal_close(j);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), SCHEMA_NOW);
	free(l);
	free(v);
}

/* Many executions, for test_spans_packed and test_upgrade_v2. */
#define NSP	3000

struct manyspans {
	size_t			 n;
	struct journal_span	 sp[NSP];
	size_t			 seq[NSP];	/* order journaled */
};

/* Load callback: copy any number of spans. */
static int
load_many(void *arg, const struct journal_span *sp)
{
	struct manyspans	*m = arg;

	if (m->n == NSP)
		return (-1);
	m->sp[m->n++] = *sp;
	return (0);
}

/* Version 2's order: start, task (unsigned), then as journaled. */
static int
span_cmp(const void *a, const void *b)
{
	const struct journal_span	*x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return (x->start_ns < y->start_ns ? -1 : 1);
	if (x->task != y->task)
		return (x->task < y->task ? -1 : 1);
	/* Ties: the test numbers them in gen, journaled order. */
	return (x->gen < y->gen ? -1 : x->gen > y->gen);
}

/* Assert two spans are the same, field by field. */
static void
assert_span(const struct journal_span *a, const struct journal_span *b)
{
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->gen, b->gen);
	assert_int_equal(a->idx, b->idx);
	assert_true(a->task == b->task);
	assert_string_equal(a->worker, b->worker);
	assert_int_equal(a->slot, b->slot);
	assert_true(a->start_ns == b->start_ns);
	assert_true(a->end_ns == b->end_ns);
	assert_int_equal(a->outcome, b->outcome);
	assert_int_equal(a->replica, b->replica);
}

/*
 * Executions are packed a commit's at a time (schema version 3): whatever
 * is journaled comes back field for field, in version 2's order (start
 * then task, unsigned, ties as journaled), before the commit (not written
 * yet), after it and after a reopen; 300 distinct workers, names of 63
 * and 64 bytes (64: no NUL, loaded as its first 63 as before), an empty
 * one, starts above INT64_MAX, an end before its start, a withdrawn
 * copy's slot.  Deleting a job takes its packed rows, written or not.
 */
static void
test_spans_packed(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct manyspans	*want, *got;
	struct journal_span	 sp;
	uint64_t		 x = 88172645463325252ULL;
	size_t			 i, k, nw = 0;

	want = calloc(1, sizeof *want);
	got = calloc(1, sizeof *got);
	assert_non_null(want);
	assert_non_null(got);
	j = topen(t);
	for (i = 0; i < NSP; i++) {
		/* xorshift64: reproducible noise */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memset(&sp, 0, sizeof sp);
		sp.job = 1 + i % 2;
		sp.gen = (uint32_t)i;		/* journaled order, for ties */
		sp.idx = (uint32_t)(x % 70000);
		sp.task = i % 7 == 0 ? x : (x % 1000);
		k = (x >> 20) % 300;
		if (k == 0)
			sp.worker[0] = '\0';
		else if (k == 1)
			memset(sp.worker, 'a', sizeof sp.worker);
		else if (k == 2)
			memset(sp.worker, 'b', sizeof sp.worker - 1);
		else
			snprintf(sp.worker, sizeof sp.worker, "worker-%zu.example",
			    k);
		sp.slot = i % 11 == 0 ? UINT32_MAX : (uint32_t)(x % 64);
		/* Few distinct starts: ties on start, some on task too. */
		sp.start_ns = (x >> 40) % 50 + (i % 5 == 0 ?
		    UINT64_C(1) << 63 : 1700000000000000000ULL);
		sp.end_ns = i % 13 == 0 ? sp.start_ns - 5 : sp.start_ns +
		    (x >> 8) % 100000000;
		sp.outcome = (uint32_t)(x % 4);
		sp.replica = (uint32_t)(x % 3);
		assert_int_equal(journal_span_add(j, &sp), 0);
		if (sp.job == 1) {
			want->sp[nw] = sp;
			if (k == 1)	/* 64 bytes: the first 63 come back */
				want->sp[nw].worker[sizeof sp.worker - 1] =
				    '\0';
			nw++;
		}
		if (i == NSP / 2) {
			/* Half written, half pending. */
			assert_int_equal(journal_commit(j), 0);
		}
	}
	want->n = nw;
	qsort(want->sp, want->n, sizeof want->sp[0], span_cmp);
	assert_int_equal(journal_load_spans(j, 1, load_many, got), 0);
	assert_int_equal(got->n, want->n);
	for (i = 0; i < want->n; i++)
		assert_span(&got->sp[i], &want->sp[i]);
	assert_stats(j, 0, 0, NSP);
	assert_int_equal(journal_commit(j), 0);
	got->n = 0;
	assert_int_equal(journal_load_spans(j, 1, load_many, got), 0);
	assert_int_equal(got->n, want->n);
	for (i = 0; i < want->n; i++)
		assert_span(&got->sp[i], &want->sp[i]);
	journal_close(j);

	j = topen(t);
	got->n = 0;
	assert_int_equal(journal_load_spans(j, 1, load_many, got), 0);
	assert_int_equal(got->n, want->n);
	for (i = 0; i < want->n; i++)
		assert_span(&got->sp[i], &want->sp[i]);
	assert_stats(j, 0, 0, NSP);

	/* More for job 2, not written yet: deleted with the rest. */
	memset(&sp, 0, sizeof sp);
	sp.job = 2;
	strcpy(sp.worker, "w1");
	assert_int_equal(journal_span_add(j, &sp), 0);
	assert_int_equal(journal_job_delete(j, 2), 0);
	assert_stats(j, 0, 0, want->n);
	assert_int_equal(journal_commit(j), 0);
	/* A rollback forgets what was not written. */
	sp.job = 1;
	assert_int_equal(journal_span_add(j, &sp), 0);
	assert_int_equal(journal_rollback(j), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);
	j = topen(t);
	assert_stats(j, 0, 0, want->n);
	assert_int_equal(nspans(j, 2), 0);
	journal_close(j);
	free(want);
	free(got);
}

/*
 * The journal masterd 4def72e (schema version 2, a row of spans an
 * execution) wrote for tests/regress/journal-v2.sh (tests/data/
 * journal-v2.db, made by tests/data/journal-v2.sh): upgraded to version
 * 3, each job's executions load exactly as version 2's query ordered
 * them, spans is gone, and the file is the schema of a new journal.
 */
static void
test_upgrade_v2(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct manyspans	*want, *got;
	struct journal_span	*sp;
	sqlite3			*db;
	sqlite3_stmt		*st;
	const unsigned char	*w;
	uint64_t		 job, total = 0;
	size_t			 i;

	copyfile(TEST_DATADIR "/journal-v2.db", t->path);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 2);
	want = calloc(2, sizeof *want);
	got = calloc(1, sizeof *got);
	assert_non_null(want);
	assert_non_null(got);
	/* Version 2's own query, on the version 2 file. */
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT gen, idx, task, "
	    "worker, slot, start, \"end\", outcome, replica FROM spans "
	    "WHERE job = ?1 ORDER BY start < 0, start, task < 0, task", -1,
	    &st, NULL), SQLITE_OK);
	for (job = 1; job <= 2; job++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)job);
		while (sqlite3_step(st) == SQLITE_ROW) {
			assert_true(want[job - 1].n < NSP);
			sp = &want[job - 1].sp[want[job - 1].n++];
			memset(sp, 0, sizeof *sp);
			sp->job = job;
			sp->gen = (uint32_t)sqlite3_column_int64(st, 0);
			sp->idx = (uint32_t)sqlite3_column_int64(st, 1);
			sp->task = (uint64_t)sqlite3_column_int64(st, 2);
			w = sqlite3_column_text(st, 3);
			snprintf(sp->worker, sizeof sp->worker, "%s",
			    w != NULL ? (const char *)w : "");
			sp->slot = (uint32_t)sqlite3_column_int64(st, 4);
			sp->start_ns = (uint64_t)sqlite3_column_int64(st, 5);
			sp->end_ns = (uint64_t)sqlite3_column_int64(st, 6);
			sp->outcome = (uint32_t)sqlite3_column_int64(st, 7);
			sp->replica = (uint32_t)sqlite3_column_int64(st, 8);
		}
		sqlite3_reset(st);
		assert_true(want[job - 1].n >= 40);
		total += want[job - 1].n;
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);

	j = topen(t);
	for (job = 1; job <= 2; job++) {
		got->n = 0;
		assert_int_equal(journal_load_spans(j, job, load_many, got),
		    0);
		assert_int_equal(got->n, want[job - 1].n);
		for (i = 0; i < got->n; i++)
			assert_span(&got->sp[i], &want[job - 1].sp[i]);
	}
	journal_close(j);
	j = topen(t);
	assert_stats(j, 2, 49, total);
	journal_close(j);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), SCHEMA_NOW);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM sqlite_master "
	    "WHERE name = 'spans'"), 0);

	assert_fresh_schema(t, "execs: ", NULL);
	free(want);
	free(got);
}

/*
 * The journal masterd 2bf7fdc (schema version 3, a row of results per
 * result) wrote for tests/regress/journal-v3.sh (tests/data/journal-v3.db,
 * made by tests/data/journal-v3.sh): an es job done, two batch jobs with
 * outputs of 1 to 300 bytes (three in rows of outputs) and failures with
 * their errors, an es job running.  Upgraded to version 4, every job's
 * results load exactly as version 3's query gave them (status, delivery
 * number, error, output byte for byte), the large outputs name their job
 * and go with it, results_v3 is gone, and the file is the schema of a new
 * journal.  A second open finds nothing to do.
 */
static void
test_upgrade_v3(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct wantres		*want;
	struct wantlist		 wl;
	sqlite3			*db;
	sqlite3_stmt		*st;
	char			**errs;
	uint8_t			**outs;
	const void		*o;
	const unsigned char	*e;
	size_t			 n = 0, first[5], k, i;
	uint64_t		 job;

	copyfile(TEST_DATADIR "/journal-v3.db", t->path);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 3);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM results "
	    "WHERE outid NOT NULL"), 3);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM results "
	    "WHERE error <> ''"), 2);
	want = calloc(256, sizeof *want);
	outs = calloc(256, sizeof *outs);
	errs = calloc(256, sizeof *errs);
	assert_non_null(want);
	assert_non_null(outs);
	assert_non_null(errs);
	/* Version 3's own query, on the version 3 file. */
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT r.gen, r.idx, "
	    "r.status, r.seq, r.error, CASE WHEN r.outid IS NULL THEN "
	    "r.output ELSE o.output END FROM results AS r LEFT JOIN outputs "
	    "AS o ON o.id = r.outid WHERE r.job = ?1 ORDER BY r.gen, r.idx",
	    -1, &st, NULL), SQLITE_OK);
	for (job = 1; job <= 4; job++) {
		first[job - 1] = n;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)job);
		while (sqlite3_step(st) == SQLITE_ROW) {
			assert_true(n < 256);
			want[n].gen = (uint32_t)sqlite3_column_int64(st, 0);
			want[n].idx = (uint32_t)sqlite3_column_int64(st, 1);
			want[n].status = (uint32_t)sqlite3_column_int64(st, 2);
			want[n].seq = (uint64_t)sqlite3_column_int64(st, 3);
			e = sqlite3_column_text(st, 4);
			errs[n] = strdup(e != NULL ? (const char *)e : "");
			assert_non_null(errs[n]);
			want[n].error = errs[n];
			o = sqlite3_column_blob(st, 5);
			want[n].outlen = o != NULL ?
			    (size_t)sqlite3_column_bytes(st, 5) : 0;
			if (want[n].outlen > 0) {
				outs[n] = malloc(want[n].outlen);
				assert_non_null(outs[n]);
				memcpy(outs[n], o, want[n].outlen);
			}
			want[n].output = outs[n];
			n++;
		}
		sqlite3_reset(st);
	}
	first[4] = n;
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	/* Job 1 ended (its results went); 2 and 3 are batch jobs, 4 es. */
	assert_int_equal(first[1] - first[0], 0);
	assert_int_equal(first[2] - first[1], 6);
	assert_int_equal(first[3] - first[2], 2);
	assert_true(first[4] - first[3] >= 13);
	assert_int_equal(want[first[1] + 4].outlen, 300);
	assert_true(want[first[2]].status != 0 &&
	    strstr(want[first[2]].error, "synth") != NULL);

	for (k = 0; k < 2; k++) {
		j = topen(t);
		for (job = 1; job <= 4; job++) {
			wl.w = want + first[job - 1];
			wl.n = first[job] - first[job - 1];
			wl.i = 0;
			if (journal_load_results(j, job, check_result,
			    &wl) != 0)
				fail_msg("job %llu: result %zu: %s",
				    (unsigned long long)job, wl.i,
				    journal_error(j));
			assert_int_equal(wl.i, wl.n);
		}
		assert_stats(j, 4, n, sqlint(t->path, "SELECT "
		    "coalesce(sum(n), 0) FROM execs"));
		journal_close(j);
		assert_int_equal(sqlint(t->path, "PRAGMA user_version"), SCHEMA_NOW);
	}
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM sqlite_master "
	    "WHERE name = 'results_v3'"), 0);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM outputs "
	    "WHERE job = 2"), 3);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM outputs"), 3);
	/* Job 2's large outputs go with its results. */
	j = topen(t);
	assert_int_equal(journal_results_drop(j, 2), 0);
	journal_close(j);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM outputs"), 0);

	assert_fresh_schema(t, "outputs_job: ", NULL);
	for (i = 0; i < n; i++) {
		free(outs[i]);
		free(errs[i]);
	}
	free(outs);
	free(errs);
	free(want);
}

/*
 * The rows of table tab (execs or results) in version 4's order (job,
 * id), each as "job id n hex(blob)", one a line, into a string.
 */
static char *
sqlrows(const char *path, const char *tab)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	char		 sql[256], *buf;
	size_t		 off = 0, len = 1 << 20;
	int		 n;

	buf = malloc(len);
	assert_non_null(buf);
	buf[0] = '\0';
	snprintf(sql, sizeof sql, "SELECT job, id, n, hex(%s) FROM %s "
	    "ORDER BY job, id", strcmp(tab, "execs") == 0 ? "spans" : "rows",
	    tab);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		n = snprintf(buf + off, len - off, "%lld %lld %lld %s\n",
		    (long long)sqlite3_column_int64(st, 0),
		    (long long)sqlite3_column_int64(st, 1),
		    (long long)sqlite3_column_int64(st, 2),
		    (const char *)sqlite3_column_text(st, 3));
		assert_true(n > 0 && (size_t)n < len - off);
		off += (size_t)n;
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	return (buf);
}

/* What tally_result() and tally_span() saw: how many, in order. */
struct tally {
	uint64_t	 nres;
	uint64_t	 nspan;
	uint64_t	 last;		/* (gen, idx) of the last result */
};

static int
tally_result(void *arg, const struct journal_result *r)
{
	struct tally	*c = arg;
	uint64_t	 at = (uint64_t)r->gen << 32 | r->idx;

	if (c->nres > 0 && at <= c->last)
		fail_msg("result (%u, %u) out of order", r->gen, r->idx);
	c->last = at;
	c->nres++;
	return (0);
}

static int
tally_span(void *arg, const struct journal_span *sp)
{
	struct tally	*c = arg;

	(void)sp;
	c->nspan++;
	return (0);
}

/*
 * A version 4 journal written by that masterd (tests/data/journal-v4.db,
 * made by tests/data/journal-v4.sh: the same jobs as journal-v3.db's) is
 * upgraded at open to version 5: every row of execs and results is the
 * same, under its key job x 2^32 + id; each job loads all its results
 * and executions, in order; a job's rows go with it; the schema is a new
 * journal's.  A row of version 4 whose job is out of version 5's range
 * (2^31) makes the open fail, saying why, and leaves the file as it was.
 */
static void
test_upgrade_v4(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct tally		 c;
	sqlite3			*db;
	char			*execs, *results, *a, err[512], sql[128];
	uint64_t		 job, nres, nexec;
	size_t			 k;

	copyfile(TEST_DATADIR "/journal-v4.db", t->path);
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 4);
	execs = sqlrows(t->path, "execs");
	results = sqlrows(t->path, "results");
	/* Job 1 ended (its results went); 2 and 3 batch jobs, 4 es. */
	assert_int_equal(sqlint(t->path, "SELECT sum(n) FROM results "
	    "WHERE job = 2"), 6);
	assert_int_equal(sqlint(t->path, "SELECT sum(n) FROM results "
	    "WHERE job = 3"), 2);
	assert_true(sqlint(t->path, "SELECT sum(n) FROM results "
	    "WHERE job = 4") >= 13);
	assert_true(sqlint(t->path, "SELECT count(*) FROM execs "
	    "WHERE job = 1") > 0);

	for (k = 0; k < 2; k++) {
		j = topen(t);
		nres = nexec = 0;
		for (job = 1; job <= 4; job++) {
			memset(&c, 0, sizeof c);
			assert_int_equal(journal_load_results(j, job,
			    tally_result, &c), 0);
			assert_int_equal(journal_load_spans(j, job,
			    tally_span, &c), 0);
			snprintf(sql, sizeof sql, "SELECT coalesce(sum(n), 0) "
			    "FROM results WHERE job = %llu",
			    (unsigned long long)job);
			assert_int_equal(c.nres, sqlint(t->path, sql));
			snprintf(sql, sizeof sql, "SELECT coalesce(sum(n), 0) "
			    "FROM execs WHERE job = %llu",
			    (unsigned long long)job);
			assert_int_equal(c.nspan, sqlint(t->path, sql));
			nres += c.nres;
			nexec += c.nspan;
		}
		assert_true(nexec > 0);
		assert_stats(j, 4, nres, nexec);
		journal_close(j);
		assert_int_equal(sqlint(t->path, "PRAGMA user_version"),
		    SCHEMA_NOW);
	}
	a = sqlrows(t->path, "execs");
	assert_string_equal(a, execs);
	free(a);
	a = sqlrows(t->path, "results");
	assert_string_equal(a, results);
	free(a);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM execs WHERE "
	    "key <> job * 4294967296 + id"), 0);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM results "
	    "WHERE key <> job * 4294967296 + id"), 0);
	assert_fresh_schema(t, "execs: CREATE TABLE execs (key INTEGER "
	    "PRIMARY KEY", "execs_v4");
	/* A job's rows go with it, and no other job's. */
	j = topen(t);
	assert_int_equal(journal_results_drop(j, 2), 0);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM results "
	    "WHERE job = 2"), 0);
	assert_int_equal(sqlint(t->path, "SELECT sum(n) FROM results "
	    "WHERE job = 3"), 2);

	/* Out of range: the open fails and the file stays version 4. */
	copyfile(TEST_DATADIR "/journal-v4.db", t->path);
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	sqlexec(db, "UPDATE execs SET job = 2147483648 WHERE job = 3");
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	assert_null(journal_open(t->path, err, sizeof err));
	assert_non_null(strstr(err, "upgrading from version 4"));
	assert_non_null(strstr(err, "datatype mismatch"));
	assert_int_equal(sqlint(t->path, "PRAGMA user_version"), 4);
	a = sqlrows(t->path, "results");
	assert_string_equal(a, results);
	free(a);
	free(execs);
	free(results);
}

/* Load callback: take any result. */
static int
any_result(void *arg, const struct journal_result *r)
{
	(void)arg;
	(void)r;
	return (0);
}

/* One job's results for test_spill, written in reverse (gen, idx) order. */
static void
spill_job(struct journal *j, uint64_t id, const char *state,
    uint64_t ended, struct wantres *want, size_t n)
{
	struct journal_job	 job;
	struct journal_result	 r;
	size_t			 i;

	memset(&job, 0, sizeof job);
	job.id = id;
	snprintf(job.driver, sizeof job.driver, "batch");
	snprintf(job.state, sizeof job.state, "%s", state);
	job.submitted_ns = 1;
	job.ended_ns = ended;
	assert_int_equal(journal_job_put(j, &job), 0);
	for (i = n; i-- > 0;) {
		memset(&r, 0, sizeof r);
		r.job = id;
		r.gen = want[i].gen;
		r.idx = want[i].idx;
		r.status = want[i].status;
		r.seq = want[i].seq;
		r.output = want[i].output;
		r.outlen = want[i].outlen;
		r.error = want[i].error;
		if (journal_result_add(j, &r) != 0)
			fail_msg("%s", journal_error(j));
	}
}

/* Every result of job id loads as wanted, outputs compared byte for byte. */
static void
spill_check(struct journal *j, uint64_t id, const struct wantres *want,
    size_t n)
{
	struct wantlist	 wl = { want, n, 0 };

	if (journal_load_results(j, id, check_result, &wl) != 0)
		fail_msg("job %llu: result %zu: %s", (unsigned long long)id,
		    wl.i, journal_error(j));
	assert_int_equal(wl.i, n);
}

/*
 * The rows of outputs (the large outputs) on a closed journal: each names
 * its job, and only outputs over JOURNAL_INLINE_MAX (64 bytes) are there.
 */
static sqlite3_int64
spill_rows(const char *path)
{
	assert_int_equal(sqlint(path, "SELECT count(*) FROM outputs WHERE "
	    "job IS NULL OR length(output) <= 64"), 0);
	return (sqlint(path, "SELECT count(*) FROM outputs"));
}

/*
 * Small outputs (in their results row) and large ones (in outputs) mixed
 * in four jobs come back byte for byte in (gen, idx) order, pending and
 * after a reopen; 8-byte outputs stay inline and 1 KiB ones do not.  A
 * second result for a task, with a large output, loads as nothing: the
 * first counts (its output row goes with its job).  results_drop,
 * job_delete and prune remove the large outputs with their results, and
 * nothing of the other jobs.  A result whose output row is
 * gone fails the load instead of loading as empty.
 */
static void
test_spill(void **state)
{
	static const size_t	 sizes[] = {
		0, 1, 8, 63, 64, 65, 200, 1000, 1024, 4096, 1 << 20
	};
#define NSPILL	(sizeof sizes / sizeof sizes[0])
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_result	 r;
	struct wantres		 want[4][NSPILL];
	uint8_t			*big;
	size_t			 i, k, n, bigsz = (1 << 20) + 64;
	sqlite3_int64		 per;

	big = malloc(bigsz);
	assert_non_null(big);
	for (i = 0; i < bigsz; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 9));
	for (k = 0; k < 4; k++)
		for (i = 0; i < NSPILL; i++)
			want[k][i] = (struct wantres){ (uint32_t)(i / 4),
			    (uint32_t)(i % 4), i == 3 ? 5 : 0, i + 1,
			    sizes[i] == 0 ? NULL : big + k * 7 + i,
			    sizes[i], i == 3 ? "failed" : "" };

	/* 1 dropped, 2 deleted, 3 pruned, 4 kept. */
	j = topen(t);
	spill_job(j, 1, "done", 100, want[0], NSPILL);
	spill_job(j, 2, "running", 0, want[1], NSPILL);
	spill_job(j, 3, "failed", 100, want[2], NSPILL);
	spill_job(j, 4, "running", 0, want[3], NSPILL);
	for (k = 0; k < 4; k++)
		spill_check(j, k + 1, want[k], NSPILL);
	assert_int_equal(journal_commit(j), 0);

	memset(&r, 0, sizeof r);
	r.job = 4;
	r.gen = want[3][NSPILL - 1].gen;
	r.idx = want[3][NSPILL - 1].idx;
	r.output = big;
	r.outlen = 4096;
	assert_int_equal(journal_result_add(j, &r), 0);
	spill_check(j, 4, want[3], NSPILL);
	journal_close(j);

	/* 65, 200, 1000, 1024, 4096 and 1 MiB: six a job, and the second. */
	per = 6;
	assert_int_equal(spill_rows(t->path), 4 * per + 1);
	for (k = 1; k <= 3; k++) {
		char	 q[96];

		snprintf(q, sizeof q, "SELECT count(*) FROM outputs WHERE "
		    "job = %zu", k);
		assert_int_equal(sqlint(t->path, q), per);
	}
	assert_int_equal(sqlint(t->path, "SELECT count(*) FROM outputs "
	    "WHERE job = 4"), per + 1);

	j = topen(t);
	for (k = 0; k < 4; k++)
		spill_check(j, k + 1, want[k], NSPILL);
	assert_int_equal(journal_results_drop(j, 1), 0);
	journal_close(j);
	assert_int_equal(spill_rows(t->path), 3 * per + 1);

	j = topen(t);
	assert_int_equal(nresults(j, 1), 0);
	assert_int_equal(journal_job_delete(j, 2), 0);
	journal_close(j);
	assert_int_equal(spill_rows(t->path), 2 * per + 1);

	j = topen(t);
	assert_int_equal(nresults(j, 2), 0);
	assert_int_equal(journal_prune(j, 200, &n), 0);
	assert_int_equal(n, 2);
	journal_close(j);
	assert_int_equal(spill_rows(t->path), per + 1);

	j = topen(t);
	assert_int_equal(nresults(j, 3), 0);
	spill_check(j, 4, want[3], NSPILL);
	/* The second result is journaled too; it just never loads. */
	assert_stats(j, 1, NSPILL + 1, 0);
	journal_close(j);

	/* An output lost behind the journal's back: (4, 2, 2)'s 1 MiB. */
	{
		sqlite3	*db;

		assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
		sqlexec(db, "DELETE FROM outputs WHERE job = 4 AND "
		    "length(output) = 1048576");
		assert_int_equal(sqlite3_close(db), SQLITE_OK);
	}
	j = topen(t);
	assert_failed(j, journal_load_results(j, 4, any_result, NULL),
	    "the output of (job 4, gen 2, idx 2) is missing");
	journal_close(j);
	free(big);
#undef NSPILL
}

/* The file at path, read whole (malloc'd); its length in *len. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	struct stat	 sb;
	uint8_t		*buf;
	int		 fd;

	fd = open(path, O_RDONLY);
	assert_true(fd != -1);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return (buf);
}

/* Write len bytes of buf as the file at path, no WAL beside it. */
static void
spew(const char *path, const uint8_t *buf, size_t len)
{
	char	 wal[256];
	int	 fd;

	snprintf(wal, sizeof wal, "%s-wal", path);
	unlink(wal);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

#define NDAMAGE		3000

/*
 * Open a damaged copy: either journal_open refuses it with a message
 * naming the file, or SQLite finds it sound and every job and result
 * comes back as written -- never fewer, never different (issue 24, "Bad
 * input": a journal truncated mid-page, a corrupted page).
 */
static int
open_damaged(const struct tdir *t, const char *what)
{
	struct journal	*j;
	struct loaded	*l;
	char		 err[1024];
	size_t		 i;

	if ((j = journal_open(t->path, err, sizeof err)) == NULL) {
		if (strstr(err, t->path) == NULL)
			fail_msg("%s: the error does not name the file: %s",
			    what, err);
		return (0);
	}
	l = calloc(1, sizeof *l);
	assert_non_null(l);
	if (journal_load_jobs(j, load_job, l) != 0)
		fail_msg("%s: opened, then: %s", what, journal_error(j));
	assert_int_equal(l->n, 4);
	free(l);
	if (nresults(j, 1) != NDAMAGE)
		fail_msg("%s: opened, but %zu results of %d", what,
		    nresults(j, 1), NDAMAGE);
	for (i = 0; i < 3; i++) {
		l = calloc(1, sizeof *l);
		assert_non_null(l);
		assert_int_equal(journal_load_results(j, 1 + i * 1000, load_result,
		    l), 0);
		free(l);
	}
	journal_close(j);
	return (1);
}

/* Result callback: check the fitness is the one written for (gen, idx). */
static int
check_damaged_result(void *arg, const struct journal_result *r)
{
	size_t	*n = arg;

	if (r->outlen != ES_OUTPUT_LEN ||
	    fitness(r) != (double)(r->gen * 100 + r->idx) + 0.25)
		fail_msg("result (%u, %u) differs", r->gen, r->idx);
	(*n)++;
	return (0);
}

/*
 * A journal truncated in the middle of each of its pages, and one with
 * each page but the first overwritten: refused with a message naming the
 * file, or, if SQLite finds it sound, loaded whole and identical.  Never a
 * crash (the test would die), never fewer or other results.  Most must
 * be refused: the damage hits pages the journal uses.
 */
static void
test_damaged(void **state)
{
	struct tdir	*t = *state;
	struct journal	*j;
	uint8_t		*orig, *copy;
	size_t		 len, pages, p, refused = 0, sound = 0, n;
	char		 what[64];
	uint32_t	 i;

	j = topen(t);
	add_job(j, 1000, "done", 5);
	add_job(j, 2000, "done", 5);
	add_job(j, 3000, "running", 0);
	add_job(j, 1, "running", 0);
	assert_int_equal(journal_results_drop(j, 1), 0);
	for (i = 0; i < NDAMAGE; i++)
		add_result(j, 1, i / 100, i % 100,
		    (double)((i / 100) * 100 + i % 100) + 0.25);
	assert_int_equal(journal_commit(j), 0);
	journal_close(j);
	orig = slurp(t->path, &len);
	assert_int_equal(len % 4096, 0);
	pages = len / 4096;
	assert_true(pages >= 8);
	copy = malloc(len);
	assert_non_null(copy);

	for (p = 0; p < pages; p++) {
		spew(t->path, orig, p * 4096 + 2048);
		snprintf(what, sizeof what, "truncated in page %zu", p + 1);
		if (open_damaged(t, what))
			sound++;
		else
			refused++;
	}
	for (p = 1; p < pages; p++) {
		memcpy(copy, orig, len);
		memset(copy + p * 4096, 0xa5, 4096);
		spew(t->path, copy, len);
		snprintf(what, sizeof what, "page %zu overwritten", p + 1);
		if (open_damaged(t, what))
			sound++;
		else
			refused++;
	}
	/* Half a page of zeros in the middle of a page of results. */
	memcpy(copy, orig, len);
	memset(copy + (pages - 2) * 4096 + 1024, 0, 2048);
	spew(t->path, copy, len);
	if (open_damaged(t, "half a page zeroed"))
		sound++;
	else
		refused++;
	assert_true(refused >= pages);

	/* The undamaged file still loads, every fitness as written. */
	spew(t->path, orig, len);
	j = topen(t);
	n = 0;
	assert_int_equal(journal_load_results(j, 1, check_damaged_result, &n),
	    0);
	assert_int_equal(n, NDAMAGE);
	journal_close(j);
	free(copy);
	free(orig);
}

/*
 * A write that fails (here: over RLIMIT_FSIZE, in a child) leaves the
 * journal refusing every write and commit, with a message naming the
 * file, until journal_rollback(); a probe fails while the file cannot
 * grow and passes once it can; what was committed before stays, what was
 * pending is gone, and writes after the rollback are kept.
 */
static void
test_write_fails(void **state)
{
	struct tdir		*t = *state;
	struct journal		*j;
	struct journal_result	 r;
	struct rlimit		 rl, old;
	struct stat		 sb;
	char			 wal[256];
	uint8_t			 big[4000];
	pid_t			 pid;
	int			 status, failed = 0;
	uint32_t		 i;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		j = topen(t);
		add_result(j, 1, 0, 0, 1.0);
		if (journal_commit(j) != 0)
			_exit(10);
		snprintf(wal, sizeof wal, "%s-wal", t->path);
		if (stat(wal, &sb) == -1)
			_exit(11);
		getrlimit(RLIMIT_FSIZE, &old);
		rl = old;
		rl.rlim_cur = (rlim_t)sb.st_size;
		setrlimit(RLIMIT_FSIZE, &rl);
		memset(big, 0x5a, sizeof big);
		memset(&r, 0, sizeof r);
		r.job = 2;
		r.output = big;
		r.outlen = sizeof big;
		for (i = 0; i < 1000 && !failed; i++) {
			r.idx = i;
			if (journal_result_add(j, &r) == -1 ||
			    (i % 10 == 9 && journal_commit(j) == -1))
				failed = 1;
		}
		if (!failed || journal_failed(j) == 0 ||
		    journal_failures(j) == 0)
			_exit(12);
		if (strstr(journal_error(j), t->path) == NULL)
			_exit(13);
		/* Refused now, even a small write, even a commit. */
		r.job = 3;
		r.idx = 0;
		r.output = big;
		r.outlen = 8;
		if (journal_result_add(j, &r) != -1 ||
		    strstr(journal_error(j), "not written") == NULL ||
		    journal_commit(j) != -1 || journal_probe(j) != -1)
			_exit(14);
		if (journal_rollback(j) != 0 || journal_failed(j) != 0)
			_exit(15);
		if (journal_probe(j) == 0)
			_exit(16);	/* the file still cannot grow */
		if (journal_rollback(j) != 0)
			_exit(17);
		setrlimit(RLIMIT_FSIZE, &old);
		if (journal_probe(j) != 0)
			_exit(18);
		r.job = 4;
		if (journal_result_add(j, &r) != 0 || journal_commit(j) != 0)
			_exit(19);
		journal_close(j);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	j = topen(t);
	assert_int_equal(nresults(j, 1), 1);
	assert_int_equal(nresults(j, 3), 0);
	assert_int_equal(nresults(j, 4), 1);
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
		cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
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
		cmocka_unit_test_setup_teardown(test_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_runs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tasks_batches, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_compact_bytes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v1, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_fails, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_fixture, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_spill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spans_packed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v2, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v3, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_v4, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_fails, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
