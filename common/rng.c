/*
 * Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC 2011).  The 64-bit seed is the
 * key; the low 32 bits of a and b and all 64 bits of c form the 128-bit
 * counter, and the high halves of a and b are folded into the key.  Each
 * (seed, a, b, c) with a and b below 2^32 therefore has its own counter.
 */
#include <math.h>
#include <stdint.h>

#include "rng.h"

#define PHILOX_M0	UINT32_C(0xD2511F53)
#define PHILOX_M1	UINT32_C(0xCD9E8D57)
#define PHILOX_W0	UINT32_C(0x9E3779B9)
#define PHILOX_W1	UINT32_C(0xBB67AE85)
#define PHILOX_ROUNDS	10

static void	 rng_philox(uint64_t, uint64_t, uint64_t, uint64_t,
		    uint32_t [4]);
static double	 rng_unit(uint64_t);

/* Run the ten Philox rounds over the counter built from (a, b, c). */
static void
rng_philox(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint32_t out[4])
{
	uint32_t	 k0, k1, x0, x1, x2, x3;
	uint64_t	 p0, p1;
	int		 r;

	k0 = (uint32_t)seed ^ (uint32_t)(a >> 32);
	k1 = (uint32_t)(seed >> 32) ^ (uint32_t)(b >> 32);
	x0 = (uint32_t)c;
	x1 = (uint32_t)(c >> 32);
	x2 = (uint32_t)b;
	x3 = (uint32_t)a;

	for (r = 0; r < PHILOX_ROUNDS; r++) {
		p0 = (uint64_t)PHILOX_M0 * x0;
		p1 = (uint64_t)PHILOX_M1 * x2;
		x0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
		x1 = (uint32_t)p1;
		x2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
		x3 = (uint32_t)p0;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	out[0] = x0;
	out[1] = x1;
	out[2] = x2;
	out[3] = x3;
}

/* Map the top 53 bits of a word to the open interval (0, 1). */
static double
rng_unit(uint64_t u)
{
	return ((double)(u >> 11) + 0.5) * 0x1.0p-53;
}

/* The first two lanes of the Philox output as one 64-bit word. */
uint64_t
rng_u64(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	uint32_t	 o[4];

	rng_philox(seed, a, b, c, o);
	return ((uint64_t)o[0] << 32 | o[1]);
}

/* A uniform double in (0, 1): never exactly 0 or 1. */
double
rng_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	return rng_unit(rng_u64(seed, a, b, c));
}

/*
 * A standard normal deviate by Box-Muller, from the two uniforms that lanes
 * 0-1 and lanes 2-3 of one Philox block give.
 */
double
rng_gauss(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	uint32_t	 o[4];
	double		 u1, u2;

	rng_philox(seed, a, b, c, o);
	u1 = rng_unit((uint64_t)o[0] << 32 | o[1]);
	u2 = rng_unit((uint64_t)o[2] << 32 | o[3]);
	return (sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}
