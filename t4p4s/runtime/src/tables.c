/* Tables: lookup dispatch and entry management.
 *
 * What lcores share and how it stays consistent:
 *   - Table contents are written by one control thread at a time (the
 *     control mutex in control_api.c serializes the --entries loader, the
 *     socket and the P4Runtime server). Lcores never lock: they read entry
 *     pointers with acquire loads; writers publish complete entries with a
 *     release store (exact: rte_hash RW_CONCURRENCY_LF; LPM: a next-hop
 *     slot; priority: a whole new sorted array). An entry is never changed
 *     in place: modify installs a new one. Anything a reader might still
 *     hold (entries, records, arrays, hash key slots, LPM slots, direct
 *     counter slots) is released only after an rte_rcu_qsbr grace period:
 *     every lcore reports a quiescent state once per poll round.
 *   - Registers (registers.c) are shared by all lcores: each cell read or
 *     write is one relaxed 64-bit atomic, so no torn values. A P4
 *     read-modify-write (`r.read(x, i); r.write(i, x + 1)`) is atomic only
 *     within one lcore: the traffic of one flow must stay on one lcore,
 *     which RSS or the NIC's VF distributor guarantee.
 *   - Counters (counters.c) have one slot array per lcore, plain adds, and
 *     are summed when the control plane reads them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "counters.h"
#include "rcu.h"
#include "tables.h"

struct t4p4s_table *t4p4s_tables[T4P4S_MAX_TABLES];

void
t4p4s_table_lookup_burst(struct t4p4s_table *t, const uint8_t *const *keys,
			 unsigned n, const struct t4p4s_entry **entries)
{
	if (t->kind != TABLE_EXACT || n == 0) {
		for (unsigned i = 0; i < n; i++)
			entries[i] = t4p4s_table_lookup(t, keys[i]);
		return;
	}
	const struct t4p4s_entry *fallback =
		__atomic_load_n(&t->default_entry, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&t->empty, __ATOMIC_ACQUIRE)) {
		for (unsigned i = 0; i < n; i++)
			entries[i] = fallback;
		return;
	}
	uint64_t hits = 0;
	rte_hash_lookup_bulk_data(t->exact, (const void **)(uintptr_t)keys, n,
				  &hits, (void **)entries);
	for (unsigned i = 0; i < n; i++) {
		if (hits & (UINT64_C(1) << i))
			rte_prefetch0(entries[i]);
		else
			entries[i] = fallback;
	}
}

const struct t4p4s_entry *
t4p4s_table_lookup(struct t4p4s_table *t, const uint8_t *key)
{
	const struct t4p4s_entry *e = NULL;
	if (__atomic_load_n(&t->empty, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&t->default_entry, __ATOMIC_ACQUIRE);
	switch (t->kind) {
	case TABLE_EXACT: {
		void *data;
		if (rte_hash_lookup_data(t->exact, key, &data) >= 0)
			e = data;
		break;
	}
	case TABLE_LPM: {
		uint32_t next_hop;
		uint32_t ip = (uint32_t)(t4p4s_load_be64(key, t->key_size) <<
					 (32 - t->lpm.width));
		if (rte_lpm_lookup(t->lpm.lpm, ip, &next_hop) == 0)
			e = load_entry(&t->lpm.slots[next_hop]);
		if (e == NULL)
			e = load_entry(&t->lpm.zero_prefix);
		break;
	}
	case TABLE_PRIORITY:
		e = priority_lookup(t, key);
		break;
	case TABLE_KEYLESS:
		break;
	}
	if (likely(e != NULL))
		return e;
	return __atomic_load_n(&t->default_entry, __ATOMIC_ACQUIRE);
}

static enum table_kind
kind_of(const struct t4p4s_table_desc *d)
{
	if (d->n_keys == 0)
		return TABLE_KEYLESS;
	if (d->n_keys == 1 && d->keys[0].match_kind == T4P4S_MATCH_LPM &&
	    d->keys[0].bitwidth <= 32)
		return TABLE_LPM;
	for (uint16_t k = 0; k < d->n_keys; k++)
		if (d->keys[k].match_kind != T4P4S_MATCH_EXACT)
			return TABLE_PRIORITY;
	return TABLE_EXACT;
}

static bool
needs_priority(const struct t4p4s_table_desc *d)
{
	for (uint16_t k = 0; k < d->n_keys; k++) {
		enum t4p4s_match_kind m = d->keys[k].match_kind;
		if (m == T4P4S_MATCH_TERNARY || m == T4P4S_MATCH_RANGE ||
		    m == T4P4S_MATCH_OPTIONAL)
			return true;
	}
	return false;
}

struct rte_hash *
table_hash_create(const struct t4p4s_table *t, const char *prefix,
		  uint32_t key_len, uint8_t extra_flags)
{
	char name[RTE_HASH_NAMESIZE];
	snprintf(name, sizeof(name), "t4p4s_%s%u", prefix, t->index);
	struct rte_hash_parameters params = {
		.name = name,
		.entries = RTE_MAX(t->desc->size, 8u),
		.key_len = key_len,
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		/* a full bucket spills into the extension table, so a table
		 * takes all of its `size` entries */
		.extra_flag = extra_flags | RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	return rte_hash_create(&params);
}

static int
records_create(struct t4p4s_table *t)
{
	/* written and read by the control thread only: no reader concurrency */
	t->records = table_hash_create(t, "rec", (uint32_t)table_match_size(t), 0);
	return t->records == NULL ? -ENOMEM : 0;
}

static int
counter_slots_create(struct t4p4s_table *t)
{
	const struct t4p4s_table_desc *d = t->desc;
	if (d->direct_counter < 0)
		return 0;
	t->direct_counter = t4p4s_counters[d->direct_counter];
	uint32_t n = RTE_MIN(d->size,
			     t4p4s_program.counters[d->direct_counter].size);
	t->free_counter_slots = malloc((n ? n : 1) * sizeof(uint32_t));
	if (t->free_counter_slots == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		t->free_counter_slots[i] = n - 1 - i;
	t->n_free_counter_slots = n;
	return 0;
}

static int
table_create(uint16_t index)
{
	const struct t4p4s_table_desc *d = &t4p4s_program.tables[index];
	struct t4p4s_table *t = rte_zmalloc(NULL, sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t4p4s_tables[index] = t;
	t->desc = d;
	t->index = index;
	t->kind = kind_of(d);
	t->key_size = d->key_size;
	t->needs_priority = needs_priority(d);
	t->empty = true;
	t->entry_size = sizeof(struct t4p4s_entry) + d->data_size;

	const struct t4p4s_table_action *da = &d->actions[d->default_action];
	struct t4p4s_entry *def = table_entry_new(
		t, d->default_action, d->default_data,
		t4p4s_program.actions[da->action].data_size);
	if (def == NULL)
		return -ENOMEM;
	def->hit = false;
	t->default_entry = def;

	int ret = counter_slots_create(t);
	if (ret == 0 && t->kind != TABLE_KEYLESS)
		ret = records_create(t);
	if (ret != 0)
		return ret;
	switch (t->kind) {
	case TABLE_EXACT:
		return exact_create(t);
	case TABLE_LPM:
		return lpm_create(t);
	case TABLE_PRIORITY:
		return priority_create(t);
	case TABLE_KEYLESS:
		return 0;
	}
	return 0;
}

int
t4p4s_tables_init(void)
{
	if (t4p4s_program.n_tables > T4P4S_MAX_TABLES)
		return -E2BIG;
	for (uint16_t i = 0; i < t4p4s_program.n_tables; i++) {
		int ret = table_create(i);
		if (ret != 0)
			return ret;
	}
	return 0;
}

struct t4p4s_entry *
table_entry_new(struct t4p4s_table *t, uint16_t table_action,
		const uint8_t *data, size_t data_len)
{
	struct t4p4s_entry *e = rte_zmalloc(NULL, t->entry_size, 8);
	if (e == NULL)
		return NULL;
	e->action = table_action;
	e->hit = true;
	e->counter_slot = UINT32_MAX;
	if (data != NULL && data_len > 0)
		memcpy(e->data, data, RTE_MIN(data_len, (size_t)t->desc->data_size));
	return e;
}

static void
entry_release(void *entry, void *unused __rte_unused)
{
	rte_free(entry);
}

static void
record_release(void *table, void *record)
{
	struct t4p4s_table *t = table;
	struct table_record *r = record;
	if (t->kind == TABLE_LPM)
		lpm_release_slot(t, r);
	if (r->entry->counter_slot != UINT32_MAX)
		t->free_counter_slots[t->n_free_counter_slots++] =
			r->entry->counter_slot;
	rte_free(r->entry);
	free(r);
}

static uint16_t
lpm_prefix_len(const struct t4p4s_table *t, const uint8_t *match)
{
	const uint8_t *mask = match + t->key_size;
	uint16_t len = 0;
	for (uint16_t k = 0; k < t->desc->n_keys; k++) {
		const struct t4p4s_key_field_desc *f = &t->desc->keys[k];
		if (f->match_kind != T4P4S_MATCH_LPM)
			continue;
		for (unsigned i = 0; i < (f->bitwidth + 7u) / 8u; i++)
			len += (uint16_t)__builtin_popcount(mask[f->offset + i]);
	}
	return len;
}

struct table_record *
table_find(struct t4p4s_table *t, const uint8_t *match)
{
	void *data;
	if (t->records == NULL ||
	    rte_hash_lookup_data(t->records, match, &data) < 0)
		return NULL;
	return data;
}

int
table_insert(struct t4p4s_table *t, const uint8_t *match,
	     struct t4p4s_entry *e)
{
	if (table_find(t, match) != NULL)
		return -EEXIST;
	if (t->n_entries >= t->desc->size)
		return -ENOSPC;
	struct table_record *r = calloc(1, sizeof(*r) + table_match_size(t));
	if (r == NULL)
		return -ENOMEM;
	memcpy(r->match, match, table_match_size(t));
	memcpy(&r->priority, match + 2 * t->key_size, sizeof(r->priority));
	r->prefix_len = lpm_prefix_len(t, match);
	r->entry = e;
	if (t->direct_counter != NULL) {
		if (t->n_free_counter_slots == 0)
			t4p4s_rcu_drain();
		if (t->n_free_counter_slots == 0) {
			free(r);
			return -ENOSPC;
		}
		e->counter_slot =
			t->free_counter_slots[--t->n_free_counter_slots];
		t4p4s_counter_clear_slot(t->direct_counter, e->counter_slot);
	}
	int ret = rte_hash_add_key_data(t->records, r->match, r);
	if (ret == 0) {
		switch (t->kind) {
		case TABLE_EXACT:
			ret = exact_insert(t, r);
			break;
		case TABLE_LPM:
			ret = lpm_insert(t, r);
			break;
		case TABLE_PRIORITY:
			ret = priority_insert(t, r);
			break;
		case TABLE_KEYLESS:
			ret = -EINVAL;
			break;
		}
		if (ret != 0)
			rte_hash_del_key(t->records, r->match);
	}
	if (ret != 0) {
		if (e->counter_slot != UINT32_MAX)
			t->free_counter_slots[t->n_free_counter_slots++] =
				e->counter_slot;
		e->counter_slot = UINT32_MAX;
		free(r);
		return ret;
	}
	t->n_entries++;
	/* after the entry is in the lookup structure: an lcore that sees the
	 * table non-empty finds it */
	__atomic_store_n(&t->empty, false, __ATOMIC_RELEASE);
	t4p4s_rcu_reclaim();
	return 0;
}

int
table_modify(struct t4p4s_table *t, const uint8_t *match,
	     struct t4p4s_entry *e)
{
	struct table_record *r = table_find(t, match);
	if (r == NULL)
		return -ENOENT;
	struct t4p4s_entry *old = r->entry;
	e->counter_slot = old->counter_slot;
	publish_entry(&r->entry, e);
	switch (t->kind) {
	case TABLE_EXACT:
		exact_replace(t, r);
		break;
	case TABLE_LPM:
		lpm_replace(t, r);
		break;
	case TABLE_PRIORITY:
		priority_replace(t, r);
		break;
	case TABLE_KEYLESS:
		break;
	}
	t4p4s_rcu_defer(entry_release, old, NULL);
	return 0;
}

static int
record_delete(struct t4p4s_table *t, struct table_record *r)
{
	int ret = 0;
	switch (t->kind) {
	case TABLE_EXACT:
		ret = exact_remove(t, r);
		break;
	case TABLE_LPM:
		ret = lpm_remove(t, r);
		break;
	case TABLE_PRIORITY:
		ret = priority_remove(t, r);
		break;
	case TABLE_KEYLESS:
		break;
	}
	if (ret != 0)
		return ret;
	rte_hash_del_key(t->records, r->match);
	t->n_entries--;
	if (t->n_entries == 0)
		__atomic_store_n(&t->empty, true, __ATOMIC_RELEASE);
	t4p4s_rcu_defer(record_release, t, r);
	return 0;
}

int
table_delete(struct t4p4s_table *t, const uint8_t *match)
{
	struct table_record *r = table_find(t, match);
	return r == NULL ? -ENOENT : record_delete(t, r);
}

int
table_clear(struct t4p4s_table *t)
{
	if (t->records == NULL)
		return 0;
	/* deleting while iterating would skip keys: collect the records first
	 * (restarting the iteration after each delete is quadratic) */
	struct table_record **records =
		malloc((t->n_entries ? t->n_entries : 1) * sizeof(*records));
	if (records == NULL)
		return -ENOMEM;
	uint32_t n = 0, next = 0;
	const void *key;
	void *data;
	while (n < t->n_entries &&
	       rte_hash_iterate(t->records, &key, &data, &next) >= 0)
		records[n++] = data;
	int ret = 0;
	for (uint32_t i = 0; i < n && ret == 0; i++)
		ret = record_delete(t, records[i]);
	free(records);
	return ret;
}

void
table_set_default(struct t4p4s_table *t, struct t4p4s_entry *e)
{
	struct t4p4s_entry *old = (struct t4p4s_entry *)t->default_entry;
	e->hit = false;
	e->counter_slot = UINT32_MAX;
	__atomic_store_n(&t->default_entry, e, __ATOMIC_RELEASE);
	t4p4s_rcu_defer(entry_release, old, NULL);
}

int
table_iterate(struct t4p4s_table *t,
	      int (*fn)(void *arg, const struct table_record *r), void *arg)
{
	if (t->records == NULL)
		return 0;
	const void *key;
	void *data;
	uint32_t next = 0;
	while (rte_hash_iterate(t->records, &key, &data, &next) >= 0) {
		int ret = fn(arg, data);
		if (ret != 0)
			return ret;
	}
	return 0;
}

void
t4p4s_tables_fini(void)
{
	for (uint16_t i = 0; i < t4p4s_program.n_tables; i++) {
		struct t4p4s_table *t = t4p4s_tables[i];
		if (t == NULL)
			continue;
		table_clear(t);
		t4p4s_rcu_drain();
		switch (t->kind) {
		case TABLE_EXACT:
			exact_free(t);
			break;
		case TABLE_LPM:
			lpm_free(t);
			break;
		case TABLE_PRIORITY:
			priority_free(t);
			break;
		case TABLE_KEYLESS:
			break;
		}
		rte_hash_free(t->records);
		rte_free((void *)t->default_entry);
		free(t->free_counter_slots);
		rte_free(t);
		t4p4s_tables[i] = NULL;
	}
}
