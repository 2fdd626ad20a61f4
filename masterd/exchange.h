/*
 * Worker-to-worker total exchanges planned by the master (doc/algorithms.md
 * §2; the schedulers are common/xchg).  masterd-internal: the island
 * job (job_islands.c) and r3qctl's "exchange run" both come through here.
 *
 * Workers that set peer_listen advertise a peer address in their Hello
 * (WorkerInfo.peer_addr); only they can take part.  The master keeps a
 * measured link matrix (start-up seconds and bytes a second for each
 * ordered pair of workers, with the time it was measured); an exchange
 * plans its schedule from it with common/xchg, sends each worker its part
 * (to whom, in which order, how many bytes a piece), the workers send each
 * other padding bytes over their mutually authenticated TLS links, one
 * send and one receive at a time, and report each event's start and end.
 *
 * All of it runs on masterd's event loop; no call blocks.
 */
#ifndef R3Q_MASTERD_EXCHANGE_H
#define R3Q_MASTERD_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

struct worker;

/* One event (a piece of a message), predicted and measured. */
struct exchange_event_result {
	uint32_t	 ee_src;	/* index into the exchange's workers */
	uint32_t	 ee_dst;
	uint32_t	 ee_piece;	/* 0, 1, ... per (src, dst) */
	uint64_t	 ee_bytes;
	double		 ee_pred_start;	/* seconds from the exchange's start */
	double		 ee_pred_end;
	double		 ee_start;	/* measured, same origin; -1: did */
	double		 ee_end;	/*   not happen (failure) */
};

/*
 * How an exchange ended, given to its done() exactly once, on the event
 * loop, never from inside exchange_start().  Borrowed: valid during the
 * call only.
 */
struct exchange_result {
	uint64_t	 er_id;		/* exchange_start()'s answer */
	int		 er_ok;		/* 1: every event delivered */
	char		 er_error[256];	/* else why, naming the culprit */
	uint32_t	 er_failed_wid;	/* the worker at fault, or
					   EXCHANGE_NOBODY */
	size_t		 er_p;
	const uint32_t	*er_wids;	/* the workers, as given (a lost
					   one: UINT32_MAX) */
	const char	*const *er_names;	/* their names */
	char		 er_algo[64];	/* algorithm (portfolio: its winner) */
	double		 er_t_tb;	/* lower bound, seconds */
	double		 er_predicted;	/* the schedule's completion, s */
	double		 er_measured;	/* last event's end, s; -1 failed */
	double		 er_wall;	/* plans sent to last report, s */
	const struct exchange_event_result *er_ev;
	size_t		 er_nev;
};

#define EXCHANGE_NOBODY	UINT32_MAX	/* no worker (ids start at 0) */

typedef void (*exchange_done_fn)(void *, const struct exchange_result *);

/*
 * Start an exchange among p workers (worker ids, w_id, distinct, all
 * peer-capable: exchange_capable()).  bytes is p x p row-major, row =
 * sender: bytes[i*p+j] is what workers[i] sends workers[j]; 0 (and the
 * diagonal) means nothing.  algo is an xchg_algo_lookup() name, NULL for
 * "portfolio".  Links with bytes to carry that were never measured, or
 * more than 10 minutes ago, are measured first, as part of the exchange
 * (one probe after the other, each bounded by 35 s).  timeout_ms bounds
 * the exchange itself once planned (0: 10 s + 3 x the prediction; the
 * master waits 5 s more for the reports); a worker lost fails it at once,
 * one refusing or silent within that bound, and done() names it.
 * Operations (exchanges, r3qctl links --measure) run one at a time, in
 * the order they were asked for.  Pending ones are dropped without done()
 * when masterd exits.
 * Returns the exchange's id (> 0), or 0 with err filled and done() never
 * called.  p = 1 is an empty exchange that completes at once (done()
 * still comes later, from the loop).
 */
uint64_t exchange_start(const uint32_t *workers, size_t p,
	    const uint64_t *bytes, const char *algo, uint64_t timeout_ms,
	    exchange_done_fn done, void *arg, char *err, size_t errlen);

/* Forget a running exchange: done() is not called; workers are told. */
void	 exchange_cancel(uint64_t);

/* The worker advertised a peer address (peer_listen) and is usable. */
int	 exchange_capable(const struct worker *);

/* Bytes workers send in one exchange, at most (a p x p matrix's sum). */
#define EXCHANGE_MAX_BYTES	(UINT64_C(1) << 40)

/* masterd's side of it (worker.c, session.c, control.c call these). */
void	 exchange_init(void);
void	 exchange_worker_gone(struct worker *);
void	 exchange_dispatch(struct worker *, void *);	/* Envelope * */
void	 exchange_control(void *, void *);	/* session *, Envelope * */
struct session;
void	 exchange_session_gone(struct session *);
void	 exchange_free_all(void);

#endif /* R3Q_MASTERD_EXCHANGE_H */
