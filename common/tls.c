#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls.h"

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
	    tls_readable(key, err, errlen) == -1)
		goto fail;
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		tls_openssl_error(err, errlen, "cannot load CA", ca);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		tls_openssl_error(err, errlen, "cannot load certificate", cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		tls_openssl_error(err, errlen, "cannot load key", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		tls_openssl_error(err, errlen, "key does not match", cert);
		goto fail;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
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
		X509_VERIFY_PARAM_set_hostflags(param,
		    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
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

/* The verified peer's role (OU) and name (CN); -1 if it has none. */
int
tls_peer_identity(SSL *ssl, char *role, size_t rolelen, char *name,
    size_t namelen)
{
	X509		*peer;
	X509_NAME	*subj;
	int		 rc = -1;

	if (SSL_get_verify_result(ssl) != X509_V_OK)
		return (-1);
	if ((peer = SSL_get1_peer_certificate(ssl)) == NULL)
		return (-1);
	subj = X509_get_subject_name(peer);
	if (tls_name_field(subj, NID_organizationalUnitName, role,
	    rolelen) == 0 && tls_name_field(subj, NID_commonName, name,
	    namelen) == 0)
		rc = 0;
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
 * verification result, the socket error, or a plain close.
 */
void
tls_describe_error(struct bufferevent *bev, short what, char *buf,
    size_t len)
{
	SSL		*ssl;
	unsigned long	 e;
	char		 reason[256];
	long		 vr;
	int		 serr;

	reason[0] = '\0';
	while ((e = bufferevent_get_openssl_error(bev)) != 0)
		if (reason[0] == '\0')
			ERR_error_string_n(e, reason, sizeof(reason));
	ssl = bufferevent_openssl_get_ssl(bev);
	if (ssl != NULL && (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		snprintf(buf, len, "certificate verification failed: %s",
		    X509_verify_cert_error_string(vr));
		return;
	}
	if (reason[0] != '\0') {
		snprintf(buf, len, "TLS error: %s", reason);
		return;
	}
	serr = EVUTIL_SOCKET_ERROR();
	if ((what & BEV_EVENT_ERROR) && serr != 0)
		snprintf(buf, len, "%s", evutil_socket_error_to_string(serr));
	else if (what & BEV_EVENT_TIMEOUT)
		snprintf(buf, len, "timed out");
	else
		snprintf(buf, len, "connection closed");
}
