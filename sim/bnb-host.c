/*
 * r3q-sim's branch and bound over the pure module: what masterd's bnb
 * driver does with the pool and the incumbent (masterd/job_bnb.c: the
 * root split into the pool, a task's output decoded against its
 * subproblem, a better permutation recomputed before it is believed, the
 * open nodes under the incumbent pushed back) and what a worker's "pfsp"
 * task does (common/task/pfsp.c: load, explore with the node budget, hand
 * back the frontier), cut into steps so that the simulator can charge
 * each step's nodes to a simulated CPU.  No clock here.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "bnb-host.h"

/*
 * The master's search: the instance, its problem (shared read-only with
 * every worker's run), the pool and the incumbent.  Owned by bnb.cpp's
 * master for the whole run.
 */
struct sbnb_job {
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_pool		*pool;
	uint64_t		 budget;
	int32_t			 inc;
	int32_t			 first;		/* the heuristic's */
	uint16_t		 perm[BNB_MAX_JOBS];
	uint64_t		 root_nodes;
};

/* A worker's search of one task at a time; owned by its worker actor. */
struct sbnb_run {
	const struct sbnb_job	*job;
	struct bnb_search	*s;
	struct bnb_ctl		 ctl;
	_Atomic int32_t		 inc;
	int			 st;
};

/* Read a whole file; NULL with err set. */
static char *
sbnb_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE	*f;
	char	*buf = NULL, *nb;
	size_t	 cap = 0, n;

	*len = 0;
	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	for (;;) {
		if (*len + 65536 > cap) {
			cap = cap ? 2 * cap : 65536 * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		if ((n = fread(buf + *len, 1, 65536, f)) == 0)
			break;
		*len += n;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	return (buf);
fail:
	fclose(f);
	free(buf);
	return (NULL);
}

/*
 * The job of instance p->index of p->file: the problem, the first
 * incumbent (NEH, or the iterated greedy of p->ig iterations, seed 1, as
 * r3qctl bnb makes it) and the root split to p->split_depth into the
 * pool.  NULL with err set ("file:line: message" for a bad file).
 */
struct sbnb_job *
sbnb_job_new(const struct sbnb_params *p, char *err, size_t errlen)
{
	struct sbnb_job	*j;
	struct bnb_sub	*root = NULL;
	char		*buf;
	size_t		 len;
	int32_t		 c;

	if (errlen > 0)
		err[0] = '\0';
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	if ((buf = sbnb_slurp(p->file, &len, err, errlen)) == NULL)
		goto fail;
	if (bnb_parse_taillard(buf, len, p->file, p->index, &j->inst, err,
	    errlen) == -1) {
		free(buf);
		goto fail;
	}
	free(buf);
	j->budget = p->budget;
	if ((j->pb = bnb_problem_make(&j->inst, p->lb, p->branch, err,
	    errlen)) == NULL || (j->pool = bnb_pool_new()) == NULL)
		goto nomem;
	c = p->ig > 0 ? bnb_ig(&j->inst, p->ig, 1, j->perm) :
	    bnb_neh(&j->inst, j->perm);
	if (c == -1)
		goto nomem;
	j->inc = j->first = c;
	if ((root = bnb_sub_new(NULL, 0, bnb_bound(j->pb, NULL, 0))) == NULL)
		goto nomem;
	if (bnb_split(j->pb, root, p->split_depth, &j->inc, j->perm, j->pool,
	    &j->root_nodes, err, errlen) == -1) {
		free(root);
		goto fail;
	}
	free(root);
	return (j);
nomem:
	if (err[0] == '\0')
		snprintf(err, errlen, "out of memory");
fail:
	sbnb_job_free(j);
	return (NULL);
}

/* Free a job and what it holds. */
void
sbnb_job_free(struct sbnb_job *j)
{
	if (j == NULL)
		return;
	bnb_pool_free(j->pool);
	bnb_problem_free(j->pb);
	bnb_instance_free(&j->inst);
	free(j);
}

/* The instance's jobs. */
uint32_t
sbnb_job_n(const struct sbnb_job *j)
{
	return (j->inst.n);
}

/* The instance's machines. */
uint32_t
sbnb_job_m(const struct sbnb_job *j)
{
	return (j->inst.m);
}

/* The incumbent: the best makespan known. */
int32_t
sbnb_job_inc(const struct sbnb_job *j)
{
	return (j->inc);
}

/* The heuristic's makespan, the first incumbent. */
int32_t
sbnb_job_first(const struct sbnb_job *j)
{
	return (j->first);
}

/* The nodes the root split explored at the master. */
uint64_t
sbnb_job_root_nodes(const struct sbnb_job *j)
{
	return (j->root_nodes);
}

/* Subproblems in the pool. */
size_t
sbnb_job_pool(const struct sbnb_job *j)
{
	return (bnb_pool_size(j->pool));
}

/* The pool's smallest bound, BNB_NONE when empty. */
int32_t
sbnb_job_pool_bound(const struct sbnb_job *j)
{
	return (bnb_pool_bound(j->pool));
}

/*
 * The subproblem of the smallest bound under the incumbent, out of the
 * pool (the caller frees it with sbnb_sub_free); NULL when none is left.
 */
struct bnb_sub *
sbnb_job_pop(struct sbnb_job *j)
{
	struct bnb_sub	*s;

	while ((s = bnb_pool_pop(j->pool)) != NULL) {
		if (s->lb < j->inc)
			return (s);
		free(s);
	}
	return (NULL);
}

/*
 * A worker's permutation of makespan c becomes the incumbent if it is
 * better and recomputes to c; the pool is pruned with it.  1 if it did,
 * 0 if not better, -1 if its makespan is not c.
 */
int
sbnb_job_better(struct sbnb_job *j, int32_t c, const uint16_t *perm)
{
	if (c == BNB_NONE || c >= j->inc)
		return (0);
	if (bnb_makespan(&j->inst, perm, j->inst.n) != c)
		return (-1);
	j->inc = c;
	memcpy(j->perm, perm, j->inst.n * sizeof(*perm));
	bnb_pool_prune(j->pool, c);
	return (1);
}

/*
 * The output of the task of subproblem sub: decoded against it, a better
 * permutation taken, the open nodes under the incumbent pushed into the
 * pool; *nodes is what the task explored.  -1 with err set for an output
 * the decoder refuses or a makespan that does not recompute.
 */
int
sbnb_job_result(struct sbnb_job *j, const struct bnb_sub *sub,
    const struct sbnb_out *o, uint64_t *nodes, char *err, size_t errlen)
{
	struct bnb_result	 res;
	struct bnb_sub		*c;
	size_t			 i;
	int			 rc = -1;

	memset(&res, 0, sizeof(res));
	if (bnb_result_decode(o->buf, o->len, j->inst.n, sub, &res, err,
	    errlen) == -1)
		return (-1);
	*nodes = res.nodes;
	if (sbnb_job_better(j, res.best, res.perm) == -1) {
		snprintf(err, errlen, "a makespan of %d does not recompute",
		    (int)res.best);
		goto out;
	}
	for (i = 0; i < res.frontier.n; i++) {
		if (res.frontier.v[i].lb >= j->inc)
			continue;
		if ((c = bnb_frontier_sub(&res.frontier, i)) == NULL ||
		    bnb_pool_push(j->pool, c) == -1) {
			free(c);
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	bnb_result_free(&res);
	return (rc);
}

/* Does the incumbent's permutation recompute to it?  1 if so. */
int
sbnb_job_check(const struct sbnb_job *j)
{
	return (bnb_perm_check(j->perm, j->inst.n, j->inst.n) == 0 &&
	    bnb_makespan(&j->inst, j->perm, j->inst.n) == j->inc);
}

/* The bytes of sub's task payload on the wire. */
size_t
sbnb_payload_len(const struct sbnb_job *j, const struct bnb_sub *sub)
{
	return (bnb_payload_len(j->inst.n, j->inst.m, sub->depth + sub->back));
}

/* A subproblem's bound. */
int32_t
sbnb_sub_lb(const struct bnb_sub *sub)
{
	return (sub->lb);
}

/* Free a subproblem. */
void
sbnb_sub_free(struct bnb_sub *sub)
{
	free(sub);
}

/* A worker's search over job j's problem; NULL when out of memory. */
struct sbnb_run *
sbnb_run_new(const struct sbnb_job *j)
{
	struct sbnb_run	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (NULL);
	if ((r->s = bnb_search_new(j->pb)) == NULL) {
		free(r);
		return (NULL);
	}
	r->job = j;
	return (r);
}

/* Free a worker's search. */
void
sbnb_run_free(struct sbnb_run *r)
{
	if (r == NULL)
		return;
	bnb_search_free(r->s);
	free(r);
}

/* A task starts: sub with the incumbent inc it was sent with.  -1: bad. */
int
sbnb_run_load(struct sbnb_run *r, const struct bnb_sub *sub, int32_t inc)
{
	char	 err[128];

	if (bnb_search_load(r->s, sub, err, sizeof(err)) == -1)
		return (-1);
	atomic_store(&r->inc, inc);
	memset(&r->ctl, 0, sizeof(r->ctl));
	r->ctl.incumbent = &r->inc;
	r->ctl.base = inc;
	r->st = BNB_BUDGET;
	return (0);
}

/* A better incumbent reaches the running task (pushed by the master). */
void
sbnb_run_lower(struct sbnb_run *r, int32_t inc)
{
	if (inc < atomic_load(&r->inc))
		atomic_store(&r->inc, inc);
}

/*
 * Explore until upto nodes since the load (or the task's own budget, or
 * the subtree's end, whichever comes first).  Returns 1 when the task is
 * over (exhausted or its budget spent), 0 when it may go on, -1 when out
 * of memory.
 */
int
sbnb_run_step(struct sbnb_run *r, uint64_t upto)
{
	uint64_t	 budget = r->job->budget;

	if (upto == 0 || upto > budget)
		upto = budget;
	r->ctl.budget = upto;
	if ((r->st = bnb_explore(r->s, &r->ctl)) == -1)
		return (-1);
	return (r->st == BNB_EXHAUSTED || bnb_search_nodes(r->s) >= budget);
}

/* Nodes explored since the load. */
uint64_t
sbnb_run_nodes(const struct sbnb_run *r)
{
	return (bnb_search_nodes(r->s));
}

/* The task's best below its incumbent so far, BNB_NONE: none. */
int32_t
sbnb_run_best(const struct sbnb_run *r, const uint16_t **perm)
{
	return (bnb_search_best(r->s, perm));
}

/*
 * The task's output, as common/task/pfsp.c encodes it: its stop, nodes,
 * best and the frontier it leaves open.  o->buf is malloc'd (the caller
 * frees it).  -1 when out of memory.
 */
int
sbnb_run_output(struct sbnb_run *r, struct sbnb_out *o)
{
	struct bnb_frontier	 fr;
	const uint16_t		*perm;
	int32_t			 best;
	uint32_t		 n = r->job->inst.n;
	int			 rc = -1;

	memset(o, 0, sizeof(*o));
	bnb_frontier_init(&fr);
	if (r->st == BNB_BUDGET && bnb_search_take(r->s, &fr, SIZE_MAX) == -1)
		goto out;
	best = bnb_search_best(r->s, &perm);
	o->len = bnb_result_len(n, best, &fr);
	if ((o->buf = malloc(o->len)) == NULL)
		goto out;
	if (bnb_result_encode(o->buf, o->len, r->st, n, bnb_search_nodes(r->s),
	    best, perm, &fr) == -1) {
		free(o->buf);
		o->buf = NULL;
		goto out;
	}
	o->nodes = bnb_search_nodes(r->s);
	o->best = best;
	rc = 0;
out:
	bnb_frontier_free(&fr);
	return (rc);
}
