/*
 * The (mu+lambda)-ES of the R3Q paper (doc/algorithms.md section 1), as a pure,
 * deterministic state machine.  The driver asks for the individuals of the
 * current generation, evaluates them however it likes (in-process, or on
 * workers in any order), sets their fitness, and advances.  The same
 * parameters give bit-identical results whatever the evaluation order.
 */
#ifndef R3Q_ES_H
#define R3Q_ES_H

#include <stddef.h>
#include <stdint.h>

#define ES_BOUND	100.0	/* search space is [-ES_BOUND, ES_BOUND]^dim */
#define ES_MAX_DIM	10000
#define ES_MAX_POP	1000000

struct es_params {
	uint32_t	 mu;
	uint32_t	 lambda;
	uint32_t	 dim;
	uint32_t	 generations;	/* offspring generations after gen 0 */
	uint64_t	 seed;
	int		 reevaluate_parents;
};

struct es;

int		 es_params_check(const struct es_params *, char *, size_t);
struct es	*es_new(const struct es_params *);
uint64_t	 es_mem_bytes(const struct es_params *);
void		 es_free(struct es *);

uint32_t	 es_generation(const struct es *);
int		 es_finished(const struct es *);
size_t		 es_batch_size(const struct es *);
const double	*es_batch_x(struct es *, size_t);
void		 es_set_fitness(struct es *, size_t, double);
int		 es_advance(struct es *);

double		 es_gen_best(const struct es *, uint32_t);
double		 es_best_f(const struct es *);
const double	*es_best_x(const struct es *);

double		 es_ridge(const double *, size_t);

#endif /* R3Q_ES_H */
