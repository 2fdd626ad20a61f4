/*
 * The island model of the (mu+lambda)-ES: see island.h.
 *
 * Each island is the ES of es.c (doc/algorithms.md §1.1, with
 * the same n-sigma self-adaptation and the same draws) on its own stream:
 * island i draws rng_*(seed_i, generation, index, draw), seed_i =
 * rng_u64(seed, ISLAND_STREAM, i, 0).  Generation 0 draws the initial
 * parents (index = parent, draw = coordinate); generation g >= 1 draws
 * offspring k as es.c does (draw 0: its parent, 1: N0, 2 + c: Nc,
 * 2 + dim + c: N'c).  Fitness is Ridge (es_ridge), evaluated in place:
 * an epoch is one task, its evaluations are not spread further.
 *
 * Migration: after epoch e every island sends its K best
 * parents to every other island; island i ranks its mu parents (pool
 * index 0..mu-1) and the migrants of islands 0, 1, ..., p-1 but i, K each
 * in their senders' order (pool index mu + ...), by fitness with ties by
 * pool index, and keeps the best mu: plus-selection over parents and
 * immigrants, in island order whatever order they came in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "rng.h"
#include "es/es.h"
#include "es/island.h"

#define IS_SIGMA_MIN	1e-12
#define IS_SIGMA_MAX	(2.0 * ES_BOUND)
#define IS_SIGMA_INIT	(ES_BOUND / 10.0)
#define IS_MAX_GENERATIONS	1000000
#define IS_MAX_POOL	1000000		/* mu + lambda + (p-1) K */
#define IS_FNV_PRIME	0x100000001b3ULL

/* One island.  Parents sorted best first once generation 0 is selected. */
struct island {
	struct island_params	 is_p;
	uint32_t		 is_idx;
	uint64_t		 is_seed;	/* seed_i */
	uint32_t		 is_epoch;	/* migrations merged */
	uint32_t		 is_gen;	/* generations selected */
	double			 is_tau0;
	double			 is_tau;
	size_t			 is_w;		/* doubles an individual */
	double			*is_par;	/* mu individuals */
	double			*is_off;	/* lambda individuals */
	double			*is_next;	/* mu individuals */
	struct is_rank		*is_rank;	/* the largest pool */
};

struct is_rank {
	double		 f;
	size_t		 idx;
};

static int	 is_rank_cmp(const void *, const void *);
static void	 is_select(struct island *, const double *, size_t);
static void	 is_mutate(struct island *, size_t);
static void	 put_f64(uint8_t *, double);
static double	 get_f64(const uint8_t *);

static void
put_f64(uint8_t *p, double d)
{
	uint64_t	 v;

	memcpy(&v, &d, sizeof(v));
	le64_put(p, v);
}

static double
get_f64(const uint8_t *p)
{
	uint64_t	 v = le64_get(p);
	double		 d;

	memcpy(&d, &v, sizeof(d));
	return (d);
}

/* Check the parameters; on error name the culprit in buf and return -1. */
int
island_params_check(const struct island_params *p, char *buf, size_t len)
{
	char		 tmp[160];
	const char	*msg = NULL;
	uint64_t	 pool;

	if (p == NULL)
		msg = "no parameters";
	else if (p->islands < ISLAND_MIN_P || p->islands > ISLAND_MAX_P) {
		snprintf(tmp, sizeof(tmp), "islands %u: an island model needs "
		    "from %d to %d islands (1 exchanges nothing, 2 only "
		    "swaps)", p->islands, ISLAND_MIN_P, ISLAND_MAX_P);
		msg = tmp;
	} else if (p->mu < 1)
		msg = "mu must be at least 1";
	else if (p->lambda < 1)
		msg = "lambda must be at least 1";
	else if (p->dim < 1 || p->dim > ES_MAX_DIM) {
		snprintf(tmp, sizeof(tmp), "dim must be between 1 and %d",
		    ES_MAX_DIM);
		msg = tmp;
	} else if (p->generations < 1 ||
	    p->generations > IS_MAX_GENERATIONS) {
		snprintf(tmp, sizeof(tmp), "generations must be between 1 "
		    "and %d", IS_MAX_GENERATIONS);
		msg = tmp;
	} else if (p->migrate_every < 1 ||
	    p->migrate_every > p->generations) {
		snprintf(tmp, sizeof(tmp), "migrate-every %u: must be from 1 "
		    "to generations (%u)", p->migrate_every, p->generations);
		msg = tmp;
	} else if (p->migrants < 1 || p->migrants > p->mu) {
		snprintf(tmp, sizeof(tmp), "migrants %u: an island sends "
		    "from 1 to mu (%u) of its parents", p->migrants, p->mu);
		msg = tmp;
	} else {
		pool = (uint64_t)p->mu + p->lambda +
		    (uint64_t)(p->islands - 1) * p->migrants;
		if (pool > IS_MAX_POOL ||
		    pool * (2 * (uint64_t)p->dim + 1) > (1ULL << 27)) {
			snprintf(tmp, sizeof(tmp), "mu + lambda + (islands - "
			    "1) x migrants individuals of dimension %u are "
			    "too many", p->dim);
			msg = tmp;
		}
	}
	if (msg == NULL)
		return (0);
	if (buf != NULL && len > 0)
		snprintf(buf, len, "%s", msg);
	return (-1);
}

/* Epochs of a run: ceil(generations / migrate_every). */
uint32_t
island_epochs(const struct island_params *p)
{
	return ((p->generations + p->migrate_every - 1) / p->migrate_every);
}

/* The offspring generation that ends epoch e. */
uint32_t
island_epoch_end(const struct island_params *p, uint32_t e)
{
	uint64_t	 g = ((uint64_t)e + 1) * p->migrate_every;

	return (g > p->generations ? p->generations : (uint32_t)g);
}

/* Doubles of an individual: x, sigma, fitness. */
size_t
island_ind_len(const struct island_params *p)
{
	return (2 * (size_t)p->dim + 1);
}

/* Bytes of an encoded state. */
size_t
island_state_len(const struct island_params *p)
{
	return (ISLAND_STATE_HEAD + (size_t)p->mu * island_ind_len(p) * 8);
}

/* Bytes of a payload, with or without a state (and so migrants). */
size_t
island_payload_len(const struct island_params *p, int state)
{
	if (!state)
		return (ISLAND_PAYLOAD_HEAD);
	return (ISLAND_PAYLOAD_HEAD + island_state_len(p) +
	    (size_t)(p->islands - 1) * p->migrants * island_ind_len(p) * 8);
}

/* Island i of a run, before generation 0; NULL if out of memory. */
struct island *
island_new(const struct island_params *p, uint32_t i)
{
	struct island	*is;
	size_t		 pool;

	if (island_params_check(p, NULL, 0) == -1 || i >= p->islands)
		return (NULL);
	if ((is = calloc(1, sizeof(*is))) == NULL)
		return (NULL);
	is->is_p = *p;
	is->is_idx = i;
	is->is_seed = rng_u64(p->seed, ISLAND_STREAM, i, 0);
	is->is_tau0 = 1.0 / sqrt(2.0 * p->dim);
	is->is_tau = 1.0 / sqrt(2.0 * sqrt((double)p->dim));
	is->is_w = island_ind_len(p);
	pool = (size_t)p->mu + p->lambda + (size_t)(p->islands - 1) *
	    p->migrants;
	is->is_par = calloc((size_t)p->mu * is->is_w, sizeof(double));
	is->is_off = calloc((size_t)p->lambda * is->is_w, sizeof(double));
	is->is_next = calloc((size_t)p->mu * is->is_w, sizeof(double));
	is->is_rank = calloc(pool, sizeof(struct is_rank));
	if (is->is_par == NULL || is->is_off == NULL || is->is_next == NULL ||
	    is->is_rank == NULL) {
		island_free(is);
		return (NULL);
	}
	return (is);
}

void
island_free(struct island *is)
{
	if (is == NULL)
		return;
	free(is->is_par);
	free(is->is_off);
	free(is->is_next);
	free(is->is_rank);
	free(is);
}

uint32_t
island_index(const struct island *is)
{
	return (is->is_idx);
}

uint32_t
island_epoch(const struct island *is)
{
	return (is->is_epoch);
}

uint32_t
island_generation(const struct island *is)
{
	return (is->is_gen);
}

/* The current epoch has selected its last generation. */
int
island_epoch_done(const struct island *is)
{
	return (is->is_gen >= island_epoch_end(&is->is_p, is->is_epoch) + 1);
}

/* Generation number `generations' has been selected. */
int
island_finished(const struct island *is)
{
	return (is->is_gen > is->is_p.generations);
}

/* Fitness order, NaN last, ties by pool index: a total order. */
static int
is_rank_cmp(const void *a, const void *b)
{
	const struct is_rank	*ra = a, *rb = b;
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
 * Plus-selection (ES step 5): rank the mu parents and the n individuals
 * of more (offspring or immigrants, pool index mu + k) and keep the best
 * mu, sorted, as the parents.
 */
static void
is_select(struct island *is, const double *more, size_t n)
{
	size_t		 mu = is->is_p.mu, w = is->is_w, i, src;
	const double	*s;
	double		*t;

	for (i = 0; i < mu; i++) {
		is->is_rank[i].f = is->is_par[i * w + w - 1];
		is->is_rank[i].idx = i;
	}
	for (i = 0; i < n; i++) {
		is->is_rank[mu + i].f = more[i * w + w - 1];
		is->is_rank[mu + i].idx = mu + i;
	}
	qsort(is->is_rank, mu + n, sizeof(is->is_rank[0]), is_rank_cmp);
	for (i = 0; i < mu; i++) {
		src = is->is_rank[i].idx;
		s = src < mu ? is->is_par + src * w : more + (src - mu) * w;
		memcpy(is->is_next + i * w, s, w * sizeof(double));
	}
	t = is->is_par;
	is->is_par = is->is_next;
	is->is_next = t;
}

/*
 * Offspring k of the current generation (es.c's es_mutate on this
 * island's stream): a parent drawn uniformly, its step sizes mutated
 * log-normally, then its coordinates, reflected and clamped into the
 * bounds; then evaluated (ES step 4).
 */
static void
is_mutate(struct island *is, size_t k)
{
	uint64_t	 seed = is->is_seed, g = is->is_gen;
	size_t		 dim = is->is_p.dim, mu = is->is_p.mu, w = is->is_w;
	size_t		 i, par;
	const double	*px, *ps;
	double		*x, *s, n0, sg, xi;

	par = (size_t)(rng_uniform(seed, g, k, 0) * (double)mu);
	if (par >= mu)
		par = mu - 1;
	px = is->is_par + par * w;
	ps = px + dim;
	x = is->is_off + k * w;
	s = x + dim;
	n0 = is->is_tau0 * rng_gauss(seed, g, k, 1);
	for (i = 0; i < dim; i++) {
		sg = ps[i] * exp(n0 + is->is_tau * rng_gauss(seed, g, k, 2 + i));
		if (!(sg >= IS_SIGMA_MIN))
			sg = IS_SIGMA_MIN;
		else if (sg > IS_SIGMA_MAX)
			sg = IS_SIGMA_MAX;
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
	x[2 * dim] = es_ridge(x, dim);
}

/*
 * Run at most max generations of the current epoch (fewer when it ends):
 * generation 0 draws and evaluates the initial parents (ES steps 1-2),
 * every later one makes, evaluates and selects lambda offspring (steps
 * 3-5).  Returns how many ran.  Running an epoch in pieces gives the bits
 * of running it at once: nothing but the state carries over.
 */
uint32_t
island_run(struct island *is, uint32_t max)
{
	size_t		 i, j, w = is->is_w, dim = is->is_p.dim;
	double		*x;
	uint32_t	 n;

	for (n = 0; n < max && !island_epoch_done(is); n++) {
		if (is->is_gen == 0) {
			for (i = 0; i < is->is_p.mu; i++) {
				x = is->is_par + i * w;
				for (j = 0; j < dim; j++) {
					x[j] = -ES_BOUND + 2.0 * ES_BOUND *
					    rng_uniform(is->is_seed, 0, i, j);
					x[dim + j] = IS_SIGMA_INIT;
				}
				x[2 * dim] = es_ridge(x, dim);
			}
			is_select(is, NULL, 0);
		} else {
			for (i = 0; i < is->is_p.lambda; i++)
				is_mutate(is, i);
			is_select(is, is->is_off, is->is_p.lambda);
		}
		is->is_gen++;
	}
	return (n);
}

/* The best parent's fitness, NaN before generation 0. */
double
island_best_f(const struct island *is)
{
	if (is->is_gen == 0)
		return (NAN);
	return (is->is_par[2 * (size_t)is->is_p.dim]);
}

/* The best parent's coordinates, NULL before generation 0. */
const double *
island_best_x(const struct island *is)
{
	if (is->is_gen == 0)
		return (NULL);
	return (is->is_par);
}

/* Parent k (x, sigma, fitness), NULL if there is none. */
const double *
island_ind(const struct island *is, uint32_t k)
{
	if (k >= is->is_p.mu)
		return (NULL);
	return (is->is_par + (size_t)k * is->is_w);
}

/* An empty set of migrants for an island of p's run; -1 out of memory. */
int
island_mig_init(struct island_mig *m, const struct island_params *p)
{
	memset(m, 0, sizeof(*m));
	m->m_p = p->islands;
	m->m_k = p->migrants;
	m->m_dim = p->dim;
	m->m_have = calloc(p->islands, 1);
	m->m_ind = calloc((size_t)p->islands * p->migrants,
	    island_ind_len(p) * sizeof(double));
	if (m->m_have == NULL || m->m_ind == NULL) {
		island_mig_free(m);
		return (-1);
	}
	return (0);
}

void
island_mig_clear(struct island_mig *m)
{
	memset(m->m_have, 0, m->m_p);
}

void
island_mig_free(struct island_mig *m)
{
	free(m->m_have);
	free(m->m_ind);
	memset(m, 0, sizeof(*m));
}

/*
 * The K migrants of island from (K individuals, best first), into its
 * slot: whenever they come, they wait there for island_migrate().
 */
int
island_mig_put(struct island_mig *m, uint32_t from, const double *ind)
{
	size_t	 w = 2 * (size_t)m->m_dim + 1;

	if (from >= m->m_p)
		return (-1);
	memcpy(m->m_ind + (size_t)from * m->m_k * w, ind,
	    (size_t)m->m_k * w * sizeof(double));
	m->m_have[from] = 1;
	return (0);
}

/* Island is's K best into its slot of m (is must be past generation 0). */
int
island_mig_from(struct island_mig *m, const struct island *is)
{
	if (is->is_gen == 0)
		return (-1);
	return (island_mig_put(m, is->is_idx, is->is_par));
}

/*
 * Merge the migrants: every other island's slot must be there.
 * The pool is the parents, then islands 0..p-1 but this one, in island
 * order; plus-selection keeps the best mu.  The next epoch begins.
 * Returns -1, changing nothing, if the epoch is not over, the run is, or
 * a slot is missing.
 */
int
island_migrate(struct island *is, const struct island_mig *m)
{
	size_t		 w = is->is_w, k = is->is_p.migrants, n = 0;
	uint32_t	 j;
	double		*pool;

	if (!island_epoch_done(is) || island_finished(is) ||
	    m->m_p != is->is_p.islands || m->m_k != k ||
	    m->m_dim != is->is_p.dim)
		return (-1);
	for (j = 0; j < m->m_p; j++)
		if (j != is->is_idx && !m->m_have[j])
			return (-1);
	/* The offspring buffer holds lambda; the pool may need more. */
	if ((pool = calloc((size_t)(m->m_p - 1) * k, w * sizeof(double))) ==
	    NULL)
		return (-1);
	for (j = 0; j < m->m_p; j++) {
		if (j == is->is_idx)
			continue;
		memcpy(pool + n * w, m->m_ind + (size_t)j * k * w,
		    k * w * sizeof(double));
		n += k;
	}
	is_select(is, pool, n);
	free(pool);
	is->is_epoch++;
	return (0);
}

/* The state, island_state_len() bytes. */
void
island_state_encode(const struct island *is, uint8_t *buf)
{
	size_t	 i, n = (size_t)is->is_p.mu * is->is_w;

	le32_put(buf, ISLAND_MAGIC);
	le32_put(buf + 4, is->is_idx);
	le32_put(buf + 8, is->is_epoch);
	le32_put(buf + 12, is->is_gen);
	for (i = 0; i < n; i++)
		put_f64(buf + ISLAND_STATE_HEAD + i * 8, is->is_par[i]);
}

/*
 * Check an encoded state of island i of p's run, as it is at the end of
 * epoch e; -1 with the reason.
 */
int
island_state_check(const struct island_params *p, uint32_t i, uint32_t e,
    const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	uint32_t	 gen;

	if (buf == NULL || len != island_state_len(p)) {
		snprintf(err, errlen, "a state of %zu bytes, not %zu", len,
		    island_state_len(p));
		return (-1);
	}
	if (le32_get(buf) != ISLAND_MAGIC) {
		snprintf(err, errlen, "not an island state (magic)");
		return (-1);
	}
	if (le32_get(buf + 4) != i) {
		snprintf(err, errlen, "the state of island %u, not %u",
		    le32_get(buf + 4), i);
		return (-1);
	}
	if (le32_get(buf + 8) != e) {
		snprintf(err, errlen, "a state at epoch %u, not %u",
		    le32_get(buf + 8), e);
		return (-1);
	}
	gen = le32_get(buf + 12);
	if (gen != island_epoch_end(p, e) + 1) {
		snprintf(err, errlen, "a state at generation %u, not %u",
		    gen, island_epoch_end(p, e) + 1);
		return (-1);
	}
	return (0);
}

/* Load an encoded state into is (same run, same island); -1 if unfit. */
int
island_state_decode(struct island *is, const uint8_t *buf, size_t len,
    char *err, size_t errlen)
{
	size_t		 i, n = (size_t)is->is_p.mu * is->is_w;
	uint32_t	 e;

	if (len < ISLAND_STATE_HEAD) {
		snprintf(err, errlen, "a state of %zu bytes", len);
		return (-1);
	}
	e = le32_get(buf + 8);
	if (e >= island_epochs(&is->is_p)) {
		snprintf(err, errlen, "a state at epoch %u of %u", e,
		    island_epochs(&is->is_p));
		return (-1);
	}
	if (island_state_check(&is->is_p, is->is_idx, e, buf, len, err,
	    errlen) == -1)
		return (-1);
	is->is_epoch = e;
	is->is_gen = le32_get(buf + 12);
	for (i = 0; i < n; i++)
		is->is_par[i] = get_f64(buf + ISLAND_STATE_HEAD + i * 8);
	return (0);
}

/* Individual k of an encoded state into out; -1 if there is none. */
int
island_state_ind(const struct island_params *p, const uint8_t *buf,
    size_t len, uint32_t k, double *out)
{
	size_t	 w = island_ind_len(p), i, off;

	if (k >= p->mu || len != island_state_len(p))
		return (-1);
	off = ISLAND_STATE_HEAD + (size_t)k * w * 8;
	for (i = 0; i < w; i++)
		out[i] = get_f64(buf + off + i * 8);
	return (0);
}

/* The best fitness of an encoded state (its first parent), else NaN. */
double
island_state_best(const struct island_params *p, const uint8_t *buf,
    size_t len)
{
	if (len != island_state_len(p) || le32_get(buf + 12) == 0)
		return (NAN);
	return (get_f64(buf + ISLAND_STATE_HEAD + 2 * (size_t)p->dim * 8));
}

/*
 * The head of island i's payload.  The state and the migrants follow
 * when flags has ISLAND_F_STATE: the caller writes them (as
 * island_payload_build() does).
 */
void
island_payload_head(uint8_t *buf, const struct island_params *p, uint32_t i,
    uint32_t flags, double work_ms)
{
	le32_put(buf, ISLAND_MAGIC);
	le32_put(buf + 4, p->islands);
	le32_put(buf + 8, i);
	le32_put(buf + 12, p->mu);
	le32_put(buf + 16, p->lambda);
	le32_put(buf + 20, p->dim);
	le32_put(buf + 24, p->generations);
	le32_put(buf + 28, p->migrate_every);
	le32_put(buf + 32, p->migrants);
	le32_put(buf + 36, flags);
	le64_put(buf + 40, p->seed);
	put_f64(buf + 48, work_ms);
}

/*
 * The parameters, island, flags and load of a payload, checked; -1 with
 * the reason.
 */
int
island_payload_decode(const uint8_t *buf, size_t len, struct island_params *p,
    uint32_t *i, uint32_t *flags, double *work_ms, char *err, size_t errlen)
{
	if (buf == NULL || len < ISLAND_PAYLOAD_HEAD) {
		snprintf(err, errlen, "island: a payload of %zu bytes, not "
		    "at least %d", len, ISLAND_PAYLOAD_HEAD);
		return (-1);
	}
	if (le32_get(buf) != ISLAND_MAGIC) {
		snprintf(err, errlen, "island: not an island payload (magic)");
		return (-1);
	}
	memset(p, 0, sizeof(*p));
	p->islands = le32_get(buf + 4);
	*i = le32_get(buf + 8);
	p->mu = le32_get(buf + 12);
	p->lambda = le32_get(buf + 16);
	p->dim = le32_get(buf + 20);
	p->generations = le32_get(buf + 24);
	p->migrate_every = le32_get(buf + 28);
	p->migrants = le32_get(buf + 32);
	*flags = le32_get(buf + 36);
	p->seed = le64_get(buf + 40);
	*work_ms = get_f64(buf + 48);
	if (island_params_check(p, err, errlen) == -1)
		return (-1);
	if (*i >= p->islands) {
		snprintf(err, errlen, "island: island %u of %u", *i,
		    p->islands);
		return (-1);
	}
	if ((*flags & ~(uint32_t)(ISLAND_F_SPIN | ISLAND_F_STATE)) != 0) {
		snprintf(err, errlen, "island: unknown flags 0x%x", *flags);
		return (-1);
	}
	if (!isfinite(*work_ms) || *work_ms < 0 ||
	    *work_ms > ISLAND_MAX_WORK_MS) {
		snprintf(err, errlen, "island: work_ms %g is not between 0 "
		    "and %.0f", *work_ms, ISLAND_MAX_WORK_MS);
		return (-1);
	}
	if (len != island_payload_len(p, (*flags & ISLAND_F_STATE) != 0)) {
		snprintf(err, errlen, "island: a payload of %zu bytes, not "
		    "%zu", len, island_payload_len(p,
		    (*flags & ISLAND_F_STATE) != 0));
		return (-1);
	}
	return (0);
}

/*
 * The island of a payload, ready to run its epoch: new at generation 0
 * (epoch 0), or its state at the last migration with the migrants merged.
 * -1 with the reason.
 */
int
island_epoch_from_payload(const uint8_t *buf, size_t len,
    struct island **isp, struct island_params *p, double *work_ms,
    uint32_t *flags, char *err, size_t errlen)
{
	struct island_mig	 m;
	struct island		*is;
	const uint8_t		*q;
	double			*ind;
	size_t			 w, sl, k;
	uint32_t		 i, j;
	int			 rc;
	char			 why[160];

	*isp = NULL;
	if (island_payload_decode(buf, len, p, &i, flags, work_ms, err,
	    errlen) == -1)
		return (-1);
	if ((is = island_new(p, i)) == NULL) {
		snprintf(err, errlen, "island: out of memory");
		return (-1);
	}
	if (!(*flags & ISLAND_F_STATE)) {
		*isp = is;
		return (0);
	}
	sl = island_state_len(p);
	if (island_state_decode(is, buf + ISLAND_PAYLOAD_HEAD, sl, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "island %u: %s", i, why);
		island_free(is);
		return (-1);
	}
	if (island_finished(is)) {
		snprintf(err, errlen, "island %u: its run is over", i);
		island_free(is);
		return (-1);
	}
	w = island_ind_len(p);
	if (island_mig_init(&m, p) == -1 ||
	    (ind = calloc((size_t)p->migrants * w, sizeof(double))) == NULL) {
		island_mig_free(&m);
		snprintf(err, errlen, "island: out of memory");
		island_free(is);
		return (-1);
	}
	q = buf + ISLAND_PAYLOAD_HEAD + sl;
	for (j = 0; j < p->islands; j++) {
		if (j == i)
			continue;
		for (k = 0; k < (size_t)p->migrants * w; k++)
			ind[k] = get_f64(q + k * 8);
		q += (size_t)p->migrants * w * 8;
		(void)island_mig_put(&m, j, ind);
	}
	rc = island_migrate(is, &m);
	free(ind);
	island_mig_free(&m);
	if (rc != 0) {
		snprintf(err, errlen, "island %u: cannot merge its migrants",
		    i);
		island_free(is);
		return (-1);
	}
	*isp = is;
	return (0);
}

/*
 * Island i's payload for its next epoch into buf, island_payload_len(p,
 * states != NULL) bytes: states are the p islands' encoded states at the
 * last migration (NULL for epoch 0), each island_state_len() bytes and
 * checked by the caller; island i's own goes first, then the K best of
 * every other island, in island order.  The master and r3qctl islands
 * --local build the same bytes.
 */
void
island_payload_build(uint8_t *buf, const struct island_params *p, uint32_t i,
    uint32_t flags, double work_ms, const uint8_t *const *states)
{
	size_t		 sl = island_state_len(p), ml;
	uint8_t		*q;
	uint32_t	 j;

	flags &= ~(uint32_t)ISLAND_F_STATE;
	if (states != NULL)
		flags |= ISLAND_F_STATE;
	island_payload_head(buf, p, i, flags, work_ms);
	if (states == NULL)
		return;
	q = buf + ISLAND_PAYLOAD_HEAD;
	memcpy(q, states[i], sl);
	q += sl;
	/* A state's parents are sorted: its K best are its first K. */
	ml = (size_t)p->migrants * island_ind_len(p) * 8;
	for (j = 0; j < p->islands; j++) {
		if (j == i)
			continue;
		memcpy(q, states[j] + ISLAND_STATE_HEAD, ml);
		q += ml;
	}
}

/* FNV-1a over buf, from h (0: the offset basis). */
uint64_t
island_digest(uint64_t h, const uint8_t *buf, size_t len)
{
	size_t	 i;

	if (h == 0)
		h = 0xcbf29ce484222325ULL;
	for (i = 0; i < len; i++) {
		h ^= buf[i];
		h *= IS_FNV_PRIME;
	}
	return (h);
}
