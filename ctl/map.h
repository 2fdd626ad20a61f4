/* r3qctl map: one task per input line, run through libr3q. */
#ifndef R3QCTL_MAP_H
#define R3QCTL_MAP_H

int	cmd_map(int, char *[], const char *);

#endif /* R3QCTL_MAP_H */
