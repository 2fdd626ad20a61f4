/*
 * bench/sg-floor: SimGrid's own cost per event, for r3q-sim's speed
 * (issue 23): what a trivial S4U program pays for the events r3q-sim
 * makes, with nothing else to do.  Modes:
 *
 *   clock  one actor moving the clock K times (sleep_until), on a star
 *          of N hosts: what r3q-sim --network analytic pays SimGrid per
 *          event (its "clock moves");
 *   sleep  N actors, K sleeps each: timers spread over actors;
 *   comm   N actors on the star's leaves each sending K 200-byte frames
 *          to one receiver on the centre host (a sleep between frames):
 *          what r3q-sim --network simgrid pays per frame.
 *
 * usage: sg-floor N K clock|sleep|comm [SimGrid --cfg options]
 * build: g++ -O2 -o sg-floor bench/sg-floor.cpp $(pkg-config --cflags --libs simgrid)
 * Prints the CPU time of the run (not the setup) per event.
 */
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace sg4 = simgrid::s4u;

static int		 N, K;
static std::string	 mode;
static sg4::Mailbox	*hub;

static double
cpu(void)
{
	struct rusage	 r;

	getrusage(RUSAGE_SELF, &r);
	return (r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 +
	    r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6);
}

static void
leaf(int i)
{
	if (mode == "clock") {
		double t = 0;

		for (long k = 0; k < K; k++) {
			t += 1e-4 * (1 + (k % 13));
			sg4::this_actor::sleep_until(t);
		}
	} else if (mode == "sleep") {
		for (int k = 0; k < K; k++)
			sg4::this_actor::sleep_for(0.001 * (1 + (i % 7)));
	} else {
		for (int k = 0; k < K; k++) {
			sg4::this_actor::sleep_for(0.001 * (1 + (i % 7)));
			hub->put(new int(i), 200);
		}
	}
}

static void
receiver(void)
{
	for (long j = 0; j < (long)N * K; j++)
		delete hub->get<int>();
}

int
main(int argc, char *argv[])
{
	sg4::Engine	 e(&argc, argv);
	double		 c0, c1, c2;
	long		 ev;

	if (argc < 4) {
		fprintf(stderr, "usage: sg-floor N K clock|sleep|comm "
		    "[--cfg=...]\n");
		return (64);
	}
	N = atoi(argv[1]);
	K = atoi(argv[2]);
	mode = argv[3];
	c0 = cpu();
	auto *z = sg4::create_star_zone("z");
	auto *mh = z->create_host("m", 1e9)->seal();
	auto *ml = z->create_link("ml", 125e6)->set_latency(0)->seal();
	z->add_route(mh->get_netpoint(), nullptr, nullptr, nullptr,
	    { sg4::LinkInRoute(ml) }, true);
	std::vector<sg4::Host *> hs;
	for (int i = 0; i < N; i++) {
		auto *h = z->create_host("h" + std::to_string(i), 1e9)->seal();
		auto *l = z->create_link("l" + std::to_string(i), 125e6)->
		    set_latency(0.01)->seal();
		z->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
		    { sg4::LinkInRoute(l) }, true);
		hs.push_back(h);
	}
	z->seal();
	hub = sg4::Mailbox::by_name("hub");
	if (mode == "clock")
		sg4::Actor::create("clock", mh, leaf, 0);
	else {
		for (int i = 0; i < N; i++)
			sg4::Actor::create("leaf", hs[i], leaf, i);
		if (mode == "comm")
			sg4::Actor::create("receiver", mh, receiver);
	}
	c1 = cpu();
	e.run();
	c2 = cpu();
	ev = mode == "clock" ? (long)K : (long)N * K;
	printf("%s N=%d K=%d: setup %.3f s, run %.3f s CPU, %.2f us an event "
	    "(%ld events)\n", mode.c_str(), N, K, c1 - c0, c2 - c1,
	    (c2 - c1) * 1e6 / (double)ev, ev);
	return (0);
}
