/* The contract between compiled P4 programs and the host target runtime.
 *
 * The compiler's C back end (t4p4s/backend/c) writes one C file per program
 * that defines `t4p4s_program` (descriptors of every table, register and
 * counter, with their P4Info ids) and `t4p4s_pipeline_process()` (the whole
 * v1model architecture for one packet: parser, verify checksum, ingress,
 * traffic-manager decisions, egress, compute checksum, deparser).
 *
 * The runtime (t4p4s/runtime/src) owns everything else: EAL and ports,
 * lcore loops, the table, register and counter objects built from the
 * descriptors, control-plane writes, clone sessions, statistics.
 *
 * Ownership of state:
 *   - tables: written by one control thread at a time (the runtime
 *     serializes writers), read lock-free by every lcore; entries freed only
 *     after an RCU grace period (rte_rcu_qsbr), so a reader never sees a
 *     freed entry.
 *   - registers: shared by all lcores; single reads/writes are atomic
 *     (relaxed) for widths up to 64 bits.
 *   - counters (indirect and direct): one slot per lcore, summed on read.
 */
#ifndef T4P4S_PIPELINE_H
#define T4P4S_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <rte_mbuf.h>
#include <rte_branch_prediction.h>

#include "bits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Descriptors written by the compiler (constant data in generated C)
 * ------------------------------------------------------------------- */

enum t4p4s_match_kind {
	T4P4S_MATCH_EXACT,
	T4P4S_MATCH_LPM,
	T4P4S_MATCH_TERNARY,
	T4P4S_MATCH_RANGE,
	T4P4S_MATCH_OPTIONAL,
};

/* A key field as the control plane sees it. In the key buffer the
 * generated code builds, each field is big-endian in ceil(bitwidth/8)
 * bytes (value right-aligned, unused high bits zero), fields back to back
 * in key order: exactly the bytes P4Runtime carries. */
struct t4p4s_key_field_desc {
	const char *name;          /* P4Info match field name, e.g. "hdr.eth.dst" */
	uint32_t id;               /* P4Info match field id (1-based) */
	enum t4p4s_match_kind match_kind;
	uint16_t bitwidth;
	uint16_t offset;           /* byte offset in the key buffer */
};

/* An action parameter. In an entry's action data, each parameter is stored
 * at `offset` as a host-order unsigned integer of `size` bytes (1, 2, 4 or
 * 8) when bitwidth <= 64, else as big-endian bytes (ceil(bitwidth/8)). */
struct t4p4s_param_desc {
	const char *name;
	uint32_t id;               /* P4Info param id (1-based) */
	uint16_t bitwidth;
	uint16_t offset;
	uint16_t size;
};

struct t4p4s_action_desc {
	const char *name;          /* fully qualified P4Info name, "ingress.fwd" */
	uint32_t id;               /* P4Info action id */
	uint16_t n_params;
	const struct t4p4s_param_desc *params;
	uint16_t data_size;        /* bytes of action data this action uses */
};

/* An action a table may run: index into t4p4s_program.actions, plus the
 * scope restrictions of @tableonly / @defaultonly. */
struct t4p4s_table_action {
	uint16_t action;
	bool table_only;
	bool default_only;
};

struct t4p4s_const_entry;

struct t4p4s_table_desc {
	const char *name;          /* fully qualified, "ingress.ipv4_lpm" */
	uint32_t id;               /* P4Info table id */
	uint16_t n_keys;
	const struct t4p4s_key_field_desc *keys;
	uint16_t key_size;         /* bytes of the key buffer */
	uint16_t n_actions;
	const struct t4p4s_table_action *actions;
	uint32_t size;             /* max entries (P4 `size`, default 1024) */
	uint16_t data_size;        /* max action data over the table's actions */
	/* default action: index into `actions`, action data bytes (host layout) */
	uint16_t default_action;
	const uint8_t *default_data;
	bool default_is_const;
	int32_t direct_counter;    /* index into counters, or -1 */
	uint16_t n_const_entries;
	const struct t4p4s_const_entry *const_entries;
	bool entries_are_const;    /* `const entries`: control plane may not write */
};

/* A `const entries` element: key and mask bytes in key-buffer layout
 * (ranges: low bytes in `key`, high bytes in `mask`; lpm: prefix in
 * `prefix_len`), priority as P4Runtime (larger wins), action data in host
 * layout. */
struct t4p4s_const_entry {
	const uint8_t *key;
	const uint8_t *mask;
	uint16_t prefix_len;
	int32_t priority;
	uint16_t action;           /* index into the table's `actions` */
	const uint8_t *data;
};

enum t4p4s_counter_type {
	T4P4S_COUNTER_PACKETS,
	T4P4S_COUNTER_BYTES,
	T4P4S_COUNTER_PACKETS_AND_BYTES,
};

struct t4p4s_counter_desc {
	const char *name;
	uint32_t id;               /* P4Info counter or direct_counter id */
	enum t4p4s_counter_type type;
	uint32_t size;             /* slots; for a direct counter: the table size */
	int32_t direct_table;      /* table index for direct counters, else -1 */
};

struct t4p4s_register_desc {
	const char *name;
	uint32_t id;
	uint16_t bitwidth;         /* <= 64 */
	uint32_t size;
};

struct t4p4s_program {
	const char *name;          /* program file stem, e.g. "l2fwd" */
	const char *p4info_path;   /* where `t4p4s compile` wrote the P4Info */
	uint16_t n_actions;
	const struct t4p4s_action_desc *actions;
	uint16_t n_tables;
	const struct t4p4s_table_desc *tables;
	uint16_t n_counters;
	const struct t4p4s_counter_desc *counters;
	uint16_t n_registers;
	const struct t4p4s_register_desc *registers;
	uint16_t n_errors;          /* P4 `error` members, for statistics */
	const char *const *error_names;
	uint16_t port_bits;         /* width of standard_metadata ports (9) */
	/* The P4Info (serialized p4.config.v1.P4Info) the P4Runtime server
	 * reports and compares a controller's with; NULL when the program was
	 * not generated by `t4p4s compile`. */
	const uint8_t *p4info;
	uint32_t p4info_size;
};

extern const struct t4p4s_program t4p4s_program;

/* ---------------------------------------------------------------------
 * Per-lcore context (owned by the runtime; passed to the pipeline)
 * ------------------------------------------------------------------- */

struct t4p4s_lcore;

/* Runs the whole compiled pipeline on one received packet. Defined by the
 * generated code. The packet ends in exactly one of t4p4s_send() or
 * t4p4s_drop(); so does each clone (t4p4s_clone_copy(), t4p4s_clone_share()). */
void t4p4s_pipeline_process(struct t4p4s_lcore *lc, struct rte_mbuf *m,
			    uint16_t in_port);

/* The same for a received burst, with the same result as calling
 * t4p4s_pipeline_process() on each packet in order. The generated code
 * parses up to T4P4S_STAGE_BURST packets, looks the keys of its exact
 * ingress tables up for all of them at once (so the cache misses of 32
 * lookups overlap instead of following each other), then runs the rest of
 * the pipeline packet by packet. */
#define T4P4S_STAGE_BURST 32
void t4p4s_pipeline_process_burst(struct t4p4s_lcore *lc,
				  struct rte_mbuf **pkts, unsigned n,
				  uint16_t in_port);

/* Index of this lcore among the worker lcores, 0..n_workers-1. */
unsigned t4p4s_lcore_index(const struct t4p4s_lcore *lc);

/* Queue `m` for transmission on `port` (buffered, flushed after each poll
 * round). An out-of-range port drops and counts the packet. */
void t4p4s_send(struct t4p4s_lcore *lc, struct rte_mbuf *m, uint32_t port);

/* Why the runtime dropped a packet: statistics only. */
enum t4p4s_drop_reason {
	T4P4S_DROP_PIPELINE,       /* mark_to_drop / egress_spec == drop port */
	T4P4S_DROP_BAD_PORT,       /* egress port that does not exist */
	T4P4S_DROP_NO_ROOM,        /* deparsed headers do not fit the mbuf */
	T4P4S_DROP_CLONE_FAILED,   /* no mbuf for a clone */
	T4P4S_DROP_CLONE_NO_SESSION, /* a clone asked of a session the control
				      * plane has not configured: none is made
				      * (as bmv2), and no copy is spent on it */
	T4P4S_DROP_TX_FULL,        /* tx queue full */
	T4P4S_DROP_TOO_LONG,       /* longer than the egress port can carry
				    * (net_af_packet: its ring's frame size) */
	T4P4S_DROP_MCAST_NO_GROUP, /* mcast_grp names a group the control
				    * plane has not created (or deleted) */
	T4P4S_DROP_MCAST_EMPTY_GROUP, /* mcast_grp names a group without
				       * replicas */
	T4P4S_DROP_REASONS,
};

void t4p4s_drop(struct t4p4s_lcore *lc, struct rte_mbuf *m,
		enum t4p4s_drop_reason reason);

/* Count a parser error (error code as in t4p4s_program.error_names); the
 * packet continues to ingress as v1model specifies. */
void t4p4s_count_parser_error(struct t4p4s_lcore *lc, uint16_t error_code);

/* Clone session (mirroring_add / PacketReplicationEngine CloneSessionEntry):
 * returns the egress port, or -1 when the session does not exist.
 * `truncate` receives the packet length limit (0 = whole packet). */
int32_t t4p4s_clone_session_port(uint32_t session, uint32_t *truncate);

/* A clone's session: its egress port and truncate length (0 = whole
 * packet). False, and counted (T4P4S_DROP_CLONE_NO_SESSION), when the
 * session does not exist: no clone is made then (as bmv2). */
bool t4p4s_clone_session(struct t4p4s_lcore *lc, uint32_t session,
			 uint32_t *port, uint32_t *truncate);

/* A deep copy of `m` (all segments) for a clone; NULL, and counted
 * (T4P4S_DROP_CLONE_FAILED), when no mbuf is left. */
struct rte_mbuf *t4p4s_clone_copy(struct t4p4s_lcore *lc, const struct rte_mbuf *m);

/* A clone whose bytes are the original's as sent: `m` itself, with one
 * more reference, so that it can be sent (or dropped) once more. PMDs do
 * not modify what they transmit, and the runtime sets its tx queues up
 * without RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE (ports.c), which assumes one
 * reference. Every segment gets the reference: rte_pktmbuf_free() frees a
 * chain segment by segment, each by its own count, so a reference on the
 * first segment alone let the first free release the later segments while
 * the second sender still held them (a double free that corrupted the
 * pool and hung net_pcap's rx). */
static inline struct rte_mbuf *
t4p4s_clone_share(struct rte_mbuf *m)
{
	for (struct rte_mbuf *seg = m; seg != NULL; seg = seg->next)
		rte_mbuf_refcnt_update(seg, 1);
	return m;
}

/* Multicast (the packet replication engine): after ingress, a packet
 * whose standard_metadata.mcast_grp is not 0 leaves as one copy per replica
 * of that group, each through egress with egress_port = port and
 * egress_rid = rid (P4Runtime MulticastGroupEntry; STF mc_mgrp_create). */
struct t4p4s_mcast_replica {
	uint32_t port;
	uint32_t rid;              /* P4Runtime Replica.instance */
};

struct t4p4s_mcast_group {
	uint32_t n_replicas;
	uint32_t metadata_len;     /* P4Runtime's opaque metadata, for reads */
	const uint8_t *metadata;
	struct t4p4s_mcast_replica replicas[];
};

/* Group `group` as the lcore sees it now, or NULL when the control plane
 * has not created it (the caller drops the packet as
 * T4P4S_DROP_MCAST_NO_GROUP, or T4P4S_DROP_MCAST_EMPTY_GROUP for a group
 * without replicas). The group stays valid until the end of this lcore's
 * poll round (RCU), so the caller replicates from it without a lock. */
const struct t4p4s_mcast_group *t4p4s_mcast_group(struct t4p4s_lcore *lc,
						  uint32_t group);

/* Cut `m` (any number of segments) to its first `len` bytes; the segments
 * past them are freed. rte_pktmbuf_trim() only trims within the last
 * segment. */
void t4p4s_truncate(struct rte_mbuf *m, uint32_t len);

/* ---------------------------------------------------------------------
 * Tables: fast-path lookup
 * ------------------------------------------------------------------- */

/* What a lookup returns: never NULL. On a miss, the table's current default
 * entry with hit == false. `data` holds the action data in host layout
 * (struct t4p4s_param_desc); generated code casts it to the action's
 * parameter struct. */
struct t4p4s_entry {
	uint16_t action;           /* index into the table's `actions` */
	bool hit;
	uint32_t counter_slot;     /* direct counter slot of this entry */
	uint8_t data[] __rte_aligned(8);
};

struct t4p4s_table;            /* opaque; built by the runtime */

/* Table objects in descriptor order (index = position in
 * t4p4s_program.tables). Valid once the runtime has started. */
extern struct t4p4s_table *t4p4s_tables[];

/* Look up a key buffer (layout: struct t4p4s_key_field_desc) of
 * T4P4S_KEY_BUFFER_SIZE(key size) bytes, zero beyond the key. */
const struct t4p4s_entry *t4p4s_table_lookup(struct t4p4s_table *t,
					     const uint8_t *key);

/* t4p4s_table_lookup() of n keys (n <= T4P4S_STAGE_BURST) into entries[];
 * exact tables look them up in one rte_hash bulk lookup and prefetch the
 * entries found. */
void t4p4s_table_lookup_burst(struct t4p4s_table *t,
			      const uint8_t *const *keys, unsigned n,
			      const struct t4p4s_entry **entries);

/* Key buffers of exact tables are at least this long, zero-padded: rte_hash
 * compares 16-byte keys with one vector compare instead of memcmp(). */
#define T4P4S_EXACT_KEY_MIN 16
#define T4P4S_KEY_BUFFER_SIZE(n) \
	((n) < T4P4S_EXACT_KEY_MIN ? T4P4S_EXACT_KEY_MIN : (n))

/* ---------------------------------------------------------------------
 * Registers, counters
 * ------------------------------------------------------------------- */

struct t4p4s_register;
extern struct t4p4s_register *t4p4s_registers[];

/* Out-of-range index: read gives 0, write is ignored (as bmv2 does). */
uint64_t t4p4s_register_read(struct t4p4s_register *r, uint32_t index);
void t4p4s_register_write(struct t4p4s_register *r, uint32_t index,
			  uint64_t value);
/* A hint that cell `index` is about to be read or written (any index). */
void t4p4s_register_prefetch(const struct t4p4s_register *r, uint32_t index);

struct t4p4s_counter;
extern struct t4p4s_counter *t4p4s_counters[];

/* Count one packet of `bytes` bytes in slot `index` (out of range: ignored). */
void t4p4s_counter_count(struct t4p4s_lcore *lc, struct t4p4s_counter *c,
			 uint32_t index, uint32_t bytes);
/* A hint that this lcore is about to count in slot `index` (any index). */
void t4p4s_counter_prefetch(const struct t4p4s_lcore *lc,
			    const struct t4p4s_counter *c, uint32_t index);

/* ---------------------------------------------------------------------
 * Other v1model externs
 * ------------------------------------------------------------------- */

/* Hash of `nbits` bits of `data` (bit-packed, most significant bit first,
 * as the P4 list of fields concatenated); result as v1model's hash():
 * base + (h % max) when max > 0. */
enum t4p4s_hash_algorithm {
	T4P4S_HASH_CRC32,
	T4P4S_HASH_CRC32_CUSTOM,
	T4P4S_HASH_CRC16,
	T4P4S_HASH_CRC16_CUSTOM,
	T4P4S_HASH_RANDOM,
	T4P4S_HASH_IDENTITY,
	T4P4S_HASH_CSUM16,
	T4P4S_HASH_XOR16,
};

uint64_t t4p4s_hash(enum t4p4s_hash_algorithm algo, const uint8_t *data,
		    unsigned nbits);

/* RFC 1071 ones' complement checksum (csum16) of `nbits` bits (a multiple
 * of 8; an odd byte count is padded with zero), complemented as stored in
 * IPv4/UDP headers. */
uint16_t t4p4s_csum16(const uint8_t *data, unsigned nbits);

/* Uniform random value in [lo, hi]. */
uint64_t t4p4s_random(uint64_t lo, uint64_t hi);

/* log_msg(): printed only when the runtime runs with --log-msg. */
void t4p4s_log_msg(struct t4p4s_lcore *lc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
