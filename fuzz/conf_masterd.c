/*
 * The masterd.conf parser (common/conf.c with masterd's keys): the input
 * is a configuration file.  One that parses prints (masterd -nv) to a
 * file that parses again and prints the same.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"
#include "masterd.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct masterd_config	*c, *c2;
	char			 err[1024], *path, *buf = NULL, *buf2 = NULL;
	size_t			 len = 0, len2 = 0;
	FILE			*f;

	c = xcalloc(2, sizeof(*c));
	c2 = c + 1;
	masterd_config_defaults(c);
	path = fz_tmpfile(data, size);
	err[0] = '\0';
	if (conf_load(path, masterd_keys, c, 1, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();	/* an error says what is wrong */
		free(c);
		return (0);
	}
	if ((f = open_memstream(&buf, &len)) == NULL)
		abort();
	conf_print(f, masterd_keys, c);
	fclose(f);
	path = fz_tmpfile(buf, len);
	masterd_config_defaults(c2);
	if (conf_load(path, masterd_keys, c2, 1, err, sizeof(err)) == -1) {
		fprintf(stderr, "printed configuration does not parse: %s\n",
		    err);
		abort();
	}
	if ((f = open_memstream(&buf2, &len2)) == NULL)
		abort();
	conf_print(f, masterd_keys, c2);
	fclose(f);
	if (len != len2 || memcmp(buf, buf2, len) != 0) {
		fprintf(stderr, "printed configuration parses differently:\n"
		    "%s\n---\n%s\n", buf, buf2);
		abort();
	}
	free(buf);
	free(buf2);
	free(c);
	return (0);
}
