/*
 * Join tokens: what masterd and workerd share
 * about them.  A token, as r3qctl token create prints it, is
 *
 *	r3q1.ID.SECRET.CAHASH
 *
 * r3q1 its format; ID 12 lowercase hex digits (6 random bytes), the name
 * under which masterd keeps it and r3qctl lists and revokes it; SECRET 32
 * lowercase hex digits (16 bytes from the OS's random source, RAND_bytes),
 * which masterd keeps only as its SHA-256; CAHASH 64 lowercase hex
 * digits, the SHA-256 of the DER encoding of the CA certificate that signs
 * the cluster's certificates.  A joining worker trusts the master only if
 * the master's chain holds that CA and its certificate verifies under it
 * (as kubeadm's discovery hash does); it sends ID.SECRET, never CAHASH.
 */
#ifndef R3Q_JOIN_H
#define R3Q_JOIN_H

#include <stddef.h>

#include <openssl/x509.h>

#define JOIN_PREFIX		"r3q1"
#define JOIN_ID_BYTES		6
#define JOIN_SECRET_BYTES	16
#define JOIN_ID_HEX		(2 * JOIN_ID_BYTES)
#define JOIN_SECRET_HEX		(2 * JOIN_SECRET_BYTES)
#define JOIN_HASH_HEX		64
/* "r3q1." ID "." SECRET "." HASH, and a NUL */
#define JOIN_TOKEN_MAX		(5 + JOIN_ID_HEX + 1 + JOIN_SECRET_HEX + 1 + \
				    JOIN_HASH_HEX + 1)

/* Worker names: as mkcerts takes them (^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$). */
#define JOIN_NAME_MAX		63

struct join_token {
	char	jt_id[JOIN_ID_HEX + 1];
	char	jt_secret[JOIN_SECRET_HEX + 1];
	char	jt_hash[JOIN_HASH_HEX + 1];	/* "" in a JoinRequest's */
};

int	join_token_parse(const char *, struct join_token *, char *, size_t);
int	join_request_parse(const char *, struct join_token *, char *,
	    size_t);
int	join_token_new(struct join_token *, const char *, char *, size_t);
void	join_token_format(const struct join_token *, char *, size_t);
int	join_name_check(const char *, size_t, char *, size_t);
void	join_sha256_hex(const void *, size_t, char *);
int	join_cert_hash(X509 *, char *);
int	join_key_check(EVP_PKEY *, char *, size_t);

#endif /* R3Q_JOIN_H */
