/*
 * Unit tests for the (mu+lambda)-ES: bit-identical results whatever the
 * evaluation order, batch shapes, selection rules, parameter checks, and
 * that it really optimises Ridge.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "es/es.h"

enum order {
	ORDER_FORWARD,
	ORDER_REVERSE,
	ORDER_ODD_EVEN
};

/* What one complete run leaves behind. */
struct run {
	double		*gen_best;	/* generations + 1 */
	double		*best_x;	/* dim */
	double		 best_f;
};

static double	 ridge(const double *, size_t);
static void	 run_es(const struct es_params *, enum order, struct run *);
static void	 run_free(struct run *);
static size_t	 order_index(enum order, size_t, size_t);

/* Ridge (Schwefel 1.2), the paper's test function. */
static double
ridge(const double *x, size_t n)
{
	double	 s = 0.0, f = 0.0;
	size_t	 i;

	for (i = 0; i < n; i++) {
		s += x[i];
		f += s * s;
	}
	return (f);
}

/* The k-th slot to evaluate out of n in the given order. */
static size_t
order_index(enum order order, size_t k, size_t n)
{
	switch (order) {
	case ORDER_FORWARD:
		return (k);
	case ORDER_REVERSE:
		return (n - 1 - k);
	default:
		return (k < (n + 1) / 2 ? 2 * k : 2 * (k - (n + 1) / 2) + 1);
	}
}

/* Run the ES to the end, evaluating Ridge in the given order. */
static void
run_es(const struct es_params *p, enum order order, struct run *out)
{
	struct es	*es;
	size_t		 n, i, k, j, dim = p->dim;
	const double	*x;
	uint32_t	 g;

	assert_non_null(es = es_new(p));
	out->gen_best = calloc((size_t)p->generations + 1, sizeof(double));
	out->best_x = calloc(dim, sizeof(double));
	assert_non_null(out->gen_best);
	assert_non_null(out->best_x);

	while (!es_finished(es)) {
		n = es_batch_size(es);
		assert_true(n > 0);
		for (k = 0; k < n; k++) {
			i = order_index(order, k, n);
			assert_non_null(x = es_batch_x(es, i));
			for (j = 0; j < dim; j++) {
				assert_true(x[j] >= -ES_BOUND);
				assert_true(x[j] <= ES_BOUND);
			}
			es_set_fitness(es, i, ridge(x, dim));
		}
		assert_int_equal(es_advance(es), 0);
	}
	assert_int_equal(es_generation(es), p->generations + 1);
	assert_int_equal(es_batch_size(es), 0);
	for (g = 0; g <= p->generations; g++)
		out->gen_best[g] = es_gen_best(es, g);
	memcpy(out->best_x, es_best_x(es), dim * sizeof(double));
	out->best_f = es_best_f(es);
	assert_true(out->best_f == ridge(out->best_x, dim));
	es_free(es);
}

/* Free what run_es allocated. */
static void
run_free(struct run *r)
{
	free(r->gen_best);
	free(r->best_x);
}

static const struct es_params small = {
	.mu = 5, .lambda = 20, .dim = 8, .generations = 30, .seed = 42,
	.reevaluate_parents = 0
};

/*
 * Same seed, any evaluation order, with or without re-evaluated parents:
 * bit-identical generation bests and best individual.
 */
static void
test_deterministic(void **state)
{
	static const enum order	 orders[] = {
		ORDER_FORWARD, ORDER_FORWARD, ORDER_REVERSE, ORDER_ODD_EVEN
	};
	struct es_params	 p = small;
	struct run		 ref, r;
	size_t			 i;
	int			 reeval;

	(void)state;
	for (reeval = 0; reeval <= 1; reeval++) {
		p.reevaluate_parents = reeval;
		run_es(&p, ORDER_FORWARD, &ref);
		for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
			run_es(&p, orders[i], &r);
			assert_memory_equal(ref.gen_best, r.gen_best,
			    ((size_t)p.generations + 1) * sizeof(double));
			assert_memory_equal(ref.best_x, r.best_x,
			    p.dim * sizeof(double));
			run_free(&r);
		}
		run_free(&ref);
	}
}

/* Another seed gives another run. */
static void
test_seed_matters(void **state)
{
	struct es_params	 p = small;
	struct run		 a, b;

	(void)state;
	run_es(&p, ORDER_FORWARD, &a);
	p.seed = 43;
	run_es(&p, ORDER_FORWARD, &b);
	assert_true(memcmp(a.best_x, b.best_x, p.dim * sizeof(double)) != 0);
	assert_true(a.gen_best[0] != b.gen_best[0]);
	run_free(&a);
	run_free(&b);
}

/* Plus-selection never loses the best: generation bests never rise. */
static void
test_gen_best_monotone(void **state)
{
	struct es_params	 p = small;
	struct run		 r;
	uint32_t		 g;
	int			 reeval;

	(void)state;
	for (reeval = 0; reeval <= 1; reeval++) {
		p.reevaluate_parents = reeval;
		run_es(&p, ORDER_REVERSE, &r);
		for (g = 1; g <= p.generations; g++)
			assert_true(r.gen_best[g] <= r.gen_best[g - 1]);
		assert_true(r.best_f == r.gen_best[p.generations]);
		run_free(&r);
	}
}

/*
 * Batch shapes: mu at generation 0; lambda from generation 1, plus the mu
 * parents (best first) when they are re-evaluated.  The re-evaluated
 * fitness is the one kept.
 */
static void
test_batch_sizes(void **state)
{
	struct es_params	 p = small;
	struct es		*es;
	size_t			 i, n;

	(void)state;
	p.reevaluate_parents = 1;
	assert_non_null(es = es_new(&p));
	assert_int_equal(es_generation(es), 0);
	assert_int_equal(es_batch_size(es), p.mu);
	assert_null(es_batch_x(es, p.mu));
	assert_null(es_best_x(es));
	assert_true(isnan(es_best_f(es)));
	assert_true(isnan(es_gen_best(es, 0)));
	for (i = 0; i < p.mu; i++)
		es_set_fitness(es, i, ridge(es_batch_x(es, i), p.dim));
	assert_int_equal(es_advance(es), 0);
	assert_true(es_best_f(es) == es_gen_best(es, 0));

	assert_int_equal(es_generation(es), 1);
	n = es_batch_size(es);
	assert_int_equal(n, p.mu + p.lambda);
	/* Slot lambda is a copy of the best parent. */
	assert_memory_equal(es_batch_x(es, p.lambda), es_best_x(es),
	    p.dim * sizeof(double));
	for (i = 0; i < n; i++)
		es_set_fitness(es, i, 1e6 + (double)i);
	/* The newly set parent fitness wins, not the stored one. */
	es_set_fitness(es, p.lambda + 2, -1.0);
	assert_int_equal(es_advance(es), 0);
	assert_true(es_best_f(es) == -1.0);
	assert_true(es_gen_best(es, 1) == -1.0);
	es_free(es);

	p.reevaluate_parents = 0;
	assert_non_null(es = es_new(&p));
	for (i = 0; i < p.mu; i++)
		es_set_fitness(es, i, 1.0);
	assert_int_equal(es_advance(es), 0);
	assert_int_equal(es_batch_size(es), p.lambda);
	es_free(es);
}

/*
 * es_advance refuses a batch with a missing fitness and changes nothing;
 * out-of-range indices are ignored; a finished run has no batch.
 */
static void
test_missing_fitness(void **state)
{
	struct es_params	 p = small;
	struct es		*es;
	size_t			 i, n, hole;
	uint32_t		 g;

	(void)state;
	p.generations = 2;
	assert_non_null(es = es_new(&p));
	for (g = 0; g <= p.generations; g++) {
		n = es_batch_size(es);
		hole = g % 2 == 0 ? n - 1 : 0;
		for (i = 0; i < n; i++)
			if (i != hole)
				es_set_fitness(es, i, (double)i);
		es_set_fitness(es, n, 0.0);
		es_set_fitness(es, SIZE_MAX, 0.0);
		assert_int_equal(es_advance(es), -1);
		assert_int_equal(es_generation(es), g);
		assert_int_equal(es_batch_size(es), n);
		es_set_fitness(es, hole, 0.5);
		assert_int_equal(es_advance(es), 0);
	}
	assert_true(es_finished(es));
	assert_int_equal(es_batch_size(es), 0);
	assert_null(es_batch_x(es, 0));
	es_set_fitness(es, 0, 0.0);
	assert_int_equal(es_advance(es), -1);
	es_free(es);
}

/* NaN fitness ranks last: offspring that all fail never replace parents. */
static void
test_nan_last(void **state)
{
	struct es_params	 p = small;
	struct es		*es;
	double			 best0;
	size_t			 i;

	(void)state;
	assert_non_null(es = es_new(&p));
	for (i = 0; i < p.mu; i++)
		es_set_fitness(es, i, i == 2 ? NAN : 10.0 + (double)i);
	assert_int_equal(es_advance(es), 0);
	best0 = es_best_f(es);
	assert_true(best0 == 10.0);
	for (i = 0; i < es_batch_size(es); i++)
		es_set_fitness(es, i, NAN);
	assert_int_equal(es_advance(es), 0);
	assert_true(es_best_f(es) == best0);
	assert_true(es_gen_best(es, 1) == best0);
	es_free(es);
}

/* Invalid parameters are refused with a message naming the field. */
static void
test_params_check(void **state)
{
	const struct {
		uint32_t	 mu, lambda, dim, generations;
		const char	*field;
	} cases[] = {
		{ 0,	10,	5,	10,	"mu" },
		{ 10,	0,	5,	10,	"lambda" },
		{ 10,	10,	0,	10,	"dim" },
		{ 10,	10,	ES_MAX_DIM + 1, 10, "dim" },
		{ 10,	10,	5,	0,	"generations" },
		{ 10,	10,	5,	1000001, "generations" },
		{ ES_MAX_POP, 1, 5,	10,	"mu + lambda" },
		{ 1,	UINT32_MAX, 5,	10,	"mu + lambda" },
	};
	struct es_params	 p;
	char			 buf[128], tiny[4];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.mu = cases[i].mu;
		p.lambda = cases[i].lambda;
		p.dim = cases[i].dim;
		p.generations = cases[i].generations;
		buf[0] = '\0';
		assert_int_equal(es_params_check(&p, buf, sizeof(buf)), -1);
		assert_true(strncmp(buf, cases[i].field,
		    strlen(cases[i].field)) == 0);
		assert_null(es_new(&p));
	}
	p = small;
	assert_int_equal(es_params_check(&p, buf, sizeof(buf)), 0);
	p.mu = 0;
	assert_int_equal(es_params_check(&p, tiny, sizeof(tiny)), -1);
	assert_string_equal(tiny, "mu ");
	assert_int_equal(es_params_check(&p, NULL, 0), -1);
	assert_null(es_new(NULL));
}

/*
 * Plus-selection keeps the mu best of parents and offspring, ordered by
 * fitness (NaN last), ties by place (parents first): checked against a
 * sort of the pool here, through the parents that the next batch
 * re-evaluates, with fitnesses full of ties and NaNs.  mu + lambda is
 * over 8 mu, so es.c takes its partial selection (es_best_of), not qsort.
 */
struct pool_ent {
	double	 f;
	size_t	 idx;
	double	 x[2];
};

static int
pool_cmp(const void *a, const void *b)
{
	const struct pool_ent	*pa = a, *pb = b;
	int			 na = isnan(pa->f), nb = isnan(pb->f);

	if (na != nb)
		return (na ? 1 : -1);
	if (!na && pa->f != pb->f)
		return (pa->f < pb->f ? -1 : 1);
	return (pa->idx < pb->idx ? -1 : pa->idx > pb->idx);
}

static void
test_select_partial(void **state)
{
	struct es_params	 p = { .mu = 3, .lambda = 40, .dim = 2,
	    .generations = 12, .seed = 7, .reevaluate_parents = 1 };
	struct pool_ent		 pool[43];
	struct es		*es;
	const double		*x;
	double			 f;
	size_t			 i, n, g;

	(void)state;
	assert_non_null(es = es_new(&p));
	for (g = 0; !es_finished(es); g++) {
		n = es_batch_size(es);
		if (g > 1) {
			/* The parents chosen last time, re-evaluated now. */
			qsort(pool, p.mu + p.lambda, sizeof(pool[0]),
			    pool_cmp);
			for (i = 0; i < p.mu; i++)
				assert_memory_equal(es_batch_x(es,
				    p.lambda + i), pool[i].x,
				    sizeof(pool[i].x));
		}
		for (i = 0; i < n; i++) {
			x = es_batch_x(es, i);
			/* Few values: many ties; every seventh NaN. */
			f = (i + g) % 7 == 3 ? NAN :
			    floor(es_ridge(x, p.dim)) == 0 ? 0 :
			    (double)((long)floor(x[0] * 3) % 4);
			es_set_fitness(es, i, f);
			if (g == 0)
				continue;
			if (i < p.lambda) {
				pool[p.mu + i].idx = p.mu + i;
				pool[p.mu + i].f = f;
				memcpy(pool[p.mu + i].x, x, sizeof(pool[0].x));
			} else {
				pool[i - p.lambda].idx = i - p.lambda;
				pool[i - p.lambda].f = f;
				memcpy(pool[i - p.lambda].x, x,
				    sizeof(pool[0].x));
			}
		}
		assert_int_equal(es_advance(es), 0);
	}
	assert_true(g > 2);
	es_free(es);
}

/*
 * (10+40)-ES on 10-dimensional Ridge for 200 generations improves the
 * best fitness at least a thousandfold.  Elitist selection with n-sigma
 * self-adaptation and no recombination lets one coordinate's step size
 * collapse on about half the seeds (11 of seeds 1-20 reach 1000x here), so
 * this asks 1000x of at least 5 of 20 seeds and 5x of every seed: a margin
 * that survives another libm's rounding, which changes the trajectories.
 */
static void
test_optimises_ridge(void **state)
{
	struct es_params	 p = {
		.mu = 10, .lambda = 40, .dim = 10, .generations = 200,
		.seed = 1, .reevaluate_parents = 0
	};
	struct run		 r;
	uint64_t		 seed;
	int			 thousandfold = 0;

	(void)state;
	for (seed = 1; seed <= 20; seed++) {
		p.seed = seed;
		run_es(&p, ORDER_FORWARD, &r);
		assert_true(r.gen_best[200] * 5.0 <= r.gen_best[0]);
		if (r.gen_best[200] * 1000.0 <= r.gen_best[0])
			thousandfold++;
		run_free(&r);
	}
	assert_true(thousandfold >= 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_seed_matters),
		cmocka_unit_test(test_gen_best_monotone),
		cmocka_unit_test(test_batch_sizes),
		cmocka_unit_test(test_missing_fitness),
		cmocka_unit_test(test_nan_last),
		cmocka_unit_test(test_select_partial),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_optimises_ridge),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
