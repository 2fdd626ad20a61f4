/*
 * r3qctl's private header: the command table's entries (one cmd-*.c
 * file, or map.c, bnb.c, island.c, exchange.c, per group of commands),
 * the connection to masterd every command shares (client.c, over libr3q:
 * TLS or the control socket alike) and the helpers more than one file
 * uses.
 */
#ifndef R3QCTL_H
#define R3QCTL_H

#include <stdint.h>

#include "frame.h"

#define EX_OK		0
#define EX_FAIL		1
#define EX_USAGE	64
#define EX_UNAVAILABLE	69

/*
 * One command of the table (r3qctl.c): its name, its arguments, a line
 * or two of what it does and the options it takes, for `r3qctl help`
 * and its own -h; exec runs it with argv[0] its name.
 */
struct cmd_entry {
	const char	*name;
	const char	*usage;		/* after "r3qctl NAME " */
	const char	*summary;	/* what it does, "\n" between lines */
	const char	*options;	/* "  --x N  ...\n" lines, or NULL */
	int		(*exec)(const struct cmd_entry *, int, char *[]);
};

extern const struct cmd_entry cmd_bnb_entry;
extern const struct cmd_entry cmd_cancel_entry;
extern const struct cmd_entry cmd_certs_entry;
extern const struct cmd_entry cmd_drain_entry;
extern const struct cmd_entry cmd_es_entry;
extern const struct cmd_entry cmd_exchange_entry;
extern const struct cmd_entry cmd_islands_entry;
extern const struct cmd_entry cmd_jobs_entry;
extern const struct cmd_entry cmd_links_entry;
extern const struct cmd_entry cmd_map_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_result_entry;
extern const struct cmd_entry cmd_submit_entry;
extern const struct cmd_entry cmd_token_entry;
extern const struct cmd_entry cmd_wait_entry;
extern const struct cmd_entry cmd_workers_entry;

/* r3qctl.c */
void		 die(int, const char *, ...)
		    __attribute__((noreturn, format(printf, 2, 3)));
void		 cmd_usage(const struct cmd_entry *, int)
		    __attribute__((noreturn));
int		 cmd_parse_none(const struct cmd_entry *, int, char *[]);
uint64_t	 cmd_parse_job(const char *);
char		*cmd_parse_policy(char *);
extern const char *ctl_sflag;	/* -s */

/* client.c: the connection to masterd. */
struct r3q_options;
void		 ctl_options(struct r3q_options *);
void		 ctl_connect(void);
uint64_t	 ctl_send(Envelope *);
Envelope	*ctl_recv(void);
Envelope	*ctl_recv_any(void);
Envelope	*ctl_expect(Envelope *, int);
const char	*ctl_master(void);
void		 ctl_catch_signals(void (*)(void));
void		 ctl_die_signal(void) __attribute__((noreturn));
Envelope	*ctl_follow(uint64_t, int);
uint64_t	 ctl_submit(Envelope *, int);
void		 ctl_cancel_interrupted(void);
int		 ctl_signalled(void);
void		 ctl_print_gen(uint32_t, double, uint64_t);
Envelope	*ctl_bnb_run(R3q__BnbParams *);
Envelope	*ctl_islands_run(R3q__IslandParams *);
extern uint64_t	 ctl_job;	/* followed; 0 before submit */

/* cmd-es.c: a finished job, printed. */
int		 es_report(const R3q__JobInfo *, int, const char *);
void		 es_print_table(const R3q__JobInfo *);

/* island.c */
int		 islands_print_info(const R3q__JobInfo *, int);

#endif /* R3QCTL_H */
