/*
 * The paper's measurements of one generation, and of a job, from the
 * scheduling core's batch report and the executions the workers told:
 * what masterd records for r3qctl result and the reports, and what
 * r3q-sim prints, computed the same way (doc/algorithms.md §1.6).
 *
 * Pure: times and data in, figures out; no clock, no I/O, libc alone.
 * All times are in the caller's clock (the core's), in nanoseconds.
 */
#ifndef R3Q_REPORT_MEASURE_H
#define R3Q_REPORT_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"

/* One task execution on worker wid, in the core's clock. */
struct measure_span {
	uint32_t	 ms_wid;
	uint64_t	 ms_start;
	uint64_t	 ms_end;
};

/*
 * A worker slot by worker id: mw_cpus 0 is no worker with that id (it is
 * neither counted nor averaged over).
 */
struct measure_worker {
	uint32_t	 mw_cpus;
	double		 mw_speed;	/* speed ratio to the reference */
};

/* The figures of one generation (one batch of the core). */
struct measure {
	uint64_t	 m_total;	/* submission to the last result */
	uint64_t	 m_sync;	/* synchronisation wait */
	uint64_t	 m_comm;	/* communication, averaged over workers */
	uint64_t	 m_compute;	/* the total less the other two */
	uint32_t	 m_replicas;
	uint32_t	 m_killed_held;
	uint32_t	 m_killed_running;
	uint32_t	 m_workers;	/* workers averaged over */
	double		 m_speed;	/* sum of speed x cpus of those */
	double		 m_speed_time;	/* m_speed x m_total, summed over a
					   job for its lower bound */
};

/* A job's parallel efficiency LB / E. */
struct measure_eff {
	double		 me_speed_sum;	/* time-weighted sum of speeds, 0: none */
	double		 me_lower_bound_s;	/* LB in seconds, 0: unknown */
	double		 me_efficiency;	/* LB / E, 0: unknown */
};

/*
 * Measure the generation the core reported as r, from the nspans
 * executions in spans (any order; those of a worker id >= nworkers are
 * not counted) and the nworkers slots of w.  0, or -1 with errno set (no
 * memory).
 */
int	measure_gen(const struct sched_batch_report *r,
	    const struct measure_span *spans, size_t nspans,
	    const struct measure_worker *w, size_t nworkers,
	    struct measure *m);

/*
 * The efficiency of a job that did work_ms of reference work in total_ns
 * of generations (the sum of their m_total) with speed_time the sum of
 * their m_speed_time, in elapsed_ns from its start to its end.
 */
void	measure_efficiency(double work_ms, double speed_time,
	    uint64_t total_ns, uint64_t elapsed_ns, struct measure_eff *e);

#endif /* R3Q_REPORT_MEASURE_H */
