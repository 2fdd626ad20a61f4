/*
 * r3q-sim's branch and bound, the side that is not time: the master's
 * pool and incumbent and a worker's search, over the pure module
 * (common/bnb/pfsp.h) in C, behind a header C++ can read (pfsp.h's
 * atomics are C11's).  bnb.cpp calls these and decides nothing about
 * the search: when a task runs and for how long is its business.
 */
#ifndef R3Q_SIM_BNB_HOST_H
#define R3Q_SIM_BNB_HOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bnb_sub;
struct sbnb_job;
struct sbnb_run;

/* What the job is: the instance and how it is searched. */
struct sbnb_params {
	const char	*file;		/* Taillard's format */
	uint32_t	 index;		/* 1-based in the file */
	int		 lb;		/* enum bnb_lb */
	int		 branch;	/* enum bnb_branch */
	uint32_t	 ig;		/* 0: NEH's bound, else IG's */
	uint32_t	 split_depth;	/* the root split into the pool */
	uint64_t	 budget;	/* nodes a task, from 1 */
};

/* A finished task's output as it crosses the wire. */
struct sbnb_out {
	uint8_t		*buf;		/* bnb_result_encode()'s bytes */
	size_t		 len;
	uint64_t	 nodes;
	int32_t		 best;		/* BNB_NONE: none */
};

/* The master's side (bnb-host.c). */
struct sbnb_job	*sbnb_job_new(const struct sbnb_params *, char *, size_t);
void		 sbnb_job_free(struct sbnb_job *);
uint32_t	 sbnb_job_n(const struct sbnb_job *);
uint32_t	 sbnb_job_m(const struct sbnb_job *);
int32_t		 sbnb_job_inc(const struct sbnb_job *);
int32_t		 sbnb_job_first(const struct sbnb_job *);
uint64_t	 sbnb_job_root_nodes(const struct sbnb_job *);
size_t		 sbnb_job_pool(const struct sbnb_job *);
int32_t		 sbnb_job_pool_bound(const struct sbnb_job *);
struct bnb_sub	*sbnb_job_pop(struct sbnb_job *);
int		 sbnb_job_better(struct sbnb_job *, int32_t, const uint16_t *);
int		 sbnb_job_result(struct sbnb_job *, const struct bnb_sub *,
		    const struct sbnb_out *, uint64_t *, char *, size_t);
int		 sbnb_job_check(const struct sbnb_job *);
size_t		 sbnb_payload_len(const struct sbnb_job *,
		    const struct bnb_sub *);
int32_t		 sbnb_sub_lb(const struct bnb_sub *);
void		 sbnb_sub_free(struct bnb_sub *);

/* A worker's side. */
struct sbnb_run	*sbnb_run_new(const struct sbnb_job *);
void		 sbnb_run_free(struct sbnb_run *);
int		 sbnb_run_load(struct sbnb_run *, const struct bnb_sub *,
		    int32_t);
void		 sbnb_run_lower(struct sbnb_run *, int32_t);
int		 sbnb_run_step(struct sbnb_run *, uint64_t);
uint64_t	 sbnb_run_nodes(const struct sbnb_run *);
int32_t		 sbnb_run_best(const struct sbnb_run *, const uint16_t **);
int		 sbnb_run_output(struct sbnb_run *, struct sbnb_out *);

#ifdef __cplusplus
}
#endif

#endif /* R3Q_SIM_BNB_HOST_H */
