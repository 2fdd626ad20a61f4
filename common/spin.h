/*
 * Spin, then sleep: how long a client thread waiting for the answer of its
 * one outstanding task polls its connection before it sleeps in poll(2).
 *
 * A sleeping thread is woken through the kernel's scheduler, and where a
 * CPU goes idle between two messages (a virtual machine whose idle vCPU
 * halts, a laptop in a deep C-state) each wake-up on a round trip's way
 * costs tens of microseconds (bench/python-futures measures a round trip
 * both ways).  MPI implementations poll for the same reason, all the time.
 * Here the poll is bounded (the limit: the client's "spin", r3q(3), 1 ms
 * by default) and taken only while it pays: the estimate is a moving
 * average of how long the lone waits took, each capped at twice the
 * limit; once it is over the limit (two or three long waits in a row),
 * the thread sleeps at once, and it polls again after four short ones.
 * So a program whose tasks last seconds spends no CPU on it, and one
 * that chains short tasks gets each answer without a wake-up on its
 * side.  A thread waiting for many tasks (a map) never polls: its
 * answers come in a stream, and its CPU is better left to the workers.
 *
 * Pure: durations in, the budget out (tests/unit/test_util.c).
 */
#ifndef R3Q_SPIN_H
#define R3Q_SPIN_H

#include <stdint.h>

#define SPIN_DEFAULT_US	1000		/* the limit, unless set */
#define SPIN_MAX_US	1000000		/* a limit of more is refused */

struct spin {
	uint64_t	 limit_ns;	/* 0: never poll */
	uint64_t	 est_ns;	/* how long the lone waits take */
};

/* How long to poll before sleeping, left_ns being the wait's own bound. */
static inline uint64_t
spin_budget(const struct spin *sp, uint64_t left_ns)
{
	if (sp->limit_ns == 0 || sp->est_ns > sp->limit_ns)
		return (0);
	return (left_ns < sp->limit_ns ? left_ns : sp->limit_ns);
}

/* A lone wait ended with its answer after waited_ns: learn from it. */
static inline void
spin_learn(struct spin *sp, uint64_t waited_ns)
{
	uint64_t	 cap = 2 * sp->limit_ns;

	if (waited_ns > cap)
		waited_ns = cap;
	if (waited_ns >= sp->est_ns)
		sp->est_ns += (waited_ns - sp->est_ns) / 4;
	else
		sp->est_ns -= (sp->est_ns - waited_ns) / 4;
}

#endif /* R3Q_SPIN_H */
