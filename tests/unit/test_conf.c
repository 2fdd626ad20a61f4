/*
 * The configuration parser: units, host:port, file:line errors, and that
 * conf_print's output parses again to the same config.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf.h"

struct tconf {
	char		 addr[CONF_STRMAX];
	char		 path[CONF_STRMAX];
	unsigned	 n;
	uint64_t	 dur;
	uint64_t	 size;
};

#define OFF(f)	offsetof(struct tconf, f)
static const struct conf_key tkeys[] = {
	{ "addr",	CONF_HOSTPORT,	OFF(addr),	0, 0, NULL },
	{ "path",	CONF_STRING,	OFF(path),	0, 0, NULL },
	{ "n",		CONF_UINT,	OFF(n),		1, 64, NULL },
	{ "dur",	CONF_DURATION,	OFF(dur),	0, 3600000, NULL },
	{ "size",	CONF_SIZE,	OFF(size),	1024, 1ULL << 30, NULL },
	{ NULL, 0, 0, 0, 0, NULL }
};

/* Write text to a fresh temporary file; returns its path. */
static char *
tmpconf(const char *text)
{
	static char	 path[64];
	int		 fd;

	strcpy(path, "/tmp/r3q-test-conf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	return (path);
}

static void
test_units(void **state)
{
	static const struct { const char *s; int ok; uint64_t ms; } dur[] = {
		{ "500ms", 1, 500 }, { "10s", 1, 10000 }, { "10", 1, 10000 },
		{ "2m", 1, 120000 }, { "1h", 1, 3600000 }, { "", 0, 0 },
		{ "-1s", 0, 0 }, { "5x", 0, 0 }, { "ms", 0, 0 },
		{ "99999999999999999999", 0, 0 },
	};
	static const struct { const char *s; int ok; uint64_t us; } dus[] = {
		{ "500us", 1, 500 }, { "2ms", 1, 2000 }, { "1s", 1, 1000000 },
		{ "0", 1, 0 }, { "1", 1, 1000000 }, { "us", 0, 0 },
		{ "1m", 0, 0 }, { "-5us", 0, 0 }, { "5 us", 0, 0 },
	};
	static const struct { const char *s; int ok; uint64_t b; } sz[] = {
		{ "512", 1, 512 }, { "64K", 1, 65536 },
		{ "16M", 1, 16777216 }, { "1G", 1, 1073741824 },
		{ "1T", 0, 0 }, { "M", 0, 0 }, { "1.5M", 0, 0 },
	};
	uint64_t	 v;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(dur) / sizeof(dur[0]); i++) {
		assert_int_equal(conf_parse_duration(dur[i].s, &v) == 0,
		    dur[i].ok);
		if (dur[i].ok)
			assert_int_equal(v, dur[i].ms);
	}
	for (i = 0; i < sizeof(dus) / sizeof(dus[0]); i++) {
		assert_int_equal(conf_parse_duration_us(dus[i].s, &v) == 0,
		    dus[i].ok);
		if (dus[i].ok)
			assert_int_equal(v, dus[i].us);
	}
	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		assert_int_equal(conf_parse_size(sz[i].s, &v) == 0, sz[i].ok);
		if (sz[i].ok)
			assert_int_equal(v, sz[i].b);
	}
}

static void
test_hostport(void **state)
{
	static const struct { const char *s; int ok; const char *h, *p; }
	    t[] = {
		{ "127.0.0.1:7411", 1, "127.0.0.1", "7411" },
		{ "example.org:80", 1, "example.org", "80" },
		{ "[::1]:9000", 1, "::1", "9000" },
		{ "*:7411", 1, "", "7411" },
		{ "host", 1, "host", "7411" },
		{ "::1:80", 0, NULL, NULL },
		{ "host:", 0, NULL, NULL },
		{ "host:70000", 0, NULL, NULL },
		{ "host:12x", 0, NULL, NULL },
		{ "[::1", 0, NULL, NULL },
		{ ":80", 0, NULL, NULL },
	};
	char	 h[256], p[16];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(conf_split_hostport(t[i].s, h, sizeof(h), p,
		    sizeof(p), "7411") == 0, t[i].ok);
		if (t[i].ok) {
			assert_string_equal(h, t[i].h);
			assert_string_equal(p, t[i].p);
		}
	}
}

static void
test_load_ok(void **state)
{
	struct tconf	 c;
	char		 err[256], *path;

	(void)state;
	memset(&c, 0, sizeof(c));
	path = tmpconf("# a comment\n\naddr = 127.0.0.1:99\r\n"
	    "path = \"/a b/c\"   \n  n=7 # trailing comment\n"
	    "dur = 250ms\nsize = 64K\n");
	assert_int_equal(conf_load(path, tkeys, &c, 1, err, sizeof(err)), 0);
	unlink(path);
	assert_string_equal(c.addr, "127.0.0.1:99");
	assert_string_equal(c.path, "/a b/c");
	assert_int_equal(c.n, 7);
	assert_int_equal(c.dur, 250);
	assert_int_equal(c.size, 65536);
}

/* Each broken file names its line and what is wrong. */
static void
test_load_errors(void **state)
{
	static const struct { const char *text, *want; } t[] = {
		{ "n = 3\nbogus = 1\n", ":2: unknown key 'bogus'" },
		{ "n = 0\n", ":1: n: '0' is not a whole number from 1 to 64" },
		{ "n = 65\n", ":1: n:" },
		{ "\n\nn 3\n", ":3: expected 'key = value'" },
		{ "dur = fast\n", ":1: dur: 'fast' is not a duration" },
		{ "size = 1\n", ":1: size: '1' is not a size" },
		{ "addr = nohost:\n", ":1: addr: 'nohost:' is not host:port" },
		{ "path = \"open\n", ":1: unterminated quoted value" },
		{ " = 4\n", ":1: missing key" },
	};
	struct tconf	 c;
	char		 err[256], *path;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		path = tmpconf(t[i].text);
		assert_int_equal(conf_load(path, tkeys, &c, 1, err,
		    sizeof(err)), -1);
		unlink(path);
		assert_non_null(strstr(err, path));
		if (strstr(err, t[i].want) == NULL)
			fail_msg("%s: got '%s', want '%s'", t[i].text, err,
			    t[i].want);
	}
}

static void
test_missing_file(void **state)
{
	struct tconf	 c;
	char		 err[256];

	(void)state;
	assert_int_equal(conf_load("/nonexistent/r3q.conf", tkeys, &c, 0, err,
	    sizeof(err)), 0);
	assert_int_equal(conf_load("/nonexistent/r3q.conf", tkeys, &c, 1, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

/* Printed configs parse again to the same values. */
static void
test_print_roundtrip(void **state)
{
	struct tconf	 a, b;
	char		 err[256], *path, buf[4096];
	FILE		*f;
	size_t		 n;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	strcpy(a.addr, "[::1]:7411");
	strcpy(a.path, "/var/lib/r3q/x y.db");
	a.n = 12;
	a.dur = 1500;
	a.size = 16 << 20;
	f = fmemopen(buf, sizeof(buf), "w");
	conf_print(f, tkeys, &a);
	fclose(f);
	n = strlen(buf);
	assert_true(n > 0);
	path = tmpconf(buf);
	assert_int_equal(conf_load(path, tkeys, &b, 1, err, sizeof(err)), 0);
	unlink(path);
	assert_memory_equal(&a, &b, sizeof(a));
}

/* A stand-in environment for conf_env. */
static char *
fake_env(const char *name)
{
	static char	 n[] = "5", dur[] = "2m", empty[] = "", bad[] = "x";

	if (strcmp(name, "T_N") == 0)
		return (n);
	if (strcmp(name, "T_DUR") == 0)
		return (dur);
	if (strcmp(name, "T_PATH") == 0)
		return (empty);		/* empty: says nothing */
	if (strcmp(name, "B_SIZE") == 0)
		return (bad);
	return (NULL);
}

/*
 * The precedence workerd applies (issue 25): defaults, then the file,
 * then the environment (prefix + KEY), then the flags (conf_set).
 */
static void
test_env(void **state)
{
	struct tconf	 c;
	char		 err[512], name[64];

	(void)state;
	conf_env_name("R3Q_", "drain_timeout", name, sizeof(name));
	assert_string_equal(name, "R3Q_DRAIN_TIMEOUT");
	memset(&c, 0, sizeof(c));
	c.n = 1;
	strcpy(c.path, "default");
	assert_int_equal(conf_load(tmpconf("n = 3\npath = /file\nsize = 2K\n"),
	    tkeys, &c, 1, err, sizeof(err)), 0);
	assert_int_equal(conf_env(tkeys, &c, "T_", fake_env, err,
	    sizeof(err)), 0);
	assert_int_equal(c.n, 5);		/* env over file */
	assert_int_equal(c.dur, 120000);	/* env over default */
	assert_string_equal(c.path, "/file");	/* empty env: file */
	assert_int_equal(c.size, 2048);		/* file over default */
	assert_int_equal(conf_set(tkeys, &c, "n", "7", err, sizeof(err)), 0);
	assert_int_equal(c.n, 7);		/* flag over env */
	assert_int_equal(conf_env(tkeys, &c, "B_", fake_env, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "B_SIZE: size: 'x' is not a size"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_load_ok),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_env),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
