/*
 * The scheduling core: the master queue, batches, copies of tasks on
 * workers and the policies WQ, RR, RWQ and R3Q of doc/algorithms.md section 1.
 *
 * Everything here is a pure function of the calls made so far: no clock,
 * no I/O, no threads, no static state.  Every decision is appended to a
 * FIFO of struct sched_action that the caller drains.
 *
 * Books kept:
 *  - batches, in open order; each has a queue of its own, and the master
 *    queue Q is their union ordered by (priority, add order): a worker
 *    takes the least task of every batch whose kind it runs;
 *  - tasks, in one chunk per sched_batch_add() call (their addresses stay
 *    put while an open batch grows), found by id through an
 *    open-addressing hash table of pointers;
 *  - a batch's queue in three parts, all ordered by (priority, add order):
 *    a sorted run (a list: tasks added in order at one priority, and tasks
 *    put back, go there in O(1)), a binary heap for the tasks that fit at
 *    neither end of the run, and a short list of the tasks some machine is
 *    out for (they failed or voted there), walked for sched_queue_first_for();
 *  - copies: one per (task, worker), linked both into the task's list and
 *    into the worker's list;
 *  - per batch, R: the tasks that have copies and no result yet, in the
 *    order their first copy was sent.  A task is in the run, the list of
 *    excluded tasks or R (or none), so those lists share its links;
 *  - what few tasks need (failures, votes, kills, the suspect and need
 *    lists) in a side struct allocated on first use, so that a plain
 *    queued task stays small;
 *  - batches by id in an open-addressing hash table, and only the live
 *    ones indexed for the events: per kind the batches with queued
 *    tasks, the kinds a worker runs that have some (active kinds), the
 *    drained batches (closed, queue empty: tail replication, idle
 *    moments, the speed-aware tail) and those with excluded tasks, both
 *    in open order; the caps and balancing modes of the batches as
 *    tallies.  So a batch of a kind no worker runs, or with nothing to
 *    do, costs an event nothing, whatever number of them a client left
 *    (batches_visited in the stats counts the batches events look at);
 *  - per worker, the kinds it runs (a bit mask below 64, a sorted array
 *    above), and per kind the number of workers that run it;
 *  - three sets of places in join order, kept as 64-ary bit trees so
 *    that the next member after a place is found in O(log N): the workers
 *    that may have room under some live batch (s_room, a superset of
 *    those with room under any one batch), those with fewer copies than
 *    CPUs (s_free), and those holding a copy not started with a CPU free
 *    (s_idle: the suspects of sched_detect_idle()).  Every walk that hands
 *    out copies (fill aside, which has its own candidates), replicates,
 *    looks for an idle CPU or for a worker that does not start what it
 *    holds walks these instead of every worker, in join order, and tests
 *    each member as the walk over every worker did; so an event costs
 *    what it decides, not the number of workers, with the same decisions
 *    (measured up to 10,000 workers).  The cooling workers are kept in the
 *    order their cool-downs end.
 *
 * Semantics chosen where the contract leaves room:
 *  - Fresh work comes first: every event first fills free capacity from
 *    the queues and only then replicates, batch by batch in submit order.
 *  - RR (steps 6-11) replicates ONE task of R per event, to every worker
 *    of the batch's kind with fewer than ncpu copies and no copy of that
 *    task; if no such worker can take the task under the cursor the next
 *    task of R is tried.  R3Q walks R from the newest task backwards and
 *    gives every free queue slot (queue_factor x ncpu) its own replica,
 *    round-robin over the workers, one slot per worker per pass.  Under
 *    queue_factor auto R3Q's tail is speed-aware instead (see
 *    sched_replicate_tail()): the task due last goes to the worker that
 *    brings it back soonest, only if sooner.
 *  - A task put back in the queue (worker lost, failure) goes before
 *    every queued task of its priority, in every batch (its add order
 *    becomes the lowest yet), and gets a new send number when it is sent
 *    again, so it rejoins R at the newest end.
 *  - A batch opened with sched_batch_open() takes tasks until
 *    sched_batch_close(); they are sent as they come.  An open batch is
 *    never tail-replicated (RR, R3Q) and never counts as idle, since its
 *    client may still add work; SCHED_BATCH_DONE waits for the close.
 *  - Copies (the multiplicity of doc/algorithms.md §3.1): a
 *    task with copies k wants k copies out at once.  When it is taken from
 *    the queue, the other k - 1 go at once to the least loaded workers
 *    with room, on machines that have none yet where possible; those that
 *    find no room wait on the need list, served before fresh work as the
 *    verify copies are.  Under verify v it wants the larger of the two
 *    counts; a copy the verify count asks for is a verify copy, the others
 *    are replicas.  The first result wins and the other copies are
 *    cancelled.  Copies are replicas in the counts but do not start the
 *    synchronisation wait (t_sync), which is the tail's.
 *  - sched_task_cancel() withdraws a task: out of its queue, or every copy
 *    cancelled (SCHED_CANCEL); it counts as finished for its batch, with no
 *    SCHED_TASK_FAILED.
 *  - Once a batch is done (or aborted) its tasks are forgotten: a later
 *    result answers SCHED_UNKNOWN.  While the batch lives, a result for a
 *    done or failed task answers SCHED_DUPLICATE.
 *  - A failure reported by a worker that holds no copy of the task (it was
 *    cancelled, or the worker was lost and came back) is stale: ignored,
 *    -1.  A lost worker's copies do not count as attempts.  A task is never
 *    sent again to a machine (sched_worker_node()) it failed on, and gives
 *    up after failing on max_attempts machines or on every one connected
 *    that could run it; the machines it failed on become suspect once it
 *    succeeds elsewhere.
 *  - A worker's group (sched_worker_join_group(); its node unless the
 *    caller says otherwise) is who answers for its outputs: under verify
 *    a group votes once, a task's copies go to distinct groups where
 *    possible, and an outvoted output makes the whole group suspect.
 *    Failures stay per node.  A vote from a group that voted already is
 *    stale; when it came from the task's last copy and no worker here
 *    may vote, the task gives up (SCHED_FAIL_DISAGREE) rather than wait.
 *  - Relative suspect detection runs at every result, and again on a timer
 *    (sched_tick() at sched_deadline()) so that a copy that stands still
 *    is caught even when no result follows.
 *  - Cancelled copies are counted whether the cancel comes from a result
 *    or from sched_batch_abort(), so cancelled_held + cancelled_running is
 *    the number of SCHED_CANCEL actions.
 *
 * Measurements (struct sched_batch_report, doc/algorithms.md section 1.6),
 * every time the `now` of a public call:
 *  - t_empty is the call during which the batch's queue became empty; if a
 *    lost worker or a failure puts tasks back, the next emptying
 *    overwrites it.
 *  - An idle moment is the end of an event (after filling and
 *    replication) at which the batch lives, its queue is empty and some
 *    worker that can run its kind holds fewer copies than CPUs.  Only the
 *    first one is kept, even if the queue fills again later.
 *  - t_sync is the first replica's time if the batch had one (RR, R3Q),
 *    else the first idle moment (WQ, RWQ, or RR/R3Q without replicas),
 *    else 0: the batch ended before any CPU ran out of its work, e.g. its
 *    last result came while every CPU was still busy, or the next batch
 *    kept them busy.  It may precede t_empty after a requeue.
 *  - The counts are this batch's own share of the global ones.
 *
 * Estimates (sched_done_timed()): per worker, an EWMA with weight 1/4 of
 * the round trip (time since the copy was assigned, less the time the
 * worker says the task spent with it) and of the execution time.  They
 * size the worker's queue under queue_factor SCHED_QF_AUTO, and there
 * tell R3Q's tail when each copy should come back.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sched.h"
#include "u64map.h"

#define SCHED_QUEUE_FACTOR	2	/* queue_factor 0 means this */
#define SCHED_MAX_ATTEMPTS	3	/* max_attempts 0 means this */
#define SCHED_MAX_KILLS		3	/* max_kills 0 means this */
#define TAB_MINSLOTS		64
#define SCHED_SCAN_MIN		10000000ULL	/* 10 ms */
#define SCHED_KLOW		64	/* kinds below this: a bit mask */
#define IDX_NONE		SIZE_MAX	/* idx_next(): no member */
#define IDX_LEVELS		6	/* 64^6 places at most */

enum task_state {
	TASK_QUEUED,		/* in its batch's queue */
	TASK_SENT,		/* has at least one copy; in R */
	TASK_DONE,		/* result accepted */
	TASK_FAILED,		/* gave up after max_attempts */
	TASK_CANCELLED		/* withdrawn by sched_task_cancel() */
};

/* Where a queued task waits in its batch's queue. */
enum task_where {
	TQ_NONE = 0,		/* not queued */
	TQ_RUN,			/* the sorted run, b_qfirst */
	TQ_HEAP,		/* the heap, b_heap */
	TQ_EXCL			/* the excluded list, b_xfirst */
};

/*
 * One copy of a task on one worker, first copy or replica.  Linked into
 * its task's and its worker's lists; freed when it is cancelled, fails,
 * returns a result, or its worker is lost.
 */
struct copy {
	struct task	*c_task;
	struct worker	*c_worker;
	struct copy	*c_tprev, *c_tnext;	/* task's copies, oldest first */
	struct copy	*c_wprev, *c_wnext;	/* worker's copies, oldest first */
	uint64_t	 c_sent;		/* now of its SCHED_ASSIGN */
	uint64_t	 c_start;		/* now of sched_started() */
	uint64_t	 c_changed;		/* last state change */
	struct copy	*c_oprev, *c_onext;	/* running, by c_changed */
	int		 c_running;
	int		 c_half;		/* in its second half */
	int		 c_inorder;		/* on the c_changed list */
	int		 c_suspect;
	int		 c_replica;		/* sent as an extra copy */
	int		 c_withdraw;		/* SCHED_WITHDRAW sent, its
						   answer (sched_released())
						   still due */
	int		 c_moved;		/* came by a move: never moved
						   again (no back and forth) */
	int		 c_hasto;		/* room reserved on the target */
	uint32_t	 c_to;			/* that target's id, */
	uint64_t	 c_toseq;		/* and join number */
};

/* One output of a task under verify: which group said what. */
struct vote {
	uint64_t	 v_node;		/* its w_group */
	uint64_t	 v_digest;
};

/*
 * What few tasks need: failures, votes, kills and the links of the
 * suspect and need lists.  Allocated by sched_aux() on first use, freed
 * with the task.
 */
struct task_aux {
	uint64_t	*x_failed;		/* nodes its copies failed on;
						   max_attempts entries */
	struct vote	*x_votes;		/* verify: outputs so far, 2 x
						   verify - 1 entries or NULL */
	uint32_t	 x_nfailed;
	uint32_t	 x_nvotes;
	uint32_t	 x_nsuspect;		/* suspect copies */
	unsigned	 x_kills;		/* workers lost running it */
	int		 x_inneed;		/* on the need list */
	int		 x_insuspect;		/* on the suspect list */
	struct task	*x_nprev, *x_nnext;	/* need list */
	struct task	*x_sprev, *x_snext;	/* suspect list */
};

/*
 * A task, living in a chunk of its batch and in the id table from
 * sched_batch_add() until the batch is done or aborted.  Its queue order
 * is (t_prio, t_order): t_order counts adds up from 0 and puts back down
 * from -1, so a task put back goes first among its priority.
 */
struct task {
	uint64_t	 t_id;
	struct batch	*t_batch;
	int64_t		 t_order;
	int32_t		 t_prio;
	uint32_t	 t_hidx;		/* TQ_HEAP: index in b_heap */
	uint32_t	 t_ncopies;
	uint8_t		 t_state;		/* enum task_state */
	uint8_t		 t_where;		/* enum task_where */
	uint8_t		 t_want;		/* copies at once, 1 to
						   SCHED_COPIES_MAX */
	struct copy	*t_copies, *t_lastcopy;
	struct task	*t_prev, *t_next;	/* run or excluded list if
						   QUEUED, R if SENT */
	struct task_aux	*t_aux;			/* NULL until needed */
	/* The speed-aware tail (sched_replicate_tail()), in R only. */
	uint32_t	 t_xmax;		/* place + 1 in b_tmax, 0: none */
	uint32_t	 t_xmin;		/* place + 1 in b_tmin */
	uint64_t	 t_eta;			/* its best copy's result is due */
	uint64_t	 t_lateat;		/* that copy turns late */
};

/* The tasks of one sched_batch_add() call. */
struct tchunk {
	struct tchunk	*tc_next;
	size_t		 tc_n;
	struct task	 tc_tasks[];
};

/*
 * A batch: its config, its queue and its list R of sent tasks.  Created
 * by sched_batch_open() (or sched_submit()); freed once it is closed and
 * its last task is done, failed or cancelled, or by sched_batch_abort().
 */
struct batch {
	uint64_t		 b_id;
	struct sched_batch_config b_cfg;	/* defaults filled in */
	struct tchunk		*b_chunks;	/* newest first */
	size_t			 b_ntasks;
	size_t			 b_nfinished;	/* done, failed or cancelled */
	size_t			 b_nqueued;
	size_t			 b_nfailq;	/* of them, tasks some machine
						   is out for (failed, voted):
						   the excluded list */
	int			 b_closed;	/* no more tasks will come */
	struct task		*b_qfirst, *b_qlast;	/* the sorted run */
	struct task		**b_heap;	/* the rest, a binary heap */
	size_t			 b_nheap;
	size_t			 b_heapsize;
	struct task		*b_xfirst, *b_xlast;	/* excluded, sorted */
	struct task		*b_rfirst, *b_rlast;	/* R, in send order */
	struct task		*b_rnext;	/* replication cursor; NULL:
						   start of the walk */
	/*
	 * R3Q under queue_factor auto, once its queue ran dry: R again, as
	 * two heaps, by when each task's result is due (latest first) and
	 * by when that turns late (earliest first).
	 */
	int			 b_tail;	/* the heaps are kept */
	struct task		**b_tmax;
	struct task		**b_tmin;
	size_t			 b_ntail;
	size_t			 b_tailsize;
	struct sched_batch_report b_report;	/* t_sync: first replica */
	int			 b_synced;	/* t_sync is set */
	uint64_t		 b_tidle;	/* first idle moment */
	int			 b_idle;	/* b_tidle is set */
	struct batch		*b_prev, *b_next;
	/*
	 * The indexes that make an event cost its live work, not the
	 * number of batches (sched_batch_books()): its open order, the
	 * queued batches of its kind, the drained ones (closed, queue
	 * empty, in open order) and those with excluded tasks (in open
	 * order).
	 */
	uint64_t		 b_seq;
	size_t			 b_nsuspect;	/* its tasks on s_sfirst */
	int			 b_inq, b_ind, b_inx;
	struct batch		*b_kprev, *b_knext;	/* kind's queued */
	struct batch		*b_dprev, *b_dnext;	/* drained */
	struct batch		*b_xprev, *b_xnext;	/* excluded tasks */
};

/*
 * A worker, from sched_worker_join() until sched_worker_lost() or
 * sched_free().
 */
struct worker {
	uint32_t	 w_id;
	uint64_t	 w_node;		/* the machine behind it: the
						   same across its reconnections */
	uint64_t	 w_group;		/* who answers for it: its
						   machine, or the relay that
						   carries it; one vote */
	uint32_t	 w_ncpu;
	uint64_t	 w_klow;		/* bit k: can run kind k < 64 */
	uint32_t	*w_khigh;		/* the kinds >= 64, sorted */
	size_t		 w_nkhigh;
	uint32_t	 w_ncopies;		/* held + running */
	uint32_t	 w_nheld;
	uint32_t	 w_nrunning;
	uint64_t	 w_rtt;			/* EWMA, if w_hasrtt */
	uint64_t	 w_task;		/* EWMA, if w_hastask */
	int		 w_hasrtt;
	int		 w_hastask;
	struct copy	*w_copies, *w_lastcopy;
	uint32_t	 w_nsuspect;		/* suspect copies */
	uint64_t	 w_suspects;		/* times it became suspect */
	uint64_t	*w_ring;		/* times of the last suspicions */
	uint32_t	 w_ringlen;		/* entries used, at most limit+1 */
	uint32_t	 w_ringhead;		/* oldest entry */
	int		 w_cooling;
	uint64_t	 w_cool_until;
	int		 w_paused;		/* sched_worker_pause() */
	int		 w_draining;		/* sched_worker_drain(): for good */
	uint64_t	 w_alive;		/* its last sign of life */
	uint64_t	 w_seq;			/* join order */
	size_t		 w_idx;			/* its place in s_workers */
	int		 w_cand;		/* on s_cand */
	size_t		 w_wh;			/* place + 1 in s_wheap, 0: none */
	uint64_t	 w_whkey;		/* its key there */
	struct worker	*w_cprev, *w_cnext;	/* cooling, by w_cool_until */
	/*
	 * Balancing (section 4): Power is the results this worker returned
	 * (sched_vote(), sched_failed(), copies it held) in the last whole
	 * power_interval, counted here, never taken from the worker's word.
	 */
	uint32_t	 w_pcount;		/* this interval so far */
	uint32_t	 w_power;		/* the last whole interval */
	uint32_t	 w_rate;		/* the last one it was never
						   short of work in (global) */
	uint64_t	 w_joined;		/* now of its join */
	int		 w_pvalid;		/* w_power covers a whole
						   interval it was here for */
	int		 w_starved;		/* ran dry this interval: a CPU
						   without a copy, the queue
						   empty */
	uint32_t	 w_nincoming;		/* room reserved for moves */
	uint32_t	 w_noutgoing;		/* copies being withdrawn */
	int		 w_balskip;		/* global: no move from it */
};

/*
 * A set of places (0 .. n-1) as a tree of 64-bit words: bit i of level
 * 0 is place i, bit j of level l + 1 says word j of level l is not 0.
 * The top level is one word.  Membership, insertion, removal and the
 * next member from a place cost O(log64 n).
 */
struct idxset {
	uint64_t	*ix_w[IDX_LEVELS];
	size_t		 ix_nw[IDX_LEVELS];	/* words per level */
	int		 ix_nlev;
	size_t		 ix_cap;		/* places */
};

/*
 * What the core keeps of one kind: how many connected workers run it
 * (sched_kind_workers()), how many batches name it, and its batches with
 * queued tasks (in no order: tasks are ordered across batches by
 * task_before()).  A kind is active, on s_akinds, while a worker runs it
 * and it has queued batches: only those are looked at for work.
 */
struct kcount {
	uint32_t	 k_kind;
	uint32_t	 k_n;
	int		 k_used;
	size_t		 k_nb;			/* batches of the kind */
	struct batch	*k_qfirst, *k_qlast;	/* queued batches */
	size_t		 k_aidx;		/* place + 1 in s_akinds */
};

struct sched {
	struct task		**s_slots;	/* task id -> task, linear probing */
	size_t			 s_nslots;	/* 0 or a power of two */
	size_t			 s_nused;
	struct worker		**s_workers;	/* in join order */
	size_t			 s_nworkers;
	size_t			 s_maxworkers;
	struct worker		**s_wslots;	/* worker id -> worker */
	size_t			 s_nwslots;	/* 0 or a power of two */
	uint64_t		 s_wseq;	/* next join number */
	/*
	 * Workers that may have room, so that a result costs a look at its
	 * own worker rather than at all of them: every worker with room
	 * under the batch it would take from is on s_cand, or s_fill_all is
	 * set and all are looked at once.
	 */
	struct worker		**s_cand;	/* s_maxworkers entries */
	size_t			 s_ncand;
	int			 s_fill_all;
	struct copy		*s_cfree;	/* freed copies, for reuse */
	/*
	 * The places (in s_workers) of the workers that may have room, a
	 * superset of those with room under any live batch: copies and
	 * moves coming fewer than sched_maxcap(), which the live batches'
	 * caps bound (s_maxqf: the largest fixed queue factor of a live
	 * RWQ/R3Q batch; s_nauto: live batches under queue_factor auto);
	 * and those with fewer copies than CPUs.
	 */
	struct idxset		 s_room;
	struct idxset		 s_free;
	struct idxset		 s_idle;	/* a held copy, a free CPU */
	/*
	 * The speed-aware tail: the workers that may have room and have an
	 * execution time estimate, in a heap by how soon a copy sent now
	 * would come back (s_wheap, s_maxworkers entries, kept while a live
	 * batch runs under queue_factor auto), and those with room and no
	 * estimate yet (s_blind), which get the paper's replicas.
	 */
	struct worker		**s_wheap;
	size_t			 s_nwheap;
	struct idxset		 s_blind;
	size_t			 s_blind_next;	/* where its walk starts */
	uint64_t		 s_maxqf;
	size_t			 s_nauto;
	struct worker		*s_coolfirst, *s_coollast;	/* cooling, by
							   w_cool_until */
	struct batch		*s_bfirst, *s_blast;	/* in submit order */
	struct u64map		 s_bmap;	/* batch id -> batch */
	uint64_t		 s_bseq;	/* next open order */
	struct batch		*s_dfirst, *s_dlast;	/* drained, in open
							   order */
	struct batch		*s_xfirst, *s_xlast;	/* with excluded
							   tasks */
	size_t			 s_nsbatches;	/* batches with tasks on
						   s_sfirst */
	uint32_t		*s_akinds;	/* active kinds */
	size_t			 s_nakinds;
	size_t			 s_akcap;
	/*
	 * The live batches' caps (sched_caps_changed()) and balancing
	 * modes, counted: how many RWQ/R3Q batches have each fixed queue
	 * factor (larger ones counted in s_nqfbig), and how many batches
	 * balance under each mode.
	 */
	size_t			 s_qfcount[SCHED_QF_MAX + 1];
	size_t			 s_nqfbig;
	size_t			 s_nauto_all;
	size_t			 s_nbal[SCHED_BALANCE_COUNT];
	struct sched_action	*s_act;		/* ring of pending actions */
	size_t			 s_actsize;	/* 0 or a power of two */
	size_t			 s_acthead;
	size_t			 s_actlen;
	struct sched_stats	 s_stats;
	uint64_t		 s_now;		/* now of the current call */
	struct sched_fault_config s_fault;
	int64_t			 s_addseq;	/* next add order */
	int64_t			 s_frontseq;	/* last order put back */
	struct kcount		*s_kc;		/* kind -> workers, linear
						   probing */
	size_t			 s_nkc;		/* 0 or a power of two */
	size_t			 s_kcused;
	struct copy		*s_ofirst, *s_olast;	/* running copies, by
							   last state change */
	struct task		*s_sfirst, *s_slast;	/* tasks to replicate
							   for a suspect */
	struct task		*s_nfirst, *s_nlast;	/* tasks that want
							   copies to verify */
	/*
	 * The last whole task a worker did, the yardstick of the periodic
	 * look for copies that stand still (sched_scan()), and when that
	 * look is due (0: not armed).
	 */
	uint64_t		 s_ref_begin;
	uint64_t		 s_ref_len;
	uint32_t		 s_ref_wid;
	int			 s_has_ref;
	uint64_t		 s_scan_at;
	/* Balancing (section 4): Power's interval, its next boundary. */
	uint64_t		 s_pinterval;
	uint64_t		 s_power_at;	/* 0: not started */
	enum sched_topology	 s_topo;
};

static int	sched_batch_check(struct sched *, struct batch *);
static void	sched_strand_check(struct sched *);
static void	sched_tail_add(struct sched *, struct batch *, struct task *);
static void	sched_tail_del(struct batch *, struct task *);
static void	sched_tail_touch(struct sched *, struct task *);

static const char *const sched_policy_names[SCHED_POLICY_COUNT] = {
	"wq", "rr", "rwq", "r3q"
};
static const char *const sched_balance_names[SCHED_BALANCE_COUNT] = {
	"none", "one", "power", "global"
};
static const char *const sched_topo_names[SCHED_TOPO_COUNT] = {
	"ring", "all", "tree"
};

/*
 * Make x hold places 0 .. cap - 1 (members kept); -1 (nothing changed)
 * if memory is short.
 */
static int
idx_grow(struct idxset *x, size_t cap)
{
	uint64_t	*w[IDX_LEVELS];
	size_t		 nw[IDX_LEVELS], j, n = cap;
	int		 l, nlev = 0;

	if (cap <= x->ix_cap)
		return (0);
	do {
		if (nlev == IDX_LEVELS)
			return (-1);
		n = (n + 63) / 64;
		nw[nlev++] = n;
	} while (n > 1);
	for (l = 0; l < nlev; l++)
		if ((w[l] = calloc(nw[l], sizeof(uint64_t))) == NULL) {
			while (l-- > 0)
				free(w[l]);
			return (-1);
		}
	if (x->ix_nlev > 0)
		memcpy(w[0], x->ix_w[0], x->ix_nw[0] * sizeof(uint64_t));
	for (l = 1; l < nlev; l++)
		for (j = 0; j < nw[l - 1]; j++)
			if (w[l - 1][j] != 0)
				w[l][j / 64] |= 1ULL << (j % 64);
	for (l = 0; l < x->ix_nlev; l++)
		free(x->ix_w[l]);
	for (l = 0; l < nlev; l++) {
		x->ix_w[l] = w[l];
		x->ix_nw[l] = nw[l];
	}
	x->ix_nlev = nlev;
	x->ix_cap = cap;
	return (0);
}

static void
idx_free(struct idxset *x)
{
	int	 l;

	for (l = 0; l < x->ix_nlev; l++)
		free(x->ix_w[l]);
	memset(x, 0, sizeof(*x));
}

/* Place i (below ix_cap) in or out of x. */
static void
idx_put(struct idxset *x, size_t i, int in)
{
	uint64_t	 bit, was;
	int		 l;

	for (l = 0; l < x->ix_nlev; l++) {
		bit = 1ULL << (i % 64);
		i /= 64;
		was = x->ix_w[l][i];
		if (in) {
			x->ix_w[l][i] |= bit;
			if (was != 0)
				return;		/* the levels above know */
		} else {
			x->ix_w[l][i] &= ~bit;
			if (x->ix_w[l][i] != 0 || was == 0)
				return;
		}
	}
}

/* Empty x. */
static void
idx_clear(struct idxset *x)
{
	int	 l;

	for (l = 0; l < x->ix_nlev; l++)
		memset(x->ix_w[l], 0, x->ix_nw[l] * sizeof(uint64_t));
}

/* The least member of level l at or after i, or IDX_NONE. */
static size_t
idx_next_level(const struct idxset *x, int l, size_t i)
{
	uint64_t	 bits;
	size_t		 j;

	if (l >= x->ix_nlev || i / 64 >= x->ix_nw[l])
		return (IDX_NONE);
	bits = x->ix_w[l][i / 64] & (~0ULL << (i % 64));
	if (bits != 0)
		return (i / 64 * 64 + (size_t)__builtin_ctzll(bits));
	if ((j = idx_next_level(x, l + 1, i / 64 + 1)) == IDX_NONE)
		return (IDX_NONE);
	return (j * 64 + (size_t)__builtin_ctzll(x->ix_w[l][j]));
}

/* The least member of x at or after place i, or IDX_NONE. */
static size_t
idx_next(const struct idxset *x, size_t i)
{
	return (idx_next_level(x, 0, i));
}

/*
 * Allocate or die: an event cannot be left half applied, so running out of
 * memory in the middle of one is fatal.  Calls that can fail cleanly
 * (join, submit) check before they change anything.
 */
static void *
sched_calloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n, size)) == NULL)
		abort();
	return (p);
}

/* Mix a task id into a slot index (splitmix64 finaliser). */
static size_t
tab_slot(const struct sched *s, uint64_t id)
{
	uint64_t	 x = id;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return ((size_t)x & (s->s_nslots - 1));
}

/* Find a live task by id. */
static struct task *
tab_find(const struct sched *s, uint64_t id)
{
	struct task	*t;
	size_t		 i, mask;

	if (s->s_nslots == 0)
		return (NULL);
	mask = s->s_nslots - 1;
	for (i = tab_slot(s, id); (t = s->s_slots[i]) != NULL;
	    i = (i + 1) & mask)
		if (t->t_id == id)
			return (t);
	return (NULL);
}

/* Put a task in the table; the caller has made room. */
static void
tab_insert(struct sched *s, struct task *t)
{
	size_t	 i, mask = s->s_nslots - 1;

	for (i = tab_slot(s, t->t_id); s->s_slots[i] != NULL;
	    i = (i + 1) & mask)
		;
	s->s_slots[i] = t;
	s->s_nused++;
}

/* Rebuild the table with nslots slots (a power of two, or 0). */
static int
tab_resize(struct sched *s, size_t nslots)
{
	struct task	**old = s->s_slots, **new = NULL;
	size_t		  i, nold = s->s_nslots;

	if (nslots > 0 && (new = calloc(nslots, sizeof(*new))) == NULL)
		return (-1);
	s->s_slots = new;
	s->s_nslots = nslots;
	s->s_nused = 0;
	for (i = 0; i < nold; i++)
		if (old[i] != NULL)
			tab_insert(s, old[i]);
	free(old);
	return (0);
}

/* Make room for n more tasks, keeping the load factor at most 1/2. */
static int
tab_reserve(struct sched *s, size_t n)
{
	size_t	 need, nslots;

	if (n > SIZE_MAX / 4 - s->s_nused)
		goto nomem;
	need = s->s_nused + n;
	if (need <= s->s_nslots / 2)
		return (0);
	nslots = s->s_nslots > 0 ? s->s_nslots : TAB_MINSLOTS;
	while (nslots / 2 < need) {
		if (nslots > SIZE_MAX / 2 / sizeof(struct task *))
			goto nomem;
		nslots *= 2;
	}
	if (tab_resize(s, nslots) == -1)
		goto nomem;
	return (0);
 nomem:
	errno = ENOMEM;
	return (-1);
}

/*
 * Take a task out of the table.  Linear probing without tombstones: the
 * entries after the hole in the same probe run are shifted back unless
 * their home slot lies cyclically in (hole, entry].
 */
static void
tab_remove(struct sched *s, const struct task *t)
{
	size_t	 i, j, k, mask = s->s_nslots - 1;

	for (i = tab_slot(s, t->t_id); s->s_slots[i] != t; i = (i + 1) & mask)
		;
	for (j = i;;) {
		j = (j + 1) & mask;
		if (s->s_slots[j] == NULL)
			break;
		k = tab_slot(s, s->s_slots[j]->t_id);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		s->s_slots[i] = s->s_slots[j];
		i = j;
	}
	s->s_slots[i] = NULL;
	s->s_nused--;
}

/* Give memory back once a big batch has left (best effort). */
static void
tab_shrink(struct sched *s)
{
	size_t	 nslots;

	if (s->s_nused == 0) {
		(void)tab_resize(s, 0);
		return;
	}
	if (s->s_nslots <= 1024 || s->s_nused >= s->s_nslots / 8)
		return;
	for (nslots = TAB_MINSLOTS; nslots / 4 < s->s_nused; nslots *= 2)
		;
	(void)tab_resize(s, nslots);
}

/* Append an action to the FIFO the caller drains; returns it. */
static struct sched_action *
sched_emit(struct sched *s, enum sched_action_type type, uint32_t wid,
    uint64_t task, uint64_t batch, int replica, int running)
{
	struct sched_action	*a, *ring;
	size_t			 i, size;

	if (s->s_actlen == s->s_actsize) {
		size = s->s_actsize > 0 ? s->s_actsize * 2 : 64;
		ring = sched_calloc(size, sizeof(*ring));
		for (i = 0; i < s->s_actlen; i++)
			ring[i] = s->s_act[(s->s_acthead + i) &
			    (s->s_actsize - 1)];
		free(s->s_act);
		s->s_act = ring;
		s->s_actsize = size;
		s->s_acthead = 0;
	}
	a = &s->s_act[(s->s_acthead + s->s_actlen) & (s->s_actsize - 1)];
	s->s_actlen++;
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->wid = wid;
	a->task = task;
	a->batch = batch;
	a->replica = replica;
	a->running = running;
	return (a);
}

/* Count one more in a batch report, sticking at the maximum. */
static void
sched_count(uint32_t *n)
{
	if (*n < UINT32_MAX)
		(*n)++;
}

/* A worker id's home slot in s_wslots. */
static size_t
sched_wslot(const struct sched *s, uint32_t wid)
{
	uint64_t	 x = wid;

	x *= 0x9e3779b97f4a7c15ULL;
	return ((size_t)(x >> 32) & (s->s_nwslots - 1));
}

/* Find a worker by id, and its place in join order. */
static struct worker *
sched_worker_find(const struct sched *s, uint32_t wid, size_t *idx)
{
	struct worker	*w;
	size_t		 i, mask;

	if (s->s_nwslots == 0)
		return (NULL);
	mask = s->s_nwslots - 1;
	for (i = sched_wslot(s, wid); (w = s->s_wslots[i]) != NULL;
	    i = (i + 1) & mask) {
		if (w->w_id != wid)
			continue;
		if (idx != NULL)
			*idx = w->w_idx;
		return (w);
	}
	return (NULL);
}

/* Put w in the worker table; the caller has made room. */
static void
sched_wtab_insert(struct sched *s, struct worker *w)
{
	size_t	 k, mask = s->s_nwslots - 1;

	for (k = sched_wslot(s, w->w_id); s->s_wslots[k] != NULL;
	    k = (k + 1) & mask)
		;
	s->s_wslots[k] = w;
}

/* Fill the worker table anew with the workers in s_workers. */
static void
sched_wtab_refill(struct sched *s)
{
	size_t	 i;

	memset(s->s_wslots, 0, s->s_nwslots * sizeof(*s->s_wslots));
	for (i = 0; i < s->s_nworkers; i++)
		sched_wtab_insert(s, s->s_workers[i]);
}

/*
 * A worker joined, the last of s_workers (the table holds the others):
 * make the worker table fit nworkers, at most a quarter full, and put it
 * in; -1 (nothing changed) if memory is short.  Only a growth refills the
 * table: 10,000 joins that each refilled it cost O(N^2) (r3q-sim).
 * Losses are rare and refill it (linear probing has no cheap removal);
 * lookups are once per event.
 */
static int
sched_wtab_build(struct sched *s, size_t nworkers)
{
	struct worker	**slots;
	size_t		  n = 16;

	if (nworkers * 4 <= s->s_nwslots) {
		sched_wtab_insert(s, s->s_workers[nworkers - 1]);
		return (0);
	}
	while (n < nworkers * 4) {
		if (n > SIZE_MAX / 2 / sizeof(*slots))
			return (-1);
		n *= 2;
	}
	if ((slots = calloc(n, sizeof(*slots))) == NULL)
		return (-1);
	free(s->s_wslots);
	s->s_wslots = slots;
	s->s_nwslots = n;
	sched_wtab_refill(s);
	return (0);
}

/* Find a live batch by id, in O(1). */
static struct batch *
sched_batch_find(const struct sched *s, uint64_t id)
{
	uint64_t	 v;

	if (!u64map_get(&s->s_bmap, id, &v))
		return (NULL);
	return ((struct batch *)(uintptr_t)v);
}

/* Does worker w run kind k?  O(1) below 64, O(log k) above. */
static int
sched_runs_kind(const struct worker *w, uint32_t k)
{
	size_t	 lo = 0, hi = w->w_nkhigh, mid;

	if (k < SCHED_KLOW)
		return ((w->w_klow >> k) & 1);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->w_khigh[mid] == k)
			return (1);
		if (w->w_khigh[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (0);
}

/* Can worker w run the tasks of batch b? */
static int
sched_can_run(const struct worker *w, const struct batch *b)
{
	return (sched_runs_kind(w, b->b_cfg.kind));
}

/* A kind's home slot in s_kc. */
static size_t
kc_slot(const struct sched *s, uint32_t kind)
{
	uint64_t	 x = kind;

	x *= 0x9e3779b97f4a7c15ULL;
	return ((size_t)(x >> 32) & (s->s_nkc - 1));
}

/* The count of kind, or NULL if no worker ever ran it. */
static struct kcount *
kc_find(const struct sched *s, uint32_t kind)
{
	struct kcount	*k;
	size_t		 i;

	if (s->s_nkc == 0)
		return (NULL);
	for (i = kc_slot(s, kind); (k = &s->s_kc[i])->k_used;
	    i = (i + 1) & (s->s_nkc - 1))
		if (k->k_kind == kind)
			return (k);
	return (NULL);
}

/* The count of kind, made if need be; kc_reserve() made room. */
static struct kcount *
kc_get(struct sched *s, uint32_t kind)
{
	struct kcount	*k;
	size_t		 i;

	for (i = kc_slot(s, kind); (k = &s->s_kc[i])->k_used;
	    i = (i + 1) & (s->s_nkc - 1))
		if (k->k_kind == kind)
			return (k);
	memset(k, 0, sizeof(*k));
	k->k_used = 1;
	k->k_kind = kind;
	s->s_kcused++;
	return (k);
}

/*
 * Make room for n more kinds in the table of counts, at most half full;
 * -1 (nothing changed) if memory is short.  Entries stay when their count
 * drops to 0: kinds are few, and come back.
 */
static int
kc_reserve(struct sched *s, size_t n)
{
	struct kcount	*old = s->s_kc, *k;
	size_t		 i, nold = s->s_nkc, size;

	if (n > SIZE_MAX / 4 - s->s_kcused)
		return (-1);
	if (s->s_kcused + n <= s->s_nkc / 2)
		return (0);
	for (size = nold > 0 ? nold : 16; size / 2 < s->s_kcused + n;
	    size *= 2)
		if (size > SIZE_MAX / 2 / sizeof(*k))
			return (-1);
	if ((k = calloc(size, sizeof(*k))) == NULL)
		return (-1);
	s->s_kc = k;
	s->s_nkc = size;
	s->s_kcused = 0;
	for (i = 0; i < nold; i++)
		if (old[i].k_used)
			*kc_get(s, old[i].k_kind) = old[i];
	free(old);
	return (0);
}

/*
 * Kind k on the list of active kinds or off it: active while a worker
 * runs it and it has queued batches.
 */
static void
kc_active(struct sched *s, struct kcount *k)
{
	struct kcount	*m;
	int		 on = k->k_n > 0 && k->k_qfirst != NULL;

	if (on && k->k_aidx == 0) {
		if (s->s_nakinds == s->s_akcap) {
			s->s_akcap = s->s_akcap > 0 ? s->s_akcap * 2 : 16;
			s->s_akinds = realloc(s->s_akinds,
			    s->s_akcap * sizeof(*s->s_akinds));
			if (s->s_akinds == NULL)
				abort();
		}
		s->s_akinds[s->s_nakinds++] = k->k_kind;
		k->k_aidx = s->s_nakinds;
	} else if (!on && k->k_aidx != 0) {
		if (k->k_aidx != s->s_nakinds) {
			s->s_akinds[k->k_aidx - 1] =
			    s->s_akinds[s->s_nakinds - 1];
			m = kc_find(s, s->s_akinds[k->k_aidx - 1]);
			m->k_aidx = k->k_aidx;
		}
		s->s_nakinds--;
		k->k_aidx = 0;
	}
}

/* Count w in (add 1) or out (add -1) of the kinds it runs. */
static void
kc_count(struct sched *s, const struct worker *w, int add)
{
	struct kcount	*k;
	uint32_t	 i;
	size_t		 j;

	for (i = 0; i < SCHED_KLOW; i++)
		if ((w->w_klow >> i) & 1) {
			k = add > 0 ? kc_get(s, i) : kc_find(s, i);
			k->k_n += add;
			kc_active(s, k);
		}
	for (j = 0; j < w->w_nkhigh; j++) {
		k = add > 0 ? kc_get(s, w->w_khigh[j]) :
		    kc_find(s, w->w_khigh[j]);
		k->k_n += add;
		kc_active(s, k);
	}
}

/*
 * Held tasks per CPU under queue_factor SCHED_QF_AUTO: enough to cover one
 * round trip, ceil(rtt / task), between 1 and SCHED_QF_AUTO_MAX; 1 until
 * both estimates exist.  An execution time of 0 with a non-zero round
 * trip is an infinite ratio (the maximum); 0 / 0 counts as 0 (the
 * minimum).
 */
static uint64_t
sched_auto_held(const struct worker *w)
{
	uint64_t	 h;

	if (!w->w_hasrtt || !w->w_hastask)
		return (1);
	if (w->w_task == 0)
		h = w->w_rtt > 0 ? SCHED_QF_AUTO_MAX : 0;
	else
		h = w->w_rtt / w->w_task + (w->w_rtt % w->w_task != 0);
	if (h < 1)
		h = 1;
	if (h > SCHED_QF_AUTO_MAX)
		h = SCHED_QF_AUTO_MAX;
	return (h);
}

/*
 * How many copies w may hold when its next task comes from b: one per CPU
 * for WQ and RR (RR step 2), queue_factor per CPU for RWQ and R3Q (RWQ
 * step 3).  Under SCHED_QF_AUTO, one running and ceil(rtt / task) held
 * per CPU, so that a fast worker behind a long delay never idles (beyond
 * the paper); with no estimates yet that is the paper's 2 per CPU.  A cap
 * that shrinks cancels nothing: the worker just gets no more until it is
 * below it.
 */
static uint64_t
sched_cap(const struct worker *w, const struct batch *b)
{
	if (w->w_cooling || w->w_paused || w->w_draining)
		return (0);
	switch (b->b_cfg.policy) {
	case SCHED_POLICY_RWQ:
	case SCHED_POLICY_R3Q:
		if (b->b_cfg.queue_factor == SCHED_QF_AUTO)
			return ((1 + sched_auto_held(w)) * w->w_ncpu);
		return ((uint64_t)b->b_cfg.queue_factor * w->w_ncpu);
	default:
		return (w->w_ncpu);
	}
}

/* Has w room for one more copy of a task of b, which it can run? */
static int
sched_has_room(const struct worker *w, const struct batch *b)
{
	return (sched_can_run(w, b) &&
	    (uint64_t)w->w_ncopies + w->w_nincoming < sched_cap(w, b));
}

/*
 * The most copies w may hold under any live batch: one per CPU (WQ, RR),
 * the largest fixed queue factor of a live RWQ or R3Q batch per CPU, or
 * auto's cap if a live batch sizes its queue so; 0 while it cools down,
 * is paused or drains.  Every sched_cap(w, b) of a live b is at most this.
 */
static uint64_t
sched_maxcap(const struct sched *s, const struct worker *w)
{
	uint64_t	 cap = w->w_ncpu, c;

	if (w->w_cooling || w->w_paused || w->w_draining)
		return (0);
	if ((c = s->s_maxqf * w->w_ncpu) > cap)
		cap = c;
	if (s->s_nauto > 0 && (c = (1 + sched_auto_held(w)) * w->w_ncpu) >
	    cap)
		cap = c;
	return (cap);
}

/*
 * The worker heap of the speed-aware tail (s_wheap): least key first,
 * then join order.  The key is how long a copy sent to w now would take
 * to come back, as of its last change: a round trip, what it holds ahead
 * of the copy (a running copy counted as half a task) and the task
 * itself, per CPU.  It goes stale as the worker works through its queue,
 * so the tail looks at the first few and reckons each afresh
 * (sched_worker_eta()).
 */
static int
wh_before(const struct worker *a, const struct worker *b)
{
	if (a->w_whkey != b->w_whkey)
		return (a->w_whkey < b->w_whkey);
	return (a->w_seq < b->w_seq);
}

static void
wh_set(struct sched *s, size_t i, struct worker *w)
{
	s->s_wheap[i] = w;
	w->w_wh = i + 1;
}

static void
wh_fix(struct sched *s, size_t i)
{
	struct worker	*w = s->s_wheap[i];
	size_t		 c;

	while (i > 0 && wh_before(w, s->s_wheap[(i - 1) / 2])) {
		wh_set(s, i, s->s_wheap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		c = 2 * i + 1;
		if (c >= s->s_nwheap)
			break;
		if (c + 1 < s->s_nwheap &&
		    wh_before(s->s_wheap[c + 1], s->s_wheap[c]))
			c++;
		if (!wh_before(s->s_wheap[c], w))
			break;
		wh_set(s, i, s->s_wheap[c]);
		i = c;
	}
	wh_set(s, i, w);
}

static uint64_t
sched_wkey(const struct worker *w)
{
	uint64_t	 ahead;

	ahead = 2 * (uint64_t)(w->w_nheld + w->w_nincoming) +
	    (w->w_nrunning >= w->w_ncpu);
	return ((w->w_hasrtt ? w->w_rtt : 0) + w->w_task +
	    ahead * w->w_task / (2 * w->w_ncpu));
}

/* w in s_wheap (in) with its key anew, or out of it. */
static void
sched_wheap_put(struct sched *s, struct worker *w, int in)
{
	size_t	 i;

	if (!in) {
		if (w->w_wh == 0)
			return;
		i = w->w_wh - 1;
		w->w_wh = 0;
		if (i == --s->s_nwheap)
			return;
		s->s_wheap[i] = s->s_wheap[s->s_nwheap];
		wh_fix(s, i);
		return;
	}
	w->w_whkey = sched_wkey(w);
	if (w->w_wh == 0) {
		s->s_wheap[s->s_nwheap] = w;
		w->w_wh = ++s->s_nwheap;
	}
	wh_fix(s, w->w_wh - 1);
}

/*
 * Put w in or out of s_room and s_free after its copies, the moves coming
 * to it, its cool-down, pause or estimates changed; and in or out of the
 * speed-aware tail's s_wheap and s_blind.
 */
static void
sched_room_update(struct sched *s, struct worker *w)
{
	int	 room;

	if (w->w_idx == IDX_NONE)
		return;		/* leaving: sched_worker_lost() rebuilds */
	room = (uint64_t)w->w_ncopies + w->w_nincoming < sched_maxcap(s, w);
	idx_put(&s->s_room, w->w_idx, room);
	idx_put(&s->s_free, w->w_idx, w->w_ncopies < w->w_ncpu);
	idx_put(&s->s_idle, w->w_idx, w->w_nheld > 0 &&
	    w->w_nrunning < w->w_ncpu);
	idx_put(&s->s_blind, w->w_idx, room && !w->w_hastask);
	sched_wheap_put(s, w, room && w->w_hastask && s->s_nauto > 0);
}

/* The sets anew, for every worker (a worker left: places moved). */
static void
sched_room_rebuild(struct sched *s)
{
	size_t	 i;

	idx_clear(&s->s_room);
	idx_clear(&s->s_free);
	idx_clear(&s->s_idle);
	idx_clear(&s->s_blind);
	s->s_nwheap = 0;
	for (i = 0; i < s->s_nworkers; i++)
		s->s_workers[i]->w_wh = 0;
	for (i = 0; i < s->s_nworkers; i++)
		sched_room_update(s, s->s_workers[i]);
}

/*
 * Count b in (add 1) or out (add -1) of the tallies of the live batches'
 * caps and balancing modes.
 */
static void
sched_batch_tally(struct sched *s, const struct batch *b, int add)
{
	unsigned	 qf = b->b_cfg.queue_factor;

	s->s_nbal[b->b_cfg.balance] += add;
	if (b->b_cfg.policy != SCHED_POLICY_RWQ &&
	    b->b_cfg.policy != SCHED_POLICY_R3Q)
		return;
	if (qf == SCHED_QF_AUTO)
		s->s_nauto_all += add;
	else if (qf > SCHED_QF_MAX)
		s->s_nqfbig += add;
	else
		s->s_qfcount[qf] += add;
}

/*
 * A batch came or went: the bound of the caps (s_maxqf, s_nauto) anew,
 * from the tallies of the live batches (a walk of them only if one has a
 * queue factor above SCHED_QF_MAX, which masterd never sends); s_room
 * anew if it changed.
 */
static void
sched_caps_changed(struct sched *s)
{
	const struct batch	*b;
	uint64_t		 maxqf = 0;
	size_t			 nauto = s->s_nauto_all;
	unsigned		 qf;

	for (qf = SCHED_QF_MAX; qf > 0 && maxqf == 0; qf--)
		if (s->s_qfcount[qf] > 0)
			maxqf = qf;
	for (b = s->s_bfirst; s->s_nqfbig > 0 && b != NULL; b = b->b_next) {
		s->s_stats.batches_visited++;
		if ((b->b_cfg.policy == SCHED_POLICY_RWQ ||
		    b->b_cfg.policy == SCHED_POLICY_R3Q) &&
		    b->b_cfg.queue_factor != SCHED_QF_AUTO &&
		    b->b_cfg.queue_factor > maxqf)
			maxqf = b->b_cfg.queue_factor;
	}
	if (maxqf == s->s_maxqf && (nauto > 0) == (s->s_nauto > 0)) {
		s->s_nauto = nauto;
		return;
	}
	s->s_maxqf = maxqf;
	s->s_nauto = nauto;
	sched_room_rebuild(s);
}

/* w starts cooling down: into the list by the end of its cool-down. */
static void
sched_cool_link(struct sched *s, struct worker *w)
{
	struct worker	*p;

	for (p = s->s_coollast; p != NULL && p->w_cool_until > w->w_cool_until;
	    p = p->w_cprev)
		;
	w->w_cprev = p;
	w->w_cnext = p != NULL ? p->w_cnext : s->s_coolfirst;
	if (w->w_cnext != NULL)
		w->w_cnext->w_cprev = w;
	else
		s->s_coollast = w;
	if (p != NULL)
		p->w_cnext = w;
	else
		s->s_coolfirst = w;
}

/* w no longer cools down (or left): out of the list. */
static void
sched_cool_unlink(struct sched *s, struct worker *w)
{
	if (w->w_cprev != NULL)
		w->w_cprev->w_cnext = w->w_cnext;
	else
		s->s_coolfirst = w->w_cnext;
	if (w->w_cnext != NULL)
		w->w_cnext->w_cprev = w->w_cprev;
	else
		s->s_coollast = w->w_cprev;
	w->w_cprev = w->w_cnext = NULL;
}

/*
 * The next member of x at or after place i.  Built with SCHED_REFERENCE
 * (tests/unit/test_sched_ref), every worker is a member: the walk over
 * every worker that the sets replace, whose decisions the test compares.
 */
static size_t
sched_set_next(const struct sched *s, const struct idxset *x, size_t i)
{
#ifdef SCHED_REFERENCE
	(void)x;
	(void)idx_next;
	return (i < s->s_nworkers ? i : IDX_NONE);
#else
	(void)s;
	return (idx_next(x, i));
#endif
}

/*
 * Walk the members of set (s_room, s_free) in join order, as w.  The
 * body tests each as it would test any worker: the sets are supersets.
 */
#define SCHED_FOREACH(s, set, i, w)					\
	for ((i) = sched_set_next((s), &(s)->set, 0);			\
	    (i) != IDX_NONE && ((w) = (s)->s_workers[(i)], 1);		\
	    (i) = sched_set_next((s), &(s)->set, (i) + 1))

/*
 * Walk the drained batches (closed, queue empty) in open order, as b: the
 * only ones tail replication, idle moments and the speed-aware tail look
 * at.  Built with SCHED_REFERENCE, every batch: the walk the index
 * replaces.  The body tests each as it would test any batch.
 */
#ifdef SCHED_REFERENCE
#define SCHED_DRAINED(s, b)						\
	for ((b) = (s)->s_bfirst; (b) != NULL; (b) = (b)->b_next)
#else
#define SCHED_DRAINED(s, b)						\
	for ((b) = (s)->s_dfirst; (b) != NULL; (b) = (b)->b_dnext)
#endif

/* Find the copy of t on w, walking whichever list is shorter. */
static struct copy *
sched_copy_find(const struct task *t, const struct worker *w)
{
	struct copy	*c;

	if (t->t_ncopies <= w->w_ncopies) {
		for (c = t->t_copies; c != NULL; c = c->c_tnext)
			if (c->c_worker == w)
				return (c);
	} else {
		for (c = w->w_copies; c != NULL; c = c->c_wnext)
			if (c->c_task == t)
				return (c);
	}
	return (NULL);
}

/* The side struct of t, allocated on first use. */
static struct task_aux *
sched_aux(struct task *t)
{
	if (t->t_aux == NULL)
		t->t_aux = sched_calloc(1, sizeof(*t->t_aux));
	return (t->t_aux);
}

/* Did a copy of t fail on w's machine? */
static int
sched_failed_on(const struct task *t, const struct worker *w)
{
	const struct task_aux	*x = t->t_aux;
	uint32_t		 i;

	if (x == NULL)
		return (0);
	for (i = 0; i < x->x_nfailed; i++)
		if (x->x_failed[i] == w->w_node)
			return (1);
	return (0);
}

/* Did w's group give an output of t already (verify)? */
static int
sched_voted_on(const struct task *t, const struct worker *w)
{
	const struct task_aux	*x = t->t_aux;
	uint32_t		 i;

	if (x == NULL)
		return (0);
	for (i = 0; i < x->x_nvotes; i++)
		if (x->x_votes[i].v_node == w->w_group)
			return (1);
	return (0);
}

/* Is some machine out for t (b_nfailq counts the queued ones)? */
static int
sched_has_exclusions(const struct task *t)
{
	return (t->t_aux != NULL &&
	    (t->t_aux->x_nfailed > 0 || t->t_aux->x_nvotes > 0));
}

/* Is w's machine out for t: it failed there, or already said its output? */
static int
sched_excluded(const struct task *t, const struct worker *w)
{
	return (sched_failed_on(t, w) || sched_voted_on(t, w));
}

/* May w get a copy of t: it has none, and its machine is not out for t? */
static int
sched_may_copy(const struct task *t, const struct worker *w)
{
	return (sched_copy_find(t, w) == NULL && !sched_excluded(t, w));
}

/* Take a running copy off the list ordered by last state change. */
static void
sched_order_remove(struct sched *s, struct copy *c)
{
	if (!c->c_inorder)
		return;
	if (c->c_oprev != NULL)
		c->c_oprev->c_onext = c->c_onext;
	else
		s->s_ofirst = c->c_onext;
	if (c->c_onext != NULL)
		c->c_onext->c_oprev = c->c_oprev;
	else
		s->s_olast = c->c_oprev;
	c->c_oprev = c->c_onext = NULL;
	c->c_inorder = 0;
}

/*
 * A running copy changed state now: it goes to the newest end of the
 * list, which stays sorted because time only moves forward.
 */
static void
sched_order_touch(struct sched *s, struct copy *c)
{
	sched_order_remove(s, c);
	c->c_changed = s->s_now;
	c->c_onext = NULL;
	if ((c->c_oprev = s->s_olast) != NULL)
		s->s_olast->c_onext = c;
	else
		s->s_ofirst = c;
	s->s_olast = c;
	c->c_inorder = 1;
}

/* Take a task off the list of tasks waiting for a suspect's replica. */
static void
sched_suspect_unlist(struct sched *s, struct task *t)
{
	struct task_aux	*x = t->t_aux;

	if (x == NULL || !x->x_insuspect)
		return;
	if (x->x_sprev != NULL)
		x->x_sprev->t_aux->x_snext = x->x_snext;
	else
		s->s_sfirst = x->x_snext;
	if (x->x_snext != NULL)
		x->x_snext->t_aux->x_sprev = x->x_sprev;
	else
		s->s_slast = x->x_sprev;
	x->x_sprev = x->x_snext = NULL;
	x->x_insuspect = 0;
	if (--t->t_batch->b_nsuspect == 0)
		s->s_nsbatches--;
}

/* A copy is no longer suspect: it moved, or it is going away. */
static void
sched_unsuspect(struct sched *s, struct copy *c)
{
	struct task	*t = c->c_task;
	struct worker	*w = c->c_worker;

	if (!c->c_suspect)
		return;
	c->c_suspect = 0;
	if (--t->t_aux->x_nsuspect == 0)
		sched_suspect_unlist(s, t);
	if (--w->w_nsuspect == 0)
		s->s_stats.suspect_workers--;
}

/* w shows a sign of life now. */
static void
sched_alive_touch(struct sched *s, struct worker *w)
{
	w->w_alive = s->s_now;
}

/*
 * Worker w showed a sign of life (a copy started, got half-way or ended):
 * the held copies suspected along with it are cleared.  Its running copies
 * are only cleared by their own progress.
 */
static void
sched_worker_alive(struct sched *s, struct worker *w)
{
	struct copy	*c;

	sched_alive_touch(s, w);
	if (w->w_nsuspect == 0)
		return;
	for (c = w->w_copies; c != NULL; c = c->c_wnext)
		if (!c->c_running)
			sched_unsuspect(s, c);
}

/* w may have room now: look at it at the next fill. */
static void
sched_wake(struct sched *s, struct worker *w)
{
	if (w->w_cand)
		return;
	w->w_cand = 1;
	s->s_cand[s->s_ncand++] = w;	/* s_maxworkers entries */
}

/*
 * The room a move reserved on its target is free again: the move happened,
 * or became void (the copy started, went away, or the target is gone; a
 * target that left and a new worker with its id are told apart by their
 * join numbers).
 */
static void
sched_unreserve(struct sched *s, struct copy *c)
{
	struct worker	*to;

	if (!c->c_hasto)
		return;
	c->c_hasto = 0;
	if ((to = sched_worker_find(s, c->c_to, NULL)) != NULL &&
	    to->w_seq == c->c_toseq && to->w_nincoming > 0) {
		to->w_nincoming--;
		sched_room_update(s, to);
		sched_wake(s, to);
	}
}

/* A withdrawal of c is over: answered, or c is going away. */
static void
sched_withdraw_end(struct sched *s, struct copy *c)
{
	if (!c->c_withdraw)
		return;
	c->c_withdraw = 0;
	c->c_worker->w_noutgoing--;
	sched_unreserve(s, c);
}

/* Forget a copy: unlink it from its task and its worker, keep it for reuse. */
static void
sched_copy_drop(struct sched *s, struct copy *c)
{
	struct task	*t = c->c_task;
	struct worker	*w = c->c_worker;

	sched_order_remove(s, c);
	sched_unsuspect(s, c);
	sched_withdraw_end(s, c);

	if (c->c_tprev != NULL)
		c->c_tprev->c_tnext = c->c_tnext;
	else
		t->t_copies = c->c_tnext;
	if (c->c_tnext != NULL)
		c->c_tnext->c_tprev = c->c_tprev;
	else
		t->t_lastcopy = c->c_tprev;
	t->t_ncopies--;

	if (c->c_wprev != NULL)
		c->c_wprev->c_wnext = c->c_wnext;
	else
		w->w_copies = c->c_wnext;
	if (c->c_wnext != NULL)
		c->c_wnext->c_wprev = c->c_wprev;
	else
		w->w_lastcopy = c->c_wprev;
	w->w_ncopies--;
	if (c->c_running) {
		w->w_nrunning--;
		s->s_stats.running--;
	} else {
		w->w_nheld--;
		s->s_stats.held--;
	}
	sched_room_update(s, w);
	/* Ran dry: a CPU without a copy and no queued work to fill it. */
	if (w->w_ncopies < w->w_ncpu && s->s_stats.queued == 0)
		w->w_starved = 1;
	sched_wake(s, w);
	c->c_tnext = s->s_cfree;
	s->s_cfree = c;
	sched_tail_touch(s, t);
}

/*
 * Withdraw a copy from its worker: a held copy is just removed from the
 * worker's queue, a running one is interrupted (RR step 8, R3Q forced
 * termination).
 */
static void
sched_copy_cancel(struct sched *s, struct copy *c)
{
	struct sched_batch_report	*r = &c->c_task->t_batch->b_report;

	if (c->c_running) {
		s->s_stats.cancelled_running++;
		sched_count(&r->cancelled_running);
	} else {
		s->s_stats.cancelled_held++;
		sched_count(&r->cancelled_held);
	}
	sched_emit(s, SCHED_CANCEL, c->c_worker->w_id, c->c_task->t_id,
	    c->c_task->t_batch->b_id, c->c_replica, c->c_running);
	sched_copy_drop(s, c);
}

/* Does a come before b in the master queue: (priority, add order)? */
static int
task_before(const struct task *a, const struct task *b)
{
	if (a->t_prio != b->t_prio)
		return (a->t_prio < b->t_prio);
	return (a->t_order < b->t_order);
}

/* Put heap entry i in place and tell its task where it is. */
static void
heap_set(struct batch *b, size_t i, struct task *t)
{
	b->b_heap[i] = t;
	t->t_hidx = (uint32_t)i;
}

/* Move the task at heap index i up to its place. */
static void
heap_up(struct batch *b, size_t i)
{
	struct task	*t = b->b_heap[i];
	size_t		 p;

	for (; i > 0; i = p) {
		p = (i - 1) / 2;
		if (!task_before(t, b->b_heap[p]))
			break;
		heap_set(b, i, b->b_heap[p]);
	}
	heap_set(b, i, t);
}

/* Move the task at heap index i down to its place. */
static void
heap_down(struct batch *b, size_t i)
{
	struct task	*t = b->b_heap[i];
	size_t		 k, n = b->b_nheap;

	for (; (k = 2 * i + 1) < n; i = k) {
		if (k + 1 < n && task_before(b->b_heap[k + 1], b->b_heap[k]))
			k++;
		if (!task_before(b->b_heap[k], t))
			break;
		heap_set(b, i, b->b_heap[k]);
	}
	heap_set(b, i, t);
}

/* Add t to b's heap, growing it (or dying: see sched_calloc()). */
static void
heap_push(struct batch *b, struct task *t)
{
	struct task	**v;
	size_t		  size;

	if (b->b_nheap == b->b_heapsize) {
		size = b->b_heapsize > 0 ? b->b_heapsize * 2 : 64;
		if (size > SIZE_MAX / sizeof(*v) ||
		    (v = realloc(b->b_heap, size * sizeof(*v))) == NULL)
			abort();
		b->b_heap = v;
		b->b_heapsize = size;
	}
	heap_set(b, b->b_nheap++, t);
	heap_up(b, b->b_nheap - 1);
}

/* Take t, wherever it is, out of b's heap. */
static void
heap_remove(struct batch *b, struct task *t)
{
	size_t		 i = t->t_hidx;
	struct task	*last = b->b_heap[--b->b_nheap];

	if (i == b->b_nheap)
		return;
	heap_set(b, i, last);
	if (i > 0 && task_before(last, b->b_heap[(i - 1) / 2]))
		heap_up(b, i);
	else
		heap_down(b, i);
}

/* Link t into a list between prev and next (either may be NULL). */
static void
tlist_link(struct task **first, struct task **last, struct task *prev,
    struct task *t)
{
	struct task	*next = prev != NULL ? prev->t_next : *first;

	t->t_prev = prev;
	t->t_next = next;
	if (prev != NULL)
		prev->t_next = t;
	else
		*first = t;
	if (next != NULL)
		next->t_prev = t;
	else
		*last = t;
}

/* Unlink t from a list. */
static void
tlist_unlink(struct task **first, struct task **last, struct task *t)
{
	if (t->t_prev != NULL)
		t->t_prev->t_next = t->t_next;
	else
		*first = t->t_next;
	if (t->t_next != NULL)
		t->t_next->t_prev = t->t_prev;
	else
		*last = t->t_prev;
	t->t_prev = t->t_next = NULL;
}

/*
 * Put t in b's queue, books aside.  A task some machine is out for goes
 * into the excluded list, sorted (it is short: tasks that failed or voted
 * somewhere); any other at an end of the sorted run if it fits there,
 * which it does for tasks added in order at one priority (the FIFO of
 * sched_submit()) and for tasks put back, else into the heap.  Either way
 * O(1) or O(log n).
 */
static void
sched_queue_insert(struct batch *b, struct task *t)
{
	struct task	*p;

	if (sched_has_exclusions(t)) {
		for (p = b->b_xlast; p != NULL && task_before(t, p);
		    p = p->t_prev)
			;
		tlist_link(&b->b_xfirst, &b->b_xlast, p, t);
		t->t_where = TQ_EXCL;
		b->b_nfailq++;
	} else if (b->b_qlast == NULL || task_before(b->b_qlast, t)) {
		tlist_link(&b->b_qfirst, &b->b_qlast, b->b_qlast, t);
		t->t_where = TQ_RUN;
	} else if (task_before(t, b->b_qfirst)) {
		tlist_link(&b->b_qfirst, &b->b_qlast, NULL, t);
		t->t_where = TQ_RUN;
	} else {
		heap_push(b, t);
		t->t_where = TQ_HEAP;
	}
}

/* Take t out of b's queue, books aside. */
static void
sched_queue_unlink(struct batch *b, struct task *t)
{
	switch (t->t_where) {
	case TQ_RUN:
		tlist_unlink(&b->b_qfirst, &b->b_qlast, t);
		break;
	case TQ_HEAP:
		heap_remove(b, t);
		break;
	case TQ_EXCL:
		tlist_unlink(&b->b_xfirst, &b->b_xlast, t);
		b->b_nfailq--;
		break;
	}
	t->t_where = TQ_NONE;
}

/*
 * Link b into a list of batches kept in open order, or out of it.  A
 * batch joins these lists (drained, with excluded tasks) only while it
 * has work out or waiting on some machine, so a walk from the newest end
 * is short.
 */
static void
blist_put(struct batch **first, struct batch **last, struct batch *b,
    int *in, int on, size_t prev_off, size_t next_off)
{
#define BPREV(x)	(*(struct batch **)((char *)(x) + prev_off))
#define BNEXT(x)	(*(struct batch **)((char *)(x) + next_off))
	struct batch	*p, *n;

	if (on == *in)
		return;
	*in = on;
	if (on) {
		for (p = *last; p != NULL && p->b_seq > b->b_seq; p = BPREV(p))
			;
		n = p != NULL ? BNEXT(p) : *first;
		BPREV(b) = p;
		BNEXT(b) = n;
		if (p != NULL)
			BNEXT(p) = b;
		else
			*first = b;
		if (n != NULL)
			BPREV(n) = b;
		else
			*last = b;
		return;
	}
	if (BPREV(b) != NULL)
		BNEXT(BPREV(b)) = BNEXT(b);
	else
		*first = BNEXT(b);
	if (BNEXT(b) != NULL)
		BPREV(BNEXT(b)) = BPREV(b);
	else
		*last = BPREV(b);
	BPREV(b) = BNEXT(b) = NULL;
#undef BPREV
#undef BNEXT
}

/*
 * Put b on the indexes its state asks for (gone: on none): the queued
 * batches of its kind while it has queued tasks, the drained batches
 * while it is closed with an empty queue, the batches with excluded
 * tasks while it has some.  Every event looks only at these, so a batch
 * of a kind no worker runs, or with nothing to do, costs it nothing.
 * Called wherever b_nqueued, b_nfailq or b_closed change.
 */
static void
sched_batch_books(struct sched *s, struct batch *b, int gone)
{
	struct kcount	*k;
	int		 q = !gone && b->b_nqueued > 0;

	if (q != b->b_inq) {
		k = kc_find(s, b->b_cfg.kind);
		b->b_inq = q;
		if (q) {
			b->b_knext = NULL;
			if ((b->b_kprev = k->k_qlast) != NULL)
				k->k_qlast->b_knext = b;
			else
				k->k_qfirst = b;
			k->k_qlast = b;
		} else {
			if (b->b_kprev != NULL)
				b->b_kprev->b_knext = b->b_knext;
			else
				k->k_qfirst = b->b_knext;
			if (b->b_knext != NULL)
				b->b_knext->b_kprev = b->b_kprev;
			else
				k->k_qlast = b->b_kprev;
			b->b_kprev = b->b_knext = NULL;
		}
		kc_active(s, k);
	}
	blist_put(&s->s_dfirst, &s->s_dlast, b, &b->b_ind,
	    !gone && b->b_closed && b->b_nqueued == 0,
	    offsetof(struct batch, b_dprev), offsetof(struct batch, b_dnext));
	blist_put(&s->s_xfirst, &s->s_xlast, b, &b->b_inx,
	    !gone && b->b_nfailq > 0,
	    offsetof(struct batch, b_xprev), offsetof(struct batch, b_xnext));
}

/* Take a task out of b's queue: it is sent, done or cancelled. */
static void
sched_queue_take(struct sched *s, struct batch *b, struct task *t)
{
	sched_queue_unlink(b, t);
	if (--b->b_nqueued == 0) {
		b->b_report.t_empty = s->s_now;
		s->s_fill_all = 1;	/* workers may take from another batch */
	}
	s->s_stats.queued--;
	sched_batch_books(s, b, 0);
}

/*
 * Put a task back in its queue before every task of its priority, so it
 * is sent next (before, among tasks put back, those put back earlier).
 */
static void
sched_queue_push_front(struct sched *s, struct batch *b, struct task *t)
{
	t->t_state = TASK_QUEUED;
	t->t_order = --s->s_frontseq;
	sched_queue_insert(b, t);
	b->b_nqueued++;
	s->s_fill_all = 1;	/* it may suit a worker nothing else did */
	s->s_stats.queued++;
	sched_batch_books(s, b, 0);
}

/* The least task of b's queue that no machine is out for, or NULL. */
static struct task *
sched_queue_first(const struct batch *b)
{
	struct task	*t = b->b_qfirst;

	if (b->b_nheap > 0 && (t == NULL || task_before(b->b_heap[0], t)))
		t = b->b_heap[0];
	return (t);
}

/*
 * The first task of b's queue that w may take: the least one, unless
 * tasks that failed somewhere wait there, in which case the least one
 * that never failed on w.  NULL if there is none.
 */
static struct task *
sched_queue_first_for(const struct batch *b, const struct worker *w)
{
	struct task	*t, *best = sched_queue_first(b);

	for (t = b->b_xfirst; t != NULL; t = t->t_next) {
		if (best != NULL && task_before(best, t))
			break;
		if (!sched_excluded(t, w))
			return (t);
	}
	return (best);
}

/*
 * Take a task out of R, moving the replication cursor on to the task that
 * follows it in the walk (forward for RR, backward for R3Q) if it pointed
 * there.
 */
static void
sched_r_remove(struct batch *b, struct task *t)
{
	sched_tail_del(b, t);
	if (b->b_rnext == t)
		b->b_rnext = b->b_cfg.policy == SCHED_POLICY_R3Q ?
		    t->t_prev : t->t_next;
	if (t->t_prev != NULL)
		t->t_prev->t_next = t->t_next;
	else
		b->b_rfirst = t->t_next;
	if (t->t_next != NULL)
		t->t_next->t_prev = t->t_prev;
	else
		b->b_rlast = t->t_prev;
	t->t_prev = t->t_next = NULL;
}

/* A held copy starts running now (state 1 of section 3). */
static void
sched_copy_start(struct sched *s, struct copy *c)
{
	struct worker	*w = c->c_worker;

	c->c_running = 1;
	c->c_start = s->s_now;
	sched_unreserve(s, c);	/* a withdrawal under way is void */
	w->w_nheld--;
	w->w_nrunning++;
	s->s_stats.held--;
	s->s_stats.running++;
	sched_room_update(s, w);	/* s_idle */
	sched_unsuspect(s, c);
	sched_order_touch(s, c);
	sched_tail_touch(s, c->c_task);
}

/* Take a task off the list of tasks that want more copies. */
static void
sched_need_unlist(struct sched *s, struct task *t)
{
	struct task_aux	*x = t->t_aux;

	if (x == NULL || !x->x_inneed)
		return;
	if (x->x_nprev != NULL)
		x->x_nprev->t_aux->x_nnext = x->x_nnext;
	else
		s->s_nfirst = x->x_nnext;
	if (x->x_nnext != NULL)
		x->x_nnext->t_aux->x_nprev = x->x_nprev;
	else
		s->s_nlast = x->x_nprev;
	x->x_nprev = x->x_nnext = NULL;
	x->x_inneed = 0;
}

/*
 * Under verify v, the most outputs of t that agree bit for bit so far,
 * and how many more copies it wants beyond those out: enough for v
 * agreeing outputs if every copy out agrees, within 2v - 1 votes in all.
 */
static uint32_t
sched_want_verify(const struct task *t, uint32_t *agree)
{
	const struct task_aux	*x = t->t_aux;
	uint32_t		 v = t->t_batch->b_cfg.verify, best = 0, need;
	uint32_t		 i, k, n, left, nvotes;

	nvotes = x != NULL ? x->x_nvotes : 0;
	for (i = 0; i < nvotes; i++) {
		for (k = n = 0; k < nvotes; k++)
			n += x->x_votes[k].v_digest == x->x_votes[i].v_digest;
		if (n > best)
			best = n;
	}
	if (agree != NULL)
		*agree = best;
	if (v <= 1 || t->t_state != TASK_SENT)
		return (0);
	need = v - best;
	left = 2 * v - 1 - nvotes;
	if (need <= t->t_ncopies || left <= t->t_ncopies)
		return (0);
	need -= t->t_ncopies;
	left -= t->t_ncopies;
	return (need < left ? need : left);
}

/*
 * How many more copies t wants out now: the larger of what verify asks
 * for and what its copies (section 3.1's multiplicity) ask for.
 */
static uint32_t
sched_want(const struct task *t)
{
	uint32_t	 v, k = 0;

	v = sched_want_verify(t, NULL);
	if (t->t_state == TASK_SENT && t->t_want > t->t_ncopies)
		k = t->t_want - t->t_ncopies;
	return (v > k ? v : k);
}

/* Put t on the need list if it wants more copies. */
static void
sched_need(struct sched *s, struct task *t)
{
	struct task_aux	*x;

	if ((t->t_aux != NULL && t->t_aux->x_inneed) || sched_want(t) == 0)
		return;
	x = sched_aux(t);
	x->x_nnext = NULL;
	if ((x->x_nprev = s->s_nlast) != NULL)
		s->s_nlast->t_aux->x_nnext = t;
	else
		s->s_nfirst = t;
	s->s_nlast = t;
	x->x_inneed = 1;
}

/* One more task of b is done, failed or cancelled. */
static void
sched_batch_finish(struct sched *s, struct batch *b)
{
	b->b_nfinished++;
	sched_batch_check(s, b);
}

/* Task t, with no copy left, gives up; wid is the worker last tried. */
static void
sched_give_up(struct sched *s, struct task *t, uint32_t wid,
    enum sched_fail_reason why)
{
	struct batch		*b = t->t_batch;
	struct sched_action	*a;

	sched_need_unlist(s, t);
	t->t_state = TASK_FAILED;
	s->s_stats.failed++;
	sched_count(&b->b_report.failed);
	a = sched_emit(s, SCHED_TASK_FAILED, wid, t->t_id, b->b_id, 0, 0);
	a->reason = why;
	sched_batch_finish(s, b);
}

/* What a copy sent is to its task. */
enum send_kind {
	SEND_FIRST = 0,		/* taken from the queue */
	SEND_REPLICA,		/* RR/R3Q's tail, a suspect's task */
	SEND_COPY,		/* one of its copies beyond the first */
	SEND_VERIFY,		/* another machine's output to compare */
	SEND_MOVE		/* balancing: its released copy's successor */
};

/*
 * Send a copy of t to w.  A first copy joins the newest end of R; a
 * replica or copy is only counted, and the first replica of a batch
 * starts its synchronisation wait (RR, R3Q).
 */
static void
sched_send(struct sched *s, struct worker *w, struct task *t,
    enum send_kind kind)
{
	struct batch	*b = t->t_batch;
	struct copy	*c;
	struct sched_action *a;
	int		 replica = kind == SEND_REPLICA || kind == SEND_COPY;

	if ((c = s->s_cfree) != NULL) {
		s->s_cfree = c->c_tnext;
		memset(c, 0, sizeof(*c));
	} else
		c = sched_calloc(1, sizeof(*c));
	c->c_task = t;
	c->c_worker = w;
	c->c_replica = replica;
	c->c_sent = c->c_changed = s->s_now;
	if ((c->c_tprev = t->t_lastcopy) != NULL)
		t->t_lastcopy->c_tnext = c;
	else
		t->t_copies = c;
	t->t_lastcopy = c;
	t->t_ncopies++;
	if ((c->c_wprev = w->w_lastcopy) != NULL)
		w->w_lastcopy->c_wnext = c;
	else
		w->w_copies = c;
	w->w_lastcopy = c;
	w->w_ncopies++;
	w->w_nheld++;
	s->s_stats.held++;
	sched_room_update(s, w);

	if (replica) {
		s->s_stats.replicas++;
		if (kind == SEND_REPLICA && !b->b_synced) {
			b->b_report.t_sync = s->s_now;
			b->b_synced = 1;
		}
		sched_count(&b->b_report.replicas);
	} else if (kind == SEND_VERIFY)
		s->s_stats.verify_copies++;
	else if (kind == SEND_MOVE)
		c->c_moved = 1;		/* it stays in R where it was */
	else {
		t->t_state = TASK_SENT;
		tlist_link(&b->b_rfirst, &b->b_rlast, b->b_rlast, t);
		if (b->b_tail)
			sched_tail_add(s, b, t);	/* due time and all */
	}
	if (kind != SEND_FIRST)
		sched_tail_touch(s, t);
	a = sched_emit(s, SCHED_ASSIGN, w->w_id, t->t_id, b->b_id, replica,
	    0);
	a->active = kind == SEND_MOVE;
}

/* Has some copy of t gone to the group (machine or relay) group? */
static int
sched_node_has_copy(const struct task *t, uint64_t group)
{
	const struct copy	*c;

	for (c = t->t_copies; c != NULL; c = c->c_tnext)
		if (c->c_worker->w_group == group)
			return (1);
	return (0);
}

/*
 * Give t the copies it wants (sched_want()), each on the least loaded
 * worker with room that has no copy of it and whose machine is not out
 * for it, on a machine with no copy of it yet if there is one (section
 * 3.1: copies on distinct machines).  A copy verify asks for is a verify
 * copy, any other a replica.  What finds no room waits on the need list.
 */
static void
sched_give_copies(struct sched *s, struct task *t)
{
	struct worker	*w, *best;
	size_t		 i;
	int		 other, bother = 0;

	while (sched_want(t) > 0) {
		best = NULL;
		SCHED_FOREACH(s, s_room, i, w) {
			if (!sched_has_room(w, t->t_batch) ||
			    !sched_may_copy(t, w))
				continue;
			other = !sched_node_has_copy(t, w->w_group);
			if (best == NULL || other > bother ||
			    (other == bother && w->w_ncopies < best->w_ncopies)) {
				best = w;
				bother = other;
			}
		}
		if (best == NULL)
			break;
		sched_send(s, best, t, sched_want_verify(t, NULL) > 0 ?
		    SEND_VERIFY : SEND_COPY);
	}
	sched_need(s, t);
}

/*
 * Give the tasks on the need list (verify, copies) the copies they want,
 * oldest need first.  They come before fresh work: a task is only done
 * once verified, and a task's copies are meant to run at once.
 */
static void
sched_replicate_needs(struct sched *s)
{
	struct task	*t, *next;

	for (t = s->s_nfirst; t != NULL; t = next) {
		next = t->t_aux->x_nnext;
		sched_give_copies(s, t);
		if (sched_want(t) == 0)
			sched_need_unlist(s, t);
	}
}

/*
 * Of the queued batches of kind k (every one w can run), the one with the
 * least task w may take, if it comes before *tp; *tp becomes that task.
 */
static struct batch *
sched_kind_best(const struct kcount *k, const struct worker *w,
    struct batch *bbest, struct task **tp, uint64_t *visited)
{
	struct batch	*b;
	struct task	*t;

	for (b = k->k_qfirst; b != NULL; b = b->b_knext) {
		(*visited)++;
		if ((t = sched_queue_first_for(b, w)) == NULL)
			continue;
		if (*tp == NULL || task_before(t, *tp)) {
			*tp = t;
			bbest = b;
		}
	}
	return (bbest);
}

/*
 * The batch w takes its next task from, and that task (*tp): the least
 * task in (priority, add order) over the queues of every batch w can run,
 * those it may take (see sched_queue_first_for()).  Add orders are
 * unique, so the answer does not depend on the order the batches are
 * looked at in: only the queued batches of the kinds w runs are, through
 * the kinds w runs or the active kinds, whichever are fewer.  A batch of
 * a kind w does not run, or with nothing queued, costs nothing.  The
 * batches looked at are counted in *visited.
 */
static struct batch *
sched_batch_for(const struct sched *s, const struct worker *w,
    struct task **tp, uint64_t *visited)
{
	struct batch	*bbest = NULL;
	struct task	*best = NULL;
#ifdef SCHED_REFERENCE
	struct batch	*b;
	struct task	*t;

	/* the walk over every batch the indexes replace */
	(void)sched_kind_best;
	for (b = s->s_bfirst; b != NULL; b = b->b_next) {
		(*visited)++;
		if (b->b_nqueued == 0 || !sched_can_run(w, b) ||
		    (t = sched_queue_first_for(b, w)) == NULL)
			continue;
		if (best == NULL || task_before(t, best)) {
			best = t;
			bbest = b;
		}
	}
#else
	const struct kcount	*k;
	uint64_t		 m;
	size_t			 i, nk;

	nk = (size_t)__builtin_popcountll(w->w_klow) + w->w_nkhigh;
	if (nk <= s->s_nakinds) {
		for (m = w->w_klow; m != 0; m &= m - 1)
			if ((k = kc_find(s,
			    (uint32_t)__builtin_ctzll(m))) != NULL)
				bbest = sched_kind_best(k, w, bbest, &best,
				    visited);
		for (i = 0; i < w->w_nkhigh; i++)
			if ((k = kc_find(s, w->w_khigh[i])) != NULL)
				bbest = sched_kind_best(k, w, bbest, &best,
				    visited);
	} else
		for (i = 0; i < s->s_nakinds; i++)
			if (sched_runs_kind(w, s->s_akinds[i]))
				bbest = sched_kind_best(kc_find(s,
				    s->s_akinds[i]), w, bbest, &best, visited);
#endif
	if (tp != NULL)
		*tp = best;
	return (bbest);
}

/*
 * Hand queued tasks to workers with room: round-robin over the workers in
 * join order, one task per worker per pass, until a pass hands out
 * nothing.  So the first M tasks go to the M workers one each (RR step 2,
 * RWQ step 3) and a result from worker k brings k the head of Q (RR step
 * 4, RWQ step 5), Q ordered by priority.  The cap is that of the batch
 * the task would come from.  A task with copies gets them at once.
 */
static void
sched_fill(struct sched *s)
{
	struct worker	*w;
	struct batch	*b;
	struct task	*t;
	size_t		 i, j, n;
	int		 progress;

 again:
	if (s->s_stats.queued == 0)
		return;
	if (s->s_fill_all) {
		s->s_fill_all = 0;
		for (i = 0; i < s->s_nworkers; i++)
			sched_wake(s, s->s_workers[i]);
	}
	/* In join order; usually one or two, already sorted. */
	for (i = 1; i < s->s_ncand; i++) {
		w = s->s_cand[i];
		for (j = i; j > 0 && s->s_cand[j - 1]->w_seq > w->w_seq; j--)
			s->s_cand[j] = s->s_cand[j - 1];
		s->s_cand[j] = w;
	}
	do {
		progress = 0;
		for (i = 0; i < s->s_ncand && s->s_stats.queued > 0; i++) {
			w = s->s_cand[i];
			if (!w->w_cand)
				continue;
			if ((b = sched_batch_for(s, w, &t,
			    &s->s_stats.batches_visited)) == NULL ||
			    (uint64_t)w->w_ncopies + w->w_nincoming >=
			    sched_cap(w, b)) {
				w->w_cand = 0;	/* full: off the list */
				continue;
			}
			sched_queue_take(s, b, t);
			sched_send(s, w, t, SEND_FIRST);
			if (t->t_want > 1)
				sched_give_copies(s, t);
			else
				sched_need(s, t);	/* verify: after the fill */
			progress = 1;
		}
	} while (progress && s->s_stats.queued > 0);
	for (i = n = 0; i < s->s_ncand; i++)
		if (s->s_cand[i]->w_cand)
			s->s_cand[n++] = s->s_cand[i];
	s->s_ncand = n;
	/* A batch ran dry and the next one may have another cap. */
	if (s->s_fill_all)
		goto again;
}

/* Replicate t to every worker of b's kind with room and no copy of t. */
static int
sched_replicate_everywhere(struct sched *s, struct batch *b, struct task *t)
{
	struct worker	*w;
	size_t		 i;
	int		 n = 0;

	SCHED_FOREACH(s, s_room, i, w) {
		if (sched_has_room(w, b) && sched_may_copy(t, w)) {
			sched_send(s, w, t, SEND_REPLICA);
			n++;
		}
	}
	return (n);
}

/*
 * RR steps 6-11, once b's queue is empty: R is the list of tasks sent and
 * not done, in send order (step 6; step 9 is sched_r_remove()).  Pick the
 * next task of R in round-robin order and replicate it to every worker
 * that is not running a task, i.e. has fewer copies than CPUs (step 10).
 * If nobody can take that task (each idle worker already has it) the next
 * one is tried; one task per event.
 */
static void
sched_replicate_rr(struct sched *s, struct batch *b)
{
	struct worker	*w;
	struct task	*start, *t;
	size_t		 i;

	SCHED_FOREACH(s, s_room, i, w)
		if (sched_has_room(w, b))
			break;
	if (i == IDX_NONE)
		return;

	start = t = b->b_rnext != NULL ? b->b_rnext : b->b_rfirst;
	do {
		if (sched_replicate_everywhere(s, b, t) > 0) {
			b->b_rnext = t->t_next;
			return;
		}
		t = t->t_next != NULL ? t->t_next : b->b_rfirst;
	} while (t != start);
}

/*
 * The speed-aware tail of R3Q under queue_factor auto (beyond the paper,
 * which replicates blind to speed).  The paper's
 * R3Q (doc/algorithms.md section 1, "R3Q = RWQ + RR", RR step 10) gives
 * every free queue slot a replica of the next task of R in reverse send
 * order.  On a heterogeneous cluster most of those replicas cannot win:
 * a copy queued behind a slow worker's other copies, or sent to a worker
 * slower than the one already running the task, comes back after the
 * original.  And the generation ends when its last task comes back.  So
 * here, with the per-worker estimates queue_factor auto keeps (the EWMA
 * of the round trip and of the execution time, sched_estimate_update()):
 *  - every task of R has an expected time for its result, the earliest
 *    over its copies (t_eta): a running copy at its start plus its
 *    worker's task time; a held one after what its worker holds ahead
 *    of it; a copy on a worker with no estimate, or running more than a
 *    quarter of a task past its worker's own estimate (late), is not
 *    known, and a task with no known copy is due "never": it comes first;
 *  - the task due last is replicated, onto the worker with room that
 *    would bring a copy sent now back soonest, and only if that is
 *    sooner than the task is due; then again, until the task due last
 *    cannot be beaten (nor can any other: they are due sooner);
 *  - a free slot that cannot win stays free; when a task's best copy
 *    turns late its time is reckoned again (sched_tail_late(), due at
 *    sched_deadline()), so a stuck or slowed copy is replicated all the
 *    same; so is a suspect's task (sched_replicate_suspects(), section 3,
 *    unchanged);
 *  - a worker without an estimate yet gets the paper's replicas, up to
 *    SCHED_BLIND_COPIES copies of a task.
 * R is kept as two heaps (due last first; turning late first) and the
 * workers with room and an estimate as one (s_wheap), so that a replica
 * costs O(log N) and an event that sends none O(1): the core's work per
 * task stays flat in N.
 */
#define SCHED_ETA_NONE		UINT64_MAX	/* not known: due "never" */
/*
 * Blind replicas stop at this many copies of a task.  The paper's walk
 * gives every free slot one, a few copies a task on its 11 hosts; but a
 * copy that loses is killed before it ends, so its worker stays blind
 * and takes another.  A 40-task job of 3 generations on 10,000 workers
 * (r3q-sim, lognormal speeds, 1 s tasks) sent 194,871 replicas and took
 * 12.9 s of the core's CPU; with 64 it sends 2,556 in 0.02 s and ends in
 * 1.32 s of simulated time instead of 1.28 (with 16: 633 and 1.87 s, the
 * fast workers are found later; with 256: 10,241 and 1.13 s).  At 10
 * tasks a worker the cap cuts replicas by a quarter, efficiency equal.
 * The paper's grid has fewer hosts than that: it is unchanged.
 */
#define SCHED_BLIND_COPIES	64
#define SCHED_TAIL_TASKS	7	/* tasks looked at per replica */
#define SCHED_TAIL_WORKERS	8	/* workers looked at per task */

/* Is b's tail speed-aware: R3Q, queue_factor auto? */
static int
sched_tail_on(const struct batch *b)
{
	return (b->b_cfg.policy == SCHED_POLICY_R3Q &&
	    b->b_cfg.queue_factor == SCHED_QF_AUTO);
}

/* Task heap which (0: b_tmax, due last first; 1: b_tmin, late first). */
static int
th_before(const struct task *a, const struct task *b, int which)
{
	if (which == 0 && a->t_eta != b->t_eta)
		return (a->t_eta > b->t_eta);
	if (which == 1 && a->t_lateat != b->t_lateat)
		return (a->t_lateat < b->t_lateat);
	return (a->t_order > b->t_order);	/* newest first, as R3Q */
}

static void
th_set(struct task **h, size_t i, struct task *t, int which)
{
	h[i] = t;
	if (which == 0)
		t->t_xmax = (uint32_t)i + 1;
	else
		t->t_xmin = (uint32_t)i + 1;
}

static void
th_fix(struct task **h, size_t n, size_t i, int which)
{
	struct task	*t = h[i];
	size_t		 c;

	while (i > 0 && th_before(t, h[(i - 1) / 2], which)) {
		th_set(h, i, h[(i - 1) / 2], which);
		i = (i - 1) / 2;
	}
	for (;;) {
		c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && th_before(h[c + 1], h[c], which))
			c++;
		if (!th_before(h[c], t, which))
			break;
		th_set(h, i, h[c], which);
		i = c;
	}
	th_set(h, i, t, which);
}

/*
 * When w's CPUs free up, as the master will hear of it: the first of its
 * running copies due back if every CPU runs one, else 0 (now).
 */
static uint64_t
sched_cpu_free(const struct worker *w)
{
	const struct copy	*c;
	uint64_t		 e, first = 0;

	if (w->w_nrunning < w->w_ncpu)
		return (0);
	for (c = w->w_copies; c != NULL; c = c->c_wnext) {
		if (!c->c_running)
			continue;
		e = c->c_start + w->w_task;
		if (first == 0 || e < first)
			first = e;
	}
	return (first);
}

/*
 * When the result of a copy held at place k of w's queue, sent at sent,
 * is expected back at the master (R3Q's speed-aware tail, beyond the
 * paper: doc/algorithms.md section 1.5).  In the master's clock a worker
 * event is heard half a round trip late, so both halves fold into the
 * copy's arrival: sent + rtt.  It starts once it has arrived and w's CPUs
 * are through the k held before it, one task time each per CPU, and comes
 * back a task time later.  w's CPUs are taken as busy from the first end
 * of a running copy when every CPU is known to run one (cpufree), else,
 * while w holds copies, from its last sign of life (a start, half-way or
 * a result: a worker that holds copies runs one), but never from longer
 * ago than a task time nor before the first copy it holds has arrived;
 * an idle worker's from now.  So the queue a fast
 * worker holds to cover the round trip (queue_factor auto) is worked
 * through during that round trip, not after it: counting it after made
 * every fast worker look a round trip slower than it is, and the tail
 * left a slow worker's last task alone that a fast one could have beaten
 * (r3q-sim on the paper's WAN grid, 100 ms tasks, 50 ms delay: 60.3 % ->
 * 68.4 % efficient, the bound with whole tasks 70.4 %).
 *
 * An estimate taken from now moves with now (*slides, if not NULL): it
 * says when the copy would be back if the worker spoke up at once, never
 * a moment at which it turns late.
 */
static uint64_t
sched_eta_held(const struct sched *s, const struct worker *w, uint64_t sent,
    uint64_t k, uint64_t cpufree, int *slides)
{
	const struct copy	*c;
	uint64_t		 base, busy, rtt = w->w_hasrtt ? w->w_rtt : 0;
	int			 fromnow = 0;

	busy = cpufree;
	if (busy == 0) {
		busy = w->w_ncopies > 0 ? w->w_alive : s->s_now;
		fromnow = w->w_ncopies == 0;
	}
	if (busy + w->w_task < s->s_now) {
		busy = s->s_now - w->w_task;
		fromnow = 1;
	}
	/* Nor before the first copy it holds has arrived. */
	for (c = w->w_copies; c != NULL; c = c->c_wnext)
		if (!c->c_running) {
			if (c->c_sent + rtt > busy) {
				busy = c->c_sent + rtt;
				fromnow = 0;
			}
			break;
		}
	busy += k / w->w_ncpu * w->w_task;
	base = sent + rtt;
	if (busy > base)
		base = busy;
	else
		fromnow = 0;
	if (slides != NULL)
		*slides = fromnow;
	return (base + w->w_task);
}

/* When a copy sent to w now would come back (w has an estimate). */
static uint64_t
sched_worker_eta(const struct sched *s, const struct worker *w)
{
	return (sched_eta_held(s, w, s->s_now,
	    (uint64_t)w->w_nheld + w->w_nincoming, sched_cpu_free(w), NULL));
}

/*
 * When c's result is expected back, and (*lateat) when it turns late;
 * SCHED_ETA_NONE if not known: no estimate for its worker, or running a
 * quarter of its worker's task time past the estimate.  A held copy whose
 * estimate slides with now (its worker silent for over a task time) does
 * not turn late by waiting: *lateat is UINT64_MAX until the worker speaks.
 * (now plus the slack, taken anew at each look, had the master look again
 * and again, microseconds apart for short tasks, while such a copy was
 * out: a CPU's worth of masterd's time.)
 */
static uint64_t
sched_copy_eta(const struct sched *s, const struct copy *c, uint64_t *lateat)
{
	const struct worker	*w = c->c_worker;
	const struct copy	*h;
	uint64_t		 e, slack, k = 0;
	int			 slides = 0;

	if (!w->w_hastask)
		return (SCHED_ETA_NONE);
	slack = w->w_task / 4 + 1;
	if (c->c_running) {
		e = c->c_start + w->w_task;
		if (s->s_now >= e + slack)
			return (SCHED_ETA_NONE);
	} else {
		for (h = w->w_copies; h != c; h = h->c_wnext)
			if (!h->c_running)
				k++;
		e = sched_eta_held(s, w, c->c_sent, k, sched_cpu_free(w),
		    &slides);
	}
	*lateat = slides ? UINT64_MAX : e + slack;
	return (e);
}

/* t's due time anew, from its copies, and its places in the heaps. */
static void
sched_tail_rekey(struct sched *s, struct task *t)
{
	struct batch		*b = t->t_batch;
	const struct copy	*c;
	uint64_t		 e, late = 0;

	t->t_eta = SCHED_ETA_NONE;
	t->t_lateat = UINT64_MAX;
	for (c = t->t_copies; c != NULL; c = c->c_tnext) {
		e = sched_copy_eta(s, c, &late);
		if (e < t->t_eta) {
			t->t_eta = e;
			t->t_lateat = late;
		}
	}
	th_fix(b->b_tmax, b->b_ntail, t->t_xmax - 1, 0);
	th_fix(b->b_tmin, b->b_ntail, t->t_xmin - 1, 1);
}

/* t joins the tail's heaps (it is in R). */
static void
sched_tail_add(struct sched *s, struct batch *b, struct task *t)
{
	size_t	 n;

	if (b->b_ntail == b->b_tailsize) {
		n = b->b_tailsize > 0 ? 2 * b->b_tailsize : 64;
		b->b_tmax = realloc(b->b_tmax, n * sizeof(*b->b_tmax));
		b->b_tmin = realloc(b->b_tmin, n * sizeof(*b->b_tmin));
		if (b->b_tmax == NULL || b->b_tmin == NULL)
			abort();	/* as sched_calloc() */
		b->b_tailsize = n;
	}
	n = b->b_ntail++;
	th_set(b->b_tmax, n, t, 0);
	th_set(b->b_tmin, n, t, 1);
	sched_tail_rekey(s, t);
}

/* t leaves the tail's heaps (it leaves R). */
static void
sched_tail_del(struct batch *b, struct task *t)
{
	size_t	 i, n;

	if (t->t_xmax == 0)
		return;
	n = --b->b_ntail;
	if ((i = t->t_xmax - 1) < n) {
		th_set(b->b_tmax, i, b->b_tmax[n], 0);
		th_fix(b->b_tmax, n, i, 0);
	}
	if ((i = t->t_xmin - 1) < n) {
		th_set(b->b_tmin, i, b->b_tmin[n], 1);
		th_fix(b->b_tmin, n, i, 1);
	}
	t->t_xmax = t->t_xmin = 0;
}

/* A copy of t came, went or started: its due time anew. */
static void
sched_tail_touch(struct sched *s, struct task *t)
{
	if (t->t_xmax != 0)
		sched_tail_rekey(s, t);
}

/* b's queue ran dry for the first time: R into the heaps. */
static void
sched_tail_start(struct sched *s, struct batch *b)
{
	struct task	*t;

	b->b_tail = 1;
	for (t = b->b_rfirst; t != NULL; t = t->t_next)
		sched_tail_add(s, b, t);
}

/*
 * Is b's tail waiting for a copy to turn late (sched_deadline())?  Only
 * while its queue is dry and some worker with an estimate has room.
 */
static int
sched_tail_waits(const struct sched *s, const struct batch *b)
{
	return (b->b_tail && b->b_ntail > 0 && b->b_nqueued == 0 &&
	    b->b_closed && s->s_nwheap > 0 &&
	    b->b_tmin[0]->t_lateat != UINT64_MAX);
}

/*
 * The tasks whose best copy turned late: due anew (a later copy, or not
 * known).  Each comes out with t_lateat past now, so this ends.
 */
static void
sched_tail_late(struct sched *s, struct batch *b)
{
	while (b->b_ntail > 0 && b->b_tmin[0]->t_lateat <= s->s_now)
		sched_tail_rekey(s, b->b_tmin[0]);
}

/*
 * The first n (at most SCHED_TAIL_WORKERS) workers of s_wheap in key
 * order, into v; how many there are.  Best first from the root, so that
 * the answer depends on the keys, not on how the heap happens to lie.
 */
static size_t
sched_wheap_first(const struct sched *s, struct worker **v, size_t n)
{
	size_t	 fr[2 * SCHED_TAIL_WORKERS + 1], nfr = 0, k, m, i, best;

	if (s->s_nwheap > 0)
		fr[nfr++] = 0;
	for (k = 0; k < n && nfr > 0; k++) {
		for (best = 0, i = 1; i < nfr; i++)
			if (wh_before(s->s_wheap[fr[i]], s->s_wheap[fr[best]]))
				best = i;
		m = fr[best];
		fr[best] = fr[--nfr];
		v[k] = s->s_wheap[m];
		if (2 * m + 1 < s->s_nwheap)
			fr[nfr++] = 2 * m + 1;
		if (2 * m + 2 < s->s_nwheap)
			fr[nfr++] = 2 * m + 2;
	}
	return (k);
}

/* The same for the first n (at most SCHED_TAIL_TASKS) tasks of b_tmax. */
static size_t
sched_tmax_first(const struct batch *b, struct task **v, size_t n)
{
	size_t	 fr[2 * SCHED_TAIL_TASKS + 1], nfr = 0, k, m, i, best;

	if (b->b_ntail > 0)
		fr[nfr++] = 0;
	for (k = 0; k < n && nfr > 0; k++) {
		for (best = 0, i = 1; i < nfr; i++)
			if (th_before(b->b_tmax[fr[i]], b->b_tmax[fr[best]], 0))
				best = i;
		m = fr[best];
		fr[best] = fr[--nfr];
		v[k] = b->b_tmax[m];
		if (2 * m + 1 < b->b_ntail)
			fr[nfr++] = 2 * m + 1;
		if (2 * m + 2 < b->b_ntail)
			fr[nfr++] = 2 * m + 2;
	}
	return (k);
}

/*
 * Replicate the task due last onto the worker with room that brings it
 * back soonest, while that is sooner (see above).  The first few of
 * each heap are looked at: the task due last that some of the first
 * workers may copy, the soonest of those workers, reckoned afresh.
 */
static void
sched_replicate_tail(struct sched *s, struct batch *b)
{
	struct task	*cand[SCHED_TAIL_TASKS], *t = NULL;
	struct worker	*ws[SCHED_TAIL_WORKERS], *w, *best;
	uint64_t	 f, fbest = 0;
	size_t		 nc, nw, i, j;

	if (!b->b_tail)
		sched_tail_start(s, b);
	sched_tail_late(s, b);
	while (b->b_ntail > 0 && s->s_nwheap > 0) {
		nc = sched_tmax_first(b, cand, SCHED_TAIL_TASKS);
		nw = sched_wheap_first(s, ws, SCHED_TAIL_WORKERS);
		best = NULL;
		for (i = 0; i < nc && best == NULL; i++) {
			t = cand[i];
			for (j = 0; j < nw; j++) {
				w = ws[j];
				if (!sched_has_room(w, b) ||
				    !sched_may_copy(t, w))
					continue;
				f = sched_worker_eta(s, w);
				if (best == NULL || f < fbest ||
				    (f == fbest && w->w_seq < best->w_seq)) {
					best = w;
					fbest = f;
				}
			}
		}
		/* The soonest cannot beat the latest: no replica can win. */
		if (best == NULL || fbest >= t->t_eta)
			return;
		sched_send(s, best, t, SEND_REPLICA);
	}
}

/*
 * R3Q replication, once b's queue is empty: as RR, but R is walked
 * round-robin in the reverse of the send order, so the tasks sent last,
 * the ones still held in some worker's queue, are replicated first and
 * their losing copies can be removed before they start.  Every free queue
 * slot gets its own replica, the next task of the walk that the worker
 * does not already have; the workers are served one slot per pass in join
 * order.  The workers walked are those of set (s_room; under the tail,
 * s_blind, whose members have no copy yet when idle is set).
 */
static void
sched_replicate_walk(struct sched *s, struct batch *b,
    const struct idxset *set, int idle)
{
	struct worker	*w;
	struct task	*start, *t;
	size_t		 i, first;
	int		 progress, full, wrapped;

	/*
	 * The blind walk starts where the last blind replica went, so
	 * that its replicas, capped, go round every blind worker in turn
	 * rather than to the first in join order every time (a worker
	 * whose copy loses is killed before it ends and stays blind).
	 */
	first = idle && s->s_blind_next < s->s_nworkers ? s->s_blind_next : 0;
	do {
		progress = 0;
		wrapped = first == 0;
		i = sched_set_next(s, set, first);
		for (;;) {
			if (i == IDX_NONE || (wrapped && first > 0 &&
			    i >= first)) {
				if (wrapped)
					break;
				wrapped = 1;
				i = sched_set_next(s, set, 0);
				continue;
			}
			w = s->s_workers[i];
			if ((idle && w->w_hastask) || !sched_has_room(w, b)) {
				i = sched_set_next(s, set, i + 1);
				continue;
			}
			start = t = b->b_rnext != NULL ? b->b_rnext :
			    b->b_rlast;
			full = idle;
			do {
				/* Under the tail, SCHED_BLIND_COPIES at most. */
				if (!idle ||
				    t->t_ncopies < SCHED_BLIND_COPIES) {
					full = 0;
					if (sched_may_copy(t, w)) {
						sched_send(s, w, t,
						    SEND_REPLICA);
						b->b_rnext = t->t_prev;
						progress = 1;
						if (idle)
							s->s_blind_next = i + 1;
						break;
					}
				}
				t = t->t_prev != NULL ? t->t_prev : b->b_rlast;
			} while (t != start);
			/* Every task of R has its blind copies: none will do. */
			if (full)
				return;
			i = sched_set_next(s, set, i + 1);
		}
	} while (progress);
}

/*
 * R3Q's replication: the paper's walk over every worker with room, or,
 * under the speed-aware tail, over the workers with no estimate yet and
 * then the tail's own choice for the rest.
 */
static void
sched_replicate_r3q(struct sched *s, struct batch *b)
{
	if (sched_tail_on(b)) {
		sched_replicate_walk(s, b, &s->s_blind, 1);
		sched_replicate_tail(s, b);
	} else
		sched_replicate_walk(s, b, &s->s_room, 0);
}

/*
 * Note the first idle moment of every closed batch whose queue is empty:
 * a worker that can run its kind ends the event with fewer copies than
 * CPUs, so a CPU has nothing left to do ("a worker slot starts waiting").
 * An open batch is not waiting for its slowest worker but for its client.
 */
static void
sched_note_idle(struct sched *s)
{
	const struct worker	*w;
	struct batch		*b;
	size_t			 i;

	SCHED_DRAINED(s, b) {
		s->s_stats.batches_visited++;
		if (b->b_nqueued > 0 || b->b_idle || !b->b_closed)
			continue;
		/* Which worker it is does not matter: the first will do. */
		SCHED_FOREACH(s, s_free, i, w) {
			if (w->w_ncopies < w->w_ncpu && sched_can_run(w, b)) {
				b->b_idle = 1;
				b->b_tidle = s->s_now;
				break;
			}
		}
	}
}

/* Mark copy c suspect; its task waits for a replica on an idle worker. */
static void
sched_suspect_copy(struct sched *s, struct copy *c)
{
	struct task	*t = c->c_task;
	struct worker	*w = c->c_worker;
	struct task_aux	*x = sched_aux(t);

	sched_order_remove(s, c);
	c->c_suspect = 1;
	x->x_nsuspect++;
	if (w->w_nsuspect++ == 0)
		s->s_stats.suspect_workers++;
	if (x->x_insuspect || t->t_state != TASK_SENT)
		return;
	x->x_snext = NULL;
	if ((x->x_sprev = s->s_slast) != NULL)
		s->s_slast->t_aux->x_snext = t;
	else
		s->s_sfirst = t;
	s->s_slast = t;
	x->x_insuspect = 1;
	if (t->t_batch->b_nsuspect++ == 0)
		s->s_nsbatches++;
}

/* Suspicions of w within the window, counting one more now if add. */
static uint32_t
sched_suspect_count(struct sched *s, struct worker *w, int add)
{
	const struct sched_fault_config	*f = &s->s_fault;
	uint32_t			 size, i, n = 0;

	if (f->suspect_limit == 0)
		return (add);
	size = f->suspect_limit + 1;
	if (add) {
		if (w->w_ring == NULL)
			w->w_ring = sched_calloc(SCHED_SUSPECT_LIMIT_MAX + 1,
			    sizeof(*w->w_ring));
		if (w->w_ringlen < size)
			w->w_ring[(w->w_ringhead + w->w_ringlen++) % size] =
			    s->s_now;
		else {
			w->w_ring[w->w_ringhead] = s->s_now;
			w->w_ringhead = (w->w_ringhead + 1) % size;
		}
	}
	for (i = 0; i < w->w_ringlen; i++)
		if (s->s_now - w->w_ring[(w->w_ringhead + i) % size] <
		    f->suspect_window_ns)
			n++;
	return (n);
}

/*
 * Worker w just became suspect, shown by its copy of task t: the copy
 * stood still (silent ns) while worker by did a whole task (section 3),
 * or it failed where by's copy succeeded.  Its held copies are as stuck
 * as that one, so their tasks are handed out too.  A worker suspected
 * more than suspect_limit times within the window "can be excluded": it
 * gets no new tasks for the cool-down.
 *
 * Beyond the paper: a running copy that stood still for no longer than
 * its worker's own whole task (the EWMA of its execution times, once a
 * result has carried one) shows a slow machine, not a stuck one: a
 * healthy copy moves every half task, at its machine's pace.  Its tasks
 * are handed out all the same (SCHED_WHY_SLOW), but the suspicion is not
 * counted toward suspect_limit: a heterogeneous cluster's slow machines
 * are part of its speed, and cooling them down for minutes threw it
 * away (r3q-sim, Table 1's LAN at 1000 ms tasks, 20
 * generations: 87.7 % efficient before, 91.6 % after).  A copy that
 * stands still longer than that, a dead or hung worker, a failure or a
 * lost vote count as before; so does everything while a worker has no
 * estimate yet.
 */
static void
sched_worker_suspected(struct sched *s, struct worker *w,
    const struct task *t, int running, uint64_t silent, uint32_t by,
    enum sched_suspect_why why)
{
	const struct sched_fault_config	*f = &s->s_fault;
	struct sched_action		*a;
	struct copy			*h;
	uint32_t			 n;
	int				 slow;

	for (h = w->w_copies; h != NULL; h = h->c_wnext)
		if (!h->c_running && !h->c_suspect)
			sched_suspect_copy(s, h);
	w->w_suspects++;
	s->s_stats.suspects++;
	slow = why == SCHED_WHY_STILL && running && w->w_hastask &&
	    silent <= w->w_task;
	if (slow)
		s->s_stats.slow_suspects++;
	n = sched_suspect_count(s, w, !slow);
	a = sched_emit(s, SCHED_SUSPECT, w->w_id, t->t_id, t->t_batch->b_id,
	    0, running);
	a->by = by;
	a->why = slow ? SCHED_WHY_SLOW : why;
	a->silent_ns = silent;
	a->own_ns = w->w_hastask ? w->w_task : 0;
	a->count = n;
	/* Never leave the core with nobody to give work to. */
	if (slow || f->suspect_limit == 0 || n <= f->suspect_limit ||
	    w->w_cooling ||
	    s->s_stats.workers - s->s_stats.cooling_workers <= 1)
		return;
	w->w_cooling = 1;
	w->w_cool_until = s->s_now + f->cooldown_ns;
	sched_cool_link(s, w);
	sched_room_update(s, w);
	s->s_stats.cooling_workers++;
	a = sched_emit(s, SCHED_COOLDOWN, w->w_id, 0, 0, 0, 0);
	a->until = w->w_cool_until;
	a->count = n;
}

/*
 * The same test for a worker that runs nothing it was sent: a free CPU
 * starts a held task at once, so a worker with a free CPU whose oldest
 * held copy was there, and which gave no sign of life at all, while fin
 * did a whole task has stopped or lost its link (its state "did not
 * change" either).  Only the workers of s_idle (a held copy, a free CPU)
 * are looked at: walking every worker older than begin, in the order of
 * their last sign of life, made each result cost O(N) (the core's
 * work a task, 4 us with 1,000 workers and 15 with 10,000).
 */
static void
sched_detect_idle(struct sched *s, const struct worker *fin, uint64_t begin)
{
	struct worker	*w;
	struct copy	*c;
	size_t		 i;

	SCHED_FOREACH(s, s_idle, i, w) {
		if (w->w_alive >= begin ||
		    s->s_now - w->w_alive < s->s_fault.grace_ns)
			continue;
		if (w == fin || w->w_nsuspect > 0 || w->w_nheld == 0 ||
		    w->w_nrunning >= w->w_ncpu)
			continue;
		for (c = w->w_copies; c != NULL && c->c_running;
		    c = c->c_wnext)
			;
		if (c == NULL || c->c_sent >= begin ||
		    s->s_now - c->c_sent < s->s_fault.grace_ns)
			continue;
		sched_suspect_copy(s, c);
		sched_worker_suspected(s, w, c->c_task, 0,
		    s->s_now - c->c_changed, fin->w_id, SCHED_WHY_STILL);
	}
}

/*
 * Relative suspect detection (doc/algorithms.md section 3.2, worker
 * monitoring): worker fin finished a task it began at begin.  Every
 * running copy on another worker whose state (started, half-way) did not
 * change at all during that execution is suspect: it has not done half a
 * task in the time fin did a whole one.  So a failed or hung worker is
 * caught, and so is one at least twice as slow, but nobody when every
 * worker slows down at once.  A copy must also have stood still for the
 * grace period, so that messages overtaking each other cannot make a
 * suspect of a healthy worker running tiny tasks.
 *
 * The running copies are kept in the order of their last change: the
 * walk stops at the first one that changed later, and suspect copies
 * leave the list until they move again, so the cost is that of the new
 * suspects.
 */
static void
sched_detect(struct sched *s, const struct worker *fin, uint64_t begin)
{
	struct copy	*c, *next;
	struct worker	*w;

	for (c = s->s_ofirst; c != NULL && c->c_changed < begin; c = next) {
		next = c->c_onext;
		if (s->s_now - c->c_changed < s->s_fault.grace_ns)
			break;
		if ((w = c->c_worker) == fin)
			continue;
		sched_suspect_copy(s, c);
		if (w->w_nsuspect == 1)		/* it was not suspect */
			sched_worker_suspected(s, w, c->c_task, 1,
			    s->s_now - c->c_changed, fin->w_id,
			    SCHED_WHY_STILL);
	}
	sched_detect_idle(s, fin, begin);
}

/*
 * The periodic second look (sched_tick()).  Relative suspect detection
 * runs when a result arrives, and skips a copy then inside its grace
 * period; if no other result follows (the last tasks of a batch, a WQ job
 * whose other workers ran dry) nothing would look again, and a worker
 * that holds tasks and never runs them would stall the job.  So the test
 * is made again against the last whole task a worker did: a running copy
 * whose state did not change during it is suspect once the grace period
 * is over, exactly as at its result; and a worker with a free CPU whose
 * oldest held copy has not started, while it gave no other sign of life,
 * for as long as that task took (and the grace period) is suspect too. A
 * free CPU starts a held task at once however slow the machine is, so
 * the second test stays relative: it does not fire when every worker
 * slows down together.
 */
static void
sched_scan(struct sched *s)
{
	struct copy	*c, *next;
	struct worker	*w;
	uint64_t	 bound, since;
	size_t		 i;

	for (c = s->s_ofirst; c != NULL && c->c_changed < s->s_ref_begin;
	    c = next) {
		next = c->c_onext;
		if (s->s_now - c->c_changed < s->s_fault.grace_ns)
			break;
		if ((w = c->c_worker)->w_id == s->s_ref_wid)
			continue;
		sched_suspect_copy(s, c);
		if (w->w_nsuspect == 1)
			sched_worker_suspected(s, w, c->c_task, 1,
			    s->s_now - c->c_changed, s->s_ref_wid,
			    SCHED_WHY_STILL);
	}
	bound = s->s_ref_len > s->s_fault.grace_ns ? s->s_ref_len :
	    s->s_fault.grace_ns;
	SCHED_FOREACH(s, s_idle, i, w) {
		if (w->w_id == s->s_ref_wid || w->w_nsuspect > 0 ||
		    w->w_nheld == 0 || w->w_nrunning >= w->w_ncpu)
			continue;
		for (c = w->w_copies; c != NULL && c->c_running;
		    c = c->c_wnext)
			;
		if (c == NULL)
			continue;
		since = c->c_sent > w->w_alive ? c->c_sent : w->w_alive;
		if (s->s_now - since < bound)
			continue;
		sched_suspect_copy(s, c);
		sched_worker_suspected(s, w, c->c_task, 0, s->s_now - since,
		    s->s_ref_wid, SCHED_WHY_STILL);
	}
}

/*
 * How often the periodic look runs: half the longer of the grace period
 * and the last whole task, at least every SCHED_SCAN_MIN.
 */
static uint64_t
sched_scan_period(const struct sched *s)
{
	uint64_t	 p;

	p = s->s_has_ref && s->s_ref_len > s->s_fault.grace_ns ?
	    s->s_ref_len : s->s_fault.grace_ns;
	p /= 2;
	return (p < SCHED_SCAN_MIN ? SCHED_SCAN_MIN : p);
}

/*
 * Under the speed-aware tail, where a suspect's task goes: of the first
 * workers of s_wheap, the one not suspect, with room, without a copy of
 * t, that would bring a copy back soonest; NULL if none of them may.
 */
static struct worker *
sched_suspect_target(const struct sched *s, const struct task *t)
{
	struct worker	*ws[SCHED_TAIL_WORKERS], *best = NULL;
	uint64_t	 f, fbest = 0;
	size_t		 n, i;

	n = sched_wheap_first(s, ws, SCHED_TAIL_WORKERS);
	for (i = 0; i < n; i++) {
		if (ws[i]->w_nsuspect > 0 ||
		    !sched_has_room(ws[i], t->t_batch) ||
		    !sched_may_copy(t, ws[i]))
			continue;
		f = sched_worker_eta(s, ws[i]);
		if (best == NULL || f < fbest) {
			best = ws[i];
			fbest = f;
		}
	}
	return (best);
}

/*
 * Hand the tasks of suspects to idle workers as well (section 3: "the
 * master reassigns a suspect's task to an idle worker"); the suspect's
 * own copy keeps running and whichever copy finishes first wins.  Each
 * task gets one extra copy, on the least loaded worker that is not
 * suspect, has room and has no copy of it yet; under the speed-aware
 * tail (queue_factor auto), on the one of the first workers of s_wheap
 * that would bring it back soonest, if one of them may take it: the walk
 * for the least loaded went over every worker with room while none was
 * idle, at the start of every tail (which the core's time a task showed).
 * Once no worker that is not suspect has room for a batch's tasks, none
 * will in this pass (replicas take room, none is freed): when every task
 * on the list is of one batch the walk stops there, which spares going
 * over every waiting suspect's task at every event while the workers are
 * full (however many other batches wait, idle).
 */
static void
sched_replicate_suspects(struct sched *s)
{
	struct worker	*w, *best;
	struct task	*t, *next;
	size_t		 i;
	int		 roomy;

	for (t = s->s_sfirst; t != NULL; t = next) {
		next = t->t_aux->x_snext;
		best = NULL;
		if (sched_tail_on(t->t_batch) && s->s_nwheap > 0 &&
		    (best = sched_suspect_target(s, t)) != NULL)
			goto found;
		roomy = 0;
		SCHED_FOREACH(s, s_room, i, w) {
			if (w->w_nsuspect > 0 ||
			    !sched_has_room(w, t->t_batch))
				continue;
			roomy = 1;
			if (!sched_may_copy(t, w))
				continue;
			if (best == NULL || w->w_ncopies < best->w_ncopies)
				best = w;
			/* none after it can hold fewer: the same choice */
			if (best->w_ncopies == 0)
				break;
		}
#ifdef SCHED_REFERENCE
		/* the stop the count replaces: one batch at all */
		if (best == NULL && !roomy && s->s_bfirst == t->t_batch &&
		    t->t_batch->b_next == NULL)
			break;
#else
		if (best == NULL && !roomy && s->s_nsbatches == 1)
			break;
#endif
		if (best == NULL)
			continue;
 found:
		sched_suspect_unlist(s, t);
		s->s_stats.suspect_replicas++;
		sched_send(s, best, t, SEND_REPLICA);
	}
}

/*
 * After every event: the copies tasks want (verify, copies), fresh work
 * from the master queue, then a replica of every suspect's task, then
 * replicas for the closed batches whose queue has run dry, in open
 * order.  WQ and RWQ never replicate the tail, nor does anybody while a
 * batch is open: its queue may fill again.  What is left idle then is
 * measured.
 */
static void
sched_refill(struct sched *s)
{
	struct batch	*b;

	if (s->s_nfirst != NULL)
		sched_replicate_needs(s);
	sched_fill(s);
	if (s->s_nfirst != NULL)
		sched_replicate_needs(s);
	if (s->s_sfirst != NULL)
		sched_replicate_suspects(s);
	SCHED_DRAINED(s, b) {
		s->s_stats.batches_visited++;
		if (b->b_nqueued > 0 || b->b_rfirst == NULL || !b->b_closed)
			continue;
		if (b->b_cfg.policy == SCHED_POLICY_RR)
			sched_replicate_rr(s, b);
		else if (b->b_cfg.policy == SCHED_POLICY_R3Q)
			sched_replicate_r3q(s, b);
	}
	sched_note_idle(s);
	/* Copies out there: the periodic look is due in a while. */
	if (s->s_stats.held + s->s_stats.running == 0)
		s->s_scan_at = 0;
	else if (s->s_scan_at == 0)
		s->s_scan_at = s->s_now + sched_scan_period(s);
}

/*
 * Balancing of held tasks (doc/algorithms.md §4).
 *
 * The Power paper ("Dynamic load balancing by parameterising the load",
 * doc/algorithms.md §4 and its reference [4]) has each processor send its Power (tasks processed in a fixed
 * interval) to its neighbours; P_i, on receiving Power_j with Power_i >
 * Power_j >= 0, asks P_j for Power_i - Power_j tasks, which go to P_i's
 * Active Queue, served before its own Schedule Queue.  Here the master
 * plays every processor's part, since it holds the books of every local
 * queue:
 *  - Power is measured by the core, not reported: the results a worker
 *    returned for copies it held (sched_vote(), sched_failed()) between two
 *    boundaries of power_interval, the boundaries at exact multiples of the
 *    interval from its start (sched_power_roll(), due at sched_deadline()).
 *    A worker that lies about its speed (the heartbeat's count) cannot
 *    attract tasks; one that returns results fast really is fast.
 *  - Moving a task from j to i is two-phase, so that it is never held twice
 *    nor lost.  The core asks j for its HELD copy (SCHED_WITHDRAW) and
 *    reserves room for it on i; j drops it only if it has not started it
 *    and says which (sched_released()).  Released: the copy is forgotten
 *    and the task is sent to i marked active (SCHED_ASSIGN, active: the
 *    front of i's local queue, the Active Queue); if i is gone or has no
 *    room any more, the task goes to the front of the master queue.
 *    Started (the withdrawal crossed the start): the task stays on j.
 *  - Only a task with one copy, held, of a batch that balances, may move;
 *    the newest held copy moves first (it would run last), and a copy that
 *    came by a move never moves again.  A move never exceeds the target's
 *    room: its cap under queue_factor less what it holds and what is on
 *    its way to it.
 */

/* May copy c, on its worker, move under balancing mode m? */
static int
sched_movable(const struct copy *c, enum sched_balance m)
{
	const struct task	*t = c->c_task;

	return (!c->c_running && !c->c_withdraw && !c->c_moved &&
	    t->t_state == TASK_SENT && t->t_ncopies == 1 &&
	    t->t_batch->b_cfg.balance == m);
}

/* Room left on w for a copy of a task of b, moves under way counted. */
static uint64_t
sched_room(const struct worker *w, const struct batch *b)
{
	uint64_t	 cap = sched_cap(w, b), n;

	n = (uint64_t)w->w_ncopies + w->w_nincoming;
	return (sched_can_run(w, b) && n < cap ? cap - n : 0);
}

/* Ask c's worker for it back, for worker to; room is reserved there. */
static void
sched_withdraw(struct sched *s, struct copy *c, struct worker *to)
{
	c->c_withdraw = 1;
	c->c_hasto = 1;
	c->c_to = to->w_id;
	c->c_toseq = to->w_seq;
	c->c_worker->w_noutgoing++;
	to->w_nincoming++;
	sched_room_update(s, to);
	s->s_stats.withdrawals++;
	sched_emit(s, SCHED_WITHDRAW, c->c_worker->w_id, c->c_task->t_id,
	    c->c_task->t_batch->b_id, 0, 0);
}

/*
 * The Power paper's section 2.2: P_i asks P_j for k tasks.  The newest movable held
 * copies of j that i may take, as many as i has room for.  Returns the
 * number asked for.
 */
static uint32_t
sched_move(struct sched *s, struct worker *j, struct worker *i, uint32_t k,
    enum sched_balance m)
{
	struct copy	*c, *prev;
	uint32_t	 n = 0;

	for (c = j->w_lastcopy; c != NULL && n < k; c = prev) {
		prev = c->c_wprev;
		if (!sched_movable(c, m) ||
		    sched_room(i, c->c_task->t_batch) == 0 ||
		    !sched_may_copy(c->c_task, i))
			continue;
		sched_withdraw(s, c, i);
		n++;
	}
	return (n);
}

/* Are workers a and b (places in join order, of n) neighbours? */
static int
sched_neighbours(enum sched_topology topo, size_t a, size_t b, size_t n)
{
	if (a == b)
		return (0);
	switch (topo) {
	case SCHED_TOPO_ALL:
		return (1);
	case SCHED_TOPO_TREE:
		/* The Power paper's Fig. 2: k's children are 2k+1 and 2k+2. */
		return ((a > 0 && (a - 1) / 2 == b) ||
		    (b > 0 && (b - 1) / 2 == a));
	default:
		return ((a + 1) % n == b || (b + 1) % n == a);
	}
}

/*
 * The paper's rule at an interval's end, for the batches of mode m
 * (SCHED_BALANCE_POWER, or SCHED_BALANCE_ONE: its static baseline, one
 * task per exchange): for each worker i, in join order, and each
 * neighbour j with Power_i > Power_j >= 0, i asks j for Power_i - Power_j
 * tasks (the Power paper's section 2.2), bounded by j's movable held copies and
 * i's room.  Powers are those of the interval that just ended; a worker
 * measured over no whole interval yet takes no part.
 */
static void
sched_balance_pairs(struct sched *s, enum sched_balance m)
{
	struct worker	*wi, *wj;
	size_t		 i, j, n = s->s_nworkers;
	uint32_t	 k;

	for (i = 0; i < n; i++) {
		wi = s->s_workers[i];
		if (!wi->w_pvalid)
			continue;
		for (j = 0; j < n; j++) {
			wj = s->s_workers[j];
			if (!sched_neighbours(s->s_topo, i, j, n) ||
			    !wj->w_pvalid || wi->w_power <= wj->w_power)
				continue;
			k = m == SCHED_BALANCE_ONE ? 1 :
			    wi->w_power - wj->w_power;
			(void)sched_move(s, wj, wi, k, m);
		}
	}
}

/* A worker's load for global balancing: copies it will have. */
static uint64_t
sched_gload(const struct worker *w)
{
	return ((uint64_t)w->w_ncopies + w->w_nincoming - w->w_noutgoing);
}

/*
 * Global balancing (beyond the paper: its section 4 leaves the whole
 * system open), for the batches of mode m.  Each worker's expected
 * finishing time is F = load / rate, load its copies (moves under way
 * counted) and rate its Power in the last interval it was never short of
 * work (a worker that ran dry says little of its speed; its latest Power
 * otherwise).  Repeatedly take the worker with the latest F that has a
 * movable copy and give its newest one to the worker that would then
 * finish first, if that one still finishes no later than the source
 * would without it: (load_i + 1) / r_i <= (load_j - 1) / r_j.  That
 * condition keeps the pair's order, so moving the task back would need
 * load_j / r_j <= load_i / r_i, which it has just made false: with steady
 * rates nothing goes back and forth.  Rates do change, so a copy that
 * came by a move never moves again, and a withdrawal under way is not
 * counted twice.  A worker that has measured 0 (stalled) with copies is
 * the latest of all.
 */
static void
sched_balance_global(struct sched *s, enum sched_balance m)
{
	struct worker	*w, *src, *dst;
	struct copy	*c;
	uint64_t	 lj, li, bl, budget;
	size_t		 i;

	budget = s->s_stats.held + s->s_nworkers;
	for (i = 0; i < s->s_nworkers; i++)
		s->s_workers[i]->w_balskip = 0;
	while (budget-- > 0) {
		/* The source: latest finish, lj / rj, with a movable copy. */
		src = NULL;
		for (i = 0; i < s->s_nworkers; i++) {
			w = s->s_workers[i];
			if (w->w_balskip || !w->w_pvalid ||
			    (lj = sched_gload(w)) < 1)
				continue;
			if (src == NULL || lj * src->w_rate >
			    sched_gload(src) * w->w_rate)
				src = w;
		}
		if (src == NULL)
			return;
		for (c = src->w_lastcopy; c != NULL && !sched_movable(c, m);
		    c = c->c_wprev)
			;
		if (c == NULL) {
			src->w_balskip = 1;
			continue;
		}
		/* The target: earliest finish with one more, (li + 1) / ri. */
		dst = NULL;
		bl = 0;
		for (i = 0; i < s->s_nworkers; i++) {
			w = s->s_workers[i];
			if (w == src || !w->w_pvalid || w->w_rate == 0 ||
			    sched_room(w, c->c_task->t_batch) == 0 ||
			    !sched_may_copy(c->c_task, w))
				continue;
			li = sched_gload(w) + 1;
			if (dst == NULL || li * dst->w_rate < bl * w->w_rate) {
				dst = w;
				bl = li;
			}
		}
		lj = sched_gload(src);
		if (dst == NULL ||
		    bl * src->w_rate > (lj - 1) * dst->w_rate) {
			src->w_balskip = 1;	/* no gain from it */
			continue;
		}
		sched_withdraw(s, c, dst);
	}
}

/*
 * The modes the live batches balance under, as a mask of 1 << mode, from
 * their tally.
 */
static unsigned
sched_balance_modes(const struct sched *s)
{
	unsigned	 m = 0, i;

	for (i = 0; i < SCHED_BALANCE_COUNT; i++)
		if (s->s_nbal[i] > 0)
			m |= 1u << i;
	return (m & ~(1u << SCHED_BALANCE_NONE));
}

/*
 * Power's interval boundaries that `now` has passed.  Counts go to the
 * interval they fell in: what was counted since the last boundary is the
 * Power of the interval that ended at it, and any whole interval after it
 * had none (no result came, or this would have run).  Then the balancing
 * modes of the live batches run once.  Returns whether a boundary passed.
 */
static int
sched_power_roll(struct sched *s)
{
	struct worker	*w;
	uint64_t	 n;
	size_t		 i;
	unsigned	 modes;

	if (s->s_power_at == 0) {
		s->s_power_at = s->s_now + s->s_pinterval;
		return (0);
	}
	if (s->s_now < s->s_power_at)
		return (0);
	n = (s->s_now - s->s_power_at) / s->s_pinterval + 1;
	for (i = 0; i < s->s_nworkers; i++) {
		w = s->s_workers[i];
		w->w_power = n == 1 ? w->w_pcount : 0;
		/* Short of work: its Power says less than its speed. */
		if (!w->w_starved || w->w_power > w->w_rate || !w->w_pvalid)
			w->w_rate = w->w_power;
		w->w_pcount = 0;
		w->w_starved = w->w_ncopies < w->w_ncpu &&
		    s->s_stats.queued == 0;
		/* Here for the whole interval that ended at s_power_at? */
		if (w->w_joined + s->s_pinterval <= s->s_power_at)
			w->w_pvalid = 1;
	}
	s->s_power_at += n * s->s_pinterval;
	if ((modes = sched_balance_modes(s)) == 0 || s->s_stats.held == 0)
		return (1);
	if (modes & (1u << SCHED_BALANCE_ONE))
		sched_balance_pairs(s, SCHED_BALANCE_ONE);
	if (modes & (1u << SCHED_BALANCE_POWER))
		sched_balance_pairs(s, SCHED_BALANCE_POWER);
	if (modes & (1u << SCHED_BALANCE_GLOBAL))
		sched_balance_global(s, SCHED_BALANCE_GLOBAL);
	return (1);
}

/* Free the tasks of a batch, and their side structs. */
static void
sched_chunks_free(struct batch *b)
{
	struct tchunk	*tc;
	size_t		 i;

	while ((tc = b->b_chunks) != NULL) {
		b->b_chunks = tc->tc_next;
		for (i = 0; i < tc->tc_n; i++) {
			if (tc->tc_tasks[i].t_aux == NULL)
				continue;
			free(tc->tc_tasks[i].t_aux->x_failed);
			free(tc->tc_tasks[i].t_aux->x_votes);
			free(tc->tc_tasks[i].t_aux);
		}
		free(tc);
	}
	free(b->b_heap);
}

/* Forget a batch and its tasks; it has no copies left. */
static void
sched_batch_free(struct sched *s, struct batch *b)
{
	struct tchunk	*tc;
	size_t		 i;

	if (b->b_prev != NULL)
		b->b_prev->b_next = b->b_next;
	else
		s->s_bfirst = b->b_next;
	if (b->b_next != NULL)
		b->b_next->b_prev = b->b_prev;
	else
		s->s_blast = b->b_prev;
	sched_batch_books(s, b, 1);
	(void)u64map_del(&s->s_bmap, b->b_id, NULL);
	kc_find(s, b->b_cfg.kind)->k_nb--;
	sched_batch_tally(s, b, -1);
	for (tc = b->b_chunks; tc != NULL; tc = tc->tc_next)
		for (i = 0; i < tc->tc_n; i++)
			tab_remove(s, &tc->tc_tasks[i]);
	sched_chunks_free(b);
	free(b->b_tmax);
	free(b->b_tmin);
	free(b);
	tab_shrink(s);
	sched_caps_changed(s);
}

/*
 * Once b is closed and every task of it is done, failed or cancelled, say
 * so with the batch's report and forget it; returns whether it did.  The
 * synchronisation wait began at the first replica (RR, R3Q) or, with
 * none, at the first idle moment (WQ, RWQ); 0 if neither happened.
 */
static int
sched_batch_check(struct sched *s, struct batch *b)
{
	struct sched_action	*a;

	if (!b->b_closed || b->b_nfinished < b->b_ntasks)
		return (0);
	if (!b->b_synced)
		b->b_report.t_sync = b->b_idle ? b->b_tidle : 0;
	b->b_report.t_done = s->s_now;
	a = sched_emit(s, SCHED_BATCH_DONE, 0, 0, b->b_id, 0, 0);
	a->report = b->b_report;
	sched_batch_free(s, b);
	return (1);
}

/* A name of names[0..n), case-insensitively: its index, or -1. */
static int
sched_name_index(const char *const *names, unsigned n, const char *str)
{
	unsigned	 i;

	if (str == NULL)
		return (-1);
	for (i = 0; i < n; i++)
		if (strcasecmp(str, names[i]) == 0)
			return ((int)i);
	return (-1);
}

const char *
sched_policy_name(enum sched_policy p)
{
	if ((unsigned)p >= SCHED_POLICY_COUNT)
		return ("?");
	return (sched_policy_names[p]);
}

/* The policies' names, comma-separated, for a message that lists them. */
const char *
sched_policy_list(void)
{
	static char	 list[64];
	size_t		 off = 0;
	int		 i;

	if (list[0] != '\0')
		return (list);
	for (i = 0; i < SCHED_POLICY_COUNT; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
		    i > 0 ? ", " : "", sched_policy_names[i]);
	return (list);
}

/* Parse a policy name, case-insensitively. */
int
sched_policy_parse(const char *str, enum sched_policy *p)
{
	int	 i;

	if ((i = sched_name_index(sched_policy_names, SCHED_POLICY_COUNT,
	    str)) == -1)
		return (-1);
	if (p != NULL)
		*p = (enum sched_policy)i;
	return (0);
}

const char *
sched_balance_name(enum sched_balance m)
{
	if ((unsigned)m >= SCHED_BALANCE_COUNT)
		return ("?");
	return (sched_balance_names[m]);
}

/* Parse a balancing mode's name, case-insensitively. */
int
sched_balance_parse(const char *str, enum sched_balance *m)
{
	int	 i;

	if ((i = sched_name_index(sched_balance_names, SCHED_BALANCE_COUNT,
	    str)) == -1)
		return (-1);
	if (m != NULL)
		*m = (enum sched_balance)i;
	return (0);
}

const char *
sched_topology_name(enum sched_topology t)
{
	if ((unsigned)t >= SCHED_TOPO_COUNT)
		return ("?");
	return (sched_topo_names[t]);
}

/* Parse a topology's name, case-insensitively. */
int
sched_topology_parse(const char *str, enum sched_topology *t)
{
	int	 i;

	if ((i = sched_name_index(sched_topo_names, SCHED_TOPO_COUNT,
	    str)) == -1)
		return (-1);
	if (t != NULL)
		*t = (enum sched_topology)i;
	return (0);
}

struct sched *
sched_new(void)
{
	struct sched	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (NULL);
	s->s_fault.grace_ns = SCHED_GRACE_DEFAULT;
	s->s_fault.suspect_limit = SCHED_SUSPECT_LIMIT_DEFAULT;
	s->s_fault.suspect_window_ns = SCHED_WINDOW_DEFAULT;
	s->s_fault.cooldown_ns = SCHED_COOLDOWN_DEFAULT;
	s->s_pinterval = SCHED_POWER_INTERVAL_DEFAULT;
	return (s);
}

/*
 * Change Power's interval (clamped to SCHED_POWER_INTERVAL_MIN..MAX) and
 * the topology of the paper's pairs.  A new interval starts now: counts
 * so far are dropped, the Powers measured stay until its end.
 */
void
sched_set_balance(struct sched *s, uint64_t interval, enum sched_topology t,
    uint64_t now)
{
	size_t	 i;

	s->s_now = now;
	if (interval < SCHED_POWER_INTERVAL_MIN)
		interval = SCHED_POWER_INTERVAL_MIN;
	if (interval > SCHED_POWER_INTERVAL_MAX)
		interval = SCHED_POWER_INTERVAL_MAX;
	s->s_pinterval = interval;
	s->s_topo = (unsigned)t < SCHED_TOPO_COUNT ? t : SCHED_TOPO_RING;
	s->s_power_at = now + interval;
	for (i = 0; i < s->s_nworkers; i++)
		s->s_workers[i]->w_pcount = 0;
}

/*
 * Change the suspect detection settings.  The suspicions counted so far
 * are forgotten; a cool-down under way runs to its end.
 */
void
sched_set_fault(struct sched *s, const struct sched_fault_config *f)
{
	size_t	 i;

	s->s_fault = *f;
	if (s->s_fault.suspect_limit > SCHED_SUSPECT_LIMIT_MAX)
		s->s_fault.suspect_limit = SCHED_SUSPECT_LIMIT_MAX;
	for (i = 0; i < s->s_nworkers; i++)
		s->s_workers[i]->w_ringlen = s->s_workers[i]->w_ringhead = 0;
}

/* Free the core and everything it still holds. */
void
sched_free(struct sched *s)
{
	struct batch	*b;
	struct worker	*w;
	struct copy	*c;
	size_t		 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->s_nworkers; i++) {
		w = s->s_workers[i];
		while ((c = w->w_copies) != NULL) {
			w->w_copies = c->c_wnext;
			free(c);
		}
		free(w->w_ring);
		free(w->w_khigh);
		free(w);
	}
	while ((b = s->s_bfirst) != NULL) {
		s->s_bfirst = b->b_next;
		sched_chunks_free(b);
		free(b->b_tmax);
		free(b->b_tmin);
		free(b);
	}
	while ((c = s->s_cfree) != NULL) {
		s->s_cfree = c->c_tnext;
		free(c);
	}
	u64map_free(&s->s_bmap);
	free(s->s_akinds);
	free(s->s_workers);
	free(s->s_wslots);
	free(s->s_cand);
	idx_free(&s->s_room);
	idx_free(&s->s_free);
	idx_free(&s->s_idle);
	idx_free(&s->s_blind);
	free(s->s_wheap);
	free(s->s_slots);
	free(s->s_act);
	free(s->s_kc);
	free(s);
}

/* A worker joined; its machine is known by its id only. */
int
sched_worker_join(struct sched *s, uint32_t wid, uint32_t ncpu,
    uint32_t kinds, uint64_t now)
{
	return (sched_worker_join_node(s, wid, wid, ncpu, kinds, now));
}

/* A worker joined able to run the kinds in the mask kinds (bit k: kind k). */
int
sched_worker_join_node(struct sched *s, uint32_t wid, uint64_t node,
    uint32_t ncpu, uint32_t kinds, uint64_t now)
{
	uint32_t	 v[32];
	size_t		 n = 0;
	uint32_t	 k;

	for (k = 0; k < 32; k++)
		if ((kinds >> k) & 1)
			v[n++] = k;
	return (sched_worker_join_kinds(s, wid, node, ncpu, v, n, now));
}

/* Order kinds for qsort(). */
static int
kind_cmp(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Build a kind set from nkinds kinds (any numbers, repeats allowed): the
 * kinds below SCHED_KLOW as bits in *low, the others sorted and unique in
 * a malloc'd *high (NULL if none) of *nhigh.  -1 if memory is short.
 */
static int
sched_kinds_make(const uint32_t *kinds, size_t nkinds, uint64_t *low,
    uint32_t **high, size_t *nhigh)
{
	uint32_t	*h = NULL;
	size_t		 i, n = 0, u;

	*low = 0;
	for (i = 0; i < nkinds; i++) {
		if (kinds[i] < SCHED_KLOW)
			*low |= 1ULL << kinds[i];
		else
			n++;
	}
	if (n > 0) {
		if (n > SIZE_MAX / sizeof(*h) ||
		    (h = calloc(n, sizeof(*h))) == NULL)
			return (-1);
		for (i = n = 0; i < nkinds; i++)
			if (kinds[i] >= SCHED_KLOW)
				h[n++] = kinds[i];
		qsort(h, n, sizeof(*h), kind_cmp);
		for (i = u = 0; i < n; i++)
			if (u == 0 || h[u - 1] != h[i])
				h[u++] = h[i];
		n = u;
	}
	*high = h;
	*nhigh = n;
	return (0);
}

/* A worker joined that answers for itself: its group is its machine. */
int
sched_worker_join_kinds(struct sched *s, uint32_t wid, uint64_t node,
    uint32_t ncpu, const uint32_t *kinds, size_t nkinds, uint64_t now)
{
	return (sched_worker_join_group(s, wid, node, node, ncpu, kinds,
	    nkinds, now));
}

/*
 * A worker joined with ncpu CPUs, able to run the nkinds kinds in kinds
 * (any numbers, repeats allowed).  It goes last in join order and gets
 * work at once.  node names the machine behind it (masterd: a digest of
 * its certificate's name), the same when it reconnects under a new id, so
 * that a task whose copy failed there is not sent back to it.  group
 * names who answers for its outputs: its node, or for workers whose
 * identity rests on one relay's word, that relay's, so that all of them
 * give one verify vote, take one of a task's distinct copies and are
 * blamed together for an output outvoted.  Nothing changes on error.
 */
int
sched_worker_join_group(struct sched *s, uint32_t wid, uint64_t node,
    uint64_t group, uint32_t ncpu, const uint32_t *kinds, size_t nkinds,
    uint64_t now)
{
	struct worker	**v, *w;
	size_t		  max;

	s->s_now = now;
	if (ncpu == 0 || (kinds == NULL && nkinds > 0)) {
		errno = EINVAL;
		return (-1);
	}
	if (sched_worker_find(s, wid, NULL) != NULL) {
		errno = EEXIST;
		return (-1);
	}
	if (s->s_nworkers == s->s_maxworkers) {
		max = s->s_maxworkers > 0 ? s->s_maxworkers * 2 : 16;
		if (max > SIZE_MAX / sizeof(*v) ||
		    (v = realloc(s->s_workers, max * sizeof(*v))) == NULL)
			goto nomem;
		s->s_workers = v;
		if ((v = realloc(s->s_cand, max * sizeof(*v))) == NULL)
			goto nomem;
		s->s_cand = v;
		if (idx_grow(&s->s_room, max) == -1 ||
		    idx_grow(&s->s_free, max) == -1 ||
		    idx_grow(&s->s_idle, max) == -1 ||
		    idx_grow(&s->s_blind, max) == -1)
			goto nomem;
		if ((v = realloc(s->s_wheap, max * sizeof(*v))) == NULL)
			goto nomem;
		s->s_wheap = v;
		s->s_maxworkers = max;
	}
	if (kc_reserve(s, nkinds) == -1)
		goto nomem;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		goto nomem;
	if (sched_kinds_make(kinds, nkinds, &w->w_klow, &w->w_khigh,
	    &w->w_nkhigh) == -1) {
		free(w);
		goto nomem;
	}
	w->w_id = wid;
	w->w_node = node;
	w->w_group = group;
	w->w_ncpu = ncpu;
	w->w_seq = s->s_wseq++;
	w->w_idx = s->s_nworkers;
	s->s_workers[s->s_nworkers++] = w;
	if (sched_wtab_build(s, s->s_nworkers) == -1) {
		s->s_nworkers--;
		free(w->w_khigh);
		free(w);
		goto nomem;
	}
	kc_count(s, w, 1);
	sched_room_update(s, w);
	sched_wake(s, w);
	sched_alive_touch(s, w);
	s->s_stats.workers++;
	w->w_joined = now;
	w->w_starved = 1;
	(void)sched_power_roll(s);
	sched_refill(s);
	return (0);
 nomem:
	errno = ENOMEM;
	return (-1);
}

/*
 * Worker wid now runs the nkinds kinds in kinds instead of those it had
 * (workerd reloaded its configuration).  Copies it holds stay: the worker
 * runs them under the definition it received them with.  Only new copies
 * follow the new set: queued tasks of a kind no worker offers any more
 * wait for one that does, as they would for any kind, and a task that
 * failed everywhere else gives up if this was its last candidate.  -1
 * with errno ENOENT
 * (no such worker), EINVAL or ENOMEM; nothing changes on error.
 */
int
sched_worker_kinds(struct sched *s, uint32_t wid, const uint32_t *kinds,
    size_t nkinds, uint64_t now)
{
	struct worker	*w;
	uint32_t	*high;
	uint64_t	 low;
	size_t		 nhigh;

	s->s_now = now;
	if (kinds == NULL && nkinds > 0) {
		errno = EINVAL;
		return (-1);
	}
	if ((w = sched_worker_find(s, wid, NULL)) == NULL) {
		errno = ENOENT;
		return (-1);
	}
	if (kc_reserve(s, nkinds) == -1 ||
	    sched_kinds_make(kinds, nkinds, &low, &high, &nhigh) == -1) {
		errno = ENOMEM;
		return (-1);
	}
	kc_count(s, w, -1);
	free(w->w_khigh);
	w->w_klow = low;
	w->w_khigh = high;
	w->w_nkhigh = nhigh;
	kc_count(s, w, 1);
	sched_wake(s, w);
	sched_strand_check(s);
	sched_refill(s);
	return (0);
}

/*
 * Pause worker wid (on) or let it go on (off): a paused worker gets no new
 * copy; those it holds stay with it, may finish, and are replicated
 * elsewhere as any copy that stands still (masterd pauses a worker whose
 * network output is full).
 */
int
sched_worker_pause(struct sched *s, uint32_t wid, int on, uint64_t now)
{
	struct worker	*w;

	s->s_now = now;
	if ((w = sched_worker_find(s, wid, NULL)) == NULL) {
		errno = ENOENT;
		return (-1);
	}
	if (w->w_paused == (on != 0))
		return (0);
	w->w_paused = on != 0;
	sched_room_update(s, w);
	if (!w->w_paused) {
		sched_wake(s, w);
		sched_refill(s);
	}
	return (0);
}

/*
 * Worker wid drains: it gets no new copy from now on, for good
 * (a pause that nothing lifts); what it holds it either finishes or gives
 * back with sched_handback(), and then it leaves (sched_worker_lost()).
 */
int
sched_worker_drain(struct sched *s, uint32_t wid, uint64_t now)
{
	struct worker	*w;

	s->s_now = now;
	if ((w = sched_worker_find(s, wid, NULL)) == NULL) {
		errno = ENOENT;
		return (-1);
	}
	w->w_draining = 1;
	sched_room_update(s, w);	/* out of s_room: no new copy */
	return (0);
}

/*
 * Worker wid gave its copy of task id back unasked (it drains): a held
 * copy it dropped, or a running one it interrupted.  The copy goes; the
 * task goes back to the front of its queue, as after a lost worker, but
 * no failure and no kill is counted: the worker did nothing wrong.  A
 * pending withdrawal of the copy is void.  1, or -1 if wid holds no copy
 * of id (the task finished, or was withdrawn, meanwhile).
 */
int
sched_handback(struct sched *s, uint32_t wid, uint64_t id, uint64_t now)
{
	struct worker	*w;
	struct batch	*b;
	struct task	*t;
	struct copy	*c;

	s->s_now = now;
	if ((t = tab_find(s, id)) == NULL ||
	    (w = sched_worker_find(s, wid, NULL)) == NULL ||
	    (c = sched_copy_find(t, w)) == NULL)
		return (-1);
	b = t->t_batch;
	sched_copy_drop(s, c);
	s->s_stats.handed_back++;
	if (t->t_ncopies > 0) {
		sched_need(s, t);	/* copies: one more elsewhere */
		sched_refill(s);
		return (1);
	}
	sched_r_remove(b, t);
	sched_suspect_unlist(s, t);
	sched_queue_push_front(s, b, t);
	sched_refill(s);
	return (1);
}

/* How many connected workers run kind; O(1). */
size_t
sched_kind_workers(const struct sched *s, uint32_t kind)
{
	const struct kcount	*k;

	return ((k = kc_find(s, kind)) != NULL ? k->k_n : 0);
}

/* Can some worker other than the machines t failed on run it? */
static int
sched_anyone_may_run(const struct sched *s, const struct task *t)
{
	const struct worker	*w;
	size_t			 i;

	for (i = 0; i < s->s_nworkers; i++) {
		w = s->s_workers[i];
		if (sched_can_run(w, t->t_batch) && !sched_excluded(t, w))
			return (1);
	}
	return (0);
}

/*
 * After a worker left: a queued task that failed on every machine still
 * here that could run it has nowhere left to go, and gives up rather than
 * wait.  Such tasks are rare (the excluded lists), so the walk is too.
 */
static void
sched_strand_check(struct sched *s)
{
	struct batch	*b, *bnext;
	struct task	*t, *tnext;
	int		 last;

#ifdef SCHED_REFERENCE
	for (b = s->s_bfirst; b != NULL; b = bnext) {
		bnext = b->b_next;
#else
	/* Only the batches with excluded tasks, in open order. */
	for (b = s->s_xfirst; b != NULL; b = bnext) {
		bnext = b->b_xnext;
#endif
		s->s_stats.batches_visited++;
		for (t = b->b_xfirst; t != NULL; t = tnext) {
			tnext = t->t_next;
			if (sched_anyone_may_run(s, t))
				continue;
			last = b->b_closed && b->b_nfinished + 1 == b->b_ntasks;
			sched_queue_take(s, b, t);
			sched_give_up(s, t, UINT32_MAX, SCHED_FAIL_ATTEMPTS);
			if (last)
				break;		/* b is gone */
		}
	}
}

/* End the cool-downs due by when; returns how many ended. */
static int
sched_cool_end(struct sched *s, uint64_t when)
{
	struct worker	*w;
	int		 n = 0;
#ifdef SCHED_REFERENCE
	size_t		 i;

	/* the walk over every worker the list replaces */
	for (i = 0; i < s->s_nworkers; i++) {
		w = s->s_workers[i];
		if (!w->w_cooling || w->w_cool_until > when)
			continue;
#else
	while ((w = s->s_coolfirst) != NULL && w->w_cool_until <= when) {
#endif
		sched_cool_unlink(s, w);
		w->w_cooling = 0;
		w->w_cool_until = 0;
		w->w_ringlen = w->w_ringhead = 0;
		s->s_stats.cooling_workers--;
		sched_room_update(s, w);
		sched_wake(s, w);
		n++;
	}
	return (n);
}

/*
 * Lost a worker.  Its copies are forgotten (no CANCEL: it is gone); every
 * task left with no copy goes back to the front of its batch's queue, in
 * the order it had been assigned to that worker, so it is sent next.  A
 * task that was running there counts one kill; one whose attempts have
 * killed max_kills workers gives up instead of killing more.
 */
void
sched_worker_lost(struct sched *s, uint32_t wid, uint64_t now)
{
	struct worker	*w;
	struct task	*t;
	struct copy	*c;
	size_t		 idx;

	s->s_now = now;
	if ((w = sched_worker_find(s, wid, &idx)) == NULL)
		return;
	memmove(&s->s_workers[idx], &s->s_workers[idx + 1],
	    (s->s_nworkers - idx - 1) * sizeof(s->s_workers[0]));
	s->s_nworkers--;
	s->s_stats.workers--;
	for (; idx < s->s_nworkers; idx++)
		s->s_workers[idx]->w_idx = idx;
	w->w_idx = IDX_NONE;
	sched_wtab_refill(s);

	if (w->w_cooling) {
		s->s_stats.cooling_workers--;
		sched_cool_unlink(s, w);
	}
	kc_count(s, w, -1);
	while ((c = w->w_lastcopy) != NULL) {
		t = c->c_task;
		if (c->c_running) {
			sched_aux(t)->x_kills++;
			s->s_stats.killed++;
		}
		sched_copy_drop(s, c);
		if (t->t_ncopies > 0) {
			sched_need(s, t);	/* copies: one more elsewhere */
			continue;
		}
		sched_r_remove(t->t_batch, t);
		sched_suspect_unlist(s, t);
		if (t->t_aux != NULL &&
		    t->t_aux->x_kills >= t->t_batch->b_cfg.max_kills)
			sched_give_up(s, t, wid, SCHED_FAIL_KILLS);
		else
			sched_queue_push_front(s, t->t_batch, t);
	}
	if (w->w_cand) {
		for (idx = 0; s->s_cand[idx] != w; idx++)
			;
		s->s_cand[idx] = s->s_cand[--s->s_ncand];
	}
	sched_room_rebuild(s);	/* the places after it moved */
	free(w->w_ring);
	free(w->w_khigh);
	free(w);
	/* If every worker left is cooling down, their cool-downs end. */
	if (s->s_stats.workers > 0 &&
	    s->s_stats.cooling_workers == s->s_stats.workers)
		sched_cool_end(s, UINT64_MAX);
	sched_strand_check(s);
	sched_refill(s);
}

/* Is cfg a batch config the core can run? */
static int
sched_cfg_valid(const struct sched_batch_config *cfg)
{
	return (cfg != NULL && (unsigned)cfg->policy < SCHED_POLICY_COUNT &&
	    cfg->verify <= SCHED_VERIFY_MAX &&
	    (unsigned)cfg->balance < SCHED_BALANCE_COUNT);
}

/*
 * Make an open batch with no tasks, last in open order; NULL (ENOMEM,
 * nothing changed) if memory is short.  The caller checked cfg and id.
 */
static struct batch *
sched_open(struct sched *s, uint64_t id, const struct sched_batch_config *cfg)
{
	struct batch	*b;

	if (kc_reserve(s, 1) == -1 || (b = calloc(1, sizeof(*b))) == NULL) {
		errno = ENOMEM;
		return (NULL);
	}
	if (u64map_put(&s->s_bmap, id, (uintptr_t)b) == -1) {
		free(b);
		errno = ENOMEM;
		return (NULL);
	}
	b->b_id = id;
	b->b_seq = s->s_bseq++;
	b->b_cfg = *cfg;
	b->b_report.t_submit = s->s_now;
	if (b->b_cfg.queue_factor == 0)
		b->b_cfg.queue_factor = SCHED_QUEUE_FACTOR;
	if (b->b_cfg.max_attempts == 0)
		b->b_cfg.max_attempts = SCHED_MAX_ATTEMPTS;
	if (b->b_cfg.max_kills == 0)
		b->b_cfg.max_kills = SCHED_MAX_KILLS;
	if ((b->b_prev = s->s_blast) != NULL)
		s->s_blast->b_next = b;
	else
		s->s_bfirst = b;
	s->s_blast = b;
	kc_get(s, b->b_cfg.kind)->k_nb++;
	sched_batch_tally(s, b, 1);
	sched_caps_changed(s);
	return (b);
}

/*
 * Add n tasks to the open batch b, into its queue by (priority, add
 * order) (RR step 1, RWQ step 1): those of v, or with ids priority 0 and
 * one copy each.  They live in one chunk, so their addresses stay put as
 * the batch grows.  Nothing changes on error.
 */
static int
sched_add(struct sched *s, struct batch *b, const struct sched_task *v,
    const uint64_t *ids, size_t n)
{
	struct tchunk	*tc = NULL;
	struct task	*t;
	size_t		 i;

	for (i = 0; v != NULL && i < n; i++)
		if (v[i].copies > SCHED_COPIES_MAX) {
			errno = EINVAL;
			return (-1);
		}
	if (n > UINT32_MAX - b->b_ntasks) {
		errno = EINVAL;		/* heap indices are 32 bits */
		return (-1);
	}
	if (n > (SIZE_MAX - sizeof(*tc)) / sizeof(*t) ||
	    (tc = calloc(1, sizeof(*tc) + n * sizeof(*t))) == NULL ||
	    tab_reserve(s, n) == -1) {
		free(tc);
		errno = ENOMEM;
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (tab_find(s, v != NULL ? v[i].id : ids[i]) != NULL) {
			while (i-- > 0)
				tab_remove(s, &tc->tc_tasks[i]);
			free(tc);
			errno = EEXIST;
			return (-1);
		}
		t = &tc->tc_tasks[i];
		t->t_id = v != NULL ? v[i].id : ids[i];
		t->t_batch = b;
		tab_insert(s, t);
	}
	tc->tc_n = n;
	tc->tc_next = b->b_chunks;
	b->b_chunks = tc;
	for (i = 0; i < n; i++) {
		t = &tc->tc_tasks[i];
		t->t_state = TASK_QUEUED;
		t->t_order = s->s_addseq++;
		t->t_want = 1;
		if (v != NULL) {
			t->t_prio = v[i].priority;
			if (v[i].copies > 1)
				t->t_want = (uint8_t)v[i].copies;
		}
		sched_queue_insert(b, t);
	}
	b->b_ntasks += n;
	b->b_nqueued += n;
	s->s_stats.queued += n;
	s->s_fill_all = 1;
	sched_batch_books(s, b, 0);
	return (0);
}

/*
 * A new batch of n tasks, priority 0 and one copy each, opened, filled
 * and closed at once: FIFO behind the tasks already queued.  Nothing
 * changes on error.
 */
int
sched_submit(struct sched *s, uint64_t id,
    const struct sched_batch_config *cfg, const uint64_t *ids, size_t n,
    uint64_t now)
{
	struct batch	*b;
	int		 saved;

	s->s_now = now;
	if (!sched_cfg_valid(cfg) || ids == NULL || n == 0) {
		errno = EINVAL;
		return (-1);
	}
	if (sched_batch_find(s, id) != NULL) {
		errno = EEXIST;
		return (-1);
	}
	if ((b = sched_open(s, id, cfg)) == NULL)
		return (-1);
	if (sched_add(s, b, NULL, ids, n) == -1) {
		saved = errno;
		sched_batch_free(s, b);
		errno = saved;
		return (-1);
	}
	b->b_closed = 1;
	sched_batch_books(s, b, 0);
	sched_refill(s);
	return (0);
}

/*
 * Open a batch that takes tasks with sched_batch_add() until
 * sched_batch_close().  EINVAL for a bad config, EEXIST if a batch of
 * that id lives.
 */
int
sched_batch_open(struct sched *s, uint64_t id,
    const struct sched_batch_config *cfg, uint64_t now)
{
	s->s_now = now;
	if (!sched_cfg_valid(cfg)) {
		errno = EINVAL;
		return (-1);
	}
	if (sched_batch_find(s, id) != NULL) {
		errno = EEXIST;
		return (-1);
	}
	return (sched_open(s, id, cfg) != NULL ? 0 : -1);
}

/*
 * Add n tasks to an open batch; they are sent at once if workers have
 * room.  EINVAL if the batch is unknown or closed or a task wants more
 * than SCHED_COPIES_MAX copies, EEXIST if a task id lives already.
 * Nothing changes on error.
 */
int
sched_batch_add(struct sched *s, uint64_t id, const struct sched_task *v,
    size_t n, uint64_t now)
{
	struct batch	*b;

	s->s_now = now;
	if ((b = sched_batch_find(s, id)) == NULL || b->b_closed ||
	    (v == NULL && n > 0)) {
		errno = EINVAL;
		return (-1);
	}
	if (n == 0)
		return (0);
	if (sched_add(s, b, v, NULL, n) == -1)
		return (-1);
	sched_refill(s);
	return (0);
}

/*
 * No more tasks for a batch: it may be tail-replicated from now on, and
 * SCHED_BATCH_DONE comes once every task of it is done, failed or
 * cancelled, at once if they are already (an empty batch too).  EINVAL if
 * no open batch has that id.
 */
int
sched_batch_close(struct sched *s, uint64_t id, uint64_t now)
{
	struct batch	*b;

	s->s_now = now;
	if ((b = sched_batch_find(s, id)) == NULL || b->b_closed) {
		errno = EINVAL;
		return (-1);
	}
	b->b_closed = 1;
	sched_batch_books(s, b, 0);
	if (!sched_batch_check(s, b))
		sched_refill(s);
	return (0);
}

/*
 * A client withdraws one task: out of its queue, or every copy of it
 * cancelled (SCHED_CANCEL, counted as cancels).  It counts as finished
 * for its batch, which may be done now; no SCHED_TASK_FAILED.  A later
 * result for it is stale or a duplicate.  ENOENT if no live task has that
 * id, or it is done, failed or cancelled already.
 */
int
sched_task_cancel(struct sched *s, uint64_t id, uint64_t now)
{
	struct batch	*b;
	struct task	*t;

	s->s_now = now;
	if ((t = tab_find(s, id)) == NULL ||
	    (t->t_state != TASK_QUEUED && t->t_state != TASK_SENT)) {
		errno = ENOENT;
		return (-1);
	}
	b = t->t_batch;
	sched_suspect_unlist(s, t);
	sched_need_unlist(s, t);
	if (t->t_state == TASK_QUEUED)
		sched_queue_take(s, b, t);
	else {
		sched_r_remove(b, t);
		while (t->t_copies != NULL)
			sched_copy_cancel(s, t->t_copies);
	}
	t->t_state = TASK_CANCELLED;
	s->s_stats.cancelled++;
	sched_count(&b->b_report.cancelled);
	sched_batch_finish(s, b);
	sched_refill(s);
	return (0);
}

/*
 * Give up on a batch: drop its queued tasks, cancel every copy of its
 * tasks and forget it, without SCHED_BATCH_DONE.
 */
void
sched_batch_abort(struct sched *s, uint64_t id, uint64_t now)
{
	struct batch	*b;
	struct tchunk	*tc;
	struct task	*t;
	size_t		 i;

	s->s_now = now;
	if ((b = sched_batch_find(s, id)) == NULL)
		return;
	for (tc = b->b_chunks; tc != NULL; tc = tc->tc_next)
		for (i = 0; i < tc->tc_n; i++)
			sched_need_unlist(s, &tc->tc_tasks[i]);
	for (t = b->b_rfirst; t != NULL; t = t->t_next)
		while (t->t_copies != NULL)
			sched_copy_cancel(s, t->t_copies);
	s->s_stats.queued -= b->b_nqueued;
	if (b->b_nqueued > 0)
		s->s_fill_all = 1;	/* workers may take from another batch */
	sched_batch_free(s, b);
	sched_refill(s);
}

/* A held copy started running on its worker. */
void
sched_started(struct sched *s, uint32_t wid, uint64_t id, uint64_t now)
{
	struct worker	*w;
	struct task	*t;
	struct copy	*c;
	int		 suspect;

	s->s_now = now;
	if ((t = tab_find(s, id)) == NULL ||
	    (w = sched_worker_find(s, wid, NULL)) == NULL ||
	    (c = sched_copy_find(t, w)) == NULL || c->c_running)
		return;
	suspect = w->w_nsuspect > 0;
	sched_copy_start(s, c);
	sched_worker_alive(s, w);
	/* Only a worker cleared of suspicion can take more work now. */
	if (suspect && w->w_nsuspect == 0)
		sched_refill(s);
}

/*
 * A running copy reached the half-way point (section 3: the worker goes
 * from state 1 to state 2).  A copy whose start was not heard of is taken
 * as started now.  A suspect copy that moves is suspect no more.
 */
void
sched_progress(struct sched *s, uint32_t wid, uint64_t id, uint64_t now)
{
	struct worker	*w;
	struct task	*t;
	struct copy	*c;
	int		 suspect;

	s->s_now = now;
	if ((t = tab_find(s, id)) == NULL ||
	    (w = sched_worker_find(s, wid, NULL)) == NULL ||
	    (c = sched_copy_find(t, w)) == NULL || c->c_half)
		return;
	if (!c->c_running)
		sched_copy_start(s, c);
	suspect = w->w_nsuspect > 0;
	c->c_half = 1;
	sched_unsuspect(s, c);
	sched_order_touch(s, c);
	sched_worker_alive(s, w);
	if (suspect && w->w_nsuspect == 0)
		sched_refill(s);
}

/* Move an EWMA a quarter of the way to sample; the first one sets it. */
static void
sched_ewma(uint64_t *avg, int *has, uint64_t sample)
{
	if (!*has) {
		*avg = sample;
		*has = 1;
	} else if (sample >= *avg)
		*avg += (sample - *avg) / 4;
	else
		*avg -= (*avg - sample) / 4;
}

/*
 * Fold one result's timing into w's estimates: the round trip is the time
 * since copy c was assigned less the time the task spent at the worker
 * (no sample if the worker claims more than that), the task time is the
 * execution alone.  EWMA with weight 1/4 for the new sample, rounded
 * towards the old value; the first sample initialises.
 */
static void
sched_estimate_update(struct worker *w, const struct copy *c,
    const struct sched_timing *timing, uint64_t now)
{
	uint64_t	 elapsed;

	elapsed = now > c->c_sent ? now - c->c_sent : 0;
	if (timing->at_worker_ns <= elapsed)
		sched_ewma(&w->w_rtt, &w->w_hasrtt,
		    elapsed - timing->at_worker_ns);
	sched_ewma(&w->w_task, &w->w_hastask, timing->exec_ns);
}

/* A result without timing; see sched_vote(). */
enum sched_verdict
sched_done(struct sched *s, uint32_t wid, uint64_t id, uint64_t now)
{
	return (sched_vote(s, wid, id, 0, NULL, now));
}

/* A result of a batch that does not verify; see sched_vote(). */
enum sched_verdict
sched_done_timed(struct sched *s, uint32_t wid, uint64_t id,
    const struct sched_timing *timing, uint64_t now)
{
	return (sched_vote(s, wid, id, 0, timing, now));
}

/*
 * The machines whose outputs of t differ from the verified one (digest)
 * are suspect, and counted: bit-identical answers are the design, so a
 * different one is a fault or a lie.
 */
static void
sched_blame_votes(struct sched *s, const struct task *t, uint64_t digest,
    uint32_t by)
{
	const struct task_aux	*x = t->t_aux;
	struct worker		*w;
	size_t			 i, k;

	for (k = 0; k < x->x_nvotes; k++) {
		if (x->x_votes[k].v_digest == digest)
			continue;
		s->s_stats.disagreed++;
		for (i = 0; i < s->s_nworkers; i++) {
			w = s->s_workers[i];
			if (w->w_group == x->x_votes[k].v_node && w->w_id != by)
				sched_worker_suspected(s, w, t, 0, 0, by,
				    SCHED_WHY_DISAGREED);
		}
	}
}

/*
 * Under verify v, worker w's output of t (digest) is one vote.  Returns
 * whether v outputs now agree.  Otherwise t wants another copy, on a
 * machine that has not voted, or gives up once 2v - 1 votes (or the
 * machines that could vote) are spent without v that agree.
 */
static int
sched_vote_count(struct sched *s, struct task *t, struct worker *w,
    struct copy *c, uint64_t digest)
{
	struct batch	*b = t->t_batch;
	struct task_aux	*x = sched_aux(t);
	uint32_t	 v = b->b_cfg.verify, agree;

	if (x->x_votes == NULL)
		x->x_votes = sched_calloc(2 * v - 1, sizeof(*x->x_votes));
	/* A queued task some machine is out for moves to the excluded list. */
	if (t->t_state == TASK_QUEUED)
		sched_queue_unlink(b, t);
	x->x_votes[x->x_nvotes].v_node = w->w_group;
	x->x_votes[x->x_nvotes].v_digest = digest;
	x->x_nvotes++;
	if (t->t_state == TASK_QUEUED) {
		sched_queue_insert(b, t);
		sched_batch_books(s, b, 0);
	}
	if (c != NULL)
		sched_copy_drop(s, c);
	(void)sched_want_verify(t, &agree);
	if (agree >= v)
		return (1);
	if (t->t_state == TASK_SENT && t->t_ncopies == 0 &&
	    (sched_want(t) == 0 || !sched_anyone_may_run(s, t))) {
		sched_r_remove(b, t);
		sched_suspect_unlist(s, t);
		sched_give_up(s, t, w->w_id, SCHED_FAIL_DISAGREE);
	} else
		sched_need(s, t);
	return (0);
}

/*
 * Task t succeeded on worker by where copies of it had failed before: the
 * machines they failed on, if connected, fail where others succeed, and
 * are suspect like slow ones (section 3's "can be excluded").
 */
static void
sched_blame_failures(struct sched *s, const struct task *t, uint32_t by)
{
	struct worker	*w;
	size_t		 i;

	for (i = 0; i < s->s_nworkers; i++) {
		w = s->s_workers[i];
		if (w->w_id != by && sched_failed_on(t, w))
			sched_worker_suspected(s, w, t, 0, 0, by,
			    SCHED_WHY_FAILED);
	}
}

/*
 * A result came back, its output summed up in digest.  The first one wins
 * (RR step 7): every other copy is cancelled (RR step 8) and the task
 * leaves R (RR step 9); the freed slots are refilled (RR step 4 or 10, RWQ
 * step 5).  Under verify v the result is a vote instead, and the task is
 * done once v machines gave the same digest (SCHED_PENDING until then).  A
 * result from a worker with no copy (it was lost and came back) still
 * counts: the caller has checked that the worker was given the task.  With
 * timing, a worker that had a copy updates its estimates first, so the
 * refill already uses its new capacity.  A later result is a lost race if
 * the worker held a copy (SCHED_DUPLICATE), else stale (SCHED_STALE).
 */
enum sched_verdict
sched_vote(struct sched *s, uint32_t wid, uint64_t id, uint64_t digest,
    const struct sched_timing *timing, uint64_t now)
{
	struct worker	*w;
	struct batch	*b;
	struct task	*t;
	struct copy	*c = NULL;
	uint64_t	 begin;

	s->s_now = now;
	(void)sched_power_roll(s);
	if ((t = tab_find(s, id)) == NULL)
		return (SCHED_UNKNOWN);
	if ((w = sched_worker_find(s, wid, NULL)) != NULL)
		c = sched_copy_find(t, w);
	if (c != NULL)
		w->w_pcount++;		/* Power: a result for a copy it held */
	if (c != NULL && timing != NULL) {
		sched_estimate_update(w, c, timing, now);
		sched_room_update(s, w);	/* auto's cap may move */
	}
	if (c != NULL) {
		/* A whole task done here: who stood still meanwhile? */
		if (c->c_running)
			begin = c->c_start;
		else if (timing != NULL && timing->exec_ns < now)
			begin = now - timing->exec_ns;
		else
			begin = c->c_sent;
		/* The yardstick of the periodic look, sched_scan(). */
		s->s_ref_begin = begin;
		s->s_ref_len = now - begin;
		s->s_ref_wid = w->w_id;
		s->s_has_ref = 1;
		sched_detect(s, w, begin);
		sched_worker_alive(s, w);
	}
	if (t->t_state == TASK_DONE || t->t_state == TASK_FAILED ||
	    t->t_state == TASK_CANCELLED) {
		if (c == NULL)
			return (SCHED_STALE);
		sched_copy_drop(s, c);
		sched_refill(s);
		return (SCHED_DUPLICATE);
	}

	b = t->t_batch;
	if (b->b_cfg.verify > 1) {
		/* A group votes once; a vote needs a worker. */
		if (w == NULL || sched_voted_on(t, w) ||
		    (t->t_aux != NULL &&
		    t->t_aux->x_nvotes == 2 * b->b_cfg.verify - 1)) {
			if (c != NULL)
				sched_copy_drop(s, c);
			/*
			 * Its last copy out said nothing that counts, and no
			 * worker here may vote: unverifiable now, it gives up
			 * as sched_vote_count() does, rather than wait.
			 */
			if (t->t_state == TASK_SENT && t->t_ncopies == 0 &&
			    t->t_aux != NULL && t->t_aux->x_nvotes > 0 &&
			    (sched_want(t) == 0 ||
			    !sched_anyone_may_run(s, t))) {
				sched_r_remove(b, t);
				sched_suspect_unlist(s, t);
				sched_give_up(s, t, wid, SCHED_FAIL_DISAGREE);
			}
			sched_refill(s);
			return (SCHED_STALE);
		}
		if (!sched_vote_count(s, t, w, c, digest)) {
			sched_refill(s);
			return (SCHED_PENDING);
		}
		c = NULL;	/* dropped with the vote */
	}
	if (t->t_state == TASK_QUEUED)
		sched_queue_take(s, b, t);
	else
		sched_r_remove(b, t);
	sched_suspect_unlist(s, t);
	sched_need_unlist(s, t);
	t->t_state = TASK_DONE;
	s->s_stats.done++;
	if (c != NULL)
		sched_copy_drop(s, c);
	while (t->t_copies != NULL) {
		/* Stop the other copies (§3.1), unless keep_copies. */
		if (b->b_cfg.keep_copies)
			sched_copy_drop(s, t->t_copies);
		else
			sched_copy_cancel(s, t->t_copies);
	}
	if (t->t_aux != NULL && t->t_aux->x_nfailed > 0)
		sched_blame_failures(s, t, wid);
	if (t->t_aux != NULL && t->t_aux->x_nvotes > 0)
		sched_blame_votes(s, t, digest, wid);
	sched_batch_finish(s, b);
	sched_refill(s);
	return (SCHED_ACCEPT);
}

/*
 * The copy of a task on worker wid failed.  A failure counts once per copy
 * held, and once per machine: the task is never sent back to a machine it
 * failed on, so max_attempts counts distinct workers and a worker that
 * fails every task cannot use up a task's attempts alone.  With no copy
 * left, the task goes back to the front of its queue for another worker,
 * or gives up once it has failed on max_attempts machines or on every
 * connected one that could run it.  Returns the number of machines it
 * failed on so far, or -1 for an unknown or finished task or a worker
 * without a copy of it (a stale or forged report: nothing changes).
 */
int
sched_failed(struct sched *s, uint32_t wid, uint64_t id, uint64_t now)
{
	struct worker	*w;
	struct batch	*b;
	struct task	*t;
	struct copy	*c;
	struct task_aux	*x;
	uint32_t	 max;
	int		 nfailed;

	s->s_now = now;
	(void)sched_power_roll(s);
	if ((t = tab_find(s, id)) == NULL || t->t_state != TASK_SENT ||
	    (w = sched_worker_find(s, wid, NULL)) == NULL ||
	    (c = sched_copy_find(t, w)) == NULL)
		return (-1);
	w->w_pcount++;
	b = t->t_batch;
	max = b->b_cfg.max_attempts;
	sched_copy_drop(s, c);
	sched_alive_touch(s, w);
	x = sched_aux(t);
	if (!sched_failed_on(t, w) && x->x_nfailed < max) {
		if (x->x_failed == NULL)
			x->x_failed = sched_calloc(max, sizeof(*x->x_failed));
		x->x_failed[x->x_nfailed++] = w->w_node;
	}
	nfailed = (int)x->x_nfailed;	/* t may be freed below */
	if (t->t_ncopies == 0) {
		sched_r_remove(b, t);
		sched_suspect_unlist(s, t);
		if (x->x_nfailed >= max || !sched_anyone_may_run(s, t))
			sched_give_up(s, t, wid, SCHED_FAIL_ATTEMPTS);
		else
			sched_queue_push_front(s, b, t);
	} else
		sched_need(s, t);	/* copies: one more elsewhere */
	sched_refill(s);
	return (nfailed);
}

/*
 * Worker wid answers SCHED_WITHDRAW for task id (section 4's move, second
 * phase): released, it dropped its held copy, which is forgotten, and the
 * task goes to the worker the move was for, marked active (the front of
 * its local queue), or to the front of the master queue if that worker is
 * gone, has no room any more or may not take it.  Not released, it had
 * started the copy (the withdrawal crossed the start): the copy stays.
 * If a replica of the task went out meanwhile, the released copy is just
 * forgotten.  Returns 1 moved or put back, 0 void, -1 for a withdrawal
 * the core did not ask for or that is over (the task finished, the copy
 * was cancelled): nothing changes.
 */
int
sched_released(struct sched *s, uint32_t wid, uint64_t id, int released,
    uint64_t now)
{
	struct worker	*w, *to = NULL;
	struct batch	*b;
	struct task	*t;
	struct copy	*c;

	s->s_now = now;
	if ((t = tab_find(s, id)) == NULL ||
	    (w = sched_worker_find(s, wid, NULL)) == NULL ||
	    (c = sched_copy_find(t, w)) == NULL || !c->c_withdraw)
		return (-1);
	if (c->c_hasto && (to = sched_worker_find(s, c->c_to, NULL)) != NULL &&
	    to->w_seq != c->c_toseq)
		to = NULL;
	if (!c->c_hasto)
		to = NULL;	/* void already: the copy started */
	sched_withdraw_end(s, c);
	if (!released) {
		s->s_stats.withdraw_void++;
		sched_refill(s);
		return (0);
	}
	b = t->t_batch;
	sched_copy_drop(s, c);
	if (t->t_ncopies > 0) {
		sched_refill(s);
		return (1);
	}
	if (to != NULL && sched_room(to, b) > 0 && sched_may_copy(t, to)) {
		s->s_stats.moved++;
		sched_send(s, to, t, SEND_MOVE);
	} else {
		s->s_stats.moved_back++;
		sched_r_remove(b, t);
		sched_suspect_unlist(s, t);
		sched_queue_push_front(s, b, t);
	}
	sched_refill(s);
	return (1);
}

/*
 * The time has come: cool-downs that are over end, and the periodic look
 * for copies that stand still runs if it is due.
 */
void
sched_tick(struct sched *s, uint64_t now)
{
	const struct batch	*b;
	int			 changed;

	s->s_now = now;
	changed = sched_cool_end(s, now) > 0;
	if (sched_power_roll(s))
		changed = 1;
	if (s->s_scan_at != 0 && now >= s->s_scan_at) {
		if (s->s_has_ref)
			sched_scan(s);
		s->s_scan_at = now + sched_scan_period(s);
		changed = 1;
	}
	/* A copy of the speed-aware tail turned late. */
	SCHED_DRAINED(s, b) {
		if (changed)
			break;
		s->s_stats.batches_visited++;
		if (sched_tail_waits(s, b) && b->b_tmin[0]->t_lateat <= now)
			changed = 1;
	}
	if (changed)
		sched_refill(s);
}

/*
 * When sched_tick() wants to be called next; UINT64_MAX: never.  The
 * periodic look is due only while copies are out and some worker has done
 * a whole task to measure them by.
 */
uint64_t
sched_deadline(const struct sched *s)
{
	const struct batch	*b;
	uint64_t		 when = UINT64_MAX;
#ifdef SCHED_REFERENCE
	size_t			 i;
#endif

	if (s->s_scan_at != 0 && s->s_has_ref &&
	    s->s_stats.held + s->s_stats.running > 0)
		when = s->s_scan_at;
	/* Power's next boundary, while held tasks of a batch may move. */
	if (s->s_power_at != 0 && s->s_power_at < when &&
	    s->s_stats.held > 0 && sched_balance_modes(s) != 0)
		when = s->s_power_at;
#ifdef SCHED_REFERENCE
	for (i = 0; i < s->s_nworkers; i++)
		if (s->s_workers[i]->w_cooling &&
		    s->s_workers[i]->w_cool_until < when)
			when = s->s_workers[i]->w_cool_until;
#else
	/* The first cool-down to end. */
	if (s->s_coolfirst != NULL && s->s_coolfirst->w_cool_until < when)
		when = s->s_coolfirst->w_cool_until;
#endif
	/* The speed-aware tail: its next copy to turn late. */
	SCHED_DRAINED(s, b)
		if (sched_tail_waits(s, b) && b->b_tmin[0]->t_lateat < when)
			when = b->b_tmin[0]->t_lateat;
	return (when);
}

/* Pop the oldest pending action; 0 when there is none. */
int
sched_next_action(struct sched *s, struct sched_action *a)
{
	if (s->s_actlen == 0)
		return (0);
	*a = s->s_act[s->s_acthead];
	s->s_acthead = (s->s_acthead + 1) & (s->s_actsize - 1);
	s->s_actlen--;
	return (1);
}

void
sched_get_stats(const struct sched *s, struct sched_stats *st)
{
	*st = s->s_stats;
}

/* How many copies worker wid holds and runs; -1 if it is unknown. */
int
sched_worker_load(const struct sched *s, uint32_t wid, uint32_t *held,
    uint32_t *running)
{
	const struct worker	*w;

	if ((w = sched_worker_find(s, wid, NULL)) == NULL)
		return (-1);
	if (held != NULL)
		*held = w->w_nheld;
	if (running != NULL)
		*running = w->w_nrunning;
	return (0);
}

/*
 * Worker wid's estimates, and the capacity it would have for the batch it
 * would take its next task from (else the last batch opened, else one per
 * CPU); -1 if it is unknown.
 */
int
sched_worker_estimate(const struct sched *s, uint32_t wid,
    struct sched_estimate *est)
{
	const struct worker	*w;
	const struct batch	*b;
	uint64_t		 cap, visited = 0;

	if ((w = sched_worker_find(s, wid, NULL)) == NULL)
		return (-1);
	if (est == NULL)
		return (0);
	est->rtt_ns = w->w_hasrtt ? w->w_rtt : 0;
	est->task_ns = w->w_hastask ? w->w_task : 0;
	if ((b = sched_batch_for(s, w, NULL, &visited)) == NULL)
		b = s->s_blast;
	cap = b != NULL ? sched_cap(w, b) : w->w_ncpu;
	est->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	est->power = w->w_power;
	return (0);
}

/* What the core thinks of worker wid's health; -1 if it is unknown. */
int
sched_worker_fault(const struct sched *s, uint32_t wid,
    struct sched_fault_info *fi)
{
	const struct worker	*w;
	uint32_t		 i, size;

	if ((w = sched_worker_find(s, wid, NULL)) == NULL)
		return (-1);
	memset(fi, 0, sizeof(*fi));
	fi->suspect_copies = w->w_nsuspect;
	fi->suspects = w->w_suspects;
	fi->cooldown_until = w->w_cooling ? w->w_cool_until : 0;
	size = s->s_fault.suspect_limit + 1;
	for (i = 0; i < w->w_ringlen; i++)
		if (s->s_now - w->w_ring[(w->w_ringhead + i) % size] <
		    s->s_fault.suspect_window_ns)
			fi->recent++;
	return (0);
}
