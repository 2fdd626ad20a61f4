/* r3qctl islands: the island-model ES, on the cluster or --local. */
#ifndef R3QCTL_ISLAND_H
#define R3QCTL_ISLAND_H

#include "frame.h"

int	cmd_islands(int, char *[]);
int	islands_print_info(const R3q__JobInfo *, int);

/* r3qctl.c: submit an islands job and follow it; its final JobInfo. */
Envelope *ctl_islands_run(R3q__IslandParams *);

#endif /* R3QCTL_ISLAND_H */
