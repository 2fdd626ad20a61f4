/*
 * SipHash-2-4, after the reference implementation of its authors: two
 * compression rounds per 8-byte word, four finalisation rounds, the
 * message length in the top byte of the last word.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "siphash.h"

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/* Read 8 bytes as a little-endian word, whatever the host's order. */
static uint64_t
le64(const uint8_t *p)
{
	return ((uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	    (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	    (uint64_t)p[7] << 56);
}

/* The 64-bit SipHash-2-4 of len bytes at in under key k. */
uint64_t
siphash24(const struct siphash_key *k, const void *in, size_t len)
{
	const uint8_t	*p = in;
	uint64_t	 v0 = 0x736f6d6570736575ULL ^ k->k0;
	uint64_t	 v1 = 0x646f72616e646f6dULL ^ k->k1;
	uint64_t	 v2 = 0x6c7967656e657261ULL ^ k->k0;
	uint64_t	 v3 = 0x7465646279746573ULL ^ k->k1;
	uint64_t	 m, b = (uint64_t)len << 56;
	uint8_t		 tail[8];
	size_t		 i;

	for (i = 0; i + 8 <= len; i += 8) {
		m = le64(p + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	memset(tail, 0, sizeof(tail));
	if (len > i)		/* an empty output's data may be NULL */
		memcpy(tail, p + i, len - i);
	b |= le64(tail);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return (v0 ^ v1 ^ v2 ^ v3);
}
