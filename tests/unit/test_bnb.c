/*
 * Unit tests for the flow-shop branch and bound (common/bnb) and its task
 * kind: on tiny random instances the solver's optimum is brute force's
 * with both bounds, and every node's bound is at most the best completion
 * of its prefix; explorations cut into budgets, re-queued or donated,
 * explore exactly the nodes of one run (none twice, none lost); payloads
 * and outputs round-trip and garbage is refused; Taillard's file format is
 * parsed, and refused with file:line when malformed; ta001, ta003 and ta004
 * are solved to their known optima.  No timing is asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bnb/pfsp.h"
#include "task/task.h"

#ifndef TEST_DATADIR
#define TEST_DATADIR "tests/data"
#endif
#define TAI20_5		TEST_DATADIR "/taillard/tai20_5.txt"

struct half_count {
	int	 calls;
	int	 last;
};

static uint64_t	 rnd_state;

static uint32_t	 rnd(uint32_t);
static void	 rnd_instance(struct bnb_instance *, uint32_t, uint32_t,
		    uint32_t);
static int32_t	 brute(const struct bnb_instance *, uint16_t *, uint32_t,
		    uint8_t *);
static int32_t	 check_tree(const struct bnb_problem *,
		    const struct bnb_problem *, uint16_t *, uint32_t,
		    uint8_t *, int *);
static char	*slurp(const char *, size_t *);
static int32_t	 brute_ps(const struct bnb_instance *, uint16_t *, uint32_t,
		    uint32_t, uint8_t *);
static int32_t	 solve(const struct bnb_instance *, int, int, uint64_t,
		    int32_t, int, struct bnb_solution *);
static uint64_t	 explore_all(const struct bnb_problem *, const struct bnb_sub *,
		    int32_t, uint64_t, int, int32_t *);
static void	 count_half(void *, int);
static struct bnb_sub **grow(struct bnb_sub **, size_t, size_t *);

/* Room for one more subproblem in a queue of n of *cap. */
static struct bnb_sub **
grow(struct bnb_sub **q, size_t n, size_t *cap)
{
	if (n < *cap)
		return (q);
	*cap *= 2;
	q = realloc(q, *cap * sizeof(*q));
	assert_non_null(q);
	return (q);
}

/* xorshift64*: a reproducible draw below n. */
static uint32_t
rnd(uint32_t n)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return ((uint32_t)((rnd_state * 2685821657736338717ULL) >> 33) % n);
}

/* A random n x m instance, times from 0 to maxp. */
static void
rnd_instance(struct bnb_instance *inst, uint32_t n, uint32_t m,
    uint32_t maxp)
{
	size_t	 i;

	memset(inst, 0, sizeof(*inst));
	inst->n = n;
	inst->m = m;
	inst->p = calloc((size_t)n * m, sizeof(*inst->p));
	assert_non_null(inst->p);
	for (i = 0; i < (size_t)n * m; i++)
		inst->p[i] = (int32_t)rnd(maxp + 1);
	inst->ub = inst->lb = -1;
	inst->seed = -1;
}

/* The smallest makespan over every completion of perm[0 .. d - 1]. */
static int32_t
brute(const struct bnb_instance *inst, uint16_t *perm, uint32_t d,
    uint8_t *used)
{
	int32_t		 best = INT32_MAX, c;
	uint32_t	 j;

	if (d == inst->n)
		return (bnb_makespan(inst, perm, d));
	for (j = 0; j < inst->n; j++) {
		if (used[j])
			continue;
		used[j] = 1;
		perm[d] = (uint16_t)j;
		if ((c = brute(inst, perm, d + 1, used)) < best)
			best = c;
		used[j] = 0;
	}
	return (best);
}

/*
 * The smallest makespan over every way to fill perm[d .. end - 1] with
 * the jobs not in used, the rest of perm fixed (a prefix before d, a
 * suffix from end on).
 */
static int32_t
brute_ps(const struct bnb_instance *inst, uint16_t *perm, uint32_t d,
    uint32_t end, uint8_t *used)
{
	int32_t		 best = INT32_MAX, c;
	uint32_t	 j;

	if (d == end)
		return (bnb_makespan(inst, perm, inst->n));
	for (j = 0; j < inst->n; j++) {
		if (used[j])
			continue;
		used[j] = 1;
		perm[d] = (uint16_t)j;
		if ((c = brute_ps(inst, perm, d + 1, end, used)) < best)
			best = c;
		used[j] = 0;
	}
	return (best);
}

/*
 * The best completion of perm[0 .. d - 1], checking on the way that both
 * problems' bounds of every prefix are at most it, LB1 at most LB2, and
 * exact on complete permutations.  *nodes counts the prefixes.
 */
static int32_t
check_tree(const struct bnb_problem *p1, const struct bnb_problem *p2,
    uint16_t *perm, uint32_t d, uint8_t *used, int *nodes)
{
	const struct bnb_instance	*inst = bnb_problem_instance(p1);
	int32_t				 best = INT32_MAX, c, b1, b2;
	uint32_t			 j;

	(*nodes)++;
	b1 = bnb_bound(p1, perm, d);
	b2 = bnb_bound(p2, perm, d);
	assert_true(b1 <= b2);
	if (d == inst->n) {
		best = bnb_makespan(inst, perm, d);
		assert_int_equal(b1, best);
		assert_int_equal(b2, best);
		return (best);
	}
	for (j = 0; j < inst->n; j++) {
		if (used[j])
			continue;
		used[j] = 1;
		perm[d] = (uint16_t)j;
		if ((c = check_tree(p1, p2, perm, d + 1, used, nodes)) < best)
			best = c;
		used[j] = 0;
	}
	assert_true(b2 <= best);
	return (best);
}

/* A whole file, NUL-terminated, its length in *len. */
static char *
slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 sz;

	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	assert_true(sz >= 0);
	rewind(f);
	buf = malloc((size_t)sz + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	buf[sz] = '\0';
	fclose(f);
	*len = (size_t)sz;
	return (buf);
}

/* Solve with the sequential solver; returns its makespan. */
static int32_t
solve(const struct bnb_instance *inst, int lb, int branch, uint64_t slice,
    int32_t incumbent, int neh, struct bnb_solution *sol)
{
	struct bnb_problem	*pb;
	struct bnb_solve_opts	 o;
	char			 err[128];

	pb = bnb_problem_make(inst, lb, branch, err, sizeof(err));
	assert_non_null(pb);
	memset(&o, 0, sizeof(o));
	o.slice = slice;
	o.incumbent = incumbent;
	o.neh = neh;
	assert_int_equal(bnb_solve(pb, &o, sol, err, sizeof(err)), 0);
	bnb_problem_free(pb);
	return (sol->cmax);
}

/*
 * Explore sub to the end with a fixed incumbent, in steps of step nodes
 * (0: one run); after each step with donate set, the search gives nodes
 * away, and those are explored by fresh searches (a FIFO of them, also
 * cut into steps, also donating).  Returns the nodes of all of them; the
 * best makespan found anywhere goes to *best.
 */
static uint64_t
explore_all(const struct bnb_problem *pb, const struct bnb_sub *sub,
    int32_t incumbent, uint64_t step, int donate, int32_t *best)
{
	struct bnb_search	*s;
	struct bnb_frontier	 fr, don;
	struct bnb_ctl		 ctl;
	struct bnb_sub		**q;
	_Atomic int32_t		 inc;
	atomic_int		 dflag;
	size_t			 qn = 0, qh = 0, qcap = 16, i;
	uint64_t		 total = 0;
	char			 err[128];
	int			 st;
	int32_t			 c;

	q = calloc(qcap, sizeof(*q));
	assert_non_null(q);
	q[qn++] = bnb_sub_make(sub->prefix, sub->depth, sub->prefix +
	    sub->depth, sub->back, sub->lb);
	s = bnb_search_new(pb);
	assert_non_null(s);
	bnb_frontier_init(&fr);
	bnb_frontier_init(&don);
	atomic_init(&inc, incumbent);
	atomic_init(&dflag, 0);
	*best = BNB_NONE;
	while (qh < qn) {
		assert_int_equal(bnb_search_load(s, q[qh], err, sizeof(err)),
		    0);
		free(q[qh++]);
		memset(&ctl, 0, sizeof(ctl));
		ctl.incumbent = &inc;
		ctl.donate = &dflag;
		ctl.donated = &don;
		for (;;) {
			ctl.budget = step > 0 ? bnb_search_nodes(s) + step : 0;
			st = bnb_explore(s, &ctl);
			assert_true(st >= 0);
			if (st == BNB_EXHAUSTED)
				break;
			assert_int_equal(st, st == BNB_DONATED ? BNB_DONATED :
			    BNB_BUDGET);
			if (st == BNB_DONATED) {
				assert_int_equal(atomic_load(&dflag), 0);
				assert_true(don.n > 0);
				for (i = 0; i < don.n; i++) {
					q = grow(q, qn, &qcap);
					q[qn++] = bnb_frontier_sub(&don, i);
				}
				continue;
			}
			if (donate)
				atomic_store(&dflag, 1);
			else if (step > 0 && bnb_search_nodes(s) % 3 == 0) {
				/* Re-queue everything open. */
				assert_true(bnb_search_take(s, &fr,
				    SIZE_MAX) >= 0);
				for (i = 0; i < fr.n; i++) {
					q = grow(q, qn, &qcap);
					q[qn++] = bnb_frontier_sub(&fr, i);
				}
				bnb_frontier_free(&fr);
				assert_int_equal(bnb_search_open(s), 0);
			}
		}
		atomic_store(&dflag, 0);
		total += bnb_search_nodes(s);
		if ((c = bnb_search_best(s, NULL)) < *best)
			*best = c;
	}
	bnb_frontier_free(&don);
	bnb_search_free(s);
	free(q);
	return (total);
}

/* Count half-way reports. */
static void
count_half(void *arg, int v)
{
	struct half_count	*hc = arg;

	hc->calls++;
	hc->last = v;
}

/* Both bounds are valid on every prefix of small random instances. */
static void
test_bounds_valid(void **state)
{
	static const uint32_t	 nm[][2] = {
		{ 1, 1 }, { 1, 4 }, { 2, 1 }, { 3, 3 }, { 4, 2 }, { 5, 5 },
		{ 6, 3 }, { 6, 1 }, { 7, 4 }, { 5, 8 }
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*p1, *p2;
	uint16_t		 perm[8];
	uint8_t			 used[8];
	char			 err[128];
	size_t			 i, r;
	int			 nodes;

	(void)state;
	rnd_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++)
		for (r = 0; r < 3; r++) {
			rnd_instance(&inst, nm[i][0], nm[i][1],
			    r == 2 ? 3 : 99);
			p1 = bnb_problem_new(&inst, BNB_LB1, err, sizeof(err));
			p2 = bnb_problem_new(&inst, BNB_LB2, err, sizeof(err));
			assert_non_null(p1);
			assert_non_null(p2);
			memset(used, 0, sizeof(used));
			nodes = 0;
			check_tree(p1, p2, perm, 0, used, &nodes);
			assert_true(nodes > (int)nm[i][0]);
			bnb_problem_free(p1);
			bnb_problem_free(p2);
			bnb_instance_free(&inst);
		}
}

/* The solver's optimum is brute force's, with both bounds, every way. */
static void
test_solver_brute(void **state)
{
	static const uint32_t	 nm[][2] = {
		{ 1, 1 }, { 1, 3 }, { 2, 2 }, { 3, 1 }, { 4, 5 }, { 5, 2 },
		{ 6, 4 }, { 7, 3 }, { 7, 1 }, { 8, 2 }, { 8, 5 }, { 6, 10 }
	};
	static const uint64_t	 slices[] = { 0, 1, 2, 5, 50 };
	struct bnb_instance	 inst;
	struct bnb_solution	 sol;
	uint16_t		 perm[8];
	uint8_t			 used[8];
	int32_t			 opt;
	size_t			 i, r, k;
	int			 lb, neh, br;

	(void)state;
	rnd_state = 42;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++)
		for (r = 0; r < 2; r++) {
			rnd_instance(&inst, nm[i][0], nm[i][1],
			    r == 1 ? 5 : 99);
			memset(used, 0, sizeof(used));
			opt = brute(&inst, perm, 0, used);
			for (br = BNB_FORWARD; br <= BNB_BIDIR; br++)
			for (lb = BNB_LB1; lb <= BNB_LB2; lb++)
				for (k = 0; k < sizeof(slices) /
				    sizeof(slices[0]); k++)
					for (neh = 0; neh < 2; neh++) {
						assert_int_equal(solve(&inst,
						    lb, br, slices[k],
						    BNB_NONE, neh, &sol), opt);
						assert_true(sol.proved);
						assert_int_equal(sol.bound, opt);
						assert_int_equal(bnb_perm_check(
						    sol.perm, inst.n, inst.n),
						    0);
						assert_int_equal(bnb_makespan(
						    &inst, sol.perm, inst.n),
						    opt);
					}
			/* An incumbent at the optimum: proved, none better. */
			for (br = BNB_FORWARD; br <= BNB_BIDIR; br++) {
				solve(&inst, BNB_LB2, br, 3, opt, 0, &sol);
				assert_int_equal(sol.cmax, BNB_NONE);
				assert_true(sol.proved);
			}
			bnb_instance_free(&inst);
		}
}

/*
 * Cut into budgets and re-queued, or donating after each budget, the
 * exploration explores exactly the nodes one run does (with the incumbent
 * held at the optimum the set of nodes does not depend on the order), and
 * with the incumbent above the optimum every way finds it.
 */
static void
test_budget_donate(void **state)
{
	static const uint32_t	 nm[][2] = {
		{ 6, 3 }, { 7, 4 }, { 8, 2 }, { 8, 6 }, { 7, 1 }, { 2, 2 }
	};
	static const uint64_t	 steps[] = { 1, 2, 3, 7, 20 };
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_sub		*root;
	uint16_t		 perm[8];
	uint8_t			 used[8];
	char			 err[128];
	uint64_t		 one, got;
	int32_t			 opt, best;
	size_t			 i, k;
	int			 lb, don, br;

	(void)state;
	rnd_state = 7;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++) {
		rnd_instance(&inst, nm[i][0], nm[i][1], 40);
		memset(used, 0, sizeof(used));
		opt = brute(&inst, perm, 0, used);
		for (br = BNB_FORWARD; br <= BNB_BIDIR; br++)
		for (lb = BNB_LB1; lb <= BNB_LB2; lb++) {
			pb = bnb_problem_make(&inst, lb, br, err, sizeof(err));
			assert_non_null(pb);
			root = bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0));
			assert_non_null(root);
			one = explore_all(pb, root, opt, 0, 0, &best);
			assert_int_equal(best, BNB_NONE);
			for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++)
				for (don = 0; don < 2; don++) {
					got = explore_all(pb, root, opt,
					    steps[k], don, &best);
					assert_int_equal(got, one);
					assert_int_equal(best, BNB_NONE);
					explore_all(pb, root, opt + 1,
					    steps[k], don, &best);
					assert_int_equal(best, opt);
				}
			free(root);
			bnb_problem_free(pb);
		}
		bnb_instance_free(&inst);
	}
}

/*
 * Both bounds are valid on random nodes with a prefix and a suffix:
 * LB1 <= LB2 <= the best completion (brute force over the jobs between),
 * exact when every job is placed.  And a bidirectional search's children
 * carry the bound bnb_bound_sub() recomputes for them, extend their
 * parent at one end, and are all of one direction.
 */
static void
test_bounds_bidir(void **state)
{
	static const uint32_t	 nm[][2] = {
		{ 1, 1 }, { 2, 3 }, { 3, 1 }, { 4, 4 }, { 5, 2 }, { 6, 5 },
		{ 7, 3 }, { 7, 1 }, { 6, 8 }
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*p1, *p2, *pb;
	struct bnb_search	*s;
	struct bnb_frontier	 fr;
	struct bnb_ctl		 ctl;
	struct bnb_sub		*sub, *kid;
	uint16_t		 perm[8], t;
	uint8_t			 used[8];
	char			 err[128];
	size_t			 i, r, k;
	uint32_t		 n, depth, back, j, nback, nfwd;
	int32_t			 b1, b2, best;
	int			 lb, checked = 0;

	(void)state;
	rnd_state = 0x51ed2701;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++)
		for (r = 0; r < 3; r++) {
			n = nm[i][0];
			rnd_instance(&inst, n, nm[i][1], r == 2 ? 3 : 99);
			p1 = bnb_problem_make(&inst, BNB_LB1, BNB_BIDIR, err,
			    sizeof(err));
			p2 = bnb_problem_make(&inst, BNB_LB2, BNB_BIDIR, err,
			    sizeof(err));
			assert_non_null(p1);
			assert_non_null(p2);
			for (k = 0; k < 40; k++) {
				for (j = 0; j < n; j++)
					perm[j] = (uint16_t)j;
				for (j = n; j > 1; j--) {
					uint32_t	 x = rnd(j);

					t = perm[j - 1];
					perm[j - 1] = perm[x];
					perm[x] = t;
				}
				depth = rnd(n + 1);
				back = rnd(n - depth + 1);
				sub = bnb_sub_make(perm, depth, perm + n - back,
				    back, 0);
				assert_non_null(sub);
				b1 = bnb_bound_sub(p1, sub);
				b2 = bnb_bound_sub(p2, sub);
				memset(used, 0, sizeof(used));
				for (j = 0; j < depth; j++)
					used[perm[j]] = 1;
				for (j = n - back; j < n; j++)
					used[perm[j]] = 1;
				best = brute_ps(&inst, perm, depth, n - back,
				    used);
				assert_true(b1 <= b2);
				assert_true(b2 <= best);
				if (depth + back == n) {
					assert_int_equal(b1, best);
					assert_int_equal(b2, best);
				}
				if (back == 0)
					assert_int_equal(b2, bnb_bound(p2,
					    perm, depth));
				/* The children of the node, one branching. */
				for (lb = BNB_LB1; lb <= BNB_LB2 &&
				    depth + back + 2 <= n; lb++) {
					pb = lb == BNB_LB1 ? p1 : p2;
					s = bnb_search_new(pb);
					assert_non_null(s);
					sub->lb = bnb_bound_sub(pb, sub);
					assert_int_equal(bnb_search_load(s, sub,
					    err, sizeof(err)), 0);
					memset(&ctl, 0, sizeof(ctl));
					ctl.budget = 1;
					assert_int_equal(bnb_explore(s, &ctl),
					    BNB_BUDGET);
					bnb_frontier_init(&fr);
					assert_int_equal(bnb_search_take(s, &fr,
					    SIZE_MAX), (int)(n - depth -
					    back));
					nback = nfwd = 0;
					for (j = 0; j < fr.n; j++) {
						kid = bnb_frontier_sub(&fr, j);
						assert_non_null(kid);
						assert_int_equal(kid->lb,
						    bnb_bound_sub(pb, kid));
						assert_true(kid->lb >= sub->lb);
						assert_int_equal(kid->depth +
						    kid->back, depth + back + 1);
						assert_memory_equal(kid->prefix,
						    sub->prefix, depth * 2);
						assert_memory_equal(kid->prefix +
						    kid->depth + kid->back - back,
						    sub->prefix + depth,
						    back * 2);
						if (kid->back > back)
							nback++;
						else
							nfwd++;
						free(kid);
						checked++;
					}
					assert_true(nback == 0 || nfwd == 0);
					bnb_frontier_free(&fr);
					bnb_search_free(s);
				}
				free(sub);
			}
			bnb_problem_free(p1);
			bnb_problem_free(p2);
			bnb_instance_free(&inst);
		}
	assert_true(checked > 1000);
}

/*
 * A subproblem with a suffix round-trips through the payload, and a
 * bidirectional search's output through the output's decoder against
 * it; outputs outside it (another suffix, a best that does not end with
 * it, a node that drops it) are refused.
 */
static void
test_codec_suffix(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_search	*s;
	struct bnb_frontier	 fr;
	struct bnb_payload	 pl;
	struct bnb_result	 res;
	struct bnb_ctl		 ctl;
	struct bnb_sub		*sub, *other, *a, *b;
	const uint16_t		*bp;
	_Atomic int32_t		 inc;
	uint16_t		 pre[2] = { 4, 1 }, suf[3] = { 7, 0, 9 };
	uint16_t		 perm[12], all[5];
	uint8_t			*buf, *junk;
	char			 err[256];
	size_t			 len, i, nback = 0;
	int32_t			 best;

	(void)state;
	rnd_state = 22;
	rnd_instance(&inst, 12, 8, 99);	/* backward early on (MinBranch) */
	pb = bnb_problem_make(&inst, BNB_LB1, BNB_BIDIR, err, sizeof(err));
	sub = bnb_sub_make(pre, 2, suf, 3, 0);
	sub->lb = bnb_bound_sub(pb, sub);
	len = bnb_payload_len(12, 8, 5);
	assert_int_equal(len, BNB_PAYLOAD_HEAD + 2 * 96 + 10);
	buf = malloc(len);
	assert_int_equal(bnb_payload_encode(buf, len - 4, &inst, BNB_LB2,
	    BNB_BIDIR, 900, 50, sub), -1);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB2,
	    BNB_BIDIR, 900, 50, sub), 0);
	assert_int_equal(bnb_payload_decode(buf, len, &pl, err, sizeof(err)),
	    0);
	assert_int_equal(pl.branch, BNB_BIDIR);
	assert_int_equal(pl.depth, 2);
	assert_int_equal(pl.back, 3);
	assert_memory_equal(pl.prefix, pre, sizeof(pre));
	assert_memory_equal(pl.suffix, suf, sizeof(suf));
	assert_int_equal(pl.sub_lb, sub->lb);
	bnb_instance_free(&pl.inst);
	/* A suffix job repeating a prefix job, or out of range. */
	for (i = 0; i < 2; i++) {
		junk = malloc(len);
		memcpy(junk, buf, len);
		junk[BNB_PAYLOAD_HEAD + 2 * 96 + 4 + 2] = i == 0 ? 4 : 12;
		assert_int_equal(bnb_payload_decode(junk, len, &pl, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "suffix"));
		free(junk);
	}
	free(buf);
	memcpy(all, pre, sizeof(pre));
	memcpy(all + 2, suf, sizeof(suf));
	other = bnb_sub_make(all, 5, NULL, 0, 0);
	assert_int_equal(bnb_payload_encode(buf = malloc(len), len, &inst,
	    BNB_LB1, BNB_FORWARD, 900, 50, other), 0);
	free(buf);
	free(other);

	/*
	 * An output of the bidirectional search of sub: its best from a
	 * whole run, its frontier from one of 10 nodes with the incumbent
	 * just above that best.
	 */
	s = bnb_search_new(pb);
	assert_int_equal(bnb_search_load(s, sub, err, sizeof(err)), 0);
	memset(&ctl, 0, sizeof(ctl));
	assert_int_equal(bnb_explore(s, &ctl), BNB_EXHAUSTED);
	best = bnb_search_best(s, &bp);
	assert_true(best != BNB_NONE);
	memcpy(perm, bp, sizeof(perm));
	assert_memory_equal(perm, pre, sizeof(pre));
	assert_memory_equal(perm + 9, suf, sizeof(suf));
	assert_int_equal(bnb_makespan(&inst, perm, 12), best);
	assert_int_equal(bnb_search_load(s, sub, err, sizeof(err)), 0);
	atomic_init(&inc, best + 1);
	ctl.incumbent = &inc;
	ctl.budget = 10;
	assert_int_equal(bnb_explore(s, &ctl), BNB_BUDGET);
	bnb_frontier_init(&fr);
	assert_true(bnb_search_take(s, &fr, SIZE_MAX) > 1);
	for (i = 0; i < fr.pathlen; i++)
		if (fr.path[i] & BNB_BACK)
			nback++;
	len = bnb_result_len(12, best, &fr);
	buf = malloc(len);
	assert_int_equal(bnb_result_encode(buf, len, BNB_BUDGET, 12, 10, best,
	    perm, &fr), 0);
	assert_int_equal(bnb_result_decode(buf, len, 12, sub, &res, err,
	    sizeof(err)), 0);
	assert_int_equal(res.frontier.n, fr.n);
	for (i = 0; i < fr.n; i++) {
		a = bnb_frontier_sub(&fr, i);
		b = bnb_frontier_sub(&res.frontier, i);
		assert_int_equal(a->depth, b->depth);
		assert_int_equal(a->back, b->back);
		assert_int_equal(a->lb, b->lb);
		assert_memory_equal(a->prefix, b->prefix,
		    (a->depth + a->back) * 2);
		assert_memory_equal(a->prefix, pre, sizeof(pre));
		assert_memory_equal(a->prefix + a->depth + a->back - 3, suf,
		    sizeof(suf));
		assert_int_equal(a->lb, bnb_bound_sub(pb, a));
		if (a->back > 3)
			nback++;
		free(a);
		free(b);
	}
	assert_true(nback > 3);		/* backward branching happened */
	bnb_result_free(&res);
	/* Another suffix, or none: refused. */
	suf[1] = 3;
	other = bnb_sub_make(pre, 2, suf, 3, 0);
	assert_int_equal(bnb_result_decode(buf, len, 12, other, &res, err,
	    sizeof(err)), -1);
	free(other);
	other = bnb_sub_make(pre, 2, NULL, 0, 0);
	assert_int_equal(bnb_result_decode(buf, len, 12, other, &res, err,
	    sizeof(err)), 0);		/* its subtree holds sub's */
	bnb_result_free(&res);
	free(other);
	suf[1] = 0;
	/* The best not ending with the suffix. */
	junk = malloc(len);
	memcpy(junk, buf, len);
	junk[BNB_RESULT_HEAD + 2 * 11] = (uint8_t)perm[10];
	junk[BNB_RESULT_HEAD + 2 * 10] = (uint8_t)perm[11];
	assert_int_equal(bnb_result_decode(junk, len, 12, sub, &res, err,
	    sizeof(err)), -1);
	/* A path that places the suffix forward. */
	memcpy(junk, buf, len);
	junk[BNB_RESULT_HEAD + 2 * 12 + 2 * 2 + 1] &= 0x7f;
	assert_int_equal(bnb_result_decode(junk, len, 12, sub, &res, err,
	    sizeof(err)), -1);
	/* A path job out of range with the direction bit. */
	memcpy(junk, buf, len);
	junk[BNB_RESULT_HEAD + 2 * 12 + 2 * 5] = 40;
	assert_int_equal(bnb_result_decode(junk, len, 12, sub, &res, err,
	    sizeof(err)), -1);
	free(junk);
	free(buf);
	bnb_frontier_free(&fr);
	bnb_search_free(s);
	free(sub);
	bnb_problem_free(pb);
	bnb_instance_free(&inst);
}

/* A donation takes the nodes nearest the root and clears the flag. */
static void
test_donation_shape(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_search	*s;
	struct bnb_frontier	 don;
	struct bnb_ctl		 ctl;
	struct bnb_sub		*sub;
	atomic_int		 dflag;
	char			 err[128];
	size_t			 i, open;

	(void)state;
	rnd_state = 99;
	rnd_instance(&inst, 9, 3, 50);
	pb = bnb_problem_new(&inst, BNB_LB1, err, sizeof(err));
	s = bnb_search_new(pb);
	assert_non_null(s);
	assert_int_equal(bnb_search_start(s, NULL, 0, 0, err, sizeof(err)), 0);
	bnb_frontier_init(&don);
	memset(&ctl, 0, sizeof(ctl));
	ctl.budget = 3;
	assert_int_equal(bnb_explore(s, &ctl), BNB_BUDGET);
	open = bnb_search_open(s);
	assert_true(open >= 2);
	atomic_init(&dflag, 1);
	ctl.donate = &dflag;
	ctl.donated = &don;
	assert_int_equal(bnb_explore(s, &ctl), BNB_DONATED);
	assert_int_equal(atomic_load(&dflag), 0);
	/* After three nodes from the root: the root's other 8 children. */
	assert_int_equal(don.n, 8);
	assert_int_equal(bnb_search_open(s) + don.n, open);
	for (i = 0; i < don.n; i++) {
		sub = bnb_frontier_sub(&don, i);
		assert_int_equal(sub->depth, 1);
		assert_int_equal(sub->lb, bnb_bound(pb, sub->prefix, 1));
		free(sub);
	}
	bnb_frontier_free(&don);
	bnb_search_free(s);
	bnb_problem_free(pb);
	bnb_instance_free(&inst);
}

/* The pool pops by bound, deeper first on ties, then first pushed. */
static void
test_pool(void **state)
{
	static const struct {
		int32_t		 lb;
		uint32_t	 depth;
		int		 order;
	} in[] = {
		{ 10, 1, 3 }, { 5, 0, 1 }, { 10, 2, 2 }, { 5, 3, 0 },
		{ 12, 1, 5 }, { 10, 1, 4 }, { 20, 0, 6 }
	};
	struct bnb_pool		*pl;
	struct bnb_sub		*s, *got[7];
	uint16_t		 pre[3] = { 0, 1, 2 };
	size_t			 i, k;

	(void)state;
	pl = bnb_pool_new();
	assert_non_null(pl);
	assert_int_equal(bnb_pool_bound(pl), BNB_NONE);
	assert_null(bnb_pool_pop(pl));
	for (i = 0; i < 7; i++) {
		s = bnb_sub_new(pre, in[i].depth, in[i].lb);
		assert_int_equal(bnb_pool_push(pl, s), 0);
		got[in[i].order] = s;
	}
	assert_int_equal(bnb_pool_size(pl), 7);
	assert_int_equal(bnb_pool_bound(pl), 5);
	for (k = 0; k < 7; k++) {
		s = bnb_pool_pop(pl);
		assert_ptr_equal(s, got[k]);
		free(s);
	}
	rnd_state = 3;
	for (i = 0; i < 1000; i++)
		assert_int_equal(bnb_pool_push(pl, bnb_sub_new(pre, rnd(4),
		    (int32_t)rnd(500))), 0);
	assert_int_equal(bnb_pool_prune(pl, 250) + bnb_pool_size(pl), 1000);
	k = 0;
	while ((s = bnb_pool_pop(pl)) != NULL) {
		assert_true(s->lb < 250);
		assert_true((int32_t)k <= s->lb);
		k = (size_t)s->lb;
		free(s);
	}
	bnb_pool_free(pl);
}

/* Payloads and outputs decode to what was encoded. */
static void
test_codec_roundtrip(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_search	*s;
	struct bnb_frontier	 fr;
	struct bnb_payload	 pl;
	struct bnb_result	 res;
	struct bnb_ctl		 ctl;
	struct bnb_sub		*sub, *a, *b;
	uint16_t		 pre[2] = { 4, 1 }, perm[20];
	uint8_t			*buf;
	char			 err[256];
	size_t			 len, i;
	int32_t			 best;

	(void)state;
	rnd_state = 5;
	rnd_instance(&inst, 12, 7, BNB_MAX_TIME);
	sub = bnb_sub_new(pre, 2, 321);
	len = bnb_payload_len(12, 7, 2);
	assert_int_equal(len, BNB_PAYLOAD_HEAD + 2 * 84 + 4);
	buf = malloc(len);
	assert_int_equal(bnb_payload_encode(buf, len - 1, &inst, BNB_LB2,
	    BNB_FORWARD, 1000, 77, sub), -1);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, 3, BNB_FORWARD,
	    1000, 77, sub), -1);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB2, 3,
	    1000, 77, sub), -1);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB2,
	    BNB_FORWARD, 1000, 77, sub), 0);
	assert_int_equal(bnb_payload_decode(buf, len, &pl, err, sizeof(err)),
	    0);
	assert_int_equal(pl.inst.n, 12);
	assert_int_equal(pl.inst.m, 7);
	assert_memory_equal(pl.inst.p, inst.p, 84 * sizeof(int32_t));
	assert_int_equal(pl.lb, BNB_LB2);
	assert_int_equal(pl.branch, BNB_FORWARD);
	assert_int_equal(pl.back, 0);
	assert_int_equal(pl.incumbent, 1000);
	assert_int_equal(pl.budget, 77);
	assert_int_equal(pl.depth, 2);
	assert_int_equal(pl.sub_lb, 321);
	assert_int_equal(pl.prefix[0], 4);
	assert_int_equal(pl.prefix[1], 1);
	bnb_instance_free(&pl.inst);
	free(buf);

	/* An output with a best and a frontier, against its parent. */
	pb = bnb_problem_new(&inst, BNB_LB1, err, sizeof(err));
	s = bnb_search_new(pb);
	assert_int_equal(bnb_search_start(s, pre, 2, 0, err, sizeof(err)), 0);
	memset(&ctl, 0, sizeof(ctl));
	ctl.budget = 40;
	assert_int_equal(bnb_explore(s, &ctl), BNB_BUDGET);
	best = bnb_search_best(s, NULL);
	assert_true(best != BNB_NONE);
	bnb_frontier_init(&fr);
	assert_true(bnb_search_take(s, &fr, SIZE_MAX) > 1);
	{
		const uint16_t	*bp;

		bnb_search_best(s, &bp);
		memcpy(perm, bp, 12 * sizeof(*perm));
	}
	len = bnb_result_len(12, best, &fr);
	buf = malloc(len);
	assert_int_equal(bnb_result_encode(buf, len, BNB_BUDGET, 12, 40, best,
	    perm, &fr), 0);
	assert_int_equal(bnb_result_decode(buf, len, 12, sub, &res, err,
	    sizeof(err)), 0);
	assert_int_equal(res.stop, BNB_BUDGET);
	assert_int_equal(res.nodes, 40);
	assert_int_equal(res.best, best);
	assert_memory_equal(res.perm, perm, 12 * sizeof(*perm));
	assert_int_equal(res.frontier.n, fr.n);
	for (i = 0; i < fr.n; i++) {
		a = bnb_frontier_sub(&fr, i);
		b = bnb_frontier_sub(&res.frontier, i);
		assert_int_equal(a->depth, b->depth);
		assert_int_equal(a->lb, b->lb);
		assert_memory_equal(a->prefix, b->prefix, a->depth * 2);
		assert_true(a->depth >= 3);
		assert_memory_equal(a->prefix, pre, sizeof(pre));
		free(a);
		free(b);
	}
	bnb_result_free(&res);
	/* Another parent: refused. */
	pre[0] = 5;
	{
		struct bnb_sub	*other = bnb_sub_new(pre, 2, 0);

		assert_int_equal(bnb_result_decode(buf, len, 12, other, &res,
		    err, sizeof(err)), -1);
		free(other);
	}
	free(buf);

	/* Exhausted, nothing found: the bare header. */
	len = bnb_result_len(12, BNB_NONE, NULL);
	assert_int_equal(len, BNB_RESULT_HEAD);
	buf = malloc(len);
	assert_int_equal(bnb_result_encode(buf, len, BNB_EXHAUSTED, 12, 9,
	    BNB_NONE, NULL, NULL), 0);
	assert_int_equal(bnb_result_decode(buf, len, 12, NULL, &res, err,
	    sizeof(err)), 0);
	assert_int_equal(res.stop, BNB_EXHAUSTED);
	assert_int_equal(res.best, BNB_NONE);
	assert_int_equal(res.frontier.n, 0);
	assert_int_equal(bnb_result_decode(buf, len, 13, NULL, &res, err,
	    sizeof(err)), -1);
	bnb_result_free(&res);
	free(buf);

	bnb_frontier_free(&fr);
	bnb_search_free(s);
	bnb_problem_free(pb);
	free(sub);
	bnb_instance_free(&inst);
}

/* Garbage payloads and outputs are refused and nothing is read past. */
static void
test_codec_garbage(void **state)
{
	static const struct {
		size_t		 off;
		uint8_t		 val;
		const char	*want;
	} bad[] = {
		{ 0, 'X', "magic" },
		{ 4, 1, "version" },		/* version 1: refused */
		{ 8, 0, "jobs" },		/* n = 0 */
		{ 9, 2, "jobs" },		/* n = 512 + 6 */
		{ 12, 101, "machines" },
		{ 16, 3, "lower bound" },
		{ 23, 0x80, "incumbent" },
		{ 32, 7, "need" },		/* depth > n */
		{ 40, 5, "suffix" },		/* 2 + 5 > n */
		{ 40, 1, "need" },		/* a suffix: 2 bytes short */
		{ 44, 3, "branching" },
		{ BNB_PAYLOAD_HEAD + 1, 0xff, "processing time" },
		{ BNB_PAYLOAD_HEAD + 2 * 18, 1, "prefix" },	/* 1, 1 */
		{ BNB_PAYLOAD_HEAD + 2 * 18 + 2, 6, "prefix" },	/* 6 of 6 */
	};
	struct bnb_instance	 inst;
	struct bnb_payload	 pl;
	struct bnb_result	 res;
	struct bnb_frontier	 fr;
	struct bnb_sub		*sub;
	uint16_t		 pre[2] = { 3, 1 }, perm[6] = { 0, 1, 2, 3, 4,
				    5 };
	uint8_t			*buf, *junk;
	char			 err[256];
	size_t			 len, i, l, rlen;

	(void)state;
	rnd_state = 11;
	rnd_instance(&inst, 6, 3, 99);
	sub = bnb_sub_new(pre, 2, 0);
	len = bnb_payload_len(6, 3, 2);
	buf = malloc(len);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB1,
	    BNB_FORWARD, 500, 0, sub), 0);
	for (l = 0; l < len; l++) {
		junk = malloc(l > 0 ? l : 1);
		memcpy(junk, buf, l);
		assert_int_equal(bnb_payload_decode(junk, l, &pl, err,
		    sizeof(err)), -1);
		free(junk);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		junk = malloc(len);
		memcpy(junk, buf, len);
		junk[bad[i].off] = bad[i].val;
		if (bnb_payload_decode(junk, len, &pl, err, sizeof(err)) != -1)
			fail_msg("case %zu decoded", i);
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err,
			    bad[i].want);
		free(junk);
	}
	junk = malloc(len + 1);
	memcpy(junk, buf, len);
	assert_int_equal(bnb_payload_decode(junk, len + 1, &pl, err,
	    sizeof(err)), -1);
	free(junk);
	free(buf);

	/* Random bytes, with and without a right magic and version. */
	rnd_state = 12;
	for (i = 0; i < 20000; i++) {
		l = rnd(200);
		junk = malloc(l + 1);
		for (len = 0; len < l; len++)
			junk[len] = (uint8_t)rnd(256);
		if (l >= 8 && i % 2 == 0) {
			junk[0] = 'P'; junk[1] = 'F'; junk[2] = 'S';
			junk[3] = (i % 4 == 0) ? 'P' : 'R';
			junk[4] = BNB_VERSION;
			junk[5] = junk[6] = junk[7] = 0;
		}
		if (bnb_payload_decode(junk, l, &pl, err, sizeof(err)) == 0)
			bnb_instance_free(&pl.inst);
		if (bnb_result_decode(junk, l, 6, sub, &res, err,
		    sizeof(err)) == 0)
			bnb_result_free(&res);
		free(junk);
	}

	/* Outputs: each one bad thing. */
	bnb_frontier_init(&fr);
	assert_int_equal(bnb_frontier_add(&fr, 10, 2, 5), 0);
	assert_int_equal(bnb_frontier_add(&fr, 11, 3, 4), 0);
	fr.pathlen = 3;
	fr.path[0] = 3;
	fr.path[1] = 1;
	fr.path[2] = 0;
	perm[0] = 3;
	perm[1] = 1;
	perm[2] = 0;
	perm[3] = 2;
	rlen = bnb_result_len(6, 400, &fr);
	buf = malloc(rlen);
	assert_int_equal(bnb_result_encode(buf, rlen, BNB_BUDGET, 6, 5, 400,
	    perm, &fr), 0);
	assert_int_equal(bnb_result_decode(buf, rlen, 6, sub, &res, err,
	    sizeof(err)), 0);
	bnb_result_free(&res);
	for (l = 0; l < rlen; l++)
		assert_int_equal(bnb_result_decode(buf, l, 6, sub, &res, err,
		    sizeof(err)), -1);
	{
		static const struct {
			size_t		 off;
			uint8_t		 val;
		} rbad[] = {
			{ 0, 0 },			/* magic */
			{ 8, 9 },			/* stop */
			{ 12, 7 },			/* n */
			{ BNB_RESULT_HEAD + 2, 3 },			/* best: 3 twice */
			{ BNB_RESULT_HEAD, 1 },		/* best: not parent's */
			{ BNB_RESULT_HEAD + 12 + 2, 3 },		/* path: 3 twice */
			{ BNB_RESULT_HEAD + 12 + 6 + 6, 1 },		/* node job in path */
			{ BNB_RESULT_HEAD + 12 + 6 + 6, 9 },		/* node job >= n */
			{ BNB_RESULT_HEAD + 12 + 6 + 4, 4 },		/* node deeper */
			{ BNB_RESULT_HEAD + 12 + 6 + 4, 0 },		/* node above parent */
			{ 32, 3 },			/* node count */
		};

		for (i = 0; i < sizeof(rbad) / sizeof(rbad[0]); i++) {
			junk = malloc(rlen);
			memcpy(junk, buf, rlen);
			junk[rbad[i].off] = rbad[i].val;
			if (bnb_result_decode(junk, rlen, 6, sub, &res, err,
			    sizeof(err)) != -1)
				fail_msg("output case %zu decoded", i);
			free(junk);
		}
	}
	free(buf);
	bnb_frontier_free(&fr);
	free(sub);
	bnb_instance_free(&inst);
}

/*
 * The pfsp kind, payload in and output out, in a best-bound-first loop as
 * the master's driver will run it: the optimum, nodes equal to the
 * sequential solver's, the half-way report, cancellation, bad payloads.
 */
static void
test_task_kind(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_pool		*pool;
	struct bnb_solution	 sol;
	struct bnb_solve_opts	 o;
	struct bnb_result	 res;
	struct bnb_sub		*sub, *kid;
	struct task_params	 tp;
	struct task_result	 tr;
	struct task_ctx		 ctx;
	struct half_count	 hc = { 0, 0 };
	atomic_int		 cancel;
	const uint8_t		*out;
	uint8_t			*buf;
	char			 err[256];
	size_t			 len, olen, i;
	uint64_t		 nodes, pops;
	int32_t			 inc;
	int			 br;

	(void)state;
	rnd_state = 17;
	rnd_instance(&inst, 9, 4, 99);
	atomic_init(&cancel, 0);
	for (br = BNB_BIDIR; br >= BNB_FORWARD; br--) {
	pb = bnb_problem_make(&inst, BNB_LB2, br, err, sizeof(err));
	memset(&o, 0, sizeof(o));
	o.slice = 25;
	o.incumbent = BNB_NONE;
	assert_int_equal(bnb_solve(pb, &o, &sol, err, sizeof(err)), 0);
	assert_true(sol.proved);
	nodes = pops = 0;
	inc = BNB_NONE;

	memset(&ctx, 0, sizeof(ctx));
	ctx.cancel = &cancel;
	ctx.speed = 1.0;
	ctx.progress = count_half;
	ctx.arg = &hc;
	pool = bnb_pool_new();
	assert_int_equal(bnb_pool_push(pool, bnb_sub_new(NULL, 0,
	    bnb_bound(pb, NULL, 0))), 0);
	while (bnb_pool_bound(pool) < inc) {
		sub = bnb_pool_pop(pool);
		pops++;
		len = bnb_payload_len(9, 4, sub->depth + sub->back);
		buf = malloc(len);
		assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB2,
		    br, inc, 25, sub), 0);
		memset(&tp, 0, sizeof(tp));
		tp.kind = "pfsp";
		tp.payload = buf;
		tp.payload_len = len;
		hc.calls = 0;
		assert_int_equal(task_run(&tp, &ctx, &tr), TASK_OK);
		out = task_output(&tr, &olen);
		assert_int_equal(bnb_result_decode(out, olen, 9, sub, &res,
		    err, sizeof(err)), 0);
		assert_int_equal(hc.calls, res.nodes >= 13 ? 1 : 0);
		nodes += res.nodes;
		if (res.best < inc) {
			inc = res.best;
			assert_int_equal(bnb_makespan(&inst, res.perm, 9), inc);
			bnb_pool_prune(pool, inc);
		}
		assert_int_equal(res.stop, res.frontier.n > 0 ? BNB_BUDGET :
		    res.stop);
		for (i = 0; i < res.frontier.n; i++) {
			if (res.frontier.v[i].lb >= inc)
				continue;
			kid = bnb_frontier_sub(&res.frontier, i);
			assert_int_equal(bnb_pool_push(pool, kid), 0);
		}
		bnb_result_free(&res);
		task_result_free(&tr);
		free(buf);
		free(sub);
	}
	assert_int_equal(inc, sol.cmax);
	assert_int_equal(nodes, sol.nodes);
	assert_int_equal(pops, sol.pops);
	assert_int_equal(hc.last, 2);
	bnb_pool_free(pool);
	if (br == BNB_FORWARD)
		break;
	bnb_problem_free(pb);
	}

	/* Cancelled before it starts. */
	sub = bnb_sub_new(NULL, 0, 0);
	len = bnb_payload_len(9, 4, 0);
	buf = malloc(len);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB1,
	    BNB_FORWARD, BNB_NONE, 0, sub), 0);
	tp.payload = buf;
	tp.payload_len = len;
	atomic_store(&cancel, 1);
	assert_int_equal(task_run(&tp, &ctx, &tr), TASK_CANCELLED);
	atomic_store(&cancel, 0);
	/* Bad payloads. */
	tp.payload_len = len - 1;
	assert_int_equal(task_run(&tp, &ctx, &tr), TASK_BAD_PARAMS);
	assert_non_null(strstr(tr.error, "pfsp payload"));
	tp.payload = NULL;
	tp.payload_len = 0;
	assert_int_equal(task_run(&tp, &ctx, &tr), TASK_BAD_PARAMS);
	assert_non_null(strstr(tr.error, "header"));
	free(buf);
	free(sub);
	bnb_problem_free(pb);
	bnb_instance_free(&inst);
}

/* Taillard's file: all ten instances of tai20_5.txt and their headers. */
static void
test_parse_taillard(void **state)
{
	static const int32_t	 ub[10] = { 1278, 1359, 1081, 1293, 1236,
				    1195, 1239, 1206, 1230, 1108 };
	struct bnb_instance	 inst;
	char			*buf, err[256];
	size_t			 len;
	uint32_t		 i;

	(void)state;
	buf = slurp(TAI20_5, &len);
	for (i = 1; i <= 10; i++) {
		assert_int_equal(bnb_parse_taillard(buf, len, "tai20_5.txt", i,
		    &inst, err, sizeof(err)), 0);
		assert_int_equal(inst.n, 20);
		assert_int_equal(inst.m, 5);
		assert_int_equal(inst.index, i);
		assert_int_equal(inst.ub, ub[i - 1]);
		assert_true(inst.lb > 0 && inst.lb <= inst.ub);
		if (i == 1) {
			assert_int_equal(inst.seed, 873654221);
			assert_int_equal(inst.p[0], 54);
			assert_int_equal(inst.p[19], 94);
			assert_int_equal(inst.p[20], 79);
			assert_int_equal(inst.p[99], 28);
			assert_int_equal(inst.lb, 1232);
		}
		bnb_instance_free(&inst);
	}
	assert_int_equal(bnb_parse_taillard(buf, len, "tai20_5.txt", 11,
	    &inst, err, sizeof(err)), -1);
	assert_string_equal(err, "tai20_5.txt:80: the file has 10 instances, "
	    "not 11");
	assert_int_equal(bnb_parse_taillard(buf, len, "tai20_5.txt", 0,
	    &inst, err, sizeof(err)), -1);
	free(buf);
}

/* Malformed files: each refused with the right file:line. */
static void
test_parse_bad(void **state)
{
#define HDR	"number of jobs, number of machines, initial seed, upper " \
		"bound and lower bound :\n"
#define PT	"processing times :\n"
	static const struct {
		const char	*text;
		uint32_t	 index;
		const char	*want;		/* NULL: parses */
	} cases[] = {
		{ HDR "1 1 5 7 7\n" PT "7\n", 1, NULL },
		{ HDR "  2 1\r\n" PT " 3 4 \r\n", 1, NULL },
		{ HDR "1 1\n" PT "0", 1, NULL },
		{ HDR "2 2\n" PT "1 2\n3 4\n\n" HDR "1 1\n" PT "5\n", 2,
		    NULL },
		{ "", 1, "f:1: no instance in the file" },
		{ "\n\n  \n", 1, "f:3: no instance in the file" },
		{ "hello\n", 1, "f:1: expected the header" },
		{ HDR, 1, "f:1: instance 1: no jobs and machines line" },
		{ HDR "20\n", 1, "f:2: expected the numbers of jobs" },
		{ HDR "2 x\n", 1, "f:2: 'x' is not an integer" },
		{ HDR "0 3\n", 1, "f:2: 0 jobs: from 1 to 500" },
		{ HDR "501 3\n", 1, "f:2: 501 jobs: from 1 to 500" },
		{ HDR "5 101\n", 1, "f:2: 101 machines: from 1 to 100" },
		{ HDR "2 1 1 2 3 4\n", 1, "f:2: more than 5" },
		{ HDR "2 1 1 -2 3\n", 1, "f:2: a bound is negative" },
		{ HDR "2 1\n\n1 2\n", 1, "f:4: expected 'processing times :'" },
		{ HDR "2 1\n" PT, 1, "f:3: instance 1: the file ends before "
		    "machine 1" },
		{ HDR "2 2\n" PT "1 2\n", 1, "f:4: instance 1: the file ends "
		    "before machine 2" },
		{ HDR "3 1\n" PT "1 2\n", 1, "f:4: machine 1 has 2 processing "
		    "times, not 3" },
		{ HDR "3 1\n" PT "1 2 3 4\n", 1, "f:4: more than 3 processing "
		    "times" },
		{ HDR "2 1\n" PT "1 -2\n", 1, "f:4: negative processing time "
		    "-2 (job 2)" },
		{ HDR "2 1\n" PT "1 2.5\n", 1, "f:4: '2.5' is not an integer" },
		{ HDR "2 1\n" PT "1 abc\n", 1, "f:4: 'abc' is not an integer" },
		{ HDR "2 1\n" PT "10001 1\n", 1, "f:4: processing time 10001 "
		    "(job 1) is over 10000" },
		{ HDR "2 1\n" PT "99999999999999999999 1\n", 1,
		    "f:4: 99999999999999999999 is out of range" },
		{ HDR "2 2\n" PT "1 2\n" HDR "1 1\n" PT "5\n", 1,
		    "f:5: instance 1: expected 2 rows of times, found 1" },
		{ HDR "1 1\n" PT "5\n", 2, "f:4: the file has 1 instance, "
		    "not 2" },
		{ HDR "1 1\n" PT "5\nnumber\n", 2, "f:5: expected the header" },
		{ HDR "1 1\n" PT "5\n" HDR "1 1\n" PT "-5\n", 2,
		    "f:8: negative processing time" },
	};
	struct bnb_instance	 inst;
	char			 err[256];
	size_t			 i;
	int			 rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = bnb_parse_taillard(cases[i].text, strlen(cases[i].text),
		    "f", cases[i].index, &inst, err, sizeof(err));
		if (cases[i].want == NULL) {
			if (rc != 0)
				fail_msg("case %zu: %s", i, err);
			bnb_instance_free(&inst);
			continue;
		}
		if (rc != -1)
			fail_msg("case %zu parsed", i);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
			fail_msg("case %zu: '%s', not '%s...'", i, err,
			    cases[i].want);
		assert_null(inst.p);
	}
	/* A NUL byte. */
	rc = bnb_parse_taillard(HDR "1 1\n" PT "5\0\n", sizeof(HDR PT) + 6,
	    "f", 1, &inst, err, sizeof(err));
	assert_int_equal(rc, -1);
	assert_string_equal(err, "f:4: NUL byte: not a text file");
	/* n = 1, m = 1 and n = 2 solve. */
	rc = bnb_parse_taillard(cases[0].text, strlen(cases[0].text), "f", 1,
	    &inst, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_int_equal(inst.ub, 7);
	{
		struct bnb_solution	 sol;

		assert_int_equal(solve(&inst, BNB_LB2, BNB_BIDIR, 0, BNB_NONE,
		    1, &sol), 7);
		assert_true(sol.proved);
		assert_int_equal(sol.perm[0], 0);
	}
	bnb_instance_free(&inst);
#undef HDR
#undef PT
}

/* 500 jobs: no recursion, bounded memory, budgets and frontiers work. */
static void
test_large(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_search	*s;
	struct bnb_frontier	 fr;
	struct bnb_ctl		 ctl;
	uint16_t		 perm[BNB_MAX_JOBS];
	char			 err[128];
	uint8_t			*buf;
	size_t			 len;
	struct bnb_result	 res;
	const uint16_t		*bp;

	(void)state;
	rnd_state = 500;
	rnd_instance(&inst, BNB_MAX_JOBS, 2, BNB_MAX_TIME);
	pb = bnb_problem_new(&inst, BNB_LB2, err, sizeof(err));
	assert_non_null(pb);
	s = bnb_search_new(pb);
	assert_non_null(s);
	assert_int_equal(bnb_search_start(s, NULL, 0, 0, err, sizeof(err)), 0);
	memset(&ctl, 0, sizeof(ctl));
	ctl.budget = 200;
	assert_int_equal(bnb_explore(s, &ctl), BNB_BUDGET);
	assert_int_equal(bnb_search_nodes(s), 200);
	bnb_neh(&inst, perm);
	assert_int_equal(bnb_perm_check(perm, BNB_MAX_JOBS, BNB_MAX_JOBS), 0);
	assert_true(bnb_makespan(&inst, perm, BNB_MAX_JOBS) > 0);
	bnb_frontier_init(&fr);
	assert_true(bnb_search_take(s, &fr, SIZE_MAX) > 1000);
	len = bnb_result_len(BNB_MAX_JOBS, bnb_search_best(s, &bp), &fr);
	assert_true(len <= BNB_RESULT_HEAD + 4 * BNB_MAX_JOBS +
	    8 * (BNB_MAX_JOBS * (BNB_MAX_JOBS + 1) / 2 + 2));
	buf = malloc(len);
	assert_int_equal(bnb_result_encode(buf, len, BNB_BUDGET, BNB_MAX_JOBS,
	    200, bnb_search_best(s, NULL), bp, &fr), 0);
	assert_int_equal(bnb_result_decode(buf, len, BNB_MAX_JOBS, NULL, &res,
	    err, sizeof(err)), 0);
	assert_int_equal(res.frontier.n, fr.n);
	bnb_result_free(&res);
	free(buf);
	bnb_frontier_free(&fr);
	bnb_search_free(s);
	bnb_problem_free(pb);
	/* Over the limits: refused. */
	inst.n = BNB_MAX_JOBS + 1;
	assert_null(bnb_problem_new(&inst, BNB_LB1, err, sizeof(err)));
	inst.n = BNB_MAX_JOBS;
	inst.p[7] = BNB_MAX_TIME + 1;
	assert_null(bnb_problem_new(&inst, BNB_LB1, err, sizeof(err)));
	bnb_instance_free(&inst);
}

/*
 * Taillard's first instances to their optima, proved, with LB2: ta001
 * from the iterated greedy's upper bound (which LB2 at the root proves at
 * once), ta003 and ta004 from NEH's (a real search, cut into slices).
 */
static void
test_taillard_optima(void **state)
{
	static const struct {
		uint32_t	 index;
		int32_t		 opt;
		uint32_t	 ig;
	} cases[] = {
		{ 1, 1278, 1000 },
		{ 3, 1081, 0 },
		{ 4, 1293, 0 },
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_solve_opts	 o;
	struct bnb_solution	 sol;
	char			*buf, err[256];
	size_t			 len, i;

	(void)state;
	buf = slurp(TAI20_5, &len);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bnb_parse_taillard(buf, len, "tai20_5.txt",
		    cases[i].index, &inst, err, sizeof(err)), 0);
		pb = bnb_problem_new(&inst, BNB_LB2, err, sizeof(err));
		assert_non_null(pb);
		memset(&o, 0, sizeof(o));
		o.slice = 10000;
		o.incumbent = BNB_NONE;
		o.neh = 1;
		o.ig_iters = cases[i].ig;
		assert_int_equal(bnb_solve(pb, &o, &sol, err, sizeof(err)), 0);
		assert_int_equal(sol.cmax, cases[i].opt);
		assert_true(sol.proved);
		assert_int_equal(bnb_makespan(&inst, sol.perm, 20),
		    cases[i].opt);
		print_message("ta%03u: %llu nodes, %llu pops, pool at most "
		    "%zu\n", cases[i].index, (unsigned long long)sol.nodes,
		    (unsigned long long)sol.pops, sol.pool_max);
		if (cases[i].ig == 0)
			assert_true(sol.nodes > 1000);
		bnb_problem_free(pb);
		bnb_instance_free(&inst);
	}
	free(buf);
}

/*
 * Every instance of tai20_5.txt (ta001-ta010) to its optimum, proved,
 * with bidirectional branching and either bound, from NEH's upper bound
 * alone (a real search each, cut into slices); the permutations
 * recompute to the optima.
 */
static void
test_taillard_bidir(void **state)
{
	static const int32_t	 opt[10] = { 1278, 1359, 1081, 1293, 1235,
				    1195, 1234, 1206, 1230, 1108 };
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_solve_opts	 o;
	struct bnb_solution	 sol;
	char			*buf, err[256];
	size_t			 len;
	uint32_t		 i;
	int			 lb;

	(void)state;
	buf = slurp(TAI20_5, &len);
	for (i = 1; i <= 10; i++) {
		assert_int_equal(bnb_parse_taillard(buf, len, "tai20_5.txt", i,
		    &inst, err, sizeof(err)), 0);
		for (lb = BNB_LB1; lb <= BNB_LB2; lb++) {
			pb = bnb_problem_make(&inst, lb, BNB_BIDIR, err,
			    sizeof(err));
			assert_non_null(pb);
			memset(&o, 0, sizeof(o));
			o.slice = 1000;
			o.incumbent = BNB_NONE;
			o.neh = 1;
			o.max_nodes = 50000000;
			assert_int_equal(bnb_solve(pb, &o, &sol, err,
			    sizeof(err)), 0);
			if (!sol.proved || sol.cmax != opt[i - 1])
				fail_msg("ta%03u %s: %d, proved %d after "
				    "%llu nodes", i, bnb_lb_name(lb), sol.cmax,
				    sol.proved, (unsigned long long)sol.nodes);
			assert_int_equal(bnb_makespan(&inst, sol.perm, 20),
			    opt[i - 1]);
			print_message("ta%03u %s bidir: %llu nodes, %llu "
			    "pops\n", i, bnb_lb_name(lb),
			    (unsigned long long)sol.nodes,
			    (unsigned long long)sol.pops);
			bnb_problem_free(pb);
		}
		bnb_instance_free(&inst);
	}
	free(buf);
}

/* Count ticks. */
static void
count_tick(void *arg)
{
	(*(uint64_t *)arg)++;
}

/*
 * bnb_split (--split-depth, --resplit): the subproblems it leaves, each
 * explored whole, and the nodes it branched explore exactly the nodes
 * of the whole tree under a fixed incumbent (none twice, none missed),
 * every one at least depth deep unless near the leaves; with a looser
 * incumbent the optimum is found in them or by the split itself.
 */
static void
test_split(void **state)
{
	static const uint32_t	 nm[][2] = {
		{ 6, 3 }, { 7, 4 }, { 8, 2 }, { 7, 1 }, { 3, 2 }, { 1, 1 }
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_pool		*pl;
	struct bnb_sub		*root, *t;
	uint16_t		 perm[8], sp[8];
	uint8_t			 used[8];
	char			 err[128];
	uint64_t		 one, got, nodes;
	int32_t			 opt, best, inc, b2;
	size_t			 i;
	uint32_t		 d;
	int			 br, lb, k;

	(void)state;
	rnd_state = 11;
	for (i = 0; i < sizeof(nm) / sizeof(nm[0]); i++) {
		rnd_instance(&inst, nm[i][0], nm[i][1], 40);
		memset(used, 0, sizeof(used));
		opt = brute(&inst, perm, 0, used);
		for (br = BNB_FORWARD; br <= BNB_BIDIR; br++)
		for (lb = BNB_LB1; lb <= BNB_LB2; lb++) {
			pb = bnb_problem_make(&inst, lb, br, err, sizeof(err));
			assert_non_null(pb);
			root = bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0));
			assert_non_null(root);
			one = explore_all(pb, root, opt, 0, 0, &best);
			for (d = 0; d <= 4; d++)
			for (k = 0; k < 2; k++) {
				pl = bnb_pool_new();
				assert_non_null(pl);
				inc = opt + k;
				nodes = 0;
				assert_true(bnb_split(pb, root, d, &inc, sp, pl,
				    &nodes, err, sizeof(err)) >= 0);
				got = nodes;
				best = inc < opt + k ? inc : BNB_NONE;
				if (best != BNB_NONE)
					assert_int_equal(bnb_makespan(&inst,
					    sp, inst.n), best);
				while ((t = bnb_pool_pop(pl)) != NULL) {
					assert_true(t->depth + t->back >= d ||
					    t->depth + t->back + 1 >= inst.n);
					assert_int_equal(t->lb,
					    bnb_bound_sub(pb, t));
					got += explore_all(pb, t, inc, 0, 0,
					    &b2);
					if (b2 < inc)
						inc = b2;
					if (b2 != BNB_NONE && (best ==
					    BNB_NONE || b2 < best))
						best = b2;
					free(t);
				}
				bnb_pool_free(pl);
				if (k == 0) {
					assert_int_equal(got, one);
					assert_int_equal(best, BNB_NONE);
				} else
					assert_int_equal(best, opt);
			}
			free(root);
			bnb_problem_free(pb);
		}
		bnb_instance_free(&inst);
	}
}

/*
 * A running task's news (BNB_SHARED) round-trips with its best and the
 * nodes it gave away; the pruned count, the exchange interval and
 * bnb_result_nodes() read what was written; the search counts ticks and
 * the nodes only the host's incumbent pruned.
 */
static void
test_news(void **state)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_search	*s;
	struct bnb_sub		*root;
	struct bnb_frontier	 don;
	struct bnb_result	 res;
	struct bnb_payload	*pl;
	struct bnb_ctl		 ctl;
	_Atomic int32_t		 inc;
	atomic_int		 dflag;
	const uint16_t		*perm;
	uint16_t		 best[12], used8[12];
	uint8_t			 used[12], *buf;
	uint64_t		 nodes, ticks;
	size_t			 len;
	char			 err[128];
	int32_t			 opt;
	int			 st;

	(void)state;
	(void)used8;
	rnd_state = 5;
	rnd_instance(&inst, 9, 4, 50);
	memset(used, 0, sizeof(used));
	opt = brute(&inst, best, 0, used);
	pb = bnb_problem_make(&inst, BNB_LB1, BNB_FORWARD, err, sizeof(err));
	assert_non_null(pb);
	s = bnb_search_new(pb);
	assert_non_null(s);
	root = bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0));
	assert_non_null(root);

	/* Ticks, and nodes pruned by an incumbent under base only. */
	assert_int_equal(bnb_search_load(s, root, err, sizeof(err)), 0);
	atomic_init(&inc, opt + 1);
	memset(&ctl, 0, sizeof(ctl));
	ctl.incumbent = &inc;
	ctl.base = BNB_NONE;
	ticks = 0;
	ctl.tick = count_tick;
	ctl.arg = &ticks;
	assert_int_equal(bnb_explore(s, &ctl), BNB_EXHAUSTED);
	assert_int_equal(ticks, bnb_search_nodes(s) / BNB_TICK);
	assert_int_equal(bnb_search_best(s, NULL), opt);
	assert_int_equal(bnb_search_load(s, root, err, sizeof(err)), 0);
	ctl.base = 0;
	assert_int_equal(bnb_explore(s, &ctl), BNB_EXHAUSTED);
	assert_int_equal(bnb_search_pruned(s), 0);

	/* Donate after a few nodes; the news carries the nodes given. */
	assert_int_equal(bnb_search_load(s, root, err, sizeof(err)), 0);
	atomic_init(&dflag, 0);
	bnb_frontier_init(&don);
	ctl.tick = NULL;
	ctl.budget = 3;
	assert_int_equal(bnb_explore(s, &ctl), BNB_BUDGET);
	atomic_store(&dflag, 1);
	ctl.donate = &dflag;
	ctl.donated = &don;
	ctl.budget = 0;
	st = bnb_explore(s, &ctl);
	assert_int_equal(st, BNB_DONATED);
	assert_true(don.n > 0);
	len = bnb_result_len(inst.n, bnb_search_best(s, &perm), &don);
	buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(bnb_result_encode(buf, len, BNB_SHARED, inst.n,
	    bnb_search_nodes(s), bnb_search_best(s, NULL), perm, &don), 0);
	bnb_result_set_pruned(buf, len, 77);
	assert_int_equal(bnb_result_nodes(buf, len, &nodes), 0);
	assert_int_equal(nodes, bnb_search_nodes(s));
	assert_int_equal(bnb_result_nodes(buf, 8, &nodes), -1);
	assert_int_equal(bnb_result_decode(buf, len, inst.n, root, &res, err,
	    sizeof(err)), 0);
	assert_int_equal(res.stop, BNB_SHARED);
	assert_int_equal(res.pruned, 77);
	assert_int_equal(res.frontier.n, don.n);
	bnb_result_free(&res);
	free(buf);
	bnb_frontier_free(&don);

	/* The payload's exchange interval. */
	len = bnb_payload_len(inst.n, inst.m, 0);
	buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(bnb_payload_encode(buf, len, &inst, BNB_LB1,
	    BNB_FORWARD, opt, 100, root), 0);
	bnb_payload_set_exchange(buf, len, 250);
	pl = calloc(1, sizeof(*pl));
	assert_non_null(pl);
	assert_int_equal(bnb_payload_decode(buf, len, pl, err, sizeof(err)),
	    0);
	assert_int_equal(pl->exchange_ms, 250);
	assert_int_equal(pl->incumbent, opt);
	bnb_instance_free(&pl->inst);
	free(pl);
	free(buf);
	free(root);
	bnb_search_free(s);
	bnb_problem_free(pb);
	bnb_instance_free(&inst);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_valid),
		cmocka_unit_test(test_bounds_bidir),
		cmocka_unit_test(test_solver_brute),
		cmocka_unit_test(test_budget_donate),
		cmocka_unit_test(test_donation_shape),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_codec_roundtrip),
		cmocka_unit_test(test_codec_garbage),
		cmocka_unit_test(test_codec_suffix),
		cmocka_unit_test(test_task_kind),
		cmocka_unit_test(test_parse_taillard),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_taillard_optima),
		cmocka_unit_test(test_taillard_bidir),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_news),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
