/*
 * Task kinds that workers execute.  One registry maps a kind's name to its
 * run function.  A task is a kind and an opaque payload only that kind
 * reads; its result is a status, an opaque output and an error text.  The
 * built-in kinds' encodings are in es/payload.h and workerd.conf(5).
 *
 * A run function is called from an execution thread; it must be
 * reentrant, poll ctx->cancel often (every few milliseconds at most), and
 * report its half-way point once through ctx->progress when it has one.
 * A kind that only waits (synth, island's load) waits in task_wait_until(),
 * which a host's task_cancel_raise() cuts short: it need not wake to poll.
 */
#ifndef R3Q_TASK_H
#define R3Q_TASK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "task/status.h"

/* One task's input: the caller owns the payload for the whole run. */
struct task_params {
	const char	*kind;
	const uint8_t	*payload;	/* may be NULL when payload_len is 0 */
	size_t		 payload_len;
};

/*
 * What a running task has of its host.  bound, donate and share are for
 * the kinds that talk with their job while they run (pfsp, protocol 6),
 * all optional (NULL): bound is the best value the master pushed for
 * this task (TaskPush; pfsp: the incumbent), INT32_MAX until then, and
 * may drop at any time (the host and the kind only ever lower it); donate is raised when the master asks the task
 * to give part of its open work back, which it does through share (the
 * kind clears it); share sends news to the master (TaskNews) before the
 * task ends, in order, the bytes copied.  launched, optional too, is
 * called by a kind that hands its task to another process (persistent
 * kinds) once it has, at most once a task: the host may put off its own
 * work until then, so that the task's process is woken first.  busy,
 * optional too, is called by such a kind when its task still runs
 * TASK_BUSY_MS after it was handed over, at most once a task: the host
 * may put off telling the master of the start until then, since a task
 * that ends sooner is told of by its result alone.
 *
 * next and queued, optional too (NULL, 0), let a persistent kind hand its
 * process the slot's next task while the current one runs (pipelining,
 * workerd.conf(5)): next fills p with the task that is to follow on this
 * slot, and where its cancel flag is, and takes it from the host's queue
 * (1), or says there is none (0); the host then runs that task next on
 * the same slot with queued set.
 */
struct task_ctx {
	const atomic_int *cancel;	/* non-zero: stop as soon as possible */
	double		 speed;		/* speed ratio vs reference, > 0 */
	void		(*progress)(void *, int);	/* (arg, half = 2) */
	void		*arg;
	_Atomic int32_t	*bound;
	atomic_int	*donate;
	void		(*share)(void *, const uint8_t *, size_t);
	void		(*launched)(void *);	/* (arg) */
	int		(*next)(void *, struct task_params *,
			    const atomic_int **);	/* (arg, p, cancel) */
	int		 queued;	/* this task came from next */
	void		(*busy)(void *);	/* (arg) */
};

#define TASK_BUSY_MS	1		/* ctx->busy: a task running this
					   long after it was handed over */
#define TASK_OUT_INLINE	32		/* outputs this short need no malloc */
#define TASK_ERRLEN	512

/*
 * One task's outcome.  The output (meaningful when status is TASK_OK) is
 * read with task_output() and lives in one of three places:
 *
 * - out_inline, when it is at most TASK_OUT_INLINE bytes (out_ext NULL);
 * - out_ext malloc'd by the kind (out_owned set), when it is longer: the
 *   caller owns it and frees it with task_result_free();
 * - out_ext borrowed from params->payload (out_owned clear), for a kind
 *   whose output is its input (echo): valid while the payload is.
 *
 * task_run() overwrites the whole struct, so a result that may hold a
 * malloc'd output must go through task_result_free() before it is reused
 * or dropped; task_result_free() of a zeroed or freed result does nothing.
 * checksum is ridge-lu's sum of the LU factors: computed so the load is
 * not optimised away and so tests can check it; it is not sent.
 */
struct task_result {
	int		 status;		/* enum task_status */
	char		 error[TASK_ERRLEN];	/* why, unless TASK_OK */
	size_t		 out_len;
	const uint8_t	*out_ext;		/* NULL: in out_inline */
	int		 out_owned;		/* out_ext is malloc'd */
	double		 checksum;
	uint8_t		 out_inline[TASK_OUT_INLINE];
};

struct task_kind {
	const char	*name;
	int		(*run)(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
};

const struct task_kind	*task_kind_lookup(const char *);
const struct task_kind	*task_kind_list(size_t *);
int			 task_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
double			 task_ridge(const double *, size_t);
void			 task_cancel_raise(atomic_int *);
int			 task_wait_until(const atomic_int *, double);

const uint8_t		*task_output(const struct task_result *, size_t *);
uint8_t			*task_output_alloc(struct task_result *, size_t);
void			 task_output_borrow(struct task_result *,
			    const uint8_t *, size_t);
void			 task_result_free(struct task_result *);
int			 task_result_limit(struct task_result *, uint64_t);

/* For the built-in kinds: the es payload (es/payload.h) and its checks. */
struct es_payload;
int			 task_es_decode(const struct task_params *, size_t,
			    struct es_payload *, double *, size_t, double **,
			    struct task_result *);

/* The built-in kinds' run functions, for the registry in task.c. */
int			 task_ridge_lu_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
int			 task_synth_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
int			 task_echo_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
int			 task_pfsp_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);
int			 task_island_run(const struct task_params *,
			    const struct task_ctx *, struct task_result *);

#endif /* R3Q_TASK_H */
