/*
 * A counter-based random number generator: every draw is a pure function of
 * (seed, a, b, c), so an ES offspring depends only on (seed, generation,
 * index) and never on the order in which anything ran.
 */
#ifndef R3Q_RNG_H
#define R3Q_RNG_H

#include <stdint.h>

uint64_t	 rng_u64(uint64_t, uint64_t, uint64_t, uint64_t);
double		 rng_uniform(uint64_t, uint64_t, uint64_t, uint64_t);
double		 rng_gauss(uint64_t, uint64_t, uint64_t, uint64_t);

#endif /* R3Q_RNG_H */
