/*
 * Unit tests for the built-in kinds' encodings (es/payload.h): the byte
 * layout, bit-exact round trips of doubles (negative zero, NaNs with their
 * payload bits, infinities, subnormals) and the lengths decoding refuses.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "es/payload.h"

static double	 from_bits(uint64_t);

/* The double whose IEEE-754 bits are v. */
static double
from_bits(uint64_t v)
{
	double	 d;

	memcpy(&d, &v, sizeof(d));
	return (d);
}

/* The header and one gene land at the documented offsets, little-endian. */
static void
test_layout(void **state)
{
	static const uint8_t	 want[] = {
		0x04, 0x03, 0x02, 0x01,		/* lu 0x01020304 */
		0x01, 0x00, 0x00, 0x80,		/* flags 0x80000001 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f,	/* 1.5 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0,	/* -2.0 */
	};
	uint8_t			 buf[sizeof(want)], out[ES_OUTPUT_LEN];
	double			 x = -2.0;

	(void)state;
	assert_int_equal(es_payload_len(0), ES_PAYLOAD_HEAD);
	assert_int_equal(es_payload_len(1), sizeof(want));
	es_payload_encode(buf, 0x01020304, 0x80000001, 1.5, &x, 1);
	assert_memory_equal(buf, want, sizeof(want));

	es_output_encode(out, 1.5);
	assert_memory_equal(out, want + 8, ES_OUTPUT_LEN);
}

/* Every double comes back with the same bits, in payload and output. */
static void
test_roundtrip_bits(void **state)
{
	double			 x[12], y, f;
	uint8_t			*buf, out[ES_OUTPUT_LEN];
	struct es_payload	 p;
	size_t			 i, n = sizeof(x) / sizeof(x[0]);

	(void)state;
	x[0] = 0.0;
	x[1] = -0.0;
	x[2] = from_bits(0x7ff8000000000000ULL);	/* quiet NaN */
	x[3] = from_bits(0xfff8000000000123ULL);	/* negative, payload */
	x[4] = from_bits(0x7ff0000000000001ULL);	/* signalling NaN */
	x[5] = INFINITY;
	x[6] = -INFINITY;
	x[7] = DBL_MAX;
	x[8] = DBL_MIN;
	x[9] = from_bits(1);				/* smallest subnormal */
	x[10] = -1.0 / 3.0;
	x[11] = 1e300;

	buf = malloc(es_payload_len(n));
	assert_non_null(buf);
	es_payload_encode(buf, 7, ES_PAYLOAD_SPIN, x[1], x, n);
	assert_int_equal(es_payload_decode(buf, es_payload_len(n), &p), 0);
	assert_int_equal(p.lu, 7);
	assert_int_equal(p.flags, ES_PAYLOAD_SPIN);
	assert_memory_equal(&p.work_ms, &x[1], sizeof(double));
	assert_int_equal(p.nx, n);
	for (i = 0; i < n; i++) {
		y = es_payload_x(&p, i);
		assert_memory_equal(&y, &x[i], sizeof(double));
	}
	free(buf);

	for (i = 0; i < n; i++) {
		es_output_encode(out, x[i]);
		assert_int_equal(es_output_decode(out, sizeof(out), &f), 0);
		assert_memory_equal(&f, &x[i], sizeof(double));
	}
}

/* Lengths that are not 16 + 8k, and outputs that are not 8, are refused. */
static void
test_bad_lengths(void **state)
{
	static const size_t	 bad[] = { 0, 1, 8, 15, 17, 23, 25, 31 };
	static const size_t	 badout[] = { 0, 1, 7, 9, 16 };
	uint8_t			 buf[32] = { 0 };
	struct es_payload	 p;
	double			 f;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(es_payload_decode(buf, bad[i], &p), -1);
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(es_payload_decode(NULL, 16, &p), -1);
	assert_int_equal(es_payload_decode(buf, 16, &p), 0);
	assert_int_equal(p.nx, 0);
	assert_int_equal(es_payload_decode(buf, 32, &p), 0);
	assert_int_equal(p.nx, 2);

	for (i = 0; i < sizeof(badout) / sizeof(badout[0]); i++)
		assert_int_equal(es_output_decode(buf, badout[i], &f), -1);
	assert_int_equal(es_output_decode(NULL, ES_OUTPUT_LEN, &f), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip_bits),
		cmocka_unit_test(test_bad_lengths),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
