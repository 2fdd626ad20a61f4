/*
 * r3qctl: submit and follow jobs, and look at masterd, over mutual TLS or
 * its control socket (client.c).  This file is main, the options every
 * command shares, the command table and the usage made from it; each
 * group of commands is a file of its own that defines its entries
 * (cmd-*.c, map.c, bnb.c, island.c, exchange.c), as tmux's cmd-*.c do.
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r3qctl.h"
#include "sched/sched.h"
#include "util.h"

#define CONTROL_DEFAULT	R3Q_RUNDIR "/masterd.sock"	/* from configure */

const char	*ctl_sflag;	/* -s */

/* Every command, in the order the usage lists them. */
static const struct cmd_entry *cmd_table[] = {
	&cmd_es_entry,
	&cmd_submit_entry,
	&cmd_wait_entry,
	&cmd_result_entry,
	&cmd_jobs_entry,
	&cmd_workers_entry,
	&cmd_cancel_entry,
	&cmd_drain_entry,
	&cmd_token_entry,
	&cmd_certs_entry,
	&cmd_report_entry,
	&cmd_map_entry,
	&cmd_exchange_entry,
	&cmd_links_entry,
	&cmd_bnb_entry,
	&cmd_islands_entry,
	NULL
};

/* What an entry does, its lines indented. */
static void
cmd_summary(FILE *f, const struct cmd_entry *e, const char *indent)
{
	const char	*p, *nl;

	for (p = e->summary; *p != '\0'; p = nl + (*nl != '\0')) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		fprintf(f, "%s%.*s\n", indent, (int)(nl - p), p);
	}
}

/*
 * The usage summary: on standard output with status 0 when asked for
 * (-h, --help, help), on standard error with status 64 after a usage
 * error.
 */
static void __attribute__((noreturn))
usage(int code)
{
	FILE				*f = code == EX_OK ? stdout : stderr;
	const struct cmd_entry		**e;

	fprintf(f,
	    "usage: r3qctl [-h] [--version] [-s socket] command [arguments]\n"
	    "  -h, --help  print this help and exit (also after a command)\n"
	    "  --version   print the version and the protocol version\n"
	    "  -s socket   masterd's control socket\n"
	    "commands:\n");
	for (e = cmd_table; *e != NULL; e++) {
		fprintf(f, "  %s%s%s\n", (*e)->name, (*e)->usage[0] ? " " : "",
		    (*e)->usage);
		cmd_summary(f, *e, "      ");
	}
	for (e = cmd_table; *e != NULL; e++)
		if ((*e)->options != NULL)
			fprintf(f, "%s options:\n%s", (*e)->name,
			    (*e)->options);
	fprintf(f, "masterd is reached at the control socket -s if given, "
	    "else over TLS at\n$R3Q_MASTER (host:port, with $R3Q_CA, "
	    "$R3Q_CERT, $R3Q_KEY) if set, else at\nthe control socket "
	    "$R3Q_CONTROL, else " CONTROL_DEFAULT "\n");
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

/*
 * One command's usage, made from its entry: on standard output with 0
 * when asked for, on standard error with 64 after a usage error.
 */
void
cmd_usage(const struct cmd_entry *e, int code)
{
	FILE	*f = code == EX_OK ? stdout : stderr;

	fprintf(f, "usage: r3qctl [-s socket] %s%s%s\n", e->name,
	    e->usage[0] ? " " : "", e->usage);
	cmd_summary(f, e, "  ");
	if (e->options != NULL)
		fprintf(f, "options:\n%s", e->options);
	if (code == EX_OK && (fflush(stdout) == EOF || ferror(stdout)))
		code = EX_FAIL;
	exit(code);
}

/* Say "r3qctl: ..." on standard error and exit with code. */
void
die(int code, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "r3qctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* A --policy argument: a policy's name, or die listing them. */
char *
cmd_parse_policy(char *s)
{
	enum sched_policy	 p;

	if (sched_policy_parse(s, &p) == -1)
		die(EX_USAGE, "--policy: '%s' is not one of %s", s,
		    sched_policy_list());
	return (s);
}

/* A job id argument. */
uint64_t
cmd_parse_job(const char *s)
{
	uint64_t	 v;

	if (parse_u64(s, 1, UINT64_MAX, &v) == -1)
		die(EX_USAGE, "'%s' is not a job id", s);
	return (v);
}

/*
 * The options of a command that has none but -h and --help; returns the
 * index of its first operand.
 */
int
cmd_parse_none(const struct cmd_entry *e, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 0;	/* glibc: re-read the ordering, not main's "+" */
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		cmd_usage(e, ch == 'h' ? EX_OK : EX_USAGE);
	return (optind);
}

/* The entry of a command name, or NULL. */
static const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry	**e;

	for (e = cmd_table; *e != NULL; e++)
		if (strcmp((*e)->name, name) == 0)
			return (*e);
	return (NULL);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ "version",	no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd_entry	*e;
	int			 ch;

	while ((ch = getopt_long(argc, argv, "+hs:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'V':
			printf("r3qctl %s (R3Q protocol %d)\n", PACKAGE_VERSION,
			    R3Q_PROTOCOL);
			return (fflush(stdout) == EOF ? EX_FAIL : EX_OK);
		case 's':
			ctl_sflag = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage(EX_USAGE);
	if (strcmp(argv[0], "help") == 0) {
		if (argc == 2 && (e = cmd_find(argv[1])) != NULL)
			cmd_usage(e, EX_OK);
		usage(argc == 1 ? EX_OK : EX_USAGE);
	}
	if ((e = cmd_find(argv[0])) == NULL)
		die(EX_USAGE, "unknown command '%s' (see r3qctl -h)", argv[0]);
	return (e->exec(e, argc, argv));
}
