/*
 * bench/cancel: how soon an interrupted task frees its execution slot.
 * For each task kind and size, run the task in a thread, raise its cancel
 * flag at a random moment of its run, and time the flag-to-return latency.
 * Prints a table (median, p99, max) and CSV.  The target is 10 ms for the
 * built-in kinds and a persistent kind (the C example answering the cancel
 * frame) and a plugin (examples/ridge-plugin.c polling its cancelled()
 * callback), 50 ms for an exec kind (/bin/sleep: SIGTERM to its process
 * group, the process reaped and its working directory removed).  The
 * persistent and plugin examples are found under $top_builddir (default
 * ".").
 *
 * usage: bench/cancel [-n trials] [-o file.csv]
 */
#include "config.h"

#include <sys/stat.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "es/payload.h"
#include "task/ext.h"
#include "task/task.h"
#include "util.h"

struct run {
	struct task_params	 p;
	struct ext_kind		*k;		/* NULL: a built-in kind */
	atomic_int		 cancel;
	uint64_t		 returned;
	int			 status;
};

static void *
runner(void *arg)
{
	struct run		*r = arg;
	struct task_ctx		 ctx;
	struct task_result	 res;

	memset(&ctx, 0, sizeof(ctx));
	ctx.cancel = &r->cancel;
	ctx.speed = 1.0;
	if (r->k != NULL)
		r->status = ext_run(r->k, 0, &r->p, &ctx, 1024 * 1024, &res);
	else
		r->status = task_run(&r->p, &ctx, &res);
	task_result_free(&res);
	r->returned = mono_ns();
	return (NULL);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Index of the 99th percentile of n sorted samples. */
static size_t
p99(size_t n)
{
	size_t	 i = (n * 99 + 99) / 100;

	return (i > 0 ? i - 1 : 0);
}

/*
 * An exec or persistent kind running prog, or a plugin loaded from it
 * (relative: under top_builddir), with one argument or none; NULL, said
 * why, if it cannot be opened.
 */
static struct ext_kind *
ext_kind_new(enum ext_type type, const char *prog, const char *arg)
{
	struct ext_kind	*k;
	const char	*dir;
	char		*abs, err[TASK_ERRLEN];

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return (NULL);
	snprintf(k->k_name, sizeof(k->k_name), "bench");
	k->k_type = type;
	k->k_argv = calloc(3, sizeof(char *));
	k->k_env = calloc(1, sizeof(char *));
	if (prog[0] == '/')
		k->k_argv[0] = strdup(prog);
	else {
		dir = getenv("top_builddir");
		if ((abs = realpath(dir != NULL ? dir : ".", NULL)) != NULL &&
		    asprintf(&k->k_argv[0], "%s/%s", abs, prog) == -1)
			k->k_argv[0] = NULL;
		free(abs);
	}
	if (arg != NULL)
		k->k_argv[1] = strdup(arg);
	k->k_grace = EXT_GRACE_DEFAULT;
	k->k_nslots = 1;
	atomic_init(&k->k_refs, 1);
	if (k->k_argv[0] == NULL || ext_open(k, err, sizeof(err)) == -1) {
		printf("%s: %s\n", prog, k->k_argv[0] == NULL ?
		    "out of memory" : err);
		ext_close(k);
		return (NULL);
	}
	return (k);
}

/* Time one whole uninterrupted run, to know when to interrupt. */
static uint64_t
full_run(const struct task_params *p, struct ext_kind *k)
{
	struct run	 r;
	pthread_t	 t;
	uint64_t	 t0;

	memset(&r, 0, sizeof(r));
	r.p = *p;
	r.k = k;
	t0 = mono_ns();
	pthread_create(&t, NULL, runner, &r);
	pthread_join(t, NULL);
	return (r.returned - t0);
}

int
main(int argc, char *argv[])
{
	/* type -1: a built-in kind; else prog [arg] of an ext.h kind. */
	static const struct {
		const char	*name;
		const char	*kind;
		uint32_t	 lu;
		double		 work_ms;
		int		 spin;
		int		 type;
		const char	*prog;
		const char	*arg;
		uint64_t	 target_ms;
	} cases[] = {
		{ "ridge-lu n=1000", "ridge-lu", 1000, 0, 0, -1, NULL, NULL,
		    10 },
		{ "ridge-lu n=2000", "ridge-lu", 2000, 0, 0, -1, NULL, NULL,
		    10 },
		{ "ridge-lu n=3000", "ridge-lu", 3000, 0, 0, -1, NULL, NULL,
		    10 },
		{ "synth 500ms sleep", "synth", 0, 500, 0, -1, NULL, NULL,
		    10 },
		{ "synth 500ms spin", "synth", 0, 500, 1, -1, NULL, NULL, 10 },
		{ "exec sleep 0.5", "bench", 0, 0, 0, EXT_EXEC, "/bin/sleep",
		    "0.5", 50 },
		{ "persistent C 500ms", "bench", 0, 500, 0, EXT_PERSISTENT,
		    "examples/persistent", NULL, 10 },
		{ "plugin ridge n=2000", "bench", 2000, 0, 0, EXT_PLUGIN,
		    "examples/.libs/ridge-plugin.so", NULL, 10 },
	};
	static double	 x[30];
	static uint8_t	 payload[ES_PAYLOAD_HEAD + 30 * 8];
	struct run	 r;
	struct ext_kind	*k;
	pthread_t	 t;
	struct timespec	 ts;
	uint64_t	*lat, full, at, raised;
	const char	*csv = "bench/results/cancel.csv";
	FILE		*f;
	size_t		 c, i, n = 30, late, m;
	int		 ch;

	while ((ch = getopt(argc, argv, "n:o:")) != -1) {
		if (ch == 'n')
			n = (size_t)atoi(optarg);
		else if (ch == 'o')
			csv = optarg;
		else {
			fprintf(stderr, "usage: cancel [-n trials] [-o csv]\n");
			return (64);
		}
	}
	if (n < 1)
		n = 1;
	openblas_set_num_threads(1);
	signal(SIGPIPE, SIG_IGN);	/* as workerd */
	srand(1);
	if (strncmp(csv, "bench/results/", 14) == 0)
		(void)mkdir("bench/results", 0777);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}
	fprintf(f, "task,trials,full_ms,median_ms,p99_ms,max_ms,target_ms,"
	    "over_target\n");
	printf("%-20s %6s %9s %10s %10s %10s %7s %6s\n", "task", "cut",
	    "full ms", "median ms", "p99 ms", "max ms", "target", "over");
	lat = calloc(n, sizeof(*lat));
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memset(&r, 0, sizeof(r));
		k = NULL;
		if (cases[c].type >= 0 && (k = ext_kind_new(
		    (enum ext_type)cases[c].type, cases[c].prog,
		    cases[c].arg)) == NULL) {
			printf("%-20s skipped\n", cases[c].name);
			continue;
		}
		r.k = k;
		es_payload_encode(payload, cases[c].lu, cases[c].spin ?
		    ES_PAYLOAD_SPIN : 0, cases[c].work_ms, x, 30);
		r.p.kind = cases[c].kind;
		r.p.payload = payload;
		r.p.payload_len = sizeof(payload);
		full = full_run(&r.p, k);
		late = m = 0;
		for (i = 0; i < n; i++) {
			atomic_store(&r.cancel, 0);
			r.returned = 0;
			/* a moment between 5 % and 90 % of the run */
			at = full / 20 + (uint64_t)(rand() / (RAND_MAX + 1.0) *
			    (double)(full * 85 / 100));
			pthread_create(&t, NULL, runner, &r);
			ts.tv_sec = at / NS_PER_SEC;
			ts.tv_nsec = (long)(at % NS_PER_SEC);
			nanosleep(&ts, NULL);
			raised = mono_ns();
			atomic_store(&r.cancel, 1);
			pthread_join(t, NULL);
			if (r.status != TASK_CANCELLED)
				continue;	/* it finished first */
			lat[m] = r.returned > raised ? r.returned - raised : 0;
			if (lat[m++] > cases[c].target_ms * NS_PER_MS)
				late++;
		}
		ext_close(k);
		if (m == 0) {
			printf("%-20s %6zu   no run was interrupted\n",
			    cases[c].name, n);
			continue;
		}
		qsort(lat, m, sizeof(*lat), cmp_u64);
		printf("%-20s %6zu %9.1f %10.3f %10.3f %10.3f %7llu %6zu\n",
		    cases[c].name, m, (double)full / 1e6,
		    (double)lat[m / 2] / 1e6, (double)lat[p99(m)] / 1e6,
		    (double)lat[m - 1] / 1e6,
		    (unsigned long long)cases[c].target_ms, late);
		fprintf(f, "%s,%zu,%.3f,%.3f,%.3f,%.3f,%llu,%zu\n",
		    cases[c].name, m, (double)full / 1e6,
		    (double)lat[m / 2] / 1e6, (double)lat[p99(m)] / 1e6,
		    (double)lat[m - 1] / 1e6,
		    (unsigned long long)cases[c].target_ms, late);
	}
	fclose(f);
	free(lat);
	printf("\nCSV: %s\n", csv);
	return (0);
}
