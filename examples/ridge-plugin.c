/*
 * ridge-plugin: the built-in "ridge-lu" task kind written as an R3Q plugin
 * (r3q-plugin(3)), bit for bit: the same payload, the same fitness in the
 * same 8 bytes, the same LU load polled for cancellation at the same steps
 * and the same half-way point.  A starting point to copy: it includes
 * nothing of R3Q's but <r3q-plugin.h>.
 *
 * Build and configure it (workerd.conf(5)):
 *
 *	cc -shared -fPIC -O2 -o ridge-plugin.so ridge-plugin.c \
 *	    -llapacke -lopenblas
 *	plugin ridge = /usr/local/lib/ridge-plugin.so
 *
 * The payload, all little-endian:
 *	offset 0   u32   lu	LU matrix order, 0 (none) to 20000
 *	offset 4   u32   flags	ignored
 *	offset 8   f64   work_ms	ignored
 *	offset 16  f64[] x	the individual, 1 to 10000 genes
 * The output is Ridge of x as one little-endian f64 (8 bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <cblas.h>
#include <lapacke.h>

#include <r3q-plugin.h>

#define PAYLOAD_HEAD	16
#define DIM_MAX		10000
#define LU_MAX		20000
#define LU_NB		64		/* panel width */
#define LU_CHUNK_FLOPS	3.0e7		/* trailing update per step */
#define LU_SWAP_COLS	512		/* columns per row-interchange step */
#define LU_SCAN_ELEMS	(1 << 17)	/* elements per fill/checksum step */
#define LU_HUGE		(2 << 20)	/* huge page size, alignment */
#define LU_HUGE_MIN	(32 << 20)	/* from here: per task, huge pages */

/*
 * One execution thread's scratch, so that concurrent tasks need no lock:
 * the decoded individual and, for matrices under LU_HUGE_MIN bytes, the
 * matrix and its pivots, kept from task to task.
 */
struct slot {
	double		*s_x;		/* DIM_MAX genes */
	double		*s_a;
	lapack_int	*s_ipiv;
	size_t		 s_n;		/* order s_a and s_ipiv hold */
	double		 s_checksum;	/* the last task's: keeps the load */
};

/* What init stores: one slot per execution thread. */
struct ridge {
	unsigned	 r_nslots;
	struct slot	 r_slots[];
};

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

static uint32_t	 get_u32(const unsigned char *);
static double	 get_f64(const unsigned char *);
static void	 put_f64(unsigned char *, double);
static double	 ridge(const double *, size_t);
static int	 lu_buffers(struct slot *, int, double **, lapack_int **);
static int	 lu_fill(const struct r3q_plugin_task *, double *, int);
static int	 lu_factor(const struct r3q_plugin_task *, double *, int,
		    lapack_int *);
static int	 lu_checksum(const struct r3q_plugin_task *, const double *,
		    int, double *);

/* A little-endian u32. */
static uint32_t
get_u32(const unsigned char *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

/* A little-endian IEEE 754 double, bit for bit. */
static double
get_f64(const unsigned char *p)
{
	uint64_t	 v;
	double		 d;

	v = (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
	memcpy(&d, &v, sizeof(d));
	return (d);
}

/* Write a double as its little-endian IEEE 754 bits. */
static void
put_f64(unsigned char *p, double d)
{
	uint64_t	 v;
	int		 i;

	memcpy(&v, &d, sizeof(v));
	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * Ridge (Schwefel 1.2): the sum over i of (x_1 + ... + x_i)^2, summed in
 * index order with a running partial sum, as R3Q's built-in kind does.
 */
static double
ridge(const double *x, size_t n)
{
	double	 partial = 0.0, f = 0.0;
	size_t	 i;

	for (i = 0; i < n; i++) {
		partial += x[i];
		f += partial * partial;
	}
	return (f);
}

/*
 * The matrix and pivots of order n: the slot's, grown when needed, for a
 * small matrix; for a large one, fresh ones on transparent huge pages
 * (faulting 4 KiB pages in costs about a tenth of the task), which the
 * caller frees.  Returns 1 for fresh buffers, 0 for the slot's, -1 when
 * out of memory.
 */
static int
lu_buffers(struct slot *s, int n, double **ap, lapack_int **ipivp)
{
	size_t	 sz = (size_t)n * n * sizeof(double);
	void	*p;

	if (sz >= LU_HUGE_MIN) {
		if (posix_memalign(&p, LU_HUGE, sz) != 0)
			return (-1);
#ifdef MADV_HUGEPAGE
		(void)madvise(p, sz, MADV_HUGEPAGE);
#endif
		if ((*ipivp = malloc((size_t)n * sizeof(**ipivp))) == NULL) {
			free(p);
			return (-1);
		}
		*ap = p;
		return (1);
	}
	if (s->s_n < (size_t)n) {
		free(s->s_a);
		free(s->s_ipiv);
		s->s_ipiv = NULL;
		s->s_n = 0;
		if ((s->s_a = malloc(sz)) == NULL ||
		    (s->s_ipiv = malloc((size_t)n * sizeof(*s->s_ipiv))) ==
		    NULL)
			return (-1);
		s->s_n = (size_t)n;
	}
	*ap = s->s_a;
	*ipivp = s->s_ipiv;
	return (0);
}

/*
 * Build the matrix: d_ij = 1/(1+|i-j|) plus n on the diagonal, rows in
 * reverse order so that partial pivoting interchanges rows.  -1 when
 * cancelled.
 */
static int
lu_fill(const struct r3q_plugin_task *t, double *a, int n)
{
	int	 i, j, r, step;

	step = LU_SCAN_ELEMS / n > 0 ? LU_SCAN_ELEMS / n : 1;
	for (j = 0; j < n; j++) {
		if (j % step == 0 && t->cancelled(t))
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
 * Blocked right-looking LU with partial pivoting, in place, in steps of a
 * few milliseconds (a panel, a chunk of row interchanges, a chunk of the
 * trailing update) with cancelled() polled after each.  Calls halfway()
 * when about half of the 2n^3/3 flops are done.  Returns an R3Q_PLUGIN_
 * status.
 */
static int
lu_factor(const struct r3q_plugin_task *t, double *a, int n,
    lapack_int *ipiv)
{
	lapack_int	 info;
	int		 k, jb, m, c, w, cw, i, half = 0;
	double		 left;

	for (k = 0; k < n; k += jb) {
		jb = n - k < LU_NB ? n - k : LU_NB;
		m = n - k;
		info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, jb,
		    &a[k + (size_t)k * n], n, &ipiv[k]);
		if (info != 0) {
			t->error(t, "dgetrf failed at column %d: info %d", k,
			    (int)info);
			return (R3Q_PLUGIN_FAILED);
		}
		for (i = k; i < k + jb; i++)
			ipiv[i] += k;
		if (t->cancelled(t))
			return (R3Q_PLUGIN_CANCELLED);

		for (c = 0; c < k; c += LU_SWAP_COLS) {
			w = k - c < LU_SWAP_COLS ? k - c : LU_SWAP_COLS;
			LAPACKE_dlaswp(LAPACK_COL_MAJOR, w,
			    &a[(size_t)c * n], n, k + 1, k + jb, ipiv, 1);
			if (t->cancelled(t))
				return (R3Q_PLUGIN_CANCELLED);
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
			if (t->cancelled(t))
				return (R3Q_PLUGIN_CANCELLED);
		}

		left = (double)(n - k - jb) / n;
		if (!half && left * left * left <= 0.5) {
			half = 1;
			t->halfway(t);
		}
	}
	return (R3Q_PLUGIN_OK);
}

/*
 * Sum the diagonal of U and every entry of the factors, so that the work
 * cannot be optimised away.  -1 when cancelled.
 */
static int
lu_checksum(const struct r3q_plugin_task *t, const double *a, int n,
    double *sum)
{
	double	 diag = 0.0, all = 0.0;
	int	 i, j, step;

	step = LU_SCAN_ELEMS / n > 0 ? LU_SCAN_ELEMS / n : 1;
	for (j = 0; j < n; j++) {
		if (j % step == 0 && t->cancelled(t))
			return (-1);
		diag += a[j + (size_t)j * n];
		for (i = 0; i < n; i++)
			all += a[i + (size_t)j * n];
	}
	*sum = diag + all;
	return (0);
}

/* Make one scratch slot per execution thread. */
int
r3q_plugin_init(const char *kind, unsigned nslots, void **state, char *err,
    size_t errlen)
{
	struct ridge	*r;
	unsigned	 i;

	if ((r = calloc(1, sizeof(*r) + nslots * sizeof(r->r_slots[0]))) ==
	    NULL) {
		snprintf(err, errlen, "%s: out of memory", kind);
		return (-1);
	}
	r->r_nslots = nslots;
	for (i = 0; i < nslots; i++) {
		if ((r->r_slots[i].s_x = calloc(DIM_MAX,
		    sizeof(double))) == NULL) {
			snprintf(err, errlen, "%s: out of memory", kind);
			r3q_plugin_fini(r);
			return (-1);
		}
	}
	*state = r;
	return (0);
}

/*
 * Run one task: decode the payload, take Ridge of the individual, then
 * the LU decomposition of order lu as a load, and output the fitness.
 */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	struct ridge		*r = t->state;
	struct slot		*s;
	const unsigned char	*p = t->payload;
	double			*a = NULL, fitness, sum = 0.0;
	lapack_int		*ipiv = NULL;
	unsigned char		*out;
	size_t			 nx, i;
	uint32_t		 lu;
	int			 n, fresh = 0, status;

	if (t->slot >= r->r_nslots) {
		t->error(t, "%s: slot %u of %u", t->kind, t->slot,
		    r->r_nslots);
		return (R3Q_PLUGIN_FAILED);
	}
	s = &r->r_slots[t->slot];
	if (t->payload_len < PAYLOAD_HEAD ||
	    (t->payload_len - PAYLOAD_HEAD) % 8 != 0 ||
	    (nx = (t->payload_len - PAYLOAD_HEAD) / 8) < 1 || nx > DIM_MAX) {
		t->error(t, "payload of %zu bytes: %s needs %d + 8 x dim, "
		    "dim 1 to %d", t->payload_len, t->kind, PAYLOAD_HEAD,
		    DIM_MAX);
		return (R3Q_PLUGIN_BAD_PARAMS);
	}
	if ((lu = get_u32(p)) > LU_MAX) {
		t->error(t, "%s: lu %u is over %d", t->kind, lu, LU_MAX);
		return (R3Q_PLUGIN_BAD_PARAMS);
	}
	for (i = 0; i < nx; i++)
		s->s_x[i] = get_f64(p + PAYLOAD_HEAD + i * 8);
	fitness = ridge(s->s_x, nx);
	n = (int)lu;

	if (n == 0) {
		t->halfway(t);
		status = R3Q_PLUGIN_OK;
	} else if ((fresh = lu_buffers(s, n, &a, &ipiv)) == -1) {
		t->error(t, "out of memory");
		return (R3Q_PLUGIN_FAILED);
	} else if (lu_fill(t, a, n) == -1)
		status = R3Q_PLUGIN_CANCELLED;
	else if ((status = lu_factor(t, a, n, ipiv)) == R3Q_PLUGIN_OK &&
	    lu_checksum(t, a, n, &sum) == -1)
		status = R3Q_PLUGIN_CANCELLED;
	if (fresh == 1) {
		free(a);
		free(ipiv);
	}

	if (status == R3Q_PLUGIN_OK && t->cancelled(t))
		status = R3Q_PLUGIN_CANCELLED;
	if (status != R3Q_PLUGIN_OK)
		return (status);
	s->s_checksum = sum;
	if ((out = t->output(t, 8)) == NULL) {
		t->error(t, "no room for the output");
		return (R3Q_PLUGIN_FAILED);
	}
	put_f64(out, fitness);
	return (R3Q_PLUGIN_OK);
}

/* Free every slot's scratch. */
void
r3q_plugin_fini(void *state)
{
	struct ridge	*r = state;
	unsigned	 i;

	if (r == NULL)
		return;
	for (i = 0; i < r->r_nslots; i++) {
		free(r->r_slots[i].s_x);
		free(r->r_slots[i].s_a);
		free(r->r_slots[i].s_ipiv);
	}
	free(r);
}
