/*
 * Kind "island": one epoch of one island of the island-model ES (issue
 * 22; common/es/island.h has the bytes).  The payload carries the run's
 * parameters, the island's state at the last migration and the migrants
 * it received from every other island; the task merges them in island
 * order, runs the epoch's generations one at a time (checking cancel
 * between two) and answers the island's state at its end.  work_ms, if
 * any, is a synthetic load: the task takes at least work_ms / speed
 * milliseconds, as a synth task would, so tests and benchmarks can make
 * an epoch last; it changes no bit of the answer.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "es/island.h"
#include "task/task.h"


static double
island_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6);
}

static int
island_cancelled(const struct task_ctx *ctx)
{
	return (ctx->cancel != NULL && atomic_load(ctx->cancel) != 0);
}

int
task_island_run(const struct task_params *tp, const struct task_ctx *ctx,
    struct task_result *res)
{
	struct island_params	 p;
	struct island		*is = NULL;
	double			 work_ms, speed, start, end, now;
	uint32_t		 flags, half, ran = 0;
	uint8_t			*out;
	int			 status, halfdone = 0;

	res->error[0] = '\0';
	if (island_epoch_from_payload(tp->payload, tp->payload_len, &is, &p,
	    &work_ms, &flags, res->error, sizeof(res->error)) == -1)
		return (res->status = TASK_BAD_PARAMS);
	speed = ctx->speed > 0.0 ? ctx->speed : 1.0;
	start = island_now_ms();
	end = start + work_ms / speed;
	half = (island_epoch_end(&p, island_epoch(is)) + 2 -
	    island_generation(is)) / 2;
	/* One generation at a time: the bits do not depend on the cut. */
	while (!island_epoch_done(is)) {
		if (island_cancelled(ctx)) {
			snprintf(res->error, sizeof(res->error), "cancelled");
			status = TASK_CANCELLED;
			goto out;
		}
		ran += island_run(is, 1);
		if (!halfdone && ran >= half && work_ms == 0) {
			halfdone = 1;
			if (ctx->progress != NULL)
				ctx->progress(ctx->arg, 2);
		}
	}
	/* The synthetic load, cancellable (synth.c's loop). */
	for (;;) {
		if (island_cancelled(ctx)) {
			snprintf(res->error, sizeof(res->error), "cancelled");
			status = TASK_CANCELLED;
			goto out;
		}
		now = island_now_ms();
		if (!halfdone && now >= start + (end - start) / 2.0) {
			halfdone = 1;
			if (ctx->progress != NULL)
				ctx->progress(ctx->arg, 2);
		}
		if (now >= end)
			break;
		if (flags & ISLAND_F_SPIN)
			continue;
		/* Woken at the half-way point and by a cancel. */
		(void)task_wait_until(ctx->cancel, halfdone ? end :
		    start + (end - start) / 2.0);
	}
	if ((out = task_output_alloc(res, island_state_len(&p))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		status = TASK_FAILED;
		goto out;
	}
	island_state_encode(is, out);
	status = TASK_OK;
 out:
	island_free(is);
	return (res->status = status);
}
