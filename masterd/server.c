/*
 * The network side of masterd: the TLS listener, sessions, the worker
 * protocol, and the glue between frames and the scheduling core.  The glue
 * decodes a message, calls the core, then drains the core's actions into
 * one Cancel and one Assign frame per worker.
 */
#include "config.h"

#include <errno.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "exchange.h"
#include "log.h"
#include "masterd.h"
#include "seal.h"
#include "task/task.h"
#include "tls.h"
#include "util.h"

static void	session_read(struct bufferevent *, void *);
static void	session_event(struct bufferevent *, short, void *);
static void	session_deadline(evutil_socket_t, short, void *);
static void	session_deadline_set(struct session *, uint64_t);
static void	session_deadline_clear(struct session *);
static void	session_drop(struct session *, enum drop);
static void	worker_hello(struct session *, Envelope *);
static void	worker_dispatch(struct session *, Envelope *);
static const char *server_action_name(enum sched_action_type);
static int	worker_unsend(struct worker *, uint64_t);
static void	worker_dirty(struct worker *);
static void	server_push_clear(struct worker *);
static size_t	session_buffered(struct session *);
static int	session_unseal(struct session *);

/* Append to a growable array of T; the caller owns it. */
#define APPEND(arr, n, cap, v) do {					\
	if ((n) == (cap)) {						\
		(cap) = (cap) ? (cap) * 2 : 16;				\
		if (((arr) = reallocarray((arr), (cap),			\
		    sizeof(*(arr)))) == NULL)				\
			fatal("reallocarray");				\
	}								\
	(arr)[(n)++] = (v);						\
} while (0)

/* Results for copies a worker does not hold: logged, then closed. */
#define REFUSED_LOG_NS	(10 * NS_PER_SEC)	/* a line per worker at most */
#define REFUSED_MAX	64		/* then it is disconnected */
#define KILLED_MAX	4096		/* interrupted copies remembered */
#define SERVER_TRIM_MIN	(1u << 20)	/* bytes freed worth a malloc_trim */

static char	last_lost[64];		/* the last worker lost */

const char *const cap_names[CAP_N] = {
	"max_workers", "max_clients", "max_jobs", "max_jobs_per_client",
	"max_queued_tasks", "max_job_tasks", "max_memory", "max_job_memory",
	"connect_rate", "max_http"
};

/* Refusals by a cap: a log line per cap at most every CAP_LOG_NS. */
#define CAP_LOG_NS	(10 * NS_PER_SEC)
static uint64_t	cap_said[CAP_N];	/* mono ns of the last line */
static uint64_t	cap_unsaid[CAP_N];	/* refusals since */

/*
 * connect_rate: a token bucket per source address (the TLS port and the
 * HTTP listener take from the same one), in a table of fixed
 * size indexed by a keyed hash of the address, so that no number of
 * addresses can grow it.  Two addresses in one slot take turns (the newer
 * one starts with a full bucket): a miss, never a wrong refusal of an
 * address that came alone.
 */
#define RL_SLOTS	4096
struct rl_slot {
	uint8_t		 rl_addr[16];
	double		 rl_tokens;
	uint64_t	 rl_at;		/* mono ns of the last refill */
	int		 rl_used;
};
static struct rl_slot	*rl_table;
static uint64_t		 rl_refused_unsaid, rl_said;

static void	server_tick_arm(void);

/* Find a worker by id. */
static struct worker *
worker_get(uint32_t wid)
{
	if (wid >= md->maxworkers)
		return (NULL);
	return (md->workers[wid]);
}

/* The lowest free worker id, growing the table when full. */
static uint32_t
worker_id_alloc(void)
{
	struct worker	**nw;
	uint32_t	  i, n;

	for (i = 0; i < md->maxworkers; i++)
		if (md->workers[i] == NULL)
			return (i);
	n = md->maxworkers ? md->maxworkers * 2 : 16;
	if ((nw = reallocarray(md->workers, n, sizeof(*nw))) == NULL)
		fatal("worker table");
	memset(nw + md->maxworkers, 0, (n - md->maxworkers) * sizeof(*nw));
	md->workers = nw;
	i = md->maxworkers;
	md->maxworkers = n;
	return (i);
}

/* A duration in ms for a log line: "1.5s", "10m", "250ms". */
static const char *
fmt_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms % 3600000 == 0 && ms > 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms % 60000 == 0 && ms > 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
	else if (ms >= 1000)
		snprintf(buf, len, "%.3gs", (double)ms / 1000);
	else
		snprintf(buf, len, "%llums", (unsigned long long)ms);
	return (buf);
}

/*
 * The core found worker a->wid suspect (doc/algorithms.md 3.2): its
 * task stood still while a->by did a whole task, or failed where a->by's
 * copy succeeded.  Say so, and keep the evidence for r3qctl workers.  The
 * core has already handed its tasks to other workers.
 */
static void
server_suspect(const struct sched_action *a)
{
	struct worker	*w, *by;
	const char	*byname;

	if ((w = worker_get(a->wid)) == NULL)
		return;
	by = worker_get(a->by);
	byname = by != NULL ? by->w_name : "another worker";
	switch (a->why) {
	case SCHED_WHY_FAILED:
		str_setf(&w->w_why, "task %llu failed on it "
		    "and succeeded on %s", (unsigned long long)a->task,
		    byname);
		break;
	case SCHED_WHY_DISAGREED:
		str_setf(&w->w_why, "its output for task "
		    "%llu disagreed with the verified one",
		    (unsigned long long)a->task);
		break;
	case SCHED_WHY_SLOW:
		/*
		 * Slow, not stuck (sched_worker_suspected()): its task is
		 * replicated, nothing counted; a slow machine is suspected
		 * this way up to twice a task (once each half), so not a
		 * warning.
		 */
		str_setf(&w->w_why, "task %llu did not move "
		    "for %.1fs while %s did a whole task, within its own "
		    "%.1fs a task (slow, not counted)",
		    (unsigned long long)a->task, (double)a->silent_ns / 1e9,
		    byname, (double)a->own_ns / 1e9);
		log_info("worker %s suspect: %s", w->w_name, w->w_why);
		return;
	default:
		str_setf(&w->w_why, "task %llu did not move "
		    "for %.1fs while %s did a whole task",
		    (unsigned long long)a->task, (double)a->silent_ns / 1e9,
		    byname);
		break;
	}
	log_warnx("worker %s suspect: %s (%u within suspect_window)",
	    w->w_name, w->w_why, a->count);
}

/*
 * The core's next deadline (a cool-down's end, its periodic look for
 * copies that stand still), on a timer.
 */
static void
server_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	md->tick_at = UINT64_MAX;
	sched_tick(md->sched, mono_ns());
	server_drain();
}

/*
 * Arm the timer for the core's deadline, if it has one.  The deadline
 * mostly stays put from one loop pass to the next (the periodic look is
 * due every half second or so while tasks are out): re-arm only when it
 * moved.
 */
static void
server_tick_arm(void)
{
	struct timeval	 tv;
	uint64_t	 when, now;

	if (md->tick == NULL) {
		if ((md->tick = evtimer_new(md->base, server_tick,
		    NULL)) == NULL)
			fatal("evtimer_new");
		md->tick_at = UINT64_MAX;
	}
	if ((when = sched_deadline(md->sched)) == md->tick_at)
		return;
	md->tick_at = when;
	if (when == UINT64_MAX) {
		evtimer_del(md->tick);
		return;
	}
	now = mono_ns();
	when = when > now ? when - now : 0;
	tv.tv_sec = (time_t)(when / 1000000000);
	tv.tv_usec = (suseconds_t)((when % 1000000000) / 1000 + 1);
	evtimer_add(md->tick, &tv);
}

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
static void	worker_peer_addr(struct session *, struct worker *,
	    const char *);

/* Forget a worker; the core puts its tasks back in the queue. */
static void
worker_free(struct worker *w)
{
	snprintf(last_lost, sizeof(last_lost), "%s", w->w_name);
	exchange_worker_gone(w);
	sched_worker_lost(md->sched, w->w_id, mono_ns());
	md->workers[w->w_id] = NULL;
	md->nworkers--;
	if (w->w_dirty)
		TAILQ_REMOVE(&md->dirty, w, w_dirty_entry);
	if (w->w_session != NULL)
		w->w_session->s_worker = NULL;
	masterd_status();
	free(w->w_outv);
	free(w->w_out);
	free(w->w_cancel);
	free(w->w_repl);
	free(w->w_active);
	free(w->w_withdraw);
	server_push_clear(w);
	free(w->w_push);
	free(w->w_killed);
	free(w->w_kinds);
	free(w->w_why);
	free(w->w_drain_why);
	free(w->w_peer_addr);
	worker_unavail_clear(w);
	free(w);
}

/* Start a session on a connected bufferevent. */
struct session *
session_new(struct bufferevent *bev, const char *addr, int tls)
{
	struct session	*s;

	s = xcalloc(1, sizeof(*s));
	s->s_bev = bev;
	s->s_tls = tls;
	snprintf(s->s_addr, sizeof(s->s_addr), "%s", addr);
	snprintf(s->s_name, sizeof(s->s_name), "%s", tls ? "unauthenticated" :
	    "control");
	s->s_role = tls ? ROLE_NONE : ROLE_CLIENT;
	TAILQ_INSERT_TAIL(&md->sessions, s, s_entry);
	bufferevent_setcb(bev, session_read, NULL, session_event, s);
	if (tls) {
		/*
		 * A deadline from accept, not a read timeout that each byte
		 * restarts (issue 24: 200 peers sending a ClientHello a byte
		 * every 4 s were all still held after 24 s).  Until it says
		 * hello, a peer may not have more than a hello buffered.
		 */
		session_deadline_set(s, md->conf.handshake_timeout);
		bufferevent_setwatermark(bev, EV_READ, 0, FRAME_HDRLEN +
		    limits_frame_max(ROLE_NONE));
	}
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	return (s);
}

/*
 * What s has read and not yet taken as frames: its frames once opened
 * if they are sealed (s_in, which exists only while it holds some: most
 * connected workers have nothing unread), else its bufferevent's input.
 */
struct evbuffer *
session_in(struct session *s)
{
	if (s->s_seal == NULL)
		return (bufferevent_get_input(s->s_bev));
	if (s->s_in == NULL && (s->s_in = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	return (s->s_in);
}

/* Bytes s has read and not yet taken, records not yet opened included. */
static size_t
session_buffered(struct session *s)
{
	size_t	 n = evbuffer_get_length(bufferevent_get_input(s->s_bev));

	return (s->s_in != NULL ? n + evbuffer_get_length(s->s_in) : n);
}

/*
 * s's records cannot be opened or sealed (seal_error() says why): it
 * reads no more, and closes through session_event(), once.
 */
static void
session_seal_failed(struct session *s, short what)
{
	if (s->s_sealfail)
		return;
	s->s_sealfail = 1;
	s->s_noread = 1;
	bufferevent_disable(s->s_bev, EV_READ);
	bufferevent_trigger_event(s->s_bev, BEV_EVENT_ERROR | what,
	    BEV_TRIG_DEFER_CALLBACKS);
}

/* Open the whole records that have come, into s_in.  -1: s is closing. */
static int
session_unseal(struct session *s)
{
	struct evbuffer	*raw = bufferevent_get_input(s->s_bev);

	if (s->s_sealfail)
		return (-1);
	if (evbuffer_get_length(raw) > 0 &&
	    seal_in(s->s_seal, raw, session_in(s)) == -1) {
		session_seal_failed(s, BEV_EVENT_READING);
		return (-1);
	}
	return (0);
}

/*
 * Queue one frame for the peer, into its socket's output: as it is, or
 * sealed (masterd seals its workers' frames itself, SEAL_BARE: a filter
 * bufferevent would cost a kilobyte a worker).  -1 if it cannot be.
 */
int
session_frame(struct session *s, const Envelope *env)
{
	struct evbuffer	*out = bufferevent_get_output(s->s_bev);

	if (s->s_seal == NULL)
		return (frame_write(out, env));
	if (s->s_sealfail)
		return (-1);
	if (md->plain == NULL && (md->plain = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	if (frame_write(md->plain, env) == -1) {
		evbuffer_drain(md->plain, evbuffer_get_length(md->plain));
		return (-1);
	}
	if (seal_out(s->s_seal, md->plain, out) == -1) {
		evbuffer_drain(md->plain, evbuffer_get_length(md->plain));
		session_seal_failed(s, BEV_EVENT_WRITING);
		return (-1);
	}
	return (0);
}

/*
 * Arm the session's deadline ms from now.  Its event exists only while
 * armed: most connected workers have no frame half read, and save it.
 */
static void
session_deadline_set(struct session *s, uint64_t ms)
{
	struct timeval	 tv;

	if (s->s_deadline == NULL && (s->s_deadline = evtimer_new(md->base,
	    session_deadline, s)) == NULL)
		fatal("evtimer_new");
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(s->s_deadline, &tv);
	s->s_deadline_on = 1;
}

static void
session_deadline_clear(struct session *s)
{
	if (s->s_deadline == NULL)
		return;
	event_free(s->s_deadline);
	s->s_deadline = NULL;
	s->s_deadline_on = 0;
}

/*
 * The peer has a role: the handshake deadline is met, and any more of a
 * hello is no longer all it may have buffered.
 */
static void
session_role_known(struct session *s)
{
	session_deadline_clear(s);
	bufferevent_setwatermark(s->s_bev, EV_READ, 0, 0);
}

/*
 * The deadline passed: the handshake (and a worker's hello) did not end
 * within handshake_timeout of accept, or a frame begun did not all
 * arrive within frame_timeout.  Drop the session now, buffers and all.
 */
static void
session_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s = arg;
	char		 d[32];
	size_t		 have;

	(void)fd;
	(void)ev;
	s->s_deadline_on = 0;
	have = evbuffer_get_length(session_in(s));
	if (s->s_closing) {
		log_debug("%s (%s): closing, its output not taken in time",
		    s->s_addr, s->s_name);
	} else if (s->s_role == ROLE_NONE || s->s_role == ROLE_JOINER) {
		log_warnx("%s (%s): no %s within handshake_timeout (%s) of "
		    "connecting; closing", s->s_addr, s->s_name,
		    s->s_role == ROLE_JOINER ? "join request" :
		    s->s_verified ? "hello" : "TLS handshake",
		    fmt_ms(md->conf.handshake_timeout, d, sizeof(d)));
	} else if (s->s_paused) {
		/* Not its fault: we stopped reading. */
		session_deadline_set(s, md->conf.frame_timeout);
		return;
	} else if (s->s_seal != NULL && have == 0) {
		log_warnx("%s (%s): %zu bytes of a sealed record, the rest "
		    "not within frame_timeout (%s); closing", s->s_addr,
		    s->s_name, session_buffered(s), fmt_ms(
		    md->conf.frame_timeout, d, sizeof(d)));
	} else {
		if (have < FRAME_HDRLEN)
			log_warnx("%s (%s): %zu bytes of a frame header, the "
			    "rest not within frame_timeout (%s); closing",
			    s->s_addr, s->s_name, have, fmt_ms(
			    md->conf.frame_timeout, d, sizeof(d)));
		else
			log_warnx("%s (%s): %zu of the %zu bytes of a %s "
			    "frame, the rest not within frame_timeout (%s); "
			    "closing", s->s_addr, s->s_name, have -
			    FRAME_HDRLEN, (size_t)s->s_flen, s->s_fbody != 0 ?
			    frame_type_name(s->s_fbody) : "new",
			    fmt_ms(md->conf.frame_timeout, d, sizeof(d)));
	}
	session_free(s);
}

/*
 * Hand memory freed back to the system once large buffers have gone (a
 * large frame, a session holding one): glibc keeps what it freed in its
 * heap otherwise, and a peer could leave masterd large for good (issue
 * 24: 20 clients holding 16 MB frames added 308 MB, kept after they
 * closed).  Frees are counted, and one malloc_trim a moment later
 * covers a burst of them.
 */
static size_t		 trim_pending;
static struct event	*trim_ev;
static int		 trim_again;	/* the second trim is armed */

static void
server_trim_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval	 tv = { 0, 500000 };

	(void)fd;
	(void)ev;
	(void)arg;
#ifdef HAVE_MALLOC_TRIM
	malloc_trim(0);
#endif
	trim_pending = 0;
	/*
	 * libevent finalizes a freed bufferevent (and frees its buffers) in
	 * a later pass of the loop, which on a busy machine may come after
	 * this timer: trim once more a moment later.
	 */
	if (!trim_again) {
		trim_again = 1;
		evtimer_add(trim_ev, &tv);
	} else
		trim_again = 0;
}

void
server_trim(size_t freed)
{
	struct timeval	 tv = { 0, 50000 };

	if ((trim_pending += freed) < SERVER_TRIM_MIN)
		return;
	if (trim_ev == NULL && (trim_ev = evtimer_new(md->base,
	    server_trim_cb, NULL)) == NULL)
		fatal("evtimer_new");
	if (!evtimer_pending(trim_ev, NULL) || trim_again) {
		trim_again = 0;
		evtimer_add(trim_ev, &tv);
	}
}

/* The session's worker is gone: its tasks go back to the queue. */
static void
session_lose_worker(struct session *s)
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

/* Close a session at once; a worker's tasks go back to the queue. */
void
session_free(struct session *s)
{
	struct evbuffer	*out = bufferevent_get_output(s->s_bev);

	/* A relay's workers go with it, at once (issue 20). */
	if (s->s_rlink != NULL)
		relay_link_gone(s);
	session_lose_worker(s);
	if (s->s_rstream != NULL)
		relay_stream_gone(s);
	job_batch_detach(s);
	exchange_session_gone(s);
	if (s->s_paused)
		md->npaused--;
	if (s->s_outcb != NULL)
		evbuffer_remove_cb_entry(out, s->s_outcb);
	TAILQ_REMOVE(&md->sessions, s, s_entry);
	/* Its buffers, and about what a TLS connection takes besides. */
	server_trim(session_buffered(s) +
	    evbuffer_get_length(bufferevent_get_output(s->s_bev)) +
	    (s->s_tls ? 32768 : 0));
	bufferevent_free(s->s_bev);
	if (s->s_in != NULL)
		evbuffer_free(s->s_in);
	seal_free(s->s_seal);
	tls_peer_id_free(s->s_peer);
	free(s->s_via);
	if (s->s_deadline != NULL)
		event_free(s->s_deadline);
	free(s);
}

/* Output flushed on a closing session: now close it. */
static void
session_flushed(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	session_free(s);
}

/* Close after what is queued for the peer has been written. */
void
session_close(struct session *s)
{
	session_lose_worker(s);
	if (s->s_closing)
		return;
	s->s_closing = 1;
	bufferevent_disable(s->s_bev, EV_READ);
	bufferevent_setcb(s->s_bev, NULL, session_flushed, session_event, s);
	/* Never free here: callers up the stack still hold the session. */
	if (evbuffer_get_length(bufferevent_get_output(s->s_bev)) == 0)
		bufferevent_trigger(s->s_bev, EV_WRITE,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * The journal cannot hold what env may rest on (job_journal_stall()): it
 * does not leave.  A worker's session goes with the others when masterd
 * goes back to its journal; a client is told and closed, so that it asks
 * again rather than wait for an answer that will not come; a batch job's
 * client is closed without a word, and reattaches.
 */
static void
session_withhold(struct session *s, Envelope *env)
{
	Envelope	 out = R3Q__ENVELOPE__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;

	/* An Error before its welcome would stop workerd for good. */
	if (s->s_closing || s->s_role != ROLE_CLIENT)
		return;
	/* A batch job's client would fail its tasks: it reattaches. */
	if (job_batch_attached(s)) {
		session_close(s);
		return;
	}
	e.message = (char *)(uintptr_t)"masterd cannot write its journal: "
	    "the answer is withheld; ask again once it can";
	out.id = env->id;
	out.body_case = R3Q__ENVELOPE__BODY_ERROR;
	out.error = &e;
	(void)session_frame(s, &out);
	session_close(s);
}

/*
 * Queue one framed envelope for the peer.  Every frame leaves masterd
 * through here, so this is where the journal's transaction is committed:
 * nothing said to a client or r3qctl can rest on a result that is not yet
 * journaled.  A worker's frame may go first, the commit following within
 * journal_delay (job_journal_due()); none goes while the journal cannot
 * be written.
 */
void
session_send(struct session *s, Envelope *env)
{
	if (s->s_role == ROLE_WORKER && md->conf.journal_delay > 0) {
		if (job_journal_stalled()) {
			session_withhold(s, env);
			return;
		}
		job_journal_due();
	} else if (job_journal_commit() == -1) {
		session_withhold(s, env);
		return;
	}
	if (s->s_closing)
		return;
	if (session_frame(s, env) == -1)
		log_warnx("%s: cannot queue a %s message", s->s_addr,
		    frame_body_name(env));
	else
		log_trace(TRACE_NET, "%s (%s) > %s id %llu, %zu bytes",
		    s->s_addr, s->s_name, frame_body_name(env),
		    (unsigned long long)env->id,
		    r3q__envelope__get_packed_size(env));
	session_output(s);
}

/* Answer request reqid with an Error carrying msg. */
void
session_send_error(struct session *s, uint64_t reqid, const char *msg)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;

	e.message = (char *)(uintptr_t)msg;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	session_send(s, &env);
}

/*
 * Refuse a peer for a cap of masterd.conf: an Error saying so, marked
 * R3Q_ERROR_BUSY (it may come back later, as workerd does), then close
 * the session after it.  server_refused() has logged it.
 */
void
session_refuse(struct session *s, uint64_t reqid, const char *fmt, ...)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;
	char		 msg[512];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e.message = msg;
	e.code = R3Q_ERROR_BUSY;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	session_send(s, &env);
	session_close(s);
}

/* Send an Error to the peer, log it, and close the session after it. */
void
session_error(struct session *s, uint64_t reqid, const char *fmt, ...)
{
	char		 msg[512];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s (%s): %s", s->s_addr, s->s_name, msg);
	session_send_error(s, reqid, msg);
	session_close(s);
}

/* Answer request reqid with an Error; the session stays open. */
void
session_error_soft(struct session *s, uint64_t reqid, const char *fmt, ...)
{
	char		 msg[512];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_debug("%s (%s): refused: %s", s->s_addr, s->s_name, msg);
	session_send_error(s, reqid, msg);
}

/* What a peer is called in a log line: "worker w1", "client alice". */
static const char *
session_what(const struct session *s, char *buf, size_t len)
{
	if (s->s_worker != NULL)
		snprintf(buf, len, "worker %s", s->s_worker->w_name);
	else if (s->s_role == ROLE_CLIENT)
		snprintf(buf, len, "client %s", s->s_owner);
	else
		snprintf(buf, len, "peer %s", s->s_name);
	return (buf);
}

/* The high-water mark of s's output: over it, s is paused. */
static uint64_t
session_mark(const struct session *s)
{
	return (s->s_worker != NULL ? md->conf.worker_buffer :
	    md->conf.client_buffer);
}

/*
 * s's output moved: bytes left for the peer (it reads), or it began to
 * fill.  The time is when its stuck clock (output_timeout) starts.
 */
static void
session_progress(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct session	*s = arg;

	(void)buf;
	if (info->n_deleted > 0 || (info->orig_size == 0 && info->n_added > 0))
		s->s_stuck = mono_ns();
}

/* A paused peer's output is down to half of its mark: go on. */
static void
session_drained(struct bufferevent *bev, void *arg)
{
	struct session	*s = arg;
	char		 what[96];

	/* A write callback deferred from before the pause comes late. */
	if (!s->s_paused || s->s_closing || evbuffer_get_length(
	    bufferevent_get_output(bev)) > session_mark(s) / 2)
		return;
	s->s_paused = 0;
	md->npaused--;
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_setcb(bev, session_read, NULL, session_event, s);
	if (s->s_worker != NULL) {
		if (s->s_npauses == 1)
			log_info("worker %s (%s) reads again: it takes tasks "
			    "again", s->s_worker->w_name, s->s_addr);
		sched_worker_pause(md->sched, s->s_worker->w_id, 0, mono_ns());
		server_drain();
		return;
	}
	s->s_noread = 0;
	bufferevent_enable(bev, EV_READ);
	if (s->s_npauses == 1)
		log_info("%s (%s) reads its results again", session_what(s,
		    what, sizeof(what)), s->s_addr);
	job_batch_writable(s);
	/* Its requests that came before the pause wait in the input. */
	if (!s->s_paused && !s->s_closing && session_buffered(s) > 0)
		bufferevent_trigger(bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * A peer does not read what we send: its output is over its mark
 * (client_buffer, worker_buffer).  A client is not read from until its
 * output drains to half of it (so it adds no tasks and asks for nothing
 * more that would pile up); a worker gets no new task.  Past
 * output_limit, or over the mark for output_timeout without reading a
 * byte, it is dropped.
 */
void
session_pause(struct session *s)
{
	uint64_t	 mark = session_mark(s);
	char		 what[96], msg[256];

	if (s->s_paused || s->s_closing)
		return;
	s->s_paused = 1;
	md->npaused++;
	if (s->s_worker != NULL)
		sched_worker_pause(md->sched, s->s_worker->w_id, 1, mono_ns());
	else {
		s->s_noread = 1;
		bufferevent_disable(s->s_bev, EV_READ);
	}
	bufferevent_setwatermark(s->s_bev, EV_WRITE, mark / 2, 0);
	bufferevent_setcb(s->s_bev, session_read, session_drained,
	    session_event, s);
	/*
	 * A peer that reads, only slower than we send, pauses often: the
	 * first pause is a warning, the others are for debugging.
	 */
	if (s->s_worker != NULL)
		snprintf(msg, sizeof(msg), "worker %s (%s) is not reading its "
		    "tasks: %zu bytes queued (worker_buffer); no new tasks for "
		    "it until it does", s->s_worker->w_name, s->s_addr,
		    evbuffer_get_length(bufferevent_get_output(s->s_bev)));
	else
		snprintf(msg, sizeof(msg), "%s (%s) is not reading its results: "
		    "%zu bytes queued (client_buffer); not reading from it until "
		    "it does", session_what(s, what, sizeof(what)), s->s_addr,
		    evbuffer_get_length(bufferevent_get_output(s->s_bev)));
	if (s->s_npauses++ == 0)
		log_warnx("%s", msg);
	else
		log_debug("%s", msg);
}

/* Free the sessions dropped since the last pass of the loop. */
static void
session_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s;

	(void)fd;
	(void)ev;
	(void)arg;
	for (;;) {
		TAILQ_FOREACH(s, &md->sessions, s_entry)
			if (s->s_dropped)
				break;
		if (s == NULL)
			break;
		session_free(s);
	}
}

/*
 * Drop a peer over a limit: one log line naming it, what it had queued
 * goes, and it is freed at the end of this pass of the loop (callers up
 * the stack, a flush of every worker's frames among them, still hold it).
 */
static void
session_drop(struct session *s, enum drop why)
{
	struct evbuffer	*out = bufferevent_get_output(s->s_bev);
	char		 what[96], t[32];
	size_t		 len;

	if (s->s_dropped)
		return;
	if (why == DROP_LIMIT)
		log_warnx("%s (%s) dropped: %zu bytes queued for it, more than "
		    "output_limit (%llu)", session_what(s, what, sizeof(what)),
		    s->s_addr, evbuffer_get_length(out),
		    (unsigned long long)md->conf.output_limit);
	else {
		conf_format_duration(t, sizeof(t), md->conf.output_timeout);
		log_warnx("%s (%s) dropped: %zu bytes queued for it, not one "
		    "read in %s (output_timeout)", session_what(s, what,
		    sizeof(what)), s->s_addr, evbuffer_get_length(out), t);
	}
	md->dropped[why]++;
	s->s_dropped = 1;
	s->s_closing = 1;
	s->s_noread = 1;
	len = evbuffer_get_length(out);
	evbuffer_drain(out, len);
	server_trim(len);
	bufferevent_disable(s->s_bev, EV_READ | EV_WRITE);
	if (md->reaper == NULL && (md->reaper = event_new(md->base, -1, 0,
	    session_reap, NULL)) == NULL)
		fatal("event_new");
	event_active(md->reaper, 0, 0);
}

/*
 * A frame was queued for s: watch its output, and pause the peer at its
 * mark.  One that was paused already and still grows past output_limit
 * is dropped: a burst to a peer that reads (a worker's first Assign, a
 * long answer) only pauses it.
 */
void
session_output(struct session *s)
{
	struct evbuffer	*out = bufferevent_get_output(s->s_bev);
	size_t		 len = evbuffer_get_length(out);

	if (s->s_outcb == NULL) {
		s->s_stuck = mono_ns();
		if ((s->s_outcb = evbuffer_add_cb(out, session_progress,
		    s)) == NULL)
			fatal("evbuffer_add_cb");
	}
	if (len > md->conf.output_limit && s->s_paused)
		session_drop(s, DROP_LIMIT);
	else if (len >= session_mark(s))
		session_pause(s);
}

/*
 * Peers stuck over their mark, or closing with output they do not read,
 * for output_timeout: dropped.  From the liveness timer, every second.
 */
static void
server_output_check(uint64_t now)
{
	struct session	*s;
	uint64_t	 limit = md->conf.output_timeout * NS_PER_MS;

	TAILQ_FOREACH(s, &md->sessions, s_entry) {
		if (s->s_dropped || (!s->s_paused && !s->s_closing) ||
		    s->s_outcb == NULL || evbuffer_get_length(
		    bufferevent_get_output(s->s_bev)) == 0)
			continue;
		if (now - s->s_stuck > limit)
			session_drop(s, DROP_TIMEOUT);
	}
}

/* Clients connected now (TLS and the control socket). */
size_t
server_clients(void)
{
	struct session	*s;
	size_t		 n = 0;

	TAILQ_FOREACH(s, &md->sessions, s_entry)
		if (s->s_role == ROLE_CLIENT && !s->s_closing && !s->s_refused)
			n++;
	return (n);
}

/* Bytes queued for every peer now. */
uint64_t
server_output_bytes(void)
{
	struct session	*s;
	uint64_t	 n = 0;

	TAILQ_FOREACH(s, &md->sessions, s_entry)
		n += evbuffer_get_length(bufferevent_get_output(s->s_bev));
	return (n);
}

/*
 * A cap refused something: count it, and log it at most once per cap
 * every CAP_LOG_NS, with how many went unsaid.
 */
void
server_refused(enum cap cap, const char *who, const char *fmt, ...)
{
	char		 msg[512];
	va_list		 ap;
	uint64_t	 now = mono_ns();

	md->capped[cap]++;
	cap_unsaid[cap]++;
	if (cap_said[cap] != 0 && now - cap_said[cap] < CAP_LOG_NS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cap_unsaid[cap] > 1)
		log_warnx("%s refused: %s (%llu refused by %s in the last "
		    "%llus)", who, msg, (unsigned long long)cap_unsaid[cap],
		    cap_names[cap], (unsigned long long)(CAP_LOG_NS /
		    NS_PER_SEC));
	else
		log_warnx("%s refused: %s", who, msg);
	cap_said[cap] = now;
	cap_unsaid[cap] = 0;
}

/*
 * The TLS handshake finished: take the peer's role and name.  A
 * certificate without a role (OU), or with another role than worker or
 * client, is refused with a line naming it; so is one the CRL revokes,
 * should its handshake have begun under the previous CRL (a reload).
 */
static void	session_verified_role(struct session *);
static void	session_seal(struct session *);

static void
session_verified(struct session *s)
{
	session_verified_role(s);
	if (s->s_verified && !s->s_closing && s->s_role != ROLE_JOINER &&
	    seal_agreed(bufferevent_openssl_get_ssl(s->s_bev)))
		session_seal(s);
}

static void
session_verified_role(struct session *s)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(s->s_bev);
	X509	*peer;
	char	 role[32], name[64], why[768];

	/*
	 * No certificate at all: only while join tokens are on (ca_key)
	 * does the handshake let such a peer in, and then it may only ask
	 * to join (tokens.c).
	 */
	if (SSL_get0_peer_certificate(ssl) == NULL) {
		if (!tokens_enabled()) {
			log_warnx("%s: refused: no certificate", s->s_addr);
			session_close(s);
			return;
		}
		s->s_role = ROLE_JOINER;
		s->s_verified = 1;
		snprintf(s->s_name, sizeof(s->s_name), "joiner");
		log_debug("%s: TLS up without a certificate: a joiner",
		    s->s_addr);
		tokens_greet(s);
		return;
	}
	if (tls_peer_check(ssl, role, sizeof(role), name, sizeof(name), why,
	    sizeof(why)) == -1) {
		log_warnx("%s: refused: %s; a peer needs OU=worker, "
		    "OU=relay or OU=client, and a CN", s->s_addr, why);
		session_close(s);
		return;
	}
	peer = SSL_get0_peer_certificate(ssl);
	if (tls_crl_revoked(md->crl, peer, why, sizeof(why))) {
		log_warnx("%s: refused %s %s: its certificate is revoked by %s: "
		    "%s", s->s_addr, role, name, tls_crl_path(md->crl), why);
		session_close(s);
		return;
	}
	s->s_not_after = tls_cert_not_after(peer);
	snprintf(s->s_name, sizeof(s->s_name), "%s", name);
	s->s_verified = 1;
	if (strcmp(role, "worker") == 0) {
		log_debug("%s: TLS up, worker %s, waiting for hello",
		    s->s_addr, name);
	} else if (strcmp(role, "relay") == 0) {
		/* A worker that may carry others (issue 20, relay.c). */
		s->s_relay = 1;
		log_debug("%s: TLS up, relay %s, waiting for hello",
		    s->s_addr, name);
	} else if (strcmp(role, "client") == 0) {
		if (server_clients() >= md->conf.max_clients) {
			server_refused(CAP_CLIENTS, name, "%zu clients "
			    "connected (max_clients)", server_clients());
			session_refuse(s, 0, "too many clients: %u connected "
			    "(max_clients); try again later",
			    md->conf.max_clients);
			return;
		}
		s->s_role = ROLE_CLIENT;
		snprintf(s->s_owner, sizeof(s->s_owner), "%s", name);
		session_role_known(s);
		log_debug("%s: TLS up, client %s", s->s_addr, name);
	} else {
		tls_cert_describe(peer, why, sizeof(why));
		log_warnx("%s: refused: certificate %s has role '%s', not "
		    "worker, relay or client", s->s_addr, why, role);
		session_close(s);
	}
}

/*
 * The handshake agreed to seal (common/seal.h) and the peer passed our
 * checks: the mark, our last TLS record, then the same socket sealed, and
 * the SSL object and the peer's certificate are freed.  What the CRL
 * sweep needs of the certificate is kept (s_peer).
 */
static void
session_seal(struct session *s)
{
	SSL			*ssl = bufferevent_openssl_get_ssl(s->s_bev);
	struct bufferevent	*bev;
	char			 err[256];

	if ((s->s_peer = tls_peer_id_new(SSL_get0_peer_certificate(
	    ssl))) == NULL) {
		log_warnx("%s (%s): cannot keep its certificate's serial",
		    s->s_addr, s->s_name);
		session_close(s);
		return;
	}
	if ((bev = seal_serve(s->s_bev, BEV_OPT_DEFER_CALLBACKS, SEAL_BARE,
	    &s->s_seal, err, sizeof(err))) == NULL) {
		log_warnx("%s (%s): cannot seal: %s", s->s_addr, s->s_name,
		    err);
		session_close(s);
		return;
	}
	s->s_bev = bev;
	/* The SSL object and the handshake's leftovers: give them back. */
	server_trim(32768);
	log_debug("%s (%s): frames sealed from here on", s->s_addr, s->s_name);
}

/* Connection-level events: handshake done, EOF, errors, timeouts. */
static void
session_event(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;
	char		 why[256];

	if (what & BEV_EVENT_CONNECTED) {
		session_verified(s);
		return;
	}
	if (seal_error(s->s_seal) != NULL)
		snprintf(why, sizeof(why), "%s", seal_error(s->s_seal));
	else
		tls_describe_error(bev, what, why, sizeof(why));
	if (s->s_role == ROLE_WORKER || (what & BEV_EVENT_EOF &&
	    s->s_role == ROLE_CLIENT))
		log_debug("%s (%s): %s", s->s_addr, s->s_name, why);
	else
		log_warnx("%s (%s): %s", s->s_addr, s->s_name, why);
	session_free(s);
}

/*
 * Refuse the frame being read: a log line naming the peer, the type and
 * the limit, an Error for the peer, and the session closes.
 */
static void
session_refuse_frame(struct session *s, uint64_t reqid, const char *why)
{
	struct evbuffer	*in = session_in(s);
	size_t		 have = evbuffer_get_length(in);

	session_deadline_clear(s);
	session_error(s, reqid, "%s", why);
	/* Nothing more of it is read: let go of what came. */
	evbuffer_drain(in, have);
	server_trim(have);
}

/*
 * Judge the frame being read from its header and first bytes (issue 24):
 * its length against what the peer's role may send, and, as soon as its
 * type shows, that type against the role and its own limit, before the
 * rest of it is buffered, let alone unpacked.  Returns 1 if the whole
 * frame is in (its length in *lenp), 0 if more is needed, -1 if it was
 * refused.
 */
static int
session_frame_begin(struct session *s, uint32_t *lenp)
{
	struct evbuffer		*in = session_in(s);
	struct frame_shape	 fs;
	uint8_t			 head[FRAME_HDRLEN + 32];
	size_t			 have, n;
	char			 err[256];
	int			 rc;

	have = evbuffer_get_length(in);
	if (have == 0) {
		/* Sealed: the first bytes of a record are those of a frame. */
		if (s->s_seal != NULL && evbuffer_get_length(
		    bufferevent_get_input(s->s_bev)) > 0)
			goto partial;
		return (0);
	}
	if (have < FRAME_HDRLEN)
		goto partial;
	n = have < sizeof(head) ? have : sizeof(head);
	if (evbuffer_copyout(in, head, n) != (ev_ssize_t)n)
		goto partial;
	if (s->s_flen == 0 && s->s_fbody == 0) {
		if (frame_header_decode(head, limits_frame_max(
		    session_limit_role(s)),
		    &s->s_flen, err, sizeof(err)) == -1) {
			log_warnx("%s (%s): %s%s; closing", s->s_addr,
			    s->s_name, err, s->s_role == ROLE_NONE &&
			    strncmp(err, "frame of", 8) == 0 ? " (before "
			    "hello, a peer may send only a hello)" : "");
			session_deadline_clear(s);
			evbuffer_drain(in, have);
			session_close(s);
			return (-1);
		}
	}
	if (s->s_fbody == 0) {
		rc = frame_peek(head + FRAME_HDRLEN, n - FRAME_HDRLEN,
		    s->s_flen, &fs, err, sizeof(err));
		if (rc == 1 && limits_check(session_limit_role(s), &fs, 0, err,
		    sizeof(err)) == -1)
			rc = -1;
		if (rc == -1) {
			session_refuse_frame(s, fs.fs_id, err);
			return (-1);
		}
		if (rc == 1)
			s->s_fbody = fs.fs_body;
	}
	if (have - FRAME_HDRLEN >= s->s_flen) {
		*lenp = s->s_flen;
		return (1);
	}
partial:
	/* A deadline for the rest, from its first byte. */
	if (s->s_role != ROLE_NONE && s->s_role != ROLE_JOINER &&
	    !s->s_deadline_on)
		session_deadline_set(s, md->conf.frame_timeout);
	return (0);
}

static void	session_read_frames(struct session *);

/*
 * Read as many whole frames as have arrived and dispatch them; a sealed
 * session that has read all it opened lets its buffer go.
 */
static void
session_read(struct bufferevent *bev, void *arg)
{
	struct session		*s = arg;

	(void)bev;
	if (s->s_seal != NULL && session_unseal(s) == -1)
		return;
	session_read_frames(s);
	if (s->s_in != NULL && evbuffer_get_length(s->s_in) == 0) {
		evbuffer_free(s->s_in);
		s->s_in = NULL;
	}
}

static void
session_read_frames(struct session *s)
{
	struct evbuffer		*in;
	struct frame_shape	 fs;
	Envelope		*env;
	uint8_t			*buf;
	uint32_t		 len;
	size_t			 freed;
	char			 err[256];

	in = session_in(s);
	while (!s->s_closing && !s->s_noread) {
		/* A batch job's client waits out a stalled journal. */
		if (job_journal_hold(s))
			return;
		if (session_frame_begin(s, &len) != 1)
			return;
		if (s->s_role != ROLE_NONE && s->s_role != ROLE_JOINER)
			session_deadline_clear(s);
		s->s_flen = s->s_fbody = 0;
		relay_frame_begin(s);
		if ((buf = evbuffer_pullup(in, FRAME_HDRLEN +
		    (ev_ssize_t)len)) == NULL) {
			log_warnx("%s (%s): out of memory for a frame of %u "
			    "bytes; closing", s->s_addr, s->s_name, len);
			session_close(s);
			return;
		}
		buf += FRAME_HDRLEN;
		if (frame_peek(buf, len, len, &fs, err, sizeof(err)) != 1 ||
		    limits_check(session_limit_role(s), &fs, 1, err,
		    sizeof(err)) == -1) {
			session_refuse_frame(s, fs.fs_id, err);
			return;
		}
		env = r3q__envelope__unpack(frame_arena_allocator(md->arena),
		    len, buf);
		evbuffer_drain(in, FRAME_HDRLEN + (size_t)len);
		if (env == NULL) {
			freed = frame_arena_reset(md->arena);
			log_warnx("%s (%s): malformed %s message (%u bytes); "
			    "closing", s->s_addr, s->s_name,
			    frame_type_name(fs.fs_body), len);
			session_close(s);
			server_trim(freed + len);
			return;
		}
		log_trace(TRACE_NET, "%s (%s) < %s id %llu, %u bytes",
		    s->s_addr, s->s_name, frame_body_name(env),
		    (unsigned long long)env->id, len);
		switch (s->s_role) {
		case ROLE_NONE:
			worker_hello(s, env);
			break;
		case ROLE_WORKER:
			worker_dispatch(s, env);
			break;
		case ROLE_CLIENT:
			control_dispatch(s, env);
			break;
		case ROLE_RELAY:
			break;
		case ROLE_JOINER:
			tokens_join(s, env);
			break;
		}
		freed = frame_arena_reset(md->arena);
		server_trim(freed + len);
	}
}

/*
 * The tag of the copy of task id that worker w is given: a MAC, under a
 * key that lives in the journal, of the epoch, the task and the machine
 * (a digest of the name its certificate proves).  A Result counts only
 * if it echoes it, so a worker can answer only for work it was given --
 * and still can after reconnecting or after a restart of masterd from its
 * journal, which need no memory of the copies sent.
 */
static uint64_t
server_tag(const struct worker *w, uint64_t id)
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
server_node(const char *name)
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
	if (sched_worker_kinds(md->sched, w->w_id, kinds, nk,
	    mono_ns()) == -1) {
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
static void
worker_hello(struct session *s, Envelope *env)
{
	Envelope		 out = R3Q__ENVELOPE__INIT;
	R3q__Welcome		 wel = R3Q__WELCOME__INIT;
	R3q__Hello		*h;
	struct worker		*w;
	struct session		*o;
	uint32_t		*kinds;
	size_t			 nk;

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
	/* The same name again: the old connection is dead or a duplicate. */
	TAILQ_FOREACH(o, &md->sessions, s_entry) {
		if (o != s && o->s_worker != NULL &&
		    strcmp(o->s_worker->w_name, s->s_name) == 0) {
			log_warnx("worker %s connected again from %s; dropping "
			    "its old connection from %s", s->s_name, s->s_addr,
			    o->s_addr);
			session_close(o);
			break;
		}
	}
	if (md->nworkers >= md->conf.max_workers) {
		server_refused(CAP_WORKERS, s->s_name, "%u workers connected "
		    "(max_workers)", md->nworkers);
		free(kinds);
		session_refuse(s, env->id, "too many workers: %u connected "
		    "(max_workers); try again later", md->conf.max_workers);
		return;
	}

	w = xcalloc(1, sizeof(*w));
	w->w_id = worker_id_alloc();
	snprintf(w->w_name, sizeof(w->w_name), "%s", s->s_name);
	w->w_cpus = h->cpus;
	w->w_kinds = kinds;
	w->w_nkinds = nk;
	/* Only the efficiency figure uses it; refuse nonsense politely. */
	w->w_speed = h->speed > 0 && h->speed <= 1000 ? h->speed : 1.0;
	w->w_delay_ms = h->delay_ms;
	worker_peer_addr(s, w, h->peer_addr);
	if (h->speed != 0 && w->w_speed != h->speed)
		log_warnx("worker %s: speed %g out of range, taken as 1",
		    s->s_name, h->speed);
	w->w_node = server_node(w->w_name);
	w->w_session = s;
	w->w_since = wall_ns() / NS_PER_SEC;
	w->w_last_seen = mono_ns();
	md->workers[w->w_id] = w;
	md->nworkers++;
	s->s_worker = w;
	s->s_role = ROLE_WORKER;
	session_role_known(s);

	wel.protocol = R3Q_PROTOCOL;
	wel.worker_id = w->w_id;
	wel.epoch = md->epoch;
	wel.boot = md->boot;
	wel.queue_len = (md->queue_factor == SCHED_QF_AUTO ? 2 :
	    md->queue_factor) * h->cpus;
	out.id = env->id;
	out.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	out.welcome = &wel;
	session_send(s, &out);
	log_info("worker %s joined from %s%s%s with %u CPUs (id %u)",
	    w->w_name, s->s_addr, s->s_via != NULL ? " via " : "",
	    STR_OR_EMPTY(s->s_via),
	    w->w_cpus, w->w_id);
	masterd_status();
	if (sched_worker_join_kinds(md->sched, w->w_id, w->w_node, w->w_cpus,
	    w->w_kinds, w->w_nkinds, mono_ns()) == -1)
		fatalx("core refused worker id %u", w->w_id);
	worker_unavail_set(w, h->unavailable, h->n_unavailable);
	server_drain();
}

/*
 * The address other workers reach w's peer_listen at (issue 22): as it
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
static void
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

	md->refused++;
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
	md->refused_closed++;
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
		if (r->tag != server_tag(w, r->id)) {
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
		worker_unsend(w, r->id);
		if ((b = job_task_find(r->id, &idx)) == NULL) {
			log_debug("worker %s: stale result for task %llu",
			    w->w_name, (unsigned long long)r->id);
			worker_killed_take(w, r->id);
			continue;
		}
		j = b->b_job;
		e = r->error[0] ? r->error : "no message";
		if (r->status == TASK_OK && r->output.len > md->conf.max_payload) {
			/* Too big to keep: a failure of the kind. */
			r->status = TASK_FAILED;
			snprintf(err, sizeof(err), "output of %zu bytes is over "
			    "max_payload (%llu)", r->output.len,
			    (unsigned long long)md->conf.max_payload);
			e = err;
		}
		switch (r->status) {
		case TASK_OK:
			/* Its output, for verify: a digest of its bytes. */
			digest = siphash24(&md->mac, r->output.data,
			    r->output.len);
			v = sched_vote(md->sched, w->w_id, r->id, digest,
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
			if (sched_failed(md->sched, w->w_id, r->id, now) == -1) {
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
 * A worker's answer to Withdraw (balancing, issue 19): for each task,
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
		if (sched_released(md->sched, w->w_id, r->released[i], 1,
		    now) == 1 && b != NULL)
			job_withdrawn(b->b_job, w, b->b_gen, idx,
			    r->released[i], SPAN_F_MOVED);
	}
	for (i = 0; i < r->n_kept; i++)
		(void)sched_released(md->sched, w->w_id, r->kept[i], 0, now);
	server_drain();
}

/*
 * A draining worker (issue 25) gives copies back: held ones it dropped,
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
		(void)sched_worker_drain(md->sched, w->w_id, now);
	}
	for (i = 0; i < d->n_released; i++) {
		b = job_task_find(d->released[i], &idx);
		if (sched_handback(md->sched, w->w_id, d->released[i],
		    now) == 1) {
			n++;
			if (b != NULL)
				job_withdrawn(b->b_job, w, b->b_gen, idx,
				    d->released[i], 0);
		} else	/* cancelled meanwhile: no report is due */
			(void)worker_killed_take(w, d->released[i]);
	}
	w->w_handed_back += n;
	sched_worker_load(md->sched, w->w_id, &held, &running);
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
	(void)sched_worker_drain(md->sched, w->w_id, mono_ns());
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
	if (tn->tag != server_tag(w, tn->id)) {
		log_warnx("worker %s: news of task %llu it was not given",
		    w->w_name, (unsigned long long)tn->id);
		return;
	}
	j = b->b_job;
	if (j->j_drv->d_news != NULL)
		j->j_drv->d_news(j, b, idx, w, tn->data.data, tn->data.len);
	server_drain();
}

/* Forget w's pending pushes. */
static void
server_push_clear(struct worker *w)
{
	size_t	 i;

	for (i = 0; i < w->w_npush; i++) {
		free(w->w_push[i].pp_ids);
		free(w->w_push[i].pp_donate);
	}
	w->w_npush = 0;
}

/*
 * Send worker w a TaskPush at the next flush, after the Assign being
 * built (a push may name tasks it carries): bound (0: none) for tasks
 * ids, and the tasks in donate asked to give part of their work back.
 */
void
server_push(struct worker *w, const uint64_t *ids, size_t n, uint32_t bound,
    const uint64_t *donate, size_t ndonate)
{
	struct push_pending	*pp;

	if (w->w_session == NULL || (n == 0 && ndonate == 0))
		return;
	if (w->w_npush == w->w_pushcap) {
		w->w_pushcap = w->w_pushcap ? 2 * w->w_pushcap : 4;
		if ((w->w_push = reallocarray(w->w_push, w->w_pushcap,
		    sizeof(*w->w_push))) == NULL)
			fatal("%s", __func__);
	}
	pp = &w->w_push[w->w_npush++];
	pp->pp_ids = xcalloc(n + 1, sizeof(*ids));
	if (n > 0)
		memcpy(pp->pp_ids, ids, n * sizeof(*ids));
	pp->pp_n = n;
	pp->pp_bound = bound;
	pp->pp_donate = xcalloc(ndonate + 1, sizeof(*donate));
	if (ndonate > 0)
		memcpy(pp->pp_donate, donate, ndonate * sizeof(*donate));
	pp->pp_ndonate = ndonate;
	worker_dirty(w);
}

/* Messages from a joined worker. */
static void
worker_dispatch(struct session *s, Envelope *env)
{
	R3q__Progress	*p;
	size_t		 i;
	uint64_t	 now;

	s->s_worker->w_last_seen = mono_ns();
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_RESULTS:
		worker_results(s, env->results);
		break;
	case R3Q__ENVELOPE__BODY_PROGRESS:
		p = env->progress;
		now = mono_ns();
		for (i = 0; i < p->n_started; i++)
			sched_started(md->sched, s->s_worker->w_id,
			    p->started[i], now);
		for (i = 0; i < p->n_halfway; i++)
			sched_progress(md->sched, s->s_worker->w_id,
			    p->halfway[i], now);
		server_drain();
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

/* The role whose limits a session's frames are judged by. */
enum role
session_limit_role(const struct session *s)
{
	return (s->s_relay && s->s_role == ROLE_WORKER ? ROLE_RELAY :
	    s->s_role);
}

/*
 * A copy withdrawn before its Assign left: take it out of the Assign
 * being built rather than send a Cancel the worker would get before the
 * task.  Returns whether it was there.
 */
static int
worker_unsend(struct worker *w, uint64_t task)
{
	size_t	 i, k;

	for (i = 0; i < w->w_nout && w->w_outv[i].id != task; i++)
		;
	if (i == w->w_nout)
		return (0);
	memmove(&w->w_outv[i], &w->w_outv[i + 1],
	    (--w->w_nout - i) * sizeof(*w->w_outv));
	for (k = 0; k < w->w_nrepl && w->w_repl[k] != task; k++)
		;
	if (k < w->w_nrepl)
		w->w_repl[k] = w->w_repl[--w->w_nrepl];
	for (k = 0; k < w->w_nactive && w->w_active[k] != task; k++)
		;
	if (k < w->w_nactive)
		w->w_active[k] = w->w_active[--w->w_nactive];
	return (1);
}

/* w has frames being built: send them at the next flush. */
static void
worker_dirty(struct worker *w)
{
	if (w->w_dirty)
		return;
	w->w_dirty = 1;
	TAILQ_INSERT_TAIL(&md->dirty, w, w_dirty_entry);
}

/*
 * Memory for what the frames being built borrow (the payloads a driver
 * makes as a task is sent): a bump allocator in chunks, emptied once the
 * frames are sent, so that a payload costs nothing while its task waits
 * in the queue.
 */
struct scratch {
	struct scratch	*sc_next;
	size_t		 sc_used, sc_cap;
	uint8_t		 sc_data[];
};
#define SCRATCH_CHUNK	65536

static struct scratch	*scratch;

/* n bytes valid until the frames being built are sent. */
void *
server_scratch(size_t n)
{
	struct scratch	*sc;
	void		*p;
	size_t		 cap;

	n = (n + 15) & ~(size_t)15;
	if (scratch == NULL || scratch->sc_cap - scratch->sc_used < n) {
		cap = n > SCRATCH_CHUNK ? n : SCRATCH_CHUNK;
		sc = xcalloc(1, sizeof(*sc) + cap);
		sc->sc_cap = cap;
		sc->sc_next = scratch;
		scratch = sc;
	}
	p = scratch->sc_data + scratch->sc_used;
	scratch->sc_used += n;
	return (p);
}

/* The frames are sent: keep one chunk, empty. */
static void
scratch_reset(int all)
{
	struct scratch	*sc;

	while (scratch != NULL && (all || scratch->sc_next != NULL ||
	    scratch->sc_cap != SCRATCH_CHUNK)) {
		sc = scratch;
		scratch = sc->sc_next;
		free(sc);
	}
	if (scratch != NULL)
		scratch->sc_used = 0;
}

/*
 * Send what the drained actions left for each worker: cancels first.  The
 * journal's transaction is committed now, or within journal_delay if only
 * workers are told (job_journal_due()); what goes to a client waits for
 * the commit (session_send()).
 */
void
server_flush(void)
{
	Envelope	 env;
	R3q__Assign	 a;
	R3q__Cancel	 c;
	R3q__Withdraw	 wd;
	R3q__TaskPush	 tp;
	struct worker	*w;
	size_t		 i;

	job_journal_due();
	job_batch_flush();
	while ((w = TAILQ_FIRST(&md->dirty)) != NULL) {
		TAILQ_REMOVE(&md->dirty, w, w_dirty_entry);
		w->w_dirty = 0;
		if (w->w_ncancel > 0) {
			r3q__envelope__init(&env);
			r3q__cancel__init(&c);
			c.n_ids = w->w_ncancel;
			c.ids = w->w_cancel;
			env.body_case = R3Q__ENVELOPE__BODY_CANCEL;
			env.cancel = &c;
			session_send(w->w_session, &env);
			w->w_ncancel = 0;
		}
		if (w->w_nout > 0) {
			r3q__envelope__init(&env);
			r3q__assign__init(&a);
			a.epoch = md->epoch;
			for (i = 0; i < w->w_nout; i++)
				w->w_out[i] = &w->w_outv[i];
			a.n_tasks = w->w_nout;
			a.tasks = w->w_out;
			a.n_replicas = w->w_nrepl;
			a.replicas = w->w_repl;
			a.n_active = w->w_nactive;
			a.active = w->w_active;
			env.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
			env.assign = &a;
			session_send(w->w_session, &env);
			w->w_nout = 0;
			w->w_nrepl = 0;
			w->w_nactive = 0;
		}
		/* After the Assign, so the worker has what it is asked for. */
		if (w->w_nwithdraw > 0) {
			r3q__envelope__init(&env);
			r3q__withdraw__init(&wd);
			wd.n_ids = w->w_nwithdraw;
			wd.ids = w->w_withdraw;
			env.body_case = R3Q__ENVELOPE__BODY_WITHDRAW;
			env.withdraw = &wd;
			session_send(w->w_session, &env);
			w->w_nwithdraw = 0;
		}
		for (i = 0; i < w->w_npush; i++) {
			r3q__envelope__init(&env);
			r3q__task_push__init(&tp);
			tp.n_ids = w->w_push[i].pp_n;
			tp.ids = w->w_push[i].pp_ids;
			tp.bound = w->w_push[i].pp_bound;
			tp.n_donate = w->w_push[i].pp_ndonate;
			tp.donate = w->w_push[i].pp_donate;
			env.body_case = R3Q__ENVELOPE__BODY_TASK_PUSH;
			env.task_push = &tp;
			session_send(w->w_session, &env);
		}
		server_push_clear(w);
	}
	/* After the workers' tasks: what r3qctl is told waits for a commit. */
	control_tell();
	scratch_reset(0);
}

static void
server_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	server_flush();
}

/*
 * Commit and send the frames at the end of this pass of the event loop,
 * after the other sessions' frames that have arrived: the results of
 * several workers then share one journal commit, and each worker gets one
 * Assign.  Activating an event already active does nothing.
 */
void
server_flush_later(void)
{
	if (md->flush == NULL &&
	    (md->flush = event_new(md->base, -1, 0, server_flush_cb,
	    NULL)) == NULL)
		fatal("event_new");
	event_active(md->flush, 0, 0);
}

/*
 * Carry out the core's decisions.  A batch that ends may start the next
 * generation, which makes more actions: the loop runs until the core has
 * nothing more to say.
 */
void
server_drain(void)
{
	struct sched_action	 a;
	struct worker		*w;
	struct job_batch	*b;
	enum job_outcome	 o;
	size_t			 idx;
	char			 buf1[32], buf2[32], buf[512], *why;

	if (md->draining)
		return;
	md->draining = 1;
	while (sched_next_action(md->sched, &a)) {
		log_trace(TRACE_SCHED, "%s task %llu worker %s%s%s%s",
		    server_action_name(a.type), (unsigned long long)a.task,
		    (w = worker_get(a.wid)) != NULL ? w->w_name : "-",
		    a.replica ? " replica" : "", a.running ? " running" : "",
		    a.active ? " active" : "");
		switch (a.type) {
		case SCHED_ASSIGN:
			if ((w = worker_get(a.wid)) == NULL) {
				log_warnx("%s: assign of task %llu to unknown "
				    "worker %u", __func__,
				    (unsigned long long)a.task, a.wid);
				break;
			}
			/* A job that ended in this drain takes its tasks. */
			if ((b = job_task_find(a.task, &idx)) == NULL ||
			    !b->b_live)
				break;
			if (w->w_nout == w->w_outcap) {
				w->w_outcap = w->w_outcap ? w->w_outcap * 2 :
				    16;
				if ((w->w_outv = reallocarray(w->w_outv,
				    w->w_outcap, sizeof(*w->w_outv))) == NULL ||
				    (w->w_out = reallocarray(w->w_out,
				    w->w_outcap, sizeof(*w->w_out))) == NULL)
					fatal("reallocarray");
			}
			job_task(b, idx, a.task, &w->w_outv[w->w_nout]);
			w->w_outv[w->w_nout++].tag = server_tag(w, a.task);
			if (a.replica)
				APPEND(w->w_repl, w->w_nrepl, w->w_replcap,
				    a.task);
			if (a.active) {
				/* Balancing moved it here (issue 19). */
				APPEND(w->w_active, w->w_nactive,
				    w->w_activecap, a.task);
				b->b_job->j_moved++;
			}
			worker_dirty(w);
			break;
		case SCHED_WITHDRAW:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			APPEND(w->w_withdraw, w->w_nwithdraw,
			    w->w_withdrawcap, a.task);
			worker_dirty(w);
			break;
		case SCHED_CANCEL:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			if (!a.running && (b = job_task_find(a.task,
			    &idx)) != NULL)
				job_withdrawn(b->b_job, w, b->b_gen, idx,
				    a.task, a.replica);
			if (!a.running && worker_unsend(w, a.task))
				break;
			if (a.running)
				worker_killed_add(w, a.task);
			APPEND(w->w_cancel, w->w_ncancel, w->w_cancelcap,
			    a.task);
			worker_dirty(w);
			break;
		case SCHED_TASK_FAILED:
			server_flush();
			if ((b = job_task_find(a.task, &idx)) == NULL)
				break;
			why = job_task_why(b, idx, NULL);
			if (a.reason == SCHED_FAIL_KILLS) {
				o = OUTCOME_KILLED;
				snprintf(buf, sizeof(buf), "task %llu was "
				    "running on %u workers that were lost "
				    "(max_kills); the last was %s",
				    (unsigned long long)a.task,
				    md->conf.max_kills, last_lost);
			} else if (a.reason == SCHED_FAIL_DISAGREE) {
				o = OUTCOME_DISAGREED;
				snprintf(buf, sizeof(buf), "task %llu: no "
				    "outputs agreed among the workers that ran "
				    "it (verify)", (unsigned long long)a.task);
			} else {
				o = OUTCOME_FAILED;
				snprintf(buf, sizeof(buf), "%s", why != NULL ?
				    why : "it failed on every machine that "
				    "could run it");
			}
			free(why);
			job_outcome(b, idx, o, buf);
			break;
		case SCHED_SUSPECT:
			server_suspect(&a);
			break;
		case SCHED_COOLDOWN:
			if ((w = worker_get(a.wid)) == NULL)
				break;
			log_warnx("worker %s suspect %u times within %s: no new "
			    "tasks for %s (suspect_cooldown)", w->w_name,
			    a.count, fmt_ms(md->conf.suspect_window, buf1,
			    sizeof(buf1)), fmt_ms(md->conf.suspect_cooldown,
			    buf2, sizeof(buf2)));
			break;
		case SCHED_BATCH_DONE:
			server_flush();
			job_batch_done(a.batch, &a.report);
			break;
		}
	}
	server_flush_later();
	server_tick_arm();
	md->draining = 0;
}

/* An action's name, for the sched trace. */
static const char *
server_action_name(enum sched_action_type t)
{
	switch (t) {
	case SCHED_ASSIGN:
		return ("assign");
	case SCHED_WITHDRAW:
		return ("withdraw");
	case SCHED_CANCEL:
		return ("cancel");
	case SCHED_TASK_FAILED:
		return ("failed");
	case SCHED_SUSPECT:
		return ("suspect");
	case SCHED_COOLDOWN:
		return ("cooldown");
	case SCHED_BATCH_DONE:
		return ("batch-done");
	}
	return ("?");
}

/*
 * May a connection from sa come in now (connect_rate)?  Each address has
 * a bucket of connect_burst tokens refilled at connect_rate a second; a
 * connection takes one.  A refusal is counted, and said in one log line
 * every CAP_LOG_NS at most.
 */
int
server_connect_allowed(const struct sockaddr *sa, const char *addr)
{
	struct rl_slot	*r;
	uint8_t		 key[16];
	uint64_t	 now = mono_ns();
	double		 burst = md->conf.connect_burst;
	char		 host[64], *p;

	if (md->conf.connect_rate == 0)
		return (1);
	memset(key, 0, sizeof(key));
	if (sa->sa_family == AF_INET)
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_addr, 16);
	else
		return (1);
	if (rl_table == NULL)
		rl_table = xcalloc(RL_SLOTS, sizeof(*rl_table));
	r = &rl_table[siphash24(&md->mac, key, sizeof(key)) % RL_SLOTS];
	if (!r->rl_used || memcmp(r->rl_addr, key, sizeof(key)) != 0) {
		memcpy(r->rl_addr, key, sizeof(key));
		r->rl_used = 1;
		r->rl_tokens = burst;
		r->rl_at = now;
	}
	r->rl_tokens += (double)(now - r->rl_at) / 1e9 * md->conf.connect_rate;
	if (r->rl_tokens > burst)
		r->rl_tokens = burst;
	r->rl_at = now;
	if (r->rl_tokens >= 1) {
		r->rl_tokens -= 1;
		return (1);
	}
	md->capped[CAP_CONNECT_RATE]++;
	rl_refused_unsaid++;
	if (rl_said == 0 || now - rl_said >= CAP_LOG_NS) {
		snprintf(host, sizeof(host), "%s", addr);
		if ((p = strrchr(host, ':')) != NULL)
			*p = '\0';
		log_warnx("connection from %s refused: more than connect_rate "
		    "(%u a second, burst %u); %llu refused in the last %llus",
		    host, md->conf.connect_rate, md->conf.connect_burst,
		    (unsigned long long)rl_refused_unsaid,
		    (unsigned long long)(CAP_LOG_NS / NS_PER_SEC));
		rl_said = now;
		rl_refused_unsaid = 0;
	}
	return (0);
}

/* A new TCP connection on the TLS port. */
static void
server_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;
	SSL			*ssl;
	char			 addr[64];
	int			 one = 1;

	(void)l;
	(void)salen;
	(void)arg;
	sockaddr_str(sa, addr, sizeof(addr));
	if (!server_connect_allowed(sa, addr)) {
		evutil_closesocket(fd);
		return;
	}
	/* Small frames must not wait for Nagle: latency is the product. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sock_link_timeout(fd, md->conf.link_timeout);
	if ((ssl = SSL_new(md->ssl_ctx)) == NULL) {
		log_warnx("%s: SSL_new failed", addr);
		evutil_closesocket(fd);
		return;
	}
	bev = bufferevent_openssl_socket_new(md->base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		log_warnx("%s: cannot create a TLS bufferevent", addr);
		SSL_free(ssl);
		evutil_closesocket(fd);
		return;
	}
	log_debug("%s: connection", addr);
	session_new(bev, addr, 1);
}

/* The pause is over: take connections again. */
static void
server_accept_resume(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (md->tls_listener != NULL)
		evconnlistener_enable(md->tls_listener);
	if (md->ctl_listener != NULL)
		evconnlistener_enable(md->ctl_listener);
}

/*
 * accept() failed.  Out of descriptors (or memory), the pending connection
 * stays in the backlog and the listener would fail again at once, forever:
 * stop listening for a second, as relayd does, and say so once a pause.
 */
void
server_accept_error(struct evconnlistener *l, void *arg)
{
	struct timeval	 tv = { 1, 0 };
	int		 err = EVUTIL_SOCKET_ERROR();

	(void)arg;
	if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
	    err != ENOMEM) {
		log_warnx("accept: %s", evutil_socket_error_to_string(err));
		return;
	}
	log_warnx("accept: %s (%u workers connected); no new connections "
	    "for 1s", evutil_socket_error_to_string(err), md->nworkers);
	evconnlistener_disable(l);
	if (md->accept_pause == NULL && (md->accept_pause = evtimer_new(
	    md->base, server_accept_resume, NULL)) == NULL)
		fatal("evtimer_new");
	evtimer_add(md->accept_pause, &tv);
}

/* Bind a TLS listener on addr ("host:port"); NULL with a log line. */
static struct evconnlistener *
server_bind(const char *addr, char *bound, size_t boundlen)
{
	struct evconnlistener	*l;
	struct addrinfo		 hints, *res;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	char			 host[256], port[16];
	int			 rc;

	if (conf_split_hostport(addr, host, sizeof(host), port,
	    sizeof(port), "7411") == -1) {
		log_warnx("listen: bad address %s", addr);
		return (NULL);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints,
	    &res)) != 0) {
		log_warnx("listen %s: %s", addr, gai_strerror(rc));
		return (NULL);
	}
	l = evconnlistener_new_bind(md->base, server_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 128, res->ai_addr,
	    (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (l == NULL) {
		log_warn("listen %s", addr);
		return (NULL);
	}
	evconnlistener_set_error_cb(l, server_accept_error);
	/* Say the real address: port 0 asks the kernel for a free one. */
	sslen = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&ss,
	    &sslen) == 0)
		sockaddr_str((struct sockaddr *)&ss, bound, boundlen);
	return (l);
}

/*
 * The TLS context for crl (NULL: none), its CRLs loaded; NULL after a log
 * line.
 */
static SSL_CTX *
server_ctx(const struct masterd_config *c, struct tls_crl **crlp)
{
	SSL_CTX		*ctx;
	struct tls_crl	*crl = NULL;
	char		 err[1024];

	if ((ctx = tls_ctx_new(1, c->ca, c->cert, c->key, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return (NULL);
	}
	if (tls_crl_configured(c->crl) && ((crl = tls_crl_load(c->crl, c->ca,
	    err, sizeof(err))) == NULL || tls_crl_apply(ctx, crl, err,
	    sizeof(err)) == -1)) {
		log_warnx("%s", err);
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	if (tokens_ctx(ctx, c) == -1) {
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	/* md->conf stays where it is across reloads: the key takes effect. */
	seal_server_ctx(ctx, &md->conf.sealed_frames);
	*crlp = crl;
	return (ctx);
}

/*
 * A new CRL is in force: close every session whose peer's certificate it
 * revokes (issue 24, "Revocation"), with one line each.
 */
static void
server_revoke_sweep(void)
{
	struct session	*s;
	SSL		*ssl;
	X509		*peer;
	char		 why[768];

	if (md->crl == NULL)
		return;
	TAILQ_FOREACH(s, &md->sessions, s_entry) {
		if (s->s_closing)
			continue;
		/* Behind a relay: the certificate it passed (issue 20). */
		if (s->s_rstream != NULL) {
			if (!relay_revoked(s, md->crl, why, sizeof(why)))
				continue;
		} else if (s->s_peer != NULL) {
			/* Sealed: what it kept of the certificate. */
			if (!tls_crl_revoked_id(md->crl, s->s_peer, why,
			    sizeof(why)))
				continue;
		} else if (!s->s_tls ||
		    (ssl = bufferevent_openssl_get_ssl(s->s_bev)) == NULL ||
		    (peer = SSL_get0_peer_certificate(ssl)) == NULL ||
		    !tls_crl_revoked(md->crl, peer, why, sizeof(why)))
			continue;
		log_warnx("%s %s (%s): its certificate is now revoked by %s: "
		    "%s; disconnecting", s->s_role == ROLE_CLIENT ? "client" :
		    "worker", s->s_name, s->s_addr, tls_crl_path(md->crl), why);
		session_send_error(s, 0, "your certificate is revoked");
		session_close(s);
	}
}

/* Load the TLS context and bind the listener. */
int
server_listen(void)
{
	if ((md->ssl_ctx = server_ctx(&md->conf, &md->crl)) == NULL)
		return (-1);
	if (md->crl != NULL)
		log_info("%s: %zu certificates revoked", tls_crl_path(md->crl),
		    tls_crl_entries(md->crl));
	md->tls_listener = server_bind(md->conf.listen, md->listen_addr,
	    sizeof(md->listen_addr));
	if (md->tls_listener == NULL)
		return (-1);
	server_liveness_arm();
	return (0);
}

/*
 * SIGHUP: take new TLS files, a new CRL and a new listen address.
 * Sessions keep the context they were accepted with; new ones get the new
 * one; those the new CRL revokes are closed.  On any error nothing
 * changes.
 */
int
server_reload(const struct masterd_config *nc)
{
	struct evconnlistener	*l = NULL;
	struct tls_crl		*crl = NULL;
	SSL_CTX			*ctx;
	char			 bound[64];

	if ((ctx = server_ctx(nc, &crl)) == NULL)
		return (-1);
	if (strcmp(nc->listen, md->conf.listen) != 0 &&
	    (l = server_bind(nc->listen, bound, sizeof(bound))) == NULL) {
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (-1);
	}
	SSL_CTX_free(md->ssl_ctx);
	md->ssl_ctx = ctx;
	tls_crl_free(md->crl);
	md->crl = crl;
	if (l != NULL) {
		evconnlistener_free(md->tls_listener);
		md->tls_listener = l;
		strcpy(md->listen_addr, bound);
		log_info("now listening on %s", bound);
	}
	if (crl != NULL)
		log_info("%s: %zu certificates revoked", tls_crl_path(crl),
		    tls_crl_entries(crl));
	server_revoke_sweep();
	return (0);
}

/*
 * Absolute liveness, the backstop of relative suspect detection: a worker
 * from which nothing (no heartbeat, no result) has come for
 * heartbeat_timeout is lost, and its tasks go back to the queue.
 */
static void
server_liveness(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w;
	uint64_t	 now = mono_ns(), limit;
	uint32_t	 i;

	(void)fd;
	(void)ev;
	(void)arg;
	server_output_check(now);
	limit = md->conf.heartbeat_timeout * NS_PER_MS;
	for (i = 0; i < md->maxworkers; i++) {
		if ((w = md->workers[i]) == NULL || now - w->w_last_seen <= limit)
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
	uint64_t	 ms = md->conf.heartbeat_timeout / 4;

	if (ms > 1000)
		ms = 1000;
	if (md->liveness == NULL)
		md->liveness = event_new(md->base, -1, EV_PERSIST,
		    server_liveness, NULL);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_del(md->liveness);
	event_add(md->liveness, &tv);
}

/* Close every session and the listener. */
void
server_close(void)
{
	struct session	*s;

	scratch_reset(1);
	while ((s = TAILQ_FIRST(&md->sessions)) != NULL) {
		if (s->s_worker != NULL) {
			s->s_worker->w_session = NULL;
			worker_free(s->s_worker);
			s->s_worker = NULL;
		}
		TAILQ_REMOVE(&md->sessions, s, s_entry);
		relay_forget(s);
		bufferevent_free(s->s_bev);
		if (s->s_in != NULL)
			evbuffer_free(s->s_in);
		seal_free(s->s_seal);
		tls_peer_id_free(s->s_peer);
		free(s->s_via);
		if (s->s_deadline != NULL)
			event_free(s->s_deadline);
		free(s);
	}
	if (trim_ev != NULL) {
		event_free(trim_ev);
		trim_ev = NULL;
	}
	if (md->liveness != NULL)
		event_free(md->liveness);
	if (md->tick != NULL)
		event_free(md->tick);
	if (md->flush != NULL)
		event_free(md->flush);
	if (md->accept_pause != NULL)
		event_free(md->accept_pause);
	if (md->reaper != NULL)
		event_free(md->reaper);
	if (md->plain != NULL)
		evbuffer_free(md->plain);
	free(rl_table);
	rl_table = NULL;
	if (md->tls_listener != NULL)
		evconnlistener_free(md->tls_listener);
	if (md->ssl_ctx != NULL)
		SSL_CTX_free(md->ssl_ctx);
	tls_crl_free(md->crl);
	md->crl = NULL;
}
