/*
 * masterd: holds the jobs and the global task queue, hands tasks to
 * workers through the scheduling core, and serves r3qctl.
 */
#include "config.h"

#include <sys/resource.h>

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <openssl/rand.h>

#include "log.h"
#include "exchange.h"
#include "masterd.h"
#include "notify.h"
#include "tls.h"
#include "util.h"

/* R3Q_CONFDIR and the others come from configure (Makefile.am). */
#define MASTERD_CONF	R3Q_CONFDIR "/masterd.conf"

struct masterd	*md;
static const char *conffile = MASTERD_CONF;
static int	 conffile_given;
static const char *trace_flag;		/* -T, over the trace key */

/* Reject a policy name the core does not know. */
static int
check_policy(const char *v, char *err, size_t errlen)
{
	enum sched_policy	 p;

	if (sched_policy_parse(v, &p) == -1) {
		snprintf(err, errlen, "policy: '%s' is not one of %s", v,
		    sched_policy_list());
		return (-1);
	}
	return (0);
}

/* queue_factor: a whole number from 1 to SCHED_QF_MAX, or auto. */
int
masterd_parse_qf(const char *v, unsigned *qf)
{
	uint64_t	 n;

	if (strcmp(v, "auto") == 0) {
		*qf = SCHED_QF_AUTO;
		return (0);
	}
	if (parse_u64(v, 1, SCHED_QF_MAX, &n) == -1)
		return (-1);
	*qf = (unsigned)n;
	return (0);
}

static int
check_qf(const char *v, char *err, size_t errlen)
{
	unsigned	 qf;

	if (masterd_parse_qf(v, &qf) == -1) {
		snprintf(err, errlen, "queue_factor: '%s' is not a whole "
		    "number from 1 to %d or auto", v, SCHED_QF_MAX);
		return (-1);
	}
	return (0);
}

/* balance: a balancing mode the core knows (doc/algorithms.md §4). */
static int
check_balance(const char *v, char *err, size_t errlen)
{
	if (sched_balance_parse(v, NULL) == -1) {
		snprintf(err, errlen, "balance: '%s' is not one of none, one, "
		    "power, global", v);
		return (-1);
	}
	return (0);
}

/* balance_topology: ring, all or tree. */
static int
check_topology(const char *v, char *err, size_t errlen)
{
	if (sched_topology_parse(v, NULL) == -1) {
		snprintf(err, errlen, "balance_topology: '%s' is not one of "
		    "ring, all, tree", v);
		return (-1);
	}
	return (0);
}

/* trace: a list of subsystems (log_trace_parse). */
static int
check_trace(const char *v, char *err, size_t errlen)
{
	int	 bits;

	return (log_trace_parse(v, &bits, err, errlen));
}

/* advertise: auto, or the host:port joiners dial. */
static int
check_advertise(const char *v, char *err, size_t errlen)
{
	char	 h[256], p[16];

	if (strcmp(v, "auto") == 0 || (conf_split_hostport(v, h, sizeof(h),
	    p, sizeof(p), NULL) == 0 && h[0] != '\0' && p[0] != '\0'))
		return (0);
	snprintf(err, errlen, "'%s' is neither auto nor host:port", v);
	return (-1);
}

/* http: none, a port (on 127.0.0.1) or host:port. */
static int
check_http(const char *v, char *err, size_t errlen)
{
	char		 h[256], p[16];
	uint64_t	 n;

	if (strcmp(v, "none") == 0 || parse_u64(v, 0, 65535, &n) == 0 ||
	    conf_split_hostport(v, h, sizeof(h), p, sizeof(p), NULL) == 0)
		return (0);
	snprintf(err, errlen, "http: '%s' is not none, a port or host:port",
	    v);
	return (-1);
}

#define OFF(f)	offsetof(struct masterd_config, f)
const struct conf_key masterd_keys[] = {
	{ "listen",		CONF_HOSTPORT,	OFF(listen),	0, 0, NULL },
	{ "control",		CONF_STRING,	OFF(control),	0, 0, NULL },
	{ "ca",			CONF_STRING,	OFF(ca),	0, 0, NULL },
	{ "cert",		CONF_STRING,	OFF(cert),	0, 0, NULL },
	{ "key",		CONF_STRING,	OFF(key),	0, 0, NULL },
	{ "crl",		CONF_STRING,	OFF(crl),	0, 0, NULL },
	{ "journal",		CONF_STRING,	OFF(journal),	0, 0, NULL },
	{ "policy",		CONF_STRING,	OFF(policy),	0, 0,
	    check_policy },
	{ "queue_factor",	CONF_STRING,	OFF(queue_factor), 0, 0,
	    check_qf },
	{ "max_frame",		CONF_SIZE,	OFF(max_frame),	1024,
	    1ULL << 30, NULL },
	{ "max_attempts",	CONF_UINT,	OFF(max_attempts), 1, 1000,
	    NULL },
	{ "handshake_timeout",	CONF_DURATION,	OFF(handshake_timeout), 100,
	    3600000, NULL },
	{ "sealed_frames",	CONF_BOOL,	OFF(sealed_frames), 0, 1, NULL },
	{ "http",		CONF_STRING,	OFF(http),	0, 0, check_http },
	{ "heartbeat_timeout",	CONF_DURATION,	OFF(heartbeat_timeout), 100,
	    3600000, NULL },
	{ "link_timeout",	CONF_DURATION,	OFF(link_timeout), 0,
	    3600000, NULL },
	{ "journal_retention",	CONF_DURATION,	OFF(journal_retention), 0,
	    100ULL * 365 * 86400000, NULL },
	{ "journal_retry",	CONF_DURATION,	OFF(journal_retry), 100,
	    3600000, NULL },
	{ "journal_delay",	CONF_DURATION,	OFF(journal_delay), 0,
	    1000, NULL },
	{ "suspect_grace",	CONF_DURATION,	OFF(suspect_grace), 0,
	    86400000, NULL },
	{ "suspect_limit",	CONF_UINT,	OFF(suspect_limit), 0,
	    SCHED_SUSPECT_LIMIT_MAX, NULL },
	{ "suspect_window",	CONF_DURATION,	OFF(suspect_window), 1,
	    7ULL * 86400000, NULL },
	{ "suspect_cooldown",	CONF_DURATION,	OFF(suspect_cooldown), 0,
	    7ULL * 86400000, NULL },
	{ "max_kills",		CONF_UINT,	OFF(max_kills),	1, 1000, NULL },
	{ "verify",		CONF_UINT,	OFF(verify),	1,
	    SCHED_VERIFY_MAX, NULL },
	{ "max_payload",	CONF_SIZE,	OFF(max_payload), 0,
	    1ULL << 30, NULL },
	{ "client_timeout",	CONF_DURATION,	OFF(client_timeout), 1000,
	    30ULL * 86400000, NULL },
	{ "client_buffer",	CONF_SIZE,	OFF(client_buffer), 65536,
	    1ULL << 32, NULL },
	{ "frame_timeout",	CONF_DURATION,	OFF(frame_timeout), 100,
	    3600000, NULL },
	{ "worker_buffer",	CONF_SIZE,	OFF(worker_buffer), 65536,
	    1ULL << 32, NULL },
	{ "output_limit",	CONF_SIZE,	OFF(output_limit), 131072,
	    1ULL << 34, NULL },
	{ "output_timeout",	CONF_DURATION,	OFF(output_timeout), 1000,
	    86400000, NULL },
	{ "max_workers",	CONF_UINT,	OFF(max_workers), 1, 1000000,
	    NULL },
	{ "max_relay_workers",	CONF_UINT,	OFF(max_relay_workers), 1,
	    1000000, NULL },
	{ "max_clients",	CONF_UINT,	OFF(max_clients), 1, 1000000,
	    NULL },
	{ "max_jobs",		CONF_UINT,	OFF(max_jobs),	1, 1000000, NULL },
	{ "max_jobs_per_client", CONF_UINT,	OFF(max_jobs_per_client), 1,
	    1000000, NULL },
	{ "max_queued_tasks",	CONF_UINT,	OFF(max_queued_tasks), 1,
	    4000000000U, NULL },
	{ "max_job_tasks",	CONF_UINT,	OFF(max_job_tasks), 1,
	    4000000000U, NULL },
	{ "max_client_kinds",	CONF_UINT,	OFF(max_client_kinds), 1,
	    65536, NULL },
	{ "max_memory",		CONF_SIZE,	OFF(max_memory), 1ULL << 20,
	    1ULL << 50, NULL },
	{ "max_job_memory",	CONF_SIZE,	OFF(max_job_memory), 1ULL << 20,
	    1ULL << 50, NULL },
	{ "connect_rate",	CONF_UINT,	OFF(connect_rate), 0, 1000000,
	    NULL },
	{ "connect_burst",	CONF_UINT,	OFF(connect_burst), 1, 1000000,
	    NULL },
	{ "max_http",		CONF_UINT,	OFF(max_http),	1, 100000, NULL },
	{ "max_http_per_addr",	CONF_UINT,	OFF(max_http_per_addr), 0,
	    100000, NULL },
	{ "max_batches_job",	CONF_UINT,	OFF(max_batches_job), 1,
	    100000000, NULL },
	{ "max_batches_client",	CONF_UINT,	OFF(max_batches_client), 1,
	    100000000, NULL },
	{ "balance",		CONF_STRING,	OFF(balance),	0, 0,
	    check_balance },
	{ "power_interval",	CONF_DURATION,	OFF(power_interval),
	    SCHED_POWER_INTERVAL_MIN / 1000000,
	    SCHED_POWER_INTERVAL_MAX / 1000000, NULL },
	{ "balance_topology",	CONF_STRING,	OFF(balance_topology), 0, 0,
	    check_topology },
	{ "trace",		CONF_STRING,	OFF(trace),	0, 0, check_trace },
	{ "ca_key",		CONF_STRING,	OFF(ca_key),	0, 0, NULL },
	{ "cert_lifetime",	CONF_DURATION,	OFF(cert_lifetime), 60000,
	    100ULL * 365 * 86400000, NULL },
	{ "max_journal",	CONF_SIZE,	OFF(max_journal), 0, 1ULL << 50,
	    NULL },
	{ "max_journal_client",	CONF_SIZE,	OFF(max_journal_client), 0,
	    1ULL << 50, NULL },
	{ "keep_acked",		CONF_BOOL,	OFF(keep_acked), 0, 1, NULL },
	{ "advertise",		CONF_STRING,	OFF(advertise),	0, 0,
	    check_advertise },
	{ "join_rate_global",	CONF_UINT,	OFF(join_rate_global), 0,
	    1000000, NULL },
	{ NULL, 0, 0, 0, 0, NULL }
};

/* The built-in defaults, the same as the man page's. */
void
masterd_config_defaults(struct masterd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->listen, "0.0.0.0:7411");
	snprintf(c->control, sizeof(c->control), "%s", R3Q_RUNDIR
	    "/masterd.sock");
	snprintf(c->ca, sizeof(c->ca), "%s", R3Q_CONFDIR "/ca.pem");
	snprintf(c->cert, sizeof(c->cert), "%s", R3Q_CONFDIR "/master.pem");
	snprintf(c->key, sizeof(c->key), "%s", R3Q_CONFDIR "/master.key");
	strcpy(c->crl, "none");
	snprintf(c->journal, sizeof(c->journal), "%s", R3Q_STATEDIR
	    "/journal.db");
	strcpy(c->policy, "r3q");
	strcpy(c->queue_factor, "auto");
	c->max_frame = FRAME_MAX_DEFAULT;
	c->max_attempts = 3;
	c->handshake_timeout = 10000;
	strcpy(c->http, "none");
	c->heartbeat_timeout = 10000;
	c->journal_retention = 7ULL * 86400000;
	c->journal_retry = 5000;
	c->journal_delay = JOURNAL_DELAY_MS;
	c->suspect_grace = SCHED_GRACE_DEFAULT / 1000000;
	c->suspect_limit = SCHED_SUSPECT_LIMIT_DEFAULT;
	c->suspect_window = SCHED_WINDOW_DEFAULT / 1000000;
	c->suspect_cooldown = SCHED_COOLDOWN_DEFAULT / 1000000;
	c->max_kills = 3;
	c->verify = 1;
	c->max_payload = 1ULL << 20;
	c->client_timeout = 600000;
	c->client_buffer = 16ULL << 20;
	c->frame_timeout = 30000;
	c->worker_buffer = 16ULL << 20;
	c->output_limit = 64ULL << 20;
	c->output_timeout = 60000;
	c->max_workers = 100000;
	c->max_relay_workers = 1024;
	c->max_clients = 1000;
	c->max_jobs = 10000;
	c->max_jobs_per_client = 1000;
	c->max_queued_tasks = 10000000;
	c->max_job_tasks = 5000000;
	c->max_client_kinds = 64;
	c->max_memory = 4ULL << 30;
	c->max_job_memory = 1ULL << 30;
	c->connect_rate = 100;
	c->connect_burst = 1000;
	strcpy(c->trace, "none");
	c->max_http = 64;
	c->max_http_per_addr = 0;
	c->max_batches_job = 100000;
	c->max_batches_client = 100000;
	strcpy(c->balance, "none");
	c->power_interval = SCHED_POWER_INTERVAL_DEFAULT / 1000000;
	strcpy(c->balance_topology, "ring");
	strcpy(c->ca_key, "none");
	c->cert_lifetime = 365ULL * 86400000;
	strcpy(c->advertise, "auto");
	c->join_rate_global = 60;
	c->sealed_frames = 1;
	c->max_journal = 64ULL << 30;
	c->max_journal_client = 16ULL << 30;
}

/*
 * The keys that bound one another: a peer is dropped past output_limit,
 * so it must be above the marks at which it is paused, or an honest slow
 * peer would be dropped before it was ever paused.  -1 with a message.
 */
int
masterd_config_check(const struct masterd_config *c, char *err, size_t len)
{
	if (c->output_limit <= c->client_buffer ||
	    c->output_limit <= c->worker_buffer) {
		snprintf(err, len, "output_limit (%llu bytes) must be above "
		    "client_buffer (%llu) and worker_buffer (%llu)",
		    (unsigned long long)c->output_limit,
		    (unsigned long long)c->client_buffer,
		    (unsigned long long)c->worker_buffer);
		return (-1);
	}
	if (c->max_job_tasks > c->max_queued_tasks) {
		snprintf(err, len, "max_job_tasks (%u) must not be above "
		    "max_queued_tasks (%u)", c->max_job_tasks,
		    c->max_queued_tasks);
		return (-1);
	}
	if (c->max_journal_client > c->max_journal && c->max_journal != 0) {
		snprintf(err, len, "max_journal_client (%llu bytes) must not "
		    "be above max_journal (%llu)",
		    (unsigned long long)c->max_journal_client,
		    (unsigned long long)c->max_journal);
		return (-1);
	}
	if (c->max_job_memory > c->max_memory) {
		snprintf(err, len, "max_job_memory (%llu bytes) must not be "
		    "above max_memory (%llu)",
		    (unsigned long long)c->max_job_memory,
		    (unsigned long long)c->max_memory);
		return (-1);
	}
	return (0);
}

/*
 * The balancing defaults (doc/algorithms.md §4): the mode a job gets
 * unless it names one, Power's interval and the topology of the paper's
 * pairs.  The names were checked when the file was read; they are
 * printed as the core spells them.
 */
void
masterd_apply_balance(void)
{
	enum sched_balance	 b = SCHED_BALANCE_NONE;
	enum sched_topology	 t = SCHED_TOPO_RING;

	sched_balance_parse(md->conf.balance, &b);
	strcpy(md->conf.balance, sched_balance_name(b));
	sched_topology_parse(md->conf.balance_topology, &t);
	strcpy(md->conf.balance_topology, sched_topology_name(t));
	if (md->sched != NULL)
		sched_set_balance(md->sched, md->conf.power_interval * 1000000,
		    t, mono_ns());
}

/*
 * Make the directory a file of ours lives in (e.g. R3Q_RUNDIR for the
 * control socket, R3Q_STATEDIR for the journal) if it does not exist;
 * only the last level, so a mistyped path still fails loudly.
 */
void
masterd_mkparent(const char *path, unsigned mode, const char *what)
{
	char	 dir[CONF_STRMAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, (mode_t)mode) == 0)
		log_info("%s: created %s", what, dir);
}

/*
 * A job's default policy, spelt as the core spells it (its name checked
 * when the file was read).  The job layer and the worker protocol read
 * the default policy and queue_factor from the configuration.
 */
static void
masterd_apply_policy(void)
{
	enum sched_policy	 p = SCHED_POLICY_R3Q;

	sched_policy_parse(md->conf.policy, &p);
	strcpy(md->conf.policy, sched_policy_name(p));
}

/* Hand the suspect detection settings to the core. */
void
masterd_apply_fault(void)
{
	struct sched_fault_config	 f;

	memset(&f, 0, sizeof(f));
	f.grace_ns = md->conf.suspect_grace * 1000000;
	f.suspect_limit = md->conf.suspect_limit;
	f.suspect_window_ns = md->conf.suspect_window * 1000000;
	f.cooldown_ns = md->conf.suspect_cooldown * 1000000;
	sched_set_fault(md->sched, &f);
}

/* Tell systemd what masterd is doing: workers, jobs, generations. */
void
masterd_status(void)
{
	struct job	*j;
	char		 jobs[160];
	size_t		 off = 0, n = 0;

	jobs[0] = '\0';
	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_state != JOB_RUNNING)
			continue;
		if (n++ < 4 && off < sizeof(jobs))
			off += (size_t)snprintf(jobs + off, sizeof(jobs) - off,
			    "%sjob %llu batch %llu", n > 1 ? ", " : "",
			    (unsigned long long)j->j_id,
			    (unsigned long long)job_gens_done(j));
	}
	if (job_journal_stalled())
		notify_status("journal stalled, nothing assigned: %s; %zu jobs "
		    "waiting", job_journal_stall_text(), n);
	else
		notify_status("%u workers, %zu jobs running%s%s", worker_count(),
		    n, n ? ": " : "", jobs);
}

/*
 * The usage summary: on standard output with status 0 when asked for
 * (-h, --help), on standard error with status 64 after a usage error.
 */
static void __attribute__((noreturn))
usage(int code)
{
	fprintf(code == 0 ? stdout : stderr,
	    "usage: masterd [-dhnv] [-f file] [-T list] [-u user]\n"
	    "  -d          stay in the foreground and log to stderr\n"
	    "  -f file     configuration file (default " MASTERD_CONF ")\n"
	    "  -h, --help  print this help and exit\n"
	    "  --version   print the version and the protocol version\n"
	    "  -n          check the configuration and the TLS files and exit "
	    "(-nv prints it)\n"
	    "  -T list     trace these subsystems (sched, journal, net, all),\n"
	    "              overriding the trace key\n"
	    "  -u user     with -n, check that user can read the TLS files\n"
	    "  -v          more verbose logging (repeatable)\n");
	if (code == 0 && fflush(stdout) == EOF)
		code = 1;
	exit(code);
}

/*
 * The TLS files must make a master: they load, the key is the
 * certificate's, the certificate says OU=master, comes from the CA and is
 * valid now, and user (if not NULL) can read them.
 */
static int
masterd_check_tls(const struct masterd_config *c, const char *user,
    char *err, size_t errlen)
{
	struct tls_check	 tc;

	memset(&tc, 0, sizeof(tc));
	tc.tc_ca = c->ca;
	tc.tc_cert = c->cert;
	tc.tc_key = c->key;
	tc.tc_role = "master";
	tc.tc_daemon = "masterd";
	tc.tc_server = 1;
	tc.tc_user = user;
	tc.tc_crl = c->crl;
	if (tls_check_files(&tc, err, errlen) == -1)
		return (-1);
	return (tokens_check(c, err, errlen));
}

/* The trace key, unless -T said otherwise (checked by check_trace). */
static void
masterd_apply_trace(void)
{
	char	 err[256];
	int	 bits;

	if (trace_flag != NULL)
		snprintf(md->conf.trace, sizeof(md->conf.trace), "%s",
		    trace_flag);
	if (log_trace_parse(md->conf.trace, &bits, err, sizeof(err)) == -1)
		return;
	log_tracing = bits;
	log_trace_names(bits, md->conf.trace, sizeof(md->conf.trace));
}

/*
 * SIGHUP: read the configuration and the TLS files again and apply them
 * without dropping a worker or a job.  A broken file changes nothing.
 * The control socket's path and the journal's take a restart.
 */
static void
masterd_reload(void)
{
	struct masterd_config	 nc;
	char			 err[1024];

	notify_reloading();
	masterd_config_defaults(&nc);
	if (conf_load(conffile, masterd_keys, &nc, conffile_given, err,
	    sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration", err);
		goto done;
	}
	if (masterd_config_check(&nc, err, sizeof(err)) == -1) {
		log_warnx("reload: %s: %s; keeping the running configuration",
		    conffile, err);
		goto done;
	}
	if (masterd_check_tls(&nc, NULL, err, sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration", err);
		goto done;
	}
	if (server_reload(&nc) == -1) {
		log_warnx("reload failed; keeping the running configuration");
		goto done;
	}
	if (strcmp(nc.control, md->conf.control) != 0) {
		log_warnx("reload: control takes a restart; still %s",
		    md->conf.control);
		strcpy(nc.control, md->conf.control);
	}
	if (strcmp(nc.http, md->conf.http) != 0) {
		log_warnx("reload: http takes a restart; still %s",
		    md->conf.http);
		strcpy(nc.http, md->conf.http);
	}
	if (strcmp(nc.journal, md->conf.journal) != 0) {
		log_warnx("reload: journal takes a restart; still %s",
		    md->conf.journal);
		strcpy(nc.journal, md->conf.journal);
	}
	md->conf = nc;
	masterd_apply_trace();
	server_liveness_arm();
	masterd_apply_fault();
	masterd_apply_balance();
	masterd_apply_policy();
	log_info("reloaded %s: default policy %s, queue_factor %s, TLS files "
	    "read again", conffile, md->conf.policy,
	    md->conf.queue_factor);
	server_expiry();
done:
	notify_ready();
}

/* SIGTERM, SIGINT: finish the loop and exit cleanly. */
static void
masterd_sig(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("exiting on signal %d", (int)sig);
		event_base_loopexit(md->base, NULL);
		break;
	case SIGHUP:
		masterd_reload();
		break;
	}
}

/*
 * One descriptor per worker: take the hard limit on open files, not the
 * soft one (often 1024), so that a large cluster fits without a unit
 * file's LimitNOFILE.
 */
static void
masterd_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warn("setrlimit(RLIMIT_NOFILE)");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	NULL, 'h' },
		{ "trace",	required_argument, NULL, 'T' },
		{ "version",	no_argument,	NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct event	*ev_term, *ev_int, *ev_hup;
	const char	*user = NULL;
	char		 err[1024];
	int		 ch, debug = 0, noaction = 0, verbose = 0, given = 0;
	int		 bits;

	while ((ch = getopt_long(argc, argv, "df:hnT:u:v", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'f':
			conffile = optarg;
			conffile_given = given = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'T':
			if (log_trace_parse(optarg, &bits, err,
			    sizeof(err)) == -1) {
				fprintf(stderr, "masterd: -T: %s\n", err);
				exit(64);
			}
			trace_flag = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			printf("masterd %s (R3Q protocol %d)\n", PACKAGE_VERSION,
			    R3Q_PROTOCOL);
			exit(fflush(stdout) == EOF ? 1 : 0);
		case 'h':
			usage(0);
		default:
			usage(64);
		}
	}
	if (optind != argc || (user != NULL && !noaction))
		usage(64);

	log_init("masterd", 1, LOG_DAEMON);
	log_setverbose(verbose);
	md = xcalloc(1, sizeof(*md));
	masterd_config_defaults(&md->conf);
	if (conf_load(conffile, masterd_keys, &md->conf, given, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		exit(CONF_EX_CONFIG);
	}
	if (masterd_config_check(&md->conf, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: %s\n", conffile, err);
		exit(CONF_EX_CONFIG);
	}
	masterd_apply_policy();
	masterd_apply_balance();
	masterd_apply_trace();
	if (noaction) {
		if (verbose) {
			conf_print(stdout, masterd_keys, &md->conf);
			fflush(stdout);
		}
		if (masterd_check_tls(&md->conf, user, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			exit(CONF_EX_CONFIG);
		}
		if (!verbose && user == NULL && geteuid() == 0)
			fprintf(stderr, "configuration OK (TLS files read as "
			    "root; -u r3q checks them as the units' user)\n");
		else if (!verbose)
			fprintf(stderr, "configuration OK\n");
		exit(0);
	}
	log_init("masterd", debug, LOG_DAEMON);
	if (masterd_check_tls(&md->conf, NULL, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		exit(CONF_EX_CONFIG);
	}

	signal(SIGPIPE, SIG_IGN);
	if (RAND_bytes((unsigned char *)&md->epoch, sizeof(md->epoch)) != 1 ||
	    RAND_bytes((unsigned char *)&md->boot, sizeof(md->boot)) != 1 ||
	    RAND_bytes((unsigned char *)&md->mac, sizeof(md->mac)) != 1)
		fatalx("cannot draw a random epoch and key");
	if (evthread_use_pthreads() == -1)
		fatalx("evthread_use_pthreads");
	if ((md->base = evbase_new()) == NULL)
		fatalx("evbase_new");
	if ((md->sched = sched_new()) == NULL)
		fatal("sched_new");
	masterd_apply_fault();
	masterd_apply_balance();
	masterd_nofile();
	job_init(md->sched, &md->conf);
	limits_init(&md->conf);
	exchange_init();
	server_init(md->base, &md->conf, md->sched);
	control_init(md->base, &md->conf);
	if (server_listen() == -1 || control_listen() == -1 ||
	    metrics_listen(md->base, &md->conf) == -1 ||
	    job_journal_open(md->base, &md->conf) == -1 || tokens_start() == -1)
		exit(1);

	ev_term = evsignal_new(md->base, SIGTERM, masterd_sig, NULL);
	ev_int = evsignal_new(md->base, SIGINT, masterd_sig, NULL);
	ev_hup = evsignal_new(md->base, SIGHUP, masterd_sig, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_hup, NULL);
	server_expiry();

	log_info("listening on %s, control socket %s, default policy %s",
	    server_listen_addr(), md->conf.control,
	    md->conf.policy);
	notify_watchdog_start(md->base);
	masterd_status();
	notify_ready();
	event_base_dispatch(md->base);
	notify_stopping();
	notify_watchdog_stop();

	metrics_close();
	control_close();
	server_close();
	exchange_free_all();
	tokens_free();
	job_journal_close();
	job_free_all();
	sched_free(md->sched);
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_hup);
	event_base_free(md->base);
	free(md);
	return (0);
}
