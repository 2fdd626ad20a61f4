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
 * dispatching.  What does not fit goes to extra blocks, each twice the
 * last, freed on reset; the first block grows to fit the frames seen,
 * but never past ARENA_KEEP, so a buffer grown for one large frame is
 * given back after it (a hostile peer's frames found this).
 */
#define ARENA_ALIGN	16
#define ARENA_MIN	(64u << 10)
#define ARENA_KEEP	(1u << 20)

struct arena_big {
	struct arena_big	*ab_next;
	size_t			 ab_size;	/* bytes after the header */
	size_t			 ab_used;
	size_t			 ab_pad;	/* 4 words: 16-aligned */
};

struct frame_arena {
	uint8_t			*fa_buf;
	size_t			 fa_size;
	size_t			 fa_used;
	size_t			 fa_want;	/* asked since the last reset */
	struct arena_big	*fa_big;	/* newest first */
	ProtobufCAllocator	 fa_pa;
};

static void *
arena_alloc(void *data, size_t size)
{
	struct frame_arena	*a = data;
	struct arena_big	*b;
	size_t			 n;
	void			*p;

	if (size > SIZE_MAX / 4)
		return (NULL);
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	a->fa_want += size;
	if (a->fa_size - a->fa_used >= size) {
		p = a->fa_buf + a->fa_used;
		a->fa_used += size;
		return (p);
	}
	if ((b = a->fa_big) != NULL && b->ab_size - b->ab_used >= size) {
		p = (uint8_t *)(b + 1) + b->ab_used;
		b->ab_used += size;
		return (p);
	}
	n = b != NULL ? b->ab_size * 2 : a->fa_size;
	if (n < size)
		n = size;
	if ((b = malloc(sizeof(*b) + n)) == NULL)
		return (NULL);
	b->ab_next = a->fa_big;
	b->ab_size = n;
	b->ab_used = size;
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

/* The arena as protobuf-c's allocator, for unpacking straight into it. */
ProtobufCAllocator *
frame_arena_allocator(struct frame_arena *a)
{
	return (&a->fa_pa);
}

/*
 * Everything unpacked from the arena is gone; make room for as much, up
 * to ARENA_KEEP.  Returns the bytes of extra blocks given back, so the
 * caller may hand them on to the system (malloc_trim) when many.
 */
size_t
frame_arena_reset(struct frame_arena *a)
{
	struct arena_big	*b;
	uint8_t			*nb;
	size_t			 n, freed = 0;

	while ((b = a->fa_big) != NULL) {
		a->fa_big = b->ab_next;
		freed += sizeof(*b) + b->ab_size;
		free(b);
	}
	if (a->fa_want > a->fa_size && a->fa_size < ARENA_KEEP) {
		for (n = a->fa_size; n < a->fa_want && n < ARENA_KEEP; n *= 2)
			;
		if ((nb = malloc(n)) != NULL) {
			free(a->fa_buf);
			a->fa_buf = nb;
			a->fa_size = n;
		}
	}
	a->fa_used = a->fa_want = 0;
	return (freed);
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

/*
 * A look at a packed Envelope without unpacking it, so that a peer's
 * frame is judged by what it is before protobuf-c spends anything on it
 * (before it, one 16 MB Results frame of empty sub-messages, unpacked,
 * took 1.5 GB and 6.5 s).  The wire format is walked with the generated
 * descriptors; nothing is allocated, nothing is copied.
 */

/* A varint at *p (below end); -1 if cut short or longer than 10 bytes. */
static int
scan_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t	 r = 0;
	unsigned	 shift;

	for (shift = 0; shift < 70 && *p < end; shift += 7) {
		r |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0) {
			*v = r;
			return (0);
		}
	}
	return (-1);
}

/*
 * One field's tag and where its value lies.  Returns 1 with the field
 * number, wire type and value [*vp, *vend), 0 if the field is cut short
 * at end, -1 if it is malformed.
 */
static int
scan_field(const uint8_t **p, const uint8_t *end, uint32_t *num,
    unsigned *wt, const uint8_t **vp, const uint8_t **vend)
{
	const uint8_t	*q = *p;
	uint64_t	 tag, l;

	if (scan_varint(&q, end, &tag) == -1)
		return (end - q >= 10 ? -1 : 0);
	if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
		return (-1);
	*num = (uint32_t)(tag >> 3);
	*wt = tag & 7;
	*vp = q;
	switch (*wt) {
	case 0:		/* varint */
		if (scan_varint(&q, end, &l) == -1)
			return (end - q >= 10 ? -1 : 0);
		break;
	case 1:		/* 64-bit */
		if (end - q < 8)
			return (0);
		q += 8;
		break;
	case 2:		/* length-delimited */
		if (scan_varint(&q, end, &l) == -1)
			return (end - q >= 10 ? -1 : 0);
		*vp = q;
		if (l > (uint64_t)(end - q)) {
			*vend = q + (l > SIZE_MAX / 2 ? SIZE_MAX / 2 : l);
			*p = q;
			return (0);
		}
		q += l;
		break;
	case 5:		/* 32-bit */
		if (end - q < 4)
			return (0);
		q += 4;
		break;
	default:	/* groups: never in our schema */
		return (-1);
	}
	*vend = q;
	*p = q;
	return (1);
}

/*
 * Which body a packed Envelope carries.  buf holds avail bytes of the
 * len the header announced: from the first few bytes (protobuf-c writes
 * fields in order, the request id then the body) the body's type and
 * declared length are known, so a frame may be judged while most of it
 * is still on the wire.  Returns 1 with fs_body and fs_len set (fs_body
 * 0 if the whole frame has no body), 0 if more bytes are needed to tell,
 * -1 with a message if the frame is malformed or has more than one body
 * or FRAME_TOP_MAX top-level fields.  fs_ptr is set only once the whole
 * body is in buf.
 */
int
frame_peek(const uint8_t *buf, size_t avail, size_t len,
    struct frame_shape *fs, char *err, size_t errlen)
{
	const ProtobufCFieldDescriptor	*f;
	const uint8_t			*p = buf, *end, *vp, *vend;
	uint32_t			 num;
	unsigned			 wt, nfields = 0;
	int				 rc;

	memset(fs, 0, sizeof(*fs));
	if (avail > len)
		avail = len;
	end = buf + avail;
	while (p < buf + len) {
		if (++nfields > FRAME_TOP_MAX) {
			snprintf(err, errlen, "malformed message: more than "
			    "%u top-level fields", FRAME_TOP_MAX);
			return (-1);
		}
		vend = NULL;
		if ((rc = scan_field(&p, end, &num, &wt, &vp, &vend)) == -1 ||
		    (rc == 0 && avail == len)) {
			snprintf(err, errlen, "malformed message (%zu bytes)",
			    len);
			return (-1);
		}
		f = protobuf_c_message_descriptor_get_field(
		    &r3q__envelope__descriptor, num);
		if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    vend != NULL) {
			/* A body: its tag and length are in. */
			if (wt != 2) {
				snprintf(err, errlen, "malformed message "
				    "(%zu bytes)", len);
				return (-1);
			}
			if (fs->fs_body != 0) {
				snprintf(err, errlen, "malformed message: "
				    "two bodies, %s and %s",
				    frame_type_name(fs->fs_body), f->name);
				return (-1);
			}
			if (vend > buf + len) {
				snprintf(err, errlen, "malformed message "
				    "(%zu bytes)", len);
				return (-1);
			}
			fs->fs_body = num;
			fs->fs_len = (size_t)(vend - vp);
			if (rc == 1)
				fs->fs_ptr = vp;
			if (avail < len)
				return (1);
			continue;
		}
		if (rc == 0)
			return (0);
		/* The request id, so that a refusal can answer it. */
		if (num == 1 && wt == 0) {
			vend = vp;
			(void)scan_varint(&vend, end, &fs->fs_id);
		}
	}
	if (avail < len)
		return (0);
	return (1);
}

/* Does a packed repeated field of this type hold varints, or fixed? */
static size_t
scan_packed_width(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return (4);
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return (8);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return (SIZE_MAX);	/* never packed */
	default:
		return (0);		/* varints */
	}
}

struct scan {
	uint64_t	 sc_maxrep;
	uint64_t	 sc_maxfields;
	struct frame_shape *sc_fs;
	char		*sc_err;
	size_t		 sc_errlen;
};

#define SCAN_DEPTH	8	/* our schema nests 4 deep at most */
#define SCAN_FIELDS	64	/* fields of one message, by index */

/*
 * Count what unpacking message d from [p, end) would build: every field
 * occurrence (protobuf-c notes each before it allocates), every element
 * of a packed array, and per repeated field of each message its
 * elements.  Stops at the first cap crossed.
 */
static int
scan_message(const ProtobufCMessageDescriptor *d, const uint8_t *p,
    const uint8_t *end, struct scan *sc, int depth)
{
	const ProtobufCFieldDescriptor	*f;
	const uint8_t			*vp, *vend, *q;
	uint64_t			 count[SCAN_FIELDS], n;
	uint32_t			 num;
	unsigned			 wt, idx;
	size_t				 w;

	if (depth > SCAN_DEPTH) {
		snprintf(sc->sc_err, sc->sc_errlen, "malformed message: "
		    "nested too deep");
		return (-1);
	}
	memset(count, 0, sizeof(count));
	while (p < end) {
		if (scan_field(&p, end, &num, &wt, &vp, &vend) != 1) {
			snprintf(sc->sc_err, sc->sc_errlen,
			    "malformed %s message", d->short_name);
			return (-1);
		}
		n = 1;
		f = protobuf_c_message_descriptor_get_field(d, num);
		if (f != NULL && f->label == PROTOBUF_C_LABEL_REPEATED) {
			w = scan_packed_width(f->type);
			if (wt == 2 && w == 0) {
				for (n = 0, q = vp; q < vend; q++)
					n += (*q & 0x80) == 0;
			} else if (wt == 2 && w != SIZE_MAX)
				n = (uint64_t)(vend - vp) / w;
			idx = (unsigned)(f - d->fields);
			if (idx < SCAN_FIELDS) {
				count[idx] += n;
				if (count[idx] > sc->sc_fs->fs_rep) {
					sc->sc_fs->fs_rep = count[idx];
					sc->sc_fs->fs_repname = f->name;
				}
				if (count[idx] > sc->sc_maxrep) {
					snprintf(sc->sc_err, sc->sc_errlen,
					    "more than %llu elements in "
					    "%s.%s", (unsigned long long)
					    sc->sc_maxrep, d->short_name,
					    f->name);
					return (-1);
				}
			}
		}
		sc->sc_fs->fs_fields += n;
		if (sc->sc_fs->fs_fields > sc->sc_maxfields) {
			snprintf(sc->sc_err, sc->sc_errlen, "more than %llu "
			    "fields in all", (unsigned long long)
			    sc->sc_maxfields);
			return (-1);
		}
		if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			if (wt != 2) {
				snprintf(sc->sc_err, sc->sc_errlen,
				    "malformed %s message", d->short_name);
				return (-1);
			}
			if (scan_message(f->descriptor, vp, vend, sc,
			    depth + 1) == -1)
				return (-1);
		}
	}
	return (0);
}

/*
 * Count the body frame_peek() found (all of it in fs_ptr): at most
 * maxrep elements in any one repeated field of any message in it, and at
 * most maxfields field occurrences and packed elements in all.  The cost
 * is bounded by the caps, not by the frame.  Returns 0, or -1 with a
 * message naming the field that crossed a cap.
 */
int
frame_count(struct frame_shape *fs, uint64_t maxrep, uint64_t maxfields,
    char *err, size_t errlen)
{
	const ProtobufCFieldDescriptor	*f;
	struct scan			 sc;

	fs->fs_rep = fs->fs_fields = 0;
	fs->fs_repname = "";
	if (fs->fs_body == 0)
		return (0);
	f = protobuf_c_message_descriptor_get_field(
	    &r3q__envelope__descriptor, fs->fs_body);
	if (f == NULL || fs->fs_ptr == NULL) {
		snprintf(err, errlen, "no body to count");
		return (-1);
	}
	sc.sc_maxrep = maxrep;
	sc.sc_maxfields = maxfields;
	sc.sc_fs = fs;
	sc.sc_err = err;
	sc.sc_errlen = errlen;
	return (scan_message(f->descriptor, fs->fs_ptr, fs->fs_ptr +
	    fs->fs_len, &sc, 0));
}

/* The name of body field num of an Envelope, for log lines. */
const char *
frame_type_name(uint32_t num)
{
	const ProtobufCFieldDescriptor	*f;

	if (num == 0)
		return ("empty");
	f = protobuf_c_message_descriptor_get_field(
	    &r3q__envelope__descriptor, num);
	return (f != NULL ? f->name : "unknown");
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
