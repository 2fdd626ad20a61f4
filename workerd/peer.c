/*
 * Worker-to-worker links (for the total exchange of doc/algorithms.md
 * §2): with peer_listen set, this
 * worker accepts TLS from other workers and, when the master orders it
 * (PeerOrder, on our own link to the master and nowhere else), connects to
 * the workers the order names, probes a link or runs its part of a total
 * exchange.
 *
 * Trust.  Both ends prove a worker certificate from the CA (mutual TLS,
 * the CRL checked): a certificate of another role is refused and logged,
 * on either end.  We connect only to the addresses of a PeerOrder from
 * the master, and check that the certificate met there carries the name
 * the master gave with the address; an order arriving any other way (a
 * peer sending one) is refused and logged, and the connection closed.  A
 * peer may only ping, grant, acknowledge, announce and send bytes.
 *
 * The exchange.  The master's schedule gives us our sends and our
 * receives, each in order (Nakahira and Fujiwara's model: a processor
 * sends one and receives one message at a time).  A receive begins when we grant it to its
 * sender (PeerMsg op 4), once the receive before it is complete; a send
 * begins when the one before it is acknowledged and its receiver has
 * granted it.  Each send waits peer_delay first (the start-up cost,
 * emulated in-process as --delay is), announces its bytes (op 6), sends
 * them (PeerData, padding) and ends when the receiver acknowledges the
 * last byte (op 5).  We report each send's start and end, in ns from the
 * order's arrival.  A peer lost or silent past the order's timeout fails
 * the order, naming it.
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
#include "tls.h"
#include "util.h"
#include "workerd.h"

#define PEER_CHUNK	(128u << 10)	/* bytes of one PeerData */
#define PEER_OUT_MARK	(512u << 10)	/* queued to a peer, then wait */
#define PEER_FRAME_MAX	(PEER_CHUNK + 4096)	/* from a peer, at most */
#define PEER_HANDSHAKE	10		/* s */
#define PEER_PINGS_MAX	64
#define PEER_PROBE_SEQ	UINT32_MAX	/* a probe's bulk transfer */
#define PEER_TIMEOUT_DEFAULT	60000	/* ms, an order without one */

enum {
	OP_HELLO = 1, OP_PING, OP_PONG, OP_GRANT, OP_ACK, OP_BEGIN
};
enum {
	ORDER_PROBE = 1, ORDER_EXCHANGE, ORDER_CANCEL
};
enum sstate {
	S_IDLE, S_GRANT, S_DELAY, S_SEND, S_ACK
};

/* A connection with another worker, either way. */
struct pconn {
	TAILQ_ENTRY(pconn)	 c_entry;
	struct bufferevent	*c_bev;
	char			 c_addr[128];
	char			 c_name[64];	/* its certificate's CN */
	char			 c_expect[64];	/* outgoing: the master's name */
	int			 c_out;		/* we connected */
	int			 c_up;		/* TLS done, certificate good */
	/* a transfer coming in (op 6, then PeerData) */
	int			 c_rbusy;
	uint64_t		 c_rorder;
	uint32_t		 c_rseq;
	uint64_t		 c_rleft;
};
TAILQ_HEAD(pconnlist, pconn);

struct pstep {
	uint32_t		 st_peer;
	uint64_t		 st_bytes;
	uint32_t		 st_seq;
	int			 st_granted;
};

/* The master's order being carried out (one at a time). */
struct order {
	uint64_t		 o_id;
	uint32_t		 o_op;
	size_t			 o_np;		/* peer indices 0..o_np-1 */
	char			(*o_name)[64];
	char			(*o_addr)[128];
	uint64_t		 o_t0;		/* mono ns of its arrival */
	struct event		*o_timer;
	struct event		*o_delay;
	/* probe */
	uint32_t		 o_pings;
	uint32_t		 o_pinged;
	int			 o_pinging;	/* a ping armed or on its way */
	uint64_t		 o_ping_t;
	uint64_t		 o_rtt;
	uint64_t		 o_bytes;
	uint64_t		 o_bulk_t;
	int			 o_bulk;	/* pings done: bulk under way */
	/* exchange */
	struct pstep		*o_sends;
	size_t			 o_nsends, o_si;
	struct pstep		*o_recvs;
	size_t			 o_nrecvs, o_ri;
	int			 o_rgranted;	/* o_recvs[o_ri] is granted */
	enum sstate		 o_sstate;
	uint64_t		 o_sleft;
	uint64_t		 o_sstart;
	struct pconn		*o_sconn;
	R3q__PeerEvent		*o_ev;
};

/*
 * A grant that came before the master's order it belongs to (the
 * receiver's order arrived first): kept until ours does.
 */
struct early {
	uint64_t		 e_order;
	uint32_t		 e_seq;
	char			 e_name[64];
};
#define PEER_EARLY_MAX	4096

static struct {
	struct early			*p_early;
	size_t				 p_nearly;
	uint64_t			 p_last;	/* the last order's id */
	struct event_base		*p_base;
	const struct workerd_config	*p_conf;
	SSL_CTX				*p_sctx;	/* accepting */
	SSL_CTX				*p_cctx;	/* connecting */
	struct tls_crl			*p_crl;
	struct evconnlistener		*p_listener;
	struct pconnlist		 p_conns;
	char				 p_addr[160];	/* advertised */
	struct order			*p_order;
	int				 p_on;
} pr;

static uint8_t	zeros[PEER_CHUNK];

static void	peer_order_fail(const char *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void	peer_send_next(void);
static void	peer_recv_next(void);
static void	peer_probe_next(void);
static void	pconn_free(struct pconn *);

const char *
peer_address(void)
{
	return (pr.p_on ? pr.p_addr : NULL);
}

static void
pconn_send(struct pconn *c, Envelope *env)
{
	if (frame_write(bufferevent_get_output(c->c_bev), env) == -1)
		log_warnx("peer: cannot queue a %s message for %s",
		    frame_body_name(env), c->c_name);
}

static void
pconn_msg(struct pconn *c, uint32_t op, uint64_t order, uint32_t seq,
    uint64_t bytes)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__PeerMsg	 m = R3Q__PEER_MSG__INIT;

	m.op = op;
	m.order = order;
	m.seq = seq;
	m.bytes = bytes;
	env.body_case = R3Q__ENVELOPE__BODY_PEER_MSG;
	env.peer_msg = &m;
	pconn_send(c, &env);
}

/* The order is over: tell the master, forget it. */
static void
peer_order_end(int ok, const char *culprit, const char *why)
{
	struct order	*o = pr.p_order;
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__PeerReport	 r = R3Q__PEER_REPORT__INIT;
	R3q__PeerEvent	**ev = NULL;
	size_t		 i;

	if (o == NULL)
		return;
	r.ok = ok;
	r.error = (char *)(uintptr_t)(why != NULL ? why : "");
	r.culprit = (char *)(uintptr_t)(culprit != NULL ? culprit : "");
	if (o->o_op == ORDER_PROBE) {
		r.rtt_ns = o->o_rtt;
		r.bulk_ns = o->o_bulk_t;
		r.bulk_bytes = o->o_bytes;
	} else if (o->o_nsends > 0) {
		ev = xcalloc(o->o_nsends, sizeof(*ev));
		for (i = 0; i < o->o_si; i++)
			ev[i] = &o->o_ev[i];
		r.n_sent = o->o_si;
		r.sent = ev;
	}
	env.id = o->o_id;
	env.body_case = R3Q__ENVELOPE__BODY_PEER_REPORT;
	env.peer_report = &r;
	link_send(&env);
	free(ev);
	if (!ok)
		log_warnx("peer: order %llu failed: %s",
		    (unsigned long long)o->o_id, why);
	else
		log_debug("peer: order %llu done", (unsigned long long)o->o_id);
	if (o->o_timer != NULL)
		event_free(o->o_timer);
	if (o->o_delay != NULL)
		event_free(o->o_delay);
	free(o->o_name);
	free(o->o_addr);
	free(o->o_sends);
	free(o->o_recvs);
	free(o->o_ev);
	free(o);
	pr.p_order = NULL;
}

static void
peer_order_fail(const char *culprit, const char *fmt, ...)
{
	char	 why[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	peer_order_end(0, culprit, why);
}

/* Is the order done, every send acknowledged and every receive in? */
static void
peer_exchange_check(void)
{
	struct order	*o = pr.p_order;

	if (o != NULL && o->o_op == ORDER_EXCHANGE &&
	    o->o_si == o->o_nsends && o->o_ri == o->o_nrecvs)
		peer_order_end(1, NULL, NULL);
}

/* Our outgoing connection to peer index i of the order, up or not. */
static struct pconn *
peer_conn_out(uint32_t i)
{
	struct order	*o = pr.p_order;
	struct pconn	*c;

	TAILQ_FOREACH(c, &pr.p_conns, c_entry)
		if (c->c_out && strcmp(c->c_expect, o->o_name[i]) == 0 &&
		    strcmp(c->c_addr, o->o_addr[i]) == 0)
			return (c);
	return (NULL);
}

/* An incoming, verified connection from the worker named name. */
static struct pconn *
peer_conn_in(const char *name)
{
	struct pconn	*c;

	TAILQ_FOREACH(c, &pr.p_conns, c_entry)
		if (!c->c_out && c->c_up && strcmp(c->c_name, name) == 0)
			return (c);
	return (NULL);
}

/* Queue bytes of the send under way while the output has room. */
static void
peer_pump(struct pconn *c)
{
	struct order	*o = pr.p_order;
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__PeerData	 d = R3Q__PEER_DATA__INIT;
	struct evbuffer	*out = bufferevent_get_output(c->c_bev);
	uint32_t	 seq;
	size_t		 n;

	if (o == NULL || o->o_sconn != c || o->o_sstate != S_SEND)
		return;
	seq = o->o_op == ORDER_PROBE ? PEER_PROBE_SEQ :
	    o->o_sends[o->o_si].st_seq;
	while (o->o_sleft > 0 && evbuffer_get_length(out) < PEER_OUT_MARK) {
		n = o->o_sleft < PEER_CHUNK ? (size_t)o->o_sleft : PEER_CHUNK;
		d.order = o->o_id;
		d.seq = seq;
		d.data.data = zeros;
		d.data.len = n;
		env.body_case = R3Q__ENVELOPE__BODY_PEER_DATA;
		env.peer_data = &d;
		pconn_send(c, &env);
		o->o_sleft -= n;
	}
	if (o->o_sleft == 0)
		o->o_sstate = S_ACK;
}

/* The start-up delay is over: announce the bytes and send them. */
static void
peer_delay_over(evutil_socket_t fd, short ev, void *arg)
{
	struct order	*o = pr.p_order;
	struct pconn	*c;

	(void)fd;
	(void)ev;
	(void)arg;
	if (o == NULL || (c = o->o_sconn) == NULL)
		return;
	if (o->o_op == ORDER_PROBE && !o->o_bulk) {
		pconn_msg(c, OP_PING, o->o_id, o->o_pinged, 0);
		return;
	}
	o->o_sstate = S_SEND;
	pconn_msg(c, OP_BEGIN, o->o_id, o->o_op == ORDER_PROBE ?
	    PEER_PROBE_SEQ : o->o_sends[o->o_si].st_seq, o->o_sleft);
	peer_pump(c);
}

/* Wait peer_delay (the emulated start-up), then peer_delay_over(). */
static void
peer_delay_arm(void)
{
	struct order	*o = pr.p_order;
	struct timeval	 tv;
	uint64_t	 ms = pr.p_conf->peer_delay;

	o->o_sstate = S_DELAY;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	/* From now, not from the loop's cached time (early by our work). */
	event_base_update_cache_time(pr.p_base);
	evtimer_add(o->o_delay, &tv);
}

/* Start the next send of the exchange when it may begin. */
static void
peer_send_next(void)
{
	struct order	*o = pr.p_order;
	struct pstep	*st;
	struct pconn	*c;

	if (o == NULL || o->o_op != ORDER_EXCHANGE)
		return;
	if (o->o_si == o->o_nsends) {
		peer_exchange_check();
		return;
	}
	if (o->o_sstate != S_IDLE && o->o_sstate != S_GRANT)
		return;
	st = &o->o_sends[o->o_si];
	o->o_sstate = S_GRANT;
	if (!st->st_granted)
		return;
	if ((c = peer_conn_out(st->st_peer)) == NULL || !c->c_up)
		return;		/* a grant came on it: cannot happen */
	o->o_sconn = c;
	o->o_sleft = st->st_bytes;
	o->o_sstart = mono_ns();
	peer_delay_arm();
}

/* Grant the next receive of the exchange once its sender is here. */
static void
peer_recv_next(void)
{
	struct order	*o = pr.p_order;
	struct pstep	*st;
	struct pconn	*c;

	if (o == NULL || o->o_op != ORDER_EXCHANGE)
		return;
	if (o->o_ri == o->o_nrecvs) {
		peer_exchange_check();
		return;
	}
	if (o->o_rgranted)
		return;
	st = &o->o_recvs[o->o_ri];
	if ((c = peer_conn_in(o->o_name[st->st_peer])) == NULL)
		return;		/* when it connects */
	o->o_rgranted = 1;
	pconn_msg(c, OP_GRANT, o->o_id, st->st_seq, st->st_bytes);
}

/* The probe's next step: a ping, then the bulk transfer. */
static void
peer_probe_next(void)
{
	struct order	*o = pr.p_order;

	if (o == NULL || o->o_op != ORDER_PROBE || o->o_sconn == NULL ||
	    !o->o_sconn->c_up)
		return;
	/*
	 * Called again while a ping is armed or on its way (the connection
	 * reported up after the order had pinged on it), it would restart
	 * that ping's clock and time its pong from the restart: a start-up
	 * under peer_delay (peer.sh saw 254 us against 2 ms once).
	 */
	if (o->o_pinging || o->o_bulk)
		return;
	if (o->o_pinged < o->o_pings) {
		o->o_pinging = 1;
		o->o_ping_t = mono_ns();
		peer_delay_arm();
		return;
	}
	log_debug("peer: order %llu: %u pings, the shortest %llu us; now "
	    "%llu bytes", (unsigned long long)o->o_id, o->o_pinged,
	    (unsigned long long)(o->o_rtt / 1000),
	    (unsigned long long)o->o_bytes);
	o->o_bulk = 1;
	o->o_sleft = o->o_bytes;
	o->o_sstart = mono_ns();
	peer_delay_arm();
}

/* A connection is gone: an order that needed it fails. */
static void
peer_conn_lost(struct pconn *c, const char *why)
{
	struct order	*o = pr.p_order;
	const char	*name = c->c_up ? c->c_name : c->c_expect;
	size_t		 i;
	int		 needed = 0;

	if (o == NULL)
		return;
	if (o->o_sconn == c)
		needed = 1;
	if (o->o_op == ORDER_EXCHANGE) {
		for (i = o->o_si; i < o->o_nsends && !needed; i++)
			if (strcmp(o->o_name[o->o_sends[i].st_peer],
			    name) == 0)
				needed = 1;
		for (i = o->o_ri; i < o->o_nrecvs && !needed; i++)
			if (!c->c_out && strcmp(o->o_name[
			    o->o_recvs[i].st_peer], name) == 0)
				needed = 1;
	}
	if (needed) {
		o->o_sconn = NULL;
		peer_order_fail(name, "lost worker %s (%s): %s", name,
		    c->c_addr, why);
	}
}

static void
pconn_free(struct pconn *c)
{
	struct order	*o = pr.p_order;

	if (o != NULL && o->o_sconn == c)
		o->o_sconn = NULL;
	TAILQ_REMOVE(&pr.p_conns, c, c_entry);
	bufferevent_free(c->c_bev);
	free(c);
}

/* A whole transfer is in: acknowledge it, go on receiving. */
static void
peer_received(struct pconn *c)
{
	struct order	*o = pr.p_order;

	c->c_rbusy = 0;
	pconn_msg(c, OP_ACK, c->c_rorder, c->c_rseq, 0);
	if (c->c_rseq == PEER_PROBE_SEQ || o == NULL ||
	    o->o_id != c->c_rorder || o->o_op != ORDER_EXCHANGE)
		return;
	o->o_ri++;
	o->o_rgranted = 0;
	peer_recv_next();
}

/*
 * One message from a peer; -1: it broke the rules (logged), close it.
 * Nothing here may start a connection or an order.
 */
static int
peer_dispatch(struct pconn *c, Envelope *env)
{
	struct order	*o = pr.p_order;
	R3q__PeerMsg	*m;
	size_t		 i;
	uint64_t	 now = mono_ns();

	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_PEER_DATA:
		if (!c->c_rbusy || env->peer_data->order != c->c_rorder ||
		    env->peer_data->seq != c->c_rseq ||
		    env->peer_data->data.len > c->c_rleft) {
			log_warnx("peer: %s (%s): refused: bytes it did not "
			    "announce", c->c_name, c->c_addr);
			return (-1);
		}
		c->c_rleft -= env->peer_data->data.len;
		if (c->c_rleft == 0)
			peer_received(c);
		return (0);
	case R3Q__ENVELOPE__BODY_PEER_MSG:
		break;
	default:
		log_warnx("peer: refused a %s message from worker %s (%s): a "
		    "peer may not send it (orders come from the master "
		    "only); connection closed", frame_body_name(env),
		    c->c_name, c->c_addr);
		return (-1);
	}
	m = env->peer_msg;
	switch (m->op) {
	case OP_PING:
		pconn_msg(c, OP_PONG, m->order, m->seq, 0);
		return (0);
	case OP_BEGIN:
		if (c->c_rbusy && m->order != c->c_rorder &&
		    (o == NULL || c->c_rorder != o->o_id)) {
			/*
			 * The rest of a transfer of an order given up (a
			 * worker lost or silent in the middle of it, the
			 * master cancelled it): its sender stopped there and
			 * what it had queued came before this.  Forget it.
			 */
			log_debug("peer: %s (%s): order %llu event %u given "
			    "up with %llu bytes to come", c->c_name,
			    c->c_addr, (unsigned long long)c->c_rorder,
			    c->c_rseq, (unsigned long long)c->c_rleft);
			c->c_rbusy = 0;
		}
		if (c->c_rbusy) {
			log_warnx("peer: %s (%s): refused: a transfer begun "
			    "inside another", c->c_name, c->c_addr);
			return (-1);
		}
		if (m->seq != PEER_PROBE_SEQ && (o == NULL ||
		    o->o_op != ORDER_EXCHANGE || m->order != o->o_id ||
		    o->o_ri == o->o_nrecvs || !o->o_rgranted ||
		    o->o_recvs[o->o_ri].st_seq != m->seq ||
		    o->o_recvs[o->o_ri].st_bytes != m->bytes)) {
			log_warnx("peer: %s (%s): refused: a transfer we did "
			    "not grant (order %llu, event %u)", c->c_name,
			    c->c_addr, (unsigned long long)m->order, m->seq);
			return (-1);
		}
		c->c_rbusy = 1;
		c->c_rorder = m->order;
		c->c_rseq = m->seq;
		c->c_rleft = m->bytes;
		if (m->bytes == 0)
			peer_received(c);
		return (0);
	case OP_PONG:
		if (o == NULL || o->o_op != ORDER_PROBE || o->o_sconn != c ||
		    m->order != o->o_id || m->seq != o->o_pinged)
			return (0);	/* late: an order given up */
		if (o->o_rtt == 0 || now - o->o_ping_t < o->o_rtt)
			o->o_rtt = now - o->o_ping_t;
		o->o_pinging = 0;
		o->o_pinged++;
		peer_probe_next();
		return (0);
	case OP_GRANT:
		if (m->order > pr.p_last) {
			/* Ours is on its way from the master. */
			if (pr.p_nearly == PEER_EARLY_MAX) {
				log_warnx("peer: %s (%s): refused: too many "
				    "grants ahead of their orders", c->c_name,
				    c->c_addr);
				return (-1);
			}
			if (pr.p_early == NULL)
				pr.p_early = xcalloc(PEER_EARLY_MAX,
				    sizeof(*pr.p_early));
			pr.p_early[pr.p_nearly].e_order = m->order;
			pr.p_early[pr.p_nearly].e_seq = m->seq;
			snprintf(pr.p_early[pr.p_nearly].e_name,
			    sizeof(pr.p_early[0].e_name), "%s", c->c_name);
			pr.p_nearly++;
			return (0);
		}
		if (o == NULL || o->o_op != ORDER_EXCHANGE ||
		    m->order != o->o_id)
			return (0);
		for (i = o->o_si; i < o->o_nsends; i++)
			if (o->o_sends[i].st_seq == m->seq &&
			    strcmp(o->o_name[o->o_sends[i].st_peer],
			    c->c_name) == 0)
				break;
		if (i == o->o_nsends) {
			log_warnx("peer: %s (%s): a grant of event %u we do "
			    "not send it", c->c_name, c->c_addr, m->seq);
			return (0);
		}
		o->o_sends[i].st_granted = 1;
		peer_send_next();
		return (0);
	case OP_ACK:
		if (o == NULL || o->o_sconn != c || m->order != o->o_id ||
		    o->o_sstate != S_ACK)
			return (0);
		if (o->o_op == ORDER_PROBE) {
			o->o_bulk_t = now - o->o_sstart;
			peer_order_end(1, NULL, NULL);
			return (0);
		}
		if (m->seq != o->o_sends[o->o_si].st_seq)
			return (0);
		o->o_ev[o->o_si].seq = m->seq;
		o->o_ev[o->o_si].start_ns = o->o_sstart - o->o_t0;
		o->o_ev[o->o_si].end_ns = now - o->o_t0;
		o->o_ev[o->o_si].bytes = o->o_sends[o->o_si].st_bytes;
		o->o_si++;
		o->o_sstate = S_IDLE;
		o->o_sconn = NULL;
		peer_send_next();
		return (0);
	default:
		log_warnx("peer: %s (%s): refused: unknown peer operation %u",
		    c->c_name, c->c_addr, m->op);
		return (-1);
	}
}

static void
pconn_read(struct bufferevent *bev, void *arg)
{
	struct pconn	*c = arg;
	Envelope	*env;
	char		 err[256];
	int		 rc;

	for (;;) {
		rc = frame_read(bufferevent_get_input(bev), PEER_FRAME_MAX,
		    &env, err, sizeof(err));
		if (rc == 0)
			return;
		if (rc == -1) {
			log_warnx("peer: %s (%s): %s; connection closed",
			    c->c_name, c->c_addr, err);
			peer_conn_lost(c, err);
			pconn_free(c);
			return;
		}
		rc = peer_dispatch(c, env);
		frame_free(env);
		if (rc == -1) {
			peer_conn_lost(c, "it broke the peer protocol");
			pconn_free(c);
			return;
		}
	}
}

static void
pconn_written(struct bufferevent *bev, void *arg)
{
	(void)bev;
	peer_pump(arg);
}

/* TLS is up: is the certificate a worker's, and (ours) the one named? */
static int
pconn_verified(struct pconn *c)
{
	SSL	*ssl = bufferevent_openssl_get_ssl(c->c_bev);
	char	 role[32], why[768];

	if (tls_peer_check(ssl, role, sizeof(role), c->c_name,
	    sizeof(c->c_name), why, sizeof(why)) == -1) {
		log_warnx("peer: %s: refused: %s", c->c_addr, why);
		return (-1);
	}
	if (pr.p_crl != NULL && tls_crl_revoked(pr.p_crl,
	    SSL_get0_peer_certificate(ssl), why, sizeof(why))) {
		log_warnx("peer: %s: refused %s: its certificate is revoked: "
		    "%s", c->c_addr, c->c_name, why);
		return (-1);
	}
	if (strcmp(role, "worker") != 0) {
		log_warnx("peer: %s: refused %s: its certificate has role "
		    "'%s', not worker", c->c_addr, c->c_name, role);
		return (-1);
	}
	if (c->c_out && strcmp(c->c_name, c->c_expect) != 0) {
		log_warnx("peer: %s: refused: the master named worker %s "
		    "there, its certificate names %s", c->c_addr, c->c_expect,
		    c->c_name);
		return (-1);
	}
	c->c_up = 1;
	bufferevent_set_timeouts(c->c_bev, NULL, NULL);
	log_debug("peer: %s %s (%s) up", c->c_out ? "to" : "from", c->c_name,
	    c->c_addr);
	return (0);
}

static void
pconn_event(struct bufferevent *bev, short what, void *arg)
{
	struct pconn	*c = arg;
	struct order	*o = pr.p_order;
	char		 why[256];

	if (what & BEV_EVENT_CONNECTED) {
		if (pconn_verified(c) == -1) {
			peer_conn_lost(c, "its certificate was refused");
			pconn_free(c);
			return;
		}
		if (c->c_out) {
			if (o != NULL && o->o_op == ORDER_PROBE &&
			    o->o_sconn == c)
				peer_probe_next();
			peer_send_next();
		} else
			peer_recv_next();
		return;
	}
	tls_describe_error(bev, what, why, sizeof(why));
	log_debug("peer: %s %s (%s): %s", c->c_out ? "to" : "from",
	    c->c_up ? c->c_name : c->c_expect, c->c_addr, why);
	peer_conn_lost(c, why);
	pconn_free(c);
}

static void
pconn_setup(struct pconn *c)
{
	struct timeval	 tv = { PEER_HANDSHAKE, 0 };

	TAILQ_INSERT_TAIL(&pr.p_conns, c, c_entry);
	bufferevent_setcb(c->c_bev, pconn_read, pconn_written, pconn_event,
	    c);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, PEER_OUT_MARK / 2, 0);
	bufferevent_set_timeouts(c->c_bev, &tv, &tv);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
}

static void
peer_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct pconn	*c;
	SSL		*ssl;
	int		 one = 1;

	(void)l;
	(void)arg;
	(void)salen;
	c = xcalloc(1, sizeof(*c));
	sockaddr_str(sa, c->c_addr, sizeof(c->c_addr));
	snprintf(c->c_name, sizeof(c->c_name), "unauthenticated");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((ssl = SSL_new(pr.p_sctx)) == NULL ||
	    (c->c_bev = bufferevent_openssl_socket_new(pr.p_base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS)) == NULL) {
		log_warnx("peer: %s: cannot start TLS", c->c_addr);
		SSL_free(ssl);
		close(fd);
		free(c);
		return;
	}
	pconn_setup(c);
}

/* Connect to peer index i of the order (the master gave the address). */
static struct pconn *
peer_connect(uint32_t i)
{
	struct order	*o = pr.p_order;
	struct addrinfo	 hints, *res;
	struct pconn	*c;
	SSL		*ssl;
	char		 host[256], port[16];
	int		 rc, one = 1;

	if ((c = peer_conn_out(i)) != NULL)
		return (c);
	if (conf_split_hostport(o->o_addr[i], host, sizeof(host), port,
	    sizeof(port), NULL) == -1 || port[0] == '\0') {
		peer_order_fail(o->o_name[i], "worker %s: bad peer address "
		    "'%s'", o->o_name[i], o->o_addr[i]);
		return (NULL);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_NUMERICHOST;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		peer_order_fail(o->o_name[i], "worker %s: peer address %s: %s",
		    o->o_name[i], o->o_addr[i], gai_strerror(rc));
		return (NULL);
	}
	c = xcalloc(1, sizeof(*c));
	c->c_out = 1;
	snprintf(c->c_addr, sizeof(c->c_addr), "%s", o->o_addr[i]);
	snprintf(c->c_expect, sizeof(c->c_expect), "%s", o->o_name[i]);
	snprintf(c->c_name, sizeof(c->c_name), "%s", o->o_name[i]);
	if ((ssl = SSL_new(pr.p_cctx)) == NULL ||
	    (c->c_bev = bufferevent_openssl_socket_new(pr.p_base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS)) == NULL) {
		SSL_free(ssl);
		freeaddrinfo(res);
		free(c);
		peer_order_fail(o->o_name[i], "cannot start TLS to %s",
		    o->o_addr[i]);
		return (NULL);
	}
	pconn_setup(c);
	if (bufferevent_socket_connect(c->c_bev, res->ai_addr,
	    (int)res->ai_addrlen) == -1) {
		freeaddrinfo(res);
		pconn_free(c);
		peer_order_fail(o->o_name[i], "cannot connect to worker %s at "
		    "%s", o->o_name[i], o->o_addr[i]);
		return (NULL);
	}
	setsockopt(bufferevent_getfd(c->c_bev), IPPROTO_TCP, TCP_NODELAY,
	    &one, sizeof(one));
	freeaddrinfo(res);
	log_debug("peer: connecting to %s at %s", c->c_expect, c->c_addr);
	return (c);
}

static void
peer_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct order	*o = pr.p_order;
	const char	*who = NULL;

	(void)fd;
	(void)ev;
	(void)arg;
	if (o == NULL)
		return;
	if (o->o_op == ORDER_PROBE)
		who = o->o_name[0];
	else if (o->o_si < o->o_nsends && o->o_sstate <= S_GRANT)
		who = o->o_name[o->o_sends[o->o_si].st_peer];
	else if (o->o_si < o->o_nsends)
		who = o->o_name[o->o_sends[o->o_si].st_peer];
	else if (o->o_ri < o->o_nrecvs)
		who = o->o_name[o->o_recvs[o->o_ri].st_peer];
	peer_order_fail(who, "timed out after %llu ms waiting for worker %s",
	    (unsigned long long)((mono_ns() - o->o_t0) / NS_PER_MS),
	    who != NULL ? who : "?");
}

static int
peer_steps(struct pstep **out, R3q__PeerStep **in, size_t n, size_t np,
    char *err, size_t errlen)
{
	size_t	 i;

	*out = xcalloc(n + 1, sizeof(**out));
	for (i = 0; i < n; i++) {
		if (in[i]->peer >= np) {
			snprintf(err, errlen, "step %zu names peer %u of %zu",
			    i, in[i]->peer, np);
			return (-1);
		}
		(*out)[i].st_peer = in[i]->peer;
		(*out)[i].st_bytes = in[i]->bytes;
		(*out)[i].st_seq = in[i]->seq;
	}
	return (0);
}

/* A PeerOrder from the master (link.c; the only way one comes in). */
void
peer_order(uint64_t id, const R3q__PeerOrder *po)
{
	struct order	*o;
	struct timeval	 tv;
	char		 err[256];
	size_t		 i, np = 0;
	uint64_t	 ms;

	if (po->op == ORDER_CANCEL) {
		/* Only the order it names: a late one harms no other. */
		if (pr.p_order != NULL && pr.p_order->o_id == id)
			peer_order_fail(NULL, "cancelled by the master");
		return;
	}
	if (pr.p_order != NULL)
		peer_order_fail(NULL, "superseded by order %llu",
		    (unsigned long long)id);
	o = xcalloc(1, sizeof(*o));
	pr.p_order = o;
	if (id > pr.p_last)
		pr.p_last = id;
	o->o_id = id;
	o->o_op = po->op;
	o->o_t0 = mono_ns();
	if ((o->o_timer = evtimer_new(pr.p_base, peer_timeout, NULL)) ==
	    NULL || (o->o_delay = evtimer_new(pr.p_base, peer_delay_over,
	    NULL)) == NULL)
		fatalx("evtimer_new");
	ms = po->timeout_ms ? po->timeout_ms : PEER_TIMEOUT_DEFAULT;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	evtimer_add(o->o_timer, &tv);
	if (!pr.p_on) {
		peer_order_fail(NULL, "this worker has no peer_listen");
		return;
	}
	for (i = 0; i < po->n_peers; i++)
		if (po->peers[i]->index >= np)
			np = po->peers[i]->index + 1;
	if (np > 4096 || (o->o_op != ORDER_PROBE &&
	    o->o_op != ORDER_EXCHANGE)) {
		peer_order_fail(NULL, "bad order (op %u, %zu peers)", po->op,
		    np);
		return;
	}
	o->o_np = np;
	o->o_name = xcalloc(np + 1, sizeof(*o->o_name));
	o->o_addr = xcalloc(np + 1, sizeof(*o->o_addr));
	for (i = 0; i < po->n_peers; i++) {
		snprintf(o->o_name[po->peers[i]->index], sizeof(o->o_name[0]),
		    "%s", po->peers[i]->name);
		snprintf(o->o_addr[po->peers[i]->index], sizeof(o->o_addr[0]),
		    "%s", po->peers[i]->address);
	}
	if (o->o_op == ORDER_PROBE) {
		if (np == 0) {
			peer_order_fail(NULL, "probe of no peer");
			return;
		}
		o->o_pings = po->pings > PEER_PINGS_MAX ? PEER_PINGS_MAX :
		    po->pings;
		o->o_bytes = po->bytes;
		if ((o->o_sconn = peer_connect(0)) == NULL)
			return;
		peer_probe_next();
		return;
	}
	if (peer_steps(&o->o_sends, po->sends, po->n_sends, np, err,
	    sizeof(err)) == -1 || peer_steps(&o->o_recvs, po->recvs,
	    po->n_recvs, np, err, sizeof(err)) == -1) {
		peer_order_fail(NULL, "bad order: %s", err);
		return;
	}
	o->o_nsends = po->n_sends;
	o->o_nrecvs = po->n_recvs;
	o->o_ev = xcalloc(o->o_nsends + 1, sizeof(*o->o_ev));
	for (i = 0; i < o->o_nsends; i++)
		r3q__peer_event__init(&o->o_ev[i]);
	/* Grants that came first; those of orders before this one go. */
	for (i = 0; i < pr.p_nearly; i++) {
		size_t	 k;

		if (pr.p_early[i].e_order != id)
			continue;
		for (k = 0; k < o->o_nsends; k++)
			if (o->o_sends[k].st_seq == pr.p_early[i].e_seq &&
			    strcmp(o->o_name[o->o_sends[k].st_peer],
			    pr.p_early[i].e_name) == 0)
				o->o_sends[k].st_granted = 1;
	}
	for (i = 0, np = 0; i < pr.p_nearly; i++)
		if (pr.p_early[i].e_order > id)
			pr.p_early[np++] = pr.p_early[i];
	pr.p_nearly = np;
	for (i = 0; i < o->o_nsends; i++)
		if (peer_connect(o->o_sends[i].st_peer) == NULL)
			return;
	log_debug("peer: order %llu: %zu sends, %zu receives",
	    (unsigned long long)id, o->o_nsends, o->o_nrecvs);
	peer_recv_next();
	if (pr.p_order == o)
		peer_send_next();
}

/* The link to the master is down: no order survives it. */
void
peer_link_down(void)
{
	if (pr.p_order != NULL)
		peer_order_fail(NULL, "the link to the master went down");
	/* A master that comes back numbers its orders anew. */
	pr.p_last = 0;
	pr.p_nearly = 0;
}

/* Bind peer_listen, work out the address to advertise; -1 with why. */
static int
peer_bind(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 h[NI_MAXHOST], s[NI_MAXSERV];

	if ((pr.p_listener = workerd_listen(pr.p_base, peer_accept,
	    "peer_listen", addr, "7412", err, errlen)) == NULL)
		return (-1);
	if (getsockname(evconnlistener_get_fd(pr.p_listener),
	    (struct sockaddr *)&ss, &sslen) == -1 ||
	    getnameinfo((struct sockaddr *)&ss, sslen, h, sizeof(h), s,
	    sizeof(s), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(err, errlen, "peer_listen %.200s: cannot tell the "
		    "port bound", addr);
		return (-1);
	}
	/* A wildcard host: the master puts in the address it sees us at. */
	snprintf(pr.p_addr, sizeof(pr.p_addr), strchr(h, ':') ? "[%s]:%s" :
	    "%s:%s", h, s);
	log_info("peer: listening for other workers on %s", pr.p_addr);
	return (0);
}

/*
 * The TLS contexts for accepting and connecting, with our crl file's CRLs
 * and the master's (mcrl.c) in *crlp (NULL: neither).  -1 with err.
 */
static int
peer_ctx(const struct workerd_config *conf, SSL_CTX **sctxp,
    SSL_CTX **cctxp, struct tls_crl **crlp, char *err, size_t errlen)
{
	struct tls_crl	*crl = NULL;
	SSL_CTX		*sctx = NULL, *cctx = NULL;

	if ((sctx = tls_ctx_new(1, conf->ca, conf->cert, conf->key, err,
	    errlen)) == NULL || (cctx = tls_ctx_new(0, conf->ca, conf->cert,
	    conf->key, err, errlen)) == NULL)
		goto fail;
	if (mcrl_load(conf, &crl, err, errlen) == -1)
		goto fail;
	if (tls_crl_apply(sctx, crl, err, errlen) == -1 ||
	    tls_crl_apply(cctx, crl, err, errlen) == -1)
		goto fail;
	*sctxp = sctx;
	*cctxp = cctx;
	*crlp = crl;
	return (0);
fail:
	tls_crl_free(crl);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	return (-1);
}

/*
 * The master's CRLs changed (mcrl.c): new contexts for the links made
 * from now on, and a link to a worker they revoke is closed now.
 */
void
peer_crl_changed(void)
{
	struct pconn	*c, *n;
	struct tls_crl	*crl;
	SSL_CTX		*sctx, *cctx;
	SSL		*ssl;
	X509		*x;
	char		 err[1024], why[768];

	if (!pr.p_on)
		return;
	if (peer_ctx(pr.p_conf, &sctx, &cctx, &crl, err, sizeof(err)) == -1) {
		log_warnx("peer: new CRLs: %s; keeping the old ones", err);
		return;
	}
	SSL_CTX_free(pr.p_sctx);
	SSL_CTX_free(pr.p_cctx);
	tls_crl_free(pr.p_crl);
	pr.p_sctx = sctx;
	pr.p_cctx = cctx;
	pr.p_crl = crl;
	for (c = TAILQ_FIRST(&pr.p_conns); c != NULL; c = n) {
		n = TAILQ_NEXT(c, c_entry);
		if (!c->c_up || crl == NULL ||
		    (ssl = bufferevent_openssl_get_ssl(c->c_bev)) == NULL ||
		    (x = SSL_get0_peer_certificate(ssl)) == NULL ||
		    !tls_crl_revoked(crl, x, why, sizeof(why)))
			continue;
		log_warnx("peer: %s %s: its certificate is now revoked by "
		    "%s: %s; disconnecting", c->c_name, c->c_addr,
		    tls_crl_path(crl), why);
		peer_conn_lost(c, "its certificate is revoked");
		pconn_free(c);
	}
}

/* Listen for other workers if peer_listen is set; fatal if it cannot. */
void
peer_start(struct event_base *base, const struct workerd_config *conf)
{
	char	 err[1024];

	if (conf->peer_listen[0] == '\0' ||
	    strcmp(conf->peer_listen, "none") == 0)
		return;
	pr.p_base = base;
	pr.p_conf = conf;
	TAILQ_INIT(&pr.p_conns);
	if (peer_ctx(conf, &pr.p_sctx, &pr.p_cctx, &pr.p_crl, err,
	    sizeof(err)) == -1)
		fatalx("peer: %s", err);
	if (peer_bind(conf->peer_listen, err, sizeof(err)) == -1)
		fatalx("%s", err);
	pr.p_on = 1;
}

void
peer_stop(void)
{
	struct pconn	*c;

	if (!pr.p_on)
		return;
	peer_order_fail(NULL, "stopping");
	while ((c = TAILQ_FIRST(&pr.p_conns)) != NULL)
		pconn_free(c);
	evconnlistener_free(pr.p_listener);
	SSL_CTX_free(pr.p_sctx);
	SSL_CTX_free(pr.p_cctx);
	tls_crl_free(pr.p_crl);
	free(pr.p_early);
	pr.p_on = 0;
}
