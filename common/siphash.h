/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * INDOCRYPT 2012): a keyed 64-bit MAC for short messages.  masterd tags
 * every task copy it sends with it, so that a worker can only answer for
 * work it was given.
 */
#ifndef R3Q_SIPHASH_H
#define R3Q_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct siphash_key {
	uint64_t	 k0, k1;
};

uint64_t	 siphash24(const struct siphash_key *, const void *, size_t);

#endif /* R3Q_SIPHASH_H */
