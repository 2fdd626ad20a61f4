/*
 * Task kinds an administrator installs in workerd.conf (workerd.conf(5),
 * "TASK KINDS"): programs run once per task (exec), long-lived programs
 * that take task after task as frames on their standard input (persistent
 * exec), and shared objects loaded with dlopen (plugin, r3q-plugin.h).
 *
 * A struct ext_kind is what the file says about one kind, plus the
 * runner's state.  workerd builds one per configured kind at start and at
 * every reload, holds a reference for each task received under it, and
 * frees it (ext_close) when the last reference goes: a task finishes with
 * the definition it was received under, whatever a reload changed since.
 *
 * ext_run is called from execution thread `slot' (0 .. nslots - 1): the
 * persistent runner keeps one process per slot, so calls for one slot never
 * overlap and calls for different slots never share a process.  With
 * k_creds, every process of slot s runs as user k_creds[s] (slot users,
 * workerd.conf(5)): tasks of different slots cannot reach each other's
 * processes, files or payloads, nor workerd's.  It honours
 * ctx->cancel (a losing copy, a cancelled job), k_timeout and max_output,
 * reports the half-way point through ctx->progress when the kind says it,
 * and fills res as any kind does (task.h): TASK_OK with the output, or
 * TASK_FAILED / TASK_CANCELLED with res->error saying why.
 */
#ifndef R3Q_TASK_EXT_H
#define R3Q_TASK_EXT_H

#include <sys/types.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "task/task.h"

/*
 * The persistent framing (workerd.conf(5), "Persistent kinds").  Every
 * frame is one type byte, a 4-byte big-endian length n, then n bytes.
 *
 *	workerd -> process	'T' a task: n bytes of payload
 *				'C' cancel the current task (n = 0)
 *	process -> workerd	'R' the task succeeded: n bytes of output
 *				'F' the task failed: n bytes of message
 *				'H' half-way through the task (n = 0)
 *				'U' the kind cannot run here: n bytes of
 *				    why (a module that does not import)
 *
 * One task at a time: after 'T' the process sends any number of 'H' and
 * then one 'R', 'F' or 'U'.  A 'U' fails the task as TASK_UNAVAILABLE:
 * workerd withdraws the kind from what it offers the master until a
 * reload, and the process is left running (no restart loop).  After 'C'
 * its next 'R' or 'F' ends the task, which
 * is then reported cancelled; a process that sends neither within
 * k_grace is killed and started again for the next task.  Anything else
 * (an unknown type, n over max_output, end of file) fails the task and
 * restarts the process.
 *
 * Pipelining (persist.c): a process is started with R3Q_PIPELINE=1 in
 * its environment; one that sends 'P' (n = 0) may be sent the next task's
 * 'T' while it runs one, answers its tasks in order, and then gets every
 * 'C' with a 4-byte body: the number of the task to cancel (1 for the
 * first 'T' it was sent).
 *
 *	process -> workerd	'P' takes its next task early (n = 0)
 */
#define EXT_FRAME_HEAD	5

enum ext_type {
	EXT_EXEC,		/* one process per task */
	EXT_PERSISTENT,		/* one process per slot, frames */
	EXT_PLUGIN		/* a shared object, r3q-plugin.h */
};

#define EXT_NAME_MAX	64		/* bytes of a kind's name */
#define EXT_GRACE_DEFAULT 2000		/* ms: kill_grace */
#define EXT_STDERR_TAIL	384		/* bytes of stderr kept for errors */

/*
 * The user a slot's processes run as: its uid and primary group, no
 * supplementary groups, no capabilities.
 */
struct ext_cred {
	uid_t		 cr_uid;
	gid_t		 cr_gid;
};

/*
 * One configured kind.  The strings and vectors are malloc'd and belong to
 * it; k_priv is the runner's (plugin handle, persistent processes).
 */
struct ext_kind {
	char		 k_name[EXT_NAME_MAX + 1];
	enum ext_type	 k_type;
	char		**k_argv;	/* NULL-terminated; [0] an absolute
					   path (the program or the .so) */
	char		**k_env;	/* NULL-terminated "VAR=value": all
					   the environment a child gets */
	char		*k_workdir;	/* where per-task (exec) and
					   per-process (persistent) working
					   directories are made */
	uint64_t	 k_timeout;	/* ms; 0: none */
	uint64_t	 k_grace;	/* ms from SIGTERM (or the cancel
					   frame) to SIGKILL */
	unsigned	 k_nslots;	/* execution threads */
	struct ext_cred	*k_creds;	/* k_nslots users, one per slot
					   (malloc'd, the kind's); NULL:
					   workerd's own user */
	atomic_int	 k_refs;	/* workerd's, plus one per task */
	char		 k_unavail[256];	/* workerd's loop thread only:
					   why the kind was withdrawn (a
					   'U' frame), "" while offered */
	void		*k_priv;
};

/*
 * Make the runner's state: for a plugin, dlopen it, check its ABI version
 * and symbols, call its init; for a persistent kind, room for k_nslots
 * processes (each starts on first use).  -1 with err naming the file and
 * what is wrong ("/usr/lib/x.so: no symbol r3q_plugin_run").
 */
int	ext_open(struct ext_kind *, char *, size_t);

/* Run one task of kind k on execution thread slot; returns res->status. */
int	ext_run(struct ext_kind *, unsigned, const struct task_params *,
	    const struct task_ctx *, uint64_t, struct task_result *);

/*
 * The last reference went: stop the kind's processes (SIGKILL to each
 * process group, reaped), call the plugin's fini and dlclose it, free
 * everything k owns and k itself.
 */
void	ext_close(struct ext_kind *);

/* The runners behind ext_open/ext_run/ext_close, one per type. */
int	ext_exec_run(struct ext_kind *, unsigned, const struct task_params *,
	    const struct task_ctx *, uint64_t, struct task_result *);
int	ext_persist_open(struct ext_kind *, char *, size_t);
int	ext_persist_run(struct ext_kind *, unsigned,
	    const struct task_params *, const struct task_ctx *, uint64_t,
	    struct task_result *);
void	ext_persist_close(struct ext_kind *);
int	ext_plugin_open(struct ext_kind *, char *, size_t);
int	ext_plugin_run(struct ext_kind *, unsigned, const struct task_params *,
	    const struct task_ctx *, uint64_t, struct task_result *);
void	ext_plugin_close(struct ext_kind *);

/*
 * Check a plugin without keeping it (workerd -n): it loads, has every
 * symbol, and speaks this ABI.  Its init is not called.
 */
int	ext_plugin_check(const char *, char *, size_t);

/*
 * Shared by the process runners (ext.c).  They expect SIGPIPE to be
 * ignored in the calling process (workerd does it): a child that exits
 * without reading its standard input makes our write fail with EPIPE.
 */
int	ext_workdir_make(const struct ext_kind *, char *, size_t, char *,
	    size_t);
void	ext_workdir_remove(const char *);
int	ext_setcred(const struct ext_cred *);
void	ext_kill_group(pid_t, int);

#define EXT_POLL_MS	2		/* how often a runner looks at
					   ctx->cancel while it waits */
#define EXT_POLL_MAX	60000		/* ms: longest single poll */

/*
 * A child of a process runner, started by ext_spawn: the leader of its own
 * process group, in its own working directory, with our ends of its three
 * pipes (non-blocking, close-on-exec).  It lives until ext_child_stop.
 * Under a slot user, c_top is workerd's (mode 0711) and c_dir, inside it,
 * the slot user's (0700): the task cannot rename or replace c_dir, and
 * workerd removes it whatever the task left in it.
 */
struct ext_child {
	pid_t		 c_pid;		/* and process group; 0: none */
	int		 c_pidfd;	/* readable once it exits; -1: no
					   pidfd (then poll waitid) */
	int		 c_in;		/* its stdin; -1 once closed */
	int		 c_out;		/* its stdout; -1 once closed */
	int		 c_err;		/* its stderr; -1 once closed */
	char		 c_dir[4096];	/* its working directory */
	char		 c_top[4096];	/* c_dir's parent, made for it; ""
					   when c_dir is the one made */
	const struct ext_cred *c_cred;	/* its user; NULL: workerd's */
	unsigned	 c_slot;	/* the slot it runs on */
	int		 c_persist;	/* a persistent kind's process,
					   counted in its slot's */
};

/* The last EXT_STDERR_TAIL bytes a child wrote to its stderr. */
struct ext_tail {
	char		 t_ring[EXT_STDERR_TAIL];
	size_t		 t_total;	/* bytes ever added */
};

int	ext_spawn(const struct ext_kind *, unsigned, struct ext_child *,
	    char *, size_t);
int	ext_child_exited(const struct ext_child *);
void	ext_child_dir_remove(struct ext_child *);
int	ext_child_stop(struct ext_child *);
uint64_t ext_now_ms(void);
void	ext_tail_add(struct ext_tail *, const char *, size_t);
void	ext_error_tail(char *, size_t, const struct ext_tail *);
const char *ext_signame(int, char *, size_t);
void	ext_error_timeout(char *, size_t, uint64_t);
size_t	ext_printable(char *, size_t, const uint8_t *, size_t);

#endif /* R3Q_TASK_EXT_H */
