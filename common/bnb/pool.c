/*
 * The pool of open subproblems, best bound first, and the sequential
 * solver that drives searches from it: the reference for the master's
 * distributed driver, which does the same with the searches on workers.
 * Pure.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"

struct bnb_pent {
	struct bnb_sub	*e_sub;
	uint64_t	 e_seq;
};

/*
 * A binary min-heap on (bound, -jobs fixed, order of push).  It owns the
 * subproblems in it; its user owns it.
 */
struct bnb_pool {
	struct bnb_pent	*p_v;
	size_t		 p_n;
	size_t		 p_cap;
	uint64_t	 p_seq;
};

static int	 bnb_pent_less(const struct bnb_pent *, const struct bnb_pent *);
static void	 bnb_pool_up(struct bnb_pool *, size_t);
static void	 bnb_pool_down(struct bnb_pool *, size_t);
static int	 bnb_push_frontier(struct bnb_pool *, const struct bnb_frontier *,
		    int32_t);

/* Does a come out of the pool before b? */
static int
bnb_pent_less(const struct bnb_pent *a, const struct bnb_pent *b)
{
	if (a->e_sub->lb != b->e_sub->lb)
		return (a->e_sub->lb < b->e_sub->lb);
	if (a->e_sub->depth + a->e_sub->back !=
	    b->e_sub->depth + b->e_sub->back)
		return (a->e_sub->depth + a->e_sub->back >
		    b->e_sub->depth + b->e_sub->back);
	return (a->e_seq < b->e_seq);
}

/* Move entry i up to its place. */
static void
bnb_pool_up(struct bnb_pool *pl, size_t i)
{
	struct bnb_pent	 e = pl->p_v[i];

	while (i > 0 && bnb_pent_less(&e, &pl->p_v[(i - 1) / 2])) {
		pl->p_v[i] = pl->p_v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	pl->p_v[i] = e;
}

/* Move entry i down to its place. */
static void
bnb_pool_down(struct bnb_pool *pl, size_t i)
{
	struct bnb_pent	 e = pl->p_v[i];
	size_t		 c;

	while ((c = 2 * i + 1) < pl->p_n) {
		if (c + 1 < pl->p_n &&
		    bnb_pent_less(&pl->p_v[c + 1], &pl->p_v[c]))
			c++;
		if (!bnb_pent_less(&pl->p_v[c], &e))
			break;
		pl->p_v[i] = pl->p_v[c];
		i = c;
	}
	pl->p_v[i] = e;
}

/* An empty pool; NULL when out of memory. */
struct bnb_pool *
bnb_pool_new(void)
{
	return (calloc(1, sizeof(struct bnb_pool)));
}

/* Free a pool and the subproblems in it. */
void
bnb_pool_free(struct bnb_pool *pl)
{
	size_t	 i;

	if (pl == NULL)
		return;
	for (i = 0; i < pl->p_n; i++)
		free(pl->p_v[i].e_sub);
	free(pl->p_v);
	free(pl);
}

/* Put a subproblem in the pool, which then owns it; -1 when out of memory. */
int
bnb_pool_push(struct bnb_pool *pl, struct bnb_sub *sub)
{
	struct bnb_pent	*v;
	size_t		 cap;

	if (pl->p_n == pl->p_cap) {
		cap = pl->p_cap == 0 ? 256 : pl->p_cap * 2;
		if ((v = reallocarray(pl->p_v, cap, sizeof(*v))) == NULL)
			return (-1);
		pl->p_v = v;
		pl->p_cap = cap;
	}
	pl->p_v[pl->p_n].e_sub = sub;
	pl->p_v[pl->p_n].e_seq = pl->p_seq++;
	bnb_pool_up(pl, pl->p_n++);
	return (0);
}

/* Take the best subproblem out (the caller frees it); NULL when empty. */
struct bnb_sub *
bnb_pool_pop(struct bnb_pool *pl)
{
	struct bnb_sub	*sub;

	if (pl->p_n == 0)
		return (NULL);
	sub = pl->p_v[0].e_sub;
	pl->p_v[0] = pl->p_v[--pl->p_n];
	if (pl->p_n > 0)
		bnb_pool_down(pl, 0);
	return (sub);
}

/* How many subproblems the pool holds. */
size_t
bnb_pool_size(const struct bnb_pool *pl)
{
	return (pl->p_n);
}

/* The smallest bound in the pool; BNB_NONE when it is empty. */
int32_t
bnb_pool_bound(const struct bnb_pool *pl)
{
	return (pl->p_n > 0 ? pl->p_v[0].e_sub->lb : BNB_NONE);
}

/*
 * Subproblem i of the pool, in no particular order (i < bnb_pool_size()),
 * for a host that saves the pool; it stays the pool's.
 */
const struct bnb_sub *
bnb_pool_at(const struct bnb_pool *pl, size_t i)
{
	return (i < pl->p_n ? pl->p_v[i].e_sub : NULL);
}

/*
 * Drop (and free) every subproblem whose bound is not below the
 * incumbent; returns how many went.
 */
size_t
bnb_pool_prune(struct bnb_pool *pl, int32_t incumbent)
{
	size_t	 i, k = 0, gone;

	for (i = 0; i < pl->p_n; i++) {
		if (pl->p_v[i].e_sub->lb >= incumbent)
			free(pl->p_v[i].e_sub);
		else
			pl->p_v[k++] = pl->p_v[i];
	}
	gone = pl->p_n - k;
	pl->p_n = k;
	for (i = k / 2; i-- > 0;)
		bnb_pool_down(pl, i);
	return (gone);
}

/* Push a frontier's nodes under the incumbent into the pool. */
static int
bnb_push_frontier(struct bnb_pool *pl, const struct bnb_frontier *fr,
    int32_t incumbent)
{
	struct bnb_sub	*sub;
	size_t		 i;

	for (i = 0; i < fr->n; i++) {
		if (fr->v[i].lb >= incumbent)
			continue;
		if ((sub = bnb_frontier_sub(fr, i)) == NULL)
			return (-1);
		if (bnb_pool_push(pl, sub) == -1) {
			free(sub);
			return (-1);
		}
	}
	return (0);
}

/*
 * Split subproblem sub into the open subproblems of at least depth
 * placements (prefix and suffix together) below it, into out: each node
 * shallower than that is branched (explored, so counted in *nodes) and
 * its children under *inc kept; a complete permutation better than *inc
 * found on the way becomes *inc, its jobs in perm.  A node with fewer
 * placements left than that is kept as it is.  The master splits the
 * root so (--split-depth) into the first pool, and a running task's
 * subproblem one level down to re-split it (the behaviour of Hironaka
 * et al.'s branch and bound, doc/algorithms.md §5, kept for the
 * comparison).  Returns how many went into out, -1 with err set.
 */
int
bnb_split(const struct bnb_problem *pb, const struct bnb_sub *sub,
    uint32_t depth, int32_t *inc, uint16_t *perm, struct bnb_pool *out,
    uint64_t *nodes, char *err, size_t errlen)
{
	const struct bnb_instance	*inst = bnb_problem_instance(pb);
	struct bnb_pool			*work = NULL;
	struct bnb_search		*s = NULL;
	struct bnb_frontier		 fr;
	struct bnb_sub			*t;
	struct bnb_ctl			 ctl;
	_Atomic int32_t			 ai;
	const uint16_t			*bp;
	int32_t				 c;
	int				 rc = -1, kept = 0;

	bnb_frontier_init(&fr);
	if ((work = bnb_pool_new()) == NULL || (s = bnb_search_new(pb)) ==
	    NULL || (t = bnb_sub_make(sub->prefix, sub->depth, sub->prefix +
	    sub->depth, sub->back, sub->lb)) == NULL ||
	    bnb_pool_push(work, t) == -1)
		goto nomem;
	atomic_init(&ai, *inc);
	memset(&ctl, 0, sizeof(ctl));
	ctl.incumbent = &ai;
	ctl.budget = 1;
	while ((t = bnb_pool_pop(work)) != NULL) {
		if (t->lb >= atomic_load(&ai)) {
			free(t);
			continue;
		}
		if (t->depth + t->back >= depth || t->depth + t->back + 1 >=
		    inst->n) {
			if (bnb_pool_push(out, t) == -1) {
				free(t);
				goto nomem;
			}
			kept++;
			continue;
		}
		if (bnb_search_load(s, t, err, errlen) == -1) {
			free(t);
			goto out;
		}
		free(t);
		if (bnb_explore(s, &ctl) == -1)
			goto nomem;
		*nodes += bnb_search_nodes(s);
		if ((c = bnb_search_best(s, &bp)) < atomic_load(&ai)) {
			atomic_store(&ai, c);
			memcpy(perm, bp, inst->n * sizeof(*bp));
		}
		if (bnb_search_take(s, &fr, SIZE_MAX) == -1 ||
		    bnb_push_frontier(work, &fr, atomic_load(&ai)) == -1)
			goto nomem;
	}
	*inc = atomic_load(&ai);
	rc = kept;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	bnb_frontier_free(&fr);
	bnb_search_free(s);
	bnb_pool_free(work);
	return (rc);
}

/*
 * Solve a problem exactly, best bound first: pop the subproblem of the
 * smallest bound, explore it depth-first for at most opts->slice nodes,
 * push back what it left open, until the pool's best bound is not below
 * the incumbent (proved) or opts->max_nodes are explored or opts->cancel
 * is raised (not proved).  The incumbent starts at opts->incumbent, or
 * the heuristic's makespan when smaller: NEH's when opts->neh is set,
 * the iterated greedy's (seed 1) when opts->ig_iters is not 0.  sol->cmax is the
 * best makespan found, BNB_NONE when nothing beat opts->incumbent; a
 * proved sol->cmax is optimal.  -1 with err set when out of memory.
 */
int
bnb_solve(const struct bnb_problem *pb, const struct bnb_solve_opts *opts,
    struct bnb_solution *sol, char *err, size_t errlen)
{
	const struct bnb_instance	*inst = bnb_problem_instance(pb);
	struct bnb_pool			*pl = NULL;
	struct bnb_search		*s = NULL;
	struct bnb_frontier		 fr;
	struct bnb_sub			*sub = NULL;
	struct bnb_ctl			 ctl;
	_Atomic int32_t			 inc;
	const uint16_t			*perm;
	uint16_t			 neh[BNB_MAX_JOBS];
	int32_t				 c;
	uint64_t			 left;
	int				 st, rc = -1;

	memset(sol, 0, sizeof(*sol));
	sol->cmax = BNB_NONE;
	bnb_frontier_init(&fr);
	atomic_init(&inc, opts->incumbent);
	if (opts->neh || opts->ig_iters > 0) {
		c = opts->ig_iters > 0 ? bnb_ig(inst, opts->ig_iters, 1, neh) :
		    bnb_neh(inst, neh);
		if (c == -1)
			goto nomem;
		if (c < opts->incumbent) {
			atomic_store(&inc, c);
			sol->cmax = c;
			memcpy(sol->perm, neh, inst->n * sizeof(*neh));
		}
	}
	if ((pl = bnb_pool_new()) == NULL || (s = bnb_search_new(pb)) ==
	    NULL || (sub = bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0))) ==
	    NULL || bnb_pool_push(pl, sub) == -1) {
		free(sub);
		goto nomem;
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.incumbent = &inc;
	ctl.cancel = opts->cancel;
	for (;;) {
		if (bnb_pool_bound(pl) >= atomic_load(&inc))
			break;
		if ((opts->max_nodes > 0 && sol->nodes >= opts->max_nodes) ||
		    (opts->cancel != NULL && atomic_load(opts->cancel) != 0))
			break;
		sub = bnb_pool_pop(pl);
		sol->pops++;
		if (bnb_search_load(s, sub, err, errlen) == -1) {
			free(sub);
			goto out;
		}
		free(sub);
		ctl.budget = opts->slice;
		if (opts->max_nodes > 0) {
			left = opts->max_nodes - sol->nodes;
			if (ctl.budget == 0 || ctl.budget > left)
				ctl.budget = left;
		}
		st = bnb_explore(s, &ctl);
		sol->nodes += bnb_search_nodes(s);
		if ((c = bnb_search_best(s, &perm)) < atomic_load(&inc)) {
			atomic_store(&inc, c);
			sol->cmax = c;
			memcpy(sol->perm, perm, inst->n * sizeof(*perm));
			bnb_pool_prune(pl, c);
		}
		if (st != BNB_EXHAUSTED) {
			if (bnb_search_take(s, &fr, SIZE_MAX) == -1 ||
			    bnb_push_frontier(pl, &fr, atomic_load(&inc)) == -1)
				goto nomem;
		}
		if (bnb_pool_size(pl) > sol->pool_max)
			sol->pool_max = bnb_pool_size(pl);
	}
	c = bnb_pool_bound(pl);
	sol->proved = c >= atomic_load(&inc);
	sol->bound = sol->proved ? atomic_load(&inc) : c;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	bnb_frontier_free(&fr);
	bnb_search_free(s);
	bnb_pool_free(pl);
	return (rc);
}
