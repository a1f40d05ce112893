/* Table objects: what tables.c shares with the three lookup structures
 * (table_exact.c, table_lpm.c, table_priority.c). */
#ifndef T4P4S_TABLES_H
#define T4P4S_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_hash.h>
#include <rte_lpm.h>

#include <t4p4s/pipeline.h>

#define T4P4S_MAX_TABLES 1024

enum table_kind {
	TABLE_KEYLESS,    /* no key: always the default action */
	TABLE_EXACT,      /* every field exact: rte_hash */
	TABLE_LPM,        /* one lpm field of <= 32 bits: rte_lpm */
	TABLE_PRIORITY,   /* anything else: priority-sorted array */
};

/* An installed entry as the control plane knows it. `match` is the
 * canonical match: value[key_size] | mask[key_size] | int32 priority
 * (layout of struct t4p4s_match_spec, exact fields with an all-ones mask),
 * also the key of the table's record index. Immutable but for `entry`,
 * which modify replaces (the fast path reads it atomically). */
struct table_record {
	struct t4p4s_entry *entry;
	int32_t priority;
	uint16_t prefix_len;    /* sum over lpm fields: ranks lpm entries */
	uint32_t slot;          /* LPM: next-hop index in lpm_table.slots */
	uint8_t match[];
};

/* Immutable once published: rules sorted best first. */
struct priority_array {
	uint32_t n;
	struct table_record *rules[];
};

struct t4p4s_table {
	/* read by the fast path */
	enum table_kind kind;
	uint16_t key_size;
	/* No entry: every lookup is a miss, so the lcores return the default
	 * entry without searching (an offload table of nic.p4 with nothing
	 * offloaded, a lookahead on a table the program's mode leaves unused).
	 * Written by the control thread after the lookup structure changed. */
	bool empty;
	const struct t4p4s_entry *default_entry;
	union {
		struct rte_hash *exact;
		struct {
			struct rte_lpm *lpm;
			struct t4p4s_entry **slots;         /* by next hop */
			struct t4p4s_entry *zero_prefix;    /* the /0 entry */
			uint16_t width;
		} lpm;
		struct priority_array *priority;
	};

	/* control thread only */
	const struct t4p4s_table_desc *desc;
	uint16_t index;
	bool needs_priority;        /* has a ternary, range or optional field */
	size_t entry_size;
	uint32_t n_entries;
	struct rte_hash *records;   /* canonical match -> struct table_record */
	uint32_t *free_lpm_slots;
	uint32_t n_free_lpm_slots;
	uint32_t *free_counter_slots;
	uint32_t n_free_counter_slots;
	struct t4p4s_counter *direct_counter;
};

static inline size_t
table_match_size(const struct t4p4s_table *t)
{
	return 2u * t->key_size + sizeof(int32_t);
}

/* One lookup structure: insert a new record, make an existing record's
 * new entry visible, remove a record (its memory is reclaimed by
 * tables.c after a grace period). Return 0 or a negative errno. */
/* An rte_hash for one of the table's structures, named PREFIX<index>, with
 * room for the table's `size` keys of key_len bytes. */
struct rte_hash *table_hash_create(const struct t4p4s_table *t,
				   const char *prefix, uint32_t key_len,
				   uint8_t extra_flags);

int exact_create(struct t4p4s_table *t);
int exact_insert(struct t4p4s_table *t, struct table_record *r);
void exact_replace(struct t4p4s_table *t, struct table_record *r);
int exact_remove(struct t4p4s_table *t, struct table_record *r);
void exact_free(struct t4p4s_table *t);

int lpm_create(struct t4p4s_table *t);
int lpm_insert(struct t4p4s_table *t, struct table_record *r);
void lpm_replace(struct t4p4s_table *t, struct table_record *r);
int lpm_remove(struct t4p4s_table *t, struct table_record *r);
void lpm_release_slot(struct t4p4s_table *t, struct table_record *r);
void lpm_free(struct t4p4s_table *t);

int priority_create(struct t4p4s_table *t);
int priority_insert(struct t4p4s_table *t, struct table_record *r);
void priority_replace(struct t4p4s_table *t, struct table_record *r);
int priority_remove(struct t4p4s_table *t, struct table_record *r);
void priority_free(struct t4p4s_table *t);
const struct t4p4s_entry *priority_lookup(const struct t4p4s_table *t,
					  const uint8_t *key);

/* Entry management for control_api.c (control thread, under the control
 * mutex). `match` is a canonical match (see struct table_record), already
 * validated; the entry `e` is owned by the table once the call succeeds. */
struct t4p4s_entry *table_entry_new(struct t4p4s_table *t,
				    uint16_t table_action,
				    const uint8_t *data, size_t data_len);
struct table_record *table_find(struct t4p4s_table *t, const uint8_t *match);
int table_insert(struct t4p4s_table *t, const uint8_t *match,
		 struct t4p4s_entry *e);
int table_modify(struct t4p4s_table *t, const uint8_t *match,
		 struct t4p4s_entry *e);
int table_delete(struct t4p4s_table *t, const uint8_t *match);
int table_clear(struct t4p4s_table *t);
void table_set_default(struct t4p4s_table *t, struct t4p4s_entry *e);
int table_iterate(struct t4p4s_table *t,
		  int (*fn)(void *arg, const struct table_record *r),
		  void *arg);

/* Creates every table of t4p4s_program (const entries installed). */
int t4p4s_tables_init(void);
void t4p4s_tables_fini(void);


static inline const struct t4p4s_entry *
load_entry(struct t4p4s_entry *const *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void
publish_entry(struct t4p4s_entry **p, struct t4p4s_entry *e)
{
	__atomic_store_n(p, e, __ATOMIC_RELEASE);
}

#endif
