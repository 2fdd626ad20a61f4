/*
 * The (mu+lambda)-ES with n-sigma self-adaptation (doc/algorithms.md
 * section 1).
 *
 * Every random draw is rng_*(seed, generation, index, draw): generation 0
 * draws the initial parents (index = parent), generation g >= 1 draws its
 * offspring (index = offspring).  An offspring's draws are numbered
 *
 *	0		the parent it mutates
 *	1		N0, the step-size factor shared by all coordinates
 *	2 + i		Ni, the step-size factor of coordinate i
 *	2 + dim + i	N'i, the mutation of coordinate i
 *
 * so nothing depends on the order in which fitnesses arrive.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "es/es.h"

#define ES_SIGMA_MIN	1e-12
#define ES_SIGMA_MAX	(2.0 * ES_BOUND)
#define ES_SIGMA_INIT	(ES_BOUND / 10.0)
#define ES_MAX_GENERATIONS	1000000

/*
 * One ES run.  Owned by whoever called es_new(); dies in es_free().  The
 * parents are kept sorted best first once generation 0 has been selected.
 * The batch holds the individuals of the current generation: the mu initial
 * parents at generation 0, then lambda offspring followed, with
 * reevaluate_parents, by copies of the mu parents.
 */
struct es {
	struct es_params	 es_p;
	uint32_t		 es_gen;	/* generations selected so far */
	double			 es_tau0;
	double			 es_tau;

	double			*es_px;		/* parents: mu x dim */
	double			*es_ps;		/* parents' sigma: mu x dim */
	double			*es_pf;		/* parents' fitness: mu */

	size_t			 es_nbatch;	/* 0 once finished */
	double			*es_bx;		/* batch: cap x dim */
	double			*es_bs;		/* batch sigma: cap x dim */
	double			*es_bf;		/* batch fitness: cap */
	unsigned char		*es_bset;	/* fitness of slot was set */
	unsigned char		*es_bmade;	/* slot's offspring made yet */

	double			*es_nx;		/* next parents, swapped in */
	double			*es_ns;
	double			*es_nf;
	struct es_rank		*es_rank;	/* selection pool: mu + lambda */

	double			*es_genbest;	/* generations + 1 */
};

/* One member of the selection pool: parents are 0..mu-1, offspring after. */
struct es_rank {
	double		 f;
	size_t		 idx;
};

static int	 es_rank_cmp(const void *, const void *);
static void	 es_init_parents(struct es *);
static void	 es_make_batch(struct es *);
static void	 es_mutate(struct es *, size_t);
static void	 es_select(struct es *);

/* Check the parameters; on error say which one in buf and return -1. */
int
es_params_check(const struct es_params *p, char *buf, size_t len)
{
	const char	*msg = NULL;
	char		 tmp[128];

	if (p == NULL)
		msg = "no parameters";
	else if (p->mu < 1)
		msg = "mu must be at least 1";
	else if (p->lambda < 1)
		msg = "lambda must be at least 1";
	else if (p->dim < 1 || p->dim > ES_MAX_DIM) {
		snprintf(tmp, sizeof(tmp), "dim must be between 1 and %d",
		    ES_MAX_DIM);
		msg = tmp;
	} else if ((uint64_t)p->mu + p->lambda > ES_MAX_POP) {
		snprintf(tmp, sizeof(tmp), "mu + lambda must be at most %d",
		    ES_MAX_POP);
		msg = tmp;
	} else if (p->generations < 1 ||
	    p->generations > ES_MAX_GENERATIONS) {
		snprintf(tmp, sizeof(tmp),
		    "generations must be between 1 and %d",
		    ES_MAX_GENERATIONS);
		msg = tmp;
	}
	if (msg == NULL)
		return (0);
	if (buf != NULL && len > 0)
		snprintf(buf, len, "%s", msg);
	return (-1);
}

/*
 * Bytes es_new() allocates for p (checked): the parents and their next
 * generation (x and sigma each), the batch of mu + lambda, the ranks and
 * the best fitness of every generation.  masterd weighs a client's job
 * by it before it allocates anything (max_job_memory).
 */
uint64_t
es_mem_bytes(const struct es_params *p)
{
	uint64_t	 mu = p->mu, cap = (uint64_t)p->mu + p->lambda;
	uint64_t	 dim = p->dim;

	return (sizeof(struct es) + (4 * mu * dim + 2 * mu) * sizeof(double) +
	    cap * (2 * dim + 1) * sizeof(double) + 2 * cap +
	    cap * sizeof(struct es_rank) +
	    ((uint64_t)p->generations + 1) * sizeof(double));
}

/* Create a run at generation 0, its batch being the mu initial parents. */
struct es *
es_new(const struct es_params *p)
{
	struct es	*es;
	size_t		 mu, cap, dim;

	if (es_params_check(p, NULL, 0) == -1)
		return (NULL);
	if ((es = calloc(1, sizeof(*es))) == NULL)
		return (NULL);
	es->es_p = *p;
	mu = p->mu;
	dim = p->dim;
	cap = (size_t)p->lambda + p->mu;

	es->es_tau0 = 1.0 / sqrt(2.0 * dim);
	es->es_tau = 1.0 / sqrt(2.0 * sqrt((double)dim));

	es->es_px = calloc(mu * dim, sizeof(double));
	es->es_ps = calloc(mu * dim, sizeof(double));
	es->es_pf = calloc(mu, sizeof(double));
	es->es_nx = calloc(mu * dim, sizeof(double));
	es->es_ns = calloc(mu * dim, sizeof(double));
	es->es_nf = calloc(mu, sizeof(double));
	/*
	 * The batch and the pool are written before they are read: each
	 * batch's slots by es_make_batch() and es_offspring(), the pool by
	 * es_select().  Not zeroed here, so that a job's start costs no
	 * page of lambda's: calloc() from a heap that an earlier large job
	 * left behind zeroed all of it, 4 ms at lambda = 200,000, before
	 * the job was journaled and answered.
	 */
	es->es_bx = reallocarray(NULL, cap * dim, sizeof(double));
	es->es_bs = reallocarray(NULL, cap * dim, sizeof(double));
	es->es_bf = reallocarray(NULL, cap, sizeof(double));
	es->es_bset = malloc(cap);
	es->es_bmade = malloc(cap);
	es->es_rank = reallocarray(NULL, cap, sizeof(struct es_rank));
	es->es_genbest = calloc((size_t)p->generations + 1, sizeof(double));
	if (es->es_px == NULL || es->es_ps == NULL || es->es_pf == NULL ||
	    es->es_nx == NULL || es->es_ns == NULL || es->es_nf == NULL ||
	    es->es_bx == NULL || es->es_bs == NULL || es->es_bf == NULL ||
	    es->es_bset == NULL || es->es_bmade == NULL ||
	    es->es_rank == NULL ||
	    es->es_genbest == NULL) {
		es_free(es);
		return (NULL);
	}
	es_init_parents(es);
	es_make_batch(es);
	return (es);
}

/* Free a run and everything it holds. */
void
es_free(struct es *es)
{
	if (es == NULL)
		return;
	free(es->es_px);
	free(es->es_ps);
	free(es->es_pf);
	free(es->es_nx);
	free(es->es_ns);
	free(es->es_nf);
	free(es->es_bx);
	free(es->es_bs);
	free(es->es_bf);
	free(es->es_bset);
	free(es->es_bmade);
	free(es->es_rank);
	free(es->es_genbest);
	free(es);
}

/* Draw the initial parents uniformly in the bounds (generation 0). */
static void
es_init_parents(struct es *es)
{
	size_t		 i, j, dim = es->es_p.dim;
	double		 u;

	for (i = 0; i < es->es_p.mu; i++) {
		for (j = 0; j < dim; j++) {
			u = rng_uniform(es->es_p.seed, 0, i, j);
			es->es_px[i * dim + j] = -ES_BOUND + 2.0 * ES_BOUND * u;
			es->es_ps[i * dim + j] = ES_SIGMA_INIT;
		}
		es->es_pf[i] = NAN;
	}
}

/*
 * Fill the batch of the current generation and clear its fitness flags;
 * an empty batch once the last generation has been selected.
 */
static void
es_make_batch(struct es *es)
{
	size_t		 i, mu = es->es_p.mu, lambda = es->es_p.lambda;
	size_t		 dim = es->es_p.dim;

	if (es->es_gen > es->es_p.generations) {
		es->es_nbatch = 0;
		return;
	}
	if (es->es_gen == 0) {
		memcpy(es->es_bx, es->es_px, mu * dim * sizeof(double));
		memcpy(es->es_bs, es->es_ps, mu * dim * sizeof(double));
		es->es_nbatch = mu;
		memset(es->es_bmade, 1, mu);
	} else {
		/*
		 * Offspring k depends on (seed, generation, k) and the
		 * parents alone (es_mutate): each is made when first asked
		 * for (es_offspring), so that the next generation's first
		 * tasks go out at once, not after all lambda (large jobs
		 * start at once: lambda = 200,000).
		 */
		memset(es->es_bmade, 0, lambda);
		es->es_nbatch = lambda;
		if (es->es_p.reevaluate_parents) {
			memcpy(es->es_bx + lambda * dim, es->es_px,
			    mu * dim * sizeof(double));
			memcpy(es->es_bs + lambda * dim, es->es_ps,
			    mu * dim * sizeof(double));
			memset(es->es_bmade + lambda, 1, mu);
			es->es_nbatch += mu;
		}
	}
	for (i = 0; i < es->es_nbatch; i++)
		es->es_bf[i] = NAN;
	memset(es->es_bset, 0, es->es_nbatch);
}

/* Batch slot k, made if it was not yet (the parents have not moved). */
static void
es_offspring(struct es *es, size_t k)
{
	if (es->es_bmade[k])
		return;
	es_mutate(es, k);
	es->es_bmade[k] = 1;
}

/*
 * Make offspring k of the current generation: pick a parent uniformly,
 * mutate its step sizes log-normally (tau0 shared, tau per coordinate),
 * then its coordinates, reflecting and clamping into the bounds.
 */
static void
es_mutate(struct es *es, size_t k)
{
	uint64_t	 seed = es->es_p.seed, g = es->es_gen;
	size_t		 dim = es->es_p.dim, mu = es->es_p.mu, i, par;
	const double	*px, *ps;
	double		*x, *s, n0, sg, xi;

	par = (size_t)(rng_uniform(seed, g, k, 0) * (double)mu);
	if (par >= mu)
		par = mu - 1;
	px = es->es_px + par * dim;
	ps = es->es_ps + par * dim;
	x = es->es_bx + k * dim;
	s = es->es_bs + k * dim;

	n0 = es->es_tau0 * rng_gauss(seed, g, k, 1);
	for (i = 0; i < dim; i++) {
		sg = ps[i] * exp(n0 + es->es_tau * rng_gauss(seed, g, k, 2 + i));
		if (!(sg >= ES_SIGMA_MIN))
			sg = ES_SIGMA_MIN;
		else if (sg > ES_SIGMA_MAX)
			sg = ES_SIGMA_MAX;
		s[i] = sg;

		xi = px[i] + sg * rng_gauss(seed, g, k, 2 + dim + i);
		if (xi > ES_BOUND)
			xi = 2.0 * ES_BOUND - xi;
		else if (xi < -ES_BOUND)
			xi = -2.0 * ES_BOUND - xi;
		if (xi > ES_BOUND)
			xi = ES_BOUND;
		else if (xi < -ES_BOUND)
			xi = -ES_BOUND;
		x[i] = xi;
	}
}

/* The generation whose batch is current: the number selected so far. */
uint32_t
es_generation(const struct es *es)
{
	return (es->es_gen);
}

/* True once generation number `generations' has been selected. */
int
es_finished(const struct es *es)
{
	return (es->es_gen > es->es_p.generations);
}

/* How many individuals the current generation asks to be evaluated. */
size_t
es_batch_size(const struct es *es)
{
	return (es->es_nbatch);
}

/* The coordinates of batch slot i, NULL if there is no such slot. */
const double *
es_batch_x(struct es *es, size_t i)
{
	if (i >= es->es_nbatch)
		return (NULL);
	es_offspring(es, i);
	return (es->es_bx + i * es->es_p.dim);
}

/* Record the fitness of batch slot i; other indices are ignored. */
void
es_set_fitness(struct es *es, size_t i, double f)
{
	if (i >= es->es_nbatch)
		return;
	es->es_bf[i] = f;
	es->es_bset[i] = 1;
}

/*
 * Order the pool by fitness, NaN last, ties by index (parents first, in
 * their order, then offspring by index): a total order, so qsort gives the
 * same result on every platform.
 */
static int
es_rank_cmp(const void *a, const void *b)
{
	const struct es_rank	*ra = a, *rb = b;
	int			 na = isnan(ra->f), nb = isnan(rb->f);

	if (na != nb)
		return (na ? 1 : -1);
	if (!na) {
		if (ra->f < rb->f)
			return (-1);
		if (ra->f > rb->f)
			return (1);
	}
	return (ra->idx < rb->idx ? -1 : ra->idx > rb->idx);
}

/*
 * The mu best of r[0..n), sorted, into r[0..mu): what qsort() then taking
 * the first mu gives (es_rank_cmp is a total order), in O(n log mu) for
 * the usual candidate (a (1+200,000)-ES sorted 200,001 ranks a generation
 * for one parent: 13 ms of masterd's loop).  The rest of r is left in no
 * order.
 */
static void
es_best_of(struct es_rank *r, size_t n, size_t mu)
{
	struct es_rank	 x;
	size_t		 i, lo, hi, mid;

	qsort(r, mu, sizeof(*r), es_rank_cmp);
	for (i = mu; i < n; i++) {
		if (es_rank_cmp(&r[i], &r[mu - 1]) >= 0)
			continue;
		x = r[i];
		for (lo = 0, hi = mu - 1; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (es_rank_cmp(&x, &r[mid]) < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		memmove(&r[lo + 1], &r[lo], (mu - 1 - lo) * sizeof(*r));
		r[lo] = x;
	}
}

/*
 * Plus-selection (ES step 5): rank parents and offspring together and
 * keep the best mu, sorted, as the next parents.  At generation 0 the pool
 * is the initial parents alone.
 */
static void
es_select(struct es *es)
{
	size_t		 mu = es->es_p.mu, dim = es->es_p.dim;
	size_t		 n, i, src;
	const double	*sx, *ss;
	double		 sf, *t;

	n = mu;
	for (i = 0; i < mu; i++) {
		es->es_rank[i].f = es->es_pf[i];
		es->es_rank[i].idx = i;
	}
	if (es->es_gen > 0) {
		for (i = 0; i < es->es_p.lambda; i++, n++) {
			es->es_rank[n].f = es->es_bf[i];
			es->es_rank[n].idx = n;
		}
	}
	if (n > 8 * mu)
		es_best_of(es->es_rank, n, mu);
	else
		qsort(es->es_rank, n, sizeof(es->es_rank[0]), es_rank_cmp);

	for (i = 0; i < mu; i++) {
		src = es->es_rank[i].idx;
		if (src < mu) {
			sx = es->es_px + src * dim;
			ss = es->es_ps + src * dim;
			sf = es->es_pf[src];
		} else {
			/* Its fitness came from the journal, maybe. */
			es_offspring(es, src - mu);
			sx = es->es_bx + (src - mu) * dim;
			ss = es->es_bs + (src - mu) * dim;
			sf = es->es_bf[src - mu];
		}
		memcpy(es->es_nx + i * dim, sx, dim * sizeof(double));
		memcpy(es->es_ns + i * dim, ss, dim * sizeof(double));
		es->es_nf[i] = sf;
	}
	t = es->es_px; es->es_px = es->es_nx; es->es_nx = t;
	t = es->es_ps; es->es_ps = es->es_ns; es->es_ns = t;
	t = es->es_pf; es->es_pf = es->es_nf; es->es_nf = t;
}

/*
 * Select with the fitnesses of the current batch and move to the next
 * generation.  Returns -1, changing nothing, if a slot has no fitness yet
 * (or the run is finished).
 */
int
es_advance(struct es *es)
{
	size_t		 i, mu = es->es_p.mu, lambda = es->es_p.lambda;

	if (es_finished(es))
		return (-1);
	for (i = 0; i < es->es_nbatch; i++)
		if (!es->es_bset[i])
			return (-1);

	if (es->es_gen == 0) {
		for (i = 0; i < mu; i++)
			es->es_pf[i] = es->es_bf[i];
	} else if (es->es_p.reevaluate_parents) {
		for (i = 0; i < mu; i++)
			es->es_pf[i] = es->es_bf[lambda + i];
	}
	es_select(es);
	es->es_genbest[es->es_gen] = es->es_pf[0];
	es->es_gen++;
	es_make_batch(es);
	return (0);
}

/* Best fitness of the parents after generation g's selection, else NaN. */
double
es_gen_best(const struct es *es, uint32_t g)
{
	if (g >= es->es_gen)
		return (NAN);
	return (es->es_genbest[g]);
}

/* Best fitness found so far (the best parent), NaN before generation 0. */
double
es_best_f(const struct es *es)
{
	if (es->es_gen == 0)
		return (NAN);
	return (es->es_pf[0]);
}

/* Coordinates of the best individual so far, NULL before generation 0. */
const double *
es_best_x(const struct es *es)
{
	if (es->es_gen == 0)
		return (NULL);
	return (es->es_px);
}

/*
 * Ridge (Schwefel 1.2): the sum over i of (x_1 + ... + x_i)^2, summed in
 * index order with a running partial sum so every host gets the same bits.
 * The ridge-lu and synth kinds (common/task) and r3q-sim share it.
 */
double
es_ridge(const double *x, size_t n)
{
	double	 partial = 0.0, f = 0.0;
	size_t	 i;

	for (i = 0; i < n; i++) {
		partial += x[i];
		f += partial * partial;
	}
	return (f);
}
