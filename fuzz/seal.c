/*
 * Sealed frames' reader (common/seal.c): the bytes a sealed connection
 * delivers, through the very filter masterd and workerd put over their
 * sockets (here over a bufferevent pair), and the frames read out of it
 * as masterd reads them.
 *
 * The first byte chooses.  Even: the rest is the stream as it comes, which
 * must fail to authenticate (or stop short) without harm.  Odd: the rest
 * is plaintext in chunks (a 2-byte length, then that much), each sealed as
 * the peer would, one byte of the records then flipped if the second byte
 * says so; unflipped, what comes out of the filter must be the chunks'
 * bytes, in order, exactly; flipped, it must be a prefix of them, and the
 * connection must have failed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "frame.h"
#include "fuzz.h"
#include "seal.h"

static struct event_base	*base;
static uint8_t			 km[SEAL_KEYMAT];
static int			 failed;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t	 i;

	(void)argc;
	(void)argv;
	if ((base = event_base_new()) == NULL)
		abort();
	for (i = 0; i < sizeof(km); i++)
		km[i] = (uint8_t)(i * 13 + 5);
	return (0);
}

static void
seal_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	if (what & BEV_EVENT_ERROR)
		failed = 1;
}

/* Seal the chunks of in as the client would; the plaintext in *plain. */
static struct evbuffer *
seal_chunks(const uint8_t *in, size_t len, struct evbuffer *plain)
{
	struct evbuffer	*recs;
	struct seal	*c;
	uint8_t		 rec[SEAL_RECORD_MAX + SEAL_OVERHEAD];
	size_t		 n, r;

	if ((recs = evbuffer_new()) == NULL ||
	    (c = seal_from_keys(km, 0)) == NULL)
		abort();
	while (len >= 2) {
		n = (size_t)in[0] << 8 | in[1];
		in += 2;
		len -= 2;
		if (n > len)
			n = len;
		if (n > SEAL_RECORD_MAX)
			n = SEAL_RECORD_MAX;
		if ((r = seal_record(c, in, n, rec)) != n + SEAL_OVERHEAD)
			abort();
		evbuffer_add(recs, rec, r);
		evbuffer_add(plain, in, n);
		in += n;
		len -= n;
	}
	seal_free(c);
	return (recs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bufferevent	*pair[2], *f;
	struct evbuffer		*plain, *recs, *got;
	struct seal		*s;
	Envelope		*env;
	char			 err[256];
	size_t			 flip = 0, len, plen;
	uint8_t			*p;
	int			 sealed, rc;

	if (size < 2)
		return (0);
	sealed = data[0] & 1;
	if ((plain = evbuffer_new()) == NULL || (got = evbuffer_new()) == NULL)
		abort();
	if (sealed) {
		flip = data[1];
		recs = seal_chunks(data + 2, size - 2, plain);
	} else if ((recs = evbuffer_new()) == NULL)
		abort();
	else
		evbuffer_add(recs, data + 1, size - 1);
	len = evbuffer_get_length(recs);
	if (sealed && flip != 0 && len > 0) {
		p = evbuffer_pullup(recs, -1);
		p[(flip * 7919) % len] ^= (uint8_t)(flip | 1);
	}

	if (bufferevent_pair_new(base, 0, pair) == -1 ||
	    (s = seal_from_keys(km, 1)) == NULL ||
	    (f = seal_filter(pair[1], s, 0)) == NULL)
		abort();
	failed = 0;
	bufferevent_setcb(f, NULL, NULL, seal_event, NULL);
	bufferevent_enable(f, EV_READ | EV_WRITE);
	bufferevent_enable(pair[0], EV_READ | EV_WRITE);
	bufferevent_write_buffer(pair[0], recs);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_loop(base, EVLOOP_NONBLOCK);
	/* The plaintext out, and any frames in it, as masterd reads them. */
	evbuffer_add_buffer(got, bufferevent_get_input(f));
	plen = evbuffer_get_length(got);
	if (sealed) {
		if (plen > evbuffer_get_length(plain) || (plen > 0 &&
		    memcmp(evbuffer_pullup(got, -1), evbuffer_pullup(plain, -1),
		    plen) != 0))
			abort();
		if (flip == 0 && (plen != evbuffer_get_length(plain) ||
		    failed))
			abort();
		/*
		 * A flipped bit fails the connection, unless it made a
		 * length longer: then a record waits for bytes that never
		 * come.
		 */
		if (flip != 0 && len > 0 && !failed && evbuffer_get_length(
		    bufferevent_get_input(pair[1])) == 0)
			abort();
	} else if (failed && seal_error(s) == NULL)
		abort();
	while ((rc = frame_read(got, FRAME_MAX_DEFAULT, &env, err,
	    sizeof(err))) == 1)
		frame_free(env);
	bufferevent_free(f);
	bufferevent_free(pair[0]);
	event_base_loop(base, EVLOOP_NONBLOCK);
	evbuffer_free(recs);
	evbuffer_free(plain);
	evbuffer_free(got);
	return (0);
}
