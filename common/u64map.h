/*
 * A map from uint64_t keys to uint64_t values: open addressing, linear
 * probing, deletion by backward shift (no tombstones), so lookups stay
 * O(1) however many keys come and go.  Pure; allocation failure is
 * reported, never fatal.
 */
#ifndef R3Q_U64MAP_H
#define R3Q_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t	 k;
	uint64_t	 v;
	int		 used;
};

struct u64map {
	struct u64map_slot *m_slots;
	size_t		 m_nslots;	/* 0 or a power of two */
	size_t		 m_n;
};

void	 u64map_init(struct u64map *);
void	 u64map_free(struct u64map *);
int	 u64map_put(struct u64map *, uint64_t, uint64_t);
int	 u64map_get(const struct u64map *, uint64_t, uint64_t *);
int	 u64map_del(struct u64map *, uint64_t, uint64_t *);
size_t	 u64map_count(const struct u64map *);

#endif /* R3Q_U64MAP_H */
