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
 * every entry of depth d extends path[0 .. d - 1] (placements, see
 * pfsp.h): popping an entry of depth d changes path from d on only.
 * front[d * m + k] is machine k's completion time after the prefix that
 * path[0 .. d - 1] places, back[d * m + k] its tail before their suffix.
 * kids holds the children of the node being branched, forward ones from
 * 0, backward ones from BNB_MAX_JOBS.  Owned by its host; it points to
 * the problem, which must outlive it.
 */
struct bnb_search {
	const struct bnb_problem	*s_pb;
	uint32_t			 s_n;
	uint32_t			 s_m;
	uint16_t			 s_path[BNB_MAX_JOBS];
	uint32_t			 s_pathlen;
	uint8_t				 s_used[BNB_MAX_JOBS];
	int32_t				*s_front;
	int32_t				*s_back;
	struct bnb_open			*s_stack;
	size_t				 s_sp;
	size_t				 s_cap;
	uint64_t			 s_nodes;
	uint64_t			 s_pruned;	/* by ctl->incumbent
							   below ctl->base */
	int				 s_halfdone;
	int32_t				 s_best;
	uint16_t			 s_bestperm[BNB_MAX_JOBS];
	struct bnb_agg			 s_ag;
	struct bnb_kid			 s_kids[2 * BNB_MAX_JOBS];
	uint16_t			 s_left[BNB_MAX_JOBS];
	int32_t				 s_fc[BNB_MAX_MACHINES];
};

static void	 bnb_search_goto(struct bnb_search *, const struct bnb_open *);
static void	 bnb_search_leaf(struct bnb_search *, const struct bnb_ctl *,
		    int32_t, uint16_t);
static size_t	 bnb_donation(const struct bnb_search *);
static int	 bnb_search_load_ps(struct bnb_search *, const uint16_t *,
		    uint32_t, const uint16_t *, uint32_t, int32_t, char *,
		    size_t);
static uint32_t	 bnb_kids_sort(struct bnb_kid *, uint32_t, int32_t,
		    int64_t *);

/* A subproblem of the given prefix and bound; NULL when out of memory. */
struct bnb_sub *
bnb_sub_new(const uint16_t *prefix, uint32_t depth, int32_t lb)
{
	return (bnb_sub_make(prefix, depth, NULL, 0, lb));
}

/*
 * A subproblem of the given prefix, suffix and bound; NULL when out of
 * memory.
 */
struct bnb_sub *
bnb_sub_make(const uint16_t *prefix, uint32_t depth, const uint16_t *suffix,
    uint32_t back, int32_t lb)
{
	struct bnb_sub	*s;

	if ((s = malloc(sizeof(*s) + (depth + back) * sizeof(uint16_t))) ==
	    NULL)
		return (NULL);
	s->lb = lb;
	s->depth = depth;
	s->back = back;
	if (depth > 0)
		memcpy(s->prefix, prefix, depth * sizeof(uint16_t));
	if (back > 0)
		memcpy(s->prefix + depth, suffix, back * sizeof(uint16_t));
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

/*
 * Open node i of a frontier as a subproblem: its forward placements in
 * order make the prefix, its backward ones the suffix from the last job
 * on.  NULL when out of memory.
 */
struct bnb_sub *
bnb_frontier_sub(const struct bnb_frontier *fr, size_t i)
{
	const struct bnb_open	*o = &fr->v[i];
	struct bnb_sub		*s;
	uint32_t		 d, len, nb = 0, nf = 0, e;
	uint16_t		 pl;

	len = o->depth + (o->job != BNB_NOJOB);
	for (d = 0; d < len; d++)
		if ((d < o->depth ? fr->path[d] : o->job) & BNB_BACK)
			nb++;
	if ((s = malloc(sizeof(*s) + len * sizeof(uint16_t))) == NULL)
		return (NULL);
	s->lb = o->lb;
	s->depth = len - nb;
	s->back = nb;
	for (d = 0, e = len; d < len; d++) {
		pl = d < o->depth ? fr->path[d] : o->job;
		if (pl & BNB_BACK)
			s->prefix[--e] = BNB_JOB(pl);
		else
			s->prefix[nf++] = pl;
	}
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
	    NULL || (s->s_back = calloc((n + 1) * s->s_m,
	    sizeof(int32_t))) == NULL || (s->s_stack = calloc(s->s_cap, sizeof(*s->s_stack))) ==
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
	free(s->s_back);
	free(s->s_stack);
	free(s);
}

/* Load a subproblem without a suffix: bnb_search_load(). */
int
bnb_search_start(struct bnb_search *s, const uint16_t *prefix,
    uint32_t depth, int32_t lb, char *err, size_t errlen)
{
	return (bnb_search_load_ps(s, prefix, depth, NULL, 0, lb, err,
	    errlen));
}

/*
 * Load a subproblem (its bound only decides whether the incumbent prunes
 * it at once): one open node, no nodes explored, no best.  -1 with err
 * set if its prefix and suffix are not made of distinct jobs of the
 * instance.
 */
int
bnb_search_load(struct bnb_search *s, const struct bnb_sub *sub, char *err,
    size_t errlen)
{
	return (bnb_search_load_ps(s, sub->prefix, sub->depth,
	    sub->prefix + sub->depth, sub->back, sub->lb, err, errlen));
}

/*
 * Load prefix[0 .. depth - 1] and suffix[0 .. back - 1] as path
 * placements: the prefix forward, then the suffix backward from its last
 * job.
 */
static int
bnb_search_load_ps(struct bnb_search *s, const uint16_t *prefix,
    uint32_t depth, const uint16_t *suffix, uint32_t back, int32_t lb,
    char *err, size_t errlen)
{
	const struct bnb_instance	*inst = &s->s_pb->inst;
	uint16_t			 all[BNB_MAX_JOBS];
	int32_t				*f, *b;
	uint32_t			 i, d;

	if (depth > s->s_n || back > s->s_n - depth) {
		snprintf(err, errlen, "a prefix of %u and a suffix of %u "
		    "jobs: more than %u", depth, back, s->s_n);
		return (-1);
	}
	if (depth > 0)
		memcpy(all, prefix, depth * sizeof(*all));
	if (back > 0)
		memcpy(all + depth, suffix, back * sizeof(*all));
	if (bnb_perm_check(all, depth + back, s->s_n) == -1) {
		snprintf(err, errlen, "the prefix of %u and suffix of %u jobs "
		    "are not made of distinct jobs 1 to %u", depth, back,
		    s->s_n);
		return (-1);
	}
	memset(s->s_used, 0, s->s_n);
	memset(s->s_front, 0, s->s_m * sizeof(int32_t));
	memset(s->s_back, 0, s->s_m * sizeof(int32_t));
	for (d = 0; d < depth + back; d++) {
		f = s->s_front + (size_t)d * s->s_m;
		b = s->s_back + (size_t)d * s->s_m;
		if (d < depth) {
			i = prefix[d];
			s->s_path[d] = (uint16_t)i;
			bnb_front_add(inst, f, (uint16_t)i, f + s->s_m);
			memcpy(b + s->s_m, b, s->s_m * sizeof(int32_t));
		} else {
			i = suffix[back - 1 - (d - depth)];
			s->s_path[d] = (uint16_t)(i | BNB_BACK);
			bnb_back_add(inst, b, (uint16_t)i, b + s->s_m);
			memcpy(f + s->s_m, f, s->s_m * sizeof(int32_t));
		}
		s->s_used[i] = 1;
	}
	s->s_pathlen = depth + back;
	s->s_stack[0].lb = lb;
	s->s_stack[0].depth = (uint16_t)(depth + back);
	s->s_stack[0].job = BNB_NOJOB;
	s->s_sp = 1;
	s->s_nodes = 0;
	s->s_pruned = 0;
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

/*
 * Nodes popped since bnb_search_start() that only the host's incumbent
 * pruned: under ctl->base (the incumbent the search was given) and under
 * the search's own best, so a lower incumbent that came while it ran
 * (incumbent exchange) saved them.
 */
uint64_t
bnb_search_pruned(const struct bnb_search *s)
{
	return (s->s_pruned);
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

/*
 * Make an open node the current one: its placements in path, used, its
 * front and back times.
 */
static void
bnb_search_goto(struct bnb_search *s, const struct bnb_open *o)
{
	const int32_t	*f, *b;
	uint32_t	 d = o->depth, i, m = s->s_m;
	uint16_t	 j;

	for (i = d; i < s->s_pathlen; i++)
		s->s_used[BNB_JOB(s->s_path[i])] = 0;
	s->s_pathlen = d;
	if (o->job == BNB_NOJOB)
		return;
	j = BNB_JOB(o->job);
	s->s_path[d] = o->job;
	s->s_used[j] = 1;
	f = s->s_front + (size_t)d * m;
	b = s->s_back + (size_t)d * m;
	if (o->job & BNB_BACK) {
		bnb_back_add(&s->s_pb->inst, b, j, s->s_back + (size_t)(d + 1) *
		    m);
		memcpy(s->s_front + (size_t)(d + 1) * m, f, m * sizeof(*f));
	} else {
		bnb_front_add(&s->s_pb->inst, f, j, s->s_front + (size_t)(d +
		    1) * m);
		memcpy(s->s_back + (size_t)(d + 1) * m, b, m * sizeof(*b));
	}
	s->s_pathlen = d + 1;
}

/*
 * A complete permutation of makespan c: the path's placements, then job
 * j forward unless none.
 */
static void
bnb_search_leaf(struct bnb_search *s, const struct bnb_ctl *ctl, int32_t c,
    uint16_t j)
{
	uint32_t	 i, a = 0, z = s->s_n;

	s->s_best = c;
	for (i = 0; i < s->s_pathlen; i++) {
		if (s->s_path[i] & BNB_BACK)
			s->s_bestperm[--z] = BNB_JOB(s->s_path[i]);
		else
			s->s_bestperm[a++] = s->s_path[i];
	}
	if (j != BNB_NOJOB)
		s->s_bestperm[a] = j;
	if (ctl->found != NULL)
		ctl->found(ctl->arg, c, s->s_bestperm);
}

/*
 * Keep the children of kids[0 .. nk - 1] under the incumbent, by
 * decreasing bound then decreasing job (they come by increasing job), in
 * place; returns how many, the sum of all the children's bounds (each at
 * most inc) in *sum.
 */
static uint32_t
bnb_kids_sort(struct bnb_kid *kids, uint32_t nk, int32_t inc, int64_t *sum)
{
	struct bnb_kid	 kid;
	uint32_t	 i, k, kept = 0;

	*sum = 0;
	for (i = 0; i < nk; i++) {
		kid = kids[i];
		*sum += kid.lb < inc ? kid.lb : inc;
		if (kid.lb >= inc)
			continue;
		for (k = kept; k > 0 && kids[k - 1].lb <= kid.lb; k--)
			kids[k] = kids[k - 1];
		kids[k] = kid;
		kept++;
	}
	return (kept);
}

/*
 * Explore depth-first until the subtree is exhausted or ctl says stop
 * (struct bnb_ctl, enum bnb_stop).  Each node: the incumbent is read,
 * the cancel and donate flags looked at, the budget checked; then the
 * top of the stack is popped and, unless its bound is not below the
 * incumbent, branched: every unscheduled job placed after the prefix
 * and, under BNB_BIDIR, before the suffix too, each child bounded; the
 * direction with fewer children under the incumbent is taken (ties: the
 * larger sum of bounds, then forward), and its children under the
 * incumbent pushed, the smallest bound on top (ties: the smaller job).
 * Children that complete the permutation are evaluated at once, not
 * pushed.  Returns the enum bnb_stop, or -1 when a donation found no
 * memory (nothing is lost: the nodes stay open).
 */
int
bnb_explore(struct bnb_search *s, const struct bnb_ctl *ctl)
{
	const struct bnb_problem	*pb = s->s_pb;
	const int32_t			*f, *b;
	struct bnb_open			 o;
	struct bnb_kid			*fk = s->s_kids;
	struct bnb_kid			*bk = s->s_kids + BNB_MAX_JOBS;
	uint32_t			 n = s->s_n, m = s->s_m, i, k, nleft;
	uint32_t			 nf, nb;
	int32_t				 inc, lb;
	int64_t				 sf, sb;
	size_t				 give;
	uint16_t			 j;
	int				 bidir = pb->branch == BNB_BIDIR;

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
		if (o.lb >= inc) {
			if (o.lb < s->s_best && o.lb < ctl->base)
				s->s_pruned++;
			continue;
		}
		bnb_search_goto(s, &o);
		s->s_nodes++;
		if (ctl->tick != NULL && s->s_nodes % BNB_TICK == 0)
			ctl->tick(ctl->arg);
		if (!s->s_halfdone && ctl->budget > 0 &&
		    s->s_nodes * 2 >= ctl->budget) {
			s->s_halfdone = 1;
			if (ctl->half != NULL)
				ctl->half(ctl->arg);
		}

		f = s->s_front + (size_t)s->s_pathlen * m;
		b = s->s_back + (size_t)s->s_pathlen * m;
		if (s->s_pathlen == n) {
			if ((lb = bnb_join(f, b, m)) < inc)
				bnb_search_leaf(s, ctl, lb, BNB_NOJOB);
			continue;
		}
		nleft = 0;
		for (i = 0; i < n; i++)
			if (!s->s_used[i])
				s->s_left[nleft++] = (uint16_t)i;
		if (nleft == 1) {
			j = s->s_left[0];
			bnb_front_add(&pb->inst, f, j, s->s_fc);
			if ((lb = bnb_join(s->s_fc, b, m)) < inc)
				bnb_search_leaf(s, ctl, lb, j);
			continue;
		}
		bnb_agg_make(pb, s->s_left, nleft, &s->s_ag);
		for (i = 0; i < nleft; i++) {
			j = s->s_left[i];
			bnb_front_add(&pb->inst, f, j, s->s_fc);
			fk[i].lb = bnb_child_bound(pb, &s->s_ag, s->s_used,
			    nleft, s->s_fc, b, j, inc);
			fk[i].job = j;
		}
		nf = bnb_kids_sort(fk, nleft, inc, &sf);
		if (bidir && nf > 0) {
			for (i = 0; i < nleft; i++) {
				j = s->s_left[i];
				bnb_back_add(&pb->inst, b, j, s->s_fc);
				bk[i].lb = bnb_child_bound(pb, &s->s_ag,
				    s->s_used, nleft, f, s->s_fc, j, inc);
				bk[i].job = (uint16_t)(j | BNB_BACK);
			}
			nb = bnb_kids_sort(bk, nleft, inc, &sb);
			if (nb < nf || (nb == nf && sb > sf)) {
				fk = bk;
				nf = nb;
			}
		}
		for (k = 0; k < nf; k++) {
			s->s_stack[s->s_sp].lb = fk[k].lb;
			s->s_stack[s->s_sp].depth = (uint16_t)s->s_pathlen;
			s->s_stack[s->s_sp].job = fk[k].job;
			s->s_sp++;
		}
		fk = s->s_kids;
	}
	return (BNB_EXHAUSTED);
}
