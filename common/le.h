/*
 * Little-endian integers in byte buffers, whatever the host's order: the
 * encodings that files and payloads share (common/es/payload.h, the
 * journal's runs of tasks).  Pure.
 */
#ifndef R3Q_LE_H
#define R3Q_LE_H

#include <stdint.h>

static inline void
le32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t
le32_get(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static inline void
le64_put(uint8_t *p, uint64_t v)
{
	le32_put(p, (uint32_t)v);
	le32_put(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t
le64_get(const uint8_t *p)
{
	return ((uint64_t)le32_get(p) | (uint64_t)le32_get(p + 4) << 32);
}

#endif /* R3Q_LE_H */
