/*
 * r3qctl islands: the island-model ES (common/es/island.h) on
 * the cluster, or with --local in this process as the reference: the
 * very payloads masterd sends, run by the very kind ("island") workers
 * run, one after the other.  Both print the same answer, bit for bit:
 * the best fitness, its island and the digest of every island's final
 * state.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es/island.h"
#include "sched/sched.h"
#include "task/task.h"
#include "r3qctl.h"
#include "util.h"
#include "xchg/xchg.h"


struct islands_opts {
	R3q__IslandParams	 p;
	int			 local;
	int			 json;
	int			 quiet;
};

static void	 islands_usage(int) __attribute__((noreturn));

static void
islands_usage(int code)
{
	fprintf(code == EX_OK ? stdout : stderr,
	    "usage: r3qctl islands [--islands P] [--migrate-every G] "
	    "[--migrants K]\n"
	    "                      [--migrant-bytes B] [--exchange-algo A] "
	    "[--generations N]\n"
	    "                      [--mu N] [--lambda N] [--dim N] [--seed N] "
	    "[--work-ms MS]\n"
	    "                      [--spin] [--policy P] [--queue-factor "
	    "N|auto] [--local]\n"
	    "                      [--json] [--quiet]\n"
	    "  --islands P        islands, one task each an epoch (3 to %d; "
	    "default 4)\n"
	    "  --migrate-every G  generations between migrations (default "
	    "10)\n"
	    "  --migrants K       best sent to every other island, 1 to mu "
	    "(default 3)\n"
	    "  --migrant-bytes B  a migration message padded to B bytes "
	    "(emulated genomes;\n"
	    "                     accounted, or sent worker to worker by the "
	    "peer exchange)\n"
	    "  --exchange-algo A  schedule of that exchange: caterpillar, "
	    "openshop, static,\n"
	    "                     dynamic, improved, lbos, insertion or "
	    "portfolio (default)\n"
	    "  --generations N  --mu N  --lambda N  --dim N  --seed N  "
	    "(default 100, 30, 70,\n"
	    "                     30, 1: the paper's (30+70)-ES on Ridge)\n"
	    "  --work-ms MS       synthetic load of an island's epoch task "
	    "(ignored by --local)\n"
	    "  --spin             spin rather than sleep for it\n"
	    "  --policy P  --queue-factor N|auto  as for es\n"
	    "  --local            run here, the reference: the same answer "
	    "bit for bit\n"
	    "  --json             the answer as JSON\n"
	    "  --quiet            no header line\n",
	    ISLAND_MAX_P);
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

static uint32_t
islands_u32(const char *opt, const char *arg, uint64_t lo, uint64_t hi)
{
	uint64_t	 v;

	if (parse_u64(arg, lo, hi, &v) == -1)
		die(EX_USAGE, "%s: '%s' is not a number from %llu to %llu",
		    opt, arg, (unsigned long long)lo, (unsigned long long)hi);
	return ((uint32_t)v);
}

static void
islands_parse(int argc, char *argv[], struct islands_opts *o)
{
	static const struct option longopts[] = {
		{ "dim",		required_argument, NULL, 'd' },
		{ "exchange-algo",	required_argument, NULL, 'A' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "islands",		required_argument, NULL, 'P' },
		{ "json",		no_argument,	   NULL, 'j' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "local",		no_argument,	   NULL, 'L' },
		{ "migrant-bytes",	required_argument, NULL, 'B' },
		{ "migrants",		required_argument, NULL, 'K' },
		{ "migrate-every",	required_argument, NULL, 'G' },
		{ "mu",			required_argument, NULL, 'm' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "seed",		required_argument, NULL, 's' },
		{ "spin",		no_argument,	   NULL, 'S' },
		{ "work-ms",		required_argument, NULL, 'w' },
		{ NULL,			0,		   NULL, 0 }
	};
	struct island_params	 ip;
	uint64_t		 v;
	char			*end, err[256];
	int			 ch;

	memset(o, 0, sizeof(*o));
	r3q__island_params__init(&o->p);
	o->p.islands = 4;
	o->p.mu = 30;
	o->p.lambda = 70;
	o->p.dim = 30;
	o->p.generations = 100;
	o->p.migrate_every = 10;
	o->p.migrants = 3;
	o->p.seed = 1;
	o->p.exchange_algo = (char *)(uintptr_t)"portfolio";
	o->p.policy = (char *)(uintptr_t)"";
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			islands_usage(EX_OK);
		case 'P':
			o->p.islands = islands_u32("--islands", optarg, 0,
			    UINT32_MAX);
			break;
		case 'G':
			o->p.migrate_every = islands_u32("--migrate-every",
			    optarg, 0, UINT32_MAX);
			break;
		case 'K':
			o->p.migrants = islands_u32("--migrants", optarg, 0,
			    UINT32_MAX);
			break;
		case 'B':
			if (parse_u64(optarg, 0, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--migrant-bytes: '%s' is not a "
				    "number", optarg);
			o->p.migrant_bytes = v;
			break;
		case 'A':
			o->p.exchange_algo = optarg;
			break;
		case 'g':
			o->p.generations = islands_u32("--generations",
			    optarg, 0, UINT32_MAX);
			break;
		case 'm':
			o->p.mu = islands_u32("--mu", optarg, 0, UINT32_MAX);
			break;
		case 'l':
			o->p.lambda = islands_u32("--lambda", optarg, 0,
			    UINT32_MAX);
			break;
		case 'd':
			o->p.dim = islands_u32("--dim", optarg, 0,
			    UINT32_MAX);
			break;
		case 's':
			if (parse_u64(optarg, 0, UINT64_MAX, &v) == -1)
				die(EX_USAGE, "--seed: '%s' is not a number",
				    optarg);
			o->p.seed = v;
			break;
		case 'w':
			o->p.work_ms = strtod(optarg, &end);
			if (end == optarg || *end != '\0' ||
			    !(o->p.work_ms >= 0) ||
			    o->p.work_ms > ISLAND_MAX_WORK_MS)
				die(EX_USAGE, "--work-ms: '%s' is not a number "
				    "from 0 to %.0f", optarg,
				    ISLAND_MAX_WORK_MS);
			break;
		case 'S':
			o->p.spin = 1;
			break;
		case 'p':
			o->p.policy = cmd_parse_policy(optarg);
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				o->p.queue_factor = SCHED_QF_AUTO;
			else
				o->p.queue_factor = islands_u32(
				    "--queue-factor", optarg, 1, SCHED_QF_MAX);
			break;
		case 'L':
			o->local = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		default:
			islands_usage(EX_USAGE);
		}
	}
	if (optind != argc)
		die(EX_USAGE, "islands: unexpected argument '%s'",
		    argv[optind]);
	/* The same checks as masterd's, before anything is sent. */
	memset(&ip, 0, sizeof(ip));
	ip.islands = o->p.islands;
	ip.mu = o->p.mu;
	ip.lambda = o->p.lambda;
	ip.dim = o->p.dim;
	ip.generations = o->p.generations;
	ip.migrate_every = o->p.migrate_every;
	ip.migrants = o->p.migrants;
	ip.seed = o->p.seed;
	if (island_params_check(&ip, err, sizeof(err)) == -1)
		die(EX_USAGE, "islands: %s", err);
	if (xchg_algo_lookup(o->p.exchange_algo) == -1)
		die(EX_USAGE, "islands: --exchange-algo: unknown exchange "
		    "algorithm '%s' (caterpillar, openshop, static, dynamic, "
		    "improved, lbos, insertion, portfolio)",
		    o->p.exchange_algo);
}

/* Print the answer of an islands job (or of --local), JSON or text. */
int
islands_print_info(const R3q__JobInfo *ji, int json)
{
	const R3q__IslandInfo	*in = ji->islands;
	const R3q__IslandParams	*p;
	const char		*c;
	size_t			 i;

	if (in == NULL || in->params == NULL)
		die(EX_FAIL, "job %" PRIu64 " is not an islands job", ji->id);
	p = in->params;
	if (json) {
		printf("{\"job\":%" PRIu64 ",\"state\":\"%s\",\"islands\":%u,"
		    "\"mu\":%u,\"lambda\":%u,\"dim\":%u,\"generations\":%u,"
		    "\"migrate_every\":%u,\"migrants\":%u,\"seed\":%" PRIu64
		    ",\"exchange_algo\":\"%s\",\"epochs\":%u,"
		    "\"epochs_done\":%u,\"best\":%.17g,\"best_island\":%u,"
		    "\"digest\":\"%016" PRIx64 "\",\"migrations\":%" PRIu64
		    ",\"migrant_bytes\":%" PRIu64 ",\"exchanged_bytes\":%"
		    PRIu64 ",\"migration_ns\":%" PRIu64 ",\"exchanges\":%u,"
		    "\"exchanges_failed\":%u,\"elapsed_ns\":%" PRIu64
		    ",\"island_best\":[",
		    ji->id, ji->state, p->islands, p->mu, p->lambda, p->dim,
		    p->generations, p->migrate_every, p->migrants, p->seed,
		    p->exchange_algo, in->epochs, in->epochs_done, in->best,
		    in->best_island, in->digest, in->migrations,
		    in->migrant_bytes, in->exchanged_bytes, in->migration_ns,
		    in->exchanges, in->exchanges_failed, ji->elapsed_ns);
		for (i = 0; i < in->n_island_best; i++)
			printf("%s%.17g", i ? "," : "", in->island_best[i]);
		printf("],\"best_x\":[");
		for (i = 0; i < in->n_best_x; i++)
			printf("%s%.17g", i ? "," : "", in->best_x[i]);
		printf("]");
		if (ji->error != NULL && ji->error[0] != '\0') {
			printf(",\"error\":\"");
			for (c = ji->error; *c != '\0'; c++)
				if (*c == '"' || *c == '\\')
					printf("\\%c", *c);
				else if ((unsigned char)*c < 0x20)
					printf("\\u%04x", (unsigned char)*c);
				else
					putchar(*c);
			printf("\"");
		}
		printf("}\n");
	} else {
		printf("state %s, %u of %u epochs, %.3f s\n", ji->state,
		    in->epochs_done, in->epochs, ji->elapsed_ns / 1e9);
		if (ji->error != NULL && ji->error[0] != '\0')
			printf("error: %s\n", ji->error);
		printf("best %.17g (island %u)\n", in->best, in->best_island);
		printf("digest %016" PRIx64 "\n", in->digest);
		for (i = 0; i < in->n_island_best; i++)
			printf("island %zu best %.17g\n", i,
			    in->island_best[i]);
		printf("migrations %" PRIu64 ", %" PRIu64 " bytes (%s), %"
		    PRIu64 " of them worker to worker\n", in->migrations,
		    in->migrant_bytes, p->exchange_algo,
		    in->exchanged_bytes);
		if (in->exchanges + in->exchanges_failed > 0)
			printf("peer exchanges %u, %u failed, %.3f s in "
			    "migration (%.1f %% of the job)\n", in->exchanges,
			    in->exchanges_failed, in->migration_ns / 1e9,
			    ji->elapsed_ns > 0 ? 100.0 * in->migration_ns /
			    ji->elapsed_ns : 0.0);
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		return (EX_FAIL);
	return (strcmp(ji->state, "done") == 0 ? EX_OK : EX_FAIL);
}

/*
 * The reference: every epoch of every island in island order, through
 * the payload masterd would send and the kind a worker runs.
 */
static int
islands_local(struct islands_opts *o)
{
	R3q__JobInfo		 ji = R3Q__JOB_INFO__INIT;
	R3q__IslandInfo		 in = R3Q__ISLAND_INFO__INIT;
	struct island_params	 ip;
	struct task_params	 tp;
	struct task_ctx		 ctx;
	struct task_result	 tr;
	atomic_int		 cancel = 0;
	uint8_t			**st, **nst, *pl, *t;
	const uint8_t		*out;
	double			*ibest, *bx;
	uint64_t		 start, h = 0, msg, real;
	uint32_t		 e, i, b;
	size_t			 sl, outlen;
	char			 err[256];

	memset(&ip, 0, sizeof(ip));
	ip.islands = o->p.islands;
	ip.mu = o->p.mu;
	ip.lambda = o->p.lambda;
	ip.dim = o->p.dim;
	ip.generations = o->p.generations;
	ip.migrate_every = o->p.migrate_every;
	ip.migrants = o->p.migrants;
	ip.seed = o->p.seed;
	sl = island_state_len(&ip);
	st = xcalloc(ip.islands, sizeof(*st));
	nst = xcalloc(ip.islands, sizeof(*nst));
	for (i = 0; i < ip.islands; i++) {
		st[i] = xcalloc(1, sl);
		nst[i] = xcalloc(1, sl);
	}
	ibest = xcalloc(ip.islands, sizeof(*ibest));
	bx = xcalloc(island_ind_len(&ip), sizeof(*bx));
	pl = xcalloc(1, island_payload_len(&ip, 1));
	memset(&ctx, 0, sizeof(ctx));
	ctx.cancel = &cancel;
	ctx.speed = 1.0;
	if (!o->quiet && !o->json)
		printf("islands here: %u x (%u+%u)-ES, %u dimensions, %u "
		    "generations, migrate every %u (%u migrants), seed %"
		    PRIu64 "\n", ip.islands, ip.mu, ip.lambda, ip.dim,
		    ip.generations, ip.migrate_every, ip.migrants, ip.seed);
	start = mono_ns();
	for (e = 0; e < island_epochs(&ip); e++) {
		for (i = 0; i < ip.islands; i++) {
			island_payload_build(pl, &ip, i, o->p.spin ?
			    ISLAND_F_SPIN : 0, 0.0,
			    e == 0 ? NULL : (const uint8_t *const *)st);
			memset(&tp, 0, sizeof(tp));
			tp.kind = "island";
			tp.payload = pl;
			tp.payload_len = island_payload_len(&ip, e > 0);
			if (task_run(&tp, &ctx, &tr) != TASK_OK)
				die(EX_FAIL, "epoch %u island %u: %s", e, i,
				    tr.error);
			out = task_output(&tr, &outlen);
			if (island_state_check(&ip, i, e, out, outlen, err,
			    sizeof(err)) == -1)
				die(EX_FAIL, "epoch %u island %u: %s", e, i,
				    err);
			memcpy(nst[i], out, sl);
			task_result_free(&tr);
		}
		for (i = 0; i < ip.islands; i++) {
			t = st[i];
			st[i] = nst[i];
			nst[i] = t;
		}
	}
	for (i = 0, b = 0; i < ip.islands; i++) {
		h = island_digest(h, st[i], sl);
		ibest[i] = island_state_best(&ip, st[i], sl);
		if (ibest[i] < ibest[b])
			b = i;
	}
	(void)island_state_ind(&ip, st[b], sl, 0, bx);
	/* masterd's accounting (job_island.c), the same numbers. */
	real = (uint64_t)ip.migrants * island_ind_len(&ip) * 8;
	msg = o->p.migrant_bytes > real ? o->p.migrant_bytes : real;
	in.params = &o->p;
	in.epochs = in.epochs_done = island_epochs(&ip);
	in.n_island_best = ip.islands;
	in.island_best = ibest;
	in.best_island = b;
	in.best = ibest[b];
	in.digest = h;
	in.migrations = in.epochs - 1;
	in.migrant_bytes = in.migrations * ip.islands * (ip.islands - 1) *
	    msg;
	in.n_best_x = ip.dim;
	in.best_x = bx;
	ji.state = (char *)(uintptr_t)"done";
	ji.islands = &in;
	ji.elapsed_ns = mono_ns() - start;
	b = islands_print_info(&ji, o->json);
	for (i = 0; i < ip.islands; i++) {
		free(st[i]);
		free(nst[i]);
	}
	free(st);
	free(nst);
	free(ibest);
	free(bx);
	free(pl);
	return (b);
}

/* r3qctl islands. */
static int
cmd_islands_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	struct islands_opts	 o;
	Envelope		*ans;
	int			 rc;

	(void)self;
	islands_parse(argc, argv, &o);
	if (o.local)
		return (islands_local(&o));
	if (!o.quiet && !o.json) {
		printf("islands: %u x (%u+%u)-ES, %u dimensions, %u "
		    "generations, migrate every %u (%u migrants), seed %"
		    PRIu64 "\n", o.p.islands, o.p.mu, o.p.lambda, o.p.dim,
		    o.p.generations, o.p.migrate_every, o.p.migrants,
		    o.p.seed);
		fflush(stdout);
	}
	ans = ctl_islands_run(&o.p);
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOB_INFO)
		die(EX_FAIL, "unexpected answer");
	rc = islands_print_info(ans->job_info, o.json);
	frame_free(ans);
	return (rc);
}

const struct cmd_entry cmd_islands_entry = {
	"islands", "[options]",
	"the island-model ES, one task an island's epoch (r3qctl islands -h)",
	"  --islands P  --migrate-every G  --migrants K  --migrant-bytes B\n"
	"  --exchange-algo A  --generations N  --mu N  --lambda N  --dim N  "
	"--seed N\n"
	"  --work-ms MS  --spin  --policy P  --queue-factor N|auto  "
	"--local  --json\n"
	"  --quiet\n",
	cmd_islands_exec
};
