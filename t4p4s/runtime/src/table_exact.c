/* Exact-match tables: one rte_hash keyed by the key buffer, its data the
 * entry pointer. Lock-free readers (RW_CONCURRENCY_LF); with it the hash
 * does not recycle a deleted key's slot by itself: exact_remove() frees it
 * after an RCU grace period. EXT_TABLE lets a
 * table hold its full `size` (without it ~0.4% of inserts into a full
 * table fail on bucket collisions). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>

#include "rcu.h"
#include "tables.h"

int
exact_create(struct t4p4s_table *t)
{
	/* lcores read while the control thread writes */
	t->exact = table_hash_create(t, "exact",
				     T4P4S_KEY_BUFFER_SIZE(t->key_size),
				     RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF);
	return t->exact == NULL ? -ENOMEM : 0;
}

/* The record's key as the lcores' key buffers hold it: zero-padded to
 * T4P4S_KEY_BUFFER_SIZE. */
static const uint8_t *
hash_key(const struct t4p4s_table *t, const struct table_record *r,
	 uint8_t padded[T4P4S_EXACT_KEY_MIN])
{
	if (t->key_size >= T4P4S_EXACT_KEY_MIN)
		return r->match;
	memset(padded, 0, T4P4S_EXACT_KEY_MIN);
	memcpy(padded, r->match, t->key_size);
	return padded;
}

int
exact_insert(struct t4p4s_table *t, struct table_record *r)
{
	uint8_t padded[T4P4S_EXACT_KEY_MIN];
	const uint8_t *key = hash_key(t, r, padded);
	int ret = rte_hash_add_key_data(t->exact, key, r->entry);
	if (ret == -ENOSPC) {
		/* slots of deleted keys may still wait for their grace period */
		t4p4s_rcu_drain();
		ret = rte_hash_add_key_data(t->exact, key, r->entry);
	}
	return ret;
}

void
exact_replace(struct t4p4s_table *t, struct table_record *r)
{
	uint8_t padded[T4P4S_EXACT_KEY_MIN];
	/* an existing key: rte_hash swaps the data pointer atomically */
	rte_hash_add_key_data(t->exact, hash_key(t, r, padded), r->entry);
}

static void
release_position(void *hash, void *position)
{
	rte_hash_free_key_with_position(hash, (int32_t)(intptr_t)position);
}

int
exact_remove(struct t4p4s_table *t, struct table_record *r)
{
	uint8_t padded[T4P4S_EXACT_KEY_MIN];
	int32_t pos = rte_hash_del_key(t->exact, hash_key(t, r, padded));
	if (pos >= 0)
		t4p4s_rcu_defer(release_position, t->exact,
				(void *)(intptr_t)pos);
	return 0;
}

void
exact_free(struct t4p4s_table *t)
{
	rte_hash_free(t->exact);
}
