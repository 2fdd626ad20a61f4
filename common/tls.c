#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls.h"

/* A revocation list: the CRLs of one file (tls.h). */
struct tls_crl {
	char			*cr_path;
	STACK_OF(X509_CRL)	*cr_crls;
};

/*
 * What made a peer's certificate fail verification, kept on its SSL for
 * the log line (tls_describe_error): which certificate, not only why.
 */
static int		 tls_exidx = -1;
static pthread_once_t	 tls_exonce = PTHREAD_ONCE_INIT;

static void	tls_time_str(const ASN1_TIME *, char *, size_t);
static int	tls_name_field(X509_NAME *, int, char *, size_t);

/* Put the first OpenSSL error on the queue into err. */
static void
tls_openssl_error(char *err, size_t errlen, const char *what,
    const char *path)
{
	char		 buf[256];
	unsigned long	 e;

	e = ERR_peek_last_error();
	if (e != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%s", strerror(errno));
	ERR_clear_error();
	snprintf(err, errlen, "%s %s: %s", what, path, buf);
}

/*
 * A key protected by a passphrase: fail and note it, rather than prompt on
 * a terminal a daemon has not got.
 */
static int
tls_no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	int	*asked = arg;

	(void)buf;
	(void)size;
	(void)rwflag;
	if (asked != NULL)
		*asked = 1;
	return (-1);
}

/* An OpenSSL error that is real, not one of libevent's SSL_ERROR_* codes. */
static int
tls_real_error(unsigned long e)
{
	return (e != 0 && ERR_GET_LIB(e) != 0);
}

/* A certificate time as "2026-11-21 10:00:00 UTC". */
static void
tls_time_str(const ASN1_TIME *t, char *buf, size_t len)
{
	struct tm	 tm;

	memset(&tm, 0, sizeof(tm));
	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1 ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(buf, len, "an unreadable date");
}

/* Say plainly when a file is missing, before OpenSSL says it obscurely. */
static int
tls_readable(const char *path, char *err, size_t errlen)
{
	if (access(path, R_OK) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

static void
tls_exfree(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
    void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

static void
tls_exinit(void)
{
	tls_exidx = SSL_get_ex_new_index(0, NULL, NULL, NULL, tls_exfree);
}

/*
 * A certificate for a log line: its subject and serial number, as
 * "/O=R3Q/OU=worker/CN=w1 (serial 5A3F...)".
 */
void
tls_cert_describe(X509 *x, char *buf, size_t len)
{
	BIGNUM	*bn;
	char	 subj[256], *hex = NULL;

	if (x == NULL) {
		snprintf(buf, len, "no certificate");
		return;
	}
	X509_NAME_oneline(X509_get_subject_name(x), subj, sizeof(subj));
	if ((bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL)) != NULL)
		hex = BN_bn2hex(bn);
	snprintf(buf, len, "%s (serial %s)", subj[0] ? subj : "an empty "
	    "subject", hex != NULL ? hex : "unknown");
	OPENSSL_free(hex);
	BN_free(bn);
	ERR_clear_error();
}

/*
 * A verification step that failed only on a CRL's dates passes: a CRL
 * past its nextUpdate (or not yet valid by our clock) still counts, its
 * revocations hold, and the daemons warn about its dates; refusing every
 * peer because a CRL was not renewed in time would take a whole cluster
 * down.  1 if it passes (ok, or only the dates), 0 if not.
 */
int
tls_verify_crl_dates(int ok, X509_STORE_CTX *vctx)
{
	int	 e;

	if (ok)
		return (1);
	e = X509_STORE_CTX_get_error(vctx);
	if (e == X509_V_ERR_CRL_HAS_EXPIRED ||
	    e == X509_V_ERR_CRL_NOT_YET_VALID) {
		X509_STORE_CTX_set_error(vctx, X509_V_OK);
		return (1);
	}
	return (0);
}

/*
 * The verification callback of every context, and of the preflight: as
 * tls_verify_crl_dates(), and on a real failure, note which certificate
 * it was.
 */
static int
tls_verify_cb(int ok, X509_STORE_CTX *vctx)
{
	SSL	*ssl;
	X509	*x;
	char	 desc[640], subj[512], when[64], *d;
	int	 e;

	if (tls_verify_crl_dates(ok, vctx))
		return (1);
	e = X509_STORE_CTX_get_error(vctx);
	ssl = X509_STORE_CTX_get_ex_data(vctx,
	    SSL_get_ex_data_X509_STORE_CTX_idx());
	x = X509_STORE_CTX_get_current_cert(vctx);
	if (ssl == NULL || x == NULL || tls_exidx == -1 ||
	    SSL_get_ex_data(ssl, tls_exidx) != NULL)
		return (0);
	tls_cert_describe(x, subj, sizeof(subj));
	if (e == X509_V_ERR_CERT_HAS_EXPIRED) {
		tls_time_str(X509_get0_notAfter(x), when, sizeof(when));
		snprintf(desc, sizeof(desc), "%s, expired on %s", subj, when);
	} else if (e == X509_V_ERR_CERT_NOT_YET_VALID) {
		tls_time_str(X509_get0_notBefore(x), when, sizeof(when));
		snprintf(desc, sizeof(desc), "%s, not valid before %s", subj,
		    when);
	} else
		snprintf(desc, sizeof(desc), "%s", subj);
	if ((d = strdup(desc)) != NULL && SSL_set_ex_data(ssl, tls_exidx,
	    d) != 1)
		free(d);
	return (0);
}

/*
 * A private key file readable, writable or runnable by anyone but its
 * owner is refused, as OpenSSH refuses one: "permissions 0644 for 'x.key'
 * are too open".  Group-readable too: a key is its owner's, which is the
 * user the daemon (or the client) runs as.
 */
int
tls_key_mode_ok(const char *path, char *err, size_t errlen)
{
	struct stat	 st;

	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "permissions 0%03o for '%s' are too "
		    "open: a private key must be readable by its owner only "
		    "(chmod 600, owned by the user that reads it)",
		    (unsigned)(st.st_mode & 0777), path);
		return (-1);
	}
	return (0);
}

/*
 * A context that requires TLS 1.3 and a peer certificate signed by ca, and
 * presents cert/key.  The same shape serves both ends.
 */
SSL_CTX *
tls_ctx_new(int server, const char *ca, const char *cert, const char *key,
    char *err, size_t errlen)
{
	SSL_CTX	*ctx;

	ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (ctx == NULL) {
		tls_openssl_error(err, errlen, "cannot create", "TLS context");
		return (NULL);
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	if (tls_readable(ca, err, errlen) == -1 ||
	    tls_readable(cert, err, errlen) == -1 ||
	    tls_readable(key, err, errlen) == -1 ||
	    tls_key_mode_ok(key, err, errlen) == -1)
		goto fail;
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		tls_openssl_error(err, errlen, "cannot load CA", ca);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		tls_openssl_error(err, errlen, "cannot load certificate", cert);
		goto fail;
	}
	SSL_CTX_set_default_passwd_cb(ctx, tls_no_passphrase);
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		tls_openssl_error(err, errlen, "cannot load key", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "%s: does not match certificate %s", key,
		    cert);
		goto fail;
	}
	pthread_once(&tls_exonce, tls_exinit);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, tls_verify_cb);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (server)
		SSL_CTX_set_num_tickets(ctx, 0);
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	return (NULL);
}

/* A client connection that verifies the server's name or address. */
SSL *
tls_client_ssl(SSL_CTX *ctx, const char *host, char *err, size_t errlen)
{
	SSL			*ssl;
	X509_VERIFY_PARAM	*param;
	unsigned char		 addr[16];
	int			 isip;

	if ((ssl = SSL_new(ctx)) == NULL) {
		tls_openssl_error(err, errlen, "cannot create", "TLS session");
		return (NULL);
	}
	param = SSL_get0_param(ssl);
	isip = inet_pton(AF_INET, host, addr) == 1 ||
	    inet_pton(AF_INET6, host, addr) == 1;
	if (isip) {
		if (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1)
			goto fail;
	} else {
		/*
		 * The name must be in the subjectAltName: a CN is a role's
		 * name here (CN=localhost is a worker's name a token holder
		 * may ask for), never a host.
		 */
		X509_VERIFY_PARAM_set_hostflags(param,
		    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS |
		    X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
		if (X509_VERIFY_PARAM_set1_host(param, host, 0) != 1 ||
		    SSL_set_tlsext_host_name(ssl, host) != 1)
			goto fail;
	}
	return (ssl);
fail:
	tls_openssl_error(err, errlen, "cannot verify host", host);
	SSL_free(ssl);
	return (NULL);
}

/* Copy one text field of a subject name; -1 if missing. */
static int
tls_name_field(X509_NAME *subj, int nid, char *buf, size_t len)
{
	int	 n;

	n = X509_NAME_get_text_by_NID(subj, nid, buf, (int)len);
	if (n <= 0 || (size_t)n >= len)
		return (-1);
	return (0);
}

/* A certificate's role (OU) and name (CN); -1 if it has none. */
int
tls_x509_identity(X509 *x, char *role, size_t rolelen, char *name,
    size_t namelen)
{
	X509_NAME	*subj;

	if ((subj = X509_get_subject_name(x)) == NULL ||
	    tls_name_field(subj, NID_organizationalUnitName, role,
	    rolelen) == -1 || tls_name_field(subj, NID_commonName, name,
	    namelen) == -1)
		return (-1);
	return (0);
}

/* The verified peer's role (OU) and name (CN); -1 if it has none. */
int
tls_peer_identity(SSL *ssl, char *role, size_t rolelen, char *name,
    size_t namelen)
{
	X509		*peer;
	int		 rc;

	if (SSL_get_verify_result(ssl) != X509_V_OK)
		return (-1);
	if ((peer = SSL_get1_peer_certificate(ssl)) == NULL)
		return (-1);
	rc = tls_x509_identity(peer, role, rolelen, name, namelen);
	X509_free(peer);
	return (rc);
}

/* The role and CN of a certificate file (a worker's default name). */
int
tls_cert_cn(const char *path, char *role, size_t rolelen, char *cn,
    size_t cnlen)
{
	FILE	*f;
	X509	*x;
	int	 rc = -1;

	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (x == NULL) {
		ERR_clear_error();
		return (-1);
	}
	if (tls_name_field(X509_get_subject_name(x), NID_commonName, cn,
	    cnlen) == 0 && tls_name_field(X509_get_subject_name(x),
	    NID_organizationalUnitName, role, rolelen) == 0)
		rc = 0;
	X509_free(x);
	return (rc);
}

/*
 * Say why a TLS bufferevent failed: the OpenSSL reason, the certificate
 * verification result, the socket error, or a plain close.  Returns 1 for
 * a close that is no error: an end of stream, with the peer's close_notify
 * or without it, or a write or read the peer's close cut short (most
 * clients just close their socket; whether that came between frames is
 * for the caller to judge), else 0.
 */
int
tls_describe_error(struct bufferevent *bev, short what, char *buf,
    size_t len)
{
	SSL		*ssl;
	unsigned long	 e;
	const char	*desc;
	char		 reason[256];
	long		 vr;
	int		 serr, eof = 0;

	reason[0] = '\0';
	while ((e = bufferevent_get_openssl_error(bev)) != 0) {
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
		if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		    ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			eof = 1;
			continue;
		}
#endif
		if (reason[0] == '\0' && tls_real_error(e))
			ERR_error_string_n(e, reason, sizeof(reason));
	}
	ssl = bufferevent_openssl_get_ssl(bev);
	if (ssl != NULL && (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		desc = tls_exidx != -1 ? SSL_get_ex_data(ssl, tls_exidx) : NULL;
		snprintf(buf, len, "certificate verification failed: %s%s%s",
		    X509_verify_cert_error_string(vr), desc != NULL ? ": " :
		    "", desc != NULL ? desc : "");
		return (0);
	}
	if (reason[0] != '\0') {
		snprintf(buf, len, "TLS error: %s", reason);
		return (0);
	}
	if (eof) {
		snprintf(buf, len, "connection closed (without close_notify)");
		return (1);
	}
	serr = EVUTIL_SOCKET_ERROR();
	/*
	 * The peer closed while we wrote (EPIPE), or with our data unread
	 * (ECONNRESET): a close as much as an end of stream.  A client that
	 * closes right after its last frame (libr3q's r3q_close sends
	 * CloseJob and goes) meets masterd's answer so.
	 */
	if ((what & BEV_EVENT_ERROR) && (serr == EPIPE || serr == ECONNRESET)) {
		snprintf(buf, len, "connection closed (%s)",
		    evutil_socket_error_to_string(serr));
		return (1);
	}
	if ((what & BEV_EVENT_ERROR) && serr != 0) {
		snprintf(buf, len, "%s", evutil_socket_error_to_string(serr));
		return (0);
	}
	if (what & BEV_EVENT_TIMEOUT) {
		snprintf(buf, len, "timed out");
		return (0);
	}
	snprintf(buf, len, "connection closed");
	return ((what & BEV_EVENT_EOF) != 0);
}

/* The names a certificate is valid for: its DNS and IP SANs, else its CN. */
static void
tls_cert_names(X509 *x, char *buf, size_t len)
{
	GENERAL_NAMES		*sans;
	const GENERAL_NAME	*gn;
	const unsigned char	*p;
	char			 one[256];
	size_t			 off = 0;
	int			 i, n;

	buf[0] = '\0';
	sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	for (i = 0; sans != NULL && i < sk_GENERAL_NAME_num(sans); i++) {
		gn = sk_GENERAL_NAME_value(sans, i);
		one[0] = '\0';
		if (gn->type == GEN_DNS) {
			p = ASN1_STRING_get0_data(gn->d.dNSName);
			n = ASN1_STRING_length(gn->d.dNSName);
			snprintf(one, sizeof(one), "%.*s", n, p);
		} else if (gn->type == GEN_IPADD) {
			p = ASN1_STRING_get0_data(gn->d.iPAddress);
			n = ASN1_STRING_length(gn->d.iPAddress);
			if (n == 4 || n == 16)
				inet_ntop(n == 4 ? AF_INET : AF_INET6, p, one,
				    sizeof(one));
		}
		if (one[0] != '\0' && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
			    off > 0 ? ", " : "", one);
	}
	GENERAL_NAMES_free(sans);
	if (buf[0] == '\0' && tls_name_field(X509_get_subject_name(x),
	    NID_commonName, one, sizeof(one)) == 0)
		snprintf(buf, len, "%s", one);
}

/* Did reading a PEM file stop only because nothing more was in it? */
static int
tls_pem_ended(unsigned long e)
{
	return (e == 0 || (ERR_GET_LIB(e) == ERR_LIB_PEM &&
	    ERR_GET_REASON(e) == PEM_R_NO_START_LINE));
}

/*
 * Every certificate in the PEM file path, the first one first; NULL with
 * "path: what is wrong" in err.
 */
static STACK_OF(X509) *
tls_read_certs(const char *path, const char *what, char *err, size_t errlen)
{
	STACK_OF(X509)	*sk;
	FILE		*f;
	X509		*x;
	unsigned long	 e;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	if ((sk = sk_X509_new_null()) == NULL) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return (NULL);
	}
	ERR_clear_error();
	while ((x = PEM_read_X509(f, NULL, tls_no_passphrase, NULL)) != NULL)
		if (sk_X509_push(sk, x) == 0) {
			X509_free(x);
			break;
		}
	e = ERR_peek_last_error();
	ERR_clear_error();
	fclose(f);
	if (!tls_pem_ended(e))
		snprintf(err, errlen, "%s: cannot read the %s: %s", path, what,
		    ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "bad PEM data");
	else if (sk_X509_num(sk) == 0)
		snprintf(err, errlen, "%s: no %s in it (PEM, BEGIN "
		    "CERTIFICATE)", path, what);
	else
		return (sk);
	sk_X509_pop_free(sk, X509_free);
	return (NULL);
}

/* The private key in the PEM file path; NULL with a message in err. */
static EVP_PKEY *
tls_read_key(const char *path, char *err, size_t errlen)
{
	EVP_PKEY	*k;
	FILE		*f;
	unsigned long	 e;
	char		 line[128];
	int		 asked = 0, haskey = 0;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	ERR_clear_error();
	k = PEM_read_PrivateKey(f, NULL, tls_no_passphrase, &asked);
	e = ERR_peek_last_error();
	ERR_clear_error();
	if (k != NULL) {
		fclose(f);
		return (k);
	}
	/* OpenSSL 3 calls a certificate an "unsupported" key. */
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "-----BEGIN ", 11) == 0 &&
		    strstr(line, "PRIVATE KEY-----") != NULL)
			haskey = 1;
	fclose(f);
	if (asked)
		snprintf(err, errlen, "%s: the key is encrypted; the daemons "
		    "need it without a passphrase", path);
	else if (tls_pem_ended(e) || !haskey)
		snprintf(err, errlen, "%s: no private key in it (PEM)", path);
	else
		snprintf(err, errlen, "%s: cannot read the private key: %s",
		    path, ERR_reason_error_string(e) != NULL ?
		    ERR_reason_error_string(e) : "bad PEM data");
	return (NULL);
}

/*
 * Can user read every one of paths?  Asked the only faithful way, by
 * opening them: as root, in a child that takes on the user's uid, gid and
 * groups, so that modes, ACLs and the search permission of every directory
 * on the way all count.  Only root, or the user itself, can ask.
 */
int
tls_check_user(const char *user, const char *const *paths, size_t npaths,
    char *err, size_t errlen)
{
	struct passwd	*pw;
	pid_t		 pid;
	ssize_t		 n;
	size_t		 i;
	int		 fd[2], res[2], status, f;

	if ((pw = getpwnam(user)) == NULL) {
		snprintf(err, errlen, "user %s: no such user", user);
		return (-1);
	}
	if (pw->pw_uid == geteuid())
		return (0);	/* the files were just read as that user */
	if (geteuid() != 0) {
		snprintf(err, errlen, "user %s: only root or %s can check "
		    "what %s can read", user, user, user);
		return (-1);
	}
	if (pipe(fd) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return (-1);
	}
	if (pid == 0) {
		close(fd[0]);
		res[0] = -1;
		if (initgroups(pw->pw_name, pw->pw_gid) == -1 ||
		    setgid(pw->pw_gid) == -1 || setuid(pw->pw_uid) == -1) {
			res[1] = errno;
			/* Unread, the parent says only that it failed. */
			if (write(fd[1], res, sizeof(res)) == -1)
				_exit(2);
			_exit(1);
		}
		for (i = 0; i < npaths; i++) {
			f = open(paths[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (f == -1) {
				res[0] = (int)i;
				res[1] = errno;
				if (write(fd[1], res, sizeof(res)) == -1)
					_exit(2);
				_exit(1);
			}
			close(f);
		}
		_exit(0);
	}
	close(fd[1]);
	while ((n = read(fd[0], res, sizeof(res))) == -1 && errno == EINTR)
		;
	close(fd[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(res) && res[0] >= 0 &&
	    (size_t)res[0] < npaths) {
		snprintf(err, errlen, "%s: user %s cannot read it: %s",
		    paths[res[0]], user, strerror(res[1]));
		return (-1);
	}
	if (n == (ssize_t)sizeof(res)) {
		snprintf(err, errlen, "user %s: cannot take on its identity: "
		    "%s", user, strerror(res[1]));
		return (-1);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "user %s: the check of what it can read "
		    "failed", user);
		return (-1);
	}
	return (0);
}

/* What kind of trouble a certificate verification error is. */
enum tls_vclass {
	TLS_V_UNTRUSTED,	/* no path to a CA we trust */
	TLS_V_EXPIRED,
	TLS_V_NOTYET,
	TLS_V_PURPOSE,		/* not meant for this end of TLS */
	TLS_V_NAME,		/* not for the host dialled */
	TLS_V_REVOKED,		/* in the CRL */
	TLS_V_NOCRL,		/* no CRL from its issuer in the crl file */
	TLS_V_OTHER
};

static enum tls_vclass
tls_vclass(long vr)
{
	switch (vr) {
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
	case X509_V_ERR_CERT_UNTRUSTED:
		return (TLS_V_UNTRUSTED);
	case X509_V_ERR_CERT_HAS_EXPIRED:
		return (TLS_V_EXPIRED);
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return (TLS_V_NOTYET);
	case X509_V_ERR_INVALID_PURPOSE:
		return (TLS_V_PURPOSE);
	case X509_V_ERR_HOSTNAME_MISMATCH:
	case X509_V_ERR_IP_ADDRESS_MISMATCH:
	case X509_V_ERR_EMAIL_MISMATCH:
		return (TLS_V_NAME);
	case X509_V_ERR_CERT_REVOKED:
		return (TLS_V_REVOKED);
	case X509_V_ERR_UNABLE_TO_GET_CRL:
		return (TLS_V_NOCRL);
	default:
		return (TLS_V_OTHER);
	}
}

/*
 * Verify the certificate chain (its first certificate the leaf) against
 * the CA certificates, for a TLS server or client; on failure say which
 * file is at fault and why.
 */
static int
tls_check_chain(const struct tls_check *tc, STACK_OF(X509) *cas,
    STACK_OF(X509) *chain, const struct tls_crl *crl, char *err,
    size_t errlen)
{
	X509_STORE	*store;
	X509_STORE_CTX	*vctx = NULL;
	X509		*bad;
	char		 when[64], subj[256];
	long		 vr;
	int		 i, rc = -1, depth;

	if ((store = X509_STORE_new()) == NULL ||
	    (vctx = X509_STORE_CTX_new()) == NULL) {
		snprintf(err, errlen, "%s: out of memory", tc->tc_cert);
		goto done;
	}
	for (i = 0; i < sk_X509_num(cas); i++)
		X509_STORE_add_cert(store, sk_X509_value(cas, i));
	X509_STORE_set_verify_cb(store, tls_verify_cb);
	for (i = 0; crl != NULL && i < sk_X509_CRL_num(crl->cr_crls); i++)
		X509_STORE_add_crl(store, sk_X509_CRL_value(crl->cr_crls, i));
	if (crl != NULL)
		X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	if (X509_STORE_CTX_init(vctx, store, sk_X509_value(chain, 0),
	    chain) != 1 || X509_STORE_CTX_set_purpose(vctx, tc->tc_server ?
	    X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT) != 1) {
		snprintf(err, errlen, "%s: cannot set up its verification",
		    tc->tc_cert);
		goto done;
	}
	if (X509_verify_cert(vctx) == 1) {
		rc = 0;
		goto done;
	}
	vr = X509_STORE_CTX_get_error(vctx);
	depth = X509_STORE_CTX_get_error_depth(vctx);
	if ((bad = X509_STORE_CTX_get_current_cert(vctx)) == NULL)
		bad = sk_X509_value(chain, 0);
	X509_NAME_oneline(X509_get_subject_name(bad), subj, sizeof(subj));
	switch (tls_vclass(vr)) {
	case TLS_V_UNTRUSTED:
		X509_NAME_oneline(X509_get_issuer_name(bad), subj,
		    sizeof(subj));
		snprintf(err, errlen, "%s: not issued by the CA in %s (its "
		    "issuer is %s)", tc->tc_cert, tc->tc_ca, subj);
		break;
	case TLS_V_EXPIRED:
		tls_time_str(X509_get0_notAfter(bad), when, sizeof(when));
		if (depth == 0)
			snprintf(err, errlen, "%s: expired on %s", tc->tc_cert,
			    when);
		else
			snprintf(err, errlen, "%s: the CA certificate %s "
			    "expired on %s", tc->tc_ca, subj, when);
		break;
	case TLS_V_NOTYET:
		tls_time_str(X509_get0_notBefore(bad), when, sizeof(when));
		if (depth == 0)
			snprintf(err, errlen, "%s: not valid before %s (is "
			    "the clock right?)", tc->tc_cert, when);
		else
			snprintf(err, errlen, "%s: the CA certificate %s is "
			    "not valid before %s (is the clock right?)",
			    tc->tc_ca, subj, when);
		break;
	case TLS_V_PURPOSE:
		snprintf(err, errlen, "%s: not meant for a TLS %s (its key "
		    "usage or extended key usage)", tc->tc_cert,
		    tc->tc_server ? "server" : "client");
		break;
	case TLS_V_REVOKED:
		tls_cert_describe(bad, subj, sizeof(subj));
		snprintf(err, errlen, "%s: revoked by the CRL in %s: %s",
		    depth == 0 ? tc->tc_cert : tc->tc_ca, crl->cr_path, subj);
		break;
	case TLS_V_NOCRL:
		X509_NAME_oneline(X509_get_issuer_name(bad), subj,
		    sizeof(subj));
		snprintf(err, errlen, "%s: no CRL from %s, the issuer of %s: "
		    "the crl file must hold that CA's", crl->cr_path, subj,
		    tc->tc_cert);
		break;
	default:
		snprintf(err, errlen, "%s: %s%s", depth == 0 ? tc->tc_cert :
		    tc->tc_ca, depth == 0 ? "" : "the CA certificate: ",
		    X509_verify_cert_error_string(vr));
		break;
	}
done:
	X509_STORE_CTX_free(vctx);
	X509_STORE_free(store);
	return (rc);
}

/*
 * The preflight of a daemon's TLS files, made by -n and at every start and
 * reload: the CA, the certificate and the key load; the key is the
 * certificate's and its owner's alone (mode 0600 or less); the
 * certificate carries the daemon's role (its OU) and a name (its CN), was
 * issued by the CA for this end of TLS, is valid now and, with a crl, is
 * not revoked (the CRL parses and is the CA's); and, if tc_user is set,
 * that user can read all the files.
 * -1 with "file: what is wrong" in err.
 */
int
tls_check_files(const struct tls_check *tc, char *err, size_t errlen)
{
	STACK_OF(X509)	*cas = NULL, *chain = NULL;
	EVP_PKEY	*key = NULL;
	X509		*leaf;
	X509_NAME	*subj;
	struct tls_crl	*crl = NULL;
	const char	*paths[4];
	char		 role[64], cn[256];
	int		 rc = -1;

	if ((cas = tls_read_certs(tc->tc_ca, "CA certificate", err,
	    errlen)) == NULL ||
	    (chain = tls_read_certs(tc->tc_cert, "certificate", err,
	    errlen)) == NULL ||
	    (key = tls_read_key(tc->tc_key, err, errlen)) == NULL ||
	    tls_key_mode_ok(tc->tc_key, err, errlen) == -1)
		goto done;
	if (tls_crl_configured(tc->tc_crl) &&
	    (crl = tls_crl_load(tc->tc_crl, tc->tc_ca, err, errlen)) == NULL)
		goto done;
	leaf = sk_X509_value(chain, 0);
	if (X509_check_private_key(leaf, key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "%s: does not match certificate %s",
		    tc->tc_key, tc->tc_cert);
		goto done;
	}
	subj = X509_get_subject_name(leaf);
	if (tls_name_field(subj, NID_organizationalUnitName, role,
	    sizeof(role)) == -1) {
		snprintf(err, errlen, "%s: no role (OU) in its subject, %s "
		    "needs '%s'", tc->tc_cert, tc->tc_daemon, tc->tc_role);
		goto done;
	}
	if (strcmp(role, tc->tc_role) != 0) {
		snprintf(err, errlen, "%s: role '%s', %s needs '%s'",
		    tc->tc_cert, role, tc->tc_daemon, tc->tc_role);
		goto done;
	}
	if (tls_name_field(subj, NID_commonName, cn, sizeof(cn)) == -1) {
		snprintf(err, errlen, "%s: no name (CN) in its subject",
		    tc->tc_cert);
		goto done;
	}
	if (tls_check_chain(tc, cas, chain, crl, err, errlen) == -1)
		goto done;
	paths[0] = tc->tc_ca;
	paths[1] = tc->tc_cert;
	paths[2] = tc->tc_key;
	paths[3] = tc->tc_crl;
	if (tc->tc_user != NULL && tls_check_user(tc->tc_user, paths,
	    crl != NULL ? 4 : 3, err, errlen) == -1)
		goto done;
	rc = 0;
done:
	tls_crl_free(crl);
	EVP_PKEY_free(key);
	sk_X509_pop_free(chain, X509_free);
	sk_X509_pop_free(cas, X509_free);
	return (rc);
}

/*
 * Why a client connection failed, in words that say what to fix, and what
 * kind of failure it was (enum tls_failure): the peer's certificate (not
 * for the host dialled, from another CA, expired), an alert from the peer
 * (it refused our certificate), another TLS error, the socket's error, a
 * time-out or a close.  who names the peer's role ("master"), peer its
 * "host:port" and host the name or address dialled.
 */
int
tls_explain(struct bufferevent *bev, short what, const char *who,
    const char *peer, const char *host, char *buf, size_t len)
{
	STACK_OF(X509)	*chain;
	SSL		*ssl;
	X509		*leaf = NULL;
	unsigned long	 e, first = 0;
	char		 names[512], when[64];
	long		 vr;
	int		 alert, serr;

	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (first == 0 && tls_real_error(e))
			first = e;
	ssl = bufferevent_openssl_get_ssl(bev);
	/*
	 * Under TLS 1.3 a server checks our certificate after our side of
	 * the handshake is done, so we may already have written when its
	 * alert comes; its close then resets the connection and the write
	 * fails first.  The alert can still be waiting in the socket: read
	 * it, as it says why.
	 */
	if (first == 0 && ssl != NULL && (what & BEV_EVENT_ERROR)) {
		ERR_clear_error();
		if (SSL_read(ssl, names, sizeof(names)) <= 0 &&
		    tls_real_error(ERR_peek_error()))
			first = ERR_peek_error();
		ERR_clear_error();
	}
	if (ssl != NULL && (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		/* The handshake stopped before the leaf became the peer's. */
		if ((chain = SSL_get_peer_cert_chain(ssl)) != NULL &&
		    sk_X509_num(chain) > 0)
			leaf = sk_X509_value(chain, 0);
		names[0] = '\0';
		if (leaf != NULL)
			tls_cert_names(leaf, names, sizeof(names));
		switch (tls_vclass(vr)) {
		case TLS_V_NAME:
			snprintf(buf, len, "%s certificate name '%s' does not "
			    "match %s%s", who, names, host, leaf != NULL &&
			    X509_get_ext_by_NID(leaf, NID_subject_alt_name,
			    -1) < 0 ? " (it has no subjectAltName, and a CN "
			    "is never taken for a host)" : "");
			return (TLS_FAIL_NAME);
		case TLS_V_UNTRUSTED:
			if (leaf != NULL)
				X509_NAME_oneline(X509_get_issuer_name(leaf),
				    names, sizeof(names));
			snprintf(buf, len, "certificate verify failed: unknown "
			    "CA: the certificate of %s is issued by %s", peer,
			    leaf != NULL ? names : "a CA we do not trust");
			return (TLS_FAIL_UNTRUSTED);
		case TLS_V_EXPIRED:
		case TLS_V_NOTYET:
			when[0] = '\0';
			if (leaf != NULL)
				tls_time_str(vr == X509_V_ERR_CERT_HAS_EXPIRED ?
				    X509_get0_notAfter(leaf) :
				    X509_get0_notBefore(leaf), when,
				    sizeof(when));
			snprintf(buf, len, "certificate verify failed: the "
			    "certificate of %s %s%s%s", peer,
			    vr == X509_V_ERR_CERT_HAS_EXPIRED ? "has expired" :
			    "is not valid yet", when[0] ? ": " : "", when);
			return (TLS_FAIL_VALIDITY);
		case TLS_V_PURPOSE:
			snprintf(buf, len, "certificate verify failed: the "
			    "certificate of %s is not meant for a TLS server",
			    peer);
			return (TLS_FAIL_BADCERT);
		case TLS_V_REVOKED:
			names[0] = '\0';
			if (leaf != NULL)
				tls_cert_describe(leaf, names, sizeof(names));
			snprintf(buf, len, "certificate verify failed: the "
			    "certificate of %s is revoked (our crl): %s", peer,
			    names);
			return (TLS_FAIL_REVOKED);
		default:
			snprintf(buf, len, "certificate verify failed: %s: %s",
			    peer, X509_verify_cert_error_string(vr));
			return (TLS_FAIL_BADCERT);
		}
	}
	if (first != 0 && ERR_GET_LIB(first) == ERR_LIB_SSL &&
	    ERR_GET_REASON(first) > SSL_AD_REASON_OFFSET) {
		alert = ERR_GET_REASON(first) - SSL_AD_REASON_OFFSET;
		switch (alert) {
		case SSL_AD_CERTIFICATE_REVOKED:
			snprintf(buf, len, "the %s rejected our certificate: "
			    "%s", who, SSL_alert_desc_string_long(alert));
			return (TLS_FAIL_WE_REVOKED);
		case SSL_AD_BAD_CERTIFICATE:
		case SSL_AD_UNSUPPORTED_CERTIFICATE:
		case SSL_AD_CERTIFICATE_UNKNOWN:
		case SSL_AD_UNKNOWN_CA:
		case SSL_AD_ACCESS_DENIED:
		case SSL_AD_CERTIFICATE_REQUIRED:
			snprintf(buf, len, "the %s rejected our certificate: "
			    "%s", who, SSL_alert_desc_string_long(alert));
			return (TLS_FAIL_REJECTED);
		case SSL_AD_CERTIFICATE_EXPIRED:
			snprintf(buf, len, "the %s rejected our certificate: "
			    "%s", who, SSL_alert_desc_string_long(alert));
			return (TLS_FAIL_VALIDITY);
		default:
			snprintf(buf, len, "%s ended the TLS handshake: %s",
			    peer, SSL_alert_desc_string_long(alert));
			return (TLS_FAIL_OTHER);
		}
	}
	if (first != 0) {
		snprintf(buf, len, "TLS error with %s: %s", peer,
		    ERR_reason_error_string(first) != NULL ?
		    ERR_reason_error_string(first) : "unknown");
		return (TLS_FAIL_OTHER);
	}
	serr = EVUTIL_SOCKET_ERROR();
	if ((what & BEV_EVENT_ERROR) && serr != 0)
		snprintf(buf, len, "%s: %s", peer,
		    evutil_socket_error_to_string(serr));
	else if (what & BEV_EVENT_TIMEOUT)
		snprintf(buf, len, "%s: timed out", peer);
	else
		snprintf(buf, len, "%s closed the connection", peer);
	return (TLS_FAIL_OTHER);
}

/*
 * The verified peer's role (OU) and name (CN); -1 with why naming the
 * certificate when it lacks either.
 */
int
tls_peer_check(SSL *ssl, char *role, size_t rolelen, char *name,
    size_t namelen, char *why, size_t whylen)
{
	X509		*peer;
	X509_NAME	*subj;
	char		 desc[512];
	int		 rc = -1;

	if ((peer = SSL_get1_peer_certificate(ssl)) == NULL) {
		snprintf(why, whylen, "no peer certificate");
		return (-1);
	}
	tls_cert_describe(peer, desc, sizeof(desc));
	subj = X509_get_subject_name(peer);
	if (SSL_get_verify_result(ssl) != X509_V_OK)
		snprintf(why, whylen, "certificate %s: not verified", desc);
	else if (tls_name_field(subj, NID_organizationalUnitName, role,
	    rolelen) == -1)
		snprintf(why, whylen, "certificate %s has no role (OU)", desc);
	else if (tls_name_field(subj, NID_commonName, name, namelen) == -1)
		snprintf(why, whylen, "certificate %s has no name (CN)", desc);
	else
		rc = 0;
	X509_free(peer);
	return (rc);
}

/* A certificate time in Unix seconds; 0 if it cannot be read. */
static time_t
tls_asn1_time(const ASN1_TIME *t)
{
	struct tm	 tm;

	memset(&tm, 0, sizeof(tm));
	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return (0);
	return (timegm(&tm));
}

/* A certificate's notAfter in Unix seconds; 0 if it cannot be read. */
time_t
tls_cert_not_after(X509 *x)
{
	return (x != NULL ? tls_asn1_time(X509_get0_notAfter(x)) : 0);
}

/* Whole days from now to t, rounded down; negative once past. */
int
tls_days_left(time_t t, time_t now)
{
	if (t <= now)
		return (-1 - (int)((now - t) / 86400));
	return ((int)((t - now) / 86400));
}

/*
 * When the daemon's own certificate (the first of cert), the CA (the
 * earliest of the ca file's) and the CRL (the earliest nextUpdate) run
 * out.  -1 if the certificate or the CA cannot be read.
 */
int
tls_expiry(const char *ca, const char *cert, const struct tls_crl *crl,
    struct tls_expiry *te)
{
	STACK_OF(X509)	*sk;
	char		 err[512];
	time_t		 t;
	int		 i;

	memset(te, 0, sizeof(*te));
	if ((sk = tls_read_certs(cert, "certificate", err,
	    sizeof(err))) == NULL)
		return (-1);
	te->te_cert = tls_cert_not_after(sk_X509_value(sk, 0));
	sk_X509_pop_free(sk, X509_free);
	if ((sk = tls_read_certs(ca, "CA certificate", err,
	    sizeof(err))) == NULL)
		return (-1);
	for (i = 0; i < sk_X509_num(sk); i++) {
		t = tls_cert_not_after(sk_X509_value(sk, i));
		if (t != 0 && (te->te_ca == 0 || t < te->te_ca))
			te->te_ca = t;
	}
	sk_X509_pop_free(sk, X509_free);
	for (i = 0; crl != NULL && i < sk_X509_CRL_num(crl->cr_crls); i++) {
		t = tls_asn1_time(X509_CRL_get0_nextUpdate(
		    sk_X509_CRL_value(crl->cr_crls, i)));
		if (t != 0 && (te->te_crl == 0 || t < te->te_crl))
			te->te_crl = t;
	}
	return (0);
}

/* "in 12 days, on 2026-12-05 10:00:00 UTC" or "on ... (past)". */
static void
tls_when(time_t t, time_t now, char *buf, size_t len)
{
	struct tm	 tm;
	char		 date[64];
	int		 d = tls_days_left(t, now);

	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	if (t <= now)
		snprintf(buf, len, "on %s", date);
	else if (d == 0)
		snprintf(buf, len, "within a day, on %s", date);
	else
		snprintf(buf, len, "in %d day%s, on %s", d, d == 1 ? "" : "s",
		    date);
}

/*
 * Warn (through warn, e.g. log_warnx) of what runs out within
 * TLS_EXPIRY_WARN: the daemon's certificate, the CA, the CRL's next
 * update.  Called at start, at every reload and once a day.
 */
void
tls_expiry_warn(const struct tls_check *tc, const struct tls_expiry *te,
    time_t now, void (*warn)(const char *, ...))
{
	char	 when[128];

	if (te->te_cert != 0 && te->te_cert - now < TLS_EXPIRY_WARN) {
		tls_when(te->te_cert, now, when, sizeof(when));
		warn("certificate %s %s %s: issue %s a new one (mkcerts) "
		    "and reload", tc->tc_cert, te->te_cert <= now ? "expired" :
		    "expires", when, tc->tc_daemon);
	}
	if (te->te_ca != 0 && te->te_ca - now < TLS_EXPIRY_WARN) {
		tls_when(te->te_ca, now, when, sizeof(when));
		warn("CA certificate %s %s %s: no certificate it issued is "
		    "valid after that; make a new CA and certificates for "
		    "the cluster", tc->tc_ca, te->te_ca <= now ? "expired" :
		    "expires", when);
	}
	if (te->te_crl != 0 && te->te_crl - now < TLS_EXPIRY_WARN &&
	    tls_crl_configured(tc->tc_crl)) {
		tls_when(te->te_crl, now, when, sizeof(when));
		warn("CRL %s: its next update %s %s: issue a new one "
		    "(mkcerts --revoke, or openssl ca -gencrl); its "
		    "revocations still apply after that", tc->tc_crl,
		    te->te_crl <= now ? "was due" : "is due", when);
	}
}

/* Is a crl setting a file (not empty, not "none")? */
int
tls_crl_configured(const char *v)
{
	return (v != NULL && v[0] != '\0' && strcmp(v, "none") != 0);
}

void
tls_crl_free(struct tls_crl *crl)
{
	if (crl == NULL)
		return;
	sk_X509_CRL_pop_free(crl->cr_crls, X509_CRL_free);
	free(crl->cr_path);
	free(crl);
}

/*
 * Read the CRLs of b (PEM, one or more), named path in messages, and
 * check that each is signed by a CA of the ca file.  Their dates are not
 * checked: see tls_verify_cb.  NULL with "path: what is wrong" in err.
 */
static struct tls_crl *
tls_crl_read(BIO *b, const char *path, const char *ca, char *err,
    size_t errlen)
{
	STACK_OF(X509)	*cas = NULL;
	struct tls_crl	*crl;
	X509_CRL	*c;
	X509		*x;
	unsigned long	 e, first;
	char		 issuer[256];
	int		 i, k, named, signer;

	if ((crl = calloc(1, sizeof(*crl))) == NULL ||
	    (crl->cr_path = strdup(path)) == NULL ||
	    (crl->cr_crls = sk_X509_CRL_new_null()) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	ERR_clear_error();
	while ((c = PEM_read_bio_X509_CRL(b, NULL, tls_no_passphrase,
	    NULL)) != NULL)
		if (sk_X509_CRL_push(crl->cr_crls, c) == 0) {
			X509_CRL_free(c);
			break;
		}
	e = ERR_peek_last_error();
	first = ERR_peek_error();
	ERR_clear_error();
	if (!tls_pem_ended(e)) {
		snprintf(err, errlen, "%s: cannot read the CRL: %s", path,
		    ERR_reason_error_string(first) != NULL ?
		    ERR_reason_error_string(first) : "bad PEM data");
		goto fail;
	}
	if (sk_X509_CRL_num(crl->cr_crls) == 0) {
		snprintf(err, errlen, "%s: no CRL in it (PEM, BEGIN X509 CRL)",
		    path);
		goto fail;
	}
	if ((cas = tls_read_certs(ca, "CA certificate", err, errlen)) == NULL)
		goto fail;
	for (i = 0; i < sk_X509_CRL_num(crl->cr_crls); i++) {
		c = sk_X509_CRL_value(crl->cr_crls, i);
		named = signer = 0;
		for (k = 0; k < sk_X509_num(cas) && !signer; k++) {
			x = sk_X509_value(cas, k);
			if (X509_NAME_cmp(X509_get_subject_name(x),
			    X509_CRL_get_issuer(c)) != 0)
				continue;
			named = 1;
			if (X509_CRL_verify(c, X509_get0_pubkey(x)) == 1)
				signer = 1;
		}
		ERR_clear_error();
		X509_NAME_oneline(X509_CRL_get_issuer(c), issuer,
		    sizeof(issuer));
		if (!signer && named) {
			snprintf(err, errlen, "%s: not signed by a CA in %s "
			    "(its signature does not verify with the CA named "
			    "%s there: another CA of that name signed it)",
			    path, ca, issuer);
			goto fail;
		}
		if (!signer) {
			snprintf(err, errlen, "%s: not signed by a CA in %s "
			    "(its issuer is %s)", path, ca, issuer);
			goto fail;
		}
	}
	sk_X509_pop_free(cas, X509_free);
	return (crl);
fail:
	sk_X509_pop_free(cas, X509_free);
	tls_crl_free(crl);
	return (NULL);
}

/* The CRLs of the file path (tls_crl_read). */
struct tls_crl *
tls_crl_load(const char *path, const char *ca, char *err, size_t errlen)
{
	struct tls_crl	*crl;
	BIO		*b;

	if ((b = BIO_new_file(path, "r")) == NULL) {
		ERR_clear_error();
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	crl = tls_crl_read(b, path, ca, err, errlen);
	BIO_free(b);
	return (crl);
}

/* The CRLs of len bytes of PEM at p, named name (tls_crl_read). */
struct tls_crl *
tls_crl_load_mem(const void *p, size_t len, const char *name,
    const char *ca, char *err, size_t errlen)
{
	struct tls_crl	*crl;
	BIO		*b;

	if (len > INT_MAX || (b = BIO_new_mem_buf(p, (int)len)) == NULL) {
		ERR_clear_error();
		snprintf(err, errlen, "%s: out of memory", name);
		return (NULL);
	}
	crl = tls_crl_read(b, name, ca, err, errlen);
	BIO_free(b);
	return (crl);
}

/*
 * Both a's and b's CRLs (either may be NULL), named path: each keeps its
 * own, so that a certificate either revokes is revoked (tls_crl_revoked).
 * NULL if both are NULL or out of memory.
 */
struct tls_crl *
tls_crl_merge(const struct tls_crl *a, const struct tls_crl *b,
    const char *path)
{
	const struct tls_crl	*src[2] = { a, b };
	struct tls_crl		*crl;
	X509_CRL		*c;
	int			 i, k;

	if (a == NULL && b == NULL)
		return (NULL);
	if ((crl = calloc(1, sizeof(*crl))) == NULL ||
	    (crl->cr_path = strdup(path)) == NULL ||
	    (crl->cr_crls = sk_X509_CRL_new_null()) == NULL)
		goto fail;
	for (k = 0; k < 2; k++)
		for (i = 0; src[k] != NULL &&
		    i < sk_X509_CRL_num(src[k]->cr_crls); i++) {
			c = sk_X509_CRL_value(src[k]->cr_crls, i);
			if (X509_CRL_up_ref(c) != 1)
				goto fail;
			if (sk_X509_CRL_push(crl->cr_crls, c) == 0) {
				X509_CRL_free(c);
				goto fail;
			}
		}
	return (crl);
fail:
	tls_crl_free(crl);
	return (NULL);
}

/*
 * Is a CRL of nc older than held's CRL of the same issuer (an earlier
 * lastUpdate, or a lower CRL number when both carry one)?  1 with the
 * issuer and both dates in why, else 0.
 */
int
tls_crl_older(const struct tls_crl *nc, const struct tls_crl *held,
    char *why, size_t len)
{
	X509_CRL	*n, *h;
	ASN1_INTEGER	*nn, *hn;
	char		 issuer[256], nt[64], ht[64];
	int		 i, k, older;

	for (i = 0; nc != NULL && held != NULL &&
	    i < sk_X509_CRL_num(nc->cr_crls); i++) {
		n = sk_X509_CRL_value(nc->cr_crls, i);
		for (k = 0; k < sk_X509_CRL_num(held->cr_crls); k++) {
			h = sk_X509_CRL_value(held->cr_crls, k);
			if (X509_NAME_cmp(X509_CRL_get_issuer(n),
			    X509_CRL_get_issuer(h)) != 0)
				continue;
			older = ASN1_TIME_compare(X509_CRL_get0_lastUpdate(n),
			    X509_CRL_get0_lastUpdate(h)) < 0;
			nn = X509_CRL_get_ext_d2i(n, NID_crl_number, NULL,
			    NULL);
			hn = X509_CRL_get_ext_d2i(h, NID_crl_number, NULL,
			    NULL);
			if (nn != NULL && hn != NULL &&
			    ASN1_INTEGER_cmp(nn, hn) < 0)
				older = 1;
			ASN1_INTEGER_free(nn);
			ASN1_INTEGER_free(hn);
			ERR_clear_error();
			if (!older)
				continue;
			X509_NAME_oneline(X509_CRL_get_issuer(n), issuer,
			    sizeof(issuer));
			tls_time_str(X509_CRL_get0_lastUpdate(n), nt,
			    sizeof(nt));
			tls_time_str(X509_CRL_get0_lastUpdate(h), ht,
			    sizeof(ht));
			snprintf(why, len, "its CRL of %s (of %s) is older "
			    "than the one held (of %s)", issuer, nt, ht);
			return (1);
		}
	}
	return (0);
}

/* Do a and b hold the same CRLs, in the same order? */
int
tls_crl_same(const struct tls_crl *a, const struct tls_crl *b)
{
	int	 i;

	if (a == NULL || b == NULL)
		return (a == b);
	if (sk_X509_CRL_num(a->cr_crls) != sk_X509_CRL_num(b->cr_crls))
		return (0);
	for (i = 0; i < sk_X509_CRL_num(a->cr_crls); i++)
		if (X509_CRL_match(sk_X509_CRL_value(a->cr_crls, i),
		    sk_X509_CRL_value(b->cr_crls, i)) != 0)
			return (0);
	return (1);
}

/*
 * Check peers' certificates against the CRLs in ctx's verification, the
 * leaf only (X509_V_FLAG_CRL_CHECK): a leaf whose issuer has no CRL in
 * the file is refused.  A NULL crl changes nothing.
 */
int
tls_crl_apply(SSL_CTX *ctx, const struct tls_crl *crl, char *err,
    size_t errlen)
{
	X509_STORE	*store;
	int		 i;

	if (crl == NULL)
		return (0);
	store = SSL_CTX_get_cert_store(ctx);
	for (i = 0; i < sk_X509_CRL_num(crl->cr_crls); i++)
		if (X509_STORE_add_crl(store, sk_X509_CRL_value(crl->cr_crls,
		    i)) != 1) {
			tls_openssl_error(err, errlen, "cannot use the CRL",
			    crl->cr_path);
			return (-1);
		}
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	return (0);
}

/*
 * Is certificate x revoked by crl?  1 with "serial X, revoked on DATE" in
 * why, else 0.
 */
int
tls_crl_revoked(const struct tls_crl *crl, X509 *x, char *why, size_t len)
{
	X509_REVOKED	*rev;
	X509_CRL	*c;
	char		 when[64], desc[512];
	int		 i;

	if (crl == NULL || x == NULL)
		return (0);
	for (i = 0; i < sk_X509_CRL_num(crl->cr_crls); i++) {
		c = sk_X509_CRL_value(crl->cr_crls, i);
		if (X509_NAME_cmp(X509_CRL_get_issuer(c),
		    X509_get_issuer_name(x)) != 0)
			continue;
		if (X509_CRL_get0_by_cert(c, &rev, x) == 1) {
			tls_cert_describe(x, desc, sizeof(desc));
			tls_time_str(X509_REVOKED_get0_revocationDate(rev), when,
			    sizeof(when));
			snprintf(why, len, "%s, revoked on %s", desc, when);
			return (1);
		}
	}
	return (0);
}

/*
 * A certificate's issuer (by hash), serial and description: what the CRL
 * sweep needs of a sealed peer's (seal.h), about 80 bytes against the 5 KB
 * the parsed certificate takes.
 */
struct tls_peer_id {
	unsigned long	 pi_issuer;
	uint8_t		 pi_serial[20];	/* RFC 5280: at most 20 octets */
	int		 pi_serlen;
	int		 pi_serneg;
	char		 pi_desc[];	/* tls_cert_describe() */
};

struct tls_peer_id *
tls_peer_id_new(X509 *x)
{
	struct tls_peer_id	*pi;
	const ASN1_INTEGER	*sn;
	char			 desc[512];
	size_t			 n;
	int			 ok = 0;

	if (x == NULL || (sn = X509_get0_serialNumber(x)) == NULL ||
	    ASN1_STRING_length(sn) <= 0 || ASN1_STRING_length(sn) > 20)
		return (NULL);
	tls_cert_describe(x, desc, sizeof(desc));
	n = strlen(desc) + 1;
	if ((pi = malloc(sizeof(*pi) + n)) == NULL)
		return (NULL);
	pi->pi_issuer = X509_NAME_hash_ex(X509_get_issuer_name(x), NULL, NULL,
	    &ok);
	if (!ok) {
		free(pi);
		ERR_clear_error();
		return (NULL);
	}
	pi->pi_serlen = ASN1_STRING_length(sn);
	pi->pi_serneg = ASN1_STRING_type(sn) == V_ASN1_NEG_INTEGER;
	memcpy(pi->pi_serial, ASN1_STRING_get0_data(sn), (size_t)pi->pi_serlen);
	memcpy(pi->pi_desc, desc, n);
	return (pi);
}

void
tls_peer_id_free(struct tls_peer_id *pi)
{
	free(pi);
}

/* tls_crl_revoked() for what tls_peer_id_new() kept. */
int
tls_crl_revoked_id(const struct tls_crl *crl, const struct tls_peer_id *pi,
    char *why, size_t len)
{
	X509_REVOKED	*rev;
	X509_CRL	*c;
	ASN1_INTEGER	*sn;
	char		 when[64];
	int		 i, ok, hit = 0;

	if (crl == NULL || pi == NULL || (sn = ASN1_INTEGER_new()) == NULL)
		return (0);
	if (ASN1_STRING_set(sn, pi->pi_serial, pi->pi_serlen) != 1) {
		ASN1_INTEGER_free(sn);
		ERR_clear_error();
		return (0);
	}
	if (pi->pi_serneg)
		sn->type = V_ASN1_NEG_INTEGER;
	for (i = 0; !hit && i < sk_X509_CRL_num(crl->cr_crls); i++) {
		c = sk_X509_CRL_value(crl->cr_crls, i);
		ok = 0;
		if (X509_NAME_hash_ex(X509_CRL_get_issuer(c), NULL, NULL,
		    &ok) != pi->pi_issuer || !ok)
			continue;
		if (X509_CRL_get0_by_serial(c, &rev, sn) == 1) {
			tls_time_str(X509_REVOKED_get0_revocationDate(rev),
			    when, sizeof(when));
			snprintf(why, len, "%s, revoked on %s", pi->pi_desc,
			    when);
			hit = 1;
		}
	}
	ASN1_INTEGER_free(sn);
	ERR_clear_error();
	return (hit);
}

const char *
tls_crl_path(const struct tls_crl *crl)
{
	return (crl != NULL ? crl->cr_path : "none");
}

/* How many certificates the CRLs revoke. */
size_t
tls_crl_entries(const struct tls_crl *crl)
{
	STACK_OF(X509_REVOKED)	*revs;
	size_t			 n = 0;
	int			 i;

	for (i = 0; crl != NULL && i < sk_X509_CRL_num(crl->cr_crls); i++)
		if ((revs = X509_CRL_get_REVOKED(sk_X509_CRL_value(
		    crl->cr_crls, i))) != NULL)
			n += (size_t)sk_X509_REVOKED_num(revs);
	return (n);
}

/* The CRLs of crl (NULL for none), for a reader that merges them. */
STACK_OF(X509_CRL) *
tls_crl_stack(const struct tls_crl *crl)
{
	return (crl != NULL ? crl->cr_crls : NULL);
}

/*
 * crl (or a new revocation list named path, if crl is NULL) with c in
 * place of every CRL of c's issuer; c is taken.  NULL if out of memory,
 * with c and crl freed.
 */
struct tls_crl *
tls_crl_with(struct tls_crl *crl, X509_CRL *c, const char *path)
{
	X509_CRL	*o;
	int		 i;

	if (crl == NULL && ((crl = calloc(1, sizeof(*crl))) == NULL ||
	    (crl->cr_path = strdup(path)) == NULL ||
	    (crl->cr_crls = sk_X509_CRL_new_null()) == NULL))
		goto fail;
	for (i = sk_X509_CRL_num(crl->cr_crls) - 1; i >= 0; i--) {
		o = sk_X509_CRL_value(crl->cr_crls, i);
		if (X509_NAME_cmp(X509_CRL_get_issuer(o),
		    X509_CRL_get_issuer(c)) == 0) {
			(void)sk_X509_CRL_delete(crl->cr_crls, i);
			X509_CRL_free(o);
		}
	}
	if (sk_X509_CRL_push(crl->cr_crls, c) == 0)
		goto fail;
	return (crl);
fail:
	X509_CRL_free(c);
	tls_crl_free(crl);
	return (NULL);
}

/* A serial number as hex digits, as BN_bn2hex writes it; -1 if it cannot. */
int
tls_serial_hex(const ASN1_INTEGER *sn, char *buf, size_t len)
{
	BIGNUM	*bn;
	char	*hex;
	int	 rc = -1;

	if (sn == NULL || (bn = ASN1_INTEGER_to_BN(sn, NULL)) == NULL) {
		ERR_clear_error();
		return (-1);
	}
	if ((hex = BN_bn2hex(bn)) != NULL && strlen(hex) < len) {
		memcpy(buf, hex, strlen(hex) + 1);
		rc = 0;
	}
	OPENSSL_free(hex);
	BN_free(bn);
	ERR_clear_error();
	return (rc);
}

/* The serial of certificate x in hex (tls_serial_hex). */
int
tls_cert_serial(X509 *x, char *buf, size_t len)
{
	if (x == NULL)
		return (-1);
	return (tls_serial_hex(X509_get0_serialNumber(x), buf, len));
}

/* The serial tls_peer_id_new() kept, in hex (tls_serial_hex). */
int
tls_peer_id_serial(const struct tls_peer_id *pi, char *buf, size_t len)
{
	ASN1_INTEGER	*sn;
	int		 rc;

	if (pi == NULL || (sn = ASN1_INTEGER_new()) == NULL)
		return (-1);
	if (ASN1_STRING_set(sn, pi->pi_serial, pi->pi_serlen) != 1) {
		ASN1_INTEGER_free(sn);
		ERR_clear_error();
		return (-1);
	}
	if (pi->pi_serneg)
		sn->type = V_ASN1_NEG_INTEGER;
	rc = tls_serial_hex(sn, buf, len);
	ASN1_INTEGER_free(sn);
	return (rc);
}
