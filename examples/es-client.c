/*
 * es-client: the R3Q paper's (mu+lambda)-ES written as a libr3q client.
 *
 * Each generation is one r3q_map() of the ridge-lu kind (or --kind K, a
 * kind that reads the same payload, such as the persistent and plugin
 * examples): the payloads are the individuals (the encoding of
 * workerd.conf(5), TASK KINDS), the outputs their fitness.  The ES itself is R3Q's (common/es): it draws
 * its numbers from (seed, generation, index), so the answer equals
 * `r3qctl es --local` bit for bit under every policy and any workers.
 *
 *	es-client [-s socket] [--mu N] [--lambda N] [--generations N]
 *	    [--dim N] [--lu N] [--seed N] [--policy P] [--queue-factor N|auto]
 *	    [--reevaluate-parents] [--csv FILE] [--kind K]
 *
 * It connects the way r3qctl does (-s, $R3Q_CONTROL, the default socket)
 * or over TLS when $R3Q_MASTER, $R3Q_CA, $R3Q_CERT and $R3Q_KEY are set.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "r3q.h"

#include "es/es.h"
#include "es/payload.h"

static void __attribute__((noreturn))
usage(int code)
{
	fprintf(code ? stderr : stdout, "usage: es-client [-s socket] "
	    "[--mu N] [--lambda N] [--generations N] [--dim N]\n"
	    "\t[--lu N] [--seed N] [--policy P] [--queue-factor N|auto]\n"
	    "\t[--reevaluate-parents] [--csv FILE] [--kind K]\n");
	exit(code);
}

static unsigned long
number(const char *name, const char *s)
{
	char		*end;
	unsigned long	 v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0') {
		fprintf(stderr, "es-client: --%s: '%s' is not a number\n", name,
		    s);
		exit(64);
	}
	return (v);
}

static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "mu",			required_argument, NULL, 'm' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "dim",		required_argument, NULL, 'd' },
		{ "lu",			required_argument, NULL, 'u' },
		{ "seed",		required_argument, NULL, 'S' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'q' },
		{ "reevaluate-parents",	no_argument,	   NULL, 'r' },
		{ "csv",		required_argument, NULL, 'c' },
		{ "kind",		required_argument, NULL, 'k' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct r3q_options	 ro;
	struct r3q_job_options	 jo;
	struct es_params	 ep;
	struct r3q		*r;
	struct r3q_job		*job;
	struct r3q_buf		*in, *out;
	struct es		*es;
	FILE			*csv = NULL;
	const char		*csvpath = NULL, *kind = "ridge-lu";
	uint64_t		 start, evals = 0;
	uint32_t		 lu = 0, g;
	size_t			 i, n, len;
	double			 f;
	char			 err[512];
	int			 ch, rc;

	memset(&ro, 0, sizeof(ro));
	memset(&jo, 0, sizeof(jo));
	memset(&ep, 0, sizeof(ep));
	ep.mu = 30;
	ep.lambda = 70;
	ep.generations = 10;
	ep.dim = 30;
	ep.seed = 1;
	jo.name = "es-client";
	while ((ch = getopt_long(argc, argv, "hs:", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			ro.control = optarg;
			break;
		case 'm':
			ep.mu = (uint32_t)number("mu", optarg);
			break;
		case 'l':
			ep.lambda = (uint32_t)number("lambda", optarg);
			break;
		case 'g':
			ep.generations = (uint32_t)number("generations",
			    optarg);
			break;
		case 'd':
			ep.dim = (uint32_t)number("dim", optarg);
			break;
		case 'u':
			lu = (uint32_t)number("lu", optarg);
			break;
		case 'S':
			ep.seed = number("seed", optarg);
			break;
		case 'p':
			jo.policy = optarg;
			break;
		case 'q':
			jo.queue_factor = strcmp(optarg, "auto") == 0 ?
			    R3Q_QF_AUTO : (unsigned)number("queue-factor",
			    optarg);
			break;
		case 'r':
			ep.reevaluate_parents = 1;
			break;
		case 'c':
			csvpath = optarg;
			break;
		case 'k':
			kind = optarg;
			break;
		case 'h':
			usage(0);
		default:
			usage(64);
		}
	}
	if (optind != argc)
		usage(64);
	if (es_params_check(&ep, err, sizeof(err)) == -1) {
		fprintf(stderr, "es-client: %s\n", err);
		return (64);
	}
	if ((es = es_new(&ep)) == NULL) {
		fprintf(stderr, "es-client: out of memory\n");
		return (1);
	}
	if ((r = r3q_connect(&ro, err, sizeof(err))) == NULL) {
		fprintf(stderr, "es-client: %s\n", err);
		return (69);
	}
	if ((job = r3q_job_open(r, &jo)) == NULL) {
		fprintf(stderr, "es-client: %s\n", r3q_error(r));
		return (1);
	}
	if (csvpath != NULL) {
		if ((csv = fopen(csvpath, "w")) == NULL) {
			fprintf(stderr, "es-client: %s: %s\n", csvpath,
			    strerror(errno));
			return (1);
		}
		fprintf(csv, "generation,best\n");
	}
	len = es_payload_len(ep.dim);
	n = ep.mu + ep.lambda;
	in = calloc(n, sizeof(*in));
	out = calloc(n, sizeof(*out));
	for (i = 0; i < n; i++)
		in[i].data = malloc(len);
	start = now_ns();
	while (!es_finished(es)) {
		g = es_generation(es);
		n = es_batch_size(es);
		/* One generation, one batch. */
		for (i = 0; i < n; i++) {
			es_payload_encode(in[i].data, lu, 0, 0,
			    es_batch_x(es, i), ep.dim);
			in[i].len = len;
		}
		rc = r3q_map(job, kind, in, n, out, -1);
		for (i = 0; i < n; i++) {
			if (out[i].status != R3Q_OK) {
				fprintf(stderr, "es-client: generation %u, "
				    "individual %zu: %s\n", g, i,
				    r3q_strerror(out[i].status));
				return (1);
			}
			if (es_output_decode(out[i].data, out[i].len,
			    &f) == -1) {
				fprintf(stderr, "es-client: generation %u, "
				    "individual %zu: an output of %zu bytes\n",
				    g, i, out[i].len);
				return (1);
			}
			es_set_fitness(es, i, f);
			free(out[i].data);
			out[i].data = NULL;
		}
		if (rc != R3Q_OK) {
			fprintf(stderr, "es-client: %s\n", r3q_strerror(rc));
			return (1);
		}
		evals += n;
		if (es_advance(es) == -1) {
			fprintf(stderr, "es-client: generation %u is "
			    "incomplete\n", g);
			return (1);
		}
		printf("gen %4u  best %-24.17g  elapsed %8.3fs\n", g,
		    es_gen_best(es, g), (double)(now_ns() - start) / 1e9);
		fflush(stdout);
		if (csv != NULL)
			fprintf(csv, "%u,%.17g\n", g, es_gen_best(es, g));
	}
	printf("best fitness: %.17g\n", es_best_f(es));
	printf("best individual:");
	for (i = 0; i < ep.dim; i++)
		printf(" %.17g", es_best_x(es)[i]);
	printf("\n");
	printf("summary: job %" PRIu64 ", %u generations, %" PRIu64
	    " evaluations, %.3f s\n", r3q_job_id(job), ep.generations, evals,
	    (double)(now_ns() - start) / 1e9);
	if (csv != NULL && fclose(csv) == EOF) {
		fprintf(stderr, "es-client: %s: %s\n", csvpath,
		    strerror(errno));
		return (1);
	}
	r3q_job_close(job);
	r3q_close(r);
	for (i = 0; i < ep.mu + ep.lambda; i++)
		free(in[i].data);
	free(in);
	free(out);
	es_free(es);
	return (0);
}
