/*
 * bench/cancel: how soon an interrupted task frees its execution slot.
 * For each task kind and size, run the task in a thread, raise its cancel
 * flag at a random moment of its run, and time the flag-to-return latency.
 * Prints a table (median, p99, max) and CSV; the target is 10 ms.
 *
 * usage: bench/cancel [-n trials] [-o file.csv]
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "es/payload.h"
#include "task/task.h"
#include "util.h"

struct run {
	struct task_params	 p;
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

/* Time one whole uninterrupted run, to know when to interrupt. */
static uint64_t
full_run(const struct task_params *p)
{
	struct run	 r;
	pthread_t	 t;
	uint64_t	 t0;

	memset(&r, 0, sizeof(r));
	r.p = *p;
	t0 = mono_ns();
	pthread_create(&t, NULL, runner, &r);
	pthread_join(t, NULL);
	return (r.returned - t0);
}

int
main(int argc, char *argv[])
{
	static const struct {
		const char	*name;
		const char	*kind;
		uint32_t	 lu;
		double		 work_ms;
		int		 spin;
	} cases[] = {
		{ "ridge-lu n=1000", "ridge-lu", 1000, 0, 0 },
		{ "ridge-lu n=2000", "ridge-lu", 2000, 0, 0 },
		{ "ridge-lu n=3000", "ridge-lu", 3000, 0, 0 },
		{ "synth 500ms sleep", "synth", 0, 500, 0 },
		{ "synth 500ms spin", "synth", 0, 500, 1 },
	};
	static double	 x[30];
	static uint8_t	 payload[ES_PAYLOAD_HEAD + 30 * 8];
	struct run	 r;
	pthread_t	 t;
	struct timespec	 ts;
	uint64_t	*lat, full, at, raised;
	const char	*csv = "bench/cancel.csv";
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
	srand(1);
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return (1);
	}
	fprintf(f, "task,trials,full_ms,median_ms,p99_ms,max_ms,over_10ms\n");
	printf("%-20s %6s %9s %10s %10s %10s %8s\n", "task", "cut",
	    "full ms", "median ms", "p99 ms", "max ms", ">10 ms");
	lat = calloc(n, sizeof(*lat));
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memset(&r, 0, sizeof(r));
		es_payload_encode(payload, cases[c].lu, cases[c].spin ?
		    ES_PAYLOAD_SPIN : 0, cases[c].work_ms, x, 30);
		r.p.kind = cases[c].kind;
		r.p.payload = payload;
		r.p.payload_len = sizeof(payload);
		full = full_run(&r.p);
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
			if (lat[m++] > 10 * NS_PER_MS)
				late++;
		}
		if (m == 0) {
			printf("%-20s %6zu   no run was interrupted\n",
			    cases[c].name, n);
			continue;
		}
		qsort(lat, m, sizeof(*lat), cmp_u64);
		printf("%-20s %6zu %9.1f %10.3f %10.3f %10.3f %8zu\n",
		    cases[c].name, m, (double)full / 1e6,
		    (double)lat[m / 2] / 1e6, (double)lat[p99(m)] / 1e6,
		    (double)lat[m - 1] / 1e6, late);
		fprintf(f, "%s,%zu,%.3f,%.3f,%.3f,%.3f,%zu\n", cases[c].name, m,
		    (double)full / 1e6, (double)lat[m / 2] / 1e6,
		    (double)lat[p99(m)] / 1e6, (double)lat[m - 1] / 1e6, late);
	}
	fclose(f);
	free(lat);
	printf("\nCSV: %s\n", csv);
	return (0);
}
