/* r3qctl bnb: branch and bound on a flow-shop instance. */
#ifndef R3QCTL_BNB_H
#define R3QCTL_BNB_H

int	cmd_bnb(int, char *[]);

#endif /* R3QCTL_BNB_H */
