/*
 * Unit tests for users' task kinds run as processes (ext.h), through
 * ext_run on kinds built here, no daemon: exec kinds (output, environment
 * exactly k_env, a payload larger than a pipe, a program that reads none,
 * exit statuses, signals, max_output, timeouts, cancellation with and
 * without SIGTERM obeyed, the stderr tail and "r3q: half", a background
 * grandchild killed, working directories removed without following
 * links) and persistent kinds (the C and Python examples bit-identical to
 * task_ridge, half-way frames, cancel and timeout frames, a process that
 * dies, breaks the framing, ignores the cancel frame or exits idle, and
 * is started again).  Every test ends with no child left unreaped and no
 * working directory left behind.  Timing is bounded only from above, to
 * catch a hang, or from below where a grace period must have passed.
 *
 * Scripts are found under $top_srcdir/tests/kinds and the C example
 * under $top_builddir/examples, as the test harness exports them.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "es/payload.h"
#include "task/ext.h"
#include "task/task.h"

#define PYTHON		"/usr/bin/python3"
#define MAX_OUT		(16 * 1024 * 1024)

struct progress_count {
	int	 calls;
};

struct canceller {
	atomic_int	 flag;
	long		 delay_ms;
	const char	*ready;		/* wait for this file first */
};

static const char	*srcdir = ".";
static const char	*builddir = ".";
static char		 base[PATH_MAX];	/* the kinds' k_workdir */

static void	 count_progress(void *, int);
static void	*cancel_later(void *);
static char	*path_of(const char *, const char *);
static struct ext_kind *kind_make(enum ext_type, const char *const *,
		    const char *const *, uint64_t, uint64_t);
static struct ext_kind *kind_open(enum ext_type, const char *const *,
		    const char *const *, uint64_t, uint64_t);
static struct ext_kind *sh_kind(const char *, uint64_t, uint64_t);
static struct ext_kind *py_kind(enum ext_type, const char *, uint64_t,
		    uint64_t);
static int	 run(struct ext_kind *, const void *, size_t, uint64_t,
		    struct task_result *, struct progress_count *);
static int	 run_cancelled(struct ext_kind *, const void *, size_t, long,
		    struct task_result *, double *);
static int	 run_cancel(struct ext_kind *, const void *, size_t,
		    const char *, long, struct task_result *, double *);
static int	 run_str(struct ext_kind *, const char *,
		    struct task_result *);
static void	 assert_output(const struct task_result *, const void *,
		    size_t);
static void	 assert_clean(void);
static size_t	 base_entries(void);
static double	 now_s(void);
static long	 pid_output(const struct task_result *);
static int	 have_python(void);

/* Count half-way reports. */
static void
count_progress(void *arg, int v)
{
	struct progress_count	*pc = arg;

	assert_int_equal(v, 2);
	pc->calls++;
}

/* Thread body: raise the cancel flag after delay_ms. */
static void *
cancel_later(void *arg)
{
	struct canceller	*c = arg;
	struct timespec		 ts;
	int			 i;

	for (i = 0; c->ready != NULL && access(c->ready, F_OK) == -1 &&
	    i < 10000; i++)
		usleep(1000);
	ts.tv_sec = c->delay_ms / 1000;
	ts.tv_nsec = (c->delay_ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	atomic_store(&c->flag, 1);
	return (NULL);
}

/* The monotonic clock in seconds. */
static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* dir/name, malloc'd. */
static char *
path_of(const char *dir, const char *name)
{
	char	*p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return (p);
}

/* A kind as workerd would build it: everything malloc'd. */
static struct ext_kind *
kind_make(enum ext_type type, const char *const *argv,
    const char *const *env, uint64_t timeout, uint64_t grace)
{
	struct ext_kind	*k;
	size_t		 n, i;

	k = calloc(1, sizeof(*k));
	assert_non_null(k);
	snprintf(k->k_name, sizeof(k->k_name), "test/kind");
	k->k_type = type;
	for (n = 0; argv[n] != NULL; n++)
		;
	k->k_argv = calloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		k->k_argv[i] = strdup(argv[i]);
	if (env != NULL) {
		for (n = 0; env[n] != NULL; n++)
			;
		k->k_env = calloc(n + 1, sizeof(char *));
		for (i = 0; i < n; i++)
			k->k_env[i] = strdup(env[i]);
	}
	k->k_workdir = strdup(base);
	k->k_timeout = timeout;
	k->k_grace = grace;
	k->k_nslots = 2;
	atomic_init(&k->k_refs, 1);
	return (k);
}

/* kind_make, then ext_open, which must succeed. */
static struct ext_kind *
kind_open(enum ext_type type, const char *const *argv,
    const char *const *env, uint64_t timeout, uint64_t grace)
{
	struct ext_kind	*k;
	char		 err[256];

	k = kind_make(type, argv, env, timeout, grace);
	err[0] = '\0';
	if (ext_open(k, err, sizeof(err)) == -1)
		fail_msg("ext_open: %s", err);
	return (k);
}

/* An exec kind running tests/kinds/<script> with /bin/sh. */
static struct ext_kind *
sh_kind(const char *script, uint64_t timeout, uint64_t grace)
{
	struct ext_kind	*k;
	char		*dir, *path;
	const char	*argv[3];

	dir = path_of(srcdir, "tests/kinds");
	path = path_of(dir, script);
	argv[0] = "/bin/sh";
	argv[1] = path;
	argv[2] = NULL;
	k = kind_open(EXT_EXEC, argv, NULL, timeout, grace);
	free(path);
	free(dir);
	return (k);
}

/* A kind running a Python script (path relative to top_srcdir). */
static struct ext_kind *
py_kind(enum ext_type type, const char *script, uint64_t timeout,
    uint64_t grace)
{
	struct ext_kind	*k;
	char		*path;
	const char	*argv[3];

	path = path_of(srcdir, script);
	argv[0] = PYTHON;
	argv[1] = path;
	argv[2] = NULL;
	k = kind_open(type, argv, NULL, timeout, grace);
	free(path);
	return (k);
}

/* Whether the Python examples and scripts can run here. */
static int
have_python(void)
{
	return (access(PYTHON, X_OK) == 0);
}

/* Run one task on slot 0, counting progress reports. */
static int
run(struct ext_kind *k, const void *payload, size_t len, uint64_t max,
    struct task_result *res, struct progress_count *pc)
{
	struct task_params	 p;
	struct task_ctx		 ctx = { NULL, 1.0, count_progress, pc,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct progress_count	 dummy = { 0 };

	if (pc == NULL)
		ctx.arg = &dummy;
	memset(&p, 0, sizeof(p));
	p.kind = k->k_name;
	p.payload = payload;
	p.payload_len = len;
	return (ext_run(k, 0, &p, &ctx, max, res));
}

/* Run a task whose payload is a string. */
static int
run_str(struct ext_kind *k, const char *s, struct task_result *res)
{
	return (run(k, s, strlen(s), MAX_OUT, res, NULL));
}

/* Run a task while another thread raises cancel after delay_ms. */
static int
run_cancelled(struct ext_kind *k, const void *payload, size_t len,
    long delay_ms, struct task_result *res, double *took)
{
	return (run_cancel(k, payload, len, NULL, delay_ms, res, took));
}

/*
 * Run a task while another thread raises cancel delay_ms after the file
 * ready exists (at once if NULL); *took is how long the run took.
 */
static int
run_cancel(struct ext_kind *k, const void *payload, size_t len,
    const char *ready, long delay_ms, struct task_result *res, double *took)
{
	struct canceller	 c;
	struct task_params	 p;
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	pthread_t		 t;
	double			 t0;
	int			 st;

	atomic_init(&c.flag, 0);
	c.delay_ms = delay_ms;
	c.ready = ready;
	ctx.cancel = &c.flag;
	memset(&p, 0, sizeof(p));
	p.kind = k->k_name;
	p.payload = payload;
	p.payload_len = len;
	t0 = now_s();
	assert_int_equal(pthread_create(&t, NULL, cancel_later, &c), 0);
	st = ext_run(k, 0, &p, &ctx, MAX_OUT, res);
	*took = now_s() - t0;
	assert_int_equal(pthread_join(t, NULL), 0);
	return (st);
}

/* An ok result whose output is exactly the len bytes at want. */
static void
assert_output(const struct task_result *res, const void *want, size_t len)
{
	const uint8_t	*out;
	size_t		 n;

	if (res->status != TASK_OK)
		fail_msg("status %s: %s", task_status_name(res->status),
		    res->error);
	out = task_output(res, &n);
	assert_int_equal(n, len);
	if (len > 0)
		assert_memory_equal(out, want, len);
}

/* The pid a "pid" task of pcmd.py answered. */
static long
pid_output(const struct task_result *res)
{
	const uint8_t	*out;
	char		 buf[32];
	size_t		 n;

	assert_int_equal(res->status, TASK_OK);
	out = task_output(res, &n);
	assert_true(n > 0 && n < sizeof(buf));
	memcpy(buf, out, n);
	buf[n] = '\0';
	return (atol(buf));
}

/* Entries in the kinds' k_workdir. */
static size_t
base_entries(void)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 n = 0;

	assert_non_null(d = opendir(base));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n);
}

/* No child left unreaped, no working directory left behind. */
static void
assert_clean(void)
{
	int	 status;

	errno = 0;
	assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(base_entries(), 0);
}

/* ext_open refuses what could not run, naming the file. */
static void
test_open_errors(void **state)
{
	static const struct {
		enum ext_type	 type;
		const char	*prog;
		const char	*want;
	} cases[] = {
		{ EXT_EXEC, "bin/true", "bin/true: not an absolute path" },
		{ EXT_EXEC, "/nonexistent/prog",
		    "/nonexistent/prog: No such file or directory" },
		{ EXT_PERSISTENT, "/etc/passwd",
		    "/etc/passwd: Permission denied" },
		{ EXT_PLUGIN, "/usr/lib/x.so",
		    "/usr/lib/x.so: No such file or directory" },
	};
	struct ext_kind	*k;
	const char	*argv[2];
	char		 err[256];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		argv[0] = cases[i].prog;
		argv[1] = NULL;
		k = kind_make(cases[i].type, argv, NULL, 0, 100);
		err[0] = '\0';
		assert_int_equal(ext_open(k, err, sizeof(err)), -1);
		assert_string_equal(err, cases[i].want);
		ext_close(k);
	}
	assert_int_equal(ext_plugin_check("/x.so", err, sizeof(err)), -1);
	assert_clean();
}

/* The wording helpers: printable text, timeouts. */
static void
test_wording(void **state)
{
	static const struct {
		const char	*in;
		const char	*want;
	} pr[] = {
		{ "plain", "plain" },
		{ "a\nb\tc\rd", "a\\nb c?d" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "bad \xff\xc3 end", "bad ?? end" },
		{ "\xe2\x82", "??" },
	};
	static const struct {
		uint64_t	 ms;
		const char	*want;
	} to[] = {
		{ 1, "timeout after 1 ms" },
		{ 999, "timeout after 999 ms" },
		{ 1000, "timeout after 1 s" },
		{ 1500, "timeout after 1.5 s" },
		{ 2250, "timeout after 2.25 s" },
		{ 3001, "timeout after 3.001 s" },
		{ 60000, "timeout after 60 s" },
	};
	char		 buf[64];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(pr) / sizeof(pr[0]); i++) {
		ext_printable(buf, sizeof(buf), (const uint8_t *)pr[i].in,
		    strlen(pr[i].in));
		assert_string_equal(buf, pr[i].want);
	}
	/* Cut at a character's boundary. */
	ext_printable(buf, 6, (const uint8_t *)"abcd\xc3\xa9", 6);
	assert_string_equal(buf, "abcd");
	ext_printable(buf, 4, (const uint8_t *)"ab\n", 3);
	assert_string_equal(buf, "ab");
	for (i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		ext_error_timeout(buf, sizeof(buf), to[i].ms);
		assert_string_equal(buf, to[i].want);
	}
}

/*
 * /bin/cat: empty, short and long payloads come back whole, one of 4 MB
 * too (much more than a pipe holds: writing and reading interleave).
 */
static void
test_exec_cat(void **state)
{
	static const char *const argv[] = { "/bin/cat", NULL };
	struct ext_kind		*k;
	struct task_result	 res;
	uint8_t			*big;
	size_t			 i, biglen = 4 * 1024 * 1024;

	(void)state;
	k = kind_open(EXT_EXEC, argv, NULL, 0, 100);
	assert_int_equal(run(k, NULL, 0, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, NULL, 0);
	assert_int_equal(run(k, "hello", 5, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, "hello", 5);

	big = malloc(biglen);
	assert_non_null(big);
	for (i = 0; i < biglen; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 9));
	assert_int_equal(run(k, big, biglen, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, big, biglen);
	assert_true(res.out_owned);
	task_result_free(&res);

	/* Exactly max_output is fine, one byte over is not. */
	assert_int_equal(run(k, big, 1000, 1000, &res, NULL), TASK_OK);
	task_result_free(&res);
	assert_int_equal(run(k, big, 1001, 1000, &res, NULL), TASK_FAILED);
	assert_string_equal(res.error, "output over max_output (1000 bytes)");
	free(big);
	ext_close(k);
	assert_clean();
}

/* The environment is k_env and nothing else. */
static void
test_exec_env(void **state)
{
	static const char *const argv[] = { "/usr/bin/env", NULL };
	static const char *const env[] = { "A=1", "B=two words", NULL };
	static const char	 want[] = "A=1\nB=two words\n";
	struct ext_kind		*k;
	struct task_result	 res;

	(void)state;
	k = kind_open(EXT_EXEC, argv, env, 0, 100);
	assert_int_equal(run(k, NULL, 0, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, want, sizeof(want) - 1);
	ext_close(k);

	k = kind_open(EXT_EXEC, argv, NULL, 0, 100);
	assert_int_equal(run(k, NULL, 0, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, NULL, 0);
	ext_close(k);
	assert_clean();
}

/*
 * How a process can fail, each with its error text (stderr's last lines
 * appended, printable) and its half-way reports.
 */
static void
test_exec_failures(void **state)
{
	static const struct {
		const char	*script;
		uint64_t	 max;
		int		 status;
		const char	*want;
		int		 halves;
	} cases[] = {
		{ "exit.sh", MAX_OUT, TASK_FAILED,
		    "exit status 3; stderr: first line\\nit went wrong", 0 },
		{ "signal.sh", MAX_OUT, TASK_FAILED,
		    "killed by signal 11 (SIGSEGV); stderr: about to crash",
		    0 },
		{ "bigout.sh", 1000, TASK_FAILED,
		    "output over max_output (1000 bytes)", 0 },
		{ "ctrl.sh", MAX_OUT, TASK_FAILED,
		    "exit status 1; stderr: bad??[31mred x", 0 },
		{ "nothalf.sh", MAX_OUT, TASK_FAILED,
		    "exit status 1; stderr: r3q: hal\\nr3q: halfway", 1 },
		{ "noinput.sh", MAX_OUT, TASK_OK, "", 0 },
		{ "half.sh", MAX_OUT, TASK_OK, "", 1 },
	};
	struct ext_kind		*k;
	struct task_result	 res;
	struct progress_count	 pc;
	uint8_t			*payload;
	size_t			 i, len = 1024 * 1024;

	(void)state;
	payload = calloc(1, len);
	assert_non_null(payload);
	memset(payload, 'z', len);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		k = sh_kind(cases[i].script, 0, 100);
		memset(&pc, 0, sizeof(pc));
		assert_int_equal(run(k, payload, len, cases[i].max, &res,
		    &pc), cases[i].status);
		assert_string_equal(res.error, cases[i].want);
		assert_int_equal(pc.calls, cases[i].halves);
		if (strcmp(cases[i].script, "noinput.sh") == 0)
			assert_output(&res, "ok\n", 3);
		if (strcmp(cases[i].script, "half.sh") == 0)
			assert_output(&res, payload, len);
		task_result_free(&res);
		ext_close(k);
		assert_clean();
	}
	free(payload);

	/* A program that cannot be run. */
	k = sh_kind("exit.sh", 0, 100);
	free(k->k_argv[0]);
	k->k_argv[0] = strdup("/nonexistent/prog");
	assert_int_equal(run(k, NULL, 0, MAX_OUT, &res, NULL), TASK_FAILED);
	assert_string_equal(res.error,
	    "cannot run /nonexistent/prog: No such file or directory");
	ext_close(k);
	assert_clean();
}

/*
 * A long stderr: the error keeps its newest whole lines and fits
 * TASK_ERRLEN.
 */
static void
test_exec_stderr_tail(void **state)
{
	static const char	 head[] = "exit status 1; stderr: ";
	static const char	 tail[] = "line 199\\nline 200";
	struct ext_kind		*k;
	struct task_result	 res;
	size_t			 n;

	(void)state;
	k = sh_kind("longerr.sh", 0, 100);
	assert_int_equal(run_str(k, "", &res), TASK_FAILED);
	n = strlen(res.error);
	assert_true(n < TASK_ERRLEN);
	assert_memory_equal(res.error, head, sizeof(head) - 1);
	assert_memory_equal(res.error + sizeof(head) - 1, "line ", 5);
	assert_true(n > sizeof(tail));
	assert_string_equal(res.error + n - (sizeof(tail) - 1), tail);
	ext_close(k);
	assert_clean();
}

/*
 * Timeout and cancellation: SIGTERM to the group; a group that ignores it
 * gets SIGKILL after k_grace (so such a run cannot end before it).
 */
static void
test_exec_stop(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	const char		*argv[3];
	char			*script, *ready, *env[2];
	double			 t0, took;

	(void)state;
	k = sh_kind("hang.sh", 200, 100);
	t0 = now_s();
	assert_int_equal(run_str(k, "", &res), TASK_FAILED);
	assert_string_equal(res.error, "timeout after 200 ms");
	assert_true(now_s() - t0 < 2.0);
	ext_close(k);
	assert_clean();

	k = sh_kind("hang.sh", 0, 2000);
	assert_int_equal(run_cancelled(k, NULL, 0, 50, &res, &took),
	    TASK_CANCELLED);
	assert_string_equal(res.error, "cancelled");
	assert_true(took < 1.5);		/* SIGTERM was enough */
	ext_close(k);
	assert_clean();

	/* Cancelled once it ignores SIGTERM: READY tells when. */
	argv[0] = "/bin/sh";
	argv[1] = script = path_of(srcdir, "tests/kinds/term.sh");
	argv[2] = NULL;
	assert_true(asprintf(&ready, "%s.ready", base) > 0);
	assert_true(asprintf(&env[0], "READY=%s", ready) > 0);
	env[1] = NULL;
	k = kind_open(EXT_EXEC, argv, (const char *const *)env, 0, 300);
	assert_int_equal(run_cancel(k, NULL, 0, ready, 20, &res, &took),
	    TASK_CANCELLED);
	assert_true(took >= 0.3);
	assert_true(took < 5.0);
	ext_close(k);
	assert_clean();
	unlink(ready);
	free(ready);
	free(env[0]);
	free(script);

	k = sh_kind("term.sh", 1200, 300);
	t0 = now_s();
	assert_int_equal(run_str(k, "", &res), TASK_FAILED);
	assert_string_equal(res.error, "timeout after 1.2 s; stderr: started");
	assert_true(now_s() - t0 >= 1.5);
	ext_close(k);
	assert_clean();
}

/* A background grandchild does not outlive its task. */
static void
test_exec_grandchild(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	const uint8_t		*out;
	char			 path[64], buf[512], *p;
	size_t			 n;
	double			 t0;
	long			 pid;
	FILE			*f;
	int			 gone = 0;

	(void)state;
	k = sh_kind("grandchild.sh", 0, 100);
	t0 = now_s();
	assert_int_equal(run_str(k, "", &res), TASK_OK);
	assert_true(now_s() - t0 < 2.0);
	out = task_output(&res, &n);
	assert_true(n > 0 && n < 32);
	memcpy(buf, out, n);
	buf[n] = '\0';
	pid = atol(buf);
	assert_true(pid > 1);
	/* Dead: gone, or a zombie waiting for init to reap it. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	while (!gone && now_s() - t0 < 2.0) {
		if ((f = fopen(path, "r")) == NULL) {
			gone = 1;
			break;
		}
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    (p[2] == 'Z' || p[2] == 'X'))
			gone = 1;
		fclose(f);
		usleep(10000);
	}
	assert_true(gone);
	ext_close(k);
	assert_clean();
}

/*
 * Each task has its own working directory under k_workdir, removed after
 * it however the program left it, without following links out of it.
 */
static void
test_exec_workdir(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	struct stat		 sb;
	const uint8_t		*out;
	char			*outside, *dir, *env[2], prefix[PATH_MAX + 32];
	char			 seen[PATH_MAX];
	const char		*argv[3];
	size_t			 n;
	FILE			*f;

	(void)state;
	assert_true(asprintf(&dir, "%s.outside", base) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	outside = path_of(dir, "keep");
	assert_non_null(f = fopen(outside, "w"));
	fputs("keep me\n", f);
	fclose(f);

	argv[0] = "/bin/sh";
	argv[1] = path_of(srcdir, "tests/kinds/workdir.sh");
	argv[2] = NULL;
	assert_true(asprintf(&env[0], "OUTSIDE=%s", outside) > 0);
	env[1] = NULL;
	k = kind_open(EXT_EXEC, argv, (const char *const *)env, 0, 100);
	assert_int_equal(run_str(k, "", &res), TASK_OK);
	out = task_output(&res, &n);
	assert_true(n > 1 && n < sizeof(seen));
	memcpy(seen, out, n - 1);		/* without its newline */
	seen[n - 1] = '\0';
	snprintf(prefix, sizeof(prefix), "%s/r3q-test_kind-", base);
	assert_memory_equal(seen, prefix, strlen(prefix));
	assert_int_equal(strlen(seen), strlen(prefix) + 6);
	assert_int_equal(stat(seen, &sb), -1);
	assert_int_equal(stat(outside, &sb), 0);
	assert_int_equal(sb.st_size, 8);
	task_result_free(&res);
	ext_close(k);
	assert_clean();

	unlink(outside);
	rmdir(dir);
	free(outside);
	free(dir);
	free(env[0]);
	free((char *)(uintptr_t)argv[1]);
}

/* Many tasks in a row: no descriptor, child or directory leaks. */
static void
test_exec_many(void **state)
{
	static const char *const argv[] = { "/bin/cat", NULL };
	struct ext_kind		*k;
	struct task_result	 res;
	DIR			*d;
	size_t			 before = 0, after = 0;
	int			 i;

	(void)state;
	assert_non_null(d = opendir("/proc/self/fd"));
	while (readdir(d) != NULL)
		before++;
	closedir(d);
	k = kind_open(EXT_EXEC, argv, NULL, 0, 100);
	for (i = 0; i < 300; i++) {
		assert_int_equal(run(k, &i, sizeof(i), MAX_OUT, &res, NULL),
		    TASK_OK);
		assert_output(&res, &i, sizeof(i));
	}
	ext_close(k);
	assert_non_null(d = opendir("/proc/self/fd"));
	while (readdir(d) != NULL)
		after++;
	closedir(d);
	assert_int_equal(before, after);
	assert_clean();
}

/*
 * The persistent examples, C and Python: Ridge bit-identical to
 * task_ridge, a half-way frame when there is work, an 'F' for a payload
 * that is not an es payload, cancellation through the cancel frame (the
 * process kept: the next task works at once).
 */
static void
test_persist_examples(void **state)
{
	static const double	 x1[] = { 1, 2, 3 };
	static const double	 x2[] = { 0.1, -0.2, 0.30000000000000004,
	    1e-300, 1e150, -1e150, 3.141592653589793 };
	double			 x3[30];
	const struct {
		const double	*x;
		size_t		 n;
	} vec[] = { { x1, 3 }, { x2, 7 }, { x3, 30 }, { x1, 0 } };
	struct ext_kind		*k;
	struct task_result	 res;
	struct progress_count	 pc;
	uint8_t			 payload[ES_PAYLOAD_HEAD + 30 * 8];
	const uint8_t		*out;
	char			*cpath;
	const char		*argv[2];
	double			 f, want, took;
	size_t			 i, v, n;
	int			 which;

	(void)state;
	for (i = 0; i < 30; i++)
		x3[i] = (double)(i * 37 % 11) / 7.0 - 0.5;
	cpath = path_of(builddir, "examples/persistent");
	for (which = 0; which < 2; which++) {
		if (which == 0) {
			argv[0] = cpath;
			argv[1] = NULL;
			k = kind_open(EXT_PERSISTENT, argv, NULL, 0, 500);
		} else if (have_python())
			k = py_kind(EXT_PERSISTENT, "examples/persistent.py",
			    0, 500);
		else
			break;
		for (v = 0; v < sizeof(vec) / sizeof(vec[0]); v++) {
			n = es_payload_len(vec[v].n);
			es_payload_encode(payload, 0, 0, 0.0, vec[v].x,
			    vec[v].n);
			memset(&pc, 0, sizeof(pc));
			assert_int_equal(run(k, payload, n, MAX_OUT, &res,
			    &pc), TASK_OK);
			out = task_output(&res, &n);
			assert_int_equal(n, ES_OUTPUT_LEN);
			assert_int_equal(es_output_decode(out, n, &f), 0);
			want = task_ridge(vec[v].x, vec[v].n);
			assert_memory_equal(&f, &want, sizeof(f));
			assert_int_equal(pc.calls, 0);
		}
		/* Work: one half-way report. */
		es_payload_encode(payload, 0, 0, 30.0, x1, 3);
		memset(&pc, 0, sizeof(pc));
		assert_int_equal(run(k, payload, es_payload_len(3), MAX_OUT,
		    &res, &pc), TASK_OK);
		assert_int_equal(pc.calls, 1);

		assert_int_equal(run(k, "abc", 3, MAX_OUT, &res, NULL),
		    TASK_FAILED);
		assert_string_equal(res.error, "not an es payload: 3 bytes");

		es_payload_encode(payload, 0, 0, 60000.0, x1, 3);
		assert_int_equal(run_cancelled(k, payload, es_payload_len(3),
		    50, &res, &took), TASK_CANCELLED);
		assert_string_equal(res.error, "cancelled");
		assert_true(took < 2.0);
		es_payload_encode(payload, 0, 0, 0.0, x1, 3);
		assert_int_equal(run(k, payload, es_payload_len(3), MAX_OUT,
		    &res, NULL), TASK_OK);
		ext_close(k);
		assert_clean();
	}
	free(cpath);
}

/*
 * A persistent process lives across tasks, and one that dies during a
 * task fails it with its status and stderr and is started again.
 */
static void
test_persist_restart(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	long			 p1, p2;

	(void)state;
	if (!have_python())
		skip();
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 0, 500);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	p1 = pid_output(&res);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	assert_int_equal(pid_output(&res), p1);
	assert_int_equal(base_entries(), 1);	/* its working directory */

	assert_int_equal(run_str(k, "exit 7", &res), TASK_FAILED);
	assert_string_equal(res.error, "persistent process exited (status 7) "
	    "during the task; stderr: dying");
	assert_int_equal(base_entries(), 0);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	p2 = pid_output(&res);
	assert_true(p2 != p1);
	ext_close(k);
	assert_clean();

	/* Exits after its first task: the next finds it gone, restarts. */
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pexit1.py", 0, 500);
	assert_int_equal(run_str(k, "a", &res), TASK_OK);
	assert_output(&res, "one", 3);
	usleep(300000);
	assert_int_equal(run_str(k, "b", &res), TASK_OK);
	assert_output(&res, "one", 3);
	ext_close(k);
	assert_clean();
}

/*
 * Frames that break the protocol fail the task and restart the process:
 * garbage, an 'H' with a body, an 'R' over max_output, a frame cut short
 * by the exit.  'F' carries the message; stderr is drained during a task;
 * a payload far larger than a pipe while the process streams its output
 * back does not deadlock.
 */
static void
test_persist_frames(void **state)
{
	static const struct {
		const char	*cmd;
		int		 status;
		const char	*want;
	} cases[] = {
		{ "halfframe", TASK_FAILED, "persistent process exited "
		    "(status 0) during the task" },
		{ "big 1000", TASK_FAILED,
		    "output of 1000 bytes is over max_output (100)" },
		{ "big 100", TASK_OK, "" },
		{ "hbody", TASK_FAILED,
		    "persistent process sent an 'H' frame of 3 bytes" },
		{ "fail it\x01 went\nwrong\n", TASK_FAILED,
		    "it? went\\nwrong" },
		{ "unavail no module named x\n", TASK_UNAVAILABLE,
		    "no module named x" },
		{ "spam", TASK_OK, "" },
	};
	struct ext_kind		*k;
	struct task_result	 res;
	struct task_params	 p;
	uint8_t			*big;
	size_t			 i, biglen = 4 * 1024 * 1024;
	long			 pid;

	(void)state;
	if (!have_python())
		skip();
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 0, 500);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run(k, cases[i].cmd, strlen(cases[i].cmd),
		    100, &res, NULL), cases[i].status);
		assert_string_equal(res.error, cases[i].want);
		task_result_free(&res);
		assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	}
	pid = pid_output(&res);

	big = malloc(biglen);
	assert_non_null(big);
	memcpy(big, "echo:", 5);
	for (i = 5; i < biglen; i++)
		big[i] = (uint8_t)(i * 13 + (i >> 10));
	assert_int_equal(run(k, big, biglen, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, big + 5, biglen - 5);
	task_result_free(&res);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);

	/*
	 * An answer before the whole payload was read: the task is done, but
	 * the rest of the frame would be read as the next one, so the next
	 * task has a new process.
	 */
	memcpy(big, "early", 5);
	assert_int_equal(run(k, big, biglen, MAX_OUT, &res, NULL), TASK_OK);
	assert_output(&res, "early", 5);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	assert_true(pid_output(&res) != pid);
	pid = pid_output(&res);

	/* A slot of its own, a process of its own; no slot 2. */
	memset(&p, 0, sizeof(p));
	p.payload = (const uint8_t *)"pid";
	p.payload_len = 3;
	assert_int_equal(ext_run(k, 1, &p, NULL, 100, &res), TASK_OK);
	assert_true(pid_output(&res) != pid);
	assert_int_equal(base_entries(), 2);
	assert_int_equal(ext_run(k, 2, &p, NULL, 100, &res), TASK_FAILED);
	assert_string_equal(res.error, "test/kind: no slot 2");
	free(big);
	ext_close(k);
	assert_clean();

	k = py_kind(EXT_PERSISTENT, "tests/kinds/pgarbage.py", 0, 500);
	for (i = 0; i < 2; i++) {
		assert_int_equal(run_str(k, "x", &res), TASK_FAILED);
		assert_string_equal(res.error, "persistent process sent a "
		    "frame of unknown type 0x68");
	}
	ext_close(k);
	assert_clean();
}

/* What count_launched saw: calls, and whether to cancel the task then. */
struct launch_count {
	atomic_int	 cancel;
	int		 calls;
	int		 cancel_on_launch;
	int		 busy;		/* count_busy's calls */
	int		 with_busy;	/* pass it as ctx->busy */
};

/* ctx->launched of test_persist_launched. */
static void
count_launched(void *arg)
{
	struct launch_count	*lc = arg;

	lc->calls++;
	if (lc->cancel_on_launch)
		atomic_store(&lc->cancel, 1);
}

/* ctx->busy of test_persist_busy: after launched, at most once. */
static void
count_busy(void *arg)
{
	struct launch_count	*lc = arg;

	assert_int_equal(lc->calls, 1);
	lc->busy++;
}

/* Run one task on slot 0 with count_launched as ctx->launched. */
static int
run_launched(struct ext_kind *k, const char *s, struct launch_count *lc,
    struct task_result *res)
{
	struct task_params	 p;
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, count_launched, NULL, 0, NULL };

	lc->calls = lc->busy = 0;
	if (lc->with_busy)
		ctx.busy = count_busy;
	ctx.cancel = &lc->cancel;
	ctx.arg = lc;
	memset(&p, 0, sizeof(p));
	p.kind = k->k_name;
	p.payload = (const uint8_t *)s;
	p.payload_len = strlen(s);
	return (ext_run(k, 0, &p, &ctx, MAX_OUT, res));
}

/*
 * ctx->busy (workerd tells the master of a task's start only then, or by
 * its result): once, after launched, for a task that runs past
 * TASK_BUSY_MS; at once when the process had to be started first; never
 * twice, and never for a task cancelled before it was handed over.  A
 * task that answers at once may or may not see it (the machine's load
 * decides), but at most once.
 */
static void
test_persist_busy(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	struct launch_count	 lc;
	int			 i;

	(void)state;
	if (!have_python())
		skip();
	memset(&lc, 0, sizeof(lc));
	atomic_init(&lc.cancel, 0);
	lc.with_busy = 1;
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 20000, 500);
	assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_OK);
	assert_int_equal(lc.busy, 1);		/* started the process */
	for (i = 0; i < 3; i++) {
		assert_int_equal(run_launched(k, "sleep 30", &lc, &res),
		    TASK_OK);
		assert_int_equal(lc.calls, 1);
		assert_int_equal(lc.busy, 1);
		assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_OK);
		assert_int_equal(lc.calls, 1);
		assert_true(lc.busy <= 1);
	}
	/* Cancelled before it starts: neither handed over nor busy. */
	atomic_store(&lc.cancel, 1);
	assert_int_equal(run_launched(k, "sleep 30", &lc, &res),
	    TASK_CANCELLED);
	assert_int_equal(lc.calls, 0);
	assert_int_equal(lc.busy, 0);
	task_result_free(&res);
	ext_close(k);
	assert_clean();
}

/*
 * ctx->launched (workerd puts off waking its loop thread until then): a
 * persistent kind calls it once a task, whether it starts the process
 * first or not, and during the task: once the task's frame is written,
 * before the answer.  "wait" answers only a cancel frame, so a cancel
 * raised by the callback ends it; were the callback called after the
 * task, the task would run into its timeout.  A task cancelled before it
 * starts is not handed over: no call.
 */
static void
test_persist_launched(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	struct launch_count	 lc;
	double			 t0;

	(void)state;
	if (!have_python())
		skip();
	memset(&lc, 0, sizeof(lc));
	atomic_init(&lc.cancel, 0);
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 20000, 500);
	assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_OK);
	assert_int_equal(lc.calls, 1);		/* started the process */
	assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_OK);
	assert_int_equal(lc.calls, 1);		/* the same process */

	lc.cancel_on_launch = 1;
	t0 = now_s();
	assert_int_equal(run_launched(k, "wait", &lc, &res), TASK_CANCELLED);
	assert_int_equal(lc.calls, 1);
	assert_true(now_s() - t0 < 10.0);

	/* Cancelled before it starts: not handed over. */
	lc.cancel_on_launch = 0;
	assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_CANCELLED);
	assert_int_equal(lc.calls, 0);
	atomic_store(&lc.cancel, 0);

	/* Dies, and the next task starts a new process: once each. */
	assert_int_equal(run_launched(k, "exit 7", &lc, &res), TASK_FAILED);
	assert_int_equal(lc.calls, 1);
	assert_int_equal(run_launched(k, "pid", &lc, &res), TASK_OK);
	assert_int_equal(lc.calls, 1);
	task_result_free(&res);
	ext_close(k);
	assert_clean();
}

/*
 * Cancel and timeout on a persistent kind: a process that answers the
 * cancel frame is kept (same pid after); one that ignores it is killed
 * after k_grace and started again.
 */
static void
test_persist_stop(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	double			 took, t0;
	long			 pid;

	(void)state;
	if (!have_python())
		skip();
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 0, 500);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	pid = pid_output(&res);
	assert_int_equal(run_cancelled(k, "wait", 4, 50, &res, &took),
	    TASK_CANCELLED);
	assert_string_equal(res.error, "cancelled");
	assert_true(took < 2.0);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);
	ext_close(k);
	assert_clean();

	/* The timeout from the second task: Python may start slowly. */
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 0, 500);
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	pid = pid_output(&res);
	k->k_timeout = 100;
	assert_int_equal(run_str(k, "wait", &res), TASK_FAILED);
	assert_string_equal(res.error, "timeout after 100 ms");
	assert_int_equal(run_str(k, "pid", &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);
	ext_close(k);
	assert_clean();

	k = py_kind(EXT_PERSISTENT, "tests/kinds/pignore.py", 0, 200);
	assert_int_equal(run_cancelled(k, "x", 1, 50, &res, &took),
	    TASK_CANCELLED);
	assert_true(took >= 0.2);
	assert_true(took < 2.0);
	assert_int_equal(base_entries(), 0);	/* killed, not kept */
	t0 = now_s();
	k->k_timeout = 100;
	assert_int_equal(run_str(k, "x", &res), TASK_FAILED);
	assert_string_equal(res.error, "timeout after 100 ms");
	assert_true(now_s() - t0 >= 0.3);
	ext_close(k);
	assert_clean();
}

/* A pipelined run's host: the task ctx->next hands over, and counters. */
struct pipe_host {
	const char	*next;		/* payload ctx->next gives, or NULL */
	int		 nexts;		/* calls that gave one */
	int		 halves;
	atomic_int	 cancel;
	atomic_int	 qcancel;	/* the queued task's */
};

static int
pipe_next(void *arg, struct task_params *p, const atomic_int **cancel)
{
	struct pipe_host	*h = arg;

	if (h->next == NULL)
		return (0);
	p->payload = (const uint8_t *)h->next;
	p->payload_len = strlen(h->next);
	*cancel = &h->qcancel;
	h->next = NULL;
	h->nexts++;
	return (1);
}

static void
pipe_progress(void *arg, int half)
{
	struct pipe_host	*h = arg;

	assert_int_equal(half, 2);
	h->halves++;
}

/*
 * Run s on slot 0 as host h's task (queued: handed over by the run
 * before); ctx->next gives next, if not NULL.
 */
static int
run_pipe(struct ext_kind *k, const char *s, int queued, const char *next,
    struct pipe_host *h, struct task_result *res)
{
	struct task_params	 p;
	struct task_ctx		 ctx = { NULL, 1.0, pipe_progress, NULL,
	    NULL, NULL, NULL, NULL, pipe_next, 0, NULL };

	h->next = next;
	h->nexts = 0;
	ctx.cancel = &h->cancel;
	ctx.arg = h;
	ctx.queued = queued;
	memset(&p, 0, sizeof(p));
	p.kind = k->k_name;
	p.payload = (const uint8_t *)s;
	p.payload_len = strlen(s);
	return (ext_run(k, 0, &p, &ctx, MAX_OUT, res));
}

/* The output of res as a string (static). */
static const char *
out_str(const struct task_result *res)
{
	static char	 buf[256];
	const uint8_t	*out;
	size_t		 n;

	out = task_output(res, &n);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, out, n);
	buf[n] = '\0';
	return (buf);
}

/*
 * Pipelining (persist.c): a process that sent 'P' gets the next task's
 * frame while it runs one ("sleep" sees it come), and the next run only
 * waits for its answer.  A queued task cancelled before it starts is not
 * run and the process is kept; a cancel of the current task does not
 * reach the queued one (it names its task); the queued task's half-way
 * report counts for it; a process that dies with a task queued takes the
 * frame with it, and the queued task runs on a new process.  A process
 * that did not send 'P' is never given a queued task.
 */
static void
test_persist_pipeline(void **state)
{
	struct ext_kind		*k;
	struct task_result	 res;
	struct pipe_host	 h;
	struct canceller	 c;
	pthread_t		 th;
	long			 pid;
	char			 touch[PATH_MAX + 64];

	(void)state;
	if (!have_python())
		skip();
	memset(&h, 0, sizeof(h));
	atomic_init(&h.cancel, 0);
	atomic_init(&h.qcancel, 0);
	k = py_kind(EXT_PERSISTENT, "tests/kinds/ppipe.py", 20000, 500);
	assert_int_equal(run_pipe(k, "pid", 0, NULL, &h, &res), TASK_OK);
	pid = pid_output(&res);
	assert_int_equal(run_pipe(k, "sleep 300", 0, "pid", &h, &res),
	    TASK_OK);
	assert_int_equal(h.nexts, 1);
	assert_string_equal(out_str(&res), "queued=1");
	assert_int_equal(run_pipe(k, "pid", 1, NULL, &h, &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);

	/* Queued, then cancelled: answered as not started, process kept. */
	assert_int_equal(run_pipe(k, "sleep 100", 0, "sleep 5000", &h, &res),
	    TASK_OK);
	atomic_store(&h.cancel, 1);
	assert_int_equal(run_pipe(k, "sleep 5000", 1, NULL, &h, &res),
	    TASK_CANCELLED);
	atomic_store(&h.cancel, 0);
	assert_int_equal(run_pipe(k, "pid", 0, NULL, &h, &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);

	/*
	 * Cancelled while queued, the task before still running: its cancel
	 * goes at once, and it never starts (no file made).
	 */
	snprintf(touch, sizeof(touch), "touch %s/../ppipe-%ld", base,
	    (long)getpid());
	unlink(touch + 6);
	atomic_store(&h.qcancel, 1);
	assert_int_equal(run_pipe(k, "sleep 300", 0, touch, &h, &res),
	    TASK_OK);
	assert_int_equal(h.nexts, 1);
	atomic_store(&h.cancel, 1);
	assert_int_equal(run_pipe(k, touch, 1, NULL, &h, &res),
	    TASK_CANCELLED);
	atomic_store(&h.cancel, 0);
	atomic_store(&h.qcancel, 0);
	assert_int_equal(access(touch + 6, F_OK), -1);
	assert_int_equal(run_pipe(k, "pid", 0, NULL, &h, &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);
	/* And the same task not cancelled does run. */
	assert_int_equal(run_pipe(k, "sleep 100", 0, touch, &h, &res),
	    TASK_OK);
	assert_int_equal(run_pipe(k, touch, 1, NULL, &h, &res), TASK_OK);
	assert_int_equal(access(touch + 6, F_OK), 0);
	unlink(touch + 6);

	/* The current task cancelled: the queued one still runs. */
	atomic_init(&c.flag, 0);
	c.delay_ms = 200;
	c.ready = NULL;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
	{
		struct task_params	 p;
		struct task_ctx		 ctx = { NULL, 1.0, pipe_progress,
		    NULL, NULL, NULL, NULL, NULL, pipe_next, 0, NULL };

		h.next = "pid";
		h.nexts = 0;
		ctx.cancel = &c.flag;
		ctx.arg = &h;
		memset(&p, 0, sizeof(p));
		p.payload = (const uint8_t *)"wait";
		p.payload_len = 4;
		assert_int_equal(ext_run(k, 0, &p, &ctx, MAX_OUT, &res),
		    TASK_CANCELLED);
		assert_int_equal(h.nexts, 1);
	}
	pthread_join(th, NULL);
	assert_int_equal(run_pipe(k, "pid", 1, NULL, &h, &res), TASK_OK);
	assert_int_equal(pid_output(&res), pid);

	/* The queued task's half-way report is its own. */
	h.halves = 0;
	assert_int_equal(run_pipe(k, "sleep 100", 0, "half", &h, &res),
	    TASK_OK);
	assert_int_equal(h.halves, 0);
	assert_int_equal(run_pipe(k, "half", 1, NULL, &h, &res), TASK_OK);
	assert_string_equal(out_str(&res), "half");
	assert_int_equal(h.halves, 1);

	/* Dies with a task queued: that task runs on a new process. */
	assert_int_equal(run_pipe(k, "exit 3", 0, "pid", &h, &res),
	    TASK_FAILED);
	assert_int_equal(run_pipe(k, "pid", 1, NULL, &h, &res), TASK_OK);
	assert_true(pid_output(&res) != pid);
	task_result_free(&res);
	ext_close(k);
	assert_clean();

	/* No 'P' (pcmd.py): no queued task, ever. */
	k = py_kind(EXT_PERSISTENT, "tests/kinds/pcmd.py", 20000, 500);
	assert_int_equal(run_pipe(k, "pid", 0, "pid", &h, &res), TASK_OK);
	assert_int_equal(run_pipe(k, "pid", 0, "pid", &h, &res), TASK_OK);
	assert_int_equal(h.nexts, 0);
	task_result_free(&res);
	ext_close(k);
	assert_clean();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_wording),
		cmocka_unit_test(test_exec_cat),
		cmocka_unit_test(test_exec_env),
		cmocka_unit_test(test_exec_failures),
		cmocka_unit_test(test_exec_stderr_tail),
		cmocka_unit_test(test_exec_stop),
		cmocka_unit_test(test_exec_grandchild),
		cmocka_unit_test(test_exec_workdir),
		cmocka_unit_test(test_exec_many),
		cmocka_unit_test(test_persist_examples),
		cmocka_unit_test(test_persist_restart),
		cmocka_unit_test(test_persist_frames),
		cmocka_unit_test(test_persist_launched),
		cmocka_unit_test(test_persist_busy),
		cmocka_unit_test(test_persist_stop),
		cmocka_unit_test(test_persist_pipeline),
	};
	const char	*s;
	int		 rc;

	/* As workerd: a child that reads no input must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if ((s = getenv("top_srcdir")) != NULL)
		srcdir = s;
	if ((s = getenv("top_builddir")) != NULL)
		builddir = s;
	snprintf(base, sizeof(base), "/tmp/test_ext-XXXXXX");
	if (mkdtemp(base) == NULL) {
		perror(base);
		return (1);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	ext_workdir_remove(base);
	return (rc);
}
