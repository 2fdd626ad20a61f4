/*
 * Sealed frames (to cut masterd's memory per worker): after the TLS handshake
 * between workerd and masterd, both ends drop the SSL object and protect
 * the byte stream themselves, as QUIC does with TLS's keys (RFC 9001):
 * ChaCha20-Poly1305 under keys both ends export from the handshake
 * (RFC 8446 section 7.5), one key and nonce per direction, the nonce the
 * record's sequence number XOR an exported IV.  What OpenSSL keeps for an
 * established connection (about 25 KB: bench/tls-floor.sh) then becomes
 * 112 bytes of keys.
 *
 * Who seals is agreed in the handshake by ALPN: workerd offers
 * SEAL_ALPN; masterd (or a relay, for the workers below it) picks it when
 * its sealed_frames is on.  Once its checks of the peer's certificate
 * pass, the server writes SEAL_MARK as its last TLS record and seals from
 * there on (seal_serve()); workerd, which sends nothing until it
 * reads that mark, seals after it.  Neither end's SSL object is ever asked
 * to read past the handshake's last record, so no sealed byte is taken for
 * TLS.  A refusal (a TLS alert, an Error, a close) comes in TLS, as before.
 *
 * The sealed stream is a bufferevent filter over a socket bufferevent
 * (seal_switch(): workerd, and a relay for the workers below it), or,
 * for masterd, which holds thousands of workers, the socket bufferevent
 * alone: its sessions open what they read (seal_in()) and seal what they
 * write (seal_out()) themselves, a kilobyte less per worker (SEAL_BARE).
 *
 * A record: the length of what follows, 4 bytes in network order, then
 * the ciphertext and its 16-byte tag; the length is the additional data.
 * At most SEAL_RECORD_MAX bytes of plaintext a record.  A record that does
 * not open, or a length out of range, ends the connection: seal_error()
 * says which.
 */
#ifndef R3Q_SEAL_H
#define R3Q_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

struct bufferevent;
struct evbuffer;
struct seal;

#define SEAL_ALPN		"r3q-sealed/1"
#define SEAL_MARK		"R3QSEAL1"
#define SEAL_MARKLEN		8
#define SEAL_HDRLEN		4
#define SEAL_TAGLEN		16
#define SEAL_RECORD_MAX		16384	/* plaintext bytes a record */
#define SEAL_OVERHEAD		(SEAL_HDRLEN + SEAL_TAGLEN)
#define SEAL_KEYLEN		32
#define SEAL_IVLEN		12
#define SEAL_KEYMAT		(2 * (SEAL_KEYLEN + SEAL_IVLEN))

/* ALPN: the server picks SEAL_ALPN if offered and *on; the client offers. */
void	 seal_server_ctx(SSL_CTX *, const int *);
int	 seal_client_offer(SSL *);
int	 seal_agreed(SSL *);

/* Keys from a finished handshake; NULL with err set. */
struct seal	*seal_new(SSL *, int, char *, size_t);
struct seal	*seal_from_keys(const uint8_t *, int);
void	 seal_free(struct seal *);

/*
 * Replace a TLS bufferevent whose handshake is done (and whose input holds
 * nothing) by a sealed one on the same socket, with the same callbacks,
 * watermarks and enabled events; the TLS one is freed.  *sp is its keys
 * (freed with it), for seal_error().  NULL with err set, and the TLS one
 * untouched, if it cannot be done.
 */
struct bufferevent *seal_switch(struct bufferevent *, int, int,
	    struct seal **, char *, size_t);
#define SEAL_BARE	0x1	/* seal_serve(): no filter; see seal_in() */
struct bufferevent *seal_serve(struct bufferevent *, int, int,
	    struct seal **, char *, size_t);
int	 seal_in(struct seal *, struct evbuffer *, struct evbuffer *);
int	 seal_out(struct seal *, struct evbuffer *, struct evbuffer *);
struct bufferevent *seal_filter(struct bufferevent *, struct seal *, int);
const char	*seal_error(const struct seal *);
size_t	 seal_pending(struct bufferevent *);	/* see seal.c */

/* Without libevent (r3q-testpeer, unit tests). */
size_t	 seal_record(struct seal *, const void *, size_t, uint8_t *);
size_t	 seal_record_len(const uint8_t *);
int	 seal_open(struct seal *, const uint8_t *, size_t, uint8_t *,
	    size_t *);

#endif
