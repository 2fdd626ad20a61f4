/*
 * workerd as a relay (as the R3Q paper's WAN grid reached its far machines
 * through one of them, and Hironaka et al.'s overlay crosses NAT:
 * doc/algorithms.md §1.6 and §5): it
 * listens (relay_listen) for workers that cannot reach the master, and
 * carries their traffic over its own one link to the master (link.c), or
 * to another relay, each worker a stream (proto/r3q.proto, RelayControl
 * and RelayData).  On that link it is a worker itself, and runs tasks.
 *
 * Trust.  A worker connecting here proves its name with its own
 * certificate from the CA (mutual TLS, the CRL checked); only then does
 * the relay open a stream for it, naming it by that certificate's CN.
 * Nothing a worker sends can open a stream: a plain worker's bytes go up
 * unread, inside its own stream, where the master refuses any relay
 * message from a worker.  A relay below this one (its certificate says
 * OU=relay) has its frames read: its RelayControl opens are checked (the
 * path ends at it, no relay twice: a loop r1 -> r2 -> r1 is refused) and
 * opened again above, with this relay added to the path.
 *
 * Fairness.  Each worker's input is bounded (a read high-water mark), and
 * the link up is filled round-robin, a quantum from each worker in turn,
 * while its output is under RELAY_UP_MARK: a worker that floods the relay
 * waits its turn, and the others' frames go on.  That alone was not
 * enough: the bytes of a flood that masterd reads slower than they come
 * queued in the kernel's buffers of the link (4 MB on loopback), where
 * the others' frames waited behind them, first in first out (a job 20x
 * slower).  So each stream has a window (R3Q_RELAY_WINDOW): it sends up
 * no more than the master has granted (RelayControl op 3, as its session
 * reads them), and a flood waits here, in its own bounded input, not in
 * the link.
 *
 * Failure.  While the link up is not up (no TLS, no hello sent), a worker
 * that connects is told so (an Error the worker takes as "try later") and
 * closed; when it breaks, every worker here is told and closed, to come
 * back (with its backoff) or to go to the next address of its list.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "log.h"
#include "seal.h"
#include "tls.h"
#include "u64map.h"
#include "util.h"
#include "workerd.h"

#define RELAY_QUANTUM	(16u << 10)	/* bytes from one worker a turn */
#define RELAY_DOWN_BUF	(256u << 10)	/* a worker's input, bounded */
#define RELAY_UP_MARK	(128u << 10)	/* the link's output, then wait:
					   what a worker's frame may queue
					   behind here */
#define RELAY_CTL_MAX	(64u << 10)	/* a relay frame from below */
#define RELAY_VIA_MAX	8
#define RELAY_HANDSHAKE	10		/* s */
#define RELAY_LOG_NS	(10 * NS_PER_SEC)
#define RELAY_HOLD	10		/* s a relay below waits for ours */

/* A connection from below: a worker, or a relay. */
struct down {
	TAILQ_ENTRY(down)	 d_entry;
	struct bufferevent	*d_bev;
	char			 d_addr[64];
	char			 d_name[64];
	char			 d_role[16];
	time_t			 d_not_after;
	uint8_t			*d_cert;	/* its certificate, DER: for the
						   master's CRL and ours */
	size_t			 d_certlen;
	int			 d_relay;	/* its certificate says relay */
	int			 d_closing;	/* flush, then free */
	int			 d_verified;	/* TLS done, its name checked */
	uint32_t		 d_stream;	/* its own stream up, 0: none */
	uint64_t		 d_credit;	/* bytes d_stream may send up
						   (the master's grants) */
	int			 d_rdoff;	/* not read: no credit */
	struct u64map		 d_sub;		/* a relay's: its stream id ->
						   ours */
	size_t			 d_pass;	/* a relay's frame passing
						   through: bytes left */
	struct event		*d_hold;	/* a relay waiting for our
						   link up (RELAY_HOLD) */
	struct seal		*d_seal;	/* sealed (seal.h): its keys,
						   owned by d_bev */
};
TAILQ_HEAD(downlist, down);

/* A stream up: whose it is. */
struct upstream {
	struct down		*u_down;
	uint32_t		 u_child;	/* 0: d's own; else its stream */
};

static struct {
	struct event_base		*r_base;
	const struct workerd_config	*r_conf;
	SSL_CTX				*r_ctx;
	struct tls_crl			*r_crl;
	struct evconnlistener		*r_listener;
	struct downlist			 r_downs;
	struct u64map			 r_up;		/* stream -> upstream */
	uint32_t			 r_next;	/* stream ids */
	struct event			*r_pump;
	struct down			*r_rr;		/* next turn */
	uint64_t			 r_unknown_said;
	uint64_t			 r_unknown_unsaid;
	char				 r_why[512];	/* why no link up */
	int				 r_on;
} ry;

static void	relay_down_free(struct down *);
static void	relay_pump_later(void);

int
relay_enabled(void)
{
	return (ry.r_on);
}

/* Queue an Envelope for a worker below. */
static void
relay_down_send(struct down *d, const Envelope *env)
{
	if (d->d_closing)
		return;
	if (frame_write(bufferevent_get_output(d->d_bev), env) == -1)
		log_warnx("relay: cannot queue a %s message for %s",
		    frame_body_name(env), d->d_name);
}

static void
relay_down_flushed(struct bufferevent *bev, void *arg)
{
	/* Sealed: the socket under the filter must have taken it all too. */
	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	    seal_pending(bev) > 0)
		return;
	relay_down_free(arg);
}

/* A worker being closed went away, or did not read in time: free it. */
static void
relay_down_closed(struct bufferevent *bev, short what, void *arg)
{
	struct down	*d = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	log_debug("relay: %s (%s) gone while being closed", d->d_name,
	    d->d_addr);
	relay_down_free(d);
}

/* Close a worker's connection once what is queued for it has left. */
static void
relay_down_close(struct down *d)
{
	struct timeval	 tv = { RELAY_HANDSHAKE, 0 };

	if (d->d_closing)
		return;
	d->d_closing = 1;
	/*
	 * One still in its TLS handshake must read to finish it (and so to
	 * get what we tell it); and one that never reads or goes away is
	 * freed all the same, not kept for ever.
	 */
	if (d->d_verified)
		bufferevent_disable(d->d_bev, EV_READ);
	bufferevent_setcb(d->d_bev, NULL, relay_down_flushed,
	    relay_down_closed, d);
	bufferevent_set_timeouts(d->d_bev, &tv, &tv);
	bufferevent_setwatermark(d->d_bev, EV_WRITE, 0, 0);
	/* Never free here: callers up the stack still hold it. */
	if (evbuffer_get_length(bufferevent_get_output(d->d_bev)) == 0)
		bufferevent_trigger(d->d_bev, EV_WRITE,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* Tell a worker below why, then close: code R3Q_ERROR_BUSY, try later. */
static void
relay_down_refuse(struct down *d, uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
relay_down_refuse(struct down *d, uint32_t code, const char *fmt, ...)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;
	char		 msg[768];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e.message = msg;
	e.code = code;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	relay_down_send(d, &env);
	relay_down_close(d);
}

/* A RelayControl on the link up (link.c queues it). */
static void
relay_up_control(uint32_t stream, uint32_t op, const struct down *d,
    char **via, size_t nvia, const char *name, const char *role,
    const char *addr, uint64_t not_after, const char *reason,
    const ProtobufCBinaryData *cert)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;
	char			*v[RELAY_VIA_MAX];
	size_t			 i;

	(void)d;
	rc.stream = stream;
	rc.op = op;
	if (op == 1) {
		for (i = 0; i < nvia; i++)
			v[i] = via[i];
		v[nvia] = (char *)(uintptr_t)ry.r_conf->name;
		rc.via = v;
		rc.n_via = nvia + 1;
		rc.name = (char *)(uintptr_t)name;
		rc.role = (char *)(uintptr_t)role;
		rc.address = (char *)(uintptr_t)addr;
		rc.not_after = not_after;
		if (cert != NULL)
			rc.cert = *cert;
	}
	if (reason != NULL)
		rc.reason = (char *)(uintptr_t)reason;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	link_relay_send(&env);
}

/* Bytes of stream up, in a RelayData on the link up. */
static void
relay_up_data(uint32_t stream, const uint8_t *p, size_t n)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__RelayData	 rd = R3Q__RELAY_DATA__INIT;

	rd.stream = stream;
	rd.data.data = (uint8_t *)(uintptr_t)p;
	rd.data.len = n;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
	env.relay_data = &rd;
	link_relay_send(&env);
}

/* A new stream id up, not in use (0 is none). */
static uint32_t
relay_stream_new(struct down *d, uint32_t child)
{
	struct upstream	*u;
	uint64_t	 v;

	do {
		if (++ry.r_next == 0)
			ry.r_next = 1;
	} while (u64map_get(&ry.r_up, ry.r_next, &v));
	u = xcalloc(1, sizeof(*u));
	u->u_down = d;
	u->u_child = child;
	if (u64map_put(&ry.r_up, ry.r_next, (uint64_t)(uintptr_t)u) == -1)
		fatal("u64map_put");
	return (ry.r_next);
}

static void
relay_stream_del(uint32_t id)
{
	uint64_t	 v;

	if (u64map_del(&ry.r_up, id, &v))
		free((void *)(uintptr_t)v);
}

/* Every stream of d up is over: say so up, forget them. */
static void
relay_down_streams_close(struct down *d, const char *why)
{
	size_t	 i;

	if (d->d_stream != 0) {
		if (link_relay_ready())
			relay_up_control(d->d_stream, 2, d, NULL, 0, NULL,
			    NULL, NULL, 0, why, NULL);
		relay_stream_del(d->d_stream);
		d->d_stream = 0;
	}
	for (i = 0; i < d->d_sub.m_nslots; i++) {
		if (!d->d_sub.m_slots[i].used)
			continue;
		if (link_relay_ready())
			relay_up_control((uint32_t)d->d_sub.m_slots[i].v, 2, d,
			    NULL, 0, NULL, NULL, NULL, 0, why, NULL);
		relay_stream_del((uint32_t)d->d_sub.m_slots[i].v);
	}
	u64map_free(&d->d_sub);
	u64map_init(&d->d_sub);
}

static void
relay_down_free(struct down *d)
{
	relay_down_streams_close(d, "the worker left the relay");
	if (ry.r_rr == d)
		ry.r_rr = TAILQ_NEXT(d, d_entry);
	TAILQ_REMOVE(&ry.r_downs, d, d_entry);
	u64map_free(&d->d_sub);
	if (d->d_hold != NULL)
		event_free(d->d_hold);
	bufferevent_free(d->d_bev);
	free(d->d_cert);
	free(d);
}

/*
 * A RelayControl or RelayData from a relay below, whole: open (checked,
 * then again above with us on the path), close, or its bytes.  -1 if the
 * relay below is to be dropped.
 */
static int
relay_down_relay_frame(struct down *d, const uint8_t *body, size_t len)
{
	Envelope		*env;
	R3q__RelayControl	*rc;
	uint64_t		 v;
	char			 err[256], path[512];
	size_t			 i, off = 0;
	int			 loop = 0;

	if (frame_unpack(body, len, RELAY_CTL_MAX, &env, err,
	    sizeof(err)) == -1) {
		log_warnx("relay: relay %s (%s): %s; closing", d->d_name,
		    d->d_addr, err);
		return (-1);
	}
	if (env->body_case == R3Q__ENVELOPE__BODY_RELAY_DATA) {
		if (!u64map_get(&d->d_sub, env->relay_data->stream, &v)) {
			log_debug("relay: relay %s: data for its stream %u, "
			    "not open: dropped", d->d_name,
			    env->relay_data->stream);
		} else
			relay_up_data((uint32_t)v, env->relay_data->data.data,
			    env->relay_data->data.len);
		frame_free(env);
		return (0);
	}
	rc = env->relay_control;
	if (rc->op == 2) {
		if (u64map_del(&d->d_sub, rc->stream, &v)) {
			relay_up_control((uint32_t)v, 2, d, NULL, 0, NULL,
			    NULL, NULL, 0, rc->reason, NULL);
			relay_stream_del((uint32_t)v);
		}
		frame_free(env);
		return (0);
	}
	if (rc->op != 1 || rc->stream == 0 || u64map_get(&d->d_sub,
	    rc->stream, &v)) {
		log_warnx("relay: relay %s (%s): bad relay_control (op %u, "
		    "stream %u); closing", d->d_name, d->d_addr, rc->op,
		    rc->stream);
		frame_free(env);
		return (-1);
	}
	/* The path it claims: nearest first, the relay below last. */
	for (i = 0; i < rc->n_via && off < sizeof(path); i++) {
		off += (size_t)snprintf(path + off, sizeof(path) - off,
		    "%s -> ", rc->via[i]);
		if (strcmp(rc->via[i], ry.r_conf->name) == 0)
			loop = 1;
	}
	if (off < sizeof(path))
		snprintf(path + off, sizeof(path) - off, "%.64s",
		    ry.r_conf->name);
	if (strcmp(rc->name, ry.r_conf->name) == 0)
		loop = 1;
	if (loop) {
		log_warnx("relay loop: %s came back to us by %s -> %s; "
		    "refused", rc->name, rc->name, path);
		snprintf(err, sizeof(err), "relay loop: %.64s -> %.160s",
		    rc->name, path);
		relay_down_streams_close(d, err);
		relay_down_refuse(d, 0, "%s (check the relays' master "
		    "settings)", err);
		frame_free(env);
		return (-1);
	}
	if (rc->n_via == 0 || rc->n_via >= RELAY_VIA_MAX ||
	    strcmp(rc->via[rc->n_via - 1], d->d_name) != 0) {
		log_warnx("relay: relay %s (%s): stream %u for %s: its path "
		    "is empty, too long or does not end at %s; refused",
		    d->d_name, d->d_addr, rc->stream, rc->name, d->d_name);
		frame_free(env);
		return (-1);
	}
	v = relay_stream_new(d, rc->stream);
	if (u64map_put(&d->d_sub, rc->stream, v) == -1)
		fatal("u64map_put");
	relay_up_control((uint32_t)v, 1, d, rc->via, rc->n_via, rc->name,
	    rc->role, rc->address, rc->not_after, NULL, &rc->cert);
	frame_free(env);
	return (0);
}

/*
 * One turn of a worker below: up to RELAY_QUANTUM of its bytes up.  A
 * worker's bytes go as they are, in its stream; a relay's frames are
 * read, its relay messages handled, the rest passed in its own stream.
 * Returns the bytes taken.
 */
static size_t
relay_turn(struct down *d)
{
	struct evbuffer		*in = bufferevent_get_input(d->d_bev);
	struct frame_shape	 fs;
	uint8_t			 head[FRAME_HDRLEN + 32], *p;
	uint32_t		 flen;
	size_t			 have, n, took = 0;
	char			 err[256];
	int			 rc;

	if (d->d_closing || d->d_stream == 0)
		return (0);
	while (took < RELAY_QUANTUM && (have = evbuffer_get_length(in)) > 0) {
		if (!d->d_relay || d->d_pass > 0) {
			n = have < RELAY_QUANTUM - took ? have :
			    RELAY_QUANTUM - took;
			if (d->d_relay && n > d->d_pass)
				n = d->d_pass;
			/* Its window: the rest waits for the master's grant. */
			if (n > d->d_credit)
				n = (size_t)d->d_credit;
			if (n == 0) {
				/*
				 * Read no more of it until a grant: with
				 * its input full and decrypted bytes still
				 * in the TLS layer, libevent would call
				 * relay_down_read again every pass (12,000
				 * a second, measured, beside a flood).
				 */
				if (!d->d_rdoff) {
					bufferevent_disable(d->d_bev, EV_READ);
					d->d_rdoff = 1;
				}
				break;
			}
			d->d_credit -= n;
			if ((p = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL)
				fatal("evbuffer_pullup");
			relay_up_data(d->d_stream, p, n);
			evbuffer_drain(in, n);
			if (d->d_relay)
				d->d_pass -= n;
			took += n;
			continue;
		}
		/* A relay's next frame: its own, or one of relaying. */
		if (have < FRAME_HDRLEN)
			break;
		n = have < sizeof(head) ? have : sizeof(head);
		evbuffer_copyout(in, head, n);
		if (frame_header_decode(head, ry.r_conf->max_frame, &flen, err,
		    sizeof(err)) == -1)
			goto bad;
		rc = frame_peek(head + FRAME_HDRLEN, n - FRAME_HDRLEN, flen,
		    &fs, err, sizeof(err));
		if (rc == -1)
			goto bad;
		if (rc == 0)
			break;
		if (fs.fs_body != R3Q__ENVELOPE__BODY_RELAY_DATA &&
		    fs.fs_body != R3Q__ENVELOPE__BODY_RELAY_CONTROL) {
			d->d_pass = FRAME_HDRLEN + (size_t)flen;
			continue;
		}
		if (flen > RELAY_CTL_MAX) {
			snprintf(err, sizeof(err), "%s frame of %u bytes",
			    frame_type_name(fs.fs_body), flen);
			goto bad;
		}
		if (have < FRAME_HDRLEN + (size_t)flen)
			break;
		if ((p = evbuffer_pullup(in, FRAME_HDRLEN +
		    (ev_ssize_t)flen)) == NULL)
			fatal("evbuffer_pullup");
		rc = relay_down_relay_frame(d, p + FRAME_HDRLEN, flen);
		if (d->d_closing)
			return (took);
		evbuffer_drain(in, FRAME_HDRLEN + (size_t)flen);
		took += FRAME_HDRLEN + (size_t)flen;
		if (rc == -1) {
			relay_down_close(d);
			return (took);
		}
	}
	return (took);
bad:
	log_warnx("relay: relay %s (%s): %s; closing", d->d_name, d->d_addr,
	    err);
	relay_down_close(d);
	return (took);
}

/*
 * Fill the link up, round-robin, while its output is under RELAY_UP_MARK
 * (the rest waits in each worker's bounded input, and that worker's
 * connection is read no more until it drains).
 */
static void
relay_pump(evutil_socket_t fd, short ev, void *arg)
{
	struct down	*d, *start;
	size_t		 moved;

	(void)fd;
	(void)ev;
	(void)arg;
	if (!link_relay_ready())
		return;
	for (;;) {
		moved = 0;
		if ((start = ry.r_rr) == NULL)
			start = TAILQ_FIRST(&ry.r_downs);
		d = start;
		while (d != NULL) {
			if (link_relay_outlen() >= RELAY_UP_MARK) {
				ry.r_rr = d;
				return;
			}
			moved += relay_turn(d);
			if ((d = TAILQ_NEXT(d, d_entry)) == NULL)
				d = TAILQ_FIRST(&ry.r_downs);
			if (d == start)
				break;
		}
		ry.r_rr = d;
		if (moved == 0)
			return;
	}
}

static void
relay_pump_later(void)
{
	if (ry.r_pump != NULL)
		event_active(ry.r_pump, 0, 0);
}

/* The link up took some of its output: go on. */
void
relay_up_writable(void)
{
	if (ry.r_on)
		relay_pump_later();
}

static void
relay_down_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	(void)arg;
	relay_pump_later();
}

static void	relay_down_open(struct down *);

/* A relay below waited RELAY_HOLD for our link up in vain. */
static void
relay_hold_over(evutil_socket_t fd, short ev, void *arg)
{
	struct down	*d = arg;

	(void)fd;
	(void)ev;
	event_free(d->d_hold);
	d->d_hold = NULL;
	log_info("relay: relay %s (%s) refused for now: no master (%s)",
	    d->d_name, d->d_addr, ry.r_why);
	relay_down_refuse(d, R3Q_ERROR_BUSY, "relay %s cannot reach its "
	    "master: %s; try again later", ry.r_conf->name, ry.r_why);
}

/* Our link up is up (hello sent): the relays waiting below go on. */
void
relay_up_ready(void)
{
	struct down	*d, *n;

	if (!ry.r_on)
		return;
	for (d = TAILQ_FIRST(&ry.r_downs); d != NULL; d = n) {
		n = TAILQ_NEXT(d, d_entry);
		if (d->d_hold != NULL && !d->d_closing)
			relay_down_open(d);
	}
}

/* A worker below proved who it is: open its stream, if we can. */
static void
relay_down_verified(struct down *d)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(d->d_bev);
	X509	*peer;
	char	 why[768];

	if (tls_peer_check(ssl, d->d_role, sizeof(d->d_role), d->d_name,
	    sizeof(d->d_name), why, sizeof(why)) == -1) {
		log_warnx("relay: %s: refused: %s", d->d_addr, why);
		relay_down_close(d);
		return;
	}
	peer = SSL_get0_peer_certificate(ssl);
	if (ry.r_crl != NULL && tls_crl_revoked(ry.r_crl, peer, why,
	    sizeof(why))) {
		log_warnx("relay: %s: refused %s %s: its certificate is "
		    "revoked: %s", d->d_addr, d->d_role, d->d_name, why);
		relay_down_close(d);
		return;
	}
	if (strcmp(d->d_role, "worker") != 0 &&
	    strcmp(d->d_role, "relay") != 0) {
		log_warnx("relay: %s: refused %s: its certificate has role "
		    "'%s', not worker or relay", d->d_addr, d->d_name,
		    d->d_role);
		relay_down_close(d);
		return;
	}
	if (strcmp(d->d_name, ry.r_conf->name) == 0) {
		log_warnx("relay: %s: refused: it has our own name %s (a "
		    "relay loop?)", d->d_addr, d->d_name);
		relay_down_refuse(d, 0, "relay loop: %s connected to itself",
		    d->d_name);
		return;
	}
	d->d_relay = strcmp(d->d_role, "relay") == 0;
	d->d_not_after = tls_cert_not_after(peer);
	{
		unsigned char	*der = NULL;
		int		 n;

		if ((n = i2d_X509(peer, &der)) > 0) {
			d->d_cert = xcalloc(1, (size_t)n);
			memcpy(d->d_cert, der, (size_t)n);
			d->d_certlen = (size_t)n;
		}
		OPENSSL_free(der);
	}
	/*
	 * Sealed frames, as masterd seals ours (common/seal.h): the mark,
	 * our last TLS record, then the same socket sealed.
	 */
	if (seal_agreed(ssl)) {
		struct bufferevent	*bev;
		char			 err[256];

		if ((bev = seal_serve(d->d_bev, BEV_OPT_DEFER_CALLBACKS, 0,
		    &d->d_seal, err, sizeof(err))) == NULL) {
			log_warnx("relay: %s (%s): cannot seal: %s", d->d_addr,
			    d->d_name, err);
			relay_down_close(d);
			return;
		}
		d->d_bev = bev;
		log_debug("relay: %s (%s): frames sealed from here on",
		    d->d_addr, d->d_name);
	}
	bufferevent_set_timeouts(d->d_bev, NULL, NULL);
	d->d_verified = 1;
	if (!link_relay_ready()) {
		/*
		 * A relay below waits a while: ours may be on its way up
		 * through it (a loop, found once both are up).
		 */
		if (d->d_relay) {
			struct timeval	 tv = { RELAY_HOLD, 0 };

			if ((d->d_hold = evtimer_new(ry.r_base,
			    relay_hold_over, d)) == NULL)
				fatalx("evtimer_new");
			evtimer_add(d->d_hold, &tv);
			log_info("relay: relay %s (%s) waits for our link to "
			    "the master (%s)", d->d_name, d->d_addr, ry.r_why);
			return;
		}
		log_info("relay: %s %s (%s) refused for now: no master (%s)",
		    d->d_role, d->d_name, d->d_addr, ry.r_why);
		relay_down_refuse(d, R3Q_ERROR_BUSY, "relay %s cannot reach "
		    "its master: %s; try again later", ry.r_conf->name,
		    ry.r_why);
		return;
	}
	relay_down_open(d);
}

/* Open d's own stream up. */
static void
relay_down_open(struct down *d)
{
	ProtobufCBinaryData	 cert;
	char			*via[1];

	if (d->d_hold != NULL) {
		event_free(d->d_hold);
		d->d_hold = NULL;
	}
	d->d_stream = relay_stream_new(d, 0);
	d->d_credit = R3Q_RELAY_WINDOW;
	via[0] = NULL;
	cert.data = d->d_cert;
	cert.len = d->d_certlen;
	relay_up_control(d->d_stream, 1, d, via, 0, d->d_name, d->d_role,
	    d->d_addr, (uint64_t)d->d_not_after, NULL, &cert);
	log_info("relay: %s %s connected from %s (stream %u)", d->d_role,
	    d->d_name, d->d_addr, d->d_stream);
	relay_pump_later();
}

static void
relay_down_event(struct bufferevent *bev, short what, void *arg)
{
	struct down	*d = arg;
	char		 why[256];

	if (what & BEV_EVENT_CONNECTED) {
		relay_down_verified(d);
		return;
	}
	if (seal_error(d->d_seal) != NULL)
		snprintf(why, sizeof(why), "%s", seal_error(d->d_seal));
	else
		tls_describe_error(bev, what, why, sizeof(why));
	if (d->d_stream != 0)
		log_info("relay: %s %s (%s) left: %s", d->d_role, d->d_name,
		    d->d_addr, why);
	else
		log_debug("relay: %s: %s", d->d_addr, why);
	relay_down_free(d);
}

static void
relay_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct timeval	 tv = { RELAY_HANDSHAKE, 0 };
	struct down	*d;
	SSL		*ssl;
	int		 one = 1;

	(void)l;
	(void)arg;
	d = xcalloc(1, sizeof(*d));
	(void)salen;
	sockaddr_str(sa, d->d_addr, sizeof(d->d_addr));
	snprintf(d->d_name, sizeof(d->d_name), "unauthenticated");
	u64map_init(&d->d_sub);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sock_link_timeout(fd, ry.r_conf->link_timeout);
	if ((ssl = SSL_new(ry.r_ctx)) == NULL) {
		log_warnx("relay: %s: SSL_new failed", d->d_addr);
		close(fd);
		free(d);
		return;
	}
	d->d_bev = bufferevent_openssl_socket_new(ry.r_base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS);
	if (d->d_bev == NULL) {
		SSL_free(ssl);
		close(fd);
		free(d);
		return;
	}
	TAILQ_INSERT_TAIL(&ry.r_downs, d, d_entry);
	bufferevent_setcb(d->d_bev, relay_down_read, NULL, relay_down_event,
	    d);
	/* Bounded: a relay's frames may be a whole max_frame. */
	bufferevent_setwatermark(d->d_bev, EV_READ, 0, RELAY_DOWN_BUF);
	bufferevent_set_timeouts(d->d_bev, &tv, &tv);
	bufferevent_enable(d->d_bev, EV_READ | EV_WRITE);
}

/*
 * From the link up: a stream's bytes, or its end.  A frame for a stream
 * not open here is dropped with a line (at most one per 10 s).
 */
void
relay_from_up(const Envelope *env)
{
	const R3q__RelayControl	*rc;
	const R3q__RelayData	*rd;
	Envelope		 out = R3Q__ENVELOPE__INIT;
	R3q__RelayData		 d2 = R3Q__RELAY_DATA__INIT;
	R3q__RelayControl	 c2 = R3Q__RELAY_CONTROL__INIT;
	struct upstream		*u;
	struct down		*d;
	uint64_t		 v, now;
	uint32_t		 id;

	id = env->body_case == R3Q__ENVELOPE__BODY_RELAY_DATA ?
	    env->relay_data->stream : env->relay_control->stream;
	if (!u64map_get(&ry.r_up, id, &v)) {
		ry.r_unknown_unsaid++;
		now = mono_ns();
		if (ry.r_unknown_said == 0 ||
		    now - ry.r_unknown_said >= RELAY_LOG_NS) {
			log_info("relay: %llu %s frame(s) from the master for "
			    "a stream not open here (%u) dropped",
			    (unsigned long long)ry.r_unknown_unsaid,
			    frame_body_name(env), id);
			ry.r_unknown_said = now;
			ry.r_unknown_unsaid = 0;
		}
		return;
	}
	u = (struct upstream *)(uintptr_t)v;
	d = u->u_down;
	if (env->body_case == R3Q__ENVELOPE__BODY_RELAY_DATA) {
		rd = env->relay_data;
		if (d->d_closing)
			return;
		if (u->u_child == 0)
			bufferevent_write(d->d_bev, rd->data.data,
			    rd->data.len);
		else {
			d2.stream = u->u_child;
			d2.data = rd->data;
			out.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
			out.relay_data = &d2;
			relay_down_send(d, &out);
		}
		/* One that reads nothing is not kept for ever. */
		if (evbuffer_get_length(bufferevent_get_output(d->d_bev)) >
		    4 * ry.r_conf->max_frame + RELAY_UP_MARK) {
			log_warnx("relay: %s %s (%s) does not read what the "
			    "master sends it; closing", d->d_role, d->d_name,
			    d->d_addr);
			relay_down_streams_close(d, "it does not read");
			relay_down_close(d);
		}
		return;
	}
	rc = env->relay_control;
	if (rc->op == 3) {
		/* A grant: ours, or the relay's below (its id there). */
		if (u->u_child == 0) {
			if (d->d_stream == id) {
				d->d_credit += rc->credit;
				if (d->d_rdoff && rc->credit > 0 &&
				    !d->d_closing) {
					d->d_rdoff = 0;
					bufferevent_enable(d->d_bev, EV_READ);
				}
			}
			relay_pump_later();
			return;
		}
		c2.stream = u->u_child;
		c2.op = 3;
		c2.credit = rc->credit;
		out.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
		out.relay_control = &c2;
		relay_down_send(d, &out);
		return;
	}
	if (rc->op != 2) {
		log_warnx("relay: unexpected relay_control (op %u) from the "
		    "master", rc->op);
		return;
	}
	if (u->u_child != 0) {
		/* A stream of a relay below: pass the end on. */
		(void)u64map_del(&d->d_sub, u->u_child, NULL);
		c2.stream = u->u_child;
		c2.op = 2;
		c2.reason = rc->reason;
		out.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
		out.relay_control = &c2;
		relay_down_send(d, &out);
		relay_stream_del(id);
		return;
	}
	/* The master is done with this worker (or refused it). */
	relay_stream_del(id);
	d->d_stream = 0;
	relay_down_streams_close(d, "its relay's stream closed");
	if (rc->reason[0] != '\0') {
		log_warnx("relay: %s %s (%s): %s", d->d_role, d->d_name,
		    d->d_addr, rc->reason);
		relay_down_refuse(d, 0, "%s", rc->reason);
	} else
		relay_down_close(d);
}

/*
 * The link up is gone (or never came): every worker here is told why and
 * closed, to try again later or elsewhere.
 */
void
relay_up_lost(const char *why)
{
	struct down	*d, *n;
	size_t		 k = 0;

	if (!ry.r_on)
		return;
	snprintf(ry.r_why, sizeof(ry.r_why), "%s", why);
	for (d = TAILQ_FIRST(&ry.r_downs); d != NULL; d = n) {
		n = TAILQ_NEXT(d, d_entry);
		/*
		 * One still in its TLS handshake is told at its end (below,
		 * relay_down_verified): closing it now stalled its handshake,
		 * and the worker waited for ever (CI, relay-netns.sh).
		 */
		if (d->d_closing || d->d_hold != NULL || !d->d_verified)
			continue;
		if (d->d_stream != 0)
			k++;
		/* Their streams died with the link. */
		if (d->d_stream != 0)
			relay_stream_del(d->d_stream);
		d->d_stream = 0;
		relay_down_streams_close(d, why);
		relay_down_refuse(d, R3Q_ERROR_BUSY, "relay %s lost its "
		    "master: %s; try again later", ry.r_conf->name, why);
	}
	if (k > 0)
		log_warnx("relay: link to the master lost (%s): %zu "
		    "worker%s told to come back later", why, k, k == 1 ? "" :
		    "s");
}

/*
 * workerd's listeners (relay_listen, peer_listen): bind addr (host:port,
 * dport when it has none) for cb; NULL with err naming key and addr.
 */
struct evconnlistener *
workerd_listen(struct event_base *base, evconnlistener_cb cb,
    const char *key, const char *addr, const char *dport, char *err,
    size_t errlen)
{
	struct evconnlistener	*l;
	struct addrinfo		 hints, *res;
	char			 host[256], port[16];
	int			 rc;

	if (conf_split_hostport(addr, host, sizeof(host), port,
	    sizeof(port), dport) == -1) {
		snprintf(err, errlen, "%s: bad address %.200s", key, addr);
		return (NULL);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints,
	    &res)) != 0) {
		snprintf(err, errlen, "%s %.200s: %s", key, addr,
		    gai_strerror(rc));
		return (NULL);
	}
	l = evconnlistener_new_bind(base, cb, NULL, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_REUSEABLE, 128, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (l == NULL)
		snprintf(err, errlen, "%s %.200s: %s", key, addr,
		    strerror(errno));
	return (l);
}

/* Bind relay_listen; -1 with a message. */
static int
relay_bind(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 bound[64];

	if ((ry.r_listener = workerd_listen(ry.r_base, relay_accept,
	    "relay_listen", addr, "7411", err, errlen)) == NULL)
		return (-1);
	if (getsockname(evconnlistener_get_fd(ry.r_listener),
	    (struct sockaddr *)&ss, &sslen) == 0)
		sockaddr_str((struct sockaddr *)&ss, bound, sizeof(bound));
	else
		snprintf(bound, sizeof(bound), "%.60s", addr);
	log_info("relay %s listening on %s", ry.r_conf->name, bound);
	return (0);
}

/*
 * A TLS context for the workers below, with our crl file's CRLs and the
 * master's (mcrl.c) in *crlp (NULL: neither).  NULL with err.
 */
static SSL_CTX *
relay_ctx(const struct workerd_config *conf, struct tls_crl **crlp,
    char *err, size_t errlen)
{
	struct tls_crl	*crl = NULL;
	SSL_CTX		*ctx;

	*crlp = NULL;
	if ((ctx = tls_ctx_new(1, conf->ca, conf->cert, conf->key, err,
	    errlen)) == NULL)
		return (NULL);
	if (mcrl_load(conf, &crl, err, errlen) == -1)
		goto fail;
	if (tls_crl_apply(ctx, crl, err, errlen) == -1)
		goto fail;
	/* conf is workerd's one configuration, reloaded in place. */
	seal_server_ctx(ctx, &conf->sealed_frames);
	*crlp = crl;
	return (ctx);
fail:
	tls_crl_free(crl);
	SSL_CTX_free(ctx);
	return (NULL);
}

/* Start relaying if relay_listen is set; fatal if it cannot. */
void
relay_start(struct event_base *base, const struct workerd_config *conf)
{
	char	 err[1024];

	if (conf->relay_listen[0] == '\0' ||
	    strcmp(conf->relay_listen, "none") == 0)
		return;
	ry.r_base = base;
	ry.r_conf = conf;
	TAILQ_INIT(&ry.r_downs);
	u64map_init(&ry.r_up);
	snprintf(ry.r_why, sizeof(ry.r_why), "not connected yet");
	if ((ry.r_ctx = relay_ctx(conf, &ry.r_crl, err, sizeof(err))) == NULL)
		fatalx("relay: %s", err);
	if ((ry.r_pump = event_new(base, -1, 0, relay_pump, NULL)) == NULL)
		fatalx("event_new");
	if (relay_bind(conf->relay_listen, err, sizeof(err)) == -1)
		fatalx("%s", err);
	ry.r_on = 1;
}

/*
 * SIGHUP, or new CRLs from the master (mcrl.c): new TLS files and CRLs
 * for the workers that connect next; a worker here that the new CRLs
 * revoke is closed now, its stream with it (the master, sweeping its own
 * CRL, closes it too).
 */
void
relay_reload(const struct workerd_config *conf)
{
	struct down	*d, *n;
	struct tls_crl	*crl = NULL;
	SSL_CTX		*ctx;
	X509		*x;
	const unsigned char *p;
	char		 err[1024], why[768];

	if (!ry.r_on)
		return;
	if ((ctx = relay_ctx(conf, &crl, err, sizeof(err))) == NULL) {
		log_warnx("relay: reload: %s; keeping the old TLS files", err);
		return;
	}
	SSL_CTX_free(ry.r_ctx);
	ry.r_ctx = ctx;
	tls_crl_free(ry.r_crl);
	ry.r_crl = crl;
	if (crl == NULL)
		return;
	for (d = TAILQ_FIRST(&ry.r_downs); d != NULL; d = n) {
		n = TAILQ_NEXT(d, d_entry);
		if (d->d_closing || d->d_cert == NULL)
			continue;
		p = d->d_cert;
		if ((x = d2i_X509(NULL, &p, (long)d->d_certlen)) == NULL)
			continue;
		if (tls_crl_revoked(crl, x, why, sizeof(why))) {
			log_warnx("relay: %s %s (%s): its certificate is now "
			    "revoked by %s: %s; disconnecting", d->d_role,
			    d->d_name, d->d_addr, tls_crl_path(crl), why);
			relay_down_streams_close(d, "its certificate is "
			    "revoked");
			relay_down_refuse(d, 0, "your certificate is revoked");
		}
		X509_free(x);
	}
}

/* The master's CRLs changed (mcrl.c): put them in force here. */
void
relay_crl_changed(void)
{
	if (ry.r_on)
		relay_reload(ry.r_conf);
}

void
relay_stop(void)
{
	struct down	*d;
	size_t		 i;

	if (!ry.r_on)
		return;
	while ((d = TAILQ_FIRST(&ry.r_downs)) != NULL) {
		TAILQ_REMOVE(&ry.r_downs, d, d_entry);
		u64map_free(&d->d_sub);
		if (d->d_hold != NULL)
			event_free(d->d_hold);
		bufferevent_free(d->d_bev);
		free(d->d_cert);
		free(d);
	}
	for (i = 0; i < ry.r_up.m_nslots; i++)
		if (ry.r_up.m_slots[i].used)
			free((void *)(uintptr_t)ry.r_up.m_slots[i].v);
	u64map_free(&ry.r_up);
	evconnlistener_free(ry.r_listener);
	event_free(ry.r_pump);
	SSL_CTX_free(ry.r_ctx);
	tls_crl_free(ry.r_crl);
	ry.r_on = 0;
}
