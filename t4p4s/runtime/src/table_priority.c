/* Ternary, range and optional tables, and lpm tables the LPM structure
 * does not cover: an array of records sorted best first (larger P4Runtime
 * priority, then longer total prefix), scanned linearly; the first match
 * wins. Writers build a new array and publish it with one pointer store;
 * the old array is freed after a grace period, so readers always see a
 * complete, sorted array. */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "rcu.h"
#include "tables.h"

static bool
ranks_before(const struct table_record *a, const struct table_record *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->prefix_len > b->prefix_len;
}

static bool
field_matches(const struct t4p4s_key_field_desc *f, const uint8_t *key,
	      const uint8_t *value, const uint8_t *mask)
{
	unsigned off = f->offset, n = (f->bitwidth + 7u) / 8u;
	if (f->match_kind == T4P4S_MATCH_RANGE)
		return memcmp(key + off, value + off, n) >= 0 &&
		       memcmp(key + off, mask + off, n) <= 0;
	for (unsigned i = off; i < off + n; i++)
		if ((key[i] & mask[i]) != value[i])
			return false;
	return true;
}

const struct t4p4s_entry *
priority_lookup(const struct t4p4s_table *t, const uint8_t *key)
{
	const struct priority_array *a =
		__atomic_load_n(&t->priority, __ATOMIC_ACQUIRE);
	const struct t4p4s_table_desc *d = t->desc;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct table_record *r = a->rules[i];
		const uint8_t *value = r->match, *mask = r->match + t->key_size;
		uint16_t k;
		for (k = 0; k < d->n_keys; k++)
			if (!field_matches(&d->keys[k], key, value, mask))
				break;
		if (k == d->n_keys)
			return load_entry(&r->entry);
	}
	return NULL;
}

static struct priority_array *
array_alloc(uint32_t n)
{
	return rte_malloc(NULL, sizeof(struct priority_array) +
			  (n ? n : 1) * sizeof(struct table_record *), 0);
}

static void
array_release(void *array, void *unused __rte_unused)
{
	rte_free(array);
}

static void
publish_array(struct t4p4s_table *t, struct priority_array *next)
{
	struct priority_array *old = t->priority;
	__atomic_store_n(&t->priority, next, __ATOMIC_RELEASE);
	t4p4s_rcu_defer(array_release, old, NULL);
}

int
priority_create(struct t4p4s_table *t)
{
	t->priority = array_alloc(0);
	if (t->priority == NULL)
		return -ENOMEM;
	t->priority->n = 0;
	return 0;
}

int
priority_insert(struct t4p4s_table *t, struct table_record *r)
{
	const struct priority_array *cur = t->priority;
	struct priority_array *next = array_alloc(cur->n + 1);
	if (next == NULL)
		return -ENOMEM;
	uint32_t pos = 0;
	while (pos < cur->n && !ranks_before(r, cur->rules[pos]))
		pos++;
	memcpy(next->rules, cur->rules, pos * sizeof(*cur->rules));
	next->rules[pos] = r;
	memcpy(next->rules + pos + 1, cur->rules + pos,
	       (cur->n - pos) * sizeof(*cur->rules));
	next->n = cur->n + 1;
	publish_array(t, next);
	return 0;
}

void
priority_replace(struct t4p4s_table *t __rte_unused,
		 struct table_record *r __rte_unused)
{
	/* readers load r->entry themselves: nothing to republish */
}

int
priority_remove(struct t4p4s_table *t, struct table_record *r)
{
	const struct priority_array *cur = t->priority;
	struct priority_array *next = array_alloc(cur->n);
	if (next == NULL)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < cur->n; i++)
		if (cur->rules[i] != r)
			next->rules[n++] = cur->rules[i];
	next->n = n;
	publish_array(t, next);
	return 0;
}

void
priority_free(struct t4p4s_table *t)
{
	rte_free(t->priority);
}
