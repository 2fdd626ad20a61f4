/*
 * The reference build of the scheduling core for test_sched_ref: the same
 * source with SCHED_REFERENCE, so that every walk over the workers with
 * room, with a free CPU or cooling down is the straightforward walk over
 * every worker (issue 23's O(N) scan, before the sets), and every public
 * name prefixed ref_ so that it links beside the real core.
 */
#define SCHED_REFERENCE 1
#define sched_balance_name	ref_sched_balance_name
#define sched_balance_parse	ref_sched_balance_parse
#define sched_batch_abort	ref_sched_batch_abort
#define sched_batch_add	ref_sched_batch_add
#define sched_batch_close	ref_sched_batch_close
#define sched_batch_open	ref_sched_batch_open
#define sched_deadline	ref_sched_deadline
#define sched_done	ref_sched_done
#define sched_done_timed	ref_sched_done_timed
#define sched_failed	ref_sched_failed
#define sched_free	ref_sched_free
#define sched_get_stats	ref_sched_get_stats
#define sched_kind_workers	ref_sched_kind_workers
#define sched_new	ref_sched_new
#define sched_next_action	ref_sched_next_action
#define sched_policy_list	ref_sched_policy_list
#define sched_policy_name	ref_sched_policy_name
#define sched_policy_parse	ref_sched_policy_parse
#define sched_progress	ref_sched_progress
#define sched_released	ref_sched_released
#define sched_set_balance	ref_sched_set_balance
#define sched_set_fault	ref_sched_set_fault
#define sched_started	ref_sched_started
#define sched_submit	ref_sched_submit
#define sched_task_cancel	ref_sched_task_cancel
#define sched_tick	ref_sched_tick
#define sched_topology_name	ref_sched_topology_name
#define sched_topology_parse	ref_sched_topology_parse
#define sched_vote	ref_sched_vote
#define sched_worker_estimate	ref_sched_worker_estimate
#define sched_worker_fault	ref_sched_worker_fault
#define sched_worker_join	ref_sched_worker_join
#define sched_worker_join_kinds	ref_sched_worker_join_kinds
#define sched_worker_join_group	ref_sched_worker_join_group
#define sched_worker_join_node	ref_sched_worker_join_node
#define sched_worker_kinds	ref_sched_worker_kinds
#define sched_worker_load	ref_sched_worker_load
#define sched_worker_lost	ref_sched_worker_lost
#define sched_worker_pause	ref_sched_worker_pause
#define sched_worker_drain	ref_sched_worker_drain
#define sched_handback	ref_sched_handback

#include "sched/sched.c"
#include "sched_api.h"

const struct sched_api sched_ref_api = SCHED_API_INIT;
