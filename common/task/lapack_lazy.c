/*
 * LAPACKE and CBLAS loaded on first use (task/lapack.h): the shared
 * objects configure found them in (R3Q_LAPACK_SONAMES), opened with
 * RTLD_GLOBAL in that order so that each finds the ones before it, and the
 * four functions ridge-lu calls.  Built into r3qctl only.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "task/lapack.h"	/* built with -DR3Q_LAPACK_LAZY */

lapack_dgetrf_fn	*lapack_dgetrf_p;
lapack_dlaswp_fn	*lapack_dlaswp_p;
lapack_dtrsm_fn		*lapack_dtrsm_p;
lapack_dgemm_fn		*lapack_dgemm_p;

static pthread_once_t	 lapack_once = PTHREAD_ONCE_INIT;
static char		 lapack_err[256];

static void *
lapack_sym(const char *name)
{
	void	*f;

	if ((f = dlsym(RTLD_DEFAULT, name)) == NULL &&
	    lapack_err[0] == '\0')
		snprintf(lapack_err, sizeof(lapack_err), "%s not found in %s",
		    name, R3Q_LAPACK_SONAMES);
	return (f);
}

static void
lapack_load(void)
{
	char		 names[] = R3Q_LAPACK_SONAMES, *name, *last;
	void		(*threads)(int);
	const char	*e;

	for (name = strtok_r(names, " ", &last); name != NULL;
	    name = strtok_r(NULL, " ", &last))
		if (dlopen(name, RTLD_NOW | RTLD_GLOBAL) == NULL) {
			e = dlerror();
			snprintf(lapack_err, sizeof(lapack_err), "cannot load "
			    "%s: %s", name, e != NULL ? e : "unknown error");
			return;
		}
	/* The symbols are plain data: the casts are through void *. */
	*(void **)&lapack_dgetrf_p = lapack_sym("LAPACKE_dgetrf");
	*(void **)&lapack_dlaswp_p = lapack_sym("LAPACKE_dlaswp");
	*(void **)&lapack_dtrsm_p = lapack_sym("cblas_dtrsm");
	*(void **)&lapack_dgemm_p = lapack_sym("cblas_dgemm");
	/* One BLAS thread: the caller runs its tasks one at a time. */
	if ((*(void **)&threads = dlsym(RTLD_DEFAULT,
	    "openblas_set_num_threads")) != NULL)
		threads(1);
}

int
lapack_lazy_load(char *err, size_t len)
{
	pthread_once(&lapack_once, lapack_load);
	if (lapack_err[0] != '\0') {
		snprintf(err, len, "%s", lapack_err);
		return (-1);
	}
	return (0);
}
