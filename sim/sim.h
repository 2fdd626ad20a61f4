/*
 * r3q-sim's shared declarations: the command line, the messages and their
 * sizes on the wire, the platform, masterd's and workerd's state, and the
 * functions one piece of the simulator calls in another.  r3q-sim.cpp
 * says how the pieces fit together.
 */
#ifndef R3Q_SIM_H
#define R3Q_SIM_H

#include "config.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <time.h>

extern "C" {
#include "es/es.h"
#include "es/payload.h"
#include "report/measure.h"
#include "rng.h"
#include "sched/sched.h"
}
#include "r3q.pb-c.h"

typedef R3q__Envelope Envelope;

namespace sg4 = simgrid::s4u;

#define EX_OK		0
#define EX_FAIL		1
#define EX_USAGE	64
#define EX_DATAERR	65

#define FRAME_HDRLEN	8		/* common/frame.h */
#define WALL_BASE	1700000000000000000ULL	/* sizes of wall-clock ns */
#define REF_FLOPS	1e9		/* host speed 1 Gf: speed ratio 1 */

/* RNG streams: every draw is rng_*(seed, stream, a, b). */
enum { RS_SPEED = 1000, RS_LAT, RS_FAIL, RS_HANG, RS_NOISE, RS_TABLE };

/*
 * --driver bnb: a node's cost on a host of speed 1 by default, in us
 * (LB2 with bidirectional branching on Taillard's 20 x 10 instances:
 * 10.3 to 11.5 us of CPU a node, r3q-sim's own "ns a node searched" on
 * the machine the figures of doc/algorithms.md §3.3 come from), and the
 * nodes a worker explores between two looks at the clock (an interrupt
 * waits for the step).
 */
#define BNB_SIM_NODE_US	10.0
#define BNB_SIM_CHUNK	64

/* What a duration or a distribution is. */
struct dist {
	enum { CONST, UNIFORM, LOGNORMAL, TABLE1 } kind = CONST;
	double a = 1, b = 0;
};

/* The command line. */
struct opts {
	std::string	 platform;	/* lan, wan, FILE; "" generated */
	uint32_t	 workers = 0;
	uint32_t	 cpus = 1;
	dist		 speeds;
	dist		 latency;	/* one-way, ms */
	double		 delay_ms = 0;
	double		 master_cost = 0;	/* s of masterd's CPU a frame */
	double		 bandwidth = 125e6;	/* bytes/s, 1 Gb/s */
	double		 mtbf = 0, repair = 60, hang_rate = 0;
	double		 hb_timeout = 10, grace = 1;
	enum sched_policy policy = SCHED_POLICY_R3Q;
	uint32_t	 qf = SCHED_QF_AUTO;	/* masterd's default */
	struct es_params ep;
	double		 work_ms = 100;
	double		 noise = 0;
	uint32_t	 batch = 0;	/* a batch job of this many tasks */
	std::string	 trace;		/* task times replayed from it */
	std::string	 csv, gen_csv;
	bool		 quiet = false, stats = false;
	/* --driver bnb (bnb.cpp) */
	bool		 bnb = false;
	std::string	 bnb_file;		/* --pfsp */
	uint32_t	 bnb_instance = 1;
	int		 bnb_lb = 2;		/* enum bnb_lb */
	int		 bnb_branch = 2;	/* enum bnb_branch */
	uint32_t	 bnb_ig = 1000;
	uint32_t	 bnb_split = 0;
	uint64_t	 bnb_budget = 10000;
	std::vector<uint32_t> bnb_mult = { 1 };
	std::string	 bnb_mult_arg = "1";
	bool		 bnb_interrupt = true;
	bool		 bnb_exchange = true;	/* push, or none */
	double		 bnb_node_us = BNB_SIM_NODE_US;
	uint64_t	 bnb_chunk = BNB_SIM_CHUNK;
};

/* options.cpp: the command line and the platform. */
extern opts			 O;
extern std::vector<double>	 trace_ms;	/* --trace: reference ms a task */
void		 parse_opts(int, char *[]);
void		 platform_build(void);
void		 platform_file(sg4::Engine &, const std::string &);
double		 route_lat(size_t);
double		 dist_median(const dist &);

/* r3q-sim.cpp */
[[noreturn]] void die(int, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/*
 * --network analytic: frames are no SimGrid comms and one actor runs
 * everything (fast_actor); its clock is exact, SimGrid's follows it.
 */
extern bool	 fast_net;
extern double	 fast_clock;
#define FAST_SYNC	1e-3	/* s: SimGrid's clock, at most this behind */

/* Simulated time in seconds. */
static inline double
sim_clock()
{
	return (fast_net ? fast_clock : sg4::Engine::get_clock());
}

/* Simulated time in the core's unit. */
static inline uint64_t
now_ns()
{
	return ((uint64_t)llround(sim_clock() * 1e9));
}

/* wire.cpp: messages, their sizes, connections. */

/*
 * A task as sent.  Its payload (the individual, es/payload.h) is not
 * copied: its length is the same for every task of a job (payload_len),
 * and the worker reads the individual from the ES driver when it ends
 * (task_output), the doubles the payload would have carried bit for bit.
 */
struct task_msg {
	uint64_t		 id;
	bool			 replica;
};

struct result_msg {
	uint64_t		 id;
	uint32_t		 status;	/* 0 ok, 2 cancelled */
	double			 start, end, received;
	uint32_t		 slot;
	bool			 replica;
	uint8_t			 output[ES_OUTPUT_LEN];
};

enum msg_type { M_HELLO, M_WELCOME, M_ASSIGN, M_CANCEL, M_REPORT,
    M_HEARTBEAT, M_CLOSED };

struct msg {
	msg_type			 type;
	uint32_t			 host;	/* worker's host index */
	uint32_t			 inc;	/* its incarnation (session) */
	uint64_t			 seq;	/* in its channel, from 0 */
	std::vector<task_msg>		 tasks;		/* ASSIGN */
	std::vector<uint64_t>		 ids;		/* CANCEL, started */
	std::vector<uint64_t>		 half;		/* REPORT */
	std::vector<result_msg>		 results;	/* REPORT */
	msg				*next;	/* analytic: on the wire */
	double				 at;	/* --master-cost: came, goes */
};

msg		*msg_new(msg_type, uint32_t, uint32_t);
void		 msg_free(msg *);
extern size_t	 payload_len;	/* of every task of the job */
extern bool	 check_sizes;	/* R3Q_SIM_CHECK_SIZES */
uint64_t	 size_hello(uint32_t, double);
uint64_t	 size_welcome(uint32_t);
uint64_t	 size_assign(const std::vector<task_msg> &);
uint64_t	 size_cancel(std::vector<uint64_t> &);
uint64_t	 size_report(msg *);
uint64_t	 size_heartbeat(uint32_t, uint32_t, uint64_t);

/*
 * One direction of one TCP connection: frames arrive in the order they
 * were sent, whatever their sizes (SimGrid lets a small message overtake
 * a large one on the same route; TCP does not).
 */
struct channel {
	uint64_t		 next_out = 0;
	uint64_t		 next_in = 0;
	/* frames ahead of their turn, made when one first comes */
	std::unique_ptr<std::map<uint64_t, msg *>> early;

	void reset() {
		next_out = next_in = 0;
		if (early == nullptr)
			return;
		for (auto &p : *early)
			msg_free(p.second);
		early.reset();
	}
};

/* Take m (in order or not); call fn on each message now in order. */
template <typename F> inline void
channel_take(channel &c, msg *m, F fn)
{
	if (m->seq != c.next_in) {
		if (c.early == nullptr)
			c.early.reset(new std::map<uint64_t, msg *>());
		(*c.early)[m->seq] = m;
		return;
	}
	fn(m);
	c.next_in++;
	if (c.early == nullptr)
		return;
	for (auto it = c.early->find(c.next_in); it != c.early->end();
	    it = c.early->find(c.next_in)) {
		msg *n = it->second;

		c.early->erase(it);
		fn(n);
		c.next_in++;
	}
}

extern bool	 sim_over;	/* the job ended: actors leave */
bool		 comm_wait(sg4::CommPtr &, double);

/*
 * The frames an actor sent and has not seen arrive.  Not detached: SimGrid
 * keeps every detached comm in one list, searched as each one ends, which
 * makes a frame cost O(frames in flight in the whole simulation).  A
 * sender's own list is short; it forgets its frames as they arrive.
 */
struct outbox {
	std::vector<sg4::CommPtr>	 c;
	size_t				 head = 0;

	void put(sg4::Mailbox *mb, msg *m, uint64_t size) {
		c.push_back(mb->put_async(m, size));
		while (c.size() - head > 4 && c[head]->test())
			c[head++] = nullptr;
		if (head > 64 && head * 2 > c.size()) {
			c.erase(c.begin(), c.begin() + (ssize_t)head);
			head = 0;
		}
	}
	/* The end: what is still on the wire never arrives. */
	void drop() {
		for (size_t i = head; i < c.size(); i++)
			if (!c[i]->test())
				c[i]->cancel();
		c.clear();
		head = 0;
	}
};

/* Frames sent, for the simulator's own costs (--stats). */
extern uint64_t	 n_frames_out, n_frames_in, n_heartbeats;
extern uint64_t	 n_clock_moves;	/* analytic: SimGrid sleeps */
void		 send_msg(sg4::Mailbox *, channel &, outbox &, msg *,
		    uint64_t);

/* The platform (options.cpp). */
struct host_info {
	sg4::Host	*host;		/* nullptr: a generated one, analytic */
	sg4::Mailbox	*mbox;
	double		 speed;		/* ratio to the reference machine */
	uint32_t	 cpus;
	double		 lat = 0;	/* no host: its link's latency (s) */
};

extern sg4::Host			*master_host;
extern std::vector<host_info>		 workers;	/* by host */
/*
 * masterd's network side, in relays (master.cpp).  SimGrid keeps each
 * actor's activities in a list it searches as each one ends, so an actor
 * that sends and receives the frames of 10,000 workers pays O(frames in
 * flight) a frame.  Relay actors on the master's host share the frames
 * instead: worker h writes to inbox shard h % nrelays, whose relay hands
 * the frame to masterd at once (no simulated time); masterd's frames to
 * host h leave through out-relay h % nrelays, in order.
 */
extern std::vector<sg4::Mailbox *>	 master_mbox;
struct out_relay {
	sg4::MutexPtr				 mtx;
	sg4::ConditionVariablePtr		 cv;
	std::vector<std::pair<msg *, uint64_t>>	 q;
};
extern std::vector<out_relay>		 out_relays;
extern std::vector<msg *>		 master_inbox;
extern size_t				 master_inbox_head;
extern sg4::MutexPtr			 master_mtx;
extern sg4::ConditionVariablePtr	 master_cv;
#define master_box(h)	master_mbox[(h) % master_mbox.size()]

/* master.cpp: masterd. */

/* A copy of a task out on a worker, as masterd knows it. */
struct mworker {
	bool			 live = false;
	uint32_t		 host = 0;
	uint32_t		 inc = 0;
	double			 last_seen = 0;
	std::vector<task_msg>	 out;		/* the Assign being built */
	std::vector<uint64_t>	 cancel;
	std::vector<uint64_t>	 killed;	/* interrupted, report due */
	bool			 dirty = false;
};

/* One generation's report (masterd/job.c gen_report). */
struct gen_rep {
	uint32_t	 gen;
	double		 best;
	uint64_t	 elapsed, total, sync, comm, compute;
	uint32_t	 tasks, replicas, killed_held, killed_running;
	double		 work_ms;	/* its tasks' work, reference ms */
};

/* masterd's tables by host, in one cache line. */
struct alignas(64) mhost {
	int64_t			 wid = -1;	/* -1 none */
	channel			 out;		/* master -> worker */
	channel			 in;		/* worker -> master */
};

/*
 * masterd's state: one, M, defined in master.cpp and alive for the run;
 * the worker side reads M.es for the individuals (task_output) and
 * report.cpp its totals.
 */
struct master {
	struct sched		*s;
	struct es		*es;
	std::vector<mworker>	 w;		/* by worker id */
	std::vector<mhost>	 h;		/* by host */
	std::vector<uint32_t>	 dirty;
	uint64_t		 batch = 0, first = 0, next_task = 1;
	size_t			 nbatch = 0;
	double			 batch_work_ms = 0;
	std::vector<struct measure_span> spans;	/* executions */
	std::vector<gen_rep>	 gens;
	double			 speed_time = 0;
	uint64_t		 start = 0, end = 0;
	bool			 started = false, finished = false;
	uint32_t		 joined = 0;
	uint64_t		 submitted = 0;
	uint64_t		 tasks_done = 0, dropped = 0, executions = 0;
	/* the core's work */
	uint64_t		 calls = 0, actions = 0, core_ns = 0;
	uint64_t		 lost = 0, hung_lost = 0, suspects = 0;
	uint64_t		 cooldowns = 0;
	uint64_t		 slow_suspects = 0;	/* SCHED_WHY_SLOW */
	/* --master-cost: frames through masterd's CPU, its busy time */
	uint64_t		 mcpu_frames = 0;
	double			 mcpu_busy = 0;
	std::string		 error;
};

extern master	 M;

/* Time spent in the core (the vDSO clock: a CPU-time clock is a system
 * call, which would cost more than the calls it measures). */
static inline uint64_t
cpu_ns()
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

/*
 * The time inside the core, taken only with --stats, in the cheapest
 * clock there is: on x86 the time-stamp counter (a vDSO clock read is
 * 20-50 ns in a VM, twice a core call), turned into ns at the end against
 * CLOCK_MONOTONIC over the whole run (core_ns_of).
 */
extern bool	 timing;

static inline uint64_t
core_ticks()
{
#if defined(__x86_64__) || defined(__i386__)
	return (__builtin_ia32_rdtsc());
#else
	return (cpu_ns());
#endif
}

struct core_timer {
	uint64_t t0;
	core_timer() : t0(timing ? core_ticks() : 0) { M.calls++; }
	~core_timer() {
		if (timing)
			M.core_ns += core_ticks() - t0;
	}
};

void		 core_clock_start(void);
uint64_t	 core_ns_of(uint64_t);
bool		 task_idx(uint64_t, size_t *);
void		 master_send(uint32_t, msg *, uint64_t);
double		 master_frame_at(void);
void		 master_init(void);
double		 master_until(uint64_t);
void		 master_turn(uint64_t);
void		 master_actor(void);
void		 in_relay_actor(size_t);
void		 out_relay_actor(size_t);

/* worker.cpp: workerd. */

struct wtask {
	uint64_t		 id;
	bool			 replica;
	double			 received;
};

struct wslot {
	bool	 busy = false;
	bool	 half_sent = false;
	wtask	 t;
	double	 start = 0, half = 0, end = 0;
};

enum wstate { W_UP, W_DOWN, W_HUNG };

/* Counters of the churn, for the summary. */
extern uint64_t	 n_crashes, n_hangs;
extern uint64_t	 sim_executions;	/* every execution, for the speed */
double		 task_work_ms(uint64_t);
void		 worker_actor(uint32_t);

/* A worker's slots: one kept inline (the usual case), more on the heap. */
struct slotv {
	uint32_t		 n = 0;
	wslot			 one;
	std::vector<wslot>	 more;

	void resize(uint32_t k) {
		n = k;
		if (k > 1)
			more.resize(k);
	}
	size_t size() const { return (n); }
	wslot *begin() { return (n <= 1 ? &one : more.data()); }
	wslot *end() { return (begin() + n); }
	const wslot *begin() const { return (n <= 1 ? &one : more.data()); }
	const wslot *end() const { return (begin() + n); }
	wslot &operator[](size_t i) { return (begin()[i]); }
};

/*
 * workerd on host h as a state machine: take() a frame from masterd,
 * step() at the current time (results, half-way notes, starts, the
 * heartbeat, failures), next_time() for its next timed event.  The actor
 * of --network simgrid waits for a frame or that time; fast_actor calls
 * it from its event queue.  Owned by the one that runs it (worker_actor's
 * stack, or analytic.cpp's table of them) for the whole run.
 *
 * What a step touches first is in the first lines (fast_actor prefetches
 * WSIM_HOT bytes of the next event's worker).
 */
#define WSIM_HOT	256
struct alignas(64) wsim {
	uint32_t		 h = 0;
	wstate			 st = W_UP;
	uint32_t		 inc = 0;
	double			 wake = -1;	/* analytic: wake-up queued */
	double			 next_hb = 0, next_fail = 0, repair_at = 0;
	std::vector<wtask>	 q;		/* the local queue, FIFO */
	size_t			 qhead = 0;
	msg			*rep = nullptr;
	uint64_t		 done = 0;
	/* analytic: frames on the wire to masterd [0] and from it [1],
	 * in the order they arrive (fast_wire keeps each direction FIFO) */
	msg			*wire_head[2] = {}, *wire_tail[2] = {};
	channel			 in, out;
	slotv			 slots;
	uint64_t		 nfail = 0;
	outbox			 sent;

	void send(msg *, uint64_t);
	void hello();
	msg *report();
	void handle(msg *);
	void begin(uint32_t);
	void take(msg *);
	/* The next timed event: a half-way note, an end, a heartbeat... */
	double next_time() const {
		double	 te;

		te = st == W_UP ? std::min(next_hb, next_fail) : repair_at;
		if (st == W_UP)
			for (const wslot &s : slots)
				if (s.busy)
					te = std::min(te, s.half_sent ? s.end :
					    s.half);
		return (te);
	}
	void step();
	void drop();
};

/* analytic.cpp: --network analytic. */

#define FE_HBITS	24		/* hosts: at most 2^24 */
void		 fast_to_master(uint32_t, channel &, msg *, uint64_t);
void		 fast_to_worker(uint32_t, msg *, uint64_t);
void		 fast_to_worker_at(uint32_t, msg *, uint64_t);
void		 fast_actor(void);

/* bnb.cpp: --driver bnb. */
void		 bnb_start(void);
int		 bnb_report(double);

/* report.cpp: what a run prints. */

#define S(ns)	((double)(ns) / 1e9)
int		 sim_report(double);

#endif /* R3Q_SIM_H */
