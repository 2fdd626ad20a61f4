/*
 * Task kinds that workers execute.  One registry maps a kind's name to its
 * run function.  A run function is called from an execution thread; it must
 * be reentrant, poll ctx->cancel often (every few milliseconds at most), and
 * report its half-way point once through ctx->progress when it has one.
 */
#ifndef R3Q_TASK_H
#define R3Q_TASK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum task_status {
	TASK_OK = 0,
	TASK_FAILED,		/* the kind ran and failed */
	TASK_CANCELLED,		/* ctx->cancel was raised */
	TASK_UNKNOWN_KIND,	/* no such kind in this build */
	TASK_BAD_PARAMS		/* parameters out of range */
};

struct task_params {
	const char	*kind;
	const double	*x;		/* ridge-lu: the individual */
	size_t		 nx;
	uint32_t	 lu;		/* ridge-lu: LU matrix order, 0 = none */
	double		 work_ms;	/* synth: reference milliseconds */
	int		 spin;		/* synth: spin instead of sleeping */
};

struct task_ctx {
	const atomic_int *cancel;	/* non-zero: stop as soon as possible */
	double		 speed;		/* speed ratio vs reference, > 0 */
	void		(*progress)(void *, int);	/* (arg, half = 2) */
	void		*arg;
};

struct task_result {
	double		 fitness;
	double		 checksum;
	int		 status;	/* enum task_status */
	char		 error[160];
};

struct task_kind {
	const char	*name;
	unsigned	 index;		/* bit in a kind mask, < 32 */
	int		(*run)(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
};

const struct task_kind	*task_kind_lookup(const char *);
const struct task_kind	*task_kind_list(size_t *);
int			 task_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
const char		*task_status_name(int);
double			 task_ridge(const double *, size_t);

/* The built-in kinds' run functions, for the registry in task.c. */
int			 task_ridge_lu_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
int			 task_synth_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);

#endif /* R3Q_TASK_H */
