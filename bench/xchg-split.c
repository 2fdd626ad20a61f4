/*
 * bench/xchg-split: does dynamic split split anything on the random
 * matrices of the total-exchange paper (Nakahira and Fujiwara,
 * doc/algorithms.md section 2)?  For p = 8, 16, 32 and 64 and the random
 * matrices of seeds 1 .. 20 (start-ups 0.1 to 50 % of an event's cost, as
 * the paper's), open shop's and dynamic split's completion over t_tb, the
 * pieces dynamic split added beyond the p (p - 1) messages, and on how
 * many matrices the two schedules finish at the same time.
 *
 * usage: bench/xchg-split
 */
#include <stdint.h>
#include <stdio.h>

#include "xchg/xchg.h"

int
main(void)
{
	static const unsigned	 ps[] = { 8, 16, 32, 64 };
	struct xchg_params	 xp;
	struct xchg_matrix	*m;
	struct xchg_sched	 o, d;
	char			 err[128];
	double			 so, sd, lb;
	size_t			 extra, same, a;
	uint64_t		 s;
	unsigned		 p;

	xchg_params_default(&xp);
	printf("%4s %10s %10s %13s %10s\n", "p", "openshop", "dynamic",
	    "extra pieces", "identical");
	for (a = 0; a < sizeof(ps) / sizeof(ps[0]); a++) {
		p = ps[a];
		so = sd = 0;
		extra = same = 0;
		for (s = 1; s <= 20; s++) {
			if ((m = xchg_random(p, s, err, sizeof(err))) == NULL) {
				fprintf(stderr, "xchg-split: %s\n", err);
				return (1);
			}
			if (xchg_schedule(m, XCHG_OPENSHOP, &xp, &o, err,
			    sizeof(err)) == -1 || xchg_schedule(m,
			    XCHG_DYNAMIC, &xp, &d, err, sizeof(err)) == -1) {
				fprintf(stderr, "xchg-split: %s\n", err);
				return (1);
			}
			lb = xchg_lower_bound(m);
			so += o.xs_time / lb;
			sd += d.xs_time / lb;
			extra += d.xs_n - (size_t)p * (p - 1);
			same += d.xs_time == o.xs_time;
			xchg_sched_free(&o);
			xchg_sched_free(&d);
			xchg_matrix_free(m);
		}
		printf("%4u %10.4f %10.4f %13zu %7zu/20\n", p, so / 20,
		    sd / 20, extra, same);
	}
	return (0);
}
