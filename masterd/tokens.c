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
 *    peer's address, and the session closes.  Failed guesses of a token
 *    cost the address one of JOIN_BURST tries, given back one every
 *    JOIN_REFILL_S seconds;
 *  - renews a connected worker's certificate for its own name when the
 *    worker asks over its authenticated link (a JoinRequest without a
 *    token), at most once every RENEW_MIN_S seconds per connection.
 *
 * So that a joiner can trust the master before it sends its token, the
 * master's TLS chain carries the CA certificate: the joiner checks its
 * SHA-256 against the token's, then the master's certificate under it.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
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
#include "util.h"

#define JOIN_BURST		5	/* failed tries an address may make */
#define JOIN_REFILL_S		12	/* one more every this many seconds */
#define JOIN_SLOTS		1024
#define RENEW_MIN_S		10	/* between renewals of one session */
#define TOKEN_TTL_DEFAULT	86400
#define TOKEN_TTL_MAX		(366ULL * 86400)
#define TOKEN_USES_MAX		1000000
#define CERT_BACKDATE		300	/* notBefore: now less this, for
					   clocks a little behind */

/* The CA, while join tokens are on. */
static struct {
	EVP_PKEY	*key;
	X509		*ca;
	char		 hash[JOIN_HASH_HEX + 1];
	char		*pem;		/* the CA certificate, PEM */
	size_t		 pemlen;
	char		 path[CONF_STRMAX];
} tk;

/* Failed join tries by address: a token bucket each. */
static struct join_slot {
	char		 js_host[64];
	double		 js_tries;
	uint64_t	 js_at;		/* mono ns */
} *join_slots;

int
tokens_enabled(void)
{
	return (tk.key != NULL);
}

void
tokens_free(void)
{
	EVP_PKEY_free(tk.key);
	X509_free(tk.ca);
	free(tk.pem);
	memset(&tk, 0, sizeof(tk));
	free(join_slots);
	join_slots = NULL;
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
		tokens_free();
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
	tokens_free();
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

/* The bucket of host, refilled to now. */
static struct join_slot *
tokens_slot(const char *host)
{
	struct join_slot	*js;
	uint64_t		 now = mono_ns();

	if (join_slots == NULL)
		join_slots = xcalloc(JOIN_SLOTS, sizeof(*join_slots));
	js = &join_slots[siphash24(&md->mac, host, strlen(host)) % JOIN_SLOTS];
	if (strcmp(js->js_host, host) != 0) {
		snprintf(js->js_host, sizeof(js->js_host), "%s", host);
		js->js_tries = JOIN_BURST;
		js->js_at = now;
	}
	js->js_tries += (double)(now - js->js_at) / 1e9 / JOIN_REFILL_S;
	if (js->js_tries > JOIN_BURST)
		js->js_tries = JOIN_BURST;
	js->js_at = now;
	return (js);
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
 * one (O=R3Q, OU=worker, CN=name; serverAuth and clientAuth), valid from
 * a little before now for cert_lifetime, not past the CA's own end.  The
 * PEM (malloc'd), serial and end in *pem, serial, *not_after; -1 with a
 * message.
 */
static int
tokens_sign(X509_REQ *req, const char *name, char **pem, size_t *pemlen,
    char *serial, size_t seriallen, uint64_t *not_after, char *err,
    size_t errlen)
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

	end = now + (time_t)(md->conf.cert_lifetime / 1000);
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
	struct join_slot	*js;
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
	js = tokens_slot(host);
	if (js->js_tries < 1) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "too many failed "
		    "join attempts from %s (%d, then one every %d s): try "
		    "again in %.0f s", host, JOIN_BURST, JOIN_REFILL_S,
		    (1 - js->js_tries) * JOIN_REFILL_S + 0.5);
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
		js->js_tries -= 1;
		tokens_refuse(s, env->id, 0, "%s", err);
		return;
	}
	if ((rc = journal_token_get(jl, tok.jt_id, &t)) == -1) {
		tokens_refuse(s, env->id, R3Q_ERROR_BUSY, "%s",
		    journal_error(jl));
		return;
	}
	join_sha256_hex(tok.jt_secret, strlen(tok.jt_secret), hash);
	if (rc == 1 || CRYPTO_memcmp(hash, t.hash, JOIN_HASH_HEX) != 0) {
		js->js_tries -= 1;
		OPENSSL_cleanse(tok.jt_secret, sizeof(tok.jt_secret));
		tokens_refuse(s, env->id, 0, rc == 1 ? "unknown token %s" :
		    "wrong secret for token %s", tok.jt_id);
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
	rc = tokens_sign(req, name, &pem, &pemlen, serial, sizeof(serial),
	    &not_after, err, sizeof(err));
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
 * in workerd.conf): signed as at its join; its session goes on.
 */
void
tokens_renew(struct session *s, Envelope *env)
{
	R3q__JoinRequest	*jr = env->join_request;
	struct journal_cert	 jc;
	X509_REQ		*req;
	char			 name[JOIN_NAME_MAX + 1], err[512], when[40];
	char			 serial[48], *pem = NULL;
	size_t			 pemlen;
	uint64_t		 not_after, mono = mono_ns();
	int			 rc;

	if (!tokens_enabled()) {
		session_error_soft(s, env->id, "this master renews no "
		    "certificates: masterd.conf has no ca_key");
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
	rc = tokens_sign(req, name, &pem, &pemlen, serial, sizeof(serial),
	    &not_after, err, sizeof(err));
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
	if (journal_cert_add(job_journal_handle(), &jc) == -1) {
		free(pem);
		job_journal_error();
		session_error_soft(s, env->id, "masterd cannot journal a "
		    "certificate now: renew later");
		return;
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
	return (0);
}

/* The offsets of tokens_str() made pointers, once strs moves no more. */
#define TOKENS_PTR(l, f)	((f) = (l)->strs + (uintptr_t)(f))

/* r3qctl token list / certs. */
static void
tokens_send_list(struct session *s, uint64_t reqid, int certs)
{
	struct journal		*jl = job_journal_handle();
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__TokenAnswer	 ta = R3Q__TOKEN_ANSWER__INIT;
	R3q__CertList		 cl = R3Q__CERT_LIST__INIT;
	struct tokens_list	 l;
	size_t			 i;
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
		env.body_case = R3Q__ENVELOPE__BODY_CERT_LIST;
		env.cert_list = &cl;
	} else {
		l.tp = xcalloc(l.n + 1, sizeof(*l.tp));
		for (i = 0; i < l.n; i++) {
			TOKENS_PTR(&l, l.ti[i].id);
			l.tp[i] = &l.ti[i];
		}
		ta.n_tokens = l.n;
		ta.tokens = l.tp;
		env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
		env.token_answer = &ta;
	}
	session_send(s, &env);
done:
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
	ta.token = full;
	ta.n_tokens = 1;
	ta.tokens = &tip;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
	env.token_answer = &ta;
	session_send(s, &env);
	OPENSSL_cleanse(full, sizeof(full));
	log_info("token %s created by %s: %u join%s, expires %s", t.id,
	    s->s_owner, uses, uses == 1 ? "" : "s", tokens_time(t.expires,
	    when, sizeof(when)));
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
	ta.n_tokens = 1;
	ta.tokens = &tip;
	env.id = reqid;
	env.body_case = R3Q__ENVELOPE__BODY_TOKEN_ANSWER;
	env.token_answer = &ta;
	session_send(s, &env);
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
		tokens_revoke(s, env->id, env->token_revoke->id);
		break;
	default:
		break;
	}
}
