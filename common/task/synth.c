/*
 * Kind "synth": a task that only takes time, work_ms reference milliseconds
 * scaled by the host's speed, sleeping or spinning.  It lets scheduler
 * tests and benchmarks choose task lengths exactly.  Its payload is the es
 * payload (es/payload.h), as ridge-lu's, with lu ignored.  Given an
 * individual it is an ES evaluation under a fake load: its fitness is
 * Ridge of x; without one, its fitness is work_ms.  The output is the
 * fitness, es_output_encode.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "es/payload.h"
#include "task/task.h"

#define SYNTH_MAX_MS	3600000.0
#define SYNTH_SPIN_NS	50000L		/* spun, not slept, before a deadline */
#define SYNTH_XBUF	64		/* genes decoded without malloc */

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
 * Run one synth task: wait work_ms / speed milliseconds (or spin), woken
 * by a cancel (task_wait_until) and reporting once at the half-way point.
 * The sleeps are to absolute deadlines and the last
 * SYNTH_SPIN_NS before the end are spun, so a task lasts its time to a
 * few microseconds on a quiet host (the execution thread's timer slack is
 * the worker's business: workerd sets it to 1 ns).
 */
int
task_synth_run(const struct task_params *p, const struct task_ctx *ctx,
    struct task_result *res)
{
	struct es_payload	 ep;
	double			 xbuf[SYNTH_XBUF], *x, fitness;
	double			 speed, start, now, end, half, next;
	uint8_t			*out;
	int			 halfdone = 0, spin, status;

	res->error[0] = '\0';
	if ((status = task_es_decode(p, 0, &ep, xbuf, SYNTH_XBUF, &x,
	    res)) != TASK_OK)
		return (res->status = status);
	if (!isfinite(ep.work_ms) || ep.work_ms < 0.0 ||
	    ep.work_ms > SYNTH_MAX_MS) {
		snprintf(res->error, sizeof(res->error),
		    "synth: work_ms %g is not between 0 and %.0f", ep.work_ms,
		    SYNTH_MAX_MS);
		status = TASK_BAD_PARAMS;
		goto out;
	}
	spin = (ep.flags & ES_PAYLOAD_SPIN) != 0;
	speed = ctx->speed > 0.0 ? ctx->speed : 1.0;
	start = synth_now_ms();
	end = start + ep.work_ms / speed;
	half = start + (end - start) / 2.0;

	for (;;) {
		if (ctx->cancel != NULL && atomic_load(ctx->cancel) != 0) {
			snprintf(res->error, sizeof(res->error), "cancelled");
			status = TASK_CANCELLED;
			goto out;
		}
		now = synth_now_ms();
		if (!halfdone && now >= half) {
			halfdone = 1;
			if (ctx->progress != NULL)
				ctx->progress(ctx->arg, 2);
		}
		if (now >= end)
			break;
		if (spin)
			continue;
		/*
		 * Wake at the half-way point, then spin the last
		 * SYNTH_SPIN_NS before the end; a cancel wakes the wait.
		 */
		if (halfdone) {
			next = end - SYNTH_SPIN_NS / 1e6;
			if (now >= next)
				continue;
		} else
			next = half;
		(void)task_wait_until(ctx->cancel, next);
	}
	/* Carrying an individual, it is an ES evaluation with a fake load. */
	fitness = ep.nx > 0 ? task_ridge(x, ep.nx) : ep.work_ms;
	if ((out = task_output_alloc(res, ES_OUTPUT_LEN)) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		status = TASK_FAILED;
		goto out;
	}
	es_output_encode(out, fitness);
	status = TASK_OK;
out:
	if (x != xbuf)
		free(x);
	return (res->status = status);
}
