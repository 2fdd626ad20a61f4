/*
 * The plugin runner: task kinds that are shared objects speaking the ABI
 * of r3q-plugin.h (r3q-plugin(3)), loaded with dlopen into workerd.
 *
 * ext_plugin_open loads the object, checks its ABI version and symbols and
 * calls its init; ext_plugin_run hands it one task through a struct
 * r3q_plugin_task whose callbacks lead back here (struct plugin_call, on
 * the running thread's stack); ext_plugin_close calls fini and unloads it.
 * The plugin runs in workerd's own process: a timeout or a cancel is only
 * seen when it polls cancelled(), and a crash in it is workerd's crash.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "r3q-plugin.h"
#include "task/ext.h"
#include "task/task.h"

/*
 * A loaded plugin: its handle, its three functions and what its init
 * stored.  Made by ext_plugin_open, kept in k_priv, freed by
 * ext_plugin_close.
 */
struct plugin {
	void		*pl_dl;
	int		(*pl_init)(const char *, unsigned, void **, char *,
			    size_t);
	int		(*pl_run)(const struct r3q_plugin_task *);
	void		(*pl_fini)(void *);
	void		*pl_state;
};

/*
 * One task's host side, behind r3q_plugin_task.host: lives on the stack of
 * ext_plugin_run for the length of one run, so the callbacks need no lock.
 */
struct plugin_call {
	const struct task_ctx	*pc_ctx;
	struct task_result	*pc_res;
	uint64_t		 pc_max_output;
	uint64_t		 pc_deadline;	/* monotonic ns; 0: none */
	int			 pc_timedout;	/* the deadline passed */
	int			 pc_halfway;	/* reported already */
	size_t			 pc_over;	/* last output() asked this
						   much over max_output */
	int			 pc_nomem;	/* last output() found none */
};

static uint64_t	 plugin_now(void);
static void	 plugin_dlerror(const char *, char *, size_t);
static void	*plugin_sym(void *, const char *, const char *, char *,
		    size_t);
static int	 plugin_load(const char *, struct plugin *, char *, size_t);
static int	 plugin_cancelled(const struct r3q_plugin_task *);
static void	 plugin_halfway(const struct r3q_plugin_task *);
static void	*plugin_output(const struct r3q_plugin_task *, size_t);
static void	 plugin_error(const struct r3q_plugin_task *, const char *,
		    ...) __attribute__((format(printf, 2, 3)));

/* The monotonic clock in nanoseconds (the vDSO makes it cheap). */
static uint64_t
plugin_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/*
 * What dlerror says, with the file named once: glibc's messages mostly
 * start with the path already.
 */
static void
plugin_dlerror(const char *path, char *err, size_t errlen)
{
	const char	*e = dlerror();
	size_t		 n = strlen(path);

	if (e == NULL)
		snprintf(err, errlen, "%s: cannot be loaded", path);
	else if (strncmp(e, path, n) == 0 && e[n] == ':')
		snprintf(err, errlen, "%s", e);
	else
		snprintf(err, errlen, "%s: %s", path, e);
}

/* Look a symbol up; NULL with err naming the file and the symbol. */
static void *
plugin_sym(void *dl, const char *path, const char *name, char *err,
    size_t errlen)
{
	void	*p;

	(void)dlerror();
	if ((p = dlsym(dl, name)) == NULL)
		snprintf(err, errlen, "%s: no symbol %s", path, name);
	return (p);
}

/*
 * Load the shared object at path and find its four symbols, checking the
 * ABI version before the functions are looked at.  Its init is not called.
 * Returns -1 with err naming the file and what is wrong.
 */
static int
plugin_load(const char *path, struct plugin *pl, char *err, size_t errlen)
{
	const unsigned	*abi;
	struct stat	 sb;

	memset(pl, 0, sizeof(*pl));
	if (path == NULL || *path == '\0') {
		snprintf(err, errlen, "plugin: no path");
		return (-1);
	}
	if (strchr(path, '/') == NULL) {
		/* dlopen would search the library path for it. */
		snprintf(err, errlen, "%s: a plugin is named by its path",
		    path);
		return (-1);
	}
	if (stat(path, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return (-1);
	}
	if ((pl->pl_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		plugin_dlerror(path, err, errlen);
		return (-1);
	}
	if ((abi = plugin_sym(pl->pl_dl, path, "r3q_plugin_abi", err,
	    errlen)) == NULL)
		goto fail;
	if (*abi != R3Q_PLUGIN_ABI) {
		snprintf(err, errlen, "%s: plugin ABI %u, workerd speaks %u",
		    path, *abi, (unsigned)R3Q_PLUGIN_ABI);
		goto fail;
	}
	if ((pl->pl_init = plugin_sym(pl->pl_dl, path, "r3q_plugin_init",
	    err, errlen)) == NULL ||
	    (pl->pl_run = plugin_sym(pl->pl_dl, path, "r3q_plugin_run", err,
	    errlen)) == NULL ||
	    (pl->pl_fini = plugin_sym(pl->pl_dl, path, "r3q_plugin_fini", err,
	    errlen)) == NULL)
		goto fail;
	return (0);

fail:
	dlclose(pl->pl_dl);
	pl->pl_dl = NULL;
	return (-1);
}

/*
 * Load kind k's plugin (k_argv[0]) and call its init with the kind's name
 * and number of slots.  Returns -1 with err naming the file and why.
 */
int
ext_plugin_open(struct ext_kind *k, char *err, size_t errlen)
{
	struct plugin	*pl;
	const char	*path;
	char		 perr[TASK_ERRLEN];
	int		 rc;

	k->k_priv = NULL;
	path = k->k_argv != NULL ? k->k_argv[0] : NULL;
	if ((pl = calloc(1, sizeof(*pl))) == NULL) {
		snprintf(err, errlen, "%s: %s", path != NULL ? path : "plugin",
		    strerror(errno));
		return (-1);
	}
	if (plugin_load(path, pl, err, errlen) == -1) {
		free(pl);
		return (-1);
	}
	memset(perr, 0, sizeof(perr));
	if ((rc = pl->pl_init(k->k_name, k->k_nslots, &pl->pl_state, perr,
	    sizeof(perr))) != 0) {
		perr[sizeof(perr) - 1] = '\0';
		if (perr[0] != '\0')
			snprintf(err, errlen, "%s: init failed: %s", path,
			    perr);
		else
			snprintf(err, errlen, "%s: init failed (returned %d)",
			    path, rc);
		dlclose(pl->pl_dl);
		free(pl);
		return (-1);
	}
	k->k_priv = pl;
	return (0);
}

/*
 * The plugin's cancelled(): the caller's flag, or the kind's timeout, which
 * once passed stays passed.
 */
static int
plugin_cancelled(const struct r3q_plugin_task *t)
{
	struct plugin_call	*pc = t->host;

	if (pc->pc_ctx->cancel != NULL && atomic_load(pc->pc_ctx->cancel) != 0)
		return (1);
	if (pc->pc_timedout)
		return (1);
	if (pc->pc_deadline != 0 && plugin_now() >= pc->pc_deadline) {
		pc->pc_timedout = 1;
		return (1);
	}
	return (0);
}

/* The plugin's halfway(): the first call is passed on, later ones not. */
static void
plugin_halfway(const struct r3q_plugin_task *t)
{
	struct plugin_call	*pc = t->host;

	if (pc->pc_halfway)
		return;
	pc->pc_halfway = 1;
	if (pc->pc_ctx->progress != NULL)
		pc->pc_ctx->progress(pc->pc_ctx->arg, 2);
}

/*
 * The plugin's output(): room in the result for len bytes, replacing any
 * earlier output; NULL, remembered for the error, when len is over
 * max_output or memory is short.
 */
static void *
plugin_output(const struct r3q_plugin_task *t, size_t len)
{
	struct plugin_call	*pc = t->host;
	uint8_t			*p;

	task_result_free(pc->pc_res);
	pc->pc_over = 0;
	pc->pc_nomem = 0;
	if (len > pc->pc_max_output) {
		pc->pc_over = len;
		return (NULL);
	}
	if ((p = task_output_alloc(pc->pc_res, len)) == NULL)
		pc->pc_nomem = 1;
	return (p);
}

/* The plugin's error(): why the task failed; a later call replaces it. */
static void
plugin_error(const struct r3q_plugin_task *t, const char *fmt, ...)
{
	struct plugin_call	*pc = t->host;
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(pc->pc_res->error, sizeof(pc->pc_res->error), fmt, ap);
	va_end(ap);
}

/*
 * Run one task of plugin kind k on execution thread slot and map what the
 * plugin returns to a status: OK, FAILED (with its message), BAD_PARAMS,
 * CANCELLED (or failed "timeout after N s" when the kind's timeout did
 * it); an output it asked for over max_output fails the task, and so does
 * any other return value.  res is overwritten as task_run() does.
 */
int
ext_plugin_run(struct ext_kind *k, unsigned slot,
    const struct task_params *p, const struct task_ctx *ctx,
    uint64_t max_output, struct task_result *res)
{
	static const uint8_t	 empty[1];
	struct task_ctx		 dflt = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct plugin		*pl = k->k_priv;
	struct plugin_call	 pc;
	struct r3q_plugin_task	 t;
	int			 rc;

	memset(res, 0, sizeof(*res));
	if (pl == NULL) {
		snprintf(res->error, sizeof(res->error), "%s: plugin not "
		    "loaded", k->k_name);
		return (res->status = TASK_FAILED);
	}
	if (p->payload == NULL && p->payload_len > 0) {
		snprintf(res->error, sizeof(res->error), "%s: payload of %zu "
		    "bytes is missing", k->k_name, p->payload_len);
		return (res->status = TASK_BAD_PARAMS);
	}

	memset(&pc, 0, sizeof(pc));
	pc.pc_ctx = ctx != NULL ? ctx : &dflt;
	pc.pc_res = res;
	pc.pc_max_output = max_output;
	if (k->k_timeout != 0)
		pc.pc_deadline = plugin_now() + k->k_timeout * 1000000ULL;

	memset(&t, 0, sizeof(t));
	t.kind = k->k_name;
	t.payload = p->payload != NULL ? p->payload : empty;
	t.payload_len = p->payload_len;
	t.slot = slot;
	t.state = pl->pl_state;
	t.cancelled = plugin_cancelled;
	t.halfway = plugin_halfway;
	t.output = plugin_output;
	t.error = plugin_error;
	t.host = &pc;

	rc = pl->pl_run(&t);

	switch (rc) {
	case R3Q_PLUGIN_OK:
		res->status = TASK_OK;
		break;
	case R3Q_PLUGIN_FAILED:
		res->status = TASK_FAILED;
		if (res->error[0] == '\0')
			snprintf(res->error, sizeof(res->error),
			    "plugin run failed");
		break;
	case R3Q_PLUGIN_BAD_PARAMS:
		res->status = TASK_BAD_PARAMS;
		if (res->error[0] == '\0')
			snprintf(res->error, sizeof(res->error),
			    "%s: bad payload of %zu bytes", k->k_name,
			    p->payload_len);
		break;
	case R3Q_PLUGIN_CANCELLED:
		if (pc.pc_timedout && (pc.pc_ctx->cancel == NULL ||
		    atomic_load(pc.pc_ctx->cancel) == 0)) {
			res->status = TASK_FAILED;
			snprintf(res->error, sizeof(res->error),
			    "timeout after %g s", (double)k->k_timeout / 1000);
		} else {
			res->status = TASK_CANCELLED;
			snprintf(res->error, sizeof(res->error), "cancelled");
		}
		break;
	default:
		res->status = TASK_FAILED;
		snprintf(res->error, sizeof(res->error), "plugin returned %d",
		    rc);
		break;
	}

	/* The last output() failed: that, not what the plugin said, is why. */
	if (res->status == TASK_OK || res->status == TASK_FAILED) {
		if (pc.pc_over != 0) {
			res->status = TASK_FAILED;
			snprintf(res->error, sizeof(res->error), "output over "
			    "max_output (%llu bytes): %zu asked",
			    (unsigned long long)max_output, pc.pc_over);
		} else if (pc.pc_nomem) {
			res->status = TASK_FAILED;
			snprintf(res->error, sizeof(res->error),
			    "out of memory for an output");
		}
	}
	if (res->status == TASK_OK)
		res->error[0] = '\0';
	else
		task_result_free(res);
	return (res->status);
}

/*
 * The kind's last reference went: call the plugin's fini and unload it.
 * Only the plugin's state (k_priv) is freed here, not k nor what k owns:
 * ext_close frees those for every type of kind.
 */
void
ext_plugin_close(struct ext_kind *k)
{
	struct plugin	*pl = k->k_priv;

	if (pl == NULL)
		return;
	pl->pl_fini(pl->pl_state);
	dlclose(pl->pl_dl);
	free(pl);
	k->k_priv = NULL;
}

/*
 * Check the plugin at path without keeping it (workerd -n): it loads, has
 * every symbol and speaks this ABI.  Its init is not called.
 */
int
ext_plugin_check(const char *path, char *err, size_t errlen)
{
	struct plugin	 pl;

	if (plugin_load(path, &pl, err, errlen) == -1)
		return (-1);
	dlclose(pl.pl_dl);
	return (0);
}
