/*
 * Kinds: the names of what tasks run, interned at run time.  A worker
 * advertises any names, a client asks for any; the core sees their
 * numbers.  A kind a worker withdrew (KindUnavailable) remembers why, so
 * that its waiting tasks fail with that reason when no worker offers it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "masterd.h"
#include "util.h"

#define KINDS_MAX	65536	/* distinct kind names interned */

/*
 * The interned names, by number, and why each was last withdrawn (NULL
 * while some worker offers it).  Owned by this file; freed at exit
 * (kind_free_all()).
 */
static struct {
	char		**k_names;
	char		**k_why;
	uint32_t	  k_n, k_cap;
} kd;

/*
 * Kinds are names interned at run time: a worker advertises any names, a
 * client asks for any; the core sees their numbers.  There is no cap but
 * KINDS_MAX, which only a hostile peer reaches.
 */
int
kind_find(const char *name, uint32_t *id)
{
	uint32_t	 i;

	for (i = 0; i < kd.k_n; i++)
		if (strcmp(kd.k_names[i], name) == 0) {
			*id = i;
			return (0);
		}
	return (-1);
}

/* Is name a kind's name: 1 to KIND_NAME_MAX printable characters? */
int
kind_check(const char *name)
{
	size_t	 i;

	for (i = 0; name[i] != '\0'; i++)
		if (i >= KIND_NAME_MAX || name[i] <= ' ' || name[i] > '~')
			return (-1);
	return (i > 0 ? 0 : -1);
}

/* The number of kind name, interned if new; UINT32_MAX if full. */
uint32_t
kind_intern(const char *name)
{
	uint32_t	 id;

	if (kind_find(name, &id) == 0)
		return (id);
	if (kd.k_n >= KINDS_MAX)
		return (UINT32_MAX);
	if (kd.k_n == kd.k_cap) {
		kd.k_cap = kd.k_cap ? kd.k_cap * 2 : 16;
		if ((kd.k_names = reallocarray(kd.k_names, kd.k_cap,
		    sizeof(*kd.k_names))) == NULL ||
		    (kd.k_why = reallocarray(kd.k_why, kd.k_cap,
		    sizeof(*kd.k_why))) == NULL)
			fatal("%s", __func__);
	}
	kd.k_why[kd.k_n] = NULL;
	kd.k_names[kd.k_n] = xstrdup(name);
	return (kd.k_n++);
}

/*
 * Worker wname withdrew kind id: it cannot run there (why, from the
 * kind's own process).  Remember why; should no connected worker offer
 * the kind now, its waiting tasks fail with it (job_kind_unavailable()).
 */
void
kind_withdrawn(uint32_t id, const char *wname, const char *why)
{
	char	 buf[768];

	if (id >= kd.k_n)
		return;
	snprintf(buf, sizeof(buf), "kind %s is unavailable on every worker "
	    "that offered it (%s: %s)", kd.k_names[id], wname, why);
	free(kd.k_why[id]);
	kd.k_why[id] = xstrdup(buf);
	job_kind_unavailable(id);
}

/* A worker offers kind id: its tasks wait for workers again. */
void
kind_offered(uint32_t id)
{
	if (id < kd.k_n && kd.k_why[id] != NULL) {
		free(kd.k_why[id]);
		kd.k_why[id] = NULL;
	}
}

/* Why kind id was last withdrawn, while no worker offers it; or NULL. */
const char *
kind_why(uint32_t id)
{
	return (id < kd.k_n ? kd.k_why[id] : NULL);
}

/* The name of kind id. */
const char *
kind_name(uint32_t id)
{
	return (id < kd.k_n ? kd.k_names[id] : "?");
}

/* At exit: forget every kind. */
void
kind_free_all(void)
{
	uint32_t	 i;

	for (i = 0; i < kd.k_n; i++) {
		free(kd.k_names[i]);
		free(kd.k_why[i]);
	}
	free(kd.k_names);
	free(kd.k_why);
	memset(&kd, 0, sizeof(kd));
}
