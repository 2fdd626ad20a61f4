/*
 * A masterd without sockets, for the fuzz targets and the extremes test
 * (tests/unit/test_extremes.c): the daemon's own state (md) on a private
 * event base, and sessions made by session_new() on one end of a libevent
 * bufferevent pair, so that what a peer writes on the other end reaches
 * masterd through session_read(), exactly as over TLS.  Everything is
 * deterministic: a fixed epoch, tag key and boot number.
 */
#ifndef R3Q_FUZZ_MASTER_H
#define R3Q_FUZZ_MASTER_H

#include <stddef.h>
#include <stdint.h>

#include "masterd.h"

struct evbuffer;

#define FZ_EPOCH	1
#define FZ_NTASKS	8		/* tasks of the job fz_job_open makes */

/* A fake peer: the end of the pair that is not masterd's. */
struct fz_peer {
	struct bufferevent	*p_bev;
	struct session		*p_s;		/* masterd's session */
	char			 p_addr[64];
};

void	 fz_master_init(const char *);
void	 fz_master_free(void);
void	 fz_peer_new(struct fz_peer *, int, enum role, const char *);
void	 fz_peer_free(struct fz_peer *);
int	 fz_peer_alive(const struct fz_peer *);
void	 fz_write(struct fz_peer *, const void *, size_t);
void	 fz_send(struct fz_peer *, const Envelope *);
int	 fz_recv(struct fz_peer *, Envelope **);
void	 fz_drop_input(struct fz_peer *);
void	 fz_run(void);
void	 fz_hello(struct fz_peer *, const char *, uint32_t);
void	 fz_hello_buf(struct evbuffer *, const char *, uint32_t);
void	 fz_results_buf(struct evbuffer *, const R3q__Assign *);
uint64_t fz_job_open(struct fz_peer *, uint32_t);
size_t	 fz_work(struct fz_peer *);

#endif /* R3Q_FUZZ_MASTER_H */
