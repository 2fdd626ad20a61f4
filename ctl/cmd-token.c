/*
 * r3qctl token and certs: join tokens and the certificates masterd's CA
 * issued with them.  masterd takes these on its control socket only
 * (root or the r3q group); over TLS it refuses them, and r3qctl says so.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "r3qctl.h"
#include "util.h"

/* A Unix time as the lists print it, UTC. */
static const char *
utc_str(uint64_t t, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return (buf);
}

/* One token's line of r3qctl token list. */
static void
token_line(const R3q__TokenInfo *t, time_t now)
{
	char		 c[32], e[32], left[32];
	const char	*state;

	if (t->revoked)
		state = "revoked";
	else if ((time_t)t->expires <= now)
		state = "expired";
	else if (t->used >= t->uses)
		state = "used-up";
	else
		state = "valid";
	snprintf(left, sizeof(left), "%u/%u",
	    t->used < t->uses ? t->uses - t->used : 0, t->uses);
	/* The name last, only for a token made for one. */
	if (t->name != NULL && *t->name != '\0')
		printf("%-12s %-20s %-20s %9s %-8s %s\n", t->id,
		    utc_str(t->created, c, sizeof(c)), utc_str(t->expires, e,
		    sizeof(e)), left, state, t->name);
	else
		printf("%-12s %-20s %-20s %9s %s\n", t->id, utc_str(t->created,
		    c, sizeof(c)), utc_str(t->expires, e, sizeof(e)), left,
		    state);
}

/*
 * Say how to use a new token: its limits, and the workerd command that
 * joins with it, ready to paste, the token on its standard input: the
 * address is the one masterd advertises (advertise in masterd.conf, else
 * its listen address), else this connection's, else R3Q_MASTER's.
 */
static void
token_join_command(const R3q__TokenAnswer *ta, const R3q__TokenInfo *t)
{
	const char	*master = ta->master;
	char		 e[32];

	if (master == NULL || *master == '\0')
		master = ctl_master();
	if ((master == NULL || *master == '\0') &&
	    ((master = getenv("R3Q_MASTER")) == NULL || *master == '\0'))
		master = "MASTER:PORT";
	fprintf(stderr, "token %s: %u join%s%s%s until %s; on the worker, "
	    "run this and paste the token:\n", t->id, t->uses, t->uses == 1 ?
	    "" : "s", t->name != NULL && *t->name ? " as " : "",
	    t->name != NULL ? t->name : "", utc_str(t->expires, e, sizeof(e)));
	fprintf(stderr, "  workerd --join %s -\n", master);
}

/*
 * r3qctl token create | list | revoke: on the control socket, root or
 * the r3q group.  create prints the token alone on standard output, the
 * only time its secret is shown, and the join command on standard error.
 */
static int
cmd_token_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "ttl",	required_argument, NULL, 't' },
		{ "uses",	required_argument, NULL, 'u' },
		{ "name",	required_argument, NULL, 'n' },
		{ "cert-lifetime", required_argument, NULL, 'l' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__TokenCreate tc = R3Q__TOKEN_CREATE__INIT;
	R3q__TokenList	 tl = R3Q__TOKEN_LIST__INIT;
	R3q__TokenRevoke tr = R3Q__TOKEN_REVOKE__INIT;
	R3q__TokenInfo	*t;
	const char	*sub;
	uint64_t	 ms, v;
	size_t		 i;
	int		 ch;

	if (argc < 2)
		die(EX_USAGE, "token: create, list or revoke ID");
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0)
		cmd_usage(self, EX_OK);
	argc--;
	argv++;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --ttl", sub);
			if (conf_parse_duration(optarg, &ms) == -1 ||
			    ms < 1000 || ms > 366ULL * 86400000)
				die(EX_USAGE, "--ttl %s: a duration from 1s to "
				    "366d, such as 30m, 24h or 7d", optarg);
			tc.ttl_s = ms / 1000;
			break;
		case 'u':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --uses", sub);
			if (parse_u64(optarg, 1, 1000000, &v) == -1)
				die(EX_USAGE, "--uses %s: a number of joins "
				    "from 1 to 1000000", optarg);
			tc.uses = (uint32_t)v;
			break;
		case 'n':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --name", sub);
			if (*optarg == '\0' || strlen(optarg) > 63 ||
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
			    strlen(optarg))
				die(EX_USAGE, "--name %s: a worker name: "
				    "letters, digits, '.', '-' and '_', at most "
				    "63", optarg);
			tc.name = optarg;
			break;
		case 'l':
			if (strcmp(sub, "create") != 0)
				die(EX_USAGE, "token %s: no --cert-lifetime",
				    sub);
			if (conf_parse_duration(optarg, &ms) == -1 ||
			    ms < 60000 || ms > 100ULL * 365 * 86400000)
				die(EX_USAGE, "--cert-lifetime %s: a duration "
				    "from 1m, such as 90m or 2d", optarg);
			tc.cert_lifetime_s = ms / 1000;
			break;
		case 'h':
			cmd_usage(self, EX_OK);
		default:
			cmd_usage(self, EX_USAGE);
		}
	}
	if (strcmp(sub, "create") == 0) {
		if (optind != argc)
			cmd_usage(self, EX_USAGE);
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_CREATE;
		env.token_create = &tc;
	} else if (strcmp(sub, "list") == 0) {
		if (optind != argc)
			cmd_usage(self, EX_USAGE);
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_LIST;
		env.token_list = &tl;
	} else if (strcmp(sub, "revoke") == 0) {
		if (optind != argc - 1)
			die(EX_USAGE, "token revoke: one token ID");
		tr.id = argv[optind];
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_REVOKE;
		env.token_revoke = &tr;
	} else
		die(EX_USAGE, "token: unknown command '%s' (create, list or "
		    "revoke)", sub);
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_TOKEN_ANSWER);
	if (strcmp(sub, "create") == 0) {
		if (ans->token_answer->n_tokens != 1)
			die(EX_FAIL, "no token in the answer");
		t = ans->token_answer->tokens[0];
		printf("%s\n", ans->token_answer->token);
		fflush(stdout);
		token_join_command(ans->token_answer, t);
	} else if (strcmp(sub, "revoke") == 0) {
		if (ans->token_answer->n_tokens == 1)
			printf("token %s revoked\n",
			    ans->token_answer->tokens[0]->id);
	} else {
		printf("%-12s %-20s %-20s %9s %-8s %s\n", "ID", "CREATED",
		    "EXPIRES", "USES-LEFT", "STATE", "NAME");
		for (i = 0; i < ans->token_answer->n_tokens; i++)
			token_line(ans->token_answer->tokens[i], time(NULL));
	}
	frame_free(ans);
	if (fflush(stdout) == EOF || ferror(stdout))
		return (EX_FAIL);
	return (EX_OK);
}

/* One certificate's line of r3qctl certs (and certs revoke). */
static void
cert_line(const R3q__CertInfo *c)
{
	char	 a[32], b[32], r[32];

	/* The revocation's date last, only for a revoked one. */
	printf("%-16s %-32s %-20s %-20s %-12s %s%s%s\n", c->name[0] ?
	    c->name : "-", c->serial, c->issued ? utc_str(c->issued, a,
	    sizeof(a)) : "-", c->not_after ? utc_str(c->not_after, b,
	    sizeof(b)) : "-", c->token[0] ? c->token : c->issued ? "renewal" :
	    "-", c->address[0] ? c->address : "-", c->revoked ? " " : "",
	    c->revoked ? utc_str(c->revoked, r, sizeof(r)) : "");
}

/*
 * r3qctl certs: what masterd's CA issued, by joins and renewals, the
 * revoked marked; certs revoke NAME|SERIAL: every certificate of a
 * worker name (its renewals, and the one a connected worker of that name
 * shows), or one serial, at once.
 */
static int
cmd_certs_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__TokenList	 tl = R3Q__TOKEN_LIST__INIT;
	R3q__TokenRevoke tr = R3Q__TOKEN_REVOKE__INIT;
	size_t		 i;
	int		 first;

	if (argc == 2 && strcmp(argv[1], "crl") == 0) {
		tl.certs = 1;
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_LIST;
		env.token_list = &tl;
		ctl_send(&env);
		ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_CERT_LIST);
		if (ans->cert_list->crl.len == 0)
			die(EX_FAIL, "certs crl: masterd has no CRL in force "
			    "(no crl file, nothing revoked with certs revoke)");
		fwrite(ans->cert_list->crl.data, 1, ans->cert_list->crl.len,
		    stdout);
		frame_free(ans);
		if (fflush(stdout) == EOF || ferror(stdout))
			return (EX_FAIL);
		return (EX_OK);
	}
	if (argc >= 2 && strcmp(argv[1], "revoke") == 0) {
		if (argc != 3 || argv[2][0] == '\0' || argv[2][0] == '-')
			die(EX_USAGE, "certs revoke: one worker name or "
			    "certificate serial");
		tr.id = (char *)(uintptr_t)"";
		tr.cert = argv[2];
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_REVOKE;
		env.token_revoke = &tr;
	} else {
		if ((first = cmd_parse_none(self, argc, argv)) != argc)
			die(EX_USAGE, "certs: unknown command '%s' (revoke "
			    "NAME|SERIAL, crl, or nothing to list)",
			    argv[first]);
		tl.certs = 1;
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_LIST;
		env.token_list = &tl;
	}
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_CERT_LIST);
	printf("%-16s %-32s %-20s %-20s %-12s %s\n", "NAME", "SERIAL",
	    "ISSUED", "NOT-AFTER", "TOKEN", "ADDRESS [REVOKED]");
	for (i = 0; i < ans->cert_list->n_certs; i++)
		cert_line(ans->cert_list->certs[i]);
	frame_free(ans);
	if (fflush(stdout) == EOF || ferror(stdout))
		return (EX_FAIL);
	return (EX_OK);
}

const struct cmd_entry cmd_token_entry = {
	"token", "create [--ttl D] [--uses N] [--name NAME] "
	"[--cert-lifetime D] | list | revoke ID",
	"create: a join token for a workerd (default 24h, 1 use; --name:\n"
	"for that worker name only, which a known worker's needs;\n"
	"--cert-lifetime: of its certificates), and the workerd command that\n"
	"joins with it; list: the join tokens (never their secrets);\n"
	"revoke: a token joins no more",
	NULL, cmd_token_exec
};

const struct cmd_entry cmd_certs_entry = {
	"certs", "[revoke NAME|SERIAL | crl]",
	"the certificates masterd's CA issued, revoked ones marked; revoke:\n"
	"every certificate of a worker name (renewals too), or one serial,\n"
	"dropped and refused at once; crl: the CRLs in force, PEM, for the\n"
	"crl files of relays and workers", NULL, cmd_certs_exec
};
