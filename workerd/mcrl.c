/*
 * The master's CRLs.  A masterd that signs its CRL (ca_key: r3qctl certs
 * revoke) sends the CRLs it is in force with to each worker and relay, in
 * its Welcome and again in a CrlPush whenever they change.  We check each
 * against our CA (a CRL that another CA signed, or one older than the one
 * we hold, is refused with a line saying why), keep them in
 * state_dir/master-crl.pem (mode 0644, through a temporary file and a
 * rename) so that a restart refuses what they revoke before the master is
 * reached, and merge them with our own crl file for the relay listener
 * and the peer links: a certificate either revokes is refused at the
 * handshake, and those already connected are dropped.
 *
 * Only a worker with relay_listen or peer_listen keeps them: nothing else
 * here checks a certificate the master did not.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tls.h"
#include "util.h"
#include "workerd.h"

#define MCRL_FILE	"master-crl.pem"

static struct {
	const struct workerd_config	*m_conf;
	struct tls_crl			*m_crl;		/* NULL: none yet */
	char				 m_path[CONF_STRMAX + 32];
	int				 m_on;
} mc;

/* Does this worker check certificates that the master's CRLs concern? */
static int
mcrl_wanted(void)
{
	return (relay_enabled() || peer_address() != NULL);
}

/*
 * At start, after the relay and peer listeners: take the CRLs kept from
 * the master, if any, and put them in force.
 */
void
mcrl_start(const struct workerd_config *conf)
{
	struct tls_crl	*crl;
	struct stat	 st;
	char		 err[1024];

	mc.m_conf = conf;
	snprintf(mc.m_path, sizeof(mc.m_path), "%s/%s", conf->state_dir,
	    MCRL_FILE);
	if (!mcrl_wanted())
		return;
	mc.m_on = 1;
	if (stat(mc.m_path, &st) == -1)
		return;
	if ((crl = tls_crl_load(mc.m_path, conf->ca, err,
	    sizeof(err))) == NULL) {
		log_warnx("the master's CRL kept: %s; not used", err);
		return;
	}
	mc.m_crl = crl;
	log_info("%s: the master's CRL, %zu certificates revoked", mc.m_path,
	    tls_crl_entries(crl));
	relay_crl_changed();
	peer_crl_changed();
}

/*
 * Our crl file's CRLs (crl, may be NULL) and the master's, as one list
 * named for log lines; NULL if neither.
 */
static struct tls_crl *
mcrl_merge(const struct tls_crl *crl, const char *file)
{
	char	 name[2 * CONF_STRMAX + 64];

	if (mc.m_crl == NULL)
		return (tls_crl_merge(crl, NULL, file));
	if (crl == NULL)
		return (tls_crl_merge(mc.m_crl, NULL, mc.m_path));
	snprintf(name, sizeof(name), "%s and %s", file, mc.m_path);
	return (tls_crl_merge(crl, mc.m_crl, name));
}

/*
 * The CRLs a listener of ours checks: our crl file's (conf->crl) and the
 * master's, in *crlp (NULL: neither).  -1 with err.
 */
int
mcrl_load(const struct workerd_config *conf, struct tls_crl **crlp,
    char *err, size_t errlen)
{
	struct tls_crl	*file = NULL;

	*crlp = NULL;
	if (tls_crl_configured(conf->crl) && (file = tls_crl_load(conf->crl,
	    conf->ca, err, errlen)) == NULL)
		return (-1);
	if ((file != NULL || mc.m_crl != NULL) &&
	    (*crlp = mcrl_merge(file, conf->crl)) == NULL) {
		tls_crl_free(file);
		snprintf(err, errlen, "out of memory for the CRLs");
		return (-1);
	}
	tls_crl_free(file);
	return (0);
}

/* Keep len bytes of PEM in state_dir, through a temporary file. */
static int
mcrl_store(const uint8_t *p, size_t len, char *err, size_t errlen)
{
	char	 tmp[sizeof(mc.m_path) + 8];
	ssize_t	 n;
	size_t	 off = 0;
	int	 fd;

	snprintf(tmp, sizeof(tmp), "%s.new", mc.m_path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		snprintf(err, errlen, "%.900s: %s", tmp, strerror(errno));
		return (-1);
	}
	while (off < len) {
		if ((n = write(fd, p + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%.900s: %s", tmp, strerror(errno));
			goto fail;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, 0644) == -1 || fsync(fd) == -1) {
		snprintf(err, errlen, "%.900s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd) == -1) {
		fd = -1;
		snprintf(err, errlen, "%.900s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, mc.m_path) == -1) {
		snprintf(err, errlen, "%.900s: %s", mc.m_path,
		    strerror(errno));
		goto fail;
	}
	return (0);
fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
	return (-1);
}

/*
 * The master (peer: its address, for log lines) sent the CRLs it is in
 * force with, len bytes of PEM: check, keep and put in force those that
 * are new.  A CRL that does not verify under our CA, or is older than
 * ours, is refused with a line and changes nothing.
 */
void
mcrl_receive(const uint8_t *p, size_t len, const char *peer)
{
	struct tls_crl	*crl;
	char		 err[1024], name[128];

	if (!mc.m_on || len == 0)
		return;
	snprintf(name, sizeof(name), "the CRL from the master %s", peer);
	if ((crl = tls_crl_load_mem(p, len, name, mc.m_conf->ca, err,
	    sizeof(err))) == NULL) {
		log_warnx("refused %s", err);
		return;
	}
	if (tls_crl_same(crl, mc.m_crl)) {
		tls_crl_free(crl);
		return;
	}
	if (tls_crl_older(crl, mc.m_crl, err, sizeof(err))) {
		log_warnx("refused %s: %s; keeping %s", name, err,
		    mc.m_path);
		tls_crl_free(crl);
		return;
	}
	if (mcrl_store(p, len, err, sizeof(err)) == -1)
		log_warnx("cannot keep %s: %s; it is in force until "
		    "workerd stops", name, err);
	tls_crl_free(mc.m_crl);
	mc.m_crl = crl;
	log_info("%s: %zu certificates revoked; in force", name,
	    tls_crl_entries(crl));
	relay_crl_changed();
	peer_crl_changed();
}

void
mcrl_stop(void)
{
	tls_crl_free(mc.m_crl);
	mc.m_crl = NULL;
	mc.m_on = 0;
}
