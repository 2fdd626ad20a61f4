/*
 * A persistent fitness server for R3Q in C (libc only), the twin of
 * persistent.py: workerd starts one per execution thread and sends it task
 * after task as frames on its stdin (workerd.conf(5), "Persistent kinds").
 * The payload is R3Q's es payload (u32 lu, u32 flags, f64 work_ms, then
 * f64 x[], all little-endian); the answer is Ridge of x as one
 * little-endian f64, bit for bit what the built-in ridge-lu gives.
 * work_ms is slept (flags and lu are ignored), watching for a cancel
 * frame.  In workerd.conf:
 *
 *	exec ridge-c = persistent /usr/local/libexec/r3q/persistent
 *
 * A frame is a type byte, a 4-byte big-endian length, then that many
 * bytes.  stdout carries frames only: log to stderr.
 *
 * cc -O2 -o persistent persistent.c
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void	 get(void *, size_t);
static void	 send(char, const void *, uint32_t);
static double	 now_ms(void);
static int	 work(double);
static double	 f64_le(const uint8_t *);

/* Read exactly n bytes of stdin; end of file means workerd is done. */
static void
get(void *buf, size_t n)
{
	uint8_t	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		if ((r = read(STDIN_FILENO, p, n)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			exit(0);
		p += r;
		n -= (size_t)r;
	}
}

/* Send one frame: type, big-endian length, body. */
static void
send(char type, const void *body, uint32_t n)
{
	uint8_t	 buf[5 + 64];
	size_t	 len = 5 + n, off = 0;
	ssize_t	 w;

	if (n > sizeof(buf) - 5)
		exit(1);		/* our answers are short */
	buf[0] = (uint8_t)type;
	buf[1] = (uint8_t)(n >> 24);
	buf[2] = (uint8_t)(n >> 16);
	buf[3] = (uint8_t)(n >> 8);
	buf[4] = (uint8_t)n;
	if (n > 0)		/* an 'H' has no body (and body is NULL) */
		memcpy(buf + 5, body, n);
	while (off < len) {
		if ((w = write(STDOUT_FILENO, buf + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			exit(1);
		}
		off += (size_t)w;
	}
}

/* The monotonic clock in milliseconds. */
static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
}

/* Sleep ms milliseconds, 'H' half-way; 0 if a 'C' frame came meanwhile. */
static int
work(double ms)
{
	struct pollfd	 pfd = { STDIN_FILENO, POLLIN, 0 };
	uint8_t		 head[5];
	double		 end = now_ms() + ms, left;
	int		 half = !(ms > 0);	/* no work, nothing to report */

	while ((left = end - now_ms()) > 0) {
		if (!half && left <= ms / 2) {
			send('H', NULL, 0);
			half = 1;
		}
		if (!half)
			left -= ms / 2;
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left + 1) == 1) {
			get(head, sizeof(head));	/* only a 'C' now */
			return (0);
		}
	}
	if (!half)
		send('H', NULL, 0);
	return (1);
}

/* A little-endian double. */
static double
f64_le(const uint8_t *p)
{
	uint64_t	 u = 0;
	double		 d;
	int		 i;

	for (i = 7; i >= 0; i--)
		u = u << 8 | p[i];
	memcpy(&d, &u, sizeof(d));
	return (d);
}

int
main(void)
{
	uint8_t		 head[5], out[8], *p = NULL;
	uint32_t	 n, cap = 0, i;
	uint64_t	 u;
	double		 partial, f;
	char		 msg[64];

	for (;;) {
		get(head, sizeof(head));
		n = (uint32_t)head[1] << 24 | (uint32_t)head[2] << 16 |
		    (uint32_t)head[3] << 8 | head[4];
		if (n > cap && (p = realloc(p, cap = n)) == NULL)
			return (1);
		get(p, n);
		if (head[0] != 'T')
			continue;	/* a 'C' that came after our answer */
		if (n < 16 || (n - 16) % 8 != 0) {
			snprintf(msg, sizeof(msg), "not an es payload: %u "
			    "bytes", (unsigned)n);
			send('F', msg, (uint32_t)strlen(msg));
			continue;
		}
		if (!work(f64_le(p + 8))) {
			send('F', "cancelled", 9);
			continue;
		}
		/* Ridge as task_ridge sums it: running partial sum. */
		partial = f = 0.0;
		for (i = 16; i < n; i += 8) {
			partial += f64_le(p + i);
			f += partial * partial;
		}
		memcpy(&u, &f, sizeof(u));
		for (i = 0; i < 8; i++)
			out[i] = (uint8_t)(u >> (8 * i));
		send('R', out, sizeof(out));
	}
}
