/*
 * The CPUs a worker uses by default: the smallest of what binds it.  The
 * CPUs of our affinity mask (a cpuset, taskset, Slurm's task binding,
 * HTCondor's or PBS's), which are the online CPUs when nothing binds us;
 * a CPU quota of the cgroup we run in (cgroup v2 cpu.max, v1 cfs_quota_us
 * over cfs_period_us, rounded up, the smallest along the path to the
 * root); and under Slurm what the allocation gave this node
 * (SLURM_CPUS_ON_NODE) and each task (SLURM_CPUS_PER_TASK).  Slurm's
 * counts alone are not enough: two tasks of one step on a node (srun -n2
 * -c1) each see the node's count, and a count above the mask would run
 * more threads than the CPUs they share.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"

/* A whole number from 1 to max, the whole of s; else 0. */
static long
cpus_number(const char *s, long max)
{
	char	*end;
	long	 v;

	if (s == NULL)
		return (0);
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return (0);
	errno = 0;
	v = strtol(s, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end != '\0' || errno != 0 || v < 1 || v > max)
		return (0);
	return (v);
}

/*
 * The CPUs a quota allows, rounded up: from a v2 cpu.max line, or from v1
 * quota and period.  0: no quota (max, -1) or one not understood.
 */
long
cpus_quota(const char *cpu_max, const char *quota, const char *period)
{
	char	 q[32], p[32];
	long	 qv, pv;

	if (cpu_max != NULL) {
		if (sscanf(cpu_max, "%31s %31s", q, p) != 2 ||
		    strcmp(q, "max") == 0)
			return (0);
		qv = cpus_number(q, LONG_MAX / 2);
		pv = cpus_number(p, LONG_MAX / 2);
	} else {
		qv = cpus_number(quota, LONG_MAX / 2);	/* -1: none */
		pv = cpus_number(period, LONG_MAX / 2);
	}
	if (qv == 0 || pv == 0)
		return (0);
	return ((qv + pv - 1) / pv);
}

/*
 * The decision, from what was read; *why says what decided it.  Of equal
 * counts, Slurm's are named, the ones the user asked for.
 */
unsigned
cpus_decide(const struct cpus_probe *p, const char **why)
{
	long	 n, q;

	if (p->cp_affinity > 0) {
		n = p->cp_affinity;
		*why = "the affinity mask";
	} else if (p->cp_online > 0) {
		n = p->cp_online;
		*why = "the online CPUs";
	} else {
		n = 1;
		*why = "no CPU count found";
	}
	q = cpus_quota(p->cp_cpu_max, p->cp_cfs_quota, p->cp_cfs_period);
	if (q > 0 && q < n) {
		n = q;
		*why = "the cgroup's CPU quota";
	}
	if ((q = cpus_number(p->cp_slurm, CPUS_MAX)) > 0 && q <= n) {
		n = q;
		*why = "SLURM_CPUS_ON_NODE";
	}
	if ((q = cpus_number(p->cp_slurm_task, CPUS_MAX)) > 0 && q <= n) {
		n = q;
		*why = "SLURM_CPUS_PER_TASK";
	}
	return (n > CPUS_MAX ? CPUS_MAX : (unsigned)n);
}

/* The first line of a small file, in buf; NULL if it cannot be read. */
static const char *
cpus_read(const char *path, char *buf, size_t len)
{
	FILE	*f;
	char	*nl;

	if ((f = fopen(path, "re")) == NULL)
		return (NULL);
	if (fgets(buf, (int)len, f) == NULL) {
		fclose(f);
		return (NULL);
	}
	fclose(f);
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	return (buf);
}

/*
 * The smallest quota from the cgroup at path under mount up to the root
 * (a parent's quota binds its children); 0: none.  v2 when v1 is 0.
 */
static long
cpus_cgroup_walk(const char *mount, char *path, int v1)
{
	char	 f[PATH_MAX], a[64], b[64], *slash;
	long	 q, best = 0;

	for (;;) {
		if (v1) {
			snprintf(f, sizeof(f), "%s%s/cpu.cfs_quota_us", mount,
			    path);
			if (cpus_read(f, a, sizeof(a)) != NULL) {
				snprintf(f, sizeof(f), "%s%s/cpu.cfs_period_us",
				    mount, path);
				q = cpus_quota(NULL, a, cpus_read(f, b,
				    sizeof(b)));
				if (q > 0 && (best == 0 || q < best))
					best = q;
			}
		} else {
			snprintf(f, sizeof(f), "%s%s/cpu.max", mount, path);
			q = cpus_quota(cpus_read(f, a, sizeof(a)), NULL, NULL);
			if (q > 0 && (best == 0 || q < best))
				best = q;
		}
		if ((slash = strrchr(path, '/')) == NULL)
			break;
		*slash = '\0';		/* "/a/b" -> "/a" -> "" (the root) */
	}
	return (best);
}

/* Our cgroup's quota, v2 or v1, from /proc/self/cgroup; 0: none. */
static long
cpus_cgroup(void)
{
	FILE	*f;
	char	 line[PATH_MAX + 64], path[PATH_MAX], *c, *p, *nl;
	long	 q = 0, best = 0;
	int	 v1;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		/* "0::/path" (v2), "4:cpu,cpuacct:/path" (v1) */
		if ((c = strchr(line, ':')) == NULL ||
		    (p = strchr(c + 1, ':')) == NULL)
			continue;
		*p++ = '\0';
		c++;
		if (strcmp(line, "0") == 0 && *c == '\0')
			v1 = 0;
		else if (strcmp(c, "cpu") == 0 || strncmp(c, "cpu,", 4) == 0 ||
		    strstr(c, ",cpu,") != NULL || (strlen(c) > 4 &&
		    strcmp(c + strlen(c) - 4, ",cpu") == 0))
			v1 = 1;
		else
			continue;
		if (strcmp(p, "/") == 0)
			p = (char *)(uintptr_t)"";
		snprintf(path, sizeof(path), "%s", p);
		if (!v1)
			q = cpus_cgroup_walk("/sys/fs/cgroup", path, 0);
		else {
			q = cpus_cgroup_walk("/sys/fs/cgroup/cpu", path, 1);
			if (q == 0) {
				snprintf(path, sizeof(path), "%s", p);
				q = cpus_cgroup_walk("/sys/fs/cgroup/cpu,cpuacct",
				    path, 1);
			}
		}
		if (q > 0 && (best == 0 || q < best))
			best = q;
	}
	fclose(f);
	return (best);
}

/* The CPUs to use; *why says what decided it. */
unsigned
cpus_detect(const char **why)
{
	struct cpus_probe	 p;
	cpu_set_t		 set;
	char			 qbuf[32];
	long			 q;

	memset(&p, 0, sizeof(p));
	p.cp_slurm = getenv("SLURM_CPUS_ON_NODE");
	p.cp_slurm_task = getenv("SLURM_CPUS_PER_TASK");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		p.cp_affinity = CPU_COUNT(&set);
	p.cp_online = sysconf(_SC_NPROCESSORS_ONLN);
	if ((q = cpus_cgroup()) > 0) {
		/* Handed over as a v2 line of q whole CPUs. */
		snprintf(qbuf, sizeof(qbuf), "%ld 1", q);
		p.cp_cpu_max = qbuf;
	}
	return (cpus_decide(&p, why));
}
