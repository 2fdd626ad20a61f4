/* Test plugin without r3q_plugin_run: refused at load. */
#include <stddef.h>

#include <r3q-plugin.h>

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

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
void
r3q_plugin_fini(void *state)
{
	(void)state;
}
