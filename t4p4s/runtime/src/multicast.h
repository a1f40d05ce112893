/* Multicast groups of the packet replication engine: group id -> its
 * replicas, (egress port, instance) pairs in the order the control plane
 * gave them.
 *
 * A group is an immutable object: the control thread (under the control
 * mutex) builds a new one, publishes its pointer with a release store and
 * hands the old one to RCU (rcu.h), as table entries are; an lcore loads
 * the pointer and may use the group until its next quiescent report (the
 * end of its poll round), so the replicas of one packet are all sent from
 * one consistent group. */
#ifndef T4P4S_MULTICAST_H
#define T4P4S_MULTICAST_H

#include <stdint.h>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

/* Publish `group`'s replicas (replacing any): 0, or -ENOMEM. The caller
 * has validated everything. */
int t4p4s_mcast_group_publish(uint32_t group,
			      const struct t4p4s_ctl_mcast_replica *replicas,
			      uint32_t n, const void *metadata,
			      uint32_t metadata_len);
/* Unpublish `group` (-ENOENT if it has none). */
int t4p4s_mcast_group_remove(uint32_t group);
/* The published group, for the control thread (under the control mutex,
 * so the object outlives the caller's use), or NULL. */
const struct t4p4s_mcast_group *t4p4s_mcast_group_get(uint32_t group);
/* Every group removed (the pipeline's initial state). */
void t4p4s_mcast_groups_clear(void);

#endif
