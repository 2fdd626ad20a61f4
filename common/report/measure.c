/*
 * The paper's measurements (doc/algorithms.md §1.6), as masterd records
 * them for every generation of a job and r3q-sim prints them.
 *
 * A generation runs from its submission (t_submit) to its last result
 * (t_done).  The synchronisation wait runs from the core's t_sync, when
 * the master queue is empty and a worker slot first waits (under RR and
 * R3Q, when the first extra copy is sent), to the last result; none if
 * the core never saw one.  Communication time is, per worker, the part of
 * the window before t_sync (or t_done) in which its CPUs were not
 * executing a task, averaged over the workers connected when the
 * generation ends: executions are clipped to the window and summed per
 * worker, divided by its CPUs, and what is left of the window is its
 * communication.  Computation is what remains of the total.
 *
 * The lower bound LB of the ideal parallel time is the job's reference
 * work over the sum of its workers' speed ratios (speed x CPUs), the sum
 * averaged over the job's generations weighted by their time, as workers
 * may come and go; the parallel efficiency is LB over the job's elapsed
 * time E (Matsuura et al., "A Grid Scheduling for an Evolutionary
 * Computation Using R3Q": parallel efficiency >= LB / E).
 */
#include <stdint.h>
#include <stdlib.h>

#include "report/measure.h"

/* The figures of one generation, from the core's report and the executions. */
int
measure_gen(const struct sched_batch_report *r,
    const struct measure_span *spans, size_t nspans,
    const struct measure_worker *w, size_t nworkers, struct measure *m)
{
	const struct measure_span	*x;
	uint64_t			*busyv, end, win, busy, comm = 0, a, b;
	double				 speed = 0;
	uint32_t			 nw = 0;
	size_t				 i;

	/* One pass over the executions, by worker id. */
	if ((busyv = calloc(nworkers + 1, sizeof(*busyv))) == NULL)
		return (-1);
	m->m_total = r->t_done - r->t_submit;
	m->m_sync = r->t_sync ? r->t_done - r->t_sync : 0;
	m->m_replicas = r->replicas;
	m->m_killed_held = r->cancelled_held;
	m->m_killed_running = r->cancelled_running;
	end = r->t_sync ? r->t_sync : r->t_done;
	win = end - r->t_submit;
	for (i = 0; i < nspans; i++) {
		x = &spans[i];
		if (x->ms_wid >= nworkers)
			continue;
		a = x->ms_start > r->t_submit ? x->ms_start : r->t_submit;
		b = x->ms_end < end ? x->ms_end : end;
		if (b > a)
			busyv[x->ms_wid] += b - a;
	}
	for (i = 0; i < nworkers; i++) {
		if (w[i].mw_cpus == 0)
			continue;
		busy = busyv[i] / w[i].mw_cpus;
		comm += busy < win ? win - busy : 0;
		speed += w[i].mw_speed * w[i].mw_cpus;
		nw++;
	}
	free(busyv);
	m->m_comm = nw ? comm / nw : 0;
	m->m_compute = m->m_total > m->m_sync + m->m_comm ?
	    m->m_total - m->m_sync - m->m_comm : 0;
	m->m_workers = nw;
	m->m_speed = speed;
	m->m_speed_time = speed * (double)m->m_total;
	return (0);
}

/* LB and LB / E of a job from its totals. */
void
measure_efficiency(double work_ms, double speed_time, uint64_t total_ns,
    uint64_t elapsed_ns, struct measure_eff *e)
{
	e->me_speed_sum = 0;
	e->me_lower_bound_s = 0;
	e->me_efficiency = 0;
	if (total_ns > 0)
		e->me_speed_sum = speed_time / (double)total_ns;
	if (work_ms > 0 && e->me_speed_sum > 0) {
		e->me_lower_bound_s = work_ms / 1000.0 / e->me_speed_sum;
		if (elapsed_ns > 0)
			e->me_efficiency = e->me_lower_bound_s /
			    ((double)elapsed_ns / 1e9);
	}
}
