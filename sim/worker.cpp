/*
 * workerd in r3q-sim (workerd/link.c, exec.c): one state machine a host
 * (struct wsim) with a local FIFO queue, N execution slots, start and
 * half-way notes sent with the results, a heartbeat every second, and
 * the churn of --mtbf, --repair and --hang-rate.  Under --network
 * simgrid one actor a host runs it (worker_actor); under analytic,
 * fast_actor does (analytic.cpp).  A task runs the synth kind: its work
 * over the host's speed, its output Ridge of the ES driver's individual.
 */
#include "sim.h"

uint64_t	 n_crashes, n_hangs;
uint64_t	 sim_executions;

/*
 * A task's work in reference milliseconds: --work-ms, or with --trace the
 * trace's executions in turn (task ids count from 1 in submit order).
 */
double
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


/* A frame to masterd, by SimGrid or by the analytic network. */
void
wsim::send(msg *x, uint64_t size)
{
	if (fast_net)
		fast_to_master(h, out, x, size);
	else
		send_msg(master_box(h), out, sent, x, size);
}

/* A new connection: its first frame. */
void
wsim::hello()
{
	msg *x = msg_new(M_HELLO, h, inc);

	send(x, size_hello(workers[h].cpus, workers[h].speed));
}

/* The report being built (results, starts, half-way notes). */
msg *
wsim::report()
{
	if (rep == nullptr) {
		rep = msg_new(M_REPORT, h, inc);
	}
	return (rep);
}

/* A frame from masterd in its turn: tasks to queue, copies to cancel. */
void
wsim::handle(msg *x)
{
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

/* workerd starts on host: its slots, its timers, its hello. */
void
wsim::begin(uint32_t host)
{
	h = host;
	slots.resize(workers[h].cpus);
	next_hb = sim_clock() + 1.0;
	next_fail = O.mtbf > 0 ? fail_after(h, nfail) : INFINITY;
	repair_at = INFINITY;
	hello();
}

/* A frame from masterd, in whatever order the network gave it. */
void
wsim::take(msg *got)
{
	if (got->inc != inc || st != W_UP)
		msg_free(got);
	else
		channel_take(in, got, [this](msg *x) { handle(x); });
}

/* The end: its frames and its connection go. */
void
wsim::drop()
{
	sent.drop();
	msg_free(rep);
	rep = nullptr;
	in.reset();
	out.reset();
}

/* One step at the current time: results, starts, heartbeat, failure. */
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

/* workerd on host h under --network simgrid: a frame or a timer. */
void
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
