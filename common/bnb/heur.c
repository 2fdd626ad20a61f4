/*
 * Upper bounds for the search to start from: NEH, and the iterated greedy
 * of Ruiz and Stuetzle (2007) on top of it, both with Taillard's (1990)
 * acceleration of insertions.  Pure and deterministic: the iterated
 * greedy draws from its own generator, seeded by the caller.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"

#define IG_DESTROY	4	/* jobs taken out per iteration */
#define IG_TEMP		0.4	/* acceptance temperature factor */

/* Scratch for insertions: heads and tails of a sequence, (n + 1) x m. */
struct bnb_heur {
	const struct bnb_instance	*h_inst;
	int32_t				*h_e;
	int32_t				*h_q;
	int32_t				*h_f;
	uint64_t			 h_rng;
};

static int	 heur_init(struct bnb_heur *, const struct bnb_instance *,
		    uint64_t);
static void	 heur_free(struct bnb_heur *);
static int32_t	 heur_insert(struct bnb_heur *, const uint16_t *, uint32_t,
		    uint16_t, uint32_t *);
static void	 heur_put(uint16_t *, uint32_t, uint32_t, uint16_t);
static uint32_t	 heur_rnd(struct bnb_heur *, uint32_t);
static int32_t	 heur_neh(struct bnb_heur *, uint16_t *);
static int32_t	 heur_local(struct bnb_heur *, uint16_t *, int32_t);

/* Allocate the scratch; -1 when out of memory. */
static int
heur_init(struct bnb_heur *h, const struct bnb_instance *inst, uint64_t seed)
{
	size_t	 sz = ((size_t)inst->n + 1) * inst->m;

	memset(h, 0, sizeof(*h));
	h->h_inst = inst;
	h->h_rng = seed * 2 + 1;
	h->h_e = calloc(sz, sizeof(int32_t));
	h->h_q = calloc(sz, sizeof(int32_t));
	h->h_f = calloc(inst->m, sizeof(int32_t));
	if (h->h_e == NULL || h->h_q == NULL || h->h_f == NULL) {
		heur_free(h);
		return (-1);
	}
	return (0);
}

/* Free the scratch. */
static void
heur_free(struct bnb_heur *h)
{
	free(h->h_e);
	free(h->h_q);
	free(h->h_f);
}

/* xorshift64*: a draw below n. */
static uint32_t
heur_rnd(struct bnb_heur *h, uint32_t n)
{
	h->h_rng ^= h->h_rng >> 12;
	h->h_rng ^= h->h_rng << 25;
	h->h_rng ^= h->h_rng >> 27;
	return ((uint32_t)((h->h_rng * 2685821657736338717ULL) >> 33) % n);
}

/*
 * The best place to insert job j into seq[0 .. len - 1] (the first of the
 * smallest makespans) in *pos, and that makespan, in O(len m): Taillard's
 * heads e, tails q and the inserted job's heads f.
 */
static int32_t
heur_insert(struct bnb_heur *h, const uint16_t *seq, uint32_t len,
    uint16_t j, uint32_t *pos)
{
	const struct bnb_instance	*inst = h->h_inst;
	uint32_t			 n = inst->n, m = inst->m, i, k;
	int32_t				*e = h->h_e, *q = h->h_q, *f = h->h_f;
	int32_t				 a, b, c, best = INT32_MAX;

	/* e[(i + 1) * m + k]: head of seq[i]; e[0 .. m - 1] = 0. */
	memset(e, 0, m * sizeof(*e));
	for (i = 0; i < len; i++)
		for (k = 0; k < m; k++) {
			a = e[i * m + k];
			b = k > 0 ? e[(i + 1) * m + k - 1] : 0;
			e[(i + 1) * m + k] = (a > b ? a : b) +
			    inst->p[(size_t)k * n + seq[i]];
		}
	/* q[i * m + k]: tail from seq[i] on; q[len * m ..] = 0. */
	memset(q + (size_t)len * m, 0, m * sizeof(*q));
	for (i = len; i-- > 0;)
		for (k = m; k-- > 0;) {
			a = q[(i + 1) * m + k];
			b = k + 1 < m ? q[i * m + k + 1] : 0;
			q[i * m + k] = (a > b ? a : b) +
			    inst->p[(size_t)k * n + seq[i]];
		}
	*pos = 0;
	for (i = 0; i <= len; i++) {
		c = 0;
		for (k = 0; k < m; k++) {
			a = k > 0 ? f[k - 1] : 0;
			b = e[i * m + k];
			f[k] = (a > b ? a : b) + inst->p[(size_t)k * n + j];
			if (f[k] + q[i * m + k] > c)
				c = f[k] + q[i * m + k];
		}
		if (c < best) {
			best = c;
			*pos = i;
		}
	}
	return (best);
}

/* Insert j at pos into seq[0 .. len - 1]. */
static void
heur_put(uint16_t *seq, uint32_t len, uint32_t pos, uint16_t j)
{
	memmove(seq + pos + 1, seq + pos, (len - pos) * sizeof(*seq));
	seq[pos] = j;
}

/* NEH into perm; its makespan. */
static int32_t
heur_neh(struct bnb_heur *h, uint16_t *perm)
{
	const struct bnb_instance	*inst = h->h_inst;
	uint16_t			 order[BNB_MAX_JOBS], t;
	int32_t				 tot[BNB_MAX_JOBS], c = 0;
	uint32_t			 n = inst->n, i, j, k, pos;

	for (j = 0; j < n; j++) {
		order[j] = (uint16_t)j;
		tot[j] = 0;
		for (k = 0; k < inst->m; k++)
			tot[j] += inst->p[(size_t)k * n + j];
	}
	/* Insertion sort, stable: ties keep the smaller job first. */
	for (i = 1; i < n; i++) {
		t = order[i];
		for (j = i; j > 0 && tot[order[j - 1]] < tot[t]; j--)
			order[j] = order[j - 1];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		c = heur_insert(h, perm, i, order[i], &pos);
		heur_put(perm, i, pos, order[i]);
	}
	return (c);
}

/*
 * Insertion local search: take each job out in turn (a random order)
 * and put it back at its best place, while that shortens the schedule.
 * Returns the makespan.
 */
static int32_t
heur_local(struct bnb_heur *h, uint16_t *perm, int32_t c)
{
	uint16_t	 order[BNB_MAX_JOBS], t;
	uint32_t	 n = h->h_inst->n, i, r, at, pos;
	int32_t		 nc;
	int		 better = 1;

	for (i = 0; i < n; i++)
		order[i] = perm[i];
	for (i = n; i > 1; i--) {
		r = heur_rnd(h, i);
		t = order[i - 1];
		order[i - 1] = order[r];
		order[r] = t;
	}
	while (better) {
		better = 0;
		for (i = 0; i < n; i++) {
			for (at = 0; perm[at] != order[i]; at++)
				;
			memmove(perm + at, perm + at + 1,
			    (n - at - 1) * sizeof(*perm));
			nc = heur_insert(h, perm, n - 1, order[i], &pos);
			if (nc < c) {
				c = nc;
				better = 1;
			} else
				pos = at;
			heur_put(perm, n - 1, pos, order[i]);
		}
	}
	return (c);
}

/*
 * NEH (Nawaz, Enscore and Ham 1983): jobs by decreasing total work, each
 * inserted where the partial makespan is smallest.  perm gets n jobs;
 * returns the makespan, -1 when out of memory.
 */
int32_t
bnb_neh(const struct bnb_instance *inst, uint16_t *perm)
{
	struct bnb_heur	 h;
	int32_t		 c;

	if (heur_init(&h, inst, 0) == -1)
		return (-1);
	c = heur_neh(&h, perm);
	heur_free(&h);
	return (c);
}

/*
 * The iterated greedy of Ruiz and Stuetzle from NEH, iters iterations:
 * take IG_DESTROY random jobs out, put each back at its best place, local
 * search, accept a worse schedule with the probability of their
 * simulated annealing at a constant temperature.  perm gets the best
 * permutation seen; returns its makespan, -1 when out of memory.
 */
int32_t
bnb_ig(const struct bnb_instance *inst, uint32_t iters, uint64_t seed,
    uint16_t *perm)
{
	struct bnb_heur	 h;
	uint16_t	 cur[BNB_MAX_JOBS], cand[BNB_MAX_JOBS], out[IG_DESTROY];
	uint32_t	 n = inst->n, it, d, i, r, pos, len;
	int32_t		 best, c, cc;
	double		 temp, sum = 0.0;

	if (heur_init(&h, inst, seed) == -1)
		return (-1);
	best = heur_neh(&h, perm);
	if (n > IG_DESTROY)
		best = heur_local(&h, perm, best);
	memcpy(cur, perm, n * sizeof(*cur));
	c = best;
	for (i = 0; i < (size_t)n * inst->m; i++)
		sum += inst->p[i];
	temp = IG_TEMP * sum / ((double)n * inst->m * 10.0);
	for (it = 0; it < iters && n > IG_DESTROY; it++) {
		memcpy(cand, cur, n * sizeof(*cand));
		len = n;
		for (d = 0; d < IG_DESTROY; d++) {
			r = heur_rnd(&h, len);
			out[d] = cand[r];
			memmove(cand + r, cand + r + 1,
			    (len - r - 1) * sizeof(*cand));
			len--;
		}
		cc = 0;
		for (d = 0; d < IG_DESTROY; d++) {
			cc = heur_insert(&h, cand, len, out[d], &pos);
			heur_put(cand, len++, pos, out[d]);
		}
		cc = heur_local(&h, cand, cc);
		if (cc <= c || (temp > 0.0 &&
		    heur_rnd(&h, 1u << 30) < exp(-(cc - c) / temp) *
		    (double)(1u << 30))) {
			memcpy(cur, cand, n * sizeof(*cur));
			c = cc;
			if (c < best) {
				best = c;
				memcpy(perm, cur, n * sizeof(*perm));
			}
		}
	}
	heur_free(&h);
	return (best);
}
