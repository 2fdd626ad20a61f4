/*
 * bench/plugin: what running a task kind as a plugin (r3q-plugin(3)) costs
 * against the same kind built in.
 *
 * 1. Per-task time of ridge-lu through task_run against the ridge plugin
 *    (examples/ridge-plugin) through ext_plugin_run, the same payloads,
 *    batches alternating, median over rounds; then the no-op: built-in
 *    echo against the echo test plugin, in tasks per second.  The target
 *    is a plugin within 10 % of the built-in kind.
 * 2. Cancellation latency of the ridge plugin and of a plugin that only
 *    polls: the flag raised at a random moment of the run, the time until
 *    the run returns (median, p99, max).  The target is 10 ms.
 *
 * Prints a table and writes CSV.  The plugins are found under
 * $top_builddir, else the current directory.
 *
 * usage: bench/plugin [-n rounds] [-o file.csv]
 */
#include "config.h"

#include <sys/stat.h>

#include <pthread.h>
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

#define ROUND_NS	(100 * NS_PER_MS)	/* a batch's length, about */
#define DIM		30

/* One task run on its own thread, to be cancelled. */
struct run {
	struct ext_kind		*r_kind;
	struct task_params	 r_p;
	atomic_int		 r_cancel;
	uint64_t		 r_returned;
	int			 r_status;
	char			 r_error[TASK_ERRLEN];
};

static struct ext_kind	*kind_open(const char *, const char *);
static void		 kind_close(struct ext_kind *);
static uint64_t		 batch(struct ext_kind *, const struct task_params *,
			    size_t);
static int		 cmp_u64(const void *, const void *);
static int		 cmp_dbl(const void *, const void *);
static size_t		 p99(size_t);
static void		*runner(void *);
static uint64_t		 full_run(struct run *);
static void		 usage(void);

/* Load plugin file (under the build tree) as kind name; exits on error. */
static struct ext_kind *
kind_open(const char *name, const char *file)
{
	struct ext_kind	*k;
	const char	*top = getenv("top_builddir");
	char		 path[1024], err[TASK_ERRLEN];

	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    (k->k_argv = calloc(2, sizeof(*k->k_argv))) == NULL) {
		perror("calloc");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", top != NULL ? top : ".", file);
	if ((k->k_argv[0] = strdup(path)) == NULL) {
		perror("strdup");
		exit(1);
	}
	snprintf(k->k_name, sizeof(k->k_name), "%s", name);
	k->k_type = EXT_PLUGIN;
	k->k_nslots = 1;
	if (ext_plugin_open(k, err, sizeof(err)) == -1) {
		fprintf(stderr, "bench/plugin: %s\n", err);
		exit(1);
	}
	return (k);
}

/* Unload a kind and free it. */
static void
kind_close(struct ext_kind *k)
{
	ext_plugin_close(k);
	free(k->k_argv[0]);
	free(k->k_argv);
	free(k);
}

/*
 * Run n tasks of p one after the other, built in (k NULL) or through the
 * plugin kind k; returns the nanoseconds they took.
 */
static uint64_t
batch(struct ext_kind *k, const struct task_params *p, size_t n)
{
	struct task_result	 res;
	uint64_t		 t0;
	size_t			 i;

	t0 = mono_ns();
	for (i = 0; i < n; i++) {
		if (k == NULL)
			task_run(p, NULL, &res);
		else
			ext_plugin_run(k, 0, p, NULL, 1 << 20, &res);
		if (res.status != TASK_OK) {
			fprintf(stderr, "bench/plugin: %s: %s\n", p->kind,
			    res.error);
			exit(1);
		}
		task_result_free(&res);
	}
	return (mono_ns() - t0);
}

/* qsort order of two u64. */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* qsort order of two doubles. */
static int
cmp_dbl(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Index of the 99th percentile of n sorted samples. */
static size_t
p99(size_t n)
{
	size_t	 i = (n * 99 + 99) / 100;

	return (i > 0 ? i - 1 : 0);
}

/* Thread body: run the task, note when it returned. */
static void *
runner(void *arg)
{
	struct run		*r = arg;
	struct task_ctx		 ctx = { NULL, 1.0, NULL, NULL,
	    NULL, NULL, NULL, NULL, NULL, 0, NULL };
	struct task_result	 res;

	ctx.cancel = &r->r_cancel;
	r->r_status = ext_plugin_run(r->r_kind, 0, &r->r_p, &ctx, 1 << 20,
	    &res);
	memcpy(r->r_error, res.error, sizeof(r->r_error));
	task_result_free(&res);
	r->r_returned = mono_ns();
	return (NULL);
}

/*
 * Time a whole uninterrupted run, to know when to interrupt: the faster of
 * two after a warm-up (the first may fault in the plugin's scratch).
 */
static uint64_t
full_run(struct run *r)
{
	pthread_t	 t;
	uint64_t	 t0, d, best = UINT64_MAX;
	int		 i;

	atomic_store(&r->r_cancel, 0);
	for (i = 0; i < 3; i++) {
		t0 = mono_ns();
		pthread_create(&t, NULL, runner, r);
		pthread_join(t, NULL);
		d = r->r_returned - t0;
		if (i > 0 && d < best)
			best = d;
	}
	return (best);
}

static void
usage(void)
{
	fprintf(stderr, "usage: plugin [-n rounds] [-o file.csv]\n");
	exit(64);
}

int
main(int argc, char *argv[])
{
	static const uint32_t	 lus[] = { 0, 50, 200, 500, 1000 };
	static const struct {
		const char	*name;
		int		 spin;	/* the polling plugin, for 500 ms */
		uint32_t	 lu;
	} cuts[] = {
		{ "ridge-plugin n=1000", 0, 1000 },
		{ "ridge-plugin n=2000", 0, 2000 },
		{ "ridge-plugin n=3000", 0, 3000 },
		{ "spin plugin", 1, 0 },
	};
	static double		 x[DIM];
	static uint8_t		 payload[ES_PAYLOAD_HEAD + DIM * 8];
	struct ext_kind		*ridge, *echo, *spin;
	struct task_params	 p;
	struct run		 r;
	struct timespec		 ts;
	pthread_t		 t;
	const char		*csv = "bench/results/plugin.csv";
	double			*tb, *tp, ratio;
	uint64_t		*lat, full, at, raised, one;
	size_t			 n = 15, i, c, per, m, late;
	FILE			*f;
	int			 ch;

	while ((ch = getopt(argc, argv, "n:o:")) != -1) {
		switch (ch) {
		case 'n':
			n = (size_t)atoi(optarg);
			break;
		case 'o':
			csv = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc != optind)
		usage();
	if (n < 1)
		n = 1;
	openblas_set_num_threads(1);
	srand(1);
	for (i = 0; i < DIM; i++)
		x[i] = 0.5 * (double)i - 7.0;
	ridge = kind_open("ridge-lu", "examples/.libs/ridge-plugin.so");
	echo = kind_open("echo", "tests/plugins/.libs/echo.so");
	if (strncmp(csv, "bench/results/", 14) == 0)
		(void)mkdir("bench/results", 0777);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}
	tb = calloc(n, sizeof(*tb));
	tp = calloc(n, sizeof(*tp));
	lat = calloc(n * 2, sizeof(*lat));
	if (tb == NULL || tp == NULL || lat == NULL) {
		perror("calloc");
		return (1);
	}

	fprintf(f, "section,case,samples,builtin_us,plugin_us,ratio,"
	    "median_ms,p99_ms,max_ms,over_10ms\n");
	printf("Per-task time, median of %zu rounds (built in vs plugin)\n",
	    n);
	printf("%-22s %8s %12s %12s %8s\n", "task", "tasks", "built-in us",
	    "plugin us", "ratio");
	for (c = 0; c <= sizeof(lus) / sizeof(lus[0]); c++) {
		memset(&p, 0, sizeof(p));
		if (c < sizeof(lus) / sizeof(lus[0])) {
			es_payload_encode(payload, lus[c], 0, 0.0, x, DIM);
			p.kind = "ridge-lu";
		} else
			p.kind = "echo";
		p.payload = payload;
		p.payload_len = sizeof(payload);

		/* Batches of about ROUND_NS, after a warm-up of both. */
		batch(p.kind[0] == 'e' ? echo : ridge, &p, 3);
		for (per = 1; (one = batch(NULL, &p, per)) < ROUND_NS / 8 &&
		    per < 1000000; per *= 2)
			;
		per = (size_t)((double)per * ROUND_NS / (double)one);
		per = per < 3 ? 3 : per;
		batch(p.kind[0] == 'e' ? echo : ridge, &p, per / 4 + 1);
		for (i = 0; i < n; i++) {
			if (i % 2 == 0) {
				tb[i] = (double)batch(NULL, &p, per) / per;
				tp[i] = (double)batch(p.kind[0] == 'e' ?
				    echo : ridge, &p, per) / per;
			} else {
				tp[i] = (double)batch(p.kind[0] == 'e' ?
				    echo : ridge, &p, per) / per;
				tb[i] = (double)batch(NULL, &p, per) / per;
			}
		}
		qsort(tb, n, sizeof(*tb), cmp_dbl);
		qsort(tp, n, sizeof(*tp), cmp_dbl);
		ratio = tp[n / 2] / tb[n / 2];
		if (c < sizeof(lus) / sizeof(lus[0])) {
			printf("ridge-lu lu=%-10u %8zu %12.3f %12.3f %8.3f\n",
			    lus[c], per, tb[n / 2] / 1e3, tp[n / 2] / 1e3,
			    ratio);
			fprintf(f, "overhead,ridge-lu lu=%u,%zu,%.4f,%.4f,"
			    "%.4f,,,,\n", lus[c], n, tb[n / 2] / 1e3,
			    tp[n / 2] / 1e3, ratio);
		} else {
			printf("%-22s %8zu %12.3f %12.3f %8.3f\n",
			    "echo 256 B", per, tb[n / 2] / 1e3,
			    tp[n / 2] / 1e3, ratio);
			printf("%-22s %8s %12.0f %12.0f   tasks/s\n", "", "",
			    1e9 / tb[n / 2], 1e9 / tp[n / 2]);
			fprintf(f, "overhead,echo 256 B,%zu,%.4f,%.4f,%.4f,,,,"
			    "\n", n, tb[n / 2] / 1e3, tp[n / 2] / 1e3, ratio);
		}
	}

	spin = kind_open("spin", "tests/plugins/.libs/spin.so");
	printf("\nCancellation latency, %zu trials each\n", n * 2);
	printf("%-22s %6s %9s %10s %10s %10s %8s\n", "task", "cut",
	    "full ms", "median ms", "p99 ms", "max ms", ">10 ms");
	for (c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		memset(&r, 0, sizeof(r));
		atomic_init(&r.r_cancel, 0);
		r.r_kind = cuts[c].spin ? spin : ridge;
		es_payload_encode(payload, cuts[c].lu, 0, 0.0, x, DIM);
		r.r_p.kind = r.r_kind->k_name;
		r.r_p.payload = payload;
		r.r_p.payload_len = sizeof(payload);
		full = cuts[c].spin ? 500 * NS_PER_MS : full_run(&r);
		late = m = 0;
		for (i = 0; i < n * 2; i++) {
			atomic_store(&r.r_cancel, 0);
			r.r_returned = 0;
			/* a moment between 5 % and 90 % of the run */
			at = full / 20 + (uint64_t)(rand() / (RAND_MAX + 1.0) *
			    (double)(full * 85 / 100));
			pthread_create(&t, NULL, runner, &r);
			ts.tv_sec = at / NS_PER_SEC;
			ts.tv_nsec = (long)(at % NS_PER_SEC);
			nanosleep(&ts, NULL);
			raised = mono_ns();
			atomic_store(&r.r_cancel, 1);
			pthread_join(t, NULL);
			if (r.r_status != TASK_CANCELLED)
				continue;	/* it finished first */
			lat[m] = r.r_returned > raised ?
			    r.r_returned - raised : 0;
			if (lat[m++] > 10 * NS_PER_MS)
				late++;
		}
		if (m == 0) {
			printf("%-22s %6zu   no run was interrupted (%s%s%s)\n",
			    cuts[c].name, n * 2, task_status_name(r.r_status),
			    r.r_error[0] != '\0' ? ": " : "", r.r_error);
			continue;
		}
		qsort(lat, m, sizeof(*lat), cmp_u64);
		printf("%-22s %6zu %9.1f %10.3f %10.3f %10.3f %8zu\n",
		    cuts[c].name, m, (double)full / 1e6,
		    (double)lat[m / 2] / 1e6, (double)lat[p99(m)] / 1e6,
		    (double)lat[m - 1] / 1e6, late);
		fprintf(f, "cancel,%s,%zu,,,,%.3f,%.3f,%.3f,%zu\n",
		    cuts[c].name, m, (double)lat[m / 2] / 1e6,
		    (double)lat[p99(m)] / 1e6, (double)lat[m - 1] / 1e6, late);
	}
	fclose(f);
	kind_close(ridge);
	kind_close(echo);
	kind_close(spin);
	free(tb);
	free(tp);
	free(lat);
	printf("\nCSV: %s\n", csv);
	return (0);
}
