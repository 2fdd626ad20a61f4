/*
 * workerd's link to the master: connect over TLS, say hello, take tasks
 * into the local queue, send results and progress, and reconnect with
 * capped exponential backoff when the master goes away.  Results finished
 * while disconnected wait in the outbox and are sent after the next
 * welcome; the master accepts them if it still wants them.
 *
 * A failure says what to fix.  One that retrying cannot cure (the peer is
 * not a master, its certificate is not for the host dialled or not from
 * our CA, it refuses our certificate or our hello) stops workerd with
 * status 78 (EX_CONFIG), unless retry_permanent asks to keep trying.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "log.h"
#include "notify.h"
#include "seal.h"
#include "tls.h"
#include "util.h"
#include "workerd.h"

#define BACKOFF_MIN_MS	100
#define MASTERS_MAX	8	/* addresses in 'master', tried in order */
#define CONNECT_TIMEOUT	10	/* s, for TCP and for the TLS handshake */
#define WELCOME_TIMEOUT	30	/* s, from our hello to the welcome */

enum link_state {
	LINK_IDLE,		/* waiting to reconnect */
	LINK_CONNECTING,	/* TCP + TLS handshake */
	LINK_SEAL,		/* sealed agreed: the master's mark due */
	LINK_HELLO,		/* hello sent, waiting for welcome */
	LINK_UP
};

/* The one link; lives from link_start to link_stop. */
static struct {
	struct event_base		*l_base;
	const struct workerd_config	*l_conf;
	SSL_CTX				*l_ctx;
	struct tls_crl			*l_crl;		/* NULL: none */
	struct bufferevent		*l_bev;
	struct seal			*l_seal;	/* sealed: keys */
	struct tls_peer_id		*l_peer_id;	/* sealed: the
							   master's cert */
	struct event			*l_retry;
	struct event			*l_wake;
	enum link_state			 l_state;
	char				 l_host[256];
	char				 l_port[16];
	char				 l_hosts[MASTERS_MAX][256];
	char				 l_ports[MASTERS_MAX][16];
	size_t				 l_naddrs;	/* in 'master' */
	size_t				 l_idx;		/* the one used */
	char				 l_master[CONF_STRMAX];	/* as set */
	char				 l_peer[280];	/* host:port */
	char				 l_name[64];
	struct addrinfo			*l_res;		/* the master's */
	struct addrinfo			*l_ai;		/* next to try */
	struct event			*l_tcp;		/* connect(2) */
	int				 l_tcperr;	/* its last errno */
	uint64_t			 l_backoff;	/* ms */
	uint64_t			 l_epoch;
	uint64_t			 l_boot;
	struct wtasklist		 l_outbox;
	size_t				 l_noutbox;
	struct wnewslist		 l_news;	/* TaskNews to send,
							   before results */
	uint64_t			 l_done;
	uint64_t			 l_done_hb;	/* l_done at last beat */
	struct event			*l_heartbeat;
	struct event			*l_frame;	/* a frame's deadline */
	/* Draining: no new tasks, hand back, leave. */
	int				 l_draining;
	char				 l_drain_why[128];
	uint64_t			*l_back;	/* to hand back */
	size_t				 l_nback, l_backcap;
	const char			*l_back_why;	/* why l_back comes */
	int				 l_drain_said;	/* on this connection */
	int				 l_drain_done;	/* done sent: leaving */
	struct event			*l_leave;	/* done not written */
} lk;

/*
 * A frame from the master, once begun, must arrive whole within this: a
 * stalled link is then closed and dialled again rather than held with
 * part of a frame buffered.
 */
#define LINK_FRAME_TIMEOUT	60

static void	link_connect(evutil_socket_t, short, void *);

/*
 * WAN emulation.  The paper slept `delay` before and after each send and
 * each receive, in one thread per task slot, so every message was late by
 * twice the delay while the other slots went on.  Sleeping here, in the one
 * network thread, would instead serialise every message; so a frame is
 * held for 2 x delay on a timer queue, in order, without stopping others.
 */
struct delayed {
	TAILQ_ENTRY(delayed)	 d_entry;
	uint64_t		 d_due;		/* mono ns */
	struct evbuffer		*d_out;		/* a frame to send, or */
	Envelope		*d_in;		/* one received */
};
TAILQ_HEAD(delayedq, delayed);

static struct delayedq	 delay_out = TAILQ_HEAD_INITIALIZER(delay_out);
static struct delayedq	 delay_in = TAILQ_HEAD_INITIALIZER(delay_in);
static struct event	*delay_ev;

static int	link_dispatch(Envelope *);
static void	link_down(const char *, const char *);
static void	link_drain_check(void);
static void	link_drain_send(int);
static void	link_event(struct bufferevent *, short, void *);
static void	link_read(struct bufferevent *, void *);
static void	link_hello(void);

/* A copy to hand back with the next Drain. */
static void
link_back_add(uint64_t id)
{
	if (lk.l_nback == lk.l_backcap) {
		lk.l_backcap = lk.l_backcap ? lk.l_backcap * 2 : 64;
		lk.l_back = xreallocarray(lk.l_back, lk.l_backcap,
		    sizeof(*lk.l_back));
	}
	lk.l_back[lk.l_nback++] = id;
}
static void	link_use_addr(size_t);

/* Arm the timer for the earliest frame still waiting. */
static void
link_delay_arm(void)
{
	struct delayed	*a = TAILQ_FIRST(&delay_out);
	struct delayed	*b = TAILQ_FIRST(&delay_in);
	struct timeval	 tv;
	uint64_t	 due, now = mono_ns();

	if (a == NULL && b == NULL)
		return;
	due = a == NULL ? b->d_due : b == NULL ? a->d_due :
	    (a->d_due < b->d_due ? a->d_due : b->d_due);
	due = due > now ? due - now : 0;
	tv.tv_sec = due / NS_PER_SEC;
	tv.tv_usec = (due % NS_PER_SEC) / 1000;
	evtimer_add(delay_ev, &tv);
}

/* Drop whatever is waiting: the connection it belonged to is gone. */
static void
link_delay_clear(void)
{
	struct delayed	*d;

	while ((d = TAILQ_FIRST(&delay_out)) != NULL) {
		TAILQ_REMOVE(&delay_out, d, d_entry);
		evbuffer_free(d->d_out);
		free(d);
	}
	while ((d = TAILQ_FIRST(&delay_in)) != NULL) {
		TAILQ_REMOVE(&delay_in, d, d_entry);
		frame_free(d->d_in);
		free(d);
	}
	if (delay_ev != NULL)
		evtimer_del(delay_ev);
}

/* Queue a frame or an envelope for 2 x delay. */
static void
link_delay_push(struct delayedq *q, struct evbuffer *out, Envelope *in)
{
	struct delayed	*d;

	d = xcalloc(1, sizeof(*d));
	d->d_due = mono_ns() + 2 * lk.l_conf->delay * NS_PER_MS;
	d->d_out = out;
	d->d_in = in;
	TAILQ_INSERT_TAIL(q, d, d_entry);
	if (!evtimer_pending(delay_ev, NULL))
		link_delay_arm();
}

/* Send and dispatch what has waited long enough, in order. */
static void
link_delay_fire(evutil_socket_t fd, short ev, void *arg)
{
	struct delayed	*d;
	uint64_t	 now = mono_ns();
	int		 rc;

	(void)fd;
	(void)ev;
	(void)arg;
	while ((d = TAILQ_FIRST(&delay_out)) != NULL && d->d_due <= now) {
		TAILQ_REMOVE(&delay_out, d, d_entry);
		if (lk.l_bev != NULL)
			bufferevent_write_buffer(lk.l_bev, d->d_out);
		evbuffer_free(d->d_out);
		free(d);
	}
	while ((d = TAILQ_FIRST(&delay_in)) != NULL && d->d_due <= now) {
		TAILQ_REMOVE(&delay_in, d, d_entry);
		if ((rc = link_dispatch(d->d_in)) < 0) {
			frame_free(d->d_in);
			free(d);
			if (rc == -1)
				link_down("protocol error", NULL);
			return;
		}
		frame_free(d->d_in);
		free(d);
	}
	link_delay_arm();
}

/*
 * Send one envelope if the link is up enough (late, under --delay).
 * Between link_batch_begin and link_batch_end, envelopes gather in one
 * buffer and leave in one write.
 */
static struct evbuffer	*batch;
static int		 batching;

void
link_send(Envelope *env)
{
	struct evbuffer	*buf;

	if (lk.l_bev == NULL || lk.l_state < LINK_HELLO)
		return;
	if (batching)
		buf = batch;
	else if (lk.l_conf->delay == 0)
		buf = bufferevent_get_output(lk.l_bev);
	else if ((buf = evbuffer_new()) == NULL) {
		log_warnx("cannot queue a %s message: out of memory",
		    frame_body_name(env));
		return;
	}
	if (frame_write(buf, env) == -1) {
		log_warnx("cannot queue a %s message", frame_body_name(env));
		if (!batching && lk.l_conf->delay > 0)
			evbuffer_free(buf);
		return;
	}
	if (!batching && lk.l_conf->delay > 0)
		link_delay_push(&delay_out, buf, NULL);
}

static void
link_batch_begin(void)
{
	if (batch == NULL && (batch = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	batching = 1;
}

static void
link_batch_end(void)
{
	struct evbuffer	*buf;

	batching = 0;
	if (evbuffer_get_length(batch) == 0)
		return;
	if (lk.l_bev == NULL)
		evbuffer_drain(batch, evbuffer_get_length(batch));
	else if (lk.l_conf->delay == 0)
		bufferevent_write_buffer(lk.l_bev, batch);
	else {
		if ((buf = evbuffer_new()) == NULL)
			fatal("evbuffer_new");
		evbuffer_add_buffer(buf, batch);
		link_delay_push(&delay_out, buf, NULL);
	}
}

/* Schedule the next attempt, doubling the wait up to reconnect_max. */
static void
link_retry_later(void)
{
	struct timeval	 tv;
	uint64_t	 ms;
	uint32_t	 r = 0;

	ms = lk.l_backoff;
	RAND_bytes((unsigned char *)&r, sizeof(r));
	ms = ms - ms / 5 + (ms ? r % (ms / 5 * 2 + 1) : 0);	/* +-20% */
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(lk.l_retry, &tv);
	log_debug("reconnecting in %llu ms", (unsigned long long)ms);
	lk.l_backoff *= 2;
	if (lk.l_backoff > lk.l_conf->reconnect_max)
		lk.l_backoff = lk.l_conf->reconnect_max;
	if (lk.l_backoff < BACKOFF_MIN_MS)
		lk.l_backoff = BACKOFF_MIN_MS;
}

/* Close the connection or the connection attempt, whichever there is. */
static void
link_close(void)
{
	if (lk.l_frame != NULL)
		evtimer_del(lk.l_frame);
	if (lk.l_bev != NULL) {
		bufferevent_free(lk.l_bev);
		lk.l_bev = NULL;
	}
	lk.l_seal = NULL;	/* freed with its bufferevent */
	tls_peer_id_free(lk.l_peer_id);
	lk.l_peer_id = NULL;
	if (lk.l_tcp != NULL) {
		close(event_get_fd(lk.l_tcp));
		event_free(lk.l_tcp);
		lk.l_tcp = NULL;
	}
	if (lk.l_res != NULL) {
		freeaddrinfo(lk.l_res);
		lk.l_res = NULL;
		lk.l_ai = NULL;
	}
	link_delay_clear();
}

/*
 * The connection is gone: drop held tasks (the master re-queued them).
 * fix, when not NULL, says the failure is permanent and what to do about
 * it: then workerd exits 78 unless retry_permanent is set.
 */
static void
link_down(const char *why, const char *fix)
{
	struct timeval	 now = { 0, 0 };
	size_t		 n;

	if (fix != NULL)
		log_warnx("cannot use the master: %s", why);
	else if (lk.l_state == LINK_UP)
		log_warnx("lost the master %s: %s", lk.l_peer, why);
	else
		log_warnx("cannot reach the master: %s", why);
	link_close();
	relay_up_lost(why);
	peer_link_down();
	if ((n = exec_drop_held()) > 0)
		log_debug("dropped %zu held tasks", n);
	lk.l_state = LINK_IDLE;
	/* The master requeued what we held, and needs telling again. */
	lk.l_nback = 0;
	lk.l_drain_said = 0;
	if (lk.l_drain_done) {
		log_info("drained; leaving");
		workerd_exit(0);
		return;
	}
	if (lk.l_draining) {
		link_drain_check();
		if (lk.l_drain_done)
			return;
	}
	if (fix != NULL) {
		log_warnx("permanent: retrying cannot cure this; %s", fix);
		if (!lk.l_conf->retry_permanent) {
			log_warnx("exiting with status %d (retry_permanent = "
			    "yes keeps retrying)", CONF_EX_CONFIG);
			notify_status("stopped: %s", why);
			workerd_exit(CONF_EX_CONFIG);
			return;
		}
		log_warnx("retrying anyway: retry_permanent = yes");
	}
	notify_status("no master: %s; retrying", why);
	/*
	 * A list of masters and relays: the next one at once;
	 * after the last, the first again after the backoff.
	 */
	if (lk.l_naddrs > 1) {
		if (lk.l_idx + 1 < lk.l_naddrs) {
			link_use_addr(lk.l_idx + 1);
			log_info("trying the next master in the list: %s",
			    lk.l_peer);
			evtimer_add(lk.l_retry, &now);
			return;
		}
		link_use_addr(0);
	}
	link_retry_later();
}

/* Queue one Results frame of n results. */
static void
link_send_results(R3q__Result **ptrs, size_t n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Results	 rs = R3Q__RESULTS__INIT;

	rs.n_results = n;
	rs.results = ptrs;
	env.body_case = R3Q__ENVELOPE__BODY_RESULTS;
	env.results = &rs;
	link_send(&env);
}

/*
 * A task's Result.  The output goes only with TASK_OK, and is not copied:
 * it points into the task, which lives until the frame is written.
 */
static void
link_result(R3q__Result *r, struct wtask *t)
{
	size_t	 len;

	r3q__result__init(r);
	r->id = t->wt_id;
	r->epoch = t->wt_epoch;
	r->tag = t->wt_tag;
	r->status = (uint32_t)t->wt_res.status;
	r->received_ns = t->wt_received;
	r->start_ns = t->wt_start;
	r->end_ns = t->wt_end;
	r->error = t->wt_res.error;
	r->slot = t->wt_slot;
	r->replica = t->wt_replica;
	r->active = t->wt_active;
	if (t->wt_res.status == TASK_OK) {
		r->output.data = (uint8_t *)(uintptr_t)task_output(&t->wt_res,
		    &len);
		r->output.len = len;
	}
}

/*
 * Send the results in the outbox and any progress notes, together: one
 * write, so one TLS record while they fit in one.  Results share a frame
 * until their outputs would take it over max_frame; each one alone fits
 * (workerd_load keeps max_output RESULT_ROOM below max_frame).  The Result
 * structs are kept from one flush to the next rather than allocated each
 * time.
 */
static void
link_flush(uint64_t *started, size_t nstarted, uint64_t *half, size_t nhalf)
{
	static R3q__Result	 *res;
	static R3q__Result	**ptrs;
	static size_t		  cap;
	Envelope		  env;
	R3q__Progress		  pr = R3Q__PROGRESS__INIT;
	R3q__TaskNews		  tn;
	struct wtask		 *t;
	struct wnews		 *nw;
	size_t			  n, first, sz, acc, budget;

	if (lk.l_state != LINK_UP)
		return;
	if (lk.l_noutbox > cap) {
		free(res);
		free(ptrs);
		cap = lk.l_noutbox * 2;
		res = xcalloc(cap, sizeof(*res));
		ptrs = xcalloc(cap, sizeof(*ptrs));
	}
	link_batch_begin();
	/* News first: a task's news went out before its result. */
	while ((nw = TAILQ_FIRST(&lk.l_news)) != NULL) {
		TAILQ_REMOVE(&lk.l_news, nw, wn_entry);
		r3q__envelope__init(&env);
		r3q__task_news__init(&tn);
		tn.id = nw->wn_id;
		tn.epoch = nw->wn_epoch;
		tn.tag = nw->wn_tag;
		tn.data.data = nw->wn_data;
		tn.data.len = nw->wn_len;
		env.body_case = R3Q__ENVELOPE__BODY_TASK_NEWS;
		env.task_news = &tn;
		link_send(&env);
		free(nw);
	}
	if (lk.l_noutbox > 0) {
		budget = lk.l_conf->max_frame > RESULT_ROOM ?
		    lk.l_conf->max_frame - RESULT_ROOM / 2 : 0;
		n = first = acc = 0;
		TAILQ_FOREACH(t, &lk.l_outbox, wt_entry) {
			link_result(&res[n], t);
			ptrs[n] = &res[n];
			/* A bound on its packed size, the output aside. */
			sz = res[n].output.len + strlen(res[n].error) + 160;
			/* masterd refuses more than FRAME_RESULTS_MAX. */
			if (n > first && (acc + sz > budget ||
			    n - first >= FRAME_RESULTS_MAX)) {
				link_send_results(&ptrs[first], n - first);
				first = n;
				acc = 0;
			}
			acc += sz;
			n++;
		}
		link_send_results(&ptrs[first], n - first);
		while ((t = TAILQ_FIRST(&lk.l_outbox)) != NULL) {
			TAILQ_REMOVE(&lk.l_outbox, t, wt_entry);
			wtask_free(t);
		}
		lk.l_noutbox = 0;
	}
	if (nstarted > 0 || nhalf > 0) {
		r3q__envelope__init(&env);
		pr.n_started = nstarted;
		pr.started = started;
		pr.n_halfway = nhalf;
		pr.halfway = half;
		env.body_case = R3Q__ENVELOPE__BODY_PROGRESS;
		env.progress = &pr;
		link_send(&env);
	}
	link_batch_end();
}

/* The execution threads have news: collect it on the loop thread. */
static void
link_collect(evutil_socket_t fd, short ev, void *arg)
{
	static uint64_t		*started, *half;
	struct wtasklist	 done;
	struct wtask		*t;
	size_t			 nstarted, nhalf;

	(void)fd;
	(void)ev;
	(void)arg;
	if (started == NULL) {
		started = xcalloc(exec_threads(), sizeof(*started));
		half = xcalloc(exec_threads(), sizeof(*half));
	}
	TAILQ_INIT(&done);
	exec_collect(&done, started, &nstarted, half, &nhalf);
	exec_news_take(&lk.l_news);
	while ((t = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, t, wt_entry);
		/* Interrupted by the drain: given back, not reported. */
		if (t->wt_handback && t->wt_res.status == TASK_CANCELLED) {
			lk.l_back_why = "interrupted: the drain ran out of time";
			link_back_add(t->wt_id);
			wtask_free(t);
			continue;
		}
		/*
		 * An interrupted copy is reported too: the master does not
		 * count it, but its execution time is part of the measurements.
		 */
		/*
		 * Its kind's process says the kind cannot run here (a 'U'):
		 * withdraw the kind, once, and tell the master; the task is
		 * reported failed with why (the failure counts, and the
		 * client sees the reason), not retried here.
		 */
		if (t->wt_res.status == TASK_UNAVAILABLE && t->wt_kind != NULL &&
		    kinds_withdraw(t->wt_kind, t->wt_res.error)) {
			log_warnx("kind %s withdrawn: %s (a reload offers it "
			    "again)", t->wt_kind, t->wt_res.error);
			link_kinds_changed();
		}
		if (t->wt_res.status == TASK_CANCELLED)
			log_debug("task %llu interrupted",
			    (unsigned long long)t->wt_id);
		else if (t->wt_res.status != TASK_OK)
			log_warnx("task %llu: %s: %s",
			    (unsigned long long)t->wt_id,
			    task_status_name(t->wt_res.status),
			    t->wt_res.error);
		if (t->wt_res.status == TASK_OK)
			lk.l_done++;
		TAILQ_INSERT_TAIL(&lk.l_outbox, t, wt_entry);
		lk.l_noutbox++;
	}
	link_flush(started, nstarted, half, nhalf);
	if (lk.l_draining)
		link_drain_check();
}

/* Called from execution threads: wake the loop thread. */
void
link_wake(void)
{
	event_active(lk.l_wake, EV_READ, 0);
}

/* Every heartbeat interval: what runs, by half, and the queue's state. */
static void
link_heartbeat(evutil_socket_t fd, short ev, void *arg)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Heartbeat	 hb = R3Q__HEARTBEAT__INIT;
	unsigned	 held, running;

	(void)fd;
	(void)ev;
	(void)arg;
	if (lk.l_state != LINK_UP)
		return;
	exec_counts(&held, &running);
	exec_halves(&hb.first_half, &hb.n_first_half, &hb.second_half,
	    &hb.n_second_half);
	hb.queued = held;
	hb.running = running;
	hb.done = lk.l_done;
	hb.finished = (uint32_t)(lk.l_done - lk.l_done_hb);
	hb.interval_ms = (uint32_t)lk.l_conf->heartbeat;
	lk.l_done_hb = lk.l_done;
	env.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	link_send(&env);
	free(hb.first_half);
	free(hb.second_half);
}

/* (Re)arm the heartbeat every ms milliseconds. */
static void
link_heartbeat_arm(uint64_t ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_del(lk.l_heartbeat);
	event_add(lk.l_heartbeat, &tv);
}

/*
 * Tasks for the local queue: one allocation each (the payload inline), the
 * kind's name shared with the registry, all queued under one lock.  The
 * payload's size was bounded by max_frame when the frame was read.
 */
static void
link_assign(R3q__Assign *a)
{
	const struct task_kind	*kind;
	struct wtasklist	 tl;
	struct wtask		*t;
	R3q__Task		*m;
	size_t			 i, k, len;
	uint64_t		 now = wall_ns();

	if (lk.l_draining) {
		/* It crossed our Drain: straight back. */
		lk.l_back_why = "assigned as the drain began";
		for (i = 0; i < a->n_tasks; i++)
			link_back_add(a->tasks[i]->id);
		/* Even after our done: it may have crossed that too. */
		link_drain_send(0);
		return;
	}
	TAILQ_INIT(&tl);
	for (i = 0; i < a->n_tasks; i++) {
		m = a->tasks[i];
		len = m->payload.len;
		t = xcalloc(1, sizeof(*t) + len);
		t->wt_id = m->id;
		t->wt_tag = m->tag;
		for (k = 0; k < a->n_replicas; k++)
			if (a->replicas[k] == m->id)
				t->wt_replica = 1;
		for (k = 0; k < a->n_active; k++)
			if (a->active[k] == m->id)
				t->wt_active = 1;
		t->wt_epoch = a->epoch;
		t->wt_received = now;
		if ((kind = task_kind_lookup(m->kind)) != NULL)
			t->wt_kind = (char *)(uintptr_t)kind->name;
		else if ((t->wt_ext = kinds_get(m->kind)) != NULL)
			t->wt_kind = t->wt_ext->k_name;
		else {
			/* run, to fail with "unknown kind" naming it */
			t->wt_kind = xstrdup(m->kind);
			t->wt_kind_owned = 1;
		}
		t->wt_payload_len = len;
		if (len > 0)
			memcpy(t->wt_payload, m->payload.data, len);
		atomic_init(&t->wt_cancel, 0);
		atomic_init(&t->wt_half, 0);
		atomic_init(&t->wt_bound, INT32_MAX);
		atomic_init(&t->wt_donate, 0);
		TAILQ_INSERT_TAIL(&tl, t, wt_entry);
	}
	exec_assign(&tl, (unsigned)a->n_tasks);
}

/*
 * Balancing (doc/algorithms.md §4): the master wants these held tasks back for another
 * worker.  A task not started yet leaves the local queue; one that started
 * (or is not here) stays, and the master hears which in one Released.
 */
static void
link_withdraw(const R3q__Withdraw *wd)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Released	 rel = R3Q__RELEASED__INIT;
	uint64_t	*v;
	size_t		 i;

	if (wd->n_ids == 0)
		return;
	v = xcalloc(wd->n_ids, sizeof(*v));
	rel.released = v;
	rel.kept = v + wd->n_ids;
	for (i = 0; i < wd->n_ids; i++) {
		if (exec_withdraw(wd->ids[i]))
			rel.released[rel.n_released++] = wd->ids[i];
		else
			*--rel.kept = wd->ids[i];
	}
	rel.n_kept = wd->n_ids - rel.n_released;
	log_debug("withdraw: %zu released, %zu kept (started)",
	    rel.n_released, rel.n_kept);
	env.body_case = R3Q__ENVELOPE__BODY_RELEASED;
	env.released = &rel;
	link_send(&env);
	free(v);
}

/*
 * TaskPush (protocol 6): a bound for tasks here, held or running (pfsp:
 * the job's incumbent), and tasks asked to donate part of their work.
 */
static void
link_push(const R3q__TaskPush *tp)
{
	size_t	 i;
	int	 rc;

	if (tp->bound > INT32_MAX) {
		log_warnx("the master pushed bound %u: out of range",
		    tp->bound);
		return;
	}
	for (i = 0; tp->bound != 0 && i < tp->n_ids; i++)
		if ((rc = exec_push(tp->ids[i], (int32_t)tp->bound)) != 0)
			log_debug("task %llu (%s): bound %u pushed",
			    (unsigned long long)tp->ids[i], rc == 2 ?
			    "running" : "held", tp->bound);
	for (i = 0; i < tp->n_donate; i++)
		log_debug("task %llu: asked to donate (%s)",
		    (unsigned long long)tp->donate[i],
		    (const char *[]){ "not here", "held", "running" }[
		    exec_donate(tp->donate[i])]);
}

/*
 * One message from the master: 0, or -1 for a protocol error (the caller
 * drops the link), or -2 when the link is already down.
 */
static int
link_dispatch(Envelope *env)
{
	char	 why[1024];
	size_t	 i;

	if (lk.l_state == LINK_HELLO) {
		if (env->body_case == R3Q__ENVELOPE__BODY_ERROR) {
			/* A refused hello is refused again as long as the
			 * name, the certificate and the version stay. */
			snprintf(why, sizeof(why), "the master %s refused us: "
			    "%s", lk.l_peer, env->error->message);
			/* A cap of the master (max_workers): come back. */
			link_down(why, env->error->code == R3Q_ERROR_BUSY ?
			    NULL : "fix what the master names (this "
			    "worker's name, its certificate or its version)");
			return (-2);
		}
		if (env->body_case != R3Q__ENVELOPE__BODY_WELCOME) {
			log_warnx("expected welcome, got %s",
			    frame_body_name(env));
			return (-1);
		}
		lk.l_state = LINK_UP;
		bufferevent_set_timeouts(lk.l_bev, NULL, NULL);
		lk.l_backoff = BACKOFF_MIN_MS;
		if (lk.l_boot != 0 && lk.l_boot != env->welcome->boot)
			log_info("the master restarted%s", lk.l_epoch ==
			    env->welcome->epoch ? " from its journal" : "");
		lk.l_epoch = env->welcome->epoch;
		lk.l_boot = env->welcome->boot;
		log_info("joined master %s as %s (id %u, queue %u)",
		    lk.l_peer, lk.l_name, env->welcome->worker_id,
		    env->welcome->queue_len);
		notify_status("joined master %s as %s, %u CPUs", lk.l_peer,
		    lk.l_name, lk.l_conf->cpus);
		mcrl_receive(env->welcome->crl.data, env->welcome->crl.len,
		    lk.l_peer);
		link_flush(NULL, 0, NULL, 0);
		if (lk.l_draining)
			link_drain_check();
		join_link_up(lk.l_base);
		return (0);
	}
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_ASSIGN:
		link_assign(env->assign);
		break;
	case R3Q__ENVELOPE__BODY_CANCEL:
		for (i = 0; i < env->cancel->n_ids; i++)
			log_debug("cancel task %llu: %s",
			    (unsigned long long)env->cancel->ids[i],
			    (const char *[]){ "not here", "held, removed",
			    "running, interrupted" }[exec_cancel(
			    env->cancel->ids[i])]);
		break;
	case R3Q__ENVELOPE__BODY_WITHDRAW:
		link_withdraw(env->withdraw);
		break;
	case R3Q__ENVELOPE__BODY_DRAIN_REQUEST:
		str_vis(why, sizeof(why) / 2, env->drain_request->reason);
		workerd_drain(why[0] != '\0' ? why : "asked by the master");
		break;
	case R3Q__ENVELOPE__BODY_RELAY_DATA:
	case R3Q__ENVELOPE__BODY_RELAY_CONTROL:
		if (!relay_enabled()) {
			log_warnx("unexpected %s message from the master: "
			    "this worker is no relay", frame_body_name(env));
			return (-1);
		}
		relay_from_up(env);
		break;
	case R3Q__ENVELOPE__BODY_JOIN_ANSWER:
		join_renewed(env->join_answer);
		break;
	case R3Q__ENVELOPE__BODY_TASK_PUSH:
		link_push(env->task_push);
		break;
	case R3Q__ENVELOPE__BODY_PEER_ORDER:
		peer_order(env->id, env->peer_order);
		break;
	case R3Q__ENVELOPE__BODY_CRL_PUSH:
		mcrl_receive(env->crl_push->crl.data, env->crl_push->crl.len,
		    lk.l_peer);
		break;
	case R3Q__ENVELOPE__BODY_ERROR:
		log_warnx("the master says: %s", env->error->message);
		break;
	default:
		log_warnx("unexpected %s message from the master",
		    frame_body_name(env));
		return (-1);
	}
	return (0);
}

/* A frame from the master began LINK_FRAME_TIMEOUT ago, and is not in. */
static void
link_frame_late(evutil_socket_t fd, short ev, void *arg)
{
	char	 why[128];

	(void)fd;
	(void)ev;
	(void)arg;
	snprintf(why, sizeof(why), "a frame begun did not arrive whole "
	    "within %ds", LINK_FRAME_TIMEOUT);
	link_down(why, NULL);
}

/* Part of a frame is in: the rest has a deadline, from its first byte. */
static void
link_frame_deadline(struct bufferevent *bev)
{
	struct timeval	 tv = { LINK_FRAME_TIMEOUT, 0 };

	if (evbuffer_get_length(bufferevent_get_input(bev)) > 0 &&
	    !evtimer_pending(lk.l_frame, NULL))
		evtimer_add(lk.l_frame, &tv);
}

/*
 * Sealed frames were agreed (common/seal.h): the master's mark is its last
 * TLS record; after it, the same socket sealed, and then our hello.
 * Anything else in its place (an Error, before a close) is read as TLS.
 * 1: sealed; 0: not yet, or the link is down; -1: not sealing after all.
 */
static int
link_seal_mark(struct bufferevent *bev)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	struct timeval	 tv = { WELCOME_TIMEOUT, 0 };
	char		 mark[SEAL_MARKLEN], err[256];

	if (evbuffer_copyout(in, mark, sizeof(mark)) < (ev_ssize_t)
	    sizeof(mark))
		return (0);
	if (memcmp(mark, SEAL_MARK, sizeof(mark)) != 0) {
		lk.l_state = LINK_HELLO;
		return (-1);
	}
	evbuffer_drain(in, sizeof(mark));
	if ((lk.l_peer_id = tls_peer_id_new(SSL_get0_peer_certificate(
	    ssl))) == NULL) {
		link_down("cannot keep the master's certificate serial", NULL);
		return (0);
	}
	if ((lk.l_bev = seal_switch(bev, 0, BEV_OPT_DEFER_CALLBACKS,
	    &lk.l_seal, err, sizeof(err))) == NULL) {
		lk.l_bev = bev;
		link_down(err, NULL);
		return (0);
	}
	bufferevent_set_timeouts(lk.l_bev, &tv, NULL);
	log_debug("sealed frames with %s", lk.l_peer);
	link_hello();
	return (1);
}

static void
link_read(struct bufferevent *bev, void *arg)
{
	Envelope	*env;
	char		 err[256];
	int		 rc;

	(void)arg;
	/* Sealed, the old bufferevent is gone: the new one reads on. */
	if (lk.l_state == LINK_SEAL && link_seal_mark(bev) >= 0)
		return;
	for (;;) {
		rc = frame_read(bufferevent_get_input(bev),
		    lk.l_conf->max_frame, &env, err, sizeof(err));
		if (rc == 0) {
			link_frame_deadline(bev);
			break;
		}
		if (rc == -1) {
			link_down(err, NULL);
			return;
		}
		evtimer_del(lk.l_frame);
		if (lk.l_conf->delay > 0) {
			link_delay_push(&delay_in, NULL, env);
			continue;
		}
		rc = link_dispatch(env);
		frame_free(env);
		if (rc == -1)
			link_down("protocol error", NULL);
		if (rc < 0)
			return;
	}
}

/*
 * The kinds withdrawn (kinds_withdraw()) as KindUnavailable messages, *n
 * of them; link_unavail_free() frees what this returns.
 */
static R3q__KindUnavailable **
link_unavail(size_t *n)
{
	R3q__KindUnavailable	**v;
	char			**names, **whys;
	size_t			 i;

	names = kinds_withdrawn(n, &whys);
	v = xcalloc(*n + 1, sizeof(*v));
	for (i = 0; i < *n; i++) {
		v[i] = xcalloc(1, sizeof(**v));
		r3q__kind_unavailable__init(v[i]);
		v[i]->kind = names[i];
		v[i]->reason = whys[i];
	}
	free(names);
	free(whys);
	return (v);
}

static void
link_unavail_free(R3q__KindUnavailable **v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * TLS is up: say hello, naming every kind offered, built in and
 * configured, and those withdrawn.
 */
static void
link_hello(void)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__Hello		 h = R3Q__HELLO__INIT;
	R3q__KindUnavailable	**un;
	char			**names;
	size_t			 n, nu;

	names = kinds_names(&n);
	un = link_unavail(&nu);
	h.n_unavailable = nu;
	h.unavailable = un;
	h.protocol = R3Q_PROTOCOL;
	h.name = lk.l_name;
	h.cpus = lk.l_conf->cpus;
	h.speed = lk.l_conf->speed;
	h.delay_ms = lk.l_conf->delay > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)lk.l_conf->delay;
	h.n_kinds = n;
	h.kinds = names;
	h.version = (char *)(uintptr_t)PACKAGE_VERSION;
	if (peer_address() != NULL)
		h.peer_addr = (char *)(uintptr_t)peer_address();
	/* The master's CRLs, for the certificates we check (mcrl.c). */
	h.crl_push = relay_enabled() || peer_address() != NULL;
	env.body_case = R3Q__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	lk.l_state = LINK_HELLO;
	link_send(&env);
	free(names);
	link_unavail_free(un, nu);
	relay_up_ready();
}

/*
 * Tell the master what the drain has to say: the copies to hand back and,
 * the first time on this connection, why (it stops assigning to us), or
 * with done that we leave.  With the link down there is no one to tell:
 * the master requeued what we held when it lost us.
 */
static void
link_drain_send(int done)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Drain	 d = R3Q__DRAIN__INIT;

	if (lk.l_state != LINK_UP) {
		lk.l_nback = 0;
		return;
	}
	if (lk.l_drain_said && lk.l_nback == 0 && !done)
		return;
	d.released = lk.l_back;
	d.n_released = lk.l_nback;
	if (!lk.l_drain_said)
		d.reason = lk.l_drain_why;
	else if (lk.l_nback > 0 && lk.l_back_why != NULL)
		d.reason = (char *)(uintptr_t)lk.l_back_why;
	d.done = done;
	d.timeout_ms = lk.l_conf->drain_timeout;
	env.body_case = R3Q__ENVELOPE__BODY_DRAIN;
	env.drain = &d;
	link_send(&env);
	lk.l_drain_said = 1;
	lk.l_nback = 0;
}

/* The last frames, Drain done among them, are written: leave. */
static void
link_drain_written(struct bufferevent *bev, void *arg)
{
	(void)arg;
	SSL	*ssl;

	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	    seal_pending(bev) > 0 || !TAILQ_EMPTY(&delay_out))
		return;
	/* A clean close (close_notify), not a connection that broke. */
	if ((ssl = bufferevent_openssl_get_ssl(bev)) != NULL)
		(void)SSL_shutdown(ssl);
	workerd_exit(0);
}

/* They were not written within a while: leave all the same. */
static void
link_drain_late(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	log_warnx("drained, but the master did not take our last frames "
	    "within 10s; leaving");
	workerd_exit(0);
}

/*
 * While draining: hand back what is due, and once nothing is held or
 * running and every result is sent, say done and leave.  With the master
 * unreachable and nothing running there is nothing left to wait for.
 */
static void
link_drain_check(void)
{
	struct timeval	 tv = { 10, 0 };

	if (!lk.l_draining || lk.l_drain_done)
		return;
	link_drain_send(0);
	if (exec_busy())
		return;
	if (lk.l_state != LINK_UP) {
		lk.l_drain_done = 1;
		if (lk.l_noutbox > 0)
			log_warnx("drained with the master unreachable: leaving "
			    "%zu results unsent (the master requeued their "
			    "tasks when it lost us)", lk.l_noutbox);
		else
			log_info("drained with the master unreachable; leaving");
		notify_status("drained; leaving");
		workerd_exit(0);
		return;
	}
	if (lk.l_noutbox > 0)
		return;		/* link_flush sends them first */
	link_drain_send(1);
	lk.l_drain_done = 1;
	log_info("drained: nothing held or running, every result sent; "
	    "leaving");
	notify_status("drained; leaving");
	bufferevent_setcb(lk.l_bev, link_read, link_drain_written,
	    link_event, NULL);
	evtimer_add(lk.l_leave, &tv);
	link_drain_written(lk.l_bev, NULL);
}

/*
 * Drain: no new tasks from now on; the held ones go back to
 * the master at once; the running ones finish (workerd.c interrupts them
 * when drain_timeout runs out, and they come back too); then we leave.
 */
void
link_drain(const char *why)
{
	uint64_t	*ids;
	unsigned	 held, running;
	size_t		 i, n;
	char		 d[32];

	if (lk.l_draining)
		return;
	lk.l_draining = 1;
	snprintf(lk.l_drain_why, sizeof(lk.l_drain_why), "%s", why);
	n = exec_take_held(&ids);
	for (i = 0; i < n; i++)
		link_back_add(ids[i]);
	free(ids);
	exec_counts(&held, &running);
	conf_format_duration(d, sizeof(d), lk.l_conf->drain_timeout);
	log_info("draining (%s): no new tasks; %zu held task%s %s; %u "
	    "running, given %s (drain_timeout)", why, n, n == 1 ? "" : "s",
	    lk.l_state == LINK_UP ? "handed back" : "dropped (no master)",
	    running, d);
	notify_status("draining (%s): %u running", why, running);
	link_drain_check();
}

int
link_draining(void)
{
	return (lk.l_draining);
}

/*
 * A reload or a withdrawal changed the kinds offered: tell the master,
 * which sends tasks of the new set from now on.  Not joined yet, the next
 * Hello says it.
 */
void
link_kinds_changed(void)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__Kinds		 k = R3Q__KINDS__INIT;
	R3q__KindUnavailable	**un;
	char			**names;
	size_t			 n, nu;

	if (lk.l_state != LINK_UP)
		return;
	names = kinds_names(&n);
	un = link_unavail(&nu);
	k.n_kinds = n;
	k.kinds = names;
	k.n_unavailable = nu;
	k.unavailable = un;
	env.body_case = R3Q__ENVELOPE__BODY_KINDS;
	env.kinds = &k;
	link_send(&env);
	free(names);
	link_unavail_free(un, nu);
}

/*
 * The TLS handshake is done: the peer's certificate came from our CA and
 * carries the host dialled, but only OU=master makes it the master; a
 * worker's certificate would do otherwise.
 */
static int
link_check_master(struct bufferevent *bev)
{
	char	 role[32], name[64], why[512];

	if (tls_peer_identity(bufferevent_openssl_get_ssl(bev), role,
	    sizeof(role), name, sizeof(name)) == -1) {
		snprintf(why, sizeof(why), "peer at %s has no role (OU) or "
		    "name (CN) in its certificate", lk.l_peer);
		link_down(why, "give the master a certificate with OU=master");
		return (-1);
	}
	/* A relay stands for the master. */
	if (strcmp(role, "master") != 0 && strcmp(role, "relay") != 0) {
		snprintf(why, sizeof(why), "peer at %s is not a master or a "
		    "relay (role '%s', name '%s')", lk.l_peer, role, name);
		link_down(why, "point 'master' at masterd, and give masterd "
		    "its own certificate (OU=master)");
		return (-1);
	}
	return (0);
}

static void
link_event(struct bufferevent *bev, short what, void *arg)
{
	char	 why[512], fix[CONF_STRMAX + 128];
	int	 one = 1;

	(void)arg;
	if (what & BEV_EVENT_CONNECTED) {
		struct timeval	 tv = { WELCOME_TIMEOUT, 0 };

		/*
		 * A master (or relay) that takes our hello and never answers
		 * is left, to try again: a worker must not wait for ever.
		 */
		bufferevent_set_timeouts(bev, &tv, NULL);
		if (link_check_master(bev) == -1)
			return;
		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY,
		    &one, sizeof(one));
		sock_link_timeout(bufferevent_getfd(bev),
		    lk.l_conf->link_timeout);
		log_debug("TLS up with %s", lk.l_peer);
		if (seal_agreed(bufferevent_openssl_get_ssl(bev))) {
			/* Nothing from us until the master's mark. */
			lk.l_state = LINK_SEAL;
			return;
		}
		link_hello();
		return;
	}
	if (seal_error(lk.l_seal) != NULL) {
		snprintf(why, sizeof(why), "%s from the master %s",
		    seal_error(lk.l_seal), lk.l_peer);
		link_down(why, NULL);
		return;
	}
	switch (tls_explain(bev, what, "master", lk.l_peer, lk.l_host, why,
	    sizeof(why))) {
	case TLS_FAIL_NAME:
		snprintf(fix, sizeof(fix), "set 'master' to a name the "
		    "master's certificate carries, or issue it one for %s",
		    lk.l_host);
		break;
	case TLS_FAIL_UNTRUSTED:
		snprintf(fix, sizeof(fix), "set 'ca' (now %s) to the CA that "
		    "issued the master's certificate", lk.l_conf->ca);
		break;
	case TLS_FAIL_BADCERT:
		snprintf(fix, sizeof(fix), "give the master a certificate "
		    "made for it (OU=master, a TLS server)");
		break;
	case TLS_FAIL_REJECTED:
		snprintf(fix, sizeof(fix), "the master must trust the CA that "
		    "issued 'cert' (now %s), or 'cert' must come from the "
		    "master's CA", lk.l_conf->cert);
		break;
	case TLS_FAIL_REVOKED:
		snprintf(fix, sizeof(fix), "the master's certificate is in "
		    "our crl (%s): give the master a new certificate",
		    lk.l_conf->crl);
		break;
	case TLS_FAIL_WE_REVOKED:
		snprintf(fix, sizeof(fix), "our certificate (%s) is revoked: "
		    "issue this worker a new one (mkcerts DIR NAME)",
		    lk.l_conf->cert);
		break;
	case TLS_FAIL_VALIDITY:
		/* Renewed files (SIGHUP) or a corrected clock cure it. */
		link_down(why, NULL);
		return;
	default:
		if ((what & BEV_EVENT_EOF) && (lk.l_state == LINK_HELLO ||
		    lk.l_state == LINK_SEAL))
			snprintf(why, sizeof(why), "the master %s closed the "
			    "connection before welcoming us", lk.l_peer);
		else if ((what & BEV_EVENT_TIMEOUT) &&
		    lk.l_state == LINK_CONNECTING)
			snprintf(why, sizeof(why), "timed out in the TLS "
			    "handshake with %s", lk.l_peer);
		else if ((what & BEV_EVENT_TIMEOUT) &&
		    (lk.l_state == LINK_HELLO || lk.l_state == LINK_SEAL))
			snprintf(why, sizeof(why), "the master %s did not "
			    "answer our hello in %d s", lk.l_peer,
			    WELCOME_TIMEOUT);
		link_down(why, NULL);
		return;
	}
	link_down(why, fix);
}

/* The link's output went down to its low-water mark: a relay goes on. */
static void
link_written(struct bufferevent *bev, void *arg)
{
	(void)bev;
	(void)arg;
	relay_up_writable();
}

/* TCP is up: start TLS over it. */
static void
link_tls_start(evutil_socket_t fd)
{
	struct timeval	 tv = { CONNECT_TIMEOUT, 0 };
	SSL		*ssl;
	char		 err[512];

	if ((ssl = tls_client_ssl(lk.l_ctx, lk.l_host, err,
	    sizeof(err))) == NULL) {
		close(fd);
		link_down(err, NULL);
		return;
	}
	lk.l_bev = bufferevent_openssl_socket_new(lk.l_base, fd, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (lk.l_bev == NULL) {
		SSL_free(ssl);
		close(fd);
		link_down("cannot create a TLS bufferevent", NULL);
		return;
	}
	if (lk.l_conf->sealed_frames && seal_client_offer(ssl) == -1)
		log_warnx("cannot offer sealed frames; TLS records it is");
	bufferevent_setcb(lk.l_bev, link_read, link_written, link_event,
	    NULL);
	if (relay_enabled())
		bufferevent_setwatermark(lk.l_bev, EV_WRITE, 64u << 10, 0);
	bufferevent_set_timeouts(lk.l_bev, &tv, &tv);
	bufferevent_enable(lk.l_bev, EV_READ | EV_WRITE);
}

static void	link_tcp_next(void);

/* connect(2) finished, failed or timed out. */
static void
link_tcp_done(evutil_socket_t fd, short ev, void *arg)
{
	socklen_t	 len = sizeof(int);
	int		 err = 0;

	(void)arg;
	event_free(lk.l_tcp);
	lk.l_tcp = NULL;
	if (ev & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err != 0) {
		close(fd);
		lk.l_tcperr = err;
		link_tcp_next();
		return;
	}
	freeaddrinfo(lk.l_res);
	lk.l_res = NULL;
	lk.l_ai = NULL;
	link_tls_start(fd);
}

/*
 * Connect to the master's next address, in the resolver's order; when
 * none is left, say why the last one failed.
 */
static void
link_tcp_next(void)
{
	struct timeval	 tv = { CONNECT_TIMEOUT, 0 };
	struct addrinfo	*ai;
	char		 why[512];
	int		 fd;

	while ((ai = lk.l_ai) != NULL) {
		lk.l_ai = ai->ai_next;
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1) {
			lk.l_tcperr = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS) {
			lk.l_tcp = event_new(lk.l_base, fd, EV_WRITE,
			    link_tcp_done, NULL);
			if (lk.l_tcp == NULL)
				fatalx("event_new");
			event_add(lk.l_tcp, &tv);
			return;
		}
		lk.l_tcperr = errno;
		close(fd);
	}
	if (lk.l_tcperr == ECONNREFUSED)
		snprintf(why, sizeof(why), "connection refused by %s",
		    lk.l_peer);
	else if (lk.l_tcperr == ETIMEDOUT)
		snprintf(why, sizeof(why), "timed out connecting to %s",
		    lk.l_peer);
	else
		snprintf(why, sizeof(why), "cannot connect to %s: %s",
		    lk.l_peer, strerror(lk.l_tcperr));
	link_down(why, NULL);
}

/* Resolve the master and start connecting. */
static void
link_connect(evutil_socket_t fd, short ev, void *arg)
{
	struct addrinfo	 hints;
	char		 why[512];
	int		 rc;

	(void)fd;
	(void)ev;
	(void)arg;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	lk.l_state = LINK_CONNECTING;
	if ((rc = getaddrinfo(lk.l_host, lk.l_port, &hints,
	    &lk.l_res)) != 0) {
		lk.l_res = NULL;
		snprintf(why, sizeof(why), "cannot resolve %s: %s", lk.l_host,
		    gai_strerror(rc));
		link_down(why, NULL);
		return;
	}
	lk.l_ai = lk.l_res;
	lk.l_tcperr = ECONNREFUSED;
	link_tcp_next();
}

/* "host:port", bracketing an IPv6 address. */
static void
link_set_peer(void)
{
	snprintf(lk.l_peer, sizeof(lk.l_peer), strchr(lk.l_host, ':') ?
	    "[%s]:%s" : "%s:%s", lk.l_host, lk.l_port);
}

/* Dial the i-th address of 'master' from now on. */
static void
link_use_addr(size_t i)
{
	lk.l_idx = i;
	snprintf(lk.l_host, sizeof(lk.l_host), "%s", lk.l_hosts[i]);
	snprintf(lk.l_port, sizeof(lk.l_port), "%s", lk.l_ports[i]);
	link_set_peer();
}

/*
 * 'master': one host:port, or several separated by commas (or blanks),
 * masters and relays to try in order.  Fills hosts and ports
 * if given; -1 with a message naming the bad one.
 */
static int
link_parse_masters(const char *v, char (*hosts)[256], char (*ports)[16],
    size_t *np, char *err, size_t errlen)
{
	char		 one[CONF_STRMAX], h[256], p[16];
	const char	*q = v;
	size_t		 n = 0, len;

	for (;;) {
		q += strspn(q, ", \t");
		if (*q == '\0')
			break;
		len = strcspn(q, ", \t");
		if (len >= sizeof(one)) {
			snprintf(err, errlen, "master: address too long");
			return (-1);
		}
		memcpy(one, q, len);
		one[len] = '\0';
		q += len;
		if (conf_split_hostport(one, h, sizeof(h), p, sizeof(p),
		    "7411") == -1 || h[0] == '\0') {
			snprintf(err, errlen, "master: '%.200s' is not "
			    "host:port", one);
			return (-1);
		}
		if (n == MASTERS_MAX) {
			snprintf(err, errlen, "master: more than %d addresses",
			    MASTERS_MAX);
			return (-1);
		}
		if (hosts != NULL) {
			snprintf(hosts[n], sizeof(hosts[n]), "%s", h);
			snprintf(ports[n], sizeof(ports[n]), "%s", p);
		}
		n++;
	}
	if (n == 0) {
		snprintf(err, errlen, "master: no address");
		return (-1);
	}
	if (np != NULL)
		*np = n;
	return (0);
}

/* The check of the 'master' key (workerd.c). */
int
link_master_list(const char *v, char *err, size_t errlen)
{
	return (link_parse_masters(v, NULL, NULL, NULL, err, errlen));
}

/*
 * The TLS context for conf, with its CRL (crl = none: NULL) checked in
 * the verification of the master's certificate; NULL with a message.
 */
static SSL_CTX *
link_ctx(const struct workerd_config *conf, struct tls_crl **crlp,
    char *err, size_t errlen)
{
	SSL_CTX		*ctx;
	struct tls_crl	*crl = NULL;

	if ((ctx = tls_ctx_new(0, conf->ca, conf->cert, conf->key, err,
	    errlen)) == NULL)
		return (NULL);
	if (tls_crl_configured(conf->crl) && ((crl = tls_crl_load(conf->crl,
	    conf->ca, err, errlen)) == NULL || tls_crl_apply(ctx, crl, err,
	    errlen) == -1)) {
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	*crlp = crl;
	return (ctx);
}

/* A renewed certificate (join.c): the next connection presents it. */
void
link_ctx_renewed(void)
{
	SSL_CTX		*ctx;
	struct tls_crl	*crl = NULL;
	char		 err[1024];

	if ((ctx = link_ctx(lk.l_conf, &crl, err, sizeof(err))) == NULL) {
		log_warnx("renewal: %s", err);
		return;
	}
	SSL_CTX_free(lk.l_ctx);
	lk.l_ctx = ctx;
	tls_crl_free(lk.l_crl);
	lk.l_crl = crl;
}

/* Set up the link and make the first attempt at once. */
void
link_start(struct event_base *base, const struct workerd_config *conf,
    const char *name)
{
	char	 err[512];

	lk.l_base = base;
	lk.l_conf = conf;
	snprintf(lk.l_name, sizeof(lk.l_name), "%s", name);
	TAILQ_INIT(&lk.l_outbox);
	TAILQ_INIT(&lk.l_news);
	if (link_parse_masters(conf->master, lk.l_hosts, lk.l_ports,
	    &lk.l_naddrs, err, sizeof(err)) == -1)
		fatalx("%s", err);
	snprintf(lk.l_master, sizeof(lk.l_master), "%s", conf->master);
	link_use_addr(0);
	if ((lk.l_ctx = link_ctx(conf, &lk.l_crl, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	lk.l_backoff = BACKOFF_MIN_MS;
	lk.l_retry = evtimer_new(base, link_connect, NULL);
	lk.l_wake = event_new(base, -1, 0, link_collect, NULL);
	delay_ev = evtimer_new(base, link_delay_fire, NULL);
	lk.l_frame = evtimer_new(base, link_frame_late, NULL);
	lk.l_leave = evtimer_new(base, link_drain_late, NULL);
	lk.l_heartbeat = event_new(base, -1, EV_PERSIST, link_heartbeat, NULL);
	link_heartbeat_arm(conf->heartbeat);
	link_connect(-1, 0, NULL);
}

/*
 * SIGHUP: new TLS files serve the next connection; a new master address
 * drops the current one and connects there at once.  -1 changes nothing.
 */
int
link_reload(const struct workerd_config *nc)
{
	SSL_CTX		*ctx;
	struct tls_crl	*crl = NULL;
	X509		*peer;
	SSL		*ssl;
	char		 err[1024], why[2200];
	char		 hosts[MASTERS_MAX][256], ports[MASTERS_MAX][16];
	size_t		 n, i;

	if (link_parse_masters(nc->master, hosts, ports, &n, err,
	    sizeof(err)) == -1) {
		log_warnx("reload: %s", err);
		return (-1);
	}
	if ((ctx = link_ctx(nc, &crl, err, sizeof(err))) == NULL) {
		log_warnx("reload: %s", err);
		return (-1);
	}
	SSL_CTX_free(lk.l_ctx);
	lk.l_ctx = ctx;
	tls_crl_free(lk.l_crl);
	lk.l_crl = crl;

	if (nc->heartbeat != lk.l_conf->heartbeat)
		link_heartbeat_arm(nc->heartbeat);
	/* The master we are talking to may be revoked now. */
	if (lk.l_bev != NULL && lk.l_state != LINK_CONNECTING &&
	    (lk.l_peer_id != NULL ? tls_crl_revoked_id(crl, lk.l_peer_id, err,
	    sizeof(err)) : (ssl = bufferevent_openssl_get_ssl(lk.l_bev)) !=
	    NULL && (peer = SSL_get0_peer_certificate(ssl)) != NULL &&
	    tls_crl_revoked(crl, peer, err, sizeof(err)))) {
		snprintf(why, sizeof(why), "the master's certificate is now "
		    "revoked by %s: %s", nc->crl, err);
		link_down(why, "give the master a new certificate");
		return (0);
	}
	if (strcmp(nc->master, lk.l_master) == 0)
		return (0);
	for (i = 0; i < n; i++) {
		memcpy(lk.l_hosts[i], hosts[i], sizeof(hosts[i]));
		memcpy(lk.l_ports[i], ports[i], sizeof(ports[i]));
	}
	lk.l_naddrs = n;
	snprintf(lk.l_master, sizeof(lk.l_master), "%s", nc->master);
	link_use_addr(0);
	log_info("the master is now %s", nc->master);
	link_close();
	relay_up_lost("the master's address changed");
	exec_drop_held();
	lk.l_state = LINK_IDLE;
	lk.l_backoff = BACKOFF_MIN_MS;
	evtimer_del(lk.l_retry);
	link_connect(-1, 0, NULL);
	return (0);
}

/* Relays (relay.c): may streams go up now (TLS up, hello sent)? */
int
link_relay_ready(void)
{
	return (lk.l_bev != NULL && lk.l_state >= LINK_HELLO);
}

/* Bytes waiting in the link's output. */
size_t
link_relay_outlen(void)
{
	if (lk.l_bev == NULL)
		return (0);
	return (evbuffer_get_length(bufferevent_get_output(lk.l_bev)));
}

void
link_relay_send(Envelope *env)
{
	link_send(env);
}

void
link_stop(void)
{
	struct wtask	*t;

	link_close();
	join_stop();
	while ((t = TAILQ_FIRST(&lk.l_outbox)) != NULL) {
		TAILQ_REMOVE(&lk.l_outbox, t, wt_entry);
		wtask_free(t);
	}
	if (batch != NULL)
		evbuffer_free(batch);
	event_free(lk.l_heartbeat);
	event_free(delay_ev);
	event_free(lk.l_retry);
	event_free(lk.l_wake);
	event_free(lk.l_frame);
	event_free(lk.l_leave);
	free(lk.l_back);
	SSL_CTX_free(lk.l_ctx);
	tls_crl_free(lk.l_crl);
}
