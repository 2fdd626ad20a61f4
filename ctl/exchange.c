/*
 * r3qctl exchange plan: schedule a total exchange (seed 001) over a matrix
 * from a file, the paper's random generator or its fatal matrix, and print
 * the schedule per sender with its completion time and its ratio to the
 * lower bound t_tb.  Runs in this process; no master is needed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "map.h"		/* die() */
#include "util.h"
#include "xchg/xchg.h"

#define EX_OK		0
#define EX_FAIL		1
#define EX_USAGE	64

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
int
cmd_exchange(int argc, char *argv[])
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
