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

/* Unpack a body; -1 with a message if it is not an Envelope. */
int
frame_unpack(const uint8_t *body, size_t len, uint64_t max, Envelope **envp,
    char *err, size_t errlen)
{
	Envelope	*env;

	if (len > max) {
		snprintf(err, errlen, "frame of %zu bytes exceeds the limit "
		    "of %llu", len, (unsigned long long)max);
		return (-1);
	}
	env = r3q__envelope__unpack(NULL, len, body);
	if (env == NULL) {
		snprintf(err, errlen, "malformed message (%zu bytes)", len);
		return (-1);
	}
	*envp = env;
	return (0);
}

/*
 * Take one frame off the buffer if it is all there.  Returns 1 and an
 * Envelope, 0 if more bytes are needed, -1 with a message on bad input
 * (the caller closes the connection).
 */
int
frame_read(struct evbuffer *in, uint64_t max, Envelope **envp, char *err,
    size_t errlen)
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
	rc = frame_unpack(body + FRAME_HDRLEN, len, max, envp, err, errlen);
	evbuffer_drain(in, FRAME_HDRLEN + (size_t)len);
	return (rc == -1 ? -1 : 1);
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
