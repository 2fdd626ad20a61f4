/*
 * The encodings of the built-in kinds' payloads and outputs, shared by
 * masterd's es driver, the workers' kinds and anyone who writes a client
 * for them (workerd.conf(5) documents the bytes):
 *
 * ridge-lu and synth payload, all little-endian:
 *   offset 0   u32   lu        LU matrix order (ridge-lu), 0: none
 *   offset 4   u32   flags     bit 0: spin rather than sleep (synth)
 *   offset 8   f64   work_ms   reference milliseconds of load (synth)
 *   offset 16  f64[] x         the individual, (len - 16) / 8 of them
 * Output of both: one f64, the fitness (8 bytes, little-endian).
 *
 * Pure: no I/O.
 */
#ifndef R3Q_ES_PAYLOAD_H
#define R3Q_ES_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define ES_PAYLOAD_HEAD		16
#define ES_PAYLOAD_SPIN		0x1
#define ES_OUTPUT_LEN		8

struct es_payload {
	uint32_t	 lu;
	uint32_t	 flags;
	double		 work_ms;
	const uint8_t	*x;		/* into the payload: read with */
	size_t		 nx;		/* es_payload_x() */
};

size_t	 es_payload_len(size_t);
void	 es_payload_encode(uint8_t *, uint32_t, uint32_t, double,
	    const double *, size_t);
int	 es_payload_decode(const uint8_t *, size_t, struct es_payload *);
double	 es_payload_x(const struct es_payload *, size_t);
void	 es_output_encode(uint8_t *, double);
int	 es_output_decode(const uint8_t *, size_t, double *);

#endif /* R3Q_ES_PAYLOAD_H */
