/*
 * Kinds: the names of what tasks run, interned at run time.  A worker
 * advertises any names, a client asks for any; the core sees their
 * numbers.  A kind a worker withdrew (KindUnavailable) remembers why, so
 * that its waiting tasks fail with that reason when no worker offers it.
 *
 * Names are found through a hash table keyed by SipHash under a random
 * key (a client chooses the names).  Every batch naming a kind holds a
 * reference to it (kind_hold(), from job_batch_open()), counted for the
 * batch's client too; a client may hold at most max_client_kinds distinct
 * kinds (kind_intern_client()), so that one client's flood of names
 * leaves the table to the others.  A kind is forgotten, its number free
 * for another name, once no batch holds it and no worker offers it (the
 * core then holds no state for it): at its last release, or, for one
 * that was interned but never held (a worker's kinds once the worker
 * left, a refused request), by a sweep when the table has doubled since
 * the last one.  A sweep spares the kinds interned since it began, which
 * the caller may be about to hold.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "masterd.h"
#include "siphash.h"
#include "util.h"

#define KINDS_MAX	65536	/* distinct kind names interned at once */
#define KINDS_SWEEP_MIN	1024	/* no sweep below this many names */

/* One kind, by number; k_name NULL: the number is free. */
struct kind {
	char		*k_name;
	char		*k_why;		/* why last withdrawn, or NULL */
	size_t		 k_refs;	/* batches holding it */
	uint64_t	 k_epoch;	/* sweep it was last interned in */
};

/*
 * One client's kinds: how many of its batches hold each.  Lives while
 * the client holds any.
 */
struct kind_owner {
	struct kind_owner	*o_next;
	char			 o_name[64];
	struct u64map		 o_kinds;	/* kind -> batches */
};

/*
 * The interned names, by number and by name, the free numbers and the
 * clients' holdings.  Owned by this file; freed at exit (kind_free_all()).
 */
static struct {
	struct kind		*k_v;
	uint32_t		 k_n, k_cap;	/* numbers handed out */
	uint32_t		*k_free;	/* numbers to reuse */
	uint32_t		 k_nfree;
	uint32_t		 k_live;	/* names interned */
	uint32_t		 k_swept;	/* names left by the last sweep */
	uint32_t		*k_slots;	/* number + 1, 0: empty */
	size_t			 k_nslots;	/* 0 or a power of two */
	struct siphash_key	 k_key;
	uint64_t		 k_epoch;
	struct kind_owner	*k_owners;
} kd;

/* A name's home slot in the hash table. */
static size_t
kind_slot(const char *name)
{
	return ((size_t)siphash24(&kd.k_key, name, strlen(name)) &
	    (kd.k_nslots - 1));
}

/* Put number id in the hash table; the caller made room. */
static void
kind_tab_insert(uint32_t id)
{
	size_t	 i, mask = kd.k_nslots - 1;

	for (i = kind_slot(kd.k_v[id].k_name); kd.k_slots[i] != 0;
	    i = (i + 1) & mask)
		;
	kd.k_slots[i] = id + 1;
}

/* Room in the hash table for one more name, at most half full. */
static void
kind_tab_reserve(void)
{
	uint32_t	*old = kd.k_slots;
	size_t		 i, nold = kd.k_nslots;

	if ((size_t)kd.k_live + 1 <= kd.k_nslots / 2)
		return;
	if (kd.k_nslots == 0) {
		if (getentropy(&kd.k_key, sizeof(kd.k_key)) == -1)
			fatal("%s: getentropy", __func__);
		kd.k_nslots = 64;
	} else
		kd.k_nslots *= 2;
	kd.k_slots = xcalloc(kd.k_nslots, sizeof(*kd.k_slots));
	for (i = 0; i < nold; i++)
		if (old[i] != 0)
			kind_tab_insert(old[i] - 1);
	free(old);
}

/* Take number id out of the hash table (backward shift). */
static void
kind_tab_remove(uint32_t id)
{
	size_t	 i, j, k, mask = kd.k_nslots - 1;

	for (i = kind_slot(kd.k_v[id].k_name); kd.k_slots[i] != id + 1;
	    i = (i + 1) & mask)
		;
	for (j = i;;) {
		j = (j + 1) & mask;
		if (kd.k_slots[j] == 0)
			break;
		k = kind_slot(kd.k_v[kd.k_slots[j] - 1].k_name);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		kd.k_slots[i] = kd.k_slots[j];
		i = j;
	}
	kd.k_slots[i] = 0;
}

/*
 * Kinds are names interned at run time: a worker advertises any names, a
 * client asks for any; the core sees their numbers.  O(1).
 */
int
kind_find(const char *name, uint32_t *id)
{
	size_t		 i, mask;
	uint32_t	 v;

	if (kd.k_nslots == 0)
		return (-1);
	mask = kd.k_nslots - 1;
	for (i = kind_slot(name); (v = kd.k_slots[i]) != 0; i = (i + 1) & mask)
		if (strcmp(kd.k_v[v - 1].k_name, name) == 0) {
			*id = v - 1;
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

/* Forget kind id if nothing holds it and no worker offers it. */
static int
kind_forget(uint32_t id)
{
	struct kind	*k = &kd.k_v[id];

	if (k->k_name == NULL || k->k_refs > 0 || job_kind_workers(id) > 0)
		return (0);
	kind_tab_remove(id);
	free(k->k_name);
	free(k->k_why);
	memset(k, 0, sizeof(*k));
	kd.k_free[kd.k_nfree++] = id;
	kd.k_live--;
	return (1);
}

/*
 * Forget the kinds nothing holds that were interned before this sweep
 * (a worker's once it left, a refused request's): once the names have
 * doubled since the last sweep, or the table is full.  O(1) amortised.
 */
static void
kind_sweep(void)
{
	uint32_t	 id;

	if (kd.k_live < KINDS_MAX && (kd.k_live < KINDS_SWEEP_MIN ||
	    kd.k_live < 2 * kd.k_swept))
		return;
	for (id = 0; id < kd.k_n; id++)
		if (kd.k_v[id].k_name != NULL &&
		    kd.k_v[id].k_epoch < kd.k_epoch)
			(void)kind_forget(id);
	kd.k_epoch++;
	kd.k_swept = kd.k_live;
}

/* The number of kind name, interned if new; UINT32_MAX if full. */
uint32_t
kind_intern(const char *name)
{
	uint32_t	 id;

	if (kind_find(name, &id) == 0) {
		kd.k_v[id].k_epoch = kd.k_epoch;
		return (id);
	}
	kind_sweep();
	if (kd.k_live >= KINDS_MAX)
		return (UINT32_MAX);
	if (kd.k_nfree > 0)
		id = kd.k_free[--kd.k_nfree];
	else {
		if (kd.k_n == kd.k_cap) {
			kd.k_cap = kd.k_cap ? kd.k_cap * 2 : 16;
			kd.k_v = xreallocarray(kd.k_v, kd.k_cap,
			    sizeof(*kd.k_v));
			kd.k_free = xreallocarray(kd.k_free, kd.k_cap,
			    sizeof(*kd.k_free));
		}
		id = kd.k_n++;
	}
	kind_tab_reserve();
	memset(&kd.k_v[id], 0, sizeof(kd.k_v[id]));
	kd.k_v[id].k_name = xstrdup(name);
	kd.k_v[id].k_epoch = kd.k_epoch;
	kind_tab_insert(id);
	kd.k_live++;
	return (id);
}

/* Client owner's holdings; made if make and not there yet, else NULL. */
static struct kind_owner *
kind_owner(const char *owner, int make)
{
	struct kind_owner	*o;

	for (o = kd.k_owners; o != NULL; o = o->o_next)
		if (strcmp(o->o_name, owner) == 0)
			return (o);
	if (!make)
		return (NULL);
	o = xcalloc(1, sizeof(*o));
	snprintf(o->o_name, sizeof(o->o_name), "%s", owner);
	o->o_next = kd.k_owners;
	kd.k_owners = o;
	return (o);
}

/*
 * The number of kind name for a batch of client owner, interned if new:
 * refused (UINT32_MAX, err says why, the refusal counted) if the client
 * holds max_client_kinds distinct kinds already and this is not one of
 * them, or if the table is full.
 */
uint32_t
kind_intern_client(const char *name, const char *owner, unsigned max,
    char *err, size_t len)
{
	struct kind_owner	*o = kind_owner(owner, 0);
	uint32_t		 id;

	if (kind_find(name, &id) == 0 && o != NULL &&
	    u64map_get(&o->o_kinds, id, NULL)) {
		kd.k_v[id].k_epoch = kd.k_epoch;
		return (id);
	}
	if (o != NULL && u64map_count(&o->o_kinds) >= max) {
		snprintf(err, len, "too many kinds: client %s holds %zu "
		    "kinds in its batches, the most max_client_kinds (%u) "
		    "allows; kind %.64s refused", owner,
		    u64map_count(&o->o_kinds), max, name);
		server_refused(CAP_CLIENT_KINDS, owner, "kind %.64s: %zu "
		    "kinds held (max_client_kinds)", name,
		    u64map_count(&o->o_kinds));
		return (UINT32_MAX);
	}
	if ((id = kind_intern(name)) == UINT32_MAX)
		snprintf(err, len, "too many kinds: masterd holds %d kind "
		    "names", KINDS_MAX);
	return (id);
}

/*
 * A batch of client owner (NULL or empty: none) names kind id.  Returns
 * the holding to give back to kind_release() (NULL: no client's).
 */
struct kind_owner *
kind_hold(uint32_t id, const char *owner)
{
	struct kind_owner	*o;
	uint64_t		 n = 0;

	if (id >= kd.k_n || kd.k_v[id].k_name == NULL)
		fatalx("%s: no kind %u", __func__, id);
	kd.k_v[id].k_refs++;
	if (owner == NULL || *owner == '\0')
		return (NULL);
	o = kind_owner(owner, 1);
	(void)u64map_get(&o->o_kinds, id, &n);
	if (u64map_put(&o->o_kinds, id, n + 1) == -1)
		fatal("%s", __func__);
	return (o);
}

/*
 * A batch no longer names kind id (o: its client's holding, from
 * kind_hold()): forgotten with its last holder, unless a worker offers
 * it.
 */
void
kind_release(uint32_t id, struct kind_owner *o)
{
	struct kind_owner	**op;
	uint64_t		 n;

	if (id >= kd.k_n || kd.k_v[id].k_refs == 0)
		fatalx("%s: kind %u not held", __func__, id);
	if (o != NULL && u64map_get(&o->o_kinds, id, &n)) {
		if (n > 1)
			(void)u64map_put(&o->o_kinds, id, n - 1);
		else
			(void)u64map_del(&o->o_kinds, id, NULL);
		if (u64map_count(&o->o_kinds) == 0) {
			for (op = &kd.k_owners; *op != o; op = &(*op)->o_next)
				;
			*op = o->o_next;
			u64map_free(&o->o_kinds);
			free(o);
		}
	}
	if (--kd.k_v[id].k_refs == 0)
		(void)kind_forget(id);
}

/* Distinct kinds the batches of client owner hold. */
size_t
kind_client_count(const char *owner)
{
	struct kind_owner	*o = kind_owner(owner, 0);

	return (o != NULL ? u64map_count(&o->o_kinds) : 0);
}

/* Kind names interned now. */
size_t
kind_count(void)
{
	return (kd.k_live);
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

	if (id >= kd.k_n || kd.k_v[id].k_name == NULL)
		return;
	snprintf(buf, sizeof(buf), "kind %s is unavailable on every worker "
	    "that offered it (%s: %s)", kd.k_v[id].k_name, wname, why);
	free(kd.k_v[id].k_why);
	kd.k_v[id].k_why = xstrdup(buf);
	job_kind_unavailable(id);
}

/* A worker offers kind id: its tasks wait for workers again. */
void
kind_offered(uint32_t id)
{
	if (id < kd.k_n && kd.k_v[id].k_why != NULL) {
		free(kd.k_v[id].k_why);
		kd.k_v[id].k_why = NULL;
	}
}

/* Why kind id was last withdrawn, while no worker offers it; or NULL. */
const char *
kind_why(uint32_t id)
{
	return (id < kd.k_n ? kd.k_v[id].k_why : NULL);
}

/* The name of kind id. */
const char *
kind_name(uint32_t id)
{
	return (id < kd.k_n && kd.k_v[id].k_name != NULL ?
	    kd.k_v[id].k_name : "?");
}

/* At exit: forget every kind. */
void
kind_free_all(void)
{
	struct kind_owner	*o;
	uint32_t		 i;

	for (i = 0; i < kd.k_n; i++) {
		free(kd.k_v[i].k_name);
		free(kd.k_v[i].k_why);
	}
	while ((o = kd.k_owners) != NULL) {
		kd.k_owners = o->o_next;
		u64map_free(&o->o_kinds);
		free(o);
	}
	free(kd.k_v);
	free(kd.k_free);
	free(kd.k_slots);
	memset(&kd, 0, sizeof(kd));
}
