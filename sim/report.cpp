/*
 * What r3q-sim prints at the end of a run: the summary, the paper's
 * measurements (doc/algorithms.md §1.6) summed over the generations, the
 * bounds no policy can beat, the simulator's own costs, the CSV files.
 */
#include <cerrno>
#include <cstdio>

#include <sys/resource.h>

#include "sim.h"

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

/* The run's peak memory in KiB. */
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
 * alone (the simulator's target: R3Q-auto at 90 % or more on 10,000
 * workers whenever a generation has 10 tasks a worker or more), when
 * some have fewer: an ES's generation 0 evaluates its mu parents only,
 * one task a worker in bench/simulate's scale runs, all on workers not
 * yet measured.
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
 * What a run prints once the job is over (r3q-sim(1) OUTPUT): the job's
 * summary, the paper's times and efficiency (measure_efficiency), churn,
 * the bounds and the simulator's own costs with --stats, the --csv and
 * --gen-csv files.  wall is the run's wall-clock time; the exit status.
 */
int
sim_report(double wall)
{
	uint64_t	 sync = 0, comm = 0, compute = 0, t = 0;
	uint32_t	 repl = 0, kh = 0, kr = 0;
	double		 work_ms = 0, speed_sum = 0, lb = 0, eff = 0;
	double		 bound;
	struct measure_eff me;
	const double	*bx;

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
	measure_efficiency(work_ms, M.speed_time, t, M.end - M.start, &me);
	speed_sum = me.me_speed_sum;
	lb = me.me_lower_bound_s;
	eff = me.me_efficiency;
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
	if (O.master_cost > 0)
		printf("master: %" PRIu64 " frames at %g ms of its CPU each, "
		    "busy %.3f s (%.1f %% of the run)\n", M.mcpu_frames,
		    O.master_cost * 1000, M.mcpu_busy, M.end > M.start ?
		    100 * M.mcpu_busy / S(M.end - M.start) : 0);
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
