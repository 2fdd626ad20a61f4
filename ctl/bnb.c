/*
 * r3qctl bnb pfsp FILE: solve a permutation flow-shop instance of a
 * Taillard file exactly by branch and bound (common/bnb).  --local solves
 * it here with the sequential solver; the distributed run (the master's
 * bnb job) is not built yet, but its options are parsed and checked now.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bnb/pfsp.h"
#include "sched/sched.h"
#include "r3qctl.h"
#include "util.h"

#define EX_DATAERR	65
#define EX_NOINPUT	66

#define BNB_FILE_MAX	(64u << 20)	/* a Taillard file, at most */
#define BNB_MULT_MAX	64		/* entries of --multiplicity */
#define BNB_COPIES_MAX	16		/* copies of one task (the core's) */
#define BNB_SPLIT_MAX	8		/* --split-depth, at most */

struct bnb_opts {
	const char	*file;
	uint32_t	 instance;
	const char	*policy;
	uint32_t	 mult[BNB_MULT_MAX];
	size_t		 nmult;
	int		 interrupt;
	uint32_t	 split_depth;
	uint64_t	 node_budget;
	uint64_t	 exchange_ms;	/* 0: push */
	int		 resplit;
	int		 json;
	int		 local;
	int		 lb;
	int		 branch;
	uint64_t	 max_nodes;
	uint32_t	 ig;
	const char	*given[8];	/* flags only --local has, as given */
	size_t		 ngiven;
	const char	*cluster[8];	/* flags only the cluster has */
	size_t		 ncluster;
};

static atomic_int	 bnb_cancel;

static void	 bnb_usage(int) __attribute__((noreturn));
static void	 bnb_parse(int, char *[], struct bnb_opts *);
static void	 bnb_parse_mult(const char *, struct bnb_opts *);
static uint64_t	 bnb_parse_interval(const char *);
static char	*bnb_read(const char *, size_t *);
static void	 bnb_json_str(const char *);
static void	 bnb_catch(int);
static int	 bnb_local(const struct bnb_opts *);
static int	 bnb_remote(const struct bnb_opts *);
static void	 bnb_given(struct bnb_opts *, const char *);
static void	 bnb_cluster(struct bnb_opts *, const char *);

/* The usage summary of r3qctl bnb: stdout and 0 when asked for. */
static void
bnb_usage(int code)
{
	fprintf(code == EX_OK ? stdout : stderr,
	    "usage: r3qctl bnb pfsp FILE [--instance N] [--lb lb1|lb2] "
	    "[--local] [--json]\n"
	    "                  [--branching forward|bidir] [--node-budget N] "
	    "[--max-nodes N]\n"
	    "                  [--ig N] [--policy P]\n"
	    "                  [--multiplicity LIST] [--interrupt on|off] "
	    "[--split-depth N]\n"
	    "                  [--exchange INTERVAL] [--resplit]\n"
	    "  --instance N        the Nth instance of FILE (from 1; "
	    "default 1)\n"
	    "  --lb lb1|lb2        one-machine or two-machine (Johnson) "
	    "bound (lb2)\n"
	    "  --branching forward|bidir\n"
	    "                      append jobs to the prefix only, or put each "
	    "node's jobs\n"
	    "                      first or last, whichever prunes more "
	    "(bidir)\n"
	    "  --local             solve here, in this process\n"
	    "  --json              one JSON object\n"
	    "  --node-budget N     nodes a task explores before it hands "
	    "back its\n"
	    "                      frontier (10000)\n"
	    "  --max-nodes N       stop unproved after N nodes (0: never)\n"
	    "  --ig N              iterated greedy iterations for the first "
	    "upper bound\n"
	    "                      (1000; 0: NEH only)\n"
	    "  --policy P          %s (rwq)\n"
	    "  --multiplicity LIST copies per task, N or N,N,... by bound "
	    "rank (1)\n"
	    "  --interrupt on|off  interrupt the other copies when one "
	    "ends (on)\n"
	    "  --split-depth N     split the tree to depth N before "
	    "sending (0, at most 8)\n"
	    "  --exchange INTERVAL a worker sends a better makespan at once "
	    "(push) or at\n"
	    "                      most every INTERVAL (60s, 500ms; "
	    "push)\n"
	    "  --resplit           when the pool runs dry, re-split running "
	    "tasks (seed\n"
	    "                      004, for benchmarks) rather than ask for "
	    "donations\n"
	    "FILE is in Taillard's format (r3qctl(1)); --max-nodes needs "
	    "--local;\n"
	    "--policy, --multiplicity, --interrupt, --split-depth, "
	    "--exchange and\n"
	    "--resplit are for the cluster (without --local)\n",
	    sched_policy_list());
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

/* A flag the distributed run does not have yet was given. */
static void
bnb_given(struct bnb_opts *o, const char *flag)
{
	size_t	 i;

	for (i = 0; i < o->ngiven; i++)
		if (strcmp(o->given[i], flag) == 0)
			return;
	if (o->ngiven < sizeof(o->given) / sizeof(o->given[0]))
		o->given[o->ngiven++] = flag;
}

/* A flag only the cluster has was given. */
static void
bnb_cluster(struct bnb_opts *o, const char *flag)
{
	size_t	 i;

	for (i = 0; i < o->ncluster; i++)
		if (strcmp(o->cluster[i], flag) == 0)
			return;
	if (o->ncluster < sizeof(o->cluster) / sizeof(o->cluster[0]))
		o->cluster[o->ncluster++] = flag;
}

/* --multiplicity: N or N,N,... each from 1 to BNB_COPIES_MAX. */
static void
bnb_parse_mult(const char *arg, struct bnb_opts *o)
{
	char		*copy, *s, *tok;
	uint64_t	 v;

	if ((copy = strdup(arg)) == NULL)
		die(EX_FAIL, "out of memory");
	o->nmult = 0;
	for (s = copy; (tok = strsep(&s, ",")) != NULL;) {
		if (o->nmult == BNB_MULT_MAX ||
		    parse_u64(tok, 1, BNB_COPIES_MAX, &v) == -1)
			die(EX_USAGE, "--multiplicity: '%s' is not a list of "
			    "at most %d numbers from 1 to %d", arg,
			    BNB_MULT_MAX, BNB_COPIES_MAX);
		o->mult[o->nmult++] = (uint32_t)v;
	}
	free(copy);
}

/* --exchange: "push" (0), or a number of seconds, "s" or "ms" after it. */
static uint64_t
bnb_parse_interval(const char *arg)
{
	char		*end;
	double		 v;
	uint64_t	 ms;

	if (strcmp(arg, "push") == 0)
		return (0);
	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno != 0 || !(v > 0) || v > 86400.0)
		goto bad;
	if (strcmp(end, "ms") == 0)
		v /= 1000.0;
	else if (*end != '\0' && strcmp(end, "s") != 0)
		goto bad;
	if ((ms = (uint64_t)(v * 1000.0 + 0.5)) == 0)
		goto bad;
	return (ms);
bad:
	die(EX_USAGE, "--exchange: '%s' is not push or an interval from 1ms "
	    "to 86400s", arg);
}

/* Parse r3qctl bnb's arguments into o. */
static void
bnb_parse(int argc, char *argv[], struct bnb_opts *o)
{
	static const struct option longopts[] = {
		{ "branching",		required_argument, NULL, 'r' },
		{ "exchange",		required_argument, NULL, 'x' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "ig",			required_argument, NULL, 'g' },
		{ "instance",		required_argument, NULL, 'n' },
		{ "interrupt",		required_argument, NULL, 'i' },
		{ "json",		no_argument,	   NULL, 'j' },
		{ "lb",			required_argument, NULL, 'b' },
		{ "local",		no_argument,	   NULL, 'L' },
		{ "max-nodes",		required_argument, NULL, 'M' },
		{ "multiplicity",	required_argument, NULL, 'm' },
		{ "node-budget",	required_argument, NULL, 'B' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "resplit",		no_argument,	   NULL, 'R' },
		{ "split-depth",	required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t		 v;
	int			 ch;

	memset(o, 0, sizeof(*o));
	o->instance = 1;
	o->interrupt = 1;
	o->node_budget = 10000;
	o->lb = BNB_LB2;
	o->branch = BNB_BIDIR;
	o->ig = 1000;
	o->mult[0] = 1;
	o->nmult = 1;
	optind = 0;	/* GNU: start over, permuting */
	/* Options may follow the file: GNU getopt permutes. */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			bnb_usage(EX_OK);
		case 'x':
			o->exchange_ms = bnb_parse_interval(optarg);
			bnb_cluster(o, "--exchange");
			break;
		case 'g':
			if (parse_u64(optarg, 0, 10000000, &v) == -1)
				die(EX_USAGE, "--ig: '%s' is not a number "
				    "from 0 to 10000000", optarg);
			o->ig = (uint32_t)v;
			break;
		case 'n':
			if (parse_u64(optarg, 1, UINT32_MAX, &v) == -1)
				die(EX_USAGE, "--instance: '%s' is not a "
				    "number from 1", optarg);
			o->instance = (uint32_t)v;
			break;
		case 'i':
			if (strcmp(optarg, "on") == 0)
				o->interrupt = 1;
			else if (strcmp(optarg, "off") == 0)
				o->interrupt = 0;
			else
				die(EX_USAGE, "--interrupt: '%s' is not on "
				    "or off", optarg);
			bnb_cluster(o, "--interrupt");
			break;
		case 'j':
			o->json = 1;
			break;
		case 'b':
			if (strcmp(optarg, "lb1") == 0)
				o->lb = BNB_LB1;
			else if (strcmp(optarg, "lb2") == 0)
				o->lb = BNB_LB2;
			else
				die(EX_USAGE, "--lb: '%s' is not lb1 or lb2",
				    optarg);
			break;
		case 'L':
			o->local = 1;
			break;
		case 'r':
			if (strcmp(optarg, "forward") == 0)
				o->branch = BNB_FORWARD;
			else if (strcmp(optarg, "bidir") == 0)
				o->branch = BNB_BIDIR;
			else
				die(EX_USAGE, "--branching: '%s' is not forward "
				    "or bidir", optarg);
			break;
		case 'M':
			if (parse_u64(optarg, 0, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--max-nodes: '%s' is not a "
				    "number", optarg);
			o->max_nodes = v;
			if (v > 0)
				bnb_given(o, "--max-nodes");
			break;
		case 'm':
			bnb_parse_mult(optarg, o);
			bnb_cluster(o, "--multiplicity");
			break;
		case 'B':
			if (parse_u64(optarg, 1, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--node-budget: '%s' is not a "
				    "number from 1", optarg);
			o->node_budget = v;
			break;
		case 'p':
			o->policy = cmd_parse_policy(optarg);
			bnb_cluster(o, "--policy");
			break;
		case 'R':
			o->resplit = 1;
			bnb_cluster(o, "--resplit");
			break;
		case 's':
			if (parse_u64(optarg, 0, BNB_SPLIT_MAX, &v) == -1)
				die(EX_USAGE, "--split-depth: '%s' is not a "
				    "number from 0 to %d", optarg,
				    BNB_SPLIT_MAX);
			o->split_depth = (uint32_t)v;
			bnb_cluster(o, "--split-depth");
			break;
		default:
			bnb_usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		bnb_usage(EX_USAGE);
	if (strcmp(argv[0], "pfsp") != 0)
		die(EX_USAGE, "bnb: '%s' is not a problem this r3qctl knows "
		    "(pfsp)", argv[0]);
	if (argc != 2)
		bnb_usage(EX_USAGE);
	o->file = argv[1];
	if (o->local && o->ncluster > 0)
		die(EX_USAGE, "bnb: %s is for the cluster (without --local)",
		    o->cluster[0]);
}

/* A whole file, NUL-terminated, its length in *len; dies if it cannot. */
static char *
bnb_read(const char *path, size_t *len)
{
	char	*buf;
	size_t	 cap = 64 * 1024, n = 0;
	ssize_t	 r;
	int	 fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		die(EX_NOINPUT, "%s: %s", path, strerror(errno));
	if ((buf = malloc(cap + 1)) == NULL)
		die(EX_FAIL, "out of memory");
	for (;;) {
		if (n == cap) {
			if (cap >= BNB_FILE_MAX)
				die(EX_DATAERR, "%s: over %u MB: not a "
				    "Taillard file", path, BNB_FILE_MAX >> 20);
			cap *= 2;
			if ((buf = realloc(buf, cap + 1)) == NULL)
				die(EX_FAIL, "out of memory");
		}
		if ((r = read(fd, buf + n, cap - n)) == -1) {
			if (errno == EINTR)
				continue;
			die(EX_NOINPUT, "%s: %s", path, strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return (buf);
}

/* A JSON string of s, quoted. */
static void
bnb_json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* SIGINT, SIGTERM: stop the search and print what it has. */
static void
bnb_catch(int signo)
{
	(void)signo;
	atomic_store(&bnb_cancel, 1);
}

/*
 * --local: parse the instance, solve it here with the sequential solver
 * (the node budget as the solver's slice) and print the outcome.  Exit 0
 * when optimality is proved, 1 when the search was stopped first.
 */
static int
bnb_local(const struct bnb_opts *o)
{
	struct bnb_instance	 inst;
	struct bnb_problem	*pb;
	struct bnb_solve_opts	 so;
	struct bnb_solution	*sol;
	struct sigaction	 sa;
	struct timespec		 t0, t1;
	char			*buf, err[512];
	size_t			 len;
	uint32_t		 i;
	double			 secs;

	buf = bnb_read(o->file, &len);
	if (bnb_parse_taillard(buf, len, o->file, o->instance, &inst, err,
	    sizeof(err)) == -1)
		die(EX_DATAERR, "%s", err);
	free(buf);
	if ((pb = bnb_problem_make(&inst, o->lb, o->branch, err,
	    sizeof(err))) == NULL)
		die(EX_DATAERR, "%s: %s", o->file, err);
	if ((sol = calloc(1, sizeof(*sol))) == NULL)
		die(EX_FAIL, "out of memory");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bnb_catch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	memset(&so, 0, sizeof(so));
	so.slice = o->node_budget;
	so.max_nodes = o->max_nodes;
	so.incumbent = BNB_NONE;
	so.neh = 1;
	so.ig_iters = o->ig;
	so.cancel = &bnb_cancel;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (bnb_solve(pb, &so, sol, err, sizeof(err)) == -1)
		die(EX_FAIL, "%s", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (o->json) {
		printf("{\"problem\":\"pfsp\",\"file\":");
		bnb_json_str(o->file);
		printf(",\"instance\":%u,\"jobs\":%u,\"machines\":%u,"
		    "\"lb\":\"%s\",\"branching\":\"%s\",\"local\":true,"
		    "\"makespan\":%" PRId32 ",\"permutation\":[", o->instance,
		    inst.n, inst.m, bnb_lb_name(o->lb),
		    bnb_branch_name(o->branch), sol->cmax);
		for (i = 0; i < inst.n; i++)
			printf("%s%u", i > 0 ? "," : "", sol->perm[i] + 1u);
		printf("],\"nodes\":%" PRIu64 ",\"tasks\":%" PRIu64
		    ",\"time_s\":%.6f,\"nodes_per_s\":%.0f,\"proved\":%s,"
		    "\"lower_bound\":%" PRId32 ",\"file_upper_bound\":%"
		    PRId32 ",\"file_lower_bound\":%" PRId32 "}\n",
		    sol->nodes, sol->pops, secs,
		    secs > 0 ? (double)sol->nodes / secs : 0.0,
		    sol->proved ? "true" : "false", sol->bound, inst.ub,
		    inst.lb);
	} else {
		printf("instance %u of %s: %u jobs, %u machines, %s, %s "
		    "branching\n", o->instance, o->file, inst.n, inst.m,
		    bnb_lb_name(o->lb), bnb_branch_name(o->branch));
		printf("makespan %" PRId32 "\n", sol->cmax);
		printf("permutation");
		for (i = 0; i < inst.n; i++)
			printf(" %u", sol->perm[i] + 1u);
		printf("\nnodes %" PRIu64 "\ntasks %" PRIu64 "\n"
		    "time %.3f s\n", sol->nodes, sol->pops, secs);
		printf("proved %s", sol->proved ? "yes" : "no");
		if (!sol->proved)
			printf(" (lower bound %" PRId32 ")", sol->bound);
		printf("\n");
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		die(EX_FAIL, "standard output: %s", strerror(errno));
	bnb_problem_free(pb);
	bnb_instance_free(&inst);
	i = (uint32_t)sol->proved;
	free(sol);
	return (i ? EX_OK : EX_FAIL);
}

/*
 * Without --local: the upper bound of the heuristics here, then the
 * master's bnb job from it, followed to its end; the same output as
 * --local.  Exit 0 when optimality is proved, 1 when the job failed or
 * was cancelled.
 */
static int
bnb_remote(const struct bnb_opts *o)
{
	struct bnb_instance	 inst;
	R3q__BnbParams		 p = R3Q__BNB_PARAMS__INIT;
	const R3q__JobInfo	*ji;
	const R3q__BnbStats	*st;
	R3q__BnbStats		 nost;
	struct timespec		 t0, t1;
	Envelope		*ans;
	uint16_t		*perm;
	uint32_t		*times, *uperm, i, n;
	int32_t			 ub;
	char			*buf, err[512], name[256];
	size_t			 len;
	double			 secs;
	int			 proved;

	if (o->ngiven > 0)
		die(EX_USAGE, "bnb: %s is not implemented yet (without "
		    "--local)", o->given[0]);
	buf = bnb_read(o->file, &len);
	if (bnb_parse_taillard(buf, len, o->file, o->instance, &inst, err,
	    sizeof(err)) == -1)
		die(EX_DATAERR, "%s", err);
	free(buf);
	if (bnb_instance_check(&inst, err, sizeof(err)) == -1)
		die(EX_DATAERR, "%s: %s", o->file, err);
	n = inst.n;
	if ((perm = calloc(n, sizeof(*perm))) == NULL ||
	    (uperm = calloc(n, sizeof(*uperm))) == NULL ||
	    (times = calloc((size_t)n * inst.m, sizeof(*times))) == NULL)
		die(EX_FAIL, "out of memory");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The first upper bound, as --local finds it. */
	if ((ub = o->ig > 0 ? bnb_ig(&inst, o->ig, 1, perm) :
	    bnb_neh(&inst, perm)) == -1)
		die(EX_FAIL, "out of memory");
	for (i = 0; i < n; i++)
		uperm[i] = perm[i];
	for (i = 0; i < n * inst.m; i++)
		times[i] = (uint32_t)inst.p[i];
	snprintf(name, sizeof(name), "%s:%u", o->file, o->instance);
	p.problem = (char *)(uintptr_t)"pfsp";
	p.jobs = n;
	p.machines = inst.m;
	p.n_times = (size_t)n * inst.m;
	p.times = times;
	p.name = name;
	p.lb = (uint32_t)o->lb;
	p.branching = (uint32_t)o->branch;
	p.node_budget = o->node_budget;
	p.upper_bound = (uint32_t)ub;
	p.n_upper_perm = n;
	p.upper_perm = uperm;
	p.policy = (char *)(uintptr_t)(o->policy != NULL ? o->policy : "");
	p.instance = o->instance;
	p.n_multiplicity = o->nmult;
	p.multiplicity = (uint32_t *)(uintptr_t)o->mult;
	p.no_interrupt = !o->interrupt;
	p.split_depth = o->split_depth;
	p.exchange_ms = (uint32_t)o->exchange_ms;
	p.resplit = o->resplit;
	ans = ctl_bnb_run(&p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ji = ans->job_info;
	r3q__bnb_stats__init(&nost);
	st = ji->bnb_stats != NULL ? ji->bnb_stats : &nost;
	if (strcmp(ji->state, "done") != 0)
		die(EX_FAIL, "bnb job %" PRIu64 " %s%s%s", ji->id, ji->state,
		    ji->error[0] != '\0' ? ": " : "", ji->error);
	if (ji->n_permutation != n || ji->makespan == 0)
		die(EX_FAIL, "bnb job %" PRIu64 " gave no permutation of the "
		    "%u jobs", ji->id, n);
	proved = ji->proved;
	if (o->json) {
		printf("{\"problem\":\"pfsp\",\"file\":");
		bnb_json_str(o->file);
		printf(",\"instance\":%u,\"jobs\":%u,\"machines\":%u,"
		    "\"lb\":\"%s\",\"branching\":\"%s\",\"local\":false,"
		    "\"job\":%" PRIu64 ",\"makespan\":%u,\"permutation\":[",
		    o->instance, n, inst.m, bnb_lb_name(o->lb),
		    bnb_branch_name(o->branch), ji->id, ji->makespan);
		for (i = 0; i < n; i++)
			printf("%s%u", i > 0 ? "," : "",
			    ji->permutation[i] + 1u);
		printf("],\"nodes\":%" PRIu64 ",\"tasks\":%" PRIu64
		    ",\"time_s\":%.6f,\"nodes_per_s\":%.0f,\"proved\":%s,"
		    "\"lower_bound\":%u,\"file_upper_bound\":%" PRId32
		    ",\"file_lower_bound\":%" PRId32, ji->nodes,
		    ji->bnb_tasks, secs, secs > 0 ? (double)ji->nodes / secs :
		    0.0, proved ? "true" : "false", proved ? ji->makespan : 0,
		    inst.ub, inst.lb);
		printf(",\"policy\":");
		bnb_json_str(ji->policy);
		printf(",\"multiplicity\":[");
		for (i = 0; i < o->nmult; i++)
			printf("%s%u", i > 0 ? "," : "", o->mult[i]);
		printf("],\"interrupt\":%s,\"split_depth\":%u,"
		    "\"exchange_ms\":%" PRIu64 ",\"resplit\":%s,"
		    "\"node_budget\":%" PRIu64 ",\"duplicated\":%" PRIu64
		    ",\"donations\":%" PRIu64 ",\"donated\":%" PRIu64
		    ",\"news\":%" PRIu64 ",\"improved\":%" PRIu64
		    ",\"pushes\":%" PRIu64 ",\"resplits\":%" PRIu64
		    ",\"lost_copies\":%" PRIu64 ",\"pruned_pushed\":%"
		    PRIu64 ",\"root_subproblems\":%u,\"copies\":%" PRIu64
		    ",\"replicas\":%u,"
		    "\"killed_held\":%u,\"killed_running\":%u}\n",
		    o->interrupt ? "true" : "false", o->split_depth,
		    o->exchange_ms, o->resplit ? "true" : "false",
		    o->node_budget, st->duplicated, st->donations, st->donated,
		    st->news, st->improved, st->pushes, st->resplits,
		    st->lost_copies, st->pruned_pushed, st->root_subproblems,
		    st->copies, ji->replicas, ji->killed_held, ji->killed_running);
	} else {
		printf("instance %u of %s: %u jobs, %u machines, %s, %s "
		    "branching, job %" PRIu64 "\n", o->instance, o->file, n,
		    inst.m, bnb_lb_name(o->lb), bnb_branch_name(o->branch),
		    ji->id);
		printf("makespan %u\n", ji->makespan);
		printf("permutation");
		for (i = 0; i < n; i++)
			printf(" %u", ji->permutation[i] + 1u);
		printf("\nnodes %" PRIu64 "\ntasks %" PRIu64 "\n"
		    "time %.3f s\n", ji->nodes, ji->bnb_tasks, secs);
		printf("proved %s\n", proved ? "yes" : "no");
		printf("duplicated %" PRIu64 " nodes\n", st->duplicated);
		printf("exchange: %" PRIu64 " news, %" PRIu64 " better, %"
		    PRIu64 " pushes, %" PRIu64 " nodes pruned by them\n",
		    st->news, st->improved, st->pushes, st->pruned_pushed);
		printf("donations %" PRIu64 " (%" PRIu64 " nodes)",
		    st->donations, st->donated);
		if (st->resplits > 0)
			printf(", re-splits %" PRIu64, st->resplits);
		printf("\n");
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		die(EX_FAIL, "standard output: %s", strerror(errno));
	frame_free(ans);
	free(perm);
	free(uperm);
	free(times);
	bnb_instance_free(&inst);
	return (proved ? EX_OK : EX_FAIL);
}

/* r3qctl bnb: parse, then solve here or on the cluster. */
static int
cmd_bnb_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	struct bnb_opts	 o;

	(void)self;
	bnb_parse(argc, argv, &o);
	if (o.local)
		return (bnb_local(&o));
	return (bnb_remote(&o));
}

const struct cmd_entry cmd_bnb_entry = {
	"bnb", "pfsp FILE [options]",
	"solve a flow-shop instance by branch and bound (r3qctl bnb -h)",
	"  --instance N  --lb lb1|lb2  --local  --json  --node-budget N  "
	"--max-nodes N\n"
	"  --branching forward|bidir  --ig N  --policy P  "
	"--multiplicity LIST\n"
	"  --interrupt on|off  --split-depth N  --exchange INTERVAL  "
	"--resplit\n",
	cmd_bnb_exec
};
