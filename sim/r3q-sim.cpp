/*
 * r3q-sim: the unchanged scheduling core (common/sched) and ES driver
 * (common/es) on SimGrid's S4U.  One actor plays masterd's loop: decode
 * a message, call the core, drain its actions, send the frames, re-arm
 * one timer at sched_deadline() (masterd/dispatch.c).  One actor per worker
 * plays workerd (workerd/link.c, exec.c): a local FIFO queue, N execution
 * slots, start and half-way notes sent with the results, a heartbeat
 * every second.  Messages cross SimGrid's network model with the byte
 * sizes of the real protobuf encodings plus the frame header; what is
 * left out (masterd's CPU but for --master-cost's fixed time a frame, TLS,
 * the kernel) is in r3q-sim(1).
 *
 * The pieces: options.cpp (the command line and the platform), wire.cpp
 * (messages, their sizes, connections), master.cpp (masterd), worker.cpp
 * (workerd), analytic.cpp (--network analytic, one actor for all),
 * report.cpp (what a run prints), sim.h (what they share); this file
 * starts the engine and the actors.
 */
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "sim.h"

XBT_LOG_NEW_DEFAULT_CATEGORY(r3q_sim, "r3q-sim");

bool	 fast_net;
double	 fast_clock;

/* Print a message and leave with code. */
void
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

/* The engine, the platform, the actors; run, then the report. */
int
main(int argc, char *argv[])
{
	struct timespec	 w0, w1;
	double		 wall;
	int		 sargc = 4;
	char		 a0[] = "r3q-sim", a1[] = "--log=root.thres:critical",
			 a2[] = "--cfg=network/model:CM02",
			 a3[] = "--cfg=network/crosstraffic:0",
			 *sargv[] = { a0, a1, a2, a3, NULL };

	parse_opts(argc, argv);
	if (!O.bnb && (O.workers >= 2000 || (uint64_t)O.ep.mu + O.ep.lambda >= 20000 ||
	    O.batch >= 20000))
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
	/* --driver bnb: its own actors (bnb.cpp), no relays */
	if (O.bnb) {
		for (uint32_t i = 0; i < workers.size(); i++) {
			workers[i].mbox = sg4::Mailbox::by_name("w" +
			    std::to_string(i));
			if (!(workers[i].speed > 0))
				die(EX_DATAERR, "%s: host %s has no speed",
				    O.platform.c_str(),
				    workers[i].host->get_cname());
		}
		bnb_start();
		e.run();
		clock_gettime(CLOCK_MONOTONIC, &w1);
		return (bnb_report((double)(w1.tv_sec - w0.tv_sec) +
		    (double)(w1.tv_nsec - w0.tv_nsec) / 1e9));
	}
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

	return (sim_report(wall));
}
