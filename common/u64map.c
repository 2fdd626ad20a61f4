/*
 * uint64_t -> uint64_t map: see u64map.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

#define U64MAP_MIN	16

/* A key's home slot: a multiplicative hash, the high bits. */
static size_t
u64map_home(const struct u64map *m, uint64_t k)
{
	return ((size_t)((k * 0x9e3779b97f4a7c15ULL) >> 32) &
	    (m->m_nslots - 1));
}

void
u64map_init(struct u64map *m)
{
	m->m_slots = NULL;
	m->m_nslots = 0;
	m->m_n = 0;
}

void
u64map_free(struct u64map *m)
{
	free(m->m_slots);
	u64map_init(m);
}

/* Rehash into nslots slots; -1 (ENOMEM) leaves the map as it was. */
static int
u64map_resize(struct u64map *m, size_t nslots)
{
	struct u64map_slot	*old = m->m_slots, *ns;
	size_t			 oldn = m->m_nslots, i, h;

	if ((ns = calloc(nslots, sizeof(*ns))) == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	m->m_slots = ns;
	m->m_nslots = nslots;
	for (i = 0; i < oldn; i++) {
		if (!old[i].used)
			continue;
		for (h = u64map_home(m, old[i].k); ns[h].used;
		    h = (h + 1) & (nslots - 1))
			;
		ns[h] = old[i];
	}
	free(old);
	return (0);
}

/* Set k to v, adding k if new; -1 (ENOMEM) on failure. */
int
u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t	 h;

	if ((m->m_n + 1) * 4 > m->m_nslots * 3 &&
	    u64map_resize(m, m->m_nslots ? m->m_nslots * 2 : U64MAP_MIN) == -1)
		return (-1);
	for (h = u64map_home(m, k); m->m_slots[h].used;
	    h = (h + 1) & (m->m_nslots - 1))
		if (m->m_slots[h].k == k) {
			m->m_slots[h].v = v;
			return (0);
		}
	m->m_slots[h].used = 1;
	m->m_slots[h].k = k;
	m->m_slots[h].v = v;
	m->m_n++;
	return (0);
}

/* Whether k is there (1) or not (0); its value in *v. */
int
u64map_get(const struct u64map *m, uint64_t k, uint64_t *v)
{
	size_t	 h;

	if (m->m_n == 0)
		return (0);
	for (h = u64map_home(m, k); m->m_slots[h].used;
	    h = (h + 1) & (m->m_nslots - 1))
		if (m->m_slots[h].k == k) {
			if (v != NULL)
				*v = m->m_slots[h].v;
			return (1);
		}
	return (0);
}

/*
 * Remove k (1, its value in *v) or say it was not there (0).  The keys
 * after it in its probe run move back so that no lookup stops short.
 */
int
u64map_del(struct u64map *m, uint64_t k, uint64_t *v)
{
	size_t	 h, j, home, mask = m->m_nslots - 1;

	if (m->m_n == 0)
		return (0);
	for (h = u64map_home(m, k); m->m_slots[h].used; h = (h + 1) & mask)
		if (m->m_slots[h].k == k)
			break;
	if (!m->m_slots[h].used)
		return (0);
	if (v != NULL)
		*v = m->m_slots[h].v;
	for (j = (h + 1) & mask; m->m_slots[j].used; j = (j + 1) & mask) {
		home = u64map_home(m, m->m_slots[j].k);
		/* Move j back to h unless its home lies in (h, j]. */
		if ((j > h && (home <= h || home > j)) ||
		    (j < h && (home <= h && home > j))) {
			m->m_slots[h] = m->m_slots[j];
			h = j;
		}
	}
	m->m_slots[h].used = 0;
	m->m_n--;
	if (m->m_n == 0) {
		free(m->m_slots);
		u64map_init(m);
	} else if (m->m_nslots > 64 && m->m_n < m->m_nslots / 8)
		(void)u64map_resize(m, m->m_nslots / 4);	/* best effort */
	return (1);
}

size_t
u64map_count(const struct u64map *m)
{
	return (m->m_n);
}
