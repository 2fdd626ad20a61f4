/*
 * r3q-sim --driver bnb: the bnb job's decisions on SimGrid, with the
 * search's nodes charged to simulated CPUs.  One actor plays masterd's
 * bnb driver (masterd/job_bnb.c): the pool best bound first, copies of a
 * task by its bound's rank among the tasks out (--multiplicity, §3.1 of
 * doc/algorithms.md), the first copy's output taken and the others
 * interrupted or left to run (--interrupt), a better makespan pushed to
 * the running tasks (--exchange push).  One actor per worker host plays
 * a single-CPU workerd running "pfsp" tasks: the real search
 * (bnb-host.c over common/bnb), explored BNB_SIM_CHUNK nodes at a time,
 * each step costing its nodes x --node-us on a host of speed 1 (its
 * speed from --speeds, each task's time times exp(--noise x N(0,1))).
 * So eight simulated workers never share the machine's cores, and the
 * answer does not depend on the machine: the same seed gives the same
 * run.
 *
 * What is modelled and what is not.  A worker runs one task at a time
 * and holds up to --queue-factor (default 2, masterd's: one running, one
 * waiting); with 1, the master hands a task or a pending copy to the
 * worker that became idle, as we read the master of Kawakami and Aida's
 * experiment.  A copy goes to a worker that holds none of its task, the
 * one holding the fewest; the pending copies of the tasks out go before
 * the pool when their bound is not larger.  Interrupting a copy takes
 * the master's message to reach the worker (the route's latency): a
 * queued copy is then dropped unstarted, a running one stops at the end
 * of its current step.  A copy that is not interrupted runs to its end
 * and its output is thrown away.  Payloads and outputs cross the network
 * with their encoded sizes; the master's own CPU (the root split,
 * decoding) costs no time.  Donation to idle workers and --resplit are
 * not modelled, so a narrow tree leaves workers idle (bench/bnb-sim
 * prints how busy they were).
 */
#include <cstdio>
#include <deque>

#include "sim.h"
#include "bnb-host.h"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(r3q_sim);

#define BNB_NONE32	INT32_MAX

/* A message between the master and a worker. */
struct bmsg {
	enum { ASSIGN, RESULT, NEWS, QUIT } type;
	uint32_t		 host = 0;
	uint64_t		 task = 0;
	const struct bnb_sub	*sub = nullptr;	/* ASSIGN */
	int32_t			 inc = BNB_NONE32;	/* ASSIGN, NEWS */
	bool			 cancelled = false;	/* RESULT */
	uint64_t		 nodes = 0;	/* RESULT */
	struct sbnb_out		 out = {};	/* RESULT, not cancelled */
	std::vector<uint16_t>	 perm;		/* NEWS */
};

/* A task: one subproblem, its copies.  Owned by the master's table. */
struct btask {
	struct bnb_sub		*sub;
	int32_t			 lb;
	uint32_t		 want;		/* copies */
	uint32_t		 started = 0;
	bool			 done = false;
	std::vector<uint32_t>	 on;		/* hosts holding a copy */
};

/*
 * What the master knows of a worker (held, and the interrupts it sent
 * with the time each reaches the worker), and the worker's own counters.
 */
struct bworker {
	uint32_t			 held = 0;	/* tasks sent, not
							   reported */
	std::map<uint64_t, double>	 cancel;	/* task -> arrival */
	double				 busy_s = 0;	/* simulated CPU */
	double				 chunk_start = -1;	/* -1: idle */
	uint64_t			 execs = 0;
	uint64_t			 seq = 0;	/* last given work */
};

/* The run's state: one, B, alive for the whole run (the master's). */
static struct {
	struct sbnb_job			*job;
	sg4::Mailbox			*inbox;
	std::vector<btask>		 tasks;		/* id - 1 */
	std::vector<uint64_t>		 out;		/* ids not done */
	std::vector<bworker>		 w;
	uint32_t			 queue;		/* tasks a worker
							   holds */
	uint64_t			 seq;
	uint32_t			 nout;		/* tasks not done */
	/* the incumbents pushed: (time sent, makespan), falling */
	std::vector<std::pair<double, int32_t>> pushes;
	std::vector<sg4::CommPtr>	 comms;
	double				 end;
	double				 cpu_s;		/* at the end */
	uint64_t			 nodes, dup_lost, dup_cut;
	uint64_t			 copies, lost, cut, withdrawn;
	uint64_t			 multiplied, full;	/* tasks
							   wanting copies,
							   those given all */
	uint64_t			 news, better;
	double				 real_s;	/* the searches' CPU */
	bool				 done;
	std::string			 error;
} B;

/* The rank's multiplicity (masterd/job_bnb.c bnb_job_pump). */
static uint32_t
bnb_copies(size_t rank)
{
	const std::vector<uint32_t> &m = O.bnb_mult;

	return (m[rank < m.size() ? rank : m.size() - 1]);
}

/* Send m to worker h without waiting for it. */
static void
bnb_send(uint32_t h, bmsg *m, uint64_t size)
{
	B.comms.push_back(workers[h].mbox->put_async(m, size));
	n_frames_out++;
	while (B.comms.size() > 64 && B.comms.front()->test())
		B.comms.erase(B.comms.begin());
}

/* A copy of task id (1-based) goes to host h. */
static void
bnb_assign(uint32_t h, uint64_t id)
{
	btask	&t = B.tasks[id - 1];
	bmsg	*m = new bmsg;

	m->type = bmsg::ASSIGN;
	m->host = h;
	m->task = id;
	m->sub = t.sub;
	m->inc = sbnb_job_inc(B.job);
	t.started++;
	t.on.push_back(h);
	B.w[h].held++;
	B.w[h].seq = ++B.seq;
	if (t.started > 1)
		B.copies++;
	if (t.want > 1 && t.started == t.want)
		B.full++;
	bnb_send(h, m, FRAME_HDRLEN + 16 + sbnb_payload_len(B.job, t.sub));
}

/*
 * The worker that takes the next copy of task t (NULL: any task): the
 * one holding the fewest tasks, then the one given work the longest ago,
 * under --queue-factor and not holding a copy of t already; -1: none.
 */
static int64_t
bnb_pick(const btask *t)
{
	int64_t		 best = -1;

	for (uint32_t h = 0; h < B.w.size(); h++) {
		const bworker &w = B.w[h];

		if (w.held >= B.queue || (t != nullptr &&
		    std::find(t->on.begin(), t->on.end(), h) != t->on.end()))
			continue;
		if (best == -1 || w.held < B.w[best].held ||
		    (w.held == B.w[best].held && w.seq < B.w[best].seq))
			best = h;
	}
	return (best);
}

/*
 * The pending copy of the smallest bound that a worker can take (ties:
 * the older task), 0 when none: a task out with copies not yet sent.
 */
static uint64_t
bnb_pending(int64_t *h)
{
	uint64_t	 best = 0;
	int64_t		 k;

	for (uint64_t id : B.out) {
		const btask &t = B.tasks[id - 1];

		if (t.started >= t.want)
			continue;
		if (best != 0 && (t.lb > B.tasks[best - 1].lb ||
		    (t.lb == B.tasks[best - 1].lb && id > best)))
			continue;
		if ((k = bnb_pick(&t)) == -1)
			continue;
		best = id;
		*h = k;
	}
	return (best);
}

/*
 * Give workers work while one holds fewer than --queue-factor tasks: a
 * pending copy when its bound is not above the pool's, else the pool's
 * best as a new task, its copies by the rank of its bound among the
 * tasks out (as masterd's bnb driver).  A copy goes to a worker without
 * one; it waits in that worker's queue if it is busy.
 */
static void
bnb_dispatch(void)
{
	struct bnb_sub	*s;
	uint64_t	 p;
	size_t		 rank;
	int64_t		 h, hp = -1;

	while ((h = bnb_pick(nullptr)) != -1) {
		p = bnb_pending(&hp);
		if (p != 0 && B.tasks[p - 1].lb <= sbnb_job_pool_bound(B.job)) {
			bnb_assign((uint32_t)hp, p);
			continue;
		}
		if ((s = sbnb_job_pop(B.job)) == NULL) {
			if (p == 0)
				break;
			bnb_assign((uint32_t)hp, p);
			continue;
		}
		rank = 0;
		for (uint64_t id : B.out)
			if (B.tasks[id - 1].lb < sbnb_sub_lb(s))
				rank++;
		btask t;
		t.sub = s;
		t.lb = sbnb_sub_lb(s);
		t.want = bnb_copies(rank);
		if (t.want > 1)
			B.multiplied++;
		B.tasks.push_back(t);
		B.out.push_back(B.tasks.size());
		B.nout++;
		bnb_assign((uint32_t)h, B.tasks.size());
	}
}

/* The incumbent a running task on host h has heard of by now. */
static int32_t
bnb_pushed(uint32_t h)
{
	double	 now = sg4::Engine::get_clock(), lat = route_lat(h);

	for (size_t i = B.pushes.size(); i-- > 0;)
		if (B.pushes[i].first + lat <= now)
			return (B.pushes[i].second);
	return (BNB_NONE32);
}

/* A better incumbent: pushed to every worker (--exchange push). */
static void
bnb_push(void)
{
	B.better++;
	if (O.bnb_exchange)
		B.pushes.emplace_back(sg4::Engine::get_clock(),
		    sbnb_job_inc(B.job));
}

/* A worker's output or interrupted copy. */
static void
bnb_result(bmsg *m)
{
	btask		&t = B.tasks[m->task - 1];
	int32_t		 before = sbnb_job_inc(B.job);
	uint64_t	 nodes;
	char		 err[256];

	B.w[m->host].held--;
	t.on.erase(std::find(t.on.begin(), t.on.end(), m->host));
	if (m->cancelled) {
		B.dup_cut += m->nodes;
		if (m->nodes > 0)
			B.cut++;
		else
			B.withdrawn++;
		return;
	}
	if (t.done) {
		/* A copy left to run lost: its output is stale. */
		B.dup_lost += m->out.nodes;
		B.lost++;
		return;
	}
	if (sbnb_job_result(B.job, t.sub, &m->out, &nodes, err,
	    sizeof(err)) == -1) {
		B.error = err;
		return;
	}
	B.nodes += nodes;
	t.done = true;
	B.out.erase(std::find(B.out.begin(), B.out.end(), m->task));
	B.nout--;
	if (sbnb_job_inc(B.job) < before)
		bnb_push();
	if (!O.bnb_interrupt)
		return;
	for (uint32_t h : t.on)
		B.w[h].cancel[m->task] = sg4::Engine::get_clock() +
		    route_lat(h);
}

/* A message to the master. */
static void
bnb_msg(bmsg *m)
{
	n_frames_in++;
	switch (m->type) {
	case bmsg::RESULT:
		bnb_result(m);
		free(m->out.buf);
		break;
	case bmsg::NEWS:
		B.news++;
		if (sbnb_job_better(B.job, m->inc, m->perm.data()) == 1)
			bnb_push();
		else if (m->inc < sbnb_job_inc(B.job))
			B.error = "a worker's makespan does not recompute";
		break;
	default:
		break;
	}
	delete m;
}

/* The CPU time the workers spent until now, steps under way included. */
static double
bnb_cpu_now(void)
{
	double	 now = sg4::Engine::get_clock(), s = 0;

	for (const bworker &w : B.w)
		s += w.busy_s + (w.chunk_start >= 0 ? now - w.chunk_start : 0);
	return (s);
}

/* masterd: dispatch, take results, until the pool is empty and none out. */
static void
bnb_master(void)
{
	bmsg	*m;
	size_t	 held;

	bnb_dispatch();
	while ((B.nout > 0 || sbnb_job_pool_bound(B.job) <
	    sbnb_job_inc(B.job)) && B.error.empty()) {
		bnb_msg(B.inbox->get<bmsg>());
		bnb_dispatch();
	}
	B.end = sg4::Engine::get_clock();
	B.cpu_s = bnb_cpu_now();
	B.done = true;
	sim_over = true;
	/*
	 * The copies still running stop at their next step, those queued
	 * are dropped; each is reported; then the workers leave.
	 */
	held = 0;
	for (const bworker &w : B.w)
		held += w.held;
	while (held > 0) {
		m = B.inbox->get<bmsg>();
		if (m->type == bmsg::RESULT) {
			held--;
			free(m->out.buf);
		}
		delete m;
	}
	for (uint32_t h = 0; h < workers.size(); h++) {
		m = new bmsg;
		m->type = bmsg::QUIT;
		bnb_send(h, m, FRAME_HDRLEN);
	}
	sg4::Comm::wait_all(B.comms);
	B.comms.clear();
}

/* Send m to the master without waiting. */
static void
bnb_to_master(bmsg *m, uint64_t size)
{
	B.inbox->put_init(m, size)->detach();
}

/* Has task id's interrupt reached worker w? */
static bool
bnb_cut(bworker &w, uint64_t id)
{
	auto	 it = w.cancel.find(id);

	return (sim_over || (it != w.cancel.end() &&
	    sg4::Engine::get_clock() >= it->second));
}

/*
 * workerd on host h: one "pfsp" task at a time, the others sent in its
 * queue (FIFO); a queued copy whose interrupt came is dropped unstarted.
 * Its mailbox receives while it computes (a permanent receiver), as
 * workerd reads its socket while a task runs.
 */
static void
bnb_worker(uint32_t h)
{
	sg4::Mailbox		*mb = workers[h].mbox;
	bworker			&w = B.w[h];
	std::deque<bmsg *>	 q;
	struct sbnb_run		*run;
	const uint16_t		*perm;
	struct timespec		 t0, t1;
	double			 flops, factor;
	uint64_t		 done, k;
	int32_t			 sent, best, pushed;
	int			 over;
	bmsg			*m, *r;

	mb->set_receiver(sg4::Actor::self());
	if ((run = sbnb_run_new(B.job)) == NULL)
		die(EX_FAIL, "out of memory");
	for (;;) {
		while (mb->ready())
			q.push_back(mb->get<bmsg>());
		if (q.empty())
			q.push_back(mb->get<bmsg>());
		m = q.front();
		q.pop_front();
		if (m->type == bmsg::QUIT) {
			delete m;
			break;
		}
		r = new bmsg;
		r->type = bmsg::RESULT;
		r->host = h;
		r->task = m->task;
		if (bnb_cut(w, m->task)) {
			r->cancelled = true;
			w.cancel.erase(m->task);
			delete m;
			bnb_to_master(r, FRAME_HDRLEN + 32);
			continue;
		}
		if (sbnb_run_load(run, m->sub, m->inc) == -1)
			die(EX_FAIL, "host %u: a subproblem it cannot load", h);
		sent = m->inc;
		delete m;
		factor = 1;
		if (O.noise > 0)
			factor = exp(O.noise * rng_gauss(O.ep.seed, RS_NOISE,
			    h, w.execs));
		w.execs++;
		done = 0;
		do {
			if (O.bnb_exchange &&
			    (pushed = bnb_pushed(h)) != BNB_NONE32)
				sbnb_run_lower(run, pushed);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
			if ((over = sbnb_run_step(run, done +
			    O.bnb_chunk)) == -1)
				die(EX_FAIL, "out of memory");
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
			B.real_s += (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
			k = sbnb_run_nodes(run) - done;
			done += k;
			if (k > 0) {
				flops = (double)k * O.bnb_node_us * 1e-6 *
				    factor * REF_FLOPS;
				w.chunk_start = sg4::Engine::get_clock();
				sg4::this_actor::execute(flops);
				w.busy_s += sg4::Engine::get_clock() -
				    w.chunk_start;
				w.chunk_start = -1;
			}
			if (bnb_cut(w, r->task)) {
				r->cancelled = true;
				break;
			}
			best = sbnb_run_best(run, &perm);
			if (O.bnb_exchange && !over && best < sent) {
				bmsg *n = new bmsg;

				n->type = bmsg::NEWS;
				n->host = h;
				n->task = r->task;
				n->inc = sent = best;
				n->perm.assign(perm, perm + sbnb_job_n(B.job));
				bnb_to_master(n, FRAME_HDRLEN + 48 +
				    2 * n->perm.size());
			}
		} while (!over);
		r->nodes = done;
		if (!r->cancelled && sbnb_run_output(run, &r->out) == -1)
			die(EX_FAIL, "out of memory");
		bnb_to_master(r, FRAME_HDRLEN + 32 + r->out.len);
		/* an interrupt that came too late has nothing to stop */
		w.cancel.erase(r->task);
	}
	for (bmsg *x : q)
		delete x;
	mb->set_receiver(nullptr);
	sbnb_run_free(run);
}

/* Start the bnb job's actors; bnb_report() prints its end. */
void
bnb_start(void)
{
	struct sbnb_params	 p;
	char			 err[512];

	memset(&p, 0, sizeof(p));
	p.file = O.bnb_file.c_str();
	p.index = O.bnb_instance;
	p.lb = O.bnb_lb;
	p.branch = O.bnb_branch;
	p.ig = O.bnb_ig;
	p.split_depth = O.bnb_split;
	p.budget = O.bnb_budget;
	err[0] = '\0';
	if ((B.job = sbnb_job_new(&p, err, sizeof(err))) == NULL)
		die(EX_DATAERR, "%s", err);
	B.inbox = sg4::Mailbox::by_name("masterd-bnb");
	B.w.resize(workers.size());
	B.queue = O.qf == SCHED_QF_AUTO ? 2 : O.qf;
	if (!O.quiet)
		printf("job 1: bnb pfsp %s #%u (%ux%u), %zu workers, "
		    "queue %u, multiplicity %s, interrupt %s, exchange %s, "
		    "node budget %" PRIu64 ", %.3g us a node, seed %" PRIu64
		    "\n",
		    O.bnb_file.c_str(), O.bnb_instance, sbnb_job_n(B.job),
		    sbnb_job_m(B.job), workers.size(), B.queue,
		    O.bnb_mult_arg.c_str(),
		    O.bnb_interrupt ? "on" : "off", O.bnb_exchange ? "push" :
		    "none", O.bnb_budget, O.bnb_node_us, O.ep.seed);
	sg4::Actor::create("masterd", master_host, bnb_master);
	for (uint32_t i = 0; i < workers.size(); i++)
		sg4::Actor::create("workerd", workers[i].host, bnb_worker, i);
}

/* What the bnb job did: a summary, and --csv's row. */
int
bnb_report(double wall)
{
	uint64_t	 all;
	int		 proved;
	FILE		*f;

	if (!B.error.empty())
		die(EX_FAIL, "bnb: %s", B.error.c_str());
	if (!B.done)
		die(EX_FAIL, "the simulation ended before the job did");
	proved = sbnb_job_check(B.job);
	all = B.nodes + B.dup_lost + B.dup_cut + sbnb_job_root_nodes(B.job);
	if (!O.quiet) {
		printf("makespan %d%s, first bound %d\n", (int)sbnb_job_inc(B.job),
		    proved ? " proved optimal" : " (its permutation does not "
		    "recompute)", (int)sbnb_job_first(B.job));
		printf("time %.6f s, workers' cpu %.6f s (%.1f %% of %zu "
		    "workers)\n", B.end, B.cpu_s, B.end > 0 ? 100.0 * B.cpu_s /
		    (B.end * (double)workers.size()) : 0.0, workers.size());
		printf("nodes %" PRIu64 " (root split %" PRIu64 "), "
		    "duplicated %" PRIu64 " (%" PRIu64 " in %" PRIu64
		    " interrupted copies, %" PRIu64 " in %" PRIu64
		    " copies left to run), all %" PRIu64 "\n", B.nodes +
		    sbnb_job_root_nodes(B.job), sbnb_job_root_nodes(B.job),
		    B.dup_cut + B.dup_lost, B.dup_cut, B.cut, B.dup_lost,
		    B.lost, all);
		printf("copies withdrawn from a queue unstarted %" PRIu64 "\n",
		    B.withdrawn);
		printf("tasks %zu, copies %" PRIu64 ", better makespans %"
		    PRIu64 " (%" PRIu64 " as news)\n", B.tasks.size(),
		    B.copies, B.better, B.news);
		printf("tasks given copies %" PRIu64 ", all their copies "
		    "sent %" PRIu64 "\n", B.multiplied, B.full);
		printf("simulator: %.3f s wall, %.0f ns a node searched\n",
		    wall, all > 0 ? 1e9 * B.real_s / (double)all : 0.0);
	}
	if (!O.csv.empty()) {
		if ((f = fopen(O.csv.c_str(), "w")) == NULL)
			die(EX_FAIL, "%s: %s", O.csv.c_str(), strerror(errno));
		fprintf(f, "instance,workers,queue,multiplicity,interrupt,"
		    "exchange,seed,makespan,proved,time_s,cpu_s,nodes,"
		    "duplicated,dup_interrupted,dup_left,all_nodes,tasks,"
		    "copies,interrupted,left,withdrawn,multiplied,full\n");
		std::string mult = O.bnb_mult_arg;

		/* m,1 as m/1: one field without quotes */
		std::replace(mult.begin(), mult.end(), ',', '/');
		fprintf(f, "%s:%u,%zu,%u,%s,%s,%s,%" PRIu64 ",%d,%d,%.6f,"
		    "%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
		    PRIu64 ",%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		    ",%" PRIu64 ",%" PRIu64 "\n", O.bnb_file.c_str(), O.bnb_instance, workers.size(),
		    B.queue, mult.c_str(), O.bnb_interrupt ? "on" : "off",
		    O.bnb_exchange ? "push" : "none", O.ep.seed,
		    (int)sbnb_job_inc(B.job), proved, B.end, B.cpu_s, B.nodes +
		    sbnb_job_root_nodes(B.job), B.dup_cut + B.dup_lost,
		    B.dup_cut, B.dup_lost, all, B.tasks.size(), B.copies,
		    B.cut, B.lost, B.withdrawn, B.multiplied, B.full);
		if (fclose(f) == EOF)
			die(EX_FAIL, "%s: %s", O.csv.c_str(), strerror(errno));
	}
	for (btask &t : B.tasks)
		sbnb_sub_free(t.sub);
	sbnb_job_free(B.job);
	return (proved ? EX_OK : EX_FAIL);
}
