#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/un.h>

#include <event2/event.h>

#include "log.h"
#include "util.h"

/* Monotonic time in nanoseconds: the clock the core is driven by. */
uint64_t
mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec);
}

/*
 * A daemon's event base, its timers on CLOCK_MONOTONIC like mono_ns().
 * libevent's default is CLOCK_MONOTONIC_COARSE, which moves only at the
 * kernel's tick (4 ms on a 250 Hz kernel): a timer found due when the
 * loop wakes for other input could fire up to a tick early, and one
 * waited for alone up to a tick late.  A 10 ms timer beside a 700 us
 * ticker fired after 8.1 ms at the shortest (test_util); workerd's
 * peer_delay was measured under itself (8.6 ms of 10, peer-netns.sh).
 * NULL on failure.
 */
struct event_base *
evbase_new(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		return (NULL);
	if (event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1) {
		event_config_free(cfg);
		return (NULL);
	}
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return (base);
}

/* Wall-clock time in nanoseconds since the Unix epoch. */
uint64_t
wall_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec);
}

/*
 * link_timeout (a broken hop fails what used it, as in doc/algorithms.md
 * §5): a
 * connection whose peer stops acknowledging (its host vanished, packets
 * dropped, no reset) is closed by the kernel after ms of silence -- data
 * unacknowledged that long (TCP_USER_TIMEOUT), or no answer to keepalive
 * probes sent every third of it once idle -- rather than at
 * heartbeat_timeout or the kernel's 15 minutes.  0: the kernel's
 * defaults.  Best effort: a system without these options keeps them.
 */
void
sock_link_timeout(int fd, uint64_t ms)
{
	int	 one = 1, s, cnt = 3;
	unsigned int ut;

	if (ms == 0 || fd < 0)
		return;
	s = (int)(ms / 3000);
	if (s < 1)
		s = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
#ifdef TCP_KEEPIDLE
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &s, sizeof(s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &s, sizeof(s));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
#endif
#ifdef TCP_USER_TIMEOUT
	ut = ms > UINT_MAX ? UINT_MAX : (unsigned int)ms;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
#else
	(void)ut;
#endif
	(void)cnt;
}

/* "addr:port", "[v6]:port" or "local" for a socket address. */
const char *
sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char	 a[INET6_ADDRSTRLEN];

	switch (sa->sa_family) {
	case AF_INET:
		inet_ntop(AF_INET, &((const struct sockaddr_in *)
		    (const void *)sa)->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(((const struct
		    sockaddr_in *)(const void *)sa)->sin_port));
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)
		    (const void *)sa)->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(((const struct
		    sockaddr_in6 *)(const void *)sa)->sin6_port));
		break;
	default:
		snprintf(buf, len, "local");
		break;
	}
	return (buf);
}

/* A decimal number within [min, max]; -1 on junk or out of range. */
int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long	 v;
	char			*end;

	if (!isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || errno != 0 || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n, size)) == NULL)
		fatal("calloc");
	return (p);
}

/* Resize p to n elements of size, checking the product; fatal if short. */
void *
xreallocarray(void *p, size_t n, size_t size)
{
	if ((p = reallocarray(p, n, size)) == NULL)
		fatal("reallocarray");
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return (p);
}

/*
 * Set *p to a new string from fmt (the old one freed): text a struct holds
 * only when there is some (NULL: none), not in an array of its longest.
 */
void
str_setf(char **p, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	free(*p);
	*p = s;
}

/*
 * Copy src to dst (len bytes, at least 1) with control characters made
 * visible (\n, \r, \t, \xHH), truncating on a character boundary: text a
 * peer supplies can then neither start a line of its own in a log nor
 * drive a terminal.  Returns dst.
 */
char *
str_vis(char *dst, size_t len, const char *src)
{
	const unsigned char	*p = (const unsigned char *)src;
	char			 esc[5];
	size_t			 o = 0, n;

	for (; *p != '\0'; p++) {
		if (*p == '\n')
			strcpy(esc, "\\n");
		else if (*p == '\r')
			strcpy(esc, "\\r");
		else if (*p == '\t')
			strcpy(esc, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		else {
			esc[0] = (char)*p;
			esc[1] = '\0';
		}
		n = strlen(esc);
		if (o + n >= len)
			break;
		memcpy(dst + o, esc, n);
		o += n;
	}
	dst[o] = '\0';
	return (dst);
}
