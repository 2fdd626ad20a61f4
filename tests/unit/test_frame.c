/*
 * The frame codec: round trips (alone and several frames back to back,
 * arriving a byte at a time), and rejection of oversize lengths, bad magic,
 * a wrong frame version and garbage bodies before anything is allocated;
 * the look at a frame's encoding before it is unpacked (frame_peek,
 * frame_count: issue 24), and an arena that gives back what one large
 * frame took.
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

#include "frame.h"

/* An Assign of n tasks with recognisable contents. */
static void
make_assign(Envelope *env, R3q__Assign *a, R3q__Task *t, R3q__Task **tp,
    double *x, size_t n)
{
	size_t	 i;

	r3q__envelope__init(env);
	r3q__assign__init(a);
	for (i = 0; i < n; i++) {
		r3q__task__init(&t[i]);
		t[i].id = 1000 + i;
		t[i].kind = (char *)(uintptr_t)"ridge-lu";
		t[i].payload.data = (uint8_t *)x;
		t[i].payload.len = 3 * sizeof(*x);
		t[i].tag = i;
		tp[i] = &t[i];
	}
	a->epoch = 0xfeedfacecafef00dULL;
	a->n_tasks = n;
	a->tasks = tp;
	env->id = 42;
	env->body_case = R3Q__ENVELOPE__BODY_ASSIGN;
	env->assign = a;
}

static void
test_header(void **state)
{
	uint8_t		 h[FRAME_HDRLEN];
	uint32_t	 len;
	char		 err[128];

	(void)state;
	frame_header_encode(h, 1234);
	assert_memory_equal(h, "R3Q\x01", 4);
	assert_int_equal(frame_header_decode(h, 2000, &len, err,
	    sizeof(err)), 0);
	assert_int_equal(len, 1234);
	/* over the limit: refused by the header alone */
	assert_int_equal(frame_header_decode(h, 1233, &len, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "exceeds the limit of 1233"));
	/* wrong frame version */
	h[3] = 7;
	assert_int_equal(frame_header_decode(h, 2000, &len, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "frame version 7, expected 1"));
	/* not R3Q at all: an HTTP request */
	memcpy(h, "GET / HT", 8);
	assert_int_equal(frame_header_decode(h, 2000, &len, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "bad frame magic"));
}

/* Several frames written back to back come out whole and in order. */
static void
test_roundtrip(void **state)
{
	struct evbuffer	*buf, *in;
	Envelope	 env, *got;
	R3q__Assign	 a;
	R3q__Task	 t[5], *tp[5];
	double		 x[3] = { 1.5, -2.25, 1e-300 };
	uint8_t		 byte;
	char		 err[128];
	int		 i, rc, frames = 0;

	(void)state;
	buf = evbuffer_new();
	in = evbuffer_new();
	make_assign(&env, &a, t, tp, x, 5);
	for (i = 0; i < 3; i++)
		assert_int_equal(frame_write(buf, &env), 0);
	/* feed one byte at a time, as a slow network would */
	while (evbuffer_remove(buf, &byte, 1) == 1) {
		evbuffer_add(in, &byte, 1);
		rc = frame_read(in, FRAME_MAX_DEFAULT, &got, err, sizeof(err));
		assert_int_not_equal(rc, -1);
		if (rc == 0)
			continue;
		frames++;
		assert_int_equal(got->id, 42);
		assert_int_equal(got->body_case, R3Q__ENVELOPE__BODY_ASSIGN);
		assert_int_equal(got->assign->n_tasks, 5);
		assert_int_equal(got->assign->epoch, a.epoch);
		assert_int_equal(got->assign->tasks[4]->id, 1004);
		assert_int_equal(got->assign->tasks[4]->tag, 4);
		assert_string_equal(got->assign->tasks[2]->kind, "ridge-lu");
		assert_int_equal(got->assign->tasks[3]->payload.len,
		    sizeof(x));
		assert_memory_equal(got->assign->tasks[3]->payload.data, x,
		    sizeof(x));
		frame_free(got);
	}
	assert_int_equal(frames, 3);
	assert_int_equal(evbuffer_get_length(in), 0);
	evbuffer_free(buf);
	evbuffer_free(in);
}

/* An oversize length is refused before its body has even arrived. */
static void
test_oversize(void **state)
{
	struct evbuffer	*in;
	Envelope	*got;
	uint8_t		 h[FRAME_HDRLEN];
	char		 err[128];

	(void)state;
	in = evbuffer_new();
	frame_header_encode(h, 0xfffffff0u);
	evbuffer_add(in, h, sizeof(h));
	assert_int_equal(frame_read(in, FRAME_MAX_DEFAULT, &got, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "exceeds the limit"));
	evbuffer_free(in);
}

/* Bodies that are not Envelopes are refused with a message. */
static void
test_garbage(void **state)
{
	static const uint8_t	 bodies[][6] = {
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },	/* bad varint */
		{ 0x0a, 0x20, 0x01, 0x02, 0x03, 0x04 },	/* truncated */
		{ 0x07, 0x00, 0x00, 0x00, 0x00, 0x00 },	/* wire type 7 */
	};
	struct evbuffer	*in;
	Envelope	*got;
	uint8_t		 h[FRAME_HDRLEN];
	char		 err[128];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		in = evbuffer_new();
		frame_header_encode(h, sizeof(bodies[i]));
		evbuffer_add(in, h, sizeof(h));
		evbuffer_add(in, bodies[i], sizeof(bodies[i]));
		assert_int_equal(frame_read(in, FRAME_MAX_DEFAULT, &got, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, "malformed message"));
		evbuffer_free(in);
	}
}

/* An unknown body field parses, with no body set: the caller refuses it. */
static void
test_unknown_type(void **state)
{
	static const uint8_t	 body[] = { 0x08, 0x05, 0xf2, 0x06, 0x00 };
	Envelope		*got;
	char			 err[128];

	(void)state;
	/* id = 5, then field 110 (length-delimited, empty) */
	assert_int_equal(frame_unpack(body, sizeof(body), 1024, &got, err,
	    sizeof(err)), 0);
	assert_int_equal(got->id, 5);
	assert_int_equal(got->body_case, R3Q__ENVELOPE__BODY__NOT_SET);
	frame_free(got);
}

/* frame_pack makes the same bytes frame_write does. */
static void
test_pack_matches_write(void **state)
{
	struct evbuffer	*buf;
	Envelope	 env;
	R3q__Assign	 a;
	R3q__Task	 t[2], *tp[2];
	double		 x[3] = { 0, 1, 2 };
	uint8_t		*p;
	size_t		 len;

	(void)state;
	make_assign(&env, &a, t, tp, x, 2);
	buf = evbuffer_new();
	assert_int_equal(frame_write(buf, &env), 0);
	p = frame_pack(&env, &len);
	assert_non_null(p);
	assert_int_equal(evbuffer_get_length(buf), len);
	assert_memory_equal(evbuffer_pullup(buf, -1), p, len);
	free(p);
	evbuffer_free(buf);
}

/*
 * Frames unpacked into an arena: an Assign too big for the arena's first
 * block (its overflow is malloc'd), then, after a reset, the same again
 * (the arena has grown to fit), then a small one; every field intact each
 * time, and a garbage frame in between leaves the arena usable.
 */
static void
test_arena(void **state)
{
	static R3q__Task	 t[3000];
	static R3q__Task	*tp[3000];
	struct frame_arena	*a;
	struct evbuffer		*in;
	Envelope		 env, *got;
	R3q__Assign		 as;
	double			 x[3] = { 1.5, -0.0, 1e300 };
	char			 err[256];
	size_t			 n, i, k;
	static const size_t	 sizes[] = { 3000, 3000, 2 };

	(void)state;
	assert_non_null(a = frame_arena_new());
	assert_non_null(in = evbuffer_new());
	for (k = 0; k < 3; k++) {
		n = sizes[k];
		make_assign(&env, &as, t, tp, x, n);
		assert_int_equal(frame_write(in, &env), 0);
		assert_int_equal(frame_read_arena(in, FRAME_MAX_DEFAULT, a,
		    &got, err, sizeof(err)), 1);
		assert_int_equal(got->body_case, R3Q__ENVELOPE__BODY_ASSIGN);
		assert_int_equal(got->assign->n_tasks, n);
		for (i = 0; i < n; i++) {
			assert_int_equal(got->assign->tasks[i]->id, 1000 + i);
			assert_string_equal(got->assign->tasks[i]->kind,
			    "ridge-lu");
			assert_int_equal(got->assign->tasks[i]->payload.len,
			    3 * sizeof(double));
			assert_memory_equal(got->assign->tasks[i]->payload.data,
			    x, 3 * sizeof(double));
		}
		frame_arena_reset(a);
		/* garbage: refused, and the arena goes on */
		evbuffer_add(in, "R3Q\x01\x00\x00\x00\x04\xff\xff\xff\xff", 12);
		assert_int_equal(frame_read_arena(in, FRAME_MAX_DEFAULT, a,
		    &got, err, sizeof(err)), -1);
		frame_arena_reset(a);
		assert_int_equal(evbuffer_get_length(in), 0);
	}
	evbuffer_free(in);
	frame_arena_free(a);
}

/* A body packed by hand: 2-byte empty elements of field sub. */
static uint8_t *
make_empties(uint32_t body, uint32_t sub, size_t n, size_t *lenp)
{
	uint8_t		*buf, *p;
	uint32_t	 v;
	size_t		 blen = 2 * n, i;

	buf = malloc(blen + 16);
	p = buf;
	*p++ = 0x08;		/* id = 7 */
	*p++ = 0x07;
	for (v = body << 3 | 2; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	for (v = (uint32_t)blen; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	for (i = 0; i < n; i++) {
		*p++ = (uint8_t)(sub << 3 | 2);
		*p++ = 0;
	}
	*lenp = (size_t)(p - buf);
	return (buf);
}

/*
 * frame_peek: the body's type and length from the first bytes, with
 * the whole frame or a prefix; frame_count: the elements of repeated
 * fields, packed or not, nested or not, against caps it stops at.
 */
static void
test_peek_count(void **state)
{
	Envelope		 env = R3Q__ENVELOPE__INIT;
	R3q__Progress		 pr = R3Q__PROGRESS__INIT;
	R3q__SubmitBnb		 sb = R3Q__SUBMIT_BNB__INIT;
	R3q__BnbParams		 bp = R3Q__BNB_PARAMS__INIT;
	struct frame_shape	 fs;
	uint64_t		 ids[1000];
	uint32_t		 times[50];
	uint8_t			*buf, *f;
	char			 err[256];
	size_t			 len, i;

	(void)state;
	/* 20000 empty results: peeked from 4 bytes, refused at 16384. */
	buf = make_empties(R3Q__ENVELOPE__BODY_RESULTS, 1, 20000, &len);
	assert_int_equal(frame_peek(buf, 2, len, &fs, err, sizeof(err)), 0);
	assert_int_equal(frame_peek(buf, 6, len, &fs, err, sizeof(err)), 1);
	assert_int_equal(fs.fs_body, R3Q__ENVELOPE__BODY_RESULTS);
	assert_int_equal(fs.fs_len, 40000);
	assert_null(fs.fs_ptr);
	assert_string_equal(frame_type_name(fs.fs_body), "results");
	assert_int_equal(frame_peek(buf, len, len, &fs, err, sizeof(err)), 1);
	assert_non_null(fs.fs_ptr);
	assert_int_equal(frame_count(&fs, 20000, 1000000, err, sizeof(err)),
	    0);
	assert_int_equal(fs.fs_rep, 20000);
	assert_string_equal(fs.fs_repname, "results");
	assert_int_equal(frame_count(&fs, FRAME_RESULTS_MAX, 1000000, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 16384 elements in "
	    "Results.results"));
	assert_int_equal(frame_count(&fs, 20000, 1000, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "fields in all"));
	/* Cut one byte short: malformed once the whole frame is in. */
	assert_int_equal(frame_peek(buf, len - 1, len - 1, &fs, err,
	    sizeof(err)), -1);
	free(buf);

	/* A singular sub-message 5000 times: counted as fields. */
	buf = make_empties(R3Q__ENVELOPE__BODY_SUBMIT_ES, 1, 5000, &len);
	assert_int_equal(frame_peek(buf, len, len, &fs, err, sizeof(err)), 1);
	assert_int_equal(frame_count(&fs, 0, 256, err, sizeof(err)), -1);
	free(buf);

	/* Packed ids, counted without decoding them. */
	for (i = 0; i < 1000; i++)
		ids[i] = i * 1000003;
	pr.n_started = 1000;
	pr.started = ids;
	pr.n_halfway = 10;
	pr.halfway = ids;
	env.body_case = R3Q__ENVELOPE__BODY_PROGRESS;
	env.progress = &pr;
	f = frame_pack(&env, &len);
	assert_int_equal(frame_peek(f + FRAME_HDRLEN, len - FRAME_HDRLEN,
	    len - FRAME_HDRLEN, &fs, err, sizeof(err)), 1);
	assert_int_equal(frame_count(&fs, 1000, 10000, err, sizeof(err)), 0);
	assert_int_equal(fs.fs_rep, 1000);
	assert_string_equal(fs.fs_repname, "started");
	assert_int_equal(fs.fs_fields, 1010);
	assert_int_equal(frame_count(&fs, 999, 10000, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "Progress.started"));
	free(f);

	/* Nested: a BnbParams's packed times inside a SubmitBnb. */
	for (i = 0; i < 50; i++)
		times[i] = (uint32_t)i * 7;
	bp.n_times = 50;
	bp.times = times;
	bp.problem = (char *)(uintptr_t)"pfsp";
	sb.params = &bp;
	r3q__envelope__init(&env);
	env.id = 1ULL << 60;
	env.body_case = R3Q__ENVELOPE__BODY_SUBMIT_BNB;
	env.submit_bnb = &sb;
	f = frame_pack(&env, &len);
	assert_int_equal(frame_peek(f + FRAME_HDRLEN, len - FRAME_HDRLEN,
	    len - FRAME_HDRLEN, &fs, err, sizeof(err)), 1);
	assert_int_equal(fs.fs_body, R3Q__ENVELOPE__BODY_SUBMIT_BNB);
	assert_int_equal(frame_count(&fs, 50, 1000, err, sizeof(err)), 0);
	assert_int_equal(fs.fs_rep, 50);
	assert_string_equal(fs.fs_repname, "times");
	assert_int_equal(frame_count(&fs, 49, 1000, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "BnbParams.times"));
	free(f);

	/* Two bodies, too many top-level fields, no body. */
	{
		static const uint8_t two[] = { 0x82, 0x01, 0x00, 0x8a, 0x01,
		    0x00 };		/* results {}, progress {} */
		uint8_t		 ids17[2 * (FRAME_TOP_MAX + 1)];
		static const uint8_t none[] = { 0x08, 0x05 };

		assert_int_equal(frame_peek(two, sizeof(two), sizeof(two),
		    &fs, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "two bodies"));
		for (i = 0; i < sizeof(ids17); i += 2) {
			ids17[i] = 0x08;
			ids17[i + 1] = 0x01;
		}
		assert_int_equal(frame_peek(ids17, sizeof(ids17),
		    sizeof(ids17), &fs, err, sizeof(err)), -1);
		assert_int_equal(frame_peek(none, sizeof(none), sizeof(none),
		    &fs, err, sizeof(err)), 1);
		assert_int_equal(fs.fs_body, 0);
	}
}

/*
 * An arena gives back what a large frame took beyond its kept block, and
 * keeps serving afterwards.
 */
static void
test_arena_release(void **state)
{
	struct frame_arena	*a;
	Envelope		*env;
	uint8_t			*buf;
	size_t			 len;

	(void)state;
	assert_non_null(a = frame_arena_new());
	buf = make_empties(R3Q__ENVELOPE__BODY_RESULTS, 1, 100000, &len);
	env = r3q__envelope__unpack(frame_arena_allocator(a), len, buf);
	assert_non_null(env);
	assert_int_equal(env->results->n_results, 100000);
	assert_true(frame_arena_reset(a) > (4u << 20));
	free(buf);
	buf = make_empties(R3Q__ENVELOPE__BODY_RESULTS, 1, 10, &len);
	env = r3q__envelope__unpack(frame_arena_allocator(a), len, buf);
	assert_non_null(env);
	assert_int_equal(env->results->n_results, 10);
	assert_int_equal(frame_arena_reset(a), 0);
	free(buf);
	frame_arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_pack_matches_write),
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_peek_count),
		cmocka_unit_test(test_arena_release),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
