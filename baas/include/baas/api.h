/* The BaaS's control API: what its servers (the gRPC server in baas/grpc/,
 * the --control socket) may call, from any thread but the lcores.
 *
 * The lcores own every DRB's state; an API call never touches it. A call
 * that reads or changes DRB state posts a command to each lcore's command
 * ring and waits (at most BAAS_API_TIMEOUT_MS) until every lcore has run it
 * in its next poll round, so a call sees a consistent state per lcore and
 * a flush never races a retransmission. Global counters are summed from the
 * lcores' own slots without stopping them (a read may miss the packets of
 * the same instant, never counts twice).
 *
 * Return values: 0, or a negative errno: -ENOENT (no such DRB), -EINVAL
 * (bad argument; baas_api_last_error() says which), -ETIMEDOUT (an lcore
 * did not answer), -ESHUTDOWN (the process is stopping).
 */
#ifndef BAAS_API_H
#define BAAS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BAAS_API_TIMEOUT_MS 2000

/* A DRB as the bearer shim names it (docs/wire-format.md). */
struct baas_drb_key {
	uint16_t ue_id;
	uint8_t lcid;
};

/* Why a received frame was dropped without effect (one counter each). */
enum baas_drop_reason {
	BAAS_DROP_NOT_BEARER,         /* not EtherType 0x88B5, or shorter than the shim */
	BAAS_DROP_NOT_AM,             /* shim says RLC UM: the BaaS keeps AM only */
	BAAS_DROP_BAD_SHIM_FLAGS,     /* a reserved shim flag set */
	BAAS_DROP_BAD_LCID,           /* an LCID of 64 or more (NR's LCID field has 6 bits, TS 38.321 6.2.1) */
	BAAS_DROP_TRUNCATED,          /* an AMD PDU shorter than its header */
	BAAS_DROP_SEGMENT,            /* an AMD PDU with SI != 00 (the gNB never segments) */
	BAAS_DROP_STATUS_TRUNCATED,   /* STATUS PDU ends inside a field */
	BAAS_DROP_STATUS_CPT,         /* CPT != 000 (TS 38.322 5.6.1: reserved value) */
	BAAS_DROP_STATUS_UNKNOWN_DRB, /* STATUS for a DRB the BaaS holds nothing of */
	BAAS_DROP_STATUS_SN_LENGTH,   /* shim SN length differs from the DRB's */
	BAAS_DROP_STATUS_ACK_OUTSIDE, /* ACK_SN outside [TX_Next_Ack, TX_Next] */
	BAAS_DROP_STATUS_NACK_OUTSIDE,/* a NACK_SN (or its range) outside [TX_Next_Ack, ACK_SN) */
	BAAS_DROP_STATUS_NACK_ORDER,  /* NACK_SNs not increasing, or a NACK range of 0 */
	BAAS_DROP_STATUS_SO,          /* SOstart > SOend (SOend != 0xFFFF) */
	BAAS_DROP_STATUS_TOO_MANY,    /* more NACKed SNs than the BaaS checks per STATUS */
	BAAS_DROP_DRB_SN_LENGTH,      /* an AMD PDU whose SN length differs from its DRB's */
	BAAS_DROP_OUTSIDE_WINDOW,     /* an AMD PDU's SN outside [TX_Next_Ack, TX_Next_Ack + capacity) */
	BAAS_DROP_DUPLICATE_SN,       /* an AMD PDU for an SN already held */
	BAAS_DROP_NO_MEMORY,          /* no DRB slot array or mbuf (global bound on DRBs) */
	BAAS_DROP_TX_FULL,            /* a retransmission the port would not take */
	BAAS_DROP_REASONS
};

/* The name of a drop reason in statistics ("not_bearer", ...). */
const char *baas_drop_reason_name(enum baas_drop_reason r);

/* Counters, globally or for one DRB (since its state was made). */
struct baas_counters {
	uint64_t pdus_received;       /* AMD PDU copies taken into the buffer */
	uint64_t bytes_received;      /* their frame bytes */
	uint64_t status_received;     /* STATUS PDUs applied */
	uint64_t acked;               /* PDUs released by an ACK_SN */
	uint64_t nacked;              /* NACKed SNs acted upon */
	uint64_t retransmitted;       /* frames sent again (NACK or poll timer) */
	uint64_t poll_timeouts;       /* t-PollRetransmit expiries */
	uint64_t rlf;                 /* radio-link-failure events (maxRetxThreshold) */
	uint64_t released_rlf;        /* PDUs released because their DRB hit RLF */
	uint64_t released_bound;      /* PDUs released by a per-DRB or global bound */
	uint64_t released_flush;      /* PDUs released by a flush */
	uint64_t nack_not_held;       /* NACKed SNs the BaaS did not hold (lost for good) */
	uint64_t dropped[BAAS_DROP_REASONS];
};

/* A DRB's state as its lcore has it. */
struct baas_drb_info {
	struct baas_drb_key key;
	uint8_t sn_bits;              /* 12 or 18 */
	uint32_t tx_next_ack;         /* TS 38.322 7.1: the lower edge */
	uint32_t tx_next;             /* highest SN received + 1 */
	uint32_t poll_sn;
	bool poll_timer_running;
	uint32_t held;                /* PDUs buffered */
	uint64_t held_bytes;
	struct baas_counters counters;
};

struct baas_global_info {
	uint32_t n_drbs;              /* DRBs with state */
	uint64_t held;                /* PDUs buffered, all DRBs */
	uint64_t held_bytes;
	uint64_t pool_size;           /* the BaaS's mbuf pool */
	uint64_t pool_in_use;
	uint32_t n_lcores;
	struct baas_counters counters;
};

/* Configuration: the process's defaults, or one DRB's own values. */
struct baas_config {
	uint32_t t_poll_retransmit_ms;  /* 1..60000 */
	uint32_t max_retx_threshold;    /* 1..32 (TS 38.331 t1..t32) */
	uint32_t drb_max_pdus;          /* per-DRB bound, 1..131072 (rounded up to a power of two) */
	uint64_t max_pdus;              /* global bound (defaults only; 0 in a DRB's) */
};

/* Statistics. */
int baas_api_global(struct baas_global_info *out);
int baas_api_drb(const struct baas_drb_key *key, struct baas_drb_info *out);

/* Every DRB with state, in (ue_id, lcid) order: calls fn once per DRB
 * until it returns non-zero. */
int baas_api_list_drbs(int (*fn)(const struct baas_drb_info *, void *), void *arg);

/* The SNs a DRB holds, from TX_Next_Ack upwards (at most max, *n set). */
int baas_api_list_sns(const struct baas_drb_key *key, uint32_t *sns, size_t max, size_t *n);

/* Configuration. key NULL: the defaults (which DRBs without their own
 * values use); else that DRB's values (-ENOENT if it has no state).
 * baas_api_set_config checks every field and changes nothing when one is
 * out of range (-EINVAL). A lowered drb_max_pdus releases a DRB's oldest
 * PDUs (counted in released_bound). */
int baas_api_get_config(const struct baas_drb_key *key, struct baas_config *out);
int baas_api_set_config(const struct baas_drb_key *key, const struct baas_config *cfg);

/* Releases a DRB's PDUs and forgets its state (key NULL: every DRB);
 * *released gets the number of PDUs released. */
int baas_api_flush(const struct baas_drb_key *key, uint64_t *released);

/* Events, for any number of readers: each reader keeps its own cursor. */
enum baas_event_type {
	BAAS_EVENT_RLF = 1,           /* a PDU reached maxRetxThreshold: radio link failure */
	BAAS_EVENT_OVERFLOW = 2,      /* a bound released PDUs (per DRB or global) */
	BAAS_EVENT_NACK_NOT_HELD = 3, /* a NACK for a PDU the BaaS no longer holds */
};

struct baas_event {
	uint64_t seq;                 /* 1, 2, ... in the order the lcores raised them */
	uint64_t time_ns;             /* CLOCK_REALTIME */
	enum baas_event_type type;
	struct baas_drb_key key;
	uint32_t sn;                  /* the PDU concerned (RLF, NACK_NOT_HELD), else 0 */
	uint32_t count;               /* PDUs released (OVERFLOW), retransmissions (RLF) */
};

/* Waits up to timeout_ms for events with seq >= *cursor; copies up to max
 * of them, sets *n and advances *cursor past them. When the reader fell so
 * far behind that events were overwritten, *lost counts them and reading
 * resumes at the oldest one kept. Returns 0 (also with *n = 0 on timeout)
 * or -ESHUTDOWN. A cursor of 0 starts at the next event raised. */
int baas_api_events(uint64_t *cursor, struct baas_event *out, size_t max, size_t *n,
		    uint64_t *lost, int timeout_ms);

/* Why the last call of this thread returned -EINVAL. */
const char *baas_api_last_error(void);

/* The gRPC server (baas/grpc/): serves baas.proto on address
 * ("[HOST:]PORT", host 127.0.0.1 by default; port 0 picks one, printed).
 * Returns 0, or -1 after printing why not. */
int baas_grpc_start(const char *address);
void baas_grpc_stop(void);

#ifdef __cplusplus
}
#endif

#endif
