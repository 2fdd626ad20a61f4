/*
 * Joining a cluster with a token, and renewing the certificate
 * so obtained.
 *
 * With `join = HOST:PORT TOKEN` (or --join), or once state_dir holds a
 * certificate from a join, workerd's TLS files are state_dir's ca.pem,
 * worker.pem and worker.key instead of ca, cert and key.  At start, if
 * they are missing, do not verify, or name another worker than `name`,
 * workerd joins before anything else:
 *
 *  1. a TLS connection to HOST:PORT without a certificate, trusting
 *     nothing yet; the master's chain must hold a certificate whose
 *     SHA-256 is the token's CA hash, and the master's own certificate
 *     must verify under that CA for HOST (kubeadm's discovery hash);
 *  2. a new key made here (EC P-256), and a certificate signing request
 *     for the worker's name sent with the token's ID.SECRET;
 *  3. the certificate in the answer must be for that key and verify
 *     under the CA: then key (0600), certificate and CA are written to
 *     state_dir, each through a temporary file and a rename.
 *
 * The private key never leaves the node.  Once connected, the link asks
 * for a new certificate (a new key too) renew_before its end, and the
 * next connection uses it.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "join.h"
#include "log.h"
#include "tls.h"
#include "util.h"
#include "workerd.h"

#define JOIN_IO_TIMEOUT		30	/* s, each step of a join */
#define JOIN_ANSWER_MAX		(1u << 20)
#define RENEW_RETRY_S		600	/* after a failed renewal */

static struct {
	int			 managed;	/* our TLS files are state_dir's */
	char			 ca[CONF_STRMAX + 16];
	char			 cert[CONF_STRMAX + 16];
	char			 key[CONF_STRMAX + 16];
	char			 master[CONF_STRMAX + 16];
	uint64_t		 renew_before;	/* ms */
	struct event_base	*base;
	struct event		*renew;		/* the renewal's timer */
	EVP_PKEY		*pending;	/* key of a renewal asked for */
	uint64_t		 reqid;
	char			 dir[CONF_STRMAX];	/* state_dir */
	int			 chown;		/* root writing for the
						   directory's owner: */
	uid_t			 uid;		/* files get its owner */
	gid_t			 gid;		/* and group */
} js;

/* Why a join failed: worth trying again (the network, a busy master)? */
enum join_fail {
	JOIN_OK,
	JOIN_RETRY,
	JOIN_FATAL
};

static const char *
join_ssl_error(char *buf, size_t len)
{
	unsigned long	 e = ERR_peek_last_error();

	if (e != 0)
		ERR_error_string_n(e, buf, len);
	else if (errno != 0)
		snprintf(buf, len, "%s", strerror(errno));
	else
		snprintf(buf, len, "connection closed");
	ERR_clear_error();
	return (buf);
}

/* A certificate's end for a log line (a static buffer). */
static const char *
join_when(time_t t)
{
	static char	 buf[40];
	struct tm	 tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	return (buf);
}

static int	join_write(const char *, const void *, size_t, mode_t, char *,
		    size_t);

/* Set state_dir's three paths. */
static void
join_paths(const char *dir)
{
	snprintf(js.dir, sizeof(js.dir), "%s", dir);
	snprintf(js.ca, sizeof(js.ca), "%s/ca.pem", dir);
	snprintf(js.cert, sizeof(js.cert), "%s/worker.pem", dir);
	snprintf(js.key, sizeof(js.key), "%s/worker.key", dir);
	snprintf(js.master, sizeof(js.master), "%s/master", dir);
}

/*
 * A worker that joined keeps the master it joined in state_dir/master, so
 * that a restart with only state_dir (no token, no master) reconnects.
 */
static void
join_master_keep(const char *hostport)
{
	char	 line[CONF_STRMAX + 2], err[1024];
	int	 n;

	n = snprintf(line, sizeof(line), "%s\n", hostport);
	if (n < 0 || (size_t)n >= sizeof(line) ||
	    join_write(js.master, line, (size_t)n, 0600, err,
	    sizeof(err)) == -1)
		log_warnx("cannot keep the master's address: %s; a restart "
		    "needs the master named (-m)", n < 0 ||
		    (size_t)n >= sizeof(line) ? "too long" : err);
}

/*
 * c names no master and no join: take state_dir/master's if there is one.
 * quiet at a reload.
 */
static void
join_master_use(struct workerd_config *c, int quiet)
{
	FILE	*f;
	char	 line[CONF_STRMAX + 2], why[256];

	if (!c->master_unnamed || (f = fopen(js.master, "re")) == NULL)
		return;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '\0' || link_master_list(line, why, sizeof(why)) == -1) {
		log_warnx("%s: not a master's address (%s); using %s",
		    js.master, line[0] == '\0' ? "empty" : why, c->master);
		return;
	}
	snprintf(c->master, sizeof(c->master), "%s", line);
	if (!quiet)
		log_info("master %s, kept in %s at the join", c->master,
		    js.master);
}

/*
 * Do state_dir's files make a worker named name (NULL: any)?  0, or -1
 * with why.
 */
static int
join_state_ok(const char *name, char *why, size_t whylen)
{
	struct tls_check	 tc;
	char			 role[32], cn[64];

	memset(&tc, 0, sizeof(tc));
	tc.tc_ca = js.ca;
	tc.tc_cert = js.cert;
	tc.tc_key = js.key;
	tc.tc_role = "worker";
	tc.tc_daemon = "workerd";
	tc.tc_crl = "none";
	if (tls_check_files(&tc, why, whylen) == -1)
		return (-1);
	if (name != NULL && name[0] != '\0' && (tls_cert_cn(js.cert, role,
	    sizeof(role), cn, sizeof(cn)) == -1 || strcmp(cn, name) != 0)) {
		snprintf(why, whylen, "%.700s is for worker %s, not %.64s",
		    js.cert, cn, name);
		return (-1);
	}
	return (0);
}

/* Write len bytes to path through path.tmp and a rename, mode mode. */
static int
join_write(const char *path, const void *p, size_t len, mode_t mode,
    char *err, size_t errlen)
{
	char	 tmp[CONF_STRMAX + 24];
	int	 fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode)) == -1 ||
	    (js.chown && fchown(fd, js.uid, js.gid) == -1) ||
	    fchmod(fd, mode) == -1 ||
	    write(fd, p, len) != (ssize_t)len ||
	    fsync(fd) == -1) {
		snprintf(err, errlen, "%.900s: %s", tmp, strerror(errno));
		if (fd != -1)
			close(fd);
		(void)unlink(tmp);
		return (-1);
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		snprintf(err, errlen, "%.900s: %s", path, strerror(errno));
		(void)unlink(tmp);
		return (-1);
	}
	return (0);
}

/* A PEM encoding of key (private) or x (certificate), malloc'd. */
static char *
join_pem(EVP_PKEY *key, X509 *x, size_t *len)
{
	BIO	*b;
	BUF_MEM	*bm;
	char	*p = NULL;

	if ((b = BIO_new(BIO_s_mem())) == NULL)
		return (NULL);
	if ((key != NULL ? PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0,
	    NULL, NULL) : PEM_write_bio_X509(b, x)) == 1) {
		BIO_get_mem_ptr(b, &bm);
		p = xcalloc(1, bm->length + 1);
		memcpy(p, bm->data, bm->length);
		*len = bm->length;
	}
	BIO_free(b);
	return (p);
}

/* A new key and a signing request for name with it (DER, malloc'd). */
static EVP_PKEY *
join_csr(const char *name, unsigned char **der, size_t *derlen, char *err,
    size_t errlen)
{
	EVP_PKEY	*key;
	X509_REQ	*req = NULL;
	X509_NAME	*subj;
	unsigned char	*p = NULL;
	char		 e[256];
	int		 n;

	if ((key = EVP_EC_gen("P-256")) == NULL)
		goto fail;
	if ((req = X509_REQ_new()) == NULL ||
	    X509_REQ_set_version(req, 0) != 1 ||
	    (subj = X509_REQ_get_subject_name(req)) == NULL ||
	    X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC,
	    (const unsigned char *)"R3Q", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_ASC,
	    (const unsigned char *)"worker", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
	    (const unsigned char *)name, -1, -1, 0) != 1 ||
	    X509_REQ_set_pubkey(req, key) != 1 ||
	    X509_REQ_sign(req, key, EVP_sha256()) <= 0 ||
	    (n = i2d_X509_REQ(req, &p)) <= 0)
		goto fail;
	*der = p;
	*derlen = (size_t)n;
	X509_REQ_free(req);
	return (key);
fail:
	snprintf(err, errlen, "cannot make a key and a certificate request: "
	    "%s", join_ssl_error(e, sizeof(e)));
	X509_REQ_free(req);
	EVP_PKEY_free(key);
	return (NULL);
}

/*
 * Check a certificate the master sent (PEM) against our key and the CA,
 * and keep key, certificate and CA in state_dir.
 */
static int
join_keep(const ProtobufCBinaryData *pem, EVP_PKEY *key, X509 *ca,
    time_t *not_after, char *err, size_t errlen)
{
	X509_STORE	*st = NULL;
	X509_STORE_CTX	*vc = NULL;
	X509		*x = NULL;
	BIO		*b;
	char		*kp = NULL, *cp = NULL, *ap = NULL;
	size_t		 kl, cl, al;
	int		 rc = -1;

	if ((b = BIO_new_mem_buf(pem->data, (int)pem->len)) == NULL ||
	    (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) == NULL) {
		ERR_clear_error();
		snprintf(err, errlen, "the master's answer holds no "
		    "certificate");
		goto done;
	}
	if (X509_check_private_key(x, key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "the certificate the master sent is not "
		    "for our key");
		goto done;
	}
	if ((st = X509_STORE_new()) == NULL || X509_STORE_add_cert(st,
	    ca) != 1 || (vc = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(vc, st, x, NULL) != 1 ||
	    X509_verify_cert(vc) != 1) {
		snprintf(err, errlen, "the certificate the master sent does "
		    "not verify under the CA: %s", vc == NULL ? "no memory" :
		    X509_verify_cert_error_string(
		    X509_STORE_CTX_get_error(vc)));
		ERR_clear_error();
		goto done;
	}
	if ((kp = join_pem(key, NULL, &kl)) == NULL ||
	    (cp = join_pem(NULL, x, &cl)) == NULL ||
	    (ap = join_pem(NULL, ca, &al)) == NULL) {
		snprintf(err, errlen, "cannot encode the key or certificates");
		goto done;
	}
	if (join_write(js.key, kp, kl, 0600, err, errlen) == -1 ||
	    join_write(js.cert, cp, cl, 0644, err, errlen) == -1 ||
	    join_write(js.ca, ap, al, 0644, err, errlen) == -1)
		goto done;
	*not_after = tls_cert_not_after(x);
	rc = 0;
done:
	if (kp != NULL)
		OPENSSL_cleanse(kp, kl);
	free(kp);
	free(cp);
	free(ap);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	X509_free(x);
	BIO_free(b);
	return (rc);
}

/* A TCP connection to host:port within JOIN_IO_TIMEOUT; -1 with why. */
static int
join_dial(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo	 hints, *res, *ai;
	struct timeval	 tv = { JOIN_IO_TIMEOUT, 0 };
	int		 fd = -1, rc, e = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol)) == -1) {
			e = errno;
			continue;
		}
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1)
		snprintf(err, errlen, "cannot connect: %s", strerror(e));
	return (fd);
}

/*
 * Is the master's chain the token's cluster?  A certificate in it must
 * have the token's CA hash, and the master's own must verify under it
 * for host.  The CA (a reference) in *cap.
 */
static enum join_fail
join_check_master(SSL *ssl, const char *host, const char *hash, X509 **cap,
    char *err, size_t errlen)
{
	STACK_OF(X509)		*chain;
	X509_STORE		*st = NULL;
	X509_STORE_CTX		*vc = NULL;
	X509_VERIFY_PARAM	*vp;
	X509			*ca = NULL, *leaf;
	unsigned char		 ip[16];
	char			 h[JOIN_HASH_HEX + 1], role[32] = "", cn[64] = "";
	int			 i, ok = 0;

	if ((chain = SSL_get_peer_cert_chain(ssl)) == NULL ||
	    (leaf = SSL_get0_peer_certificate(ssl)) == NULL) {
		snprintf(err, errlen, "the master sent no certificate");
		return (JOIN_FATAL);
	}
	for (i = 0; i < sk_X509_num(chain); i++)
		if (join_cert_hash(sk_X509_value(chain, i), h) == 0 &&
		    strcmp(h, hash) == 0)
			ca = sk_X509_value(chain, i);
	if (ca == NULL) {
		snprintf(err, errlen, "the master at %.300s does not prove to "
		    "be of this token's cluster: no certificate of its chain "
		    "has the token's CA hash %.16s...; the token is for "
		    "another cluster, someone is in between, or the master "
		    "takes no join tokens (no ca_key in its masterd.conf): "
		    "refusing this master", host, hash);
		return (JOIN_FATAL);
	}
	if ((st = X509_STORE_new()) == NULL || X509_STORE_add_cert(st,
	    ca) != 1 || (vc = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(vc, st, leaf, chain) != 1)
		goto done;
	vp = X509_STORE_CTX_get0_param(vc);
	X509_VERIFY_PARAM_set_purpose(vp, X509_PURPOSE_SSL_SERVER);
	/* The host in the subjectAltName only, as tls_client_ssl(). */
	X509_VERIFY_PARAM_set_hostflags(vp,
	    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS |
	    X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
	if (inet_pton(AF_INET, host, ip) == 1 ||
	    inet_pton(AF_INET6, host, ip) == 1)
		X509_VERIFY_PARAM_set1_ip_asc(vp, host);
	else
		X509_VERIFY_PARAM_set1_host(vp, host, 0);
	ok = X509_verify_cert(vc) == 1;
	if (!ok)
		snprintf(err, errlen, "the master's certificate does not verify "
		    "under the token's CA for %s: %s: refusing this master",
		    host, X509_verify_cert_error_string(
		    X509_STORE_CTX_get_error(vc)));
	/*
	 * Any certificate of the CA may verify for a host (a relay's, a
	 * worker's with a subjectAltName); only the master's (OU=master)
	 * is given the token, which is a credential.
	 */
	else if (tls_x509_identity(leaf, role, sizeof(role), cn,
	    sizeof(cn)) == -1 || strcmp(role, "master") != 0) {
		ok = 0;
		snprintf(err, errlen, "the peer at %s is not a master (role "
		    "'%s', name '%s'): its certificate is of the token's CA, "
		    "but only masterd's (OU=master) is given a token: "
		    "refusing it; point --join at masterd itself, not at a "
		    "relay or a worker", host, role[0] ? role : "none",
		    cn[0] ? cn : "none");
	}
done:
	if (!ok && vc == NULL)
		snprintf(err, errlen, "cannot check the master's certificate");
	ERR_clear_error();
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	if (!ok)
		return (JOIN_FATAL);
	X509_up_ref(ca);
	*cap = ca;
	return (JOIN_OK);
}

/* Read n bytes from ssl; -1 on an error or a close. */
static int
join_read(SSL *ssl, void *buf, size_t n)
{
	size_t	 got;

	while (n > 0) {
		if (SSL_read_ex(ssl, buf, n, &got) != 1)
			return (-1);
		buf = (char *)buf + got;
		n -= got;
	}
	return (0);
}

/*
 * One frame from the master, or why not: a TLS alert that it wants a
 * certificate means it takes no joiners (permanent); anything else may
 * pass.
 */
static enum join_fail
join_recv(SSL *ssl, const char *hostport, Envelope **envp, char *err,
    size_t errlen)
{
	uint8_t		 hdr[FRAME_HDRLEN], *body;
	uint32_t	 blen;
	char		 e[256];

	*envp = NULL;
	errno = 0;
	if (join_read(ssl, hdr, sizeof(hdr)) == -1) {
		if (ERR_GET_REASON(ERR_peek_last_error()) ==
		    SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) {
			ERR_clear_error();
			snprintf(err, errlen, "the master at %.300s wants a "
			    "certificate from every peer: it takes no join "
			    "tokens (its masterd.conf has no ca_key)",
			    hostport);
			return (JOIN_FATAL);
		}
		snprintf(err, errlen, "no answer from %.300s: %s", hostport,
		    join_ssl_error(e, sizeof(e)));
		return (JOIN_RETRY);
	}
	if (frame_header_decode(hdr, JOIN_ANSWER_MAX, &blen, e,
	    sizeof(e)) == -1) {
		snprintf(err, errlen, "bad answer from %.300s: %s", hostport, e);
		return (JOIN_FATAL);
	}
	body = xcalloc(1, blen + 1);
	e[0] = '\0';
	if (join_read(ssl, body, blen) == -1 || frame_unpack(body, blen,
	    JOIN_ANSWER_MAX, envp, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "bad answer from %.300s: %s", hostport,
		    e[0] != '\0' ? e : "cut short");
		free(body);
		*envp = NULL;
		return (JOIN_RETRY);
	}
	free(body);
	return (JOIN_OK);
}

/* One try at joining: see the top of the file. */
static enum join_fail
join_once(const char *hostport, const struct join_token *t,
    const char *name, char *err, size_t errlen)
{
	Envelope		 env = R3Q__ENVELOPE__INIT, *ans = NULL;
	R3q__JoinRequest	 jr = R3Q__JOIN_REQUEST__INIT;
	SSL_CTX			*ctx = NULL;
	SSL			*ssl = NULL;
	EVP_PKEY		*key = NULL;
	X509			*ca = NULL;
	unsigned char		*der = NULL;
	uint8_t			*buf = NULL;
	unsigned char		 ip[16];
	char			 host[256], port[16], e[256];
	char			 idsec[JOIN_ID_HEX + JOIN_SECRET_HEX + 2];
	size_t			 derlen, len;
	time_t			 end;
	enum join_fail		 rc = JOIN_RETRY;
	int			 fd = -1;

	if (conf_split_hostport(hostport, host, sizeof(host), port,
	    sizeof(port), "7411") == -1) {
		snprintf(err, errlen, "join: bad address %.300s", hostport);
		return (JOIN_FATAL);
	}
	if ((fd = join_dial(host, port, err, errlen)) == -1)
		return (JOIN_RETRY);
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    (ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1) {
		snprintf(err, errlen, "TLS: %s", join_ssl_error(e, sizeof(e)));
		goto done;
	}
	/* Nothing is trusted before the token's hash: checked below. */
	SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL);
	if (inet_pton(AF_INET, host, ip) != 1 &&
	    inet_pton(AF_INET6, host, ip) != 1)
		(void)SSL_set_tlsext_host_name(ssl, host);
	errno = 0;
	if (SSL_connect(ssl) != 1) {
		snprintf(err, errlen, "TLS handshake with %.300s: %s", hostport,
		    join_ssl_error(e, sizeof(e)));
		goto done;
	}
	if ((rc = join_check_master(ssl, host, t->jt_hash, &ca, err,
	    errlen)) != JOIN_OK)
		goto done;
	/* The master's greeting, or the alert of one without joiners. */
	rc = join_recv(ssl, hostport, &ans, err, errlen);
	if (rc != JOIN_OK)
		goto done;
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOIN_ANSWER ||
	    ans->join_answer->cert.len != 0) {
		snprintf(err, errlen, "unexpected %s greeting from %.300s",
		    frame_body_name(ans), hostport);
		rc = JOIN_FATAL;
		goto done;
	}
	frame_free(ans);
	ans = NULL;
	rc = JOIN_FATAL;
	if ((key = join_csr(name, &der, &derlen, err, errlen)) == NULL)
		goto done;
	snprintf(idsec, sizeof(idsec), "%s.%s", t->jt_id, t->jt_secret);
	jr.protocol = R3Q_PROTOCOL;
	jr.token = idsec;
	jr.csr.data = der;
	jr.csr.len = derlen;
	env.id = 1;
	env.body_case = R3Q__ENVELOPE__BODY_JOIN_REQUEST;
	env.join_request = &jr;
	buf = frame_pack(&env, &len);
	OPENSSL_cleanse(idsec, sizeof(idsec));
	rc = JOIN_RETRY;
	errno = 0;
	if (buf == NULL || SSL_write(ssl, buf, (int)len) != (int)len) {
		snprintf(err, errlen, "cannot send to %.300s: %s", hostport,
		    join_ssl_error(e, sizeof(e)));
		goto done;
	}
	if ((rc = join_recv(ssl, hostport, &ans, err, errlen)) != JOIN_OK)
		goto done;
	rc = JOIN_RETRY;
	if (ans->body_case == R3Q__ENVELOPE__BODY_ERROR) {
		snprintf(err, errlen, "the master %.300s refused to join us: %s",
		    hostport, ans->error->message);
		rc = ans->error->code == R3Q_ERROR_BUSY ? JOIN_RETRY :
		    JOIN_FATAL;
		goto done;
	}
	if (ans->body_case != R3Q__ENVELOPE__BODY_JOIN_ANSWER) {
		snprintf(err, errlen, "unexpected %s answer from %.300s",
		    frame_body_name(ans), hostport);
		rc = JOIN_FATAL;
		goto done;
	}
	rc = JOIN_FATAL;
	if (join_keep(&ans->join_answer->cert, key, ca, &end, err,
	    errlen) == -1)
		goto done;
	log_info("joined the cluster of %.300s as %s: certificate in %s, until "
	    "%s", hostport, name, js.cert, join_when(end));
	join_master_keep(hostport);
	rc = JOIN_OK;
done:
	if (ans != NULL)
		frame_free(ans);
	free(buf);
	OPENSSL_free(der);
	EVP_PKEY_free(key);
	X509_free(ca);
	if (ssl != NULL)
		SSL_shutdown(ssl);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	if (fd != -1)
		close(fd);
	return (rc);
}

/*
 * Can we write our files in the state directory?  Asked before a token
 * is spent (a join whose certificate cannot be kept spends a use and
 * leaves a certificate nobody holds) and before a renewal is asked for.
 * Root writing in a directory another user owns (the daemons' user's
 * /var/lib/r3q) makes the files that user's, so that the unit, which runs
 * as that user, can read them after a join by hand.
 */
static int
join_writable(char *err, size_t errlen)
{
	struct stat	 st;
	char		 tmp[CONF_STRMAX + 32];
	int		 fd;

	if (stat(js.dir, &st) == -1) {
		snprintf(err, errlen, "state_dir %s: %s", js.dir,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "state_dir %s: not a directory",
		    js.dir);
		return (-1);
	}
	js.chown = geteuid() == 0 && st.st_uid != 0;
	js.uid = st.st_uid;
	js.gid = st.st_gid;
	snprintf(tmp, sizeof(tmp), "%s/.writable.%ld", js.dir,
	    (long)getpid());
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "state_dir %s cannot be written by "
		    "uid %ld: %s; so no token is spent and no certificate "
		    "asked for: make it the user's that workerd runs as (under "
		    "workerd.service, StateDirectory= does), or join as that "
		    "user (runuser -u r3q -- workerd --join ...)", js.dir,
		    (long)geteuid(), strerror(errno));
		return (-1);
	}
	close(fd);
	(void)unlink(tmp);
	return (0);
}

/* The state directory, made 0700 if missing (its last level only). */
static int
join_mkdir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "state_dir %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	return (join_writable(err, errlen));
}

/*
 * At start: use state_dir's certificate, joining first if need be (see
 * the top of the file).  c's ca, cert and key then name state_dir's
 * files.  Joining waits and tries again while the master cannot be
 * reached or is busy; anything else is -1 with why.
 */
int
join_setup(struct workerd_config *c, char *err, size_t errlen)
{
	struct join_token	 t;
	struct stat		 st;
	char			 name[256], hostport[CONF_STRMAX];
	char			 why[1024], *sp;
	uint64_t		 backoff = 1000;
	enum join_fail		 rc;

	join_paths(c->state_dir);
	js.renew_before = c->renew_before;
	if (c->join[0] == '\0' && stat(js.cert, &st) == -1)
		return (0);
	if (c->name[0] != '\0')
		snprintf(name, sizeof(name), "%.255s", c->name);
	else if (gethostname(name, sizeof(name)) == -1) {
		snprintf(err, errlen, "gethostname: %s; set 'name' (-N)",
		    strerror(errno));
		return (-1);
	}
	name[sizeof(name) - 1] = '\0';
	/* Without a name given, the certificate's is the worker's. */
	if (join_state_ok(c->name[0] != '\0' ? name : NULL, why,
	    sizeof(why)) == 0)
		goto use;
	if (c->join[0] == '\0') {
		snprintf(err, errlen, "state_dir %s: %s; give a join token "
		    "(--join HOST:PORT TOKEN) to join again", c->state_dir,
		    why);
		return (-1);
	}
	if (stat(js.cert, &st) == 0)
		log_warnx("state_dir %s: %s: joining again", c->state_dir,
		    why);
	/* "HOST:PORT TOKEN" */
	snprintf(hostport, sizeof(hostport), "%.900s", c->join);
	if ((sp = strchr(hostport, ' ')) == NULL) {
		snprintf(err, errlen, "join: '%s' is not HOST:PORT TOKEN",
		    c->join);
		return (-1);
	}
	*sp++ = '\0';
	while (*sp == ' ')
		sp++;
	if (join_token_parse(sp, &t, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "join: %s", why);
		return (-1);
	}
	if (join_name_check(name, strlen(name), why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s; set 'name' (-N) to a name the "
		    "master takes", why);
		return (-1);
	}
	if (join_mkdir(c->state_dir, err, errlen) == -1)
		return (-1);
	for (;;) {
		rc = join_once(hostport, &t, name, why, sizeof(why));
		if (rc == JOIN_OK)
			break;
		if (rc == JOIN_FATAL) {
			snprintf(err, errlen, "%s", why);
			OPENSSL_cleanse(&t, sizeof(t));
			return (-1);
		}
		log_warnx("join: %s; trying again in %llu ms", why,
		    (unsigned long long)backoff);
		usleep((useconds_t)backoff * 1000);
		backoff = backoff * 2 > c->reconnect_max ? c->reconnect_max :
		    backoff * 2;
	}
	OPENSSL_cleanse(&t, sizeof(t));
use:
	js.managed = 1;
	join_master_use(c, 0);
	snprintf(c->ca, sizeof(c->ca), "%.1000s", js.ca);
	snprintf(c->cert, sizeof(c->cert), "%.1000s", js.cert);
	snprintf(c->key, sizeof(c->key), "%.1000s", js.key);
	return (0);
}

/*
 * workerd -n: with a join token or a state_dir certificate, check
 * state_dir's files instead of ca, cert and key.  1 if the worker has not
 * joined yet (it will at start: nothing to check), else 0.
 */
int
join_noaction(struct workerd_config *c)
{
	struct stat	 st;

	join_paths(c->state_dir);
	if (stat(js.cert, &st) == -1)
		return (c->join[0] != '\0');
	snprintf(c->ca, sizeof(c->ca), "%.1000s", js.ca);
	snprintf(c->cert, sizeof(c->cert), "%.1000s", js.cert);
	snprintf(c->key, sizeof(c->key), "%.1000s", js.key);
	return (0);
}

/* At a reload: the TLS files stay state_dir's. */
void
join_reload(struct workerd_config *c)
{
	if (!js.managed)
		return;
	snprintf(c->ca, sizeof(c->ca), "%.1000s", js.ca);
	snprintf(c->cert, sizeof(c->cert), "%.1000s", js.cert);
	snprintf(c->key, sizeof(c->key), "%.1000s", js.key);
	js.renew_before = c->renew_before;
	join_master_use(c, 1);
}

/* Ask the master for a new certificate, over the link. */
static void
join_renew_cb(evutil_socket_t fd, short ev, void *arg)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__JoinRequest	 jr = R3Q__JOIN_REQUEST__INIT;
	unsigned char		*der = NULL;
	size_t			 derlen;
	char			 role[32], cn[64], err[512];

	(void)fd;
	(void)ev;
	(void)arg;
	if (tls_cert_cn(js.cert, role, sizeof(role), cn, sizeof(cn)) == -1) {
		log_warnx("renewal: cannot read the name in %s", js.cert);
		return;
	}
	if (join_writable(err, sizeof(err)) == -1) {
		log_warnx("renewal: %s; trying again in %d s", err,
		    RENEW_RETRY_S);
		join_renew_arm(RENEW_RETRY_S * 1000ULL);
		return;
	}
	EVP_PKEY_free(js.pending);
	if ((js.pending = join_csr(cn, &der, &derlen, err,
	    sizeof(err))) == NULL) {
		log_warnx("renewal: %s", err);
		return;
	}
	jr.protocol = R3Q_PROTOCOL;
	jr.token = (char *)(uintptr_t)"";
	jr.csr.data = der;
	jr.csr.len = derlen;
	env.id = js.reqid = 0x72656e6577ULL;	/* "renew" */
	env.body_case = R3Q__ENVELOPE__BODY_JOIN_REQUEST;
	env.join_request = &jr;
	log_info("asking the master for a new certificate (ours, %s, ends "
	    "within renew_before)", js.cert);
	link_send(&env);
	OPENSSL_free(der);
	/* No answer (a drop, a refusal): ask again later. */
	join_renew_arm(RENEW_RETRY_S * 1000ULL);
}

/* Arm the renewal ms from now (or, with ms ~0, from our certificate). */
void
join_renew_arm(uint64_t ms)
{
	struct timeval	 tv;
	X509		*x = NULL;
	FILE		*f;
	time_t		 end = 0, now = time(NULL), left;

	if (!js.managed || js.base == NULL)
		return;
	if (ms == UINT64_MAX) {
		if ((f = fopen(js.cert, "r")) != NULL) {
			x = PEM_read_X509(f, NULL, NULL, NULL);
			fclose(f);
		}
		ERR_clear_error();
		if (x == NULL)
			return;
		end = tls_cert_not_after(x);
		X509_free(x);
		left = end > now ? end - now : 0;
		/*
		 * renew_before its end; if it lives less than that, half
		 * way through what it has left.
		 */
		if ((uint64_t)left * 1000 > js.renew_before)
			ms = (uint64_t)left * 1000 - js.renew_before;
		else
			ms = (uint64_t)left * 500;
	}
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if (js.renew == NULL && (js.renew = evtimer_new(js.base,
	    join_renew_cb, NULL)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(js.renew, &tv);
}

/* The link is up: renew in good time. */
void
join_link_up(struct event_base *base)
{
	js.base = base;
	if (js.managed && (js.renew == NULL ||
	    !evtimer_pending(js.renew, NULL)))
		join_renew_arm(UINT64_MAX);
}

/* The master's answer to a renewal: keep it, use it from now on. */
void
join_renewed(const R3q__JoinAnswer *ja)
{
	X509		*ca = NULL;
	FILE		*f;
	char		 err[512];
	time_t		 end;

	if (js.pending == NULL) {
		log_warnx("a certificate from the master, not asked for: "
		    "ignored");
		return;
	}
	if ((f = fopen(js.ca, "r")) != NULL) {
		ca = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
	}
	ERR_clear_error();
	if (ca == NULL) {
		log_warnx("renewal: cannot read %s", js.ca);
		goto done;
	}
	if (join_keep(&ja->cert, js.pending, ca, &end, err,
	    sizeof(err)) == -1) {
		log_warnx("renewal: %s", err);
		goto done;
	}
	log_info("renewed our certificate: %s, until %s", js.cert,
	    join_when(end));
	link_ctx_renewed();
	join_renew_arm(UINT64_MAX);
done:
	X509_free(ca);
	EVP_PKEY_free(js.pending);
	js.pending = NULL;
}

void
join_stop(void)
{
	if (js.renew != NULL)
		event_free(js.renew);
	js.renew = NULL;
	EVP_PKEY_free(js.pending);
	js.pending = NULL;
}
