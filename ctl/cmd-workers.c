/*
 * r3qctl workers and drain: the workers connected to masterd, and taking
 * one out of service (drain: on the control socket only).
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "r3qctl.h"

/* A worker certificate this close to its end is marked. */
#define CERT_WARN	(30 * 86400)

/*
 * The relay the master verified for a relayed worker: the last on its
 * path (nearest first), into buf; NULL for a direct worker.
 */
static const char *
relay_of(const R3q__WorkerInfo *w, char *buf, size_t len)
{
	const char	*p;

	if (w->via == NULL || w->via[0] == '\0')
		return (NULL);
	p = strrchr(w->via, ',');
	snprintf(buf, len, "%s", p != NULL ? p + 1 : w->via);
	return (buf);
}

/* Whole days from now to a certificate's end, 0 once past. */
static int
cert_days(uint64_t not_after, time_t now)
{
	if ((time_t)not_after <= now)
		return (0);
	return ((int)(((time_t)not_after - now) / 86400));
}

/* r3qctl workers. */
static int
cmd_workers_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	Envelope	 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__ListWorkers l = R3Q__LIST_WORKERS__INIT;
	R3q__WorkerInfo	*w;
	char		 kinds[2048], since[32], hb[32], rtt[32], task[32];
	char		 cert[96], power[32], relay[64], addr[160];
	size_t		 i, k, off;
	struct tm	 tm;
	time_t		 t, now = time(NULL);
	int		 days;
	char		 name[256];

	if (cmd_parse_none(self, argc, argv) != argc)
		cmd_usage(self, EX_USAGE);
	env.body_case = R3Q__ENVELOPE__BODY_LIST_WORKERS;
	env.list_workers = &l;
	ctl_send(&env);
	ans = ctl_expect(ctl_recv(), R3Q__ENVELOPE__BODY_WORKER_LIST);
	printf("%-12s %-22s %4s %6s %-15s %4s %4s %7s %8s %8s %8s %7s %4s "
	    "%9s %-8s %6s %-19s %s\n", "NAME", "ADDRESS", "CPUS", "SPEED",
	    "KINDS", "CAP", "HELD", "RUNNING", "DONE", "RTT", "TASK", "LASTHB",
	    "SUSP", "POWER", "STATE", "CERT", "SINCE", "PEER");
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		kinds[0] = '\0';
		for (k = 0, off = 0; k < w->n_kinds && off < sizeof(kinds);
		    k++)
			off += (size_t)snprintf(kinds + off, sizeof(kinds) - off,
			    "%s%s", k ? "," : "", w->kinds[k]);
		t = (time_t)w->since_unix;
		localtime_r(&t, &tm);
		strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", &tm);
		if (w->last_heartbeat_ms == UINT64_MAX)
			snprintf(hb, sizeof(hb), "-");
		else
			snprintf(hb, sizeof(hb), "%.1fs",
			    (double)w->last_heartbeat_ms / 1000);
		/* The master's estimates: none before a first result. */
		if (w->rtt_ns == 0)
			snprintf(rtt, sizeof(rtt), "-");
		else
			snprintf(rtt, sizeof(rtt), "%.1fms",
			    (double)w->rtt_ns / 1e6);
		if (w->task_ns == 0)
			snprintf(task, sizeof(task), "-");
		else
			snprintf(task, sizeof(task), "%.1fms",
			    (double)w->task_ns / 1e6);
		/* Days its certificate has left; "!" within 30 days. */
		days = cert_days(w->cert_not_after, now);
		if (w->cert_not_after == 0)
			snprintf(cert, sizeof(cert), "-");
		else
			snprintf(cert, sizeof(cert), "%dd%s", days,
			    (time_t)w->cert_not_after - now < CERT_WARN ? "!" :
			    "");
		/* Power: the master's count / the heartbeat's. */
		snprintf(power, sizeof(power), "%u/%u", w->power,
		    w->power_reported);
		/*
		 * A relayed worker: its path; its address and certificate
		 * are its relay's word (the master verified the relay, not
		 * the worker's key), and marked so.
		 */
		if (relay_of(w, relay, sizeof(relay)) != NULL) {
			snprintf(name, sizeof(name), "%s via %s", w->name,
			    w->via);
			snprintf(addr, sizeof(addr), "%s(%s-says)",
			    w->address, relay);
			off = strlen(cert);
			snprintf(cert + off, sizeof(cert) - off, "(%s-says)",
			    relay);
		} else {
			snprintf(name, sizeof(name), "%s", w->name);
			snprintf(addr, sizeof(addr), "%s", w->address);
		}
		printf("%-12s %-22s %4u %6.2f %-15s %4u %4u %7u %8" PRIu64
		    " %8s %8s %7s %4" PRIu64 " %9s %-8s %6s %-19s %s\n", name,
		    addr, w->cpus, w->speed, kinds, w->capacity, w->held,
		    w->running, w->done, rtt, task, hb, w->suspects, power,
		    w->state, cert, since, w->peer_addr[0] ? w->peer_addr :
		    "-");
	}
	/* A certificate that runs out soon: say when. */
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		if (w->cert_not_after == 0 ||
		    (time_t)w->cert_not_after - now >= CERT_WARN)
			continue;
		t = (time_t)w->cert_not_after;
		gmtime_r(&t, &tm);
		strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S UTC", &tm);
		days = cert_days(w->cert_not_after, now);
		if (t <= now)
			printf("%s: its certificate expired on %s\n", w->name,
			    since);
		else
			printf("%s: its certificate expires in %d day%s, on "
			    "%s\n", w->name, days, days == 1 ? "" : "s", since);
	}
	/* Then why any of them is not ok, and the kinds they withdrew. */
	for (i = 0; i < ans->worker_list->n_workers; i++) {
		w = ans->worker_list->workers[i];
		if (w->why != NULL && w->why[0] != '\0')
			printf("%s: %s\n", w->name, w->why);
		for (k = 0; k < w->n_unavailable; k++)
			printf("%s: withdrew kind %s\n", w->name,
			    w->unavailable[k]);
	}
	frame_free(ans);
	return (EX_OK);
}



/*
 * r3qctl drain [--wait] WORKER: masterd gives the worker no
 * new task and tells it to drain; it hands back what it holds, finishes
 * what runs within its drain_timeout and leaves.  --wait follows it
 * until it has left.
 */
static int
cmd_drain_exec(const struct cmd_entry *self, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	   NULL, 'h' },
		{ "wait",	no_argument,	   NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct timespec		 ts = { 0, 200000000 };
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans;
	R3q__DrainWorker	 d = R3Q__DRAIN_WORKER__INIT;
	R3q__ListWorkers	 l = R3Q__LIST_WORKERS__INIT;
	R3q__WorkerInfo		*w;
	size_t			 i;
	int			 ch, wait = 0, here;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "hw", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			cmd_usage(self, EX_OK);
		case 'w':
			wait = 1;
			break;
		default:
			cmd_usage(self, EX_USAGE);
		}
	}
	if (optind != argc - 1)
		cmd_usage(self, EX_USAGE);
	d.name = argv[optind];
	env.body_case = R3Q__ENVELOPE__BODY_DRAIN_WORKER;
	env.drain_worker = &d;
	ctl_send(&env);
	ans = ctl_recv();
	if (ans->body_case != R3Q__ENVELOPE__BODY_WORKER_DRAINING ||
	    (w = ans->worker_draining->worker) == NULL)
		die(EX_FAIL, "unexpected %s answer", frame_body_name(ans));
	printf("%s: draining: no new tasks; it hands back the %u it holds "
	    "and leaves once its %u running finish\n", w->name, w->held,
	    w->running);
	fflush(stdout);
	frame_free(ans);
	while (wait) {
		env.body_case = R3Q__ENVELOPE__BODY_LIST_WORKERS;
		env.list_workers = &l;
		ctl_send(&env);
		ans = ctl_recv();
		if (ans->body_case != R3Q__ENVELOPE__BODY_WORKER_LIST)
			die(EX_FAIL, "unexpected %s answer",
			    frame_body_name(ans));
		for (i = 0, here = 0; i < ans->worker_list->n_workers; i++)
			if (strcmp(ans->worker_list->workers[i]->name,
			    d.name) == 0)
				here = 1;
		frame_free(ans);
		if (!here) {
			printf("%s: drained and left\n", d.name);
			break;
		}
		nanosleep(&ts, NULL);
	}
	return (EX_OK);
}

const struct cmd_entry cmd_workers_entry = {
	"workers", "", "list connected workers", NULL, cmd_workers_exec
};

const struct cmd_entry cmd_drain_entry = {
	"drain", "[--wait] WORKER",
	"the worker takes no new task, hands back those it holds,\n"
	"finishes those it runs, leaves (--wait: until it has left)",
	NULL, cmd_drain_exec
};
