#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* Parse a number with an optional unit from a table; -1 on junk. */
static int
conf_parse_units(const char *s, uint64_t *out, const char *const *units,
    const uint64_t *mult)
{
	char			*end;
	unsigned long long	 v;
	size_t			 i;

	if (*s == '\0' || !isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return (-1);
	for (i = 0; units[i] != NULL; i++)
		if (strcmp(end, units[i]) == 0)
			break;
	if (units[i] == NULL)
		return (-1);
	if (mult[i] != 0 && v > UINT64_MAX / mult[i])
		return (-1);
	*out = v * mult[i];
	return (0);
}

/*
 * A duration in milliseconds: "250ms", "10s", "2m", "1h", "7d"; bare =
 * seconds.
 */
int
conf_parse_duration(const char *s, uint64_t *ms)
{
	static const char *const units[] = { "ms", "s", "", "m", "h", "d",
	    NULL };
	static const uint64_t mult[] = { 1, 1000, 1000, 60000, 3600000,
	    86400000 };

	return (conf_parse_units(s, ms, units, mult));
}

/*
 * A short duration in microseconds: "500us", "2ms", "1s"; bare =
 * seconds, as conf_parse_duration() reads it.
 */
int
conf_parse_duration_us(const char *s, uint64_t *us)
{
	static const char *const units[] = { "us", "ms", "s", "", NULL };
	static const uint64_t mult[] = { 1, 1000, 1000000, 1000000 };

	return (conf_parse_units(s, us, units, mult));
}

/*
 * A duration in the largest unit that divides it exactly ("90s", "2m",
 * "250ms", "0s"), as the parser reads it back.
 */
void
conf_format_duration(char *buf, size_t len, uint64_t ms)
{
	static const char *const units[] = { "d", "h", "m", "s" };
	static const uint64_t mult[] = { 86400000, 3600000, 60000, 1000 };
	size_t	 i;

	for (i = 0; i < 4 && ms > 0; i++)
		if (ms % mult[i] == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ms / mult[i],
			    units[i]);
			return;
		}
	snprintf(buf, len, "%" PRIu64 "%s", ms, ms > 0 ? "ms" : "s");
}

/* Print "name = duration". */
static void
conf_print_duration(FILE *out, const char *name, uint64_t ms)
{
	char	 buf[32];

	conf_format_duration(buf, sizeof(buf), ms);
	fprintf(out, "%s = %s\n", name, buf);
}

/* A size in bytes: "512", "64K", "16M", "1G". */
int
conf_parse_size(const char *s, uint64_t *bytes)
{
	static const char *const units[] = { "", "K", "M", "G", "k", NULL };
	static const uint64_t mult[] = { 1, 1ULL << 10, 1ULL << 20,
	    1ULL << 30, 1ULL << 10 };

	return (conf_parse_units(s, bytes, units, mult));
}

/*
 * Split "host:port", "[v6]:port", "*:port" or "host" (default port) into
 * its parts.  "*" becomes an empty host, meaning any address.
 */
int
conf_split_hostport(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen, const char *defport)
{
	const char	*p, *colon;
	size_t		 n;
	char		*end;
	long		 v;

	if (*s == '[') {
		if ((p = strchr(s, ']')) == NULL)
			return (-1);
		n = p - s - 1;
		colon = p[1] == ':' ? p + 1 : NULL;
		if (p[1] != '\0' && colon == NULL)
			return (-1);
		s++;
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && strchr(s, ':') != colon)
			return (-1);	/* bare IPv6 needs brackets */
		n = colon != NULL ? (size_t)(colon - s) : strlen(s);
	}
	if (n == 0 || n >= hostlen)
		return (-1);
	memcpy(host, s, n);
	host[n] = '\0';
	if (strcmp(host, "*") == 0)
		host[0] = '\0';
	if (colon == NULL) {
		if (defport == NULL)
			return (-1);
		colon = defport - 1;
	}
	errno = 0;
	v = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno || v < 0 || v > 65535)
		return (-1);
	if ((size_t)snprintf(port, portlen, "%ld", v) >= portlen)
		return (-1);
	return (0);
}

/* Find a key by name. */
static const struct conf_key *
conf_find(const struct conf_key *keys, const char *name)
{
	for (; keys->name != NULL; keys++)
		if (strcmp(keys->name, name) == 0)
			return (keys);
	return (NULL);
}

/* Set one key from its text; fills err with a message on failure. */
int
conf_set(const struct conf_key *keys, void *conf, const char *name,
    const char *value, char *err, size_t errlen)
{
	const struct conf_key	*k;
	char			*dst, *end, h[256], p[16];
	uint64_t		 v;
	unsigned long long	 u;
	double			 d;

	if ((k = conf_find(keys, name)) == NULL) {
		snprintf(err, errlen, "unknown key '%s'", name);
		return (-1);
	}
	dst = (char *)conf + k->off;
	switch (k->type) {
	case CONF_STRING:
	case CONF_HOSTPORT:
		if (strlen(value) >= CONF_STRMAX) {
			snprintf(err, errlen, "%s: value too long", name);
			return (-1);
		}
		if (k->type == CONF_HOSTPORT && conf_split_hostport(value, h,
		    sizeof(h), p, sizeof(p), NULL) == -1) {
			snprintf(err, errlen, "%s: '%s' is not host:port",
			    name, value);
			return (-1);
		}
		if (k->check != NULL && k->check(value, err, errlen) == -1)
			return (-1);
		strcpy(dst, value);
		return (0);
	case CONF_UINT:
		errno = 0;
		u = strtoull(value, &end, 10);
		if (!isdigit((unsigned char)*value) || *end != '\0' ||
		    errno != 0 || u < k->min || u > k->max) {
			snprintf(err, errlen, "%s: '%s' is not a whole number "
			    "from %" PRIu64 " to %" PRIu64, name, value,
			    k->min, k->max);
			return (-1);
		}
		*(unsigned *)(void *)dst = (unsigned)u;
		return (0);
	case CONF_DURATION:
		if (conf_parse_duration(value, &v) == -1 || v < k->min ||
		    v > k->max) {
			snprintf(err, errlen, "%s: '%s' is not a duration "
			    "from %" PRIu64 "ms to %" PRIu64 "ms (e.g. 500ms, "
			    "10s, 2m)", name, value, k->min, k->max);
			return (-1);
		}
		*(uint64_t *)(void *)dst = v;
		return (0);
	case CONF_DOUBLE:
		errno = 0;
		d = strtod(value, &end);
		if (*value == '\0' || *end != '\0' || errno != 0 || !(d > 0) ||
		    d < (double)k->min || d > (double)k->max) {
			snprintf(err, errlen, "%s: '%s' is not a number above 0 "
			    "and at most %" PRIu64, name, value, k->max);
			return (-1);
		}
		*(double *)(void *)dst = d;
		return (0);
	case CONF_BOOL:
		if (strcmp(value, "yes") == 0)
			*(int *)(void *)dst = 1;
		else if (strcmp(value, "no") == 0)
			*(int *)(void *)dst = 0;
		else {
			snprintf(err, errlen, "%s: '%s' is not yes or no", name,
			    value);
			return (-1);
		}
		return (0);
	case CONF_SIZE:
		if (conf_parse_size(value, &v) == -1 || v < k->min ||
		    v > k->max) {
			snprintf(err, errlen, "%s: '%s' is not a size from "
			    "%" PRIu64 " to %" PRIu64 " bytes (e.g. 64K, 16M)",
			    name, value, k->min, k->max);
			return (-1);
		}
		*(uint64_t *)(void *)dst = v;
		return (0);
	}
	snprintf(err, errlen, "%s: bad key type", name);
	return (-1);
}

/*
 * The name of key's environment variable: prefix and the key upper-cased
 * ("R3Q_" and drain_timeout: R3Q_DRAIN_TIMEOUT).
 */
void
conf_env_name(const char *prefix, const char *key, char *buf, size_t len)
{
	size_t	 i, n;

	n = (size_t)snprintf(buf, len, "%s%s", prefix, key);
	for (i = strlen(prefix); i < n && i < len; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
}

/*
 * Set every key its environment variable gives (for a worker that a
 * batch system starts, with no file): prefix and the key upper-cased,
 * its value read as the file's would be.  An unset or empty variable says
 * nothing.  get is getenv, or a test's stand-in.  -1 with "R3Q_CPUS: ..."
 * in err.
 */
int
conf_env(const struct conf_key *keys, void *conf, const char *prefix,
    char *(*get)(const char *), char *err, size_t errlen)
{
	char		 name[128], msg[512];
	const char	*v;

	for (; keys->name != NULL; keys++) {
		conf_env_name(prefix, keys->name, name, sizeof(name));
		if ((v = get(name)) == NULL || *v == '\0')
			continue;
		if (conf_set(keys, conf, keys->name, v, msg,
		    sizeof(msg)) == -1) {
			snprintf(err, errlen, "%s: %s", name, msg);
			return (-1);
		}
	}
	return (0);
}

/* Strip leading and trailing blanks in place. */
static char *
conf_trim(char *s)
{
	char	*e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return (s);
}

/*
 * Read a configuration file into conf.  A missing file is an error only if
 * must_exist.  Errors come back as "file:line: message" in err.
 */
int
conf_load(const char *path, const struct conf_key *keys, void *conf,
    int must_exist, char *err, size_t errlen)
{
	return (conf_load_ext(path, keys, conf, must_exist, NULL, NULL, err,
	    errlen));
}

/*
 * conf_load, with extra called for every key the table does not name
 * (such as "exec NAME"), with the key, the value and the line number: it
 * returns 0, -1 with a message, or 1 for a key it does not know either.
 */
int
conf_load_ext(const char *path, const struct conf_key *keys, void *conf,
    int must_exist, conf_extra_fn extra, void *arg, char *err, size_t errlen)
{
	int	 rc;
	FILE	*f;
	char	 line[CONF_STRMAX + 256], msg[512], *k, *v, *eq, *e;
	int	 lineno = 0;
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT && !must_exist)
			return (0);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		n = strlen(line);
		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			snprintf(err, errlen, "%s:%d: line too long", path,
			    lineno);
			goto fail;
		}
		if ((e = strchr(line, '\r')) != NULL)	/* CRLF files */
			*e = '\0';
		k = conf_trim(line);
		if (*k == '\0' || *k == '#')
			continue;
		if ((eq = strchr(k, '=')) == NULL) {
			snprintf(err, errlen, "%s:%d: expected 'key = value', "
			    "found '%.40s'", path, lineno, k);
			goto fail;
		}
		*eq = '\0';
		k = conf_trim(k);
		v = conf_trim(eq + 1);
		if (*v == '"') {
			if ((e = strrchr(v + 1, '"')) == NULL ||
			    *conf_trim(e + 1) != '\0') {
				snprintf(err, errlen, "%s:%d: unterminated "
				    "quoted value", path, lineno);
				goto fail;
			}
			*e = '\0';
			v++;
		} else if ((e = strchr(v, '#')) != NULL) {
			*e = '\0';
			v = conf_trim(v);
		}
		if (*k == '\0') {
			snprintf(err, errlen, "%s:%d: missing key", path,
			    lineno);
			goto fail;
		}
		if (extra != NULL && conf_find(keys, k) == NULL) {
			if ((rc = extra(arg, k, v, lineno, msg,
			    sizeof(msg))) == 0)
				continue;
			if (rc == 1)
				snprintf(msg, sizeof(msg), "unknown key '%s'", k);
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			goto fail;
		}
		if (conf_set(keys, conf, k, v, msg, sizeof(msg)) == -1) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			goto fail;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto fail;
	}
	fclose(f);
	return (0);
fail:
	fclose(f);
	return (-1);
}

/* A double in the fewest digits that read back to the same value. */
static void
conf_print_double(FILE *out, const char *name, double d)
{
	char	 buf[64];
	int	 prec;

	for (prec = 6; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, d);
	fprintf(out, "%s = %s\n", name, buf);
}

/* Print a config in config syntax; the output parses again to the same. */
void
conf_print(FILE *out, const struct conf_key *keys, const void *conf)
{
	const char	*p;
	uint64_t	 v;

	for (; keys->name != NULL; keys++) {
		p = (const char *)conf + keys->off;
		switch (keys->type) {
		case CONF_STRING:
		case CONF_HOSTPORT:
			fprintf(out, "%s = \"%s\"\n", keys->name, p);
			break;
		case CONF_UINT:
			fprintf(out, "%s = %u\n", keys->name,
			    *(const unsigned *)(const void *)p);
			break;
		case CONF_DURATION:
			v = *(const uint64_t *)(const void *)p;
			conf_print_duration(out, keys->name, v);
			break;
		case CONF_DOUBLE:
			conf_print_double(out, keys->name,
			    *(const double *)(const void *)p);
			break;
		case CONF_BOOL:
			fprintf(out, "%s = %s\n", keys->name,
			    *(const int *)(const void *)p ? "yes" : "no");
			break;
		case CONF_SIZE:
			v = *(const uint64_t *)(const void *)p;
			if (v != 0 && v % (1 << 20) == 0)
				fprintf(out, "%s = %" PRIu64 "M\n", keys->name,
				    v >> 20);
			else if (v != 0 && v % 1024 == 0)
				fprintf(out, "%s = %" PRIu64 "K\n", keys->name,
				    v >> 10);
			else
				fprintf(out, "%s = %" PRIu64 "\n", keys->name,
				    v);
			break;
		}
	}
}
