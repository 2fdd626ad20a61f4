/*
 * Rendering of a job's record into standalone SVG figures (task flow per
 * CPU slot, convergence, time per generation), one self-contained XHTML
 * report and a Chrome trace-event file, and a grouped bar chart for the
 * benchmarks.
 *
 * Pure: the functions read only the structs they are given and write only
 * to the FILE they are given; the same input gives the same bytes.  Numbers
 * are printed as in the "C" locale whatever the caller's locale is.  Text
 * (worker names, policy, labels) is escaped, and bytes that are not UTF-8
 * are replaced, so every document is well-formed whatever it is fed.
 */
#ifndef R3Q_REPORT_H
#define R3Q_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum report_outcome {
	REPORT_DONE = 0,	/* execution whose result was accepted */
	REPORT_LOST_RACE,	/* finished, but another copy was first (duplicate) */
	REPORT_INTERRUPTED,	/* cancelled while running (terminated copy) */
	REPORT_FAILED		/* task error on the worker */
};

struct report_span {		/* one task execution on one CPU slot */
	uint32_t	 worker;	/* index into report_job.workers */
	uint32_t	 slot;		/* CPU slot, < workers[worker].cpus */
	uint32_t	 gen;
	uint64_t	 task;
	uint64_t	 start_ns;	/* relative to the job's start */
	uint64_t	 end_ns;
	enum report_outcome outcome;
	int		 replica;	/* an extra copy (replication) */
	int		 moved;		/* came by a move (balancing) */
};

struct report_mark {		/* a copy withdrawn while still queued (never ran) */
	uint32_t	 worker;
	uint32_t	 gen;
	uint64_t	 task;
	uint64_t	 t_ns;		/* relative to the job's start */
	int		 replica;	/* it was an extra copy */
	int		 moved;		/* released for a move (balancing) */
};

struct report_worker {
	char		 name[64];
	uint32_t	 cpus;
	double		 speed;
};

struct report_gen {
	uint32_t	 gen;
	double		 best;		/* best fitness after this generation (>= 0; 0 possible) */
	uint64_t	 start_ns;	/* relative to job start */
	uint64_t	 total_ns, sync_ns, comm_ns, compute_ns;	/* total = sync+comm+compute roughly */
	uint64_t	 sync_start_ns;	/* when the synchronisation wait began, relative to job start; 0 = none */
	uint32_t	 tasks, replicas, killed_held, killed_running;
};

/*
 * Everything a report shows of one job.  The caller owns every array; the
 * report functions only read them for the duration of the call.
 */
struct report_job {
	uint64_t		 id;
	char			 policy[16];
	char			 state[16];
	double			 delay_ms;	/* emulated one-way delay, <0 unknown */
	uint64_t		 total_ns;
	double			 efficiency;	/* 0..1, <0 unknown */
	double			 lower_bound_s;	/* <0 unknown */
	uint32_t		 replicas, killed_held, killed_running;
	const struct report_worker *workers;	size_t nworkers;
	const struct report_gen	*gens;		size_t ngens;
	const struct report_span *spans;	size_t nspans;
	const struct report_mark *marks;	size_t nmarks;
};

/* Each returns 0, or -1 with errno set (write error); gen_from..gen_to inclusive, UINT32_MAX = to the end. */
int report_svg_gantt(FILE *, const struct report_job *, uint32_t gen_from, uint32_t gen_to);
int report_svg_convergence(FILE *, const struct report_job *);
int report_svg_breakdown(FILE *, const struct report_job *);
int report_html(FILE *, const struct report_job *, uint32_t gen_from, uint32_t gen_to);
int report_trace_json(FILE *, const struct report_job *);

/* A grouped bar chart, for benchmarks. */
struct report_bars {
	const char	 *title, *ylabel;
	const char *const *groups;  size_t ngroups;	/* x-axis groups, e.g. "100 ms / 0 ms" */
	const char *const *series;  size_t nseries;	/* bars within a group, e.g. policies */
	const double	 *values;	/* ngroups x nseries, row-major; NaN = missing */
};
int report_svg_bars(FILE *, const struct report_bars *);

#endif /* R3Q_REPORT_H */
