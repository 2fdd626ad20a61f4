/*
 * The built-in kinds' payload and output encodings: see payload.h.
 * Doubles travel as their IEEE-754 bits, little-endian, so that a fitness
 * round-trips bit for bit between any two machines.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "es/payload.h"

/* Store v at p, little-endian. */
static void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* The little-endian u32 at p. */
static uint32_t
get_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

/* Store d's IEEE-754 bits at p, little-endian. */
static void
put_f64(uint8_t *p, double d)
{
	uint64_t	 v;

	memcpy(&v, &d, sizeof(v));
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

/* The double whose little-endian bits are at p. */
static double
get_f64(const uint8_t *p)
{
	uint64_t	 v;
	double		 d;

	v = (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
	memcpy(&d, &v, sizeof(d));
	return (d);
}

/* Bytes of the payload of an individual of n genes. */
size_t
es_payload_len(size_t n)
{
	return (ES_PAYLOAD_HEAD + n * 8);
}

/* Write the payload into buf, es_payload_len(n) bytes. */
void
es_payload_encode(uint8_t *buf, uint32_t lu, uint32_t flags, double work_ms,
    const double *x, size_t n)
{
	size_t	 i;

	put_u32(buf, lu);
	put_u32(buf + 4, flags);
	put_f64(buf + 8, work_ms);
	for (i = 0; i < n; i++)
		put_f64(buf + ES_PAYLOAD_HEAD + i * 8, x[i]);
}

/* Read a payload; -1 (EINVAL) if its length is not 16 + 8k. */
int
es_payload_decode(const uint8_t *buf, size_t len, struct es_payload *p)
{
	if ((buf == NULL && len > 0) || len < ES_PAYLOAD_HEAD ||
	    (len - ES_PAYLOAD_HEAD) % 8 != 0) {
		errno = EINVAL;
		return (-1);
	}
	p->lu = get_u32(buf);
	p->flags = get_u32(buf + 4);
	p->work_ms = get_f64(buf + 8);
	p->x = buf + ES_PAYLOAD_HEAD;
	p->nx = (len - ES_PAYLOAD_HEAD) / 8;
	return (0);
}

/* Gene i of a decoded payload. */
double
es_payload_x(const struct es_payload *p, size_t i)
{
	return (get_f64(p->x + i * 8));
}

/* Write a fitness, ES_OUTPUT_LEN bytes. */
void
es_output_encode(uint8_t *buf, double fitness)
{
	put_f64(buf, fitness);
}

/* Read a fitness; -1 (EINVAL) unless len is ES_OUTPUT_LEN. */
int
es_output_decode(const uint8_t *buf, size_t len, double *fitness)
{
	if (buf == NULL || len != ES_OUTPUT_LEN) {
		errno = EINVAL;
		return (-1);
	}
	*fitness = get_f64(buf);
	return (0);
}
