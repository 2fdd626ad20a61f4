/* Small helpers both daemons and the ctl share. */
#ifndef R3Q_UTIL_H
#define R3Q_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#define NS_PER_MS	1000000ULL
#define NS_PER_SEC	1000000000ULL

uint64_t	 mono_ns(void);
uint64_t	 wall_ns(void);
struct event_base;
struct event_base *evbase_new(void);
const char	*sockaddr_str(const struct sockaddr *, char *, size_t);
void		 sock_link_timeout(int, uint64_t);
int		 parse_u64(const char *, uint64_t, uint64_t, uint64_t *);
void		*xcalloc(size_t, size_t);
void		*xreallocarray(void *, size_t, size_t);
char		*xstrdup(const char *);
void		 str_setf(char **, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
#define STR_OR_EMPTY(s)	((s) != NULL ? (s) : "")
char		*str_vis(char *, size_t, const char *);

#endif /* R3Q_UTIL_H */
