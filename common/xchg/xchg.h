/*
 * Total exchange on a heterogeneous network (Nakahira and Fujiwara,
 * doc/algorithms.md §2): every one of p processors sends a message to
 * every other.  Processor i sends m_ij bytes to j at a start-up cost of T_ij seconds and
 * a bandwidth of B_ij bytes a second, so the event costs
 * C_ij = T_ij + m_ij / B_ij; a message split into pieces pays T_ij for each
 * piece.  A processor sends one message and receives one message at a
 * time.  The largest row or column sum of C is a lower bound, t_tb, on
 * any schedule's completion time.
 *
 * A pure module, as common/sched is: a matrix in, a schedule out; libc
 * only, no clock, no I/O (the parser reads a buffer), no threads.  The
 * daemons, the unit tests, r3qctl and bench/exchange run the same code.
 */
#ifndef R3Q_XCHG_H
#define R3Q_XCHG_H

#include <stddef.h>
#include <stdint.h>

#define XCHG_MAX_P	512		/* processors in one exchange */
#define XCHG_MAX_BYTES	(UINT64_C(1) << 53)	/* exact in a double */

/*
 * The inputs of one exchange, p x p, row = sender, column = receiver,
 * row-major; the diagonal is ignored.  m_ij = 0 means i has nothing for j
 * (no event).  Owned by whoever made it; xchg_matrix_free() ends it.
 */
struct xchg_matrix {
	unsigned	 xm_p;
	double		*xm_t;		/* start-up, seconds, >= 0 */
	double		*xm_b;		/* bandwidth, bytes a second, > 0 */
	uint64_t	*xm_m;		/* message size, bytes */
};

/* One piece of a message on the wire: [ev_start, ev_end) seconds. */
struct xchg_event {
	unsigned	 ev_src;
	unsigned	 ev_dst;
	unsigned	 ev_piece;	/* 0, 1, ... in start order per (src, dst) */
	double		 ev_start;
	double		 ev_end;
	uint64_t	 ev_bytes;
};

/*
 * A schedule: its events sorted by start time (then sender), the
 * completion time (the last end) and which algorithm made it, with its
 * parameters (the portfolio names the member that won).  Filled by
 * xchg_schedule(), emptied by xchg_sched_free().
 */
struct xchg_sched {
	unsigned		 xs_p;
	struct xchg_event	*xs_ev;
	size_t			 xs_n;
	size_t			 xs_cap;
	double			 xs_time;
	char			 xs_name[64];
};

enum xchg_algo {
	XCHG_CATERPILLAR = 0,
	XCHG_OPENSHOP,
	XCHG_STATIC,
	XCHG_DYNAMIC,
	XCHG_IMPROVED,
	XCHG_LBOS,		/* ours: lower-bound-guided open shop */
	XCHG_INSERT,		/* ours: most constrained first, into gaps */
	XCHG_PORTFOLIO,
	XCHG_NALGO
};

/*
 * Knobs: the thresholds X and Y of improved split, and for lbos the seed
 * and number of its randomised restarts.  xchg_params_default() gives
 * X = 1.5, Y = 0.5, seed 1, 8 restarts.
 */
struct xchg_params {
	double		 xp_x;
	double		 xp_y;
	uint64_t	 xp_seed;
	unsigned	 xp_restarts;
};

struct xchg_matrix	*xchg_matrix_new(unsigned);
void			 xchg_matrix_free(struct xchg_matrix *);
int			 xchg_matrix_check(const struct xchg_matrix *, char *,
			    size_t);
double			 xchg_cost(const struct xchg_matrix *, unsigned,
			    unsigned);
double			 xchg_piece_cost(const struct xchg_matrix *, unsigned,
			    unsigned, uint64_t);
double			 xchg_lower_bound(const struct xchg_matrix *);

struct xchg_matrix	*xchg_random(unsigned, uint64_t, char *, size_t);
struct xchg_matrix	*xchg_fatal(unsigned, char *, size_t);
double			 xchg_fatal_h(const struct xchg_matrix *);
struct xchg_matrix	*xchg_parse(const char *, size_t, const char *,
			    char *, size_t);

void			 xchg_params_default(struct xchg_params *);
const char		*xchg_algo_name(enum xchg_algo);
int			 xchg_algo_lookup(const char *);
int			 xchg_schedule(const struct xchg_matrix *,
			    enum xchg_algo, const struct xchg_params *,
			    struct xchg_sched *, char *, size_t);
void			 xchg_sched_free(struct xchg_sched *);
int			 xchg_validate(const struct xchg_matrix *,
			    const struct xchg_sched *, char *, size_t);

#endif /* R3Q_XCHG_H */
