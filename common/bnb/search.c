/*
 * Depth-first exploration of one flow-shop subproblem with a node budget,
 * and the frontiers it hands back.  Pure: the flags it reads are data
 * another thread may write, never a thread of its own.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/bnb-int.h"
#include "bnb/pfsp.h"

/* A child of the node being branched, before it goes on the stack. */
struct bnb_kid {
	int32_t		 lb;
	uint16_t	 job;
};

/*
 * One search.  The stack's depths never decrease from the bottom up, and
 * every entry of depth d extends path[0 .. d - 1]: popping an entry of
 * depth d changes path from d on only.  front[d * m + k] is machine k's
 * completion time after path[0 .. d - 1].  Owned by its host; it points
 * to the problem, which must outlive it.
 */
struct bnb_search {
	const struct bnb_problem	*s_pb;
	uint32_t			 s_n;
	uint32_t			 s_m;
	uint16_t			 s_path[BNB_MAX_JOBS];
	uint32_t			 s_pathlen;
	uint8_t				 s_used[BNB_MAX_JOBS];
	int32_t				*s_front;
	struct bnb_open			*s_stack;
	size_t				 s_sp;
	size_t				 s_cap;
	uint64_t			 s_nodes;
	int				 s_halfdone;
	int32_t				 s_best;
	uint16_t			 s_bestperm[BNB_MAX_JOBS];
	struct bnb_agg			 s_ag;
	struct bnb_kid			 s_kids[BNB_MAX_JOBS];
	uint16_t			 s_left[BNB_MAX_JOBS];
	int32_t				 s_fc[BNB_MAX_MACHINES];
};

static void	 bnb_search_goto(struct bnb_search *, const struct bnb_open *);
static void	 bnb_search_leaf(struct bnb_search *, const struct bnb_ctl *,
		    int32_t, uint16_t);
static size_t	 bnb_donation(const struct bnb_search *);

/* A subproblem of the given prefix and bound; NULL when out of memory. */
struct bnb_sub *
bnb_sub_new(const uint16_t *prefix, uint32_t depth, int32_t lb)
{
	struct bnb_sub	*s;

	if ((s = malloc(sizeof(*s) + depth * sizeof(uint16_t))) == NULL)
		return (NULL);
	s->lb = lb;
	s->depth = depth;
	if (depth > 0)
		memcpy(s->prefix, prefix, depth * sizeof(uint16_t));
	return (s);
}

/* An empty frontier. */
void
bnb_frontier_init(struct bnb_frontier *fr)
{
	memset(fr, 0, sizeof(*fr));
}

/* Forget a frontier's nodes, keeping its memory. */
void
bnb_frontier_reset(struct bnb_frontier *fr)
{
	fr->n = 0;
	fr->pathlen = 0;
}

/* Free what a frontier holds. */
void
bnb_frontier_free(struct bnb_frontier *fr)
{
	free(fr->path);
	free(fr->v);
	bnb_frontier_init(fr);
}

/* Add an open node to a frontier; -1 when out of memory. */
int
bnb_frontier_add(struct bnb_frontier *fr, int32_t lb, uint16_t depth,
    uint16_t job)
{
	struct bnb_open	*v;
	size_t		 cap;

	if (fr->path == NULL &&
	    (fr->path = calloc(BNB_MAX_JOBS, sizeof(*fr->path))) == NULL)
		return (-1);
	if (fr->n == fr->cap) {
		cap = fr->cap == 0 ? 64 : fr->cap * 2;
		if ((v = reallocarray(fr->v, cap, sizeof(*v))) == NULL)
			return (-1);
		fr->v = v;
		fr->cap = cap;
	}
	fr->v[fr->n].lb = lb;
	fr->v[fr->n].depth = depth;
	fr->v[fr->n].job = job;
	fr->n++;
	return (0);
}

/* Open node i of a frontier as a subproblem; NULL when out of memory. */
struct bnb_sub *
bnb_frontier_sub(const struct bnb_frontier *fr, size_t i)
{
	const struct bnb_open	*o = &fr->v[i];
	struct bnb_sub		*s;

	if ((s = bnb_sub_new(fr->path, o->depth + (o->job != BNB_NOJOB),
	    o->lb)) == NULL)
		return (NULL);
	if (o->job != BNB_NOJOB)
		s->prefix[o->depth] = o->job;
	return (s);
}

/* A search over a problem, with all its memory; NULL when out of it. */
struct bnb_search *
bnb_search_new(const struct bnb_problem *pb)
{
	struct bnb_search	*s;
	size_t			 n = pb->inst.n;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (NULL);
	s->s_pb = pb;
	s->s_n = pb->inst.n;
	s->s_m = pb->inst.m;
	s->s_cap = n * (n + 1) / 2 + 2;
	s->s_best = BNB_NONE;
	if ((s->s_front = calloc((n + 1) * s->s_m, sizeof(int32_t))) ==
	    NULL || (s->s_stack = calloc(s->s_cap, sizeof(*s->s_stack))) ==
	    NULL) {
		bnb_search_free(s);
		return (NULL);
	}
	return (s);
}

/* Free a search. */
void
bnb_search_free(struct bnb_search *s)
{
	if (s == NULL)
		return;
	free(s->s_front);
	free(s->s_stack);
	free(s);
}

/*
 * Load the subproblem of the prefix's depth jobs with bound lb (which
 * only decides whether the incumbent prunes it at once): one open node,
 * no nodes explored, no best.  -1 with err set if the prefix is not
 * made of distinct jobs of the instance.
 */
int
bnb_search_start(struct bnb_search *s, const uint16_t *prefix,
    uint32_t depth, int32_t lb, char *err, size_t errlen)
{
	const struct bnb_instance	*inst = &s->s_pb->inst;
	uint32_t			 i;

	if (bnb_perm_check(prefix, depth, s->s_n) == -1) {
		snprintf(err, errlen, "the prefix of %u jobs is not made of "
		    "distinct jobs 1 to %u", depth, s->s_n);
		return (-1);
	}
	memset(s->s_used, 0, s->s_n);
	memset(s->s_front, 0, s->s_m * sizeof(int32_t));
	for (i = 0; i < depth; i++) {
		s->s_path[i] = prefix[i];
		s->s_used[prefix[i]] = 1;
		bnb_front_add(inst, s->s_front + (size_t)i * s->s_m,
		    prefix[i], s->s_front + (size_t)(i + 1) * s->s_m);
	}
	s->s_pathlen = depth;
	s->s_stack[0].lb = lb;
	s->s_stack[0].depth = (uint16_t)depth;
	s->s_stack[0].job = BNB_NOJOB;
	s->s_sp = 1;
	s->s_nodes = 0;
	s->s_halfdone = 0;
	s->s_best = BNB_NONE;
	return (0);
}

/* Nodes explored since bnb_search_start(). */
uint64_t
bnb_search_nodes(const struct bnb_search *s)
{
	return (s->s_nodes);
}

/* Open nodes left. */
size_t
bnb_search_open(const struct bnb_search *s)
{
	return (s->s_sp);
}

/*
 * The best makespan this search found (below the incumbent of its time),
 * its permutation in *perm when perm is not NULL; BNB_NONE if none.
 */
int32_t
bnb_search_best(const struct bnb_search *s, const uint16_t **perm)
{
	if (perm != NULL)
		*perm = s->s_best != BNB_NONE ? s->s_bestperm : NULL;
	return (s->s_best);
}

/*
 * Move up to max open nodes, the nearest the root first (the bottom of
 * the stack), into fr (reset first).  They are no longer this search's.
 * Returns how many, or -1 when out of memory (nothing moved).
 */
int
bnb_search_take(struct bnb_search *s, struct bnb_frontier *fr, size_t max)
{
	size_t	 i, k = s->s_sp < max ? s->s_sp : max;

	bnb_frontier_reset(fr);
	if (k == 0)
		return (0);
	for (i = 0; i < k; i++)
		if (bnb_frontier_add(fr, s->s_stack[i].lb,
		    s->s_stack[i].depth, s->s_stack[i].job) == -1) {
			bnb_frontier_reset(fr);
			return (-1);
		}
	fr->pathlen = s->s_stack[k - 1].depth;
	memcpy(fr->path, s->s_path, fr->pathlen * sizeof(*fr->path));
	memmove(s->s_stack, s->s_stack + k,
	    (s->s_sp - k) * sizeof(*s->s_stack));
	s->s_sp -= k;
	return ((int)k);
}

/*
 * How many nodes a donation gives: every node of the shallowest depth on
 * the stack (the largest subtrees), or when they are all of one depth the
 * bottom half; none from fewer than two nodes.
 */
static size_t
bnb_donation(const struct bnb_search *s)
{
	size_t	 k = 0;

	if (s->s_sp < 2)
		return (0);
	while (k < s->s_sp && s->s_stack[k].depth == s->s_stack[0].depth)
		k++;
	return (k < s->s_sp ? k : s->s_sp / 2);
}

/* Make an open node the current one: its prefix in path, front, used. */
static void
bnb_search_goto(struct bnb_search *s, const struct bnb_open *o)
{
	uint32_t	 d = o->depth, i;

	for (i = d; i < s->s_pathlen; i++)
		s->s_used[s->s_path[i]] = 0;
	s->s_pathlen = d;
	if (o->job == BNB_NOJOB)
		return;
	s->s_path[d] = o->job;
	s->s_used[o->job] = 1;
	bnb_front_add(&s->s_pb->inst, s->s_front + (size_t)d * s->s_m, o->job,
	    s->s_front + (size_t)(d + 1) * s->s_m);
	s->s_pathlen = d + 1;
}

/* A complete permutation of makespan c: path, then job j unless none. */
static void
bnb_search_leaf(struct bnb_search *s, const struct bnb_ctl *ctl, int32_t c,
    uint16_t j)
{
	s->s_best = c;
	memcpy(s->s_bestperm, s->s_path, s->s_pathlen * sizeof(uint16_t));
	if (j != BNB_NOJOB)
		s->s_bestperm[s->s_pathlen] = j;
	if (ctl->found != NULL)
		ctl->found(ctl->arg, c, s->s_bestperm);
}

/*
 * Explore depth-first until the subtree is exhausted or ctl says stop
 * (struct bnb_ctl, enum bnb_stop).  Each node: the incumbent is read,
 * the cancel and donate flags looked at, the budget checked; then the
 * top of the stack is popped and, unless its bound is not below the
 * incumbent, branched: every unscheduled job appended, bounded, and the
 * children under the incumbent pushed, the smallest bound on top (ties:
 * the smaller job).  Children that complete the permutation are
 * evaluated at once, not pushed.  Returns the enum bnb_stop, or -1 when
 * a donation found no memory (nothing is lost: the nodes stay open).
 */
int
bnb_explore(struct bnb_search *s, const struct bnb_ctl *ctl)
{
	const struct bnb_problem	*pb = s->s_pb;
	const int32_t			*f;
	struct bnb_open			 o;
	struct bnb_kid			 kid;
	uint32_t			 n = s->s_n, m = s->s_m, i, k, nleft, nk;
	int32_t				 inc, lb;
	size_t				 give;
	uint16_t			 j;

	while (s->s_sp > 0) {
		if (ctl->cancel != NULL && atomic_load_explicit(ctl->cancel,
		    memory_order_relaxed) != 0)
			return (BNB_CANCELLED);
		if (ctl->donate != NULL && ctl->donated != NULL &&
		    atomic_load_explicit(ctl->donate,
		    memory_order_relaxed) != 0 &&
		    (give = bnb_donation(s)) > 0) {
			if (bnb_search_take(s, ctl->donated, give) == -1)
				return (-1);
			atomic_store(ctl->donate, 0);
			return (BNB_DONATED);
		}
		if (ctl->budget > 0 && s->s_nodes >= ctl->budget)
			return (BNB_BUDGET);

		inc = s->s_best;
		if (ctl->incumbent != NULL && (lb = atomic_load_explicit(
		    ctl->incumbent, memory_order_relaxed)) < inc)
			inc = lb;
		o = s->s_stack[--s->s_sp];
		if (o.lb >= inc)
			continue;
		bnb_search_goto(s, &o);
		s->s_nodes++;
		if (!s->s_halfdone && ctl->budget > 0 &&
		    s->s_nodes * 2 >= ctl->budget) {
			s->s_halfdone = 1;
			if (ctl->half != NULL)
				ctl->half(ctl->arg);
		}

		f = s->s_front + (size_t)s->s_pathlen * m;
		if (s->s_pathlen == n) {
			if (f[m - 1] < inc)
				bnb_search_leaf(s, ctl, f[m - 1], BNB_NOJOB);
			continue;
		}
		nleft = 0;
		for (i = 0; i < n; i++)
			if (!s->s_used[i])
				s->s_left[nleft++] = (uint16_t)i;
		if (nleft > 1)
			bnb_agg_make(pb, s->s_left, nleft, &s->s_ag);
		nk = 0;
		for (i = 0; i < nleft; i++) {
			j = s->s_left[i];
			bnb_front_add(&pb->inst, f, j, s->s_fc);
			if (nleft == 1) {
				if (s->s_fc[m - 1] < inc) {
					bnb_search_leaf(s, ctl, s->s_fc[m - 1],
					    j);
					inc = s->s_best;
				}
				continue;
			}
			lb = bnb_child_bound(pb, &s->s_ag, s->s_used, nleft,
			    s->s_fc, j, inc);
			if (lb >= inc)
				continue;
			/* Kept by decreasing bound, then job: j is largest. */
			kid.lb = lb;
			kid.job = j;
			for (k = nk; k > 0 && s->s_kids[k - 1].lb <= lb; k--)
				s->s_kids[k] = s->s_kids[k - 1];
			s->s_kids[k] = kid;
			nk++;
		}
		for (k = 0; k < nk; k++) {
			s->s_stack[s->s_sp].lb = s->s_kids[k].lb;
			s->s_stack[s->s_sp].depth = (uint16_t)s->s_pathlen;
			s->s_stack[s->s_sp].job = s->s_kids[k].job;
			s->s_sp++;
		}
	}
	return (BNB_EXHAUSTED);
}
