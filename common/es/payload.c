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
#include "le.h"

/* A double as its IEEE-754 bits, little-endian. */
static void
put_f64(uint8_t *p, double d)
{
	uint64_t	 v;

	memcpy(&v, &d, sizeof(v));
	le64_put(p, v);
}

/* The double whose bits are at p. */
static double
get_f64(const uint8_t *p)
{
	uint64_t	 v = le64_get(p);
	double		 d;

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

	le32_put(buf, lu);
	le32_put(buf + 4, flags);
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
	p->lu = le32_get(buf);
	p->flags = le32_get(buf + 4);
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
