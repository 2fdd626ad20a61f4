/*
 * The registry of task kinds and what every kind shares: running one by
 * name, a result's output, the decoding of the es payload and the Ridge
 * function of the R3Q paper.  The statuses' names are in status.c.
 */
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "es/es.h"
#include "es/payload.h"
#include "task/task.h"

/* Workers advertise these names in their hello; the master matches them. */
static const struct task_kind task_kinds[] = {
	{ "ridge-lu",	task_ridge_lu_run },
	{ "synth",	task_synth_run },
	{ "echo",	task_echo_run },
	{ "pfsp",	task_pfsp_run },
	{ "island",	task_island_run },
};

#define TASK_NKINDS	(sizeof(task_kinds) / sizeof(task_kinds[0]))

/* Find a kind by name; NULL if this build has no such kind. */
const struct task_kind *
task_kind_lookup(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return (NULL);
	for (i = 0; i < TASK_NKINDS; i++)
		if (strcmp(task_kinds[i].name, name) == 0)
			return (&task_kinds[i]);
	return (NULL);
}

/* The whole registry, its length in *n. */
const struct task_kind *
task_kind_list(size_t *n)
{
	if (n != NULL)
		*n = TASK_NKINDS;
	return (task_kinds);
}

/*
 * Run one task of kind params->kind and return its status, which is also
 * left in res->status.  A NULL ctx means: no cancel flag, reference speed,
 * no progress report.  res is overwritten: see struct task_result.
 */
int
task_run(const struct task_params *params, const struct task_ctx *ctx,
    struct task_result *res)
{
	const struct task_kind	*k;
	struct task_ctx		 dflt = { NULL, 1.0, NULL, NULL, NULL, NULL,
	    NULL, NULL, NULL, 0, NULL };

	memset(res, 0, sizeof(*res));
	if (params == NULL) {
		res->status = TASK_BAD_PARAMS;
		snprintf(res->error, sizeof(res->error), "no parameters");
		return (res->status);
	}
	if ((k = task_kind_lookup(params->kind)) == NULL) {
		res->status = TASK_UNKNOWN_KIND;
		snprintf(res->error, sizeof(res->error),
		    "unknown task kind '%s'",
		    params->kind != NULL ? params->kind : "");
		return (res->status);
	}
	if (params->payload == NULL && params->payload_len > 0) {
		res->status = TASK_BAD_PARAMS;
		snprintf(res->error, sizeof(res->error),
		    "%s: payload of %zu bytes is missing", k->name,
		    params->payload_len);
		return (res->status);
	}
	res->status = k->run(params, ctx != NULL ? ctx : &dflt, res);
	if (res->status != TASK_OK)
		task_result_free(res);
	return (res->status);
}

/*
 * The longest a wait lasts without looking at its cancel flag: a flag set
 * by a plain store, not by task_cancel_raise(), is seen this late at most.
 */
#define TASK_WAIT_SLICE_MS	50.0

/*
 * Raise a task's cancel flag and wake the kind if it waits on the flag in
 * task_wait_until().  Hosts raise every flag they hand a kind this way.
 */
void
task_cancel_raise(atomic_int *cancel)
{
	atomic_store(cancel, 1);
#ifdef __linux__
	(void)syscall(SYS_futex, (int *)(uintptr_t)cancel, FUTEX_WAKE_PRIVATE,
	    INT_MAX, NULL, NULL, 0);
#endif
}

/*
 * Wait until the monotonic clock reads deadline_ms (milliseconds, absolute,
 * so that one wait's overshoot is not added to the next) or cancel (NULL:
 * none) is raised, whichever is first, or return early; the caller loops,
 * looking at the clock and the flag.  Returns 1 once cancel is raised.
 * On Linux the thread sleeps on the flag itself (a futex, woken by
 * task_cancel_raise), so a waiting task costs no wake-ups: polling every
 * millisecond cost a waiting synth task 1,000 wake-ups a second, and
 * emulated grids of dozens of such workers filled this machine's 2 cores.
 */
int
task_wait_until(const atomic_int *cancel, double deadline_ms)
{
	struct timespec	 ts;
	double		 until = deadline_ms, now;

	if (cancel != NULL) {
		if (atomic_load(cancel) != 0)
			return (1);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
		if (until > now + TASK_WAIT_SLICE_MS)
			until = now + TASK_WAIT_SLICE_MS;
	}
	if (!(until > 0))
		until = 0;
	ts.tv_sec = (time_t)(until / 1e3);
	ts.tv_nsec = (long)((until - (double)ts.tv_sec * 1e3) * 1e6);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	} else if (ts.tv_nsec < 0)
		ts.tv_nsec = 0;
#ifdef __linux__
	if (cancel != NULL) {
		/*
		 * FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time.
		 * It returns at once if the flag is no longer 0 (EAGAIN), on
		 * a wake, a timeout or a signal: the caller looks again.
		 */
		(void)syscall(SYS_futex, (int *)(uintptr_t)cancel,
		    FUTEX_WAIT_BITSET_PRIVATE, 0, &ts, NULL,
		    FUTEX_BITSET_MATCH_ANY);
		return (atomic_load(cancel) != 0);
	}
#endif
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
	    NULL) == EINTR)
		;
	return (cancel != NULL && atomic_load(cancel) != 0);
}

/* A result's output and its length in *len; NULL when there is none. */
const uint8_t *
task_output(const struct task_result *res, size_t *len)
{
	*len = res->out_len;
	if (res->out_len == 0)
		return (NULL);
	return (res->out_ext != NULL ? res->out_ext : res->out_inline);
}

/*
 * Room for an output of n bytes, for a kind to fill: the inline buffer
 * when it fits, else malloc'd and owned by the result.  NULL when out of
 * memory (nothing is then held).
 */
uint8_t *
task_output_alloc(struct task_result *res, size_t n)
{
	uint8_t	*p;

	task_result_free(res);
	if (n <= sizeof(res->out_inline)) {
		res->out_len = n;
		return (res->out_inline);
	}
	if ((p = malloc(n)) == NULL)
		return (NULL);
	res->out_ext = p;
	res->out_owned = 1;
	res->out_len = n;
	return (p);
}

/* Make n bytes at p, which outlive the result, its output without a copy. */
void
task_output_borrow(struct task_result *res, const uint8_t *p, size_t n)
{
	task_result_free(res);
	res->out_ext = n > 0 ? p : NULL;
	res->out_len = n;
}

/* Drop a result's output, freeing it if the result owns it. */
void
task_result_free(struct task_result *res)
{
	if (res->out_owned)
		free((void *)(uintptr_t)res->out_ext);
	res->out_ext = NULL;
	res->out_owned = 0;
	res->out_len = 0;
}

/*
 * Fail a successful result whose output is over max bytes (workerd's
 * max_output): the output is dropped and the error says both sizes.
 * Returns the status.
 */
int
task_result_limit(struct task_result *res, uint64_t max)
{
	size_t	 len = res->out_len;

	if (res->status != TASK_OK || len <= max)
		return (res->status);
	task_result_free(res);
	res->status = TASK_FAILED;
	snprintf(res->error, sizeof(res->error), "output of %zu bytes is "
	    "over max_output (%llu)", len, (unsigned long long)max);
	return (res->status);
}

/*
 * Decode the es payload of a ridge-lu or synth task (es/payload.h): the
 * header into *ep, the individual into buf when its nbuf doubles hold it,
 * else into a malloc'd array; *xp is set to either, and the caller frees
 * it when it is not buf.  An individual must have min_dim to ES_MAX_DIM
 * genes.  Returns TASK_OK, or the status, with res->error set.
 */
int
task_es_decode(const struct task_params *p, size_t min_dim,
    struct es_payload *ep, double *buf, size_t nbuf, double **xp,
    struct task_result *res)
{
	double	*x;
	size_t	 i;

	*xp = NULL;
	if (es_payload_decode(p->payload, p->payload_len, ep) == -1 ||
	    ep->nx < min_dim || ep->nx > ES_MAX_DIM) {
		snprintf(res->error, sizeof(res->error), "payload of %zu "
		    "bytes: %s needs %d + 8 x dim, dim %zu to %d",
		    p->payload_len, p->kind, ES_PAYLOAD_HEAD, min_dim,
		    ES_MAX_DIM);
		return (TASK_BAD_PARAMS);
	}
	if (ep->nx <= nbuf)
		x = buf;
	else if ((x = calloc(ep->nx, sizeof(*x))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return (TASK_FAILED);
	}
	for (i = 0; i < ep->nx; i++)
		x[i] = es_payload_x(ep, i);
	*xp = x;
	return (TASK_OK);
}

/* Ridge, the ES's fitness: es_ridge() of the pure library. */
double
task_ridge(const double *x, size_t n)
{
	return (es_ridge(x, n));
}
