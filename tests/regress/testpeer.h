/* r3q-testpeer's modes share its connection and its frame helpers. */
#ifndef R3Q_TESTPEER_H
#define R3Q_TESTPEER_H

#include <openssl/ssl.h>

#include "frame.h"

extern SSL	*ssl;		/* the one TLS connection of the mode */
extern SSL_CTX	*tp_ctx;	/* the process's TLS context */

int		 send_env(Envelope *);
Envelope	*recv_env(void);
int		 tcp_connect(const char *, const char *);
int		 tls_dial(SSL_CTX *, const char *, const char *);
int		 relay_join(SSL_CTX *, const char *, const char *, const char *,
		    uint64_t *);
int		 do_hostile(SSL_CTX *, const char *, const char *, const char *,
		    const char *);
int		 do_flood(SSL_CTX *, const char *, const char *, const char *,
		    const char *, const char *, const char *);
int		 do_badclient(SSL_CTX *, const char *, const char *,
		    const char *, const char *, const char *);
int		 do_sluggish(SSL_CTX *, const char *, const char *,
		    const char *, const char *, const char *);
int		 do_roles(SSL_CTX *, const char *, const char *, const char *);
int		 do_relayhostile(SSL_CTX *, const char *, const char *,
		    const char *, int, char *[]);

#endif /* R3Q_TESTPEER_H */
