/* The JSON control protocol (one object per command, one reply each) over
 * the C API: P4Info names -> descriptor indices, JSON integers or
 * strings ("0x1f", "31") -> big-endian bytes of the field's width. Used by
 * the --control socket and by --entries. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_common.h>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "control_internal.h"
#include "options.h"
#include "power_stats.h"
#include "runtime.h"
#include "test_ports.h"

#define MAX_VALUE_BYTES 64   /* 512-bit fields and parameters */

/* A reply being built: NULL until an error is recorded. */
struct request {
	json_t *error;
};

static void __attribute__((format(printf, 3, 4)))
set_error(struct request *rq, const char *code, const char *fmt, ...)
{
	if (rq->error != NULL)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq->error = json_pack("{s:b, s:s, s:s}", "ok", 0, "error", code,
			      "message", msg);
}

static const char *
errno_name(int err)
{
	switch (-err) {
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	case EPERM: return "EPERM";
	default: return "EINVAL";
	}
}

/* Records a C API failure; returns true if `ret` is one. */
static bool
api_failed(struct request *rq, int ret)
{
	if (ret >= 0)
		return false;
	set_error(rq, errno_name(ret), "%s", t4p4s_ctl_last_error());
	return true;
}

/* ---- integers --------------------------------------------------------- */

static int
digit_value(char c, unsigned base)
{
	int d = isdigit((unsigned char)c) ? c - '0'
		: isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10
		: -1;
	return d >= 0 && (unsigned)d < base ? d : -1;
}

/* out = out * base + digit over n big-endian bytes; false on overflow */
static bool
mul_add(uint8_t *out, unsigned n, unsigned base, unsigned digit)
{
	unsigned carry = digit;
	for (unsigned i = n; i-- > 0;) {
		unsigned v = out[i] * base + carry;
		out[i] = (uint8_t)v;
		carry = v >> 8;
	}
	return carry == 0;
}

/* A JSON integer or string -> `bitwidth` bits as ceil(bitwidth/8)
 * big-endian bytes in out. */
static bool
parse_uint(struct request *rq, json_t *v, unsigned bitwidth, uint8_t *out,
	   const char *what)
{
	unsigned n = (bitwidth + 7) / 8;
	memset(out, 0, n);
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		if (x < 0) {
			set_error(rq, "EINVAL", "%s: negative value", what);
			return false;
		}
		uint8_t be[8];
		t4p4s_store_be64(be, 8, (uint64_t)x);
		for (unsigned i = 0; i < 8; i++) {
			if (i + n < 8) {
				if (be[i] != 0)
					goto too_wide;
			} else {
				out[i + n - 8] = be[i];
			}
		}
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		unsigned base = 10;
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			base = 16;
			s += 2;
		}
		if (*s == '\0')
			goto bad;
		for (; *s; s++) {
			int d = digit_value(*s, base);
			if (d < 0)
				goto bad;
			if (n == 0 || !mul_add(out, n, base, (unsigned)d))
				goto too_wide;
		}
	} else {
		goto bad;
	}
	if (n > 0 && (out[0] & ~(0xFFu >> (n * 8 - bitwidth))))
		goto too_wide;
	return true;
bad:
	set_error(rq, "EINVAL", "%s: expected an unsigned integer (number, "
		  "\"31\" or \"0x1f\")", what);
	return false;
too_wide:
	set_error(rq, "EINVAL", "%s: value does not fit in %u bits", what,
		  bitwidth);
	return false;
}

static json_t *
uint_to_json(const uint8_t *be, unsigned bitwidth)
{
	unsigned n = (bitwidth + 7) / 8;
	if (bitwidth <= 53)
		return json_integer((json_int_t)(n ? t4p4s_load_be64(be, n) : 0));
	char text[2 + 2 * MAX_VALUE_BYTES + 1] = "0x";
	char *p = text + 2;
	unsigned i = 0;
	while (i + 1 < n && be[i] == 0)
		i++;
	p += sprintf(p, "%x", be[i++]);
	for (; i < n; i++)
		p += sprintf(p, "%02x", be[i]);
	return json_string(text);
}

static json_t *
u64_to_json(uint64_t v, unsigned bitwidth)
{
	uint8_t be[8];
	t4p4s_store_be64(be, 8, v);
	return uint_to_json(be + 8 - (bitwidth + 7) / 8, bitwidth);
}

/* ---- arguments -------------------------------------------------------- */

static const char *
get_name(struct request *rq, json_t *cmd, const char *key)
{
	json_t *v = json_object_get(cmd, key);
	if (!json_is_string(v)) {
		set_error(rq, "EINVAL", "missing string field \"%s\"", key);
		return NULL;
	}
	return json_string_value(v);
}

static bool
get_u32(struct request *rq, json_t *cmd, const char *key, bool required,
	uint32_t *out)
{
	json_t *v = json_object_get(cmd, key);
	if (v == NULL) {
		if (required)
			set_error(rq, "EINVAL", "missing field \"%s\"", key);
		return !required;
	}
	uint8_t be[4];
	if (!parse_uint(rq, v, 32, be, key))
		return false;
	*out = (uint32_t)t4p4s_load_be64(be, 4);
	return true;
}

static int
find(struct request *rq, int (*lookup)(const char *), json_t *cmd,
     const char *key)
{
	const char *name = get_name(rq, cmd, key);
	if (name == NULL)
		return -1;
	int index = lookup(name);
	if (index < 0)
		set_error(rq, "EINVAL", "%s", t4p4s_ctl_last_error());
	return index;
}

static const struct t4p4s_key_field_desc *
find_key(const struct t4p4s_table_desc *d, const char *name)
{
	for (uint16_t k = 0; k < d->n_keys; k++)
		if (strcmp(d->keys[k].name, name) == 0)
			return &d->keys[k];
	return NULL;
}

static void
prefix_mask(uint8_t *m, unsigned bitwidth, unsigned prefix_len)
{
	unsigned n = (bitwidth + 7) / 8;
	memset(m, 0, n);
	for (unsigned i = 0; i < prefix_len; i++) {
		unsigned pos = n * 8 - bitwidth + i;
		m[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
	}
}

static void
full_mask(uint8_t *m, unsigned bitwidth)
{
	unsigned n = (bitwidth + 7) / 8;
	memset(m, 0xFF, n);
	if (n > 0)
		m[0] = (uint8_t)(0xFFu >> (n * 8 - bitwidth));
}

static bool
parse_field(struct request *rq, const struct t4p4s_key_field_desc *f,
	    json_t *m, uint8_t *value, uint8_t *mask)
{
	uint8_t *v = value + f->offset, *k = mask + f->offset;
	switch (f->match_kind) {
	case T4P4S_MATCH_EXACT:
		return parse_uint(rq, m, f->bitwidth, v, f->name);
	case T4P4S_MATCH_OPTIONAL:
		if (!json_is_object(m)) {
			full_mask(k, f->bitwidth);
			return parse_uint(rq, m, f->bitwidth, v, f->name);
		}
		/* {"value", "mask"}: as ternary */
		__attribute__((fallthrough));
	case T4P4S_MATCH_TERNARY:
		if (!json_is_object(m) || !json_object_get(m, "value") ||
		    !json_object_get(m, "mask")) {
			set_error(rq, "EINVAL", "%s: expected {\"value\": V, "
				  "\"mask\": M}", f->name);
			return false;
		}
		return parse_uint(rq, json_object_get(m, "value"), f->bitwidth, v,
				  f->name) &&
		       parse_uint(rq, json_object_get(m, "mask"), f->bitwidth, k,
				  f->name);
	case T4P4S_MATCH_LPM: {
		json_t *len = json_object_get(m, "prefix_len");
		if (!json_is_object(m) || !json_object_get(m, "value") ||
		    !json_is_integer(len)) {
			set_error(rq, "EINVAL", "%s: expected {\"value\": V, "
				  "\"prefix_len\": N}", f->name);
			return false;
		}
		json_int_t plen = json_integer_value(len);
		if (plen < 0 || plen > f->bitwidth) {
			set_error(rq, "EINVAL", "%s: prefix_len %lld out of 0..%u",
				  f->name, (long long)plen, f->bitwidth);
			return false;
		}
		prefix_mask(k, f->bitwidth, (unsigned)plen);
		return parse_uint(rq, json_object_get(m, "value"), f->bitwidth, v,
				  f->name);
	}
	case T4P4S_MATCH_RANGE:
		if (!json_is_object(m) || !json_object_get(m, "low") ||
		    !json_object_get(m, "high")) {
			set_error(rq, "EINVAL", "%s: expected {\"low\": L, "
				  "\"high\": H}", f->name);
			return false;
		}
		return parse_uint(rq, json_object_get(m, "low"), f->bitwidth, v,
				  f->name) &&
		       parse_uint(rq, json_object_get(m, "high"), f->bitwidth, k,
				  f->name);
	}
	return false;
}

/* "match" and "priority" of a command into spec (buffers: key_size). */
static bool
parse_match(struct request *rq, json_t *cmd, const struct t4p4s_table_desc *d,
	    uint8_t *value, uint8_t *mask, struct t4p4s_match_spec *spec)
{
	json_t *match = json_object_get(cmd, "match");
	if (match == NULL)
		match = json_object();
	else
		json_incref(match);
	bool ok = json_is_object(match);
	if (!ok)
		set_error(rq, "EINVAL", "\"match\" must be an object");
	const char *name;
	json_t *m;
	json_object_foreach(match, name, m) {
		if (ok && find_key(d, name) == NULL) {
			set_error(rq, "EINVAL", "table %s has no key field %s",
				  d->name, name);
			ok = false;
		}
	}
	memset(value, 0, d->key_size);
	memset(mask, 0, d->key_size);
	for (uint16_t k = 0; ok && k < d->n_keys; k++) {
		const struct t4p4s_key_field_desc *f = &d->keys[k];
		m = json_object_get(match, f->name);
		if (m != NULL) {
			ok = parse_field(rq, f, m, value, mask);
		} else if (f->match_kind == T4P4S_MATCH_EXACT) {
			set_error(rq, "EINVAL", "missing exact key field %s",
				  f->name);
			ok = false;
		} else if (f->match_kind == T4P4S_MATCH_RANGE) {
			full_mask(mask + f->offset, f->bitwidth);
		}
	}
	json_decref(match);
	spec->value = value;
	spec->mask = mask;
	spec->priority = 0;
	json_t *prio = json_object_get(cmd, "priority");
	if (ok && prio != NULL) {
		if (!json_is_integer(prio) || json_integer_value(prio) < 0 ||
		    json_integer_value(prio) > INT32_MAX) {
			set_error(rq, "EINVAL", "priority must be an integer in "
				  "0..%d", INT32_MAX);
			return false;
		}
		spec->priority = (int32_t)json_integer_value(prio);
	}
	return ok;
}

/* "action" and "params" into spec (buffers: n_params * MAX_VALUE_BYTES). */
static bool
parse_action(struct request *rq, json_t *cmd, uint8_t *buf,
	     struct t4p4s_bytes *params, struct t4p4s_action_spec *spec)
{
	int a = find(rq, t4p4s_ctl_find_action, cmd, "action");
	if (a < 0)
		return false;
	const struct t4p4s_action_desc *ad = &t4p4s_program.actions[a];
	json_t *p = json_object_get(cmd, "params");
	if (p != NULL && !json_is_object(p)) {
		set_error(rq, "EINVAL", "\"params\" must be an object");
		return false;
	}
	const char *name;
	json_t *v;
	json_object_foreach(p, name, v) {
		uint16_t i;
		for (i = 0; i < ad->n_params; i++)
			if (strcmp(ad->params[i].name, name) == 0)
				break;
		if (i == ad->n_params) {
			set_error(rq, "EINVAL", "action %s has no parameter %s",
				  ad->name, name);
			return false;
		}
	}
	for (uint16_t i = 0; i < ad->n_params; i++) {
		const struct t4p4s_param_desc *pd = &ad->params[i];
		v = json_object_get(p, pd->name);
		if (v == NULL) {
			set_error(rq, "EINVAL", "missing parameter %s of action %s",
				  pd->name, ad->name);
			return false;
		}
		if (pd->bitwidth > MAX_VALUE_BYTES * 8) {
			set_error(rq, "EINVAL", "parameter %s is too wide", pd->name);
			return false;
		}
		uint8_t *b = buf + i * MAX_VALUE_BYTES;
		if (!parse_uint(rq, v, pd->bitwidth, b, pd->name))
			return false;
		params[i] = (struct t4p4s_bytes){ b, (pd->bitwidth + 7u) / 8u };
	}
	spec->action = (uint16_t)a;
	spec->params = params;
	return true;
}

/* ---- commands --------------------------------------------------------- */

static json_t *
ok_reply(void)
{
	return json_pack("{s:b}", "ok", 1);
}

static int
table_of(struct request *rq, json_t *cmd)
{
	return find(rq, t4p4s_ctl_find_table, cmd, "table");
}

enum entry_op { ENTRY_ADD, ENTRY_MODIFY, ENTRY_DELETE };

static json_t *
entry_command(struct request *rq, json_t *cmd, enum entry_op op)
{
	int t = table_of(rq, cmd);
	if (t < 0)
		return NULL;
	const struct t4p4s_table_desc *d = &t4p4s_program.tables[t];
	uint8_t value[d->key_size ? d->key_size : 1];
	uint8_t mask[d->key_size ? d->key_size : 1];
	struct t4p4s_match_spec match;
	if (!parse_match(rq, cmd, d, value, mask, &match))
		return NULL;
	if (op == ENTRY_DELETE) {
		if (api_failed(rq, t4p4s_ctl_table_delete((uint16_t)t, &match)))
			return NULL;
		return ok_reply();
	}
	uint8_t buf[256 * MAX_VALUE_BYTES];
	struct t4p4s_bytes params[256];
	struct t4p4s_action_spec action;
	if (!parse_action(rq, cmd, buf, params, &action))
		return NULL;
	int ret = op == ENTRY_ADD
		? t4p4s_ctl_table_add((uint16_t)t, &match, &action)
		: t4p4s_ctl_table_modify((uint16_t)t, &match, &action);
	return api_failed(rq, ret) ? NULL : ok_reply();
}

static json_t *
cmd_table_add(struct request *rq, json_t *cmd)
{
	return entry_command(rq, cmd, ENTRY_ADD);
}

static json_t *
cmd_table_modify(struct request *rq, json_t *cmd)
{
	return entry_command(rq, cmd, ENTRY_MODIFY);
}

static json_t *
cmd_table_delete(struct request *rq, json_t *cmd)
{
	return entry_command(rq, cmd, ENTRY_DELETE);
}

static json_t *
cmd_table_set_default(struct request *rq, json_t *cmd)
{
	int t = table_of(rq, cmd);
	uint8_t buf[256 * MAX_VALUE_BYTES];
	struct t4p4s_bytes params[256];
	struct t4p4s_action_spec action;
	if (t < 0 || !parse_action(rq, cmd, buf, params, &action))
		return NULL;
	if (api_failed(rq, t4p4s_ctl_table_set_default((uint16_t)t, &action)))
		return NULL;
	return ok_reply();
}

static json_t *
cmd_table_clear(struct request *rq, json_t *cmd)
{
	int t = table_of(rq, cmd);
	if (t < 0 || api_failed(rq, t4p4s_ctl_table_clear((uint16_t)t)))
		return NULL;
	return ok_reply();
}

static json_t *
action_json(const struct t4p4s_entry_view *e, json_t *into)
{
	const struct t4p4s_action_desc *a = &t4p4s_program.actions[e->action];
	json_t *params = json_object();
	for (uint16_t i = 0; i < a->n_params; i++) {
		uint8_t be[MAX_VALUE_BYTES];
		t4p4s_ctl_param_to_bytes(&a->params[i], e->data, be);
		json_object_set_new(params, a->params[i].name,
				    uint_to_json(be, a->params[i].bitwidth));
	}
	json_object_set_new(into, "action", json_string(a->name));
	json_object_set_new(into, "params", params);
	return into;
}

static bool
is_full(const uint8_t *m, unsigned bitwidth)
{
	uint8_t full[MAX_VALUE_BYTES];
	full_mask(full, bitwidth);
	return memcmp(m, full, (bitwidth + 7) / 8) == 0;
}

static bool
is_zero(const uint8_t *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (m[i])
			return false;
	return true;
}

/* A field as table_add takes it; NULL for a wildcard. */
static json_t *
field_json(const struct t4p4s_key_field_desc *f, const uint8_t *value,
	   const uint8_t *mask)
{
	const uint8_t *v = value + f->offset, *m = mask + f->offset;
	unsigned n = (f->bitwidth + 7) / 8, w = f->bitwidth;
	switch (f->match_kind) {
	case T4P4S_MATCH_EXACT:
		return uint_to_json(v, w);
	case T4P4S_MATCH_OPTIONAL:
		return is_zero(m, n) ? NULL : uint_to_json(v, w);
	case T4P4S_MATCH_TERNARY:
		if (is_zero(m, n))
			return NULL;
		return json_pack("{s:o, s:o}", "value", uint_to_json(v, w),
				 "mask", uint_to_json(m, w));
	case T4P4S_MATCH_LPM: {
		unsigned len = 0;
		for (unsigned i = 0; i < n; i++)
			len += (unsigned)__builtin_popcount(m[i]);
		if (len == 0)
			return NULL;
		return json_pack("{s:o, s:i}", "value", uint_to_json(v, w),
				 "prefix_len", len);
	}
	case T4P4S_MATCH_RANGE:
		if (is_zero(v, n) && is_full(m, w))
			return NULL;
		return json_pack("{s:o, s:o}", "low", uint_to_json(v, w),
				 "high", uint_to_json(m, w));
	}
	return NULL;
}

struct read_ctx {
	const struct t4p4s_table_desc *d;
	json_t *entries;
};

static int
add_entry_json(void *arg, const struct t4p4s_entry_view *e)
{
	struct read_ctx *ctx = arg;
	json_t *match = json_object();
	for (uint16_t k = 0; k < ctx->d->n_keys; k++) {
		json_t *f = field_json(&ctx->d->keys[k], e->value, e->mask);
		if (f != NULL)
			json_object_set_new(match, ctx->d->keys[k].name, f);
	}
	json_t *entry = json_pack("{s:o, s:I}", "match", match,
				  "priority", (json_int_t)e->priority);
	action_json(e, entry);
	if (e->has_counter)
		json_object_set_new(entry, "counter", json_pack("{s:I, s:I}",
			"packets", (json_int_t)e->packets,
			"bytes", (json_int_t)e->bytes));
	json_array_append_new(ctx->entries, entry);
	return 0;
}

static int
set_default_json(void *arg, const struct t4p4s_entry_view *e)
{
	action_json(e, arg);
	return 0;
}

static json_t *
cmd_table_read(struct request *rq, json_t *cmd)
{
	int t = table_of(rq, cmd);
	if (t < 0)
		return NULL;
	struct read_ctx ctx = { &t4p4s_program.tables[t], json_array() };
	json_t *def = json_object();
	json_t *reply = json_pack("{s:b, s:o, s:o}", "ok", 1,
				  "entries", ctx.entries, "default", def);
	if (api_failed(rq, t4p4s_ctl_table_read((uint16_t)t, add_entry_json,
						&ctx)) ||
	    api_failed(rq, t4p4s_ctl_table_get_default((uint16_t)t,
						       set_default_json, def))) {
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/* {"cmd": "table_count", "table": NAME} -> {"entries": N, "size": S}:
 * gnbctl status counts 65,536 DRBs without reading them */
static json_t *
cmd_table_count(struct request *rq, json_t *cmd)
{
	int t = table_of(rq, cmd);
	uint32_t n_entries = 0;
	if (t < 0 || api_failed(rq, t4p4s_ctl_table_count((uint16_t)t, &n_entries)))
		return NULL;
	return json_pack("{s:b, s:I, s:I}", "ok", 1, "entries", (json_int_t)n_entries,
			 "size", (json_int_t)t4p4s_program.tables[t].size);
}

static json_t *
cmd_register_read(struct request *rq, json_t *cmd)
{
	int r = find(rq, t4p4s_ctl_find_register, cmd, "register");
	uint32_t index = 0;
	if (r < 0 || !get_u32(rq, cmd, "index", false, &index))
		return NULL;
	const struct t4p4s_register_desc *d = &t4p4s_program.registers[r];
	uint64_t v;
	if (json_object_get(cmd, "index") != NULL) {
		if (api_failed(rq, t4p4s_ctl_register_read((uint16_t)r, index, &v)))
			return NULL;
		return json_pack("{s:b, s:o}", "ok", 1, "value",
				 u64_to_json(v, d->bitwidth));
	}
	json_t *values = json_array();
	for (uint32_t i = 0; i < d->size; i++) {
		t4p4s_ctl_register_read((uint16_t)r, i, &v);
		json_array_append_new(values, u64_to_json(v, d->bitwidth));
	}
	return json_pack("{s:b, s:o}", "ok", 1, "values", values);
}

static json_t *
cmd_register_write(struct request *rq, json_t *cmd)
{
	int r = find(rq, t4p4s_ctl_find_register, cmd, "register");
	uint32_t index;
	if (r < 0 || !get_u32(rq, cmd, "index", true, &index))
		return NULL;
	const struct t4p4s_register_desc *d = &t4p4s_program.registers[r];
	json_t *v = json_object_get(cmd, "value");
	uint8_t be[8];
	if (v == NULL) {
		set_error(rq, "EINVAL", "missing field \"value\"");
		return NULL;
	}
	if (!parse_uint(rq, v, d->bitwidth, be, "value"))
		return NULL;
	uint64_t x = t4p4s_load_be64(be, (d->bitwidth + 7u) / 8u);
	if (api_failed(rq, t4p4s_ctl_register_write((uint16_t)r, index, x)))
		return NULL;
	return ok_reply();
}

static json_t *
cmd_register_reset(struct request *rq, json_t *cmd)
{
	int r = find(rq, t4p4s_ctl_find_register, cmd, "register");
	if (r < 0 || api_failed(rq, t4p4s_ctl_register_reset((uint16_t)r)))
		return NULL;
	return ok_reply();
}

static json_t *
counter_json(const struct t4p4s_counter_value *v)
{
	return json_pack("{s:I, s:I}", "packets", (json_int_t)v->packets,
			 "bytes", (json_int_t)v->bytes);
}

static json_t *
cmd_counter_read(struct request *rq, json_t *cmd)
{
	int c = find(rq, t4p4s_ctl_find_counter, cmd, "counter");
	uint32_t index = 0;
	if (c < 0 || !get_u32(rq, cmd, "index", false, &index))
		return NULL;
	struct t4p4s_counter_value v;
	if (json_object_get(cmd, "index") != NULL) {
		if (api_failed(rq, t4p4s_ctl_counter_read((uint16_t)c, index, &v)))
			return NULL;
		json_t *reply = counter_json(&v);
		json_object_set_new(reply, "ok", json_true());
		return reply;
	}
	json_t *values = json_array();
	for (uint32_t i = 0; i < t4p4s_program.counters[c].size; i++) {
		t4p4s_ctl_counter_read((uint16_t)c, i, &v);
		json_array_append_new(values, counter_json(&v));
	}
	return json_pack("{s:b, s:o}", "ok", 1, "values", values);
}

static json_t *
cmd_counter_reset(struct request *rq, json_t *cmd)
{
	int c = find(rq, t4p4s_ctl_find_counter, cmd, "counter");
	if (c < 0 || api_failed(rq, t4p4s_ctl_counter_reset((uint16_t)c)))
		return NULL;
	return ok_reply();
}

static json_t *
cmd_clone_session_add(struct request *rq, json_t *cmd)
{
	uint32_t session, port, truncate = 0;
	if (!get_u32(rq, cmd, "session", true, &session) ||
	    !get_u32(rq, cmd, "port", true, &port) ||
	    !get_u32(rq, cmd, "truncate", false, &truncate))
		return NULL;
	if (api_failed(rq, t4p4s_ctl_clone_session_add(session, port, truncate)))
		return NULL;
	return ok_reply();
}

static json_t *
cmd_clone_session_delete(struct request *rq, json_t *cmd)
{
	uint32_t session;
	if (!get_u32(rq, cmd, "session", true, &session) ||
	    api_failed(rq, t4p4s_ctl_clone_session_delete(session)))
		return NULL;
	return ok_reply();
}

/* {"group": G, "replicas": [{"port": P, "rid": R}, ...]}: the replicas in
 * `out` (room for T4P4S_CTL_MAX_MCAST_REPLICAS); the count, or -1 */
static int
get_replicas(struct request *rq, json_t *cmd, struct t4p4s_ctl_mcast_replica *out)
{
	json_t *list = json_object_get(cmd, "replicas");
	if (list == NULL)
		return 0;
	if (!json_is_array(list)) {
		set_error(rq, "EINVAL", "\"replicas\": expected a list of "
			  "{\"port\": P, \"rid\": R}");
		return -1;
	}
	if (json_array_size(list) > T4P4S_CTL_MAX_MCAST_REPLICAS) {
		set_error(rq, "ENOSPC", "%zu replicas; a group has at most %u",
			  json_array_size(list), T4P4S_CTL_MAX_MCAST_REPLICAS);
		return -1;
	}
	size_t i;
	json_t *r;
	json_array_foreach(list, i, r) {
		out[i].instance = 0;
		if (!json_is_object(r)) {
			set_error(rq, "EINVAL", "replica %zu: expected {\"port\": P, \"rid\": R}", i);
			return -1;
		}
		if (!get_u32(rq, r, "port", true, &out[i].port) ||
		    !get_u32(rq, r, "rid", false, &out[i].instance))
			return -1;
	}
	return (int)json_array_size(list);
}

static json_t *
mcast_group_write(struct request *rq, json_t *cmd,
		  int (*write)(uint32_t, const struct t4p4s_ctl_mcast_replica *,
			       uint32_t, const void *, uint32_t))
{
	struct t4p4s_ctl_mcast_replica replicas[T4P4S_CTL_MAX_MCAST_REPLICAS];
	uint32_t group;
	if (!get_u32(rq, cmd, "group", true, &group))
		return NULL;
	int n = get_replicas(rq, cmd, replicas);
	if (n < 0 || api_failed(rq, write(group, replicas, (uint32_t)n, NULL, 0)))
		return NULL;
	return ok_reply();
}

static json_t *
cmd_mcast_group_add(struct request *rq, json_t *cmd)
{
	return mcast_group_write(rq, cmd, t4p4s_ctl_mcast_group_insert);
}

static json_t *
cmd_mcast_group_modify(struct request *rq, json_t *cmd)
{
	return mcast_group_write(rq, cmd, t4p4s_ctl_mcast_group_modify);
}

static json_t *
cmd_mcast_group_delete(struct request *rq, json_t *cmd)
{
	uint32_t group;
	if (!get_u32(rq, cmd, "group", true, &group) ||
	    api_failed(rq, t4p4s_ctl_mcast_group_delete(group)))
		return NULL;
	return ok_reply();
}

/* {"group": G}: that group; no group: every group, by id */
static json_t *
cmd_mcast_group_read(struct request *rq, json_t *cmd)
{
	struct t4p4s_ctl_mcast_replica replicas[T4P4S_CTL_MAX_MCAST_REPLICAS];
	uint8_t metadata[T4P4S_CTL_MAX_MCAST_METADATA];
	uint32_t wanted = 0;
	if (!get_u32(rq, cmd, "group", false, &wanted))
		return NULL;
	json_t *groups = json_array();
	int g = wanted != 0 ? (int)wanted : t4p4s_ctl_mcast_group_next(0);
	while (g > 0) {
		uint32_t metadata_len;
		int n = t4p4s_ctl_mcast_group_read((uint32_t)g, replicas, metadata,
						   &metadata_len);
		if (n < 0 && wanted != 0) {
			json_decref(groups);
			api_failed(rq, n);
			return NULL;
		}
		if (n >= 0) {
			json_t *list = json_array();
			for (int i = 0; i < n; i++)
				json_array_append_new(list, json_pack(
					"{s:I, s:I}", "port", (json_int_t)replicas[i].port,
					"rid", (json_int_t)replicas[i].instance));
			json_array_append_new(groups, json_pack(
				"{s:i, s:o}", "group", g, "replicas", list));
		}
		g = wanted != 0 ? 0 : t4p4s_ctl_mcast_group_next((uint32_t)g);
	}
	return json_pack("{s:b, s:o}", "ok", 1, "groups", groups);
}

static json_t *
cmd_stats(struct request *rq __rte_unused, json_t *cmd __rte_unused)
{
	return t4p4s_stats_json();
}

static json_t *
cmd_ping(struct request *rq __rte_unused, json_t *cmd __rte_unused)
{
	return ok_reply();
}

/* {"cmd": "latency_reset"}: the --latency histograms start again (a
 * benchmark's measured window after its warm-up) */
static json_t *
cmd_latency_reset(struct request *rq, json_t *cmd __rte_unused)
{
	if (!t4p4s_latency_enabled()) {
		set_error(rq, "EINVAL", "latency_reset: the runtime was started without --latency");
		return NULL;
	}
	t4p4s_latency_reset();
	return ok_reply();
}

#define MAX_STALL_MS 10000

/* {"cmd": "stall", "ms": N}: every forwarding lcore sleeps N ms once,
 * within a millisecond: what a lcore that does not poll costs (the
 * offered-load tests: ring overflow, latency) */
static json_t *
cmd_stall(struct request *rq, json_t *cmd)
{
	json_t *ms = json_object_get(cmd, "ms");
	if (!json_is_integer(ms) || json_integer_value(ms) < 1 ||
	    json_integer_value(ms) > MAX_STALL_MS) {
		set_error(rq, "EINVAL", "stall: \"ms\" must be an integer 1..%d", MAX_STALL_MS);
		return NULL;
	}
	t4p4s_lcores_stall((uint64_t)json_integer_value(ms) * 1000);
	return ok_reply();
}

/* {"cmd": "power"}: the governor's backends and every lcore's state */
static json_t *
cmd_power(struct request *rq __rte_unused, json_t *cmd __rte_unused)
{
	return t4p4s_power_json();
}

/* A power command's reply, or its refusal as EINVAL */
static json_t *
power_command(struct request *rq, json_t *cmd,
	      json_t *(*run)(json_t *cmd, char *err, size_t err_len))
{
	char err[320];
	json_t *reply = run(cmd, err, sizeof(err));
	if (reply == NULL)
		set_error(rq, "EINVAL", "%s", err);
	return reply;
}

/* {"cmd": "power_mode", "mode": M[, "lcore": L]} */
static json_t *
cmd_power_mode(struct request *rq, json_t *cmd)
{
	return power_command(rq, cmd, t4p4s_power_mode_command);
}

/* {"cmd": "power_thresholds", "thresholds": {NAME: N, ...}[, "lcore": L]} */
static json_t *
cmd_power_thresholds(struct request *rq, json_t *cmd)
{
	return power_command(rq, cmd, t4p4s_power_thresholds_command);
}

/* ---- test ports (--test-ports) --------------------------------------- */

/* "port" of a port_inject/port_drain: one of the --test-ports */
static bool
test_port_of(struct request *rq, json_t *cmd, uint32_t *port)
{
	if (!get_u32(rq, cmd, "port", true, port))
		return false;
	if (t4p4s_test_port_is(*port))
		return true;
	if (t4p4s_rt.opts->n_test_ports == 0)
		set_error(rq, "EINVAL", "port %u: the runtime was started without "
			  "--test-ports, so no port takes port_inject/port_drain", *port);
	else
		set_error(rq, "EINVAL", "port %u is not a test port (--test-ports %u: "
			  "the ports after the --vdev ports)", *port,
			  t4p4s_rt.opts->n_test_ports);
	return false;
}

/* {"cmd": "port_inject", "port": P, "frame": "HEX"}: the frame (0 bytes
 * and up) into test port P's rx ring, as if it had arrived there */
static json_t *
cmd_port_inject(struct request *rq, json_t *cmd)
{
	uint32_t port;
	if (!test_port_of(rq, cmd, &port))
		return NULL;
	json_t *frame = json_object_get(cmd, "frame");
	if (!json_is_string(frame)) {
		set_error(rq, "EINVAL", "port_inject: \"frame\" must be a string of hex "
			  "digits (\"\" for a 0-byte frame)");
		return NULL;
	}
	const char *hex = json_string_value(frame);
	size_t n_hex = json_string_length(frame);
	uint32_t max = t4p4s_test_port_max_frame();
	if (n_hex / 2 > max) {
		set_error(rq, "EINVAL", "port_inject: the frame has %zu bytes, more than "
			  "the %u of one mbuf", n_hex / 2, max);
		return NULL;
	}
	for (size_t i = 0; i < n_hex; i++) {
		if (digit_value(hex[i], 16) < 0) {
			set_error(rq, "EINVAL", "port_inject: \"frame\" has a character that "
				  "is not a hex digit at offset %zu", i);
			return NULL;
		}
	}
	if (n_hex % 2 != 0) {
		set_error(rq, "EINVAL", "port_inject: \"frame\" has an odd number (%zu) of "
			  "hex digits", n_hex);
		return NULL;
	}
	uint8_t *bytes = malloc(n_hex / 2 + 1);
	if (bytes == NULL) {
		set_error(rq, "ENOMEM", "port_inject: out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n_hex; i += 2)
		bytes[i / 2] = (uint8_t)(digit_value(hex[i], 16) << 4 | digit_value(hex[i + 1], 16));
	char err[256];
	int ret = t4p4s_test_port_inject(port, bytes, n_hex / 2, err, sizeof(err));
	free(bytes);
	if (ret != 0) {
		set_error(rq, "ENOSPC", "port_inject: %s", err);
		return NULL;
	}
	return ok_reply();
}

/* {"cmd": "port_drain", "port": P}: every frame the pipeline has sent on
 * test port P since the last drain, in order, as hex strings */
static json_t *
cmd_port_drain(struct request *rq, json_t *cmd)
{
	uint32_t port;
	if (!test_port_of(rq, cmd, &port))
		return NULL;
	char err[256];
	json_t *frames = t4p4s_test_port_drain(port, err, sizeof(err));
	if (frames == NULL) {
		set_error(rq, "ENOMEM", "port_drain: %s", err);
		return NULL;
	}
	return json_pack("{s:b, s:o}", "ok", 1, "frames", frames);
}

static const struct {
	const char *name;
	json_t *(*run)(struct request *rq, json_t *cmd);
} commands[] = {
	{ "table_add", cmd_table_add },
	{ "table_modify", cmd_table_modify },
	{ "table_delete", cmd_table_delete },
	{ "table_set_default", cmd_table_set_default },
	{ "table_read", cmd_table_read },
	{ "table_count", cmd_table_count },
	{ "table_clear", cmd_table_clear },
	{ "register_read", cmd_register_read },
	{ "register_write", cmd_register_write },
	{ "register_reset", cmd_register_reset },
	{ "counter_read", cmd_counter_read },
	{ "counter_reset", cmd_counter_reset },
	{ "clone_session_add", cmd_clone_session_add },
	{ "clone_session_delete", cmd_clone_session_delete },
	{ "mcast_group_add", cmd_mcast_group_add },
	{ "mcast_group_modify", cmd_mcast_group_modify },
	{ "mcast_group_delete", cmd_mcast_group_delete },
	{ "mcast_group_read", cmd_mcast_group_read },
	{ "stats", cmd_stats },
	{ "ping", cmd_ping },
	{ "latency_reset", cmd_latency_reset },
	{ "stall", cmd_stall },
	{ "power", cmd_power },
	{ "power_mode", cmd_power_mode },
	{ "power_thresholds", cmd_power_thresholds },
	{ "port_inject", cmd_port_inject },
	{ "port_drain", cmd_port_drain },
};

json_t *
t4p4s_control_json(json_t *cmd)
{
	struct request rq = { NULL };
	json_t *reply = NULL;
	if (!json_is_object(cmd)) {
		set_error(&rq, "EPARSE", "a command must be a JSON object");
		return rq.error;
	}
	const char *name = get_name(&rq, cmd, "cmd");
	if (name == NULL)
		return rq.error;
	for (size_t i = 0; i < RTE_DIM(commands); i++) {
		if (strcmp(commands[i].name, name) == 0) {
			reply = commands[i].run(&rq, cmd);
			if (rq.error != NULL) {
				json_decref(reply);
				return rq.error;
			}
			return reply;
		}
	}
	set_error(&rq, "EINVAL", "unknown command \"%s\"", name);
	return rq.error;
}

char *
t4p4s_control_line(const char *line, size_t len)
{
	json_error_t err;
	json_t *cmd = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	json_t *reply;
	if (cmd == NULL) {
		struct request rq = { NULL };
		set_error(&rq, "EPARSE", "invalid JSON at column %d: %s",
			  err.column, err.text);
		reply = rq.error;
	} else {
		reply = t4p4s_control_json(cmd);
		json_decref(cmd);
	}
	char *text = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	return text;
}

int
t4p4s_control_load_entries(const char *path)
{
	json_error_t err;
	json_t *all = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (all == NULL) {
		fprintf(stderr, "error: --entries %s:%d:%d: %s\n", path, err.line,
			err.column, err.text);
		return -1;
	}
	if (!json_is_array(all)) {
		fprintf(stderr, "error: --entries %s: expected a JSON array of "
			"commands\n", path);
		json_decref(all);
		return -1;
	}
	size_t i;
	json_t *cmd;
	json_array_foreach(all, i, cmd) {
		json_t *reply = t4p4s_control_json(cmd);
		if (!json_is_true(json_object_get(reply, "ok"))) {
			fprintf(stderr, "error: --entries %s: command %zu: %s: %s\n",
				path, i,
				json_string_value(json_object_get(reply, "error")),
				json_string_value(json_object_get(reply, "message")));
			json_decref(reply);
			json_decref(all);
			return -1;
		}
		json_decref(reply);
	}
	json_decref(all);
	return 0;
}
