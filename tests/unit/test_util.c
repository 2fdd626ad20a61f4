/*
 * Unit tests of small shared helpers: SipHash-2-4 against the reference
 * vectors of its authors (key 00..0f, message 00..len-1), and str_vis(),
 * which keeps text a peer supplies on one line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "log.h"
#include "cpus.h"
#include "siphash.h"
#include "spin.h"
#include "u64map.h"
#include "util.h"

static void
test_siphash_vectors(void **state)
{
	static const struct {
		size_t		 len;
		uint64_t	 h;
	} v[] = {
		{ 0, 0x726fdb47dd0e0e31ULL },
		{ 1, 0x74f839c593dc67fdULL },
		{ 2, 0x0d6c8009d9a94f5aULL },
		{ 3, 0x85676696d7fb7e2dULL },
		{ 4, 0xcf2794e0277187b7ULL },
		{ 5, 0x18765564cd99a68dULL },
		{ 6, 0xcbc9466e58fee3ceULL },
		{ 7, 0xab0200f58b01d137ULL },
		{ 8, 0x93f5f5799a932462ULL },
		{ 15, 0xa129ca6149be45e5ULL },
		{ 63, 0x958a324ceb064572ULL },
	};
	struct siphash_key	 k;
	uint8_t			 m[64];
	size_t			 i;

	(void)state;
	k.k0 = 0x0706050403020100ULL;
	k.k1 = 0x0f0e0d0c0b0a0908ULL;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)i;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_true(siphash24(&k, m, v[i].len) == v[i].h);
	/* Another key, another tag. */
	k.k1 ^= 1;
	assert_true(siphash24(&k, m, 8) != v[8].h);
}

static void
test_str_vis(void **state)
{
	char	 buf[64], small[8];

	(void)state;
	assert_string_equal(str_vis(buf, sizeof(buf),
	    "x\n12:00:00 masterd: forged"), "x\\n12:00:00 masterd: forged");
	assert_string_equal(str_vis(buf, sizeof(buf), "a\tb\rc\x1b[2Jd\x7f"),
	    "a\\tb\\rc\\x1b[2Jd\\x7f");
	assert_string_equal(str_vis(buf, sizeof(buf), "caf\xc3\xa9"),
	    "caf\xc3\xa9");		/* UTF-8 stays */
	/* Truncated on a whole escape, always terminated. */
	assert_string_equal(str_vis(small, sizeof(small), "abcdef\n"),
	    "abcdef");
	assert_string_equal(str_vis(small, sizeof(small), ""), "");
}

/* masterd -T and the trace key: lists in, bits out, and back. */
static void
test_trace_parse(void **state)
{
	char	 err[128], buf[64];
	int	 bits = -1;

	(void)state;
	assert_int_equal(log_trace_parse("sched,net", &bits, err,
	    sizeof(err)), 0);
	assert_int_equal(bits, TRACE_SCHED | TRACE_NET);
	assert_string_equal(log_trace_names(bits, buf, sizeof(buf)),
	    "sched,net");
	assert_int_equal(log_trace_parse(" Journal , sched ", &bits, err,
	    sizeof(err)), 0);
	assert_int_equal(bits, TRACE_SCHED | TRACE_JOURNAL);
	assert_int_equal(log_trace_parse("ALL", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, TRACE_ALL);
	assert_string_equal(log_trace_names(bits, buf, sizeof(buf)),
	    "sched,journal,net");
	assert_int_equal(log_trace_parse("none", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, 0);
	assert_string_equal(log_trace_names(0, buf, sizeof(buf)), "none");
	bits = 5;
	assert_int_equal(log_trace_parse("sched,frames", &bits, err,
	    sizeof(err)), -1);
	assert_int_equal(bits, 5);	/* untouched on error */
	assert_non_null(strstr(err, "'frames'"));
	/* A short buffer holds whole names only. */
	assert_string_equal(log_trace_names(TRACE_ALL, buf, 15),
	    "sched,journal");
}

/*
 * The CPUs a worker takes by default: the smallest of the affinity mask
 * (else the online CPUs), a cgroup quota (v2 or v1, rounded up),
 * SLURM_CPUS_ON_NODE and SLURM_CPUS_PER_TASK.  Two tasks of srun -n2 -c1
 * on a 2-CPU node see SLURM_CPUS_ON_NODE=2 and a mask of one CPU: 1 each.
 */
static void
test_cpus(void **state)
{
	struct cpus_probe	 p;
	const char		*why;

	(void)state;
	assert_int_equal(cpus_quota("max 100000", NULL, NULL), 0);
	assert_int_equal(cpus_quota("200000 100000", NULL, NULL), 2);
	assert_int_equal(cpus_quota("150000 100000\n", NULL, NULL), 2);
	assert_int_equal(cpus_quota("50000 100000", NULL, NULL), 1);
	assert_int_equal(cpus_quota("garbage", NULL, NULL), 0);
	assert_int_equal(cpus_quota(NULL, "-1", "100000"), 0);
	assert_int_equal(cpus_quota(NULL, "300000\n", "100000\n"), 3);
	assert_int_equal(cpus_quota(NULL, "300000", NULL), 0);

	memset(&p, 0, sizeof(p));
	p.cp_online = 8;
	assert_int_equal(cpus_decide(&p, &why), 8);
	assert_string_equal(why, "the online CPUs");
	p.cp_affinity = 4;
	assert_int_equal(cpus_decide(&p, &why), 4);
	assert_string_equal(why, "the affinity mask");
	p.cp_cfs_quota = "200000";
	p.cp_cfs_period = "100000";
	assert_int_equal(cpus_decide(&p, &why), 2);
	assert_string_equal(why, "the cgroup's CPU quota");
	p.cp_cpu_max = "max 100000";	/* v2 says no quota */
	assert_int_equal(cpus_decide(&p, &why), 4);
	p.cp_cpu_max = "1000000 100000";	/* a quota above the mask */
	assert_int_equal(cpus_decide(&p, &why), 4);
	p.cp_slurm = "3";
	assert_int_equal(cpus_decide(&p, &why), 3);
	assert_string_equal(why, "SLURM_CPUS_ON_NODE");
	p.cp_slurm = "0";		/* nonsense: ignored */
	assert_int_equal(cpus_decide(&p, &why), 4);
	p.cp_slurm = "3x";
	assert_int_equal(cpus_decide(&p, &why), 4);
	p.cp_slurm = "8";		/* the node's count, above the mask */
	assert_int_equal(cpus_decide(&p, &why), 4);
	assert_string_equal(why, "the affinity mask");
	p.cp_slurm = "4";		/* equal: Slurm's is named */
	assert_int_equal(cpus_decide(&p, &why), 4);
	assert_string_equal(why, "SLURM_CPUS_ON_NODE");
	p.cp_cpu_max = "200000 100000";	/* the quota below both */
	assert_int_equal(cpus_decide(&p, &why), 2);
	assert_string_equal(why, "the cgroup's CPU quota");
	p.cp_cpu_max = NULL;
	p.cp_slurm = "2";		/* srun -n2 -c1 on a 2-CPU node */
	p.cp_slurm_task = "1";
	p.cp_affinity = 1;
	assert_int_equal(cpus_decide(&p, &why), 1);
	assert_string_equal(why, "SLURM_CPUS_PER_TASK");
	p.cp_affinity = 2;		/* not bound (no task plugin) */
	assert_int_equal(cpus_decide(&p, &why), 1);
	assert_string_equal(why, "SLURM_CPUS_PER_TASK");
	p.cp_slurm_task = "x";
	assert_int_equal(cpus_decide(&p, &why), 2);
	assert_string_equal(why, "SLURM_CPUS_ON_NODE");
	memset(&p, 0, sizeof(p));
	assert_int_equal(cpus_decide(&p, &why), 1);
	assert_true(cpus_detect(&why) >= 1);
}

/*
 * evbase_new's timers never fire early: a 10 ms timer armed 40 times by a
 * 700 us ticker, which also keeps waking the loop, measured by mono_ns().
 * With libevent's default clock (CLOCK_MONOTONIC_COARSE, which lags
 * CLOCK_MONOTONIC by a tick or more, more while the kernel skips ticks on
 * an idle CPU) such a loop saw one timer in 300 to 600 fire 1 to 2 ms
 * early: this test catches that only now and then, the peer tests more
 * often (their start-up must be at least peer_delay).  A timer may seem
 * early by the 1 us libevent's timeval truncates, no more.
 */
struct evb_run {
	struct event	*ev;
	uint64_t	 t0, shortest;
	int		 n;
};

static void
evb_tick(evutil_socket_t fd, short what, void *arg)
{
	struct evb_run	*r = arg;
	struct timeval	 tv = { 0, 10000 };

	(void)fd;
	(void)what;
	if (r->n == 40) {
		event_base_loopbreak(event_get_base(r->ev));
		return;
	}
	if (evtimer_pending(r->ev, NULL))
		return;
	/*
	 * t0 first: the timer counts from the loop's cached time, taken
	 * after it, so it cannot seem early by the microseconds between
	 * (4 us under ASan once, read as a 9,996 us timer).
	 */
	r->t0 = mono_ns();
	event_base_update_cache_time(event_get_base(r->ev));
	evtimer_add(r->ev, &tv);
}

static void
evb_fire(evutil_socket_t fd, short what, void *arg)
{
	struct evb_run	*r = arg;
	uint64_t	 d = mono_ns() - r->t0;

	(void)fd;
	(void)what;
	if (d < r->shortest)
		r->shortest = d;
	r->n++;
}

static void
test_evbase_precise(void **state)
{
	struct event_base	*base;
	struct event		*tick;
	struct evb_run		 r;
	struct timeval		 ttv = { 0, 700 };

	(void)state;
	assert_non_null(base = evbase_new());
	memset(&r, 0, sizeof(r));
	r.shortest = UINT64_MAX;
	assert_non_null(r.ev = evtimer_new(base, evb_fire, &r));
	assert_non_null(tick = event_new(base, -1, EV_PERSIST, evb_tick,
	    &r));
	assert_int_equal(event_add(tick, &ttv), 0);
	assert_int_equal(event_base_dispatch(base), 0);
	assert_int_equal(r.n, 40);
	/* libevent's clock is in whole microseconds: 1 us of truncation. */
	if (r.shortest + 1000 < 10000000)
		fail_msg("a 10 ms timer fired after %llu us",
		    (unsigned long long)(r.shortest / 1000));
	event_free(tick);
	event_free(r.ev);
	event_base_free(base);
}

/*
 * The id map under churn: 20,000 keys in (sequential, as batch and task
 * ids are), all but every 97th taken out again: each kept key still
 * found with its value, each removed one gone, and the table shrunk to
 * what it holds (at most 8 slots a key past the minimum).
 */
static void
test_u64map(void **state)
{
	struct u64map	 m;
	uint64_t	 k, v;
	size_t		 kept = 0;

	(void)state;
	u64map_init(&m);
	for (k = 1; k <= 20000; k++)
		assert_int_equal(u64map_put(&m, k, k * 3), 0);
	assert_int_equal(u64map_count(&m), 20000);
	for (k = 1; k <= 20000; k++)
		if (k % 97 != 0)
			assert_int_equal(u64map_del(&m, k, &v), 1);
		else
			kept++;
	assert_int_equal(u64map_count(&m), kept);
	for (k = 1; k <= 20000; k++) {
		if (k % 97 == 0) {
			assert_int_equal(u64map_get(&m, k, &v), 1);
			assert_int_equal(v, k * 3);
		} else
			assert_int_equal(u64map_get(&m, k, NULL), 0);
	}
	assert_int_equal(u64map_del(&m, 5, NULL), 0);
	if (m.m_nslots > 64 && m.m_nslots > 8 * kept)
		fail_msg("%zu slots kept for %zu keys", m.m_nslots, kept);
	for (k = 97; k <= 20000; k += 97)
		assert_int_equal(u64map_del(&m, k, NULL), 1);
	assert_int_equal(u64map_count(&m), 0);
	assert_null(m.m_slots);
	u64map_free(&m);
}

/*
 * spin.h: a lone wait polls up to the limit while such waits have been
 * short; two or three long ones in a row (each counted as twice the
 * limit at most) and it sleeps at once; four short ones and it polls
 * again.
 * The budget never outlasts the wait's own bound; a limit of 0 never
 * polls.
 */
static void
test_spin(void **state)
{
	struct spin	 sp = { 1000000, 0 };	/* 1 ms */
	int		 i;

	(void)state;
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 1000000);
	assert_int_equal(spin_budget(&sp, 300000), 300000);
	for (i = 0; i < 20; i++)
		spin_learn(&sp, 300000);	/* round trips of 300 us */
	assert_true(sp.est_ns > 290000 && sp.est_ns <= 300000);
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 1000000);
	spin_learn(&sp, 5000000000ULL);		/* a task of 5 s */
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 1000000);
	spin_learn(&sp, 5000000000ULL);
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 0);
	assert_true(sp.est_ns <= 2000000);	/* capped: recovers soon */
	for (i = 0; i < 20; i++)
		spin_learn(&sp, 5000000000ULL);
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 0);
	for (i = 0; i < 3; i++) {
		spin_learn(&sp, 300000);
		assert_int_equal(spin_budget(&sp, UINT64_MAX), 0);
	}
	spin_learn(&sp, 300000);		/* the fourth short one */
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 1000000);
	sp.limit_ns = 0;
	assert_int_equal(spin_budget(&sp, UINT64_MAX), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_str_vis),
		cmocka_unit_test(test_trace_parse),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_evbase_precise),
		cmocka_unit_test(test_u64map),
		cmocka_unit_test(test_spin),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
