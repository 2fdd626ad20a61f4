/*
 * The matrix file parser of total exchanges (common/xchg/matrix.c), as
 * r3qctl exchange reads a file.  A matrix it accepts passes its check,
 * has a finite lower bound, and for small p a schedule that
 * xchg_validate() accepts.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "xchg/xchg.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xchg_matrix	*mx;
	struct xchg_params	 xp;
	struct xchg_sched	 sc;
	double			 lb;
	char			 err[512];

	err[0] = '\0';
	if ((mx = xchg_parse((const char *)data, size, "input", err,
	    sizeof(err))) == NULL) {
		if (err[0] == '\0')
			abort();	/* an error says what is wrong */
		return (0);
	}
	if (xchg_matrix_check(mx, err, sizeof(err)) == -1) {
		fprintf(stderr, "parsed matrix fails its check: %s\n", err);
		abort();
	}
	lb = xchg_lower_bound(mx);
	if (!isfinite(lb) || lb < 0)
		abort();
	if (mx->xm_p <= 8) {
		xchg_params_default(&xp);
		xp.xp_restarts = 1;
		memset(&sc, 0, sizeof(sc));	/* as r3qctl: it is freed first */
		if (xchg_schedule(mx, XCHG_CATERPILLAR, &xp, &sc, err,
		    sizeof(err)) == 0) {
			if (xchg_validate(mx, &sc, err, sizeof(err)) == -1) {
				fprintf(stderr, "invalid schedule: %s\n", err);
				abort();
			}
			xchg_sched_free(&sc);
		}
	}
	xchg_matrix_free(mx);
	return (0);
}
