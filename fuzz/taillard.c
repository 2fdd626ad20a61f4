/*
 * The Taillard instance parser (common/bnb/pfsp.c), as r3qctl bnb reads a
 * file: the first byte of the input picks the instance (1 to 4), the rest
 * is the file.  An instance it accepts passes bnb_instance_check() and
 * its makespans fit the bounds the module promises.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "bnb/pfsp.h"
#include "fuzz.h"

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
	struct bnb_instance	 inst;
	uint16_t		*perm;
	uint32_t		 j;
	int32_t			 c;
	char			 err[512];

	if (size < 1)
		return (0);
	err[0] = '\0';
	if (bnb_parse_taillard((const char *)data + 1, size - 1, "input",
	    data[0] % 4 + 1, &inst, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();	/* an error says what is wrong */
		return (0);
	}
	if (bnb_instance_check(&inst, err, sizeof(err)) == -1) {
		fprintf(stderr, "parsed instance fails its check: %s\n", err);
		abort();
	}
	/* the identity and its reverse: a makespan within the limits */
	perm = calloc(inst.n ? inst.n : 1, sizeof(*perm));
	for (j = 0; j < inst.n; j++)
		perm[j] = (uint16_t)j;
	c = bnb_makespan(&inst, perm, inst.n);
	for (j = 0; j < inst.n; j++)
		perm[j] = (uint16_t)(inst.n - 1 - j);
	if (c < 0 || bnb_makespan(&inst, perm, inst.n) < 0)
		abort();
	free(perm);
	bnb_instance_free(&inst);
	return (0);
}
