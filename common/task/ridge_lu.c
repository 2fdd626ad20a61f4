/*
 * Kind "ridge-lu": the R3Q paper's workload (doc/algorithms.md section 1).  The
 * payload is the es payload (es/payload.h): an individual and an LU order.
 * The fitness, the output, is Ridge of the individual; the LU decomposition
 * of a fixed lu x lu matrix follows only to give the task a tunable, real
 * cost.
 *
 * The factorisation is a blocked right-looking LU with partial pivoting,
 * column-major, done in steps of a few milliseconds each (a panel, a chunk
 * of row interchanges, a chunk of the trailing update) so that ctx->cancel
 * is seen quickly: R3Q kills the losing copies of replicated tasks.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>

#include "es/es.h"
#include "es/payload.h"
#include "task/lapack.h"
#include "task/task.h"

#define LU_MAX		20000
#define LU_NB		64		/* panel width */
#define LU_CHUNK_FLOPS	3.0e7		/* trailing update per step */
#define LU_SWAP_COLS	512		/* columns per row-interchange step */
#define LU_SCAN_ELEMS	(1 << 17)	/* elements per fill/checksum step */
#define LU_HUGE		(2 << 20)	/* huge page size, alignment */
#define LU_HUGE_MIN	(32 << 20)	/* glibc always mmaps from here */
#define LU_SLICE_NS	1000000L	/* longest single sleep */
#define RIDGE_XBUF	64		/* genes decoded without malloc */

/*
 * Cancel polling and speed emulation for one run.  With ctx->speed < 1 the
 * run sleeps, at every step, as long as needed for its wall time so far to
 * be busy time / speed: a slow host is emulated evenly, so the half-way
 * report also comes at half the stretched time.
 */
struct lu_pace {
	const struct task_ctx	*lp_ctx;
	double			 lp_start;	/* monotonic seconds */
	double			 lp_slept;	/* seconds slept so far */
};

static double	*lu_alloc(int);
static double	 lu_now(void);
static int	 lu_cancelled(const struct task_ctx *);
static int	 lu_pace(struct lu_pace *);
static int	 lu_fill(double *, int, struct lu_pace *);
static int	 lu_factor(double *, int, lapack_int *, struct lu_pace *,
		    struct task_result *);
static int	 lu_checksum(const double *, int, struct lu_pace *, double *);

/*
 * Allocate the n x n matrix.  A large one, which malloc would mmap afresh
 * for every task, goes on transparent huge pages where the kernel allows
 * it: faulting in 4 KiB pages costs about a tenth of the task, and
 * unmapping them would delay the return of a cancelled task by several
 * milliseconds.  Smaller ones come from malloc, which reuses its heap.
 */
static double *
lu_alloc(int n)
{
	size_t	 sz = (size_t)n * n * sizeof(double);
	void	*p;

	if (sz < LU_HUGE_MIN)
		return (malloc(sz));
	if (posix_memalign(&p, LU_HUGE, sz) != 0)
		return (NULL);
#ifdef MADV_HUGEPAGE
	(void)madvise(p, sz, MADV_HUGEPAGE);
#endif
	return (p);
}

/* The monotonic clock in seconds. */
static double
lu_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

/* True once the caller has asked the task to stop. */
static int
lu_cancelled(const struct task_ctx *ctx)
{
	return (ctx->cancel != NULL && atomic_load(ctx->cancel) != 0);
}

/*
 * Check for cancellation and, when emulating a slower host, sleep off the
 * time owed so far in slices of at most a millisecond.  Returns -1 when
 * cancelled.
 */
static int
lu_pace(struct lu_pace *lp)
{
	double		 speed = lp->lp_ctx->speed, t0, target, left;
	struct timespec	 ts;

	if (lu_cancelled(lp->lp_ctx))
		return (-1);
	if (!(speed > 0.0 && speed < 1.0))
		return (0);
	t0 = lu_now() - lp->lp_start;
	target = (t0 - lp->lp_slept) / speed;
	while ((left = target - (lu_now() - lp->lp_start)) > 0.0) {
		if (lu_cancelled(lp->lp_ctx))
			return (-1);
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1e9 < LU_SLICE_NS ?
		    (long)(left * 1e9) + 1 : LU_SLICE_NS;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	lp->lp_slept += (lu_now() - lp->lp_start) - t0;
	return (0);
}

/*
 * Build the matrix: a diagonally dominant D, d_ij = 1/(1+|i-j|) plus n on
 * the diagonal, with its rows in reverse order so that partial pivoting
 * interchanges rows (n/2 of them).  Well conditioned, independent of x.
 */
static int
lu_fill(double *a, int n, struct lu_pace *lp)
{
	int	 i, j, r, step;

	step = LU_SCAN_ELEMS / n > 0 ? LU_SCAN_ELEMS / n : 1;
	for (j = 0; j < n; j++) {
		if (j % step == 0 && lu_pace(lp) == -1)
			return (-1);
		for (i = 0; i < n; i++) {
			r = n - 1 - i;
			a[i + (size_t)j * n] = 1.0 / (1.0 + abs(r - j)) +
			    (r == j ? (double)n : 0.0);
		}
	}
	return (0);
}

/*
 * Blocked right-looking LU, PA = LU, in place.  For each panel of LU_NB
 * columns: factor the tall panel with dgetrf, apply its interchanges to
 * the columns on the left, then, chunk by chunk on the right, interchange,
 * solve for the U block row (dtrsm) and update the trailing matrix (dgemm).
 * Reports half-way when about half of the 2n^3/3 flops are done.  Returns
 * TASK_OK, TASK_CANCELLED or TASK_FAILED.
 */
static int
lu_factor(double *a, int n, lapack_int *ipiv, struct lu_pace *lp,
    struct task_result *res)
{
	const struct task_ctx	*ctx = lp->lp_ctx;
	lapack_int		 info;
	int			 k, jb, m, c, w, cw, i, half = 0;
	double			 left;

	for (k = 0; k < n; k += jb) {
		jb = n - k < LU_NB ? n - k : LU_NB;
		m = n - k;
		info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, jb,
		    &a[k + (size_t)k * n], n, &ipiv[k]);
		if (info != 0) {
			snprintf(res->error, sizeof(res->error),
			    "dgetrf failed at column %d: info %d", k, (int)info);
			return (TASK_FAILED);
		}
		for (i = k; i < k + jb; i++)
			ipiv[i] += k;
		if (lu_pace(lp) == -1)
			return (TASK_CANCELLED);

		for (c = 0; c < k; c += LU_SWAP_COLS) {
			w = k - c < LU_SWAP_COLS ? k - c : LU_SWAP_COLS;
			LAPACKE_dlaswp(LAPACK_COL_MAJOR, w,
			    &a[(size_t)c * n], n, k + 1, k + jb, ipiv, 1);
			if (lu_pace(lp) == -1)
				return (TASK_CANCELLED);
		}

		cw = m > jb ? (int)(LU_CHUNK_FLOPS / (2.0 * (m - jb) * jb)) : n;
		cw = cw < 16 ? 16 : cw & ~7;
		for (c = k + jb; c < n; c += cw) {
			w = n - c < cw ? n - c : cw;
			LAPACKE_dlaswp(LAPACK_COL_MAJOR, w,
			    &a[(size_t)c * n], n, k + 1, k + jb, ipiv, 1);
			cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower,
			    CblasNoTrans, CblasUnit, jb, w, 1.0,
			    &a[k + (size_t)k * n], n,
			    &a[k + (size_t)c * n], n);
			if (m > jb)
				cblas_dgemm(CblasColMajor, CblasNoTrans,
				    CblasNoTrans, m - jb, w, jb, -1.0,
				    &a[(k + jb) + (size_t)k * n], n,
				    &a[k + (size_t)c * n], n, 1.0,
				    &a[(k + jb) + (size_t)c * n], n);
			if (lu_pace(lp) == -1)
				return (TASK_CANCELLED);
		}

		left = (double)(n - k - jb) / n;
		if (!half && left * left * left <= 0.5) {
			half = 1;
			if (ctx->progress != NULL)
				ctx->progress(ctx->arg, 2);
		}
	}
	return (TASK_OK);
}

/*
 * Sum the diagonal of U and every entry of the packed factors, in column
 * order, so the factorisation cannot be optimised away and two hosts with
 * the same BLAS build agree.
 */
static int
lu_checksum(const double *a, int n, struct lu_pace *lp, double *sum)
{
	double	 diag = 0.0, all = 0.0;
	int	 i, j, step;

	step = LU_SCAN_ELEMS / n > 0 ? LU_SCAN_ELEMS / n : 1;
	for (j = 0; j < n; j++) {
		if (j % step == 0 && lu_pace(lp) == -1)
			return (-1);
		diag += a[j + (size_t)j * n];
		for (i = 0; i < n; i++)
			all += a[i + (size_t)j * n];
	}
	*sum = diag + all;
	return (0);
}

/*
 * Run one ridge-lu task: decode the es payload, take Ridge of its
 * individual, then the LU decomposition of order lu, stretched to 1/speed
 * of its time on a slow host.  The output is the fitness, es_output_encode.
 */
int
task_ridge_lu_run(const struct task_params *p, const struct task_ctx *ctx,
    struct task_result *res)
{
	struct es_payload	 ep;
	struct lu_pace		 lp;
	double			 xbuf[RIDGE_XBUF], *x, *a = NULL, fitness;
	double			 sum = 0.0;
	lapack_int		*ipiv = NULL;
	uint8_t			*out;
	int			 n, status;

	res->error[0] = '\0';
	if ((status = task_es_decode(p, 1, &ep, xbuf, RIDGE_XBUF, &x,
	    res)) != TASK_OK)
		return (res->status = status);
	if (ep.lu > LU_MAX) {
		snprintf(res->error, sizeof(res->error),
		    "ridge-lu: lu %u is over %d", ep.lu, LU_MAX);
		if (x != xbuf)
			free(x);
		return (res->status = TASK_BAD_PARAMS);
	}

	lp.lp_ctx = ctx;
	lp.lp_start = lu_now();
	lp.lp_slept = 0.0;
	fitness = task_ridge(x, ep.nx);
	if (x != xbuf)
		free(x);
	n = (int)ep.lu;

	if (n == 0) {
		if (ctx->progress != NULL)
			ctx->progress(ctx->arg, 2);
		status = TASK_OK;
	} else if (lapack_lazy_load(res->error, sizeof(res->error)) == -1) {
		/* r3qctl: LAPACKE or the BLAS did not load (task/lapack.h) */
		status = TASK_FAILED;
	} else if ((a = lu_alloc(n)) == NULL ||
	    (ipiv = malloc((size_t)n * sizeof(*ipiv))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		status = TASK_FAILED;
	} else if (lu_fill(a, n, &lp) == -1)
		status = TASK_CANCELLED;
	else if ((status = lu_factor(a, n, ipiv, &lp, res)) == TASK_OK &&
	    lu_checksum(a, n, &lp, &sum) == -1)
		status = TASK_CANCELLED;
	free(a);
	free(ipiv);

	if (status == TASK_OK && lu_pace(&lp) == -1)
		status = TASK_CANCELLED;
	if (status == TASK_CANCELLED)
		snprintf(res->error, sizeof(res->error), "cancelled");
	if (status == TASK_OK) {
		if ((out = task_output_alloc(res, ES_OUTPUT_LEN)) == NULL) {
			snprintf(res->error, sizeof(res->error),
			    "out of memory");
			return (res->status = TASK_FAILED);
		}
		es_output_encode(out, fitness);
		res->checksum = sum;
	}
	return (res->status = status);
}
