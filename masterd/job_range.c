/*
 * The ranges of task ids: which batch, and which task of it, a task id
 * names.  A batch's tasks take ids in ranges as they are added
 * (job_batch_reserve()); a result, a report or an action of the core
 * names only the id.  Owned by the job layer: a range dies with its
 * batch.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "masterd.h"

/* The ranges, by first id. */
static struct {
	struct task_range	*r_v;
	size_t			 r_n, r_cap;
} rg;

/*
 * The ranges of task ids, sorted by first id, a task found by binary
 * search.  Ids are handed out in increasing order, so a range is nearly
 * always appended, or extends the last one of the same batch.  Not when
 * jobs resume from the journal: a batch job's tasks take new ids while an
 * es job's generation keeps its old ones (job_batch_reserve()), and a
 * batch job loaded before an es job of a lower id put its ranges first
 * (masterd died at start on such a journal: "task id 80 out of order").
 * Such a range goes in its place; ranges never overlap.
 */
void
job_range_add(struct job_batch *b, uint64_t first, size_t n, size_t idx0)
{
	struct task_range	*r;
	size_t			 lo = 0, hi = rg.r_n, mid;

	if (rg.r_n > 0) {
		r = &rg.r_v[rg.r_n - 1];
		if (r->r_batch == b && r->r_first + r->r_n == first &&
		    r->r_idx0 + r->r_n == idx0 && r->r_n + n <= UINT32_MAX) {
			r->r_n += (uint32_t)n;
			return;
		}
		if (first < r->r_first + r->r_n) {
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (rg.r_v[mid].r_first < first)
					lo = mid + 1;
				else
					hi = mid;
			}
			if ((lo < rg.r_n && first + n >
			    rg.r_v[lo].r_first) || (lo > 0 && first <
			    rg.r_v[lo - 1].r_first +
			    rg.r_v[lo - 1].r_n))
				fatalx("%s: task ids %llu.. overlap another "
				    "batch's", __func__,
				    (unsigned long long)first);
		} else
			lo = rg.r_n;
	}
	if (rg.r_n == rg.r_cap) {
		rg.r_cap = rg.r_cap ? rg.r_cap * 2 : 64;
		if ((rg.r_v = reallocarray(rg.r_v, rg.r_cap,
		    sizeof(*rg.r_v))) == NULL)
			fatal("%s", __func__);
	}
	if (lo < rg.r_n)
		memmove(&rg.r_v[lo + 1], &rg.r_v[lo],
		    (rg.r_n - lo) * sizeof(*rg.r_v));
	rg.r_n++;
	r = &rg.r_v[lo];
	r->r_first = first;
	r->r_n = (uint32_t)n;
	r->r_idx0 = (uint32_t)idx0;
	r->r_batch = b;
}

/* Forget b's ranges. */
void
job_range_drop(const struct job_batch *b)
{
	size_t	 i, n;

	for (i = n = 0; i < rg.r_n; i++)
		if (rg.r_v[i].r_batch != b)
			rg.r_v[n++] = rg.r_v[i];
	rg.r_n = n;
}

/*
 * The batch (live, or one of its job's last JOB_PAST) holding task tid,
 * and the task's index in it; NULL if none does.
 */
struct job_batch *
job_task_find(uint64_t tid, size_t *idx)
{
	size_t			 lo = 0, hi = rg.r_n, mid;
	const struct task_range	*r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &rg.r_v[mid];
		if (tid < r->r_first)
			hi = mid;
		else if (tid >= r->r_first + r->r_n)
			lo = mid + 1;
		else {
			*idx = r->r_idx0 + (size_t)(tid - r->r_first);
			return (r->r_batch);
		}
	}
	return (NULL);
}

/* The id of task idx of b; 0 if its range is gone. */
uint64_t
job_task_id(const struct job_batch *b, size_t idx)
{
	size_t	 i;

	for (i = 0; i < rg.r_n; i++)
		if (rg.r_v[i].r_batch == b && idx >= rg.r_v[i].r_idx0 &&
		    idx < (size_t)rg.r_v[i].r_idx0 + rg.r_v[i].r_n)
			return (rg.r_v[i].r_first + (idx -
			    rg.r_v[i].r_idx0));
	return (0);
}

/* At exit. */
void
job_range_free_all(void)
{
	free(rg.r_v);
	memset(&rg, 0, sizeof(rg));
}
