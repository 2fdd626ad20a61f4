#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"

/* Write a header for a body of len bytes. */
void
frame_header_encode(uint8_t *hdr, uint32_t len)
{
	uint32_t	 w;

	w = htonl(FRAME_MAGIC | FRAME_VERSION);
	memcpy(hdr, &w, 4);
	w = htonl(len);
	memcpy(hdr + 4, &w, 4);
}

/*
 * Check a header: magic, version, and the length against max.  Returns 0
 * and the body length, or -1 with a message for the log.
 */
int
frame_header_decode(const uint8_t *hdr, uint64_t max, uint32_t *len,
    char *err, size_t errlen)
{
	uint32_t	 w, l;

	memcpy(&w, hdr, 4);
	w = ntohl(w);
	memcpy(&l, hdr + 4, 4);
	l = ntohl(l);
	if ((w & 0xffffff00u) != FRAME_MAGIC) {
		snprintf(err, errlen, "bad frame magic 0x%08x (not an R3Q "
		    "peer?)", w);
		return (-1);
	}
	if ((w & 0xff) != FRAME_VERSION) {
		snprintf(err, errlen, "frame version %u, expected %u",
		    w & 0xff, FRAME_VERSION);
		return (-1);
	}
	if (l > max) {
		snprintf(err, errlen, "frame of %u bytes exceeds the limit of "
		    "%llu", l, (unsigned long long)max);
		return (-1);
	}
	*len = l;
	return (0);
}

/* Append one framed Envelope to out, packing straight into its space. */
int
frame_write(struct evbuffer *out, const Envelope *env)
{
	struct evbuffer_iovec	 v;
	size_t			 len;

	len = protobuf_c_message_get_packed_size(&env->base);
	if (len > UINT32_MAX)
		return (-1);
	if (evbuffer_reserve_space(out, FRAME_HDRLEN + len, &v, 1) < 1 ||
	    v.iov_len < FRAME_HDRLEN + len)
		return (-1);
	frame_header_encode(v.iov_base, (uint32_t)len);
	protobuf_c_message_pack(&env->base, (uint8_t *)v.iov_base +
	    FRAME_HDRLEN);
	v.iov_len = FRAME_HDRLEN + len;
	return (evbuffer_commit_space(out, &v, 1));
}

/*
 * An arena for unpacking: protobuf-c allocates every message, array and
 * string of an Envelope separately, so a Results frame of n results cost
 * 2n + 3 mallocs and as many frees.  From an arena they cost a pointer
 * bump each, and all go at once when the caller resets it after
 * dispatching.  What does not fit is malloc'd and freed on reset, and the
 * arena grows to fit the next time.
 */
#define ARENA_ALIGN	16
#define ARENA_MIN	(64u << 10)

struct arena_big {
	struct arena_big	*ab_next;
	uint8_t			 ab_pad[ARENA_ALIGN - sizeof(void *)];
};

struct frame_arena {
	uint8_t			*fa_buf;
	size_t			 fa_size;
	size_t			 fa_used;
	size_t			 fa_want;	/* asked since the last reset */
	struct arena_big	*fa_big;
	ProtobufCAllocator	 fa_pa;
};

static void *
arena_alloc(void *data, size_t size)
{
	struct frame_arena	*a = data;
	struct arena_big	*b;
	void			*p;

	if (size > SIZE_MAX - ARENA_ALIGN - sizeof(*b))
		return (NULL);
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	a->fa_want += size;
	if (a->fa_size - a->fa_used >= size) {
		p = a->fa_buf + a->fa_used;
		a->fa_used += size;
		return (p);
	}
	if ((b = malloc(sizeof(*b) + size)) == NULL)
		return (NULL);
	b->ab_next = a->fa_big;
	a->fa_big = b;
	return (b + 1);
}

static void
arena_free_one(void *data, void *p)
{
	(void)data;
	(void)p;		/* all of it goes on reset */
}

struct frame_arena *
frame_arena_new(void)
{
	struct frame_arena	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return (NULL);
	if ((a->fa_buf = malloc(ARENA_MIN)) == NULL) {
		free(a);
		return (NULL);
	}
	a->fa_size = ARENA_MIN;
	a->fa_pa.alloc = arena_alloc;
	a->fa_pa.free = arena_free_one;
	a->fa_pa.allocator_data = a;
	return (a);
}

/* Everything unpacked from the arena is gone; make room for as much. */
void
frame_arena_reset(struct frame_arena *a)
{
	struct arena_big	*b;
	uint8_t			*nb;
	size_t			 n;

	while ((b = a->fa_big) != NULL) {
		a->fa_big = b->ab_next;
		free(b);
	}
	if (a->fa_want > a->fa_size) {
		for (n = a->fa_size; n < a->fa_want && n < SIZE_MAX / 2; n *= 2)
			;
		if ((nb = malloc(n)) != NULL) {
			free(a->fa_buf);
			a->fa_buf = nb;
			a->fa_size = n;
		}
	}
	a->fa_used = a->fa_want = 0;
}

void
frame_arena_free(struct frame_arena *a)
{
	if (a == NULL)
		return;
	frame_arena_reset(a);
	free(a->fa_buf);
	free(a);
}

/* Unpack a body; -1 with a message if it is not an Envelope. */
static int
frame_unpack_with(const uint8_t *body, size_t len, uint64_t max,
    ProtobufCAllocator *pa, Envelope **envp, char *err, size_t errlen)
{
	Envelope	*env;

	if (len > max) {
		snprintf(err, errlen, "frame of %zu bytes exceeds the limit "
		    "of %llu", len, (unsigned long long)max);
		return (-1);
	}
	env = r3q__envelope__unpack(pa, len, body);
	if (env == NULL) {
		snprintf(err, errlen, "malformed message (%zu bytes)", len);
		return (-1);
	}
	*envp = env;
	return (0);
}

int
frame_unpack(const uint8_t *body, size_t len, uint64_t max, Envelope **envp,
    char *err, size_t errlen)
{
	return (frame_unpack_with(body, len, max, NULL, envp, err, errlen));
}

/*
 * Take one frame off the buffer if it is all there.  Returns 1 and an
 * Envelope, 0 if more bytes are needed, -1 with a message on bad input
 * (the caller closes the connection).  With an arena, the Envelope lives
 * in it until frame_arena_reset(); without, frame_free() frees it.
 */
int
frame_read_arena(struct evbuffer *in, uint64_t max, struct frame_arena *a,
    Envelope **envp, char *err, size_t errlen)
{
	uint8_t		 hdr[FRAME_HDRLEN], *body;
	uint32_t	 len;
	int		 rc;

	if (evbuffer_get_length(in) < FRAME_HDRLEN)
		return (0);
	if (evbuffer_copyout(in, hdr, FRAME_HDRLEN) != FRAME_HDRLEN)
		return (0);
	if (frame_header_decode(hdr, max, &len, err, errlen) == -1)
		return (-1);
	if (evbuffer_get_length(in) < FRAME_HDRLEN + (size_t)len)
		return (0);
	body = evbuffer_pullup(in, FRAME_HDRLEN + (ssize_t)len);
	if (body == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	rc = frame_unpack_with(body + FRAME_HDRLEN, len, max,
	    a != NULL ? &a->fa_pa : NULL, envp, err, errlen);
	evbuffer_drain(in, FRAME_HDRLEN + (size_t)len);
	return (rc == -1 ? -1 : 1);
}

int
frame_read(struct evbuffer *in, uint64_t max, Envelope **envp, char *err,
    size_t errlen)
{
	return (frame_read_arena(in, max, NULL, envp, err, errlen));
}

void
frame_free(Envelope *env)
{
	if (env != NULL)
		r3q__envelope__free_unpacked(env, NULL);
}

/* Pack a whole frame (header and body) into a new buffer. */
uint8_t *
frame_pack(const Envelope *env, size_t *lenp)
{
	uint8_t	*buf;
	size_t	 len;

	len = protobuf_c_message_get_packed_size(&env->base);
	if (len > UINT32_MAX || (buf = malloc(FRAME_HDRLEN + len)) == NULL)
		return (NULL);
	frame_header_encode(buf, (uint32_t)len);
	protobuf_c_message_pack(&env->base, buf + FRAME_HDRLEN);
	*lenp = FRAME_HDRLEN + len;
	return (buf);
}

/* The name of an Envelope's body, for log lines. */
const char *
frame_body_name(const Envelope *env)
{
	const ProtobufCFieldDescriptor	*f;

	f = protobuf_c_message_descriptor_get_field(
	    &r3q__envelope__descriptor, env->body_case);
	return (f != NULL ? f->name : "unknown");
}
