/*
 * The registry of task kinds and what every kind shares: running one by
 * name, naming a status, and the Ridge function of the R3Q paper.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "task/task.h"

/* Indices are bits in a worker's kind mask: never renumber a kind. */
static const struct task_kind task_kinds[] = {
	{ "ridge-lu",	0,	task_ridge_lu_run },
	{ "synth",	1,	task_synth_run },
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
 * no progress report.
 */
int
task_run(const struct task_params *params, const struct task_ctx *ctx,
    struct task_result *res)
{
	const struct task_kind	*k;
	struct task_ctx		 dflt = { NULL, 1.0, NULL, NULL };

	memset(res, 0, sizeof(*res));
	res->fitness = NAN;
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
	res->status = k->run(params, ctx != NULL ? ctx : &dflt, res);
	return (res->status);
}

/* The name of a status, as logs and the protocol print it. */
const char *
task_status_name(int status)
{
	switch (status) {
	case TASK_OK:
		return ("ok");
	case TASK_FAILED:
		return ("failed");
	case TASK_CANCELLED:
		return ("cancelled");
	case TASK_UNKNOWN_KIND:
		return ("unknown-kind");
	case TASK_BAD_PARAMS:
		return ("bad-params");
	}
	return ("invalid");
}

/*
 * Ridge (Schwefel 1.2): the sum over i of (x_1 + ... + x_i)^2, summed in
 * index order with a running partial sum so every host gets the same bits.
 */
double
task_ridge(const double *x, size_t n)
{
	double	 partial = 0.0, f = 0.0;
	size_t	 i;

	for (i = 0; i < n; i++) {
		partial += x[i];
		f += partial * partial;
	}
	return (f);
}
