/*
 * Framing: an 8-byte header -- "R3Q" plus the frame version byte, then the
 * body length, both in network byte order -- and one packed Envelope.  The
 * length is checked against a limit before anything is allocated.
 *
 * Bump FRAME_VERSION if the header changes; bump R3Q_PROTOCOL if a message
 * in proto/r3q.proto changes in a way an older peer would misread.
 */
#ifndef R3Q_FRAME_H
#define R3Q_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "r3q.pb-c.h"

#define FRAME_MAGIC		0x52335100u	/* "R3Q\0" */
#define FRAME_VERSION		1
#define FRAME_HDRLEN		8
#define FRAME_MAX_DEFAULT	(16u << 20)
#define R3Q_PROTOCOL		7	/* 2: tasks carry a tag; 3: opaque payloads;
					   4: Kinds after a reload; 5: Withdraw,
					   Released (balancing) */
					/* 6: Drain, DrainRequest, DrainWorker,
					   WorkerDraining (draining); RelayData,
					   RelayControl (relays);
					   JoinRequest, JoinAnswer, Token*,
					   CertList (join tokens);
					   TaskNews, TaskPush (bnb) */
					/* 7: SubmitIslands, JobInfo.islands
					   (island ES) */
					/* 7: PeerOrder, PeerReport, PeerMsg,
					   PeerData, Links*, Exchange*, Hello
					   peer_addr (worker links) */
					/* 7: RelayControl.cert (relays: the
					   master's CRL sweep); op 3,
					   credit: per-stream flow control */

/*
 * Relays: what a stream may send up before the master grants
 * more (RelayControl op 3), so that a worker flooding its relay holds at
 * most this much of the relay's link ahead of the others' frames.
 */
#define R3Q_RELAY_WINDOW	(256u << 10)

/* Error.code: why a request was refused, when the peer may act on it. */
#define R3Q_ERROR_BUSY		1	/* a cap of the master: try later */

typedef R3q__Envelope	Envelope;	/* generated names are long */

#define FRAME_TOP_MAX		16	/* top-level fields of an Envelope */
#define FRAME_RESULTS_MAX	16384	/* results in one Results frame:
					   workerd splits, masterd refuses
					   more */

struct evbuffer;
struct frame_arena;

/*
 * What frame_peek() and frame_count() see in a packed Envelope, without
 * unpacking it.
 */
struct frame_shape {
	uint32_t	 fs_body;	/* the body's field number, 0: none */
	size_t		 fs_len;	/* the body's length, bytes */
	const uint8_t	*fs_ptr;	/* the body, once all of it is in */
	uint64_t	 fs_rep;	/* most elements in one repeated field */
	const char	*fs_repname;	/* that field */
	uint64_t	 fs_fields;	/* field occurrences, packed elements */
	uint64_t	 fs_id;		/* the request id, if seen (0: none) */
};

void	 frame_header_encode(uint8_t *, uint32_t);
int	 frame_header_decode(const uint8_t *, uint64_t, uint32_t *, char *,
	    size_t);
int	 frame_write(struct evbuffer *, const Envelope *);
int	 frame_read(struct evbuffer *, uint64_t, Envelope **, char *, size_t);
int	 frame_read_arena(struct evbuffer *, uint64_t, struct frame_arena *,
	    Envelope **, char *, size_t);
void	 frame_free(Envelope *);
struct frame_arena *frame_arena_new(void);
size_t	 frame_arena_reset(struct frame_arena *);
ProtobufCAllocator *frame_arena_allocator(struct frame_arena *);
void	 frame_arena_free(struct frame_arena *);
uint8_t	*frame_pack(const Envelope *, size_t *);
int	 frame_unpack(const uint8_t *, size_t, uint64_t, Envelope **, char *,
	    size_t);
const char *frame_body_name(const Envelope *);
int	 frame_peek(const uint8_t *, size_t, size_t, struct frame_shape *,
	    char *, size_t);
int	 frame_count(struct frame_shape *, uint64_t, uint64_t, char *,
	    size_t);
const char *frame_type_name(uint32_t);

#endif /* R3Q_FRAME_H */
