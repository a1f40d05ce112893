#include <string.h>

#include <rte_cycles.h>

#include "governor.h"
#include "runtime.h"

#define NAP_US 100

int
t4p4s_governor_parse(const char *name, enum t4p4s_governor_policy *out)
{
	if (strcmp(name, "busy") == 0)
		*out = T4P4S_GOVERNOR_BUSY;
	else if (strcmp(name, "nap") == 0)
		*out = T4P4S_GOVERNOR_NAP;
	else
		return -1;
	return 0;
}

void
t4p4s_governor_init(struct t4p4s_governor *g,
		    enum t4p4s_governor_policy policy)
{
	memset(g, 0, sizeof(*g));
	g->policy = policy;
}

void
t4p4s_governor_nap(struct t4p4s_lcore *lc)
{
	/* Offline while asleep, so control-plane writers waiting for an RCU
	 * grace period do not wait for our nap to end. */
	rte_rcu_qsbr_thread_offline(t4p4s_rt.rcu, lc->index);
	rte_delay_us_sleep(NAP_US);
	rte_rcu_qsbr_thread_online(t4p4s_rt.rcu, lc->index);
	lc->governor.naps++;
	/* keep napping on every following empty round */
	lc->governor.empty_rounds = T4P4S_NAP_AFTER_EMPTY_ROUNDS;
}
