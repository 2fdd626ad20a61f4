/* Test plugin of a future ABI, 99: refused at load. */
#include <stddef.h>

#include <r3q-plugin.h>

const unsigned	 r3q_plugin_abi = 99;

/* Never called. */
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
