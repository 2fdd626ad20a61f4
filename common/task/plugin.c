/*
 * Placeholder for the plugin runner (r3q-plugin.h), which is written on
 * another branch and replaces this file when the branches are merged:
 * until then a plugin kind is refused at ext_open and workerd -n.
 */
#include "config.h"

#include <stdio.h>

#include "task/ext.h"

/* Refuse a plugin kind: this build has no plugin runner. */
int
ext_plugin_open(struct ext_kind *k, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: plugins not built", k->k_argv != NULL &&
	    k->k_argv[0] != NULL ? k->k_argv[0] : k->k_name);
	return (-1);
}

/* Never reached (ext_open refused the kind); fail the task if it is. */
int
ext_plugin_run(struct ext_kind *k, unsigned slot, const struct task_params *p,
    const struct task_ctx *ctx, uint64_t max_output, struct task_result *res)
{
	(void)slot;
	(void)p;
	(void)ctx;
	(void)max_output;
	snprintf(res->error, sizeof(res->error), "%s: plugins not built",
	    k->k_name);
	return (res->status = TASK_FAILED);
}

/* Nothing was loaded. */
void
ext_plugin_close(struct ext_kind *k)
{
	k->k_priv = NULL;
}

/* Refuse to check a plugin: this build has no plugin runner. */
int
ext_plugin_check(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: plugins not built", path);
	return (-1);
}
