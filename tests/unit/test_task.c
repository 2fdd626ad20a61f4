/*
 * Unit tests for the task kinds: Ridge values, the ridge-lu and synth runs,
 * parameter checks, cancellation from another thread and the half-way
 * progress report.  No timing is asserted.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cblas.h>
#include <lapacke.h>

#include "es/es.h"
#include "task/task.h"

struct progress_count {
	int	 calls;
	int	 last;
};

struct canceller {
	atomic_int	 flag;
	long		 delay_ms;
};

static void	 count_progress(void *, int);
static void	*cancel_later(void *);
static int	 run_ridge_lu(const double *, size_t, uint32_t,
		    struct task_result *, struct progress_count *);
static int	 run_cancelled(const struct task_params *, long);

/* Count half-way reports and remember the last value. */
static void
count_progress(void *arg, int v)
{
	struct progress_count	*pc = arg;

	pc->calls++;
	pc->last = v;
}

/* Thread body: raise the cancel flag after delay_ms. */
static void *
cancel_later(void *arg)
{
	struct canceller	*c = arg;
	struct timespec		 ts;

	ts.tv_sec = c->delay_ms / 1000;
	ts.tv_nsec = (c->delay_ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	atomic_store(&c->flag, 1);
	return (NULL);
}

/* Run ridge-lu at reference speed, counting progress reports. */
static int
run_ridge_lu(const double *x, size_t nx, uint32_t lu, struct task_result *res,
    struct progress_count *pc)
{
	struct task_params	 p = { 0 };
	struct task_ctx		 ctx = { NULL, 1.0, count_progress, pc };

	p.kind = "ridge-lu";
	p.x = x;
	p.nx = nx;
	p.lu = lu;
	return (task_run(&p, &ctx, res));
}

/* Run a task while another thread raises cancel after delay_ms. */
static int
run_cancelled(const struct task_params *p, long delay_ms)
{
	struct canceller	 c;
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL };
	struct task_result	 res;
	pthread_t		 t;
	int			 st;

	atomic_init(&c.flag, 0);
	c.delay_ms = delay_ms;
	ctx.cancel = &c.flag;
	assert_int_equal(pthread_create(&t, NULL, cancel_later, &c), 0);
	st = task_run(p, &ctx, &res);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (st == TASK_CANCELLED)
		assert_string_equal(res.error, "cancelled");
	return (st);
}

/* Ridge on hand-computed vectors. */
static void
test_ridge_values(void **state)
{
	static const double	 x123[] = { 1, 2, 3 };
	static const double	 xalt[] = { 1, -1, 1, -1 };
	static const double	 xneg[] = { -2.5 };
	double			 zeros[30], ones[30];
	const struct {
		const double	*x;
		size_t		 n;
		double		 want;
	} cases[] = {
		{ zeros,	30,	0.0 },
		{ ones,		30,	9455.0 },	/* sum of i^2, 1..30 */
		{ x123,		3,	46.0 },		/* 1 + 9 + 36 */
		{ xalt,		4,	2.0 },		/* 1 + 0 + 1 + 0 */
		{ xneg,		1,	6.25 },
		{ x123,		0,	0.0 },
	};
	size_t			 i;

	(void)state;
	for (i = 0; i < 30; i++) {
		zeros[i] = 0.0;
		ones[i] = 1.0;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(task_ridge(cases[i].x, cases[i].n) ==
		    cases[i].want);
}

/* The registry has both kinds with distinct mask bits; lookups work. */
static void
test_registry(void **state)
{
	const struct task_kind	*list, *k;
	size_t			 n, i;
	unsigned		 mask = 0;

	(void)state;
	list = task_kind_list(&n);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_true(list[i].index < 32);
		assert_false(mask & (1u << list[i].index));
		mask |= 1u << list[i].index;
		assert_ptr_equal(task_kind_lookup(list[i].name), &list[i]);
	}
	assert_non_null(k = task_kind_lookup("ridge-lu"));
	assert_int_equal(k->index, 0);
	assert_non_null(k = task_kind_lookup("synth"));
	assert_int_equal(k->index, 1);
	assert_null(task_kind_lookup("ridge"));
	assert_null(task_kind_lookup(""));
	assert_null(task_kind_lookup(NULL));
}

/* Every status has its own name. */
static void
test_status_names(void **state)
{
	static const struct {
		int		 st;
		const char	*name;
	} cases[] = {
		{ TASK_OK,		"ok" },
		{ TASK_FAILED,		"failed" },
		{ TASK_CANCELLED,	"cancelled" },
		{ TASK_UNKNOWN_KIND,	"unknown-kind" },
		{ TASK_BAD_PARAMS,	"bad-params" },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(task_status_name(cases[i].st),
		    cases[i].name);
	assert_non_null(task_status_name(99));
}

/*
 * ridge-lu gives Ridge as its fitness whatever lu is, reports half-way
 * exactly once, and its checksum is reproducible and nonzero when lu > 0.
 */
static void
test_ridge_lu_fitness(void **state)
{
	static const uint32_t	 lus[] = { 0, 1, 63, 64, 65, 200 };
	struct task_result	 r1, r2;
	struct progress_count	 pc;
	double			 x[30];
	size_t			 i;

	(void)state;
	for (i = 0; i < 30; i++)
		x[i] = (double)i * 0.37 - 4.1;
	for (i = 0; i < sizeof(lus) / sizeof(lus[0]); i++) {
		memset(&pc, 0, sizeof(pc));
		assert_int_equal(run_ridge_lu(x, 30, lus[i], &r1, &pc),
		    TASK_OK);
		assert_int_equal(r1.status, TASK_OK);
		assert_true(r1.fitness == task_ridge(x, 30));
		assert_int_equal(pc.calls, 1);
		assert_int_equal(pc.last, 2);

		memset(&pc, 0, sizeof(pc));
		assert_int_equal(run_ridge_lu(x, 30, lus[i], &r2, &pc),
		    TASK_OK);
		assert_memory_equal(&r1.fitness, &r2.fitness, sizeof(double));
		assert_memory_equal(&r1.checksum, &r2.checksum,
		    sizeof(double));
		if (lus[i] > 0)
			assert_true(r1.checksum != 0.0);
	}
}

/*
 * The blocked factorisation equals LAPACK's own dgetrf on the same matrix
 * (built here as ridge_lu.c builds it: diagonally dominant, rows reversed),
 * checked through the checksum.
 */
static void
test_ridge_lu_matches_lapack(void **state)
{
	static const int	 ns[] = { 1, 2, 64, 65, 150 };
	struct task_result	 res;
	struct progress_count	 pc;
	lapack_int		*ipiv;
	double			*a, x = 1.0, want;
	int			 n, i, j, r, t;

	(void)state;
	for (t = 0; t < (int)(sizeof(ns) / sizeof(ns[0])); t++) {
		n = ns[t];
		a = malloc((size_t)n * n * sizeof(*a));
		ipiv = malloc((size_t)n * sizeof(*ipiv));
		assert_non_null(a);
		assert_non_null(ipiv);
		for (j = 0; j < n; j++)
			for (i = 0; i < n; i++) {
				r = n - 1 - i;
				a[i + (size_t)j * n] = 1.0 / (1.0 + abs(r - j)) +
				    (r == j ? (double)n : 0.0);
			}
		assert_int_equal(LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, a, n,
		    ipiv), 0);
		want = 0.0;
		for (j = 0; j < n; j++)
			want += a[j + (size_t)j * n];
		for (i = 0; i < n * n; i++)
			want += a[i];
		free(a);
		free(ipiv);

		memset(&pc, 0, sizeof(pc));
		assert_int_equal(run_ridge_lu(&x, 1, (uint32_t)n, &res, &pc),
		    TASK_OK);
		assert_true(fabs(res.checksum - want) <=
		    1e-10 * fabs(want));
	}
}

/* An unknown kind is refused and named in the error. */
static void
test_unknown_kind(void **state)
{
	struct task_params	 p = { 0 };
	struct task_result	 res;
	char			 longname[400];

	(void)state;
	p.kind = "quantum-annealing";
	assert_int_equal(task_run(&p, NULL, &res), TASK_UNKNOWN_KIND);
	assert_int_equal(res.status, TASK_UNKNOWN_KIND);
	assert_non_null(strstr(res.error, "'quantum-annealing'"));

	/* A name longer than the error buffer is truncated, terminated. */
	memset(longname, 'k', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	p.kind = longname;
	assert_int_equal(task_run(&p, NULL, &res), TASK_UNKNOWN_KIND);
	assert_int_equal(strlen(res.error), sizeof(res.error) - 1);

	p.kind = NULL;
	assert_int_equal(task_run(&p, NULL, &res), TASK_UNKNOWN_KIND);
}

/* Out-of-range parameters are refused with a message, before any work. */
static void
test_bad_params(void **state)
{
	static const double	 x[3] = { 1, 2, 3 };
	const struct {
		const char	*kind;
		const double	*x;
		size_t		 nx;
		uint32_t	 lu;
		double		 work_ms;
		const char	*field;
	} cases[] = {
		{ "ridge-lu",	x,	0,		0,	0,	"nx" },
		{ "ridge-lu",	x,	ES_MAX_DIM + 1,	0,	0,	"nx" },
		{ "ridge-lu",	NULL,	3,		0,	0,	"x is missing" },
		{ "ridge-lu",	x,	3,		999999,	0,	"lu" },
		{ "ridge-lu",	x,	3,		20001,	0,	"lu" },
		{ "synth",	NULL,	0,		0,	-1,	"work_ms" },
		{ "synth",	NULL,	0,		0,	NAN,	"work_ms" },
		{ "synth",	NULL,	0,		0,	INFINITY, "work_ms" },
		{ "synth",	NULL,	0,		0,	3600001, "work_ms" },
	};
	struct task_params	 p;
	struct task_result	 res;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.kind = cases[i].kind;
		p.x = cases[i].x;
		p.nx = cases[i].nx;
		p.lu = cases[i].lu;
		p.work_ms = cases[i].work_ms;
		assert_int_equal(task_run(&p, NULL, &res), TASK_BAD_PARAMS);
		assert_int_equal(res.status, TASK_BAD_PARAMS);
		assert_non_null(strstr(res.error, cases[i].field));
	}
}

/* A raised cancel flag stops a long LU decomposition. */
static void
test_ridge_lu_cancel(void **state)
{
	struct task_params	 p = { 0 };
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL };
	struct task_result	 res;
	atomic_int		 flag;
	double			 x[30] = { 0 };

	(void)state;
	p.kind = "ridge-lu";
	p.x = x;
	p.nx = 30;
	p.lu = 3000;
	assert_int_equal(run_cancelled(&p, 20), TASK_CANCELLED);

	/* Already raised: cancelled before any work. */
	atomic_init(&flag, 1);
	ctx.cancel = &flag;
	assert_int_equal(task_run(&p, &ctx, &res), TASK_CANCELLED);
}

/* synth returns its reference length as fitness and reports once. */
static void
test_synth(void **state)
{
	static const struct {
		double	 work_ms;
		int	 spin;
		double	 speed;
	} cases[] = {
		{ 5,	0,	1.0 },
		{ 5,	1,	1.0 },
		{ 0,	0,	1.0 },
		{ 4,	0,	0.0 },	/* speed <= 0 means 1 */
		{ 6,	0,	3.0 },
	};
	struct task_params	 p;
	struct task_ctx		 ctx;
	struct task_result	 res;
	struct progress_count	 pc;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&p, 0, sizeof(p));
		memset(&pc, 0, sizeof(pc));
		p.kind = "synth";
		p.work_ms = cases[i].work_ms;
		p.spin = cases[i].spin;
		ctx.cancel = NULL;
		ctx.speed = cases[i].speed;
		ctx.progress = count_progress;
		ctx.arg = &pc;
		assert_int_equal(task_run(&p, &ctx, &res), TASK_OK);
		assert_true(res.fitness == cases[i].work_ms);
		assert_true(res.checksum == 0.0);
		assert_int_equal(pc.calls, 1);
		assert_int_equal(pc.last, 2);
	}
}

/*
 * Carrying an individual, synth is an ES evaluation under a fake load:
 * its fitness is Ridge of x, exactly as ridge-lu computes it.
 */
static void
test_synth_ridge(void **state)
{
	static const double	 x[3] = { 1, 2, 3 };
	struct task_params	 p;
	struct task_ctx		 ctx;
	struct task_result	 res, ref;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&ctx, 0, sizeof(ctx));
	p.kind = "ridge-lu";
	p.x = x;
	p.nx = 3;
	assert_int_equal(task_run(&p, &ctx, &ref), TASK_OK);
	p.kind = "synth";
	p.work_ms = 2;
	assert_int_equal(task_run(&p, &ctx, &res), TASK_OK);
	assert_true(res.fitness == 46.0);
	assert_memory_equal(&res.fitness, &ref.fitness, sizeof(double));
}

/* A raised cancel flag stops synth, sleeping or spinning. */
static void
test_synth_cancel(void **state)
{
	struct task_params	 p = { 0 };
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL };
	struct task_result	 res;
	atomic_int		 flag;

	(void)state;
	p.kind = "synth";
	p.work_ms = 60000;
	assert_int_equal(run_cancelled(&p, 20), TASK_CANCELLED);
	p.spin = 1;
	assert_int_equal(run_cancelled(&p, 20), TASK_CANCELLED);

	atomic_init(&flag, 1);
	ctx.cancel = &flag;
	assert_int_equal(task_run(&p, &ctx, &res), TASK_CANCELLED);
	assert_int_equal(res.status, TASK_CANCELLED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ridge_values),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_ridge_lu_fitness),
		cmocka_unit_test(test_ridge_lu_matches_lapack),
		cmocka_unit_test(test_unknown_kind),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_ridge_lu_cancel),
		cmocka_unit_test(test_synth),
		cmocka_unit_test(test_synth_ridge),
		cmocka_unit_test(test_synth_cancel),
	};

	/* As the worker does: one BLAS thread per execution thread. */
	openblas_set_num_threads(1);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
