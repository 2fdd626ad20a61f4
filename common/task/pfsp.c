/*
 * Kind "pfsp": explore one permutation flow-shop subproblem depth-first
 * with a node budget (common/bnb/pfsp.h has the bytes of its payload and
 * output).  The payload carries the instance, so a worker needs nothing
 * else; the output says whether the subtree is exhausted, the best
 * permutation found below the incumbent, and the open nodes left when
 * the budget ran out.  The half-way report comes when half the budget is
 * spent.
 *
 * While it runs (protocol 6), a better makespan it finds goes to the
 * master as news (ctx->share, an output with stop BNB_SHARED) at once
 * or at most every exchange interval of the payload, and the incumbent
 * the master pushes (ctx->bound) prunes the search at its next node.
 * Asked to donate (ctx->donate), it gives away the open nodes nearest
 * the root (bnb_explore's BNB_DONATED), sends them as news and goes on
 * with the rest: no node is both given and explored here.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "task/task.h"

/* One run's state for the search's callbacks. */
struct pfsp_run {
	const struct task_ctx	*ctx;
	struct bnb_search	*s;
	uint32_t		 n;
	uint64_t		 every_ns;	/* exchange interval */
	uint64_t		 last_ns;	/* last news sent */
	int			 pending;	/* a best not sent yet */
	int			 failed;	/* out of memory for news */
};

static void	 pfsp_half(void *);
static void	 pfsp_found(void *, int32_t, const uint16_t *);
static void	 pfsp_tick(void *);
static void	 pfsp_share(struct pfsp_run *, const struct bnb_frontier *);

static uint64_t
pfsp_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* Send news: the best so far and fr's nodes (given away), if any. */
static void
pfsp_share(struct pfsp_run *r, const struct bnb_frontier *fr)
{
	const uint16_t	*perm;
	uint8_t		*buf;
	size_t		 len;
	int32_t		 best;

	best = bnb_search_best(r->s, &perm);
	len = bnb_result_len(r->n, best, fr);
	if ((buf = malloc(len)) == NULL) {
		r->failed = 1;
		return;
	}
	if (bnb_result_encode(buf, len, BNB_SHARED, r->n,
	    bnb_search_nodes(r->s), best, perm, fr) == 0)
		r->ctx->share(r->ctx->arg, buf, len);
	else
		r->failed = 1;
	free(buf);
	r->pending = 0;
	r->last_ns = pfsp_now();
}

/* A better permutation: to the master now or at the next tick. */
static void
pfsp_found(void *arg, int32_t c, const uint16_t *perm)
{
	struct pfsp_run	*r = arg;

	(void)c;
	(void)perm;
	r->pending = 1;
	if (r->every_ns == 0 || pfsp_now() - r->last_ns >= r->every_ns)
		pfsp_share(r, NULL);
}

/* Every BNB_TICK nodes: a best held back by the interval may go now. */
static void
pfsp_tick(void *arg)
{
	struct pfsp_run	*r = arg;

	if (r->pending && pfsp_now() - r->last_ns >= r->every_ns)
		pfsp_share(r, NULL);
}

/* Half the node budget is spent: the task's "state 2". */
static void
pfsp_half(void *arg)
{
	const struct task_ctx	*ctx = ((struct pfsp_run *)arg)->ctx;

	if (ctx->progress != NULL)
		ctx->progress(ctx->arg, 2);
}

/*
 * Run one pfsp task: decode, explore from the subproblem's own bound
 * (recomputed: the payload's is not trusted), encode what came of it.
 */
int
task_pfsp_run(const struct task_params *p, const struct task_ctx *ctx,
    struct task_result *res)
{
	struct bnb_payload	*pl;
	struct bnb_problem	*pb = NULL;
	struct bnb_search	*s = NULL;
	struct bnb_sub		*sub = NULL;
	struct bnb_frontier	 fr, don;
	struct bnb_ctl		 ctl;
	struct pfsp_run		 run;
	_Atomic int32_t		 inc, *incp;
	int32_t			 cur;
	const uint16_t		*perm;
	uint8_t			*out;
	size_t			 len;
	int32_t			 best;
	int			 st, status = TASK_FAILED;

	res->error[0] = '\0';
	bnb_frontier_init(&fr);
	bnb_frontier_init(&don);
	if ((pl = calloc(1, sizeof(*pl))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return (res->status = TASK_FAILED);
	}
	if (bnb_payload_decode(p->payload, p->payload_len, pl, res->error,
	    sizeof(res->error)) == -1) {
		status = TASK_BAD_PARAMS;
		goto out;
	}
	if ((pb = bnb_problem_make(&pl->inst, pl->lb, pl->branch, res->error,
	    sizeof(res->error))) == NULL || (s = bnb_search_new(pb)) == NULL) {
		if (res->error[0] == '\0')
			snprintf(res->error, sizeof(res->error),
			    "out of memory");
		goto out;
	}
	if ((sub = bnb_sub_make(pl->prefix, pl->depth, pl->suffix, pl->back,
	    0)) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}
	sub->lb = bnb_bound_sub(pb, sub);
	if (bnb_search_load(s, sub, res->error, sizeof(res->error)) == -1) {
		status = TASK_BAD_PARAMS;
		goto out;
	}
	/*
	 * The incumbent: the host's pushed bound when it has one, lowered
	 * to the payload's (both only ever go down), else a local one.
	 */
	atomic_init(&inc, pl->incumbent);
	incp = &inc;
	if (ctx->bound != NULL) {
		incp = ctx->bound;
		cur = atomic_load(incp);
		while (pl->incumbent < cur &&
		    !atomic_compare_exchange_weak(incp, &cur, pl->incumbent))
			;
	}
	memset(&run, 0, sizeof(run));
	run.ctx = ctx;
	run.s = s;
	run.n = pl->inst.n;
	run.every_ns = (uint64_t)pl->exchange_ms * 1000000ULL;
	run.last_ns = pfsp_now();
	memset(&ctl, 0, sizeof(ctl));
	ctl.incumbent = incp;
	ctl.base = pl->incumbent;
	ctl.cancel = ctx->cancel;
	ctl.budget = pl->budget;
	ctl.half = pfsp_half;
	ctl.arg = &run;
	if (ctx->share != NULL) {
		ctl.found = pfsp_found;
		ctl.tick = pfsp_tick;
		if (ctx->donate != NULL) {
			ctl.donate = ctx->donate;
			ctl.donated = &don;
		}
	}
	/* A donation goes to the master and the search goes on. */
	while ((st = bnb_explore(s, &ctl)) == BNB_DONATED) {
		pfsp_share(&run, &don);
		bnb_frontier_reset(&don);
		if (run.failed)
			break;
	}
	if (st == -1 || run.failed) {
		/* The nodes given away may be lost: fail the whole task. */
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}
	if (st == BNB_CANCELLED) {
		snprintf(res->error, sizeof(res->error), "cancelled");
		status = TASK_CANCELLED;
		goto out;
	}
	if (st == BNB_BUDGET && bnb_search_take(s, &fr, SIZE_MAX) == -1) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}
	best = bnb_search_best(s, &perm);
	len = bnb_result_len(pl->inst.n, best, &fr);
	if ((out = task_output_alloc(res, len)) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}
	if (bnb_result_encode(out, len, st, pl->inst.n, bnb_search_nodes(s),
	    best, perm, &fr) == -1) {
		snprintf(res->error, sizeof(res->error), "pfsp: cannot encode "
		    "the output");
		goto out;
	}
	bnb_result_set_pruned(out, len, bnb_search_pruned(s));
	status = TASK_OK;
out:
	bnb_frontier_free(&don);
	bnb_frontier_free(&fr);
	free(sub);
	bnb_search_free(s);
	bnb_problem_free(pb);
	bnb_instance_free(&pl->inst);
	free(pl);
	return (res->status = status);
}
