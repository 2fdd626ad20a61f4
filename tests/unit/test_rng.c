/*
 * Unit tests for the counter-based RNG: a known Philox4x32-10 answer,
 * purity, distinct counters, and the moments of the uniform and normal
 * draws.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rng.h"

#define NDRAWS	100000

/*
 * The Random123 known-answer vectors for Philox4x32-10, through our
 * mapping: key = seed, counter = (c low, c high, b, a).
 */
static void
test_known_answer(void **state)
{
	static const struct {
		uint64_t	 seed, a, b, c, want;
	} cases[] = {
		{ 0, 0, 0, 0, UINT64_C(0x6627e8d5e169c58d) },
		{ UINT64_MAX, 0xffffffff, 0xffffffff, UINT64_MAX,
		    UINT64_C(0x408f276d41c83b0e) },
		{ UINT64_C(0x299f31d0a4093822), 0x03707344, 0x13198a2e,
		    UINT64_C(0x85a308d3243f6a88),
		    UINT64_C(0xd16cfe0994fdcceb) },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(rng_u64(cases[i].seed, cases[i].a, cases[i].b,
		    cases[i].c) == cases[i].want);
}

/* The same inputs always give the same outputs. */
static void
test_deterministic(void **state)
{
	uint64_t	 i;
	double		 u, g;

	(void)state;
	for (i = 0; i < 1000; i++) {
		assert_true(rng_u64(7, i, 3, 9) == rng_u64(7, i, 3, 9));
		u = rng_uniform(7, 1, i, 2);
		assert_memory_equal(&u, &(double){ rng_uniform(7, 1, i, 2) },
		    sizeof(u));
		g = rng_gauss(7, 1, 2, i);
		assert_memory_equal(&g, &(double){ rng_gauss(7, 1, 2, i) },
		    sizeof(g));
	}
}

/* Changing any one input changes the output. */
static void
test_counters_differ(void **state)
{
	static const struct {
		uint64_t	 seed, a, b, c;
	} cases[] = {
		{ 2, 1, 1, 1 },
		{ 1, 2, 1, 1 },
		{ 1, 1, 2, 1 },
		{ 1, 1, 1, 2 },
		{ 1, 1, 1, UINT64_C(1) << 40 },
		{ 1, UINT64_C(1) << 40, 1, 1 },
		{ 1, 1, UINT64_C(1) << 40, 1 },
		{ UINT64_C(1) << 40, 1, 1, 1 },
	};
	uint64_t	 base = rng_u64(1, 1, 1, 1), v, c;
	size_t		 i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = rng_u64(cases[i].seed, cases[i].a, cases[i].b,
		    cases[i].c);
		assert_true(v != base);
		for (j = 0; j < i; j++)
			assert_true(v != rng_u64(cases[j].seed, cases[j].a,
			    cases[j].b, cases[j].c));
	}
	/* Neighbouring counters differ in about half their bits. */
	for (c = 0; c < 64; c++) {
		v = rng_u64(5, 0, 0, c) ^ rng_u64(5, 0, 0, c + 1);
		assert_in_range(__builtin_popcountll(v), 12, 52);
	}
}

/* Uniforms lie strictly inside (0, 1) and average 1/2. */
static void
test_uniform(void **state)
{
	double	 u, sum = 0.0, lo = 1.0, hi = 0.0;
	int	 i;

	(void)state;
	for (i = 0; i < NDRAWS; i++) {
		u = rng_uniform(11, 0, (uint64_t)i, 0);
		assert_true(u > 0.0 && u < 1.0);
		sum += u;
		if (u < lo)
			lo = u;
		if (u > hi)
			hi = u;
	}
	assert_true(fabs(sum / NDRAWS - 0.5) < 0.01);
	assert_true(lo < 0.001 && hi > 0.999);
}

/* Normal deviates have mean 0 and variance 1. */
static void
test_gauss(void **state)
{
	double	 g, sum = 0.0, sq = 0.0, mean, var;
	int	 i, tail = 0;

	(void)state;
	for (i = 0; i < NDRAWS; i++) {
		g = rng_gauss(13, 4, (uint64_t)i, 1);
		assert_true(isfinite(g));
		sum += g;
		sq += g * g;
		if (fabs(g) > 1.96)
			tail++;
	}
	mean = sum / NDRAWS;
	var = sq / NDRAWS - mean * mean;
	assert_true(fabs(mean) < 0.02);
	assert_true(fabs(var - 1.0) < 0.03);
	/* About 5 % beyond 1.96 sigma. */
	assert_in_range(tail, NDRAWS * 4 / 100, NDRAWS * 6 / 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answer),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_counters_differ),
		cmocka_unit_test(test_uniform),
		cmocka_unit_test(test_gauss),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
