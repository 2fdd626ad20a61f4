/*
 * Kind "pfsp": explore one permutation flow-shop subproblem depth-first
 * with a node budget (common/bnb/pfsp.h has the bytes of its payload and
 * output).  The payload carries the instance, so a worker needs nothing
 * else; the output says whether the subtree is exhausted, the best
 * permutation found below the incumbent, and the open nodes left when
 * the budget ran out.  The half-way report comes when half the budget is
 * spent.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "task/task.h"

static void	 pfsp_half(void *);

/* Half the node budget is spent: the task's "state 2". */
static void
pfsp_half(void *arg)
{
	const struct task_ctx	*ctx = arg;

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
	struct bnb_frontier	 fr;
	struct bnb_ctl		 ctl;
	_Atomic int32_t		 inc;
	const uint16_t		*perm;
	uint8_t			*out;
	size_t			 len;
	int32_t			 best;
	int			 st, status = TASK_FAILED;

	res->error[0] = '\0';
	bnb_frontier_init(&fr);
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
	atomic_init(&inc, pl->incumbent);
	memset(&ctl, 0, sizeof(ctl));
	ctl.incumbent = &inc;
	ctl.cancel = ctx->cancel;
	ctl.budget = pl->budget;
	ctl.half = pfsp_half;
	ctl.arg = (void *)(uintptr_t)ctx;
	st = bnb_explore(s, &ctl);
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
	status = TASK_OK;
out:
	bnb_frontier_free(&fr);
	free(sub);
	bnb_search_free(s);
	bnb_problem_free(pb);
	bnb_instance_free(&pl->inst);
	free(pl);
	return (res->status = status);
}
