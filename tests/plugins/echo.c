/*
 * Test plugin "echo": the output is a copy of the payload, reported
 * half-way first; the payload "?" is answered with "INITKIND RUNKIND SLOT
 * NSLOTS": the kind init and run were given, the slot, init's nslots.  fini appends "fini KIND NSLOTS" to the file
 * named by $R3Q_TEST_FINI, if set.  bench/plugin runs it as a no-op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <r3q-plugin.h>

/* What init was told. */
struct echo {
	char		 e_kind[65];
	unsigned	 e_nslots;
};

const unsigned	 r3q_plugin_abi = R3Q_PLUGIN_ABI;

/* Remember the kind and the number of slots. */
int
r3q_plugin_init(const char *kind, unsigned nslots, void **state, char *err,
    size_t errlen)
{
	struct echo	*e;

	if ((e = calloc(1, sizeof(*e))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	snprintf(e->e_kind, sizeof(e->e_kind), "%s", kind);
	e->e_nslots = nslots;
	*state = e;
	return (0);
}

/* Copy the payload out, or describe the call for "?". */
int
r3q_plugin_run(const struct r3q_plugin_task *t)
{
	struct echo	*e = t->state;
	char		 buf[128];
	void		*out;
	size_t		 n;

	if (t->cancelled(t))
		return (R3Q_PLUGIN_CANCELLED);
	t->halfway(t);
	if (t->payload_len == 1 && *(const char *)t->payload == '?') {
		n = (size_t)snprintf(buf, sizeof(buf), "%s %s %u %u",
		    e->e_kind, t->kind, t->slot, e->e_nslots);
		if ((out = t->output(t, n)) == NULL)
			return (R3Q_PLUGIN_FAILED);
		memcpy(out, buf, n);
		return (R3Q_PLUGIN_OK);
	}
	if ((out = t->output(t, t->payload_len)) == NULL)
		return (R3Q_PLUGIN_FAILED);
	memcpy(out, t->payload, t->payload_len);
	return (R3Q_PLUGIN_OK);
}

/* Leave a mark that fini ran, then free the state. */
void
r3q_plugin_fini(void *state)
{
	struct echo	*e = state;
	const char	*path;
	FILE		*f;

	if ((path = getenv("R3Q_TEST_FINI")) != NULL &&
	    (f = fopen(path, "a")) != NULL) {
		fprintf(f, "fini %s %u\n", e->e_kind, e->e_nslots);
		fclose(f);
	}
	free(e);
}
