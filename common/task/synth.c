/*
 * Kind "synth": a task that only takes time, work_ms reference milliseconds
 * scaled by the host's speed, sleeping or spinning.  It lets scheduler
 * tests and benchmarks choose task lengths exactly.  Given an individual
 * it is an ES evaluation under a fake load: its fitness is Ridge of x;
 * without one, its fitness is work_ms.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "task/task.h"

#define SYNTH_MAX_MS	3600000.0
#define SYNTH_SLICE_NS	1000000L	/* longest single sleep */

static double	 synth_now_ms(void);

/* The monotonic clock in milliseconds. */
static double
synth_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6);
}

/*
 * Run one synth task: wait work_ms / speed milliseconds in slices of at
 * most 1 ms (or spin), checking ctx->cancel each slice and reporting once
 * at the half-way point.
 */
int
task_synth_run(const struct task_params *p, const struct task_ctx *ctx,
    struct task_result *res)
{
	struct timespec	 ts;
	double		 speed, start, now, end, half, left;
	int		 halfdone = 0;

	res->fitness = NAN;
	res->checksum = 0.0;
	res->error[0] = '\0';
	if (!isfinite(p->work_ms) || p->work_ms < 0.0 ||
	    p->work_ms > SYNTH_MAX_MS) {
		snprintf(res->error, sizeof(res->error),
		    "work_ms must be between 0 and %.0f", SYNTH_MAX_MS);
		return (res->status = TASK_BAD_PARAMS);
	}
	speed = ctx->speed > 0.0 ? ctx->speed : 1.0;
	start = synth_now_ms();
	end = start + p->work_ms / speed;
	half = start + (end - start) / 2.0;

	for (;;) {
		if (ctx->cancel != NULL && atomic_load(ctx->cancel) != 0) {
			snprintf(res->error, sizeof(res->error), "cancelled");
			return (res->status = TASK_CANCELLED);
		}
		now = synth_now_ms();
		if (!halfdone && now >= half) {
			halfdone = 1;
			if (ctx->progress != NULL)
				ctx->progress(ctx->arg, 2);
		}
		if (now >= end)
			break;
		if (p->spin)
			continue;
		/* Wake at the half-way point too, not just every slice. */
		left = (halfdone ? end : half) - now;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1e6 < SYNTH_SLICE_NS ?
		    (long)(left * 1e6) + 1 : SYNTH_SLICE_NS;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	/* Carrying an individual, it is an ES evaluation with a fake load. */
	res->fitness = p->nx > 0 && p->x != NULL ? task_ridge(p->x, p->nx) :
	    p->work_ms;
	return (res->status = TASK_OK);
}
