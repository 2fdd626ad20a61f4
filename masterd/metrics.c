/*
 * masterd's optional HTTP listener (libevent's evhttp): /metrics in the
 * Prometheus text format and /status in JSON, for monitoring.  Read-only;
 * bound to loopback unless the configuration names another address.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "tls.h"
#include "util.h"

static struct evhttp	*http;
static struct evconnlistener *http_listener;
/* The configuration metrics_listen() was given: a reload overwrites it
   in place. */
static const struct masterd_config *mconf;

/*
 * The HTTP connections, for max_http, max_http_per_addr and
 * connect_rate.  libevent 2.1's evhttp has no hook at accept: the
 * bufferevent it asks metrics_bev for is the only handle on a new
 * connection, and it gets its socket after.  So each is kept here with a
 * reference of ours: a zero-delay event (hc_check), which runs once
 * evhttp has given it its socket and before the loop polls it, checks
 * the peer against connect_rate and its address's share and shuts a
 * refused one down (evhttp sees it close and frees it, no request read);
 * and metrics_sweep sees when evhttp has freed it (its callbacks are
 * gone) and drops our reference, which closes the socket.  At max_http
 * connections the listener stops accepting until one goes: the others
 * wait in the kernel's backlog, costing masterd nothing.
 */
struct hconn {
	struct bufferevent	*hc_bev;
	struct event		*hc_check;
	char			 hc_addr[INET6_ADDRSTRLEN]; /* once checked */
	int			 hc_shut;	/* closed by us: evhttp frees
						   it soon */
	TAILQ_ENTRY(hconn)	 hc_entry;
};
static TAILQ_HEAD(, hconn) hconns = TAILQ_HEAD_INITIALIZER(hconns);
static unsigned		 nhconns;
static struct event	*hc_sweeper;	/* while there are any */
static int		 hc_full;	/* at max_http: not accepting */
static uint64_t		 hc_full_said;	/* mono ns of the last line */
static uint64_t		 hc_addr_said;	/* ... of max_http_per_addr's */
#define HC_SWEEP_MS	200
#define HC_LOG_NS	(10 * NS_PER_SEC)

/*
 * An HTTP client is read into at most HTTP_INPUT_MAX bytes at a time: while
 * an answer waits to be read, libevent keeps reading the connection (only
 * to see it close), so pipelined requests from a client that does not read
 * would pile up without end.  Past the mark the socket is not read, and
 * the client's own sends block.  Its answers are one at a time (the next
 * request is taken once the last answer has left), and a connection whose
 * answer does not move for http_timeout() is closed.
 */
#define HTTP_INPUT_MAX	65536
#define HTTP_HEADERS_MAX 8192
#define HTTP_TIMEOUT_MAX 10000		/* ms */

/* How long an HTTP connection may stand still: output_timeout, 10 s at most. */
static uint64_t
metrics_timeout_ms(void)
{
	return (mconf->output_timeout < HTTP_TIMEOUT_MAX ?
	    mconf->output_timeout : HTTP_TIMEOUT_MAX);
}

/*
 * Escape a name for a Prometheus label or a JSON string: backslash before
 * quotes and backslashes, control characters dropped.  (Worker names come
 * from certificates; mkcerts keeps them tame, other CAs may not.)
 */
static void
metrics_label(struct evbuffer *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			evbuffer_add(b, "\\", 1);
		if ((unsigned char)*s >= 0x20)
			evbuffer_add(b, s, 1);
	}
}

/*
 * Whether a measure that is positive once measured (an efficiency, a
 * round trip, a task's time) has a value: 0 means nothing measured yet.
 */
static int
status_known(double v)
{
	return (isfinite(v) && v > 0);
}

/* ,"name":value in JSON, with null for a value not known (yet). */
static void
status_number(struct evbuffer *b, const char *name, int known, double v)
{
	if (known && isfinite(v))
		evbuffer_add_printf(b, ",\"%s\":%.17g", name, v);
	else
		evbuffer_add_printf(b, ",\"%s\":null", name);
}

static void	metrics_sweep_cb(evutil_socket_t, short, void *);

/* Forget a connection evhttp has freed: our reference closes its socket. */
static void
hconn_free(struct hconn *hc)
{
	TAILQ_REMOVE(&hconns, hc, hc_entry);
	nhconns--;
	event_free(hc->hc_check);
	bufferevent_decref(hc->hc_bev);
	free(hc);
}

/*
 * The connections evhttp has freed since the last sweep go; below
 * max_http again, the listener takes connections again.
 */
static void
metrics_sweep(void)
{
	struct hconn		*hc, *next;
	bufferevent_data_cb	 readcb;

	for (hc = TAILQ_FIRST(&hconns); hc != NULL; hc = next) {
		next = TAILQ_NEXT(hc, hc_entry);
		bufferevent_getcb(hc->hc_bev, &readcb, NULL, NULL, NULL);
		if (readcb == NULL)
			hconn_free(hc);
	}
	if (hc_full && nhconns < mconf->max_http && http_listener != NULL) {
		hc_full = 0;
		evconnlistener_enable(http_listener);
	}
	if (nhconns == 0 && hc_sweeper != NULL)
		event_del(hc_sweeper);
}

static void
metrics_sweep_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	metrics_sweep();
}

/* max_http_per_addr, or its default: a quarter of max_http, at least 1. */
static unsigned
hconn_addr_max(void)
{
	if (mconf->max_http_per_addr != 0)
		return (mconf->max_http_per_addr);
	return (mconf->max_http >= 4 ? mconf->max_http / 4 : 1);
}

/*
 * max_http_per_addr: no address holds more than its share of max_http,
 * so that one process holding idle connections cannot keep a monitor
 * elsewhere from its scrape.  Past the share, the address's oldest idle
 * connection (no answer queued to it) is closed for the new one: a
 * monitor on the same host as the process that holds them still gets
 * its scrape.  With none idle the new one is refused.  0, or -1 if hc
 * must go.
 */
static int
hconn_share(struct hconn *hc)
{
	struct hconn	*o, *idle = NULL;
	unsigned	 n = 0;
	uint64_t	 now;
	int		 say;

	TAILQ_FOREACH(o, &hconns, hc_entry) {
		if (o->hc_shut || strcmp(o->hc_addr, hc->hc_addr) != 0)
			continue;
		n++;
		if (idle == NULL && o != hc && evbuffer_get_length(
		    bufferevent_get_output(o->hc_bev)) == 0)
			idle = o;
	}
	if (n <= hconn_addr_max())
		return (0);
	server_cap_count(CAP_HTTP_ADDR);
	now = mono_ns();
	if ((say = hc_addr_said == 0 || now - hc_addr_said >= HC_LOG_NS))
		hc_addr_said = now;
	if (idle != NULL) {
		if (say)
			log_warnx("http: %s holds %u connections "
			    "(max_http_per_addr %u): its oldest idle one "
			    "closed for a new one", hc->hc_addr, n - 1,
			    hconn_addr_max());
		idle->hc_shut = 1;
		shutdown(bufferevent_getfd(idle->hc_bev), SHUT_RDWR);
		return (0);
	}
	if (say)
		log_warnx("http: connection from %s refused: it holds %u, "
		    "none idle (max_http_per_addr %u)", hc->hc_addr, n - 1,
		    hconn_addr_max());
	return (-1);
}

/* The address of ss without its port, for max_http_per_addr. */
static void
hconn_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)(const void *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr;
	else {
		snprintf(buf, len, "local");
		return;
	}
	if (inet_ntop(ss->ss_family, a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

/*
 * A new HTTP connection, its socket now set by evhttp: from an address
 * over connect_rate, or over its share with none of its own idle, it is
 * shut down before anything is read from it.
 */
static void
hconn_check(evutil_socket_t unused, short ev, void *arg)
{
	struct hconn		*hc = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	bufferevent_data_cb	 readcb;
	evutil_socket_t		 fd;
	char			 addr[64];

	(void)unused;
	(void)ev;
	bufferevent_getcb(hc->hc_bev, &readcb, NULL, NULL, NULL);
	if (readcb == NULL ||		/* evhttp has let it go already */
	    (fd = bufferevent_getfd(hc->hc_bev)) == -1 ||
	    getpeername(fd, (struct sockaddr *)&ss, &sslen) == -1)
		return;
	sockaddr_str((struct sockaddr *)&ss, addr, sizeof(addr));
	hconn_addr(&ss, hc->hc_addr, sizeof(hc->hc_addr));
	if (!server_connect_allowed((struct sockaddr *)&ss, addr) ||
	    hconn_share(hc) == -1) {
		hc->hc_shut = 1;
		shutdown(fd, SHUT_RDWR);
	}
}

/*
 * A new HTTP connection: its input is bounded (HTTP_INPUT_MAX), it is
 * checked against connect_rate and max_http_per_addr, and counted for
 * max_http.
 */
static struct bufferevent *
metrics_bev(struct event_base *base, void *arg)
{
	struct bufferevent	*bev;
	struct hconn		*hc;
	struct timeval		 tv = { 0, HC_SWEEP_MS * 1000 };
	uint64_t		 now;

	(void)arg;
	metrics_sweep();
	if ((bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return (NULL);
	bufferevent_setwatermark(bev, EV_READ, 0, HTTP_INPUT_MAX);
	if ((hc = calloc(1, sizeof(*hc))) == NULL ||
	    (hc->hc_check = event_new(base, -1, 0, hconn_check, hc)) == NULL)
		fatal("metrics_bev");
	hc->hc_bev = bev;
	bufferevent_incref(bev);
	TAILQ_INSERT_TAIL(&hconns, hc, hc_entry);
	nhconns++;
	event_active(hc->hc_check, 0, 0);
	if (hc_sweeper == NULL && (hc_sweeper = event_new(base, -1,
	    EV_PERSIST, metrics_sweep_cb, NULL)) == NULL)
		fatal("event_new");
	if (!event_pending(hc_sweeper, EV_TIMEOUT, NULL))
		event_add(hc_sweeper, &tv);
	if (nhconns >= mconf->max_http && !hc_full &&
	    http_listener != NULL) {
		hc_full = 1;
		evconnlistener_disable(http_listener);
		server_cap_count(CAP_HTTP);
		now = mono_ns();
		if (hc_full_said == 0 || now - hc_full_said >= HC_LOG_NS) {
			log_warnx("http: %u connections open (max_http); not "
			    "accepting more until one closes", nhconns);
			hc_full_said = now;
		}
	}
	return (bev);
}

/*
 * An HTTP connection closes.  With an answer still queued it was dropped:
 * its client did not read it within the timeout (or went away first).
 */
static void
metrics_closed(struct evhttp_connection *evcon, void *arg)
{
	struct bufferevent	*bev;
	char			*addr;
	ev_uint16_t		 port;
	size_t			 len;

	(void)arg;
	if ((bev = evhttp_connection_get_bufferevent(evcon)) == NULL ||
	    (len = evbuffer_get_length(bufferevent_get_output(bev))) == 0)
		return;
	evhttp_connection_get_peer(evcon, &addr, &port);
	session_dropped_count(DROP_TIMEOUT);
	log_warnx("http client %s:%u dropped: %zu bytes of its answer queued, "
	    "unread for %llums (output_timeout, at most %ums for HTTP)",
	    addr != NULL ? addr : "?", port, len, (unsigned long long)
	    metrics_timeout_ms(), HTTP_TIMEOUT_MAX);
}

/* Every request: watch its connection's end. */
static void
metrics_watch(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;

	if ((evcon = evhttp_request_get_connection(req)) != NULL)
		evhttp_connection_set_closecb(evcon, metrics_closed, NULL);
}

/*
 * When certificates run out (server_expiry()), as Unix times: alert on
 * r3q_cert_expiry_seconds - time() < 30 * 86400.  Our own, the CA, the
 * CRL's next update (with a crl), and each connected worker's.
 */
static void
metrics_expiry(struct evbuffer *b)
{
	struct worker	*w;
	uint32_t	 i;
	time_t		 cert, ca, crl;

	server_expiry_dates(&cert, &ca, &crl);
	evbuffer_add_printf(b,
	    "# HELP r3q_cert_expiry_seconds When masterd's certificate, the "
	    "CA and the CRL's next update run out (Unix time).\n"
	    "# TYPE r3q_cert_expiry_seconds gauge\n");
	if (cert != 0)
		evbuffer_add_printf(b, "r3q_cert_expiry_seconds{cert=\"master\"}"
		    " %lld\n", (long long)cert);
	if (ca != 0)
		evbuffer_add_printf(b, "r3q_cert_expiry_seconds{cert=\"ca\"} "
		    "%lld\n", (long long)ca);
	if (server_crl() != NULL && crl != 0)
		evbuffer_add_printf(b, "r3q_cert_expiry_seconds{cert=\"crl\"} "
		    "%lld\n", (long long)crl);
	evbuffer_add_printf(b,
	    "# HELP r3q_worker_cert_expiry_seconds When a connected worker's "
	    "certificate runs out (Unix time).\n"
	    "# TYPE r3q_worker_cert_expiry_seconds gauge\n");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		if (w->w_session->s_not_after == 0)
			continue;
		evbuffer_add_printf(b, "r3q_worker_cert_expiry_seconds{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\"} %lld\n",
		    (long long)w->w_session->s_not_after);
	}
	evbuffer_add_printf(b,
	    "# HELP r3q_crl_revoked Certificates the CRL revokes (crl).\n"
	    "# TYPE r3q_crl_revoked gauge\n"
	    "r3q_crl_revoked %zu\n", tls_crl_entries(server_crl()));
}

/* GET /metrics: the Prometheus text exposition format. */
static void
metrics_prometheus(struct evhttp_request *req, void *arg)
{
	struct journal		*jl = job_journal_handle();
	struct sched_stats	 st;
	struct sched_fault_info	 fi;
	struct sched_estimate	 est;
	struct evbuffer		*b;
	struct worker		*w;
	struct job		*j;
	R3q__JobInfo		 info;
	uint32_t		 i, held, running;
	uint64_t		 refused, refused_closed;
	size_t			 nj[4] = { 0, 0, 0, 0 };

	(void)arg;
	metrics_watch(req);
	dispatch_stats(&st);
	worker_refused_counts(&refused, &refused_closed);
	b = evbuffer_new();
	evbuffer_add_printf(b,
	    "# HELP r3q_workers_connected Workers connected now.\n"
	    "# TYPE r3q_workers_connected gauge\n"
	    "r3q_workers_connected %u\n"
	    "# HELP r3q_tasks Tasks by where they are now.\n"
	    "# TYPE r3q_tasks gauge\n"
	    "r3q_tasks{state=\"queued\"} %" PRIu64 "\n"
	    "r3q_tasks{state=\"held\"} %" PRIu64 "\n"
	    "r3q_tasks{state=\"running\"} %" PRIu64 "\n"
	    "# HELP r3q_tasks_done_total Tasks whose result was accepted.\n"
	    "# TYPE r3q_tasks_done_total counter\n"
	    "r3q_tasks_done_total %" PRIu64 "\n"
	    "# HELP r3q_tasks_failed_total Tasks given up after max_attempts.\n"
	    "# TYPE r3q_tasks_failed_total counter\n"
	    "r3q_tasks_failed_total %" PRIu64 "\n"
	    "# HELP r3q_replicas_total Extra copies sent (RR, R3Q).\n"
	    "# TYPE r3q_replicas_total counter\n"
	    "r3q_replicas_total %" PRIu64 "\n"
	    "# HELP r3q_copies_terminated_total Losing copies withdrawn.\n"
	    "# TYPE r3q_copies_terminated_total counter\n"
	    "r3q_copies_terminated_total{while=\"held\"} %" PRIu64 "\n"
	    "r3q_copies_terminated_total{while=\"running\"} %" PRIu64 "\n",
	    worker_count(), st.queued, st.held, st.running, st.done, st.failed,
	    st.replicas, st.cancelled_held, st.cancelled_running);
	evbuffer_add_printf(b,
	    "# HELP r3q_workers_suspect Workers suspect now (relative "
	    "suspect detection).\n"
	    "# TYPE r3q_workers_suspect gauge\n"
	    "r3q_workers_suspect %u\n"
	    "# HELP r3q_workers_cooling Workers in a suspect cool-down now.\n"
	    "# TYPE r3q_workers_cooling gauge\n"
	    "r3q_workers_cooling %u\n"
	    "# HELP r3q_suspicions_total Times a worker became suspect.\n"
	    "# TYPE r3q_suspicions_total counter\n"
	    "r3q_suspicions_total %" PRIu64 "\n"
	    "# HELP r3q_slow_suspicions_total Of them, running copies that "
	    "stood still no longer than their worker's own whole task (not "
	    "counted toward suspect_limit).\n"
	    "# TYPE r3q_slow_suspicions_total counter\n"
	    "r3q_slow_suspicions_total %" PRIu64 "\n"
	    "# HELP r3q_suspect_replicas_total Copies sent because a worker "
	    "was suspect.\n"
	    "# TYPE r3q_suspect_replicas_total counter\n"
	    "r3q_suspect_replicas_total %" PRIu64 "\n"
	    "# HELP r3q_copies_killed_total Running copies lost with their "
	    "worker.\n"
	    "# TYPE r3q_copies_killed_total counter\n"
	    "r3q_copies_killed_total %" PRIu64 "\n"
	    "# HELP r3q_results_refused_total Results dropped because the "
	    "worker was never given that copy.\n"
	    "# TYPE r3q_results_refused_total counter\n"
	    "r3q_results_refused_total %" PRIu64 "\n"
	    "# HELP r3q_workers_refused_total Workers disconnected for "
	    "sending such results.\n"
	    "# TYPE r3q_workers_refused_total counter\n"
	    "r3q_workers_refused_total %" PRIu64 "\n"
	    "# HELP r3q_tasks_handed_back_total Copies draining workers "
	    "gave back (requeued, no failure counted).\n"
	    "# TYPE r3q_tasks_handed_back_total counter\n"
	    "r3q_tasks_handed_back_total %" PRIu64 "\n"
	    "# HELP r3q_sched_batches_visited_total Batches the scheduler "
	    "looked at to place, replicate or watch work (grows with live "
	    "work, not with idle batches).\n"
	    "# TYPE r3q_sched_batches_visited_total counter\n"
	    "r3q_sched_batches_visited_total %" PRIu64 "\n",
	    st.suspect_workers, st.cooling_workers, st.suspects,
	    st.slow_suspects, st.suspect_replicas, st.killed, refused, refused_closed,
	    st.handed_back, st.batches_visited);
	/* A journal that cannot write: job_journal_stall(). */
	evbuffer_add_printf(b,
	    "# HELP r3q_journal_stalled 1 while the journal cannot be written "
	    "(nothing is assigned, no result taken).\n"
	    "# TYPE r3q_journal_stalled gauge\n"
	    "r3q_journal_stalled %d\n"
	    "# HELP r3q_journal_stalls_total Times the journal stalled.\n"
	    "# TYPE r3q_journal_stalls_total counter\n"
	    "r3q_journal_stalls_total %" PRIu64 "\n"
	    "# HELP r3q_journal_write_failures_total Journal writes and commits "
	    "that failed.\n"
	    "# TYPE r3q_journal_write_failures_total counter\n"
	    "r3q_journal_write_failures_total %" PRIu64 "\n"
	    "# HELP r3q_journal_commits_total Journal transactions committed "
	    "(at most one a journal_delay while only workers are told).\n"
	    "# TYPE r3q_journal_commits_total counter\n"
	    "r3q_journal_commits_total %" PRIu64 "\n",
	    job_journal_stalled(), job_journal_stalls(),
	    jl != NULL ? journal_failures(jl) : 0,
	    jl != NULL ? journal_commits(jl) : 0);

	evbuffer_add_printf(b,
	    "# HELP r3q_clients_connected Clients connected now (TLS and "
	    "the control socket).\n"
	    "# TYPE r3q_clients_connected gauge\n"
	    "r3q_clients_connected %zu\n"
	    "# HELP r3q_tasks_pending Tasks of running jobs not yet ended "
	    "(max_queued_tasks).\n"
	    "# TYPE r3q_tasks_pending gauge\n"
	    "r3q_tasks_pending %" PRIu64 "\n"
	    "# HELP r3q_jobs_memory_bytes Bytes of running jobs' state "
	    "(populations, island states, payloads not yet run) and of every "
	    "job's outcomes not yet acknowledged (max_memory).\n"
	    "# TYPE r3q_jobs_memory_bytes gauge\n"
	    "r3q_jobs_memory_bytes %" PRIu64 "\n"
	    "# HELP r3q_output_bytes Bytes queued for peers now.\n"
	    "# TYPE r3q_output_bytes gauge\n"
	    "r3q_output_bytes %" PRIu64 "\n"
	    "# HELP r3q_peers_paused Peers over their output mark now "
	    "(client_buffer, worker_buffer).\n"
	    "# TYPE r3q_peers_paused gauge\n"
	    "r3q_peers_paused %u\n"
	    "# HELP r3q_peers_dropped_total Peers dropped for not reading "
	    "what they were sent.\n"
	    "# TYPE r3q_peers_dropped_total counter\n"
	    "r3q_peers_dropped_total{limit=\"output_limit\"} %" PRIu64 "\n"
	    "r3q_peers_dropped_total{limit=\"output_timeout\"} %" PRIu64 "\n"
	    "# HELP r3q_refused_total Peers and requests refused by a cap "
	    "of masterd.conf.\n"
	    "# TYPE r3q_refused_total counter\n",
	    server_clients(), job_pending_all(), job_memory_all(),
	    server_output_bytes(),
	    session_npaused(), session_dropped(DROP_LIMIT),
	    session_dropped(DROP_TIMEOUT));
	for (i = 0; i < CAP_N; i++)
		evbuffer_add_printf(b, "r3q_refused_total{cap=\"%s\"} %" PRIu64
		    "\n", cap_names[i], server_capped(i));
	/* Balancing of held tasks (doc/algorithms.md §4). */
	evbuffer_add_printf(b,
	    "# HELP r3q_withdrawals_total Held tasks asked back from a worker "
	    "to move them (balancing).\n"
	    "# TYPE r3q_withdrawals_total counter\n"
	    "r3q_withdrawals_total %" PRIu64 "\n"
	    "# HELP r3q_tasks_moved_total Tasks moved to another worker's "
	    "local queue by balancing.\n"
	    "# TYPE r3q_tasks_moved_total counter\n"
	    "r3q_tasks_moved_total %" PRIu64 "\n"
	    "# HELP r3q_tasks_moved_back_total Tasks released for a move "
	    "whose target had no room left: back to the master queue.\n"
	    "# TYPE r3q_tasks_moved_back_total counter\n"
	    "r3q_tasks_moved_back_total %" PRIu64 "\n"
	    "# HELP r3q_withdrawals_void_total Withdrawals that found the "
	    "task started (it stayed).\n"
	    "# TYPE r3q_withdrawals_void_total counter\n"
	    "r3q_withdrawals_void_total %" PRIu64 "\n",
	    st.withdrawals, st.moved, st.moved_back, st.withdraw_void);
	evbuffer_add_printf(b,
	    "# HELP r3q_worker_power Results a worker returned in the last "
	    "power_interval, counted by the master.\n"
	    "# TYPE r3q_worker_power gauge\n");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		if (dispatch_worker_estimate(w, &est) == -1)
			continue;
		evbuffer_add_printf(b, "r3q_worker_power{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\"} %u\n", est.power);
	}

	evbuffer_add_printf(b,
	    "# HELP r3q_worker_tasks Tasks on a worker now.\n"
	    "# TYPE r3q_worker_tasks gauge\n");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		dispatch_worker_load(w, &held, &running);
		evbuffer_add_printf(b, "r3q_worker_tasks{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\",state=\"held\"} %u\n", held);
		evbuffer_add_printf(b, "r3q_worker_tasks{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\",state=\"running\"} %u\n", running);
	}
	evbuffer_add_printf(b,
	    "# HELP r3q_worker_suspicions_total Times a worker became "
	    "suspect.\n# TYPE r3q_worker_suspicions_total counter\n");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		if (dispatch_worker_fault(w, &fi) == -1)
			continue;
		evbuffer_add_printf(b, "r3q_worker_suspicions_total{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\"} %" PRIu64 "\n", fi.suspects);
	}
	evbuffer_add_printf(b,
	    "# HELP r3q_worker_tasks_done_total Results accepted from a "
	    "worker.\n# TYPE r3q_worker_tasks_done_total counter\n");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		evbuffer_add_printf(b, "r3q_worker_tasks_done_total{worker=\"");
		metrics_label(b, w->w_name);
		evbuffer_add_printf(b, "\"} %" PRIu64 "\n", w->w_done);
	}

	metrics_expiry(b);

	for (j = job_first(); j != NULL; j = job_next(j))
		nj[j->j_state]++;
	evbuffer_add_printf(b,
	    "# HELP r3q_jobs Jobs by state.\n# TYPE r3q_jobs gauge\n"
	    "r3q_jobs{state=\"running\"} %zu\nr3q_jobs{state=\"done\"} %zu\n"
	    "r3q_jobs{state=\"failed\"} %zu\n"
	    "r3q_jobs{state=\"cancelled\"} %zu\n",
	    nj[JOB_RUNNING], nj[JOB_DONE], nj[JOB_FAILED], nj[JOB_CANCELLED]);
	evbuffer_add_printf(b,
	    "# HELP r3q_job_generation Generations completed by a running "
	    "job.\n# TYPE r3q_job_generation gauge\n");
	for (j = job_first(); j != NULL; j = job_next(j))
		if (j->j_state == JOB_RUNNING)
			evbuffer_add_printf(b, "r3q_job_generation{job=\"%" PRIu64
			    "\"} %" PRIu64 "\n", j->j_id, job_gens_done(j));
	evbuffer_add_printf(b,
	    "# HELP r3q_job_efficiency Parallel efficiency LB/E of a running "
	    "job with a synthetic load.\n"
	    "# TYPE r3q_job_efficiency gauge\n");
	for (j = job_first(); j != NULL; j = job_next(j)) {
		if (j->j_state != JOB_RUNNING || j->j_work_ms <= 0)
			continue;
		/* No sample until a generation has given the lower bound. */
		job_info(j, &info, 0);
		if (status_known(info.efficiency))
			evbuffer_add_printf(b, "r3q_job_efficiency{job=\"%"
			    PRIu64 "\"} %.6f\n", j->j_id, info.efficiency);
		job_info_clear(&info);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/* A string as a JSON string. */
static void
status_string(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, "\"", 1);
	metrics_label(b, s);
	evbuffer_add(b, "\"", 1);
}

/* GET /status: the daemon, its workers and its jobs as one JSON object. */
static void
metrics_status(struct evhttp_request *req, void *arg)
{
	struct sched_stats	 st;
	struct sched_fault_info	 fi;
	struct sched_estimate	 est;
	struct evbuffer		*b;
	struct worker		*w;
	struct job		*j;
	R3q__JobInfo		 info;
	uint32_t		 i, held, running;
	int			 first = 1;

	(void)arg;
	metrics_watch(req);
	dispatch_stats(&st);
	b = evbuffer_new();
	evbuffer_add_printf(b, "{\"version\":\"%s\",\"listen\":",
	    PACKAGE_VERSION);
	status_string(b, server_listen_addr());
	evbuffer_add_printf(b, ",\"policy\":\"%s\",\"tasks\":{\"queued\":%"
	    PRIu64 ",\"held\":%" PRIu64 ",\"running\":%" PRIu64 ",\"done\":%"
	    PRIu64 ",\"failed\":%" PRIu64 ",\"replicas\":%" PRIu64 "},"
	    "\"journal\":{\"stalled\":%s,\"error\":",
	    mconf->policy, st.queued, st.held,
	    st.running, st.done, st.failed, st.replicas,
	    job_journal_stalled() ? "true" : "false");
	/* Why it stalled: the last failure, while stalled; null otherwise. */
	if (job_journal_stalled())
		status_string(b, job_journal_stall_text());
	else
		evbuffer_add_printf(b, "null");
	evbuffer_add_printf(b, "},\"workers\":[");
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		dispatch_worker_load(w, &held, &running);
		evbuffer_add_printf(b, "%s{\"name\":", first ? "" : ",");
		status_string(b, w->w_name);
		evbuffer_add_printf(b, ",\"address\":");
		status_string(b, w->w_session->s_addr);
		if (dispatch_worker_fault(w, &fi) == -1)
			memset(&fi, 0, sizeof(fi));
		if (dispatch_worker_estimate(w, &est) == -1)
			memset(&est, 0, sizeof(est));
		evbuffer_add_printf(b, ",\"cpus\":%u,\"speed\":%g,\"held\":%u,"
		    "\"running\":%u,\"done\":%" PRIu64 ",\"since\":%" PRIu64
		    ",\"suspects\":%" PRIu64 ",\"state\":\"%s\"", w->w_cpus,
		    w->w_speed, held, running, w->w_done, w->w_since,
		    fi.suspects, fi.cooldown_until ? "cooling" :
		    fi.suspect_copies ? "suspect" : "ok");
		/* The core's estimates, in seconds; none before a result. */
		status_number(b, "rtt", est.rtt_ns > 0, (double)est.rtt_ns / 1e9);
		status_number(b, "task_time", est.task_ns > 0,
		    (double)est.task_ns / 1e9);
		evbuffer_add_printf(b, "}");
		first = 0;
	}
	evbuffer_add_printf(b, "],\"jobs\":[");
	first = 1;
	for (j = job_first(); j != NULL; j = job_next(j)) {
		/*
		 * Before its first generation a job has no generation and no
		 * best; without a synthetic load (or before a generation)
		 * it has no efficiency.  Unknown is null, not 0.
		 */
		job_info(j, &info, 0);
		evbuffer_add_printf(b, "%s{\"id\":%" PRIu64 ",\"state\":\"%s\","
		    "\"policy\":\"%s\",\"driver\":\"%s\"", first ? "" : ",",
		    info.id, info.state, info.policy, info.driver);
		status_number(b, "generation", j->j_ngens > 0,
		    info.generation);
		status_number(b, "best", j->j_ngens > 0 && info.params != NULL,
		    info.best);
		evbuffer_add_printf(b, ",\"elapsed\":%.6f",
		    (double)info.elapsed_ns / 1e9);
		status_number(b, "efficiency", status_known(info.efficiency),
		    info.efficiency);
		evbuffer_add_printf(b, "}");
		job_info_clear(&info);
		first = 0;
	}
	evbuffer_add_printf(b, "]}\n");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

/* Anything else: 404, or 405 for a method other than GET. */
static void
metrics_other(struct evhttp_request *req, void *arg)
{
	(void)arg;
	metrics_watch(req);
	evhttp_send_error(req, HTTP_NOTFOUND, "try /metrics or /status");
}

/*
 * Listen for HTTP if the configuration asks: "none" is off, a bare port
 * means 127.0.0.1.  Returns -1 with a log line on failure.
 */
int
metrics_listen(struct event_base *base, const struct masterd_config *c)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_storage		 ss;
	socklen_t			 sslen = sizeof(ss);
	char				 host[256], port[16], a[64];
	const char			*spec = c->http;
	struct timeval			 tv;
	int				 p;

	mconf = c;
	if (strcmp(spec, "none") == 0)
		return (0);
	if (strchr(spec, ':') == NULL && strchr(spec, '.') == NULL) {
		snprintf(host, sizeof(host), "127.0.0.1");
		snprintf(port, sizeof(port), "%.5s", spec);
	} else if (conf_split_hostport(spec, host, sizeof(host), port,
	    sizeof(port), NULL) == -1) {
		log_warnx("http: bad address %s", spec);
		return (-1);
	}
	if ((http = evhttp_new(base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_cb(http, "/metrics", metrics_prometheus, NULL);
	evhttp_set_cb(http, "/status", metrics_status, NULL);
	evhttp_set_gencb(http, metrics_other, NULL);
	tv.tv_sec = (time_t)(metrics_timeout_ms() / 1000);
	tv.tv_usec = (suseconds_t)(metrics_timeout_ms() % 1000 * 1000);
	evhttp_set_timeout_tv(http, &tv);
	evhttp_set_bevcb(http, metrics_bev, NULL);
	evhttp_set_max_headers_size(http, HTTP_HEADERS_MAX);
	evhttp_set_max_body_size(http, 0);
	p = atoi(port);
	if ((bs = evhttp_bind_socket_with_handle(http, host[0] ? host :
	    "0.0.0.0", (uint16_t)p)) == NULL) {
		log_warn("http: cannot listen on %s", spec);
		return (-1);
	}
	http_listener = evhttp_bound_socket_get_listener(bs);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss,
	    &sslen) == 0)
		log_info("http: /metrics and /status on %s",
		    sockaddr_str((struct sockaddr *)&ss, a, sizeof(a)));
	return (0);
}

void
metrics_close(void)
{
	struct hconn	*hc;

	if (http != NULL)
		evhttp_free(http);
	http = NULL;
	http_listener = NULL;
	while ((hc = TAILQ_FIRST(&hconns)) != NULL)
		hconn_free(hc);
	if (hc_sweeper != NULL)
		event_free(hc_sweeper);
	hc_sweeper = NULL;
}
