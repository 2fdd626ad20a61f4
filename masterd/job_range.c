/*
 * The ranges of task ids: which batch, and which task of it, a task id
 * names.  A batch's tasks take ids in ranges as they are added
 * (job_batch_reserve()); a result, a report or an action of the core
 * names only the id.  Owned by the job layer: a range dies with its
 * batch.
 *
 * Two books: every range in one array sorted by first id (an id to its
 * batch by binary search), and each batch's own ranges in the batch, by
 * task index (a task to its id by binary search).  A batch that leaves
 * only marks its ranges in the array dead; the array is compacted once
 * half of it is dead, so adding, finding and dropping cost O(log n)
 * amortised whatever number of batches there are.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "masterd.h"

/* The ranges, by first id; r_batch NULL: dead. */
static struct {
	struct task_range	*r_v;
	size_t			 r_n, r_cap;
	size_t			 r_ndead;
} rg;

/* Drop the dead ranges from the array. */
static void
range_compact(void)
{
	size_t	 i, n;

	for (i = n = 0; i < rg.r_n; i++)
		if (rg.r_v[i].r_batch != NULL)
			rg.r_v[n++] = rg.r_v[i];
	rg.r_n = n;
	rg.r_ndead = 0;
}

/* The first place in the array whose range starts at or after first. */
static size_t
range_lower(uint64_t first)
{
	size_t	 lo = 0, hi = rg.r_n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rg.r_v[mid].r_first < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

/* Does [first, first + n) overlap the range at place i? */
static int
range_overlaps(size_t i, uint64_t first, size_t n)
{
	const struct task_range	*r = &rg.r_v[i];

	return (first < r->r_first + r->r_n && r->r_first < first + n);
}

/* Note the range in b's own list, by task index (appended: idx0 grows). */
static void
range_own(struct job_batch *b, uint64_t first, size_t n, size_t idx0)
{
	struct task_range	*r;

	if (b->b_nranges > 0) {
		r = &b->b_ranges[b->b_nranges - 1];
		if (r->r_first + r->r_n == first && r->r_idx0 + r->r_n ==
		    idx0 && r->r_n + n <= UINT32_MAX) {
			r->r_n += (uint32_t)n;
			return;
		}
		if (idx0 < (size_t)r->r_idx0 + r->r_n)
			fatalx("%s: task %zu added out of order", __func__,
			    idx0);
	}
	if (b->b_nranges == b->b_rangecap) {
		b->b_rangecap = b->b_rangecap ? b->b_rangecap * 2 : 2;
		if ((b->b_ranges = reallocarray(b->b_ranges, b->b_rangecap,
		    sizeof(*b->b_ranges))) == NULL)
			fatal("%s", __func__);
	}
	r = &b->b_ranges[b->b_nranges++];
	r->r_first = first;
	r->r_n = (uint32_t)n;
	r->r_idx0 = (uint32_t)idx0;
	r->r_batch = b;
}

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
	size_t			 lo;

	range_own(b, first, n, idx0);
	if (rg.r_n > 0) {
		r = &rg.r_v[rg.r_n - 1];
		if (r->r_batch == b && r->r_first + r->r_n == first &&
		    r->r_idx0 + r->r_n == idx0 && r->r_n + n <= UINT32_MAX) {
			r->r_n += (uint32_t)n;
			return;
		}
	}
	lo = rg.r_n;
	if (rg.r_n > 0 && first < rg.r_v[rg.r_n - 1].r_first +
	    rg.r_v[rg.r_n - 1].r_n) {
		/* Out of order: in its place, the dead out of the way. */
		if (rg.r_ndead > 0)
			range_compact();
		lo = range_lower(first);
		if ((lo < rg.r_n && range_overlaps(lo, first, n)) ||
		    (lo > 0 && range_overlaps(lo - 1, first, n)))
			fatalx("%s: task ids %llu.. overlap another "
			    "batch's", __func__, (unsigned long long)first);
	}
	if (rg.r_n == rg.r_cap) {
		if (rg.r_ndead > rg.r_n / 2) {
			/* Only when appending: out of order compacted. */
			range_compact();
			lo = rg.r_n;
		} else {
			rg.r_cap = rg.r_cap ? rg.r_cap * 2 : 64;
			if ((rg.r_v = reallocarray(rg.r_v, rg.r_cap,
			    sizeof(*rg.r_v))) == NULL)
				fatal("%s", __func__);
		}
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

/*
 * Forget b's ranges: each is found in the array by its first id and
 * marked dead, the array compacted once half of it is.
 */
void
job_range_drop(struct job_batch *b)
{
	size_t	 i, k;

	for (i = 0; i < b->b_nranges; i++) {
		k = range_lower(b->b_ranges[i].r_first);
		/* The array may hold it as several pieces: all b's. */
		for (; k < rg.r_n && rg.r_v[k].r_first <
		    b->b_ranges[i].r_first + b->b_ranges[i].r_n; k++)
			if (rg.r_v[k].r_batch == b) {
				rg.r_v[k].r_batch = NULL;
				rg.r_ndead++;
			}
	}
	free(b->b_ranges);
	b->b_ranges = NULL;
	b->b_nranges = b->b_rangecap = 0;
	if (rg.r_ndead > 64 && rg.r_ndead > rg.r_n / 2)
		range_compact();
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
			if (r->r_batch == NULL)
				return (NULL);
			*idx = r->r_idx0 + (size_t)(tid - r->r_first);
			return (r->r_batch);
		}
	}
	return (NULL);
}

/* The id of task idx of b, by binary search of its ranges; 0 if none. */
uint64_t
job_task_id(const struct job_batch *b, size_t idx)
{
	size_t			 lo = 0, hi = b->b_nranges, mid;
	const struct task_range	*r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = &b->b_ranges[mid];
		if (idx < r->r_idx0)
			hi = mid;
		else if (idx >= (size_t)r->r_idx0 + r->r_n)
			lo = mid + 1;
		else
			return (r->r_first + (idx - r->r_idx0));
	}
	return (0);
}

/* At exit. */
void
job_range_free_all(void)
{
	free(rg.r_v);
	memset(&rg, 0, sizeof(rg));
}
