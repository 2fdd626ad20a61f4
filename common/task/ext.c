/*
 * Users' own task kinds (ext.h): ext_open, ext_run and ext_close dispatch
 * on the kind's type to the exec (exec.c), persistent (persist.c) and
 * plugin (plugin.c) runners.  Below them, what the two process runners
 * share: spawning a child in its own process group and working directory,
 * stopping it, the tail of its stderr and the wording of their errors.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/capability.h>
#ifdef HAVE_PIDFD_OPEN
#include <sys/pidfd.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "task/ext.h"

#define EXT_RM_PASSES	8	/* unreadable directories made readable */
#define EXT_KSIGSET	8		/* bytes of the kernel's sigset_t */
#define EXT_SLOT_UMASK	027		/* a slot user's processes' */
#define EXT_SLOTS_MAX	4096		/* cpus' upper bound */

static int	 ext_pipe(int[2]);
static int	 ext_child_dir_make(const struct ext_kind *, struct ext_child *,
		    char *, size_t);
static void	 ext_dir_empty_as(const struct ext_cred *, const char *);
static pid_t	 ext_vfork_sweep(const struct ext_cred *);
static void	 ext_sweep(const struct ext_child *);
static int	 ext_rm_entry(const char *, const struct stat *, int,
		    struct FTW *);
static int	 ext_rm_unlock(const char *, const struct stat *, int,
		    struct FTW *);

/*
 * The persistent processes running as each slot's user, whatever their
 * kind: while there is one, the slot's user is not swept (ext_sweep).
 */
static atomic_uint	 ext_live[EXT_SLOTS_MAX];

/* Set by ext_rm_unlock when a pass found a directory it could not read. */
static __thread int	 ext_rm_again;

/*
 * Make a kind's runner state.  The process kinds need an absolute program
 * that can be run; that is checked now, so workerd -n and a reload refuse
 * a kind that could not start.
 */
int
ext_open(struct ext_kind *k, char *err, size_t errlen)
{
	const char	*prog;

	k->k_priv = NULL;
	if (k->k_argv == NULL || (prog = k->k_argv[0]) == NULL) {
		snprintf(err, errlen, "%s: no program", k->k_name);
		return (-1);
	}
	if (prog[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path", prog);
		return (-1);
	}
	switch (k->k_type) {
	case EXT_EXEC:
	case EXT_PERSISTENT:
		if (access(prog, X_OK) == -1) {
			snprintf(err, errlen, "%s: %s", prog, strerror(errno));
			return (-1);
		}
		if (k->k_type == EXT_EXEC)
			return (0);
		return (ext_persist_open(k, err, errlen));
	case EXT_PLUGIN:
		return (ext_plugin_open(k, err, errlen));
	}
	snprintf(err, errlen, "%s: unknown kind type %d", k->k_name,
	    (int)k->k_type);
	return (-1);
}

/*
 * Run one task of kind k on execution thread slot, as task_run runs a
 * built-in kind: res is overwritten, a NULL ctx means no cancel flag and no
 * progress report, and any output is at most max_output bytes.
 */
int
ext_run(struct ext_kind *k, unsigned slot, const struct task_params *p,
    const struct task_ctx *ctx, uint64_t max_output, struct task_result *res)
{
	struct task_ctx	 dflt = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	int		 st;

	memset(res, 0, sizeof(*res));
	if (ctx == NULL)
		ctx = &dflt;
	if (p == NULL || (p->payload == NULL && p->payload_len > 0)) {
		snprintf(res->error, sizeof(res->error), "%s: payload is "
		    "missing", k->k_name);
		return (res->status = TASK_BAD_PARAMS);
	}
	switch (k->k_type) {
	case EXT_EXEC:
		st = ext_exec_run(k, slot, p, ctx, max_output, res);
		break;
	case EXT_PERSISTENT:
		st = ext_persist_run(k, slot, p, ctx, max_output, res);
		break;
	case EXT_PLUGIN:
		st = ext_plugin_run(k, slot, p, ctx, max_output, res);
		break;
	default:
		snprintf(res->error, sizeof(res->error), "%s: unknown kind "
		    "type %d", k->k_name, (int)k->k_type);
		st = TASK_FAILED;
		break;
	}
	res->status = st;
	if (st != TASK_OK)
		task_result_free(res);
	return (task_result_limit(res, max_output));
}

/* Stop the kind's processes or unload its plugin, and free k. */
void
ext_close(struct ext_kind *k)
{
	char	**pp;

	if (k == NULL)
		return;
	if (k->k_priv != NULL) {
		if (k->k_type == EXT_PERSISTENT)
			ext_persist_close(k);
		else if (k->k_type == EXT_PLUGIN)
			ext_plugin_close(k);
	}
	if (k->k_argv != NULL) {
		for (pp = k->k_argv; *pp != NULL; pp++)
			free(*pp);
		free(k->k_argv);
	}
	if (k->k_env != NULL) {
		for (pp = k->k_env; *pp != NULL; pp++)
			free(*pp);
		free(k->k_env);
	}
	free(k->k_workdir);
	free(k->k_creds);
	free(k);
}

/*
 * Make a fresh working directory r3q-<kind>-XXXXXX, mode 0700, under
 * k_workdir (/tmp when the kind names none) and put its path in path.
 * Characters of the kind's name other than letters, digits, '.', '_' and
 * '-' become '_'.
 */
int
ext_workdir_make(const struct ext_kind *k, char *path, size_t pathlen,
    char *err, size_t errlen)
{
	const char	*base;
	char		 name[EXT_NAME_MAX + 1];
	size_t		 i;
	int		 n;
	unsigned char	 ch;

	base = k->k_workdir != NULL && k->k_workdir[0] != '\0' ?
	    k->k_workdir : "/tmp";
	for (i = 0; k->k_name[i] != '\0' && i < EXT_NAME_MAX; i++) {
		ch = (unsigned char)k->k_name[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		    ch == '-')
			name[i] = (char)ch;
		else
			name[i] = '_';
	}
	name[i] = '\0';
	n = snprintf(path, pathlen, "%s/r3q-%s-XXXXXX", base, name);
	if (n < 0 || (size_t)n >= pathlen) {
		snprintf(err, errlen, "%s: path too long", base);
		return (-1);
	}
	if (mkdtemp(path) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		path[0] = '\0';
		return (-1);
	}
	return (0);
}

/* nftw, pre-order: make a directory the child locked us out of ours. */
static int
ext_rm_unlock(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR) {
		chmod(path, S_IRWXU);
		ext_rm_again = 1;
	} else if (type == FTW_D && (sb->st_mode & S_IRWXU) != S_IRWXU)
		chmod(path, S_IRWXU);
	return (0);
}

/* nftw, depth first: remove one entry; a symbolic link is not followed. */
static int
ext_rm_entry(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	unlinkat(AT_FDCWD, path, type == FTW_DP ? AT_REMOVEDIR : 0);
	return (0);
}

/*
 * Remove a working directory and everything in it, never following a
 * symbolic link out of it (FTW_PHYS; unlinkat removes the link itself).
 * Nearly always the directory is empty and one rmdir does it.  A child
 * may have taken permissions away from a directory: passes without
 * FTW_DEPTH give them back first, one level deeper each.
 */
void
ext_workdir_remove(const char *path)
{
	int	 i;

	if (path == NULL || path[0] == '\0')
		return;
	if (rmdir(path) == 0 || errno == ENOENT)
		return;
	for (i = 0; i < EXT_RM_PASSES; i++) {
		ext_rm_again = 0;
		nftw(path, ext_rm_unlock, 16, FTW_PHYS | FTW_MOUNT);
		if (!ext_rm_again)
			break;
	}
	nftw(path, ext_rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/*
 * Make c's working directory.  Under a slot user, two: c_top, workerd's
 * (0711: the slot user may pass through it, not list, rename or replace
 * what is in it), and c_dir = c_top/w, given to the slot user (0700).
 * Giving it away takes CAP_CHOWN when workerd is not root.
 */
static int
ext_child_dir_make(const struct ext_kind *k, struct ext_child *c, char *err,
    size_t errlen)
{
	int	 n;

	if (c->c_cred == NULL)
		return (ext_workdir_make(k, c->c_dir, sizeof(c->c_dir), err,
		    errlen));
	if (ext_workdir_make(k, c->c_top, sizeof(c->c_top), err, errlen) ==
	    -1)
		return (-1);
	n = snprintf(c->c_dir, sizeof(c->c_dir), "%s/w", c->c_top);
	if (n < 0 || (size_t)n >= sizeof(c->c_dir)) {
		snprintf(err, errlen, "%s: path too long", c->c_top);
		goto fail;
	}
	if (chmod(c->c_top, 0711) == -1 || mkdir(c->c_dir, 0700) == -1) {
		snprintf(err, errlen, "%s: %s", c->c_top, strerror(errno));
		goto fail;
	}
	if (lchown(c->c_dir, c->c_cred->cr_uid, c->c_cred->cr_gid) == -1) {
		snprintf(err, errlen, "cannot give %s to uid %u: %s%s",
		    c->c_dir, (unsigned)c->c_cred->cr_uid, strerror(errno),
		    errno == EPERM ? " (workerd needs CAP_CHOWN)" : "");
		goto fail;
	}
	return (0);
fail:
	rmdir(c->c_dir);
	rmdir(c->c_top);
	c->c_dir[0] = c->c_top[0] = '\0';
	return (-1);
}

/*
 * Empty dir as cr, in a child process: what a task left in its working
 * directory is removed with the task's own rights, so that a symbolic
 * link or a rename made to race the removal reaches nothing the task
 * could not reach itself.  Only when a task left something (an empty
 * directory is removed without it).
 */
static void
ext_dir_empty_as(const struct ext_cred *cr, const char *dir)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		return;
	if (pid == 0) {
		if (ext_setcred(cr) == -1)
			_exit(1);
		ext_workdir_remove(dir);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
}

/* Remove c's working directory (and c_top), whatever the task left. */
void
ext_child_dir_remove(struct ext_child *c)
{
	if (c->c_top[0] == '\0')
		ext_workdir_remove(c->c_dir);
	else {
		if (rmdir(c->c_dir) == -1 && errno != ENOENT) {
			ext_dir_empty_as(c->c_cred, c->c_dir);
			rmdir(c->c_dir);
		}
		rmdir(c->c_top);
	}
	c->c_dir[0] = c->c_top[0] = '\0';
}

/* Send sig to every process of group pgid; one already gone is fine. */
void
ext_kill_group(pid_t pgid, int sig)
{
	if (pgid > 1)
		kill(-pgid, sig);
}

/* The monotonic clock in milliseconds. */
uint64_t
ext_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/*
 * A close-on-exec pipe whose ends are not 0, 1 or 2 (if workerd's own
 * were closed, pipe2 could return them, and the child's dup2 onto 0-2
 * would then clobber one end with another).
 */
static int
ext_pipe(int fd[2])
{
	int	 i, nfd;

	if (pipe2(fd, O_CLOEXEC) == -1)
		return (-1);
	for (i = 0; i < 2; i++) {
		if (fd[i] > STDERR_FILENO)
			continue;
		if ((nfd = fcntl(fd[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) ==
		    -1) {
			close(fd[0]);
			close(fd[1]);
			return (-1);
		}
		close(fd[i]);
		fd[i] = nfd;
	}
	return (0);
}

/*
 * What the child of ext_spawn needs.  It says what failed on sa_errfd
 * (close-on-exec: end of file once the program runs), not in this
 * memory: under a sanitizer, vfork is a fork.
 */
struct ext_spawn_arg {
	const char		*sa_path;
	char *const		*sa_argv;
	char *const		*sa_env;
	const char		*sa_dir;
	int			 sa_fd[3];	/* its stdin, stdout, stderr */
	int			 sa_errfd;	/* [0] errno, [1] the step */
	const struct ext_cred	*sa_cred;	/* NULL: workerd's user */
};

/* The steps of the child, as it reports a failure. */
enum ext_step {
	EXT_STEP_EXEC,
	EXT_STEP_SETPGID,
	EXT_STEP_DUP,
	EXT_STEP_CRED,
	EXT_STEP_CHDIR
};
static const char *const ext_step_name[] = {
	NULL, "setpgid", "dup3", "cannot become the slot's user", "chdir"
};

/*
 * Become cr: no supplementary groups, its group, its uid (real, effective
 * and saved), and no capabilities left, ambient ones included: a workerd
 * given CAP_SETUID by its unit (non-zero uid to non-zero uid keeps them)
 * must not pass it on.  Raw system calls, which change the calling thread
 * alone: glibc's setuid() would signal every thread of the process to
 * change theirs too, and in the child of ext_spawn those are workerd's
 * threads.  With cr NULL only the capabilities go.
 */
int
ext_setcred(const struct ext_cred *cr)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[2];
	gid_t				 gid;

	if (cr != NULL) {
		gid = cr->cr_gid;
		if (syscall(SYS_setgroups, 1, &gid) == -1 ||
		    syscall(SYS_setresgid, gid, gid, gid) == -1 ||
		    syscall(SYS_setresuid, cr->cr_uid, cr->cr_uid,
		    cr->cr_uid) == -1)
			return (-1);
	}
	/* EINVAL: a kernel before 4.3 has no ambient set. */
	if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0,
	    0) == -1 && errno != EINVAL)
		return (-1);
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	return ((int)syscall(SYS_capset, &hdr, data));
}

/*
 * The child of ext_spawn, between vfork and exec: default signal
 * dispositions (none of workerd's handlers may run here), a new process
 * group, the pipes as 0-2 and nothing else open, the slot's user and
 * umask 027 (workerd.service's), the working directory (entered as that
 * user: it is theirs, mode 0700), an empty signal mask, then the
 * program.  Raw system calls only: it runs in workerd's memory, where
 * the C library's wrappers, and a sanitizer's interceptors of them, keep
 * state (glibc's setuid would even have every thread of workerd change
 * its user).  An all-zero kernel sigaction is SIG_DFL with no flags and
 * an empty mask, whatever the architecture's layout.
 */
static void __attribute__((noreturn))
ext_spawn_child(const struct ext_spawn_arg *sa)
{
	uint64_t	 ksa[4] = { 0, 0, 0, 0 }, none = 0;
	int		 sig, fd, r[2];

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)syscall(SYS_rt_sigaction, sig, ksa, NULL,
			    EXT_KSIGSET);
	r[1] = EXT_STEP_SETPGID;
	if (syscall(SYS_setpgid, 0, 0) == -1)
		goto fail;
	r[1] = EXT_STEP_DUP;
	for (fd = 0; fd < 3; fd++)
		if (syscall(SYS_dup3, sa->sa_fd[fd], fd, 0) == -1)
			goto fail;
#ifdef SYS_close_range
	/* ENOSYS before Linux 5.9: the descriptors are close-on-exec. */
	(void)syscall(SYS_close_range, 3U, (unsigned)sa->sa_errfd - 1, 0U);
	(void)syscall(SYS_close_range, (unsigned)sa->sa_errfd + 1, ~0U, 0U);
#endif
	r[1] = EXT_STEP_CRED;
	if (ext_setcred(sa->sa_cred) == -1)
		goto fail;
	/* What it makes in /tmp is not for the other slots' users. */
	if (sa->sa_cred != NULL)
		(void)syscall(SYS_umask, EXT_SLOT_UMASK);
	r[1] = EXT_STEP_CHDIR;
	if (syscall(SYS_chdir, sa->sa_dir) == -1)
		goto fail;
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL,
	    EXT_KSIGSET);
	r[1] = EXT_STEP_EXEC;
	syscall(SYS_execve, sa->sa_path, sa->sa_argv, sa->sa_env);
fail:
	r[0] = errno;
	(void)syscall(SYS_write, sa->sa_errfd, r, sizeof(r));
	_exit(127);
}

/*
 * vfork, and the child's part: a function of its own, so that nothing of
 * ext_spawn's frame is live across the vfork.
 */
static pid_t
ext_vfork(const struct ext_spawn_arg *sa)
{
	pid_t	 pid;

	if ((pid = vfork()) == 0)
		ext_spawn_child(sa);
	return (pid);
}

/*
 * Start k's program as c on slot's user: vfork, as glibc's posix_spawn
 * clones with CLONE_VM and CLONE_VFORK (cheap enough for thousands of
 * tasks a second), which posix_spawn itself cannot do because it cannot
 * change the user.  A fresh working directory, the leader of a new
 * process group, with exactly k_env as environment, an empty signal mask
 * and default dispositions (workerd ignores SIGPIPE, and an ignored
 * signal stays ignored across exec), stdin, stdout and stderr our pipes
 * and every other descriptor closed (close_range; before Linux 5.9, the
 * descriptors workerd opens are close-on-exec: its sockets, TLS files,
 * libevent's, pipe2 here).  -1 with err saying why ("cannot run /x: No
 * such file or directory").
 */
int
ext_spawn(const struct ext_kind *k, unsigned slot, struct ext_child *c,
    char *err, size_t errlen)
{
	static char *const	 noenv[] = { NULL };
	static char		 pipeline[] = "R3Q_PIPELINE=1";
	struct ext_spawn_arg	 sa;
	char *const		*env;
	char			**penv;
	sigset_t		 all, old;
	int			 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int			 er[2] = { -1, -1 }, ep[2], r[2], status;
	int			 saved;
	ssize_t			 n;
	size_t			 i;
	pid_t			 pid;

	memset(c, 0, sizeof(*c));
	c->c_pidfd = c->c_in = c->c_out = c->c_err = -1;
	if (k->k_creds != NULL && slot < k->k_nslots)
		c->c_cred = &k->k_creds[slot];
	else if (k->k_creds != NULL) {
		snprintf(err, errlen, "%s: no user for slot %u", k->k_name,
		    slot);
		return (-1);
	}
	if (ext_child_dir_make(k, c, err, errlen) == -1)
		return (-1);
	if (ext_pipe(in) == -1 || ext_pipe(out) == -1 || ext_pipe(er) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}

	/*
	 * A persistent process is offered pipelining (persist.c): the
	 * kind's environment and R3Q_PIPELINE=1, unless the kind sets it
	 * (R3Q_PIPELINE=0: no offer).
	 */
	env = k->k_env != NULL ? k->k_env : noenv;
	penv = NULL;
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "R3Q_PIPELINE=", 13) == 0)
			break;
	if (k->k_type == EXT_PERSISTENT && env[i] == NULL) {
		if ((penv = calloc(i + 2, sizeof(*penv))) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		memcpy(penv, env, i * sizeof(*penv));
		penv[i] = pipeline;
		env = penv;
	}
	if (ext_pipe(ep) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		free(penv);
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_path = k->k_argv[0];
	sa.sa_argv = k->k_argv;
	sa.sa_env = env;
	sa.sa_dir = c->c_dir;
	sa.sa_fd[0] = in[0];
	sa.sa_fd[1] = out[1];
	sa.sa_fd[2] = er[1];
	sa.sa_errfd = ep[1];
	sa.sa_cred = c->c_cred;
	/* No handler of ours may run in the child before it resets them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = ext_vfork(&sa);
	saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(penv);
	close(ep[1]);
	if (pid == -1) {
		close(ep[0]);
		snprintf(err, errlen, "cannot run %s: vfork: %s", k->k_argv[0],
		    strerror(saved));
		goto fail;
	}
	while ((n = read(ep[0], r, sizeof(r))) == -1 && errno == EINTR)
		;
	saved = errno;
	close(ep[0]);
	if (n != 0) {
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		if (n != (ssize_t)sizeof(r))
			snprintf(err, errlen, "cannot run %s: %s",
			    k->k_argv[0], n == -1 ? strerror(saved) :
			    "the child failed");
		else if (r[1] <= EXT_STEP_EXEC || r[1] > EXT_STEP_CHDIR)
			snprintf(err, errlen, "cannot run %s: %s",
			    k->k_argv[0], strerror(r[0]));
		else
			snprintf(err, errlen, "cannot run %s: %s: %s",
			    k->k_argv[0], ext_step_name[r[1]], strerror(r[0]));
		goto fail;
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	c->c_pid = pid;
	c->c_slot = slot;
	if (c->c_cred != NULL && k->k_type == EXT_PERSISTENT &&
	    slot < EXT_SLOTS_MAX) {
		c->c_persist = 1;
		atomic_fetch_add(&ext_live[slot], 1);
	}
	c->c_in = in[1];
	c->c_out = out[0];
	c->c_err = er[0];
	fcntl(c->c_in, F_SETFL, O_NONBLOCK);
	fcntl(c->c_out, F_SETFL, O_NONBLOCK);
	fcntl(c->c_err, F_SETFL, O_NONBLOCK);
#ifdef HAVE_PIDFD_OPEN
	c->c_pidfd = pidfd_open(pid, 0);	/* close-on-exec always */
#endif
	return (0);

fail:
	for (i = 0; i < 2; i++) {
		if (in[i] != -1)
			close(in[i]);
		if (out[i] != -1)
			close(out[i]);
		if (er[i] != -1)
			close(er[i]);
	}
	ext_child_dir_remove(c);
	return (-1);
}

/*
 * Kill every process of user cr, from a child that became cr: kill(-1)
 * reaches exactly the processes it may signal, that user's.
 */
static pid_t
ext_vfork_sweep(const struct ext_cred *cr)
{
	pid_t	 pid;

	if ((pid = vfork()) == 0) {
		if (ext_setcred(cr) == 0)
			(void)syscall(SYS_kill, -1, SIGKILL);
		_exit(0);
	}
	return (pid);
}

/*
 * After an exec task under a slot user: what it left running in a
 * process group (or session) of its own would outlive it as the slot's
 * user and could read the slot's later tasks.  So every process of that
 * user is killed, unless a persistent process runs as it (which such a
 * sweep would kill too): on the slot's own thread, between two of its
 * tasks, nothing else of ours runs as that user.
 */
static void
ext_sweep(const struct ext_child *c)
{
	sigset_t	 all, old;
	pid_t		 pid;
	int		 status;

	if (c->c_cred == NULL || c->c_persist || c->c_slot >= EXT_SLOTS_MAX ||
	    atomic_load(&ext_live[c->c_slot]) > 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = ext_vfork_sweep(c->c_cred);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
}

/*
 * Whether c's process has exited, without reaping it: as a zombie it still
 * holds its pid and process group, so ext_kill_group cannot reach someone
 * else's processes that were given the number again.
 */
int
ext_child_exited(const struct ext_child *c)
{
	siginfo_t	 si;

	if (c->c_pid <= 0)
		return (1);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)c->c_pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    -1)
		return (errno == ECHILD);
	return (si.si_pid == c->c_pid);
}

/*
 * Stop c for good: SIGKILL to its process group (whatever it left running
 * in the background goes too: the group is killed before the leader is
 * reaped, while its number cannot have been reused), reap it, close our
 * ends and remove its working directory.  Returns its wait status, or -1
 * when there was no process to reap.
 */
int
ext_child_stop(struct ext_child *c)
{
	int	 status = -1;

	if (c->c_in != -1)
		close(c->c_in);
	if (c->c_pid > 0) {
		ext_kill_group(c->c_pid, SIGKILL);
		while (waitpid(c->c_pid, &status, 0) == -1 && errno == EINTR)
			;
		if (c->c_persist)
			atomic_fetch_sub(&ext_live[c->c_slot], 1);
		else
			ext_sweep(c);
		c->c_persist = 0;
	}
	if (c->c_out != -1)
		close(c->c_out);
	if (c->c_err != -1)
		close(c->c_err);
	if (c->c_pidfd != -1)
		close(c->c_pidfd);
	ext_child_dir_remove(c);
	c->c_pid = 0;
	c->c_in = c->c_out = c->c_err = c->c_pidfd = -1;
	c->c_dir[0] = '\0';
	return (status);
}

/* Keep the last EXT_STDERR_TAIL bytes of what a child wrote to stderr. */
void
ext_tail_add(struct ext_tail *t, const char *p, size_t n)
{
	size_t	 off, chunk;

	if (n > sizeof(t->t_ring)) {
		t->t_total += n - sizeof(t->t_ring);
		p += n - sizeof(t->t_ring);
		n = sizeof(t->t_ring);
	}
	while (n > 0) {
		off = t->t_total % sizeof(t->t_ring);
		chunk = sizeof(t->t_ring) - off;
		if (chunk > n)
			chunk = n;
		memcpy(t->t_ring + off, p, chunk);
		t->t_total += chunk;
		p += chunk;
		n -= chunk;
	}
}

/*
 * Copy n bytes of src into dst (dstlen bytes, NUL-terminated) as printable
 * text for an error message: a newline becomes "\n", a tab a space, any
 * other control character and any byte that is not part of valid UTF-8 a
 * '?'.  What does not fit is cut at a character's boundary.  Returns the
 * length written.
 */
size_t
ext_printable(char *dst, size_t dstlen, const uint8_t *src, size_t n)
{
	size_t	 i = 0, o = 0, len, j;
	uint8_t	 ch;

	if (dstlen == 0)
		return (0);
	while (i < n) {
		ch = src[i];
		if (ch == '\n') {
			if (o + 2 >= dstlen)
				break;
			dst[o++] = '\\';
			dst[o++] = 'n';
			i++;
			continue;
		}
		if (ch < 0x80) {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = ch == '\t' ? ' ' :
			    (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
			i++;
			continue;
		}
		/* A UTF-8 sequence (no overlong forms) or a '?'. */
		if (ch >= 0xc2 && ch <= 0xdf)
			len = 2;
		else if (ch >= 0xe0 && ch <= 0xef)
			len = 3;
		else if (ch >= 0xf0 && ch <= 0xf4)
			len = 4;
		else
			len = 0;
		for (j = 1; len > 0 && j < len; j++)
			if (i + j >= n || (src[i + j] & 0xc0) != 0x80)
				len = 0;
		if (len == 0) {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = '?';
			i++;
			continue;
		}
		if (o + len >= dstlen)
			break;
		memcpy(dst + o, src + i, len);
		o += len;
		i += len;
	}
	dst[o] = '\0';
	return (o);
}

/*
 * Append "; stderr: <its last lines>" to the error message err (errlen
 * bytes) when the child wrote anything but white space to its stderr.
 * Only whole lines are shown when the ring has wrapped; when the room left
 * is short, the end of the tail is kept (the newest lines tell most).
 */
void
ext_error_tail(char *err, size_t errlen, const struct ext_tail *t)
{
	uint8_t		 raw[EXT_STDERR_TAIL];
	char		 text[EXT_STDERR_TAIL * 2 + 1];
	const uint8_t	*p = raw;
	size_t		 n, off, used, room, len, cut;

	if (t->t_total == 0)
		return;
	if (t->t_total <= sizeof(t->t_ring)) {
		n = t->t_total;
		memcpy(raw, t->t_ring, n);
	} else {
		n = sizeof(t->t_ring);
		off = t->t_total % n;
		memcpy(raw, t->t_ring + off, n - off);
		memcpy(raw + n - off, t->t_ring, off);
		/* From the first whole line, if there is one. */
		for (off = 0; off + 1 < n && raw[off] != '\n'; off++)
			;
		if (off + 1 < n) {
			p += off + 1;
			n -= off + 1;
		}
	}
	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == ' ' ||
	    p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (n == 0)
		return;
	len = ext_printable(text, sizeof(text), p, n);
	used = strlen(err);
	if (used + sizeof("; stderr: ...") >= errlen)
		return;
	room = errlen - used - sizeof("; stderr: ");
	if (len <= room) {
		snprintf(err + used, errlen - used, "; stderr: %s", text);
		return;
	}
	/* Keep the end, from a character's first byte, after "...". */
	cut = len - (room - 3);
	while (cut < len && ((uint8_t)text[cut] & 0xc0) == 0x80)
		cut++;
	snprintf(err + used, errlen - used, "; stderr: ...%s", text + cut);
}

/* "timeout after N s", or in ms under a second, into err. */
void
ext_error_timeout(char *err, size_t errlen, uint64_t ms)
{
	unsigned	 frac;
	int		 digits;

	if (ms < 1000)
		snprintf(err, errlen, "timeout after %llu ms",
		    (unsigned long long)ms);
	else if (ms % 1000 == 0)
		snprintf(err, errlen, "timeout after %llu s",
		    (unsigned long long)(ms / 1000));
	else {
		/* 1.5 s, 2.25 s: the fraction without its trailing zeros. */
		frac = (unsigned)(ms % 1000);
		for (digits = 3; frac % 10 == 0; digits--)
			frac /= 10;
		snprintf(err, errlen, "timeout after %llu.%0*u s",
		    (unsigned long long)(ms / 1000), digits, frac);
	}
}

/* A signal's name, "SIGSEGV", in buf; "" when the C library has none. */
const char *
ext_signame(int sig, char *buf, size_t len)
{
	const char	*abbrev = NULL;

#ifdef HAVE_SIGABBREV_NP
	abbrev = sigabbrev_np(sig);
#endif
	if (abbrev == NULL)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "SIG%s", abbrev);
	return (buf);
}
