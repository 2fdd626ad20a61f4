/*
 * Join tokens and worker names: their formats, checked the same way on
 * both ends (join.h has the format).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "join.h"

/* Are the n bytes at s lowercase hex digits? */
static int
join_hex(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

static void
join_tohex(const unsigned char *b, size_t n, char *out)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Take "ID.SECRET" at s (up to end or a '.'); the rest at *rest. */
static int
join_idsecret(const char *s, struct join_token *t, const char **rest,
    char *err, size_t errlen)
{
	if (strlen(s) < JOIN_ID_HEX + 1 + JOIN_SECRET_HEX ||
	    s[JOIN_ID_HEX] != '.' || !join_hex(s, JOIN_ID_HEX)) {
		snprintf(err, errlen, "not a join token: its id is %d "
		    "lowercase hex digits", JOIN_ID_HEX);
		return (-1);
	}
	if (!join_hex(s + JOIN_ID_HEX + 1, JOIN_SECRET_HEX)) {
		snprintf(err, errlen, "not a join token: its secret is %d "
		    "lowercase hex digits", JOIN_SECRET_HEX);
		return (-1);
	}
	memcpy(t->jt_id, s, JOIN_ID_HEX);
	t->jt_id[JOIN_ID_HEX] = '\0';
	memcpy(t->jt_secret, s + JOIN_ID_HEX + 1, JOIN_SECRET_HEX);
	t->jt_secret[JOIN_SECRET_HEX] = '\0';
	*rest = s + JOIN_ID_HEX + 1 + JOIN_SECRET_HEX;
	return (0);
}

/*
 * A whole token as r3qctl token create prints it (join.h): 0, or -1 with
 * a message that does not repeat the secret.
 */
int
join_token_parse(const char *s, struct join_token *t, char *err,
    size_t errlen)
{
	const char	*p;

	memset(t, 0, sizeof(*t));
	if (strncmp(s, JOIN_PREFIX ".", sizeof(JOIN_PREFIX)) != 0) {
		snprintf(err, errlen, "not a join token: it begins with "
		    "'" JOIN_PREFIX ".' (r3qctl token create prints one)");
		return (-1);
	}
	if (join_idsecret(s + sizeof(JOIN_PREFIX), t, &p, err, errlen) == -1)
		return (-1);
	if (*p != '.' || strlen(p + 1) != JOIN_HASH_HEX ||
	    !join_hex(p + 1, JOIN_HASH_HEX)) {
		snprintf(err, errlen, "not a join token: it ends with the "
		    "CA's SHA-256, %d lowercase hex digits", JOIN_HASH_HEX);
		return (-1);
	}
	memcpy(t->jt_hash, p + 1, JOIN_HASH_HEX + 1);
	return (0);
}

/* The "ID.SECRET" of a JoinRequest. */
int
join_request_parse(const char *s, struct join_token *t, char *err,
    size_t errlen)
{
	const char	*p;

	memset(t, 0, sizeof(*t));
	if (join_idsecret(s, t, &p, err, errlen) == -1)
		return (-1);
	if (*p != '\0') {
		snprintf(err, errlen, "not a join token: ID.SECRET expected");
		return (-1);
	}
	return (0);
}

/* A new token for the CA whose hash is given, from RAND_bytes. */
int
join_token_new(struct join_token *t, const char *hash, char *err,
    size_t errlen)
{
	unsigned char	 b[JOIN_ID_BYTES + JOIN_SECRET_BYTES];

	memset(t, 0, sizeof(*t));
	if (RAND_bytes(b, sizeof(b)) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "no random bytes for a token "
		    "(RAND_bytes failed)");
		return (-1);
	}
	join_tohex(b, JOIN_ID_BYTES, t->jt_id);
	join_tohex(b + JOIN_ID_BYTES, JOIN_SECRET_BYTES, t->jt_secret);
	OPENSSL_cleanse(b, sizeof(b));
	snprintf(t->jt_hash, sizeof(t->jt_hash), "%s", hash);
	return (0);
}

void
join_token_format(const struct join_token *t, char *buf, size_t len)
{
	snprintf(buf, len, JOIN_PREFIX ".%s.%s.%s", t->jt_id, t->jt_secret,
	    t->jt_hash);
}

/*
 * A worker name, len bytes at s (it may hold a NUL): 1 to 63 of A-Z a-z
 * 0-9 . _ -, the first a letter or a digit, and not ca, master or client
 * (mkcerts's rule).  The message names the first bad character.
 */
int
join_name_check(const char *s, size_t len, char *err, size_t errlen)
{
	size_t	 i;
	int	 c;

	if (len == 0) {
		snprintf(err, errlen, "empty worker name");
		return (-1);
	}
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || (i > 0 && (c == '.' ||
		    c == '_' || c == '-')))
			continue;
		if (c == '\0')
			snprintf(err, errlen, "bad worker name: a NUL byte at "
			    "offset %zu", i);
		else if (c >= 0x20 && c < 0x7f)
			snprintf(err, errlen, "bad worker name '%.*s': '%c' "
			    "at offset %zu", (int)(len > 64 ? 64 : len), s, c,
			    i);
		else
			snprintf(err, errlen, "bad worker name: byte 0x%02x at "
			    "offset %zu", (unsigned)c, i);
		goto bad;
	}
	if (len > JOIN_NAME_MAX) {
		snprintf(err, errlen, "bad worker name: %zu characters, more "
		    "than %d", len, JOIN_NAME_MAX);
		goto bad;
	}
	if ((len == 2 && memcmp(s, "ca", 2) == 0) ||
	    (len == 6 && memcmp(s, "master", 6) == 0) ||
	    (len == 6 && memcmp(s, "client", 6) == 0)) {
		snprintf(err, errlen, "worker name '%.*s' is reserved",
		    (int)len, s);
		return (-1);
	}
	return (0);
bad:
	/* Say the rule once, after the culprit. */
	if (strlen(err) + 80 < errlen)
		strcat(err, " (a name is 1 to 63 of A-Z a-z 0-9 . _ -, "
		    "beginning with a letter or digit)");
	return (-1);
}

/* SHA-256 of n bytes, as 64 lowercase hex digits and a NUL. */
void
join_sha256_hex(const void *p, size_t n, char *out)
{
	unsigned char	 md[32];
	unsigned int	 mdlen = sizeof(md);

	if (EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != sizeof(md)) {
		ERR_clear_error();
		memset(md, 0, sizeof(md));
	}
	join_tohex(md, sizeof(md), out);
}

/* The SHA-256 of a certificate's DER encoding: the token's CAHASH. */
int
join_cert_hash(X509 *x, char *out)
{
	unsigned char	*der = NULL;
	int		 n;

	if ((n = i2d_X509(x, &der)) <= 0) {
		ERR_clear_error();
		return (-1);
	}
	join_sha256_hex(der, (size_t)n, out);
	OPENSSL_free(der);
	return (0);
}

/*
 * The keys a worker may have its certificate for: EC P-256 or P-384,
 * RSA of 2048 to 8192 bits, Ed25519 (what mkcerts makes).
 */
int
join_key_check(EVP_PKEY *k, char *err, size_t errlen)
{
	char	 group[64];
	size_t	 glen;
	int	 bits;

	bits = EVP_PKEY_get_bits(k);
	switch (EVP_PKEY_get_base_id(k)) {
	case EVP_PKEY_EC:
		if (EVP_PKEY_get_utf8_string_param(k, "group", group,
		    sizeof(group), &glen) != 1) {
			ERR_clear_error();
			snprintf(err, errlen, "an EC key on an unnamed curve: "
			    "the CA takes P-256 or P-384");
			return (-1);
		}
		if (strcmp(group, "prime256v1") == 0 ||
		    strcmp(group, "P-256") == 0 ||
		    strcmp(group, "secp384r1") == 0 ||
		    strcmp(group, "P-384") == 0)
			return (0);
		snprintf(err, errlen, "an EC key on curve %s: the CA takes "
		    "P-256 or P-384", group);
		return (-1);
	case EVP_PKEY_RSA:
		if (bits >= 2048 && bits <= 8192)
			return (0);
		snprintf(err, errlen, "an RSA key of %d bits: the CA takes "
		    "2048 to 8192", bits);
		return (-1);
	case EVP_PKEY_ED25519:
		return (0);
	default:
		snprintf(err, errlen, "a %s key: the CA takes EC (P-256, "
		    "P-384), RSA (2048 to 8192 bits) or Ed25519",
		    OBJ_nid2sn(EVP_PKEY_get_base_id(k)));
		return (-1);
	}
}
