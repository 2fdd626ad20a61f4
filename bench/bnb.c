/*
 * bench/bnb: the flow-shop branch and bound, forward against
 * bidirectional branching, and the cost of running it as "pfsp" tasks
 * (issue 18's benchmark 4 in local form).  For each instance and each
 * lower bound (LB1, LB2) the sequential solver, bnb_solve(), runs with
 * forward and with bidirectional branching from the same first upper
 * bound (NEH, then the iterated greedy): nodes, time, nodes/s, proved.
 * Then the bidirectional search runs again through the pfsp kind in a
 * loop, as the master's driver will run it but in one thread and without
 * a network: pop the best subproblem, encode its payload, task_run(),
 * decode the output, push its frontier.  Both explore the same nodes (the
 * search is deterministic), so the ratio of their times is the cost of
 * the encodings and of a task's set-up.  A run stops unproved after
 * --max-nodes.  Prints a table, writes CSV with -o (a row per instance,
 * bound and branching).  A measurement, not a test.
 *
 * usage: bench/bnb [-o file.csv] [-f taillard-file[:list]]... [-i list]
 *                  [--node-budget n] [--max-nodes n] [--ig n] [--lb lb1|lb2]
 * A list is instance numbers and ranges, "1-10" or "1,4,6-9"; -i gives
 * it to the files without one.  Default: tai20_5.txt:1-10 and
 * tai20_10.txt:1,4,6,9 of tests/data/taillard.
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

#define DEFAULT_5	"tests/data/taillard/tai20_5.txt:1-10"
#define DEFAULT_10	"tests/data/taillard/tai20_10.txt:1,4,6,9"
#define MAX_FILES	16
#define MAX_INST	64

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
static size_t	 parse_list(const char *, uint32_t *);
static void	 print_run(const struct run *);
static void	 csv_run(FILE *, const char *, uint32_t,
		    const struct bnb_instance *, int, int, int32_t,
		    const struct run *, const struct run *);

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

/* The usage message; exit 2. */
static void
usage(void)
{
	fprintf(stderr, "usage: bench/bnb [-o file.csv] [-f taillard-file[:list]]"
	    "... [-i list]\n"
	    "                 [--node-budget n] [--max-nodes n] [--ig n] "
	    "[--lb lb1|lb2]\n");
	exit(2);
}

/*
 * Parse a list of instance numbers ("1-10", "1,4,6-9") into v (at most
 * MAX_INST); returns how many, or dies.
 */
static size_t
parse_list(const char *arg, uint32_t *v)
{
	const char	*p = arg;
	char		*end;
	unsigned long	 a, b;
	size_t		 k = 0;

	for (;;) {
		a = strtoul(p, &end, 10);
		b = a;
		if (end == p || a < 1)
			usage();
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a)
				usage();
		}
		for (; a <= b; a++) {
			if (k == MAX_INST)
				die("%s: more than %d instances", arg,
				    MAX_INST);
			v[k++] = (uint32_t)a;
		}
		if (*end == '\0')
			return (k);
		if (*end != ',')
			usage();
		p = end + 1;
	}
}

/* A table row's half: one solver run. */
static void
print_run(const struct run *r)
{
	printf(" %6d %-3s %11llu %8.3f %10.0f", r->cmax,
	    r->proved ? "yes" : "no", (unsigned long long)r->nodes, r->secs,
	    r->secs > 0 ? (double)r->nodes / r->secs : 0.0);
}

/* A CSV row: one instance, bound and branching. */
static void
csv_run(FILE *cf, const char *file, uint32_t idx,
    const struct bnb_instance *inst, int lb, int branch, int32_t ub,
    const struct run *a, const struct run *b)
{
	fprintf(cf, "%s,%u,%u,%u,%s,%s,%d,%d,%d,%llu,%llu,%.6f,%.0f,", file,
	    idx, inst->n, inst->m, bnb_lb_name(lb), bnb_branch_name(branch),
	    ub, a->cmax, a->proved, (unsigned long long)a->nodes,
	    (unsigned long long)a->tasks, a->secs,
	    a->secs > 0 ? (double)a->nodes / a->secs : 0);
	if (b != NULL)
		fprintf(cf, "%llu,%.6f,%.0f,%.4f\n",
		    (unsigned long long)b->nodes, b->secs,
		    b->secs > 0 ? (double)b->nodes / b->secs : 0,
		    a->secs > 0 ? b->secs / a->secs : 0);
	else
		fprintf(cf, ",,,\n");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "ig",		 required_argument, NULL, 'g' },
		{ "lb",		 required_argument, NULL, 'b' },
		{ "max-nodes",	 required_argument, NULL, 'M' },
		{ "node-budget", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 }
	};
	struct bnb_instance	 inst;
	struct bnb_problem	*pf, *pd;
	struct run		 fw, bd, tk;
	const char		*spec[MAX_FILES], *csv = NULL, *dlist = NULL;
	char			 file[1024], *colon;
	uint16_t		 perm[BNB_MAX_JOBS];
	uint32_t		 list[MAX_INST];
	char			*buf, *end, err[512];
	FILE			*cf = NULL;
	size_t			 len, nspec = 0, nl, f, k;
	uint64_t		 slice = 10000, max = 10000000, ig = 1000;
	uint64_t		 tot_nodes[2] = { 0, 0 };
	double			 tot_secs[2] = { 0, 0 };
	int			 tot_proved[2] = { 0, 0 }, runs = 0;
	int32_t			 ub;
	uint32_t		 idx;
	int			 ch, lb, lb_first = BNB_LB1, lb_last = BNB_LB2;

	while ((ch = getopt_long(argc, argv, "f:i:o:", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			if (nspec == MAX_FILES)
				usage();
			spec[nspec++] = optarg;
			break;
		case 'i':
			dlist = optarg;
			parse_list(dlist, list);
			break;
		case 'o':
			csv = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "lb1") == 0)
				lb_first = lb_last = BNB_LB1;
			else if (strcmp(optarg, "lb2") == 0)
				lb_first = lb_last = BNB_LB2;
			else
				usage();
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
	if (nspec == 0) {
		spec[nspec++] = DEFAULT_5;
		if (dlist == NULL)
			spec[nspec++] = DEFAULT_10;
	}
	if (csv != NULL) {
		if ((cf = fopen(csv, "w")) == NULL)
			die("%s: cannot write", csv);
		fprintf(cf, "file,instance,n,m,lb,branching,upper_start,"
		    "makespan,proved,nodes,tasks,solver_s,solver_nodes_per_s,"
		    "task_nodes,task_s,task_nodes_per_s,task_over_solver\n");
	}
	printf("bench/bnb: node budget %llu, max nodes %llu, first upper "
	    "bound NEH + %llu iterated greedy iterations\n",
	    (unsigned long long)slice, (unsigned long long)max,
	    (unsigned long long)ig);
	printf("%-16s %-3s %5s | %-43s | %-43s | %-15s\n", "", "", "",
	    "forward", "bidirectional", "bidir as tasks");
	printf("%-16s %-3s %5s |", "instance", "lb", "start");
	for (k = 0; k < 2; k++)
		printf(" %6s %-3s %11s %8s %10s%s", "cmax", "opt", "nodes",
		    "s", "nodes/s", k == 0 ? " |" : " |");
	printf(" %8s %6s\n", "s", "ratio");
	for (f = 0; f < nspec; f++) {
		snprintf(file, sizeof(file), "%s", spec[f]);
		if ((colon = strrchr(file, ':')) != NULL) {
			*colon = '\0';
			nl = parse_list(colon + 1, list);
		} else if (dlist != NULL)
			nl = parse_list(dlist, list);
		else
			nl = parse_list("1-10", list);
		buf = slurp(file, &len);
		for (k = 0; k < nl; k++) {
			idx = list[k];
			if (bnb_parse_taillard(buf, len, file, idx, &inst, err,
			    sizeof(err)) == -1)
				die("%s", err);
			ub = ig > 0 ? bnb_ig(&inst, (uint32_t)ig, 1, perm) :
			    bnb_neh(&inst, perm);
			if (ub == -1)
				die("out of memory");
			for (lb = lb_first; lb <= lb_last; lb++) {
				if ((pf = bnb_problem_make(&inst, lb,
				    BNB_FORWARD, err, sizeof(err))) == NULL ||
				    (pd = bnb_problem_make(&inst, lb,
				    BNB_BIDIR, err, sizeof(err))) == NULL)
					die("%s", err);
				run_solver(pf, slice, max, ub, perm, &fw);
				run_solver(pd, slice, max, ub, perm, &bd);
				run_tasks(pd, slice, max, ub, &tk);
				if (bd.nodes != tk.nodes || bd.cmax != tk.cmax)
					fprintf(stderr, "bench/bnb: %s %u %s: "
					    "solver %llu nodes %d, tasks %llu "
					    "nodes %d\n", file, idx,
					    bnb_lb_name(lb),
					    (unsigned long long)bd.nodes,
					    bd.cmax,
					    (unsigned long long)tk.nodes,
					    tk.cmax);
				printf("%-12.12s %3u %-3s %5d |",
				    strrchr(file, '/') != NULL ?
				    strrchr(file, '/') + 1 : file, idx,
				    bnb_lb_name(lb), ub);
				print_run(&fw);
				printf(" |");
				print_run(&bd);
				printf(" | %8.3f %6.3f\n", tk.secs,
				    bd.secs > 0 ? tk.secs / bd.secs : 0.0);
				if (cf != NULL) {
					csv_run(cf, file, idx, &inst, lb,
					    BNB_FORWARD, ub, &fw, NULL);
					csv_run(cf, file, idx, &inst, lb,
					    BNB_BIDIR, ub, &bd, &tk);
				}
				tot_nodes[0] += fw.nodes;
				tot_nodes[1] += bd.nodes;
				tot_secs[0] += fw.secs;
				tot_secs[1] += bd.secs;
				tot_proved[0] += fw.proved;
				tot_proved[1] += bd.proved;
				runs++;
				fflush(stdout);
				bnb_problem_free(pf);
				bnb_problem_free(pd);
			}
			bnb_instance_free(&inst);
		}
		free(buf);
	}
	printf("total: forward %d of %d proved, %llu nodes, %.3f s; "
	    "bidirectional %d of %d proved, %llu nodes, %.3f s\n",
	    tot_proved[0], runs, (unsigned long long)tot_nodes[0],
	    tot_secs[0], tot_proved[1], runs,
	    (unsigned long long)tot_nodes[1], tot_secs[1]);
	if (cf != NULL && fclose(cf) == EOF)
		die("%s: cannot write", csv);
	printf("rerun: bench/bnb");
	for (f = 0; f < nspec; f++)
		printf(" -f %s", spec[f]);
	if (dlist != NULL)
		printf(" -i %s", dlist);
	printf(" --node-budget %llu --max-nodes %llu --ig %llu%s%s%s%s\n",
	    (unsigned long long)slice, (unsigned long long)max,
	    (unsigned long long)ig, lb_first == lb_last ? " --lb " : "",
	    lb_first == lb_last ? bnb_lb_name(lb_first) : "",
	    csv != NULL ? " -o " : "", csv != NULL ? csv : "");
	return (0);
}
