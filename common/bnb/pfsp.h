/*
 * Branch and bound for the permutation flow shop (P-FSP, makespan): the
 * pure module under the "pfsp" task kind, r3qctl bnb --local and the
 * master's bnb job driver (doc/algorithms.md §3 and §5).  libc only:
 * no I/O, no clock, no threads; data in, decisions out.
 *
 * The pieces, in the order a host uses them:
 *
 * 1. An instance (struct bnb_instance): n jobs, m machines and the
 *    processing times p[k * n + j] of job j on machine k, machine-major as
 *    in Taillard's files.  bnb_parse_taillard() reads instance N of a
 *    Taillard file from a buffer (the caller reads the file) and says
 *    "file:line: message" when it cannot.  Limits: n <= BNB_MAX_JOBS,
 *    m <= BNB_MAX_MACHINES, 0 <= p <= BNB_MAX_TIME, so that every sum of
 *    processing times the bounds make, even twice over, fits in int32_t
 *    (2 * 500 * 100 * 10000 = 10^9 < 2^31).  Jobs are numbered from 0
 *    inside; users see them from 1.
 *
 * 2. A problem (struct bnb_problem): an instance with the tables its
 *    bounds need (tails, Johnson orders), made once and then read-only, so
 *    searches in several threads may share it.  Two lower bounds:
 *    BNB_LB1, the one-machine bound (for every machine k: its earliest
 *    start + the unscheduled work on k + the least time that must follow
 *    on k), and BNB_LB2, the two-machine bound of Lageweg, Lenstra and
 *    Rinnooy Kan (1978) over all m(m-1)/2 machine pairs (k, l): the
 *    unscheduled jobs on k and l with the machines between as time lags,
 *    in Johnson's order for (a + lag, b + lag) (Mitten), plus the least
 *    time after l; LB2 takes the larger of that and LB1.  Both read the
 *    machines' release times from the prefix and their tails from the
 *    suffix (below).  A node's bound is valid: no completion of it has a
 *    smaller makespan.  And a branching rule: BNB_FORWARD, a node's
 *    children append one unscheduled job each to the prefix (what
 *    bnb_problem_new() makes), or BNB_BIDIR (Ladhari and Haouari 2005,
 *    Gmys et al. 2020), where each node is branched forward or backward
 *    (a job put in front of the suffix), whichever leaves fewer children
 *    under the incumbent, ties to the larger sum of the children's bounds
 *    (Gmys's MinBranch, then MaxSum); forward on a full tie.
 *
 * 3. A subproblem (struct bnb_sub): a prefix of the permutation (the jobs
 *    scheduled first, in order), a suffix (the jobs scheduled last, in
 *    order; empty under forward branching) and its lower bound; the
 *    machines' release times and tails are recomputed from them.  Its
 *    subtree holds every permutation that starts with the prefix and ends
 *    with the suffix.
 *
 * 4. A search (struct bnb_search): depth-first exploration of one
 *    subproblem with an explicit stack (at most n(n+1)/2 entries, made
 *    at bnb_search_new(), so n = 500 costs no recursion and nothing is
 *    allocated while exploring).  bnb_search_load() loads a subproblem
 *    (bnb_search_start() one without a suffix);
 *    bnb_explore() runs until the subtree is exhausted, the node budget is
 *    spent, the host asks for a donation or cancels.  It reads the
 *    incumbent through ctl->incumbent at every node, so a host may lower
 *    it from another thread; the search prunes a node whose bound is not
 *    below min(incumbent, its own best).  A node is "explored" when it is
 *    taken from the stack unpruned and branched (its children bounded);
 *    bnb_search_nodes() counts them.  After BNB_BUDGET, BNB_DONATED or
 *    BNB_CANCELLED the search may go on with another bnb_explore(); its
 *    open nodes (the frontier) may be taken at any time between calls
 *    with bnb_search_take().  Every open node is either explored later by
 *    this search or taken out, never both: no node is explored twice.
 *
 * 5. A frontier (struct bnb_frontier): open nodes as a DFS stack holds
 *    them, one shared path plus (depth, job, bound) per node, node i
 *    being path[0 .. depth_i - 1] followed by job_i (or nothing, when
 *    job_i is BNB_NOJOB).  The path is a sequence of placements: a job
 *    number, with BNB_BACK set when the job went in front of the suffix
 *    rather than after the prefix; so the prefix is the forward
 *    placements in order and the suffix the backward ones in reverse.  A
 *    search loads a subproblem as its prefix placed forward then its
 *    suffix placed backward from the last job.  Compact on the wire:
 *    n = 500 costs 8 bytes a node, not 1 KB.  bnb_frontier_sub() turns
 *    node i into a subproblem.
 *
 * The search starts from an upper bound if it has one: NEH, or the
 *    iterated greedy of Ruiz and Stuetzle on top of it (heur.c), both
 *    deterministic.
 *
 * 6. A pool (struct bnb_pool): the open subproblems, best bound first
 *    (smallest bound; ties: deeper first, then first pushed).  The
 *    sequential solver bnb_solve() pops a subproblem, explores it with a
 *    node budget and pushes its frontier back; the master's driver does
 *    the same with the explorations on workers.
 *
 * 7. Encodings (task payload and output), little-endian, each starting
 *    with a magic and a version word; decoders check every length and
 *    job number against the buffer and n before they touch anything.
 *    The payload carries the whole instance, so a worker needs no other
 *    state (20 x 20 is 800 bytes of times).
 *
 *    Payload ("pfsp" task input), BNB_PAYLOAD_HEAD bytes then data:
 *      0   u32  magic BNB_PAYLOAD_MAGIC     4   u32  version (2)
 *      8   u32  n                          12   u32  m
 *      16  u32  lb (1: LB1, 2: LB2)        20   i32  incumbent at send
 *                                                   (INT32_MAX: none)
 *      24  u64  node budget (0: none)      32   u32  prefix depth
 *      36  i32  the subproblem's bound (informational)
 *      40  u32  suffix length              44   u32  branching (1:
 *                                                   forward, 2: bidir)
 *      48  u32  exchange interval, ms: a better makespan found goes to
 *               the master at most so often (0: at once); written by
 *               bnb_payload_set_exchange(), 0 otherwise
 *      52  u16  p[m * n], machine-major
 *      ..  u16  prefix[depth], then suffix[length], 0-based jobs, all
 *               distinct, < n
 *    Output, BNB_RESULT_HEAD bytes then data:
 *      0   u32  magic BNB_RESULT_MAGIC      4   u32  version (2)
 *      8   u32  stop (enum bnb_stop)       12   u32  n
 *      16  u64  nodes explored             24   i32  best makespan found
 *                                                   below the incumbent,
 *                                                   INT32_MAX: none
 *      28  u32  frontier path length       32   u32  frontier nodes
 *      36  u64  nodes pruned only by the incumbent the host gave while
 *               the search ran (ctl->incumbent; bnb_result_set_pruned)
 *      44  u16  best permutation[n], only when a best was found
 *      ..  u16  path[path length], placements (BNB_BACK: backward)
 *      ..  per node: i32 bound, u16 depth, u16 job (0xffff: none; a
 *               placement, BNB_BACK set when backward)
 *    The same output with stop BNB_SHARED is a running task's news
 *    (TaskNews): its best so far, and the open nodes it gave away when
 *    asked to donate (no longer its own); nodes is what it explored so
 *    far, not to be added up (the final output says the whole count).
 *    Bump the version if any of these change.  Version 1 had no suffix
 *    (a 40-byte payload head) and no BNB_BACK; version 2 had no
 *    exchange interval and no pruned count (48 and 36-byte heads).
 *
 * How the master's bnb driver is meant to use it: make the root
 * subproblem (bnb_sub_new(NULL, 0, bnb_bound(pb, NULL, 0))) and a pool;
 * the pool is the job's task queue, a subproblem's bound its priority.
 * For each subproblem popped, send bnb_payload_encode() of it with the
 * bound, the branching rule, the incumbent and a node budget as a "pfsp"
 * task (bnb_payload_len() counts the jobs of prefix and suffix together:
 * sub->depth + sub->back); on its output,
 * bnb_result_decode() against that subproblem (so a worker cannot hand
 * back nodes outside it), take a better best as the new incumbent and
 * bnb_pool_prune() with it, and bnb_frontier_sub() + bnb_pool_push() the
 * open nodes below the incumbent.  The job is proved optimal when the
 * pool is empty or bnb_pool_bound() is not below the incumbent and no
 * task is out.  A lost or cancelled task's subproblem goes back into the
 * pool whole: its nodes were not handed back, so none is lost.  Donation
 * needs a path from the master to a running task (task_ctx has none
 * yet): raise the search's ctl->donate, send ctl->donated's nodes, go on.
 * bnb_solve() is the same loop in one thread.
 */
#ifndef R3Q_BNB_PFSP_H
#define R3Q_BNB_PFSP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define BNB_MAX_JOBS		500
#define BNB_MAX_MACHINES	100
#define BNB_MAX_TIME		10000	/* 2 * n * m * p fits in int32_t */
#define BNB_NONE		INT32_MAX	/* no incumbent, no makespan */
#define BNB_NOJOB		0xffffu
#define BNB_BACK		0x8000u	/* a placement in front of the suffix */
#define BNB_JOB(pl)		((uint16_t)((pl) & ~BNB_BACK))

#define BNB_PAYLOAD_MAGIC	0x50534650u	/* "PFSP" */
#define BNB_RESULT_MAGIC	0x52534650u	/* "PFSR" */
#define BNB_VERSION		3u
#define BNB_PAYLOAD_HEAD	52
#define BNB_RESULT_HEAD		44
#define BNB_TICK		1024	/* nodes between ctl->tick calls */

enum bnb_lb {
	BNB_LB1 = 1,		/* one machine */
	BNB_LB2 = 2		/* two machines, all pairs (Johnson) */
};

/* How a node is branched. */
enum bnb_branch {
	BNB_FORWARD = 1,	/* append to the prefix */
	BNB_BIDIR = 2		/* that or prepend to the suffix, per node */
};

/* Why bnb_explore() returned. */
enum bnb_stop {
	BNB_EXHAUSTED = 0,	/* nothing open left: the subtree is done */
	BNB_BUDGET,		/* the node budget is spent; nodes are open */
	BNB_DONATED,		/* ctl->donated holds the nodes given away */
	BNB_CANCELLED,		/* *ctl->cancel was raised */
	BNB_SHARED		/* not a stop: a running task's news (7.) */
};

/* An instance; bnb_instance_free() frees p.  Owned by whoever parsed it. */
struct bnb_instance {
	uint32_t	 n;		/* jobs */
	uint32_t	 m;		/* machines */
	int32_t		*p;		/* p[k * n + j] */
	uint32_t	 index;		/* 1-based in its file, 0: none */
	int64_t		 seed;		/* from the file, -1: not given */
	int32_t		 ub;		/* from the file, -1: not given */
	int32_t		 lb;		/* from the file, -1: not given */
};

/*
 * A subproblem: malloc'd in one piece, freed with free().  prefix holds
 * the prefix's depth jobs and after them the suffix's back jobs, all
 * distinct and 0-based.
 */
struct bnb_sub {
	int32_t		 lb;
	uint32_t	 depth;
	uint32_t	 back;
	uint16_t	 prefix[];	/* depth + back jobs */
};

/* One open node of a frontier; see 5. above. */
struct bnb_open {
	int32_t		 lb;
	uint16_t	 depth;
	uint16_t	 job;		/* BNB_NOJOB: the path's prefix itself */
};

/* Open nodes sharing one path; owned by its user (bnb_frontier_free). */
struct bnb_frontier {
	uint32_t	 pathlen;
	uint16_t	*path;		/* room for BNB_MAX_JOBS */
	struct bnb_open	*v;
	size_t		 n;
	size_t		 cap;
};

/*
 * How bnb_explore() runs, all optional but budget.  The pointers are
 * read (donate also cleared) from the exploring thread at every node;
 * the host may write them from another.  half is called once per search,
 * when the nodes explored since bnb_search_start() reach budget / 2 (the
 * "state 2" of suspect detection); found is called with every complete
 * permutation better than both the incumbent and the search's own best,
 * as soon as it is found (for a host that pushes it to others); tick,
 * every BNB_TICK nodes (for a host that sends news on a timer).
 */
struct bnb_ctl {
	const _Atomic int32_t	*incumbent;	/* NULL: none */
	atomic_int		*donate;	/* non-zero: give nodes away */
	const atomic_int	*cancel;	/* non-zero: stop */
	uint64_t		 budget;	/* nodes since start, 0: none */
	int32_t			 base;		/* the incumbent given at the
						   start, for
						   bnb_search_pruned(); 0:
						   count nothing */
	struct bnb_frontier	*donated;	/* where a donation goes */
	void			(*half)(void *);
	void			(*found)(void *, int32_t, const uint16_t *);
	void			(*tick)(void *);
	void			*arg;
};

/* The decoded payload; inst.p is malloc'd (bnb_instance_free). */
struct bnb_payload {
	struct bnb_instance	 inst;		/* p malloc'd: free it */
	int			 lb;		/* enum bnb_lb */
	int			 branch;	/* enum bnb_branch */
	int32_t			 incumbent;
	uint64_t		 budget;
	int32_t			 sub_lb;
	uint32_t		 depth;
	uint32_t		 back;		/* the suffix's length */
	uint32_t		 exchange_ms;
	uint16_t		 prefix[BNB_MAX_JOBS];
	uint16_t		 suffix[BNB_MAX_JOBS];
};

/* The decoded output; bnb_result_free() frees what it holds. */
struct bnb_result {
	int			 stop;		/* enum bnb_stop */
	uint32_t		 n;
	uint64_t		 nodes;
	int32_t			 best;		/* BNB_NONE: none */
	uint64_t		 pruned;	/* by the host's incumbent only */
	uint16_t		 perm[BNB_MAX_JOBS];
	struct bnb_frontier	 frontier;
};

/* What bnb_solve() may do. */
struct bnb_solve_opts {
	uint64_t	 slice;		/* node budget per pop, 0: one run */
	uint64_t	 max_nodes;	/* stop unproved after, 0: none */
	int32_t		 incumbent;	/* a known upper bound, BNB_NONE */
	int		 neh;		/* start from the NEH heuristic */
	uint32_t	 ig_iters;	/* then so many iterated greedy ones */
	const atomic_int *cancel;	/* stop unproved, NULL: none */
};

/* What bnb_solve() found; perm has room for BNB_MAX_JOBS. */
struct bnb_solution {
	int32_t		 cmax;		/* BNB_NONE: nothing beat incumbent */
	int32_t		 bound;		/* proved lower bound on the optimum */
	uint16_t	 perm[BNB_MAX_JOBS];
	uint64_t	 nodes;		/* explored */
	uint64_t	 pops;		/* subproblems taken from the pool */
	size_t		 pool_max;	/* the pool's largest size */
	int		 proved;	/* cmax is optimal (or none is < it) */
};

struct bnb_problem;
struct bnb_search;
struct bnb_pool;

/* Instances (pfsp.c). */
int		 bnb_parse_taillard(const char *, size_t, const char *,
		    uint32_t, struct bnb_instance *, char *, size_t);
int		 bnb_instance_check(const struct bnb_instance *, char *,
		    size_t);
void		 bnb_instance_free(struct bnb_instance *);
int32_t		 bnb_makespan(const struct bnb_instance *, const uint16_t *,
		    uint32_t);
int		 bnb_perm_check(const uint16_t *, uint32_t, uint32_t);

/* Upper bounds (heur.c). */
int32_t		 bnb_neh(const struct bnb_instance *, uint16_t *);
int32_t		 bnb_ig(const struct bnb_instance *, uint32_t, uint64_t,
		    uint16_t *);

/* Problems and bounds (pfsp.c). */
struct bnb_problem *bnb_problem_new(const struct bnb_instance *, int,
		    char *, size_t);
struct bnb_problem *bnb_problem_make(const struct bnb_instance *, int, int,
		    char *, size_t);
void		 bnb_problem_free(struct bnb_problem *);
const struct bnb_instance *bnb_problem_instance(const struct bnb_problem *);
int		 bnb_problem_lb(const struct bnb_problem *);
int		 bnb_problem_branch(const struct bnb_problem *);
int32_t		 bnb_bound(const struct bnb_problem *, const uint16_t *,
		    uint32_t);
int32_t		 bnb_bound_sub(const struct bnb_problem *,
		    const struct bnb_sub *);
const char	*bnb_lb_name(int);
const char	*bnb_branch_name(int);

/* Subproblems and frontiers (search.c). */
struct bnb_sub	*bnb_sub_new(const uint16_t *, uint32_t, int32_t);
struct bnb_sub	*bnb_sub_make(const uint16_t *, uint32_t, const uint16_t *,
		    uint32_t, int32_t);
void		 bnb_frontier_init(struct bnb_frontier *);
void		 bnb_frontier_reset(struct bnb_frontier *);
void		 bnb_frontier_free(struct bnb_frontier *);
int		 bnb_frontier_add(struct bnb_frontier *, int32_t, uint16_t,
		    uint16_t);
struct bnb_sub	*bnb_frontier_sub(const struct bnb_frontier *, size_t);

/* Depth-first search of one subproblem (search.c). */
struct bnb_search *bnb_search_new(const struct bnb_problem *);
void		 bnb_search_free(struct bnb_search *);
int		 bnb_search_start(struct bnb_search *, const uint16_t *,
		    uint32_t, int32_t, char *, size_t);
int		 bnb_search_load(struct bnb_search *, const struct bnb_sub *,
		    char *, size_t);
int		 bnb_explore(struct bnb_search *, const struct bnb_ctl *);
uint64_t	 bnb_search_nodes(const struct bnb_search *);
uint64_t	 bnb_search_pruned(const struct bnb_search *);
size_t		 bnb_search_open(const struct bnb_search *);
int32_t		 bnb_search_best(const struct bnb_search *,
		    const uint16_t **);
int		 bnb_search_take(struct bnb_search *, struct bnb_frontier *,
		    size_t);

/* The pool and the sequential solver (pool.c). */
struct bnb_pool	*bnb_pool_new(void);
void		 bnb_pool_free(struct bnb_pool *);
int		 bnb_pool_push(struct bnb_pool *, struct bnb_sub *);
struct bnb_sub	*bnb_pool_pop(struct bnb_pool *);
size_t		 bnb_pool_size(const struct bnb_pool *);
int32_t		 bnb_pool_bound(const struct bnb_pool *);
const struct bnb_sub *bnb_pool_at(const struct bnb_pool *, size_t);
size_t		 bnb_pool_prune(struct bnb_pool *, int32_t);
int		 bnb_split(const struct bnb_problem *, const struct bnb_sub *,
		    uint32_t, int32_t *, uint16_t *, struct bnb_pool *,
		    uint64_t *, char *, size_t);
int		 bnb_solve(const struct bnb_problem *,
		    const struct bnb_solve_opts *, struct bnb_solution *,
		    char *, size_t);

/* Encodings (codec.c). */
size_t		 bnb_payload_len(uint32_t, uint32_t, uint32_t);
int		 bnb_payload_encode(uint8_t *, size_t,
		    const struct bnb_instance *, int, int, int32_t, uint64_t,
		    const struct bnb_sub *);
void		 bnb_payload_set_exchange(uint8_t *, size_t, uint32_t);
int		 bnb_payload_decode(const uint8_t *, size_t,
		    struct bnb_payload *, char *, size_t);
size_t		 bnb_result_len(uint32_t, int32_t, const struct bnb_frontier *);
int		 bnb_result_encode(uint8_t *, size_t, int, uint32_t, uint64_t,
		    int32_t, const uint16_t *, const struct bnb_frontier *);
int		 bnb_result_decode(const uint8_t *, size_t, uint32_t,
		    const struct bnb_sub *, struct bnb_result *, char *,
		    size_t);
void		 bnb_result_set_pruned(uint8_t *, size_t, uint64_t);
int		 bnb_result_nodes(const uint8_t *, size_t, uint64_t *);
void		 bnb_result_free(struct bnb_result *);

#endif /* R3Q_BNB_PFSP_H */
