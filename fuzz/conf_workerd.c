/*
 * The workerd.conf parser: common/conf.c with workerd's keys and the kind
 * lines of workerd/kinds.c, then the checks workerd makes of the kinds
 * (kinds_conf_check), and printing (workerd -nv).  The input is a
 * configuration file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"
#include "workerd.h"

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
	struct workerd_config	*c;
	char			 err[1024], *path;
	FILE			*f;

	c = xcalloc(1, sizeof(*c));
	workerd_config_defaults(c);
	c->kinds = kinds_conf_new();
	path = fz_tmpfile(data, size);
	err[0] = '\0';
	if (conf_load_ext(path, workerd_keys, c, 1, kinds_conf_line,
	    c->kinds, err, sizeof(err)) == -1 ||
	    kinds_conf_check(c->kinds, path, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();	/* an error says what is wrong */
	} else if ((f = fopen("/dev/null", "w")) != NULL) {
		conf_print(f, workerd_keys, c);
		kinds_conf_print(f, c->kinds);
		fclose(f);
	}
	kinds_conf_free(c->kinds);
	free(c);
	return (0);
}
