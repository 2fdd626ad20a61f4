/* r3qctl exchange: total-exchange schedules (common/xchg), no master. */
#ifndef R3QCTL_EXCHANGE_H
#define R3QCTL_EXCHANGE_H

int	cmd_exchange(int, char *[]);

#endif /* R3QCTL_EXCHANGE_H */
