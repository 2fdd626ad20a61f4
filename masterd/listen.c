/*
 * The listener: masterd's front door on the TLS port.  It owns the TLS
 * context and the CRL in force, the listening socket, the connect_rate
 * buckets (the HTTP listener takes from the same ones), the pause after
 * accept() runs out of descriptors, and the caps' refusal counters.  It
 * reloads the context on SIGHUP, closing the sessions a new CRL revokes,
 * and judges a peer once its handshake ends (its role, its certificate).
 *
 * Calls go down from here: a connection accepted becomes a session
 * (session_new()); one verified is told to tokens.c if it may only join.
 * server_init() and server_close() set up and tear down the whole server
 * side, session layer, worker protocol and dispatch included.
 */
#include "config.h"

#include <errno.h>
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

#include "log.h"
#include "masterd.h"
#include "seal.h"
#include "tls.h"
#include "util.h"

static void	listen_role(struct session *);
static void	listen_seal(struct session *);

const char *const cap_names[CAP_N] = {
	"max_workers", "max_clients", "max_jobs", "max_jobs_per_client",
	"max_queued_tasks", "max_job_tasks", "max_memory", "max_job_memory",
	"connect_rate", "max_http", "max_batches_job", "max_batches_client",
	"max_http_per_addr", "max_client_kinds"
};

/* Refusals by a cap: a log line per cap at most every CAP_LOG_NS. */
#define CAP_LOG_NS	(10 * NS_PER_SEC)

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

/*
 * The listener's own state, from server_listen() to server_close(): what
 * it was given at start (the event base, and the configuration, which a
 * reload overwrites in place), and what it made.
 */
static struct {
	struct event_base		*base;
	const struct masterd_config	*conf;
	struct evconnlistener		*tls;		/* the TLS port */
	char				 addr[64];	/* as bound */
	SSL_CTX				*ssl_ctx;
	struct tls_crl			*crl;		/* NULL: crl = none */
	struct event			*accept_pause;	/* out of descriptors */
	uint64_t			 capped[CAP_N];	/* refusals by cap */
	uint64_t			 cap_said[CAP_N];	/* mono ns of the
								   last line */
	uint64_t			 cap_unsaid[CAP_N];	/* refusals since */
	struct rl_slot			*rl_table;
	uint64_t			 rl_refused_unsaid, rl_said;
	time_t				 exp_cert;	/* notAfter of our
							   certificate, */
	time_t				 exp_ca;	/* of the CA, */
	time_t				 exp_crl;	/* the CRL's
							   nextUpdate */
	struct event			*expiry_ev;	/* the daily look at
							   them */
} ls;

static void	server_expiry_daily(evutil_socket_t, short, void *);

/*
 * Set up the server side on base under configuration c, without sockets
 * (server_listen() binds them): the session layer, the worker protocol,
 * dispatch, which drives core, and the relays.
 */
void
server_init(struct event_base *base, const struct masterd_config *c,
    struct sched *core)
{
	ls.base = base;
	ls.conf = c;
	session_init(base, c);
	worker_init(base, c);
	dispatch_init(base, c, core);
	relay_init(base, c);
}

/* The CRL in force; NULL: crl = none. */
struct tls_crl *
server_crl(void)
{
	return (ls.crl);
}

/*
 * The TLS context in force (its store: the CA and CRL peers are checked
 * against); NULL before server_listen().
 */
SSL_CTX *
server_ssl_ctx(void)
{
	return (ls.ssl_ctx);
}

/* The TLS port's address as bound ("" before server_listen()). */
const char *
server_listen_addr(void)
{
	return (ls.addr);
}

/*
 * Warn of what runs out within 30 days: our certificate, the CA, the
 * CRL's next update; keep the dates for /metrics.  At start, at every
 * reload (masterd.c, once the new configuration is in), and once a day.
 */
void
server_expiry(void)
{
	struct timeval		 day = { 86400, 0 };
	struct tls_check	 tc;
	struct tls_expiry	 te;

	if (ls.expiry_ev == NULL) {
		if ((ls.expiry_ev = event_new(ls.base, -1, EV_PERSIST,
		    server_expiry_daily, NULL)) == NULL)
			fatal("event_new");
		event_add(ls.expiry_ev, &day);
	}
	memset(&tc, 0, sizeof(tc));
	tc.tc_ca = ls.conf->ca;
	tc.tc_cert = ls.conf->cert;
	tc.tc_daemon = "masterd";
	tc.tc_crl = ls.conf->crl;
	if (tls_expiry(ls.conf->ca, ls.conf->cert, ls.crl, &te) == -1) {
		log_warnx("cannot read %s or %s for their expiry dates",
		    ls.conf->cert, ls.conf->ca);
		return;
	}
	ls.exp_cert = te.te_cert;
	ls.exp_ca = te.te_ca;
	ls.exp_crl = te.te_crl;
	tls_expiry_warn(&tc, &te, time(NULL), log_warnx);
}

/* Once a day: look at the expiry dates again. */
static void
server_expiry_daily(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	server_expiry();
}

/* The dates server_expiry() read last, 0 where none (metrics). */
void
server_expiry_dates(time_t *cert, time_t *ca, time_t *crl)
{
	*cert = ls.exp_cert;
	*ca = ls.exp_ca;
	*crl = ls.exp_crl;
}

/* Refusals by cap so far (metrics). */
uint64_t
server_capped(enum cap cap)
{
	return (ls.capped[cap]);
}

/* Count a refusal by cap made elsewhere without a line here (metrics.c). */
void
server_cap_count(enum cap cap)
{
	ls.capped[cap]++;
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

	ls.capped[cap]++;
	ls.cap_unsaid[cap]++;
	if (ls.cap_said[cap] != 0 && now - ls.cap_said[cap] < CAP_LOG_NS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ls.cap_unsaid[cap] > 1)
		log_warnx("%s refused: %s (%llu refused by %s in the last "
		    "%llus)", who, msg, (unsigned long long)ls.cap_unsaid[cap],
		    cap_names[cap], (unsigned long long)(CAP_LOG_NS /
		    NS_PER_SEC));
	else
		log_warnx("%s refused: %s", who, msg);
	ls.cap_said[cap] = now;
	ls.cap_unsaid[cap] = 0;
}

/*
 * The TLS handshake of session s finished (session_event()): take the
 * peer's role and name, then seal its frames if the handshake agreed to.
 */
void
listen_verified(struct session *s)
{
	listen_role(s);
	if (s->s_verified && !s->s_closing && s->s_role != ROLE_JOINER &&
	    seal_agreed(bufferevent_openssl_get_ssl(s->s_bev)))
		listen_seal(s);
}

/*
 * The peer's role and name, from its certificate.  A certificate without
 * a role (OU), or with another role than worker or client, is refused
 * with a line naming it; so is one the CRL revokes, should its handshake
 * have begun under the previous CRL (a reload).
 */
static void
listen_role(struct session *s)
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
	if (tls_crl_revoked(ls.crl, peer, why, sizeof(why))) {
		log_warnx("%s: refused %s %s: its certificate is revoked by %s: "
		    "%s", s->s_addr, role, name, tls_crl_path(ls.crl), why);
		session_close(s);
		return;
	}
	s->s_not_after = tls_cert_not_after(peer);
	snprintf(s->s_name, sizeof(s->s_name), "%s", name);
	s->s_verified = 1;
	if (tokens_enabled() && strcmp(role, "client") != 0)
		tokens_shown(s);	/* its renewal was not lost */
	if (strcmp(role, "worker") == 0) {
		log_debug("%s: TLS up, worker %s, waiting for hello",
		    s->s_addr, name);
	} else if (strcmp(role, "relay") == 0) {
		/* A worker that may carry others (relay.c). */
		s->s_relay = 1;
		log_debug("%s: TLS up, relay %s, waiting for hello",
		    s->s_addr, name);
	} else if (strcmp(role, "client") == 0) {
		if (server_clients() >= ls.conf->max_clients) {
			server_refused(CAP_CLIENTS, name, "%zu clients "
			    "connected (max_clients)", server_clients());
			session_refuse(s, 0, "too many clients: %u connected "
			    "(max_clients); try again later",
			    ls.conf->max_clients);
			return;
		}
		s->s_role = ROLE_CLIENT;
		snprintf(s->s_owner, sizeof(s->s_owner), "tls:%s", name);
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
listen_seal(struct session *s)
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
	double		 burst = ls.conf->connect_burst;
	char		 host[64], *p;

	if (ls.conf->connect_rate == 0)
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
	if (ls.rl_table == NULL)
		ls.rl_table = xcalloc(RL_SLOTS, sizeof(*ls.rl_table));
	r = &ls.rl_table[siphash24(&md->mac, key, sizeof(key)) % RL_SLOTS];
	if (!r->rl_used || memcmp(r->rl_addr, key, sizeof(key)) != 0) {
		memcpy(r->rl_addr, key, sizeof(key));
		r->rl_used = 1;
		r->rl_tokens = burst;
		r->rl_at = now;
	}
	r->rl_tokens += (double)(now - r->rl_at) / 1e9 * ls.conf->connect_rate;
	if (r->rl_tokens > burst)
		r->rl_tokens = burst;
	r->rl_at = now;
	if (r->rl_tokens >= 1) {
		r->rl_tokens -= 1;
		return (1);
	}
	ls.capped[CAP_CONNECT_RATE]++;
	ls.rl_refused_unsaid++;
	if (ls.rl_said == 0 || now - ls.rl_said >= CAP_LOG_NS) {
		snprintf(host, sizeof(host), "%s", addr);
		if ((p = strrchr(host, ':')) != NULL)
			*p = '\0';
		log_warnx("connection from %s refused: more than connect_rate "
		    "(%u a second, burst %u); %llu refused in the last %llus",
		    host, ls.conf->connect_rate, ls.conf->connect_burst,
		    (unsigned long long)ls.rl_refused_unsaid,
		    (unsigned long long)(CAP_LOG_NS / NS_PER_SEC));
		ls.rl_said = now;
		ls.rl_refused_unsaid = 0;
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
	sock_link_timeout(fd, ls.conf->link_timeout);
	if ((ssl = SSL_new(ls.ssl_ctx)) == NULL) {
		log_warnx("%s: SSL_new failed", addr);
		evutil_closesocket(fd);
		return;
	}
	bev = bufferevent_openssl_socket_new(ls.base, fd, ssl,
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
	if (ls.tls != NULL)
		evconnlistener_enable(ls.tls);
	control_listen_resume();
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
	    "for 1s", evutil_socket_error_to_string(err), worker_count());
	evconnlistener_disable(l);
	if (ls.accept_pause == NULL && (ls.accept_pause = evtimer_new(
	    ls.base, server_accept_resume, NULL)) == NULL)
		fatal("evtimer_new");
	evtimer_add(ls.accept_pause, &tv);
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
	l = evconnlistener_new_bind(ls.base, server_accept, NULL,
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
	if (tls_crl_configured(c->crl) && (crl = tls_crl_load(c->crl, c->ca,
	    err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	if (tokens_ctx(ctx, c) == -1) {
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	/* The journal's revocations (r3qctl certs revoke) join the file's. */
	if (tokens_crl(&crl, err, sizeof(err)) == -1 ||
	    tls_crl_apply(ctx, crl, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (NULL);
	}
	/*
	 * The configuration stays where it is across reloads (masterd.c
	 * copies the new one over it): a new sealed_frames takes effect.
	 */
	seal_server_ctx(ctx, &ls.conf->sealed_frames);
	*crlp = crl;
	return (ctx);
}

/*
 * A new CRL is in force: close every session whose peer's certificate it
 * revokes, with one line each.
 */
static void
server_revoke_sweep(void)
{
	struct session	*s;
	SSL		*ssl;
	X509		*peer;
	char		 why[768];

	if (ls.crl == NULL)
		return;
	for (s = session_first(); s != NULL; s = session_next(s)) {
		if (s->s_closing)
			continue;
		/* Behind a relay: the certificate it passed (relay.c). */
		if (s->s_rstream != NULL) {
			if (!relay_revoked(s, ls.crl, why, sizeof(why)))
				continue;
		} else if (s->s_peer != NULL) {
			/* Sealed: what it kept of the certificate. */
			if (!tls_crl_revoked_id(ls.crl, s->s_peer, why,
			    sizeof(why)))
				continue;
		} else if (!s->s_tls ||
		    (ssl = bufferevent_openssl_get_ssl(s->s_bev)) == NULL ||
		    (peer = SSL_get0_peer_certificate(ssl)) == NULL ||
		    !tls_crl_revoked(ls.crl, peer, why, sizeof(why)))
			continue;
		log_warnx("%s %s (%s): its certificate is now revoked by %s: "
		    "%s; disconnecting", s->s_role == ROLE_CLIENT ? "client" :
		    "worker", s->s_name, s->s_addr, tls_crl_path(ls.crl), why);
		session_send_error(s, 0, "your certificate is revoked");
		session_close(s);
	}
}

/* Load the TLS context and bind the listener. */
int
server_listen(void)
{
	if ((ls.ssl_ctx = server_ctx(ls.conf, &ls.crl)) == NULL)
		return (-1);
	if (ls.crl != NULL)
		log_info("%s: %zu certificates revoked", tls_crl_path(ls.crl),
		    tls_crl_entries(ls.crl));
	ls.tls = server_bind(ls.conf->listen, ls.addr, sizeof(ls.addr));
	if (ls.tls == NULL)
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
	if (strcmp(nc->listen, ls.conf->listen) != 0 &&
	    (l = server_bind(nc->listen, bound, sizeof(bound))) == NULL) {
		tls_crl_free(crl);
		SSL_CTX_free(ctx);
		return (-1);
	}
	SSL_CTX_free(ls.ssl_ctx);
	ls.ssl_ctx = ctx;
	tls_crl_free(ls.crl);
	ls.crl = crl;
	if (l != NULL) {
		evconnlistener_free(ls.tls);
		ls.tls = l;
		strcpy(ls.addr, bound);
		log_info("now listening on %s", bound);
	}
	if (crl != NULL)
		log_info("%s: %zu certificates revoked", tls_crl_path(crl),
		    tls_crl_entries(crl));
	/*
	 * The CRLs go out before the sweep closes anyone, so that a relay
	 * drops a revoked worker below it on its own CRL's word, first.
	 */
	worker_crl_push();
	server_revoke_sweep();
	return (0);
}

/*
 * The revocations changed (tokens.c): the same configuration again, so
 * that the new CRL refuses at the handshake and the sessions it revokes
 * are closed now.
 */
int
server_crl_refresh(void)
{
	return (server_reload(ls.conf));
}

/* Close every session and the listener: masterd exits. */
void
server_close(void)
{
	session_close_all();
	dispatch_close();
	worker_close();
	if (ls.accept_pause != NULL) {
		event_free(ls.accept_pause);
		ls.accept_pause = NULL;
	}
	if (ls.expiry_ev != NULL) {
		event_free(ls.expiry_ev);
		ls.expiry_ev = NULL;
	}
	free(ls.rl_table);
	ls.rl_table = NULL;
	if (ls.tls != NULL) {
		evconnlistener_free(ls.tls);
		ls.tls = NULL;
	}
	if (ls.ssl_ctx != NULL) {
		SSL_CTX_free(ls.ssl_ctx);
		ls.ssl_ctx = NULL;
	}
	tls_crl_free(ls.crl);
	ls.crl = NULL;
}
