/* Test plugin whose run returns 42, which is no status of the ABI. */
#include <stddef.h>

#include <r3q-plugin.h>

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

/* Nothing to set up. */
int
r3q_plugin_init(const char *kind, unsigned nslots, void **state, char *err,
    size_t errlen)
{
	(void)kind;
	(void)nslots;
	(void)err;
	(void)errlen;
	*state = NULL;
	return (0);
}

/* Return what no plugin should. */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	(void)t;
	return (42);
}

/* Nothing to free. */
void
r3q_plugin_fini(void *state)
{
	(void)state;
}
