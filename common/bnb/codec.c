/*
 * The bytes of a "pfsp" task: its payload (an instance and a subproblem)
 * and its output (what the exploration found and left open).  The layouts
 * are in pfsp.h.  Pure; decoders read nothing outside their buffer and
 * accept only what a search could have made.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnb/pfsp.h"
#include "le.h"

static uint16_t	 le16_get(const uint8_t *);
static void	 le16_put(uint8_t *, uint16_t);

/* A little-endian u16. */
static uint16_t
le16_get(const uint8_t *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

/* Store a little-endian u16. */
static void
le16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/*
 * The length of a payload for n jobs, m machines and a subproblem with
 * fixed jobs in its prefix and suffix together.
 */
size_t
bnb_payload_len(uint32_t n, uint32_t m, uint32_t fixed)
{
	return (BNB_PAYLOAD_HEAD + 2 * (size_t)n * m + 2 * (size_t)fixed);
}

/*
 * Encode the payload of a task that explores sub of inst with bound lb
 * and branching rule branch, the incumbent known at send time and a node
 * budget (0: none) into buf of len bytes, which must be
 * bnb_payload_len(n, m, sub->depth + sub->back).  Returns -1 if not, or
 * if the instance or subproblem is out of range.
 */
int
bnb_payload_encode(uint8_t *buf, size_t len, const struct bnb_instance *inst,
    int lb, int branch, int32_t incumbent, uint64_t budget,
    const struct bnb_sub *sub)
{
	char		 err[64];
	uint8_t		*p;
	size_t		 i;

	if (bnb_instance_check(inst, err, sizeof(err)) == -1 ||
	    (lb != BNB_LB1 && lb != BNB_LB2) ||
	    (branch != BNB_FORWARD && branch != BNB_BIDIR) ||
	    sub->depth > inst->n || sub->back > inst->n - sub->depth ||
	    bnb_perm_check(sub->prefix, sub->depth + sub->back, inst->n) ==
	    -1 || len != bnb_payload_len(inst->n, inst->m, sub->depth +
	    sub->back))
		return (-1);
	le32_put(buf, BNB_PAYLOAD_MAGIC);
	le32_put(buf + 4, BNB_VERSION);
	le32_put(buf + 8, inst->n);
	le32_put(buf + 12, inst->m);
	le32_put(buf + 16, (uint32_t)lb);
	le32_put(buf + 20, (uint32_t)incumbent);
	le64_put(buf + 24, budget);
	le32_put(buf + 32, sub->depth);
	le32_put(buf + 36, (uint32_t)sub->lb);
	le32_put(buf + 40, sub->back);
	le32_put(buf + 44, (uint32_t)branch);
	le32_put(buf + 48, 0);
	p = buf + BNB_PAYLOAD_HEAD;
	for (i = 0; i < (size_t)inst->n * inst->m; i++, p += 2)
		le16_put(p, (uint16_t)inst->p[i]);
	for (i = 0; i < (size_t)sub->depth + sub->back; i++, p += 2)
		le16_put(p, sub->prefix[i]);
	return (0);
}

/*
 * Decode a payload into pl (pl->inst.p is malloc'd: free it with
 * bnb_instance_free).  -1 with err set when the bytes are not a payload
 * this version makes: magic, version, lengths, limits, bound, times and
 * prefix are all checked before anything is allocated.
 */
int
bnb_payload_decode(const uint8_t *buf, size_t len, struct bnb_payload *pl,
    char *err, size_t errlen)
{
	uint32_t	 n, m, lb, branch, depth, back, i;
	uint16_t	 all[BNB_MAX_JOBS];
	const uint8_t	*p;
	int32_t		 inc;

	memset(pl, 0, sizeof(*pl));
	if (len < BNB_PAYLOAD_HEAD) {
		snprintf(err, errlen, "pfsp payload of %zu bytes: shorter "
		    "than its %d-byte header", len, BNB_PAYLOAD_HEAD);
		return (-1);
	}
	if (le32_get(buf) != BNB_PAYLOAD_MAGIC) {
		snprintf(err, errlen, "not a pfsp payload (magic 0x%08x)",
		    le32_get(buf));
		return (-1);
	}
	if (le32_get(buf + 4) != BNB_VERSION) {
		snprintf(err, errlen, "pfsp payload version %u, this worker "
		    "reads %u", le32_get(buf + 4), BNB_VERSION);
		return (-1);
	}
	n = le32_get(buf + 8);
	m = le32_get(buf + 12);
	lb = le32_get(buf + 16);
	inc = (int32_t)le32_get(buf + 20);
	depth = le32_get(buf + 32);
	back = le32_get(buf + 40);
	branch = le32_get(buf + 44);
	if (n < 1 || n > BNB_MAX_JOBS || m < 1 || m > BNB_MAX_MACHINES) {
		snprintf(err, errlen, "pfsp payload: %u jobs, %u machines "
		    "(1 to %d, 1 to %d)", n, m, BNB_MAX_JOBS,
		    BNB_MAX_MACHINES);
		return (-1);
	}
	if (lb != BNB_LB1 && lb != BNB_LB2) {
		snprintf(err, errlen, "pfsp payload: lower bound %u (1 or 2)",
		    lb);
		return (-1);
	}
	if (branch != BNB_FORWARD && branch != BNB_BIDIR) {
		snprintf(err, errlen, "pfsp payload: branching %u (1 or 2)",
		    branch);
		return (-1);
	}
	if (inc < 0) {
		snprintf(err, errlen, "pfsp payload: incumbent %d", inc);
		return (-1);
	}
	if (depth > n || back > n - depth ||
	    len != bnb_payload_len(n, m, depth + back)) {
		snprintf(err, errlen, "pfsp payload of %zu bytes: %u jobs, %u "
		    "machines, a prefix of %u and a suffix of %u need %zu",
		    len, n, m, depth, back, depth > n || back > n - depth ? 0 :
		    bnb_payload_len(n, m, depth + back));
		return (-1);
	}
	p = buf + BNB_PAYLOAD_HEAD;
	for (i = 0; i < n * m; i++)
		if (le16_get(p + 2 * i) > BNB_MAX_TIME) {
			snprintf(err, errlen, "pfsp payload: processing time "
			    "%u over %d", le16_get(p + 2 * i), BNB_MAX_TIME);
			return (-1);
		}
	for (i = 0; i < depth + back; i++)
		all[i] = le16_get(p + 2 * (size_t)n * m + 2 * i);
	if (bnb_perm_check(all, depth + back, n) == -1) {
		snprintf(err, errlen, "pfsp payload: the prefix and suffix "
		    "repeat a job or have one over %u", n);
		return (-1);
	}
	memcpy(pl->prefix, all, depth * sizeof(*all));
	memcpy(pl->suffix, all + depth, back * sizeof(*all));
	if ((pl->inst.p = calloc((size_t)n * m, sizeof(int32_t))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	for (i = 0; i < n * m; i++)
		pl->inst.p[i] = le16_get(p + 2 * i);
	pl->inst.n = n;
	pl->inst.m = m;
	pl->inst.seed = -1;
	pl->inst.ub = -1;
	pl->inst.lb = -1;
	pl->lb = (int)lb;
	pl->branch = (int)branch;
	pl->incumbent = inc;
	pl->budget = le64_get(buf + 24);
	pl->depth = depth;
	pl->back = back;
	pl->sub_lb = (int32_t)le32_get(buf + 36);
	pl->exchange_ms = le32_get(buf + 48);
	return (0);
}

/* Set the exchange interval of an encoded payload (pfsp.h, 7.). */
void
bnb_payload_set_exchange(uint8_t *buf, size_t len, uint32_t ms)
{
	if (len >= BNB_PAYLOAD_HEAD)
		le32_put(buf + 48, ms);
}

/* Set the pruned count of an encoded output (pfsp.h, 7.). */
void
bnb_result_set_pruned(uint8_t *buf, size_t len, uint64_t pruned)
{
	if (len >= BNB_RESULT_HEAD)
		le64_put(buf + 36, pruned);
}

/*
 * The nodes an encoded output says it explored, without decoding the
 * rest (an output that lost the race, its subproblem gone); -1 if the
 * buffer is not an output.
 */
int
bnb_result_nodes(const uint8_t *buf, size_t len, uint64_t *nodes)
{
	if (len < BNB_RESULT_HEAD || le32_get(buf) != BNB_RESULT_MAGIC ||
	    le32_get(buf + 4) != BNB_VERSION)
		return (-1);
	*nodes = le64_get(buf + 16);
	return (0);
}

/* The length of an output: n jobs, a best (BNB_NONE: none), a frontier. */
size_t
bnb_result_len(uint32_t n, int32_t best, const struct bnb_frontier *fr)
{
	size_t	 len = BNB_RESULT_HEAD;

	if (best != BNB_NONE)
		len += 2 * (size_t)n;
	if (fr != NULL && fr->n > 0)
		len += 2 * (size_t)fr->pathlen + 8 * fr->n;
	return (len);
}

/*
 * Encode an output into buf of len bytes (bnb_result_len): why the
 * search stopped, n, the nodes it explored, its best makespan and
 * permutation (BNB_NONE and NULL: none) and what it left open (NULL or
 * empty: nothing).  -1 if len is not right.
 */
int
bnb_result_encode(uint8_t *buf, size_t len, int stop, uint32_t n,
    uint64_t nodes, int32_t best, const uint16_t *perm,
    const struct bnb_frontier *fr)
{
	uint8_t		*p;
	size_t		 i, nfr = fr != NULL ? fr->n : 0;

	if (len != bnb_result_len(n, best, fr) ||
	    (best != BNB_NONE && perm == NULL))
		return (-1);
	le32_put(buf, BNB_RESULT_MAGIC);
	le32_put(buf + 4, BNB_VERSION);
	le32_put(buf + 8, (uint32_t)stop);
	le32_put(buf + 12, n);
	le64_put(buf + 16, nodes);
	le32_put(buf + 24, (uint32_t)best);
	le32_put(buf + 28, nfr > 0 ? fr->pathlen : 0);
	le32_put(buf + 32, (uint32_t)nfr);
	le64_put(buf + 36, 0);
	p = buf + BNB_RESULT_HEAD;
	if (best != BNB_NONE)
		for (i = 0; i < n; i++, p += 2)
			le16_put(p, perm[i]);
	if (nfr > 0) {
		for (i = 0; i < fr->pathlen; i++, p += 2)
			le16_put(p, fr->path[i]);
		for (i = 0; i < nfr; i++, p += 8) {
			le32_put(p, (uint32_t)fr->v[i].lb);
			le16_put(p + 4, fr->v[i].depth);
			le16_put(p + 6, fr->v[i].job);
		}
	}
	return (0);
}

/*
 * Decode the output of a task that explored parent (NULL: not checked)
 * of an n-job instance into res (bnb_result_free it).  -1 with err set
 * unless the bytes are an output this version makes and everything in
 * it is a subproblem of parent: the best a permutation that starts with
 * parent's prefix and ends with its suffix, every open node's placements
 * starting with parent's (pfsp.h, 5.), no job twice in one.
 */
int
bnb_result_decode(const uint8_t *buf, size_t len, uint32_t n,
    const struct bnb_sub *parent, struct bnb_result *res, char *err,
    size_t errlen)
{
	const uint8_t	*p;
	uint16_t	 pos[BNB_MAX_JOBS], ppl[BNB_MAX_JOBS], job, pj;
	uint32_t	 stop, rn, pathlen, nfr, i, depth, plen, pd, pb;
	size_t		 need;
	int32_t		 best;

	memset(res, 0, sizeof(*res));
	bnb_frontier_init(&res->frontier);
	if (len < BNB_RESULT_HEAD || le32_get(buf) != BNB_RESULT_MAGIC ||
	    le32_get(buf + 4) != BNB_VERSION) {
		snprintf(err, errlen, "pfsp output of %zu bytes: no magic and "
		    "version %u", len, BNB_VERSION);
		return (-1);
	}
	stop = le32_get(buf + 8);
	rn = le32_get(buf + 12);
	best = (int32_t)le32_get(buf + 24);
	pathlen = le32_get(buf + 28);
	nfr = le32_get(buf + 32);
	if (stop > BNB_SHARED || rn != n || n > BNB_MAX_JOBS ||
	    pathlen > n || (best < 0) || nfr > len / 8) {
		snprintf(err, errlen, "pfsp output: stop %u, %u jobs (not "
		    "%u), best %d, path %u or %u open nodes out of range",
		    stop, rn, n, best, pathlen, nfr);
		return (-1);
	}
	need = BNB_RESULT_HEAD + (best != BNB_NONE ? 2 * (size_t)n : 0) +
	    (nfr > 0 ? 2 * (size_t)pathlen + 8 * (size_t)nfr : 0);
	if (len != need || (nfr == 0 && pathlen != 0)) {
		snprintf(err, errlen, "pfsp output of %zu bytes, %zu expected",
		    len, need);
		return (-1);
	}
	pd = parent != NULL ? parent->depth : 0;
	pb = parent != NULL ? parent->back : 0;
	if (pd > n || pb > n - pd) {
		snprintf(err, errlen, "pfsp output: parent deeper than n");
		return (-1);
	}
	/* The parent's placements: its prefix, then its suffix backward. */
	plen = pd + pb;
	for (i = 0; i < pd; i++)
		ppl[i] = parent->prefix[i];
	for (i = 0; i < pb; i++)
		ppl[pd + i] = (uint16_t)(parent->prefix[pd + pb - 1 - i] |
		    BNB_BACK);
	res->stop = (int)stop;
	res->n = n;
	res->nodes = le64_get(buf + 16);
	res->pruned = le64_get(buf + 36);
	res->best = best;
	p = buf + BNB_RESULT_HEAD;
	if (best != BNB_NONE) {
		for (i = 0; i < n; i++, p += 2)
			res->perm[i] = le16_get(p);
		if (bnb_perm_check(res->perm, n, n) == -1 || (pd > 0 &&
		    memcmp(res->perm, parent->prefix, pd * 2) != 0) ||
		    (pb > 0 && memcmp(res->perm + n - pb, parent->prefix +
		    pd, pb * 2) != 0)) {
			snprintf(err, errlen, "pfsp output: the best is not a "
			    "permutation of the subproblem");
			return (-1);
		}
	}
	if (nfr == 0)
		return (0);
	if ((res->frontier.path = calloc(BNB_MAX_JOBS, 2)) == NULL ||
	    (res->frontier.v = calloc(nfr, sizeof(struct bnb_open))) ==
	    NULL) {
		bnb_result_free(res);
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	res->frontier.cap = nfr;
	res->frontier.pathlen = pathlen;
	for (i = 0; i < n; i++)
		pos[i] = BNB_NOJOB;
	for (i = 0; i < pathlen; i++, p += 2) {
		res->frontier.path[i] = le16_get(p);
		pj = BNB_JOB(res->frontier.path[i]);
		if (pj >= n || pos[pj] != BNB_NOJOB)
			goto bad;
		pos[pj] = (uint16_t)i;
	}
	/* The path's first plen jobs are parent's unless no node uses them. */
	for (i = 0; i < nfr; i++, p += 8) {
		res->frontier.v[i].lb = (int32_t)le32_get(p);
		depth = res->frontier.v[i].depth = le16_get(p + 4);
		job = res->frontier.v[i].job = le16_get(p + 6);
		pj = BNB_JOB(job);
		if (depth > pathlen || (job != BNB_NOJOB && (pj >= n ||
		    (pos[pj] != BNB_NOJOB && pos[pj] < depth))))
			goto bad;
		if (depth + (job != BNB_NOJOB) < plen ||
		    memcmp(res->frontier.path, ppl,
		    (depth < plen ? depth : plen) * 2) != 0 ||
		    (depth < plen && job != ppl[depth]))
			goto bad;
		res->frontier.n++;
	}
	return (0);
bad:
	bnb_result_free(res);
	snprintf(err, errlen, "pfsp output: an open node is not a "
	    "subproblem of the task's (node %u)", i);
	return (-1);
}

/* Free what a decoded output holds. */
void
bnb_result_free(struct bnb_result *res)
{
	bnb_frontier_free(&res->frontier);
}
