/* Messages at their extremes, from the descriptors (pbgen.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbgen.h"
#include "util.h"

#define PBGEN_DEPTH	4	/* nested messages filled; deeper: empty */

static const char *const mode_names[PBGEN_NMODES] = {
	"zero", "typical", "max", "min", "empty", "huge"
};

const char *
pbgen_mode_name(enum pbgen_mode m)
{
	return (m < PBGEN_NMODES ? mode_names[m] : "?");
}

/* How many elements a repeated field gets; scale: its share of the room. */
static size_t
pbgen_count(enum pbgen_mode m, size_t scale, int depth)
{
	switch (m) {
	case PBGEN_ZERO:
		return (0);
	case PBGEN_TYPICAL:
		return (2);
	case PBGEN_MAX:
	case PBGEN_MIN:
		return (depth == 0 ? 4 : 2);
	case PBGEN_EMPTY:
		return (depth == 0 ? scale : 1);
	case PBGEN_HUGE:
		return (depth == 0 ? scale : 0);
	default:
		return (0);
	}
}

/* The length of a string or bytes field. */
static size_t
pbgen_len(enum pbgen_mode m, size_t scale, int depth)
{
	switch (m) {
	case PBGEN_TYPICAL:
		return (4);
	case PBGEN_MAX:
		return (depth == 0 ? 65536 : 1024);
	case PBGEN_HUGE:
		return (depth == 0 ? scale : 16);
	default:
		return (0);
	}
}

static void	pbgen_fill(ProtobufCMessage *, enum pbgen_mode, size_t, int);

/* One value of field f at p. */
static void
pbgen_value(const ProtobufCFieldDescriptor *f, void *p, enum pbgen_mode m,
    size_t scale, int depth)
{
	const ProtobufCEnumDescriptor	*ed;
	const ProtobufCMessageDescriptor *md;
	ProtobufCMessage		*sub;
	ProtobufCBinaryData		*bd;
	char				*s;
	size_t				 len;
	int				 big = m == PBGEN_MAX, small = m == PBGEN_MIN,
					 typ = m == PBGEN_TYPICAL;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)p = big ? INT32_MAX : small ? INT32_MIN : typ;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)p = big ? UINT32_MAX : small ? 1 : typ ? 2 : 0;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)p = big ? INT64_MAX : small ? INT64_MIN : typ;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)p = big ? UINT64_MAX : small ? 1 : typ ? 2 : 0;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)p = big ? INFINITY : small ? NAN : typ ? 1.5f : 0;
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)p = big ? INFINITY : small ? NAN : typ ? 1.5 : 0;
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)p = big || small || typ;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		ed = f->descriptor;
		*(int *)p = ed->n_values > 0 ? ed->values[big ?
		    ed->n_values - 1 : 0].value : 0;
		break;
	case PROTOBUF_C_TYPE_STRING:
		len = pbgen_len(m, scale, depth);
		s = xcalloc(1, len + 1);
		if (typ)
			memcpy(s, "echo", 4);
		else
			memset(s, 'A', len);
		*(char **)p = s;
		break;
	case PROTOBUF_C_TYPE_BYTES:
		bd = p;
		bd->len = pbgen_len(m, scale, depth);
		bd->data = xcalloc(1, bd->len + 1);
		memset(bd->data, big ? 0xff : 'x', bd->len);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		md = f->descriptor;
		sub = xcalloc(1, md->sizeof_message);
		md->message_init(sub);
		/* deep down, or an element of many: present, empty */
		if (depth + 1 < PBGEN_DEPTH)
			pbgen_fill(sub, m, scale, depth + 1);
		*(ProtobufCMessage **)p = sub;
		break;
	}
}

/* The size of one element of a repeated field of f's type. */
static size_t
pbgen_elsize(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return (4);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return (8);
	case PROTOBUF_C_TYPE_BOOL:
		return (sizeof(protobuf_c_boolean));
	case PROTOBUF_C_TYPE_ENUM:
		return (sizeof(int));
	case PROTOBUF_C_TYPE_STRING:
		return (sizeof(char *));
	case PROTOBUF_C_TYPE_BYTES:
		return (sizeof(ProtobufCBinaryData));
	case PROTOBUF_C_TYPE_MESSAGE:
		return (sizeof(ProtobufCMessage *));
	}
	return (8);
}

/* Every field of msg (a oneof: its first member). */
static void
pbgen_fill(ProtobufCMessage *msg, enum pbgen_mode m, size_t scale, int depth)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor	*f;
	uint8_t				*base = (uint8_t *)msg, *arr;
	size_t				 i, k, n, es;

	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			/* one member per oneof: the first one met */
			if (*(uint32_t *)(base + f->quantifier_offset) != 0)
				continue;
			*(uint32_t *)(base + f->quantifier_offset) = f->id;
			pbgen_value(f, base + f->offset, m, scale, depth);
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = pbgen_count(m, scale, depth);
			es = pbgen_elsize(f);
			arr = n > 0 ? xcalloc(n, es) : NULL;
			for (k = 0; k < n; k++) {
				if (m == PBGEN_EMPTY || m == PBGEN_HUGE)
					pbgen_value(f, arr + k * es,
					    PBGEN_ZERO, scale, PBGEN_DEPTH);
				else
					pbgen_value(f, arr + k * es, m, scale,
					    depth);
			}
			*(size_t *)(base + f->quantifier_offset) = n;
			*(void **)(base + f->offset) = arr;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		    f->quantifier_offset != 0 &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE &&
		    f->type != PROTOBUF_C_TYPE_STRING)
			*(protobuf_c_boolean *)(base + f->quantifier_offset) =
			    1;
		pbgen_value(f, base + f->offset, m, scale, depth);
	}
}

/*
 * A new message of type d at mode m; scale is the elements of a repeated
 * field and the length of a string at the top (EMPTY, HUGE).  Free it
 * with pbgen_free().
 */
ProtobufCMessage *
pbgen_new(const ProtobufCMessageDescriptor *d, enum pbgen_mode m,
    size_t scale)
{
	ProtobufCMessage	*msg;

	msg = xcalloc(1, d->sizeof_message);
	d->message_init(msg);
	pbgen_fill(msg, m, scale, 0);
	return (msg);
}

void
pbgen_free(ProtobufCMessage *msg)
{
	protobuf_c_message_free_unpacked(msg, NULL);
}
