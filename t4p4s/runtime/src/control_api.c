/* The C table-management API (include/t4p4s/control_api.h): validation
 * of matches and action parameters as P4Runtime specifies them, and one
 * mutex that serializes every writer. */
#define _GNU_SOURCE    /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include <t4p4s/control_api.h>

#include "clone.h"
#include "control_internal.h"
#include "counters.h"
#include "multicast.h"
#include "registers.h"
#include "tables.h"

/* recursive: a batch (t4p4s_ctl_batch_begin) holds it across calls that
 * take it again */
static pthread_mutex_t ctl_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread char last_error[512];

const char *
t4p4s_ctl_last_error(void)
{
	return last_error;
}

static int __attribute__((format(printf, 2, 3)))
fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

/* ---- names and ids ---------------------------------------------------- */

#define FIND_BY(kind, array, count)                                          \
int t4p4s_ctl_find_##kind(const char *name)                                  \
{                                                                            \
	for (uint16_t i = 0; i < t4p4s_program.count; i++)                   \
		if (strcmp(t4p4s_program.array[i].name, name) == 0)          \
			return i;                                            \
	return fail(-ENOENT, "no " #kind " named '%s'", name);               \
}                                                                            \
int t4p4s_ctl_find_##kind##_by_id(uint32_t id)                               \
{                                                                            \
	for (uint16_t i = 0; i < t4p4s_program.count; i++)                   \
		if (t4p4s_program.array[i].id == id)                         \
			return i;                                            \
	return fail(-ENOENT, "no " #kind " with id %u", id);                 \
}

FIND_BY(table, tables, n_tables)
FIND_BY(action, actions, n_actions)
FIND_BY(counter, counters, n_counters)
FIND_BY(register, registers, n_registers)

/* ---- matches ---------------------------------------------------------- */

static unsigned
field_bytes(const struct t4p4s_key_field_desc *f)
{
	return (f->bitwidth + 7u) / 8u;
}

/* allowed bits of the first (most significant) byte of a field */
static uint8_t
top_mask(unsigned bitwidth)
{
	unsigned unused = ((bitwidth + 7u) / 8u) * 8u - bitwidth;
	return (uint8_t)(0xFFu >> unused);
}

static bool
fits(const uint8_t *v, unsigned n, unsigned bitwidth)
{
	return (v[0] & (uint8_t)~top_mask(bitwidth)) == 0 || n == 0;
}

static void
set_full_mask(uint8_t *m, unsigned n, unsigned bitwidth)
{
	memset(m, 0xFF, n);
	m[0] = top_mask(bitwidth);
}

static bool
is_zero(const uint8_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] != 0)
			return false;
	return true;
}

static bool
is_prefix_mask(const uint8_t *m, unsigned n, unsigned bitwidth)
{
	bool zero_seen = false;
	for (unsigned i = 0; i < bitwidth; i++) {
		unsigned pos = n * 8u - bitwidth + i;
		bool one = m[pos / 8] & (0x80u >> (pos % 8));
		if (one && zero_seen)
			return false;
		zero_seen |= !one;
	}
	return true;
}

static int
check_masked(const struct t4p4s_key_field_desc *f, const uint8_t *v,
	     const uint8_t *m, unsigned n)
{
	if (!fits(m, n, f->bitwidth))
		return fail(-EINVAL, "mask of %s does not fit in %u bits",
			    f->name, f->bitwidth);
	for (unsigned i = 0; i < n; i++)
		if (v[i] & ~m[i])
			return fail(-EINVAL, "value of %s has bits set outside "
				    "its mask", f->name);
	return 0;
}

/* Validates `spec` and writes the canonical match (struct table_record)
 * to `out`. */
static int
build_match(const struct t4p4s_table *t, const struct t4p4s_match_spec *spec,
	    uint8_t *out)
{
	const struct t4p4s_table_desc *d = t->desc;
	uint8_t *value = out, *mask = out + t->key_size;
	memset(out, 0, table_match_size(t));
	if (d->n_keys == 0)
		return fail(-EINVAL, "table %s has no key", d->name);
	if (spec->value == NULL)
		return fail(-EINVAL, "no match value");
	for (uint16_t k = 0; k < d->n_keys; k++) {
		const struct t4p4s_key_field_desc *f = &d->keys[k];
		unsigned n = field_bytes(f), off = f->offset;
		const uint8_t *v = spec->value + off;
		const uint8_t *m = spec->mask != NULL ? spec->mask + off : NULL;
		int ret = 0;
		if (!fits(v, n, f->bitwidth))
			return fail(-EINVAL, "value of %s does not fit in %u bits",
				    f->name, f->bitwidth);
		if (m == NULL && f->match_kind != T4P4S_MATCH_EXACT)
			return fail(-EINVAL, "no mask for %s", f->name);
		memcpy(value + off, v, n);
		switch (f->match_kind) {
		case T4P4S_MATCH_EXACT:
			set_full_mask(mask + off, n, f->bitwidth);
			break;
		case T4P4S_MATCH_TERNARY:
			ret = check_masked(f, v, m, n);
			memcpy(mask + off, m, n);
			break;
		case T4P4S_MATCH_OPTIONAL: {
			uint8_t full[n];
			set_full_mask(full, n, f->bitwidth);
			if (!is_zero(m, n) && memcmp(m, full, n) != 0)
				return fail(-EINVAL, "optional field %s: mask must "
					    "be all ones or all zeros", f->name);
			ret = check_masked(f, v, m, n);
			memcpy(mask + off, m, n);
			break;
		}
		case T4P4S_MATCH_LPM:
			if (!is_prefix_mask(m, n, f->bitwidth))
				return fail(-EINVAL, "lpm field %s: mask is not a "
					    "prefix", f->name);
			ret = check_masked(f, v, m, n);
			if (ret != 0)
				return fail(-EINVAL, "lpm field %s: value has bits "
					    "set beyond the prefix length", f->name);
			memcpy(mask + off, m, n);
			break;
		case T4P4S_MATCH_RANGE:
			if (!fits(m, n, f->bitwidth))
				return fail(-EINVAL, "high end of %s does not fit "
					    "in %u bits", f->name, f->bitwidth);
			if (memcmp(v, m, n) > 0)
				return fail(-EINVAL, "range of %s: low > high",
					    f->name);
			memcpy(mask + off, m, n);
			break;
		}
		if (ret != 0)
			return ret;
	}
	if (t->needs_priority && spec->priority <= 0)
		return fail(-EINVAL, "table %s has ternary, range or optional "
			    "fields: entries need a priority > 0", d->name);
	if (!t->needs_priority && spec->priority != 0)
		return fail(-EINVAL, "table %s takes no priority (only tables "
			    "with ternary, range or optional fields do)", d->name);
	memcpy(out + 2 * t->key_size, &spec->priority, sizeof(int32_t));
	return 0;
}

/* ---- actions ---------------------------------------------------------- */

static void
store_param(const struct t4p4s_param_desc *p, uint8_t *data,
	    const uint8_t *be, unsigned n)
{
	uint8_t *dst = data + p->offset;
	if (p->bitwidth > 64) {
		unsigned width = (p->bitwidth + 7u) / 8u;
		memset(dst, 0, width);
		memcpy(dst + width - n, be, n);
		return;
	}
	uint64_t v = n ? t4p4s_load_be64(be, n) : 0;
	switch (p->size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
	default: memcpy(dst, &v, 8); break;
	}
}

void
t4p4s_ctl_param_to_bytes(const struct t4p4s_param_desc *p,
			 const uint8_t *data, uint8_t *out)
{
	const uint8_t *src = data + p->offset;
	unsigned width = (p->bitwidth + 7u) / 8u;
	if (p->bitwidth > 64) {
		memcpy(out, src, width);
		return;
	}
	uint64_t v = 0;
	switch (p->size) {
	case 1: { uint8_t x; memcpy(&x, src, 1); v = x; break; }
	case 2: { uint16_t x; memcpy(&x, src, 2); v = x; break; }
	case 4: { uint32_t x; memcpy(&x, src, 4); v = x; break; }
	default: memcpy(&v, src, 8); break;
	}
	t4p4s_store_be64(out, width, v);
}

/* Validates `spec` for table `t` and builds the entry. */
static int
build_entry(struct t4p4s_table *t, const struct t4p4s_action_spec *spec,
	    bool as_default, struct t4p4s_entry **out)
{
	const struct t4p4s_table_desc *d = t->desc;
	if (spec->action >= t4p4s_program.n_actions)
		return fail(-EINVAL, "no action with index %u", spec->action);
	const struct t4p4s_action_desc *a = &t4p4s_program.actions[spec->action];
	uint16_t ta;
	for (ta = 0; ta < d->n_actions; ta++)
		if (d->actions[ta].action == spec->action)
			break;
	if (ta == d->n_actions)
		return fail(-EINVAL, "%s is not an action of table %s",
			    a->name, d->name);
	if (!as_default && d->actions[ta].default_only)
		return fail(-EINVAL, "%s is @defaultonly in table %s",
			    a->name, d->name);
	if (as_default && d->actions[ta].table_only)
		return fail(-EINVAL, "%s is @tableonly in table %s",
			    a->name, d->name);
	for (uint16_t i = 0; i < a->n_params; i++) {
		const struct t4p4s_param_desc *p = &a->params[i];
		const struct t4p4s_bytes *b = &spec->params[i];
		size_t skip = 0;
		while (skip < b->len && b->data[skip] == 0)
			skip++;
		size_t n = b->len - skip;
		unsigned width = (p->bitwidth + 7u) / 8u;
		if (n > width || (n == width && !fits(b->data + skip, n, p->bitwidth)))
			return fail(-EINVAL, "parameter %s of %s does not fit in "
				    "%u bits", p->name, a->name, p->bitwidth);
	}
	struct t4p4s_entry *e = table_entry_new(t, ta, NULL, 0);
	if (e == NULL)
		return fail(-ENOMEM, "out of memory");
	for (uint16_t i = 0; i < a->n_params; i++) {
		const struct t4p4s_bytes *b = &spec->params[i];
		size_t skip = 0;
		while (skip < b->len && b->data[skip] == 0)
			skip++;
		store_param(&a->params[i], e->data, b->data + skip,
			    (unsigned)(b->len - skip));
	}
	*out = e;
	return 0;
}

/* ---- table writes ----------------------------------------------------- */

static int
check_table(uint16_t table, bool write)
{
	if (table >= t4p4s_program.n_tables)
		return fail(-EINVAL, "no table with index %u", table);
	if (write && t4p4s_program.tables[table].entries_are_const)
		return fail(-EPERM, "table %s has const entries",
			    t4p4s_program.tables[table].name);
	return 0;
}

static int
do_entry_write(uint16_t table, const struct t4p4s_match_spec *match,
	       const struct t4p4s_action_spec *action, bool modify,
	       bool allow_const)
{
	int ret = check_table(table, !allow_const);
	if (ret != 0)
		return ret;
	struct t4p4s_table *t = t4p4s_tables[table];
	uint8_t canon[table_match_size(t)];
	struct t4p4s_entry *e;
	ret = build_match(t, match, canon);
	if (ret == 0)
		ret = build_entry(t, action, false, &e);
	if (ret != 0)
		return ret;
	ret = modify ? table_modify(t, canon, e) : table_insert(t, canon, e);
	if (ret != 0) {
		rte_free(e);
		if (ret == -EEXIST)
			return fail(ret, "table %s already has this entry",
				    t->desc->name);
		if (ret == -ENOENT)
			return fail(ret, "table %s has no such entry",
				    t->desc->name);
		if (ret == -ENOSPC)
			return fail(ret, "table %s is full (size %u)",
				    t->desc->name, t->desc->size);
		return fail(ret, "table %s: %s", t->desc->name, strerror(-ret));
	}
	return 0;
}

#define LOCKED(call)                                                         \
	do {                                                                 \
		pthread_mutex_lock(&ctl_lock);                               \
		int ret_ = (call);                                           \
		pthread_mutex_unlock(&ctl_lock);                             \
		return ret_;                                                 \
	} while (0)

int
t4p4s_ctl_table_add(uint16_t table, const struct t4p4s_match_spec *match,
		    const struct t4p4s_action_spec *action)
{
	LOCKED(do_entry_write(table, match, action, false, false));
}

int
t4p4s_ctl_table_modify(uint16_t table, const struct t4p4s_match_spec *match,
		       const struct t4p4s_action_spec *action)
{
	LOCKED(do_entry_write(table, match, action, true, false));
}

static int
do_delete(uint16_t table, const struct t4p4s_match_spec *match)
{
	int ret = check_table(table, true);
	if (ret != 0)
		return ret;
	struct t4p4s_table *t = t4p4s_tables[table];
	uint8_t canon[table_match_size(t)];
	ret = build_match(t, match, canon);
	if (ret != 0)
		return ret;
	ret = table_delete(t, canon);
	if (ret == -ENOENT)
		return fail(ret, "table %s has no such entry", t->desc->name);
	if (ret != 0)
		return fail(ret, "table %s: %s", t->desc->name, strerror(-ret));
	return 0;
}

int
t4p4s_ctl_table_delete(uint16_t table, const struct t4p4s_match_spec *match)
{
	LOCKED(do_delete(table, match));
}

static int
do_clear(uint16_t table)
{
	int ret = check_table(table, true);
	return ret != 0 ? ret : table_clear(t4p4s_tables[table]);
}

int
t4p4s_ctl_table_clear(uint16_t table)
{
	LOCKED(do_clear(table));
}

static int
do_set_default(uint16_t table, const struct t4p4s_action_spec *action)
{
	int ret = check_table(table, false);
	if (ret != 0)
		return ret;
	struct t4p4s_table *t = t4p4s_tables[table];
	if (t->desc->default_is_const)
		return fail(-EPERM, "table %s has a const default action",
			    t->desc->name);
	struct t4p4s_entry *e;
	ret = build_entry(t, action, true, &e);
	if (ret != 0)
		return ret;
	table_set_default(t, e);
	return 0;
}

int
t4p4s_ctl_table_set_default(uint16_t table,
			    const struct t4p4s_action_spec *action)
{
	LOCKED(do_set_default(table, action));
}

/* ---- table reads ------------------------------------------------------ */

struct read_ctx {
	struct t4p4s_table *t;
	t4p4s_entry_visitor visit;
	void *arg;
};

static void
view_entry(const struct t4p4s_table *t, const struct t4p4s_entry *e,
	   struct t4p4s_entry_view *v)
{
	v->action = t->desc->actions[e->action].action;
	v->data = e->data;
	v->has_counter = t->direct_counter != NULL;
	v->packets = v->bytes = 0;
	if (v->has_counter && e->counter_slot != UINT32_MAX) {
		struct t4p4s_counter_cell sum;
		t4p4s_counter_sum(t->direct_counter, e->counter_slot, &sum);
		v->packets = sum.packets;
		v->bytes = sum.bytes;
	}
}

static int
visit_record(void *arg, const struct table_record *r)
{
	struct read_ctx *ctx = arg;
	struct t4p4s_entry_view v = {
		.value = r->match,
		.mask = r->match + ctx->t->key_size,
		.priority = r->priority,
	};
	view_entry(ctx->t, r->entry, &v);
	return ctx->visit(ctx->arg, &v);
}

static int
do_read(uint16_t table, t4p4s_entry_visitor visit, void *arg)
{
	int ret = check_table(table, false);
	if (ret != 0)
		return ret;
	struct read_ctx ctx = { t4p4s_tables[table], visit, arg };
	return table_iterate(ctx.t, visit_record, &ctx);
}

int
t4p4s_ctl_table_read(uint16_t table, t4p4s_entry_visitor visit, void *arg)
{
	LOCKED(do_read(table, visit, arg));
}

static int
do_count(uint16_t table, uint32_t *n_entries)
{
	int ret = check_table(table, false);
	if (ret == 0)
		*n_entries = t4p4s_tables[table]->n_entries;
	return ret;
}

int
t4p4s_ctl_table_count(uint16_t table, uint32_t *n_entries)
{
	LOCKED(do_count(table, n_entries));
}

static int
do_get_default(uint16_t table, t4p4s_entry_visitor visit, void *arg)
{
	int ret = check_table(table, false);
	if (ret != 0)
		return ret;
	const struct t4p4s_table *t = t4p4s_tables[table];
	struct t4p4s_entry_view v = { 0 };
	view_entry(t, t->default_entry, &v);
	v.has_counter = false;
	return visit(arg, &v);
}

int
t4p4s_ctl_table_get_default(uint16_t table, t4p4s_entry_visitor visit,
			    void *arg)
{
	LOCKED(do_get_default(table, visit, arg));
}

/* ---- const entries ---------------------------------------------------- */

static int
install_const_entry(struct t4p4s_table *t, const struct t4p4s_const_entry *ce)
{
	const struct t4p4s_table_desc *d = t->desc;
	uint8_t mask[t->key_size ? t->key_size : 1];
	for (uint16_t k = 0; k < d->n_keys; k++) {
		const struct t4p4s_key_field_desc *f = &d->keys[k];
		unsigned n = field_bytes(f);
		uint8_t *m = mask + f->offset;
		if (f->match_kind == T4P4S_MATCH_LPM && ce->mask == NULL) {
			memset(m, 0, n);
			for (unsigned i = 0; i < ce->prefix_len && i < f->bitwidth; i++) {
				unsigned pos = n * 8u - f->bitwidth + i;
				m[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
			}
		} else if (ce->mask != NULL) {
			memcpy(m, ce->mask + f->offset, n);
		} else {
			set_full_mask(m, n, f->bitwidth);
		}
	}
	struct t4p4s_match_spec spec = {
		.value = ce->key,
		.mask = mask,
		.priority = t->needs_priority ? ce->priority : 0,
	};
	uint8_t canon[table_match_size(t)];
	int ret = build_match(t, &spec, canon);
	if (ret != 0)
		return ret;
	const struct t4p4s_action_desc *a =
		&t4p4s_program.actions[d->actions[ce->action].action];
	struct t4p4s_entry *e = table_entry_new(t, ce->action, ce->data,
						a->data_size);
	if (e == NULL)
		return fail(-ENOMEM, "out of memory");
	ret = table_insert(t, canon, e);
	if (ret != 0) {
		rte_free(e);
		return fail(ret, "%s", strerror(-ret));
	}
	return 0;
}

int
t4p4s_ctl_install_const_entries(void)
{
	pthread_mutex_lock(&ctl_lock);
	int ret = 0;
	for (uint16_t i = 0; i < t4p4s_program.n_tables && ret == 0; i++) {
		struct t4p4s_table *t = t4p4s_tables[i];
		for (uint16_t j = 0; j < t->desc->n_const_entries; j++) {
			ret = install_const_entry(t, &t->desc->const_entries[j]);
			if (ret != 0) {
				char why[sizeof(last_error)];
				snprintf(why, sizeof(why), "%s", last_error);
				fail(ret, "const entry %u of table %s: %s", j,
				     t->desc->name, why);
				break;
			}
		}
	}
	pthread_mutex_unlock(&ctl_lock);
	return ret;
}

/* ---- counters, registers, clone sessions ------------------------------ */

static int
do_counter_read(uint16_t counter, uint32_t index,
		struct t4p4s_counter_value *out)
{
	if (counter >= t4p4s_program.n_counters)
		return fail(-EINVAL, "no counter with index %u", counter);
	const struct t4p4s_counter *c = t4p4s_counters[counter];
	if (index >= c->size)
		return fail(-EINVAL, "index %u out of range for %s (size %u)",
			    index, c->desc->name, c->size);
	struct t4p4s_counter_cell sum;
	t4p4s_counter_sum(c, index, &sum);
	out->packets = sum.packets;
	out->bytes = sum.bytes;
	return 0;
}

int
t4p4s_ctl_counter_read(uint16_t counter, uint32_t index,
		       struct t4p4s_counter_value *out)
{
	LOCKED(do_counter_read(counter, index, out));
}

static int
do_counter_reset(uint16_t counter)
{
	if (counter >= t4p4s_program.n_counters)
		return fail(-EINVAL, "no counter with index %u", counter);
	t4p4s_counter_clear(t4p4s_counters[counter]);
	return 0;
}

int
t4p4s_ctl_counter_reset(uint16_t counter)
{
	LOCKED(do_counter_reset(counter));
}

static int
check_register(uint16_t reg, uint32_t index)
{
	if (reg >= t4p4s_program.n_registers)
		return fail(-EINVAL, "no register with index %u", reg);
	const struct t4p4s_register *r = t4p4s_registers[reg];
	if (index >= r->size)
		return fail(-EINVAL, "index %u out of range for %s (size %u)",
			    index, r->desc->name, r->size);
	return 0;
}

int
t4p4s_ctl_register_read(uint16_t reg, uint32_t index, uint64_t *value)
{
	int ret = check_register(reg, index);
	if (ret == 0)
		*value = t4p4s_register_read(t4p4s_registers[reg], index);
	return ret;
}

int
t4p4s_ctl_register_write(uint16_t reg, uint32_t index, uint64_t value)
{
	int ret = check_register(reg, index);
	if (ret != 0)
		return ret;
	struct t4p4s_register *r = t4p4s_registers[reg];
	if (value & ~r->mask)
		return fail(-EINVAL, "value does not fit %s (bit<%u>)",
			    r->desc->name, r->desc->bitwidth);
	t4p4s_register_write(r, index, value);
	return 0;
}

int
t4p4s_ctl_register_reset(uint16_t reg)
{
	if (reg >= t4p4s_program.n_registers)
		return fail(-EINVAL, "no register with index %u", reg);
	t4p4s_register_reset(t4p4s_registers[reg]);
	return 0;
}

static int
do_clone_session_add(uint32_t session, uint32_t port, uint32_t truncate)
{
	unsigned bits = t4p4s_program.port_bits ? t4p4s_program.port_bits : 9;
	if (port >= (1u << bits))
		return fail(-EINVAL, "port %u does not fit in %u bits", port, bits);
	if (t4p4s_clone_session_set(session, port, truncate) != 0)
		return fail(-EINVAL, "clone session %u out of range (max %u)",
			    session, T4P4S_MAX_CLONE_SESSIONS - 1);
	return 0;
}

int
t4p4s_ctl_clone_session_add(uint32_t session, uint32_t port,
			    uint32_t truncate)
{
	LOCKED(do_clone_session_add(session, port, truncate));
}

static int
do_clone_session_delete(uint32_t session)
{
	int ret = t4p4s_clone_session_clear(session);
	if (ret == -ENOENT)
		return fail(ret, "no clone session %u", session);
	if (ret != 0)
		return fail(ret, "clone session %u out of range (max %u)",
			    session, T4P4S_MAX_CLONE_SESSIONS - 1);
	return 0;
}

int
t4p4s_ctl_clone_session_delete(uint32_t session)
{
	LOCKED(do_clone_session_delete(session));
}

int
t4p4s_ctl_clone_session_read(uint32_t session, uint32_t *port,
			     uint32_t *truncate)
{
	if (session >= T4P4S_MAX_CLONE_SESSIONS)
		return fail(-EINVAL, "clone session %u out of range (max %u)",
			    session, T4P4S_MAX_CLONE_SESSIONS - 1);
	int32_t p = t4p4s_clone_session_port(session, truncate);
	if (p < 0)
		return fail(-ENOENT, "no clone session %u", session);
	*port = (uint32_t)p;
	return 0;
}

/* ---- multicast groups -------------------------------------------------- */

static int
check_mcast_group_id(uint32_t group)
{
	if (group == 0)
		return fail(-EINVAL, "multicast group 0 means no multicast");
	if (group >= T4P4S_CTL_MAX_MCAST_GROUPS)
		return fail(-EINVAL, "multicast group %u out of range (1..%u)", group,
			    T4P4S_CTL_MAX_MCAST_GROUPS - 1);
	return 0;
}

/* The replicas as the P4Runtime spec ("MulticastGroupEntry") requires:
 * ports of the port type, instances of EgressInstance_t (egress_rid,
 * bit<16>), each (port, instance) pair once. */
static int
check_replicas(const struct t4p4s_ctl_mcast_replica *r, uint32_t n,
	       uint32_t metadata_len)
{
	if (n > T4P4S_CTL_MAX_MCAST_REPLICAS)
		return fail(-ENOSPC, "%u replicas; a group has at most %u", n,
			    T4P4S_CTL_MAX_MCAST_REPLICAS);
	if (metadata_len > T4P4S_CTL_MAX_MCAST_METADATA)
		return fail(-ENOSPC, "%u bytes of metadata; at most %u", metadata_len,
			    T4P4S_CTL_MAX_MCAST_METADATA);
	unsigned bits = t4p4s_program.port_bits ? t4p4s_program.port_bits : 9;
	for (uint32_t i = 0; i < n; i++) {
		if (r[i].port >= (1u << bits))
			return fail(-EINVAL, "replica %u: port %u does not fit in %u bits",
				    i, r[i].port, bits);
		if (r[i].instance > T4P4S_CTL_MAX_MCAST_INSTANCE)
			return fail(-EINVAL, "replica %u: instance %u does not fit in "
				    "egress_rid (bit<16>)", i, r[i].instance);
		/* groups are small and written rarely: quadratic is fine */
		for (uint32_t j = 0; j < i; j++)
			if (r[j].port == r[i].port && r[j].instance == r[i].instance)
				return fail(-EINVAL, "replicas %u and %u are both port %u "
					    "instance %u", j, i, r[i].port, r[i].instance);
	}
	return 0;
}

static int
do_mcast_group_write(uint32_t group, bool insert,
		     const struct t4p4s_ctl_mcast_replica *replicas, uint32_t n,
		     const void *metadata, uint32_t metadata_len)
{
	int ret = check_mcast_group_id(group);
	if (ret == 0)
		ret = check_replicas(replicas, n, metadata_len);
	if (ret != 0)
		return ret;
	bool exists = t4p4s_mcast_group_get(group) != NULL;
	if (insert && exists)
		return fail(-EEXIST, "multicast group %u exists", group);
	if (!insert && !exists)
		return fail(-ENOENT, "no multicast group %u", group);
	if (t4p4s_mcast_group_publish(group, replicas, n, metadata, metadata_len) != 0)
		return fail(-ENOMEM, "out of memory for multicast group %u", group);
	return 0;
}

int
t4p4s_ctl_mcast_group_insert(uint32_t group,
			     const struct t4p4s_ctl_mcast_replica *replicas,
			     uint32_t n, const void *metadata, uint32_t metadata_len)
{
	LOCKED(do_mcast_group_write(group, true, replicas, n, metadata, metadata_len));
}

int
t4p4s_ctl_mcast_group_modify(uint32_t group,
			     const struct t4p4s_ctl_mcast_replica *replicas,
			     uint32_t n, const void *metadata, uint32_t metadata_len)
{
	LOCKED(do_mcast_group_write(group, false, replicas, n, metadata, metadata_len));
}

static int
do_mcast_group_delete(uint32_t group)
{
	int ret = check_mcast_group_id(group);
	if (ret != 0)
		return ret;
	if (t4p4s_mcast_group_remove(group) != 0)
		return fail(-ENOENT, "no multicast group %u", group);
	return 0;
}

int
t4p4s_ctl_mcast_group_delete(uint32_t group)
{
	LOCKED(do_mcast_group_delete(group));
}

static int
do_mcast_group_read(uint32_t group, struct t4p4s_ctl_mcast_replica *replicas,
		    uint8_t *metadata, uint32_t *metadata_len)
{
	const struct t4p4s_mcast_group *g = t4p4s_mcast_group_get(group);
	if (g == NULL)
		return fail(-ENOENT, "no multicast group %u", group);
	for (uint32_t i = 0; i < g->n_replicas; i++) {
		replicas[i].port = g->replicas[i].port;
		replicas[i].instance = g->replicas[i].rid;
	}
	memcpy(metadata, g->metadata, g->metadata_len);
	*metadata_len = g->metadata_len;
	return (int)g->n_replicas;
}

int
t4p4s_ctl_mcast_group_read(uint32_t group,
			   struct t4p4s_ctl_mcast_replica *replicas,
			   uint8_t *metadata, uint32_t *metadata_len)
{
	LOCKED(do_mcast_group_read(group, replicas, metadata, metadata_len));
}

static int
do_mcast_group_next(uint32_t after)
{
	for (uint32_t g = after + 1; g < T4P4S_CTL_MAX_MCAST_GROUPS && g > after; g++)
		if (t4p4s_mcast_group_get(g) != NULL)
			return (int)g;
	return -ENOENT;
}

int
t4p4s_ctl_mcast_group_next(uint32_t after)
{
	LOCKED(do_mcast_group_next(after));
}

/* ---- batches, single entries, defaults, counter writes, reset ---------- */

void
t4p4s_ctl_batch_begin(void)
{
	pthread_mutex_lock(&ctl_lock);
}

void
t4p4s_ctl_batch_end(void)
{
	pthread_mutex_unlock(&ctl_lock);
}

/* The record of `match` in `table`, or NULL with the reason in *err. */
static struct table_record *
find_record(uint16_t table, const struct t4p4s_match_spec *match, int *err)
{
	*err = check_table(table, false);
	if (*err != 0)
		return NULL;
	struct t4p4s_table *t = t4p4s_tables[table];
	uint8_t canon[table_match_size(t)];
	*err = build_match(t, match, canon);
	if (*err != 0)
		return NULL;
	struct table_record *r = table_find(t, canon);
	if (r == NULL)
		*err = fail(-ENOENT, "table %s has no such entry", t->desc->name);
	return r;
}

static int
do_read_entry(uint16_t table, const struct t4p4s_match_spec *match,
	      t4p4s_entry_visitor visit, void *arg)
{
	int ret;
	struct table_record *r = find_record(table, match, &ret);
	if (r == NULL)
		return ret;
	struct read_ctx ctx = { t4p4s_tables[table], visit, arg };
	return visit_record(&ctx, r);
}

int
t4p4s_ctl_table_read_entry(uint16_t table,
			   const struct t4p4s_match_spec *match,
			   t4p4s_entry_visitor visit, void *arg)
{
	LOCKED(do_read_entry(table, match, visit, arg));
}

/* The table's declared default action as a new entry. */
static struct t4p4s_entry *
declared_default(struct t4p4s_table *t)
{
	const struct t4p4s_table_desc *d = t->desc;
	const struct t4p4s_table_action *da = &d->actions[d->default_action];
	return table_entry_new(t, d->default_action, d->default_data,
			       t4p4s_program.actions[da->action].data_size);
}

static int
do_reset_default(uint16_t table)
{
	int ret = check_table(table, false);
	if (ret != 0)
		return ret;
	struct t4p4s_table *t = t4p4s_tables[table];
	if (t->desc->default_is_const)
		return fail(-EPERM, "table %s has a const default action",
			    t->desc->name);
	struct t4p4s_entry *e = declared_default(t);
	if (e == NULL)
		return fail(-ENOMEM, "out of memory");
	table_set_default(t, e);
	return 0;
}

int
t4p4s_ctl_table_reset_default(uint16_t table)
{
	LOCKED(do_reset_default(table));
}

static int
do_counter_write(uint16_t counter, uint32_t index,
		 const struct t4p4s_counter_value *value)
{
	if (counter >= t4p4s_program.n_counters)
		return fail(-EINVAL, "no counter with index %u", counter);
	struct t4p4s_counter *c = t4p4s_counters[counter];
	if (c->desc->direct_table >= 0)
		return fail(-EINVAL, "%s is a direct counter: write it through "
			    "its table entry", c->desc->name);
	if (index >= c->size)
		return fail(-EINVAL, "index %u out of range for %s (size %u)",
			    index, c->desc->name, c->size);
	struct t4p4s_counter_cell cell = { value->packets, value->bytes };
	t4p4s_counter_set_slot(c, index, &cell);
	return 0;
}

int
t4p4s_ctl_counter_write(uint16_t counter, uint32_t index,
			const struct t4p4s_counter_value *value)
{
	LOCKED(do_counter_write(counter, index, value));
}

static int
do_direct_counter_write(uint16_t table, const struct t4p4s_match_spec *match,
			const struct t4p4s_counter_value *value)
{
	int ret;
	struct table_record *r = find_record(table, match, &ret);
	if (r == NULL)
		return ret;
	struct t4p4s_table *t = t4p4s_tables[table];
	if (t->direct_counter == NULL)
		return fail(-EINVAL, "table %s has no direct counter",
			    t->desc->name);
	uint32_t slot = r->entry->counter_slot;
	if (slot == UINT32_MAX)
		return fail(-ENOSPC, "entry of %s has no counter slot",
			    t->desc->name);
	struct t4p4s_counter_cell cell = { value->packets, value->bytes };
	t4p4s_counter_set_slot(t->direct_counter, slot, &cell);
	return 0;
}

int
t4p4s_ctl_direct_counter_write(uint16_t table,
			       const struct t4p4s_match_spec *match,
			       const struct t4p4s_counter_value *value)
{
	LOCKED(do_direct_counter_write(table, match, value));
}

static int
reset_table(struct t4p4s_table *t)
{
	const struct t4p4s_table_desc *d = t->desc;
	if (d->entries_are_const)
		return 0;    /* nothing but its const entries, never changed */
	int ret = table_clear(t);
	for (uint16_t j = 0; j < d->n_const_entries && ret == 0; j++)
		ret = install_const_entry(t, &d->const_entries[j]);
	if (ret != 0)
		return fail(ret, "resetting table %s: %s", d->name,
			    strerror(-ret));
	struct t4p4s_entry *e = declared_default(t);
	if (e == NULL)
		return fail(-ENOMEM, "out of memory");
	table_set_default(t, e);
	return 0;
}

static int
do_reset_state(void)
{
	for (uint16_t i = 0; i < t4p4s_program.n_tables; i++) {
		int ret = reset_table(t4p4s_tables[i]);
		if (ret != 0)
			return ret;
	}
	for (uint16_t i = 0; i < t4p4s_program.n_counters; i++)
		t4p4s_counter_clear(t4p4s_counters[i]);
	/* registers in a registers file outlive the process and every commit
	 * of its (one) pipeline: they hold what must continue across a restart
	 * (the gNB's sequence numbers); a register write or reset clears them */
	for (uint16_t i = 0; i < t4p4s_program.n_registers &&
	     !t4p4s_registers_persistent(); i++)
		t4p4s_register_reset(t4p4s_registers[i]);
	for (uint32_t s = 0; s < T4P4S_MAX_CLONE_SESSIONS; s++)
		t4p4s_clone_session_clear(s);
	t4p4s_mcast_groups_clear();
	return 0;
}

int
t4p4s_ctl_reset_state(void)
{
	LOCKED(do_reset_state());
}
