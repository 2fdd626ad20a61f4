/*
 * The exec runner: one process per task (workerd.conf(5), "TASK KINDS").
 * The program gets the payload on its standard input, which is closed
 * after it; its standard output, up to max_output bytes, is the task's
 * output when it exits with status 0.  Its stderr is kept for error
 * messages (the last EXT_STDERR_TAIL bytes) and scanned for a line
 * "r3q: half", the half-way report.  A cancelled or timed-out task's
 * process group gets SIGTERM, then SIGKILL k_grace ms later.
 *
 * Writing the payload, reading both outputs and watching the process
 * (its pidfd), the cancel flag and the clock all happen in one poll loop
 * on non-blocking descriptors: a program that writes before it has read
 * all its input, or never reads it, cannot deadlock us.
 */
#include "config.h"

#include <sys/types.h>
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

#define EXEC_HALF	"r3q: half"	/* a whole line of stderr */
#define EXEC_HALF_LEN	(sizeof(EXEC_HALF) - 1)
#define EXEC_OUT_FIRST	4096		/* first room for stdout */
#define EXEC_DRAIN_MAX	(1024 * 1024)	/* stderr read after the exit */
#define EXEC_READ_MAX	(256 * 1024)	/* stderr read a wake-up, so that
					   a flood cannot starve the loop */

/* Why the loop stopped waiting for the program on its own. */
enum exec_why {
	EXEC_RUN,		/* it was not stopped */
	EXEC_CANCEL,
	EXEC_TIMEOUT,
	EXEC_OVER,		/* stdout over max_output */
	EXEC_NOMEM		/* no room for stdout */
};

/* One task's process and what has come out of it; on the stack. */
struct exec_run {
	struct ext_child	 x_child;
	struct ext_tail		 x_tail;
	const struct task_ctx	*x_ctx;
	const uint8_t		*x_in;		/* the payload */
	size_t			 x_inlen;
	size_t			 x_inoff;	/* written so far */
	uint8_t			*x_out;		/* stdout, malloc'd */
	size_t			 x_outlen;
	size_t			 x_outcap;
	uint64_t		 x_max;		/* max_output */
	char			 x_line[EXEC_HALF_LEN];
	size_t			 x_linelen;	/* held in x_line */
	int			 x_hold;	/* this stderr line may still
						   be "r3q: half" */
	int			 x_half;	/* reported */
	int			 x_nomem;	/* realloc failed */
};

static void	 exec_write(struct exec_run *);
static int	 exec_read_out(struct exec_run *);
static void	 exec_read_err(struct exec_run *, size_t);
static void	 exec_stderr(struct exec_run *, const char *, size_t);
static void	 exec_close(int *);

/* Close a descriptor of ours and mark it closed. */
static void
exec_close(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/*
 * Write as much of the payload as the pipe takes; once it is all written,
 * or the program will not read any more (EPIPE: it exited or closed its
 * stdin), close its stdin.
 */
static void
exec_write(struct exec_run *x)
{
	ssize_t	 n;

	while (x->x_inoff < x->x_inlen) {
		n = write(x->x_child.c_in, x->x_in + x->x_inoff,
		    x->x_inlen - x->x_inoff);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break;
		}
		x->x_inoff += (size_t)n;
	}
	exec_close(&x->x_child.c_in);
}

/*
 * Read what the program wrote to stdout.  -1 when it is over max_output
 * (the room grows to max_output + 1 bytes at most, so one byte too many is
 * enough to know).
 */
static int
exec_read_out(struct exec_run *x)
{
	uint8_t	*p;
	size_t	 cap, limit;
	ssize_t	 n;

	limit = x->x_max < SIZE_MAX / 2 ? (size_t)x->x_max + 1 : SIZE_MAX / 2;
	for (;;) {
		if (x->x_outlen == x->x_outcap) {
			if (x->x_outcap >= limit)
				return (-1);
			cap = x->x_outcap == 0 ? EXEC_OUT_FIRST :
			    x->x_outcap * 2;
			if (cap > limit)
				cap = limit;
			if ((p = realloc(x->x_out, cap)) == NULL) {
				x->x_nomem = 1;
				return (-1);
			}
			x->x_out = p;
			x->x_outcap = cap;
		}
		n = read(x->x_child.c_out, x->x_out + x->x_outlen,
		    x->x_outcap - x->x_outlen);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return (0);
		if (n <= 0) {
			exec_close(&x->x_child.c_out);
			return (0);
		}
		x->x_outlen += (size_t)n;
		if (x->x_outlen > x->x_max)
			return (-1);
	}
}

/* Read what the program wrote to stderr, up to max bytes. */
static void
exec_read_err(struct exec_run *x, size_t max)
{
	char	 buf[4096];
	size_t	 got = 0;
	ssize_t	 n;

	while (got < max) {
		n = read(x->x_child.c_err, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			exec_close(&x->x_child.c_err);
			return;
		}
		exec_stderr(x, buf, (size_t)n);
		got += (size_t)n;
	}
}

/*
 * Feed stderr bytes to the tail, line by line: a line that is exactly
 * "r3q: half" reports the half-way point (once) and is not kept.  While a
 * line is still a prefix of it, its bytes are held back in x_line.
 */
static void
exec_stderr(struct exec_run *x, const char *p, size_t n)
{
	const char	*nl;
	size_t		 len;

	while (n > 0) {
		if (!x->x_hold) {
			/* The rest of a line that is not the report. */
			if ((nl = memchr(p, '\n', n)) == NULL) {
				ext_tail_add(&x->x_tail, p, n);
				return;
			}
			len = (size_t)(nl - p) + 1;
			ext_tail_add(&x->x_tail, p, len);
			p += len;
			n -= len;
			x->x_hold = 1;
			continue;
		}
		if (*p == '\n' && x->x_linelen == EXEC_HALF_LEN) {
			if (!x->x_half && x->x_ctx->progress != NULL)
				x->x_ctx->progress(x->x_ctx->arg, 2);
			x->x_half = 1;
			x->x_linelen = 0;
			p++;
			n--;
			continue;
		}
		if (*p != '\n' && x->x_linelen < EXEC_HALF_LEN &&
		    EXEC_HALF[x->x_linelen] == *p) {
			x->x_line[x->x_linelen++] = *p;
			p++;
			n--;
			continue;
		}
		/* Not the report after all: give the held bytes back. */
		ext_tail_add(&x->x_tail, x->x_line, x->x_linelen);
		x->x_linelen = 0;
		x->x_hold = 0;
	}
}

/*
 * Run one task as one process of k's program; see the top of the file.
 * The process is always reaped and its working directory removed before
 * this returns.
 */
int
ext_exec_run(struct ext_kind *k, unsigned slot, const struct task_params *p,
    const struct task_ctx *ctx, uint64_t max_output, struct task_result *res)
{
	struct exec_run	 x;
	struct ext_child *c = &x.x_child;
	struct pollfd	 pfd[4];
	enum exec_why	 why = EXEC_RUN;
	uint64_t	 now, deadline = 0, kill_at = 0, wait;
	char		 sig[16];
	int		 exited = 0, killed = 0, nfds, timeout, i, status;

	memset(&x, 0, sizeof(x));
	x.x_ctx = ctx;
	x.x_in = p->payload;
	x.x_inlen = p->payload_len;
	x.x_max = max_output;
	x.x_hold = 1;
	/* A copy that lost before it started costs no process. */
	if (ctx->cancel != NULL && atomic_load(ctx->cancel)) {
		snprintf(res->error, sizeof(res->error), "cancelled");
		return (res->status = TASK_CANCELLED);
	}
	if (ext_spawn(k, slot, c, res->error, sizeof(res->error)) == -1)
		return (res->status = TASK_FAILED);
	now = ext_now_ms();
	if (k->k_timeout > 0)
		deadline = now + k->k_timeout;
	exec_write(&x);

	while (!exited) {
		if (why == EXEC_RUN) {
			if (ctx->cancel != NULL && atomic_load(ctx->cancel))
				why = EXEC_CANCEL;
			else if (deadline != 0 && now >= deadline)
				why = EXEC_TIMEOUT;
			if (why != EXEC_RUN) {
				ext_kill_group(c->c_pid, SIGTERM);
				kill_at = now + k->k_grace;
				exec_close(&c->c_in);
			}
		}
		if (why != EXEC_RUN && !killed && now >= kill_at) {
			ext_kill_group(c->c_pid, SIGKILL);
			killed = 1;
		}

		nfds = 0;
		if (c->c_pidfd != -1)
			pfd[nfds++] = (struct pollfd){ c->c_pidfd, POLLIN, 0 };
		if (c->c_in != -1)
			pfd[nfds++] = (struct pollfd){ c->c_in, POLLOUT, 0 };
		if (c->c_out != -1)
			pfd[nfds++] = (struct pollfd){ c->c_out, POLLIN, 0 };
		if (c->c_err != -1)
			pfd[nfds++] = (struct pollfd){ c->c_err, POLLIN, 0 };
		wait = UINT64_MAX;
		if (why == EXEC_RUN && ctx->cancel != NULL)
			wait = EXT_POLL_MS;
		if (why == EXEC_RUN && deadline != 0 && deadline - now < wait)
			wait = deadline - now;
		if (why != EXEC_RUN && !killed && kill_at - now < wait)
			wait = kill_at - now;
		if (c->c_pidfd == -1 && wait > 1)
			wait = 1;	/* no pidfd: waitid every ms */
		timeout = wait == UINT64_MAX ? -1 : wait > EXT_POLL_MAX ?
		    EXT_POLL_MAX : (int)wait;

		if (poll(pfd, (nfds_t)nfds, timeout) == -1 && errno != EINTR) {
			/* Cannot watch it: kill it (the error says SIGKILL). */
			exited = 1;
			break;
		}
		for (i = 0; i < nfds; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == c->c_pidfd)
				exited = 1;
			else if (pfd[i].fd == c->c_in)
				exec_write(&x);
			else if (pfd[i].fd == c->c_out) {
				if (exec_read_out(&x) == -1) {
					if (why == EXEC_RUN)
						why = x.x_nomem ? EXEC_NOMEM :
						    EXEC_OVER;
					ext_kill_group(c->c_pid, SIGKILL);
					killed = 1;
					exec_close(&c->c_out);
				}
			} else if (pfd[i].fd == c->c_err)
				exec_read_err(&x, EXEC_READ_MAX);
		}
		if (c->c_pidfd == -1)
			exited = ext_child_exited(c);
		now = ext_now_ms();
	}

	/*
	 * The program has exited (or could not be watched).  Kill its process
	 * group anyway, before the leader is reaped: a background grandchild
	 * must not outlive the task, and until the zombie leader is reaped
	 * its number is still this group's and nobody else's.  Then take what
	 * is left in the pipes: the output was all written before the exit.
	 */
	ext_kill_group(c->c_pid, SIGKILL);
	if (c->c_out != -1 && why == EXEC_RUN && exec_read_out(&x) == -1)
		why = x.x_nomem ? EXEC_NOMEM : EXEC_OVER;
	if (c->c_err != -1)
		exec_read_err(&x, EXEC_DRAIN_MAX);
	if (x.x_hold && x.x_linelen > 0)
		ext_tail_add(&x.x_tail, x.x_line, x.x_linelen);
	status = ext_child_stop(c);

	switch (why) {
	case EXEC_CANCEL:
		snprintf(res->error, sizeof(res->error), "cancelled");
		res->status = TASK_CANCELLED;
		goto out;
	case EXEC_TIMEOUT:
		ext_error_timeout(res->error, sizeof(res->error),
		    k->k_timeout);
		break;
	case EXEC_OVER:
		snprintf(res->error, sizeof(res->error), "output over "
		    "max_output (%llu bytes)", (unsigned long long)max_output);
		break;
	case EXEC_NOMEM:
		snprintf(res->error, sizeof(res->error), "out of memory for "
		    "%zu bytes of output", x.x_outcap * 2);
		break;
	case EXEC_RUN:
		if (status == -1)
			snprintf(res->error, sizeof(res->error), "lost the "
			    "process");
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			res->status = TASK_OK;
			if (x.x_outlen <= TASK_OUT_INLINE) {
				if (x.x_outlen > 0)
					memcpy(task_output_alloc(res,
					    x.x_outlen), x.x_out, x.x_outlen);
			} else {
				res->out_ext = x.x_out;
				res->out_owned = 1;
				res->out_len = x.x_outlen;
				x.x_out = NULL;
			}
			goto out;
		} else if (WIFEXITED(status))
			snprintf(res->error, sizeof(res->error),
			    "exit status %d", WEXITSTATUS(status));
		else if (WIFSIGNALED(status)) {
			ext_signame(WTERMSIG(status), sig, sizeof(sig));
			snprintf(res->error, sizeof(res->error),
			    "killed by signal %d%s%s%s", WTERMSIG(status),
			    sig[0] != '\0' ? " (" : "", sig,
			    sig[0] != '\0' ? ")" : "");
		} else
			snprintf(res->error, sizeof(res->error),
			    "wait status %#x", (unsigned)status);
		break;
	}
	ext_error_tail(res->error, sizeof(res->error), &x.x_tail);
	res->status = TASK_FAILED;
out:
	free(x.x_out);
	return (res->status);
}
