/*
 * r3q-sim: the unchanged scheduling core (common/sched) and ES driver
 * (common/es) on SimGrid's S4U (issue 23).  One actor plays masterd's
 * loop: decode a message, call the core, drain its actions, send the
 * frames, re-arm one timer at sched_deadline() (masterd/dispatch.c).  One
 * actor per worker plays workerd (workerd/link.c, exec.c): a local FIFO
 * queue, N execution slots, start and half-way notes sent with the
 * results, a heartbeat every second.  Messages cross SimGrid's network
 * model with the byte sizes of the real protobuf encodings plus the frame
 * header; what is left out (masterd's CPU, TLS, the kernel) is in
 * r3q-sim(1).
 */
#include "config.h"

#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <getopt.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include "report/times.h"
#include "es/es.h"
#include "es/payload.h"
#include "rng.h"
#include "sched/sched.h"
}
#include "r3q.pb-c.h"

extern "C" {
#include "frame.h"		/* R3Q_PROTOCOL, for --version */
}

typedef R3q__Envelope Envelope;

namespace sg4 = simgrid::s4u;

XBT_LOG_NEW_DEFAULT_CATEGORY(r3q_sim, "r3q-sim");

#define EX_OK		0
#define EX_FAIL		1
#define EX_USAGE	64
#define EX_DATAERR	65

#define FRAME_HDRLEN	8		/* common/frame.h */
#define WALL_BASE	1700000000000000000ULL	/* sizes of wall-clock ns */
#define REF_FLOPS	1e9		/* host speed 1 Gf: speed ratio 1 */

/* RNG streams: every draw is rng_*(seed, stream, a, b). */
enum { RS_SPEED = 1000, RS_LAT, RS_FAIL, RS_HANG, RS_NOISE, RS_TABLE };

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
};

static opts		 O;
static std::vector<double> trace_ms;	/* --trace: reference ms a task */
static double	 task_work_ms(uint64_t);

[[noreturn]] static void
die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
die(int code, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "r3q-sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(code);
}

/*
 * --network analytic: frames are no SimGrid comms and one actor runs
 * everything (fast_actor); its clock is exact, SimGrid's follows it.
 */
static bool	 fast_net;
static double	 fast_clock;
#define FAST_SYNC	1e-3	/* s: SimGrid's clock, at most this behind */

/* Simulated time in seconds. */
static double
sim_clock()
{
	return (fast_net ? fast_clock : sg4::Engine::get_clock());
}

/* Simulated time in the core's unit. */
static uint64_t
now_ns()
{
	return ((uint64_t)llround(sim_clock() * 1e9));
}

/* ------------------------------------------------------------------ */
/* Messages: what each carries, and its size on the wire. */

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
};

/*
 * Frames are pooled: a message and its vectors are reused (their capacity
 * kept) rather than allocated and freed once a frame.
 */
static std::vector<msg *>	 msg_pool;

static msg *
msg_new(msg_type type, uint32_t host, uint32_t inc)
{
	msg	*m;

	if (msg_pool.empty())
		m = new msg();
	else {
		m = msg_pool.back();
		msg_pool.pop_back();
	}
	m->type = type;
	m->host = host;
	m->inc = inc;
	m->seq = 0;
	return (m);
}

static void
msg_free(msg *m)
{
	if (m == nullptr)
		return;
	m->tasks.clear();
	m->ids.clear();
	m->half.clear();
	m->results.clear();
	msg_pool.push_back(m);
}

/* The payload of every task of the job (es_payload_len). */
static size_t	 payload_len;

/* Size of an envelope on the wire: its protobuf encoding and a header. */
static uint64_t
env_size(Envelope *e)
{
	return (r3q__envelope__get_packed_size(e) + FRAME_HDRLEN);
}

static uint64_t
size_hello(uint32_t cpus, double speed)
{
	Envelope	 e = R3Q__ENVELOPE__INIT;
	R3q__Hello	 h = R3Q__HELLO__INIT;
	char		 name[] = "worker-00000", kind[] = "synth",
			 ver[] = "0.1.0", *kinds[] = { kind };

	h.protocol = 3;
	h.name = name;
	h.cpus = cpus;
	h.n_kinds = 1;
	h.kinds = kinds;
	h.version = ver;
	h.speed = speed;
	e.body_case = R3Q__ENVELOPE__BODY_HELLO;
	e.hello = &h;
	return (env_size(&e));
}

static uint64_t
size_welcome(uint32_t wid)
{
	Envelope	 e = R3Q__ENVELOPE__INIT;
	R3q__Welcome	 w = R3Q__WELCOME__INIT;

	w.protocol = 3;
	w.worker_id = wid;
	w.epoch = WALL_BASE;
	w.queue_len = 2;
	w.boot = WALL_BASE;
	e.body_case = R3Q__ENVELOPE__BODY_WELCOME;
	e.welcome = &w;
	return (env_size(&e));
}

static uint64_t
pb_size_assign(const std::vector<task_msg> &tv)
{
	static std::vector<R3q__Task>	 t;
	static std::vector<R3q__Task *>	 tp;
	static std::vector<uint64_t>	 repl;
	static std::vector<uint8_t>	 zeros;
	static char			 kind[] = "synth";
	Envelope			 e = R3Q__ENVELOPE__INIT;
	R3q__Assign			 a = R3Q__ASSIGN__INIT;

	zeros.resize(payload_len);
	t.resize(tv.size());
	tp.resize(tv.size());
	repl.clear();
	for (size_t i = 0; i < tv.size(); i++) {
		r3q__task__init(&t[i]);
		t[i].id = tv[i].id;
		t[i].kind = kind;
		t[i].tag = 1;
		t[i].payload.len = payload_len;
		t[i].payload.data = zeros.data();
		tp[i] = &t[i];
		if (tv[i].replica)
			repl.push_back(tv[i].id);
	}
	a.epoch = WALL_BASE;
	a.n_tasks = tv.size();
	a.tasks = tp.data();
	a.n_replicas = repl.size();
	a.replicas = repl.data();
	e.body_case = R3Q__ENVELOPE__BODY_ASSIGN;
	e.assign = &a;
	return (env_size(&e));
}

static uint64_t
pb_size_cancel(std::vector<uint64_t> &ids)
{
	Envelope	 e = R3Q__ENVELOPE__INIT;
	R3q__Cancel	 c = R3Q__CANCEL__INIT;

	c.n_ids = ids.size();
	c.ids = ids.data();
	e.body_case = R3Q__ENVELOPE__BODY_CANCEL;
	e.cancel = &c;
	return (env_size(&e));
}

/* Results and progress notes: two envelopes in one write (link_flush). */
static uint64_t
pb_size_report(msg *m)
{
	static std::vector<R3q__Result>		 r;
	static std::vector<R3q__Result *>	 rp;
	static char				 none[] = "";
	Envelope				 e = R3Q__ENVELOPE__INIT;
	R3q__Results				 rs = R3Q__RESULTS__INIT;
	R3q__Progress				 pr = R3Q__PROGRESS__INIT;
	uint64_t				 sz = 0;

	if (!m->results.empty()) {
		r.resize(m->results.size());
		rp.resize(m->results.size());
		for (size_t i = 0; i < r.size(); i++) {
			const result_msg &x = m->results[i];

			r3q__result__init(&r[i]);
			r[i].id = x.id;
			r[i].status = x.status;
			r[i].start_ns = WALL_BASE + (uint64_t)(x.start * 1e9);
			r[i].end_ns = WALL_BASE + (uint64_t)(x.end * 1e9);
			r[i].received_ns = WALL_BASE +
			    (uint64_t)(x.received * 1e9);
			r[i].error = none;
			r[i].epoch = WALL_BASE;
			r[i].slot = x.slot;
			r[i].replica = x.replica;
			r[i].tag = 1;
			if (x.status == 0) {
				r[i].output.len = ES_OUTPUT_LEN;
				r[i].output.data = (uint8_t *)(uintptr_t)
				    x.output;
			}
			rp[i] = &r[i];
		}
		rs.n_results = r.size();
		rs.results = rp.data();
		e.body_case = R3Q__ENVELOPE__BODY_RESULTS;
		e.results = &rs;
		sz += env_size(&e);
	}
	if (!m->ids.empty() || !m->half.empty()) {
		pr.n_started = m->ids.size();
		pr.started = m->ids.data();
		pr.n_halfway = m->half.size();
		pr.halfway = m->half.data();
		e.body_case = R3Q__ENVELOPE__BODY_PROGRESS;
		e.progress = &pr;
		sz += env_size(&e);
	}
	return (sz);
}

static uint64_t
pb_size_heartbeat(uint32_t queued, uint32_t running, uint64_t done)
{
	Envelope	 e = R3Q__ENVELOPE__INIT;
	R3q__Heartbeat	 h = R3Q__HEARTBEAT__INIT;

	h.queued = queued;
	h.running = running;
	h.done = done;
	h.finished = 1;
	h.interval_ms = 1000;
	e.body_case = R3Q__ENVELOPE__BODY_HEARTBEAT;
	e.heartbeat = &h;
	return (env_size(&e)) + 8 * running;	/* first/second halves */
}

/*
 * The same sizes by the wire format's rules, without building the
 * messages (proto3, as protobuf-c encodes it: a scalar or a string that
 * is zero or empty is left out, a packed field too when it has no element,
 * a oneof's message always goes).  R3Q_SIM_CHECK_SIZES=1 checks every
 * frame against protobuf-c's own count (pb_size_*) and stops at the first
 * that differs; tests/regress/sim.sh runs with it.
 */
static bool	 check_sizes;

static inline uint64_t
vs(uint64_t v)				/* a varint's length */
{
	uint64_t	 n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return (n);
}

/* A length-delimited field of len bytes, its tag one byte (field < 16). */
static inline uint64_t
ld1(uint64_t len)
{
	return (1 + vs(len) + len);
}

/* A non-zero varint field, its tag one byte. */
static inline uint64_t
vf1(uint64_t v)
{
	return (v ? 1 + vs(v) : 0);
}

/* A packed repeated uint64 field (tag < 16); the ids' varints summed. */
static uint64_t
packed1(const std::vector<uint64_t> &ids)
{
	uint64_t	 n = 0;

	for (uint64_t id : ids)
		n += vs(id);
	return (ids.empty() ? 0 : ld1(n));
}

/* Envelope with its body in field f (id 0, left out), and the header. */
static inline uint64_t
env_of(uint32_t f, uint64_t body)
{
	return ((f < 16 ? 1 : 2) + vs(body) + body + FRAME_HDRLEN);
}

[[noreturn]] static void
size_mismatch(const char *what, uint64_t mine, uint64_t pb)
{
	die(EX_FAIL, "internal error: %s is %" PRIu64 " bytes by the wire "
	    "rules, %" PRIu64 " by protobuf-c", what, mine, pb);
}

static uint64_t
size_assign(const std::vector<task_msg> &tv)
{
	/* Task: id, kind "synth", tag (fixed64), payload */
	uint64_t	 fixed = ld1(5) + 9 + ld1(payload_len), a, rl = 0;
	bool		 repl = false;

	a = vf1(WALL_BASE);
	for (const task_msg &t : tv) {
		a += ld1(vf1(t.id) + fixed);
		if (t.replica) {
			rl += vs(t.id);
			repl = true;
		}
	}
	if (repl)
		a += ld1(rl);
	a = env_of(R3Q__ENVELOPE__BODY_ASSIGN, a);
	if (check_sizes && a != pb_size_assign(tv))
		size_mismatch("an Assign", a, pb_size_assign(tv));
	return (a);
}

static uint64_t
size_cancel(std::vector<uint64_t> &ids)
{
	uint64_t	 a = env_of(R3Q__ENVELOPE__BODY_CANCEL, packed1(ids));

	if (check_sizes && a != pb_size_cancel(ids))
		size_mismatch("a Cancel", a, pb_size_cancel(ids));
	return (a);
}

static uint64_t
size_report(msg *m)
{
	uint64_t	 sz = 0, rs = 0, r;

	if (!m->results.empty()) {
		for (const result_msg &x : m->results) {
			r = vf1(x.id) + vf1(x.status) +
			    vf1(WALL_BASE + (uint64_t)(x.start * 1e9)) +
			    vf1(WALL_BASE + (uint64_t)(x.end * 1e9)) +
			    vf1(WALL_BASE) +
			    vf1(WALL_BASE + (uint64_t)(x.received * 1e9)) +
			    vf1(x.slot) + (x.replica ? 2 : 0) + 9 +
			    (x.status == 0 ? ld1(ES_OUTPUT_LEN) : 0);
			rs += ld1(r);
		}
		sz += env_of(R3Q__ENVELOPE__BODY_RESULTS, rs);
	}
	if (!m->ids.empty() || !m->half.empty())
		sz += env_of(R3Q__ENVELOPE__BODY_PROGRESS, packed1(m->ids) +
		    packed1(m->half));
	if (check_sizes && sz != pb_size_report(m))
		size_mismatch("a report", sz, pb_size_report(m));
	return (sz);
}

static uint64_t
size_heartbeat(uint32_t queued, uint32_t running, uint64_t done)
{
	/* queued, running, done, finished 1, interval_ms 1000 */
	uint64_t	 a = env_of(R3Q__ENVELOPE__BODY_HEARTBEAT, vf1(queued) +
			    vf1(running) + vf1(done) + vf1(1) + vf1(1000)) +
			    8 * running;

	if (check_sizes && a != pb_size_heartbeat(queued, running, done))
		size_mismatch("a Heartbeat", a, pb_size_heartbeat(queued,
		    running, done));
	return (a);
}

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
template <typename F> static void
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

static bool sim_over;		/* the job ended: actors leave */

/* Wait for c at most timeout seconds; true if it completed. */
static bool
comm_wait(sg4::CommPtr &c, double timeout)
{
	std::vector<sg4::CommPtr>	 v = { c };

	try {
		return (sg4::Comm::wait_any_for(v, timeout > 0 ? timeout :
		    0) == 0);
	} catch (const simgrid::Exception &) {
		/* the sender cancelled it: the simulation is over */
		if (!sim_over)
			die(EX_FAIL, "internal error: a frame was lost");
		return (false);
	}
}

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
static uint64_t n_frames_out, n_frames_in, n_heartbeats;
static uint64_t n_clock_moves;	/* analytic: SimGrid sleeps */

static void
send_msg(sg4::Mailbox *mb, channel &c, outbox &ob, msg *m, uint64_t size)
{
	n_frames_in++;
	if (m->type == M_HEARTBEAT)
		n_heartbeats++;
	m->seq = c.next_out++;
	ob.put(mb, m, size);
}

/* ------------------------------------------------------------------ */
/* The platform. */

struct host_info {
	sg4::Host	*host;		/* nullptr: a generated one, analytic */
	sg4::Mailbox	*mbox;
	double		 speed;		/* ratio to the reference machine */
	uint32_t	 cpus;
	double		 lat = 0;	/* no host: its link's latency (s) */
};

static sg4::Host		*master_host;
/*
 * masterd's network side, in relays.  SimGrid keeps each actor's
 * activities in a list it searches as each one ends, so an actor that
 * sends and receives the frames of 10,000 workers pays O(frames in
 * flight) a frame.  Relay actors on the master's host share the frames
 * instead: worker h writes to inbox shard h % nrelays, whose relay hands
 * the frame to masterd at once (no simulated time); masterd's frames to
 * host h leave through out-relay h % nrelays, in order.
 */
static std::vector<sg4::Mailbox *> master_mbox;
struct out_relay {
	sg4::MutexPtr				 mtx;
	sg4::ConditionVariablePtr		 cv;
	std::vector<std::pair<msg *, uint64_t>>	 q;
};
static std::vector<out_relay>	 out_relays;
static std::vector<msg *>	 master_inbox;
static size_t			 master_inbox_head;
static sg4::MutexPtr		 master_mtx;
static sg4::ConditionVariablePtr master_cv;
#define master_box(h)	master_mbox[(h) % master_mbox.size()]
static std::vector<host_info>	 workers;

/* The one-way latency of the route from the master to worker i. */
static double
route_lat(size_t i)
{
	std::vector<sg4::Link *> links;
	double			 lat = 0;

	if (workers[i].host == nullptr)
		return (workers[i].lat);	/* the master's link has 0 */
	master_host->route_to(workers[i].host, links, &lat);
	return (lat);
}

/* Table 1 of the paper: speed ratios for 100, 500, 1000 ms tasks. */
static const struct {
	const char	*name;
	double		 s[3];
} table1[] = {
	{ "M1", { 1.00, 1.00, 1.00 } },
	{ "L1", { 2.40, 2.89, 3.37 } },
	{ "L2", { 1.06, 1.00, 1.01 } },
	{ "L3", { 0.68, 0.71, 0.77 } },
	{ "L4", { 0.62, 0.65, 0.72 } },
	{ "L5", { 0.55, 0.42, 0.41 } },
	{ "L6", { 0.37, 0.38, 0.43 } },
	{ "R1", { 2.46, 2.88, 3.37 } },
	{ "W1", { 2.73, 2.69, 3.01 } },
	{ "W2", { 2.46, 2.89, 3.35 } },
	{ "W3", { 2.89, 3.35, 3.90 } },
};

/* Table 1's column for a granularity, as bench/policies picks it. */
static int
table1_col(double work_ms)
{
	return (work_ms <= 100 ? 0 : work_ms <= 500 ? 1 : 2);
}

static double
dist_draw(const dist &d, uint64_t stream, uint64_t i)
{
	switch (d.kind) {
	case dist::CONST:
		return (d.a);
	case dist::UNIFORM:
		return (d.a + (d.b - d.a) * rng_uniform(O.ep.seed, stream, i,
		    0));
	case dist::LOGNORMAL:
		return (d.a * exp(d.b * rng_gauss(O.ep.seed, stream, i, 0)));
	case dist::TABLE1: {
		size_t k = (size_t)(rng_uniform(O.ep.seed, RS_TABLE, i, 0) *
		    (sizeof(table1) / sizeof(table1[0])));

		k = std::min(k, sizeof(table1) / sizeof(table1[0]) - 1);
		return (table1[k].s[table1_col(O.work_ms)]);
	}
	}
	return (d.a);
}

static double
dist_median(const dist &d)
{
	switch (d.kind) {
	case dist::UNIFORM:
		return ((d.a + d.b) / 2);
	default:
		return (d.a);
	}
}

/* One host with its own link to the star's centre. */
static sg4::Host *
star_host(sg4::NetZone *z, const std::string &name, double speed,
    uint32_t cpus, double lat_s, sg4::Link *via)
{
	sg4::Host	*h;
	sg4::Link	*l;

	h = z->create_host(name, speed * REF_FLOPS)->set_core_count(cpus)->
	    seal();
	l = z->create_link(name + "-link", O.bandwidth)->set_latency(lat_s)->
	    seal();
	if (via != nullptr)
		z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
		    { sg4::LinkInRoute(l), sg4::LinkInRoute(via) }, true);
	else
		z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
		    { sg4::LinkInRoute(l) }, true);
	return (h);
}

/*
 * The paper's grids (Table 1, Fig. 4) or N generated workers: a star
 * whose centre is the switch.  workerd's --delay holds each frame for
 * twice the delay each way, so a worker's link has a latency of 2 x
 * delay; the master's link has none.  On the WAN grid W1-W3 reach the
 * switch through R1's gateway link as well.
 */
static void
platform_build(void)
{
	sg4::NetZone	*z = sg4::create_star_zone("r3q");
	sg4::Link	*gw = nullptr;
	double		 lat;
	int		 col = table1_col(O.work_ms);
	size_t		 n;

	z->set_property("name", "r3q");
	if (O.platform == "lan" || O.platform == "wan") {
		n = O.platform == "lan" ? 7 : 11;
		master_host = star_host(z, "master", 1, 1, 0, nullptr);
		lat = 2 * O.delay_ms / 1000;
		for (size_t i = 0; i < n; i++) {
			sg4::Link *via = nullptr;

			if (table1[i].name[0] == 'W') {
				if (gw == nullptr)
					gw = z->create_link("R1-gateway",
					    O.bandwidth)->set_latency(5e-5)->
					    seal();
				via = gw;
			}
			host_info hi;
			hi.speed = table1[i].s[col];
			hi.cpus = O.cpus;
			hi.host = star_host(z, table1[i].name, hi.speed,
			    O.cpus, lat, via);
			workers.push_back(hi);
		}
	} else {
		master_host = star_host(z, "master", 1, 1, 0, nullptr);
		for (uint32_t i = 0; i < O.workers; i++) {
			char	 name[32];

			snprintf(name, sizeof(name), "w%u", i);
			host_info hi;
			hi.speed = dist_draw(O.speeds, RS_SPEED, i);
			if (!(hi.speed > 0))
				hi.speed = 1e-3;
			hi.cpus = O.cpus;
			lat = dist_draw(O.latency, RS_LAT, i) / 1000;
			if (!(lat >= 0))
				lat = 0;
			/*
			 * --network analytic needs no SimGrid host for a
			 * generated worker, only its link (fast_routes):
			 * 10,000 hosts were a tenth of a run's time and 30
			 * MiB.
			 */
			if (fast_net) {
				hi.host = nullptr;
				hi.lat = lat;
			} else
				hi.host = star_host(z, name, hi.speed, O.cpus,
				    lat, nullptr);
			workers.push_back(hi);
		}
	}
	z->seal();
}

/*
 * A SimGrid platform file: the host named "master" runs masterd, every
 * other host a workerd with one slot per core; a host's speed in flops
 * over 1 Gf is its speed ratio.
 */
static void
platform_file(sg4::Engine &e, const std::string &path)
{
	FILE	*f;

	if ((f = fopen(path.c_str(), "r")) == NULL)
		die(EX_USAGE, "--platform: %s: %s", path.c_str(),
		    strerror(errno));
	fclose(f);
	try {
		e.load_platform(path);
	} catch (const std::exception &ex) {
		die(EX_DATAERR, "%s: not a SimGrid platform: %s", path.c_str(),
		    ex.what());
	}
	master_host = sg4::Host::by_name_or_null("master");
	if (master_host == nullptr)
		die(EX_DATAERR, "%s: no host named 'master' (the host that "
		    "runs masterd)", path.c_str());
	for (auto *h : e.get_all_hosts()) {
		if (h == master_host)
			continue;
		host_info hi;
		hi.host = h;
		hi.speed = h->get_speed() / REF_FLOPS;
		hi.cpus = (uint32_t)h->get_core_count();
		workers.push_back(hi);
	}
	if (workers.empty())
		die(EX_DATAERR, "%s: no worker hosts besides 'master'",
		    path.c_str());
}

/* ------------------------------------------------------------------ */
/* masterd. */

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

/* One execution, for the measurements (masterd/job.c exec_span). */
struct span {
	uint32_t	 wid;
	uint64_t	 start, end;
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

struct master {
	struct sched		*s;
	struct es		*es;
	std::vector<mworker>	 w;		/* by worker id */
	std::vector<mhost>	 h;		/* by host */
	std::vector<uint32_t>	 dirty;
	uint64_t		 batch = 0, first = 0, next_task = 1;
	size_t			 nbatch = 0;
	double			 batch_work_ms = 0;
	std::vector<span>	 spans;
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
	std::string		 error;
};

static master M;

/* A frame of masterd's to host h, through its out-relay. */
static void fast_to_worker(uint32_t, msg *, uint64_t);

static void
master_send(uint32_t h, msg *m, uint64_t size)
{
	n_frames_out++;
	m->seq = M.h[h].out.next_out++;
	m->host = h;
	if (fast_net) {
		fast_to_worker(h, m, size);
		return;
	}
	out_relay	&r = out_relays[h % out_relays.size()];
	r.q.emplace_back(m, size);
	if (r.q.size() == 1)
		r.cv->notify_one();
}

static void
out_relay_actor(size_t i)
{
	out_relay				&r = out_relays[i];
	std::vector<std::pair<msg *, uint64_t>>	 q;
	outbox					 sent;

	for (;;) {
		{
			std::unique_lock<sg4::Mutex> lk(*r.mtx);

			while (r.q.empty() && !sim_over)
				r.cv->wait(lk);
			if (sim_over) {
				sent.drop();
				return;
			}
			q.swap(r.q);
		}
		for (auto &x : q)
			sent.put(workers[x.first->host].mbox, x.first,
			    x.second);
		q.clear();
	}
}

static void
in_relay_actor(size_t i)
{
	sg4::Mailbox	*mb = master_mbox[i];
	msg		*m = nullptr;
	sg4::CommPtr	 c;

	mb->set_receiver(sg4::Actor::self());
	c = mb->get_async<msg>(&m);
	for (;;) {
		if (comm_wait(c, 1.0)) {
			master_inbox.push_back(m);
			if (master_inbox.size() - master_inbox_head == 1)
				master_cv->notify_one();
			c = mb->get_async<msg>(&m);
		}
		if (sim_over) {
			c->cancel();
			return;
		}
	}
}
static uint64_t sim_executions;	/* every execution, for the speed */

/* Time spent in the core (the vDSO clock: a CPU-time clock is a system
 * call, which would cost more than the calls it measures). */
static uint64_t
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
static bool	 timing;

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

/* M.core_ns is in core_ticks(): in ns, from the run's two ends. */
static uint64_t	 ticks0, ticks_ns0;

static void
core_clock_start(void)
{
	ticks_ns0 = cpu_ns();
	ticks0 = core_ticks();
}

static uint64_t
core_ns_of(uint64_t ticks)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t	 dt = core_ticks() - ticks0, dn = cpu_ns() - ticks_ns0;

	return (dt > 0 ? (uint64_t)((double)ticks * (double)dn /
	    (double)dt) : 0);
#else
	return (ticks);
#endif
}

/*
 * The lowest free worker id (masterd/worker.c worker_id_alloc): the least
 * id given back (a min-heap of them), else a new one.  Every id from
 * M.w.size() on is free, so this is the scan's answer in O(log n).
 */
static std::vector<uint32_t>	 wid_free;

static uint32_t
wid_alloc(void)
{
	uint32_t	 i;

	if (!wid_free.empty()) {
		std::pop_heap(wid_free.begin(), wid_free.end(),
		    std::greater<uint32_t>());
		i = wid_free.back();
		wid_free.pop_back();
		return (i);
	}
	M.w.emplace_back();
	return ((uint32_t)M.w.size() - 1);
}

static void
wid_release(uint32_t i)
{
	wid_free.push_back(i);
	std::push_heap(wid_free.begin(), wid_free.end(),
	    std::greater<uint32_t>());
}

static void
mark_dirty(uint32_t wid)
{
	if (!M.w[wid].dirty) {
		M.w[wid].dirty = true;
		M.dirty.push_back(wid);
	}
}

/* The task ids of the live generation: [first, first + n). */
static bool
task_idx(uint64_t id, size_t *idx)
{
	if (M.batch == 0 || id < M.first || id >= M.first + M.nbatch)
		return (false);
	*idx = id - M.first;
	return (true);
}

/* Send the frames the drained actions left: cancels first (server_flush). */
static void
master_flush(void)
{
	for (uint32_t wid : M.dirty) {
		mworker &w = M.w[wid];

		w.dirty = false;
		if (!w.live) {
			w.out.clear();
			w.cancel.clear();
			continue;
		}
		if (!w.cancel.empty()) {
			msg *m = msg_new(M_CANCEL, w.host, w.inc);

			m->ids.swap(w.cancel);
			master_send(w.host, m,
			    size_cancel(m->ids));
		}
		if (!w.out.empty()) {
			msg *m = msg_new(M_ASSIGN, w.host, w.inc);

			m->tasks.swap(w.out);
			master_send(w.host, m,
			    size_assign(m->tasks));
		}
	}
	M.dirty.clear();
}

static void gen_start(void);

/* The paper's measurements of a generation (masterd/job.c job_measure). */
static void
gen_measure(const struct sched_batch_report *r, gen_rep *g)
{
	std::vector<uint64_t>	 busyv(M.w.size(), 0);
	uint64_t		 end, win, comm = 0, busy, a, b;
	double			 speed = 0;
	uint32_t		 nw = 0;

	g->total = r->t_done - r->t_submit;
	g->sync = r->t_sync ? r->t_done - r->t_sync : 0;
	g->replicas = r->replicas;
	g->killed_held = r->cancelled_held;
	g->killed_running = r->cancelled_running;
	end = r->t_sync ? r->t_sync : r->t_done;
	win = end - r->t_submit;
	for (const span &x : M.spans) {
		if (x.wid >= busyv.size())
			continue;
		a = std::max(x.start, r->t_submit);
		b = std::min(x.end, end);
		if (b > a)
			busyv[x.wid] += b - a;
	}
	for (uint32_t i = 0; i < M.w.size(); i++) {
		if (!M.w[i].live)
			continue;
		const host_info &h = workers[M.w[i].host];
		busy = busyv[i] / h.cpus;
		comm += busy < win ? win - busy : 0;
		speed += h.speed * h.cpus;
		nw++;
	}
	g->comm = nw ? comm / nw : 0;
	g->compute = g->total > g->sync + g->comm ?
	    g->total - g->sync - g->comm : 0;
	M.speed_time += speed * (double)g->total;
}

/* A generation is over: measure, select, print, go on (job_batch_over). */
static void
gen_done(const struct sched_batch_report *r)
{
	gen_rep		 g;
	uint32_t	 gen = es_generation(M.es);

	memset(&g, 0, sizeof(g));
	g.gen = gen;
	g.elapsed = now_ns() - M.start;
	g.tasks = (uint32_t)M.nbatch;
	g.work_ms = M.batch_work_ms;
	gen_measure(r, &g);
	M.spans.clear();
	M.batch = 0;
	if (O.batch > 0) {
		/* a batch job: one batch, done */
		g.gen = 1;
		M.gens.push_back(g);
		if (!O.quiet)
			printf("batch: %u tasks done, elapsed %.3fs\n", g.tasks,
			    (double)g.elapsed / 1e9);
		M.finished = true;
		M.end = now_ns();
		return;
	}
	if (es_advance(M.es) == -1)
		die(EX_FAIL, "internal error: generation %u done with results "
		    "missing", gen);
	g.best = es_gen_best(M.es, gen);
	M.gens.push_back(g);
	if (!O.quiet)
		printf("gen %4u  best %-24.17g  elapsed %8.3fs\n", gen, g.best,
		    (double)g.elapsed / 1e9);
	if (es_finished(M.es)) {
		M.finished = true;
		M.end = now_ns();
		return;
	}
	gen_start();
}

/* Carry out the core's decisions (masterd/dispatch.c server_drain). */
static void
master_drain(void)
{
	struct sched_action	 a;
	size_t			 idx;

	for (;;) {
		{
			core_timer ct;

			if (!sched_next_action(M.s, &a))
				break;
		}
		M.actions++;
		switch (a.type) {
		case SCHED_ASSIGN: {
			if (a.wid >= M.w.size() || !M.w[a.wid].live ||
			    !task_idx(a.task, &idx))
				break;
			task_msg t;
			t.id = a.task;
			t.replica = a.replica != 0;
			M.w[a.wid].out.push_back(t);
			mark_dirty(a.wid);
			break;
		}
		case SCHED_CANCEL: {
			if (a.wid >= M.w.size() || !M.w[a.wid].live)
				break;
			mworker &w = M.w[a.wid];
			if (!a.running) {
				auto it = std::find_if(w.out.begin(),
				    w.out.end(), [&](const task_msg &t) {
					return (t.id == a.task); });
				if (it != w.out.end()) {
					w.out.erase(it);
					break;
				}
			} else
				w.killed.push_back(a.task);
			w.cancel.push_back(a.task);
			mark_dirty(a.wid);
			break;
		}
		case SCHED_TASK_FAILED:
			master_flush();
			if (M.error.empty()) {
				char buf[128];

				snprintf(buf, sizeof(buf), "task %" PRIu64
				    " gave up (%s)", a.task, a.reason ==
				    SCHED_FAIL_KILLS ? "max_kills" :
				    "max_attempts");
				M.error = buf;
			}
			M.finished = true;
			M.end = now_ns();
			break;
		case SCHED_SUSPECT:
			M.suspects++;
			if (a.why == SCHED_WHY_SLOW)
				M.slow_suspects++;
			XBT_INFO("worker %u suspect (task %" PRIu64 ")", a.wid,
			    a.task);
			break;
		case SCHED_COOLDOWN:
			M.cooldowns++;
			XBT_INFO("worker %u cools down", a.wid);
			break;
		case SCHED_BATCH_DONE:
			master_flush();
			if (a.batch == M.batch && !M.finished)
				gen_done(&a.report);
			break;
		case SCHED_WITHDRAW:
			/*
			 * The simulated jobs never balance (issue 19's
			 * balance = none): should one ask, the worker keeps
			 * the task, as a real one that had started it.
			 */
			sched_released(M.s, a.wid, a.task, 0, now_ns());
			break;
		}
		if (M.finished)
			break;
	}
	master_flush();
}

/* Submit the ES's current generation as one batch (job_es_start). */
static void
gen_start(void)
{
	struct sched_batch_config	 cfg;
	std::vector<struct sched_task>	 t;
	size_t				 n = O.batch > 0 ? O.batch :
					    es_batch_size(M.es);
	uint64_t			 now = now_ns();

	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = O.policy;
	cfg.queue_factor = O.qf;
	cfg.kind = 0;
	cfg.max_attempts = 3;
	cfg.max_kills = 3;
	cfg.verify = 0;
	M.batch++;
	M.first = M.next_task;
	M.next_task += n;
	M.nbatch = n;
	M.submitted += n;
	t.resize(n);
	M.batch_work_ms = 0;
	for (size_t i = 0; i < n; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].id = M.first + i;
		M.batch_work_ms += task_work_ms(t[i].id);
	}
	core_timer ct;
	if (sched_batch_open(M.s, M.batch, &cfg, now) == -1 ||
	    sched_batch_add(M.s, M.batch, t.data(), n, now) == -1 ||
	    sched_batch_close(M.s, M.batch, now) == -1)
		die(EX_FAIL, "internal error: the core refused batch %" PRIu64,
		    M.batch);
	M.calls += 2;
}

/* A worker is gone: the core puts its tasks back (worker_free). */
static void
worker_gone(uint32_t host)
{
	int64_t	 wid = M.h[host].wid;

	if (wid < 0)
		return;
	{
		core_timer ct;
		sched_worker_lost(M.s, (uint32_t)wid, now_ns());
	}
	M.w[wid].live = false;
	wid_release((uint32_t)wid);
	M.w[wid].out.clear();
	M.w[wid].cancel.clear();
	M.w[wid].killed.clear();
	M.h[host].wid = -1;
	M.h[host].out.reset();
	M.h[host].in.reset();
	M.lost++;
}

/* Results of a worker (masterd/worker.c worker_results). */
static void
master_results(uint32_t wid, msg *m)
{
	struct sched_timing	 tm;
	mworker			&w = M.w[wid];
	size_t			 idx;
	uint64_t		 now = now_ns();

	for (const result_msg &r : m->results) {
		bool	 killed;
		auto	 it = std::find(w.killed.begin(), w.killed.end(),
		    r.id);

		killed = it != w.killed.end();
		M.executions++;
		if (!task_idx(r.id, &idx)) {
			if (killed)
				w.killed.erase(it);
			continue;
		}
		span x = { wid, (uint64_t)llround(r.start * 1e9),
		    (uint64_t)llround(r.end * 1e9) };
		if (r.status == 0) {
			double	 f;
			uint64_t digest;

			memset(&tm, 0, sizeof(tm));
			tm.at_worker_ns = (uint64_t)llround((r.end -
			    r.received) * 1e9);
			tm.exec_ns = x.end - x.start;
			memcpy(&digest, r.output, sizeof(digest));
			enum sched_verdict v;
			{
				core_timer ct;
				v = sched_vote(M.s, wid, r.id, digest,
				    tm.at_worker_ns ? &tm : nullptr, now);
			}
			switch (v) {
			case SCHED_ACCEPT:
				if (O.batch == 0 && es_output_decode(r.output,
				    ES_OUTPUT_LEN, &f) == 0)
					es_set_fitness(M.es, idx, f);
				M.tasks_done++;
				M.spans.push_back(x);
				break;
			case SCHED_PENDING:
				M.spans.push_back(x);
				break;
			case SCHED_DUPLICATE:
				M.spans.push_back(x);
				M.dropped++;
				break;
			default:
				if (killed) {
					w.killed.erase(it);
					M.spans.push_back(x);
					M.dropped++;
				}
				break;
			}
		} else if (killed) {
			w.killed.erase(it);
			M.spans.push_back(x);
		}
	}
}

/* One message from a worker, in its channel's order. */
static void
master_msg(msg *m)
{
	int64_t	 wid = M.h[m->host].wid;
	uint64_t now = now_ns();

	if (m->type == M_HELLO) {
		/* worker connected again: drop its old session */
		if (wid >= 0)
			worker_gone(m->host);
		uint32_t nw = wid_alloc();
		mworker &w = M.w[nw];
		w.live = true;
		w.host = m->host;
		w.inc = m->inc;
		w.last_seen = sim_clock();
		M.h[m->host].wid = nw;
		msg *r = msg_new(M_WELCOME, m->host, m->inc);
		master_send(m->host, r,
		    size_welcome(nw));
		{
			core_timer ct;
			uint32_t kind = 0;

			if (sched_worker_join_kinds(M.s, nw, m->host,
			    workers[m->host].cpus, &kind, 1, now) == -1)
				die(EX_FAIL, "internal error: the core "
				    "refused worker %u", nw);
		}
		M.joined++;
		return;
	}
	if (wid < 0 || M.w[wid].inc != m->inc)
		return;		/* a closed session's frames */
	M.w[wid].last_seen = sim_clock();
	switch (m->type) {
	case M_REPORT:
		master_results((uint32_t)wid, m);
		for (uint64_t id : m->ids) {
			core_timer ct;
			sched_started(M.s, (uint32_t)wid, id, now);
		}
		for (uint64_t id : m->half) {
			core_timer ct;
			sched_progress(M.s, (uint32_t)wid, id, now);
		}
		break;
	case M_CLOSED:
		worker_gone(m->host);
		break;
	default:
		break;
	}
}

/* Absolute liveness (server_liveness): silent for hb_timeout, lost. */
static void
master_liveness(void)
{
	double	 now = sim_clock();

	for (uint32_t i = 0; i < M.w.size(); i++)
		if (M.w[i].live && now - M.w[i].last_seen > O.hb_timeout) {
			XBT_INFO("worker %u silent for %.1f s: lost", i,
			    now - M.w[i].last_seen);
			M.hung_lost++;
			worker_gone(M.w[i].host);
		}
}

static double	 live_every, next_live;

/* masterd starts: the core, the ES driver, the tables by host. */
static void
master_init(void)
{
	struct sched_fault_config	 f;

	M.s = sched_new();
	memset(&f, 0, sizeof(f));
	f.grace_ns = (uint64_t)(O.grace * 1e9);
	f.suspect_limit = SCHED_SUSPECT_LIMIT_DEFAULT;
	f.suspect_window_ns = SCHED_WINDOW_DEFAULT;
	f.cooldown_ns = SCHED_COOLDOWN_DEFAULT;
	sched_set_fault(M.s, &f);
	M.es = es_new(&O.ep);
	if (M.s == nullptr || M.es == nullptr)
		die(EX_FAIL, "out of memory");
	M.h.resize(workers.size());
	live_every = std::min(O.hb_timeout / 4, 1.0);
	next_live = live_every;
}

/* When masterd's loop wakes up next without a frame: its one timer. */
static double
master_until(uint64_t dl)
{
	return (dl == UINT64_MAX ? next_live :
	    std::min(next_live, (double)dl / 1e9));
}

/*
 * One turn of masterd's loop once awake: the frames in master_inbox, the
 * core's timer (dl, the deadline it had before the wait), liveness, the
 * job's start.
 */
static void
master_turn(uint64_t dl)
{
	double	 now;

	while (master_inbox_head < master_inbox.size() && !M.finished) {
		msg *got = master_inbox[master_inbox_head++];
		uint32_t got_host = got->host;
		int64_t wid = M.h[got->host].wid;

		if (got->type == M_HELLO) {
			/* a new connection starts its own order */
			master_msg(got);
			msg_free(got);
			M.h[got_host].in.reset();
			M.h[got_host].in.next_in = 1;
		} else if (wid < 0 || M.w[wid].inc != got->inc) {
			msg_free(got);	/* a closed session's frames */
		} else {
			channel_take(M.h[got->host].in, got, [](msg *x) {
				master_msg(x);
				msg_free(x);
			});
		}
		master_drain();
	}
	if (master_inbox_head == master_inbox.size()) {
		master_inbox.clear();
		master_inbox_head = 0;
	}
	now = sim_clock();
	if (dl != UINT64_MAX && now_ns() >= dl) {
		{
			core_timer ct;
			sched_tick(M.s, now_ns());
		}
		master_drain();
	}
	if (now >= next_live) {
		master_liveness();
		master_drain();
		next_live = now + live_every;
	}
	if (!M.started && M.joined >= workers.size()) {
		/* every worker is in, as bench/policies waits */
		M.started = true;
		M.start = now_ns();
		gen_start();
		master_drain();
	}
}

static void
master_actor(void)
{
	master_init();
	while (!M.finished) {
		double	 now = sim_clock(), until;
		uint64_t dl;

		dl = sched_deadline(M.s);
		until = master_until(dl);
		if (master_inbox_head == master_inbox.size() && until > now) {
			std::unique_lock<sg4::Mutex> lk(*master_mtx);

			/* checked again: taking the lock let the relays run */
			if (master_inbox_head == master_inbox.size())
				master_cv->wait_until(lk, until);
		}
		master_turn(dl);
	}
	sim_over = true;
	for (auto &r : out_relays)
		r.cv->notify_all();
}

/* ------------------------------------------------------------------ */
/* workerd. */

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
static uint64_t n_crashes, n_hangs;

/*
 * A task's work in reference milliseconds: --work-ms, or with --trace the
 * trace's executions in turn (task ids count from 1 in submit order).
 */
static double
task_work_ms(uint64_t id)
{
	if (trace_ms.empty())
		return (O.work_ms);
	return (trace_ms[(id - 1) % trace_ms.size()]);
}

/* A task's run time on host h: its work over the host's speed (synth). */
static double
task_time(uint32_t h, uint64_t id)
{
	double	 t = task_work_ms(id) / 1000 / workers[h].speed;

	if (O.noise > 0)
		t *= exp(O.noise * rng_gauss(O.ep.seed, RS_NOISE, id, h));
	return (t);
}

/*
 * The synth kind's output: Ridge of the payload's individual, or its
 * work_ms when it has none (a batch job).  The individual is the ES
 * driver's, read when the task ends: the same doubles its payload would
 * carry (they do not change while the generation is live).  A task of a
 * generation gone by gives zeros: masterd drops its result unread
 * (master_results, task_idx).
 */
static void
task_output(uint64_t id, uint8_t *out)
{
	size_t	 idx;
	double	 f;

	if (O.batch > 0 || O.ep.dim == 0)
		f = task_work_ms(id);
	else if (task_idx(id, &idx))
		f = es_ridge(es_batch_x(M.es, idx), O.ep.dim);
	else {
		memset(out, 0, ES_OUTPUT_LEN);
		return;
	}
	es_output_encode(out, f);
}

/* Time to the next failure of host h, its k-th: exponential. */
static double
fail_after(uint32_t h, uint64_t k)
{
	double	 u = rng_uniform(O.ep.seed, RS_FAIL, h, k);

	return (-O.mtbf * log(1 - u));
}

static void fast_to_master(uint32_t, channel &, msg *, uint64_t);

/*
 * workerd on host h as a state machine: take() a frame from masterd,
 * step() at the current time (results, half-way notes, starts, the
 * heartbeat, failures), next_time() for its next timed event.  The actor
 * of --network simgrid waits for a frame or that time; fast_actor calls
 * it from its event queue.
 */
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

/* What a step touches first, in the first lines (fast_actor prefetches
 * WSIM_HOT bytes of the next event's worker). */
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

	void send(msg *x, uint64_t size) {
		if (fast_net)
			fast_to_master(h, out, x, size);
		else
			send_msg(master_box(h), out, sent, x, size);
	}
	void hello() {
		msg *x = msg_new(M_HELLO, h, inc);

		send(x, size_hello(workers[h].cpus, workers[h].speed));
	}
	msg *report() {
		if (rep == nullptr) {
			rep = msg_new(M_REPORT, h, inc);
		}
		return (rep);
	}
	void handle(msg *x) {
		double	 now = sim_clock();

		if (x->type == M_ASSIGN) {
			for (task_msg &t : x->tasks)
				q.push_back({ t.id, t.replica, now });
		} else if (x->type == M_CANCEL) {
			for (uint64_t id : x->ids) {
				bool found = false;

				for (size_t i = qhead; i < q.size(); i++)
					if (q[i].id == id) {
						q.erase(q.begin() + i);
						found = true;
						break;
					}
				if (found)
					continue;
				for (uint32_t k = 0; k < slots.size(); k++) {
					wslot &s = slots[k];

					if (!s.busy || s.t.id != id)
						continue;
					result_msg r;
					memset(&r, 0, sizeof(r));
					r.id = id;
					r.status = 2;	/* TASK_CANCELLED */
					r.start = s.start;
					r.end = now;
					r.received = s.t.received;
					r.slot = k;
					r.replica = s.t.replica;
					report()->results.push_back(r);
					s.busy = false;
					sim_executions++;
				}
			}
		}
		msg_free(x);
	}
	void begin(uint32_t host) {
		h = host;
		slots.resize(workers[h].cpus);
		next_hb = sim_clock() + 1.0;
		next_fail = O.mtbf > 0 ? fail_after(h, nfail) : INFINITY;
		repair_at = INFINITY;
		hello();
	}
	/* A frame from masterd, in whatever order the network gave it. */
	void take(msg *got) {
		if (got->inc != inc || st != W_UP)
			msg_free(got);
		else
			channel_take(in, got, [this](msg *x) { handle(x); });
	}
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
	void drop() {
		sent.drop();
		msg_free(rep);
		rep = nullptr;
		in.reset();
		out.reset();
	}
};

void
wsim::step()
{
	double	 now = sim_clock();

	if (st != W_UP) {
		if (now < repair_at)
			return;
		/* restarted: a new connection, an empty queue */
		inc++;
		in.reset();
		out.reset();
		q.clear();
		qhead = 0;
		for (wslot &s : slots)
			s.busy = false;
		st = W_UP;
		next_hb = now + 1.0;
		next_fail = now + fail_after(h, nfail);
		repair_at = INFINITY;
		hello();
		return;
	}
	for (uint32_t k = 0; k < slots.size(); k++) {
		wslot &s = slots[k];

		if (!s.busy)
			continue;
		if (!s.half_sent && s.half <= now) {
			s.half_sent = true;
			report()->half.push_back(s.t.id);
		}
		if (s.end <= now) {
			result_msg r;

			memset(&r, 0, sizeof(r));
			r.id = s.t.id;
			r.status = 0;
			r.start = s.start;
			r.end = s.end;
			r.received = s.t.received;
			r.slot = k;
			r.replica = s.t.replica;
			task_output(s.t.id, r.output);
			report()->results.push_back(r);
			s.busy = false;
			done++;
			sim_executions++;
		}
	}
	for (uint32_t k = 0; k < slots.size() && qhead < q.size(); k++) {
		wslot &s = slots[k];

		if (s.busy)
			continue;
		s.busy = true;
		s.half_sent = false;
		s.t = std::move(q[qhead++]);
		s.start = now;
		s.end = now + task_time(h, s.t.id);
		s.half = s.start + (s.end - s.start) / 2;
		report()->ids.push_back(s.t.id);
	}
	if (qhead > 64 && qhead * 2 > q.size()) {
		q.erase(q.begin(), q.begin() + (ssize_t)qhead);
		qhead = 0;
	}
	if (rep != nullptr) {
		msg *x = rep;

		rep = nullptr;
		send(x, size_report(x));
	}
	if (now >= next_hb) {
		uint32_t running = 0;
		msg *x = msg_new(M_HEARTBEAT, h, inc);

		for (const wslot &s : slots)
			running += s.busy;
		send(x, size_heartbeat((uint32_t)(q.size() - qhead), running,
		    done));
		while (next_hb <= now)
			next_hb += 1.0;
	}
	if (now >= next_fail) {
		bool hang = rng_uniform(O.ep.seed, RS_HANG, h, nfail) <
		    O.hang_rate;

		nfail++;
		repair_at = now + O.repair;
		if (hang) {
			/* stops without closing: nothing more */
			st = W_HUNG;
			n_hangs++;
		} else {
			/* dies: the kernel closes the connection */
			msg *x = msg_new(M_CLOSED, h, inc);

			send(x, 40);
			st = W_DOWN;
			n_crashes++;
		}
	}
}

static void
worker_actor(uint32_t h)
{
	host_info	&hi = workers[h];
	wsim		 w;
	msg		*m = nullptr;
	sg4::CommPtr	 pending;

	hi.mbox->set_receiver(sg4::Actor::self());
	pending = hi.mbox->get_async<msg>(&m);
	w.begin(h);
	for (;;) {
		double	 now = sim_clock(), te = w.next_time();

		if (comm_wait(pending, te == INFINITY ? 1 : te - now)) {
			msg *got = m;

			pending = hi.mbox->get_async<msg>(&m);
			w.take(got);
		}
		if (sim_over) {
			pending->cancel();
			w.drop();
			return;
		}
		w.step();
	}
}

/* ------------------------------------------------------------------ */
/*
 * --network analytic: one actor, no SimGrid comms.  A frame takes the
 * route SimGrid's platform gives (its links, their latencies): it waits
 * for every link of the route to be free (first come, first served: a
 * link carries one frame at a time in each direction together, as
 * SimGrid's shared links are one capacity for both), then arrives after
 * size / rate + the route's latency, the rate being the narrowest link
 * bounded by CM02's TCP window (gamma / 2 x latency).  Frames of one
 * connection arrive in the order sent (TCP).  What changes against
 * SimGrid's max-min sharing: frames that overlap on a link finish one
 * after another instead of together (same total time); the network is
 * the same for small frames on idle links, the simulator's usual case.
 */
/* A host's route and its connection's last arrival each way: one line. */
#define FR_INLINE	3	/* links of a route kept in its line */
struct froute {
	double			 lat = 0, rate = 0;
	double			 last_to_m = 0, last_to_w = 0;
	uint32_t		 nlinks = 0;
	uint32_t		 l[FR_INLINE] = {};	/* in f_link */
	uint32_t		 link0 = 0;	/* longer: in f_links */
};
static std::vector<uint32_t>	 f_links;	/* indexes into f_link */
/* A link: when it is free again, its bandwidth (bytes/s). */
struct flink {
	double			 free, bw;
};
enum { FE_TO_MASTER, FE_TO_WORKER, FE_WAKE };
/*
 * An event in 16 bytes, four to a cache line: its time, and its number
 * (ties: in the order queued), kind and host in one word, the number
 * highest so that (t, key) orders as (t, number).  A frame's message is
 * not in the event: it is the first of its host's wire in its direction.
 */
#define FE_HBITS	24		/* hosts: at most 2^24 */
#define FE_KBITS	2
#define FE_SEQMAX	(UINT64_MAX >> (FE_HBITS + FE_KBITS))
struct fevent {
	double		 t;
	uint64_t	 key;		/* seq, kind, host */
	uint32_t kind() const {
		return ((uint32_t)(key >> FE_HBITS) & ((1U << FE_KBITS) - 1));
	}
	uint32_t h() const {
		return ((uint32_t)key & ((1U << FE_HBITS) - 1));
	}
	bool operator>(const fevent &o) const {
		return (t > o.t || (t == o.t && key > o.key));
	}
};
static std::vector<froute>	 f_route;	/* by host */
static std::vector<flink>	 f_link;
/*
 * The event queue: a 4-ary heap, its element i at f_hv[i + 3] so that
 * the four children of one node (4i+1..4i+4) fill one aligned line.
 */
static fevent			*f_hv;
static size_t			 f_hn, f_hcap;
#define FH(i)	f_hv[(i) + 3]
static uint64_t			 f_seq;
static std::vector<wsim>	 f_w;

static void
fast_push(double t, uint32_t kind, uint32_t h)
{
	fevent	 e;
	size_t	 i, p;

	if (f_seq > FE_SEQMAX)
		die(EX_FAIL, "internal error: more than %" PRIu64 " events",
		    (uint64_t)FE_SEQMAX);
	e.t = t;
	e.key = f_seq++ << (FE_HBITS + FE_KBITS) | (uint64_t)kind <<
	    FE_HBITS | h;
	if (f_hn == f_hcap) {
		size_t	 n = f_hcap ? 2 * f_hcap : 4096;
		fevent	*v = (fevent *)aligned_alloc(64, (n + 4) *
			    sizeof(fevent));

		if (v == nullptr)
			die(EX_FAIL, "out of memory");
		if (f_hn > 0)
			memcpy(v + 3, f_hv + 3, f_hn * sizeof(fevent));
		free(f_hv);
		f_hv = v;
		f_hcap = n;
	}
	/* a 4-ary heap: half the levels of a binary one; (t, key) is a
	 * total order, so events come out in the same order from any heap */
	for (i = f_hn++; i > 0 && FH(p = (i - 1) / 4) > e; i = p)
		FH(i) = FH(p);
	FH(i) = e;
}

/* The earliest event out of the heap. */
static void
fast_pop(void)
{
	fevent	 last;
	size_t	 n, i = 0, c, b, j, end;

	if ((n = --f_hn) == 0)
		return;
	last = FH(n);
	for (;;) {
		if ((c = 4 * i + 1) >= n)
			break;
		end = std::min(c + 4, n);
		for (b = c, j = c + 1; j < end; j++)
			if (FH(b) > FH(j))
				b = j;
		if (!(last > FH(b)))
			break;
		FH(i) = FH(b);
		i = b;
	}
	FH(i) = last;
}

/* A frame onto host h's wire in direction d; the first off it. */
static void
wire_put(uint32_t h, int d, msg *m)
{
	wsim	&w = f_w[h];

	m->next = nullptr;
	if (w.wire_tail[d] != nullptr)
		w.wire_tail[d]->next = m;
	else
		w.wire_head[d] = m;
	w.wire_tail[d] = m;
}

static msg *
wire_get(uint32_t h, int d)
{
	wsim	&w = f_w[h];
	msg	*m = w.wire_head[d];

	if (m == nullptr)
		die(EX_FAIL, "internal error: host %u's wire is empty", h);
	if ((w.wire_head[d] = m->next) == nullptr)
		w.wire_tail[d] = nullptr;
	return (m);
}

/* The routes from the master to each worker, from SimGrid's platform. */
static void
fast_routes(void)
{
	std::map<sg4::Link *, uint32_t>	 idx;
	uint32_t			 master_link = UINT32_MAX;
	double				 gamma;

	gamma = simgrid::config::get_value<double>("network/TCP-gamma");
	f_route.resize(workers.size());
	for (size_t i = 0; i < workers.size(); i++) {
		std::vector<sg4::Link *>	 links;
		double				 lat = 0, bw = INFINITY;
		froute				&r = f_route[i];

		if (workers[i].host == nullptr) {
			/*
			 * A generated worker without a host: the route
			 * star_host() would have given it, the master's link
			 * (latency 0) then its own, both --bandwidth.
			 */
			if (master_link == UINT32_MAX) {
				master_link = (uint32_t)f_link.size();
				f_link.push_back({ 0, O.bandwidth });
			}
			r.nlinks = 2;
			r.link0 = (uint32_t)f_links.size();
			r.l[0] = master_link;
			r.l[1] = (uint32_t)f_link.size();
			f_link.push_back({ 0, O.bandwidth });
			f_links.push_back(r.l[0]);
			f_links.push_back(r.l[1]);
			lat = route_lat(i);
			bw = O.bandwidth;
			if (gamma > 0 && lat > 0)
				bw = std::min(bw, gamma / (2 * lat));
			r.lat = lat;
			r.rate = bw;
			continue;
		}
		master_host->route_to(workers[i].host, links, &lat);
		r.link0 = (uint32_t)f_links.size();
		r.nlinks = (uint32_t)links.size();
		for (sg4::Link *l : links) {
			auto it = idx.find(l);

			if (it == idx.end()) {
				it = idx.emplace(l, (uint32_t)f_link.size()).
				    first;
				f_link.push_back({ 0, l->get_bandwidth() });
			}
			f_links.push_back(it->second);
			if (r.nlinks <= FR_INLINE)
				r.l[f_links.size() - 1 - r.link0] = it->second;
			bw = std::min(bw, l->get_bandwidth());
		}
		if (gamma > 0 && lat > 0)
			bw = std::min(bw, gamma / (2 * lat));
		r.lat = lat;
		r.rate = bw;
	}
}

/* A frame on host h's route; when it arrives (FIFO links, TCP order). */
static double
fast_wire(uint32_t h, uint64_t size, double &last)
{
	const froute	&r = f_route[h];
	const uint32_t	*l = r.nlinks <= FR_INLINE ? r.l : f_links.data() +
			    r.link0;
	flink		*fl = f_link.data();
	double		 t0 = fast_clock, t;

	for (uint32_t i = 0; i < r.nlinks; i++)
		t0 = std::max(t0, fl[l[i]].free);
	for (uint32_t i = 0; i < r.nlinks; i++)
		fl[l[i]].free = t0 + (double)size / fl[l[i]].bw;
	t = t0 + (r.rate < INFINITY ? (double)size / r.rate : 0) + r.lat;
	t = std::max(t, last);
	last = t;
	return (t);
}

static void
fast_to_master(uint32_t h, channel &c, msg *m, uint64_t size)
{
	n_frames_in++;
	if (m->type == M_HEARTBEAT)
		n_heartbeats++;
	m->seq = c.next_out++;
	wire_put(h, 0, m);
	fast_push(fast_wire(h, size, f_route[h].last_to_m), FE_TO_MASTER, h);
}

static void
fast_to_worker(uint32_t h, msg *m, uint64_t size)
{
	wire_put(h, 1, m);
	fast_push(fast_wire(h, size, f_route[h].last_to_w), FE_TO_WORKER, h);
}

/* Queue worker h's next wake-up if it moved. */
static void
fast_resched(uint32_t h)
{
	wsim	&w = f_w[h];
	double	 t = w.next_time();

	if (t != INFINITY && t != w.wake) {
		w.wake = t;
		fast_push(t, FE_WAKE, h);
	}
}

/*
 * Everything in one actor: the earliest of the event queue and masterd's
 * timer; our clock is moved there (SimGrid's follows: FAST_SYNC), the
 * events at that time are handled (frames in, workers' timers), then
 * masterd's turn.
 */
static void
fast_actor(void)
{
	master_init();
	fast_routes();
	f_w.resize(workers.size());
	for (uint32_t h = 0; h < workers.size(); h++) {
		f_w[h].begin(h);
		fast_resched(h);
	}
	while (!M.finished) {
		uint64_t dl = sched_deadline(M.s);
		double	 t = master_until(dl);

		if (f_hn > 0)
			t = std::min(t, FH(0).t);
		if (master_inbox_head < master_inbox.size())
			t = fast_clock;
		if (t > fast_clock) {
			fast_clock = t;
			/*
			 * SimGrid's clock follows ours at most FAST_SYNC
			 * behind: this actor is SimGrid's only one here, and
			 * nothing but its log's time stamps reads that clock
			 * (sim_clock() reads ours), so a move per event was
			 * half the simulator's CPU (bench/sg-floor.cpp).
			 */
			if (t - sg4::Engine::get_clock() >= FAST_SYNC) {
				sg4::this_actor::sleep_until(t);
				n_clock_moves++;
			}
		}
		while (f_hn > 0 && FH(0).t <= fast_clock) {
			fevent	 e = FH(0);
			uint32_t eh = e.h();

			fast_pop();
			/*
			 * The next event's worker, frame and route to the
			 * caches while this one is handled: at 10,000
			 * workers each is a cache miss otherwise.
			 */
			if (f_hn > 0) {
				uint32_t nh = FH(0).h();

				for (int o = 0; o < WSIM_HOT; o += 64)
					__builtin_prefetch((char *)&f_w[nh] +
					    o);
				__builtin_prefetch(&f_route[nh]);
				if (FH(0).kind() == FE_TO_MASTER)
					__builtin_prefetch(&M.h[nh]);
			}
			switch (e.kind()) {
			case FE_TO_MASTER:
				if (M.h[eh].wid >= 0)
					__builtin_prefetch(&M.w[M.h[eh].wid]);
				master_inbox.push_back(wire_get(eh, 0));
				break;
			case FE_TO_WORKER:
				f_w[eh].take(wire_get(eh, 1));
				f_w[eh].step();
				fast_resched(eh);
				break;
			case FE_WAKE:
				if (e.t != f_w[eh].wake)
					break;	/* moved since */
				f_w[eh].wake = -1;
				f_w[eh].step();
				fast_resched(eh);
				break;
			}
		}
		master_turn(dl);
	}
	if (fast_clock > sg4::Engine::get_clock())
		sg4::this_actor::sleep_until(fast_clock);
	sim_over = true;
	f_hn = 0;
	for (wsim &w : f_w) {
		for (int d = 0; d < 2; d++)
			while (w.wire_head[d] != nullptr)
				msg_free(wire_get(w.h, d));
		w.drop();
	}
	for (size_t i = master_inbox_head; i < master_inbox.size(); i++)
		msg_free(master_inbox[i]);
	master_inbox.clear();
}

/* ------------------------------------------------------------------ */
/* The command line and the report. */

[[noreturn]] static void
usage(int code)
{
	fprintf(code ? stderr : stdout,
	    "usage: r3q-sim [--platform lan|wan|FILE] [--delay MS] "
	    "[--workers N]\n"
	    "               [--cpus N] [--speeds DIST] [--latency DIST] "
	    "[--bandwidth MBPS]\n"
	    "               [--network simgrid|analytic] [--mtbf D] "
	    "[--repair D]\n"
	    "               [--hang-rate R] [--heartbeat-timeout D] "
	    "[--suspect-grace D]\n"
	    "               [--policy P] [--queue-factor Q|auto] [--mu N] "
	    "[--lambda N]\n"
	    "               [--generations N] [--dim N] [--seed N] "
	    "[--work-ms MS]\n"
	    "               [--noise SIGMA] [--reevaluate-parents] "
	    "[--batch N]\n"
	    "               [--trace FILE] [--csv FILE] [--gen-csv FILE] "
	    "[--quiet] [--stats]\n"
	    "       r3q-sim -h | --help | --version\n"
	    "DIST: V, uniform:A:B, lognormal:MEDIAN:SIGMA, table1 (speeds)\n"
	    "D: a duration such as 500ms, 30s, 10m, 1h\n");
	exit(code);
}

static double
parse_num(const char *opt, const char *s, double lo, double hi)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !(v >= lo) ||
	    !(v <= hi))
		die(EX_USAGE, "--%s: '%s' is not a number from %.15g to %.15g",
		    opt, s, lo, hi);
	return (v);
}

/* A duration in seconds: a number and a unit (ms, s, m, h; s alone). */
static double
parse_dur(const char *opt, const char *s)
{
	char	*end;
	double	 v, mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !(v >= 0))
		goto bad;
	if (strcmp(end, "ms") == 0)
		mul = 1e-3;
	else if (strcmp(end, "s") == 0 || *end == '\0')
		mul = 1;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60;
	else if (strcmp(end, "h") == 0)
		mul = 3600;
	else
		goto bad;
	return (v * mul);
 bad:
	die(EX_USAGE, "--%s: '%s' is not a duration (500ms, 30s, 10m, 1h)",
	    opt, s);
}

static dist
parse_dist(const char *opt, const char *s, bool speeds)
{
	dist	 d;
	double	 a, b;
	char	 tail;

	if (speeds && strcmp(s, "table1") == 0) {
		d.kind = dist::TABLE1;
		return (d);
	}
	if (sscanf(s, "uniform:%lf:%lf%c", &a, &b, &tail) == 2 && a >= 0 &&
	    b >= a) {
		d.kind = dist::UNIFORM;
		d.a = a;
		d.b = b;
		return (d);
	}
	if (sscanf(s, "lognormal:%lf:%lf%c", &a, &b, &tail) == 2 && a > 0 &&
	    b >= 0 && b <= 5) {
		d.kind = dist::LOGNORMAL;
		d.a = a;
		d.b = b;
		return (d);
	}
	if (sscanf(s, "%lf%c", &a, &tail) == 1 && a >= 0) {
		d.kind = dist::CONST;
		d.a = a;
		return (d);
	}
	die(EX_USAGE, "--%s: '%s' is not a distribution (V, uniform:A:B, "
	    "lognormal:MEDIAN:SIGMA%s)", opt, s, speeds ? ", table1" : "");
}

/*
 * --trace FILE: the task times of a real job, replayed: the Chrome
 * trace-event JSON of `r3qctl report --trace`, or a CSV of times in
 * milliseconds (report_times_parse(), which the fuzz target "trace" runs).
 */
static void
trace_load(const std::string &path)
{
	FILE		*f;
	std::string	 buf;
	char		 chunk[65536], err[512];
	double		*ms;
	size_t		 n;

	if ((f = fopen(path.c_str(), "r")) == NULL)
		die(EX_USAGE, "--trace: %s: %s", path.c_str(), strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf.append(chunk, n);
	if (ferror(f))
		die(EX_FAIL, "--trace: %s: %s", path.c_str(), strerror(errno));
	fclose(f);
	if (report_times_parse(buf.data(), buf.size(), path.c_str(), &ms, &n,
	    err, sizeof(err)) == -1)
		die(EX_DATAERR, "%s", err);
	trace_ms.assign(ms, ms + n);
	free(ms);
}

static void
parse_opts(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "platform",		required_argument, NULL, 'P' },
		{ "delay",		required_argument, NULL, 'y' },
		{ "workers",		required_argument, NULL, 'n' },
		{ "cpus",		required_argument, NULL, 'c' },
		{ "speeds",		required_argument, NULL, 'v' },
		{ "latency",		required_argument, NULL, 't' },
		{ "bandwidth",		required_argument, NULL, 'b' },
		{ "network",		required_argument, NULL, 'K' },
		{ "mtbf",		required_argument, NULL, 'F' },
		{ "repair",		required_argument, NULL, 'R' },
		{ "hang-rate",		required_argument, NULL, 'H' },
		{ "heartbeat-timeout",	required_argument, NULL, 'T' },
		{ "suspect-grace",	required_argument, NULL, 'G' },
		{ "policy",		required_argument, NULL, 'p' },
		{ "queue-factor",	required_argument, NULL, 'Q' },
		{ "mu",			required_argument, NULL, 'm' },
		{ "lambda",		required_argument, NULL, 'l' },
		{ "generations",	required_argument, NULL, 'g' },
		{ "dim",		required_argument, NULL, 'd' },
		{ "seed",		required_argument, NULL, 's' },
		{ "work-ms",		required_argument, NULL, 'w' },
		{ "noise",		required_argument, NULL, 'N' },
		{ "reevaluate-parents",	no_argument,	   NULL, 'r' },
		{ "batch",		required_argument, NULL, 'B' },
		{ "trace",		required_argument, NULL, 'X' },
		{ "csv",		required_argument, NULL, 'C' },
		{ "gen-csv",		required_argument, NULL, 'E' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "stats",		no_argument,	   NULL, 'S' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char	 err[256];
	int	 ch, li;
	bool	 gen = false;

	memset(&O.ep, 0, sizeof(O.ep));
	O.ep.mu = 30;
	O.ep.lambda = 70;
	O.ep.generations = 100;
	O.ep.dim = 30;
	O.ep.seed = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		const char *name = ch == '?' || ch == ':' || ch == 'h' ? "" :
		    longopts[li].name;

		switch (ch) {
		case 'h':
			usage(EX_OK);
		case 'V':
			/* The core and the wire sizes of this protocol. */
			printf("r3q-sim %s (R3Q protocol %d)\n",
			    PACKAGE_VERSION, R3Q_PROTOCOL);
			exit(fflush(stdout) == EOF ? 1 : EX_OK);
		case 'P':
			O.platform = optarg;
			break;
		case 'y':
			O.delay_ms = parse_num(name, optarg, 0, 60000);
			break;
		case 'n':
			O.workers = (uint32_t)parse_num(name, optarg, 1,
			    1000000);
			gen = true;
			break;
		case 'c':
			O.cpus = (uint32_t)parse_num(name, optarg, 1, 1024);
			break;
		case 'v':
			O.speeds = parse_dist(name, optarg, true);
			gen = true;
			break;
		case 't':
			O.latency = parse_dist(name, optarg, false);
			gen = true;
			break;
		case 'b':
			O.bandwidth = parse_num(name, optarg, 1e-3, 1e7) *
			    1e6 / 8;
			break;
		case 'K':
			if (strcmp(optarg, "analytic") == 0)
				fast_net = true;
			else if (strcmp(optarg, "simgrid") == 0)
				fast_net = false;
			else
				die(EX_USAGE, "--network: '%s' is not simgrid "
				    "or analytic", optarg);
			break;
		case 'F':
			O.mtbf = parse_dur(name, optarg);
			break;
		case 'R':
			O.repair = parse_dur(name, optarg);
			break;
		case 'H':
			O.hang_rate = parse_num(name, optarg, 0, 1);
			break;
		case 'T':
			O.hb_timeout = parse_dur(name, optarg);
			if (O.hb_timeout < 0.1)
				die(EX_USAGE, "--heartbeat-timeout: at least "
				    "100ms");
			break;
		case 'G':
			O.grace = parse_dur(name, optarg);
			break;
		case 'p':
			if (sched_policy_parse(optarg, &O.policy) == -1)
				die(EX_USAGE, "--policy: '%s' is not one of "
				    "wq, rr, rwq, r3q", optarg);
			break;
		case 'Q':
			if (strcmp(optarg, "auto") == 0)
				O.qf = SCHED_QF_AUTO;
			else
				O.qf = (uint32_t)parse_num(name, optarg, 1,
				    64);
			break;
		case 'm': case 'l': case 'g': case 'd': {
			uint32_t v = (uint32_t)parse_num(name, optarg, 0,
			    UINT32_MAX);

			if (ch == 'm')
				O.ep.mu = v;
			else if (ch == 'l')
				O.ep.lambda = v;
			else if (ch == 'g')
				O.ep.generations = v;
			else
				O.ep.dim = v;
			break;
		}
		case 's':
			O.ep.seed = strtoull(optarg, NULL, 10);
			parse_num(name, optarg, 0, 1.8446744073709552e19);
			break;
		case 'w':
			O.work_ms = parse_num(name, optarg, 0.001, 3600000);
			break;
		case 'N':
			O.noise = parse_num(name, optarg, 0, 5);
			break;
		case 'r':
			O.ep.reevaluate_parents = 1;
			break;
		case 'B':
			O.batch = (uint32_t)parse_num(name, optarg, 1,
			    100000000);
			break;
		case 'X':
			O.trace = optarg;
			break;
		case 'C':
			O.csv = optarg;
			break;
		case 'E':
			O.gen_csv = optarg;
			break;
		case 'q':
			O.quiet = true;
			break;
		case 'S':
			O.stats = true;
			break;
		case ':':
			die(EX_USAGE, "option '%s' needs a value",
			    argv[optind - 1]);
		default:
			fprintf(stderr, "r3q-sim: unknown option '%s'\n",
			    argv[optind - 1]);
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		die(EX_USAGE, "unexpected argument '%s'", argv[optind]);
	if (es_params_check(&O.ep, err, sizeof(err)) == -1)
		die(EX_USAGE, "%s", err);
	if (O.platform.empty())
		O.platform = gen ? "" : "lan";
	if (!O.platform.empty() && gen && (O.platform == "lan" ||
	    O.platform == "wan"))
		die(EX_USAGE, "--platform %s has its own hosts: --workers, "
		    "--speeds and --latency are for a generated platform",
		    O.platform.c_str());
	if (O.platform.empty() && O.workers == 0)
		die(EX_USAGE, "a generated platform needs --workers N");
	if (!O.trace.empty())
		trace_load(O.trace);
}

/* The policy's name in the benches' CSV (bench/policies). */
static std::string
policy_name(void)
{
	std::string	 p = sched_policy_name(O.policy);

	/* The queue factor is RWQ's and R3Q's alone. */
	if (O.qf == SCHED_QF_AUTO && (O.policy == SCHED_POLICY_RWQ ||
	    O.policy == SCHED_POLICY_R3Q))
		p += "-auto";
	return (p);
}

static long
maxrss_kb(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_maxrss);
}

/* CPU seconds used: on a shared machine, the fair measure of speed. */
static double
cpu_s(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

#define S(ns)	((double)(ns) / 1e9)

/*
 * The least time a generation of n tasks of the same work can take on
 * these workers (no churn): worker w starts its first task a round trip
 * after the generation does (the Assign out, the result back) and runs
 * only whole tasks, cpus at once, so n fit by T when the sum over w of
 * cpus x floor((T - rtt_w) x speed_w / work) reaches n.  LB spreads the
 * work as if it were divisible and costs no round trip; this is LB + G x
 * RTT with each generation's tail (its last tasks, whole, on the workers
 * that can end them first) in it: no policy can do better.
 */
static double
gen_bound(uint32_t n, const std::vector<double> &rtt, double work_s)
{
	double	 lo = 0, hi = 0, mid, fit;

	for (size_t i = 0; i < workers.size(); i++)
		hi = std::max(hi, rtt[i] + work_s / workers[i].speed *
		    std::ceil((double)n / workers[i].cpus));
	for (int it = 0; it < 200 && hi - lo > 1e-9; it++) {
		mid = (lo + hi) / 2;
		fit = 0;
		for (size_t i = 0; i < workers.size() && fit < n; i++)
			if (mid > rtt[i])
				fit += workers[i].cpus * std::floor((mid -
				    rtt[i]) * workers[i].speed / work_s);
		if (fit >= n)
			hi = mid;
		else
			lo = mid;
	}
	return (hi);
}

/*
 * The bound over the generations run of at least min_tasks tasks; 0 when
 * task times vary or churn.
 */
static double
run_bound(uint32_t min_tasks)
{
	std::vector<double>	 rtt(workers.size());
	std::map<uint32_t, double> memo;
	double			 t = 0;

	if (!trace_ms.empty() || O.noise > 0 || O.mtbf > 0 || M.lost > 0)
		return (0);
	for (size_t i = 0; i < workers.size(); i++) {
		rtt[i] = 2 * route_lat(i);
	}
	for (const gen_rep &g : M.gens) {
		if (g.tasks < min_tasks)
			continue;
		auto it = memo.find(g.tasks);

		if (it == memo.end())
			it = memo.emplace(g.tasks, gen_bound(g.tasks, rtt,
			    O.work_ms / 1000)).first;
		t += it->second;
	}
	return (t);
}

/*
 * The efficiency of the generations with at least 10 tasks a worker
 * alone (issue 23's target: R3Q-auto >= 90 % at 10,000 workers "whenever
 * a generation has >= 10 tasks per worker"), when some have fewer: an
 * ES's generation 0 evaluates its mu parents only, one task a worker in
 * bench/simulate's scale runs, all on workers not yet measured.
 */
static void
print_busy_gens(double speed_sum)
{
	uint32_t	 min = (uint32_t)std::min<size_t>(10 * workers.size(),
			    UINT32_MAX);
	double		 lb = 0, total = 0, bound;
	size_t		 n = 0;

	for (const gen_rep &g : M.gens) {
		if (g.tasks < min)
			continue;
		lb += g.work_ms / 1000 / speed_sum;
		total += S(g.total);
		n++;
	}
	if (n == 0 || n == M.gens.size() || !(total > 0))
		return;
	printf("generations of 10 tasks a worker or more: %zu of %zu, "
	    "efficiency %.1f %% (lower bound %.3f s in %.3f s)", n,
	    M.gens.size(), 100 * lb / total, lb, total);
	if ((bound = run_bound(min)) > 0)
		printf(", at most %.1f %% (bound %.3f s)", 100 * lb / bound,
		    bound);
	printf("\n");
}

/*
 * Transparent huge pages for malloc's memory (glibc's malloc.hugetlb
 * tunable, read only when a program starts: hence the exec of ourselves
 * with it set).  At 10,000 workers the first touch of each 4 KiB page was
 * a tenth of the run's CPU in this VM's page-fault path; with 2 MiB pages
 * it is nearly gone.  Only for large runs (main): in a small one the
 * exec and the larger pages cost more than they save.  Left alone when
 * GLIBC_TUNABLES is already set or R3Q_SIM_HUGEPAGES is 0; results do
 * not depend on it.
 */
static void
hugepages(char **argv)
{
#if defined(__linux__) && defined(__GLIBC__)
	const char	*e = getenv("R3Q_SIM_HUGEPAGES"),
			*pre = getenv("LD_PRELOAD");
	char		 path[4096];
	ssize_t		 n;

	if (getenv("GLIBC_TUNABLES") != NULL || (e != NULL &&
	    strcmp(e, "0") == 0))
		return;
	/* under valgrind the exec would leave it: not there */
	if (pre != NULL && strstr(pre, "vgpreload") != NULL)
		return;
	if ((n = readlink("/proc/self/exe", path, sizeof(path) - 1)) <= 0)
		return;
	path[n] = '\0';
	if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) == -1)
		return;
	execv(path, argv);
	unsetenv("GLIBC_TUNABLES");	/* no exec: on without them */
#else
	(void)argv;
#endif
}

int
main(int argc, char *argv[])
{
	struct timespec	 w0, w1;
	uint64_t	 sync = 0, comm = 0, compute = 0, t = 0;
	uint32_t	 repl = 0, kh = 0, kr = 0;
	double		 work_ms = 0, speed_sum = 0, lb = 0, eff = 0, wall;
	double		 bound;
	const double	*bx;
	int		 sargc = 4;
	char		 a0[] = "r3q-sim", a1[] = "--log=root.thres:critical",
			 a2[] = "--cfg=network/model:CM02",
			 a3[] = "--cfg=network/crosstraffic:0",
			 *sargv[] = { a0, a1, a2, a3, NULL };

	parse_opts(argc, argv);
	if (O.workers >= 2000 || (uint64_t)O.ep.mu + O.ep.lambda >= 20000 ||
	    O.batch >= 20000)
		hugepages(argv);
	payload_len = es_payload_len(O.batch > 0 ? 0 : O.ep.dim);
	check_sizes = getenv("R3Q_SIM_CHECK_SIZES") != NULL &&
	    strcmp(getenv("R3Q_SIM_CHECK_SIZES"), "0") != 0;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	timing = O.stats;
	core_clock_start();
	sg4::Engine e(&sargc, sargv);
	sg4::Engine::set_config("contexts/stack-size:128");
	if (getenv("R3Q_SIM_CFG") != NULL)
		sg4::Engine::set_config(getenv("R3Q_SIM_CFG"));
	if (O.platform.empty() || O.platform == "lan" || O.platform == "wan")
		platform_build();
	else
		platform_file(e, O.platform);
	/* --network analytic has no comms: no mailboxes, no relays */
	for (size_t i = 0; !fast_net &&
	    i < std::min<size_t>(64, 1 + workers.size() / 32); i++) {
		master_mbox.push_back(sg4::Mailbox::by_name("masterd-" +
		    std::to_string(i)));
		out_relays.emplace_back();
		out_relays.back().mtx = sg4::Mutex::create();
		out_relays.back().cv = sg4::ConditionVariable::create();
	}
	master_mtx = sg4::Mutex::create();
	master_cv = sg4::ConditionVariable::create();
	for (uint32_t i = 0; i < workers.size(); i++) {
		workers[i].mbox = fast_net ? nullptr :
		    sg4::Mailbox::by_name("w" + std::to_string(i));
		if (!(workers[i].speed > 0))
			die(EX_DATAERR, "%s: host %s has no speed",
			    O.platform.c_str(), workers[i].host != nullptr ?
			    workers[i].host->get_cname() : "?");
	}
	if (!O.quiet && O.batch > 0)
		printf("job 1: batch of %u synth tasks, %s, seed %" PRIu64 "\n",
		    O.batch, trace_ms.empty() ? "--work-ms each" :
		    "times from --trace", O.ep.seed);
	else if (!O.quiet)
		printf("job 1: (%u+%u)-ES, %u dimensions, %u generations, lu 0, "
		    "seed %" PRIu64 "%s\n", O.ep.mu, O.ep.lambda, O.ep.dim,
		    O.ep.generations, O.ep.seed, O.ep.reevaluate_parents ?
		    ", parents re-evaluated" : "");
	if (fast_net) {
		if (workers.size() >= (1U << FE_HBITS))
			die(EX_USAGE, "--network analytic: %zu workers, at "
			    "most %u", workers.size(), (1U << FE_HBITS) - 1);
		sg4::Actor::create("masterd", master_host, fast_actor);
		goto run;
	}
	sg4::Actor::create("masterd", master_host, master_actor);
	for (size_t i = 0; i < master_mbox.size(); i++) {
		sg4::Actor::create("relay-in", master_host, in_relay_actor, i);
		sg4::Actor::create("relay-out", master_host, out_relay_actor,
		    i);
	}
	for (uint32_t i = 0; i < workers.size(); i++)
		sg4::Actor::create("workerd", workers[i].host, worker_actor,
		    i);
 run:
	e.run();
	clock_gettime(CLOCK_MONOTONIC, &w1);
	M.core_ns = core_ns_of(M.core_ns);
	wall = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec -
	    w0.tv_nsec) / 1e9;
	if (!M.finished)
		die(EX_FAIL, "the simulation ended before the job did");

	for (const gen_rep &g : M.gens) {
		sync += g.sync;
		comm += g.comm;
		compute += g.compute;
		repl += g.replicas;
		kh += g.killed_held;
		kr += g.killed_running;
		work_ms += g.work_ms;
		t += g.total;
	}
	if (t > 0)
		speed_sum = M.speed_time / (double)t;
	if (speed_sum > 0) {
		lb = work_ms / 1000 / speed_sum;
		eff = lb / S(M.end - M.start);
	}
	if (!M.error.empty())
		printf("job 1 failed: %s\n", M.error.c_str());
	if (!M.error.empty() || M.gens.empty())
		return (EX_FAIL);
	if (O.batch > 0)
		printf("summary: job 1 done, policy %s, batch of %u tasks, %"
		    PRIu64 " done, %.3f s", sched_policy_name(O.policy),
		    O.batch, M.tasks_done, S(M.end - M.start));
	else {
		printf("best fitness: %.17g\n", es_best_f(M.es));
		printf("best individual:");
		bx = es_best_x(M.es);
		for (uint32_t i = 0; i < O.ep.dim; i++)
			printf(" %.17g", bx[i]);
		printf("\n");
		printf("summary: job 1 done, policy %s, %u generations, %"
		    PRIu64 " evaluations, %.3f s", sched_policy_name(O.policy),
		    M.gens.back().gen, M.tasks_done, S(M.end - M.start));
	}
	if (M.dropped > 0)
		printf(", %" PRIu64 " duplicate results dropped", M.dropped);
	printf("\n");
	printf("time: compute %.3f s, communication %.3f s, synchronisation "
	    "wait %.3f s\n", S(compute), S(comm), S(sync));
	printf("replicas %u, losing copies terminated: %u held, %u running\n",
	    repl, kh, kr);
	if (eff > 0)
		printf("efficiency: %.1f %% (lower bound %.3f s = %.1f s of "
		    "work / speed %.2f)\n", eff * 100, lb, work_ms / 1000,
		    speed_sum);
	if (O.mtbf > 0 || M.lost > 0)
		printf("churn: %" PRIu64 " crashes, %" PRIu64 " hangs, %" PRIu64
		    " workers lost (%" PRIu64 " by heartbeat_timeout), %" PRIu64
		    " suspicions, %" PRIu64 " tasks lost\n", n_crashes, n_hangs,
		    M.lost, M.hung_lost, M.suspects, M.submitted -
		    M.tasks_done);
	if (M.suspects > 0 && O.mtbf == 0 && M.lost == 0)
		printf("suspect detection: %" PRIu64 " suspicions (%" PRIu64
		    " of slow machines, not counted), %" PRIu64
		    " cool-downs (--suspect-grace %g s)\n", M.suspects,
		    M.slow_suspects, M.cooldowns, O.grace);
	if (O.stats && eff > 0 && (bound = run_bound(0)) > 0)
		printf("bound: %.3f s, efficiency at most %.1f %% (each "
		    "generation's tasks whole on the workers, a round trip "
		    "first: LB + G x RTT with the tails)\n", bound,
		    100 * lb / bound);
	if (O.stats && eff > 0)
		print_busy_gens(speed_sum);
	if (O.stats) {
		uint64_t n = M.tasks_done ? M.tasks_done : 1;

		double cpu = cpu_s();

		printf("simulator: %zu workers, %" PRIu64 " executions in "
		    "%.3f s wall: %.0f tasks/s, %.1f MiB max RSS; %.3f s "
		    "CPU: %.0f tasks/CPU-s\n", workers.size(), sim_executions,
		    wall, (double)sim_executions / wall, maxrss_kb() / 1024.0,
		    cpu, (double)sim_executions / cpu);
		/*
		 * The time inside the core is wall-clock (a CPU clock is a
		 * system call): scaled by CPU/wall, it estimates the CPU.
		 */
		printf("core: %" PRIu64 " calls, %" PRIu64 " actions, %.3f s "
		    "inside: %.2f calls, %.2f actions, %.2f us per task (~%.2f "
		    "us CPU)\n", M.calls, M.actions, S(M.core_ns),
		    (double)M.calls / n, (double)M.actions / n,
		    (double)M.core_ns / 1e3 / n,
		    (double)M.core_ns / 1e3 / n * cpu / wall);
		/*
		 * The rest is SimGrid's: every frame is a comm (put, get,
		 * the network model's flow, the actors' switches).
		 */
		uint64_t nf = n_frames_out + n_frames_in;
		double rest = cpu - S(M.core_ns) * cpu / wall;
		printf("frames: %" PRIu64 " master->workers, %" PRIu64
		    " workers->master (%" PRIu64 " heartbeats): %.2f a task; "
		    "the rest, ~%.2f us CPU a frame\n", n_frames_out,
		    n_frames_in, n_heartbeats, (double)nf / n,
		    nf ? rest * 1e6 / (double)nf : 0);
		if (fast_net)
			printf("network: analytic, %" PRIu64 " frames timed, "
			    "SimGrid's clock moved %" PRIu64 " times (%.2f a "
			    "task); %.2f us CPU a task in all\n", nf,
			    n_clock_moves, (double)n_clock_moves / n,
			    cpu * 1e6 / n);
		else
			printf("network: simgrid, %" PRIu64 " frames as comms; "
			    "%.2f us CPU a task in all\n", nf, cpu * 1e6 / n);
	}
	if (!O.csv.empty()) {
		FILE *f = fopen(O.csv.c_str(), "w");
		double delay = O.platform.empty() ? dist_median(O.latency) / 2 :
		    O.delay_ms;

		if (f == NULL)
			die(EX_FAIL, "%s: %s", O.csv.c_str(), strerror(errno));
		fprintf(f, "granularity_ms,delay_ms,policy,generations,total_s,"
		    "sync_s,comm_s,compute_s,efficiency,lower_bound_s,"
		    "replicas,killed_held,killed_running\n");
		fprintf(f, "%g,%g,%s,%u,%.6f,%.6f,%.6f,%.6f,%.17g,%.17g,%u,%u,"
		    "%u\n", O.work_ms, delay, policy_name().c_str(),
		    O.batch > 0 ? 1 : O.ep.generations, S(M.end - M.start),
		    S(sync), S(comm), S(compute), eff, lb, repl, kh, kr);
		if (fclose(f) == EOF)
			die(EX_FAIL, "%s: %s", O.csv.c_str(), strerror(errno));
	}
	if (!O.gen_csv.empty()) {
		FILE *f = fopen(O.gen_csv.c_str(), "w");

		if (f == NULL)
			die(EX_FAIL, "%s: %s", O.gen_csv.c_str(),
			    strerror(errno));
		fprintf(f, "generation,best,elapsed_s,tasks,total_s,sync_s,"
		    "comm_s,compute_s,replicas,killed_held,killed_running\n");
		for (const gen_rep &g : M.gens)
			fprintf(f, "%u,%.17g,%.6f,%u,%.6f,%.6f,%.6f,%.6f,%u,%u,"
			    "%u\n", g.gen, g.best, S(g.elapsed), g.tasks,
			    S(g.total), S(g.sync), S(g.comm), S(g.compute),
			    g.replicas, g.killed_held, g.killed_running);
		if (fclose(f) == EOF)
			die(EX_FAIL, "%s: %s", O.gen_csv.c_str(),
			    strerror(errno));
	}
	return (EX_OK);
}
