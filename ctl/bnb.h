/* r3qctl bnb: branch and bound on a flow-shop instance. */
#ifndef R3QCTL_BNB_H
#define R3QCTL_BNB_H

#include "frame.h"

int	cmd_bnb(int, char *[]);

/* r3qctl.c: submit a bnb job and follow it; its final JobInfo. */
Envelope *ctl_bnb_run(R3q__BnbParams *);

#endif /* R3QCTL_BNB_H */
