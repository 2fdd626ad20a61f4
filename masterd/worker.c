/*
 * The worker protocol: what a worker says once its session has a frame
 * for us.  Its hello (checked, then the worker joins), its results
 * (judged by their tags), its progress, heartbeats, news of a running
 * task, the kinds it offers or withdraws, its answers to Withdraw, its
 * drain, and the liveness check that loses a worker gone silent.
 *
 * Calls go down from here: to dispatch.c, the one module that tells the
 * scheduling core (dispatch_*()) and builds the frames a worker is sent;
 * to the session layer for a Welcome, an Error or a close; to the job
 * layer (job_*()) with what a result means for its job; and, by the
 * message, to relay.c, tokens.c and exchange.c.  The session layer calls
 * up into worker_hello(), worker_dispatch() and worker_gone().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "exchange.h"
#include "log.h"
#include "masterd.h"
#include "task/status.h"
#include "util.h"

/* Results for copies a worker does not hold: logged, then closed. */
#define REFUSED_LOG_NS	(10 * NS_PER_SEC)	/* a line per worker at most */
#define REFUSED_MAX	64		/* then it is disconnected */
#define KILLED_MAX	4096		/* interrupted copies remembered */

static void	worker_peer_addr(struct session *, struct worker *,
	    const char *);

/*
 * The worker protocol's own state: what it was given at start (the event
 * base, and the configuration, which a reload overwrites in place), the
 * worker table, the liveness timer, and the counts of results refused.
 * The table holds the workers by id; the others read it through
 * worker_get(), worker_next(), worker_count() and worker_ids().
 */
static struct {
	struct event_base		*base;
	const struct masterd_config	*conf;
	struct worker			**table;	/* by id */
	uint32_t			 nworkers;	/* in it */
	uint32_t			 maxworkers;	/* its size */
	struct event			*liveness;	/* heartbeat_timeout
							   check */
	uint64_t			 refused;	/* results refused: no
							   such copy */
	uint64_t			 refused_closed;	/* workers closed
								   for it */
} wk;

/* Start the worker protocol on base, under configuration c. */
void
worker_init(struct event_base *base, const struct masterd_config *c)
{
	wk.base = base;
	wk.conf = c;
}

/* Stop the liveness check and free the table: masterd exits. */
void
worker_close(void)
{
	if (wk.liveness != NULL) {
		event_free(wk.liveness);
		wk.liveness = NULL;
	}
	free(wk.table);
	wk.table = NULL;
	wk.nworkers = wk.maxworkers = 0;
}

/* Results refused so far, and workers closed for them (metrics). */
void
worker_refused_counts(uint64_t *refused, uint64_t *closed)
{
	*refused = wk.refused;
	*closed = wk.refused_closed;
}

/* Find a worker by id; NULL if none has it. */
struct worker *
worker_get(uint32_t wid)
{
	if (wid >= wk.maxworkers)
		return (NULL);
	return (wk.table[wid]);
}

/* How many workers are connected. */
uint32_t
worker_count(void)
{
	return (wk.nworkers);
}

/* Every worker id is below this: the size of an array indexed by id. */
uint32_t
worker_ids(void)
{
	return (wk.maxworkers);
}

/*
 * The next worker from id *i on, *i then past it; NULL when there is none
 * left.  From *i = 0, every worker in the order of their ids.
 */
struct worker *
worker_next(uint32_t *i)
{
	struct worker	*w;

	while (*i < wk.maxworkers)
		if ((w = wk.table[(*i)++]) != NULL)
			return (w);
	return (NULL);
}

/* The lowest free worker id, growing the table when full. */
static uint32_t
worker_id_alloc(void)
{
	struct worker	**nw;
	uint32_t	  i, n;

	for (i = 0; i < wk.maxworkers; i++)
		if (wk.table[i] == NULL)
			return (i);
	n = wk.maxworkers ? wk.maxworkers * 2 : 16;
	if ((nw = reallocarray(wk.table, n, sizeof(*nw))) == NULL)
		fatal("worker table");
	memset(nw + wk.maxworkers, 0, (n - wk.maxworkers) * sizeof(*nw));
	wk.table = nw;
	i = wk.maxworkers;
	wk.maxworkers = n;
	return (i);
}

/* Forget the kinds w withdrew. */
static void
worker_unavail_clear(struct worker *w)
{
	size_t	 i;

	for (i = 0; i < w->w_nunavail; i++)
		free(w->w_unavail[i]);
	free(w->w_unavail);
	w->w_unavail = NULL;
	w->w_nunavail = 0;
}

/*
 * What w offers now (its interned kinds) and the kinds it withdrew, with
 * why (Hello, Kinds): kept for r3qctl workers, logged when new, and a
 * kind that no worker offers any more after a withdrawal fails its
 * waiting tasks with the reason (job_kind_unavailable()).
 */
static void
worker_unavail_set(struct worker *w, R3q__KindUnavailable **u, size_t n)
{
	char	 kind[KIND_NAME_MAX + 1], why[384], line[512];
	char	**old = w->w_unavail;
	size_t	 i, k, nold = w->w_nunavail;
	int	 known;

	for (i = 0; i < w->w_nkinds; i++)
		kind_offered(w->w_kinds[i]);
	w->w_unavail = NULL;
	w->w_nunavail = 0;
	if (n > KINDS_PER_WORKER)
		n = KINDS_PER_WORKER;
	if (n > 0)
		w->w_unavail = xcalloc(n, sizeof(*w->w_unavail));
	for (i = 0; i < n; i++) {
		if (u[i]->kind == NULL || kind_check(u[i]->kind) == -1)
			continue;
		str_vis(kind, sizeof(kind), u[i]->kind);
		str_vis(why, sizeof(why), u[i]->reason != NULL &&
		    u[i]->reason[0] != '\0' ? u[i]->reason : "unavailable");
		snprintf(line, sizeof(line), "%s: %s", kind, why);
		w->w_unavail[w->w_nunavail++] = xstrdup(line);
		for (k = 0, known = 0; k < nold && !known; k++)
			known = strcmp(old[k], line) == 0;
		if (known)
			continue;
		log_warnx("worker %s withdrew kind %s: %s", w->w_name, kind,
		    why);
		kind_withdrawn(kind_intern(kind), w->w_name, why);
	}
	for (k = 0; k < nold; k++)
		free(old[k]);
	free(old);
}

/* Forget a worker; the core puts its tasks back in the queue. */
void
worker_free(struct worker *w)
{
	exchange_worker_gone(w);
	dispatch_worker_gone(w);
	wk.table[w->w_id] = NULL;
	wk.nworkers--;
	if (w->w_session != NULL)
		w->w_session->s_worker = NULL;
	masterd_status();
	free(w->w_killed);
	free(w->w_kinds);
	free(w->w_why);
	free(w->w_drain_why);
	free(w->w_peer_addr);
	worker_unavail_clear(w);
	free(w);
}

/* The session's worker is gone: its tasks go back to the queue. */
void
worker_gone(struct session *s)
{
	if (s->s_worker == NULL)
		return;
	if (s->s_worker->w_drained)
		log_debug("worker %s (%s) closed its connection after its "
		    "drain", s->s_worker->w_name, s->s_addr);
	else
		log_info("worker %s (%s) lost%s", s->s_worker->w_name,
		    s->s_addr, s->s_worker->w_draining ? " while draining" :
		    "");
	worker_free(s->s_worker);
	server_drain();
}

/*
 * The tag of the copy of task id that worker w is given: a MAC, under a
 * key that lives in the journal, of the epoch, the task and the machine
 * (a digest of the name its certificate proves).  A Result counts only
 * if it echoes it, so a worker can answer only for work it was given --
 * and still can after reconnecting or after a restart of masterd from its
 * journal, which need no memory of the copies sent.
 */
uint64_t
worker_tag(const struct worker *w, uint64_t id)
{
	uint8_t		 m[24];
	uint64_t	 v[3] = { md->epoch, id, w->w_node };
	size_t		 i, k;

	for (i = 0; i < 3; i++)
		for (k = 0; k < 8; k++)
			m[i * 8 + k] = (uint8_t)(v[i] >> (8 * k));
	return (siphash24(&md->mac, m, sizeof(m)));
}

/* The digest of a worker's name that stands for its machine. */
static uint64_t
worker_node(const char *name)
{
	return (siphash24(&md->mac, name, strlen(name)));
}

/*
 * The kinds a worker offers (Hello, Kinds), checked and interned: a
 * malloc'd array of *nk, or NULL after refusing them through
 * session_error.
 */
static uint32_t *
worker_kinds_intern(struct session *s, uint64_t id, char **names, size_t n,
    size_t *nk)
{
	uint32_t	*kinds;
	size_t		 i;

	if (n > KINDS_PER_WORKER) {
		session_error(s, id, "worker offers %zu kinds, more than %d",
		    n, KINDS_PER_WORKER);
		return (NULL);
	}
	for (i = 0; i < n; i++)
		if (kind_check(names[i]) == -1) {
			session_error(s, id, "bad kind name (%zu bytes): a kind "
			    "is 1 to %d printable characters", strlen(names[i]),
			    KIND_NAME_MAX);
			return (NULL);
		}
	kinds = xcalloc(n + 1, sizeof(*kinds));
	for (i = *nk = 0; i < n; i++)
		if ((kinds[*nk] = kind_intern(names[i])) != UINT32_MAX)
			(*nk)++;
	return (kinds);
}

/*
 * A worker reloaded its kinds: the core offers it tasks of the new set
 * from now on; what it holds it runs as received.
 */
static void
worker_kinds(struct session *s, Envelope *env)
{
	struct worker	*w = s->s_worker;
	uint32_t	*kinds;
	size_t		 nk, i, off = 0;
	char		 list[512];

	if ((kinds = worker_kinds_intern(s, env->id, env->kinds->kinds,
	    env->kinds->n_kinds, &nk)) == NULL)
		return;
	if (dispatch_worker_kinds(w, kinds, nk) == -1) {
		log_warn("worker %s: kinds", w->w_name);
		free(kinds);
		return;
	}
	free(w->w_kinds);
	w->w_kinds = kinds;
	w->w_nkinds = nk;
	worker_unavail_set(w, env->kinds->unavailable,
	    env->kinds->n_unavailable);
	list[0] = '\0';
	for (i = 0; i < env->kinds->n_kinds && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
		    i > 0 ? " " : "", env->kinds->kinds[i]);
	log_info("worker %s now runs kinds: %s", w->w_name, list);
	server_drain();
}

/* A worker's first message: check it and let the worker join the core. */
void
worker_hello(struct session *s, Envelope *env)
{
	Envelope		 out = R3Q__ENVELOPE__INIT;
	R3q__Welcome		 wel = R3Q__WELCOME__INIT;
	R3q__Hello		*h;
	struct worker		*w;
	struct session		*o;
	uint32_t		*kinds;
	unsigned		 qf = SCHED_QF_AUTO;
	size_t			 nk;
	const char		*taken, *rname;
	char			 why[256], *crl = NULL;
	size_t			 crllen = 0;

	if (env->body_case != R3Q__ENVELOPE__BODY_HELLO) {
		session_error(s, env->id, "expected hello, got %s",
		    frame_body_name(env));
		return;
	}
	/*
	 * Not while the journal cannot be written: closed without an Error
	 * (workerd would take that as permanent), it tries again later,
	 * keeping its results (job_journal_stall()).
	 */
	if (job_journal_stalled()) {
		log_debug("%s (%s): hello while the journal cannot be "
		    "written: closed", s->s_addr, s->s_name);
		session_close(s);
		return;
	}
	h = env->hello;
	if (h->protocol != R3Q_PROTOCOL) {
		session_error(s, env->id, "protocol version mismatch: worker "
		    "speaks %u, master speaks %u", h->protocol, R3Q_PROTOCOL);
		return;
	}
	if (h->name[0] != '\0' && strcmp(h->name, s->s_name) != 0) {
		session_error(s, env->id, "worker says it is '%s' but its "
		    "certificate names '%s'", h->name, s->s_name);
		return;
	}
	if (h->cpus == 0 || h->cpus > 4096) {
		session_error(s, env->id, "bad CPU count %u", h->cpus);
		return;
	}
	if ((kinds = worker_kinds_intern(s, env->id, h->kinds, h->n_kinds,
	    &nk)) == NULL)
		return;
	/*
	 * The same name again: the old connection is dead or a duplicate.
	 * A relayed worker never takes the name of one that proved it
	 * with its own certificate, nor of one another relay vouches for
	 * (relay_claim()): it is refused, and the other stays.
	 */
	for (o = session_first(); o != NULL; o = session_next(o)) {
		if (o != s && o->s_worker != NULL &&
		    strcmp(o->s_worker->w_name, s->s_name) == 0) {
			if ((taken = relay_claim(s, o, why,
			    sizeof(why))) != NULL) {
				log_warnx("worker %s via %s refused: %s; it "
				    "stays", s->s_name, STR_OR_EMPTY(s->s_via),
				    taken);
				free(kinds);
				session_refuse(s, env->id, "refused by the "
				    "master: %s", taken);
				return;
			}
			log_warnx("worker %s connected again from %s; dropping "
			    "its old connection from %s", s->s_name, s->s_addr,
			    o->s_addr);
			session_close(o);
			break;
		}
	}
	if (wk.nworkers >= wk.conf->max_workers) {
		server_refused(CAP_WORKERS, s->s_name, "%u workers connected "
		    "(max_workers)", wk.nworkers);
		free(kinds);
		session_refuse(s, env->id, "too many workers: %u connected "
		    "(max_workers); try again later", wk.conf->max_workers);
		return;
	}

	w = xcalloc(1, sizeof(*w));
	w->w_id = worker_id_alloc();
	snprintf(w->w_name, sizeof(w->w_name), "%s", s->s_name);
	tokens_seen(w->w_name);		/* no token takes it from now on */
	w->w_cpus = h->cpus;
	w->w_kinds = kinds;
	w->w_nkinds = nk;
	/* Only the efficiency figure uses it; refuse nonsense politely. */
	w->w_speed = h->speed > 0 && h->speed <= 1000 ? h->speed : 1.0;
	w->w_delay_ms = h->delay_ms;
	worker_peer_addr(s, w, h->peer_addr);
	w->w_crl_push = h->crl_push;
	if (h->speed != 0 && w->w_speed != h->speed)
		log_warnx("worker %s: speed %g out of range, taken as 1",
		    s->s_name, h->speed);
	w->w_node = worker_node(w->w_name);
	/*
	 * Its name rests on its relay's word alone: it and every other
	 * worker behind that relay (the relay too) are one group, one vote
	 * under verify (sched_worker_join_group()).
	 */
	w->w_group = (rname = relay_link_name(s)) != NULL ?
	    worker_node(rname) : w->w_node;
	w->w_session = s;
	w->w_since = wall_ns() / NS_PER_SEC;
	w->w_last_seen = mono_ns();
	wk.table[w->w_id] = w;
	wk.nworkers++;
	s->s_worker = w;
	s->s_role = ROLE_WORKER;
	session_role_known(s);

	wel.protocol = R3Q_PROTOCOL;
	wel.worker_id = w->w_id;
	wel.epoch = md->epoch;
	wel.boot = md->boot;
	/* The default queue_factor (checked when the file was read). */
	(void)masterd_parse_qf(wk.conf->queue_factor, &qf);
	wel.queue_len = (qf == SCHED_QF_AUTO ? 2 : qf) * h->cpus;
	/* The CRLs we sign, for its relay listener and peer links. */
	if (w->w_crl_push && tokens_enabled() &&
	    (crl = tokens_crl_pem(&crllen)) != NULL) {
		wel.crl.data = (uint8_t *)crl;
		wel.crl.len = crllen;
	}
	out.id = env->id;
	out.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	out.welcome = &wel;
	session_send(s, &out);
	free(crl);
	log_info("worker %s joined from %s%s%s with %u CPUs (id %u)",
	    w->w_name, s->s_addr, s->s_via != NULL ? " via " : "",
	    STR_OR_EMPTY(s->s_via),
	    w->w_cpus, w->w_id);
	masterd_status();
	if (dispatch_worker_join(w) == -1)
		fatalx("core refused worker id %u", w->w_id);
	worker_unavail_set(w, h->unavailable, h->n_unavailable);
	server_drain();
}

/*
 * The CRLs in force changed (a revocation, a reload): send them to every
 * worker and relay that takes them, directly or through its relay, so
 * that a relay refuses a revoked worker as we do.  Only while we sign
 * them (ca_key): a crl file alone is the administrator's to copy.
 */
void
worker_crl_push(void)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__CrlPush	 cp = R3Q__CRL_PUSH__INIT;
	struct session	*s;
	char		*crl;
	size_t		 len, n = 0;

	if (!tokens_enabled() || (crl = tokens_crl_pem(&len)) == NULL)
		return;
	cp.crl.data = (uint8_t *)crl;
	cp.crl.len = len;
	env.body_case = R3Q__ENVELOPE__BODY_CRL_PUSH;
	env.crl_push = &cp;
	for (s = session_first(); s != NULL; s = session_next(s)) {
		if (s->s_closing || s->s_worker == NULL ||
		    !s->s_worker->w_crl_push)
			continue;
		session_send(s, &env);
		n++;
	}
	if (n > 0)
		log_info("the CRLs in force sent to %zu workers and relays", n);
	free(crl);
}

/*
 * The address other workers reach w's peer_listen at (exchange.c): as it
 * says, but a wildcard host (0.0.0.0, ::) becomes the address we see it
 * at.  Nonsense is logged and taken as none: w then takes no part in
 * exchanges.
 */
static void
worker_peer_addr(struct session *s, struct worker *w, const char *a)
{
	char	 h[256], p[16], sh[256], sp[16];

	free(w->w_peer_addr);
	w->w_peer_addr = NULL;
	if (a == NULL || a[0] == '\0')
		return;
	if (conf_split_hostport(a, h, sizeof(h), p, sizeof(p), NULL) == -1 ||
	    p[0] == '\0' || strlen(a) >= PEER_ADDR_MAX) {
		log_warnx("worker %s: peer address '%.100s' is not host:port; "
		    "it takes no part in exchanges", w->w_name, a);
		return;
	}
	if (h[0] == '\0' || strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0) {
		if (conf_split_hostport(s->s_addr, sh, sizeof(sh), sp,
		    sizeof(sp), NULL) == -1 || s->s_via != NULL) {
			log_warnx("worker %s: peer address %s has no host, and "
			    "we cannot tell its own; it takes no part in "
			    "exchanges", w->w_name, a);
			return;
		}
		snprintf(h, sizeof(h), "%s", sh);
	}
	str_setf(&w->w_peer_addr, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h,
	    p);
}

/* Note that w's copy of task was interrupted: its report is due. */
void
worker_killed_add(struct worker *w, uint64_t task)
{
	/* An honest worker reports each; a dishonest one cannot grow this. */
	if (w->w_nkilled == KILLED_MAX) {
		memmove(w->w_killed, w->w_killed + 1,
		    --w->w_nkilled * sizeof(*w->w_killed));
	}
	APPEND(w->w_killed, w->w_nkilled, w->w_killedcap, task);
}

/* Was w's copy of task interrupted, its report not yet in?  Forget it. */
static int
worker_killed_take(struct worker *w, uint64_t task)
{
	size_t	 i;

	for (i = 0; i < w->w_nkilled; i++)
		if (w->w_killed[i] == task) {
			w->w_killed[i] = w->w_killed[--w->w_nkilled];
			return (1);
		}
	return (0);
}

/*
 * A result for a copy w was never given (its tag is wrong): dropped, said
 * in one log line at most every REFUSED_LOG_NS per worker, and a worker
 * that keeps at it is disconnected.  Returns -1 if the session closes.
 */
static int
worker_refuse(struct session *s, const R3q__Result *r)
{
	struct worker	*w = s->s_worker;
	uint64_t	 now = mono_ns();

	wk.refused++;
	w->w_refused++;
	w->w_refused_unsaid++;
	if (w->w_refused_said == 0 || now - w->w_refused_said >=
	    REFUSED_LOG_NS) {
		log_warnx("worker %s (%s): %llu result%s for work it does not "
		    "hold dropped (the last for task %llu)", w->w_name,
		    s->s_addr, (unsigned long long)w->w_refused_unsaid,
		    w->w_refused_unsaid == 1 ? "" : "s",
		    (unsigned long long)r->id);
		w->w_refused_said = now;
		w->w_refused_unsaid = 0;
	}
	if (w->w_refused < REFUSED_MAX)
		return (0);
	wk.refused_closed++;
	session_error(s, 0, "%llu results for work this worker does not hold; "
	    "disconnecting it", (unsigned long long)w->w_refused);
	return (-1);
}

/* Fold a result's timing, on the worker's own clock, for the core. */
static const struct sched_timing *
result_timing(const R3q__Result *r, struct sched_timing *tm)
{
	memset(tm, 0, sizeof(*tm));
	if (r->received_ns != 0 && r->end_ns > r->received_ns)
		tm->at_worker_ns = r->end_ns - r->received_ns;
	if (r->end_ns > r->start_ns)
		tm->exec_ns = r->end_ns - r->start_ns;
	return (tm->at_worker_ns ? tm : NULL);
}

/*
 * Results from a worker.  Each must echo the tag of a copy this worker
 * was given; then the first result of a task wins.  A failure counts only
 * for a copy the worker holds (the core says), and only then is its text
 * logged.  An interrupted copy, or one that finished after we withdrew it,
 * is recorded as an execution only if we did interrupt a copy of it there
 * and its report is still due: a worker cannot pad a job's records.
 */
static void
worker_results(struct session *s, R3q__Results *rs)
{
	struct sched_timing	 tm;
	struct worker		*w = s->s_worker;
	struct job_batch	*b;
	struct job		*j;
	R3q__Result		*r;
	enum sched_verdict	 v;
	size_t			 i, idx;
	uint64_t		 now = mono_ns(), digest;
	char			 err[256], why[512];
	const char		*e;

	for (i = 0; i < rs->n_results && !s->s_closing; i++) {
		r = rs->results[i];
		if (r->epoch != md->epoch) {
			log_debug("worker %s: result for task %llu of another "
			    "epoch", w->w_name, (unsigned long long)r->id);
			continue;
		}
		if (r->tag != worker_tag(w, r->id)) {
			if (worker_refuse(s, r) == -1)
				break;
			continue;
		}
		/*
		 * Its copy may still be in the Assign being built for it (it
		 * answers for a copy from before a reconnection, the same
		 * read as its Hello): sent now, it would run again, and carry
		 * a payload the result is about to free (fuzz/regress/
		 * master-worker/results-before-assign).
		 */
		dispatch_unsend(w, r->id);
		if ((b = job_task_find(r->id, &idx)) == NULL) {
			log_debug("worker %s: stale result for task %llu",
			    w->w_name, (unsigned long long)r->id);
			worker_killed_take(w, r->id);
			continue;
		}
		j = b->b_job;
		e = r->error[0] ? r->error : "no message";
		if (r->status == TASK_OK && r->output.len > wk.conf->max_payload) {
			/* Too big to keep: a failure of the kind. */
			r->status = TASK_FAILED;
			snprintf(err, sizeof(err), "output of %zu bytes is over "
			    "max_payload (%llu)", r->output.len,
			    (unsigned long long)wk.conf->max_payload);
			e = err;
		}
		switch (r->status) {
		case TASK_OK:
			/* Its output, for verify: a digest of its bytes. */
			digest = siphash24(&md->mac, r->output.data,
			    r->output.len);
			v = dispatch_vote(w, r->id, digest,
			    result_timing(r, &tm), now);
			log_trace(TRACE_SCHED, "result task %llu worker %s: %s",
			    (unsigned long long)r->id, w->w_name,
			    v == SCHED_ACCEPT ? "accepted" : v ==
			    SCHED_PENDING ? "pending (verify)" : v ==
			    SCHED_DUPLICATE ? "duplicate" : "not held");
			switch (v) {
			case SCHED_ACCEPT:
				w->w_done++;
				job_span(j, w, b->b_gen, idx, r, SPAN_DONE);
				job_output(b, idx, r->output.data,
				    r->output.len);
				break;
			case SCHED_PENDING:
				w->w_done++;
				job_span(j, w, b->b_gen, idx, r, SPAN_DONE);
				break;
			case SCHED_DUPLICATE:
				job_span(j, w, b->b_gen, idx, r,
				    SPAN_LOST_RACE);
				j->j_dropped++;
				if (j->j_drv->d_lost != NULL)
					j->j_drv->d_lost(j, b, idx,
					    r->output.data, r->output.len);
				break;
			default:
				/* A copy left to run (keep_copies) lost. */
				if (j->j_keep_copies &&
				    j->j_drv->d_lost != NULL)
					j->j_drv->d_lost(j, b, idx,
					    r->output.data, r->output.len);
				/* finished before our cancel reached it */
				if (worker_killed_take(w, r->id)) {
					job_span(j, w, b->b_gen, idx, r,
					    SPAN_LOST_RACE);
					j->j_dropped++;
				}
				break;
			}
			break;
		case TASK_CANCELLED:
			if (worker_killed_take(w, r->id))
				job_span(j, w, b->b_gen, idx, r,
				    SPAN_INTERRUPTED);
			break;
		default:
			if (dispatch_failed(w, r->id, now) == -1) {
				if (worker_killed_take(w, r->id))
					job_span(j, w, b->b_gen, idx, r,
					    SPAN_FAILED);
				break;
			}
			job_span(j, w, b->b_gen, idx, r, SPAN_FAILED);
			str_vis(err, sizeof(err), e);
			snprintf(why, sizeof(why), "task %llu failed on worker "
			    "%s: %s (%s)", (unsigned long long)r->id, w->w_name,
			    task_status_name((int)r->status), err);
			log_warnx("%s", why);
			/* Its own reason goes with it if the task gives up. */
			job_task_why(b, idx, why);
			server_drain();
			break;
		}
	}
	server_drain();
}

/*
 * A worker's answer to Withdraw (balancing, doc/algorithms.md §4):
 * for each task,
 * whether it dropped its held copy.  The core moves it on or leaves it;
 * an answer it did not ask for (the task finished meanwhile, or a forged
 * one) changes nothing.  A released copy is recorded as withdrawn.
 */
static void
worker_released(struct session *s, const R3q__Released *r)
{
	struct worker		*w = s->s_worker;
	struct job_batch	*b;
	size_t			 i, idx;
	uint64_t		 now = mono_ns();

	for (i = 0; i < r->n_released; i++) {
		b = job_task_find(r->released[i], &idx);
		if (dispatch_released(w, r->released[i], 1, now) == 1 &&
		    b != NULL)
			job_withdrawn(b->b_job, w, b->b_gen, idx,
			    r->released[i], SPAN_F_MOVED);
	}
	for (i = 0; i < r->n_kept; i++)
		(void)dispatch_released(w, r->kept[i], 0, now);
	server_drain();
}

/*
 * A draining worker gives copies back: held ones it dropped,
 * running ones it interrupted when its drain_timeout ran out, and tasks
 * assigned to it as the drain began.  They go back to the queue with no
 * failure or lost worker counted (sched_handback()).  Its first Drain
 * says why; done says it has nothing left and leaves.
 */
static void
worker_drain(struct session *s, const R3q__Drain *d)
{
	struct worker		*w = s->s_worker;
	struct job_batch	*b;
	size_t			 i, idx, n = 0;
	uint64_t		 now = mono_ns();
	uint32_t		 held = 0, running = 0;
	char			 why[DRAIN_WHY_MAX];

	if (!w->w_draining) {
		w->w_draining = 1;
		dispatch_worker_drain(w, now);
	}
	for (i = 0; i < d->n_released; i++) {
		b = job_task_find(d->released[i], &idx);
		if (dispatch_handback(w, d->released[i], now) == 1) {
			n++;
			if (b != NULL)
				job_withdrawn(b->b_job, w, b->b_gen, idx,
				    d->released[i], 0);
		} else	/* cancelled meanwhile: no report is due */
			(void)worker_killed_take(w, d->released[i]);
	}
	w->w_handed_back += n;
	dispatch_worker_load(w, &held, &running);
	str_vis(why, sizeof(why), d->reason);
	if (!w->w_drain_said && why[0] != '\0')
		str_setf(&w->w_drain_why, "%s", why);
	if (!w->w_drain_said) {
		w->w_drain_said = 1;
		log_info("worker %s draining (%s): %zu held task%s handed back, "
		    "%u running", w->w_name, w->w_drain_why != NULL ?
		    w->w_drain_why : "no reason given", n, n == 1 ? "" : "s",
		    running);
	} else if (n > 0)
		log_info("worker %s handed back %zu more task%s (%s)",
		    w->w_name, n, n == 1 ? "" : "s", why[0] != '\0' ? why :
		    "no reason given");
	if (d->done && !w->w_drained) {
		w->w_drained = 1;
		log_info("worker %s drained and left: %llu task%s handed back "
		    "in all, %llu done", w->w_name, (unsigned long long)
		    w->w_handed_back, w->w_handed_back == 1 ? "" : "s",
		    (unsigned long long)w->w_done);
	}
	masterd_status();
	server_drain();
}

/*
 * r3qctl drain: ask worker w to drain.  The core gives it nothing new
 * from now on; the worker answers with Drain (worker_drain()).  0, or -1
 * if it drains already.
 */
int
server_drain_worker(struct worker *w, const char *by)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__DrainRequest	 dr = R3Q__DRAIN_REQUEST__INIT;
	char			 reason[128];

	if (w->w_draining)
		return (-1);
	w->w_draining = 1;
	dispatch_worker_drain(w, mono_ns());
	snprintf(reason, sizeof(reason), "asked by %s", by);
	str_setf(&w->w_drain_why, "%s", reason);
	dr.reason = reason;
	env.body_case = R3Q__ENVELOPE__BODY_DRAIN_REQUEST;
	env.drain_request = &dr;
	session_send(w->w_session, &env);
	log_info("worker %s asked to drain by %s", w->w_name, by);
	server_drain();
	return (0);
}

/*
 * News of a running task (protocol 6): for its job's driver, if the
 * worker was given the task (its tag) in this epoch; else ignored.
 */
static void
worker_news(struct session *s, const R3q__TaskNews *tn)
{
	struct worker		*w = s->s_worker;
	struct job_batch	*b;
	struct job		*j;
	size_t			 idx;

	if (tn->epoch != md->epoch || (b = job_task_find(tn->id, &idx)) ==
	    NULL)
		return;
	if (tn->tag != worker_tag(w, tn->id)) {
		log_warnx("worker %s: news of task %llu it was not given",
		    w->w_name, (unsigned long long)tn->id);
		return;
	}
	j = b->b_job;
	if (j->j_drv->d_news != NULL)
		j->j_drv->d_news(j, b, idx, w, tn->data.data, tn->data.len);
	server_drain();
}

/* Messages from a joined worker. */
void
worker_dispatch(struct session *s, Envelope *env)
{
	s->s_worker->w_last_seen = mono_ns();
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_RESULTS:
		worker_results(s, env->results);
		break;
	case R3Q__ENVELOPE__BODY_PROGRESS:
		dispatch_progress(s->s_worker, env->progress);
		break;
	case R3Q__ENVELOPE__BODY_HEARTBEAT:
		s->s_worker->w_last_hb = s->s_worker->w_last_seen;
		s->s_worker->w_hb_finished = env->heartbeat->finished;
		s->s_worker->w_hb_interval = env->heartbeat->interval_ms;
		break;
	case R3Q__ENVELOPE__BODY_RELEASED:
		worker_released(s, env->released);
		break;
	case R3Q__ENVELOPE__BODY_DRAIN:
		worker_drain(s, env->drain);
		break;
	case R3Q__ENVELOPE__BODY_TASK_NEWS:
		worker_news(s, env->task_news);
		break;
	case R3Q__ENVELOPE__BODY_KINDS:
		worker_kinds(s, env);
		break;
	case R3Q__ENVELOPE__BODY_RELAY_DATA:
		if (!s->s_relay)
			goto unexpected;
		relay_data(s, env);
		break;
	case R3Q__ENVELOPE__BODY_RELAY_CONTROL:
		if (!s->s_relay)
			goto unexpected;
		relay_control(s, env);
		break;
	case R3Q__ENVELOPE__BODY_JOIN_REQUEST:
		tokens_renew(s, env);
		break;
	case R3Q__ENVELOPE__BODY_PEER_REPORT:
		exchange_dispatch(s->s_worker, env);
		break;
	case R3Q__ENVELOPE__BODY_ERROR:
		log_warnx("worker %s (%s) reports: %s", s->s_name, s->s_addr,
		    env->error->message);
		break;
	default:
	unexpected:
		session_error(s, env->id, "unexpected %s message from a "
		    "worker", frame_body_name(env));
		break;
	}
}

/*
 * Absolute liveness, the backstop of relative suspect detection: a worker
 * from which nothing (no heartbeat, no result) has come for
 * heartbeat_timeout is lost, and its tasks go back to the queue.
 */
static void
worker_liveness(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w;
	uint64_t	 now = mono_ns(), limit;
	uint32_t	 i;

	(void)fd;
	(void)ev;
	(void)arg;
	session_output_check(now);
	limit = wk.conf->heartbeat_timeout * NS_PER_MS;
	i = 0;
	while ((w = worker_next(&i)) != NULL) {
		if (now - w->w_last_seen <= limit)
			continue;
		log_warnx("worker %s (%s): nothing for %llu ms "
		    "(heartbeat_timeout); declaring it lost", w->w_name,
		    w->w_session->s_addr, (unsigned long long)((now -
		    w->w_last_seen) / NS_PER_MS));
		session_close(w->w_session);
	}
}

/* Check liveness four times per heartbeat_timeout, at most every second. */
void
server_liveness_arm(void)
{
	struct timeval	 tv;
	uint64_t	 ms = wk.conf->heartbeat_timeout / 4;

	if (ms > 1000)
		ms = 1000;
	if (wk.liveness == NULL)
		wk.liveness = event_new(wk.base, -1, EV_PERSIST,
		    worker_liveness, NULL);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_del(wk.liveness);
	event_add(wk.liveness, &tv);
}

