/*
 * Kind "echo": the output is the payload, byte for byte, of any length
 * (0 too).  It costs nothing but the trip, so tests, examples and
 * benchmarks of the transport use it.  The output borrows the payload: no
 * copy is made.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "task/task.h"

/* Run one echo task: give the payload back unless cancelled already. */
int
task_echo_run(const struct task_params *p, const struct task_ctx *ctx,
    struct task_result *res)
{
	res->error[0] = '\0';
	if (ctx->cancel != NULL && atomic_load(ctx->cancel) != 0) {
		snprintf(res->error, sizeof(res->error), "cancelled");
		return (res->status = TASK_CANCELLED);
	}
	if (ctx->progress != NULL)
		ctx->progress(ctx->arg, 2);
	task_output_borrow(res, p->payload, p->payload_len);
	return (res->status = TASK_OK);
}
