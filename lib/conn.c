/*
 * libr3q's connection: finding and reaching masterd (mutual TLS or the
 * control socket), the non-blocking state machine that connects, shakes
 * hands, reads and writes, reconnecting with backoff when the connection
 * breaks, and the one wait every blocking call goes through.
 *
 * There is no thread of ours.  A thread that must wait becomes the
 * reader if nobody is (r_reading): it drops the lock, polls the socket,
 * the signal eventfd and the wake eventfd, takes the lock back, does the
 * I/O and broadcasts r_cond.  Other waiters sleep on r_cond until their
 * futures resolve or the reader leaves.  Writes need no reader: whoever
 * holds the lock writes what the socket takes, and wakes the reader if
 * output is left over (it then polls for POLLOUT too).
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <openssl/err.h>

#include "conf.h"
#include "r3q-int.h"
#include "tls.h"

#define CONTROL_DEFAULT	R3Q_RUNDIR "/masterd.sock"	/* as r3qctl's */
#define DEFAULT_PORT	"7411"
#define READ_CHUNK	(64u << 10)
#define READ_PASS	(4u << 20)	/* then let writes and others in */

static void	conn_close_socket(struct r3q *);
static void	conn_down(struct r3q *, const char *);
static void	conn_step(struct r3q *, short);
static void	conn_arm(struct r3q *);

static const char *const lr_errors[] = {
	"success",
	"the task failed",
	"the task was killed",
	"the task was cancelled",
	"timed out",
	"interrupted by r3q_signal",
	"lost the connection to masterd",
	"invalid argument",
	"out of memory",
	"payload too big",
	"protocol error",
	"refused by masterd",
	"not resolved yet"
};

/* The text for a status code. */
const char *
r3q_strerror(int code)
{
	if (code > 0 || -code >= (int)(sizeof(lr_errors) /
	    sizeof(lr_errors[0])))
		return ("unknown error");
	return (lr_errors[-code]);
}

/* Monotonic nanoseconds. */
uint64_t
lr_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/* Remember what went wrong, for r3q_error. */
void
lr_seterr(struct r3q *r, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(r->r_err, sizeof(r->r_err), fmt, ap);
	va_end(ap);
}

const char *
r3q_error(const struct r3q *r)
{
	return (r != NULL ? r->r_err : "no connection");
}

/*
 * A BIO over our non-blocking socket that sends with MSG_NOSIGNAL: a
 * master that goes away must not raise SIGPIPE in the program.
 */
static BIO_METHOD	*lr_biometh;
static pthread_once_t	 lr_bioonce = PTHREAD_ONCE_INIT;

static int
lr_bio_write(BIO *b, const char *buf, int len)
{
	ssize_t	 n;

	BIO_clear_retry_flags(b);
	n = send((int)(intptr_t)BIO_get_data(b), buf, (size_t)len,
	    MSG_NOSIGNAL);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		BIO_set_retry_write(b);
	return ((int)n);
}

static int
lr_bio_read(BIO *b, char *buf, int len)
{
	ssize_t	 n;

	BIO_clear_retry_flags(b);
	n = recv((int)(intptr_t)BIO_get_data(b), buf, (size_t)len, 0);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		BIO_set_retry_read(b);
	return ((int)n);
}

static long
lr_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return (cmd == BIO_CTRL_FLUSH ? 1 : 0);
}

static int
lr_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return (1);
}

static int
lr_bio_destroy(BIO *b)
{
	(void)b;
	return (1);
}

static void
lr_bio_init(void)
{
	BIO_METHOD	*m;

	m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
	    "r3q socket");
	if (m == NULL)
		return;
	BIO_meth_set_write(m, lr_bio_write);
	BIO_meth_set_read(m, lr_bio_read);
	BIO_meth_set_ctrl(m, lr_bio_ctrl);
	BIO_meth_set_create(m, lr_bio_create);
	BIO_meth_set_destroy(m, lr_bio_destroy);
	lr_biometh = m;
}

/* The client's settings: options, then environment, then config file. */
struct lr_settings {
	char	 master[CONF_STRMAX];
	char	 ca[CONF_STRMAX];
	char	 cert[CONF_STRMAX];
	char	 key[CONF_STRMAX];
	char	 control[CONF_STRMAX];
	char	 crl[CONF_STRMAX];
	char	 spin[CONF_STRMAX];
};

/* Take a value if the field is still empty. */
static void
lr_take(char *field, const char *v)
{
	if (*field == '\0' && v != NULL && *v != '\0')
		snprintf(field, CONF_STRMAX, "%s", v);
}

/* Trim white space at both ends in place. */
static char *
lr_trim(char *s)
{
	char	*e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return (s);
}

/*
 * Read the keys we know from a "key = value" file (masterd.conf's
 * syntax: # comments, optional double quotes); others are ignored.
 */
static int
lr_read_config(const char *path, struct lr_settings *s, char *err,
    size_t errlen)
{
	FILE	*f;
	char	 line[CONF_STRMAX + 256], *k, *v, *eq, *e;

	if ((f = fopen(path, "re")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		k = lr_trim(line);
		if (*k == '\0' || *k == '#' || (eq = strchr(k, '=')) == NULL)
			continue;
		*eq = '\0';
		k = lr_trim(k);
		v = lr_trim(eq + 1);
		if (*v == '"') {
			v++;
			if ((e = strrchr(v, '"')) != NULL)
				*e = '\0';
		} else if ((e = strchr(v, '#')) != NULL) {
			*e = '\0';
			v = lr_trim(v);
		}
		if (strcmp(k, "master") == 0)
			lr_take(s->master, v);
		else if (strcmp(k, "ca") == 0)
			lr_take(s->ca, v);
		else if (strcmp(k, "cert") == 0)
			lr_take(s->cert, v);
		else if (strcmp(k, "key") == 0)
			lr_take(s->key, v);
		else if (strcmp(k, "control") == 0)
			lr_take(s->control, v);
		else if (strcmp(k, "crl") == 0)
			lr_take(s->crl, v);
		else if (strcmp(k, "spin") == 0)
			lr_take(s->spin, v);
	}
	fclose(f);
	return (0);
}

/*
 * Name the settings TLS lacks: "master h:p: R3Q_CERT is not set (TLS
 * needs R3Q_CA, R3Q_CERT and R3Q_KEY, or ca, cert and key in the
 * R3Q_CONFIG file)".
 */
static void
lr_missing(const struct lr_settings *s, char *err, size_t errlen)
{
	const char	*miss[3];
	size_t		 n = 0;

	if (s->ca[0] == '\0')
		miss[n++] = "R3Q_CA";
	if (s->cert[0] == '\0')
		miss[n++] = "R3Q_CERT";
	if (s->key[0] == '\0')
		miss[n++] = "R3Q_KEY";
	snprintf(err, errlen, "master %s: %s%s%s%s%s %s not set (TLS needs "
	    "R3Q_CA, R3Q_CERT and R3Q_KEY, or ca, cert and key in the "
	    "R3Q_CONFIG file)", s->master, miss[0],
	    n > 2 ? ", " : n > 1 ? " and " : "", n > 1 ? miss[1] : "",
	    n > 2 ? " and " : "", n > 2 ? miss[2] : "", n > 1 ? "are" : "is");
}

/*
 * The spin limit (spin.h): v, which came from "from" (R3Q_SPIN, or the
 * config file's key), or SPIN_DEFAULT_US if empty.
 */
static int
lr_spin_set(struct r3q *r, const char *v, const char *from, char *err,
    size_t errlen)
{
	uint64_t	 us = SPIN_DEFAULT_US;

	if (*v != '\0' && (conf_parse_duration_us(v, &us) == -1 ||
	    us > SPIN_MAX_US)) {
		snprintf(err, errlen, "%s: bad spin '%s' (a duration from 0 "
		    "to 1s: 0, 500us, 2ms)", from, v);
		return (-1);
	}
	r->r_spin.limit_ns = us * 1000;
	return (0);
}

/* Work out where to connect, and resolve it once for every attempt. */
static int
lr_where(struct r3q *r, const struct r3q_options *o, char *err,
    size_t errlen)
{
	struct lr_settings	 s;
	struct addrinfo		 hints, *res, *ai;
	struct sockaddr_un	*sun;
	char			 host[CONF_STRMAX], port[16];
	struct tls_crl		*crl;
	const char		*config;
	char			 where[CONF_STRMAX + 8] = "";
	size_t			 n;
	int			 e, rc;

	memset(&s, 0, sizeof(s));
	if (o != NULL) {
		lr_take(s.master, o->master);
		lr_take(s.ca, o->ca);
		lr_take(s.cert, o->cert);
		lr_take(s.key, o->key);
		lr_take(s.control, o->control);
		lr_take(s.crl, o->crl);
	}
	lr_take(s.master, getenv("R3Q_MASTER"));
	lr_take(s.ca, getenv("R3Q_CA"));
	lr_take(s.cert, getenv("R3Q_CERT"));
	lr_take(s.key, getenv("R3Q_KEY"));
	lr_take(s.control, getenv("R3Q_CONTROL"));
	lr_take(s.crl, getenv("R3Q_CRL"));
	lr_take(s.spin, getenv("R3Q_SPIN"));
	config = o != NULL && o->config != NULL ? o->config :
	    getenv("R3Q_CONFIG");
	if (config != NULL && *config != '\0' &&
	    lr_read_config(config, &s, err, errlen) == -1)
		return (-1);
	if (s.spin[0] != '\0') {
		if (getenv("R3Q_SPIN") != NULL && *getenv("R3Q_SPIN") != '\0')
			snprintf(where, sizeof(where), "R3Q_SPIN");
		else
			snprintf(where, sizeof(where), "%s: spin", config);
	}
	if (lr_spin_set(r, s.spin, where, err, errlen) == -1)
		return (-1);

	/* An explicit control socket wins over an inherited master. */
	if (o != NULL && o->control != NULL && *o->control != '\0')
		s.master[0] = '\0';
	if (s.master[0] == '\0') {
		r->r_defsock = s.control[0] == '\0';
		lr_take(s.control, CONTROL_DEFAULT);
		r->r_addrs = calloc(1, sizeof(*r->r_addrs));
		r->r_addrlens = calloc(1, sizeof(*r->r_addrlens));
		if (r->r_addrs == NULL || r->r_addrlens == NULL) {
			snprintf(err, errlen, "out of memory");
			return (-1);
		}
		sun = (struct sockaddr_un *)(void *)r->r_addrs;
		sun->sun_family = AF_UNIX;
		if (strlen(s.control) >= sizeof(sun->sun_path)) {
			snprintf(err, errlen, "socket path too long: %s",
			    s.control);
			return (-1);
		}
		strcpy(sun->sun_path, s.control);
		r->r_addrlens[0] = sizeof(*sun);
		r->r_naddrs = 1;
		if ((r->r_host = strdup(s.control)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return (-1);
		}
		return (0);
	}

	r->r_tls = 1;
	if (s.ca[0] == '\0' || s.cert[0] == '\0' || s.key[0] == '\0') {
		lr_missing(&s, err, errlen);
		return (-1);
	}
	if (conf_split_hostport(s.master, host, sizeof(host), port,
	    sizeof(port), DEFAULT_PORT) == -1 || host[0] == '\0') {
		snprintf(err, errlen, "master: bad address %s", s.master);
		return (-1);
	}
	pthread_once(&lr_bioonce, lr_bio_init);
	if (lr_biometh == NULL) {
		snprintf(err, errlen, "cannot make a BIO method");
		return (-1);
	}
	if ((r->r_ctx = tls_ctx_new(0, s.ca, s.cert, s.key, err,
	    errlen)) == NULL)
		return (-1);
	/*
	 * With a crl, as the daemons' (r3q(3), R3Q_CRL): the master's
	 * certificate is refused once the CA revokes it.  The CRL must parse
	 * and be the CA's, or nothing connects.
	 */
	if (tls_crl_configured(s.crl)) {
		if ((crl = tls_crl_load(s.crl, s.ca, err, errlen)) == NULL)
			return (-1);
		rc = tls_crl_apply(r->r_ctx, crl, err, errlen);
		tls_crl_free(crl);
		if (rc == -1)
			return (-1);
		if ((r->r_crl = strdup(s.crl)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return (-1);
		}
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", s.master, gai_strerror(e));
		return (-1);
	}
	for (n = 0, ai = res; ai != NULL; ai = ai->ai_next)
		n++;
	r->r_addrs = calloc(n, sizeof(*r->r_addrs));
	r->r_addrlens = calloc(n, sizeof(*r->r_addrlens));
	r->r_host = strdup(host);
	if (r->r_addrs == NULL || r->r_addrlens == NULL || r->r_host == NULL) {
		freeaddrinfo(res);
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	for (n = 0, ai = res; ai != NULL; ai = ai->ai_next, n++) {
		memcpy(&r->r_addrs[n], ai->ai_addr, ai->ai_addrlen);
		r->r_addrlens[n] = ai->ai_addrlen;
	}
	r->r_naddrs = n;
	freeaddrinfo(res);
	if ((r->r_master = strdup(s.master)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	return (0);
}

/* A description of the OpenSSL error queue, or of errno. */
static void
lr_ssl_error(char *buf, size_t len, const char *what)
{
	unsigned long	 e;
	char		 reason[200];

	if ((e = ERR_get_error()) != 0) {
		ERR_error_string_n(e, reason, sizeof(reason));
		ERR_clear_error();
	} else
		snprintf(reason, sizeof(reason), "%s", errno != 0 ?
		    strerror(errno) : "connection closed");
	snprintf(buf, len, "%s: %s", what, reason);
}

/* Connected and, over TLS, checked: (re)attach and send again. */
static void
conn_up(struct r3q *r)
{
	struct r3q_job	*j;
	struct lr_req	*q;

	r->r_state = CS_UP;
	r->r_down_since = 0;
	r->r_backoff = 0;
	r->r_want = 0;
	r->r_wantw = 0;
	if (r->r_ever_up) {
		TAILQ_FOREACH(j, &r->r_jobs, j_entry)
			if (!j->j_gone && !j->j_close_done)
				job_resume(j);
	}
	r->r_ever_up = 1;
	TAILQ_FOREACH(q, &r->r_reqs, q_entry)
		if (!q->q_done)
			lr_send_req(r, q);
}

/*
 * The TLS handshake, a step at a time.  Only a certificate with
 * OU=master is the master.
 */
static void
conn_handshake(struct r3q *r)
{
	char	 role[32], name[64], why[LR_ERRLEN];
	long	 vr;
	int	 rc;

	ERR_clear_error();
	errno = 0;
	if ((rc = SSL_connect(r->r_ssl)) == 1) {
		if (tls_peer_identity(r->r_ssl, role, sizeof(role), name,
		    sizeof(name)) == -1) {
			conn_down(r, "the master's certificate has no role "
			    "(OU) or name (CN)");
			return;
		}
		if (strcmp(role, "master") != 0) {
			snprintf(why, sizeof(why), "the peer at %s is not a "
			    "master (role '%s', name '%s')", r->r_host, role,
			    name);
			conn_down(r, why);
			return;
		}
		conn_up(r);
		return;
	}
	switch (SSL_get_error(r->r_ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		r->r_want = POLLIN;
		return;
	case SSL_ERROR_WANT_WRITE:
		r->r_want = POLLOUT;
		return;
	default:
		if ((vr = SSL_get_verify_result(r->r_ssl)) != X509_V_OK) {
			snprintf(why, sizeof(why), "TLS handshake with %s: "
			    "%s%s%s%s", r->r_host,
			    X509_verify_cert_error_string(vr),
			    vr == X509_V_ERR_CERT_REVOKED ? " (crl " : "",
			    vr == X509_V_ERR_CERT_REVOKED ? r->r_crl : "",
			    vr == X509_V_ERR_CERT_REVOKED ? ")" : "");
			ERR_clear_error();
		} else
			lr_ssl_error(why, sizeof(why), "TLS handshake");
		conn_down(r, why);
	}
}

/* The socket connected: start TLS, or be up. */
static void
conn_connected(struct r3q *r)
{
	BIO	*bio;
	char	 err[LR_ERRLEN];

	if (!r->r_tls) {
		conn_up(r);
		return;
	}
	if ((r->r_ssl = tls_client_ssl(r->r_ctx, r->r_host, err,
	    sizeof(err))) == NULL) {
		conn_down(r, err);
		return;
	}
	if ((bio = BIO_new(lr_biometh)) == NULL) {
		conn_down(r, "out of memory");
		return;
	}
	BIO_set_data(bio, (void *)(intptr_t)r->r_fd);
	SSL_set_bio(r->r_ssl, bio, bio);
	SSL_set_mode(r->r_ssl, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	r->r_state = CS_HANDSHAKE;
	conn_handshake(r);
}

/* Try the addresses from r_addri on; connect(2) without waiting. */
static void
conn_start(struct r3q *r)
{
	const struct sockaddr	*sa;
	char			 why[LR_ERRLEN];
	int			 fd, e = 0;

	for (; r->r_addri < r->r_naddrs; r->r_addri++) {
		sa = (const struct sockaddr *)&r->r_addrs[r->r_addri];
		fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (fd == -1) {
			e = errno;
			continue;
		}
		if (connect(fd, sa, r->r_addrlens[r->r_addri]) == 0) {
			r->r_fd = fd;
			conn_connected(r);
			return;
		}
		if (errno == EINPROGRESS) {
			r->r_fd = fd;
			r->r_state = CS_CONNECTING;
			return;
		}
		e = errno;
		close(fd);
	}
	snprintf(why, sizeof(why), "cannot reach masterd at %s: %s",
	    r->r_host, strerror(e));
	conn_down(r, why);
}

/* Close the socket and forget what was in flight on it. */
static void
conn_close_socket(struct r3q *r)
{
	if (r->r_ssl != NULL) {
		SSL_free(r->r_ssl);
		r->r_ssl = NULL;
	}
	if (r->r_fd != -1) {
		close(r->r_fd);
		r->r_fd = -1;
		r->r_ep_sock = -1;	/* close(2) took it out of epoll */
		r->r_ep_events = 0;
	}
	r->r_obstart = r->r_oblen = 0;
	evbuffer_drain(r->r_in, evbuffer_get_length(r->r_in));
	r->r_want = 0;
	r->r_wantw = 0;
}

/* Give up: every unresolved future and request fails with R3Q_ECONN. */
static void
conn_dead(struct r3q *r, const char *why)
{
	struct r3q_job	*j, *jn;
	struct lr_req	*q;

	conn_close_socket(r);
	r->r_state = CS_DEAD;
	lr_seterr(r, "%s", why);
	TAILQ_FOREACH_SAFE(j, &r->r_jobs, j_entry, jn)
		job_fail(j, R3Q_ECONN, why);
	TAILQ_FOREACH(q, &r->r_reqs, q_entry) {
		if (q->q_done)
			continue;
		q->q_done = 1;
		q->q_rc = R3Q_ECONN;
		snprintf(q->q_err, sizeof(q->q_err), "%s", why);
	}
	r->r_resolved = 1;
}

/*
 * The connection broke or could not be made.  Try the next address,
 * else again after a backoff (the first retry at once), until
 * reconnect_ms has passed since it broke.  A first connection that fails
 * is not retried: r3q_connect says why.
 */
static void
conn_down(struct r3q *r, const char *why)
{
	uint64_t	 now, limit;

	conn_close_socket(r);
	lr_seterr(r, "%s", why);
	if (r->r_state == CS_CONNECTING && r->r_addri + 1 < r->r_naddrs) {
		r->r_addri++;
		conn_start(r);
		return;
	}
	r->r_addri = 0;
	if (!r->r_ever_up) {
		r->r_state = CS_DEAD;
		return;
	}
	if (r->r_admin) {
		conn_dead(r, why);
		return;
	}
	now = lr_now();
	if (r->r_down_since == 0) {
		r->r_down_since = now;
		r->r_retry_at = now;
		r->r_backoff = LR_BACKOFF_MIN;
	} else {
		r->r_retry_at = now + (uint64_t)r->r_backoff * 1000000ULL;
		r->r_backoff = r->r_backoff * 2 > LR_BACKOFF_MAX ?
		    LR_BACKOFF_MAX : r->r_backoff * 2;
	}
	r->r_state = CS_DOWN;
	if (r->r_reconnect_ms >= 0) {
		limit = r->r_down_since + (uint64_t)r->r_reconnect_ms *
		    1000000ULL;
		if (now >= limit) {
			conn_dead(r, why);
			return;
		}
		if (r->r_retry_at > limit)
			r->r_retry_at = limit;
	}
}

/* Make room for len more bytes of output. */
static int
lr_ob_reserve(struct r3q *r, size_t len)
{
	uint8_t	*nb;
	size_t	 n;

	if (r->r_obstart > 0 && (r->r_obstart > r->r_obsize / 2 ||
	    r->r_obstart + r->r_oblen + len > r->r_obsize)) {
		memmove(r->r_ob, r->r_ob + r->r_obstart, r->r_oblen);
		r->r_obstart = 0;
	}
	if (r->r_oblen + len <= r->r_obsize)
		return (0);
	for (n = r->r_obsize ? r->r_obsize : 65536; n < r->r_oblen + len;
	    n *= 2)
		;
	if ((nb = realloc(r->r_ob, n)) == NULL)
		return (-1);
	r->r_ob = nb;
	r->r_obsize = n;
	return (0);
}

/*
 * Frame an Envelope into the output under a new request id.  Only while
 * up: what is lost with a connection is rebuilt from state on the next.
 */
int
lr_send(struct r3q *r, Envelope *env, uint64_t *idp)
{
	size_t	 len;
	uint8_t	*p;

	if (r->r_state != CS_UP)
		return (-1);
	env->id = ++r->r_reqid;
	len = protobuf_c_message_get_packed_size(&env->base);
	if (len > UINT32_MAX || lr_ob_reserve(r, FRAME_HDRLEN + len) == -1) {
		conn_down(r, "out of memory for output");
		return (-1);
	}
	p = r->r_ob + r->r_obstart + r->r_oblen;
	frame_header_encode(p, (uint32_t)len);
	protobuf_c_message_pack(&env->base, p + FRAME_HDRLEN);
	r->r_oblen += FRAME_HDRLEN + len;
	if (idp != NULL)
		*idp = env->id;
	return (0);
}

/* A request kept for answers and resending; its body has no id. */
struct lr_req *
lr_req_new(struct r3q *r, Envelope *env)
{
	struct lr_req	*q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return (NULL);
	env->id = 0;
	q->q_len = protobuf_c_message_get_packed_size(&env->base);
	if ((q->q_body = malloc(q->q_len ? q->q_len : 1)) == NULL) {
		free(q);
		return (NULL);
	}
	protobuf_c_message_pack(&env->base, q->q_body);
	TAILQ_INSERT_TAIL(&r->r_reqs, q, q_entry);
	return (q);
}

void
lr_req_free(struct r3q *r, struct lr_req *q)
{
	TAILQ_REMOVE(&r->r_reqs, q, q_entry);
	free(q->q_body);
	free(q);
}

/*
 * Send a kept request under a new id: field 1 (the id) put in front of
 * the packed body, which protobuf allows.
 */
int
lr_send_req(struct r3q *r, struct lr_req *q)
{
	uint8_t		 v[11], *p;
	uint64_t	 id;
	size_t		 n = 0;

	if (r->r_state != CS_UP)
		return (-1);
	id = q->q_id = ++r->r_reqid;
	v[n++] = 0x08;
	do {
		v[n++] = (uint8_t)((id & 0x7f) | (id > 0x7f ? 0x80 : 0));
		id >>= 7;
	} while (id != 0);
	if (lr_ob_reserve(r, FRAME_HDRLEN + n + q->q_len) == -1) {
		conn_down(r, "out of memory for output");
		return (-1);
	}
	p = r->r_ob + r->r_obstart + r->r_oblen;
	frame_header_encode(p, (uint32_t)(n + q->q_len));
	memcpy(p + FRAME_HDRLEN, v, n);
	memcpy(p + FRAME_HDRLEN + n, q->q_body, q->q_len);
	r->r_oblen += FRAME_HDRLEN + n + q->q_len;
	return (0);
}

/* Wake the thread polling the socket, if another one is. */
void
lr_wake(struct r3q *r)
{
	uint64_t	 one = 1;

	if (r->r_reading && write(r->r_wakefd, &one, sizeof(one)) == -1) {
		/* already readable: the reader wakes anyway */
	}
}

/* Write what the socket takes now; -1 if the connection broke. */
int
lr_write(struct r3q *r)
{
	char	 why[LR_ERRLEN];
	ssize_t	 n;
	int	 rc, was = r->r_wantw;

	if (r->r_state != CS_UP)
		return (-1);
	r->r_wantw = 0;
	while (r->r_oblen > 0) {
		if (r->r_ssl != NULL) {
			ERR_clear_error();
			errno = 0;
			rc = SSL_write(r->r_ssl, r->r_ob + r->r_obstart,
			    r->r_oblen > INT32_MAX ? INT32_MAX :
			    (int)r->r_oblen);
			if (rc <= 0) {
				switch (SSL_get_error(r->r_ssl, rc)) {
				case SSL_ERROR_WANT_WRITE:
				case SSL_ERROR_WANT_READ:
					r->r_wantw = 1;
					goto out;
				default:
					lr_ssl_error(why, sizeof(why),
					    "write to masterd");
					conn_down(r, why);
					return (-1);
				}
			}
			n = rc;
		} else {
			n = send(r->r_fd, r->r_ob + r->r_obstart, r->r_oblen,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n == -1) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK) {
					r->r_wantw = 1;
					goto out;
				}
				snprintf(why, sizeof(why), "write to masterd: "
				    "%s", strerror(errno));
				conn_down(r, why);
				return (-1);
			}
		}
		r->r_obstart += (size_t)n;
		r->r_oblen -= (size_t)n;
	}
	r->r_obstart = 0;
out:
	if (r->r_wantw && !was && r->r_reading &&
	    !pthread_equal(r->r_reader, pthread_self()))
		lr_wake(r);
	return (0);
}

/* Read what is there, then take every whole frame off and dispatch it. */
static void
conn_read(struct r3q *r)
{
	struct evbuffer_iovec	 v;
	Envelope		*env;
	char			 why[LR_ERRLEN], err[200];
	ssize_t			 n;
	size_t			 got = 0;
	int			 rc, eof = 0;

	while (got < READ_PASS) {
		if (evbuffer_reserve_space(r->r_in, READ_CHUNK, &v, 1) < 1) {
			conn_down(r, "out of memory for input");
			return;
		}
		if (r->r_ssl != NULL) {
			ERR_clear_error();
			errno = 0;
			rc = SSL_read(r->r_ssl, v.iov_base, (int)(v.iov_len >
			    INT32_MAX ? INT32_MAX : v.iov_len));
			if (rc <= 0) {
				v.iov_len = 0;
				evbuffer_commit_space(r->r_in, &v, 1);
				switch (SSL_get_error(r->r_ssl, rc)) {
				case SSL_ERROR_WANT_READ:
					goto frames;
				case SSL_ERROR_WANT_WRITE:
					r->r_wantw = 1;
					goto frames;
				case SSL_ERROR_ZERO_RETURN:
					eof = 1;
					goto frames;
				default:
					lr_ssl_error(why, sizeof(why),
					    "read from masterd");
					conn_down(r, why);
					return;
				}
			}
			n = rc;
		} else {
			n = recv(r->r_fd, v.iov_base, v.iov_len, MSG_DONTWAIT);
			if (n <= 0) {
				v.iov_len = 0;
				evbuffer_commit_space(r->r_in, &v, 1);
				if (n == 0) {
					eof = 1;
					goto frames;
				}
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					goto frames;
				snprintf(why, sizeof(why), "read from masterd: "
				    "%s", strerror(errno));
				conn_down(r, why);
				return;
			}
		}
		v.iov_len = (size_t)n;
		evbuffer_commit_space(r->r_in, &v, 1);
		got += (size_t)n;
	}
frames:
	for (;;) {
		rc = frame_read_arena(r->r_in, LR_MAX_FRAME, r->r_arena, &env,
		    err, sizeof(err));
		if (rc == 0)
			break;
		if (rc == -1) {
			snprintf(why, sizeof(why), "bad frame from masterd: "
			    "%s", err);
			frame_arena_reset(r->r_arena);
			conn_down(r, why);
			return;
		}
		if (r->r_admin)
			lr_admin_take(r, env);
		else
			job_dispatch(r, env);
		frame_arena_reset(r->r_arena);
		if (r->r_state != CS_UP)
			return;
		job_ack_all(r, 0);
	}
	if (eof)
		conn_down(r, "masterd closed the connection");
}

/*
 * Move the connection on as far as it goes without waiting.  revents is
 * what poll said of the socket, or -1 if nobody asked.
 */
static void
conn_step(struct r3q *r, short revents)
{
	struct pollfd	 pfd;
	socklen_t	 sl;
	char		 why[LR_ERRLEN];
	int		 e;

	switch (r->r_state) {
	case CS_DOWN:
		if (lr_now() >= r->r_retry_at)
			conn_start(r);
		break;
	case CS_CONNECTING:
		if (revents == -1) {
			pfd.fd = r->r_fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, 0) <= 0)
				return;
			revents = pfd.revents;
		}
		if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0)
			return;
		e = 0;
		sl = sizeof(e);
		if (getsockopt(r->r_fd, SOL_SOCKET, SO_ERROR, &e, &sl) == -1)
			e = errno;
		if (e != 0) {
			snprintf(why, sizeof(why), "cannot reach masterd at "
			    "%s: %s", r->r_host, strerror(e));
			conn_down(r, why);
			return;
		}
		conn_connected(r);
		break;
	case CS_HANDSHAKE:
		conn_handshake(r);
		break;
	default:
		break;
	}
	if (r->r_state == CS_UP) {
		if (revents == -1 || (revents & (POLLIN | POLLHUP | POLLERR)))
			conn_read(r);
		if (r->r_state == CS_UP) {
			job_flush_all(r);
			lr_write(r);
		}
	}
}

/* Wake waiters when futures resolved or the reader left. */
static void
conn_broadcast(struct r3q *r)
{
	r->r_resolved = 0;
	pthread_cond_broadcast(&r->r_cond);
}

/*
 * Be the reader for one poll: send what is queued, acknowledge what
 * arrived, wait for the socket (or a signal, or a wake-up) until deadline
 * (0: none) or the next reconnect, and do the I/O.  Returns
 * R3Q_ESIGNALLED if a signal came and done() is still false.
 */
static int
conn_poll(struct r3q *r, uint64_t deadline, int signals,
    int (*done)(void *), void *arg)
{
	struct pollfd	 pfd[3];
	uint64_t	 now, until, buf, spin = 0, t0;
	int		 n, ms, polled, sock = -1, sig = -1, lone, spent;
	short		 ev = 0;

	r->r_reading = 1;
	r->r_reader = pthread_self();
	if (r->r_state == CS_UP) {
		job_flush_all(r);
		job_ack_all(r, 1);
		lr_write(r);
		r->r_pending = 0;
	} else if (r->r_state == CS_DOWN && lr_now() >= r->r_retry_at)
		conn_step(r, -1);

	n = 0;
	switch (r->r_state) {
	case CS_CONNECTING:
		ev = POLLOUT;
		break;
	case CS_HANDSHAKE:
		ev = r->r_want;
		break;
	case CS_UP:
		ev = POLLIN | (r->r_wantw ? POLLOUT : 0);
		break;
	default:
		break;
	}
	if (ev != 0) {
		pfd[n].fd = r->r_fd;
		pfd[n].events = ev;
		sock = n++;
	}
	if (signals) {
		pfd[n].fd = r->r_sigfd;
		pfd[n].events = POLLIN;
		sig = n++;
	}
	pfd[n].fd = r->r_wakefd;
	pfd[n].events = POLLIN;
	n++;
	until = deadline;
	if (r->r_state == CS_DOWN && (until == 0 || r->r_retry_at < until))
		until = r->r_retry_at;
	now = lr_now();
	if (r->r_state == CS_DEAD)
		ms = 0;
	else if (until == 0)
		ms = -1;
	else if (until <= now)
		ms = 0;
	else
		ms = (until - now + 999999) / 1000000 > INT32_MAX ? INT32_MAX :
		    (int)((until - now + 999999) / 1000000);
	if (r->r_epfd != -1)
		conn_arm(r);
	/*
	 * Waiting for the answer of its one task in flight: poll a while
	 * before sleeping, if such waits have been short (spin.h).
	 */
	lone = r->r_state == CS_UP && r->r_unresolved == 1 && ms != 0;
	if (lone)
		spin = spin_budget(&r->r_spin, ms < 0 ? UINT64_MAX :
		    (uint64_t)ms * 1000000ULL);

	pthread_mutex_unlock(&r->r_mtx);
	t0 = lone ? lr_now() : 0;
	polled = 0;
	if (spin > 0)
		while ((polled = poll(pfd, (nfds_t)n, 0)) == 0 &&
		    lr_now() - t0 < spin)
			;
	if (polled == 0) {
		/* What is left of ms after the spin (spin <= ms). */
		if (spin > 0 && ms > 0) {
			spent = (int)((lr_now() - t0) / 1000000ULL);
			ms = spent < ms ? ms - spent : 0;
		}
		polled = poll(pfd, (nfds_t)n, ms);
	}
	pthread_mutex_lock(&r->r_mtx);
	if (lone && polled > 0 && sock != -1 && (pfd[sock].revents & POLLIN))
		spin_learn(&r->r_spin, lr_now() - t0);

	r->r_reading = 0;
	if (polled > 0 && (pfd[n - 1].revents & POLLIN)) {
		while (read(r->r_wakefd, &buf, sizeof(buf)) > 0)
			;
	}
	if (r->r_state != CS_DEAD)
		conn_step(r, polled > 0 && sock != -1 ? pfd[sock].revents :
		    (polled == 0 ? 0 : -1));
	if (r->r_epfd != -1)
		conn_arm(r);
	conn_broadcast(r);
	if (sig != -1 && polled > 0 && (pfd[sig].revents & POLLIN) && !done(arg) &&
	    read(r->r_sigfd, &buf, sizeof(buf)) == sizeof(buf))
		return (R3Q_ESIGNALLED);
	return (R3Q_OK);
}

/*
 * Wait with the lock held until done(arg), timeout_ms (< 0: forever) or,
 * if signals, r3q_signal.  One pass of I/O is made even with a timeout of
 * zero.
 */
int
lr_wait(struct r3q *r, int (*done)(void *), void *arg, int timeout_ms,
    int signals)
{
	struct timespec	 ts;
	uint64_t	 deadline = 0, rt;
	int		 passes = 0, rc;

	if (timeout_ms >= 0)
		deadline = lr_now() + (uint64_t)timeout_ms * 1000000ULL;
	for (;;) {
		if (done(arg))
			return (R3Q_OK);
		if (r->r_state == CS_DEAD)
			return (R3Q_ECONN);
		if (passes++ > 0 && deadline != 0 && lr_now() >= deadline)
			return (R3Q_ETIMEDOUT);
		if (!r->r_reading) {
			rc = conn_poll(r, deadline, signals, done, arg);
			if (rc != R3Q_OK)
				return (rc);
			continue;
		}
		if (deadline == 0) {
			pthread_cond_wait(&r->r_cond, &r->r_mtx);
			continue;
		}
		/* r_cond runs on CLOCK_MONOTONIC, as lr_now. */
		rt = deadline;
		ts.tv_sec = (time_t)(rt / 1000000000ULL);
		ts.tv_nsec = (long)(rt % 1000000000ULL);
		pthread_cond_timedwait(&r->r_cond, &r->r_mtx, &ts);
	}
}

/*
 * Tasks were queued: an event loop must be told to call r3q_process, so
 * the timer fires at once (once per flush, not per task).
 */
void
lr_queued(struct r3q *r)
{
	r->r_pending = 1;
	if (r->r_epfd != -1 && !r->r_kicked)
		conn_arm(r);
}

/*
 * Make r3q_fd tell the truth: the socket registered for what it waits
 * for, the timer set for the next reconnect attempt, or to fire at once
 * when there is queued work for r3q_process.
 */
static void
conn_arm(struct r3q *r)
{
	struct epoll_event	 ee;
	struct itimerspec	 its;
	uint64_t		 at = 0, now;
	uint32_t		 ev = 0;
	int			 sock = -1;

	switch (r->r_state) {
	case CS_CONNECTING:
		ev = EPOLLOUT;
		break;
	case CS_HANDSHAKE:
		ev = (r->r_want & POLLIN ? EPOLLIN : 0) |
		    (r->r_want & POLLOUT ? EPOLLOUT : 0);
		break;
	case CS_UP:
		ev = EPOLLIN | (r->r_wantw ? EPOLLOUT : 0);
		break;
	default:
		break;
	}
	if (ev != 0)
		sock = r->r_fd;
	if (sock != r->r_ep_sock) {
		if (r->r_ep_sock != -1)
			epoll_ctl(r->r_epfd, EPOLL_CTL_DEL, r->r_ep_sock, NULL);
		r->r_ep_sock = -1;
		r->r_ep_events = 0;
		if (sock != -1) {
			memset(&ee, 0, sizeof(ee));
			ee.events = ev;
			ee.data.fd = sock;
			if (epoll_ctl(r->r_epfd, EPOLL_CTL_ADD, sock, &ee) == 0) {
				r->r_ep_sock = sock;
				r->r_ep_events = ev;
			}
		}
	} else if (sock != -1 && ev != r->r_ep_events) {
		memset(&ee, 0, sizeof(ee));
		ee.events = ev;
		ee.data.fd = sock;
		if (epoll_ctl(r->r_epfd, EPOLL_CTL_MOD, sock, &ee) == 0)
			r->r_ep_events = ev;
	}

	now = lr_now();
	if (r->r_state == CS_DOWN)
		at = r->r_retry_at;
	if (r->r_state == CS_UP && (r->r_queued > 0 || r->r_pending)) {
		at = now;
		r->r_kicked = 1;
	}
	if (at == r->r_timer_at)
		return;
	memset(&its, 0, sizeof(its));
	if (at != 0) {
		if (at <= now)
			its.it_value.tv_nsec = 1;
		else {
			its.it_value.tv_sec = (time_t)((at - now) /
			    1000000000ULL);
			its.it_value.tv_nsec = (long)((at - now) %
			    1000000000ULL);
		}
	}
	if (timerfd_settime(r->r_timerfd, 0, &its, NULL) == 0)
		r->r_timer_at = at;
}

/*
 * A descriptor for an event loop: readable (poll, epoll, libevent) when
 * r3q_process has something to do.  It stays the same across reconnects.
 */
int
r3q_fd(struct r3q *r)
{
	struct epoll_event	 ee;
	int			 fd = -1;

	if (r == NULL)
		return (-1);
	pthread_mutex_lock(&r->r_mtx);
	if (r->r_epfd == -1) {
		r->r_epfd = epoll_create1(EPOLL_CLOEXEC);
		r->r_timerfd = timerfd_create(CLOCK_MONOTONIC,
		    TFD_NONBLOCK | TFD_CLOEXEC);
		memset(&ee, 0, sizeof(ee));
		ee.events = EPOLLIN;
		ee.data.fd = r->r_timerfd;
		if (r->r_epfd == -1 || r->r_timerfd == -1 ||
		    epoll_ctl(r->r_epfd, EPOLL_CTL_ADD, r->r_timerfd,
		    &ee) == -1) {
			lr_seterr(r, "epoll: %s", strerror(errno));
			if (r->r_epfd != -1)
				close(r->r_epfd);
			if (r->r_timerfd != -1)
				close(r->r_timerfd);
			r->r_epfd = r->r_timerfd = -1;
		} else
			conn_arm(r);
	}
	fd = r->r_epfd;
	pthread_mutex_unlock(&r->r_mtx);
	return (fd);
}

/*
 * Do whatever can be done without blocking: connect again, read and
 * dispatch, send queued tasks, cancels and acknowledgements.
 */
int
r3q_process(struct r3q *r)
{
	uint64_t	 buf;
	int		 rc;

	if (r == NULL)
		return (R3Q_EINVAL);
	pthread_mutex_lock(&r->r_mtx);
	if (r->r_timerfd != -1) {
		while (read(r->r_timerfd, &buf, sizeof(buf)) > 0)
			;
		r->r_kicked = 0;
		r->r_timer_at = 0;
	}
	conn_step(r, -1);
	if (r->r_state == CS_UP) {
		job_flush_all(r);
		job_ack_all(r, 1);
		lr_write(r);
		r->r_pending = 0;
	}
	if (r->r_epfd != -1)
		conn_arm(r);
	if (r->r_resolved)
		conn_broadcast(r);
	rc = r->r_state == CS_DEAD ? R3Q_ECONN : R3Q_OK;
	pthread_mutex_unlock(&r->r_mtx);
	return (rc);
}

/*
 * Wake one blocked wait (or the next one to block) with R3Q_ESIGNALLED.
 * Safe in a signal handler: one write(2) to an eventfd.
 */
void
r3q_signal(struct r3q *r)
{
	uint64_t	 one = 1;
	int		 saved = errno;

	if (r != NULL && write(r->r_sigfd, &one, sizeof(one)) == -1) {
		/* the count is full: plenty of signals pending */
	}
	errno = saved;
}

/* Connect to masterd; NULL with a message in err if it cannot be done. */
struct r3q *
r3q_connect(const struct r3q_options *o, char *err, size_t errlen)
{
	struct r3q		*r;
	pthread_condattr_t	 ca;
	uint64_t		 deadline;
	char			 dummy[1];

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	r->r_fd = r->r_epfd = r->r_timerfd = r->r_ep_sock = -1;
	r->r_sigfd = r->r_wakefd = -1;
	TAILQ_INIT(&r->r_jobs);
	TAILQ_INIT(&r->r_reqs);
	TAILQ_INIT(&r->r_admq);
	pthread_mutex_init(&r->r_mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->r_cond, &ca);
	pthread_condattr_destroy(&ca);
	r->r_reconnect_ms = o != NULL && o->reconnect_ms != 0 ?
	    o->reconnect_ms : LR_RECONNECT_MS;
	if (r->r_reconnect_ms < 0)
		r->r_reconnect_ms = -1;
	r->r_sigfd = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	r->r_wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->r_in = evbuffer_new();
	r->r_arena = frame_arena_new();
	r->r_specs = calloc(LR_FRAME_TASKS, sizeof(*r->r_specs));
	r->r_specp = calloc(LR_FRAME_TASKS, sizeof(*r->r_specp));
	r->r_fbuf = calloc(LR_FRAME_TASKS, sizeof(*r->r_fbuf));
	if (r->r_sigfd == -1 || r->r_wakefd == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (r->r_in == NULL || r->r_arena == NULL || r->r_specs == NULL ||
	    r->r_specp == NULL || r->r_fbuf == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (lr_where(r, o, err, errlen) == -1)
		goto fail;

	/* The first connection: every address once, within LR_CONNECT_MS. */
	pthread_mutex_lock(&r->r_mtx);
	deadline = lr_now() + LR_CONNECT_MS * 1000000ULL;
	conn_start(r);
	while (r->r_state == CS_CONNECTING || r->r_state == CS_HANDSHAKE) {
		if (lr_now() >= deadline) {
			conn_close_socket(r);
			r->r_state = CS_DEAD;
			lr_seterr(r, "cannot reach masterd at %s: timed out",
			    r->r_host);
			break;
		}
		conn_poll(r, deadline, 0, NULL, NULL);
	}
	pthread_mutex_unlock(&r->r_mtx);
	if (r->r_state != CS_UP) {
		/* Nothing said where: say how to reach it over TLS. */
		snprintf(err, errlen, "%s%s", r->r_err, r->r_defsock ?
		    " (set R3Q_MASTER=host:port with R3Q_CERT, R3Q_KEY, R3Q_CA "
		    "for TLS)" : "");
		goto fail;
	}
	r->r_err[0] = '\0';
	return (r);
fail:
	r3q_close(r);
	return (NULL);
}

/*
 * Close the connection: the outcomes taken are acknowledged (else masterd
 * keeps them for client_timeout, for a client that will not come back),
 * jobs still held are closed (all their futures resolved) or cancelled
 * (some not), as far as a second of writing allows; then every job and
 * future of it is freed.
 */
void
r3q_close(struct r3q *r)
{
	struct r3q_job		*j;
	struct r3q_future	*f;
	struct lr_req		*q;
	struct pollfd		 pfd;
	Envelope		 env;
	R3q__CloseJob		 cj;
	R3q__CancelJob		 xj;
	uint64_t		 deadline;
	int			 busy;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->r_mtx);
	if (r->r_state == CS_UP) {
		job_ack_all(r, 1);
		TAILQ_FOREACH(j, &r->r_jobs, j_entry) {
			if (!j->j_user || j->j_gone || j->j_closing)
				continue;
			busy = 0;
			TAILQ_FOREACH(f, &j->j_futures, f_entry)
				if (!f->f_done)
					busy = 1;
			r3q__envelope__init(&env);
			if (busy) {
				r3q__cancel_job__init(&xj);
				xj.job = j->j_id;
				env.body_case = R3Q__ENVELOPE__BODY_CANCEL_JOB;
				env.cancel_job = &xj;
			} else {
				job_flush(j);
				r3q__close_job__init(&cj);
				cj.job = j->j_id;
				env.body_case = R3Q__ENVELOPE__BODY_CLOSE_JOB;
				env.close_job = &cj;
			}
			lr_send(r, &env, NULL);
		}
		deadline = lr_now() + 1000000000ULL;
		lr_write(r);
		while (r->r_state == CS_UP && r->r_oblen > 0 &&
		    lr_now() < deadline) {
			pfd.fd = r->r_fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, 100) == -1 && errno != EINTR)
				break;
			lr_write(r);
		}
	}
	conn_close_socket(r);
	while ((j = TAILQ_FIRST(&r->r_jobs)) != NULL)
		job_free(j);
	while ((q = TAILQ_FIRST(&r->r_reqs)) != NULL)
		lr_req_free(r, q);
	lr_admin_clear(r);
	pthread_mutex_unlock(&r->r_mtx);

	if (r->r_ctx != NULL)
		SSL_CTX_free(r->r_ctx);
	free(r->r_crl);
	if (r->r_in != NULL)
		evbuffer_free(r->r_in);
	frame_arena_free(r->r_arena);
	if (r->r_sigfd != -1)
		close(r->r_sigfd);
	if (r->r_wakefd != -1)
		close(r->r_wakefd);
	if (r->r_epfd != -1)
		close(r->r_epfd);
	if (r->r_timerfd != -1)
		close(r->r_timerfd);
	free(r->r_ob);
	free(r->r_specs);
	free(r->r_specp);
	free(r->r_fbuf);
	free(r->r_addrs);
	free(r->r_addrlens);
	free(r->r_host);
	free(r->r_master);
	pthread_cond_destroy(&r->r_cond);
	pthread_mutex_destroy(&r->r_mtx);
	free(r);
}
