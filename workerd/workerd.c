/*
 * workerd: runs on every node, keeps a local queue filled by the master,
 * and runs one execution thread per CPU.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "cpus.h"
#include "join.h"
#include "log.h"
#include "notify.h"
#include "tls.h"
#include "util.h"
#include "workerd.h"

/* R3Q_CONFDIR comes from configure (Makefile.am). */
#define WORKERD_CONF	R3Q_CONFDIR "/workerd.conf"

static int	check_profile(const char *, char *, size_t);
static int	check_workdir(const char *, char *, size_t);
static int	check_relay_listen(const char *, char *, size_t);
static int	check_peer_listen(const char *, char *, size_t);
static int	check_join(const char *, char *, size_t);
static int	check_state_dir(const char *, char *, size_t);
static int	check_slot_users(const char *, char *, size_t);

#define OFF(f)	offsetof(struct workerd_config, f)
const struct conf_key workerd_keys[] = {
	{ "master",		CONF_STRING,	OFF(master),	0, 0,
	    link_master_list },
	{ "name",		CONF_STRING,	OFF(name),	0, 0, NULL },
	{ "cpus",		CONF_UINT,	OFF(cpus),	0, 4096, NULL },
	{ "ca",			CONF_STRING,	OFF(ca),	0, 0, NULL },
	{ "cert",		CONF_STRING,	OFF(cert),	0, 0, NULL },
	{ "key",		CONF_STRING,	OFF(key),	0, 0, NULL },
	{ "crl",		CONF_STRING,	OFF(crl),	0, 0, NULL },
	{ "max_frame",		CONF_SIZE,	OFF(max_frame),	1024,
	    1ULL << 30, NULL },
	{ "max_output",		CONF_SIZE,	OFF(max_output), 0,
	    1ULL << 30, NULL },
	{ "reconnect_max",	CONF_DURATION,	OFF(reconnect_max), 100,
	    3600000, NULL },
	{ "speed",		CONF_DOUBLE,	OFF(speed),	0, 1000, NULL },
	{ "delay",		CONF_DURATION,	OFF(delay),	0, 60000, NULL },
	{ "load_profile",	CONF_STRING,	OFF(load_profile), 0, 0,
	    check_profile },
	{ "heartbeat",		CONF_DURATION,	OFF(heartbeat),	100, 60000, NULL },
	{ "link_timeout",	CONF_DURATION,	OFF(link_timeout), 0, 3600000,
	    NULL },
	{ "retry_permanent",	CONF_BOOL,	OFF(retry_permanent), 0, 1,
	    NULL },
	{ "sealed_frames",	CONF_BOOL,	OFF(sealed_frames), 0, 1, NULL },
	{ "kill_grace",		CONF_DURATION,	OFF(kill_grace), 0, 600000,
	    NULL },
	{ "workdir",		CONF_STRING,	OFF(workdir),	0, 0,
	    check_workdir },
	{ "slot_users",		CONF_STRING,	OFF(slot_users), 0, 0,
	    check_slot_users },
	{ "run_as_root",	CONF_BOOL,	OFF(run_as_root), 0, 1, NULL },
	{ "lifetime",		CONF_DURATION,	OFF(lifetime),	0,
	    366ULL * 86400000, NULL },
	{ "drain_timeout",	CONF_DURATION,	OFF(drain_timeout), 0,
	    86400000, NULL },
	{ "relay_listen",	CONF_STRING,	OFF(relay_listen), 0, 0,
	    check_relay_listen },
	{ "peer_listen",	CONF_STRING,	OFF(peer_listen), 0, 0,
	    check_peer_listen },
	{ "peer_delay",		CONF_DURATION,	OFF(peer_delay), 0, 60000, NULL },
	{ "join",		CONF_STRING,	OFF(join),	0, 0, check_join },
	{ "state_dir",		CONF_STRING,	OFF(state_dir),	0, 0,
	    check_state_dir },
	{ "renew_before",	CONF_DURATION,	OFF(renew_before), 0,
	    3650ULL * 86400000, NULL },
	{ NULL, 0, 0, 0, 0, NULL }
};

/*
 * The speed: written by the loop thread (start, SIGHUP), read by the
 * execution threads as each task starts (workerd_speed), so under
 * speed_mtx: a reload copies a whole profile, which a thread must not see
 * half-way (ThreadSanitizer saw the race in kinds-reload.sh).
 */
static pthread_mutex_t		 speed_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct load_profile	 profile;
static double			 base_speed = 1.0;
static uint64_t			 start_ms;

/*
 * Parse "T:F,T:F,...": from T seconds after start (ascending, the first
 * 0), run at F times the configured speed.
 */
int
load_profile_parse(const char *s, struct load_profile *lp, char *err,
    size_t errlen)
{
	const char	*p = s;
	char		*end;
	double		 t, f;

	memset(lp, 0, sizeof(*lp));
	if (*s == '\0')
		return (0);
	while (*p != '\0') {
		errno = 0;
		t = strtod(p, &end);
		if (end == p || *end != ':' || errno || !(t >= 0) ||
		    t > 1e7)
			goto bad;
		p = end + 1;
		f = strtod(p, &end);
		if (end == p || (*end != ',' && *end != '\0') || errno ||
		    !(f > 0) || f > 1000)
			goto bad;
		if (lp->lp_n == LOAD_MAXPOINTS) {
			snprintf(err, errlen, "load_profile: more than %d "
			    "points", LOAD_MAXPOINTS);
			return (-1);
		}
		if ((lp->lp_n == 0 && t != 0) || (lp->lp_n > 0 &&
		    t * 1000 <= (double)lp->lp_t[lp->lp_n - 1])) {
			snprintf(err, errlen, "load_profile: times must start "
			    "at 0 and increase");
			return (-1);
		}
		lp->lp_t[lp->lp_n] = (uint64_t)llround(t * 1000);
		lp->lp_factor[lp->lp_n++] = f;
		p = *end == ',' ? end + 1 : end;
	}
	return (0);
bad:
	snprintf(err, errlen, "load_profile: '%s' is not a list of "
	    "seconds:factor pairs such as 0:1.0,30:0.35", s);
	return (-1);
}

static int
check_profile(const char *v, char *err, size_t errlen)
{
	struct load_profile	 lp;

	return (load_profile_parse(v, &lp, err, errlen));
}

static int
check_workdir(const char *v, char *err, size_t errlen)
{
	if (v[0] != '/') {
		snprintf(err, errlen, "workdir: '%.200s' is not an absolute "
		    "path", v);
		return (-1);
	}
	return (0);
}

/* relay_listen: none, or the host:port workers below connect to. */
static int
check_relay_listen(const char *v, char *err, size_t errlen)
{
	char	 h[256], p[16];

	if (strcmp(v, "none") == 0 || conf_split_hostport(v, h, sizeof(h), p,
	    sizeof(p), "7411") == 0)
		return (0);
	snprintf(err, errlen, "relay_listen: '%.200s' is not none or "
	    "host:port", v);
	return (-1);
}

/* peer_listen: none, or the host:port other workers connect to. */
static int
check_peer_listen(const char *v, char *err, size_t errlen)
{
	char	 h[256], p[16];

	if (strcmp(v, "none") == 0 || conf_split_hostport(v, h, sizeof(h), p,
	    sizeof(p), "7412") == 0)
		return (0);
	snprintf(err, errlen, "peer_listen: '%.200s' is not none or "
	    "host:port", v);
	return (-1);
}

/* Relay mode: relay_listen is set. */
static int
workerd_relay(const struct workerd_config *c)
{
	return (c->relay_listen[0] != '\0' &&
	    strcmp(c->relay_listen, "none") != 0);
}

/* join: "HOST:PORT TOKEN" (join.h has the token's format), or empty. */
static int
check_join(const char *v, char *err, size_t errlen)
{
	struct join_token	 t;
	const char		*sp;
	char			 why[256];

	if (v[0] == '\0')
		return (0);
	if ((sp = strchr(v, ' ')) == NULL || sp == v) {
		snprintf(err, errlen, "join: HOST:PORT TOKEN expected");
		return (-1);
	}
	while (*sp == ' ')
		sp++;
	if (join_token_parse(sp, &t, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "join: %s", why);
		return (-1);
	}
	return (0);
}

static int
check_state_dir(const char *v, char *err, size_t errlen)
{
	if (v[0] != '/') {
		snprintf(err, errlen, "state_dir: '%.200s' is not an absolute "
		    "path", v);
		return (-1);
	}
	if (strlen(v) > 960) {
		snprintf(err, errlen, "state_dir: longer than 960 bytes");
		return (-1);
	}
	return (0);
}

/*
 * slot_users: none, or the prefix of the slot users' names (prefix0 ..
 * prefixN-1, N the execution threads): a user name's characters, short
 * enough for the number to fit in the 32 bytes useradd allows.
 */
static int
check_slot_users(const char *v, char *err, size_t errlen)
{
	size_t	 i, n = strlen(v);

	if (strcmp(v, "none") == 0)
		return (0);
	if (n == 0 || n > SLOT_PREFIX_MAX) {
		snprintf(err, errlen, "slot_users: '%.200s' is not none or a "
		    "user name prefix of 1 to %d characters", v,
		    SLOT_PREFIX_MAX);
		return (-1);
	}
	for (i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || v[i] == '_' ||
		    (i > 0 && ((v[i] >= '0' && v[i] <= '9') ||
		    v[i] == '-')))) {
			snprintf(err, errlen, "slot_users: '%.200s': a user "
			    "name prefix is [a-z_][a-z0-9_-]*", v);
			return (-1);
		}
	return (0);
}

/* This worker's speed now: the configured speed times the profile's. */
double
workerd_speed(void)
{
	uint64_t	 t = mono_ns() / NS_PER_MS - start_ms;
	double		 f = 1.0, speed;
	size_t		 i;

	pthread_mutex_lock(&speed_mtx);
	for (i = 0; i < profile.lp_n && profile.lp_t[i] <= t; i++)
		f = profile.lp_factor[i];
	speed = base_speed * f;
	pthread_mutex_unlock(&speed_mtx);
	return (speed);
}

/* Set the speed and load profile (loop thread). */
static void
workerd_set_speed(const struct load_profile *lp, double speed)
{
	pthread_mutex_lock(&speed_mtx);
	profile = *lp;
	base_speed = speed;
	pthread_mutex_unlock(&speed_mtx);
}

/* The built-in defaults, the same as the man page's. */
void
workerd_config_defaults(struct workerd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->master[0] = '\0';	/* join's HOST:PORT, or localhost:7411 */
	snprintf(c->ca, sizeof(c->ca), "%s", R3Q_CONFDIR "/ca.pem");
	snprintf(c->cert, sizeof(c->cert), "%s", R3Q_CONFDIR "/worker.pem");
	snprintf(c->key, sizeof(c->key), "%s", R3Q_CONFDIR "/worker.key");
	strcpy(c->crl, "none");
	c->max_frame = FRAME_MAX_DEFAULT;
	c->max_output = UINT64_MAX;	/* not set: see workerd_config */
	c->reconnect_max = 30000;
	c->speed = 1.0;
	c->heartbeat = 1000;
	c->kill_grace = EXT_GRACE_DEFAULT;
	strcpy(c->workdir, "/var/tmp");
	strcpy(c->slot_users, SLOT_USERS_DEFAULT);
	c->drain_timeout = DRAIN_TIMEOUT_DEFAULT;
	strcpy(c->relay_listen, "none");
	strcpy(c->peer_listen, "none");
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", R3Q_STATEDIR);
	c->renew_before = 30ULL * 86400000;
	c->sealed_frames = 1;
}

/*
 * The usage summary: on standard output with status 0 when asked for
 * (-h, --help), on standard error with status 64 after a usage error.
 */
static void __attribute__((noreturn))
usage(int code)
{
	fprintf(code == 0 ? stdout : stderr,
	    "usage: workerd [-dhnv] [-c cpus] [-f file] [-m host:port] "
	    "[-N name] [-u user]\n"
	    "               [--drain-timeout D] [--lifetime D] "
	    "[--KEY VALUE ...]\n"
	    "               [--join host:port token] [--state-dir dir]\n"
	    "  -c cpus       execution threads (default: the smallest of the "
	    "affinity\n"
	    "                mask, the cgroup's CPU quota and Slurm's CPUs)\n"
	    "  -d            stay in the foreground and log to stderr\n"
	    "  -f file       configuration file (default " WORKERD_CONF ")\n"
	    "  -h, --help    print this help and exit\n"
	    "  -m host:port  the master (overrides 'master')\n"
	    "  -N name       this worker's name (overrides 'name')\n"
	    "  -n            check the configuration and the TLS files and "
	    "exit (-nv prints it)\n"
	    "  -u user       with -n, check that user can read the "
	    "configuration file\n"
	    "                and the TLS files\n"
	    "  -v            more verbose logging (repeatable)\n"
	    "  --version     print the version and the protocol version\n"
	    "  --drain-timeout D  on a drain, give running tasks D, then "
	    "hand them back\n"
	    "  --lifetime D  drain after D (a batch allocation's end)\n"
	    "  --delay ms    delay every message by 2 x ms (WAN emulation)\n"
	    "  --join host:port token  join that master's cluster with a "
	    "token\n"
	    "                (r3qctl token create) unless state_dir has a "
	    "certificate;\n"
	    "                token '-' reads it from the standard input\n"
	    "  --state-dir dir  where a joined worker keeps its key and "
	    "certificates\n"
	    "                (overrides 'state_dir')\n"
	    "  --load-profile T:F,...  from T seconds on, run at F x speed\n"
	    "  --speed S     speed ratio vs the reference machine "
	    "(emulation)\n"
	    "  --KEY VALUE   any workerd.conf key, '_' written '-' "
	    "(KEY: ca, cert, ...)\n"
	    "Every key may come from the environment too: R3Q_ and the key "
	    "upper-cased\n"
	    "(R3Q_MASTER, R3Q_CERT, R3Q_CPUS, ...).  Flags win over the "
	    "environment,\n"
	    "which wins over the file; no file is needed.  SIGTERM drains: no "
	    "new tasks,\n"
	    "the held ones handed back.  --relay-listen host:port: relay mode, "
	    "carry\n"
	    "the workers that connect there to the master (workerd.conf(5), "
	    "RELAYS).\n"
	    "--peer-listen host:port: take part in exchanges between "
	    "workers (PEERS);\n"
	    "--peer-delay ms: emulated start-up of each message to another "
	    "worker.\n"
	    "--slot-users P: run the kinds' processes of slot i as user Pi "
	    "(default\n"
	    "r3q-slot: r3q-slot0, r3q-slot1, ...), none: as workerd's own user "
	    "(and\n"
	    "under root only with --run-as-root yes).\n");
	if (code == 0 && fflush(stdout) == EOF)
		code = 1;
	exit(code);
}

/* --version: ours and the protocol's. */
static void __attribute__((noreturn))
version(void)
{
	printf("workerd %s (R3Q protocol %d)\n", PACKAGE_VERSION,
	    R3Q_PROTOCOL);
	exit(fflush(stdout) == EOF ? 1 : 0);
}

static struct event_base	*base;
static struct workerd_config	 conf;
static const char		*conffile = WORKERD_CONF;
static int			 conffile_given;
static int			 exit_status;
static const char		*cpus_why = "cpus";	/* what set them */

/*
 * Command-line flags override keys, at start and at every reload: the
 * value of workerd_keys[i] given as a flag (-c, -m, -N, --KEY) is
 * flag_value[i].  Keys with a flag of their own (--join HOST:PORT TOKEN)
 * set it alike.
 */
#define KEYS_MAX	64
static const char	*flag_value[KEYS_MAX];
static char		 join_arg[CONF_STRMAX];	/* --join's HOST:PORT TOKEN */
static const char	*join_flag;		/* --join's HOST:PORT */

/* Note a flag's value for key; 0, or -1 for no such key. */
static int
flag_set(const char *key, const char *value)
{
	size_t	 i;

	for (i = 0; workerd_keys[i].name != NULL; i++)
		if (strcmp(workerd_keys[i].name, key) == 0) {
			flag_value[i] = value;
			return (0);
		}
	return (-1);
}

/*
 * A join token is a credential (one use of it makes a worker of the
 * cluster): a configuration file that holds one (join =) is refused when
 * others than its owner and group may read it, as a key is.  root:r3q
 * 0640 lets workerd.service's user r3q read it and nobody else.
 */
static int
workerd_join_mode(const struct workerd_config *c, char *err, size_t errlen)
{
	struct stat	 st;

	if (c->join[0] == '\0' || stat(conffile, &st) == -1 ||
	    !S_ISREG(st.st_mode) || (st.st_mode & 007) == 0)
		return (0);
	snprintf(err, errlen, "%s: permissions 0%03o are too open for a file "
	    "that holds a join token (join =): others may read the token; "
	    "chmod 640 and chown root:r3q (the group of the user workerd runs "
	    "as)", conffile, (unsigned)(st.st_mode & 0777));
	return (-1);
}

/*
 * Defaults, then the file, then the environment (R3Q_KEY), then the
 * flags; -1 with a message.
 */
static int
workerd_load(struct workerd_config *c, char *err, size_t errlen, int *usage)
{
	char	 msg[512];
	size_t	 i;

	*usage = 0;
	workerd_config_defaults(c);
	c->kinds = kinds_conf_new();
	if (conf_load_ext(conffile, workerd_keys, c, conffile_given,
	    kinds_conf_line, c->kinds, err, errlen) == -1 ||
	    kinds_conf_check(c->kinds, conffile, err, errlen) == -1 ||
	    workerd_join_mode(c, err, errlen) == -1)
		goto fail;
	if (conf_env(workerd_keys, c, "R3Q_", getenv, msg,
	    sizeof(msg)) == -1) {
		snprintf(err, errlen, "workerd: environment: %s", msg);
		goto fail;
	}
	for (i = 0; workerd_keys[i].name != NULL; i++) {
		if (flag_value[i] == NULL)
			continue;
		if (conf_set(workerd_keys, c, workerd_keys[i].name,
		    flag_value[i], msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "workerd: %s", msg);
			*usage = 1;
			goto fail;
		}
	}
	/*
	 * No master named: join's, else the one kept in state_dir at the
	 * join (join_setup(), join_reload()), else the default.
	 */
	c->master_unnamed = c->master[0] == '\0' && c->join[0] == '\0';
	if (c->master[0] == '\0') {
		snprintf(c->master, sizeof(c->master), "%s", c->join[0] ?
		    c->join : "localhost:7411");
		c->master[strcspn(c->master, " ")] = '\0';
	}
	/*
	 * Any one result must fit in a frame, output and all.  Not set, it
	 * is 1M or what a smaller max_frame leaves room for.
	 */
	if (c->max_output == UINT64_MAX)
		c->max_output = c->max_frame - RESULT_ROOM < MAX_OUTPUT_DEFAULT ?
		    c->max_frame - RESULT_ROOM : MAX_OUTPUT_DEFAULT;
	if (c->max_output > c->max_frame - RESULT_ROOM) {
		snprintf(err, errlen, "%s: max_output (%llu bytes) must be at "
		    "most max_frame less %d (%llu bytes), to leave room for "
		    "the rest of a result", conffile,
		    (unsigned long long)c->max_output, RESULT_ROOM,
		    (unsigned long long)(c->max_frame - RESULT_ROOM));
		goto fail;
	}
	return (0);
fail:
	kinds_conf_free(c->kinds);
	c->kinds = NULL;
	return (-1);
}

/*
 * The TLS files must make a worker: they load, the key is the
 * certificate's, the certificate says OU=worker, comes from the CA and is
 * valid now, and user (if not NULL) can read them.
 */
static int
workerd_check_tls(const struct workerd_config *c, const char *user,
    char *err, size_t errlen)
{
	struct tls_check	 tc;

	memset(&tc, 0, sizeof(tc));
	tc.tc_ca = c->ca;
	tc.tc_cert = c->cert;
	tc.tc_key = c->key;
	/* A relay proves its role to the workers below and to the master. */
	tc.tc_role = workerd_relay(c) ? "relay" : "worker";
	tc.tc_daemon = "workerd";
	tc.tc_user = user;
	tc.tc_crl = c->crl;
	return (tls_check_files(&tc, err, errlen));
}

/*
 * Warn of what runs out within 30 days: our
 * certificate, the CA, the CRL's next update.  At start, at every reload
 * and once a day.  (workerd has no metrics endpoint: masterd exports each
 * connected worker's certificate expiry.)
 */
static void
workerd_expiry(const struct workerd_config *c)
{
	struct tls_check	 tc;
	struct tls_expiry	 te;
	struct tls_crl		*crl = NULL;
	char			 err[1024];

	memset(&tc, 0, sizeof(tc));
	tc.tc_ca = c->ca;
	tc.tc_cert = c->cert;
	tc.tc_daemon = "workerd";
	tc.tc_crl = c->crl;
	if (tls_crl_configured(c->crl) && (crl = tls_crl_load(c->crl, c->ca,
	    err, sizeof(err))) == NULL)
		log_warnx("%s", err);
	if (tls_expiry(c->ca, c->cert, crl, &te) == -1)
		log_warnx("cannot read %s or %s for their expiry dates",
		    c->cert, c->ca);
	else
		tls_expiry_warn(&tc, &te, time(NULL), log_warnx);
	tls_crl_free(crl);
}

/* A warning of workerd -n, on standard error. */
static void __attribute__((format(printf, 1, 2)))
warn_stderr(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* Leave the loop and exit with status: the link cannot go on. */
void
workerd_exit(int status)
{
	exit_status = status;
	event_base_loopexit(base, NULL);
}

/* Fill in what defaults to the machine: CPUs, and the name from the CN. */
static int
workerd_finish(struct workerd_config *c, char *err, size_t errlen)
{
	char	 role[32], cn[64];

	if (c->cpus == 0)
		c->cpus = cpus_detect(&cpus_why);
	if (c->name[0] == '\0') {
		if (tls_cert_cn(c->cert, role, sizeof(role), cn,
		    sizeof(cn)) == -1) {
			snprintf(err, errlen, "cannot read a name (CN) from the "
			    "certificate %.900s; set 'name' or fix 'cert'", c->cert);
			return (-1);
		}
		snprintf(c->name, sizeof(c->name), "%s", cn);
	}
	return (0);
}

static void	workerd_lifetime_arm(int);

/*
 * SIGHUP: read the configuration again and apply it: the master's address,
 * the TLS files (for the next connection), max_frame, max_output (for
 * tasks that end from now on), the emulation knobs, lifetime (still
 * counted from the start: workerd_lifetime_arm()), and the kinds (new
 * and changed ones for tasks received from now on; a task already here
 * finishes under the definition it came with).  cpus and name take a
 * restart.  A broken file, or a kind that does not open, changes nothing.
 */
static void
workerd_reload(void)
{
	struct workerd_config	 nc;
	struct load_profile	 lp;
	char			 err[1024];
	uint64_t		 life = conf.lifetime;
	int			 u, changed;

	notify_reloading();
	nc.kinds = NULL;
	if (workerd_load(&nc, err, sizeof(err), &u) == -1 ||
	    (join_reload(&nc), 0) ||
	    workerd_check_tls(&nc, NULL, err, sizeof(err)) == -1 ||
	    workerd_finish(&nc, err, sizeof(err)) == -1 ||
	    load_profile_parse(nc.load_profile, &lp, err, sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration", err);
		goto done;
	}
	if (nc.cpus != conf.cpus) {
		log_warnx("reload: cpus takes a restart; still %u", conf.cpus);
		nc.cpus = conf.cpus;
	}
	if (strcmp(nc.name, conf.name) != 0) {
		log_warnx("reload: name takes a restart; still %s", conf.name);
		strcpy(nc.name, conf.name);
	}
	if (strcmp(nc.peer_listen, conf.peer_listen) != 0) {
		log_warnx("reload: peer_listen takes a restart; still %s",
		    conf.peer_listen);
		strcpy(nc.peer_listen, conf.peer_listen);
	}
	if (strcmp(nc.relay_listen, conf.relay_listen) != 0) {
		log_warnx("reload: relay_listen takes a restart; still %s",
		    conf.relay_listen);
		strcpy(nc.relay_listen, conf.relay_listen);
	}
	kinds_conf_audit(nc.kinds, nc.slot_users, conffile, log_warnx);
	if (kinds_apply(&nc, &changed, err, sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration", err);
		goto done;
	}
	if (link_reload(&nc) == -1) {
		/* The kinds are in place: say so, keep the rest. */
		log_warnx("reload failed; keeping the running configuration "
		    "but for the kinds");
		kinds_conf_free(conf.kinds);
		conf.kinds = nc.kinds;
		nc.kinds = NULL;
		goto kinds;
	}
	kinds_conf_free(conf.kinds);
	conf = nc;
	nc.kinds = NULL;
	relay_reload(&conf);
	workerd_set_speed(&lp, conf.speed);
	exec_set_max_output(conf.max_output);
	log_info("reloaded %s: master %s, speed %g", conffile, conf.master,
	    conf.speed);
	if (conf.lifetime != life)
		workerd_lifetime_arm(1);
	workerd_expiry(&conf);
kinds:
	if (changed) {
		log_info("the kinds offered changed; telling the master");
		link_kinds_changed();
	}
done:
	kinds_conf_free(nc.kinds);
	notify_ready();
}

static void
workerd_expiry_daily(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	workerd_expiry(&conf);
}

/*
 * Draining: no new tasks, the held ones back to the master at
 * once, the running ones given drain_timeout, then leave with status 0.
 */
static struct event	*ev_drain, *ev_stuck, *ev_life;
/* ms beyond kill_grace: 10 s for interrupted tasks (ev_stuck), 5 to go. */
#define DRAIN_STOP_MARGIN	15000
static int		 draining, interrupted;

/* Interrupt the running tasks to hand them back (drain_timeout, signal). */
static void
workerd_interrupt(const char *why)
{
	struct timeval	 tv;
	uint64_t	 ms = conf.kill_grace + 10000;
	unsigned	 n;

	if (interrupted)
		return;
	interrupted = 1;
	evtimer_del(ev_drain);
	notify_extend_timeout(conf.kill_grace + DRAIN_STOP_MARGIN);
	if ((n = exec_interrupt_all()) > 0)
		log_warnx("%s: interrupting %u running task%s to hand %s back",
		    why, n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	/* A task that ignores its interruption is not waited for forever. */
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(ev_stuck, &tv);
}

static void
workerd_drain_expired(evutil_socket_t fd, short ev, void *arg)
{
	char	 d[32], why[64];

	(void)fd;
	(void)ev;
	(void)arg;
	conf_format_duration(d, sizeof(d), conf.drain_timeout);
	snprintf(why, sizeof(why), "drain_timeout (%s) ran out", d);
	workerd_interrupt(why);
}

static void
workerd_stuck(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	log_warnx("interrupted tasks did not stop within kill_grace + 10s; "
	    "leaving without them (the master counts them lost)");
	_exit(1);
}

/* Begin to drain, once; why is said to the master and logged. */
void
workerd_drain(const char *why)
{
	struct timeval	 tv;

	if (draining)
		return;
	draining = 1;
	evtimer_del(ev_life);
	tv.tv_sec = (time_t)(conf.drain_timeout / 1000);
	tv.tv_usec = (suseconds_t)(conf.drain_timeout % 1000) * 1000;
	evtimer_add(ev_drain, &tv);
	notify_stopping();
	/*
	 * Under systemd, systemctl stop waits as long as the drain may take
	 * (drain_timeout, then kill_grace + 10 s for interrupted tasks, then
	 * a margin to leave), even past a shorter TimeoutStopSec=.
	 */
	notify_extend_timeout(conf.drain_timeout + conf.kill_grace +
	    DRAIN_STOP_MARGIN);
	link_drain(why);
}

static struct timespec	 life_start;	/* lifetime counts from here */

/*
 * Plan the drain at lifetime after the start (none for 0); at a reload
 * (SIGHUP) a changed lifetime moves it, a past one drains at once.
 */
static void
workerd_lifetime_arm(int reload)
{
	struct timespec	 now;
	struct timeval	 tv;
	uint64_t	 spent, left;
	char		 d[32];

	if (draining)
		return;
	evtimer_del(ev_life);
	conf_format_duration(d, sizeof(d), conf.lifetime);
	if (conf.lifetime == 0) {
		if (reload)
			log_info("reload: lifetime 0s: no drain planned");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	spent = (uint64_t)(now.tv_sec - life_start.tv_sec) * 1000 +
	    (uint64_t)((now.tv_nsec - life_start.tv_nsec) / 1000000);
	left = conf.lifetime > spent ? conf.lifetime - spent : 0;
	if (reload)
		log_info("reload: lifetime %s: draining in %llu ms", d,
		    (unsigned long long)left);
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	evtimer_add(ev_life, &tv);
}

static void
workerd_lifetime(evutil_socket_t fd, short ev, void *arg)
{
	char	 d[32], why[64];

	(void)fd;
	(void)ev;
	(void)arg;
	conf_format_duration(d, sizeof(d), conf.lifetime);
	snprintf(why, sizeof(why), "lifetime %s reached", d);
	workerd_drain(why);
}

/*
 * SIGTERM and SIGINT drain; one during a drain interrupts the running
 * tasks and hands them back at once; one more leaves at once, the master
 * requeueing what is left as for a lost worker.
 */
static void
workerd_sig(evutil_socket_t sig, short ev, void *arg)
{
	const char	*name = sig == SIGINT ? "SIGINT" : "SIGTERM";
	char		 why[64];

	(void)ev;
	(void)arg;
	if (sig == SIGHUP) {
		workerd_reload();
		return;
	}
	if (!draining) {
		log_info("%s: draining (another one interrupts the running "
		    "tasks)", name);
		workerd_drain(name);
	} else if (!interrupted) {
		snprintf(why, sizeof(why), "%s during the drain", name);
		workerd_interrupt(why);
	} else {
		log_info("%s again: leaving at once", name);
		event_base_loopexit(base, NULL);
	}
}

/* --join HOST:PORT -: the token is the standard input's first line. */
static void
join_token_stdin(char *tok, size_t len)
{
	if (fgets(tok, (int)len, stdin) == NULL) {
		fprintf(stderr, "workerd: --join %s -: no token on the "
		    "standard input\n", join_flag);
		exit(64);
	}
	tok[strcspn(tok, "\r\n")] = '\0';
	if (tok[0] == '\0') {
		fprintf(stderr, "workerd: --join %s -: an empty line on the "
		    "standard input, not a token\n", join_flag);
		exit(64);
	}
}

int
main(int argc, char *argv[])
{
	/*
	 * The flags of their own; then every key as --KEY VALUE ('_'
	 * written '-'), unless one of these has its name.
	 */
	static const struct option fixed[] = {
		{ "join",		required_argument, NULL, 'J' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct option		 longopts[KEYS_MAX + 8];
	static char		 optnames[KEYS_MAX][64];
	struct event		*ev_term, *ev_int, *ev_hup, *ev_day;
	struct load_profile	 lp;
	struct timeval		 day = { 86400, 0 };
	const char		*user = NULL;
	struct ext_cred		*cr;
	char			 err[1024], tok[256], *p;
	int			 ch, debug = 0, noaction = 0, verbose = 0, u;
	size_t			 i, k, n = 0;

	for (i = 0; fixed[i].name != NULL; i++)
		longopts[n++] = fixed[i];
	for (k = 0; workerd_keys[k].name != NULL; k++) {
		if (k == KEYS_MAX)
			fatalx("more than %d keys", KEYS_MAX);
		snprintf(optnames[k], sizeof(optnames[k]), "%s",
		    workerd_keys[k].name);
		for (p = optnames[k]; *p != '\0'; p++)
			if (*p == '_')
				*p = '-';
		for (i = 0; fixed[i].name != NULL &&
		    strcmp(fixed[i].name, optnames[k]) != 0; i++)
			;
		if (fixed[i].name != NULL)
			continue;
		longopts[n].name = optnames[k];
		longopts[n].has_arg = required_argument;
		longopts[n].flag = NULL;
		longopts[n].val = 1000 + (int)k;
		n++;
	}
	memset(&longopts[n], 0, sizeof(longopts[n]));

	while ((ch = getopt_long(argc, argv, "c:df:hm:N:nu:v", longopts,
	    NULL)) != -1) {
		if (ch >= 1000 && ch < 1000 + KEYS_MAX) {
			flag_value[ch - 1000] = optarg;
			continue;
		}
		switch (ch) {
		case 'm':
			(void)flag_set("master", optarg);
			break;
		case 'N':
			(void)flag_set("name", optarg);
			break;
		case 'c':
			(void)flag_set("cpus", optarg);
			break;
		case 'J':
			join_flag = optarg;
			break;
		case 'd':
			debug = 1;
			break;
		case 'f':
			conffile = optarg;
			conffile_given = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'u':
			user = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			version();
		case 'h':
			usage(0);
		default:
			usage(64);
		}
	}
	/*
	 * --join HOST:PORT TOKEN: the token is the one operand, "-" to read
	 * it from the standard input.  An operand is overwritten once read,
	 * so that ps and /proc/PID/cmdline do not show it for the daemon's
	 * whole life (it was visible from the exec to here).
	 */
	if (join_flag != NULL) {
		if (optind != argc - 1)
			usage(64);
		if (strcmp(argv[optind], "-") == 0)
			join_token_stdin(tok, sizeof(tok));
		else {
			snprintf(tok, sizeof(tok), "%s", argv[optind]);
			memset(argv[optind], 'x', strlen(argv[optind]));
		}
		optind++;
		if ((size_t)snprintf(join_arg, sizeof(join_arg), "%s %s",
		    join_flag, tok) >= sizeof(join_arg)) {
			fprintf(stderr, "workerd: --join: too long\n");
			exit(64);
		}
		explicit_bzero(tok, sizeof(tok));
		(void)flag_set("join", join_arg);
	}
	if (optind != argc || (user != NULL && !noaction))
		usage(64);

	log_init("workerd", 1, LOG_DAEMON);
	log_setverbose(verbose);
	if (workerd_load(&conf, err, sizeof(err), &u) == -1) {
		fprintf(stderr, "%s\n", err);
		exit(u ? 64 : CONF_EX_CONFIG);
	}
	if (noaction) {
		if (verbose) {
			conf_print(stdout, workerd_keys, &conf);
			kinds_conf_print(stdout, conf.kinds);
		} else
			kinds_conf_list(stdout, conf.kinds, &conf);
		fflush(stdout);
		kinds_conf_audit(conf.kinds, conf.slot_users, conffile, warn_stderr);
		if (kinds_conf_check_plugins(conf.kinds, conffile, err,
		    sizeof(err)) == -1 || kinds_slot_users(&conf, 0, &cr,
		    err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			exit(CONF_EX_CONFIG);
		}
		free(cr);
		/*
		 * The file itself first: the unit's user must read it (a
		 * 0600 root file with join = is a common first try).
		 */
		if (user != NULL && strcmp(conffile, "/dev/null") != 0) {
			const char	*cf[] = { conffile };

			if (tls_check_user(user, cf, 1, err,
			    sizeof(err)) == -1) {
				fprintf(stderr, "%s\n", err);
				exit(CONF_EX_CONFIG);
			}
		}
		if (join_noaction(&conf)) {
			if (!verbose)
				fprintf(stderr, "configuration OK (not joined "
				    "yet: workerd joins at start with its "
				    "token)\n");
			exit(0);
		}
		if (workerd_check_tls(&conf, user, err, sizeof(err)) == -1) {
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
	log_init("workerd", debug, LOG_DAEMON);
#ifdef PR_SET_DUMPABLE
	/*
	 * Not dumpable: /proc/<workerd>/ is root's, so that no process of
	 * workerd's user (a kind run with slot_users = none, say) may read
	 * its memory, environment or descriptors, and no core holds its key.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		log_warn("prctl PR_SET_DUMPABLE");
#endif
	/*
	 * A peer that closes while we write is an error to report (EPIPE),
	 * from the join on: a master gone in the middle of one did end
	 * workerd silently.
	 */
	signal(SIGPIPE, SIG_IGN);
	if (join_setup(&conf, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		exit(CONF_EX_CONFIG);
	}
	if (workerd_check_tls(&conf, NULL, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		exit(CONF_EX_CONFIG);
	}
	if (workerd_finish(&conf, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		exit(CONF_EX_CONFIG);
	}

	kinds_conf_audit(conf.kinds, conf.slot_users, conffile, log_warnx);
	if (kinds_apply(&conf, &u, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		exit(CONF_EX_CONFIG);
	}
	load_profile_parse(conf.load_profile, &lp, err, sizeof(err));
	workerd_set_speed(&lp, conf.speed);
	start_ms = mono_ns() / NS_PER_MS;
	exec_set_max_output(conf.max_output);

	/*
	 * Each execution thread runs BLAS single-threaded: the threads are
	 * the parallelism, one per CPU (doc/design.md).
	 */
	openblas_set_num_threads(1);
	if (evthread_use_pthreads() == -1)
		fatalx("evthread_use_pthreads");
	if ((base = evbase_new()) == NULL)
		fatalx("evbase_new");
	ev_term = evsignal_new(base, SIGTERM, workerd_sig, NULL);
	ev_int = evsignal_new(base, SIGINT, workerd_sig, NULL);
	ev_hup = evsignal_new(base, SIGHUP, workerd_sig, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_hup, NULL);
	workerd_expiry(&conf);
	if ((ev_day = event_new(base, -1, EV_PERSIST, workerd_expiry_daily,
	    NULL)) == NULL)
		fatalx("event_new");
	event_add(ev_day, &day);
	if ((ev_drain = evtimer_new(base, workerd_drain_expired,
	    NULL)) == NULL || (ev_stuck = evtimer_new(base, workerd_stuck,
	    NULL)) == NULL || (ev_life = evtimer_new(base, workerd_lifetime,
	    NULL)) == NULL)
		fatalx("evtimer_new");
	clock_gettime(CLOCK_MONOTONIC, &life_start);
	workerd_lifetime_arm(0);

	link_start(base, &conf, conf.name);
	relay_start(base, &conf);
	peer_start(base, &conf);
	mcrl_start(&conf);
	exec_start(base, conf.cpus, link_wake);
	log_info("worker %s: %u execution threads (%s), master %s, speed "
	    "%g%s%s", conf.name, conf.cpus, cpus_why, conf.master, conf.speed,
	    conf.delay ? ", emulated delay" : "",
	    lp.lp_n ? ", load profile" : "");
	/* Ready once the first connection is up or being retried. */
	notify_watchdog_start(base);
	notify_ready();
	event_base_dispatch(base);
	notify_stopping();
	notify_watchdog_stop();

	exec_stop();
	peer_stop();
	relay_stop();
	mcrl_stop();
	link_stop();
	kinds_clear();
	kinds_conf_free(conf.kinds);
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_hup);
	event_free(ev_day);
	event_free(ev_drain);
	event_free(ev_stuck);
	event_free(ev_life);
	event_base_free(base);
	return (exit_status);
}
