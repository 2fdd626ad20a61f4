/* Test plugin whose init fails with a message naming the kind. */
#include <stdio.h>

#include <r3q-plugin.h>

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

/* Refuse, saying why. */
int
r3q_plugin_init(const char *kind, unsigned nslots, void **state, char *err,
    size_t errlen)
{
	(void)nslots;
	*state = NULL;
	snprintf(err, errlen, "no licence for kind %s", kind);
	return (-1);
}

/* Never called. */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	(void)t;
	return (R3Q_PLUGIN_FAILED);
}

/* Never called. */
void
r3q_plugin_fini(void *state)
{
	(void)state;
}
