/* A hand-written pipeline for testing the runtime without the compiler.
 * It stands for what the C back end generates from a P4 program like:
 *
 *   ingress: count port_counter[in_port]; rx_count[in_port] += 1;
 *            egress = in_port ^ 1; swap the Ethernet addresses;
 *            const_tbl (exact etherType, const entries: 0x88cc -> drop);
 *            dmac (exact dstAddr, direct counter): set_port / drop /
 *                 clone_to(session) / NoAction;
 *            acl (ternary srcAddr, range etherType, optional flag):
 *                 drop / set_smac / tag / NoAction;
 *            ipv4_lpm (lpm dstAddr) when etherType == 0x0800;
 *            wide_lpm (lpm 64-bit field): control-plane tests only.
 *   Frames shorter than 14 bytes: PacketTooShort, dropped.
 * (dstAddr is looked up before the swap.) */
#include <string.h>

#include <t4p4s/pipeline.h>

enum { A_NOACTION, A_SET_PORT, A_DROP, A_SET_SMAC, A_CLONE_TO, A_TAG };

static const struct t4p4s_param_desc set_port_params[] = {
	{ "port", 1, 9, 0, 2 },
};
static const struct t4p4s_param_desc set_smac_params[] = {
	{ "smac", 1, 48, 0, 8 },
};
static const struct t4p4s_param_desc clone_to_params[] = {
	{ "session", 1, 32, 0, 4 },
};
static const struct t4p4s_param_desc tag_params[] = {
	{ "value", 1, 80, 0, 10 },
};

static const struct t4p4s_action_desc actions[] = {
	[A_NOACTION] = { "NoAction", 21257015, 0, NULL, 0 },
	[A_SET_PORT] = { "ingress.set_port", 16777217, 1, set_port_params, 2 },
	[A_DROP] = { "ingress.drop", 16777218, 0, NULL, 0 },
	[A_SET_SMAC] = { "ingress.set_smac", 16777219, 1, set_smac_params, 8 },
	[A_CLONE_TO] = { "ingress.clone_to", 16777220, 1, clone_to_params, 4 },
	[A_TAG] = { "ingress.tag", 16777221, 1, tag_params, 10 },
};

enum { T_DMAC, T_ACL, T_IPV4_LPM, T_CONST, T_WIDE_LPM };

static const struct t4p4s_key_field_desc dmac_keys[] = {
	{ "hdr.ethernet.dstAddr", 1, T4P4S_MATCH_EXACT, 48, 0 },
};
static const struct t4p4s_table_action dmac_actions[] = {
	{ A_SET_PORT, false, false }, { A_DROP, false, false },
	{ A_CLONE_TO, false, false }, { A_NOACTION, false, true },
};

static const struct t4p4s_key_field_desc acl_keys[] = {
	{ "hdr.ethernet.srcAddr", 1, T4P4S_MATCH_TERNARY, 48, 0 },
	{ "hdr.ethernet.etherType", 2, T4P4S_MATCH_RANGE, 16, 6 },
	{ "meta.flag", 3, T4P4S_MATCH_OPTIONAL, 1, 8 },
};
static const struct t4p4s_table_action acl_actions[] = {
	{ A_DROP, false, false }, { A_SET_SMAC, false, false },
	{ A_TAG, true, false }, { A_NOACTION, false, false },
};

static const struct t4p4s_key_field_desc lpm_keys[] = {
	{ "hdr.ipv4.dstAddr", 1, T4P4S_MATCH_LPM, 32, 0 },
};
static const struct t4p4s_table_action lpm_actions[] = {
	{ A_SET_PORT, false, false }, { A_DROP, false, false },
	{ A_NOACTION, false, false },
};

static const struct t4p4s_key_field_desc const_keys[] = {
	{ "hdr.ethernet.etherType", 1, T4P4S_MATCH_EXACT, 16, 0 },
};
static const struct t4p4s_table_action const_actions[] = {
	{ A_DROP, false, false }, { A_NOACTION, false, false },
};
static const uint8_t lldp_type[] = { 0x88, 0xcc };
static const struct t4p4s_const_entry const_entries[] = {
	{ lldp_type, NULL, 0, 0, 0, NULL },
};

static const struct t4p4s_key_field_desc wide_keys[] = {
	{ "meta.wide", 1, T4P4S_MATCH_LPM, 64, 0 },
};

static const struct t4p4s_table_desc tables[] = {
	[T_DMAC] = { "ingress.dmac", 33554433, 1, dmac_keys, 6,
		4, dmac_actions, 1024, 4, 3, NULL, false, 1, 0, NULL, false },
	[T_ACL] = { "ingress.acl", 33554434, 3, acl_keys, 9,
		4, acl_actions, 64, 10, 3, NULL, false, -1, 0, NULL, false },
	[T_IPV4_LPM] = { "ingress.ipv4_lpm", 33554435, 1, lpm_keys, 4,
		3, lpm_actions, 256, 2, 2, NULL, false, -1, 0, NULL, false },
	[T_CONST] = { "ingress.const_tbl", 33554436, 1, const_keys, 2,
		2, const_actions, 16, 0, 1, NULL, true, -1, 1, const_entries,
		true },
	[T_WIDE_LPM] = { "ingress.wide_lpm", 33554437, 1, wide_keys, 8,
		3, lpm_actions, 64, 2, 2, NULL, false, -1, 0, NULL, false },
};

enum { C_PORT, C_DMAC };
static const struct t4p4s_counter_desc counters[] = {
	[C_PORT] = { "ingress.port_counter", 302000001,
		     T4P4S_COUNTER_PACKETS_AND_BYTES, 16, -1 },
	[C_DMAC] = { "ingress.dmac_counter", 318767105,
		     T4P4S_COUNTER_PACKETS_AND_BYTES, 1024, T_DMAC },
};

static const struct t4p4s_register_desc registers[] = {
	{ "ingress.rx_count", 369098753, 32, 16 },
};

static const char *const error_names[] = {
	"NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds",
	"HeaderTooShort", "ParserTimeout", "ParserInvalidArgument",
};
enum { ERR_PACKET_TOO_SHORT = 1 };

const struct t4p4s_program t4p4s_program = {
	.name = "l2fwd_handwritten",
	.p4info_path = NULL,
	.n_actions = RTE_DIM(actions), .actions = actions,
	.n_tables = RTE_DIM(tables), .tables = tables,
	.n_counters = RTE_DIM(counters), .counters = counters,
	.n_registers = RTE_DIM(registers), .registers = registers,
	.n_errors = RTE_DIM(error_names), .error_names = error_names,
	.port_bits = 9,
};

static inline uint16_t
param16(const struct t4p4s_entry *e)
{
	uint16_t v;
	memcpy(&v, e->data, sizeof(v));
	return v;
}

void
t4p4s_pipeline_process(struct t4p4s_lcore *lc, struct rte_mbuf *m,
		       uint16_t in_port)
{
	uint8_t *eth = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t egress = in_port ^ 1u;
	const struct t4p4s_entry *e;

	if (unlikely(rte_pktmbuf_data_len(m) < 14)) {
		t4p4s_count_parser_error(lc, ERR_PACKET_TOO_SHORT);
		t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
		return;
	}
	t4p4s_counter_count(lc, t4p4s_counters[C_PORT], in_port, len);
	t4p4s_register_write(t4p4s_registers[0], in_port,
		t4p4s_register_read(t4p4s_registers[0], in_port) + 1);

	/* exact keys go in zero-padded buffers (T4P4S_KEY_BUFFER_SIZE) */
	uint8_t type_key[T4P4S_KEY_BUFFER_SIZE(2)] = { 0 };
	memcpy(type_key, eth + 12, 2);
	e = t4p4s_table_lookup(t4p4s_tables[T_CONST], type_key);
	if (e->hit && tables[T_CONST].actions[e->action].action == A_DROP) {
		t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
		return;
	}

	uint8_t dmac_key[T4P4S_KEY_BUFFER_SIZE(6)] = { 0 };
	memcpy(dmac_key, eth, 6);
	e = t4p4s_table_lookup(t4p4s_tables[T_DMAC], dmac_key);
	if (e->hit) {
		t4p4s_counter_count(lc, t4p4s_counters[C_DMAC], e->counter_slot,
				    len);
		switch (dmac_actions[e->action].action) {
		case A_SET_PORT:
			egress = param16(e);
			break;
		case A_DROP:
			t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
			return;
		case A_CLONE_TO: {
			uint32_t session, port, truncate;
			memcpy(&session, e->data, sizeof(session));
			if (t4p4s_clone_session(lc, session, &port, &truncate)) {
				struct rte_mbuf *c = t4p4s_clone_copy(lc, m);
				if (c != NULL)
					t4p4s_send(lc, c, port);
			}
			break;
		}
		}
	}

	/* swap the Ethernet addresses */
	uint8_t tmp[6];
	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);

	uint8_t acl_key[9];
	memcpy(acl_key, eth + 6, 8);
	acl_key[8] = 0;
	e = t4p4s_table_lookup(t4p4s_tables[T_ACL], acl_key);
	if (e->hit) {
		switch (acl_actions[e->action].action) {
		case A_DROP:
			t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
			return;
		case A_SET_SMAC: {
			uint64_t smac;
			memcpy(&smac, e->data, sizeof(smac));
			t4p4s_store_be64(eth + 6, 6, smac);
			break;
		}
		}
	}

	if (eth[12] == 0x08 && eth[13] == 0x00 && rte_pktmbuf_data_len(m) >= 34) {
		e = t4p4s_table_lookup(t4p4s_tables[T_IPV4_LPM], eth + 30);
		if (e->hit) {
			if (lpm_actions[e->action].action == A_DROP) {
				t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
				return;
			}
			if (lpm_actions[e->action].action == A_SET_PORT)
				egress = param16(e);
		}
	}
	if (egress == 511) {
		t4p4s_drop(lc, m, T4P4S_DROP_PIPELINE);
		return;
	}
	t4p4s_send(lc, m, egress);
}

void
t4p4s_pipeline_process_burst(struct t4p4s_lcore *lc, struct rte_mbuf **pkts,
			     unsigned n, uint16_t in_port)
{
	for (unsigned i = 0; i < n; i++)
		t4p4s_pipeline_process(lc, pkts[i], in_port);
}
