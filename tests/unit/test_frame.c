/*
 * The frame codec: round trips (alone and several frames back to back,
 * arriving a byte at a time), and rejection of oversize lengths, bad magic,
 * a wrong frame version and garbage bodies before anything is allocated.
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
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
