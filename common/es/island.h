/*
 * The island model of the (mu+lambda)-ES (the ES itself is
 * doc/algorithms.md §1.1).  p islands, each a
 * (mu+lambda)-ES on Ridge with its own stream of random numbers, run
 * epochs of migrate_every generations; between two epochs every island
 * sends its `migrants' best to every other island (a total exchange,
 * doc/algorithms.md §2), and each island merges what it received with
 * its parents by plus-selection.
 *
 * Deterministic by construction:
 * - island i draws rng_*(seed_i, generation, index, draw) with
 *   seed_i = rng_u64(seed, ISLAND_STREAM, i, 0), as es.c draws from seed;
 * - migrants are kept by sending island (struct island_mig has one slot
 *   per island) and merged in island order, never in arrival order;
 * - an epoch is a pure function of (parameters, island, state at the last
 *   migration, migrants received), however it is cut into pieces.
 * So the answer of r3qctl islands --local and of the cluster (one epoch
 * of one island is one task of the "island" kind) are equal bit for bit.
 *
 * Pure: time and data in, decisions out; no I/O, no clock, no threads.
 *
 * The bytes (all little-endian; f64 as its IEEE-754 bits):
 *
 * payload of an "island" task, ISLAND_PAYLOAD_HEAD bytes and then
 *   offset 0   u32  magic ISLAND_MAGIC
 *   offset 4   u32  islands p        8   u32  island i
 *   offset 12  u32  mu              16   u32  lambda
 *   offset 20  u32  dim             24   u32  generations
 *   offset 28  u32  migrate_every   32   u32  migrants K
 *   offset 36  u32  flags (bit 0: spin, bit 1: a state follows)
 *   offset 40  u64  seed            48   f64  work_ms (load of the task)
 *   then, with flag bit 1, the island's state (below), then the p - 1
 *   other islands' K migrants each, in island order, an individual
 *   being dim f64 x, dim f64 sigma, one f64 fitness.
 * output, and the state above:
 *   offset 0   u32  magic ISLAND_MAGIC    4  u32  island
 *   offset 8   u32  epoch (migrations merged so far)
 *   offset 12  u32  generations selected (0: not started)
 *   offset 16  mu individuals, best first.
 */
#ifndef R3Q_ISLAND_H
#define R3Q_ISLAND_H

#include <stddef.h>
#include <stdint.h>

#define ISLAND_MAGIC		0x4c534933u	/* "3ISL" */
#define ISLAND_STREAM		0x69736c616e64ULL	/* "island" */
#define ISLAND_MIN_P		3	/* 1 exchanges nothing, 2 is a swap */
#define ISLAND_MAX_P		256
#define ISLAND_MAX_WORK_MS	3600000.0
#define ISLAND_PAYLOAD_HEAD	56
#define ISLAND_STATE_HEAD	16
#define ISLAND_F_SPIN		0x1
#define ISLAND_F_STATE		0x2

struct island_params {
	uint32_t	 islands;	/* p */
	uint32_t	 mu;
	uint32_t	 lambda;
	uint32_t	 dim;
	uint32_t	 generations;	/* offspring generations after gen 0 */
	uint32_t	 migrate_every;	/* G: generations of an epoch */
	uint32_t	 migrants;	/* K: best sent to every other island */
	uint64_t	 seed;
};

struct island;

/* The migrants an island receives: a slot per sending island. */
struct island_mig {
	uint32_t	 m_p;
	uint32_t	 m_k;
	uint32_t	 m_dim;
	uint8_t		*m_have;	/* p */
	double		*m_ind;		/* p x K x (2 dim + 1) */
};

int		 island_params_check(const struct island_params *, char *,
		    size_t);
uint32_t	 island_epochs(const struct island_params *);
uint32_t	 island_epoch_end(const struct island_params *, uint32_t);
size_t		 island_ind_len(const struct island_params *);
size_t		 island_state_len(const struct island_params *);
size_t		 island_payload_len(const struct island_params *, int);

struct island	*island_new(const struct island_params *, uint32_t);
void		 island_free(struct island *);
uint32_t	 island_index(const struct island *);
uint32_t	 island_epoch(const struct island *);
uint32_t	 island_generation(const struct island *);
int		 island_epoch_done(const struct island *);
int		 island_finished(const struct island *);
uint32_t	 island_run(struct island *, uint32_t);
double		 island_best_f(const struct island *);
const double	*island_best_x(const struct island *);
const double	*island_ind(const struct island *, uint32_t);

int		 island_mig_init(struct island_mig *,
		    const struct island_params *);
void		 island_mig_clear(struct island_mig *);
void		 island_mig_free(struct island_mig *);
int		 island_mig_put(struct island_mig *, uint32_t,
		    const double *);
int		 island_mig_from(struct island_mig *, const struct island *);
int		 island_migrate(struct island *, const struct island_mig *);

void		 island_state_encode(const struct island *, uint8_t *);
int		 island_state_decode(struct island *, const uint8_t *, size_t,
		    char *, size_t);
int		 island_state_ind(const struct island_params *,
		    const uint8_t *, size_t, uint32_t, double *);
double		 island_state_best(const struct island_params *,
		    const uint8_t *, size_t);
int		 island_state_check(const struct island_params *, uint32_t,
		    uint32_t, const uint8_t *, size_t, char *, size_t);

void		 island_payload_head(uint8_t *, const struct island_params *,
		    uint32_t, uint32_t, double);
int		 island_payload_decode(const uint8_t *, size_t,
		    struct island_params *, uint32_t *, uint32_t *, double *,
		    char *, size_t);
void		 island_payload_build(uint8_t *,
		    const struct island_params *, uint32_t, uint32_t, double,
		    const uint8_t *const *);
int		 island_epoch_from_payload(const uint8_t *, size_t,
		    struct island **, struct island_params *, double *,
		    uint32_t *, char *, size_t);

uint64_t	 island_digest(uint64_t, const uint8_t *, size_t);

#endif /* R3Q_ISLAND_H */
