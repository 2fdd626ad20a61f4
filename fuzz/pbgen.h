/*
 * Messages of any type built from their protobuf-c descriptors, with every
 * field at one extreme: the seed corpus (fuzz/mkcorpus.c) and the extremes
 * test (tests/unit/test_extremes.c) go over every type the schema has,
 * so a type added to proto/r3q.proto is covered without a line here.
 */
#ifndef R3Q_FUZZ_PBGEN_H
#define R3Q_FUZZ_PBGEN_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

enum pbgen_mode {
	PBGEN_ZERO,		/* every field 0, empty, present */
	PBGEN_TYPICAL,		/* small valid-looking values */
	PBGEN_MAX,		/* integers at their maximum, +inf, long
				   strings and bytes, a few elements */
	PBGEN_MIN,		/* signed at their minimum, NaN, 1 */
	PBGEN_EMPTY,		/* repeated fields: many empty elements */
	PBGEN_HUGE,		/* repeated fields and strings as large as
				   the frame limit allows */
	PBGEN_NMODES
};

const char	*pbgen_mode_name(enum pbgen_mode);
ProtobufCMessage *pbgen_new(const ProtobufCMessageDescriptor *,
		    enum pbgen_mode, size_t);
void		 pbgen_free(ProtobufCMessage *);

#endif /* R3Q_FUZZ_PBGEN_H */
