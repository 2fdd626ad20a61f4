/*
 * Workers behind relays (the relaying of doc/algorithms.md §5).  A
 * relay is a workerd whose certificate says OU=relay: on its one link it
 * is a worker like any other, and it carries besides the traffic of the
 * workers that connected to it, each a stream (proto/r3q.proto,
 * RelayControl and RelayData).
 *
 * Each stream becomes a session of its own, on one end of a bufferevent
 * pair: the worker's bytes, unwrapped, go in at the other end ("far"),
 * and what masterd writes to it comes out there and leaves wrapped in
 * RelayData on the relay's link.  So a relayed worker is judged, limited,
 * timed, scheduled and lost by the same code as a direct one; only its
 * name comes from the relay's word rather than from its own certificate.
 *
 * Trust: only a relay's certificate lets a peer send RelayControl
 * (limits.c), and an honest relay names only workers that proved their
 * names to it with certificates from the same CA (workerd/relay.c).
 * masterd checks that the names are well formed, that the relay names
 * itself as the last hop, that no name comes twice on the path (a loop),
 * and that the certificate the relay passes names the worker, is our
 * CA's, valid and not revoked.  That bounds what a hostile relay can
 * claim to names it holds certificates of, but a certificate is no
 * secret, and the worker's key never reaches masterd: the relay
 * terminates the worker's TLS and sees and may rewrite every frame.  So
 * masterd trusts a relay's workers no further than the relay: all of
 * them (and the relay) are one group, one machine for verify
 * (sched_worker_join_group()); a stream never takes the name of a worker
 * connected directly or through another relay (relay_claim()); and one
 * link has at most max_relay_workers streams.  When the link goes, every
 * stream on it goes at once.
 *
 * Flow control (protocol 7): a stream may have R3Q_RELAY_WINDOW bytes on
 * their way, and no more than its session has room for (a window unread,
 * or the rest of a frame it waits the end of); what its session reads is
 * granted back (RelayControl op 3), so that a worker flooding its relay
 * cannot fill the link's buffers ahead of the others' frames
 * (workerd/relay.c).
 *
 * Fairness of masterd's own time: a frame masterd takes long to read
 * (RELAY_BUSY_NS or more from its pullup to its decoding's end: a flood
 * of 900 KB heartbeats) holds that stream's next grant for RELAY_BUSY_K
 * times as long (at most RELAY_HOLD_MAX_NS), so a flooding stream has at
 * most 1 / (1 + RELAY_BUSY_K) of masterd's loop and the others' frames
 * do not wait behind one decoding after another.  Cheap frames, however
 * many, are granted at once; a worker's occasional big result waits a
 * few milliseconds more.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "tls.h"
#include "masterd.h"
#include "util.h"

#define RELAY_CHUNK	(32u << 10)	/* bytes of a RelayData we send */
#define RELAY_BUSY_NS	(1 * NS_PER_MS)	/* a frame this long to read... */
#define RELAY_BUSY_K	3		/* ...holds the next grant 3x as long */
#define RELAY_HOLD_MAX_NS (500 * NS_PER_MS)
#define RELAY_UNKNOWN_LOG_NS (10 * NS_PER_SEC)

/* One relayed worker's stream. */
struct rstream {
	uint32_t		 rs_id;
	struct session		*rs_link;	/* NULL once the link is gone */
	struct session		*rs_sess;	/* the worker's session */
	struct bufferevent	*rs_far;	/* the pair's other end */
	uint8_t			*rs_cert;	/* its certificate, DER, as its
						   relay saw it (protocol 7) */
	size_t			 rs_certlen;
	uint64_t		 rs_out;	/* bytes the relay may send
						   (granted, not yet come) */
	struct evbuffer_cb_entry *rs_cbe;	/* on its session's input */
	uint64_t		 rs_t0;		/* mono ns its session began
						   reading a frame; 0: none */
	struct event		*rs_hold;	/* its next grant held (its
						   last frame was costly) */
};

/* A relay's link: its streams, by id. */
struct rlink {
	struct u64map		 rl_streams;	/* id -> struct rstream * */
	uint64_t		 rl_unknown;	/* frames for unknown streams */
	uint64_t		 rl_unknown_unsaid;
	uint64_t		 rl_unknown_said;	/* mono ns of that line */
	uint64_t		 rl_capped;	/* streams refused, over
						   max_relay_workers */
	uint64_t		 rl_capped_unsaid;
	uint64_t		 rl_capped_said;	/* mono ns of that line */
};

/*
 * What relay_init() was given: the event base, and the configuration,
 * which a reload overwrites in place.
 */
static struct event_base		*base;
static const struct masterd_config	*conf;

/* Start relaying on base (server_init()), under configuration c. */
void
relay_init(struct event_base *b, const struct masterd_config *c)
{
	base = b;
	conf = c;
}

/* A certificate name as the relay asserts it: what mkcerts issues. */
static int
relay_name_ok(const char *n)
{
	size_t	 i, len = strlen(n);

	if (len == 0 || len > 63)
		return (0);
	for (i = 0; i < len; i++) {
		if ((n[i] >= 'A' && n[i] <= 'Z') || (n[i] >= 'a' &&
		    n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9'))
			continue;
		if (i > 0 && (n[i] == '.' || n[i] == '_' || n[i] == '-'))
			continue;
		return (0);
	}
	return (1);
}

static struct rstream *
relay_find(struct session *link, uint32_t id)
{
	uint64_t	 v;

	if (link->s_rlink == NULL || u64map_get(&link->s_rlink->rl_streams,
	    id, &v) == 0)
		return (NULL);
	return ((struct rstream *)(uintptr_t)v);
}

/* Tell the relay a stream is over (it closes the worker's connection). */
static void
relay_send_close(struct session *link, uint32_t id, const char *reason)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;

	if (link->s_closing)
		return;
	rc.stream = id;
	rc.op = 2;
	rc.reason = (char *)(uintptr_t)reason;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	if (session_frame(link, &env) == -1)
		log_warnx("relay %s: cannot queue a relay_control message",
		    link->s_name);
	session_output(link);
}

/*
 * What masterd wrote to a relayed worker: wrapped in RelayData on the
 * link, in chunks.  The journal was committed when it was written to the
 * worker's session (session_send).
 */
static void
relay_forward(struct rstream *rs)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayData		 rd = R3Q__RELAY_DATA__INIT;
	struct evbuffer		*in = bufferevent_get_input(rs->rs_far);
	struct session		*link = rs->rs_link;
	size_t			 len, n, sent = 0;

	while ((len = evbuffer_get_length(in)) > 0) {
		if (link == NULL || link->s_closing) {
			evbuffer_drain(in, len);
			return;
		}
		n = len < RELAY_CHUNK ? len : RELAY_CHUNK;
		rd.stream = rs->rs_id;
		rd.data.len = n;
		if ((rd.data.data = evbuffer_pullup(in, (ev_ssize_t)n)) == NULL)
			fatal("evbuffer_pullup");
		env.body_case = R3Q__ENVELOPE__BODY_RELAY_DATA;
		env.relay_data = &rd;
		if (session_frame(link, &env) ==
		    -1)
			log_warnx("relay %s: cannot queue a relay_data message",
			    link->s_name);
		evbuffer_drain(in, n);
		sent += n;
	}
	if (sent > 0)
		session_output(link);
}

/*
 * Grant the relay more of stream rs: up to a window on its way, and no
 * more than its session has room for (a window unread, or the frame it
 * waits the end of).  The relay holds the rest, in the worker's bounded
 * input, until the session reads.
 */
static void
relay_credit(struct rstream *rs)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__RelayControl	 rc = R3Q__RELAY_CONTROL__INIT;
	struct session		*link = rs->rs_link;
	struct evbuffer		*in;
	uint8_t			 head[FRAME_HDRLEN];
	uint64_t		 have, g, need = R3Q_RELAY_WINDOW;
	uint32_t		 flen;
	char			 err[128];

	if (link == NULL || link->s_closing ||
	    rs->rs_out >= R3Q_RELAY_WINDOW / 2 ||
	    (rs->rs_hold != NULL && evtimer_pending(rs->rs_hold, NULL)))
		return;
	in = bufferevent_get_input(rs->rs_sess->s_bev);
	have = evbuffer_get_length(in) +
	    evbuffer_get_length(bufferevent_get_output(rs->rs_far));
	if (have >= FRAME_HDRLEN && evbuffer_copyout(in, head,
	    sizeof(head)) == (ev_ssize_t)sizeof(head) &&
	    frame_header_decode(head, conf->max_frame, &flen, err,
	    sizeof(err)) == 0 && FRAME_HDRLEN + (uint64_t)flen > need)
		need = FRAME_HDRLEN + (uint64_t)flen;
	if (have + rs->rs_out >= need)
		return;
	g = need - have - rs->rs_out;
	if (g > R3Q_RELAY_WINDOW - rs->rs_out)
		g = R3Q_RELAY_WINDOW - rs->rs_out;
	/* Not a message for every few bytes read. */
	if (g < R3Q_RELAY_WINDOW / 4 && have + rs->rs_out + g < need)
		return;
	rc.stream = rs->rs_id;
	rc.op = 3;
	rc.credit = g;
	rs->rs_out += g;
	env.body_case = R3Q__ENVELOPE__BODY_RELAY_CONTROL;
	env.relay_control = &rc;
	if (session_frame(link, &env) == -1)
		log_warnx("relay %s: cannot queue a relay_control message",
		    link->s_name);
	session_output(link);
}

/* The hold is over: grant what the stream's session has room for. */
static void
relay_hold_over(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	relay_credit(arg);
}

/*
 * The session of a stream read some of its input: grant more, or, if
 * that frame took masterd RELAY_BUSY_NS or more, later (see the top).
 */
static void
relay_sess_drained(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct rstream	*rs = arg;
	struct timeval	 tv;
	uint64_t	 dt;

	(void)buf;
	if (info->n_deleted == 0)
		return;
	if (rs->rs_t0 != 0) {
		dt = mono_ns() - rs->rs_t0;
		rs->rs_t0 = 0;
		if (dt >= RELAY_BUSY_NS) {
			dt *= RELAY_BUSY_K;
			if (dt > RELAY_HOLD_MAX_NS)
				dt = RELAY_HOLD_MAX_NS;
			if (rs->rs_hold == NULL && (rs->rs_hold =
			    evtimer_new(base, relay_hold_over, rs)) == NULL)
				fatal("evtimer_new");
			tv.tv_sec = (time_t)(dt / NS_PER_SEC);
			tv.tv_usec = (suseconds_t)(dt % NS_PER_SEC / 1000);
			evtimer_add(rs->rs_hold, &tv);
			return;
		}
	}
	relay_credit(rs);
}

/* Relayed session s begins to read a frame (session_read): time it. */
void
relay_frame_begin(struct session *s)
{
	if (s->s_rstream != NULL)
		s->s_rstream->rs_t0 = mono_ns();
}

static void
relay_far_read(struct bufferevent *bev, void *arg)
{
	(void)bev;
	relay_forward(arg);
}

static void
relay_far_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	(void)arg;
}

/*
 * Refuse a stream the relay asked for: a line naming the relay and the
 * name, and a close for the relay; its link stays.
 */
static void
relay_refuse(struct session *link, uint32_t id, const char *name,
    const char *why)
{
	char	 msg[1024];

	log_warnx("relay %s (%s): stream %u for '%.64s' refused: %s",
	    link->s_name, link->s_addr, id, name, why);
	snprintf(msg, sizeof(msg), "refused by the master: %s", why);
	relay_send_close(link, id, msg);
}

/*
 * The certificate a relay passed for a stream: parsed, its CN checked
 * against the name asserted.  NULL with why if it is not one.
 */
static X509 *
relay_cert_parse(const uint8_t *der, size_t len, const char *name,
    char *why, size_t whylen)
{
	const unsigned char	*p = der;
	X509			*x;
	char			 cn[128];

	if (len == 0 || len > LONG_MAX ||
	    (x = d2i_X509(NULL, &p, (long)len)) == NULL) {
		snprintf(why, whylen, "its certificate (%zu bytes) does not "
		    "parse", len);
		return (NULL);
	}
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(x),
	    NID_commonName, cn, sizeof(cn)) <= 0 || strcmp(cn, name) != 0) {
		snprintf(why, whylen, "its certificate names someone else");
		X509_free(x);
		return (NULL);
	}
	return (x);
}

/*
 * Was certificate x, which a relay passed for a stream, issued by our CA
 * to a TLS client with the role asserted, and is it valid now, as the
 * worker's handshake with its relay found?  0, or -1 with why.  That
 * proves the name was issued, not that the worker behind the relay holds
 * its key: a certificate is no secret, and a relay sees each of its
 * workers'.
 */
static int
relay_cert_verify(X509 *x, const char *role, char *why, size_t whylen)
{
	X509_STORE_CTX	*vctx;
	SSL_CTX		*ctx;
	char		 ou[64], cn[128];
	int		 ok, e;

	if (tls_x509_identity(x, ou, sizeof(ou), cn, sizeof(cn)) == -1 ||
	    strcmp(ou, role) != 0) {
		snprintf(why, whylen, "its certificate's role is not %s",
		    role);
		return (-1);
	}
	if ((ctx = server_ssl_ctx()) == NULL) {
		snprintf(why, whylen, "the master has no CA to check its "
		    "certificate against yet");
		return (-1);
	}
	if ((vctx = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(vctx, SSL_CTX_get_cert_store(ctx), x,
	    NULL) != 1)
		fatalx("%s: X509_STORE_CTX", __func__);
	X509_STORE_CTX_set_purpose(vctx, X509_PURPOSE_SSL_CLIENT);
	X509_STORE_CTX_set_verify_cb(vctx, tls_verify_crl_dates);
	ok = X509_verify_cert(vctx);
	e = X509_STORE_CTX_get_error(vctx);
	X509_STORE_CTX_free(vctx);
	if (ok == 1)
		return (0);
	snprintf(why, whylen, "its certificate does not verify against the "
	    "master's CA: %s", X509_verify_cert_error_string(e));
	return (-1);
}

/*
 * Does crl revoke the certificate of relayed worker s (the
 * master's CRL sweep reaches workers behind relays)?  1 with why if so;
 * 0 if not, or if its relay passed no certificate.
 */
int
relay_revoked(struct session *s, const struct tls_crl *crl, char *why,
    size_t whylen)
{
	struct rstream	*rs = s->s_rstream;
	X509		*x;
	int		 r;

	if (rs == NULL || rs->rs_cert == NULL || crl == NULL)
		return (0);
	if ((x = relay_cert_parse(rs->rs_cert, rs->rs_certlen, s->s_name,
	    why, whylen)) == NULL)
		return (0);
	r = tls_crl_revoked(crl, x, why, whylen);
	X509_free(x);
	return (r);
}

/*
 * The serial (hex) of the certificate relayed session s's relay passed
 * for it (and masterd verified), for r3qctl certs revoke NAME; -1 if
 * none.
 */
int
relay_serial(struct session *s, char *buf, size_t len)
{
	struct rstream	*rs = s->s_rstream;
	X509		*x;
	char		 why[256];
	int		 r;

	if (rs == NULL || rs->rs_cert == NULL ||
	    (x = relay_cert_parse(rs->rs_cert, rs->rs_certlen, s->s_name,
	    why, sizeof(why))) == NULL)
		return (-1);
	r = tls_cert_serial(x, buf, len);
	X509_free(x);
	return (r);
}

/* The relay masterd verified, that carries relayed session s; or NULL. */
const char *
relay_link_name(const struct session *s)
{
	if (s->s_rstream == NULL || s->s_rstream->rs_link == NULL)
		return (NULL);
	return (s->s_rstream->rs_link->s_name);
}

/*
 * May a stream on link take the name of worker session o?  Only from
 * another stream of the same relay (the worker came back through it);
 * never from a worker that proved its name with its own certificate (a
 * direct one), nor from one another relay vouches for.  NULL if it may,
 * else why not, in buf.
 */
static const char *
relay_claim_link(const struct session *link, const struct session *o,
    char *buf, size_t len)
{
	if (o->s_rstream == NULL) {
		snprintf(buf, len, "worker %s is connected directly (from %s) "
		    "with its own certificate", o->s_name, o->s_addr);
		return (buf);
	}
	if (o->s_rstream->rs_link != link) {
		snprintf(buf, len, "worker %s is connected through relay %s",
		    o->s_name, o->s_rstream->rs_link != NULL ?
		    o->s_rstream->rs_link->s_name : "(gone)");
		return (buf);
	}
	return (NULL);
}

/*
 * May session s, saying its hello, take the name of worker session o
 * (worker_hello())?  A direct worker may (its certificate proves the
 * name); a relayed one as relay_claim_link() says.  NULL if it may, else
 * why not, in buf.
 */
const char *
relay_claim(const struct session *s, const struct session *o, char *buf,
    size_t len)
{
	if (s->s_rstream == NULL)
		return (NULL);
	if (s->s_rstream->rs_link == NULL) {
		snprintf(buf, len, "its relay is gone");
		return (buf);
	}
	return (relay_claim_link(s->s_rstream->rs_link, o, buf, len));
}

/* Is name a worker's that a stream on link may not take?  Why, in buf. */
static const char *
relay_name_taken(const struct session *link, const char *name, char *buf,
    size_t len)
{
	struct session	*o;

	for (o = session_first(); o != NULL; o = session_next(o))
		if (o->s_worker != NULL && !o->s_closing &&
		    strcmp(o->s_name, name) == 0)
			return (relay_claim_link(link, o, buf, len));
	return (NULL);
}

/*
 * A stream refused over max_relay_workers: said in a line naming the
 * relay at most every 10 s, with the count since, and to the relay
 * each time.
 */
static void
relay_refuse_capped(struct session *link, uint32_t id, const char *name)
{
	struct rlink	*rl = link->s_rlink;
	uint64_t	 now = mono_ns();
	char		 msg[256];

	rl->rl_capped++;
	rl->rl_capped_unsaid++;
	snprintf(msg, sizeof(msg), "relay %s has %u streams open "
	    "(max_relay_workers)", link->s_name, conf->max_relay_workers);
	if (rl->rl_capped_said == 0 ||
	    now - rl->rl_capped_said >= RELAY_UNKNOWN_LOG_NS) {
		log_warnx("relay %s (%s): %llu stream(s) refused (the last "
		    "%u for '%.64s'): it has %u open (max_relay_workers)",
		    link->s_name, link->s_addr, (unsigned long long)
		    rl->rl_capped_unsaid, id, name, conf->max_relay_workers);
		rl->rl_capped_said = now;
		rl->rl_capped_unsaid = 0;
	}
	server_cap_count(CAP_WORKERS);
	relay_send_close(link, id, msg);
}

/*
 * The certificate the relay passed for stream rc (protocol 7): its CN is
 * the name asserted, our CRL (which may be newer than the relay's) does
 * not revoke it, and our CA issued it, to the role asserted.  So a relay
 * names only workers whose certificates it holds; it still need not
 * prove that they hold the keys (see the top).  0 with its end in
 * *not_after, or -1 with why.
 */
static int
relay_cert_check(struct session *link, const R3q__RelayControl *rc,
    time_t *not_after, char *why, size_t whylen)
{
	X509	*x;

	if (rc->cert.len == 0) {
		snprintf(why, whylen, "the relay passed no certificate for it");
		return (-1);
	}
	if ((x = relay_cert_parse(rc->cert.data, rc->cert.len, rc->name,
	    why, whylen)) == NULL)
		return (-1);
	if (tls_crl_revoked(server_crl(), x, why, whylen)) {
		X509_free(x);
		log_warnx("relay %s: %s %s: its certificate is revoked by %s: "
		    "%s", link->s_name, rc->role, rc->name,
		    tls_crl_path(server_crl()), why);
		snprintf(why, whylen, "its certificate is revoked");
		return (-1);
	}
	if (relay_cert_verify(x, rc->role, why, whylen) == -1) {
		X509_free(x);
		return (-1);
	}
	/* Its end as the certificate says, not as the relay does. */
	*not_after = tls_cert_not_after(x);
	X509_free(x);
	return (0);
}

/* RelayControl open: a worker authenticated to the relay; it gets a session. */
static void
relay_open(struct session *link, const R3q__RelayControl *rc)
{
	struct bufferevent	*pair[2];
	struct rstream		*rs;
	struct session		*s;
	char			 via[RELAY_VIA_TEXT];
	char			 addr[64], why[768];
	const char		*taken;
	time_t			 not_after = 0;
	size_t			 i, k, off = 0;

	if (rc->stream == 0) {
		relay_refuse(link, rc->stream, rc->name, "stream 0");
		return;
	}
	if (relay_find(link, rc->stream) != NULL) {
		relay_refuse(link, rc->stream, rc->name, "stream already open");
		return;
	}
	if (!relay_name_ok(rc->name)) {
		relay_refuse(link, rc->stream, "", "not a worker name");
		return;
	}
	if (strcmp(rc->role, "worker") != 0 && strcmp(rc->role, "relay") != 0) {
		relay_refuse(link, rc->stream, rc->name, "its role is not "
		    "worker or relay");
		return;
	}
	/* The path: relays, nearest first, this link's relay last. */
	if (rc->n_via == 0 || rc->n_via > RELAY_VIA_MAX ||
	    strcmp(rc->via[rc->n_via - 1], link->s_name) != 0) {
		relay_refuse(link, rc->stream, rc->name, "its path does not "
		    "end at the relay that asserts it");
		return;
	}
	for (i = 0; i < rc->n_via; i++) {
		if (!relay_name_ok(rc->via[i]) ||
		    strcmp(rc->via[i], rc->name) == 0) {
			relay_refuse(link, rc->stream, rc->name, "a relay "
			    "loop or a bad name on its path");
			return;
		}
		for (k = 0; k < i; k++)
			if (strcmp(rc->via[k], rc->via[i]) == 0) {
				relay_refuse(link, rc->stream, rc->name,
				    "a relay loop on its path");
				return;
			}
		off += (size_t)snprintf(via + off, off < sizeof(via) ?
		    sizeof(via) - off : 0, "%s%s", i ? "," : "", rc->via[i]);
		if (off >= sizeof(via)) {
			relay_refuse(link, rc->stream, rc->name, "path too "
			    "long");
			return;
		}
	}
	if (link->s_rlink == NULL) {
		link->s_rlink = xcalloc(1, sizeof(*link->s_rlink));
		u64map_init(&link->s_rlink->rl_streams);
	}
	if (u64map_count(&link->s_rlink->rl_streams) >=
	    conf->max_relay_workers) {
		relay_refuse_capped(link, rc->stream, rc->name);
		return;
	}
	if (relay_cert_check(link, rc, &not_after, why, sizeof(why)) == -1) {
		relay_refuse(link, rc->stream, rc->name, why);
		return;
	}
	if ((taken = relay_name_taken(link, rc->name, why,
	    sizeof(why))) != NULL) {
		relay_refuse(link, rc->stream, rc->name, taken);
		return;
	}
	if (bufferevent_pair_new(base, BEV_OPT_DEFER_CALLBACKS,
	    pair) == -1)
		fatal("bufferevent_pair_new");
	snprintf(addr, sizeof(addr), "%s", rc->address[0] != '\0' ?
	    rc->address : "?");
	s = session_new(pair[0], addr, 1);
	snprintf(s->s_name, sizeof(s->s_name), "%s", rc->name);
	str_setf(&s->s_via, "%s", via);
	s->s_verified = 1;
	s->s_not_after = not_after;
	rs = xcalloc(1, sizeof(*rs));
	rs->rs_id = rc->stream;
	rs->rs_link = link;
	rs->rs_sess = s;
	rs->rs_far = pair[1];
	rs->rs_out = R3Q_RELAY_WINDOW;		/* a stream opens with it */
	if (rc->cert.len > 0) {
		rs->rs_cert = xcalloc(1, rc->cert.len);
		memcpy(rs->rs_cert, rc->cert.data, rc->cert.len);
		rs->rs_certlen = rc->cert.len;
	}
	s->s_rstream = rs;
	if (u64map_put(&link->s_rlink->rl_streams, rs->rs_id,
	    (uint64_t)(uintptr_t)rs) == -1)
		fatal("u64map_put");
	bufferevent_setcb(rs->rs_far, relay_far_read, NULL, relay_far_event,
	    rs);
	rs->rs_cbe = evbuffer_add_cb(bufferevent_get_input(s->s_bev),
	    relay_sess_drained, rs);
	bufferevent_enable(rs->rs_far, EV_READ | EV_WRITE);
	log_debug("relay %s: stream %u: %s %s from %s via %s", link->s_name,
	    rs->rs_id, rc->role, rc->name, addr, via);
}

/* RelayControl from a relay: open or close a stream. */
void
relay_control(struct session *link, Envelope *env)
{
	const R3q__RelayControl	*rc = env->relay_control;
	struct rstream		*rs;

	switch (rc->op) {
	case 1:
		relay_open(link, rc);
		break;
	case 2:
		/* The worker left the relay: lost as a direct one would be. */
		if ((rs = relay_find(link, rc->stream)) == NULL)
			break;
		log_debug("relay %s: stream %u (%s) closed: %s", link->s_name,
		    rc->stream, rs->rs_sess->s_name, rc->reason[0] != '\0' ?
		    rc->reason : "the worker left");
		session_free(rs->rs_sess);
		break;
	default:
		session_error(link, env->id, "relay_control: unknown op %u",
		    rc->op);
		break;
	}
}

/*
 * RelayData from a relay: the worker's bytes, into its session.  For a
 * stream not (or no longer) open, dropped with a line at most every 10 s
 * per relay (a worker that masterd closed may have sent more already).
 */
void
relay_data(struct session *link, Envelope *env)
{
	const R3q__RelayData	*rd = env->relay_data;
	struct rstream		*rs;
	struct rlink		*rl;
	uint64_t		 now;
	size_t			 have;

	if ((rs = relay_find(link, rd->stream)) == NULL) {
		if (link->s_rlink == NULL) {
			link->s_rlink = xcalloc(1, sizeof(*link->s_rlink));
			u64map_init(&link->s_rlink->rl_streams);
		}
		rl = link->s_rlink;
		rl->rl_unknown++;
		rl->rl_unknown_unsaid++;
		now = mono_ns();
		if (rl->rl_unknown_said == 0 ||
		    now - rl->rl_unknown_said >= RELAY_UNKNOWN_LOG_NS) {
			log_info("relay %s: %llu relay_data frame(s) for a "
			    "stream not open (%u, %zu bytes) dropped",
			    link->s_name, (unsigned long long)
			    rl->rl_unknown_unsaid, rd->stream, rd->data.len);
			rl->rl_unknown_said = now;
			rl->rl_unknown_unsaid = 0;
		}
		return;
	}
	if (rs->rs_sess->s_closing)
		return;
	/*
	 * What its session has not read yet: a hello may not be followed
	 * by much before its welcome, nor may any frame be longer than a
	 * worker's limit.  Past that, the relay does not bound its worker.
	 */
	have = evbuffer_get_length(bufferevent_get_output(rs->rs_far));
	if (have + rd->data.len > 2 * (conf->max_frame + FRAME_HDRLEN) +
	    LIMIT_SMALL) {
		log_warnx("relay %s: worker %s: more bytes queued for it than "
		    "its frames may hold; closing its stream", link->s_name,
		    rs->rs_sess->s_name);
		session_free(rs->rs_sess);
		return;
	}
	if (bufferevent_write(rs->rs_far, rd->data.data, rd->data.len) == -1)
		fatal("bufferevent_write");
	/* A relay (protocol 7) sends no more than it was granted. */
	rs->rs_out = rd->data.len < rs->rs_out ? rs->rs_out - rd->data.len : 0;
	relay_credit(rs);
}

/* Unlink a stream from its link and free it (the session stays). */
static void
relay_stream_free(struct rstream *rs)
{
	if (rs->rs_link != NULL && rs->rs_link->s_rlink != NULL)
		(void)u64map_del(&rs->rs_link->s_rlink->rl_streams, rs->rs_id,
		    NULL);
	rs->rs_sess->s_rstream = NULL;
	if (rs->rs_cbe != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_input(
		    rs->rs_sess->s_bev), rs->rs_cbe);
	bufferevent_free(rs->rs_far);
	if (rs->rs_hold != NULL)
		event_free(rs->rs_hold);
	free(rs->rs_cert);
	free(rs);
}

/*
 * A relayed worker's session ends (masterd closed it, or the worker or
 * its relay went): what it was sent goes on, then a close, so that the
 * relay closes the worker's connection.
 */
void
relay_stream_gone(struct session *s)
{
	struct rstream	*rs = s->s_rstream;

	relay_forward(rs);
	if (rs->rs_link != NULL)
		relay_send_close(rs->rs_link, rs->rs_id, "");
	relay_stream_free(rs);
}

/*
 * A relay's link is gone (the relay died, or its link broke): every
 * worker behind it is lost now, in this pass, rather than one
 * heartbeat_timeout each (as in doc/algorithms.md §5, a broken hop
 * fails what used it).
 */
void
relay_link_gone(struct session *link)
{
	struct rlink		*rl = link->s_rlink;
	struct rstream		**v;
	size_t			 i, n = 0;

	link->s_rlink = NULL;
	v = xcalloc(rl->rl_streams.m_nslots + 1, sizeof(*v));
	for (i = 0; i < rl->rl_streams.m_nslots; i++)
		if (rl->rl_streams.m_slots[i].used)
			v[n++] = (struct rstream *)(uintptr_t)
			    rl->rl_streams.m_slots[i].v;
	u64map_free(&rl->rl_streams);
	free(rl);
	if (n > 0)
		log_warnx("relay %s (%s) gone: its %zu worker%s lost with it",
		    link->s_name, link->s_addr, n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		v[i]->rs_link = NULL;
		session_free(v[i]->rs_sess);
	}
	free(v);
}

/* masterd exits (server_close): let go of a session's relay state. */
void
relay_forget(struct session *s)
{
	struct rlink	*rl;
	size_t		 i;

	if ((rl = s->s_rlink) != NULL) {
		for (i = 0; i < rl->rl_streams.m_nslots; i++)
			if (rl->rl_streams.m_slots[i].used)
				((struct rstream *)(uintptr_t)
				    rl->rl_streams.m_slots[i].v)->rs_link =
				    NULL;
		u64map_free(&rl->rl_streams);
		free(rl);
		s->s_rlink = NULL;
	}
	if (s->s_rstream != NULL)
		relay_stream_free(s->s_rstream);
}
