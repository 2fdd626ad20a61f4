/*
 * r3qctl exchange and links.  exchange plan schedules a total exchange
 * (doc/algorithms.md, the total-exchange schedulers of common/xchg) over a
 * matrix from a file, the paper's random generator or its fatal matrix,
 * and prints the schedule per sender with its completion time and its
 * ratio to the lower bound t_tb; it runs in this process, no master is
 * needed.  exchange run has masterd run one among the workers for real;
 * links prints the link matrix it plans from.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "r3qctl.h"
#include "util.h"
#include "xchg/xchg.h"


#define XCHG_FILE_MAX	(64u << 20)	/* bytes of a matrix file */

static void	 exchange_usage(int) __attribute__((noreturn));
static struct xchg_matrix *exchange_load(const char *);
static void	 exchange_print(const struct xchg_matrix *,
		    const struct xchg_sched *, const char *, const char *);
static void	 json_str(const char *);
static void	 exchange_json(const struct xchg_matrix *,
		    const struct xchg_sched *, const char *, const char *);

/* The usage of exchange: stdout and 0 when asked for, else stderr and 64. */
static void
exchange_usage(int code)
{
	fprintf(code == EX_OK ? stdout : stderr,
	    "usage: r3qctl exchange plan [--algo A] [--matrix FILE | "
	    "--random P | --fatal P]\n"
	    "                            [--seed N] [--json]\n"
	    "  --algo A       caterpillar, openshop, static, dynamic, "
	    "improved, lbos,\n"
	    "                 insertion or portfolio (default)\n"
	    "  --matrix FILE  the matrix file (p, startup, bandwidth, bytes; "
	    "see r3qctl(1))\n"
	    "  --random P     the paper's random matrix of P processors "
	    "(2 to %d)\n"
	    "  --fatal P      the paper's fatal matrix of P processors "
	    "(3 to %d)\n"
	    "  --seed N       seed of --random and of lbos (default 1)\n"
	    "  --json         the schedule as JSON\n"
	    "prints the schedule per sender (start, end, destination, bytes), "
	    "its\ncompletion time and its ratio to the lower bound t_tb\n",
	    XCHG_MAX_P, XCHG_MAX_P);
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

/* Read and parse a matrix file; dies with file:line: message. */
static struct xchg_matrix *
exchange_load(const char *path)
{
	struct xchg_matrix	*mx;
	FILE			*f;
	char			*buf, err[512];
	size_t			 len = 0, n;

	if ((f = fopen(path, "r")) == NULL)
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	if ((buf = malloc(XCHG_FILE_MAX + 1)) == NULL)
		die(EX_FAIL, "out of memory");
	while ((n = fread(buf + len, 1, XCHG_FILE_MAX + 1 - len, f)) > 0)
		len += n;
	if (ferror(f))
		die(EX_FAIL, "%s: %s", path, strerror(errno));
	fclose(f);
	if (len > XCHG_FILE_MAX)
		die(EX_FAIL, "%s: larger than %u bytes", path,
		    XCHG_FILE_MAX);
	if ((mx = xchg_parse(buf, len, path, err, sizeof(err))) == NULL)
		die(EX_FAIL, "%s", err);
	free(buf);
	return (mx);
}

/* The schedule as text: a summary, then each sender's events in order. */
static void
exchange_print(const struct xchg_matrix *mx, const struct xchg_sched *xs,
    const char *what, const char *algo)
{
	double		 lb = xchg_lower_bound(mx);
	unsigned	 i;
	size_t		 n;

	printf("exchange plan: %u processors, %s, %s", mx->xm_p, what, algo);
	if (strcmp(algo, xs->xs_name) != 0)
		printf(" (%s)", xs->xs_name);
	printf("\ncompletion %.6f s, lower bound t_tb %.6f s, ratio %.4f, "
	    "%zu events\n", xs->xs_time, lb, lb > 0 ? xs->xs_time / lb : 1.0,
	    xs->xs_n);
	for (i = 0; i < mx->xm_p; i++) {
		printf("P%u sends:\n", i);
		printf("  %12s %12s %5s %14s %5s\n", "start", "end", "to",
		    "bytes", "piece");
		for (n = 0; n < xs->xs_n; n++) {
			if (xs->xs_ev[n].ev_src != i)
				continue;
			printf("  %12.6f %12.6f %5u %14" PRIu64 " %5u\n",
			    xs->xs_ev[n].ev_start, xs->xs_ev[n].ev_end,
			    xs->xs_ev[n].ev_dst, xs->xs_ev[n].ev_bytes,
			    xs->xs_ev[n].ev_piece);
		}
	}
}

/* Print a string as a JSON string. */
static void
json_str(const char *s)
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

/* The schedule as one JSON object. */
static void
exchange_json(const struct xchg_matrix *mx, const struct xchg_sched *xs,
    const char *what, const char *algo)
{
	double	 lb = xchg_lower_bound(mx);
	size_t	 n;

	printf("{\"p\":%u,\"matrix\":", mx->xm_p);
	json_str(what);
	printf(",\"algorithm\":");
	json_str(algo);
	printf(",\"schedule\":");
	json_str(xs->xs_name);
	printf(",\"completion\":%.17g,\"lower_bound\":%.17g,\"ratio\":%.17g,"
	    "\"events\":[", xs->xs_time, lb, lb > 0 ? xs->xs_time / lb : 1.0);
	for (n = 0; n < xs->xs_n; n++)
		printf("%s\n{\"src\":%u,\"dst\":%u,\"piece\":%u,\"start\":%.17g,"
		    "\"end\":%.17g,\"bytes\":%" PRIu64 "}", n > 0 ? "," : "",
		    xs->xs_ev[n].ev_src, xs->xs_ev[n].ev_dst,
		    xs->xs_ev[n].ev_piece, xs->xs_ev[n].ev_start,
		    xs->xs_ev[n].ev_end, xs->xs_ev[n].ev_bytes);
	printf("]}\n");
}

/* r3qctl exchange plan [options]. */
static int
exchange_plan(int argc, char *argv[])
{
	enum { O_ALGO = 256, O_MATRIX, O_RANDOM, O_FATAL, O_SEED, O_JSON };
	static const struct option longopts[] = {
		{ "algo",	required_argument, NULL, O_ALGO },
		{ "matrix",	required_argument, NULL, O_MATRIX },
		{ "random",	required_argument, NULL, O_RANDOM },
		{ "fatal",	required_argument, NULL, O_FATAL },
		{ "seed",	required_argument, NULL, O_SEED },
		{ "json",	no_argument,	   NULL, O_JSON },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct xchg_matrix	*mx = NULL;
	struct xchg_sched	 xs;
	struct xchg_params	 xp;
	const char		*file = NULL;
	char			 what[256], err[512];
	uint64_t		 seed = 1, np = 0;
	int			 ch, algo = XCHG_PORTFOLIO, kind = 0, json = 0;

	/* "exchange -h" and "exchange --help" are help too. */
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0))
		exchange_usage(EX_OK);
	if (argc < 2 || strcmp(argv[1], "plan") != 0) {
		fprintf(stderr, "r3qctl: exchange: the commands are "
		    "'plan' and 'run'\n");
		exchange_usage(EX_USAGE);
	}
	argc--;
	argv++;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			exchange_usage(EX_OK);
		case O_ALGO:
			if ((algo = xchg_algo_lookup(optarg)) == -1) {
				fprintf(stderr, "r3qctl: --algo: no algorithm "
				    "'%s'\n", optarg);
				exchange_usage(EX_USAGE);
			}
			break;
		case O_MATRIX:
		case O_RANDOM:
		case O_FATAL:
			if (kind != 0) {
				fprintf(stderr, "r3qctl: give one of --matrix, "
				    "--random and --fatal\n");
				exchange_usage(EX_USAGE);
			}
			kind = ch;
			if (ch == O_MATRIX)
				file = optarg;
			else if (parse_u64(optarg, ch == O_RANDOM ? 2 : 3,
			    XCHG_MAX_P, &np) == -1) {
				fprintf(stderr, "r3qctl: --%s: '%s' is not a "
				    "number of processors from %d to %d\n",
				    ch == O_RANDOM ? "random" : "fatal", optarg,
				    ch == O_RANDOM ? 2 : 3, XCHG_MAX_P);
				exchange_usage(EX_USAGE);
			}
			break;
		case O_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &seed) == -1) {
				fprintf(stderr, "r3qctl: --seed: '%s' is not "
				    "a whole number\n", optarg);
				exchange_usage(EX_USAGE);
			}
			break;
		case O_JSON:
			json = 1;
			break;
		default:
			exchange_usage(EX_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "r3qctl: exchange plan: unexpected '%s'\n",
		    argv[optind]);
		exchange_usage(EX_USAGE);
	}
	if (kind == 0) {
		fprintf(stderr, "r3qctl: exchange plan: give --matrix, "
		    "--random or --fatal\n");
		exchange_usage(EX_USAGE);
	}

	if (kind == O_MATRIX) {
		mx = exchange_load(file);
		snprintf(what, sizeof(what), "matrix %s", file);
	} else if (kind == O_RANDOM) {
		mx = xchg_random((unsigned)np, seed, err, sizeof(err));
		snprintf(what, sizeof(what), "random matrix, seed %" PRIu64,
		    seed);
	} else {
		mx = xchg_fatal((unsigned)np, err, sizeof(err));
		snprintf(what, sizeof(what), "fatal matrix, h %.6f s",
		    mx != NULL ? xchg_fatal_h(mx) : 0.0);
	}
	if (mx == NULL)
		die(EX_FAIL, "%s", err);

	xchg_params_default(&xp);
	xp.xp_seed = seed;
	memset(&xs, 0, sizeof(xs));
	if (xchg_schedule(mx, algo, &xp, &xs, err, sizeof(err)) == -1)
		die(EX_FAIL, "%s", err);
	/* A schedule this prints is one the validator accepts. */
	if (xchg_validate(mx, &xs, err, sizeof(err)) == -1)
		die(EX_FAIL, "internal error: invalid schedule: %s",
		    err);
	if (json)
		exchange_json(mx, &xs, what, xchg_algo_name(algo));
	else
		exchange_print(mx, &xs, what, xchg_algo_name(algo));
	xchg_sched_free(&xs);
	xchg_matrix_free(mx);
	if (fflush(stdout) == EOF || ferror(stdout))
		die(EX_FAIL, "standard output: %s", strerror(errno));
	return (EX_OK);
}

/* r3qctl links [--measure] [--bytes N] [--json]. */
static int
cmd_links_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	enum { O_MEASURE = 256, O_BYTES, O_JSON };
	static const struct option longopts[] = {
		{ "measure",	no_argument,	   NULL, O_MEASURE },
		{ "bytes",	required_argument, NULL, O_BYTES },
		{ "json",	no_argument,	   NULL, O_JSON },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__LinksRequest lr = R3Q__LINKS_REQUEST__INIT;
	R3q__LinksAnswer *a;
	R3q__LinkInfo	*l;
	size_t		 i;
	int		 ch, json = 0, rc = EX_OK;

	(void)self;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			printf("usage: r3qctl links [--measure] [--bytes N] "
			    "[--json]\n"
			    "  --measure  have the workers probe every link "
			    "first (a round trip,\n"
			    "             then a timed bulk transfer)\n"
			    "  --bytes N  of each bulk transfer (default 1M)\n"
			    "  --json     as JSON\n"
			    "prints the link matrix between the workers with "
			    "peer_listen: start-up\n(us), bandwidth (MB/s) "
			    "and the age of each measurement\n");
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case O_MEASURE:
			lr.measure = 1;
			break;
		case O_BYTES:
			if (conf_parse_size(optarg, &lr.bytes) == -1 ||
			    lr.bytes == 0)
				die(EX_USAGE, "--bytes: '%s' is not a size",
				    optarg);
			break;
		case O_JSON:
			json = 1;
			break;
		default:
			die(EX_USAGE, "links: see r3qctl links -h");
		}
	}
	if (optind != argc)
		die(EX_USAGE, "links: unexpected argument '%s'", argv[optind]);
	env.body_case = R3Q__ENVELOPE__BODY_LINKS_REQUEST;
	env.links_request = &lr;
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_LINKS_ANSWER);
	a = ans->links_answer;
	if (json) {
		printf("{\"links\":[");
		for (i = 0; i < a->n_links; i++) {
			l = a->links[i];
			printf("%s\n{\"src\":", i ? "," : "");
			json_str(l->src);
			printf(",\"dst\":");
			json_str(l->dst);
			printf(",\"startup_us\":%.17g,\"mbps\":%.17g,"
			    "\"bandwidth\":%.17g,\"age_ms\":%" PRIu64 "}",
			    l->startup_s * 1e6, l->bandwidth / 1e6,
			    l->bandwidth, l->age_ms);
		}
		printf("],\"error\":");
		json_str(a->error);
		printf("}\n");
	} else {
		printf("%-16s %-16s %12s %10s %8s\n", "SRC", "DST",
		    "STARTUP_US", "MB/S", "AGE_S");
		for (i = 0; i < a->n_links; i++) {
			l = a->links[i];
			printf("%-16s %-16s %12.1f %10.2f %8.1f\n", l->src,
			    l->dst, l->startup_s * 1e6, l->bandwidth / 1e6,
			    (double)l->age_ms / 1000);
		}
	}
	if (a->error[0] != '\0') {
		fprintf(stderr, "r3qctl: links: %s\n", a->error);
		rc = EX_FAIL;
	}
	frame_free(ans);
	return (rc);
}

/* r3qctl exchange run [--algo A] [--bytes N] [--timeout D] [--json]. */
static int
exchange_run(int argc, char *argv[])
{
	enum { O_ALGO = 256, O_BYTES, O_TIMEOUT, O_JSON, O_FATAL };
	static const struct option longopts[] = {
		{ "algo",	required_argument, NULL, O_ALGO },
		{ "fatal",	no_argument,	   NULL, O_FATAL },
		{ "bytes",	required_argument, NULL, O_BYTES },
		{ "timeout",	required_argument, NULL, O_TIMEOUT },
		{ "json",	no_argument,	   NULL, O_JSON },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ExchangeRequest er = R3Q__EXCHANGE_REQUEST__INIT;
	R3q__ExchangeAnswer *a;
	R3q__ExchangeEvent *e;
	size_t		 i;
	int		 ch, json = 0, rc;

	er.algo = (char *)(uintptr_t)"";
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			printf("usage: r3qctl exchange run [--algo A] "
			    "[--bytes N] [--timeout D] [--fatal] [--json]\n"
			    "  --algo A     the scheduler (r3qctl exchange -h; "
			    "default portfolio)\n"
			    "  --bytes N    each worker sends N bytes to each "
			    "other (default 1M)\n"
			    "  --timeout D  give up after D (default: from the "
			    "prediction)\n"
			    "  --json       as JSON, every event\n"
			    "  --fatal      the fatal matrix's sizes, x = N "
			    "bytes (3 workers or more)\n"
			    "a total exchange among the workers with "
			    "peer_listen, planned by the\nmaster from the "
			    "measured links (measured first if need be); "
			    "prints the\nschedule's predicted completion "
			    "beside the measured one\n");
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case O_ALGO:
			er.algo = optarg;
			break;
		case O_BYTES:
			if (conf_parse_size(optarg, &er.bytes) == -1 ||
			    er.bytes == 0)
				die(EX_USAGE, "--bytes: '%s' is not a size",
				    optarg);
			break;
		case O_TIMEOUT:
			if (conf_parse_duration(optarg, &er.timeout_ms) == -1 ||
			    er.timeout_ms == 0)
				die(EX_USAGE, "--timeout: '%s' is not a "
				    "duration", optarg);
			break;
		case O_JSON:
			json = 1;
			break;
		case O_FATAL:
			er.fatal = 1;
			break;
		default:
			die(EX_USAGE, "exchange run: see r3qctl exchange run "
			    "-h");
		}
	}
	if (optind != argc)
		die(EX_USAGE, "exchange run: unexpected argument '%s'",
		    argv[optind]);
	env.body_case = R3Q__ENVELOPE__BODY_EXCHANGE_REQUEST;
	env.exchange_request = &er;
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_EXCHANGE_ANSWER);
	a = ans->exchange_answer;
	if (json) {
		printf("{\"ok\":%s,\"error\":", a->ok ? "true" : "false");
		json_str(a->error);
		printf(",\"algo\":");
		json_str(a->algo);
		printf(",\"workers\":[");
		for (i = 0; i < a->n_workers; i++) {
			printf("%s", i ? "," : "");
			json_str(a->workers[i]);
		}
		printf("],\"t_tb\":%.17g,\"predicted\":%.17g,"
		    "\"measured\":%.17g,\"wall\":%.17g,\"events\":[",
		    a->t_tb, a->predicted, a->measured, a->wall);
		for (i = 0; i < a->n_events; i++) {
			e = a->events[i];
			printf("%s\n{\"src\":", i ? "," : "");
			json_str(e->src);
			printf(",\"dst\":");
			json_str(e->dst);
			printf(",\"piece\":%u,\"bytes\":%" PRIu64 ","
			    "\"pred_start\":%.17g,\"pred_end\":%.17g,"
			    "\"start\":%.17g,\"end\":%.17g}", e->piece,
			    e->bytes, e->pred_start, e->pred_end, e->start,
			    e->end);
		}
		printf("]}\n");
	} else {
		printf("workers:   ");
		for (i = 0; i < a->n_workers; i++)
			printf(" %s", a->workers[i]);
		printf("\nalgorithm:  %s, %zu events\n", a->algo,
		    a->n_events);
		printf("t_tb:       %.6f s\npredicted:  %.6f s (%.3f x "
		    "t_tb)\n", a->t_tb, a->predicted, a->t_tb > 0 ?
		    a->predicted / a->t_tb : 1.0);
		if (a->ok)
			printf("measured:   %.6f s (%.3f x predicted, %.3f x "
			    "t_tb)\n", a->measured, a->predicted > 0 ?
			    a->measured / a->predicted : 1.0, a->t_tb > 0 ?
			    a->measured / a->t_tb : 1.0);
	}
	rc = EX_OK;
	if (!a->ok) {
		fprintf(stderr, "r3qctl: exchange failed: %s\n", a->error);
		rc = EX_FAIL;
	}
	frame_free(ans);
	return (rc);
}

/* r3qctl exchange plan | run. */
static int
cmd_exchange_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	(void)self;
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return (exchange_run(argc - 1, argv + 1));
	return (exchange_plan(argc, argv));
}

const struct cmd_entry cmd_exchange_entry = {
	"exchange", "plan [options] | run [options]",
	"plan: schedule a total exchange and print it (r3qctl exchange -h);\n"
	"run: a total exchange among the workers, for real: predicted vs\n"
	"measured (r3qctl exchange run -h)",
	"  plan: --algo A  --matrix FILE  --random P  --fatal P  --seed N  "
	"--json\n"
	"  run:  --algo A  --bytes N  --timeout D  --fatal  --json\n",
	cmd_exchange_exec
};

const struct cmd_entry cmd_links_entry = {
	"links", "[--measure] [--bytes N] [--json]",
	"the measured link matrix between workers (start-up, MB/s, age)",
	NULL, cmd_links_exec
};
