/*
 * The persistent runner: one long-lived process per execution slot, each
 * taking task after task as frames on its standard input and answering
 * on its standard output (the framing is described in ext.h and
 * workerd.conf(5), "Persistent kinds").  A slot's process starts on the
 * slot's first task and after any task that left it dead or unfit: it
 * exited, broke the framing, sent more than max_output, or did not answer
 * a cancel frame within k_grace.  Only the slot's own thread touches it,
 * so nothing here is locked.
 *
 * As in exec.c, one poll loop on non-blocking descriptors writes the task
 * frame (and perhaps a cancel frame after it), reads frames and stderr and
 * watches the process's pidfd, the cancel flag and the clock: a payload
 * larger than the pipe cannot deadlock against a process writing output.
 *
 * Pipelining: a process that sent 'P' takes its next task while it runs
 * one.  Once the current task's frame is written, the loop asks the host
 * for the slot's next task (ctx->next) and writes its frame too; the host
 * runs that task next on the slot (ctx->queued), which then only waits for
 * its answer, so the process never waits a round trip between tasks.
 * What the process sent after an answer (the queued task's 'H', its
 * answer) is kept for that run.  A cancel frame then names its task by
 * number ('C' with 4 bytes: the count of 'T' frames the process has been
 * sent, 1 for its first), as a cancel may cross an answer and find the
 * queued task current.  A queued task cancelled while the one before
 * runs has its cancel sent at once, so that the process answers it
 * unstarted.  A process that dies, or is killed, takes the queued frame
 * with it: the queued task's run starts a new process and writes it
 * again.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "task/ext.h"

#define PERSIST_FAIL_MAX	65536	/* longest 'F' frame taken (or
					   max_output, if more) */
#define PERSIST_DIRECT		4096	/* an 'R' body this much short is
					   read straight into the output */
#define PERSIST_EXIT_WAIT	100	/* ms for the exit after an EOF */
#define PERSIST_CARRY		16384	/* what a read takes at once: bytes
					   after an answer kept for the
					   queued task's run */
#define PERSIST_READ_MAX	(256 * 1024)	/* bytes read a wake-up from
					   stderr, or of 'H' frames, so
					   that a flood cannot starve the
					   loop */

/* One slot's process; c_pid 0 while there is none. */
struct persist_proc {
	struct ext_child	 pp_child;
	struct ext_tail		 pp_tail;	/* of this process's life */
	int			 pp_unfit;	/* restart before the next task */
	int			 pp_pipe;	/* it sent 'P': pipelining */
	uint32_t		 pp_seq;	/* 'T' frames written to it */
	/* The next task's frame, written while the current one runs. */
	uint32_t		 pp_qseq;	/* its number; 0: none queued */
	uint8_t			 pp_qhead[EXT_FRAME_HEAD];
	const uint8_t		*pp_qpayload;	/* the host's, kept for the
						   queued task's run */
	size_t			 pp_qlen;
	size_t			 pp_qwoff;	/* of qhead + payload */
	const atomic_int	*pp_qcancel;	/* its cancel flag */
	int			 pp_qcdue;	/* cancelled: send qchead */
	uint8_t			 pp_qchead[EXT_FRAME_HEAD + 4];
	size_t			 pp_qcoff;
	uint8_t			 pp_carry[PERSIST_CARRY];	/* sent
						   after the last answer */
	size_t			 pp_ncarry;
};

/* A persistent kind's k_priv: its slots' processes. */
struct persist {
	unsigned		 ps_n;
	struct persist_proc	 ps_proc[];
};

/* How a task ended, as far as the frames go. */
enum persist_end {
	PERSIST_RUNNING,
	PERSIST_OK,		/* an 'R' */
	PERSIST_FAILED,		/* an 'F' */
	PERSIST_UNAVAILABLE,	/* a 'U' */
	PERSIST_BROKEN,		/* bad framing, r_error says how */
	PERSIST_DEAD		/* EOF or exit before the answer */
};

/* One task on one slot's process; on the stack. */
struct persist_run {
	struct persist_proc	*r_pp;
	const struct task_ctx	*r_ctx;
	struct task_result	*r_res;
	uint64_t		 r_max;

	/* To the process: 'T' + payload, then maybe 'C'. */
	uint8_t			 r_thead[EXT_FRAME_HEAD];
	const uint8_t		*r_payload;
	size_t			 r_plen;
	size_t			 r_woff;	/* of thead + payload */
	uint8_t			 r_chead[EXT_FRAME_HEAD + 4];
	size_t			 r_clen;	/* 5, or 9 with a number */
	size_t			 r_coff;
	uint32_t		 r_seq;		/* the task's number */
	int			 r_cancel;	/* a 'C' is to be sent */
	int			 r_wdead;	/* its stdin is gone (EPIPE) */

	/* From the process: the frame being read. */
	uint8_t			 r_fhead[EXT_FRAME_HEAD];
	size_t			 r_fheadlen;
	uint8_t			 r_type;
	uint32_t		 r_flen;
	uint32_t		 r_fgot;
	uint8_t			*r_body;	/* the output, for an 'R' */
	uint8_t			 r_msg[TASK_ERRLEN];	/* of an 'F' */
	int			 r_half;
	enum persist_end	 r_end;
	char			 r_error[TASK_ERRLEN];
};

static void	 persist_stop(struct persist_proc *);
static int	 persist_idle(struct persist_proc *);
static void	 persist_write(struct persist_run *);
static int	 persist_pending(const struct persist_run *);
static void	 persist_read(struct persist_run *);
static void	 persist_read_err(struct persist_proc *);
static size_t	 persist_feed(struct persist_run *, const uint8_t *, size_t);
static int	 persist_head(struct persist_run *);
static void	 persist_frame(struct persist_run *);
static void	 persist_dead(struct persist_run *, char *, size_t);
static void	 be32_put(uint8_t *, uint32_t);
static void	 persist_launched(const struct task_ctx *);
static int	 persist_put(int, const uint8_t *, size_t, const uint8_t *,
		    size_t, size_t *);
static void	 persist_queue(struct persist_run *);

/* Tell the host the task is handed over (ctx->launched), if it asks. */
static void
persist_launched(const struct task_ctx *ctx)
{
	if (ctx->launched != NULL)
		ctx->launched(ctx->arg);
}

/* A big-endian frame length. */
static void
be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Make room for k_nslots processes, none started yet. */
int
ext_persist_open(struct ext_kind *k, char *err, size_t errlen)
{
	struct persist	*ps;
	unsigned	 i, n;

	n = k->k_nslots > 0 ? k->k_nslots : 1;
	ps = calloc(1, sizeof(*ps) + n * sizeof(ps->ps_proc[0]));
	if (ps == NULL) {
		snprintf(err, errlen, "%s: out of memory", k->k_name);
		return (-1);
	}
	ps->ps_n = n;
	for (i = 0; i < n; i++) {
		ps->ps_proc[i].pp_child.c_pidfd = -1;
		ps->ps_proc[i].pp_child.c_in = -1;
		ps->ps_proc[i].pp_child.c_out = -1;
		ps->ps_proc[i].pp_child.c_err = -1;
	}
	k->k_priv = ps;
	return (0);
}

/* Stop every slot's process (SIGKILL to its group, reaped), free them. */
void
ext_persist_close(struct ext_kind *k)
{
	struct persist	*ps = k->k_priv;
	unsigned	 i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->ps_n; i++)
		persist_stop(&ps->ps_proc[i]);
	free(ps);
	k->k_priv = NULL;
}

/* Stop a slot's process, if it has one, and forget its stderr. */
static void
persist_stop(struct persist_proc *pp)
{
	if (pp->pp_child.c_pid > 0)
		ext_child_stop(&pp->pp_child);
	memset(&pp->pp_tail, 0, sizeof(pp->pp_tail));
	pp->pp_unfit = 0;
	pp->pp_pipe = 0;
	pp->pp_seq = pp->pp_qseq = 0;
	pp->pp_qpayload = NULL;
	pp->pp_qlen = pp->pp_qwoff = pp->pp_ncarry = 0;
	pp->pp_qcancel = NULL;
	pp->pp_qcdue = 0;
	pp->pp_qcoff = 0;
}

/*
 * Before a task: is the idle process still fit?  Nothing may be waiting on
 * its stdout: end of file means it died since its last task, and bytes
 * mean it sent something after its last answer (-1 either way).
 */
static int
persist_idle(struct persist_proc *pp)
{
	uint8_t	 b;
	ssize_t	 n;

	while ((n = read(pp->pp_child.c_out, &b, 1)) == -1 && errno == EINTR)
		;
	return (n == -1 && errno == EAGAIN ? 0 : -1);
}

/*
 * Write what the pipe takes of one frame, head then body, from *off: 1
 * once all of it is written, 0 when the pipe is full, -1 when it is gone
 * (EPIPE: the process closed its stdin or exited).
 */
static int
persist_put(int fd, const uint8_t *head, size_t hlen, const uint8_t *body,
    size_t blen, size_t *off)
{
	struct iovec	 iov[2];
	size_t		 boff;
	ssize_t		 n;
	int		 niov;

	while (*off < hlen + blen) {
		niov = 0;
		if (*off < hlen) {
			iov[niov].iov_base = (void *)(uintptr_t)(head + *off);
			iov[niov++].iov_len = hlen - *off;
		}
		if (blen > 0) {
			boff = *off > hlen ? *off - hlen : 0;
			iov[niov].iov_base = (void *)(uintptr_t)(body + boff);
			iov[niov++].iov_len = blen - boff;
		}
		n = writev(fd, iov, niov);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return (errno == EAGAIN ? 0 : -1);
		}
		*off += (size_t)n;
	}
	return (1);
}

/*
 * Write what the pipe takes of the task frame, then of the cancel frame
 * when one is due, then of the queued task's frame; a frame begun is
 * finished before another starts.  EPIPE stops the writing; the process's
 * end of file or exit will end the task.
 */
static void
persist_write(struct persist_run *r)
{
	struct persist_proc	*pp = r->r_pp;
	int			 fd = pp->pp_child.c_in, rc = 1;

	if (r->r_wdead)
		return;
	rc = persist_put(fd, r->r_thead, EXT_FRAME_HEAD, r->r_payload,
	    r->r_plen, &r->r_woff);
	if (rc == 1 && pp->pp_qseq != 0 && pp->pp_qwoff > 0)
		rc = persist_put(fd, pp->pp_qhead, EXT_FRAME_HEAD,
		    pp->pp_qpayload, pp->pp_qlen, &pp->pp_qwoff);
	if (rc == 1 && r->r_cancel)
		rc = persist_put(fd, r->r_chead, r->r_clen, NULL, 0,
		    &r->r_coff);
	if (rc == 1 && pp->pp_qseq != 0)
		rc = persist_put(fd, pp->pp_qhead, EXT_FRAME_HEAD,
		    pp->pp_qpayload, pp->pp_qlen, &pp->pp_qwoff);
	if (rc == 1 && pp->pp_qseq != 0 && pp->pp_qcdue)
		rc = persist_put(fd, pp->pp_qchead, sizeof(pp->pp_qchead),
		    NULL, 0, &pp->pp_qcoff);
	if (rc == -1)
		r->r_wdead = 1;
}

/* Is anything left to write? */
static int
persist_pending(const struct persist_run *r)
{
	const struct persist_proc	*pp = r->r_pp;

	return (!r->r_wdead && (r->r_woff < EXT_FRAME_HEAD + r->r_plen ||
	    (r->r_cancel && r->r_coff < r->r_clen) || (pp->pp_qseq != 0 &&
	    (pp->pp_qwoff < EXT_FRAME_HEAD + pp->pp_qlen ||
	    (pp->pp_qcdue && pp->pp_qcoff < sizeof(pp->pp_qchead))))));
}

/*
 * Pipelining: the task's frame is written and the process takes a queued
 * one ('P'): ask the host for the slot's next task and queue its frame.
 */
static void
persist_queue(struct persist_run *r)
{
	struct persist_proc	*pp = r->r_pp;
	struct task_params	 np;
	const atomic_int	*qcancel = NULL;

	/* The queued task cancelled: its cancel goes now, it never starts. */
	if (pp->pp_qseq != 0 && !pp->pp_qcdue && pp->pp_qcancel != NULL &&
	    atomic_load(pp->pp_qcancel)) {
		pp->pp_qcdue = 1;
		persist_write(r);
		return;
	}
	/* None taken while the current task is being stopped. */
	if (!pp->pp_pipe || pp->pp_qseq != 0 || r->r_ctx->next == NULL ||
	    r->r_cancel ||
	    r->r_wdead || r->r_woff < EXT_FRAME_HEAD + r->r_plen)
		return;
	memset(&np, 0, sizeof(np));
	if (!r->r_ctx->next(r->r_ctx->arg, &np, &qcancel))
		return;
	/* Too long for a frame: its own run fails it. */
	if (np.payload_len > UINT32_MAX)
		return;
	pp->pp_qseq = ++pp->pp_seq;
	pp->pp_qhead[0] = 'T';
	be32_put(pp->pp_qhead + 1, (uint32_t)np.payload_len);
	pp->pp_qpayload = np.payload;
	pp->pp_qlen = np.payload_len;
	pp->pp_qwoff = 0;
	pp->pp_qcancel = qcancel;
	pp->pp_qcdue = 0;
	pp->pp_qcoff = 0;
	pp->pp_qchead[0] = 'C';
	be32_put(pp->pp_qchead + 1, 4);
	be32_put(pp->pp_qchead + EXT_FRAME_HEAD, pp->pp_qseq);
	persist_write(r);
}

/* Read the process's stderr into its tail, as much as is there. */
static void
persist_read_err(struct persist_proc *pp)
{
	char	 buf[4096];
	size_t	 got = 0;
	ssize_t	 n;

	while (got < PERSIST_READ_MAX) {
		n = read(pp->pp_child.c_err, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0) {
				close(pp->pp_child.c_err);
				pp->pp_child.c_err = -1;
			}
			return;
		}
		ext_tail_add(&pp->pp_tail, buf, (size_t)n);
		got += (size_t)n;
	}
}

/*
 * A frame's head is complete: check its type and length and get ready for
 * its body.  -1 (r_end set) when it breaks the framing.
 */
static int
persist_head(struct persist_run *r)
{
	uint64_t	 fmax;

	r->r_type = r->r_fhead[0];
	r->r_flen = (uint32_t)r->r_fhead[1] << 24 |
	    (uint32_t)r->r_fhead[2] << 16 | (uint32_t)r->r_fhead[3] << 8 |
	    (uint32_t)r->r_fhead[4];
	r->r_fgot = 0;
	switch (r->r_type) {
	case 'P':	/* pipelining offered; both carry nothing */
	case 'H':	/* the queued task started */
		if (r->r_flen == 0)
			return (0);
		snprintf(r->r_error, sizeof(r->r_error), "persistent "
		    "process sent %s '%c' frame of %u bytes",
		    r->r_type == 'H' ? "an" : "a", r->r_type, r->r_flen);
		break;
	case 'R':
		if (r->r_flen > r->r_max) {
			snprintf(r->r_error, sizeof(r->r_error), "output of "
			    "%u bytes is over max_output (%llu)", r->r_flen,
			    (unsigned long long)r->r_max);
			break;
		}
		if (r->r_flen == 0)
			return (0);
		if ((r->r_body = task_output_alloc(r->r_res, r->r_flen)) ==
		    NULL) {
			snprintf(r->r_error, sizeof(r->r_error),
			    "out of memory");
			break;
		}
		return (0);
	case 'F':
	case 'U':
		fmax = r->r_max > PERSIST_FAIL_MAX ? r->r_max :
		    PERSIST_FAIL_MAX;
		if (r->r_flen <= fmax)
			return (0);
		snprintf(r->r_error, sizeof(r->r_error), "persistent "
		    "process sent an '%c' frame of %u bytes", r->r_type,
		    r->r_flen);
		break;
	default:
		snprintf(r->r_error, sizeof(r->r_error), "persistent "
		    "process sent a frame of unknown type 0x%02x",
		    (unsigned)r->r_type);
		break;
	}
	r->r_end = PERSIST_BROKEN;
	return (-1);
}

/*
 * Take n bytes from the process's stdout through the frame parser; stop
 * at the end of the task's answer.  Returns the bytes used.
 */
static size_t
persist_feed(struct persist_run *r, const uint8_t *p, size_t n)
{
	size_t	 used = 0, want;

	while (used < n && r->r_end == PERSIST_RUNNING) {
		if (r->r_fheadlen < EXT_FRAME_HEAD) {
			want = EXT_FRAME_HEAD - r->r_fheadlen;
			if (want > n - used)
				want = n - used;
			memcpy(r->r_fhead + r->r_fheadlen, p + used, want);
			r->r_fheadlen += want;
			used += want;
			if (r->r_fheadlen < EXT_FRAME_HEAD ||
			    persist_head(r) == -1)
				continue;
		} else {
			want = r->r_flen - r->r_fgot;
			if (want > n - used)
				want = n - used;
			if (r->r_type == 'R')
				memcpy(r->r_body + r->r_fgot, p + used, want);
			else if (r->r_fgot < sizeof(r->r_msg))
				memcpy(r->r_msg + r->r_fgot, p + used,
				    r->r_fgot + want > sizeof(r->r_msg) ?
				    sizeof(r->r_msg) - r->r_fgot : want);
			r->r_fgot += (uint32_t)want;
			used += want;
		}
		if (r->r_fgot == r->r_flen)
			persist_frame(r);
	}
	return (used);
}

/* A whole frame has been read: a half-way report or the answer. */
static void
persist_frame(struct persist_run *r)
{
	r->r_fheadlen = 0;
	if (r->r_type == 'P')
		r->r_pp->pp_pipe = 1;
	else if (r->r_type == 'H') {
		if (!r->r_half && r->r_ctx->progress != NULL)
			r->r_ctx->progress(r->r_ctx->arg, 2);
		r->r_half = 1;
	} else
		r->r_end = r->r_type == 'R' ? PERSIST_OK : r->r_type == 'U' ?
		    PERSIST_UNAVAILABLE : PERSIST_FAILED;
}

/*
 * Read the process's stdout, as much as is there, until the answer is
 * complete.  A long 'R' body is read straight into the output.  Bytes
 * after the answer make the process unfit; end of file ends the task.
 */
static void
persist_read(struct persist_run *r)
{
	struct ext_child	*c = &r->r_pp->pp_child;
	uint8_t			 buf[PERSIST_CARRY];
	size_t			 used, got = 0;
	ssize_t			 n;

	while (r->r_end == PERSIST_RUNNING) {
		/* Not for ever in here: the loop watches cancel too. */
		if (got >= PERSIST_READ_MAX && (r->r_fheadlen <
		    EXT_FRAME_HEAD || r->r_type != 'R'))
			return;
		if (r->r_fheadlen == EXT_FRAME_HEAD && r->r_type == 'R' &&
		    r->r_flen - r->r_fgot >= PERSIST_DIRECT) {
			n = read(c->c_out, r->r_body + r->r_fgot,
			    r->r_flen - r->r_fgot);
			if (n > 0) {
				r->r_fgot += (uint32_t)n;
				if (r->r_fgot == r->r_flen)
					persist_frame(r);
				continue;
			}
		} else {
			n = read(c->c_out, buf, sizeof(buf));
			if (n > 0) {
				got += (size_t)n;
				used = persist_feed(r, buf, (size_t)n);
				if (used < (size_t)n && r->r_pp->pp_qseq != 0) {
					/* The queued task's, for its run. */
					memcpy(r->r_pp->pp_carry, buf + used,
					    (size_t)n - used);
					r->r_pp->pp_ncarry = (size_t)n - used;
				} else if (used < (size_t)n)
					r->r_pp->pp_unfit = 1;
				continue;
			}
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		r->r_end = PERSIST_DEAD;
	}
}

/*
 * The process died (or closed its stdout) during the task: say how in
 * err, with its stderr, after it is stopped.
 */
static void
persist_dead(struct persist_run *r, char *err, size_t errlen)
{
	struct persist_proc	*pp = r->r_pp;
	struct ext_child	*c = &pp->pp_child;
	struct pollfd		 pfd;
	char			 sig[16];
	int			 status, exited;

	/* End of file comes a moment before the exit. */
	if (c->c_pidfd != -1) {
		pfd.fd = c->c_pidfd;
		pfd.events = POLLIN;
		while (poll(&pfd, 1, PERSIST_EXIT_WAIT) == -1 &&
		    errno == EINTR)
			;
	}
	exited = ext_child_exited(c);
	ext_kill_group(c->c_pid, SIGKILL);
	if (c->c_err != -1)
		persist_read_err(pp);
	status = ext_child_stop(c);
	if (!exited || status == -1)
		snprintf(err, errlen, "persistent process closed its "
		    "standard output during the task");
	else if (WIFEXITED(status))
		snprintf(err, errlen, "persistent process exited (status %d) "
		    "during the task", WEXITSTATUS(status));
	else {
		ext_signame(WTERMSIG(status), sig, sizeof(sig));
		snprintf(err, errlen, "persistent process exited (signal "
		    "%d%s%s) during the task", WTERMSIG(status),
		    sig[0] != '\0' ? ", " : "", sig);
	}
	ext_error_tail(err, errlen, &pp->pp_tail);
	persist_stop(pp);
}

/*
 * Run one task on slot's process, starting it first if need be.  See the
 * top of the file and ext.h for what ends a task and what ends a process.
 */
int
ext_persist_run(struct ext_kind *k, unsigned slot,
    const struct task_params *p, const struct task_ctx *ctx,
    uint64_t max_output, struct task_result *res)
{
	struct persist		*ps = k->k_priv;
	struct persist_proc	*pp;
	struct ext_child	*c;
	struct persist_run	 r;
	struct pollfd		 pfd[4];
	enum { RUN, CANCEL, TIMEOUT } why = RUN;
	uint64_t		 now, deadline = 0, kill_at = 0, wait;
	uint64_t		 busy_at = 0;
	size_t			 len;
	int			 nfds, i, exited = 0, told = 0, queued;
	int			 spawned = 0;

	if (ps == NULL || slot >= ps->ps_n) {
		snprintf(res->error, sizeof(res->error), "%s: no slot %u",
		    k->k_name, slot);
		return (res->status = TASK_FAILED);
	}
	if (p->payload_len > UINT32_MAX) {
		snprintf(res->error, sizeof(res->error), "payload of %zu "
		    "bytes is over a frame's 4 GB", p->payload_len);
		return (res->status = TASK_BAD_PARAMS);
	}
	pp = &ps->ps_proc[slot];
	c = &pp->pp_child;
	/*
	 * Its frame is in the pipe already (queued by the run before), unless
	 * the process died since; a process with a queued frame that is not
	 * this task's is of no use.
	 */
	queued = ctx->queued && c->c_pid > 0 && pp->pp_qseq != 0;
	if (c->c_pid > 0 && (pp->pp_unfit || (!queued && (pp->pp_qseq != 0 ||
	    pp->pp_ncarry > 0 || persist_idle(pp) == -1))))
		persist_stop(pp);
	queued = queued && c->c_pid > 0;
	/* A copy that lost before it started costs nothing. */
	if (!queued && ctx->cancel != NULL && atomic_load(ctx->cancel)) {
		snprintf(res->error, sizeof(res->error), "cancelled");
		return (res->status = TASK_CANCELLED);
	}
	if (c->c_pid <= 0) {
		/* Starting a process takes long: the host need not wait. */
		persist_launched(ctx);
		told = spawned = 1;
		if (ext_spawn(k, slot, c, res->error, sizeof(res->error)) == -1)
			return (res->status = TASK_FAILED);
	}

	memset(&r, 0, sizeof(r));
	r.r_pp = pp;
	r.r_ctx = ctx;
	r.r_res = res;
	r.r_max = max_output;
	r.r_payload = p->payload;
	r.r_plen = p->payload_len;
	r.r_thead[0] = 'T';
	be32_put(r.r_thead + 1, (uint32_t)p->payload_len);
	if (queued) {
		/* Its frame, or the part of it written, from the queue. */
		r.r_seq = pp->pp_qseq;
		r.r_woff = pp->pp_qwoff;
		if (pp->pp_qcdue) {
			/* Its cancel, sent (or begun) already. */
			memcpy(r.r_chead, pp->pp_qchead, sizeof(r.r_chead));
			r.r_clen = sizeof(r.r_chead);
			r.r_coff = pp->pp_qcoff;
		}
		pp->pp_qcancel = NULL;
		pp->pp_qcdue = 0;
		pp->pp_qcoff = 0;
		pp->pp_qseq = 0;
		pp->pp_qpayload = NULL;
		pp->pp_qlen = pp->pp_qwoff = 0;
		told = 1;
		persist_launched(ctx);
	} else
		r.r_seq = ++pp->pp_seq;
	now = ext_now_ms();
	if (k->k_timeout > 0)
		deadline = now + k->k_timeout;
	/* What it sent after the last answer: the start of this task's. */
	if (queued && pp->pp_ncarry > 0) {
		len = pp->pp_ncarry;
		pp->pp_ncarry = 0;
		if (persist_feed(&r, pp->pp_carry, len) < len)
			pp->pp_unfit = 1;	/* more after this answer */
	}
	persist_write(&r);
	/*
	 * The frame is in the pipe (or as much as it takes): only now may the
	 * host wake its other threads (the result of the task before, this
	 * one's start), so that they do not take the CPU the process is
	 * woken on first.
	 */
	if (!told)
		persist_launched(ctx);
	/*
	 * The host hears that the task is busy TASK_BUSY_MS from now (1 ms
	 * more on this clock of whole ms), unless its answer comes first:
	 * at once if a process had to be started.
	 */
	if (ctx->busy != NULL) {
		if (spawned)
			ctx->busy(ctx->arg);
		else
			busy_at = now + TASK_BUSY_MS + 1;
	}

	while (r.r_end == PERSIST_RUNNING) {
		if (busy_at != 0 && now >= busy_at) {
			busy_at = 0;
			ctx->busy(ctx->arg);
		}
		if (why == RUN) {
			if (ctx->cancel != NULL && atomic_load(ctx->cancel))
				why = CANCEL;
			else if (deadline != 0 && now >= deadline)
				why = TIMEOUT;
			if (why != RUN) {
				/* Pipelined, the cancel names its task. */
				r.r_chead[0] = 'C';
				r.r_clen = EXT_FRAME_HEAD;
				if (pp->pp_pipe) {
					be32_put(r.r_chead + 1, 4);
					be32_put(r.r_chead + EXT_FRAME_HEAD,
					    r.r_seq);
					r.r_clen += 4;
				}
				r.r_cancel = 1;
				kill_at = now + k->k_grace;
				persist_write(&r);
			}
		}
		persist_queue(&r);
		if (why != RUN && now >= kill_at)
			break;

		nfds = 0;
		if (c->c_pidfd != -1)
			pfd[nfds++] = (struct pollfd){ c->c_pidfd, POLLIN, 0 };
		if (persist_pending(&r))
			pfd[nfds++] = (struct pollfd){ c->c_in, POLLOUT, 0 };
		pfd[nfds++] = (struct pollfd){ c->c_out, POLLIN, 0 };
		if (c->c_err != -1)
			pfd[nfds++] = (struct pollfd){ c->c_err, POLLIN, 0 };
		wait = UINT64_MAX;
		if (why == RUN && ctx->cancel != NULL)
			wait = EXT_POLL_MS;
		if (why == RUN && deadline != 0 && deadline - now < wait)
			wait = deadline - now;
		if (why != RUN && kill_at - now < wait)
			wait = kill_at - now;
		if (busy_at != 0 && busy_at - now < wait)
			wait = busy_at - now;
		if (c->c_pidfd == -1 && wait > 1)
			wait = 1;	/* no pidfd: waitid every ms */

		if (poll(pfd, (nfds_t)nfds, wait == UINT64_MAX ? -1 :
		    wait > EXT_POLL_MAX ? EXT_POLL_MAX : (int)wait) == -1 &&
		    errno != EINTR) {
			r.r_end = PERSIST_DEAD;
			break;
		}
		for (i = 0; i < nfds; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == c->c_pidfd)
				exited = 1;
			else if (pfd[i].fd == c->c_in)
				persist_write(&r);
			else if (pfd[i].fd == c->c_out)
				persist_read(&r);
			else if (pfd[i].fd == c->c_err)
				persist_read_err(pp);
		}
		if (c->c_pidfd == -1)
			exited = ext_child_exited(c);
		/* Its answer may have come just before it exited. */
		if (exited && r.r_end == PERSIST_RUNNING) {
			persist_read(&r);
			if (r.r_end == PERSIST_RUNNING)
				r.r_end = PERSIST_DEAD;
		}
		now = ext_now_ms();
	}
	/* A queued task cancelled while its answer was on the way. */
	if (why == RUN && queued && r.r_end != PERSIST_RUNNING &&
	    ctx->cancel != NULL && atomic_load(ctx->cancel))
		why = CANCEL;
	/* Dead, or its stdin holds part of a frame: a new one next time. */
	if (exited || r.r_woff < EXT_FRAME_HEAD + r.r_plen)
		pp->pp_unfit = 1;

	switch (r.r_end) {
	case PERSIST_RUNNING:
		/* Cancel or timeout, and no answer within k_grace. */
		if (c->c_err != -1)
			persist_read_err(pp);
		ext_error_timeout(res->error, sizeof(res->error),
		    k->k_timeout);
		ext_error_tail(res->error, sizeof(res->error), &pp->pp_tail);
		persist_stop(pp);
		break;
	case PERSIST_OK:
		if (why != RUN)
			break;
		if (pp->pp_unfit && exited)
			persist_stop(pp);	/* reaped now, not later */
		return (res->status = TASK_OK);
	case PERSIST_FAILED:
	case PERSIST_UNAVAILABLE:
		if (why == TIMEOUT)
			ext_error_timeout(res->error, sizeof(res->error),
			    k->k_timeout);
		else {
			len = r.r_flen < sizeof(r.r_msg) ? r.r_flen :
			    sizeof(r.r_msg);
			while (len > 0 && (r.r_msg[len - 1] == '\n' ||
			    r.r_msg[len - 1] == '\r' ||
			    r.r_msg[len - 1] == ' '))
				len--;
			ext_printable(res->error, sizeof(res->error),
			    r.r_msg, len);
			if (res->error[0] == '\0')
				snprintf(res->error, sizeof(res->error),
				    "failed");
		}
		break;
	case PERSIST_BROKEN:
		if (c->c_err != -1)
			persist_read_err(pp);
		snprintf(res->error, sizeof(res->error), "%s", r.r_error);
		ext_error_tail(res->error, sizeof(res->error), &pp->pp_tail);
		persist_stop(pp);
		break;
	case PERSIST_DEAD:
		persist_dead(&r, res->error, sizeof(res->error));
		break;
	}
	if (why == TIMEOUT && r.r_end == PERSIST_OK)
		ext_error_timeout(res->error, sizeof(res->error),
		    k->k_timeout);
	if (pp->pp_unfit && exited)
		persist_stop(pp);
	task_result_free(res);
	if (why == CANCEL) {
		snprintf(res->error, sizeof(res->error), "cancelled");
		return (res->status = TASK_CANCELLED);
	}
	if (r.r_end == PERSIST_UNAVAILABLE && why == RUN)
		return (res->status = TASK_UNAVAILABLE);
	return (res->status = TASK_FAILED);
}
