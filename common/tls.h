/*
 * TLS 1.3 with mutual certificate authentication, on every network socket.
 * A peer's role is its certificate's OU (worker, client, master) and its
 * name the CN.
 */
#ifndef R3Q_TLS_H
#define R3Q_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

struct bufferevent;

/*
 * What a daemon's own TLS files must be, for tls_check_files: the files,
 * the role (OU) the certificate must carry, the daemon that needs it (for
 * messages), which end of TLS it serves, and the user who must be able to
 * read the files (NULL: the calling process, which reads them anyway).
 */
struct tls_check {
	const char	*tc_ca;
	const char	*tc_cert;
	const char	*tc_key;
	const char	*tc_role;
	const char	*tc_daemon;
	int		 tc_server;
	const char	*tc_user;
};

/* Why a client connection failed (tls_explain). */
enum tls_failure {
	TLS_FAIL_OTHER,		/* network, a close, another TLS error */
	TLS_FAIL_NAME,		/* the peer's certificate is not for the host */
	TLS_FAIL_UNTRUSTED,	/* the peer's certificate is from another CA */
	TLS_FAIL_VALIDITY,	/* a certificate expired or not valid yet */
	TLS_FAIL_BADCERT,	/* the peer's certificate is wrong otherwise */
	TLS_FAIL_REJECTED	/* the peer refused our certificate */
};

SSL_CTX	*tls_ctx_new(int, const char *, const char *, const char *, char *,
	    size_t);
SSL	*tls_client_ssl(SSL_CTX *, const char *, char *, size_t);
int	 tls_peer_identity(SSL *, char *, size_t, char *, size_t);
void	 tls_describe_error(struct bufferevent *, short, char *, size_t);
int	 tls_cert_cn(const char *, char *, size_t, char *, size_t);
int	 tls_check_files(const struct tls_check *, char *, size_t);
int	 tls_explain(struct bufferevent *, short, const char *, const char *,
	    const char *, char *, size_t);

#endif /* R3Q_TLS_H */
