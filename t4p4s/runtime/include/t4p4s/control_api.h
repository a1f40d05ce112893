/* The C table-management API of the runtime.
 *
 * This is what the JSON control layer (--control socket, --entries file)
 * and the P4Runtime server call. Objects are addressed by their index in
 * the program descriptors (t4p4s_program.tables / actions / counters /
 * registers); callers map P4Info ids or names to indices with
 * t4p4s_ctl_find_*().
 *
 * Every function is thread-safe: writers are serialized by one mutex, the
 * fast path never takes it. Errors are negative errno values:
 *   -EEXIST  entry already installed (add)
 *   -ENOENT  no such entry / session (modify, delete)
 *   -EINVAL  bad index, width, mask, prefix, priority or action
 *   -ENOSPC  the table is full (its P4 `size`)
 *   -EPERM   const entries / const default action
 *   -ENOMEM  out of memory
 * After an error, t4p4s_ctl_last_error() gives a human-readable reason
 * (per calling thread).
 */
#ifndef T4P4S_CONTROL_API_H
#define T4P4S_CONTROL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct t4p4s_param_desc;

/* A match in key-buffer layout (see struct t4p4s_key_field_desc): both
 * arrays are key_size bytes. Per field:
 *   exact:    value; mask ignored
 *   ternary:  value, mask (value bits outside the mask must be zero)
 *   optional: value, mask all ones (match) or all zero (wildcard)
 *   lpm:      value, mask = prefix mask (contiguous ones from the MSB;
 *             value bits beyond the prefix must be zero)
 *   range:    value = low, mask = high (low <= high)
 * A wildcard is mask 0 (ternary/optional/lpm) or low 0, high all ones.
 * priority: larger wins; required (> 0) when the table has a ternary,
 * range or optional field, 0 otherwise. */
struct t4p4s_match_spec {
	const uint8_t *value;
	const uint8_t *mask;
	int32_t priority;
};

/* A byte string as P4Runtime carries it: big-endian, any length (leading
 * zero bytes allowed), value must fit the parameter's bitwidth. */
struct t4p4s_bytes {
	const uint8_t *data;
	size_t len;
};

/* An action and its parameters in descriptor order. */
struct t4p4s_action_spec {
	uint16_t action;                   /* index into t4p4s_program.actions */
	const struct t4p4s_bytes *params;  /* n_params of the action */
};

/* One entry as read back. Pointers are valid during the visitor call. */
struct t4p4s_entry_view {
	const uint8_t *value;       /* key_size bytes, layout as in match_spec */
	const uint8_t *mask;
	int32_t priority;
	uint16_t action;            /* index into t4p4s_program.actions */
	const uint8_t *data;        /* action data, host layout */
	bool has_counter;           /* the table has a direct counter */
	uint64_t packets;
	uint64_t bytes;
};

typedef int (*t4p4s_entry_visitor)(void *arg,
				   const struct t4p4s_entry_view *entry);

struct t4p4s_counter_value {
	uint64_t packets;
	uint64_t bytes;
};

const char *t4p4s_ctl_last_error(void);

/* Name (P4Info fully qualified) or P4Info id -> index; -ENOENT if none. */
int t4p4s_ctl_find_table(const char *name);
int t4p4s_ctl_find_action(const char *name);
int t4p4s_ctl_find_counter(const char *name);
int t4p4s_ctl_find_register(const char *name);
int t4p4s_ctl_find_table_by_id(uint32_t id);
int t4p4s_ctl_find_action_by_id(uint32_t id);
int t4p4s_ctl_find_counter_by_id(uint32_t id);
int t4p4s_ctl_find_register_by_id(uint32_t id);

int t4p4s_ctl_table_add(uint16_t table, const struct t4p4s_match_spec *match,
			const struct t4p4s_action_spec *action);
int t4p4s_ctl_table_modify(uint16_t table,
			   const struct t4p4s_match_spec *match,
			   const struct t4p4s_action_spec *action);
int t4p4s_ctl_table_delete(uint16_t table,
			   const struct t4p4s_match_spec *match);
int t4p4s_ctl_table_clear(uint16_t table);
/* How many entries the table holds (not the default): what a reader that
 * only counts would otherwise fetch every entry for. */
int t4p4s_ctl_table_count(uint16_t table, uint32_t *n_entries);
int t4p4s_ctl_table_set_default(uint16_t table,
				const struct t4p4s_action_spec *action);
/* Calls `visit` for every entry (stops at its first non-zero return, which
 * is then returned). */
int t4p4s_ctl_table_read(uint16_t table, t4p4s_entry_visitor visit,
			 void *arg);
/* The default action: `out->value`/`mask` are NULL. */
int t4p4s_ctl_table_get_default(uint16_t table,
				int (*visit)(void *arg,
					     const struct t4p4s_entry_view *),
				void *arg);

/* An action parameter from host-layout action data as big-endian bytes
 * (ceil(bitwidth/8) of them) into `out`. */
void t4p4s_ctl_param_to_bytes(const struct t4p4s_param_desc *param,
			      const uint8_t *data, uint8_t *out);

/* Indirect or direct counters. */
int t4p4s_ctl_counter_read(uint16_t counter, uint32_t index,
			   struct t4p4s_counter_value *out);
int t4p4s_ctl_counter_reset(uint16_t counter);

int t4p4s_ctl_register_read(uint16_t reg, uint32_t index, uint64_t *value);
int t4p4s_ctl_register_write(uint16_t reg, uint32_t index, uint64_t value);
int t4p4s_ctl_register_reset(uint16_t reg);

/* Clone (mirror) sessions: packets cloned to `session` leave on `port`,
 * cut to `truncate` bytes (0: whole packet). */
int t4p4s_ctl_clone_session_add(uint32_t session, uint32_t port,
				uint32_t truncate);
int t4p4s_ctl_clone_session_delete(uint32_t session);

/* Multicast groups (the packet replication engine). Group ids are
 * 1..T4P4S_CTL_MAX_MCAST_GROUPS-1 (mcast_grp is bit<16>; 0 means no
 * multicast). A replica's port must fit the program's port width, its
 * instance bit<16> (egress_rid), and no (port, instance) pair may repeat:
 * otherwise -EINVAL. Insert of an existing group -EEXIST, modify or delete
 * of a missing one -ENOENT, more than T4P4S_CTL_MAX_MCAST_REPLICAS
 * replicas or T4P4S_CTL_MAX_MCAST_METADATA bytes of metadata -ENOSPC.
 * `metadata` is the controller's, returned by reads. */
#define T4P4S_CTL_MAX_MCAST_GROUPS 65536
#define T4P4S_CTL_MAX_MCAST_REPLICAS 4096
#define T4P4S_CTL_MAX_MCAST_METADATA 4096
#define T4P4S_CTL_MAX_MCAST_INSTANCE 0xFFFF
struct t4p4s_ctl_mcast_replica {
	uint32_t port;
	uint32_t instance;
};
int t4p4s_ctl_mcast_group_insert(uint32_t group,
				 const struct t4p4s_ctl_mcast_replica *replicas,
				 uint32_t n, const void *metadata,
				 uint32_t metadata_len);
int t4p4s_ctl_mcast_group_modify(uint32_t group,
				 const struct t4p4s_ctl_mcast_replica *replicas,
				 uint32_t n, const void *metadata,
				 uint32_t metadata_len);
int t4p4s_ctl_mcast_group_delete(uint32_t group);
/* Group `group`'s replicas into `replicas` (room for
 * T4P4S_CTL_MAX_MCAST_REPLICAS) and metadata into `metadata` (room for
 * T4P4S_CTL_MAX_MCAST_METADATA bytes): the number of replicas, or -ENOENT. */
int t4p4s_ctl_mcast_group_read(uint32_t group,
			       struct t4p4s_ctl_mcast_replica *replicas,
			       uint8_t *metadata, uint32_t *metadata_len);
/* The smallest group id above `after` that exists, or -ENOENT. */
int t4p4s_ctl_mcast_group_next(uint32_t after);

/* ---- used by the P4Runtime server ----------------------------------- */

/* Hold the control mutex across several calls (it is recursive): a batch
 * of writes takes it once, and a reader sees no write of another client
 * half done. Every begin needs its end, on the same thread. */
void t4p4s_ctl_batch_begin(void);
void t4p4s_ctl_batch_end(void);

/* The one entry whose match is exactly `match` (-ENOENT if none). */
int t4p4s_ctl_table_read_entry(uint16_t table,
			       const struct t4p4s_match_spec *match,
			       t4p4s_entry_visitor visit, void *arg);
/* Back to the default action the P4 program declares (-EPERM if const). */
int t4p4s_ctl_table_reset_default(uint16_t table);

/* Sets one cell of an indirect counter. Lcores keep counting meanwhile:
 * a packet counted in the same instant may be lost. */
int t4p4s_ctl_counter_write(uint16_t counter, uint32_t index,
			    const struct t4p4s_counter_value *value);
/* Sets the direct counter of the entry `match` of `table` (-ENOENT if no
 * such entry, -EINVAL if the table has no direct counter). */
int t4p4s_ctl_direct_counter_write(uint16_t table,
				   const struct t4p4s_match_spec *match,
				   const struct t4p4s_counter_value *value);

/* The port and truncate length of a clone session (-ENOENT if unset). */
int t4p4s_ctl_clone_session_read(uint32_t session, uint32_t *port,
				 uint32_t *truncate);
/* Sessions are numbered 0..T4P4S_CTL_MAX_CLONE_SESSIONS-1. */
#define T4P4S_CTL_MAX_CLONE_SESSIONS 32768

/* The forwarding state as the program starts: every table emptied but for
 * its const entries, default actions as declared, counters and registers
 * zero, no clone session, no multicast group. Registers kept in a
 * registers file (--registers-file) are left as they are: they outlive the
 * process and its pipeline commits. */
int t4p4s_ctl_reset_state(void);

#ifdef __cplusplus
}
#endif

#endif
