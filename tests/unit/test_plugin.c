/*
 * Unit tests for the plugin runner (common/task/plugin.c) through the test
 * plugins of tests/plugins and examples/ridge-plugin: a plugin that is
 * missing, does not load, lacks a symbol, speaks another ABI or whose init
 * fails is refused with its file and the reason named; the ridge plugin's
 * outputs are bit-identical to the built-in ridge-lu's; half-way, cancel,
 * the kind's timeout, max_output, error messages, stray return values and
 * fini.  Time bounds only catch hangs.
 *
 * The plugins are found under $top_builddir (the harness exports it).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
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

#include "r3q-plugin.h"
#include "es/payload.h"
#include "task/ext.h"
#include "task/task.h"

/*
 * A prompt return, generously; three times that under scripts/check
 * --sanitize or --tsan (R3Q_SANITIZE set), where everything is slower.
 */
#define HANG_NS		(2000000000ULL * (getenv("R3Q_SANITIZE") ? 3 : 1))

struct progress_count {
	int	 calls;
	int	 last;
};

/* One task run on its own thread, for cancellation and concurrency. */
struct job {
	struct ext_kind		*j_kind;
	unsigned		 j_slot;
	struct task_params	 j_params;
	atomic_int		 j_cancel;
	uint64_t		 j_max_output;
	struct progress_count	 j_pc;
	struct task_result	 j_res;
	int			 j_status;
};

static void		 plugin_path(char *, size_t, const char *);
static struct ext_kind	*kind_make(const char *, const char *, unsigned,
			    uint64_t);
static void		 kind_free(struct ext_kind *);
static struct ext_kind	*kind_open(const char *, const char *, unsigned,
			    uint64_t);
static void		 count_progress(void *, int);
static uint64_t		 now_ns(void);
static void		 sleep_ms(long);
static void		*job_main(void *);
static void		 job_init(struct job *, struct ext_kind *, unsigned,
			    const void *, size_t);
static void		 es_make(uint8_t **, size_t *, uint32_t,
			    const double *, size_t);

/* The built shared object of plugin name ("echo" or "ridge-plugin"). */
static void
plugin_path(char *buf, size_t len, const char *name)
{
	const char	*top = getenv("top_builddir");

	if (top == NULL)
		top = ".";
	if (strcmp(name, "ridge-plugin") == 0)
		snprintf(buf, len, "%s/examples/.libs/%s.so", top, name);
	else
		snprintf(buf, len, "%s/tests/plugins/.libs/%s.so", top, name);
}

/* A kind as workerd's configuration would make it (kind_free frees it). */
static struct ext_kind *
kind_make(const char *name, const char *path, unsigned nslots,
    uint64_t timeout)
{
	struct ext_kind	*k;

	k = calloc(1, sizeof(*k));
	assert_non_null(k);
	snprintf(k->k_name, sizeof(k->k_name), "%s", name);
	k->k_type = EXT_PLUGIN;
	k->k_argv = calloc(2, sizeof(*k->k_argv));
	assert_non_null(k->k_argv);
	k->k_argv[0] = strdup(path);
	assert_non_null(k->k_argv[0]);
	k->k_nslots = nslots;
	k->k_timeout = timeout;
	atomic_init(&k->k_refs, 1);
	return (k);
}

/* Free what kind_make made: ext_plugin_close leaves k to ext_close. */
static void
kind_free(struct ext_kind *k)
{
	free(k->k_argv[0]);
	free(k->k_argv);
	free(k);
}

/* Make and open a kind of the built plugin plugin, which must load. */
static struct ext_kind *
kind_open(const char *name, const char *plugin, unsigned nslots,
    uint64_t timeout)
{
	struct ext_kind	*k;
	char		 path[1024], err[TASK_ERRLEN];

	plugin_path(path, sizeof(path), plugin);
	k = kind_make(name, path, nslots, timeout);
	err[0] = '\0';
	if (ext_plugin_open(k, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_non_null(k->k_priv);
	return (k);
}

/* Count half-way reports and remember the last value. */
static void
count_progress(void *arg, int v)
{
	struct progress_count	*pc = arg;

	pc->calls++;
	pc->last = v;
}

/* The monotonic clock in nanoseconds. */
static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* Sleep ms milliseconds. */
static void
sleep_ms(long ms)
{
	struct timespec	 ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* Thread body: run the job's task through the plugin runner. */
static void *
job_main(void *arg)
{
	struct job	*j = arg;
	struct task_ctx	 ctx = { NULL, 1.0, count_progress, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };

	ctx.cancel = &j->j_cancel;
	ctx.arg = &j->j_pc;
	j->j_status = ext_plugin_run(j->j_kind, j->j_slot, &j->j_params, &ctx,
	    j->j_max_output, &j->j_res);
	return (NULL);
}

/* A job of kind k on slot with the given payload, flag down. */
static void
job_init(struct job *j, struct ext_kind *k, unsigned slot,
    const void *payload, size_t len)
{
	memset(j, 0, sizeof(*j));
	j->j_kind = k;
	j->j_slot = slot;
	j->j_params.kind = k->k_name;
	j->j_params.payload = payload;
	j->j_params.payload_len = len;
	atomic_init(&j->j_cancel, 0);
	j->j_max_output = 1 << 20;
}

/* An es payload in a fresh buffer (free *bufp). */
static void
es_make(uint8_t **bufp, size_t *lenp, uint32_t lu, const double *x,
    size_t nx)
{
	*lenp = es_payload_len(nx);
	*bufp = malloc(*lenp);
	assert_non_null(*bufp);
	es_payload_encode(*bufp, lu, 0, 0.0, x, nx);
}

/*
 * A plugin that is missing, is no shared object, lacks a symbol, speaks
 * another ABI or fails its init is refused, its file and the reason named;
 * ext_plugin_check does not call init.
 */
static void
test_open_errors(void **state)
{
	static const struct {
		const char	*plugin;
		const char	*why;		/* after "PATH: " */
		int		 check;		/* ext_plugin_check's */
	} cases[] = {
		{ "no-run",	"no symbol r3q_plugin_run",		-1 },
		{ "abi99",	"plugin ABI 99, workerd speaks 1",	-1 },
		{ "init-fail",	"init failed: no licence for kind fit",	0 },
		{ "nothere",	"No such file or directory",		-1 },
	};
	struct ext_kind	*k;
	char		 path[1024], want[1200], err[TASK_ERRLEN];
	char		 dir[] = "/tmp/test_plugin.XXXXXX";
	FILE		*f;
	size_t		 i;

	(void)state;
	assert_int_equal(R3Q_PLUGIN_ABI, 1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plugin_path(path, sizeof(path), cases[i].plugin);
		snprintf(want, sizeof(want), "%s: %s", path, cases[i].why);
		k = kind_make("fit", path, 2, 0);
		assert_int_equal(ext_plugin_open(k, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		assert_null(k->k_priv);
		ext_plugin_close(k);	/* nothing to do */
		kind_free(k);

		err[0] = '\0';
		assert_int_equal(ext_plugin_check(path, err, sizeof(err)),
		    cases[i].check);
		if (cases[i].check == -1)
			assert_string_equal(err, want);
	}

	/* Not a shared object: dlerror's reason, the file named first. */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/junk.so", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	k = kind_make("fit", path, 1, 0);
	assert_int_equal(ext_plugin_open(k, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: ", path);
	assert_memory_equal(err, want, strlen(want));
	assert_true(strlen(err) > strlen(want));
	kind_free(k);
	assert_int_equal(ext_plugin_check(path, err, sizeof(err)), -1);
	assert_memory_equal(err, want, strlen(want));
	assert_int_equal(ext_plugin_check(dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
	rmdir(dir);

	/* A bare name would be searched for in the library path. */
	assert_int_equal(ext_plugin_check("echo.so", err, sizeof(err)), -1);
	assert_string_equal(err, "echo.so: a plugin is named by its path");
	assert_int_equal(ext_plugin_check("", err, sizeof(err)), -1);

	/* The good ones pass the check. */
	plugin_path(path, sizeof(path), "echo");
	assert_int_equal(ext_plugin_check(path, err, sizeof(err)), 0);
	plugin_path(path, sizeof(path), "ridge-plugin");
	assert_int_equal(ext_plugin_check(path, err, sizeof(err)), 0);
}

/*
 * The ridge plugin, run as a kind named ridge-lu, gives the built-in
 * ridge-lu's 8 bytes for every individual and LU order, reports half-way
 * once like it, and words a bad payload the same way.
 */
static void
test_ridge_identical(void **state)
{
	static const size_t	 dims[] = { 1, 2, 3, 7, 30, 100 };
	static const uint32_t	 lus[] = { 0, 1, 2, 63, 64, 65, 150 };
	static const uint32_t	 badlu[] = { 20001, 999999 };
	static const size_t	 badlen[] = { 0, 13, 16, 17, 39 };
	struct ext_kind		*k;
	struct task_params	 p;
	struct task_ctx		 ctx = { NULL, 1.0, count_progress, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct task_result	 r1, r2;
	struct progress_count	 pc1, pc2;
	const uint8_t		*o1, *o2;
	uint8_t			*buf, *big;
	double			 x[100];
	uint64_t		 seed = 88172645463325252ULL;
	size_t			 d, l, i, len, n1, n2;

	(void)state;
	k = kind_open("ridge-lu", "ridge-plugin", 1, 0);
	for (d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
		for (i = 0; i < dims[d]; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			x[i] = ((double)(seed >> 11) / 9007199254740992.0 -
			    0.5) * 200.0;
		}
		if (dims[d] == 3)
			x[1] = -0.0;
		for (l = 0; l < sizeof(lus) / sizeof(lus[0]); l++) {
			es_make(&buf, &len, lus[l], x, dims[d]);
			p.kind = "ridge-lu";
			p.payload = buf;
			p.payload_len = len;

			memset(&pc1, 0, sizeof(pc1));
			ctx.arg = &pc1;
			assert_int_equal(task_run(&p, &ctx, &r1), TASK_OK);
			memset(&pc2, 0, sizeof(pc2));
			ctx.arg = &pc2;
			assert_int_equal(ext_plugin_run(k, 0, &p, &ctx, 1024,
			    &r2), TASK_OK);
			assert_string_equal(r2.error, "");

			o1 = task_output(&r1, &n1);
			o2 = task_output(&r2, &n2);
			assert_int_equal(n1, ES_OUTPUT_LEN);
			assert_int_equal(n2, ES_OUTPUT_LEN);
			assert_memory_equal(o1, o2, ES_OUTPUT_LEN);
			assert_int_equal(pc1.calls, 1);
			assert_int_equal(pc2.calls, 1);
			assert_int_equal(pc2.last, 2);
			task_result_free(&r1);
			task_result_free(&r2);
			free(buf);
		}
	}

	/* Bad payloads: the same status and words. */
	for (i = 0; i < sizeof(badlu) / sizeof(badlu[0]) +
	    sizeof(badlen) / sizeof(badlen[0]) + 1; i++) {
		big = NULL;
		if (i < sizeof(badlu) / sizeof(badlu[0]))
			es_make(&buf, &len, badlu[i], x, 3);
		else if (i < sizeof(badlu) / sizeof(badlu[0]) +
		    sizeof(badlen) / sizeof(badlen[0])) {
			len = badlen[i - sizeof(badlu) / sizeof(badlu[0])];
			buf = calloc(1, len + 1);
			assert_non_null(buf);
		} else {
			/* one gene too many */
			len = es_payload_len(10001);
			buf = big = calloc(1, len);
			assert_non_null(big);
		}
		p.kind = "ridge-lu";
		p.payload = buf;
		p.payload_len = len;
		assert_int_equal(task_run(&p, NULL, &r1), TASK_BAD_PARAMS);
		assert_int_equal(ext_plugin_run(k, 0, &p, NULL, 1024, &r2),
		    TASK_BAD_PARAMS);
		assert_string_equal(r1.error, r2.error);
		assert_null(task_output(&r2, &n2));
		free(buf);
	}
	ext_plugin_close(k);
	assert_null(k->k_priv);
	kind_free(k);
}

/*
 * The ridge plugin runs on several slots at once, each with its own
 * scratch, and still matches the built-in kind.
 */
static void
test_ridge_threads(void **state)
{
	static const uint32_t	 lus[] = { 300, 64, 200, 0 };
	struct ext_kind		*k;
	struct job		 j[4];
	struct task_params	 p;
	struct task_result	 r;
	pthread_t		 t[4];
	const uint8_t		*o1, *o2;
	uint8_t			*buf[4];
	size_t			 len[4], n1, n2;
	double			 x[30];
	int			 i, round;

	(void)state;
	k = kind_open("ridge", "ridge-plugin", 4, 0);
	for (i = 0; i < 30; i++)
		x[i] = 0.25 * i - 3.0;
	for (i = 0; i < 4; i++)
		es_make(&buf[i], &len[i], lus[i], x, (size_t)(i * 7 + 1));
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 4; i++) {
			job_init(&j[i], k, (unsigned)i, buf[(i + round) % 4],
			    len[(i + round) % 4]);
			assert_int_equal(pthread_create(&t[i], NULL, job_main,
			    &j[i]), 0);
		}
		for (i = 0; i < 4; i++) {
			assert_int_equal(pthread_join(t[i], NULL), 0);
			assert_int_equal(j[i].j_status, TASK_OK);
			assert_int_equal(j[i].j_pc.calls, 1);
			p.kind = "ridge-lu";
			p.payload = j[i].j_params.payload;
			p.payload_len = j[i].j_params.payload_len;
			assert_int_equal(task_run(&p, NULL, &r), TASK_OK);
			o1 = task_output(&r, &n1);
			o2 = task_output(&j[i].j_res, &n2);
			assert_int_equal(n1, n2);
			assert_memory_equal(o1, o2, n1);
			task_result_free(&r);
			task_result_free(&j[i].j_res);
		}
	}
	for (i = 0; i < 4; i++)
		free(buf[i]);
	ext_plugin_close(k);
	kind_free(k);
}

/*
 * The echo plugin: output copied from the payload (any length, none too),
 * half-way reported once; the kind, slot and number of slots reach it.
 */
static void
test_echo(void **state)
{
	struct ext_kind		*k;
	struct task_params	 p = { 0 };
	struct task_ctx		 ctx = { NULL, 1.0, count_progress, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct task_result	 res;
	struct progress_count	 pc;
	const uint8_t		*out;
	uint8_t			 big[100];
	size_t			 len;

	(void)state;
	k = kind_open("fitness", "echo", 3, 0);
	p.kind = "fitness";
	memset(big, 'b', sizeof(big));
	p.payload = big;
	p.payload_len = sizeof(big);
	memset(&pc, 0, sizeof(pc));
	ctx.arg = &pc;
	assert_int_equal(ext_plugin_run(k, 1, &p, &ctx, 1000, &res), TASK_OK);
	out = task_output(&res, &len);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(out, big, len);
	assert_true(res.out_owned);
	assert_int_equal(pc.calls, 1);
	assert_int_equal(pc.last, 2);
	task_result_free(&res);

	p.payload = (const uint8_t *)"?";
	p.payload_len = 1;
	assert_int_equal(ext_plugin_run(k, 2, &p, NULL, 1000, &res), TASK_OK);
	out = task_output(&res, &len);
	assert_int_equal(len, strlen("fitness fitness 2 3"));
	assert_memory_equal(out, "fitness fitness 2 3", len);

	/* No payload: an empty output. */
	p.payload = NULL;
	p.payload_len = 0;
	assert_int_equal(ext_plugin_run(k, 0, &p, NULL, 1000, &res), TASK_OK);
	assert_null(task_output(&res, &len));
	assert_int_equal(len, 0);

	/* A length without bytes. */
	p.payload_len = 5;
	assert_int_equal(ext_plugin_run(k, 0, &p, NULL, 1000, &res),
	    TASK_BAD_PARAMS);
	assert_non_null(strstr(res.error, "fitness"));
	ext_plugin_close(k);
	kind_free(k);
}

/*
 * A cancel raised from another thread ends a spinning plugin's task and a
 * long ridge plugin task promptly, as cancelled; raised before the run,
 * the ridge plugin does no work and gives no output.
 */
static void
test_cancel(void **state)
{
	struct ext_kind		*spin, *ridge;
	struct job		 j;
	pthread_t		 t;
	uint8_t			*buf;
	double			 x[30] = { 0 };
	size_t			 len, n;
	uint64_t		 t0;

	(void)state;
	spin = kind_open("spin", "spin", 1, 0);
	ridge = kind_open("ridge", "ridge-plugin", 1, 0);
	es_make(&buf, &len, 3000, x, 30);

	job_init(&j, spin, 0, "", 0);
	assert_int_equal(pthread_create(&t, NULL, job_main, &j), 0);
	sleep_ms(20);
	t0 = now_ns();
	atomic_store(&j.j_cancel, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(now_ns() - t0 < HANG_NS);
	assert_int_equal(j.j_status, TASK_CANCELLED);
	assert_string_equal(j.j_res.error, "cancelled");
	assert_int_equal(j.j_pc.calls, 1);

	job_init(&j, ridge, 0, buf, len);
	assert_int_equal(pthread_create(&t, NULL, job_main, &j), 0);
	sleep_ms(20);
	t0 = now_ns();
	atomic_store(&j.j_cancel, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(now_ns() - t0 < HANG_NS);
	assert_int_equal(j.j_status, TASK_CANCELLED);
	assert_string_equal(j.j_res.error, "cancelled");
	assert_null(task_output(&j.j_res, &n));

	job_init(&j, ridge, 0, buf, len);
	atomic_store(&j.j_cancel, 1);
	job_main(&j);
	assert_int_equal(j.j_status, TASK_CANCELLED);
	assert_null(task_output(&j.j_res, &n));
	assert_int_equal(j.j_pc.calls, 0);

	free(buf);
	ext_plugin_close(spin);
	kind_free(spin);
	ext_plugin_close(ridge);
	kind_free(ridge);
}

/*
 * The kind's timeout cancels a plugin's task, which then fails saying so;
 * a cancel raised as well wins.
 */
static void
test_timeout(void **state)
{
	struct ext_kind		*k;
	struct task_params	 p = { 0 };
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct task_result	 res;
	atomic_int		 flag;
	uint64_t		 t0;

	(void)state;
	k = kind_open("spin", "spin", 1, 50);
	p.kind = "spin";
	t0 = now_ns();
	assert_int_equal(ext_plugin_run(k, 0, &p, NULL, 1000, &res),
	    TASK_FAILED);
	assert_true(now_ns() - t0 >= 50000000ULL);
	assert_true(now_ns() - t0 < HANG_NS);
	assert_string_equal(res.error, "timeout after 0.05 s");

	atomic_init(&flag, 1);
	ctx.cancel = &flag;
	assert_int_equal(ext_plugin_run(k, 0, &p, &ctx, 1000, &res),
	    TASK_CANCELLED);
	assert_string_equal(res.error, "cancelled");
	ext_plugin_close(k);
	kind_free(k);

	k = kind_open("spin", "spin", 1, 1000);
	assert_int_equal(ext_plugin_run(k, 0, &p, NULL, 1000, &res),
	    TASK_FAILED);
	assert_string_equal(res.error, "timeout after 1 s");
	ext_plugin_close(k);
	kind_free(k);
}

/*
 * An output over max_output is refused to the plugin, and the task fails
 * saying so whatever the plugin then says; under it, it is kept.
 */
static void
test_max_output(void **state)
{
	struct ext_kind		*big, *echo;
	struct task_params	 p = { 0 };
	struct task_result	 res;
	const uint8_t		*out;
	size_t			 len;

	(void)state;
	big = kind_open("big", "bigout", 1, 0);
	p.kind = "big";
	assert_int_equal(ext_plugin_run(big, 0, &p, NULL, 1024, &res),
	    TASK_FAILED);
	assert_string_equal(res.error,
	    "output over max_output (1024 bytes): 1048576 asked");
	assert_null(task_output(&res, &len));

	assert_int_equal(ext_plugin_run(big, 0, &p, NULL, 1 << 20, &res),
	    TASK_OK);
	out = task_output(&res, &len);
	assert_int_equal(len, 1 << 20);
	assert_int_equal(out[0], 'x');
	assert_int_equal(out[len - 1], 'x');
	task_result_free(&res);
	ext_plugin_close(big);
	kind_free(big);

	/* A plugin that fails without a word gets the reason too. */
	echo = kind_open("echo", "echo", 1, 0);
	p.kind = "echo";
	p.payload = (const uint8_t *)"0123456789";
	p.payload_len = 10;
	assert_int_equal(ext_plugin_run(echo, 0, &p, NULL, 9, &res),
	    TASK_FAILED);
	assert_string_equal(res.error,
	    "output over max_output (9 bytes): 10 asked");
	assert_int_equal(ext_plugin_run(echo, 0, &p, NULL, 10, &res),
	    TASK_OK);
	ext_plugin_close(echo);
	kind_free(echo);
}

/*
 * A failed task carries the plugin's message, or a default one; a return
 * value outside the ABI fails the task, naming the value.
 */
static void
test_errors(void **state)
{
	struct ext_kind		*fail, *r42;
	struct task_params	 p = { 0 };
	struct task_result	 res;
	size_t			 len;

	(void)state;
	fail = kind_open("fail", "fail", 1, 0);
	r42 = kind_open("r42", "ret42", 1, 0);
	p.kind = "fail";
	p.payload = (const uint8_t *)"abc";
	p.payload_len = 3;
	assert_int_equal(ext_plugin_run(fail, 0, &p, NULL, 100, &res),
	    TASK_FAILED);
	assert_string_equal(res.error, "bad individual: 3 bytes");
	assert_null(task_output(&res, &len));
	p.payload_len = 0;
	assert_int_equal(ext_plugin_run(fail, 0, &p, NULL, 100, &res),
	    TASK_FAILED);
	assert_string_equal(res.error, "plugin run failed");
	assert_int_equal(ext_plugin_run(r42, 0, &p, NULL, 100, &res),
	    TASK_FAILED);
	assert_string_equal(res.error, "plugin returned 42");
	ext_plugin_close(fail);
	kind_free(fail);
	ext_plugin_close(r42);
	kind_free(r42);
}

/*
 * Closing a kind calls its plugin's fini with what its init stored; two
 * kinds of one shared object keep their own states.
 */
static void
test_fini(void **state)
{
	struct ext_kind	*a, *b;
	char		 path[] = "/tmp/test_plugin_fini.XXXXXX";
	char		 line[128];
	FILE		*f;
	int		 fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd != -1);
	close(fd);
	assert_int_equal(setenv("R3Q_TEST_FINI", path, 1), 0);
	a = kind_open("alpha", "echo", 2, 0);
	b = kind_open("beta", "echo", 5, 0);
	ext_plugin_close(b);
	ext_plugin_close(a);
	ext_plugin_close(a);	/* once only */
	kind_free(a);
	kind_free(b);
	unsetenv("R3Q_TEST_FINI");

	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "fini beta 5\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "fini alpha 2\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_ridge_identical),
		cmocka_unit_test(test_ridge_threads),
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_max_output),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fini),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
