/*
 * Master-planned worker-to-worker operations (doc/algorithms.md §2;
 * exchange.h has the interface): measuring the link matrix, and total
 * exchanges scheduled by common/xchg over it.
 *
 * One operation runs at a time, the others wait in a queue: a probe or an
 * exchange shares the workers' links with nothing else of ours, so what is
 * measured is the link and what is predicted is what runs.  A probe of the
 * pair (i, j) orders i to ping j (the smallest round trip is the start-up
 * T_ij, peer_delay included) and then to send j a bulk transfer, timed to
 * j's acknowledgement: B_ij = bytes / (time - T_ij).  The pairs are probed
 * one after the other.  An exchange orders every worker at once, each with
 * its sends and receives in the schedule's order; they report each send's
 * start and end.  A worker lost, a report of failure or silence past the
 * timeout ends the operation with an error naming the worker; the others
 * are told to drop their part (PeerOrder op 3).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "exchange.h"
#include "log.h"
#include "masterd.h"
#include "util.h"
#include "xchg/xchg.h"

#define X_PINGS			5
#define X_PROBE_BYTES		(UINT64_C(1) << 20)
#define X_PROBE_BYTES_MAX	(UINT64_C(1) << 30)
#define X_PROBE_TIMEOUT		30000	/* ms, one probe */
#define X_SLACK			5000	/* ms the master waits past a
					   worker's own timeout */
#define X_LINK_MAX_AGE		(600 * NS_PER_SEC)
#define X_CLIENT_BYTES		(UINT64_C(1) << 20)
#define X_FATAL_DELTA		(UINT64_C(4) << 10)	/* delta << x */

enum { ORDER_PROBE = 1, ORDER_EXCHANGE, ORDER_CANCEL };
enum { X_MEASURE, X_EXCHANGE };

/* A measured link, by the workers' names (they outlive connections). */
struct xlink {
	char		 l_src[64];
	char		 l_dst[64];
	double		 l_t;		/* s */
	double		 l_b;		/* bytes a second */
	uint64_t	 l_at;		/* mono ns */
};

struct xop {
	TAILQ_ENTRY(xop)	 x_entry;
	uint64_t		 x_id;
	int			 x_kind;
	int			 x_cancelled;
	size_t			 x_p;
	uint32_t		*x_wids;
	char			(*x_names)[64];
	char			(*x_addrs)[128];
	uint64_t		*x_bytes;	/* exchange: p x p */
	enum xchg_algo		 x_algo;
	uint64_t		 x_timeout;	/* ms, 0: from the prediction */
	exchange_done_fn	 x_done;
	void			*x_arg;
	/* probes still to make */
	uint32_t		*x_pi, *x_pj;
	size_t			 x_npairs, x_pair;
	uint64_t		 x_probe_bytes;
	/* the order out */
	uint64_t		 x_order;
	int			 x_running;	/* the exchange's orders out */
	uint64_t		 x_t0;
	int			*x_reported;
	size_t			 x_nreported;
	struct xchg_matrix	*x_m;
	struct xchg_sched	 x_sched;
	struct exchange_event_result *x_ev;
	double			 x_lb;
	uint64_t		 x_last;	/* mono ns of the last report */
};
TAILQ_HEAD(xoplist, xop);

/* A client waiting for an answer (links --measure, exchange run). */
struct creq {
	LIST_ENTRY(creq)	 c_entry;
	struct session		*c_s;
	uint64_t		 c_req;
	int			 c_kind;
};
LIST_HEAD(creqlist, creq);

static struct {
	struct xlink		*links;
	size_t			 nlinks, cap;
	struct xoplist		 ops;
	uint64_t		 next_id;
	uint64_t		 next_order;
	struct event		*timer;		/* the running op's deadline */
	struct event		*kick;		/* run the head of the queue */
	struct creqlist		 creqs;
	int			 on;
} xg;

static void	x_fail(struct xop *, uint32_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static struct xlink *
x_link(const char *src, const char *dst)
{
	size_t	 i;

	for (i = 0; i < xg.nlinks; i++)
		if (strcmp(xg.links[i].l_src, src) == 0 &&
		    strcmp(xg.links[i].l_dst, dst) == 0)
			return (&xg.links[i]);
	return (NULL);
}

static void
x_link_set(const char *src, const char *dst, double t, double b)
{
	struct xlink	*l;

	if ((l = x_link(src, dst)) == NULL) {
		if (xg.nlinks == xg.cap) {
			xg.cap = xg.cap ? 2 * xg.cap : 16;
			if ((xg.links = reallocarray(xg.links, xg.cap,
			    sizeof(*xg.links))) == NULL)
				fatal("%s", __func__);
		}
		l = &xg.links[xg.nlinks++];
		snprintf(l->l_src, sizeof(l->l_src), "%s", src);
		snprintf(l->l_dst, sizeof(l->l_dst), "%s", dst);
	}
	l->l_t = t;
	l->l_b = b;
	l->l_at = mono_ns();
}

int
exchange_capable(const struct worker *w)
{
	return (w != NULL && w->w_peer_addr != NULL && !w->w_draining);
}

/* The worker of op x's index i, if it is still the one it was. */
static struct worker *
x_worker(const struct xop *x, size_t i)
{
	struct worker	*w;

	if ((w = worker_get(x->x_wids[i])) == NULL ||
	    strcmp(w->w_name, x->x_names[i]) != 0)
		return (NULL);
	return (w);
}

static void
x_kick(void)
{
	event_active(xg.kick, 0, 0);
}

static void
x_arm(uint64_t ms)
{
	struct timeval	 tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(xg.timer, &tv);
}

static void
x_free(struct xop *x)
{
	free(x->x_wids);
	free(x->x_names);
	free(x->x_addrs);
	free(x->x_bytes);
	free(x->x_pi);
	free(x->x_pj);
	free(x->x_reported);
	free(x->x_ev);
	xchg_matrix_free(x->x_m);
	xchg_sched_free(&x->x_sched);
	free(x);
}

static void
x_send_order(struct worker *w, uint64_t id, R3q__PeerOrder *po)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;

	env.id = id;
	env.body_case = R3Q__ENVELOPE__BODY_PEER_ORDER;
	env.peer_order = po;
	session_send(w->w_session, &env);
}

/* Tell every worker of x still here to drop its part of x's order. */
static void
x_cancel_orders(struct xop *x)
{
	R3q__PeerOrder	 po = R3Q__PEER_ORDER__INIT;
	struct worker	*w;
	size_t		 i;

	po.op = ORDER_CANCEL;
	for (i = 0; i < x->x_p; i++)
		if ((w = x_worker(x, i)) != NULL && (x->x_kind == X_EXCHANGE ?
		    x->x_running && !x->x_reported[i] :
		    x->x_pair < x->x_npairs && x->x_pi[x->x_pair] == i))
			x_send_order(w, x->x_order, &po);
}

/* x is over: tell whoever asked, go on with the queue. */
static void
x_end(struct xop *x, int ok, uint32_t culprit, const char *why)
{
	struct exchange_result	 r;
	const char		**names;
	size_t			 i;
	double			 last = 0;

	memset(&r, 0, sizeof(r));
	r.er_id = x->x_id;
	r.er_ok = ok;
	snprintf(r.er_error, sizeof(r.er_error), "%s", why != NULL ? why :
	    "");
	r.er_failed_wid = culprit;
	r.er_p = x->x_p;
	r.er_wids = x->x_wids;
	names = xcalloc(x->x_p + 1, sizeof(*names));
	for (i = 0; i < x->x_p; i++)
		names[i] = x->x_names[i];
	r.er_names = names;
	snprintf(r.er_algo, sizeof(r.er_algo), "%s", x->x_sched.xs_name);
	r.er_t_tb = x->x_lb;
	r.er_predicted = x->x_sched.xs_time;
	r.er_measured = -1;
	r.er_wall = x->x_running && x->x_last > x->x_t0 ?
	    (double)(x->x_last - x->x_t0) / 1e9 : 0;
	r.er_ev = x->x_ev;
	r.er_nev = x->x_ev != NULL ? x->x_sched.xs_n : 0;
	if (ok) {
		for (i = 0; i < r.er_nev; i++)
			if (x->x_ev[i].ee_end > last)
				last = x->x_ev[i].ee_end;
		r.er_measured = last;
	}
	if (!ok) {
		x_cancel_orders(x);
		log_warnx("exchange %llu failed: %s",
		    (unsigned long long)x->x_id, why);
	} else if (x->x_kind == X_EXCHANGE)
		log_info("exchange %llu among %zu workers (%s): predicted "
		    "%.3f s, measured %.3f s, t_tb %.3f s",
		    (unsigned long long)x->x_id, x->x_p, r.er_algo,
		    r.er_predicted, r.er_measured, r.er_t_tb);
	else
		log_info("links among %zu workers measured (%zu probes)",
		    x->x_p, x->x_npairs);
	TAILQ_REMOVE(&xg.ops, x, x_entry);
	evtimer_del(xg.timer);
	if (!x->x_cancelled && x->x_done != NULL)
		x->x_done(x->x_arg, &r);
	x_free(x);
	free(names);
	x_kick();
}

static void
x_fail(struct xop *x, uint32_t culprit, const char *fmt, ...)
{
	char	 why[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	x_end(x, 0, culprit, why);
}

/* The next probe of x, or its exchange once every link is known. */
static void	x_exchange_begin(struct xop *);

static void
x_step(struct xop *x)
{
	R3q__PeerOrder	 po = R3Q__PEER_ORDER__INIT;
	R3q__PeerTarget	 t = R3Q__PEER_TARGET__INIT, *tp = &t;
	struct worker	*wi;
	uint32_t	 i, j;
	size_t		 k;

	for (k = 0; k < x->x_p; k++)
		if (x_worker(x, k) == NULL) {
			x_fail(x, x->x_wids[k], "worker %s is gone",
			    x->x_names[k]);
			return;
		}
	if (x->x_pair == x->x_npairs) {
		if (x->x_kind == X_MEASURE)
			x_end(x, 1, EXCHANGE_NOBODY, NULL);
		else
			x_exchange_begin(x);
		return;
	}
	i = x->x_pi[x->x_pair];
	j = x->x_pj[x->x_pair];
	wi = x_worker(x, i);
	t.index = 0;
	t.name = x->x_names[j];
	t.address = x->x_addrs[j];
	po.op = ORDER_PROBE;
	po.self = 1;
	po.n_peers = 1;
	po.peers = &tp;
	po.pings = X_PINGS;
	po.bytes = x->x_probe_bytes;
	po.timeout_ms = X_PROBE_TIMEOUT;
	x->x_order = ++xg.next_order;
	x_send_order(wi, x->x_order, &po);
	x_arm(X_PROBE_TIMEOUT + X_SLACK);
}

/* Plan x's exchange from the matrix, send each worker its part. */
static void
x_exchange_begin(struct xop *x)
{
	R3q__PeerOrder		 po;
	R3q__PeerTarget		*tv, **tp;
	R3q__PeerStep		*sv, **sp, **rp;
	struct xchg_params	 xp;
	struct xlink		*l;
	char			 err[256];
	size_t			 i, j, k, p = x->x_p, n, ns, nr;
	uint64_t		 ms;

	if (p < 2) {
		x->x_running = 1;
		x->x_t0 = x->x_last = mono_ns();
		x->x_ev = xcalloc(1, sizeof(*x->x_ev));
		snprintf(x->x_sched.xs_name, sizeof(x->x_sched.xs_name), "%s",
		    xchg_algo_name(x->x_algo));
		x_end(x, 1, EXCHANGE_NOBODY, NULL);
		return;
	}
	if ((x->x_m = xchg_matrix_new((unsigned)p)) == NULL)
		fatalx("%s: out of memory", __func__);
	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++) {
			k = i * p + j;
			x->x_m->xm_m[k] = x->x_bytes[k];
			x->x_m->xm_t[k] = 0;
			x->x_m->xm_b[k] = 1;
			if (i == j || x->x_bytes[k] == 0)
				continue;
			l = x_link(x->x_names[i], x->x_names[j]);
			x->x_m->xm_t[k] = l->l_t;
			x->x_m->xm_b[k] = l->l_b;
		}
	xchg_params_default(&xp);
	memset(&x->x_sched, 0, sizeof(x->x_sched));
	if (xchg_schedule(x->x_m, x->x_algo, &xp, &x->x_sched, err,
	    sizeof(err)) == -1) {
		x_fail(x, EXCHANGE_NOBODY, "cannot schedule: %s", err);
		return;
	}
	if (xchg_validate(x->x_m, &x->x_sched, err, sizeof(err)) == -1) {
		log_warnx("exchange %llu: %s made a schedule the validator "
		    "refuses: %s", (unsigned long long)x->x_id,
		    x->x_sched.xs_name, err);
		x_fail(x, EXCHANGE_NOBODY, "invalid schedule: %s", err);
		return;
	}
	x->x_lb = xchg_lower_bound(x->x_m);
	n = x->x_sched.xs_n;
	x->x_ev = xcalloc(n + 1, sizeof(*x->x_ev));
	for (k = 0; k < n; k++) {
		const struct xchg_event *e = &x->x_sched.xs_ev[k];

		x->x_ev[k].ee_src = e->ev_src;
		x->x_ev[k].ee_dst = e->ev_dst;
		x->x_ev[k].ee_piece = e->ev_piece;
		x->x_ev[k].ee_bytes = e->ev_bytes;
		x->x_ev[k].ee_pred_start = e->ev_start;
		x->x_ev[k].ee_pred_end = e->ev_end;
		x->x_ev[k].ee_start = -1;
		x->x_ev[k].ee_end = -1;
	}
	x->x_reported = xcalloc(p, sizeof(*x->x_reported));
	ms = x->x_timeout ? x->x_timeout : 10000 +
	    (uint64_t)(3000 * x->x_sched.xs_time);
	x->x_timeout = ms;
	tv = xcalloc(p, sizeof(*tv));
	tp = xcalloc(p, sizeof(*tp));
	for (i = 0; i < p; i++) {
		r3q__peer_target__init(&tv[i]);
		tv[i].index = (uint32_t)i;
		tv[i].name = x->x_names[i];
		tv[i].address = x->x_addrs[i];
		tp[i] = &tv[i];
	}
	sv = xcalloc(n + 1, sizeof(*sv));
	sp = xcalloc(n + 1, sizeof(*sp));
	rp = xcalloc(n + 1, sizeof(*rp));
	for (k = 0; k < n; k++) {
		r3q__peer_step__init(&sv[k]);
		sv[k].bytes = x->x_sched.xs_ev[k].ev_bytes;
		sv[k].piece = x->x_sched.xs_ev[k].ev_piece;
		sv[k].seq = (uint32_t)k;
	}
	x->x_order = ++xg.next_order;
	x->x_running = 1;
	x->x_t0 = mono_ns();
	for (i = 0; i < p; i++) {
		/* Each in the schedule's order: by start, then sender. */
		ns = nr = 0;
		for (k = 0; k < n; k++) {
			if (x->x_sched.xs_ev[k].ev_src == i) {
				sv[k].peer = x->x_sched.xs_ev[k].ev_dst;
				sp[ns++] = &sv[k];
			}
		}
		for (k = 0; k < n; k++)
			if (x->x_sched.xs_ev[k].ev_dst == i)
				rp[nr++] = &sv[k];
		/* a receive names its sender: a copy of the step */
		{
			R3q__PeerStep	*rv = xcalloc(nr + 1, sizeof(*rv)),
					**rq = xcalloc(nr + 1, sizeof(*rq));
			size_t		 m;

			for (m = 0; m < nr; m++) {
				rv[m] = *rp[m];
				rv[m].peer = x->x_sched.xs_ev[rp[m]->seq].ev_src;
				rq[m] = &rv[m];
			}
			r3q__peer_order__init(&po);
			po.op = ORDER_EXCHANGE;
			po.self = (uint32_t)i;
			po.n_peers = p;
			po.peers = tp;
			po.n_sends = ns;
			po.sends = sp;
			po.n_recvs = nr;
			po.recvs = rq;
			po.timeout_ms = ms;
			x_send_order(x_worker(x, i), x->x_order, &po);
			free(rv);
			free(rq);
		}
	}
	free(tv);
	free(tp);
	free(sv);
	free(sp);
	free(rp);
	log_info("exchange %llu among %zu workers: %s, %zu events, "
	    "predicted %.3f s (t_tb %.3f s)", (unsigned long long)x->x_id, p,
	    x->x_sched.xs_name, n, x->x_sched.xs_time, x->x_lb);
	x_arm(ms + X_SLACK);
}

static void
x_run(evutil_socket_t fd, short ev, void *arg)
{
	struct xop	*x;

	(void)fd;
	(void)ev;
	(void)arg;
	if ((x = TAILQ_FIRST(&xg.ops)) == NULL || x->x_order != 0)
		return;		/* nothing, or it runs already */
	x_step(x);
}

static void
x_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct xop	*x;
	char		 who[512];
	size_t		 i, n = 0;
	uint32_t	 culprit = EXCHANGE_NOBODY;

	(void)fd;
	(void)ev;
	(void)arg;
	if ((x = TAILQ_FIRST(&xg.ops)) == NULL)
		return;
	if (!x->x_running) {
		i = x->x_pi[x->x_pair];
		x_fail(x, x->x_wids[i], "probe of %s -> %s: no report from "
		    "%s within %u ms", x->x_names[i],
		    x->x_names[x->x_pj[x->x_pair]], x->x_names[i],
		    X_PROBE_TIMEOUT + X_SLACK);
		return;
	}
	who[0] = '\0';
	for (i = 0; i < x->x_p; i++) {
		if (x->x_reported[i])
			continue;
		if (n++ == 0)
			culprit = x->x_wids[i];
		if (strlen(who) + strlen(x->x_names[i]) + 8 < sizeof(who))
			snprintf(who + strlen(who), sizeof(who) - strlen(who),
			    "%s%s", n > 1 ? ", " : "", x->x_names[i]);
	}
	x_fail(x, culprit, "no report within %llu ms from %s",
	    (unsigned long long)(x->x_timeout + X_SLACK), who);
}

/* The index of worker w in x, or -1. */
static ssize_t
x_index(const struct xop *x, const struct worker *w)
{
	size_t	 i;

	for (i = 0; i < x->x_p; i++)
		if (x->x_wids[i] == w->w_id &&
		    strcmp(x->x_names[i], w->w_name) == 0)
			return ((ssize_t)i);
	return (-1);
}

static uint32_t
x_named(const struct xop *x, const char *name, uint32_t dflt)
{
	size_t	 i;

	for (i = 0; i < x->x_p; i++)
		if (strcmp(x->x_names[i], name) == 0)
			return (x->x_wids[i]);
	return (dflt);
}

/* A PeerReport from worker w (worker.c). */
void
exchange_dispatch(struct worker *w, void *arg)
{
	Envelope	*env = arg;
	R3q__PeerReport	*r = env->peer_report;
	struct xop	*x;
	ssize_t		 i;
	size_t		 k;
	double		 secs, t;
	char		 why[160];

	if ((x = TAILQ_FIRST(&xg.ops)) == NULL || env->id != x->x_order ||
	    (i = x_index(x, w)) == -1) {
		log_debug("worker %s: a peer report for order %llu, not ours "
		    "now", w->w_name, (unsigned long long)env->id);
		return;
	}
	str_vis(why, sizeof(why), r->error);
	if (!x->x_running) {
		if ((size_t)i != x->x_pi[x->x_pair])
			return;
		if (!r->ok) {
			x_fail(x, x_named(x, r->culprit, w->w_id), "probe "
			    "%s -> %s: %s", w->w_name,
			    x->x_names[x->x_pj[x->x_pair]], why);
			return;
		}
		secs = (double)r->bulk_ns / 1e9;
		t = (double)r->rtt_ns / 1e9;
		/* B = bytes / (time - T); T alone if the bulk took no more */
		x_link_set(w->w_name, x->x_names[x->x_pj[x->x_pair]], t,
		    r->bulk_bytes > 0 && secs > t ? (double)r->bulk_bytes /
		    (secs - t) : r->bulk_bytes > 0 ? (double)r->bulk_bytes /
		    secs : 1e12);
		evtimer_del(xg.timer);
		x->x_pair++;
		x->x_order = 0;
		x_kick();
		return;
	}
	if (x->x_reported[i])
		return;
	if (!r->ok) {
		x_fail(x, x_named(x, r->culprit, w->w_id), "worker %s: %s",
		    w->w_name, why);
		return;
	}
	for (k = 0; k < r->n_sent; k++) {
		uint32_t s = r->sent[k]->seq;

		if (s >= x->x_sched.xs_n ||
		    x->x_sched.xs_ev[s].ev_src != (unsigned)i) {
			x_fail(x, w->w_id, "worker %s reported event %u, not "
			    "one of its own", w->w_name, s);
			return;
		}
		x->x_ev[s].ee_start = (double)r->sent[k]->start_ns / 1e9;
		x->x_ev[s].ee_end = (double)r->sent[k]->end_ns / 1e9;
	}
	x->x_reported[i] = 1;
	x->x_last = mono_ns();
	if (++x->x_nreported < x->x_p)
		return;
	for (k = 0; k < x->x_sched.xs_n; k++)
		if (x->x_ev[k].ee_end < 0) {
			x_fail(x, x->x_wids[x->x_ev[k].ee_src], "worker %s did "
			    "not report event %zu", x->x_names[
			    x->x_ev[k].ee_src], k);
			return;
		}
	x_end(x, 1, EXCHANGE_NOBODY, NULL);
}

/* A worker is gone: an operation that needs it fails (now or later). */
void
exchange_worker_gone(struct worker *w)
{
	struct xop	*x;

	if (!xg.on || (x = TAILQ_FIRST(&xg.ops)) == NULL ||
	    x->x_order == 0 || x_index(x, w) == -1)
		return;
	/* Forget it first: its session cannot be told anything now. */
	x->x_wids[x_index(x, w)] = UINT32_MAX;
	x_fail(x, w->w_id, "worker %s was lost", w->w_name);
}

static struct xop *
x_new(int kind, const uint32_t *wids, size_t p, char *err, size_t errlen)
{
	struct xop	*x;
	struct worker	*w;
	size_t		 i, j;

	if (p > XCHG_MAX_P) {
		snprintf(err, errlen, "%zu workers: at most %d", p,
		    XCHG_MAX_P);
		return (NULL);
	}
	for (i = 0; i < p; i++) {
		if ((w = worker_get(wids[i])) == NULL) {
			snprintf(err, errlen, "no worker with id %u", wids[i]);
			return (NULL);
		}
		if (!exchange_capable(w)) {
			snprintf(err, errlen, "worker %s has no peer_listen "
			    "(or drains): it cannot take part", w->w_name);
			return (NULL);
		}
		for (j = 0; j < i; j++)
			if (wids[j] == wids[i]) {
				snprintf(err, errlen, "worker %s given twice",
				    w->w_name);
				return (NULL);
			}
	}
	x = xcalloc(1, sizeof(*x));
	x->x_id = ++xg.next_id;
	x->x_kind = kind;
	x->x_p = p;
	x->x_wids = xcalloc(p + 1, sizeof(*x->x_wids));
	x->x_names = xcalloc(p + 1, sizeof(*x->x_names));
	x->x_addrs = xcalloc(p + 1, sizeof(*x->x_addrs));
	for (i = 0; i < p; i++) {
		w = worker_get(wids[i]);
		x->x_wids[i] = wids[i];
		snprintf(x->x_names[i], sizeof(x->x_names[i]), "%s",
		    w->w_name);
		snprintf(x->x_addrs[i], sizeof(x->x_addrs[i]), "%s",
		    STR_OR_EMPTY(w->w_peer_addr));
	}
	x->x_pi = xcalloc(p * p + 1, sizeof(*x->x_pi));
	x->x_pj = xcalloc(p * p + 1, sizeof(*x->x_pj));
	x->x_probe_bytes = X_PROBE_BYTES;
	x->x_algo = XCHG_PORTFOLIO;
	return (x);
}

/* Add the probe (i, j) to x: all of them, or only the unknown and old. */
static void
x_pairs(struct xop *x, int all)
{
	struct xlink	*l;
	uint64_t	 now = mono_ns();
	size_t		 i, j;

	for (i = 0; i < x->x_p; i++)
		for (j = 0; j < x->x_p; j++) {
			if (i == j || (x->x_bytes != NULL &&
			    x->x_bytes[i * x->x_p + j] == 0))
				continue;
			l = x_link(x->x_names[i], x->x_names[j]);
			if (!all && l != NULL && now - l->l_at < X_LINK_MAX_AGE)
				continue;
			x->x_pi[x->x_npairs] = (uint32_t)i;
			x->x_pj[x->x_npairs] = (uint32_t)j;
			x->x_npairs++;
		}
}

uint64_t
exchange_start(const uint32_t *workers, size_t p, const uint64_t *bytes,
    const char *algo, uint64_t timeout_ms, exchange_done_fn done,
    void *arg, char *err, size_t errlen)
{
	struct xop	*x;
	uint64_t	 sum = 0;
	size_t		 i, j;
	int		 a = XCHG_PORTFOLIO;

	if (!xg.on)
		exchange_init();
	if (algo != NULL && (a = xchg_algo_lookup(algo)) < 0) {
		snprintf(err, errlen, "unknown exchange algorithm '%.64s'",
		    algo);
		return (0);
	}
	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++)
			if (i != j) {
				if (bytes[i * p + j] > XCHG_MAX_BYTES ||
				    (sum += bytes[i * p + j]) >
				    EXCHANGE_MAX_BYTES) {
					snprintf(err, errlen, "too many bytes "
					    "in the exchange (at most %llu)",
					    (unsigned long long)
					    EXCHANGE_MAX_BYTES);
					return (0);
				}
			}
	if ((x = x_new(X_EXCHANGE, workers, p, err, errlen)) == NULL)
		return (0);
	x->x_bytes = xcalloc(p * p + 1, sizeof(*x->x_bytes));
	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++)
			x->x_bytes[i * p + j] = i == j ? 0 : bytes[i * p + j];
	x->x_algo = (enum xchg_algo)a;
	x->x_timeout = timeout_ms;
	x->x_done = done;
	x->x_arg = arg;
	x_pairs(x, 0);
	TAILQ_INSERT_TAIL(&xg.ops, x, x_entry);
	x_kick();
	return (x->x_id);
}

void
exchange_cancel(uint64_t id)
{
	struct xop	*x;

	TAILQ_FOREACH(x, &xg.ops, x_entry)
		if (x->x_id == id)
			break;
	if (x == NULL)
		return;
	x->x_cancelled = 1;
	if (x == TAILQ_FIRST(&xg.ops) && x->x_order != 0) {
		x_end(x, 0, EXCHANGE_NOBODY, "cancelled");
		return;
	}
	TAILQ_REMOVE(&xg.ops, x, x_entry);
	x_free(x);
}

/* Clients: r3qctl links, r3qctl exchange run. */

static void
x_links_answer(struct session *s, uint64_t req, const char *error)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__LinksAnswer a = R3Q__LINKS_ANSWER__INIT;
	R3q__LinkInfo	*lv, **lp;
	uint64_t	 now = mono_ns();
	size_t		 i;

	lv = xcalloc(xg.nlinks + 1, sizeof(*lv));
	lp = xcalloc(xg.nlinks + 1, sizeof(*lp));
	for (i = 0; i < xg.nlinks; i++) {
		r3q__link_info__init(&lv[i]);
		lv[i].src = xg.links[i].l_src;
		lv[i].dst = xg.links[i].l_dst;
		lv[i].startup_s = xg.links[i].l_t;
		lv[i].bandwidth = xg.links[i].l_b;
		lv[i].age_ms = (now - xg.links[i].l_at) / NS_PER_MS;
		lp[i] = &lv[i];
	}
	a.n_links = xg.nlinks;
	a.links = lp;
	a.error = (char *)(uintptr_t)(error != NULL ? error : "");
	env.id = req;
	env.body_case = R3Q__ENVELOPE__BODY_LINKS_ANSWER;
	env.links_answer = &a;
	session_send(s, &env);
	free(lv);
	free(lp);
}

static void
x_client_done(void *arg, const struct exchange_result *r)
{
	struct creq		*c = arg;
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__ExchangeAnswer	 a = R3Q__EXCHANGE_ANSWER__INIT;
	R3q__ExchangeEvent	*ev, **ep;
	char			**names;
	size_t			 i;

	LIST_REMOVE(c, c_entry);
	if (c->c_s == NULL) {
		free(c);
		return;
	}
	if (c->c_kind == X_MEASURE) {
		x_links_answer(c->c_s, c->c_req, r->er_ok ? NULL :
		    r->er_error);
		free(c);
		return;
	}
	names = xcalloc(r->er_p + 1, sizeof(*names));
	for (i = 0; i < r->er_p; i++)
		names[i] = (char *)(uintptr_t)r->er_names[i];
	ev = xcalloc(r->er_nev + 1, sizeof(*ev));
	ep = xcalloc(r->er_nev + 1, sizeof(*ep));
	for (i = 0; i < r->er_nev; i++) {
		r3q__exchange_event__init(&ev[i]);
		ev[i].src = names[r->er_ev[i].ee_src];
		ev[i].dst = names[r->er_ev[i].ee_dst];
		ev[i].piece = r->er_ev[i].ee_piece;
		ev[i].bytes = r->er_ev[i].ee_bytes;
		ev[i].pred_start = r->er_ev[i].ee_pred_start;
		ev[i].pred_end = r->er_ev[i].ee_pred_end;
		ev[i].start = r->er_ev[i].ee_start;
		ev[i].end = r->er_ev[i].ee_end;
		ep[i] = &ev[i];
	}
	a.ok = r->er_ok;
	a.error = (char *)(uintptr_t)r->er_error;
	a.algo = (char *)(uintptr_t)r->er_algo;
	a.t_tb = r->er_t_tb;
	a.predicted = r->er_predicted;
	a.measured = r->er_measured;
	a.wall = r->er_wall;
	a.n_workers = r->er_p;
	a.workers = names;
	a.n_events = r->er_nev;
	a.events = ep;
	env.id = c->c_req;
	env.body_case = R3Q__ENVELOPE__BODY_EXCHANGE_ANSWER;
	env.exchange_answer = &a;
	session_send(c->c_s, &env);
	free(names);
	free(ev);
	free(ep);
	free(c);
}

/* Every worker that can take part, by id. */
static uint32_t *
x_capable(size_t *np)
{
	uint32_t	*w = xcalloc(worker_ids() + 1, sizeof(*w));
	struct worker	*wk;
	uint32_t	 i = 0;

	*np = 0;
	while ((wk = worker_next(&i)) != NULL)
		if (exchange_capable(wk))
			w[(*np)++] = wk->w_id;
	return (w);
}

void
exchange_control(void *sarg, void *earg)
{
	struct session	*s = sarg;
	Envelope	*env = earg;
	struct creq	*c;
	struct xop	*x;
	uint32_t	*wids;
	uint64_t	*bytes, b;
	size_t		 p, i, j;
	char		 err[256];

	if (!xg.on)
		exchange_init();
	if (env->body_case == R3Q__ENVELOPE__BODY_LINKS_REQUEST &&
	    !env->links_request->measure) {
		x_links_answer(s, env->id, NULL);
		return;
	}
	wids = x_capable(&p);
	c = xcalloc(1, sizeof(*c));
	c->c_s = s;
	c->c_req = env->id;
	if (env->body_case == R3Q__ENVELOPE__BODY_LINKS_REQUEST) {
		b = env->links_request->bytes;
		if (b > X_PROBE_BYTES_MAX) {
			free(wids);
			free(c);
			session_error_soft(s, env->id, "probe of %llu bytes: "
			    "at most %llu", (unsigned long long)b,
			    (unsigned long long)X_PROBE_BYTES_MAX);
			return;
		}
		if ((x = x_new(X_MEASURE, wids, p, err, sizeof(err))) ==
		    NULL) {
			free(wids);
			free(c);
			session_error_soft(s, env->id, "%s", err);
			return;
		}
		if (b > 0)
			x->x_probe_bytes = b;
		x_pairs(x, 1);
		c->c_kind = X_MEASURE;
		x->x_done = x_client_done;
		x->x_arg = c;
		LIST_INSERT_HEAD(&xg.creqs, c, c_entry);
		TAILQ_INSERT_TAIL(&xg.ops, x, x_entry);
		log_info("%s (%s) asks for the links among %zu workers "
		    "measured", s->s_name, s->s_addr, p);
		free(wids);
		x_kick();
		return;
	}
	b = env->exchange_request->bytes ? env->exchange_request->bytes :
	    X_CLIENT_BYTES;
	if (b > XCHG_MAX_BYTES)
		b = XCHG_MAX_BYTES;
	bytes = xcalloc(p * p + 1, sizeof(*bytes));
	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++)
			bytes[i * p + j] = i == j ? 0 : b;
	if (env->exchange_request->fatal) {
		/*
		 * The sizes of the fatal matrix (doc/algorithms.md §2, as
		 * xchg_fatal() has them) on whatever links there are: row
		 * i < p - 1 sends h = (p - 2) x to i + 1 and delta elsewhere;
		 * the last row delta to 0 and x to 1 .. p - 2.
		 */
		if (p < 3) {
			free(wids);
			free(bytes);
			free(c);
			session_error_soft(s, env->id, "the fatal matrix needs "
			    "3 workers or more, not %zu", p);
			return;
		}
		for (i = 0; i < p; i++)
			for (j = 0; j < p; j++) {
				if (i == j)
					continue;
				if (i < p - 1)
					bytes[i * p + j] = j == i + 1 ?
					    (p - 2) * b : X_FATAL_DELTA;
				else
					bytes[i * p + j] = j == 0 ?
					    X_FATAL_DELTA : b;
			}
	}
	c->c_kind = X_EXCHANGE;
	LIST_INSERT_HEAD(&xg.creqs, c, c_entry);
	if (exchange_start(wids, p, bytes, env->exchange_request->algo[0] ?
	    env->exchange_request->algo : NULL,
	    env->exchange_request->timeout_ms, x_client_done, c, err,
	    sizeof(err)) == 0) {
		LIST_REMOVE(c, c_entry);
		free(c);
		session_error_soft(s, env->id, "%s", err);
	} else
		log_info("%s (%s) asks for an exchange of %llu bytes among "
		    "%zu workers", s->s_name, s->s_addr,
		    (unsigned long long)b, p);
	free(wids);
	free(bytes);
}

/* A client's session is going away: its answer goes nowhere. */
void
exchange_session_gone(struct session *s)
{
	struct creq	*c;

	LIST_FOREACH(c, &xg.creqs, c_entry)
		if (c->c_s == s)
			c->c_s = NULL;
}

void
exchange_init(void)
{
	if (xg.on)
		return;
	TAILQ_INIT(&xg.ops);
	LIST_INIT(&xg.creqs);
	if ((xg.timer = evtimer_new(md->base, x_timeout, NULL)) == NULL ||
	    (xg.kick = event_new(md->base, -1, 0, x_run, NULL)) == NULL)
		fatalx("%s: event_new", __func__);
	xg.on = 1;
}

void
exchange_free_all(void)
{
	struct xop	*x;
	struct creq	*c;

	if (!xg.on)
		return;
	while ((x = TAILQ_FIRST(&xg.ops)) != NULL) {
		TAILQ_REMOVE(&xg.ops, x, x_entry);
		x_free(x);
	}
	while ((c = LIST_FIRST(&xg.creqs)) != NULL) {
		LIST_REMOVE(c, c_entry);
		free(c);
	}
	event_free(xg.timer);
	event_free(xg.kick);
	free(xg.links);
	xg.links = NULL;
	xg.nlinks = xg.cap = 0;
	xg.on = 0;
}
