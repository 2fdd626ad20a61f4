/*
 * r3q-plugin.h: the C ABI of R3Q task-kind plugins (r3q-plugin(3)).
 *
 * A plugin is a shared object that workerd loads with dlopen at start-up
 * (and at a reload that adds or changes it), named in workerd.conf:
 *
 *	plugin NAME = /usr/lib/r3q/fitness.so
 *
 * It exports four symbols, all required:
 *
 *	const unsigned r3q_plugin_abi = R3Q_PLUGIN_ABI;
 *	int  r3q_plugin_init(const char *kind, unsigned nslots, void **state,
 *	         char *err, size_t errlen);
 *	int  r3q_plugin_run(const struct r3q_plugin_task *task);
 *	void r3q_plugin_fini(void *state);
 *
 * init is called once, before any task, with the kind's name and the
 * number of execution threads; what it stores in *state comes back in
 * every task and in fini.  It returns 0, or -1 with a message in err, and
 * then workerd refuses the configuration.
 *
 * run is called from up to nslots threads at once, one task each (slot
 * tells which thread, 0 .. nslots - 1, so that per-thread scratch needs no
 * lock).  It reads the payload, asks for an output buffer with output(),
 * fills it and returns R3Q_PLUGIN_OK; or calls error() and returns
 * R3Q_PLUGIN_FAILED, or R3Q_PLUGIN_BAD_PARAMS when the payload does not
 * decode or is out of range (the task is then reported bad-params, as the
 * built-in kinds report theirs).  It polls cancelled() every few milliseconds and
 * returns R3Q_PLUGIN_CANCELLED soon after it turns non-zero (a losing
 * copy, a cancelled job, the kind's timeout).  It calls halfway() once,
 * when half its work is done: the master's relative suspect detection
 * (doc/algorithms.md §3.2) compares workers by it.
 *
 * fini is called once, after the last task, when workerd stops or a
 * reload removes or changes the kind.
 *
 * Bump R3Q_PLUGIN_ABI if anything below changes.
 */
#ifndef R3Q_PLUGIN_H
#define R3Q_PLUGIN_H

#include <stddef.h>

#define R3Q_PLUGIN_ABI		1

#define R3Q_PLUGIN_OK		0
#define R3Q_PLUGIN_FAILED	(-1)
#define R3Q_PLUGIN_CANCELLED	(-2)
#define R3Q_PLUGIN_BAD_PARAMS	(-3)

struct r3q_plugin_task {
	const char	*kind;		/* the kind's configured name */
	const void	*payload;	/* the client's bytes, never NULL */
	size_t		 payload_len;
	unsigned	 slot;		/* execution thread */
	void		*state;		/* what init stored */

	/* Non-zero once the task should stop. */
	int		(*cancelled)(const struct r3q_plugin_task *);
	/* The task is half done (call once). */
	void		(*halfway)(const struct r3q_plugin_task *);
	/*
	 * A buffer of len bytes for the output, valid until run returns;
	 * NULL if len is over the worker's max_output or memory is short.
	 * A later call replaces the earlier buffer.
	 */
	void		*(*output)(const struct r3q_plugin_task *, size_t);
	/* Why the task failed, printf-style; the master logs it. */
	void		(*error)(const struct r3q_plugin_task *, const char *,
			    ...) __attribute__((format(printf, 2, 3)));

	void		*host;		/* workerd's: do not touch */
};

extern const unsigned	r3q_plugin_abi;
int	r3q_plugin_init(const char *, unsigned, void **, char *, size_t);
int	r3q_plugin_run(const struct r3q_plugin_task *);
void	r3q_plugin_fini(void *);

#endif /* R3Q_PLUGIN_H */
