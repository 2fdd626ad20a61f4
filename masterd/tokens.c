/*
 * Join tokens: masterd as the cluster's small
 * certificate authority.  With ca_key set in masterd.conf, masterd holds
 * the CA's private key and
 *
 *  - makes join tokens for r3qctl token create (common/join.h has their
 *    format), kept in the journal with the secret only as its SHA-256;
 *  - lets a peer without a certificate finish the TLS handshake on the
 *    same port as everyone else, as a joiner (ROLE_JOINER), which may send
 *    one JoinRequest: a token and a certificate signing request.  A good
 *    token and a good request get a worker certificate for the request's
 *    name; anything else an Error naming the fault, a log line with the
 *    peer's address, and the session closes.  A name the master knows (a
 *    certificate issued for it, a worker that said hello with it) goes
 *    only to a token made for that name (r3qctl token create --name).
 *    Failed guesses of a token cost the address one of JOIN_BURST tries,
 *    given back one every JOIN_REFILL_S seconds, and all addresses
 *    together one of join_rate_global a minute;
 *  - renews a connected worker's certificate for its own name when the
 *    worker asks over its own direct link (a JoinRequest without a
 *    token), proving the name with the certificate it holds: never over
 *    a relay's stream, whose name is the relay's word, never for a
 *    revoked certificate, and once per certificate (again only if the
 *    renewal it got was never shown: then that one is revoked);
 *  - revokes (r3qctl certs revoke) every certificate of a name, or one
 *    serial: a mark in the journal, and a CRL signed with the CA's key
 *    that the listener puts in force at once (tokens_crl).
 *
 * So that a joiner can trust the master before it sends its token, the
 * master's TLS chain carries the CA certificate: the joiner checks its
 * SHA-256 against the token's, then the master's certificate under it.
 */
#include "config.h"

#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "join.h"
#include "journal.h"
#include "log.h"
#include "masterd.h"
#include "tls.h"
#include "u64map.h"
#include "util.h"

#define JOIN_BURST		5	/* failed tries an address may make */
#define JOIN_REFILL_S		12	/* one more every this many seconds */
#define JOIN_HASH		1024	/* chains of the address table */
#define JOIN_SOURCES_MAX	65536	/* addresses remembered: then the
					   one idle longest is forgotten */
#define RENEW_MIN_S		10	/* between renewals of one session */
#define TOKEN_TTL_DEFAULT	86400
#define TOKEN_TTL_MAX		(366ULL * 86400)
#define TOKEN_USES_MAX		1000000
#define CERT_BACKDATE		300	/* notBefore: now less this, for
					   clocks a little behind */

static void	tokens_advertised(char *, size_t);

/* The CA, while join tokens are on. */
static struct {
	EVP_PKEY	*key;
	X509		*ca;
	char		 hash[JOIN_HASH_HEX + 1];
	char		*pem;		/* the CA certificate, PEM */
	size_t		 pemlen;
	char		 path[CONF_STRMAX];
} tk;

/*
 * Failed join tries by address: a token bucket each, in a table chained
 * by a keyed hash of the address, so that two addresses never share or
 * reset one bucket; past JOIN_SOURCES_MAX addresses the one idle longest
 * is forgotten (the least recently used, at the head of js_lru).  And one
 * bucket for all addresses together (join_rate_global).  Owned by this
 * file, from the first join to tokens_free().
 */
struct join_src {
	char			 js_host[64];
	double			 js_tries;
	uint64_t		 js_at;		/* mono ns */
	struct join_src		*js_next;	/* in its chain */
	TAILQ_ENTRY(join_src)	 js_lru;
};
TAILQ_HEAD(join_srclist, join_src);

static struct {
	struct join_src		**chains;	/* JOIN_HASH of them */
	struct join_srclist	  lru;		/* oldest use first */
	size_t			  n;
	double			  all;		/* the global bucket */
	uint64_t		  all_at;
	int			  all_set;
} jb;

/*
 * Certificates marked in the journal (cert_marks): revoked by r3qctl
 * certs revoke, or renewed once.  Loaded at start (tokens_start), one
 * added with every mark.  And the names workers said hello with since.
 */
struct tokens_mark {
	char		 tm_serial[48];
	char		 tm_name[64];
	uint64_t	 tm_revoked;	/* Unix s; 0: in force */
	char		 tm_successor[48];	/* its renewal; "": none */
};
static struct {
	struct tokens_mark	*m;
	size_t			 n, cap;
	int			 loaded;
	struct u64map		 seen;		/* MAC of a name -> 1 */
	struct u64map		 shown;		/* MAC of a serial a worker
						   presented since start */
} mk;

int
tokens_enabled(void)
{
	return (tk.key != NULL);
}

/* Drop the CA (join tokens off, or a new one coming). */
static void
tokens_ca_drop(void)
{
	EVP_PKEY_free(tk.key);
	X509_free(tk.ca);
	free(tk.pem);
	memset(&tk, 0, sizeof(tk));
}

/* Forget the CA, the join buckets and the marks: masterd exits. */
void
tokens_free(void)
{
	struct join_src	*js;

	tokens_ca_drop();
	while (jb.chains != NULL && (js = TAILQ_FIRST(&jb.lru)) != NULL) {
		TAILQ_REMOVE(&jb.lru, js, js_lru);
		free(js);
	}
	free(jb.chains);
	memset(&jb, 0, sizeof(jb));
	free(mk.m);
	u64map_free(&mk.seen);
	u64map_free(&mk.shown);
	memset(&mk, 0, sizeof(mk));
}

static int
tokens_no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)arg;
	return (-1);
}

/* The first OpenSSL error, or what errno says. */
static const char *
tokens_ssl_error(char *buf, size_t len)
{
	unsigned long	 e = ERR_peek_last_error();

	if (e != 0)
		ERR_error_string_n(e, buf, len);
	else
		snprintf(buf, len, "unknown error");
	ERR_clear_error();
	return (buf);
}

/* The CA of a configuration: its key, certificate, hash and PEM. */
struct tokens_ca {
	EVP_PKEY	*key;
	X509		*ca;
	char		 hash[JOIN_HASH_HEX + 1];
	char		*pem;
	size_t		 pemlen;
};

static void
tokens_ca_free(struct tokens_ca *tc)
{
	EVP_PKEY_free(tc->key);
	X509_free(tc->ca);
	free(tc->pem);
	memset(tc, 0, sizeof(*tc));
}

/*
 * Load c's ca_key (mode 0600 or 0400, no passphrase) and the CA
 * certificate of c's ca it belongs to.  -1 with a message.
 */
static int
tokens_ca_load(const struct masterd_config *c, struct tokens_ca *tc,
    char *err, size_t errlen)
{
	STACK_OF(X509_INFO)	*infos = NULL;
	X509_INFO		*xi;
	BIO			*b = NULL;
	BUF_MEM			*bm;
	FILE			*f;
	char			 e[256];
	int			 i;

	memset(tc, 0, sizeof(*tc));
	if (tls_key_mode_ok(c->ca_key, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "ca_key: %s", e);
		return (-1);
	}
	if ((f = fopen(c->ca_key, "r")) == NULL) {
		snprintf(err, errlen, "ca_key %s: %s", c->ca_key,
		    strerror(errno));
		return (-1);
	}
	tc->key = PEM_read_PrivateKey(f, NULL, tokens_no_passphrase, NULL);
	fclose(f);
	if (tc->key == NULL) {
		snprintf(err, errlen, "ca_key %s: not a private key without a "
		    "passphrase (%s)", c->ca_key, tokens_ssl_error(e,
		    sizeof(e)));
		return (-1);
	}
	if ((b = BIO_new_file(c->ca, "r")) == NULL ||
	    (infos = PEM_X509_INFO_read_bio(b, NULL, NULL, NULL)) == NULL) {
		snprintf(err, errlen, "ca %s: %s", c->ca, tokens_ssl_error(e,
		    sizeof(e)));
		goto fail;
	}
	BIO_free(b);
	b = NULL;
	for (i = 0; i < sk_X509_INFO_num(infos); i++) {
		xi = sk_X509_INFO_value(infos, i);
		if (xi->x509 != NULL && X509_check_private_key(xi->x509,
		    tc->key) == 1) {
			tc->ca = xi->x509;
			X509_up_ref(tc->ca);
			break;
		}
	}
	ERR_clear_error();
	if (tc->ca == NULL) {
		snprintf(err, errlen, "ca_key %s belongs to no certificate of "
		    "ca %s: give the private key of the CA that signs the "
		    "cluster's certificates", c->ca_key, c->ca);
		goto fail;
	}
	if (X509_check_ca(tc->ca) == 0) {
		snprintf(err, errlen, "ca_key %s: its certificate in %s is not "
		    "a CA", c->ca_key, c->ca);
		goto fail;
	}
	if (join_cert_hash(tc->ca, tc->hash) == -1 ||
	    (b = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_X509(b, tc->ca) != 1) {
		snprintf(err, errlen, "ca %s: cannot encode the CA certificate",
		    c->ca);
		goto fail;
	}
	BIO_get_mem_ptr(b, &bm);
	tc->pem = xcalloc(1, bm->length + 1);
	memcpy(tc->pem, bm->data, bm->length);
	tc->pemlen = bm->length;
	BIO_free(b);
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	return (0);
fail:
	BIO_free(b);
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	tokens_ca_free(tc);
	return (-1);
}

/* Are c's ca_key and ca good (masterd -n, start, reload)?  -1 with why. */
int
tokens_check(const struct masterd_config *c, char *err, size_t errlen)
{
	struct tokens_ca	 tc;

	if (strcmp(c->ca_key, "none") == 0 || c->ca_key[0] == '\0')
		return (0);
	if (tokens_ca_load(c, &tc, err, errlen) == -1)
		return (-1);
	tokens_ca_free(&tc);
	return (0);
}

/*
 * Load c's CA (tokens_ca_load) for the context ctx of a server: it then
 * lets a peer without a certificate finish the handshake (a joiner), and
 * sends the CA in its chain.  With ca_key none, join tokens are off and
 * ctx is left as it is.  -1 after a log line.
 */
int
tokens_ctx(SSL_CTX *ctx, const struct masterd_config *c)
{
	STACK_OF(X509)		*chain = NULL;
	struct tokens_ca	 tc;
	char			 err[1024], h2[JOIN_HASH_HEX + 1], e[256];
	int			 i, have = 0;

	if (strcmp(c->ca_key, "none") == 0 || c->ca_key[0] == '\0') {
		tokens_ca_drop();
		return (0);
	}
	if (tokens_ca_load(c, &tc, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return (-1);
	}
	/* A joiner has no certificate; everyone else still needs one. */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER,
	    SSL_CTX_get_verify_callback(ctx));
	/* The CA in our chain, unless the certificate file has it. */
	if (SSL_CTX_get0_chain_certs(ctx, &chain) == 1 && chain != NULL)
		for (i = 0; i < sk_X509_num(chain); i++)
			if (join_cert_hash(sk_X509_value(chain, i), h2) == 0 &&
			    strcmp(h2, tc.hash) == 0)
				have = 1;
	if (!have && SSL_CTX_add1_chain_cert(ctx, tc.ca) != 1) {
		log_warnx("cannot add the CA to the TLS chain: %s",
		    tokens_ssl_error(e, sizeof(e)));
		tokens_ca_free(&tc);
		return (-1);
	}
	tokens_ca_drop();
	tk.key = tc.key;
	tk.ca = tc.ca;
	tk.pem = tc.pem;
	tk.pemlen = tc.pemlen;
	snprintf(tk.hash, sizeof(tk.hash), "%s", tc.hash);
	snprintf(tk.path, sizeof(tk.path), "%s", c->ca_key);
	log_info("join tokens on: ca_key %s, CA sha256 %s", c->ca_key,
	    tc.hash);
	return (0);
}

/* "host" of "host:port" or "[v6]:port". */
static void
tokens_host(const char *addr, char *host, size_t len)
{
	char	*p;

	snprintf(host, len, "%s", addr);
	if ((p = strrchr(host, ':')) != NULL)
		*p = '\0';
}

/* Refill bucket *tries, of burst, at per_s a second, to now. */
static void
tokens_refill(double *tries, uint64_t *at, double burst, double per_s,
    uint64_t now)
{
	*tries += (double)(now - *at) / 1e9 * per_s;
	if (*tries > burst)
		*tries = burst;
	*at = now;
}

/* The bucket of host, refilled to now: found, or new and full. */
static struct join_src *
tokens_source(const char *host)
{
	struct join_src	**pp, *js;
	uint64_t	  now = mono_ns();
	size_t		  h;

	if (jb.chains == NULL) {
		jb.chains = xcalloc(JOIN_HASH, sizeof(*jb.chains));
		TAILQ_INIT(&jb.lru);
	}
	h = siphash24(&md->mac, host, strlen(host)) % JOIN_HASH;
	for (js = jb.chains[h]; js != NULL; js = js->js_next)
		if (strcmp(js->js_host, host) == 0)
			break;
	if (js == NULL) {
		if (jb.n >= JOIN_SOURCES_MAX) {
			/* Forget the address idle longest. */
			js = TAILQ_FIRST(&jb.lru);
			TAILQ_REMOVE(&jb.lru, js, js_lru);
			pp = &jb.chains[siphash24(&md->mac, js->js_host,
			    strlen(js->js_host)) % JOIN_HASH];
			while (*pp != js)
				pp = &(*pp)->js_next;
			*pp = js->js_next;
			free(js);
			jb.n--;
		}
		js = xcalloc(1, sizeof(*js));
		snprintf(js->js_host, sizeof(js->js_host), "%s", host);
		js->js_tries = JOIN_BURST;
		js->js_at = now;
		js->js_next = jb.chains[h];
		jb.chains[h] = js;
		jb.n++;
	} else
		TAILQ_REMOVE(&jb.lru, js, js_lru);
	TAILQ_INSERT_TAIL(&jb.lru, js, js_lru);
	tokens_refill(&js->js_tries, &js->js_at, JOIN_BURST,
	    1.0 / JOIN_REFILL_S, now);
	return (js);
}

/* The global bucket (join_rate_global a minute), refilled to now. */
static double
tokens_global(void)
{
	double		 burst = md->conf.join_rate_global;
	uint64_t	 now = mono_ns();

	if (!jb.all_set) {
		jb.all = burst;
		jb.all_at = now;
		jb.all_set = 1;
	}
	tokens_refill(&jb.all, &jb.all_at, burst, burst / 60, now);
	return (jb.all);
}

/* A failed guess from js: one try less there and globally. */
static void
tokens_guessed(struct join_src *js)
{
	js->js_tries -= 1;
	if (md->conf.join_rate_global != 0)
		jb.all -= 1;
}

/*
 * Refuse a joiner: a log line with its address, an Error, and the session
 * closes.  The Error is written as it is, not through session_send(),
 * which would hold it back while the journal cannot be written.
 */
static void __attribute__((format(printf, 4, 5)))
tokens_refuse(struct session *s, uint64_t reqid, uint32_t code,
    const char *fmt, ...)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__Error	 e = R3Q__ERROR__INIT;
	char		 msg[512];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s: join refused: %s", s->s_addr, msg);
	e.message = msg;
	e.code = code;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_ERROR;
	env.error = &e;
	(void)session_frame(s, &env);
	session_close(s);
}

/*
 * A joiner's TLS handshake is done: say so with an empty JoinAnswer, which
 * it reads before it sends its token.  (Had the handshake failed for want
 * of a certificate, the TLS alert would come instead; reading first, the
 * joiner gets that alert rather than a reset of the connection.)
 */
void
tokens_greet(struct session *s)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JoinAnswer	 ja = R3Q__JOIN_ANSWER__INIT;

	env.body_case = R3Q__ENVELOPE__BODY_JOIN_ANSWER;
	env.join_answer = &ja;
	(void)session_frame(s, &env);
}

/* A Unix time as "2026-11-24 01:00:00 UTC". */
static const char *
tokens_time(uint64_t t, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return (buf);
}

/*
 * Check a certificate signing request: it parses, its key is one the CA
 * takes, its signature verifies, and its subject has one CN, a good
 * worker name (join_name_check), copied to name.  NULL with a message.
 */
static X509_REQ *
tokens_csr(const ProtobufCBinaryData *der, char *name, size_t namelen,
    char *err, size_t errlen)
{
	const unsigned char	*p = der->data;
	X509_REQ		*req;
	X509_NAME		*subj;
	ASN1_STRING		*cn;
	EVP_PKEY		*pk;
	char			 why[256];
	int			 idx, len;

	if (der->len == 0 || (req = d2i_X509_REQ(NULL, &p,
	    (long)der->len)) == NULL || p != der->data + der->len) {
		ERR_clear_error();
		snprintf(err, errlen, "the certificate signing request does "
		    "not parse (PKCS#10 DER expected)");
		return (NULL);
	}
	if ((pk = X509_REQ_get0_pubkey(req)) == NULL) {
		ERR_clear_error();
		snprintf(err, errlen, "the certificate signing request has "
		    "no usable public key");
		goto fail;
	}
	if (join_key_check(pk, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "the certificate signing request has %s",
		    why);
		goto fail;
	}
	if (X509_REQ_verify(req, pk) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "the certificate signing request's "
		    "signature does not verify");
		goto fail;
	}
	subj = X509_REQ_get_subject_name(req);
	if ((idx = X509_NAME_get_index_by_NID(subj, NID_commonName,
	    -1)) == -1 || X509_NAME_get_index_by_NID(subj, NID_commonName,
	    idx) != -1) {
		snprintf(err, errlen, "the certificate signing request's "
		    "subject needs exactly one CN, the worker's name");
		goto fail;
	}
	cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, idx));
	len = ASN1_STRING_length(cn);
	if (join_name_check((const char *)ASN1_STRING_get0_data(cn),
	    (size_t)len, err, errlen) == -1)
		goto fail;
	snprintf(name, namelen, "%.*s", len,
	    (const char *)ASN1_STRING_get0_data(cn));
	return (req);
fail:
	X509_REQ_free(req);
	return (NULL);
}

/* Add extension nid = value to x, issued by the CA. */
static int
tokens_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX	 v3;
	X509_EXTENSION	*ext;
	int		 rc;

	X509V3_set_ctx(&v3, tk.ca, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value)) == NULL)
		return (-1);
	rc = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return (rc == 1 ? 0 : -1);
}

/*
 * Sign a worker certificate for name with req's key, as mkcerts makes
 * one (O=R3Q, OU=worker, CN=name; clientAuth for its link, and
 * serverAuth, which peer links need: a worker serves the other end of
 * one with this certificate), valid from a little before now for
 * lifetime_s (0: cert_lifetime, and never more), not past the CA's own
 * end.  The PEM
 * (malloc'd), serial and end in *pem, serial, *not_after; -1 with a
 * message.
 */
static int
tokens_sign(X509_REQ *req, const char *name, uint64_t lifetime_s, char **pem,
    size_t *pemlen, char *serial, size_t seriallen, uint64_t *not_after,
    char *err, size_t errlen)
{
	X509		*x = NULL;
	X509_NAME	*subj = NULL;
	ASN1_INTEGER	*sn = NULL;
	BIGNUM		*bn = NULL;
	BIO		*b = NULL;
	BUF_MEM		*bm;
	unsigned char	 rnd[16];
	char		*hex = NULL, e[256];
	time_t		 now = time(NULL), end, caend;
	const EVP_MD	*md_alg;
	int		 mdnid, rc = -1;

	if (lifetime_s == 0 || lifetime_s > md->conf.cert_lifetime / 1000)
		lifetime_s = md->conf.cert_lifetime / 1000;
	end = now + (time_t)lifetime_s;
	caend = tls_cert_not_after(tk.ca);
	if (caend != 0 && end > caend)
		end = caend;
	if (end <= now) {
		snprintf(err, errlen, "the CA has expired: no certificate can "
		    "be issued");
		return (-1);
	}
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		goto ossl;
	rnd[0] &= 0x7f;		/* positive */
	rnd[0] |= 0x40;		/* and 16 bytes long */
	if ((bn = BN_bin2bn(rnd, sizeof(rnd), NULL)) == NULL ||
	    (sn = BN_to_ASN1_INTEGER(bn, NULL)) == NULL ||
	    (hex = BN_bn2hex(bn)) == NULL)
		goto ossl;
	if ((x = X509_new()) == NULL || X509_set_version(x, 2) != 1 ||
	    X509_set_serialNumber(x, sn) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(tk.ca)) != 1 ||
	    X509_time_adj_ex(X509_getm_notBefore(x), 0, -CERT_BACKDATE,
	    &now) == NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(x), 0, (long)(end - now),
	    &now) == NULL ||
	    X509_set_pubkey(x, X509_REQ_get0_pubkey(req)) != 1)
		goto ossl;
	if ((subj = X509_NAME_new()) == NULL ||
	    X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC,
	    (const unsigned char *)"R3Q", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "OU", MBSTRING_ASC,
	    (const unsigned char *)"worker", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
	    (const unsigned char *)name, -1, -1, 0) != 1 ||
	    X509_set_subject_name(x, subj) != 1)
		goto ossl;
	if (tokens_ext(x, NID_basic_constraints, "critical,CA:FALSE") == -1 ||
	    tokens_ext(x, NID_key_usage, "critical,digitalSignature") == -1 ||
	    tokens_ext(x, NID_ext_key_usage, "serverAuth,clientAuth") == -1 ||
	    tokens_ext(x, NID_subject_key_identifier, "hash") == -1 ||
	    tokens_ext(x, NID_authority_key_identifier, "keyid:always") == -1)
		goto ossl;
	/* Ed25519 and Ed448 hash for themselves; the rest with SHA-256. */
	md_alg = EVP_sha256();
	if (EVP_PKEY_get_default_digest_nid(tk.key, &mdnid) == 2 &&
	    mdnid == NID_undef)
		md_alg = NULL;
	if (X509_sign(x, tk.key, md_alg) <= 0)
		goto ossl;
	if ((b = BIO_new(BIO_s_mem())) == NULL || PEM_write_bio_X509(b,
	    x) != 1)
		goto ossl;
	BIO_get_mem_ptr(b, &bm);
	*pem = xcalloc(1, bm->length + 1);
	memcpy(*pem, bm->data, bm->length);
	(*pem)[bm->length] = '\0';
	*pemlen = bm->length;
	snprintf(serial, seriallen, "%s", hex);
	*not_after = (uint64_t)end;
	rc = 0;
	goto done;
ossl:
	snprintf(err, errlen, "cannot sign the certificate: %s",
	    tokens_ssl_error(e, sizeof(e)));
done:
	BIO_free(b);
	OPENSSL_free(hex);
	X509_NAME_free(subj);
	ASN1_INTEGER_free(sn);
	BN_free(bn);
	X509_free(x);
	return (rc);
}

/* Send the JoinAnswer for a certificate just issued. */
static void
tokens_answer(struct session *s, uint64_t reqid, char *pem, size_t pemlen,
    uint64_t not_after)
{
	Envelope	 env = R3Q__ENVELOPE__INIT;
	R3q__JoinAnswer	 ja = R3Q__JOIN_ANSWER__INIT;

	ja.cert.data = (uint8_t *)pem;
	ja.cert.len = pemlen;
	ja.ca.data = (uint8_t *)tk.pem;
	ja.ca.len = tk.pemlen;
	ja.not_after = not_after;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_JOIN_ANSWER;
	env.join_answer = &ja;
	session_send(s, &env);
}

/* A name workerd said hello with (worker.c): known from now on. */
void
tokens_seen(const char *name)
{
	(void)u64map_put(&mk.seen, siphash24(&md->mac, name, strlen(name)),
	    1);
}

/* journal_load_certs() callback: is this row arg's name? */
static int
tokens_name_row(void *arg, const struct journal_cert *c)
{
	const char	**name = arg;

	if (strcmp(c->name, name[0]) == 0)
		name[1] = "";
	return (0);
}

/*
 * Is name known: a worker said hello with it, or a certificate was
 * issued or marked for it?  1 yes, 0 no, -1 the journal failed.
 */
static int
tokens_name_known(struct journal *jl, const char *name)
{
	const char	*arg[2] = { name, NULL };
	uint64_t	 v;
	size_t		 i;

	if (u64map_get(&mk.seen, siphash24(&md->mac, name, strlen(name)),
	    &v) == 1)
		return (1);
	for (i = 0; i < mk.n; i++)
		if (strcmp(mk.m[i].tm_name, name) == 0)
			return (1);
	if (journal_load_certs(jl, tokens_name_row, arg) == -1)
		return (-1);
	return (arg[1] != NULL);
}

/* A certificate's row looked up by serial (tokens_lifetime_of). */
struct tokens_find {
	const char		*serial;
	struct journal_cert	 c;
	int			 found;
};

/* journal_load_certs() callback: keep the row of f->serial. */
static int
tokens_find_row(void *arg, const struct journal_cert *c)
{
	struct tokens_find	*f = arg;

	if (strcasecmp(c->serial, f->serial) == 0) {
		f->c = *c;
		f->found = 1;
	}
	return (0);
}

/*
 * The lifetime, s, of the certificate of serial as issued here (a
 * token's --cert-lifetime carries over to its renewals); 0 if it was not
 * issued here, or cannot be read.
 */
static uint64_t
tokens_lifetime_of(struct journal *jl, const char *serial)
{
	struct tokens_find	 f;

	memset(&f, 0, sizeof(f));
	f.serial = serial;
	if (journal_load_certs(jl, tokens_find_row, &f) == -1 || !f.found ||
	    f.c.issued == 0 || f.c.not_after <= f.c.issued)
		return (0);
	return (f.c.not_after - f.c.issued);
}

/* The mark of serial, or NULL. */
static struct tokens_mark *
tokens_mark_find(const char *serial)
{
	size_t	 i;

	for (i = 0; i < mk.n; i++)
		if (strcasecmp(mk.m[i].tm_serial, serial) == 0)
			return (&mk.m[i]);
	return (NULL);
}

/* Mark serial (of name) in memory: revoked at a time, or renewed. */
static struct tokens_mark *
tokens_mark_set(const char *serial, const char *name, uint64_t revoked,
    const char *successor)
{
	struct tokens_mark	*m;

	if ((m = tokens_mark_find(serial)) == NULL) {
		if (mk.n == mk.cap) {
			mk.cap = mk.cap ? mk.cap * 2 : 16;
			mk.m = xreallocarray(mk.m, mk.cap, sizeof(*mk.m));
		}
		m = &mk.m[mk.n++];
		memset(m, 0, sizeof(*m));
		snprintf(m->tm_serial, sizeof(m->tm_serial), "%s", serial);
		snprintf(m->tm_name, sizeof(m->tm_name), "%s", name);
	}
	if (m->tm_revoked == 0)
		m->tm_revoked = revoked;
	if (successor != NULL && successor[0] != '\0')
		snprintf(m->tm_successor, sizeof(m->tm_successor), "%s",
		    successor);
	return (m);
}

/* journal_load_marks() callback. */
static int
tokens_mark_row(void *arg, const char *serial, const char *name,
    uint64_t revoked, const char *successor)
{
	(void)arg;
	(void)tokens_mark_set(serial, name, revoked, successor);
	return (0);
}

/* The MAC of a serial, as the shown set keys it (case folded). */
static uint64_t
tokens_serial_mac(const char *serial)
{
	char	 up[48];
	size_t	 i;

	for (i = 0; serial[i] != '\0' && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)serial[i]);
	up[i] = '\0';
	return (siphash24(&md->mac, up, i));
}

/*
 * A worker's (or relay's) handshake is done (listen.c): its certificate
 * has been shown, so a renewal that made it was not lost.
 */
void
tokens_shown(struct session *s)
{
	char	 sn[48];

	if (tokens_session_serial(s, sn, sizeof(sn)) == 0)
		(void)u64map_put(&mk.shown, tokens_serial_mac(sn), 1);
}

/*
 * The serial (hex) of the certificate session s presented: from its SSL
 * object, or what was kept of it once sealed.  -1 if none.
 */
int
tokens_session_serial(struct session *s, char *buf, size_t len)
{
	SSL	*ssl;

	if (s->s_peer != NULL)
		return (tls_peer_id_serial(s->s_peer, buf, len));
	if (!s->s_tls || (ssl = bufferevent_openssl_get_ssl(s->s_bev)) ==
	    NULL)
		return (-1);
	return (tls_cert_serial(SSL_get0_peer_certificate(ssl), buf, len));
}

/*
 * A joiner's JoinRequest: the token, then the request, then the name;
 * a certificate if all is well.  See the top of the file.
 */
void
tokens_join(struct session *s, Envelope *env)
{
	struct journal		*jl = job_journal_handle();
	R3q__JoinRequest	*jr = env->join_request;
	struct journal_token	 t;
	struct journal_cert	 jc;
	struct join_token	 tok;
	struct join_src		*js;
	struct session		*o;
	X509_REQ		*req;
	char			 host[64], name[JOIN_NAME_MAX + 1], hash[65];
	char			 err[512], when[40], serial[48], *pem = NULL;
	size_t			 pemlen;
	uint64_t		 now = (uint64_t)time(NULL), not_after;
	int			 rc;

	if (env->body_case != R3Q__ENVELOPE__BODY_JOIN_REQUEST) {
		tokens_refuse(s, env->id, 0, "a peer without a certificate may "
		    "only send a join request, not %s", frame_body_name(env));
		return;
	}
	if (jr->protocol != R3Q_PROTOCOL) {
		tokens_refuse(s, env->id, 0, "protocol version mismatch: "
		    "worker speaks %u, master speaks %u", jr->protocol,
		    R3Q_PROTOCOL);
		return;
	}
	tokens_host(s->s_addr, host, sizeof(host));
	js = tokens_source(host);
	if (js->js_tries < 1) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "too many failed "
		    "join attempts from %s (%d, then one every %d s): try "
		    "again in %.0f s", host, JOIN_BURST, JOIN_REFILL_S,
		    (1 - js->js_tries) * JOIN_REFILL_S + 0.5);
		return;
	}
	if (md->conf.join_rate_global != 0 && tokens_global() < 1) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "too many failed "
		    "join attempts from all addresses (join_rate_global %u a "
		    "minute): try again in %.0f s", md->conf.join_rate_global,
		    (1 - jb.all) * 60 / md->conf.join_rate_global + 0.5);
		return;
	}
	if (jl == NULL) {
		tokens_refuse(s, env->id, 0, "this master keeps no journal "
		    "(journal = none), where join tokens live");
		return;
	}
	if (job_journal_stalled()) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "masterd cannot "
		    "write its journal (%s): no join until it can",
		    job_journal_stall_text());
		return;
	}
	if (join_request_parse(jr->token, &tok, err, sizeof(err)) == -1) {
		tokens_guessed(js);
		tokens_refuse(s, env->id, 0, "%s", err);
		return;
	}
	if ((rc = journal_token_get(jl, tok.jt_id, &t)) == -1) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "%s",
		    journal_error(jl));
		return;
	}
	join_sha256_hex(tok.jt_secret, strlen(tok.jt_secret), hash);
	/* One answer for both: a guesser learns no id that exists. */
	if (rc == 1 || CRYPTO_memcmp(hash, t.hash, JOIN_HASH_HEX) != 0) {
		tokens_guessed(js);
		OPENSSL_cleanse(tok.jt_secret, sizeof(tok.jt_secret));
		tokens_refuse(s, env->id, 0, "unknown token or wrong secret "
		    "(%s)", tok.jt_id);
		return;
	}
	OPENSSL_cleanse(tok.jt_secret, sizeof(tok.jt_secret));
	if (t.revoked) {
		tokens_refuse(s, env->id, 0, "token %s was revoked", t.id);
		return;
	}
	if (t.expires <= now) {
		tokens_refuse(s, env->id, 0, "token %s expired at %s", t.id,
		    tokens_time(t.expires, when, sizeof(when)));
		return;
	}
	if (t.used >= t.uses) {
		tokens_refuse(s, env->id, 0, "token %s is used up (%u join%s)",
		    t.id, t.uses, t.uses == 1 ? "" : "s");
		return;
	}
	if ((req = tokens_csr(&jr->csr, name, sizeof(name), err,
	    sizeof(err))) == NULL) {
		tokens_refuse(s, env->id, 0, "%s", err);
		return;
	}
	for (o = session_first(); o != NULL; o = session_next(o))
		if (o->s_worker != NULL && strcmp(o->s_worker->w_name,
		    name) == 0)
			break;
	if (o != NULL) {
		X509_REQ_free(req);
		tokens_refuse(s, env->id, 0, "a worker named %s is connected "
		    "(from %s): give this one another name (-N)", name,
		    o->s_addr);
		return;
	}
	if (t.name[0] != '\0' && strcmp(t.name, name) != 0) {
		X509_REQ_free(req);
		tokens_refuse(s, env->id, 0, "token %s is for worker %s, not %s",
		    t.id, t.name, name);
		return;
	}
	if (t.name[0] == '\0' && (rc = tokens_name_known(jl, name)) != 0) {
		X509_REQ_free(req);
		if (rc == -1)
			tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "%s",
			    journal_error(jl));
		else
			tokens_refuse(s, env->id, 0, "%s is the name of a "
			    "worker this master knows: it goes only to a token "
			    "made for it (r3qctl token create --name %s)", name,
			    name);
		return;
	}
	rc = tokens_sign(req, name, t.cert_lifetime, &pem, &pemlen, serial,
	    sizeof(serial), &not_after, err, sizeof(err));
	X509_REQ_free(req);
	if (rc == -1) {
		tokens_refuse(s, env->id, 0, "%s", err);
		return;
	}
	t.used++;
	memset(&jc, 0, sizeof(jc));
	snprintf(jc.serial, sizeof(jc.serial), "%s", serial);
	snprintf(jc.name, sizeof(jc.name), "%s", name);
	jc.issued = now;
	jc.not_after = not_after;
	snprintf(jc.token, sizeof(jc.token), "%s", t.id);
	snprintf(jc.addr, sizeof(jc.addr), "%s", s->s_addr);
	if (journal_token_put(jl, &t) == -1 ||
	    journal_cert_add(jl, &jc) == -1 ||
	    job_journal_commit() == -1) {
		free(pem);
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "masterd cannot "
		    "write its journal: no join until it can");
		job_journal_error();
		return;
	}
	log_info("worker %s joined with token %s from %s: certificate serial "
	    "%s until %s (%u of %u uses)", name, t.id, s->s_addr, serial,
	    tokens_time(not_after, when, sizeof(when)), t.used, t.uses);
	tokens_answer(s, env->id, pem, pemlen, not_after);
	free(pem);
	session_close(s);
}

/*
 * A connected worker asks for a new certificate for its name (renew_before
 * in workerd.conf): signed as at its join; its session goes on.  The name
 * is proved by the certificate this session presented: so only over a
 * worker's own direct link (a relay's stream carries a name on the
 * relay's word, and a relay's certificate is not a worker's), only while
 * that certificate is not revoked, and once for each certificate.
 */
void
tokens_renew(struct session *s, Envelope *env)
{
	R3q__JoinRequest	*jr = env->join_request;
	struct journal_cert	 jc;
	struct tokens_mark	*m;
	X509_REQ		*req;
	char			 name[JOIN_NAME_MAX + 1], err[512], when[40];
	char			 serial[48], *pem = NULL, old[48], why[768];
	char			 lost[48] = "";
	size_t			 pemlen;
	uint64_t		 not_after, mono = mono_ns();
	int			 rc;

	if (!tokens_enabled()) {
		session_error_soft(s, env->id, "this master renews no "
		    "certificates: masterd.conf has no ca_key");
		return;
	}
	if (s->s_rstream != NULL || s->s_via != NULL || s->s_relay) {
		log_warnx("%s %s (%s): renewal refused: %s", s->s_relay ?
		    "relay" : "worker", s->s_name, s->s_addr, s->s_relay ?
		    "a relay's certificate is not renewed" : "it asks through "
		    "a relay");
		session_error_soft(s, env->id, "renewal refused: a worker "
		    "renews over its own link to the master, with its own "
		    "certificate, not through a relay");
		return;
	}
	if (jr->token[0] != '\0') {
		session_error_soft(s, env->id, "a connected worker renews "
		    "without a token");
		return;
	}
	if (job_journal_handle() == NULL || job_journal_stalled()) {
		session_error_soft(s, env->id, "masterd cannot journal a "
		    "certificate now: renew later");
		return;
	}
	if (s->s_renewed != 0 && mono - s->s_renewed <
	    (uint64_t)RENEW_MIN_S * NS_PER_SEC) {
		session_error_soft(s, env->id, "renewed less than %d s ago",
		    RENEW_MIN_S);
		return;
	}
	if (tokens_session_serial(s, old, sizeof(old)) == -1) {
		log_warnx("worker %s (%s): renewal refused: no serial of its "
		    "certificate", s->s_name, s->s_addr);
		session_error_soft(s, env->id, "renewal refused: masterd "
		    "cannot tell which certificate asks");
		return;
	}
	m = tokens_mark_find(old);
	if ((m != NULL && m->tm_revoked != 0) || (s->s_peer != NULL ?
	    tls_crl_revoked_id(server_crl(), s->s_peer, why, sizeof(why)) :
	    tls_crl_revoked(server_crl(), SSL_get0_peer_certificate(
	    bufferevent_openssl_get_ssl(s->s_bev)), why, sizeof(why)))) {
		log_warnx("worker %s (%s): renewal refused: its certificate "
		    "%s is revoked", s->s_name, s->s_addr, old);
		session_error_soft(s, env->id, "renewal refused: your "
		    "certificate is revoked");
		session_close(s);
		return;
	}
	/*
	 * Renewed before: if its successor has been shown since masterd
	 * started, someone holds it, and this is a second line of keys.  If
	 * not, the answer was lost: the successor nobody uses is revoked and
	 * another issued.
	 */
	if (m != NULL && m->tm_successor[0] != '\0') {
		if (u64map_get(&mk.shown, tokens_serial_mac(m->tm_successor),
		    NULL) == 1) {
			log_warnx("worker %s (%s): renewal refused: certificate "
			    "%s was renewed before, to %s, which is in use",
			    s->s_name, s->s_addr, old, m->tm_successor);
			session_error_soft(s, env->id, "renewal refused: this "
			    "certificate (serial %s) was renewed already: use "
			    "the new one, or join again with a token", old);
			return;
		}
		snprintf(lost, sizeof(lost), "%s", m->tm_successor);
	}
	if ((req = tokens_csr(&jr->csr, name, sizeof(name), err,
	    sizeof(err))) == NULL) {
		log_warnx("worker %s (%s): renewal refused: %s", s->s_name,
		    s->s_addr, err);
		session_error_soft(s, env->id, "renewal refused: %s", err);
		return;
	}
	if (strcmp(name, s->s_name) != 0) {
		X509_REQ_free(req);
		log_warnx("worker %s (%s): renewal refused: it asks for name "
		    "%s", s->s_name, s->s_addr, name);
		session_error_soft(s, env->id, "renewal refused: a worker "
		    "renews for its own name (%s), not %s", s->s_name, name);
		return;
	}
	/* As long as the certificate it replaces was given. */
	rc = tokens_sign(req, name, tokens_lifetime_of(job_journal_handle(),
	    old), &pem, &pemlen, serial, sizeof(serial), &not_after, err,
	    sizeof(err));
	X509_REQ_free(req);
	if (rc == -1) {
		log_warnx("worker %s: renewal: %s", name, err);
		session_error_soft(s, env->id, "renewal refused: %s", err);
		return;
	}
	memset(&jc, 0, sizeof(jc));
	snprintf(jc.serial, sizeof(jc.serial), "%s", serial);
	snprintf(jc.name, sizeof(jc.name), "%s", name);
	jc.issued = (uint64_t)time(NULL);
	jc.not_after = not_after;
	snprintf(jc.addr, sizeof(jc.addr), "%s", s->s_addr);
	if (journal_cert_add(job_journal_handle(), &jc) == -1 ||
	    journal_cert_mark(job_journal_handle(), old, name, 0,
	    serial) == -1 || (lost[0] != '\0' &&
	    journal_cert_mark(job_journal_handle(), lost, name, jc.issued,
	    NULL) == -1) || job_journal_commit() == -1) {
		free(pem);
		job_journal_error();
		session_error_soft(s, env->id, "masterd cannot journal a "
		    "certificate now: renew later");
		return;
	}
	(void)tokens_mark_set(old, name, 0, serial);
	if (lost[0] != '\0') {
		(void)tokens_mark_set(lost, name, jc.issued, NULL);
		log_warnx("worker %s (%s): certificate %s, its last renewal, "
		    "was never used: revoked", name, s->s_addr, lost);
		(void)server_crl_refresh();
	}
	s->s_renewed = mono;
	log_info("worker %s (%s) renewed its certificate: serial %s until %s",
	    name, s->s_addr, serial, tokens_time(not_after, when,
	    sizeof(when)));
	tokens_answer(s, env->id, pem, pemlen, not_after);
	free(pem);
}

/* Token rows into a TokenAnswer, for journal_load_tokens(). */
struct tokens_list {
	R3q__TokenInfo	*ti;
	R3q__TokenInfo	**tp;
	size_t		 n, cap;
	R3q__CertInfo	*ci;
	R3q__CertInfo	**cp;
	char		*strs;		/* ids, names and so on */
	size_t		 slen, scap;
};

/* A copy of s in l's strings, as an offset (pointers come at the end). */
static size_t
tokens_str(struct tokens_list *l, const char *s)
{
	size_t	 n = strlen(s) + 1, off;

	while (l->slen + n > l->scap) {
		l->scap = l->scap ? l->scap * 2 : 4096;
		l->strs = xreallocarray(l->strs, 1, l->scap);
	}
	off = l->slen;
	memcpy(l->strs + off, s, n);
	l->slen += n;
	return (off);
}

static void
tokens_info(R3q__TokenInfo *ti, const struct journal_token *t)
{
	r3q__token_info__init(ti);
	ti->cert_lifetime_s = t->cert_lifetime;
	ti->created = t->created;
	ti->expires = t->expires;
	ti->uses = t->uses;
	ti->used = t->used;
	ti->revoked = t->revoked;
}

static int
tokens_list_one(void *arg, const struct journal_token *t)
{
	struct tokens_list	*l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->ti = xreallocarray(l->ti, l->cap, sizeof(*l->ti));
	}
	tokens_info(&l->ti[l->n], t);
	l->ti[l->n].id = (char *)(uintptr_t)tokens_str(l, t->id);
	l->ti[l->n].name = (char *)(uintptr_t)tokens_str(l, t->name);
	l->n++;
	return (0);
}

static int
tokens_cert_one(void *arg, const struct journal_cert *c)
{
	struct tokens_list	*l = arg;
	R3q__CertInfo		*ci;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->ci = xreallocarray(l->ci, l->cap, sizeof(*l->ci));
	}
	ci = &l->ci[l->n++];
	r3q__cert_info__init(ci);
	ci->issued = c->issued;
	ci->not_after = c->not_after;
	ci->name = (char *)(uintptr_t)tokens_str(l, c->name);
	ci->serial = (char *)(uintptr_t)tokens_str(l, c->serial);
	ci->token = (char *)(uintptr_t)tokens_str(l, c->token);
	ci->address = (char *)(uintptr_t)tokens_str(l, c->addr);
	ci->revoked = c->revoked;
	return (0);
}

/* The offsets of tokens_str() made pointers, once strs moves no more. */
#define TOKENS_PTR(l, f)	((f) = (l)->strs + (uintptr_t)(f))

/*
 * The CRLs in force, PEM (malloc'd, its length in *lenp), for r3qctl
 * certs crl and for the workers and relays masterd sends them to
 * (worker_crl_push): what they refuse besides their own crl file.  NULL
 * if none.
 */
char *
tokens_crl_pem(size_t *lenp)
{
	STACK_OF(X509_CRL)	*sk = tls_crl_stack(server_crl());
	BIO			*b;
	BUF_MEM			*bm;
	char			*pem = NULL;
	int			 i;

	if (sk == NULL || sk_X509_CRL_num(sk) == 0 ||
	    (b = BIO_new(BIO_s_mem())) == NULL)
		return (NULL);
	for (i = 0; i < sk_X509_CRL_num(sk); i++)
		if (PEM_write_bio_X509_CRL(b, sk_X509_CRL_value(sk, i)) != 1)
			break;
	if (i == sk_X509_CRL_num(sk)) {
		BIO_get_mem_ptr(b, &bm);
		pem = xcalloc(1, bm->length + 1);
		memcpy(pem, bm->data, bm->length);
		*lenp = bm->length;
	}
	BIO_free(b);
	ERR_clear_error();
	return (pem);
}

/* r3qctl token list / certs. */
static void
tokens_send_list(struct session *s, uint64_t reqid, int certs)
{
	struct journal		*jl = job_journal_handle();
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__TokenAnswer	 ta = R3Q__TOKEN_ANSWER__INIT;
	R3q__CertList		 cl = R3Q__CERT_LIST__INIT;
	struct tokens_list	 l;
	char			*crlpem = NULL;
	size_t			 i, crllen = 0;
	int			 rc;

	memset(&l, 0, sizeof(l));
	rc = certs ? journal_load_certs(jl, tokens_cert_one, &l) :
	    journal_load_tokens(jl, tokens_list_one, &l);
	if (rc == -1) {
		session_error_soft(s, reqid, "%s", journal_error(jl));
		goto done;
	}
	(void)tokens_str(&l, "");
	env.id = reqid;
	if (certs) {
		l.cp = xcalloc(l.n + 1, sizeof(*l.cp));
		for (i = 0; i < l.n; i++) {
			TOKENS_PTR(&l, l.ci[i].name);
			TOKENS_PTR(&l, l.ci[i].serial);
			TOKENS_PTR(&l, l.ci[i].token);
			TOKENS_PTR(&l, l.ci[i].address);
			l.cp[i] = &l.ci[i];
		}
		cl.n_certs = l.n;
		cl.certs = l.cp;
		if ((crlpem = tokens_crl_pem(&crllen)) != NULL) {
			cl.crl.data = (uint8_t *)crlpem;
			cl.crl.len = crllen;
		}
		env.body_case = R3Q__ENVELOPE__BODY_CERT_LIST;
		env.cert_list = &cl;
	} else {
		l.tp = xcalloc(l.n + 1, sizeof(*l.tp));
		for (i = 0; i < l.n; i++) {
			TOKENS_PTR(&l, l.ti[i].id);
			TOKENS_PTR(&l, l.ti[i].name);
			l.tp[i] = &l.ti[i];
		}
		ta.n_tokens = l.n;
		ta.tokens = l.tp;
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
		env.token_answer = &ta;
	}
	session_send(s, &env);
done:
	free(crlpem);
	free(l.ti);
	free(l.tp);
	free(l.ci);
	free(l.cp);
	free(l.strs);
}

/* r3qctl token create: a new token, shown this once in full. */
static void
tokens_create(struct session *s, uint64_t reqid, const R3q__TokenCreate *tc)
{
	struct journal		*jl = job_journal_handle();
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__TokenAnswer	 ta = R3Q__TOKEN_ANSWER__INIT;
	R3q__TokenInfo		 ti, *tip = &ti;
	struct journal_token	 t, old;
	struct join_token	 jt;
	char			 full[JOIN_TOKEN_MAX], err[256], when[40];
	uint64_t		 ttl = tc->ttl_s ? tc->ttl_s : TOKEN_TTL_DEFAULT;
	uint32_t		 uses = tc->uses ? tc->uses : 1;
	char			 master[CONF_STRMAX + 16];
	int			 tries = 0, rc;

	if (ttl > TOKEN_TTL_MAX) {
		session_error_soft(s, reqid, "a token lives at most 366 days "
		    "(--ttl 366d)");
		return;
	}
	if (uses > TOKEN_USES_MAX) {
		session_error_soft(s, reqid, "a token allows at most %d joins",
		    TOKEN_USES_MAX);
		return;
	}
	if (tc->name[0] != '\0' && join_name_check(tc->name,
	    strlen(tc->name), err, sizeof(err)) == -1) {
		session_error_soft(s, reqid, "--name %s: %s", tc->name, err);
		return;
	}
	if (tc->cert_lifetime_s != 0 && (tc->cert_lifetime_s < 60 ||
	    tc->cert_lifetime_s > md->conf.cert_lifetime / 1000)) {
		session_error_soft(s, reqid, "--cert-lifetime: from 1m to "
		    "masterd's cert_lifetime (%llu s)", (unsigned long long)
		    (md->conf.cert_lifetime / 1000));
		return;
	}
	/* A new id: 48 random bits collide only by extraordinary luck. */
	do {
		if (join_token_new(&jt, tk.hash, err, sizeof(err)) == -1) {
			session_error_soft(s, reqid, "%s", err);
			return;
		}
		if ((rc = journal_token_get(jl, jt.jt_id,
		    &old)) == -1) {
			session_error_soft(s, reqid, "%s",
			    journal_error(jl));
			return;
		}
	} while (rc == 0 && ++tries < 8);
	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "%s", jt.jt_id);
	join_sha256_hex(jt.jt_secret, strlen(jt.jt_secret), t.hash);
	t.created = (uint64_t)time(NULL);
	t.expires = t.created + ttl;
	t.uses = uses;
	snprintf(t.name, sizeof(t.name), "%s", tc->name);
	t.cert_lifetime = tc->cert_lifetime_s;
	if (journal_token_put(jl, &t) == -1 ||
	    job_journal_commit() == -1) {
		OPENSSL_cleanse(&jt, sizeof(jt));
		job_journal_error();
		session_error_soft(s, reqid, "masterd cannot write its journal: "
		    "no token");
		return;
	}
	join_token_format(&jt, full, sizeof(full));
	OPENSSL_cleanse(&jt, sizeof(jt));
	tokens_info(&ti, &t);
	ti.id = t.id;
	ti.name = t.name;
	ta.token = full;
	tokens_advertised(master, sizeof(master));
	ta.master = master;
	ta.n_tokens = 1;
	ta.tokens = &tip;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
	env.token_answer = &ta;
	session_send(s, &env);
	OPENSSL_cleanse(full, sizeof(full));
	log_info("token %s created by %s: %u join%s%s%s, expires %s", t.id,
	    s->s_owner, uses, uses == 1 ? "" : "s", t.name[0] ? " as " : "",
	    t.name, tokens_time(t.expires, when, sizeof(when)));
}

/* r3qctl token revoke ID. */
static void
tokens_revoke(struct session *s, uint64_t reqid, const char *id)
{
	struct journal		*jl = job_journal_handle();
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__TokenAnswer	 ta = R3Q__TOKEN_ANSWER__INIT;
	R3q__TokenInfo		 ti, *tip = &ti;
	struct journal_token	 t;
	int			 rc;

	if (strlen(id) != JOIN_ID_HEX ||
	    (rc = journal_token_get(jl, id, &t)) == 1) {
		session_error_soft(s, reqid, "no token %.*s", JOIN_ID_HEX + 8,
		    id);
		return;
	}
	if (rc == -1) {
		session_error_soft(s, reqid, "%s", journal_error(jl));
		return;
	}
	if (!t.revoked) {
		t.revoked = 1;
		if (journal_token_put(jl, &t) == -1 ||
		    job_journal_commit() == -1) {
			job_journal_error();
			session_error_soft(s, reqid, "masterd cannot write its "
			    "journal: token %s not revoked", id);
			return;
		}
		log_info("token %s revoked by %s", t.id, s->s_owner);
	}
	tokens_info(&ti, &t);
	ti.id = t.id;
	ti.name = t.name;
	ta.n_tokens = 1;
	ta.tokens = &tip;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
	env.token_answer = &ta;
	session_send(s, &env);
}

/*
 * The host:port a joiner dials: advertise, or else the address the TLS
 * port is bound to, with this host's name for an address of any host
 * (0.0.0.0, ::).
 */
static void
tokens_advertised(char *buf, size_t len)
{
	char	 host[256], port[16];

	if (strcmp(md->conf.advertise, "auto") != 0) {
		snprintf(buf, len, "%s", md->conf.advertise);
		return;
	}
	if (conf_split_hostport(server_listen_addr(), host, sizeof(host), port,
	    sizeof(port), "7411") == -1) {
		snprintf(buf, len, "%s", server_listen_addr());
		return;
	}
	if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0) {
		if (gethostname(host, sizeof(host)) == -1)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
	}
	if (strchr(host, ':') != NULL)
		snprintf(buf, len, "[%s]:%s", host, port);
	else
		snprintf(buf, len, "%s:%s", host, port);
}

/* What r3qctl certs revoke takes: the rows of a name, or of a serial. */
struct tokens_victims {
	const char		*what;
	int			 by_name;
	struct journal_cert	*c;
	size_t			 n, cap;
};

/* journal_load_certs() callback: take the row if it is v's. */
static int
tokens_victim_row(void *arg, const struct journal_cert *c)
{
	struct tokens_victims	*v = arg;

	if (v->by_name ? strcmp(c->name, v->what) != 0 :
	    strcasecmp(c->serial, v->what) != 0)
		return (0);
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->c = xreallocarray(v->c, v->cap, sizeof(*v->c));
	}
	v->c[v->n++] = *c;
	return (0);
}

/* Add a certificate of a connected session to v, unless v has it. */
static void
tokens_victim_add(struct tokens_victims *v, const char *serial,
    const char *name, const char *addr)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		if (strcasecmp(v->c[i].serial, serial) == 0)
			return;
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->c = xreallocarray(v->c, v->cap, sizeof(*v->c));
	}
	memset(&v->c[v->n], 0, sizeof(v->c[v->n]));
	snprintf(v->c[v->n].serial, sizeof(v->c[v->n].serial), "%s", serial);
	snprintf(v->c[v->n].name, sizeof(v->c[v->n].name), "%s", name);
	snprintf(v->c[v->n].addr, sizeof(v->c[v->n].addr), "%s", addr);
	v->n++;
}

/* Is s a string of hex digits, as a serial is? */
static int
tokens_is_serial(const char *s)
{
	size_t	 n = strspn(s, "0123456789abcdefABCDEF");

	return (n > 0 && n <= 40 && s[n] == '\0');
}

/*
 * r3qctl certs revoke NAME|SERIAL: every certificate issued for a worker
 * name (its renewals included) and the one each connected worker of
 * that name presented; or one serial.  Marked revoked in the journal,
 * then put in force at once: the CRL of tokens_crl() is rebuilt, and the
 * listener drops the sessions it revokes and refuses them at the
 * handshake from then on.  Answered with the certificates revoked.
 */
static void
tokens_certs_revoke(struct session *s, uint64_t reqid, const char *what)
{
	struct journal		*jl = job_journal_handle();
	struct tokens_victims	 v;
	struct session		*o;
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__CertList		 cl = R3Q__CERT_LIST__INIT;
	R3q__CertInfo		*ci = NULL, **cp = NULL;
	char			 sn[48];
	uint64_t		 now = (uint64_t)time(NULL);
	size_t			 i;

	memset(&v, 0, sizeof(v));
	v.what = what;
	if (what[0] == '\0' || strlen(what) >= sizeof(v.c->name)) {
		session_error_soft(s, reqid, "certs revoke: give a worker name "
		    "or a serial");
		return;
	}
	/*
	 * A name first: of a certificate issued, or of a worker here,
	 * directly or behind a relay (the certificate it passed).
	 */
	v.by_name = 1;
	if (journal_load_certs(jl, tokens_victim_row, &v) == -1)
		goto jfail;
	for (o = session_first(); o != NULL; o = session_next(o))
		if (!o->s_closing && o->s_role != ROLE_CLIENT &&
		    o->s_role != ROLE_JOINER && o->s_tls &&
		    strcmp(o->s_name, what) == 0 && (o->s_rstream != NULL ?
		    relay_serial(o, sn, sizeof(sn)) :
		    tokens_session_serial(o, sn, sizeof(sn))) == 0)
			tokens_victim_add(&v, sn, o->s_name, o->s_addr);
	if (v.n == 0) {
		if (!tokens_is_serial(what)) {
			session_error_soft(s, reqid, "certs revoke: no "
			    "certificate was issued for a worker named %s, and "
			    "none is connected; a serial is hex digits "
			    "(r3qctl certs lists them)", what);
			return;
		}
		v.by_name = 0;
		if (journal_load_certs(jl, tokens_victim_row, &v) == -1)
			goto jfail;
		if (v.n == 0)
			tokens_victim_add(&v, what, "", "");
	}
	for (i = 0; i < v.n; i++) {
		if (v.c[i].revoked == 0)
			v.c[i].revoked = now;
		if (journal_cert_mark(jl, v.c[i].serial, v.c[i].name,
		    v.c[i].revoked, NULL) == -1)
			goto jfail;
	}
	if (job_journal_commit() == -1) {
		job_journal_error();
		session_error_soft(s, reqid, "masterd cannot write its journal: "
		    "nothing revoked");
		free(v.c);
		return;
	}
	for (i = 0; i < v.n; i++) {
		(void)tokens_mark_set(v.c[i].serial, v.c[i].name,
		    v.c[i].revoked, NULL);
		log_info("certificate %s%s%s revoked by %s", v.c[i].serial,
		    v.c[i].name[0] ? " of " : "", v.c[i].name, s->s_owner);
	}
	if (server_crl_refresh() == -1) {
		session_error_soft(s, reqid, "revoked in the journal, but the "
		    "new CRL could not be put in force (see masterd's log); "
		    "it will be at the next start or reload");
		free(v.c);
		return;
	}
	/*
	 * The CRL's sweep dropped the peers it revokes; a worker of the name
	 * behind a relay whose certificate masterd did not issue is dropped
	 * here.
	 */
	for (o = session_first(); v.by_name && o != NULL; o = session_next(o))
		if (!o->s_closing && o->s_rstream != NULL &&
		    strcmp(o->s_name, what) == 0) {
			log_warnx("worker %s (%s): revoked by name; "
			    "disconnecting", o->s_name, o->s_addr);
			session_send_error(o, 0, "your certificate is revoked");
			session_close(o);
		}
	ci = xcalloc(v.n, sizeof(*ci));
	cp = xcalloc(v.n, sizeof(*cp));
	for (i = 0; i < v.n; i++) {
		r3q__cert_info__init(&ci[i]);
		ci[i].name = v.c[i].name;
		ci[i].serial = v.c[i].serial;
		ci[i].token = v.c[i].token;
		ci[i].address = v.c[i].addr;
		ci[i].issued = v.c[i].issued;
		ci[i].not_after = v.c[i].not_after;
		ci[i].revoked = v.c[i].revoked;
		cp[i] = &ci[i];
	}
	cl.n_certs = v.n;
	cl.certs = cp;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_CERT_LIST;
	env.cert_list = &cl;
	session_send(s, &env);
	free(ci);
	free(cp);
	free(v.c);
	return;
jfail:
	session_error_soft(s, reqid, "%s", journal_error(jl));
	free(v.c);
}

/* Copy the entries of crl's CRLs issued by our CA into c. */
static int
tokens_crl_copy(X509_CRL *c, const struct tls_crl *crl)
{
	STACK_OF(X509_CRL)	*sk = tls_crl_stack(crl);
	STACK_OF(X509_REVOKED)	*revs;
	X509_CRL		*o;
	X509_REVOKED		*r, *dup;
	int			 i, k;

	for (i = 0; sk != NULL && i < sk_X509_CRL_num(sk); i++) {
		o = sk_X509_CRL_value(sk, i);
		if (X509_NAME_cmp(X509_CRL_get_issuer(o),
		    X509_get_subject_name(tk.ca)) != 0 ||
		    (revs = X509_CRL_get_REVOKED(o)) == NULL)
			continue;
		for (k = 0; k < sk_X509_REVOKED_num(revs); k++) {
			r = sk_X509_REVOKED_value(revs, k);
			if ((dup = X509_REVOKED_dup(r)) == NULL ||
			    X509_CRL_add0_revoked(c, dup) != 1) {
				X509_REVOKED_free(dup);
				return (-1);
			}
		}
	}
	return (0);
}

/*
 * The CRL in force, *crlp (the crl file's, or NULL), with the journal's
 * revocations added: one CRL of our CA, signed with its key, holding the
 * file's entries of our CA and ours, in place of the file's CRLs of our
 * CA.  Nothing changes without a CA key or a revocation.  -1 with err.
 */
int
tokens_crl(struct tls_crl **crlp, char *err, size_t errlen)
{
	STACK_OF(X509_CRL)	*sk;
	X509_CRL		*c = NULL;
	X509_REVOKED		*r = NULL;
	ASN1_INTEGER		*sn = NULL;
	ASN1_TIME		*t = NULL;
	BIGNUM			*bn = NULL;
	const ASN1_TIME		*nu = NULL;
	const EVP_MD		*md_alg;
	time_t			 now = time(NULL), end;
	char			 e[256];
	size_t			 i, n = 0;
	int			 mdnid, k;

	for (i = 0; i < mk.n; i++)
		if (mk.m[i].tm_revoked != 0)
			n++;
	if (!tokens_enabled() || n == 0)
		return (0);
	if ((c = X509_CRL_new()) == NULL || X509_CRL_set_version(c, 1) != 1 ||
	    X509_CRL_set_issuer_name(c, X509_get_subject_name(tk.ca)) != 1 ||
	    (t = ASN1_TIME_set(NULL, now)) == NULL ||
	    X509_CRL_set1_lastUpdate(c, t) != 1)
		goto ossl;
	/* Its next update: the file's, else the CA's end (no false alarm). */
	sk = tls_crl_stack(*crlp);
	for (k = 0; sk != NULL && k < sk_X509_CRL_num(sk); k++)
		if (X509_NAME_cmp(X509_CRL_get_issuer(sk_X509_CRL_value(sk, k)),
		    X509_get_subject_name(tk.ca)) == 0)
			nu = X509_CRL_get0_nextUpdate(sk_X509_CRL_value(sk, k));
	if (nu != NULL) {
		if (X509_CRL_set1_nextUpdate(c, nu) != 1)
			goto ossl;
	} else {
		end = tls_cert_not_after(tk.ca);
		if (end <= now)
			end = now + 86400;
		if (ASN1_TIME_set(t, end) == NULL ||
		    X509_CRL_set1_nextUpdate(c, t) != 1)
			goto ossl;
	}
	if (tokens_crl_copy(c, *crlp) == -1)
		goto ossl;
	for (i = 0; i < mk.n; i++) {
		if (mk.m[i].tm_revoked == 0)
			continue;
		if (BN_hex2bn(&bn, mk.m[i].tm_serial) == 0 ||
		    (sn = BN_to_ASN1_INTEGER(bn, NULL)) == NULL ||
		    (r = X509_REVOKED_new()) == NULL ||
		    X509_REVOKED_set_serialNumber(r, sn) != 1 ||
		    ASN1_TIME_set(t, (time_t)mk.m[i].tm_revoked) == NULL ||
		    X509_REVOKED_set_revocationDate(r, t) != 1 ||
		    X509_CRL_add0_revoked(c, r) != 1)
			goto ossl;
		r = NULL;
		ASN1_INTEGER_free(sn);
		sn = NULL;
		BN_free(bn);
		bn = NULL;
	}
	(void)X509_CRL_sort(c);
	md_alg = EVP_sha256();
	if (EVP_PKEY_get_default_digest_nid(tk.key, &mdnid) == 2 &&
	    mdnid == NID_undef)
		md_alg = NULL;
	if (X509_CRL_sign(c, tk.key, md_alg) <= 0)
		goto ossl;
	ASN1_TIME_free(t);
	if ((*crlp = tls_crl_with(*crlp, c, "the journal (r3qctl certs "
	    "revoke)")) == NULL) {
		snprintf(err, errlen, "out of memory for the CRL");
		return (-1);
	}
	return (0);
ossl:
	snprintf(err, errlen, "cannot make the CRL of the journal's "
	    "revocations: %s", tokens_ssl_error(e, sizeof(e)));
	X509_REVOKED_free(r);
	ASN1_INTEGER_free(sn);
	BN_free(bn);
	ASN1_TIME_free(t);
	X509_CRL_free(c);
	return (-1);
}

/*
 * The journal is open (masterd.c, after the listener): load the marks
 * and, if any certificate is revoked, put them in force before the first
 * peer comes in.  -1 after a log line.
 */
int
tokens_start(void)
{
	struct journal	*jl = job_journal_handle();
	size_t		 i, n = 0;

	if (jl == NULL || mk.loaded)
		return (0);
	if (journal_load_marks(jl, tokens_mark_row, NULL) == -1) {
		log_warnx("journal: %s", journal_error(jl));
		return (-1);
	}
	mk.loaded = 1;
	for (i = 0; i < mk.n; i++)
		if (mk.m[i].tm_revoked != 0)
			n++;
	if (n == 0)
		return (0);
	if (!tokens_enabled())
		log_warnx("the journal revokes %zu certificates, but without "
		    "ca_key masterd cannot sign a CRL for them: set ca_key", n);
	return (server_crl_refresh());
}

/*
 * The token requests of r3qctl: on the control socket only (root or the
 * r3q group); the session stays open whatever the answer.
 */
void
tokens_control(struct session *s, Envelope *env)
{
	if (!s->s_admin) {
		log_warnx("client %s (%s) asked for join tokens: refused",
		    s->s_owner, s->s_addr);
		session_error_soft(s, env->id, "join tokens are managed on the "
		    "control socket only (r3qctl on the head node)");
		return;
	}
	if (env->body_case == R3Q__ENVELOPE__BODY_TOKEN_LIST &&
	    env->token_list->certs) {
		if (job_journal_handle() == NULL) {
			session_error_soft(s, env->id, "no journal (journal = "
			    "none): no certificates are issued");
			return;
		}
		tokens_send_list(s, env->id, 1);
		return;
	}
	if (!tokens_enabled()) {
		session_error_soft(s, env->id, "join tokens are disabled: "
		    "masterd.conf has no ca_key (the CA's private key, which "
		    "signs the workers' certificates; see masterd.conf(5))");
		return;
	}
	if (job_journal_handle() == NULL) {
		session_error_soft(s, env->id, "join tokens are kept in the "
		    "journal, and masterd.conf says journal = none");
		return;
	}
	switch (env->body_case) {
	case R3Q__ENVELOPE__BODY_TOKEN_CREATE:
		tokens_create(s, env->id, env->token_create);
		break;
	case R3Q__ENVELOPE__BODY_TOKEN_LIST:
		tokens_send_list(s, env->id, 0);
		break;
	case R3Q__ENVELOPE__BODY_TOKEN_REVOKE:
		if (env->token_revoke->cert[0] != '\0')
			tokens_certs_revoke(s, env->id,
			    env->token_revoke->cert);
		else
			tokens_revoke(s, env->id, env->token_revoke->id);
		break;
	default:
		break;
	}
}
