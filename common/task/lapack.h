/*
 * LAPACKE and CBLAS for ridge-lu.  The daemons call them directly.  A
 * program that needs them only now and then (r3qctl: es --local) builds
 * ridge-lu with R3Q_LAPACK_LAZY and loads them with dlopen when the first
 * ridge-lu task with an LU runs.  Linking OpenBLAS costs every start of
 * the program its relocations and constructor: r3qctl --version ran 18.9
 * million instructions with it linked and 4.9 million without (Debian
 * 12), 19.2 and 11.2 ms on a quiet machine (so that r3qctl submit returns
 * in 5 ms).
 */
#ifndef R3Q_TASK_LAPACK_H
#define R3Q_TASK_LAPACK_H

#include <stddef.h>

#include <cblas.h>
#include <lapacke.h>

#ifdef R3Q_LAPACK_LAZY
/* Load the libraries once; 0, or -1 with a message naming what failed. */
int	lapack_lazy_load(char *, size_t);

/* The functions ridge-lu calls, with the libraries' own prototypes. */
typedef __typeof__(LAPACKE_dgetrf)	lapack_dgetrf_fn;
typedef __typeof__(LAPACKE_dlaswp)	lapack_dlaswp_fn;
typedef __typeof__(cblas_dtrsm)		lapack_dtrsm_fn;
typedef __typeof__(cblas_dgemm)		lapack_dgemm_fn;
extern lapack_dgetrf_fn	*lapack_dgetrf_p;
extern lapack_dlaswp_fn	*lapack_dlaswp_p;
extern lapack_dtrsm_fn	*lapack_dtrsm_p;
extern lapack_dgemm_fn	*lapack_dgemm_p;

#define LAPACKE_dgetrf	lapack_dgetrf_p
#define LAPACKE_dlaswp	lapack_dlaswp_p
#define cblas_dtrsm	lapack_dtrsm_p
#define cblas_dgemm	lapack_dgemm_p
#else
#define lapack_lazy_load(err, len)	0
#endif

#endif
