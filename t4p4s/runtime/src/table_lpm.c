/* Longest-prefix-match tables with one key field of up to 32 bits:
 * rte_lpm maps a prefix to a next-hop index into `slots`, which holds the
 * entry (replaced by pointer swap on modify). The field is left-aligned
 * into 32 bits, so a prefix of a narrower field keeps its length. rte_lpm
 * has no /0 rule: the zero-length prefix is kept apart in `zero_prefix`.
 * rte_lpm reclaims its tbl8 groups through our RCU variable; a deleted
 * entry's slot index is reused only after a grace period. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_lpm.h>
#include <rte_malloc.h>

#include <t4p4s/bits.h>

#include "rcu.h"
#include "runtime.h"
#include "tables.h"

static uint32_t
lpm_ip(const struct t4p4s_table *t, const uint8_t *key)
{
	return (uint32_t)(t4p4s_load_be64(key, t->key_size) <<
			  (32 - t->lpm.width));
}

int
lpm_create(struct t4p4s_table *t)
{
	char name[RTE_LPM_NAMESIZE];
	uint32_t size = RTE_MAX(t->desc->size, 1u);
	snprintf(name, sizeof(name), "t4p4s_lpm%u", t->index);
	struct rte_lpm_config config = {
		.max_rules = size,
		.number_tbl8s = RTE_MIN(RTE_MAX(size, 16u), 65536u),
	};
	t->lpm.width = t->desc->keys[0].bitwidth;
	t->lpm.lpm = rte_lpm_create(name, (int)rte_socket_id(), &config);
	t->lpm.slots = rte_zmalloc(NULL, size * sizeof(*t->lpm.slots), 0);
	t->free_lpm_slots = malloc(size * sizeof(*t->free_lpm_slots));
	if (t->lpm.lpm == NULL || t->lpm.slots == NULL ||
	    t->free_lpm_slots == NULL)
		return -ENOMEM;
	struct rte_lpm_rcu_config rcu = { .v = t4p4s_rt.rcu,
					  .mode = RTE_LPM_QSBR_MODE_DQ };
	if (rte_lpm_rcu_qsbr_add(t->lpm.lpm, &rcu) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		t->free_lpm_slots[i] = size - 1 - i;
	t->n_free_lpm_slots = size;
	return 0;
}

int
lpm_insert(struct t4p4s_table *t, struct table_record *r)
{
	if (r->prefix_len == 0) {
		publish_entry(&t->lpm.zero_prefix, r->entry);
		return 0;
	}
	if (t->n_free_lpm_slots == 0) {
		t4p4s_rcu_drain();
		if (t->n_free_lpm_slots == 0)
			return -ENOSPC;
	}
	r->slot = t->free_lpm_slots[--t->n_free_lpm_slots];
	publish_entry(&t->lpm.slots[r->slot], r->entry);
	int ret = rte_lpm_add(t->lpm.lpm, lpm_ip(t, r->match),
			      (uint8_t)r->prefix_len, r->slot);
	if (ret != 0) {
		publish_entry(&t->lpm.slots[r->slot], NULL);
		t->free_lpm_slots[t->n_free_lpm_slots++] = r->slot;
		return ret == -ENOSPC ? -ENOSPC : -EINVAL;
	}
	return 0;
}

void
lpm_replace(struct t4p4s_table *t, struct table_record *r)
{
	if (r->prefix_len == 0)
		publish_entry(&t->lpm.zero_prefix, r->entry);
	else
		publish_entry(&t->lpm.slots[r->slot], r->entry);
}

int
lpm_remove(struct t4p4s_table *t, struct table_record *r)
{
	if (r->prefix_len == 0) {
		publish_entry(&t->lpm.zero_prefix, NULL);
		return 0;
	}
	/* The slot keeps the old entry until the grace period ends, so a
	 * reader that already got this next hop still sees a valid entry. */
	rte_lpm_delete(t->lpm.lpm, lpm_ip(t, r->match), (uint8_t)r->prefix_len);
	return 0;
}

void
lpm_release_slot(struct t4p4s_table *t, struct table_record *r)
{
	if (r->prefix_len == 0)
		return;
	publish_entry(&t->lpm.slots[r->slot], NULL);
	t->free_lpm_slots[t->n_free_lpm_slots++] = r->slot;
}

void
lpm_free(struct t4p4s_table *t)
{
	rte_lpm_free(t->lpm.lpm);
	rte_free(t->lpm.slots);
	free(t->free_lpm_slots);
}
