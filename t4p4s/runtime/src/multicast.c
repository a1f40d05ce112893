#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "multicast.h"
#include "rcu.h"
#include "runtime.h"

/* Indexed by group id; 0 is never set (mcast_grp 0: no multicast). */
static struct t4p4s_mcast_group *groups[T4P4S_CTL_MAX_MCAST_GROUPS];

const struct t4p4s_mcast_group *
t4p4s_mcast_group(struct t4p4s_lcore *lc, uint32_t group)
{
	if (unlikely(group >= T4P4S_CTL_MAX_MCAST_GROUPS))
		return NULL;
	return __atomic_load_n(&groups[group], __ATOMIC_ACQUIRE);
}

static void
free_group(void *group, void *unused)
{
	free(group);
}

static void
replace(uint32_t group, struct t4p4s_mcast_group *g)
{
	struct t4p4s_mcast_group *old = groups[group];
	__atomic_store_n(&groups[group], g, __ATOMIC_RELEASE);
	if (old != NULL)
		t4p4s_rcu_defer(free_group, old, NULL);
}

int
t4p4s_mcast_group_publish(uint32_t group,
			  const struct t4p4s_ctl_mcast_replica *replicas,
			  uint32_t n, const void *metadata, uint32_t metadata_len)
{
	/* replicas and metadata in one allocation: one free, one cache walk */
	size_t size = sizeof(struct t4p4s_mcast_group) +
		      (size_t)n * sizeof(struct t4p4s_mcast_replica) + metadata_len;
	struct t4p4s_mcast_group *g = malloc(size);
	if (g == NULL)
		return -ENOMEM;
	g->n_replicas = n;
	for (uint32_t i = 0; i < n; i++) {
		g->replicas[i].port = replicas[i].port;
		g->replicas[i].rid = replicas[i].instance;
	}
	uint8_t *md = (uint8_t *)&g->replicas[n];
	if (metadata_len != 0)
		memcpy(md, metadata, metadata_len);
	g->metadata = md;
	g->metadata_len = metadata_len;
	replace(group, g);
	return 0;
}

int
t4p4s_mcast_group_remove(uint32_t group)
{
	if (group >= T4P4S_CTL_MAX_MCAST_GROUPS || groups[group] == NULL)
		return -ENOENT;
	replace(group, NULL);
	return 0;
}

const struct t4p4s_mcast_group *
t4p4s_mcast_group_get(uint32_t group)
{
	return group < T4P4S_CTL_MAX_MCAST_GROUPS ? groups[group] : NULL;
}

void
t4p4s_mcast_groups_clear(void)
{
	for (uint32_t g = 0; g < T4P4S_CTL_MAX_MCAST_GROUPS; g++)
		if (groups[g] != NULL)
			replace(g, NULL);
}
