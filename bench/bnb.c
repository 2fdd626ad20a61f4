/*
 * bench/bnb: the flow-shop branch and bound's node rate, issue 18's
 * benchmark 4 in local form.  For each instance of a Taillard file and
 * each lower bound (LB1, LB2), the same best-bound-first search runs
 * twice from the same first upper bound (NEH, then the iterated greedy):
 * (a) the sequential solver, bnb_solve(); (b) the "pfsp" task kind in a
 * loop, as the master's driver will run it but in one thread and without
 * a network: pop the best subproblem, encode its payload, task_run(),
 * decode the output, push its frontier.  Both explore the same nodes (the
 * search is deterministic), so the ratio of their times is the cost of the
 * encodings and of a task's set-up.  A run stops unproved after
 * --max-nodes.  Prints a table, writes CSV with -o.  A measurement, not a
 * test.
 *
 * usage: bench/bnb [-o file.csv] [-f taillard-file] [-i first[-last]]
 *                  [--node-budget n] [--max-nodes n] [--ig n]
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnb/pfsp.h"
#include "task/task.h"

#define DEFAULT_FILE	"tests/data/taillard/tai20_5.txt"

struct run {
	int32_t		 cmax;
	int		 proved;
	uint64_t	 nodes;
	uint64_t	 tasks;
	double		 secs;
};

static void	 die(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static double	 now(void);
static char	*slurp(const char *, size_t *);
static void	 run_solver(const struct bnb_problem *, uint64_t, uint64_t,
		    int32_t, const uint16_t *, struct run *);
static void	 run_tasks(const struct bnb_problem *, uint64_t, uint64_t,
		    int32_t, struct run *);
static void	 usage(void) __attribute__((noreturn));

/* Exit with a message: the bench cannot go on. */
static void
die(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "bench/bnb: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The monotonic clock in seconds. */
static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

/* A whole file, its length in *len. */
static char *
slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf;
	long	 sz;

	if ((f = fopen(path, "rb")) == NULL)
		die("%s: cannot open (run from the build directory or give -f)",
		    path);
	if (fseek(f, 0, SEEK_END) == -1 || (sz = ftell(f)) < 0)
		die("%s: cannot size", path);
	rewind(f);
	if ((buf = malloc((size_t)sz + 1)) == NULL ||
	    fread(buf, 1, (size_t)sz, f) != (size_t)sz)
		die("%s: cannot read", path);
	fclose(f);
	*len = (size_t)sz;
	return (buf);
}

/* (a) The sequential solver from the upper bound ub. */
static void
run_solver(const struct bnb_problem *pb, uint64_t slice, uint64_t max,
    int32_t ub, const uint16_t *perm, struct run *r)
{
	struct bnb_solve_opts	 o;
	struct bnb_solution	*sol;
	char			 err[256];
	double			 t0;

	(void)perm;
	if ((sol = calloc(1, sizeof(*sol))) == NULL)
		die("out of memory");
	memset(&o, 0, sizeof(o));
	o.slice = slice;
	o.max_nodes = max;
	o.incumbent = ub;
	t0 = now();
	if (bnb_solve(pb, &o, sol, err, sizeof(err)) == -1)
		die("%s", err);
	r->secs = now() - t0;
	r->cmax = sol->cmax != BNB_NONE ? sol->cmax : ub;
	r->proved = sol->proved;
	r->nodes = sol->nodes;
	r->tasks = sol->pops;
	free(sol);
}

/*
 * (b) The same search through the pfsp kind: every exploration is a
 * payload encoded, a task run and an output decoded, as on a worker.
 */
static void
run_tasks(const struct bnb_problem *pb, uint64_t slice, uint64_t max,
    int32_t ub, struct run *r)
{
	const struct bnb_instance	*inst = bnb_problem_instance(pb);
	struct bnb_pool			*pool;
	struct bnb_result		*res;
	struct bnb_sub			*sub, *kid;
	struct task_params		 tp;
	struct task_result		 tr;
	const uint8_t			*out;
	uint8_t				*buf;
	char				 err[256];
	size_t				 len, olen, i;
	uint64_t			 budget;
	int32_t				 inc = ub;
	double				 t0;

	memset(r, 0, sizeof(*r));
	if ((pool = bnb_pool_new()) == NULL ||
	    (res = calloc(1, sizeof(*res))) == NULL ||
	    (sub = bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0))) == NULL ||
	    bnb_pool_push(pool, sub) == -1)
		die("out of memory");
	t0 = now();
	while (bnb_pool_bound(pool) < inc && (max == 0 || r->nodes < max)) {
		sub = bnb_pool_pop(pool);
		r->tasks++;
		budget = slice;
		if (max > 0 && (budget == 0 || budget > max - r->nodes))
			budget = max - r->nodes;
		len = bnb_payload_len(inst->n, inst->m, sub->depth + sub->back);
		if ((buf = malloc(len)) == NULL)
			die("out of memory");
		if (bnb_payload_encode(buf, len, inst, bnb_problem_lb(pb),
		    bnb_problem_branch(pb), inc, budget, sub) == -1)
			die("payload encode");
		memset(&tp, 0, sizeof(tp));
		tp.kind = "pfsp";
		tp.payload = buf;
		tp.payload_len = len;
		if (task_run(&tp, NULL, &tr) != TASK_OK)
			die("task: %s", tr.error);
		out = task_output(&tr, &olen);
		if (bnb_result_decode(out, olen, inst->n, sub, res, err,
		    sizeof(err)) == -1)
			die("%s", err);
		r->nodes += res->nodes;
		if (res->best < inc) {
			inc = res->best;
			bnb_pool_prune(pool, inc);
		}
		for (i = 0; i < res->frontier.n; i++) {
			if (res->frontier.v[i].lb >= inc)
				continue;
			if ((kid = bnb_frontier_sub(&res->frontier, i)) ==
			    NULL || bnb_pool_push(pool, kid) == -1)
				die("out of memory");
		}
		bnb_result_free(res);
		task_result_free(&tr);
		free(buf);
		free(sub);
	}
	r->secs = now() - t0;
	r->cmax = inc;
	r->proved = bnb_pool_bound(pool) >= inc;
	bnb_pool_free(pool);
	free(res);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench/bnb [-o file.csv] [-f taillard-file] "
	    "[-i first[-last]]\n"
	    "                 [--node-budget n] [--max-nodes n] [--ig n]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "ig",		 required_argument, NULL, 'g' },
		{ "max-nodes",	 required_argument, NULL, 'M' },
		{ "node-budget", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 }
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct run		 a, b;
	const char		*file = DEFAULT_FILE, *csv = NULL;
	uint16_t		 perm[BNB_MAX_JOBS];
	char			*buf, *end, err[512];
	FILE			*cf = NULL;
	size_t			 len;
	unsigned long		 first = 1, last = 10;
	uint64_t		 slice = 10000, max = 10000000, ig = 1000;
	int32_t			 ub;
	uint32_t		 idx;
	int			 ch, lb;

	while ((ch = getopt_long(argc, argv, "f:i:o:", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			file = optarg;
			break;
		case 'i':
			first = strtoul(optarg, &end, 10);
			last = first;
			if (*end == '-')
				last = strtoul(end + 1, &end, 10);
			if (*end != '\0' || first < 1 || last < first)
				usage();
			break;
		case 'o':
			csv = optarg;
			break;
		case 'g':
			ig = strtoull(optarg, &end, 10);
			if (*end != '\0')
				usage();
			break;
		case 'M':
			max = strtoull(optarg, &end, 10);
			if (*end != '\0')
				usage();
			break;
		case 'B':
			slice = strtoull(optarg, &end, 10);
			if (*end != '\0' || slice == 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	buf = slurp(file, &len);
	if (csv != NULL) {
		if ((cf = fopen(csv, "w")) == NULL)
			die("%s: cannot write", csv);
		fprintf(cf, "instance,n,m,lb,upper_start,makespan,proved,nodes,"
		    "tasks,solver_s,solver_nodes_per_s,task_nodes,task_s,"
		    "task_nodes_per_s,task_over_solver\n");
	}
	printf("bench/bnb: %s, node budget %llu, max nodes %llu, first "
	    "upper bound NEH + %llu iterated greedy iterations\n", file,
	    (unsigned long long)slice, (unsigned long long)max,
	    (unsigned long long)ig);
	printf("%-5s %-3s %5s %6s %-3s %11s %7s %8s %11s %8s %11s %6s\n",
	    "inst", "lb", "start", "cmax", "opt", "nodes", "tasks",
	    "solver s", "nodes/s", "tasks s", "nodes/s", "ratio");
	for (idx = (uint32_t)first; idx <= last; idx++) {
		if (bnb_parse_taillard(buf, len, file, idx, &inst, err,
		    sizeof(err)) == -1)
			die("%s", err);
		ub = ig > 0 ? bnb_ig(&inst, (uint32_t)ig, 1, perm) :
		    bnb_neh(&inst, perm);
		if (ub == -1)
			die("out of memory");
		for (lb = BNB_LB1; lb <= BNB_LB2; lb++) {
			if ((pb = bnb_problem_new(&inst, lb, err,
			    sizeof(err))) == NULL)
				die("%s", err);
			run_solver(pb, slice, max, ub, perm, &a);
			run_tasks(pb, slice, max, ub, &b);
			if (a.nodes != b.nodes || a.cmax != b.cmax)
				fprintf(stderr, "bench/bnb: instance %u %s: "
				    "solver %llu nodes %d, tasks %llu nodes "
				    "%d\n", idx, bnb_lb_name(lb),
				    (unsigned long long)a.nodes, a.cmax,
				    (unsigned long long)b.nodes, b.cmax);
			printf("%-5u %-3s %5d %6d %-3s %11llu %7llu %8.3f "
			    "%11.0f %8.3f %11.0f %6.3f\n", idx,
			    bnb_lb_name(lb), ub, a.cmax,
			    a.proved ? "yes" : "no",
			    (unsigned long long)a.nodes,
			    (unsigned long long)a.tasks, a.secs,
			    a.secs > 0 ? (double)a.nodes / a.secs : 0.0,
			    b.secs, b.secs > 0 ? (double)b.nodes / b.secs :
			    0.0, a.secs > 0 ? b.secs / a.secs : 0.0);
			if (cf != NULL)
				fprintf(cf, "%u,%u,%u,%s,%d,%d,%d,%llu,%llu,"
				    "%.6f,%.0f,%llu,%.6f,%.0f,%.4f\n", idx,
				    inst.n, inst.m, bnb_lb_name(lb), ub,
				    a.cmax, a.proved,
				    (unsigned long long)a.nodes,
				    (unsigned long long)a.tasks, a.secs,
				    a.secs > 0 ? (double)a.nodes / a.secs : 0,
				    (unsigned long long)b.nodes, b.secs,
				    b.secs > 0 ? (double)b.nodes / b.secs : 0,
				    a.secs > 0 ? b.secs / a.secs : 0);
			fflush(stdout);
			bnb_problem_free(pb);
		}
		bnb_instance_free(&inst);
	}
	if (cf != NULL && fclose(cf) == EOF)
		die("%s: cannot write", csv);
	free(buf);
	printf("rerun: bench/bnb -f %s -i %lu-%lu --node-budget %llu "
	    "--max-nodes %llu --ig %llu%s%s\n", file, first, last,
	    (unsigned long long)slice, (unsigned long long)max,
	    (unsigned long long)ig, csv != NULL ? " -o " : "",
	    csv != NULL ? csv : "");
	return (0);
}
