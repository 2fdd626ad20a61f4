/*
 * r3qctl es and submit es: an ES job submitted to masterd and followed to
 * its end (or detached), or `es --local`, the same ES in this process:
 * the reference every distributed run must match bit for bit.  And how a
 * finished job is printed, which result (cmd-jobs.c) shares.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es/es.h"
#include "es/payload.h"
#include "r3qctl.h"
#include "sched/sched.h"
#include "task/task.h"
#include "util.h"

/* Write per-generation bests as CSV. */
static void
write_csv(const char *path, const R3q__JobInfo *ji)
{
	FILE	*f;
	size_t	 i;

	if ((f = fopen(path, "w")) == NULL)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	fprintf(f, "generation,best\n");
	for (i = 0; i < ji->n_gens; i++)
		fprintf(f, "%u,%.17g\n", ji->gens[i]->generation,
		    ji->gens[i]->best);
	if (fclose(f) == EOF)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
}

#define S(ns)	((double)(ns) / 1e9)

/* "name":value, or null for a measure not known (0: none measured). */
static void
json_measure(const char *name, double v, const char *sep)
{
	if (v > 0 && isfinite(v))
		printf("\"%s\":%.17g%s", name, v, sep);
	else
		printf("\"%s\":null%s", name, sep);
}

/* A job's result as JSON. */
static void
print_json(const R3q__JobInfo *ji)
{
	const R3q__EsParams	*p = ji->params;
	const R3q__GenReport	*g;
	size_t			 i;

	printf("{\"job\":%" PRIu64 ",\"state\":\"%s\",\"policy\":\"%s\",",
	    ji->id, ji->state, ji->policy);
	if (ji->bnb != NULL) {
		/* A bnb job: the answer, 1-based jobs, as r3qctl bnb --json. */
		printf("\"driver\":\"bnb\",\"jobs\":%u,\"machines\":%u,"
		    "\"makespan\":", ji->bnb->jobs, ji->bnb->machines);
		if (ji->makespan > 0)
			printf("%u", ji->makespan);
		else
			printf("null");
		printf(",\"permutation\":[");
		for (i = 0; i < ji->n_permutation; i++)
			printf("%s%u", i ? "," : "", ji->permutation[i] + 1u);
		printf("],\"nodes\":%" PRIu64 ",\"tasks\":%" PRIu64 ","
		    "\"open\":%" PRIu64 ",\"proved\":%s,\"elapsed\":%.6f}\n",
		    ji->nodes, ji->bnb_tasks, ji->pool, ji->proved ? "true" :
		    "false", (double)ji->elapsed_ns / 1e9);
		return;
	}
	if (p != NULL)
		printf("\"mu\":%u,\"lambda\":%u,\"dim\":%u,\"generations\":%u,"
		    "\"lu\":%u,\"seed\":%" PRIu64 ",\"reevaluate_parents\":%s,"
		    "\"verify\":%u,", p->mu, p->lambda, p->dim, p->generations,
		    p->lu, p->seed, p->reevaluate_parents ? "true" : "false",
		    p->verify ? p->verify : 1);
	/* A job cancelled before its generation 0 has no best. */
	if (ji->n_gens > 0)
		printf("\"best\":%.17g,", ji->best);
	else
		printf("\"best\":null,");
	printf("\"best_x\":[");
	for (i = 0; i < ji->n_best_x; i++)
		printf("%s%.17g", i ? "," : "", ji->best_x[i]);
	printf("],\"elapsed\":%.6f,\"tasks_done\":%" PRIu64 ","
	    "\"results_dropped\":%" PRIu64 ",\"executions\":%" PRIu64 ","
	    "\"error\":\"", (double)ji->elapsed_ns / 1e9, ji->tasks_done,
	    ji->results_dropped, ji->executions);
	for (i = 0; ji->error != NULL && ji->error[i] != '\0'; i++) {
		if (ji->error[i] == '"' || ji->error[i] == '\\')
			putchar('\\');
		if ((unsigned char)ji->error[i] >= 0x20)
			putchar(ji->error[i]);
	}
	printf("\",\"work_ms\":%.17g,", ji->work_ms);
	if (ji->balance != NULL && ji->balance[0] != '\0')
		printf("\"balance\":\"%s\",\"moved\":%" PRIu64 ",",
		    ji->balance, ji->moved);
	/*
	 * Known after a generation (not for --local); the lower bound and
	 * the efficiency only with a synthetic load as well.
	 */
	json_measure("speed_sum", ji->speed_sum, ",");
	json_measure("lower_bound", ji->lower_bound_s, ",");
	json_measure("efficiency", ji->efficiency, ",");
	printf("\"sync\":%.6f,\"comm\":%.6f,\"compute\":%.6f,"
	    "\"replicas\":%u,\"killed_held\":%u,\"killed_running\":%u,",
	    S(ji->sync_ns), S(ji->comm_ns), S(ji->compute_ns), ji->replicas,
	    ji->killed_held, ji->killed_running);
	/* Only a batch job that had more than 2,048 batches folds some. */
	if (ji->gens_folded > 0)
		printf("\"generations_folded\":%" PRIu64 ",", ji->gens_folded);
	printf("\"generations_done\":[");
	for (i = 0; i < ji->n_gens; i++) {
		g = ji->gens[i];
		printf("%s{\"generation\":%u,\"best\":%.17g,\"elapsed\":%.6f,"
		    "\"tasks\":%u,\"total\":%.6f,\"sync\":%.6f,\"comm\":%.6f,"
		    "\"compute\":%.6f,\"replicas\":%u,\"killed_held\":%u,"
		    "\"killed_running\":%u}", i ? "," : "", g->generation,
		    g->best, S(g->elapsed_ns), g->tasks, S(g->total_ns),
		    S(g->sync_ns), S(g->comm_ns), S(g->compute_ns), g->replicas,
		    g->killed_held, g->killed_running);
	}
	printf("]}\n");
}

/* A job's result for a person. */
static void
print_result(const R3q__JobInfo *ji)
{
	size_t	 i;

	if (ji->error != NULL && ji->error[0] != '\0')
		printf("job %" PRIu64 " %s: %s\n", ji->id, ji->state,
		    ji->error);
	if (ji->bnb != NULL) {
		/* A bnb job: what r3qctl bnb prints, 1-based jobs. */
		printf("job %" PRIu64 " %s, bnb %s\n", ji->id, ji->state,
		    ji->name);
		if (ji->makespan > 0) {
			printf("makespan %u\npermutation", ji->makespan);
			for (i = 0; i < ji->n_permutation; i++)
				printf(" %u", ji->permutation[i] + 1u);
			printf("\n");
		}
		printf("nodes %" PRIu64 "\ntasks %" PRIu64 "\nopen %" PRIu64
		    "\nproved %s\n", ji->nodes, ji->bnb_tasks, ji->pool,
		    ji->proved ? "yes" : "no");
		return;
	}
	if (ji->n_gens == 0)
		return;
	if (ji->params == NULL) {
		/* A batch job: no fitness, its tasks' outcomes. */
		printf("summary: job %" PRIu64 " %s, batch job '%s' of %s, "
		    "policy %s, %" PRIu64 " batches, %" PRIu64 " tasks done, %"
		    PRIu64 " failed, %" PRIu64 " cancelled, %.3f s\n", ji->id,
		    ji->state, ji->name, ji->owner, ji->policy,
		    ji->n_gens + ji->gens_folded, ji->tasks_done,
		    ji->tasks_failed, ji->tasks_cancelled,
		    (double)ji->elapsed_ns / 1e9);
		printf("time: compute %.3f s, communication %.3f s, "
		    "synchronisation wait %.3f s\n", S(ji->compute_ns),
		    S(ji->comm_ns), S(ji->sync_ns));
		printf("replicas %u, losing copies terminated: %u held, %u "
		    "running\n", ji->replicas, ji->killed_held,
		    ji->killed_running);
		return;
	}
	printf("best fitness: %.17g\n", ji->best);
	printf("best individual:");
	for (i = 0; i < ji->n_best_x; i++)
		printf(" %.17g", ji->best_x[i]);
	printf("\n");
	printf("summary: job %" PRIu64 " %s, policy %s, %u generations, "
	    "%" PRIu64 " evaluations, %.3f s", ji->id, ji->state, ji->policy,
	    ji->gens[ji->n_gens - 1]->generation, ji->tasks_done,
	    (double)ji->elapsed_ns / 1e9);
	if (ji->params != NULL && ji->params->verify > 1)
		printf(", each verified by %u workers", ji->params->verify);
	if (ji->results_dropped > 0)
		printf(", %" PRIu64 " duplicate results dropped",
		    ji->results_dropped);
	printf("\n");
	if (strcmp(ji->policy, "local") == 0)
		return;
	printf("time: compute %.3f s, communication %.3f s, synchronisation "
	    "wait %.3f s\n", S(ji->compute_ns), S(ji->comm_ns),
	    S(ji->sync_ns));
	printf("replicas %u, losing copies terminated: %u held, %u running\n",
	    ji->replicas, ji->killed_held, ji->killed_running);
	if (ji->balance != NULL && ji->balance[0] != '\0' &&
	    strcmp(ji->balance, "none") != 0)
		printf("balance %s: %" PRIu64 " held tasks moved\n",
		    ji->balance, ji->moved);
	if (ji->efficiency > 0)
		printf("efficiency: %.1f %% (lower bound %.3f s = %.1f s of "
		    "work / speed %.2f)\n", ji->efficiency * 100,
		    ji->lower_bound_s, ji->work_ms / 1000, ji->speed_sum);
}

/* The per-generation measurements as a table. */
void
es_print_table(const R3q__JobInfo *ji)
{
	const R3q__GenReport	*g;
	size_t			 i;
	char			 best[32];

	printf("%4s %-24s %9s %9s %9s %9s %5s %5s %5s\n", "GEN", "BEST",
	    "TOTAL", "SYNC", "COMM", "COMPUTE", "REPL", "KHELD", "KRUN");
	if (ji->gens_folded > 0)
		printf("(batches 0-%" PRIu64 ": folded, counted in the totals "
		    "only)\n", ji->gens_folded - 1);
	for (i = 0; i < ji->n_gens; i++) {
		g = ji->gens[i];
		/* A batch job's batches have no best. */
		if (ji->params != NULL)
			snprintf(best, sizeof(best), "%.17g", g->best);
		else
			snprintf(best, sizeof(best), "-");
		printf("%4u %-24s %8.3fs %8.3fs %8.3fs %8.3fs %5u %5u %5u\n",
		    g->generation, best, S(g->total_ns), S(g->sync_ns),
		    S(g->comm_ns), S(g->compute_ns), g->replicas,
		    g->killed_held, g->killed_running);
	}
}

struct es_opts {
	R3q__EsParams	 p;
	int		 local;
	int		 json;
	int		 quiet;
	int		 detach;
	const char	*csv;
};

/* Parse `es` options (shared by `es` and `submit es`). */
static void
parse_es(const struct cmd_entry *self, int argc, char *argv[],
    struct es_opts *o)
{
	static const struct option longopts[] = {
		{ "mu",			required_argument, NULL, 'm' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "dim",		required_argument, NULL, 'd' },
		{ "lu",			required_argument, NULL, 'u' },
		{ "seed",		required_argument, NULL, 's' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "reevaluate-parents",	no_argument,	   NULL, 'r' },
		{ "local",		no_argument,	   NULL, 'L' },
		{ "csv",		required_argument, NULL, 'c' },
		{ "json",		no_argument,	   NULL, 'j' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "work-ms",		required_argument, NULL, 'w' },
		{ "spin",		no_argument,	   NULL, 'S' },
		{ "verify",		required_argument, NULL, 'V' },
		{ "balance",		required_argument, NULL, 'B' },
		{ "detach",		no_argument,	   NULL, 'D' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char			*end;
	uint64_t		 v;
	int			 ch;

	memset(o, 0, sizeof(*o));
	r3q__es_params__init(&o->p);
	o->p.mu = 30;
	o->p.lambda = 70;
	o->p.generations = 100;
	o->p.dim = 30;
	o->p.lu = 0;
	o->p.seed = 1;
	o->p.policy = (char *)(uintptr_t)"";
	o->p.balance = (char *)(uintptr_t)"";
	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			cmd_usage(self, EX_OK);
		case 'm': case 'l': case 'g': case 'd': case 'u':
			if (parse_u64(optarg, 0, UINT32_MAX, &v) == -1)
				die(EX_USAGE, "--%s: '%s' is not a number",
				    longopts[ch == 'm' ? 0 : ch == 'l' ? 1 :
				    ch == 'g' ? 2 : ch == 'd' ? 3 : 4].name,
				    optarg);
			if (ch == 'm')
				o->p.mu = (uint32_t)v;
			else if (ch == 'l')
				o->p.lambda = (uint32_t)v;
			else if (ch == 'g')
				o->p.generations = (uint32_t)v;
			else if (ch == 'd')
				o->p.dim = (uint32_t)v;
			else
				o->p.lu = (uint32_t)v;
			break;
		case 's':
			if (parse_u64(optarg, 0, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--seed: '%s' is not a number",
				    optarg);
			o->p.seed = v;
			break;
		case 'p':
			o->p.policy = cmd_parse_policy(optarg);
			break;
		case 'r':
			o->p.reevaluate_parents = 1;
			break;
		case 'L':
			o->local = 1;
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				o->p.queue_factor = SCHED_QF_AUTO;
			else if (parse_u64(optarg, 1, SCHED_QF_MAX, &v) == 0)
				o->p.queue_factor = (uint32_t)v;
			else
				die(EX_USAGE, "--queue-factor: '%s' is not a "
				    "number from 1 to %d or auto", optarg,
				    SCHED_QF_MAX);
			break;
		case 'w':
			o->p.work_ms = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(o->p.work_ms >= 0) || o->p.work_ms > 3600000)
				die(EX_USAGE, "--work-ms: '%s' is not a number "
				    "of milliseconds", optarg);
			break;
		case 'S':
			o->p.spin = 1;
			break;
		case 'V':
			if (parse_u64(optarg, 1, SCHED_VERIFY_MAX, &v) == -1)
				die(EX_USAGE, "--verify: '%s' is not a number "
				    "from 1 to %d", optarg, SCHED_VERIFY_MAX);
			o->p.verify = (uint32_t)v;
			break;
		case 'B':
			if (sched_balance_parse(optarg, NULL) == -1)
				die(EX_USAGE, "--balance: '%s' is not one of "
				    "none, one, power, global", optarg);
			o->p.balance = optarg;
			break;
		case 'D':
			o->detach = 1;
			break;
		default:
			cmd_usage(self, EX_USAGE);
		}
	}
	if (optind != argc)
		die(EX_USAGE, "unexpected argument '%s'", argv[optind]);
}

/* Submit an es job; returns the job id, a signal cancelling it if follow. */
static uint64_t
submit_es(struct es_opts *o, int follow)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__SubmitEs	 sub = R3Q__SUBMIT_ES__INIT;

	sub.params = &o->p;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_ES;
	env.submit_es = &sub;
	return (ctl_submit(&env, follow));
}

/* Print a finished job the way the options ask; returns the exit code. */
int
es_report(const R3q__JobInfo *ji, int json, const char *csv)
{
	if (csv != NULL)
		write_csv(csv, ji);
	if (json)
		print_json(ji);
	else
		print_result(ji);
	return (strcmp(ji->state, "done") == 0 ? EX_OK : EX_FAIL);
}

/* The same ES in this process, one evaluation after the other. */
static int
es_local(struct es_opts *o)
{
	struct es_params	 ep;
	struct task_params	 tp;
	struct task_ctx		 ctx;
	struct task_result	 tr;
	R3q__JobInfo		 ji = R3Q__JOB_INFO__INIT;
	R3q__GenReport		*gens, **gp;
	struct es		*es;
	atomic_int		 cancel = 0;
	uint64_t		 start, evals = 0;
	uint8_t			*payload;
	const uint8_t		*out;
	double			 f;
	size_t			 i, n, outlen;
	uint32_t		 g;
	char			 err[256];
	int			 rc;

	memset(&ep, 0, sizeof(ep));
	ep.mu = o->p.mu;
	ep.lambda = o->p.lambda;
	ep.dim = o->p.dim;
	ep.generations = o->p.generations;
	ep.seed = o->p.seed;
	ep.reevaluate_parents = o->p.reevaluate_parents;
	if (es_params_check(&ep, err, sizeof(err)) == -1)
		die(EX_USAGE, "%s", err);
	if ((es = es_new(&ep)) == NULL)
		die(EX_FAIL, "out of memory");
	gens = calloc(ep.generations + 1, sizeof(*gens));
	gp = calloc(ep.generations + 1, sizeof(*gp));
	if (gens == NULL || gp == NULL)
		die(EX_FAIL, "out of memory");
	memset(&ctx, 0, sizeof(ctx));
	ctx.cancel = &cancel;
	ctx.speed = 1.0;
	/* The very payload masterd sends (common/es/payload.h). */
	if ((payload = malloc(es_payload_len(ep.dim))) == NULL)
		die(EX_FAIL, "out of memory");
	start = mono_ns();
	while (!es_finished(es)) {
		g = es_generation(es);
		n = es_batch_size(es);
		for (i = 0; i < n; i++) {
			es_payload_encode(payload, o->p.lu, o->p.spin ?
			    ES_PAYLOAD_SPIN : 0, o->p.work_ms,
			    es_batch_x(es, i), ep.dim);
			memset(&tp, 0, sizeof(tp));
			tp.kind = o->p.work_ms > 0 ? "synth" : "ridge-lu";
			tp.payload = payload;
			tp.payload_len = es_payload_len(ep.dim);
			if (task_run(&tp, &ctx, &tr) != TASK_OK)
				die(EX_FAIL, "generation %u individual %zu: %s",
				    g, i, tr.error);
			out = task_output(&tr, &outlen);
			if (es_output_decode(out, outlen, &f) == -1)
				die(EX_FAIL, "generation %u individual %zu: "
				    "an output of %zu bytes", g, i, outlen);
			task_result_free(&tr);
			es_set_fitness(es, i, f);
		}
		evals += n;
		if (es_advance(es) == -1)
			die(EX_FAIL, "internal error: generation %u incomplete",
			    g);
		r3q__gen_report__init(&gens[g]);
		gens[g].generation = g;
		gens[g].best = es_gen_best(es, g);
		gens[g].elapsed_ns = mono_ns() - start;
		gens[g].tasks = (uint32_t)n;
		gp[g] = &gens[g];
		if (!o->quiet && !o->json)
			ctl_print_gen(g, gens[g].best, gens[g].elapsed_ns);
	}
	ji.id = 0;
	ji.state = (char *)(uintptr_t)"done";
	ji.policy = (char *)(uintptr_t)"local";
	ji.params = &o->p;
	ji.best = es_best_f(es);
	ji.n_best_x = ep.dim;
	ji.best_x = (double *)(uintptr_t)es_best_x(es);
	ji.n_gens = ep.generations + 1;
	ji.gens = gp;
	ji.elapsed_ns = mono_ns() - start;
	ji.tasks_done = evals;
	rc = es_report(&ji, o->json, o->csv);
	free(payload);
	free(gens);
	free(gp);
	es_free(es);
	return (rc);
}

/* r3qctl es / submit es. */
static int
es_run(const struct cmd_entry *self, int argc, char *argv[], int submit_only)
{
	struct es_opts	 o;
	Envelope	*ans;
	uint64_t	 id;
	int		 rc;

	parse_es(self, argc, argv, &o);
	if (o.local) {
		if (submit_only || o.detach)
			die(EX_USAGE, "--local runs here: it cannot be %s",
			    submit_only ? "submitted" : "detached");
		return (es_local(&o));
	}
	/* A job followed is cancelled by a signal, a detached one is not. */
	id = submit_es(&o, !submit_only && !o.detach);
	if (submit_only || (o.detach && o.quiet)) {
		printf("%" PRIu64 "\n", id);
		return (EX_OK);
	}
	if (o.detach && o.json) {
		printf("{\"job\":%" PRIu64 "}\n", id);
		return (EX_OK);
	}
	if (!o.quiet && !o.json)
		printf("job %" PRIu64 ": (%u+%u)-ES, %u dimensions, %u "
		    "generations, lu %u, seed %" PRIu64 "%s\n", id, o.p.mu,
		    o.p.lambda, o.p.dim, o.p.generations, o.p.lu, o.p.seed,
		    o.p.reevaluate_parents ? ", parents re-evaluated" : "");
	if (o.detach) {
		printf("job %" PRIu64 " runs on: r3qctl wait %" PRIu64
		    " follows it, r3qctl result %" PRIu64 " reports it\n", id,
		    id, id);
		return (EX_OK);
	}
	fflush(stdout);
	if (ctl_signalled())
		ctl_cancel_interrupted();
	/*
	 * One plain line per generation, to a terminal, a pipe or a file
	 * alike (a log wants them as much as a person); none with --json.
	 */
	ans = ctl_follow(id, o.quiet || o.json);
	rc = es_report(ans->job_info, o.json, o.csv);
	frame_free(ans);
	return (rc);
}

/* r3qctl es [options]. */
static int
cmd_es_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	return (es_run(self, argc, argv, 0));
}

/* r3qctl submit es [options]. */
static int
cmd_submit_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0))
		cmd_usage(self, EX_OK);
	if (argc < 2 || strcmp(argv[1], "es") != 0)
		die(EX_USAGE, "submit: only 'es' jobs exist");
	return (es_run(self, argc - 1, argv + 1, 1));
}

#define ES_OPTIONS							\
	"  --mu N  --lambda N  --generations N  --dim N  --lu N  --seed N\n" \
	"  --policy wq|rr|rwq|r3q  --queue-factor N|auto  "		\
	"--reevaluate-parents\n"					\
	"  --work-ms MS  --spin  --verify N  --local  --csv FILE  --json  " \
	"--quiet  --detach\n"						\
	"  --balance none|one|power|global\n"

const struct cmd_entry cmd_es_entry = {
	"es", "[options]",
	"submit an ES job, follow it, print the result",
	ES_OPTIONS, cmd_es_exec
};

const struct cmd_entry cmd_submit_entry = {
	"submit", "es [options]",
	"submit an ES job and print its id",
	NULL, cmd_submit_exec
};
