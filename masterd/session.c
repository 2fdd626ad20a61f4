/*
 * The session layer: one connection each, a worker's or a client's over
 * TLS or a client's on the control socket.  It owns the connection's
 * bufferevent, frames in and out (sealed once the handshake agreed,
 * common/seal.h), the deadlines of a handshake and of a frame begun, the
 * output marks that pause a peer that does not read, and closing, freeing
 * and reaping sessions.
 *
 * Calls go up by name from here to what a frame is for: the worker
 * protocol (worker_hello(), worker_dispatch(), worker_gone()), control.c,
 * tokens.c and relay.c by the peer's role, the listener once a handshake
 * ends (listen_verified()), and dispatch.c when a worker's output pauses
 * or drains.  Every frame leaves through session_send(), where the
 * journal's transaction is committed.
 */
#include "config.h"

#include <errno.h>
#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include "exchange.h"
#include "log.h"
#include "masterd.h"
#include "seal.h"
#include "tls.h"
#include "util.h"

#define SERVER_TRIM_MIN	(1u << 20)	/* bytes freed worth a malloc_trim */

static void	session_read(struct bufferevent *, void *);
static void	session_event(struct bufferevent *, short, void *);
static void	session_deadline(evutil_socket_t, short, void *);
static void	session_deadline_set(struct session *, uint64_t);
static void	session_deadline_clear(struct session *);
static void	session_drop(struct session *, enum drop);
static size_t	session_buffered(struct session *);
static int	session_unseal(struct session *);

/*
 * The session layer's own state: the event base and the configuration it
 * was given at start (session_init(); masterd.c copies a reloaded
 * configuration over the same one), the list of sessions, which others
 * walk with session_first() and session_next(), and what serves every
 * session.
 */
static struct {
	struct event_base		*base;
	const struct masterd_config	*conf;
	struct sessionlist		 list;
	struct evbuffer			*plain;		/* a frame before it is
							   sealed */
	struct frame_arena		*arena;		/* frames read, unpacked */
	struct event			*reaper;	/* frees dropped
							   sessions */
	uint32_t			 npaused;	/* sessions over their
							   mark */
	uint64_t			 dropped[DROP_N];	/* peers dropped */
	size_t				 trim_pending;	/* bytes freed since the
							   last malloc_trim */
	struct event			*trim_ev;
	int				 trim_again;	/* the second trim is
							   armed */
} se;

/* Start the session layer on base, under configuration c. */
void
session_init(struct event_base *base, const struct masterd_config *c)
{
	se.base = base;
	se.conf = c;
	TAILQ_INIT(&se.list);
	if (se.arena == NULL && (se.arena = frame_arena_new()) == NULL)
		fatal("frame_arena_new");
}

/* The first session (the oldest); NULL if there is none. */
struct session *
session_first(void)
{
	return (TAILQ_FIRST(&se.list));
}

/* The session after s; NULL after the last. */
struct session *
session_next(const struct session *s)
{
	return (TAILQ_NEXT(s, s_entry));
}

/* A duration in ms for a log line: "1.5s", "10m", "250ms". */
const char *
session_fmt_ms(uint64_t ms, char *buf, size_t len)
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
	TAILQ_INSERT_TAIL(&se.list, s, s_entry);
	bufferevent_setcb(bev, session_read, NULL, session_event, s);
	if (tls) {
		/*
		 * A deadline from accept, not a read timeout that each byte
		 * restarts (200 peers sending a ClientHello a byte every 4 s
		 * would all still be held after 24 s).  Until it says
		 * hello, a peer may not have more than a hello buffered.
		 */
		session_deadline_set(s, se.conf->handshake_timeout);
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
	if (se.plain == NULL && (se.plain = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	if (frame_write(se.plain, env) == -1) {
		evbuffer_drain(se.plain, evbuffer_get_length(se.plain));
		return (-1);
	}
	if (seal_out(s->s_seal, se.plain, out) == -1) {
		evbuffer_drain(se.plain, evbuffer_get_length(se.plain));
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

	if (s->s_deadline == NULL && (s->s_deadline = evtimer_new(se.base,
	    session_deadline, s)) == NULL)
		fatal("evtimer_new");
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(s->s_deadline, &tv);
	s->s_deadline_on = 1;
}

/* Disarm the session's deadline, and free its event. */
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
void
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
		    session_fmt_ms(se.conf->handshake_timeout, d, sizeof(d)));
	} else if (s->s_paused) {
		/* Not its fault: we stopped reading. */
		session_deadline_set(s, se.conf->frame_timeout);
		return;
	} else if (s->s_seal != NULL && have == 0) {
		log_warnx("%s (%s): %zu bytes of a sealed record, the rest "
		    "not within frame_timeout (%s); closing", s->s_addr,
		    s->s_name, session_buffered(s), session_fmt_ms(
		    se.conf->frame_timeout, d, sizeof(d)));
	} else {
		if (have < FRAME_HDRLEN)
			log_warnx("%s (%s): %zu bytes of a frame header, the "
			    "rest not within frame_timeout (%s); closing",
			    s->s_addr, s->s_name, have, session_fmt_ms(
			    se.conf->frame_timeout, d, sizeof(d)));
		else
			log_warnx("%s (%s): %zu of the %zu bytes of a %s "
			    "frame, the rest not within frame_timeout (%s); "
			    "closing", s->s_addr, s->s_name, have -
			    FRAME_HDRLEN, (size_t)s->s_flen, s->s_fbody != 0 ?
			    frame_type_name(s->s_fbody) : "new",
			    session_fmt_ms(se.conf->frame_timeout, d, sizeof(d)));
	}
	session_free(s);
}

/*
 * Hand memory freed back to the system once large buffers have gone (a
 * large frame, a session holding one): glibc keeps what it freed in its
 * heap otherwise, and a peer could leave masterd large for good (20
 * clients holding 16 MB frames added 308 MB, kept after they closed).
 * Frees are counted, and one malloc_trim a moment later covers a burst
 * of them.
 */
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
	se.trim_pending = 0;
	/*
	 * libevent finalizes a freed bufferevent (and frees its buffers) in
	 * a later pass of the loop, which on a busy machine may come after
	 * this timer: trim once more a moment later.
	 */
	if (!se.trim_again) {
		se.trim_again = 1;
		evtimer_add(se.trim_ev, &tv);
	} else
		se.trim_again = 0;
}

/* freed bytes went back to the heap: trim it soon if they add up. */
void
server_trim(size_t freed)
{
	struct timeval	 tv = { 0, 50000 };

	if ((se.trim_pending += freed) < SERVER_TRIM_MIN)
		return;
	if (se.trim_ev == NULL && (se.trim_ev = evtimer_new(se.base,
	    server_trim_cb, NULL)) == NULL)
		fatal("evtimer_new");
	if (!evtimer_pending(se.trim_ev, NULL) || se.trim_again) {
		se.trim_again = 0;
		evtimer_add(se.trim_ev, &tv);
	}
}

/* Close a session at once; a worker's tasks go back to the queue. */
void
session_free(struct session *s)
{
	struct evbuffer	*out = bufferevent_get_output(s->s_bev);

	/* A relay's workers go with it, at once (relay.c). */
	if (s->s_rlink != NULL)
		relay_link_gone(s);
	worker_gone(s);
	if (s->s_rstream != NULL)
		relay_stream_gone(s);
	job_batch_detach(s);
	exchange_session_gone(s);
	if (s->s_paused)
		se.npaused--;
	if (s->s_outcb != NULL)
		evbuffer_remove_cb_entry(out, s->s_outcb);
	TAILQ_REMOVE(&se.list, s, s_entry);
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
	worker_gone(s);
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
	if (s->s_role == ROLE_WORKER && se.conf->journal_delay > 0) {
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
	return (s->s_worker != NULL ? se.conf->worker_buffer :
	    se.conf->client_buffer);
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
	se.npaused--;
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_setcb(bev, session_read, NULL, session_event, s);
	if (s->s_worker != NULL) {
		if (s->s_npauses == 1)
			log_info("worker %s (%s) reads again: it takes tasks "
			    "again", s->s_worker->w_name, s->s_addr);
		dispatch_worker_pause(s->s_worker, 0);
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
	se.npaused++;
	if (s->s_worker != NULL)
		dispatch_worker_pause(s->s_worker, 1);
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
		TAILQ_FOREACH(s, &se.list, s_entry)
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
		    (unsigned long long)se.conf->output_limit);
	else {
		conf_format_duration(t, sizeof(t), se.conf->output_timeout);
		log_warnx("%s (%s) dropped: %zu bytes queued for it, not one "
		    "read in %s (output_timeout)", session_what(s, what,
		    sizeof(what)), s->s_addr, evbuffer_get_length(out), t);
	}
	se.dropped[why]++;
	s->s_dropped = 1;
	s->s_closing = 1;
	s->s_noread = 1;
	len = evbuffer_get_length(out);
	evbuffer_drain(out, len);
	server_trim(len);
	bufferevent_disable(s->s_bev, EV_READ | EV_WRITE);
	if (se.reaper == NULL && (se.reaper = event_new(se.base, -1, 0,
	    session_reap, NULL)) == NULL)
		fatal("event_new");
	event_active(se.reaper, 0, 0);
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
	if (len > se.conf->output_limit && s->s_paused)
		session_drop(s, DROP_LIMIT);
	else if (len >= session_mark(s))
		session_pause(s);
}

/*
 * Peers stuck over their mark, or closing with output they do not read,
 * for output_timeout: dropped.  From the liveness timer, every second.
 */
void
session_output_check(uint64_t now)
{
	struct session	*s;
	uint64_t	 limit = se.conf->output_timeout * NS_PER_MS;

	TAILQ_FOREACH(s, &se.list, s_entry) {
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

	TAILQ_FOREACH(s, &se.list, s_entry)
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

	TAILQ_FOREACH(s, &se.list, s_entry)
		n += evbuffer_get_length(bufferevent_get_output(s->s_bev));
	return (n);
}

/* Connection-level events: handshake done, EOF, errors, timeouts. */
static void
session_event(struct bufferevent *bev, short what, void *arg)
{
	struct session	*s = arg;
	char		 why[256];
	int		 closed = 0;

	if (what & BEV_EVENT_CONNECTED) {
		listen_verified(s);
		return;
	}
	if (seal_error(s->s_seal) != NULL)
		snprintf(why, sizeof(why), "%s", seal_error(s->s_seal));
	else
		closed = tls_describe_error(bev, what, why, sizeof(why));
	/* A client that closes between frames is no error. */
	if (s->s_role == ROLE_WORKER || (s->s_role == ROLE_CLIENT &&
	    (what & BEV_EVENT_EOF || (closed && evbuffer_get_length(
	    session_in(s)) == 0))))
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
 * Judge the frame being read from its header and first bytes (limits.c):
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
		session_deadline_set(s, se.conf->frame_timeout);
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

/* The frames of s that have come, each judged, unpacked and dispatched. */
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
		env = r3q__envelope__unpack(frame_arena_allocator(se.arena),
		    len, buf);
		evbuffer_drain(in, FRAME_HDRLEN + (size_t)len);
		if (env == NULL) {
			freed = frame_arena_reset(se.arena);
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
		freed = frame_arena_reset(se.arena);
		server_trim(freed + len);
	}
}

/* The role whose limits a session's frames are judged by. */
enum role
session_limit_role(const struct session *s)
{
	return (s->s_relay && s->s_role == ROLE_WORKER ? ROLE_RELAY :
	    s->s_role);
}


/* Free every session at once, and what the layer holds: masterd exits. */
void
session_close_all(void)
{
	struct session	*s;

	while ((s = TAILQ_FIRST(&se.list)) != NULL) {
		if (s->s_worker != NULL) {
			s->s_worker->w_session = NULL;
			worker_free(s->s_worker);
			s->s_worker = NULL;
		}
		TAILQ_REMOVE(&se.list, s, s_entry);
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
	if (se.trim_ev != NULL) {
		event_free(se.trim_ev);
		se.trim_ev = NULL;
	}
	if (se.reaper != NULL) {
		event_free(se.reaper);
		se.reaper = NULL;
	}
	if (se.plain != NULL) {
		evbuffer_free(se.plain);
		se.plain = NULL;
	}
	frame_arena_free(se.arena);
	se.arena = NULL;
	se.npaused = 0;
}

/* Sessions paused now, over their output's mark (metrics). */
uint32_t
session_npaused(void)
{
	return (se.npaused);
}

/* Peers dropped for their output, by why (metrics). */
uint64_t
session_dropped(enum drop why)
{
	return (se.dropped[why]);
}

/* Count a peer dropped elsewhere (an HTTP client, metrics.c). */
void
session_dropped_count(enum drop why)
{
	se.dropped[why]++;
}
