/*
 * r3q-sim's messages on the wire: what each frame between masterd and a
 * workerd carries, its size (the real protobuf encoding and the frame
 * header, checked against protobuf-c's own count under
 * R3Q_SIM_CHECK_SIZES=1), the pool frames are taken from, and the
 * connections' order (TCP: frames of one connection arrive in the order
 * sent) over SimGrid's comms.
 */
#include "sim.h"

/*
 * Frames are pooled: a message and its vectors are reused (their capacity
 * kept) rather than allocated and freed once a frame.
 */
static std::vector<msg *>	 msg_pool;

/* A message of this type for host's session inc, from the pool. */
msg *
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

/* A message back to the pool. */
void
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
size_t		 payload_len;

/* Size of an envelope on the wire: its protobuf encoding and a header. */
static uint64_t
env_size(Envelope *e)
{
	return (r3q__envelope__get_packed_size(e) + FRAME_HDRLEN);
}

/* A Hello's size: protobuf-c's count. */
uint64_t
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

/* A Welcome's size: protobuf-c's count. */
uint64_t
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

/* An Assign's size by protobuf-c (R3Q_SIM_CHECK_SIZES). */
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

/* A Cancel's size by protobuf-c (R3Q_SIM_CHECK_SIZES). */
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

/* A Heartbeat's size by protobuf-c, with the halves' notes. */
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
bool		 check_sizes;

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

/* The two counts of a frame differ: a bug here, stop. */
[[noreturn]] static void
size_mismatch(const char *what, uint64_t mine, uint64_t pb)
{
	die(EX_FAIL, "internal error: %s is %" PRIu64 " bytes by the wire "
	    "rules, %" PRIu64 " by protobuf-c", what, mine, pb);
}

/* An Assign's size on the wire. */
uint64_t
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

/* A Cancel's size on the wire. */
uint64_t
size_cancel(std::vector<uint64_t> &ids)
{
	uint64_t	 a = env_of(R3Q__ENVELOPE__BODY_CANCEL, packed1(ids));

	if (check_sizes && a != pb_size_cancel(ids))
		size_mismatch("a Cancel", a, pb_size_cancel(ids));
	return (a);
}

/* A report's size on the wire: results and progress. */
uint64_t
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

/* A Heartbeat's size on the wire. */
uint64_t
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


bool		 sim_over;

/* Wait for c at most timeout seconds; true if it completed. */
bool
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


/* Frames sent, for the simulator's own costs (--stats). */
uint64_t	 n_frames_out, n_frames_in, n_heartbeats;
uint64_t	 n_clock_moves;

/* A workerd's frame to masterd by SimGrid, in its connection's order. */
void
send_msg(sg4::Mailbox *mb, channel &c, outbox &ob, msg *m, uint64_t size)
{
	n_frames_in++;
	if (m->type == M_HEARTBEAT)
		n_heartbeats++;
	m->seq = c.next_out++;
	ob.put(mb, m, size);
}
