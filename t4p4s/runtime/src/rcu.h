/* Deferred reclamation: control-plane writers hand memory that lcores may
 * still be reading to t4p4s_rcu_defer(); it is released after every lcore
 * reported a quiescent state (rte_rcu_qsbr, one report per poll round). */
#ifndef T4P4S_RCU_H
#define T4P4S_RCU_H

#include <stdint.h>

typedef void (*t4p4s_reclaim_fn)(void *a, void *b);

int t4p4s_rcu_init(unsigned n_workers);
void t4p4s_rcu_fini(void);
/* Control thread only (under the control mutex). */
void t4p4s_rcu_defer(t4p4s_reclaim_fn fn, void *a, void *b);
/* Release everything whose grace period has passed. */
void t4p4s_rcu_reclaim(void);
/* Wait for a full grace period and release everything deferred so far. */
void t4p4s_rcu_drain(void);

#endif
