/*
 * TLS 1.3 with mutual certificate authentication, on every network socket.
 * A peer's role is its certificate's OU (worker, client, master) and its
 * name the CN.
 */
#ifndef R3Q_TLS_H
#define R3Q_TLS_H

#include <stddef.h>
#include <time.h>

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
	const char	*tc_crl;	/* NULL or "none": no revocation list */
};

/*
 * A certificate revocation list (crl in both configurations): one or more
 * CRLs in a PEM file, each signed by a CA of the ca file.  Checked for the
 * peer's own certificate (the leaf), not for the CAs above it.
 */
struct tls_crl;

/* Warn this long before a certificate, the CA or the CRL runs out. */
#define TLS_EXPIRY_WARN		(30 * 86400)

/* When a daemon's TLS files run out, in Unix seconds (0: not known). */
struct tls_expiry {
	time_t		 te_cert;	/* its own certificate's notAfter */
	time_t		 te_ca;		/* the earliest of the CAs' */
	time_t		 te_crl;	/* the CRL's nextUpdate, if one */
};

/* Why a client connection failed (tls_explain). */
enum tls_failure {
	TLS_FAIL_OTHER,		/* network, a close, another TLS error */
	TLS_FAIL_NAME,		/* the peer's certificate is not for the host */
	TLS_FAIL_UNTRUSTED,	/* the peer's certificate is from another CA */
	TLS_FAIL_VALIDITY,	/* a certificate expired or not valid yet */
	TLS_FAIL_BADCERT,	/* the peer's certificate is wrong otherwise */
	TLS_FAIL_REJECTED,	/* the peer refused our certificate */
	TLS_FAIL_REVOKED,	/* the peer's certificate is revoked */
	TLS_FAIL_WE_REVOKED	/* the peer says ours is revoked */
};

SSL_CTX	*tls_ctx_new(int, const char *, const char *, const char *, char *,
	    size_t);
SSL	*tls_client_ssl(SSL_CTX *, const char *, char *, size_t);
int	 tls_peer_identity(SSL *, char *, size_t, char *, size_t);
int	 tls_x509_identity(X509 *, char *, size_t, char *, size_t);
int	 tls_check_user(const char *, const char *const *, size_t, char *,
	    size_t);
int	 tls_describe_error(struct bufferevent *, short, char *, size_t);
int	 tls_cert_cn(const char *, char *, size_t, char *, size_t);
int	 tls_check_files(const struct tls_check *, char *, size_t);
int	 tls_explain(struct bufferevent *, short, const char *, const char *,
	    const char *, char *, size_t);
int	 tls_key_mode_ok(const char *, char *, size_t);
int	 tls_peer_check(SSL *, char *, size_t, char *, size_t, char *, size_t);
void	 tls_cert_describe(X509 *, char *, size_t);
time_t	 tls_cert_not_after(X509 *);
int	 tls_expiry(const char *, const char *, const struct tls_crl *,
	    struct tls_expiry *);
void	 tls_expiry_warn(const struct tls_check *, const struct tls_expiry *,
	    time_t, void (*)(const char *, ...));
int	 tls_days_left(time_t, time_t);

int	 tls_crl_configured(const char *);
struct tls_crl *tls_crl_load(const char *, const char *, char *, size_t);
struct tls_crl *tls_crl_load_mem(const void *, size_t, const char *,
	    const char *, char *, size_t);
struct tls_crl *tls_crl_merge(const struct tls_crl *, const struct tls_crl *,
	    const char *);
int	 tls_crl_older(const struct tls_crl *, const struct tls_crl *, char *,
	    size_t);
int	 tls_crl_same(const struct tls_crl *, const struct tls_crl *);
void	 tls_crl_free(struct tls_crl *);
int	 tls_crl_apply(SSL_CTX *, const struct tls_crl *, char *, size_t);
int	 tls_verify_crl_dates(int, X509_STORE_CTX *);
int	 tls_crl_revoked(const struct tls_crl *, X509 *, char *, size_t);
/* What a CRL check needs of a certificate once the SSL object is gone. */
struct tls_peer_id;
struct tls_peer_id *tls_peer_id_new(X509 *);
void	 tls_peer_id_free(struct tls_peer_id *);
int	 tls_crl_revoked_id(const struct tls_crl *, const struct tls_peer_id *,
	    char *, size_t);
const char *tls_crl_path(const struct tls_crl *);
size_t	 tls_crl_entries(const struct tls_crl *);
STACK_OF(X509_CRL) *tls_crl_stack(const struct tls_crl *);
struct tls_crl *tls_crl_with(struct tls_crl *, X509_CRL *, const char *);
int	 tls_serial_hex(const ASN1_INTEGER *, char *, size_t);
int	 tls_cert_serial(X509 *, char *, size_t);
int	 tls_peer_id_serial(const struct tls_peer_id *, char *, size_t);

#endif /* R3Q_TLS_H */
