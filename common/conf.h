/*
 * Flat "key = value" configuration files, shared by both daemons.  Each
 * daemon describes its keys in a table of struct conf_key; the parser fills
 * a plain config struct (what the file says), kept apart from the runtime
 * objects built from it.
 */
#ifndef R3Q_CONF_H
#define R3Q_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_EX_CONFIG	78	/* sysexits.h EX_CONFIG */
#define CONF_STRMAX	1024

enum conf_type {
	CONF_STRING,		/* char[CONF_STRMAX] */
	CONF_UINT,		/* unsigned, within [min, max] */
	CONF_DURATION,		/* uint64_t milliseconds: 500ms, 10s, 2m, 1h */
	CONF_SIZE,		/* uint64_t bytes: 512, 64K, 16M, 1G */
	CONF_HOSTPORT,		/* char[CONF_STRMAX] holding host:port */
	CONF_DOUBLE,		/* double within [min, max] (whole bounds) */
	CONF_BOOL		/* int, 0 or 1, written no or yes */
};

struct conf_key {
	const char	*name;
	enum conf_type	 type;
	size_t		 off;		/* offsetof into the config struct */
	uint64_t	 min;
	uint64_t	 max;
	int		(*check)(const char *, char *, size_t);
};

typedef int (*conf_extra_fn)(void *, const char *, const char *, int,
	    char *, size_t);

int	conf_load(const char *, const struct conf_key *, void *, int,
	    char *, size_t);
int	conf_load_ext(const char *, const struct conf_key *, void *, int,
	    conf_extra_fn, void *, char *, size_t);
int	conf_set(const struct conf_key *, void *, const char *, const char *,
	    char *, size_t);
void	conf_print(FILE *, const struct conf_key *, const void *);
void	conf_env_name(const char *, const char *, char *, size_t);
int	conf_env(const struct conf_key *, void *, const char *,
	    char *(*)(const char *), char *, size_t);
int	conf_parse_duration(const char *, uint64_t *);
int	conf_parse_duration_us(const char *, uint64_t *);
void	conf_format_duration(char *, size_t, uint64_t);
int	conf_parse_size(const char *, uint64_t *);
int	conf_split_hostport(const char *, char *, size_t, char *, size_t,
	    const char *);

#endif /* R3Q_CONF_H */
