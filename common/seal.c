/*
 * Sealed frames: see seal.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "seal.h"

#define SEAL_LABEL	"EXPORTER-r3q-sealed-frames"
/* Socket buffer under the filter: one record ahead either way. */
#define SEAL_UNDER	(4 * (SEAL_RECORD_MAX + SEAL_OVERHEAD))

struct seal {
	uint8_t		 se_txkey[SEAL_KEYLEN];
	uint8_t		 se_rxkey[SEAL_KEYLEN];
	uint8_t		 se_txiv[SEAL_IVLEN];
	uint8_t		 se_rxiv[SEAL_IVLEN];
	uint64_t	 se_txseq;
	uint64_t	 se_rxseq;
	struct bufferevent *se_bev;	/* the filter, to say it failed */
	const char	*se_err;	/* NULL: none */
};

/*
 * One cipher context each way for every thread that seals, keyed afresh
 * for each record: ChaCha20's key setup is a copy, so a connection keeps
 * 112 bytes of keys, not two contexts of 3.5 KB.
 */
static __thread EVP_CIPHER_CTX	*seal_ectx, *seal_dctx;
static EVP_CIPHER		*seal_cipher;
static pthread_once_t		 seal_once = PTHREAD_ONCE_INIT;

static void
seal_init(void)
{
	seal_cipher = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
}

/*
 * Whether this OpenSSL has the cipher (a FIPS-only configuration has not):
 * without it neither end offers nor agrees, and TLS's records stay.
 */
static int
seal_available(void)
{
	pthread_once(&seal_once, seal_init);
	return (seal_cipher != NULL);
}

static EVP_CIPHER_CTX *
seal_cctx(int enc)
{
	EVP_CIPHER_CTX	**cp = enc ? &seal_ectx : &seal_dctx;

	if (!seal_available())
		return (NULL);
	if (*cp == NULL) {
		if ((*cp = EVP_CIPHER_CTX_new()) == NULL)
			return (NULL);
		if (EVP_CipherInit_ex(*cp, seal_cipher, NULL, NULL, NULL,
		    enc) != 1) {
			EVP_CIPHER_CTX_free(*cp);
			*cp = NULL;
			return (NULL);
		}
	}
	return (*cp);
}

/* The record's nonce: its sequence number XOR the IV (RFC 8446 5.3). */
static void
seal_nonce(const uint8_t *iv, uint64_t seq, uint8_t *nonce)
{
	int	 i;

	memcpy(nonce, iv, SEAL_IVLEN);
	for (i = 0; i < 8; i++)
		nonce[SEAL_IVLEN - 1 - i] ^= (uint8_t)(seq >> (8 * i));
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/* ALPN, server end: SEAL_ALPN if the client offers it and we seal. */
static int
seal_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	const int	*on = arg;
	unsigned int	 i, n;

	(void)ssl;
	if (on == NULL || !*on || !seal_available())
		return (SSL_TLSEXT_ERR_NOACK);
	for (i = 0; i < inlen; i += 1 + n) {
		n = in[i];
		if (i + 1 + n > inlen)
			break;
		if (n == sizeof(SEAL_ALPN) - 1 &&
		    memcmp(in + i + 1, SEAL_ALPN, n) == 0) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return (SSL_TLSEXT_ERR_OK);
		}
	}
	return (SSL_TLSEXT_ERR_NOACK);
}

void
seal_server_ctx(SSL_CTX *ctx, const int *on)
{
	union {
		const int	*c;
		void		*v;
	} u;

	u.c = on;	/* only ever read */
	SSL_CTX_set_alpn_select_cb(ctx, seal_alpn_select, u.v);
}

/* Offer to seal; 0 on success. */
int
seal_client_offer(SSL *ssl)
{
	static const unsigned char protos[] = "\014" SEAL_ALPN;

	if (!seal_available())
		return (0);
	/* SSL_set_alpn_protos returns 0 on success. */
	return (SSL_set_alpn_protos(ssl, protos, sizeof(protos) - 1) == 0 ?
	    0 : -1);
}

/* Did the handshake agree to seal? */
int
seal_agreed(SSL *ssl)
{
	const unsigned char	*p;
	unsigned int		 n;

	if (ssl == NULL)
		return (0);
	SSL_get0_alpn_selected(ssl, &p, &n);
	return (n == sizeof(SEAL_ALPN) - 1 &&
	    memcmp(p, SEAL_ALPN, n) == 0);
}

/*
 * A connection's keys from the exporter's SEAL_KEYMAT bytes, client to
 * server first; server says which end we are.
 */
struct seal *
seal_from_keys(const uint8_t *km, int server)
{
	struct seal	*se;
	const uint8_t	*c2s_key = km, *s2c_key = km + SEAL_KEYLEN;
	const uint8_t	*c2s_iv = km + 2 * SEAL_KEYLEN;
	const uint8_t	*s2c_iv = c2s_iv + SEAL_IVLEN;

	if (seal_cctx(1) == NULL || seal_cctx(0) == NULL ||
	    (se = calloc(1, sizeof(*se))) == NULL)
		return (NULL);
	memcpy(se->se_txkey, server ? s2c_key : c2s_key, SEAL_KEYLEN);
	memcpy(se->se_rxkey, server ? c2s_key : s2c_key, SEAL_KEYLEN);
	memcpy(se->se_txiv, server ? s2c_iv : c2s_iv, SEAL_IVLEN);
	memcpy(se->se_rxiv, server ? c2s_iv : s2c_iv, SEAL_IVLEN);
	return (se);
}

/* Both directions' keys and IVs from the TLS exporter (RFC 8446 7.5). */
struct seal *
seal_new(SSL *ssl, int server, char *err, size_t errlen)
{
	struct seal	*se;
	uint8_t		 km[SEAL_KEYMAT];

	if (SSL_export_keying_material(ssl, km, sizeof(km), SEAL_LABEL,
	    sizeof(SEAL_LABEL) - 1, NULL, 0, 0) != 1) {
		snprintf(err, errlen, "cannot export keys from the TLS "
		    "handshake");
		return (NULL);
	}
	se = seal_from_keys(km, server);
	OPENSSL_cleanse(km, sizeof(km));
	if (se == NULL)
		snprintf(err, errlen, "no ChaCha20-Poly1305 from OpenSSL, or "
		    "out of memory");
	return (se);
}

void
seal_free(struct seal *se)
{
	if (se == NULL)
		return;
	OPENSSL_cleanse(se, sizeof(*se));
	free(se);
}

const char *
seal_error(const struct seal *se)
{
	return (se != NULL ? se->se_err : NULL);
}

/*
 * Seal len (<= SEAL_RECORD_MAX) bytes of in into out, which has room for
 * len + SEAL_OVERHEAD: the record's length.  0 if the cipher failed.
 */
size_t
seal_record(struct seal *se, const void *in, size_t len, uint8_t *out)
{
	EVP_CIPHER_CTX	*c = seal_cctx(1);
	uint8_t		 nonce[SEAL_IVLEN];
	int		 n, m;

	if (c == NULL || len > SEAL_RECORD_MAX || se->se_err != NULL)
		return (0);
	/* Never one nonce twice: the sequence would wrap after 2^64. */
	if (se->se_txseq == UINT64_MAX) {
		se->se_err = "2^64 records sent: the sequence is spent";
		return (0);
	}
	put32(out, (uint32_t)(len + SEAL_TAGLEN));
	seal_nonce(se->se_txiv, se->se_txseq, nonce);
	if (EVP_CipherInit_ex(c, NULL, NULL, se->se_txkey, nonce, 1) != 1 ||
	    EVP_CipherUpdate(c, NULL, &n, out, SEAL_HDRLEN) != 1 ||
	    EVP_CipherUpdate(c, out + SEAL_HDRLEN, &n, in, (int)len) != 1 ||
	    EVP_CipherFinal_ex(c, out + SEAL_HDRLEN + n, &m) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, SEAL_TAGLEN,
	    out + SEAL_HDRLEN + len) != 1) {
		se->se_err = "the cipher failed to seal a record";
		return (0);
	}
	se->se_txseq++;
	return (len + SEAL_OVERHEAD);
}

/*
 * A whole record's length (header included) from its SEAL_HDRLEN-byte
 * header; 0 if the length it announces is out of range.
 */
size_t
seal_record_len(const uint8_t *hdr)
{
	uint32_t	 len = get32(hdr);

	if (len < SEAL_TAGLEN || len > SEAL_RECORD_MAX + SEAL_TAGLEN)
		return (0);
	return (SEAL_HDRLEN + (size_t)len);
}

/*
 * The length a record's header announces, checked: its ciphertext and tag
 * (what follows the header); 0 with se_err set if out of range.
 */
static uint32_t
seal_reclen(struct seal *se, const uint8_t *hdr)
{
	if (seal_record_len(hdr) == 0) {
		/* A TLS record (an alert) begins 0x15 or 0x17 0x03 0x03. */
		se->se_err = hdr[0] >= 0x14 && hdr[0] <= 0x18 &&
		    hdr[1] == 0x03 ? "a TLS record where a sealed one was due" :
		    "a sealed record of a length out of range";
		return (0);
	}
	return (get32(hdr));
}

/*
 * Open one whole record (header included, reclen bytes) into out, which
 * has room for SEAL_RECORD_MAX bytes; *outlen its plaintext.  -1 with
 * seal_error() set if it is not a record sealed by our peer, in order.
 */
int
seal_open(struct seal *se, const uint8_t *rec, size_t reclen, uint8_t *out,
    size_t *outlen)
{
	EVP_CIPHER_CTX	*c = seal_cctx(0);
	uint8_t		 nonce[SEAL_IVLEN], tag[SEAL_TAGLEN];
	uint32_t	 len;
	size_t		 plain;
	int		 n, m;

	if (se->se_err != NULL)
		return (-1);
	if (reclen < SEAL_HDRLEN || (len = seal_reclen(se, rec)) == 0)
		return (-1);
	if (reclen != SEAL_HDRLEN + (size_t)len) {
		se->se_err = "a sealed record cut short";
		return (-1);
	}
	plain = len - SEAL_TAGLEN;
	memcpy(tag, rec + SEAL_HDRLEN + plain, sizeof(tag));
	seal_nonce(se->se_rxiv, se->se_rxseq, nonce);
	if (c == NULL ||
	    EVP_CipherInit_ex(c, NULL, NULL, se->se_rxkey, nonce, 0) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, SEAL_TAGLEN,
	    tag) != 1 ||
	    EVP_CipherUpdate(c, NULL, &n, rec, SEAL_HDRLEN) != 1 ||
	    EVP_CipherUpdate(c, out, &n, rec + SEAL_HDRLEN, (int)plain) != 1 ||
	    EVP_CipherFinal_ex(c, out + n, &m) != 1) {
		se->se_err = "a sealed record failed authentication";
		return (-1);
	}
	se->se_rxseq++;
	*outlen = plain;
	return (0);
}

/* Say the connection failed, once, through the bufferevent's event cb. */
static enum bufferevent_filter_result
seal_fail(struct seal *se, short what)
{
	if (se->se_bev != NULL) {
		bufferevent_trigger_event(se->se_bev, BEV_EVENT_ERROR | what,
		    BEV_TRIG_DEFER_CALLBACKS);
		se->se_bev = NULL;
	}
	return (BEV_ERROR);
}

/* Filter in: open whole records into the plaintext input. */
static enum bufferevent_filter_result
seal_filter_in(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
    enum bufferevent_flush_mode mode, void *arg)
{
	struct seal	*se = arg;
	struct evbuffer_iovec v;
	uint8_t		 hdr[SEAL_HDRLEN], *rec;
	uint32_t	 len;
	size_t		 plain;
	int		 any = 0;

	(void)mode;
	if (se->se_err != NULL)
		return (BEV_ERROR);
	/* At least one record, whatever the limit: a frame may need it. */
	while (!any || limit < 0 || limit > 0) {
		if (evbuffer_copyout(src, hdr, sizeof(hdr)) < (ev_ssize_t)
		    sizeof(hdr))
			break;
		if ((len = seal_reclen(se, hdr)) == 0)
			return (seal_fail(se, BEV_EVENT_READING));
		if (evbuffer_get_length(src) < SEAL_HDRLEN + (size_t)len)
			break;
		if ((rec = evbuffer_pullup(src, SEAL_HDRLEN + len)) == NULL ||
		    evbuffer_reserve_space(dst, len, &v, 1) < 1) {
			se->se_err = "out of memory";
			return (seal_fail(se, BEV_EVENT_READING));
		}
		if (seal_open(se, rec, SEAL_HDRLEN + len, v.iov_base,
		    &plain) == -1)
			return (seal_fail(se, BEV_EVENT_READING));
		v.iov_len = plain;
		evbuffer_commit_space(dst, &v, 1);
		evbuffer_drain(src, SEAL_HDRLEN + len);
		any = 1;
		if (limit > 0)
			limit = (ev_ssize_t)plain >= limit ? 0 :
			    limit - (ev_ssize_t)plain;
	}
	return (any ? BEV_OK : BEV_NEED_MORE);
}

/* Filter out: seal what is written, up to SEAL_RECORD_MAX a record. */
static enum bufferevent_filter_result
seal_filter_out(struct evbuffer *src, struct evbuffer *dst,
    ev_ssize_t limit, enum bufferevent_flush_mode mode, void *arg)
{
	struct seal	*se = arg;
	struct evbuffer_iovec v;
	uint8_t		*in;
	size_t		 len, n;
	int		 any = 0;

	(void)mode;
	if (se->se_err != NULL)
		return (BEV_ERROR);
	while ((len = evbuffer_get_length(src)) > 0 &&
	    (!any || limit < 0 || limit > 0)) {
		if (len > SEAL_RECORD_MAX)
			len = SEAL_RECORD_MAX;
		if ((in = evbuffer_pullup(src, len)) == NULL ||
		    evbuffer_reserve_space(dst, len + SEAL_OVERHEAD, &v,
		    1) < 1) {
			se->se_err = "out of memory";
			return (seal_fail(se, BEV_EVENT_WRITING));
		}
		if ((n = seal_record(se, in, len, v.iov_base)) == 0)
			return (seal_fail(se, BEV_EVENT_WRITING));
		v.iov_len = n;
		evbuffer_commit_space(dst, &v, 1);
		evbuffer_drain(src, len);
		any = 1;
		if (limit > 0)
			limit = (ev_ssize_t)n >= limit ? 0 :
			    limit - (ev_ssize_t)n;
	}
	return (any ? BEV_OK : BEV_NEED_MORE);
}

static void
seal_filter_free(void *arg)
{
	seal_free(arg);
}

/*
 * The socket under the filter drained: the filter's write callback, so
 * that whoever waits for "all written" (a close) hears of it.
 */
static void
seal_under_drained(struct evbuffer *buf, const struct evbuffer_cb_info *ci,
    void *arg)
{
	struct bufferevent	*bev = arg;

	if (ci->n_deleted > 0 && evbuffer_get_length(buf) == 0)
		bufferevent_trigger(bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * The sealing filter over u (which it owns, with se, from then on); NULL
 * if it cannot be made.  seal_switch() puts it over a socket; the fuzz
 * target over a pair.
 */
struct bufferevent *
seal_filter(struct bufferevent *u, struct seal *se, int options)
{
	struct bufferevent	*f;

	/* The filter keeps what the socket cannot take yet (flow control). */
	bufferevent_setwatermark(u, EV_READ, 0, SEAL_UNDER);
	bufferevent_setwatermark(u, EV_WRITE, 0, SEAL_UNDER);
	f = bufferevent_filter_new(u, seal_filter_in, seal_filter_out,
	    BEV_OPT_CLOSE_ON_FREE | options, seal_filter_free, se);
	if (f != NULL)
		se->se_bev = f;
	return (f);
}

/*
 * The same socket as tls under another descriptor, in a socket
 * bufferevent, and its keys; NULL with err set, tls untouched.  The TLS
 * bufferevent closes its own descriptor when seal_takeover() frees it.
 */
static struct bufferevent *
seal_socket(struct bufferevent *tls, int server, int options,
    struct seal **sp, char *err, size_t errlen)
{
	struct bufferevent	*u;
	struct seal		*se;
	SSL			*ssl = bufferevent_openssl_get_ssl(tls);
	int			 fd;

	if (ssl == NULL || !seal_agreed(ssl)) {
		snprintf(err, errlen, "the handshake did not agree to seal");
		return (NULL);
	}
	if (evbuffer_get_length(bufferevent_get_input(tls)) > 0) {
		snprintf(err, errlen, "TLS data after the seal mark");
		return (NULL);
	}
	if ((se = seal_new(ssl, server, err, errlen)) == NULL)
		return (NULL);
	if ((fd = fcntl(bufferevent_getfd(tls), F_DUPFD_CLOEXEC, 3)) == -1) {
		snprintf(err, errlen, "dup: %s", strerror(errno));
		seal_free(se);
		return (NULL);
	}
	if ((u = bufferevent_socket_new(bufferevent_get_base(tls), fd,
	    BEV_OPT_CLOSE_ON_FREE | options)) == NULL) {
		close(fd);
		seal_free(se);
		snprintf(err, errlen, "cannot create a socket bufferevent");
		return (NULL);
	}
	*sp = se;
	return (u);
}

/*
 * bev takes over from tls: the same callbacks, marks and enabled events;
 * then tls is freed.  A read mark is at least a record, or a peer held to
 * a mark below it could never send one whole.
 */
static void
seal_takeover(struct bufferevent *tls, struct bufferevent *bev)
{
	bufferevent_data_cb	 rcb, wcb;
	bufferevent_event_cb	 ecb;
	void			*arg;
	size_t			 lo, hi;

	bufferevent_getcb(tls, &rcb, &wcb, &ecb, &arg);
	bufferevent_setcb(bev, rcb, wcb, ecb, arg);
	if (bufferevent_getwatermark(tls, EV_READ, &lo, &hi) == 0) {
		if (hi != 0 && hi < SEAL_RECORD_MAX + SEAL_OVERHEAD)
			hi = SEAL_RECORD_MAX + SEAL_OVERHEAD;
		bufferevent_setwatermark(bev, EV_READ, lo, hi);
	}
	if (bufferevent_getwatermark(tls, EV_WRITE, &lo, &hi) == 0)
		bufferevent_setwatermark(bev, EV_WRITE, lo, hi);
	bufferevent_disable(bev, EV_READ | EV_WRITE);
	bufferevent_enable(bev, bufferevent_get_enabled(tls));
	bufferevent_free(tls);
}

struct bufferevent *
seal_switch(struct bufferevent *tls, int server, int options,
    struct seal **sp, char *err, size_t errlen)
{
	struct bufferevent	*u, *f;
	struct seal		*se;

	/* The filter's socket calls back through the filter only. */
	if ((u = seal_socket(tls, server, 0, &se, err, errlen)) == NULL)
		return (NULL);
	if ((f = seal_filter(u, se, options)) == NULL) {
		bufferevent_free(u);
		seal_free(se);
		snprintf(err, errlen, "cannot create a sealing bufferevent");
		return (NULL);
	}
	seal_takeover(tls, f);
	*sp = se;
	return (f);
}

/*
 * The server's side, once the peer passed its checks: the mark as our last
 * TLS record (nothing is queued yet: it goes straight to the socket), then
 * seal_switch(); or, with SEAL_BARE, a plain socket bufferevent whose
 * owner opens and seals the records itself (seal_in(), seal_out()) and
 * frees *sp.  NULL with err set: the TLS bufferevent is not freed, and the
 * caller closes it (the peer may have the mark).
 */
struct bufferevent *
seal_serve(struct bufferevent *tls, int options, int flags, struct seal **sp,
    char *err, size_t errlen)
{
	struct bufferevent	*u;
	SSL			*ssl = bufferevent_openssl_get_ssl(tls);

	if (ssl == NULL) {
		snprintf(err, errlen, "not a TLS connection");
		return (NULL);
	}
	ERR_clear_error();
	if (SSL_write(ssl, SEAL_MARK, SEAL_MARKLEN) != SEAL_MARKLEN) {
		ERR_clear_error();
		snprintf(err, errlen, "cannot write the seal mark");
		return (NULL);
	}
	if (!(flags & SEAL_BARE))
		return (seal_switch(tls, 1, options, sp, err, errlen));
	if ((u = seal_socket(tls, 1, options, sp, err, errlen)) == NULL)
		return (NULL);
	seal_takeover(tls, u);
	return (u);
}

/*
 * Without a filter (SEAL_BARE): open the whole records of src into dst,
 * and seal all of src into dst.  0, or -1 and seal_error() says why.
 */
int
seal_in(struct seal *se, struct evbuffer *src, struct evbuffer *dst)
{
	return (seal_filter_in(src, dst, -1, BEV_NORMAL, se) == BEV_ERROR ?
	    -1 : 0);
}

int
seal_out(struct seal *se, struct evbuffer *src, struct evbuffer *dst)
{
	return (seal_filter_out(src, dst, -1, BEV_NORMAL, se) == BEV_ERROR ?
	    -1 : 0);
}

/*
 * Bytes sealed but not yet written to the socket (0: not sealed).  If
 * there are, the bufferevent's write callback runs again once the socket
 * has taken them: whoever asks (a close waiting for its last frames) hears
 * of it.  Only then is the socket's output watched, once.
 */
size_t
seal_pending(struct bufferevent *bev)
{
	struct bufferevent	*u = bufferevent_get_underlying(bev);
	struct evbuffer		*out;
	size_t			 n;

	if (u == NULL)
		return (0);
	out = bufferevent_get_output(u);
	if ((n = evbuffer_get_length(out)) > 0) {
		(void)evbuffer_remove_cb(out, seal_under_drained, bev);
		if (evbuffer_add_cb(out, seal_under_drained, bev) == NULL)
			return (0);	/* out of memory: do not wait */
	}
	return (n);
}
