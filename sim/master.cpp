/*
 * masterd in r3q-sim: one actor plays masterd's loop (masterd/dispatch.c):
 * decode a message, call the unchanged core (common/sched), drain its
 * actions, send the frames, re-arm one timer at sched_deadline(); the ES
 * driver (common/es) makes each generation a batch, and measure_gen()
 * measures it as masterd's job.c does.  Relay actors carry its frames
 * (see master_mbox in sim.h).
 *
 * What repeats masterd and could be shared later (masterd is unchanged
 * here): master_drain() is server_drain()'s switch over the core's
 * actions (ASSIGN appends to the worker's Assign being built, CANCEL
 * takes a queued copy out of it or asks the worker, BATCH_DONE ends the
 * generation, TASK_FAILED ends the job) and master_flush() is
 * server_flush() (cancels first, then assigns); a drain over a small
 * table of callbacks (send an assign, send a cancel, a batch is done)
 * in common/ would serve both.  wid_alloc() is worker_id_alloc(),
 * master_results() the vote and span bookkeeping of worker_results()
 * and job_span(), master_liveness() server_liveness(), gen_start() and
 * gen_done() job_es.c's batch start and job_batch_over().
 */
#include "sim.h"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(r3q_sim);

master				 M;
std::vector<sg4::Mailbox *>	 master_mbox;
std::vector<out_relay>		 out_relays;
std::vector<msg *>		 master_inbox;
size_t				 master_inbox_head;
sg4::MutexPtr			 master_mtx;
sg4::ConditionVariablePtr	 master_cv;
bool				 timing;

/*
 * --master-cost: masterd's one CPU, busy until mcpu_free.  Every frame
 * from a worker and every frame to one takes it for O.master_cost, one
 * after another: a frame that arrived waits in master_inbox until the CPU
 * has parsed it (master_frame_at), then is handled at once with the core's
 * decisions, and each frame that makes is built in turn before it leaves
 * (master_send), before the CPU parses the next; a timer's frames wait for
 * the CPU too.  The core's own time is not counted (r3q-sim --stats
 * measures it: microseconds).  With a cost of 0, nothing waits.
 */
static double	 mcpu_free;

/* The CPU takes one more frame from t on; when it is done with it. */
static double
mcpu_take(double t)
{
	mcpu_free = std::max(t, mcpu_free) + O.master_cost;
	M.mcpu_frames++;
	M.mcpu_busy += O.master_cost;
	return (mcpu_free);
}

/* When masterd can handle the first frame of its inbox (INFINITY: none). */
double
master_frame_at(void)
{
	if (master_inbox_head == master_inbox.size())
		return (INFINITY);
	if (O.master_cost == 0)
		return (sim_clock());
	return (std::max(master_inbox[master_inbox_head]->at, mcpu_free) +
	    O.master_cost);
}

/* A frame of masterd's to host h, through its out-relay. */
void
master_send(uint32_t h, msg *m, uint64_t size)
{
	n_frames_out++;
	m->seq = M.h[h].out.next_out++;
	m->host = h;
	m->at = O.master_cost > 0 ? mcpu_take(sim_clock()) : 0;
	if (fast_net) {
		if (O.master_cost > 0)
			fast_to_worker_at(h, m, size);
		else
			fast_to_worker(h, m, size);
		return;
	}
	out_relay	&r = out_relays[h % out_relays.size()];
	r.q.emplace_back(m, size);
	if (r.q.size() == 1)
		r.cv->notify_one();
}

/* Out-relay i: masterd's frames to its hosts, in order. */
void
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
		for (auto &x : q) {
			/* --master-cost: leaves once masterd built it */
			if (x.first->at > sim_clock())
				sg4::this_actor::sleep_until(x.first->at);
			if (sim_over)
				msg_free(x.first);
			else
				sent.put(workers[x.first->host].mbox, x.first,
				    x.second);
		}
		q.clear();
	}
}

/* In-relay i: the frames of its hosts to masterd, at once. */
void
in_relay_actor(size_t i)
{
	sg4::Mailbox	*mb = master_mbox[i];
	msg		*m = nullptr;
	sg4::CommPtr	 c;

	mb->set_receiver(sg4::Actor::self());
	c = mb->get_async<msg>(&m);
	for (;;) {
		if (comm_wait(c, 1.0)) {
			m->at = sim_clock();
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


/* M.core_ns is in core_ticks(): in ns, from the run's two ends. */
static uint64_t	 ticks0, ticks_ns0;

/* The run starts: the two clocks core_ns_of() scales between. */
void
core_clock_start(void)
{
	ticks_ns0 = cpu_ns();
	ticks0 = core_ticks();
}

uint64_t
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

/* Worker id i is free again. */
static void
wid_release(uint32_t i)
{
	wid_free.push_back(i);
	std::push_heap(wid_free.begin(), wid_free.end(),
	    std::greater<uint32_t>());
}

/* Worker wid has frames to send at the next flush. */
static void
mark_dirty(uint32_t wid)
{
	if (!M.w[wid].dirty) {
		M.w[wid].dirty = true;
		M.dirty.push_back(wid);
	}
}

/* The task ids of the live generation: [first, first + n). */
bool
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

/*
 * The paper's measurements of a generation (measure_gen, which masterd's
 * job.c calls too), over the workers connected now.
 */
static void
gen_measure(const struct sched_batch_report *r, gen_rep *g)
{
	std::vector<struct measure_worker>	 wv(M.w.size());
	struct measure				 m;

	for (uint32_t i = 0; i < M.w.size(); i++) {
		if (!M.w[i].live)
			continue;	/* mw_cpus 0: none */
		wv[i].mw_cpus = workers[M.w[i].host].cpus;
		wv[i].mw_speed = workers[M.w[i].host].speed;
	}
	if (measure_gen(r, M.spans.data(), M.spans.size(), wv.data(),
	    wv.size(), &m) == -1)
		die(EX_FAIL, "out of memory");
	g->total = m.m_total;
	g->sync = m.m_sync;
	g->comm = m.m_comm;
	g->compute = m.m_compute;
	g->replicas = m.m_replicas;
	g->killed_held = m.m_killed_held;
	g->killed_running = m.m_killed_running;
	M.speed_time += m.m_speed_time;
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
			 * The simulated jobs never balance (balance =
			 * none, doc/algorithms.md §4): should one ask, the
			 * worker keeps the task, as a real one that had
			 * started it.
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
		struct measure_span x = { wid, (uint64_t)llround(r.start *
		    1e9), (uint64_t)llround(r.end * 1e9) };
		if (r.status == 0) {
			double	 f;
			uint64_t digest;

			memset(&tm, 0, sizeof(tm));
			tm.at_worker_ns = (uint64_t)llround((r.end -
			    r.received) * 1e9);
			tm.exec_ns = x.ms_end - x.ms_start;
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
void
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
double
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
void
master_turn(uint64_t dl)
{
	double	 now;

	while (master_inbox_head < master_inbox.size() && !M.finished) {
		if (O.master_cost > 0) {
			/* parsed yet?  (SimGrid's clock: to a ns) */
			if (master_frame_at() > sim_clock() + 1e-9)
				break;
			mcpu_take(master_inbox[master_inbox_head]->at);
		}
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

/* masterd under --network simgrid: wait for a frame or the timer. */
void
master_actor(void)
{
	master_init();
	while (!M.finished) {
		double	 now = sim_clock(), until;
		uint64_t dl;

		dl = sched_deadline(M.s);
		until = std::min(master_until(dl), master_frame_at());
		if (until > now) {
			std::unique_lock<sg4::Mutex> lk(*master_mtx);

			/* checked again: taking the lock let the relays run */
			until = std::min(master_until(dl), master_frame_at());
			if (until > sim_clock())
				master_cv->wait_until(lk, until);
		}
		master_turn(dl);
	}
	sim_over = true;
	for (auto &r : out_relays)
		r.cv->notify_all();
}
