/*
 * How many CPUs this process may use: a worker that a batch system starts
 * runs as many execution threads as it was given, not as the machine has.
 */
#ifndef R3Q_CPUS_H
#define R3Q_CPUS_H

#define CPUS_MAX	4096

/* What the machine says; the strings as read (NULL: not there). */
struct cpus_probe {
	const char	*cp_slurm;	/* $SLURM_CPUS_ON_NODE */
	const char	*cp_slurm_task;	/* $SLURM_CPUS_PER_TASK */
	const char	*cp_cpu_max;	/* cgroup v2 cpu.max: "max 100000",
					   "200000 100000" */
	const char	*cp_cfs_quota;	/* cgroup v1 cpu.cfs_quota_us: -1, or */
	const char	*cp_cfs_period;	/* ... over cpu.cfs_period_us */
	long		 cp_affinity;	/* CPUs in our affinity mask, 0: ? */
	long		 cp_online;	/* online CPUs, 0: ? */
};

unsigned	 cpus_decide(const struct cpus_probe *, const char **);
long		 cpus_quota(const char *, const char *, const char *);
unsigned	 cpus_detect(const char **);

#endif /* R3Q_CPUS_H */
