/* workerd's private header. */
#ifndef R3Q_WORKERD_H
#define R3Q_WORKERD_H

#include <sys/queue.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/listener.h>

#include "conf.h"
#include "frame.h"
#include "task/ext.h"
#include "task/task.h"

struct event_base;

/* What workerd.conf says (plus command-line overrides). */
struct workerd_config {
	char		 master[CONF_STRMAX];	/* host:port[,host:port...] */
	char		 relay_listen[CONF_STRMAX];	/* relay mode: none, or
						   host:port (relay.c) */
	char		 peer_listen[CONF_STRMAX];	/* other workers: none,
						   or host:port (peer.c) */
	uint64_t	 peer_delay;		/* ms, emulated start-up of
						   each message to a peer */
	char		 name[CONF_STRMAX];
	unsigned	 cpus;
	char		 ca[CONF_STRMAX];
	char		 cert[CONF_STRMAX];
	char		 key[CONF_STRMAX];
	char		 crl[CONF_STRMAX];	/* none, or a PEM file */
	uint64_t	 max_frame;
	uint64_t	 max_output;		/* bytes of one task's output */
	uint64_t	 reconnect_max;		/* ms */
	double		 speed;			/* vs the reference machine */
	uint64_t	 delay;			/* ms, WAN emulation */
	char		 load_profile[CONF_STRMAX];
	uint64_t	 heartbeat;		/* ms */
	uint64_t	 link_timeout;		/* ms, 0: the kernel's */
	int		 retry_permanent;	/* retry what retrying cannot cure */
	int		 sealed_frames;		/* offer to seal (seal.h) */
	uint64_t	 kill_grace;		/* ms, SIGTERM to SIGKILL */
	char		 workdir[CONF_STRMAX];	/* children's directories */
	char		 slot_users[CONF_STRMAX];	/* none, or the prefix
						   of the slot users' names */
	int		 run_as_root;		/* slot_users = none under
						   root: run kinds as root */
	uint64_t	 lifetime;		/* ms, then drain; 0: none */
	uint64_t	 drain_timeout;		/* ms for running tasks */
	char		 join[CONF_STRMAX];	/* "HOST:PORT TOKEN", or "" */
	char		 state_dir[CONF_STRMAX];	/* a joined worker's
						   key and certificates */
	uint64_t	 renew_before;		/* ms */
	int		 master_unnamed;	/* no master nor join given:
						   state_dir's, else the
						   default (join.c) */
	struct kinds_conf *kinds;		/* the kind lines (kinds.c) */
};

#define LOAD_MAXPOINTS	64

/* Bytes of a Result frame besides the output: max_output leaves them. */
#define RESULT_ROOM	512
#define MAX_OUTPUT_DEFAULT	(1u << 20)

#define DRAIN_TIMEOUT_DEFAULT	60000	/* ms */

#define SLOT_USERS_DEFAULT	"r3q-slot"	/* r3q-slot0, r3q-slot1... */
#define SLOT_PREFIX_MAX		24	/* bytes, + up to 4 digits */

/* A load profile: from t_ms on, run at factor x the configured speed. */
struct load_profile {
	size_t		 lp_n;
	uint64_t	 lp_t[LOAD_MAXPOINTS];		/* ms since start */
	double		 lp_factor[LOAD_MAXPOINTS];
};

int	load_profile_parse(const char *, struct load_profile *, char *,
	    size_t);
double	workerd_speed(void);

extern const struct conf_key workerd_keys[];
void	workerd_config_defaults(struct workerd_config *);
void	workerd_exit(int);
void	workerd_drain(const char *);

/*
 * One task on this worker.  Created by an Assign, owned by the local queue
 * while held, by an execution thread while running, then by the done list
 * until the loop thread sends its result and frees it.
 */
struct wtask {
	TAILQ_ENTRY(wtask)	 wt_entry;
	uint64_t		 wt_id;
	uint64_t		 wt_epoch;
	uint64_t		 wt_tag;	/* echoed in its Result */
	char			*wt_kind;	/* the registry's name, or */
	int			 wt_kind_owned;	/* a copy of an unknown one */
	struct ext_kind		*wt_ext;	/* a configured kind: a
						   reference, or NULL */
	size_t			 wt_payload_len;	/* in wt_payload */
	atomic_int		 wt_cancel;
	atomic_int		 wt_half;	/* past its half-way point */
	_Atomic int32_t		 wt_bound;	/* pushed by the master
						   (TaskPush), INT32_MAX */
	atomic_int		 wt_donate;	/* asked to donate */
	int			 wt_said_start;	/* Progress sent: ex_mtx */
	int			 wt_said_half;
	uint64_t		 wt_received;	/* wall ns */
	unsigned		 wt_slot;	/* execution thread */
	int			 wt_replica;	/* sent as an extra copy */
	int			 wt_active;	/* moved here by balancing: the
						   Active Queue (ex_mtx) */
	int			 wt_handback;	/* interrupted by a drain: give
						   it back, no result (ex_mtx) */
	int			 wt_wake;	/* the loop thread's wake-up,
						   put off until the task is
						   handed over (its thread) */
	int			 wt_busy;	/* its start is news only
						   once ctx->busy says so
						   (its thread) */
	uint64_t		 wt_start;
	uint64_t		 wt_end;
	struct task_result	 wt_res;	/* its output may borrow
						   wt_payload (echo) */
	uint8_t			 wt_payload[];	/* one allocation */
};
TAILQ_HEAD(wtasklist, wtask);

/* A running task's news for the master (TaskNews), in order. */
struct wnews {
	TAILQ_ENTRY(wnews)	 wn_entry;
	uint64_t		 wn_id;
	uint64_t		 wn_epoch;
	uint64_t		 wn_tag;
	size_t			 wn_len;
	uint8_t			 wn_data[];
};
TAILQ_HEAD(wnewslist, wnews);

/* exec.c: the local queue and the execution threads. */
int	 exec_start(struct event_base *, unsigned, void (*)(void));
void	 exec_set_max_output(uint64_t);
void	 exec_stop(void);
void	 exec_assign(struct wtasklist *, unsigned);
int	 exec_cancel(uint64_t);
int	 exec_withdraw(uint64_t);
int	 exec_push(uint64_t, int32_t);
int	 exec_donate(uint64_t);
void	 exec_news_take(struct wnewslist *);
void	 exec_news_free(struct wnewslist *);
size_t	 exec_drop_held(void);
size_t	 exec_take_held(uint64_t **);
unsigned exec_interrupt_all(void);
void	 exec_collect(struct wtasklist *, uint64_t *, size_t *,
	    uint64_t *, size_t *);
unsigned exec_threads(void);
void	 exec_counts(unsigned *, unsigned *);
int	 exec_busy(void);
void	 exec_halves(uint64_t **, size_t *, uint64_t **, size_t *);
void	 wtask_free(struct wtask *);

/* kinds.c: the kinds configured in workerd.conf. */
struct kinds_conf;
struct kinds_conf *kinds_conf_new(void);
void	 kinds_conf_free(struct kinds_conf *);
int	 kinds_conf_line(void *, const char *, const char *, int, char *,
	    size_t);
int	 kinds_conf_check(const struct kinds_conf *, const char *, char *,
	    size_t);
int	 kinds_conf_check_plugins(const struct kinds_conf *, const char *,
	    char *, size_t);
void	 kinds_conf_print(FILE *, const struct kinds_conf *);
void	 kinds_conf_list(FILE *, const struct kinds_conf *,
	    const struct workerd_config *);
int	 kinds_conf_audit(const struct kinds_conf *, const char *,
	    const char *, void (*)(const char *, ...));
int	 kinds_have_process(const struct kinds_conf *);
int	 kinds_apply(const struct workerd_config *, int *, char *, size_t);
int	 kinds_slot_users(const struct workerd_config *, int,
	    struct ext_cred **, char *, size_t);
void	 kinds_clear(void);
struct ext_kind *kinds_get(const char *);
void	 kinds_unref(struct ext_kind *);
char	**kinds_names(size_t *);
int	 kinds_withdraw(const char *, const char *);
char	**kinds_withdrawn(size_t *, char ***);

/* link.c: the connection to the master. */
void	 link_start(struct event_base *, const struct workerd_config *,
	    const char *);
void	 link_note_received(struct wtask *);
void	 link_stop(void);
int	 link_reload(const struct workerd_config *);
void	 link_send(Envelope *);
void	 link_ctx_renewed(void);

/* join.c: join tokens, state_dir, renewal */
int	 join_setup(struct workerd_config *, char *, size_t);
void	 join_reload(struct workerd_config *);
int	 join_noaction(struct workerd_config *);
void	 join_link_up(struct event_base *);
void	 join_renew_arm(uint64_t);
void	 join_renewed(const R3q__JoinAnswer *);
void	 join_stop(void);
void	 link_wake(void);
void	 link_kinds_changed(void);
void	 link_drain(const char *);
int	 link_draining(void);
int	 link_relay_ready(void);
size_t	 link_relay_outlen(void);
void	 link_relay_send(Envelope *);
int	 link_master_list(const char *, char *, size_t);

/* relay.c: workers behind this one (relay_listen). */
void	 relay_start(struct event_base *, const struct workerd_config *);
struct evconnlistener *workerd_listen(struct event_base *, evconnlistener_cb,
	    const char *, const char *, const char *, char *, size_t);
void	 relay_stop(void);
void	 relay_reload(const struct workerd_config *);
void	 relay_crl_changed(void);
int	 relay_enabled(void);
void	 relay_from_up(const Envelope *);
void	 relay_up_lost(const char *);
void	 relay_up_writable(void);
void	 relay_up_ready(void);

/* peer.c: links with other workers (peer_listen). */
void	 peer_start(struct event_base *, const struct workerd_config *);
void	 peer_stop(void);
const char *peer_address(void);
void	 peer_order(uint64_t, const R3q__PeerOrder *);
void	 peer_link_down(void);
void	 peer_crl_changed(void);

/* mcrl.c: the CRLs the master sends */
struct tls_crl;
void	 mcrl_start(const struct workerd_config *);
void	 mcrl_stop(void);
int	 mcrl_load(const struct workerd_config *, struct tls_crl **, char *,
	    size_t);
void	 mcrl_receive(const uint8_t *, size_t, const char *);

#endif /* R3Q_WORKERD_H */
