/* r3qctl map: one task per input line, run through libr3q. */
#ifndef R3QCTL_MAP_H
#define R3QCTL_MAP_H

int	cmd_map(int, char *[], const char *);

/* r3qctl.c: say "r3qctl: ..." on standard error and exit with code. */
void	die(int, const char *, ...)
	    __attribute__((noreturn, format(printf, 2, 3)));

#endif /* R3QCTL_MAP_H */
