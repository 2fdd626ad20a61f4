/*
 * Sealed frames' record layer (common/seal.c): what one end seals the
 * other opens, in order, byte for byte, at every size up to a whole
 * record; a flipped bit anywhere, a record out of sequence, one sealed by
 * the same end, a cut or an out-of-range length, and a TLS record are all
 * refused with the fault named, and a refusal sticks; so it is through
 * evbuffers, as masterd opens and seals its sessions' records.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "seal.h"

static uint8_t	 km[SEAL_KEYMAT];
static uint8_t	 rec[SEAL_RECORD_MAX + SEAL_OVERHEAD];
static uint8_t	 out[SEAL_RECORD_MAX];

static void
pair(struct seal **c, struct seal **s)
{
	size_t	 i;

	for (i = 0; i < sizeof(km); i++)
		km[i] = (uint8_t)(i * 7 + 3);
	*c = seal_from_keys(km, 0);
	*s = seal_from_keys(km, 1);
	assert_non_null(*c);
	assert_non_null(*s);
}

static void
test_round_trip(void **state)
{
	struct seal	*c, *s;
	uint8_t		*msg;
	size_t		 len, n, got, sizes[] = { 0, 1, 15, 16, 17, 1000,
	    SEAL_RECORD_MAX - 1, SEAL_RECORD_MAX };
	int		 dir;

	(void)state;
	pair(&c, &s);
	msg = malloc(SEAL_RECORD_MAX);
	for (n = 0; n < SEAL_RECORD_MAX; n++)
		msg[n] = (uint8_t)(n * 31);
	for (dir = 0; dir < 2; dir++)
		for (n = 0; n < sizeof(sizes) / sizeof(sizes[0]); n++) {
			len = seal_record(dir ? s : c, msg, sizes[n], rec);
			assert_int_equal(len, sizes[n] + SEAL_OVERHEAD);
			/* The plaintext does not show through. */
			if (sizes[n] >= 16)
				assert_memory_not_equal(rec + SEAL_HDRLEN, msg,
				    16);
			assert_int_equal(seal_open(dir ? c : s, rec, len, out,
			    &got), 0);
			assert_int_equal(got, sizes[n]);
			assert_memory_equal(out, msg, got);
		}
	/* More than a record is not sealed in one. */
	assert_int_equal(seal_record(c, msg, SEAL_RECORD_MAX + 1, rec), 0);
	free(msg);
	seal_free(c);
	seal_free(s);
}

/*
 * Without a filter (masterd's sessions, SEAL_BARE): seal_out() seals a
 * whole buffer, 40 KB in three records; seal_in() opens only whole
 * records, fed a kilobyte at a time, and gives the bytes back in order; a
 * damaged record fails it, and the failure sticks.
 */
static void
test_evbuffers(void **state)
{
	struct seal	*c, *s;
	struct evbuffer	*plain, *wire, *got, *part;
	uint8_t		*msg, *p;
	size_t		 len = 40000, n, fed = 0, whole, rlen;

	(void)state;
	pair(&c, &s);
	msg = malloc(len);
	for (n = 0; n < len; n++)
		msg[n] = (uint8_t)(n * 13 + 1);
	plain = evbuffer_new();
	wire = evbuffer_new();
	got = evbuffer_new();
	part = evbuffer_new();
	evbuffer_add(plain, msg, len);
	assert_int_equal(seal_out(c, plain, wire), 0);
	assert_int_equal(evbuffer_get_length(plain), 0);
	assert_int_equal(evbuffer_get_length(wire), len + 3 * SEAL_OVERHEAD);
	while ((n = evbuffer_get_length(wire)) > 0) {
		evbuffer_remove_buffer(wire, part, n < 1000 ? n : 1000);
		fed += n < 1000 ? n : 1000;
		assert_int_equal(seal_in(s, part, got), 0);
		/* Nothing of a record until it is whole, then all of it. */
		for (n = 0, whole = 0; n < len; n += SEAL_RECORD_MAX) {
			rlen = len - n < SEAL_RECORD_MAX ? len - n :
			    SEAL_RECORD_MAX;
			if (fed < (n / SEAL_RECORD_MAX + 1) * SEAL_OVERHEAD +
			    n + rlen)
				break;
			whole += rlen;
		}
		assert_int_equal(evbuffer_get_length(got), whole);
	}
	assert_int_equal(evbuffer_get_length(part), 0);
	assert_int_equal(evbuffer_get_length(got), len);
	p = evbuffer_pullup(got, -1);
	assert_memory_equal(p, msg, len);

	/* A flipped bit in the next record: refused, for good. */
	evbuffer_add(plain, msg, 100);
	assert_int_equal(seal_out(c, plain, wire), 0);
	p = evbuffer_pullup(wire, -1);
	p[SEAL_HDRLEN + 50] ^= 0x04;
	assert_int_equal(seal_in(s, wire, got), -1);
	assert_non_null(seal_error(s));
	assert_int_equal(evbuffer_get_length(got), len);
	evbuffer_add(plain, msg, 100);
	assert_int_equal(seal_out(c, plain, part), 0);
	assert_int_equal(seal_in(s, part, got), -1);
	evbuffer_free(plain);
	evbuffer_free(wire);
	evbuffer_free(got);
	evbuffer_free(part);
	free(msg);
	seal_free(c);
	seal_free(s);
}

/* Every bit of a record, flipped, makes it fail. */
static void
test_every_bit(void **state)
{
	struct seal	*c, *s;
	const char	 msg[] = "a Results frame";
	size_t		 len, bit, got;

	(void)state;
	for (bit = 0; bit < (sizeof(msg) + SEAL_OVERHEAD) * 8; bit++) {
		pair(&c, &s);
		len = seal_record(c, msg, sizeof(msg), rec);
		assert_int_equal(len, sizeof(msg) + SEAL_OVERHEAD);
		rec[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(seal_open(s, rec, len, out, &got), -1);
		assert_non_null(seal_error(s));
		seal_free(c);
		seal_free(s);
	}
}

static void
test_sequence(void **state)
{
	struct seal	*c, *s;
	uint8_t		 r1[64], r2[64];
	size_t		 l1, l2, got;

	(void)state;
	pair(&c, &s);
	l1 = seal_record(c, "one", 3, r1);
	l2 = seal_record(c, "two", 3, r2);
	/* Out of order: the second first fails, and the failure sticks. */
	assert_int_equal(seal_open(s, r2, l2, out, &got), -1);
	assert_string_equal(seal_error(s),
	    "a sealed record failed authentication");
	assert_int_equal(seal_open(s, r1, l1, out, &got), -1);
	seal_free(s);
	s = seal_from_keys(km, 1);
	assert_int_equal(seal_open(s, r1, l1, out, &got), 0);
	/* A replay of the first. */
	assert_int_equal(seal_open(s, r1, l1, out, &got), -1);
	seal_free(s);
	/* Our own record reflected back: the other direction's key. */
	s = seal_from_keys(km, 1);
	l1 = seal_record(s, "mine", 4, r1);
	assert_int_equal(seal_open(s, r1, l1, out, &got), -1);
	seal_free(c);
	seal_free(s);
}

static void
test_lengths(void **state)
{
	struct seal	*c, *s;
	size_t		 len, got;

	(void)state;
	pair(&c, &s);
	len = seal_record(c, "hello", 5, rec);
	/* What a reader without the keys learns from the header. */
	assert_int_equal(seal_record_len(rec), len);
	/* Cut short. */
	assert_int_equal(seal_open(s, rec, len - 1, out, &got), -1);
	assert_string_equal(seal_error(s), "a sealed record cut short");
	seal_free(s);
	/* A length past a record's. */
	s = seal_from_keys(km, 1);
	rec[0] = 0x00;
	rec[1] = 0x01;
	rec[2] = 0x00;
	rec[3] = 0x11;
	assert_int_equal(seal_record_len(rec), 0);
	assert_int_equal(seal_open(s, rec, len, out, &got), -1);
	assert_string_equal(seal_error(s),
	    "a sealed record of a length out of range");
	seal_free(s);
	/* Too short to hold a tag. */
	s = seal_from_keys(km, 1);
	memset(rec, 0, SEAL_HDRLEN);
	rec[3] = SEAL_TAGLEN - 1;
	assert_int_equal(seal_open(s, rec, SEAL_HDRLEN + SEAL_TAGLEN - 1,
	    out, &got), -1);
	seal_free(s);
	/* A TLS 1.3 record (an alert in application_data) says so. */
	s = seal_from_keys(km, 1);
	memcpy(rec, "\x17\x03\x03\x00\x13", 5);
	assert_int_equal(seal_open(s, rec, 5 + 0x13, out, &got), -1);
	assert_string_equal(seal_error(s),
	    "a TLS record where a sealed one was due");
	seal_free(c);
	seal_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_bit),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_evbuffers),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
