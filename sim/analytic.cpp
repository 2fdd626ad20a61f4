/*
 * r3q-sim's --network analytic: one actor, no SimGrid comms.  A frame takes the
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
#include <xbt/config.hpp>

#include "sim.h"

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
enum { FE_TO_MASTER, FE_TO_WORKER, FE_WAKE, FE_MASTER_OUT };
/*
 * An event in 16 bytes, four to a cache line: its time, and its number
 * (ties: in the order queued), kind and host in one word, the number
 * highest so that (t, key) orders as (t, number).  A frame's message is
 * not in the event: it is the first of its host's wire in its direction.
 */
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

/* An event for time t into the queue. */
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

/* A frame of host h's workerd to masterd, on its route. */
void
fast_to_master(uint32_t h, channel &c, msg *m, uint64_t size)
{
	n_frames_in++;
	if (m->type == M_HEARTBEAT)
		n_heartbeats++;
	m->seq = c.next_out++;
	wire_put(h, 0, m);
	fast_push(fast_wire(h, size, f_route[h].last_to_m), FE_TO_MASTER, h);
}

/* A frame of masterd's to host h, on its route. */
void
fast_to_worker(uint32_t h, msg *m, uint64_t size)
{
	wire_put(h, 1, m);
	fast_push(fast_wire(h, size, f_route[h].last_to_w), FE_TO_WORKER, h);
}

/*
 * --master-cost: masterd's frames waiting for its CPU, in the order they
 * leave (m->at, rising: the CPU builds one at a time); an FE_MASTER_OUT
 * event at each one's time puts it on its wire.
 */
static std::vector<std::pair<msg *, uint64_t>>	 f_mout;
static size_t					 f_mout_head;

/* A frame of masterd's to host h, onto its route at m->at. */
void
fast_to_worker_at(uint32_t h, msg *m, uint64_t size)
{
	f_mout.emplace_back(m, size);
	fast_push(m->at, FE_MASTER_OUT, h);
}

/* The next of masterd's frames its CPU has built: onto its wire. */
static void
fast_master_out(uint32_t h)
{
	if (f_mout_head == f_mout.size() ||
	    f_mout[f_mout_head].first->host != h)
		die(EX_FAIL, "internal error: masterd's frames to host %u "
		    "out of order", h);
	std::pair<msg *, uint64_t> x = f_mout[f_mout_head++];

	if (f_mout_head == f_mout.size()) {
		f_mout.clear();
		f_mout_head = 0;
	}
	fast_to_worker(h, x.first, x.second);
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
void
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
		t = std::min(t, master_frame_at());
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
				master_inbox.back()->at = fast_clock;
				break;
			case FE_MASTER_OUT:
				fast_master_out(eh);
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
	for (size_t i = f_mout_head; i < f_mout.size(); i++)
		msg_free(f_mout[i].first);
	f_mout.clear();
	for (size_t i = master_inbox_head; i < master_inbox.size(); i++)
		msg_free(master_inbox[i]);
	master_inbox.clear();
}
