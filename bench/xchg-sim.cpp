/*
 * bench/xchg-sim: the random-matrix experiment of the total-exchange paper
 * (Nakahira and Fujiwara, doc/algorithms.md section 2, its Fig. 1(a)) run
 * on SimGrid, as the paper ran it.  For each p and each random matrix
 * (common/xchg's xchg_random: 1 MiB messages, bandwidths 10 to 1,000 MB/s,
 * start-ups 0.1 to 50 % of an event's cost, as the paper draws them), a
 * platform with a private link per ordered pair (latency T_ij, bandwidth
 * B_ij); every scheduler of common/xchg makes its schedule, and SimGrid
 * plays it by order only: each processor sends its events in the order of
 * their start, and receives them in that order, one at a time, each event
 * (or piece) a comm of its bytes.  The completion SimGrid reports is
 * divided by the lower bound t_tb, the largest row or column sum of the
 * times SimGrid gives each whole message sent alone.
 *
 * SimGrid's network model decides what a message costs: with
 *   --cfg=network/model:CM02 --cfg=network/latency-factor:1
 *   --cfg=network/bandwidth-factor:1 --cfg=network/TCP-gamma:0
 * a comm takes exactly T_ij + m / B_ij, the paper's cost model; SimGrid's
 * default (LV08) multiplies the latency by 13.01, the bandwidth by 0.97
 * and bounds the rate by the TCP window, which makes start-ups weigh more.
 *
 * usage: xchg-sim [-n matrices] [-p p,...] [SimGrid --cfg options]
 * One child process a matrix (SimGrid's engine is one a process); prints
 * one line a p and algorithm: mean and max of completion / t_tb.  With
 * XCHG_SIM_DEBUG set in the environment, each run's analytic and played
 * times go to stderr.
 */
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "xchg/xchg.h"
}

namespace sg4 = simgrid::s4u;

static const enum xchg_algo algos[] = { XCHG_CATERPILLAR, XCHG_OPENSHOP,
    XCHG_STATIC, XCHG_DYNAMIC, XCHG_IMPROVED, XCHG_LBOS, XCHG_INSERT };
#define NALGO	(sizeof(algos) / sizeof(algos[0]))

/*
 * What the paper's text says of each (its Fig. 1(a) is a picture our copy
 * lacks): dynamic split the best of its five; lbos, insertion and the
 * second reading of dynamic split are not in it.  The last is
 * dynamic-preempt's.
 */
static const char *const paper_says[] = { "worse", "worse", "worse",
    "best", "worse", "-", "-", "-" };
static_assert(sizeof(paper_says) / sizeof(paper_says[0]) == NALGO + 1,
    "one paper_says a row");

static struct xchg_matrix	*mx;
static std::vector<sg4::Host *>	 hosts;
static double			 result[NALGO + 2];	/* [0]: t_tb */

/*
 * The other reading of dynamic split (Jinno et al., as the paper's section
 * 3 gives it: "when idle time appears while waiting for communication,
 * split the event that causes it so as to remove the idle time").
 * common/xchg reads it as filling the idle gaps that a sender's and a
 * receiver's lines share with pieces of the event being placed; on random
 * matrices open shop leaves no such gap, and it never splits.  Here the
 * event that causes the idle time is the one the receiver is busy with:
 * open shop as common/xchg's (the sender whose line ends first, ties to
 * the most cost left; the receiver among its messages whose line ends
 * first, ties to the costlier), and when the sender would wait from s to
 * r for that receiver, the receiver's current event k -> j, begun at a,
 * is cut at s if what is cut off costs more to send later than the idle
 * time it removes does not (r - s > T_kj) and the first piece carries
 * something (s - a > T_kj); the rest of k -> j goes back to the pool as a
 * message of its own.  At most PREEMPT_MAX cuts a message.
 */
#define PREEMPT_MAX	8

static int
sched_preempt(const struct xchg_matrix *m, struct xchg_sched *xs)
{
	unsigned		 p = m->xm_p, i, j, bi, bj;
	std::vector<double>	 se(p, 0), re(p, 0), left(p, 0);
	std::vector<uint64_t>	 rem((size_t)p * p);
	std::vector<unsigned>	 cuts((size_t)p * p, 0), cnt(p, 0);
	std::vector<long>	 last(p, -1);	/* j's last receive */
	std::vector<struct xchg_event> ev;

	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++) {
			size_t k = (size_t)i * p + j;

			rem[k] = i == j ? 0 : m->xm_m[k];
			if (rem[k] > 0) {
				cnt[i]++;
				left[i] += xchg_cost(m, i, j);
			}
		}
	for (;;) {
		double bf = INFINITY, c, bc = 0;

		bi = bj = p;
		for (i = 0; i < p; i++)
			if (cnt[i] > 0 && (bi == p || se[i] < bf ||
			    (se[i] == bf && left[i] > left[bi]))) {
				bi = i;
				bf = se[i];
			}
		if (bi == p)
			break;
		bf = INFINITY;
		for (j = 0; j < p; j++) {
			size_t k = (size_t)bi * p + j;

			if (rem[k] == 0)
				continue;
			c = xchg_piece_cost(m, bi, j, rem[k]);
			if (bj == p || re[j] < bf || (re[j] == bf && c > bc)) {
				bj = j;
				bf = re[j];
				bc = c;
			}
		}
		double s = se[bi], r = re[bj];
		if (r > s && last[bj] >= 0) {
			struct xchg_event *q = &ev[(size_t)last[bj]];
			size_t kq = (size_t)q->ev_src * p + bj;
			double T = m->xm_t[kq], B = m->xm_b[kq];

			if (r - s > T && s - q->ev_start > T &&
			    cuts[kq] < PREEMPT_MAX) {
				uint64_t sent = (uint64_t)floor((s -
				    q->ev_start - T) * B);

				if (sent > 0 && sent < q->ev_bytes) {
					unsigned k2 = q->ev_src;

					if (rem[kq] == 0)
						cnt[k2]++;
					rem[kq] += q->ev_bytes - sent;
					left[k2] += xchg_piece_cost(m, k2, bj,
					    q->ev_bytes - sent);
					cuts[kq]++;
					q->ev_bytes = sent;
					q->ev_end = q->ev_start + T +
					    (double)sent / B;
					if (se[k2] == r)
						se[k2] = q->ev_end;
					re[bj] = q->ev_end;
				}
			}
		}
		size_t k = (size_t)bi * p + bj;
		struct xchg_event e;

		memset(&e, 0, sizeof(e));
		e.ev_src = bi;
		e.ev_dst = bj;
		e.ev_bytes = rem[k];
		e.ev_start = std::max(se[bi], re[bj]);
		e.ev_end = e.ev_start + xchg_piece_cost(m, bi, bj, rem[k]);
		left[bi] -= xchg_piece_cost(m, bi, bj, rem[k]);
		rem[k] = 0;
		cnt[bi]--;
		se[bi] = re[bj] = e.ev_end;
		last[bj] = (long)ev.size();
		ev.push_back(e);
	}
	std::stable_sort(ev.begin(), ev.end(), [](const struct xchg_event &a,
	    const struct xchg_event &b) {
		return (a.ev_start < b.ev_start || (a.ev_start == b.ev_start &&
		    a.ev_src < b.ev_src));
	});
	/* Pieces numbered in start order per (i, j). */
	std::vector<unsigned> np((size_t)p * p, 0);
	memset(xs, 0, sizeof(*xs));
	xs->xs_p = p;
	xs->xs_n = xs->xs_cap = ev.size();
	if ((xs->xs_ev = (struct xchg_event *)calloc(ev.size(),
	    sizeof(*xs->xs_ev))) == nullptr)
		return (-1);
	for (size_t k = 0; k < ev.size(); k++) {
		ev[k].ev_piece = np[(size_t)ev[k].ev_src * p + ev[k].ev_dst]++;
		xs->xs_ev[k] = ev[k];
		xs->xs_time = std::max(xs->xs_time, ev[k].ev_end);
	}
	snprintf(xs->xs_name, sizeof(xs->xs_name), "dynamic-preempt");
	return (0);
}

/* Send (or receive) the events listed, one after another. */
static void
port(std::vector<std::string> boxes, std::vector<uint64_t> bytes, bool send)
{
	for (size_t k = 0; k < boxes.size(); k++) {
		sg4::Mailbox *mb = sg4::Mailbox::by_name(boxes[k]);

		if (send)
			mb->put(new int(0), (double)bytes[k]);
		else
			delete mb->get<int>();
	}
}

/* Play the schedule xs by order; its completion time. */
static double
play(const struct xchg_sched *xs, const std::string &tag)
{
	unsigned				 p = mx->xm_p, i;
	std::vector<std::vector<std::string>>	 sb(p), rb(p);
	std::vector<std::vector<uint64_t>>	 sn(p), rn(p);
	std::vector<sg4::ActorPtr>		 actors;
	double					 t0 = sg4::Engine::get_clock();

	for (size_t k = 0; k < xs->xs_n; k++) {
		const struct xchg_event *ev = &xs->xs_ev[k];
		std::string b = tag + "/" + std::to_string(k);

		sb[ev->ev_src].push_back(b);
		sn[ev->ev_src].push_back(ev->ev_bytes);
	}
	/* Each receiver takes its events in the order of their start. */
	std::vector<size_t> ord(xs->xs_n);
	for (size_t k = 0; k < xs->xs_n; k++)
		ord[k] = k;
	std::stable_sort(ord.begin(), ord.end(), [xs](size_t a, size_t b) {
		return (xs->xs_ev[a].ev_start < xs->xs_ev[b].ev_start);
	});
	for (size_t k : ord) {
		const struct xchg_event *ev = &xs->xs_ev[k];

		rb[ev->ev_dst].push_back(tag + "/" + std::to_string(k));
		rn[ev->ev_dst].push_back(ev->ev_bytes);
	}
	for (i = 0; i < p; i++) {
		actors.push_back(sg4::Actor::create("s" + std::to_string(i),
		    hosts[i], port, sb[i], sn[i], true));
		actors.push_back(sg4::Actor::create("r" + std::to_string(i),
		    hosts[i], port, rb[i], rn[i], false));
	}
	for (auto &a : actors)
		a->join();
	return (sg4::Engine::get_clock() - t0);
}

/* Measure each message alone (t_tb), then play every algorithm. */
static void
driver()
{
	unsigned			 p = mx->xm_p, i, j;
	std::vector<double>		 c((size_t)p * p, 0), row(p, 0), col(p, 0);
	std::vector<sg4::ActorPtr>	 actors;
	struct xchg_params		 xp;
	char				 err[256];

	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++) {
			if (i == j)
				continue;
			std::string b = "alone/" + std::to_string(i * p + j);
			uint64_t n = mx->xm_m[(size_t)i * p + j];
			double *cij = &c[(size_t)i * p + j];

			actors.push_back(sg4::Actor::create("a", hosts[i],
			    [b, n, cij]() {
				double t = sg4::Engine::get_clock();
				sg4::Mailbox::by_name(b)->put(new int(0),
				    (double)n);
				*cij = sg4::Engine::get_clock() - t;
			}));
			actors.push_back(sg4::Actor::create("b", hosts[j],
			    [b]() {
				delete sg4::Mailbox::by_name(b)->get<int>();
			}));
		}
	for (auto &a : actors)
		a->join();
	result[0] = 0;
	for (i = 0; i < p; i++)
		for (j = 0; j < p; j++) {
			row[i] += c[(size_t)i * p + j];
			col[j] += c[(size_t)i * p + j];
		}
	for (i = 0; i < p; i++)
		result[0] = std::max(result[0], std::max(row[i], col[i]));
	xchg_params_default(&xp);
	for (size_t a = 0; a < NALGO; a++) {
		struct xchg_sched xs;

		memset(&xs, 0, sizeof(xs));
		if (xchg_schedule(mx, algos[a], &xp, &xs, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "xchg-sim: %s: %s\n",
			    xchg_algo_name(algos[a]), err);
			exit(1);
		}
		result[a + 1] = play(&xs, xchg_algo_name(algos[a]));
		if (getenv("XCHG_SIM_DEBUG") != nullptr)
			fprintf(stderr, "%s: analytic %g / %g, played %g / %g\n",
			    xchg_algo_name(algos[a]), xs.xs_time,
			    xchg_lower_bound(mx), result[a + 1], result[0]);
		xchg_sched_free(&xs);
	}
	/* The other reading of dynamic split, checked by the validator. */
	struct xchg_sched xs;
	if (sched_preempt(mx, &xs) == -1 ||
	    xchg_validate(mx, &xs, err, sizeof(err)) == -1) {
		fprintf(stderr, "xchg-sim: dynamic-preempt: %s\n", err);
		exit(1);
	}
	result[NALGO + 1] = play(&xs, "preempt");
	if (getenv("XCHG_SIM_DEBUG") != nullptr)
		fprintf(stderr, "dynamic-preempt: analytic %g, %zu events, "
		    "played %g\n", xs.xs_time, xs.xs_n, result[NALGO + 1]);
	xchg_sched_free(&xs);
}

/* One matrix in this process: the platform, the runs, a line to fd. */
static int
one(int argc, char **argv, unsigned p, uint64_t seed, int fd)
{
	sg4::Engine	 e(&argc, argv);
	char		 err[256];
	std::string	 line;

	if ((mx = xchg_random(p, seed, err, sizeof(err))) == nullptr) {
		fprintf(stderr, "xchg-sim: %s\n", err);
		return (1);
	}
	auto *zone = sg4::create_full_zone("grid");
	for (unsigned i = 0; i < p; i++)
		hosts.push_back(zone->create_host("h" + std::to_string(i),
		    1e9));
	for (unsigned i = 0; i < p; i++)
		for (unsigned j = 0; j < p; j++) {
			if (i == j)
				continue;
			size_t k = (size_t)i * p + j;
			sg4::Link *l = zone->create_link("l" +
			    std::to_string(k), mx->xm_b[k])->
			    set_latency(mx->xm_t[k]);
			zone->add_route(hosts[i]->get_netpoint(),
			    hosts[j]->get_netpoint(), nullptr, nullptr,
			    { sg4::LinkInRoute(l) }, false);
		}
	zone->seal();
	sg4::Actor::create("driver", hosts[0], driver);
	e.run();
	for (size_t a = 0; a <= NALGO + 1; a++)
		line += (a ? " " : "") + std::to_string(result[a]);
	line += "\n";
	if (write(fd, line.data(), line.size()) != (ssize_t)line.size())
		return (1);
	xchg_matrix_free(mx);
	return (0);
}

int
main(int argc, char **argv)
{
	std::vector<unsigned>	 ps = { 8, 16, 32, 64 };
	unsigned		 n = 10;

	/* -n and -p are ours; the rest (SimGrid's --cfg) goes to each engine. */
	std::vector<char *> sgargv = { argv[0] };
	for (int k = 1; k < argc; k++) {
		if (strcmp(argv[k], "-n") == 0 && k + 1 < argc)
			n = (unsigned)atoi(argv[++k]);
		else if (strcmp(argv[k], "-p") == 0 && k + 1 < argc) {
			ps.clear();
			for (char *s = strtok(argv[++k], ","); s != nullptr;
			    s = strtok(nullptr, ","))
				ps.push_back((unsigned)atoi(s));
		} else if (strncmp(argv[k], "--", 2) == 0)
			sgargv.push_back(argv[k]);
		else {
			fprintf(stderr, "usage: xchg-sim [-n matrices] "
			    "[-p p,...] [SimGrid --cfg options]\n");
			return (64);
		}
	}
	sgargv.push_back(nullptr);

	printf("the paper (Nakahira and Fujiwara), Fig. 1(a), by its text: "
	    "dynamic split the best of its five\n"
	    "  on random matrices, start-ups 0.1 to 50 %% of a message's "
	    "time, simulated on SimGrid;\n"
	    "ours: 1 MiB messages, bandwidths 10 to 1,000 MB/s, each "
	    "schedule played by order only\n"
	    "  over a private link per pair, SimGrid's network model as "
	    "--cfg sets it; \"-\": not in the paper\n");
	printf("%4s %-16s %9s %9s %6s   (completion / t_tb, %u random "
	    "matrices, played on SimGrid)\n", "p", "algorithm", "mean", "max",
	    "paper", n);
	fflush(stdout);
	for (unsigned p : ps) {
		std::vector<double> sum(NALGO + 1, 0), mx_(NALGO + 1, 0);

		for (unsigned s = 1; s <= n; s++) {
			int fds[2], status;
			pid_t pid;
			char buf[1024];
			ssize_t got, len = 0;

			if (pipe(fds) == -1 || (pid = fork()) == -1) {
				perror("xchg-sim");
				return (1);
			}
			if (pid == 0) {
				close(fds[0]);
				int sgargc = (int)sgargv.size() - 1;
				_exit(one(sgargc, sgargv.data(), p, s,
				    fds[1]));
			}
			close(fds[1]);
			while ((got = read(fds[0], buf + len,
			    sizeof(buf) - 1 - len)) > 0)
				len += got;
			close(fds[0]);
			buf[len] = '\0';
			if (waitpid(pid, &status, 0) == -1 ||
			    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				fprintf(stderr, "xchg-sim: p %u matrix %u "
				    "failed\n", p, s);
				return (1);
			}
			char *q = buf;
			double tb = strtod(q, &q);
			for (size_t a = 0; a <= NALGO; a++) {
				double r = strtod(q, &q) / tb;

				sum[a] += r;
				mx_[a] = std::max(mx_[a], r);
			}
		}
		for (size_t a = 0; a <= NALGO; a++)
			printf("%4u %-16s %9.4f %9.4f %6s\n", p, a < NALGO ?
			    xchg_algo_name(algos[a]) : "dynamic-preempt",
			    sum[a] / n, mx_[a], paper_says[a]);
		fflush(stdout);
	}
	return (0);
}
