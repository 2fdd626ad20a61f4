/*
 * workerd: runs on every node, keeps a local queue filled by the master,
 * and runs one execution thread per CPU.
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cblas.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "log.h"
#include "tls.h"
#include "util.h"
#include "workerd.h"

#define WORKERD_CONF	"/etc/r3q/workerd.conf"

#define OFF(f)	offsetof(struct workerd_config, f)
const struct conf_key workerd_keys[] = {
	{ "master",		CONF_HOSTPORT,	OFF(master),	0, 0, NULL },
	{ "name",		CONF_STRING,	OFF(name),	0, 0, NULL },
	{ "cpus",		CONF_UINT,	OFF(cpus),	0, 4096, NULL },
	{ "ca",			CONF_STRING,	OFF(ca),	0, 0, NULL },
	{ "cert",		CONF_STRING,	OFF(cert),	0, 0, NULL },
	{ "key",		CONF_STRING,	OFF(key),	0, 0, NULL },
	{ "max_frame",		CONF_SIZE,	OFF(max_frame),	1024,
	    1ULL << 30, NULL },
	{ "reconnect_max",	CONF_DURATION,	OFF(reconnect_max), 100,
	    3600000, NULL },
	{ NULL, 0, 0, 0, 0, NULL }
};

/* The built-in defaults, the same as the man page's. */
void
workerd_config_defaults(struct workerd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->master, "localhost:7411");
	strcpy(c->ca, "/etc/r3q/ca.pem");
	strcpy(c->cert, "/etc/r3q/worker.pem");
	strcpy(c->key, "/etc/r3q/worker.key");
	c->max_frame = FRAME_MAX_DEFAULT;
	c->reconnect_max = 30000;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: workerd [-dhnv] [-c cpus] [-f file] "
	    "[-m host:port] [-N name]\n"
	    "  -c cpus       execution threads (default: online CPUs)\n"
	    "  -d            stay in the foreground and log to stderr\n"
	    "  -f file       configuration file (default " WORKERD_CONF ")\n"
	    "  -h            print this help and exit\n"
	    "  -m host:port  the master (overrides 'master')\n"
	    "  -N name       this worker's name (overrides 'name')\n"
	    "  -n            check the configuration and exit (-nv prints "
	    "it)\n"
	    "  -v            more verbose logging (repeatable)\n");
	exit(64);
}

static struct event_base	*base;

static void
workerd_sig(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	(void)arg;
	log_info("exiting on signal %d", (int)sig);
	event_base_loopexit(base, NULL);
}

int
main(int argc, char *argv[])
{
	struct workerd_config	 conf;
	struct event		*ev_term, *ev_int;
	const char		*conffile = WORKERD_CONF;
	const char		*o_master = NULL, *o_name = NULL, *o_cpus = NULL;
	char			 err[1024], role[32], cn[64];
	int			 ch, debug = 0, noaction = 0, verbose = 0;
	int			 given = 0;
	long			 online;

	while ((ch = getopt(argc, argv, "c:df:hm:N:nv")) != -1) {
		switch (ch) {
		case 'c':
			o_cpus = optarg;
			break;
		case 'd':
			debug = 1;
			break;
		case 'f':
			conffile = optarg;
			given = 1;
			break;
		case 'm':
			o_master = optarg;
			break;
		case 'N':
			o_name = optarg;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	log_init("workerd", 1, LOG_DAEMON);
	log_setverbose(verbose);
	workerd_config_defaults(&conf);
	if (conf_load(conffile, workerd_keys, &conf, given, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		exit(CONF_EX_CONFIG);
	}
	if ((o_master && conf_set(workerd_keys, &conf, "master", o_master,
	    err, sizeof(err)) == -1) ||
	    (o_name && conf_set(workerd_keys, &conf, "name", o_name, err,
	    sizeof(err)) == -1) ||
	    (o_cpus && conf_set(workerd_keys, &conf, "cpus", o_cpus, err,
	    sizeof(err)) == -1)) {
		fprintf(stderr, "workerd: %s\n", err);
		exit(64);
	}
	if (noaction) {
		if (verbose)
			conf_print(stdout, workerd_keys, &conf);
		else
			fprintf(stderr, "configuration OK\n");
		exit(0);
	}
	log_init("workerd", debug, LOG_DAEMON);

	if (conf.cpus == 0) {
		online = sysconf(_SC_NPROCESSORS_ONLN);
		conf.cpus = online > 0 ? (unsigned)online : 1;
	}
	if (conf.name[0] == '\0') {
		if (tls_cert_cn(conf.cert, role, sizeof(role), cn,
		    sizeof(cn)) == -1)
			fatalx("cannot read a name (CN) from the certificate "
			    "%s; set 'name' or fix 'cert'", conf.cert);
		snprintf(conf.name, sizeof(conf.name), "%s", cn);
	}

	/* Each execution thread runs BLAS single-threaded (DESIGN.md). */
	openblas_set_num_threads(1);
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() == -1)
		fatalx("evthread_use_pthreads");
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	ev_term = evsignal_new(base, SIGTERM, workerd_sig, NULL);
	ev_int = evsignal_new(base, SIGINT, workerd_sig, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_int, NULL);

	link_start(base, &conf, conf.name);
	exec_start(base, conf.cpus, link_wake);
	log_info("worker %s: %u execution threads, master %s", conf.name,
	    conf.cpus, conf.master);
	event_base_dispatch(base);

	exec_stop();
	link_stop();
	event_free(ev_term);
	event_free(ev_int);
	event_base_free(base);
	return (0);
}
