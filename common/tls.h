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

SSL_CTX	*tls_ctx_new(int, const char *, const char *, const char *, char *,
	    size_t);
SSL	*tls_client_ssl(SSL_CTX *, const char *, char *, size_t);
int	 tls_peer_identity(SSL *, char *, size_t, char *, size_t);
void	 tls_describe_error(struct bufferevent *, short, char *, size_t);
int	 tls_cert_cn(const char *, char *, size_t, char *, size_t);

#endif /* R3Q_TLS_H */
