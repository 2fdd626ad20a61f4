/*
 * What the files of common/bnb share and nobody else needs: a problem's
 * tables and the bounding of a node's children.
 */
#ifndef R3Q_BNB_INT_H
#define R3Q_BNB_INT_H

#include <stdint.h>

#include "bnb/pfsp.h"

/*
 * An instance and its bounds' tables, read-only once made.  tail[k * n +
 * j] is job j's work on the machines after k, head[k * n + j] on those
 * before k; for each machine pair i
 * (pk[i] < pl[i]), lag[i * n + j] is job j's work strictly between them
 * and order[i * n + r] the job of rank r in Johnson's order.
 */
struct bnb_problem {
	struct bnb_instance	 inst;
	int			 lb;
	int			 branch;
	int32_t			*tail;
	int32_t			*head;
	uint32_t		 npairs;
	uint16_t		*pk;
	uint16_t		*pl;
	int32_t			*lag;
	uint16_t		*order;
};

/*
 * A node's unscheduled jobs summed up for its children's bounds: per
 * machine, the work left, and the smallest and second smallest
 * processing time, tail and head with the job of the smallest.
 */
struct bnb_agg {
	int32_t		 sum[BNB_MAX_MACHINES];
	int32_t		 minh[BNB_MAX_MACHINES];
	int32_t		 minh2[BNB_MAX_MACHINES];
	uint16_t	 argh[BNB_MAX_MACHINES];
	int32_t		 minp[BNB_MAX_MACHINES];
	int32_t		 minp2[BNB_MAX_MACHINES];
	uint16_t	 argp[BNB_MAX_MACHINES];
	int32_t		 mint[BNB_MAX_MACHINES];
	int32_t		 mint2[BNB_MAX_MACHINES];
	uint16_t	 argt[BNB_MAX_MACHINES];
};

void	 bnb_front_add(const struct bnb_instance *, const int32_t *,
	    uint16_t, int32_t *);
void	 bnb_back_add(const struct bnb_instance *, const int32_t *,
	    uint16_t, int32_t *);
int32_t	 bnb_join(const int32_t *, const int32_t *, uint32_t);
void	 bnb_agg_make(const struct bnb_problem *, const uint16_t *, uint32_t,
	    struct bnb_agg *);
int32_t	 bnb_child_bound(const struct bnb_problem *, const struct bnb_agg *,
	    const uint8_t *, uint32_t, const int32_t *, const int32_t *,
	    uint16_t, int32_t);

#endif /* R3Q_BNB_INT_H */
