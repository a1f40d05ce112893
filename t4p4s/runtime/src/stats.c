/* Statistics: the `stats` control command, --stats-json, and DPDK
 * telemetry (/t4p4s/stats). Fast-path counters are per lcore and summed
 * here. Port rx counts packets the pipeline has processed and handed to
 * tx (per-queue statistics, updated after each round's tx flush); the
 * driver's own counters give tx and the drops before us. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "control_internal.h"
#include "ring_port.h"
#include "power_stats.h"
#include "runtime.h"
#include "rx_replay.h"
#include "test_ports.h"

static const char *const drop_names[T4P4S_DROP_REASONS] = {
	[T4P4S_DROP_PIPELINE] = "pipeline",
	[T4P4S_DROP_BAD_PORT] = "bad_port",
	[T4P4S_DROP_NO_ROOM] = "no_room",
	[T4P4S_DROP_CLONE_FAILED] = "clone_failed",
	[T4P4S_DROP_CLONE_NO_SESSION] = "clone_no_session",
	[T4P4S_DROP_TX_FULL] = "tx_full",
	[T4P4S_DROP_TOO_LONG] = "too_long",
	[T4P4S_DROP_MCAST_NO_GROUP] = "mcast_no_group",
	[T4P4S_DROP_MCAST_EMPTY_GROUP] = "mcast_empty_group",
};

struct port_totals {
	uint64_t rx, tx, rx_dropped, tx_dropped;
};

static void
port_totals(uint16_t port, struct port_totals *t)
{
	struct rte_eth_stats es;
	memset(t, 0, sizeof(*t));
	if (rte_eth_stats_get(port, &es) == 0) {
		t->tx = es.opackets;
		t->rx_dropped = es.imissed + es.ierrors + es.rx_nombuf;
		t->tx_dropped = es.oerrors;
	}
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		const struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		for (unsigned q = 0; q < lc->n_rx; q++)
			if (lc->rx[q].port == port)
				t->rx += lc->qstats[q].packets;
		t->tx_dropped += lc->tx_dropped[port];
	}
}

static uint64_t
drop_total(enum t4p4s_drop_reason r)
{
	uint64_t n = 0;
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		const struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		if (r == T4P4S_DROP_TX_FULL)
			for (uint16_t p = 0; p < t4p4s_rt.n_ports; p++)
				n += lc->tx_dropped[p];
		else
			n += lc->drops[r];
	}
	return n;
}

static uint64_t
parser_error_total(uint16_t e)
{
	uint64_t n = 0;
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++)
		n += t4p4s_rt.lcores[w]->parser_errors[e];
	return n;
}

/* The port's benchmark source, when it has one: what was offered and what
 * the modelled rx ring lost (rx_replay.c). */
static json_t *
rx_replay_json(uint16_t port)
{
	struct t4p4s_rx_replay_counters c;
	if (!t4p4s_rx_replay_counters(port, &c))
		return NULL;
	return json_pack("{s:o, s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I}",
		"rate_pps", c.rate > 0 ? json_real(c.rate) : json_null(),
		"pattern", c.pattern, "ring", (int)c.ring,
		"arrived", (json_int_t)c.arrived, "delivered", (json_int_t)c.delivered,
		"ring_overflow", (json_int_t)c.ring_overflow, "in_ring", (json_int_t)c.in_ring,
		"no_mbuf", (json_int_t)c.no_mbuf, "foreign", (json_int_t)c.foreign);
}

json_t *
t4p4s_stats_json(void)
{
	json_t *ports = json_array(), *drops = json_object();
	json_t *errors = json_object(), *lcores = json_array();
	for (uint16_t p = 0; p < t4p4s_rt.n_ports; p++) {
		struct port_totals t;
		port_totals(p, &t);
		json_t *port = json_pack("{s:i, s:I, s:I, s:I, s:I}",
			"port", p, "rx", (json_int_t)t.rx, "tx", (json_int_t)t.tx,
			"rx_dropped", (json_int_t)t.rx_dropped,
			"tx_dropped", (json_int_t)t.tx_dropped);
		json_t *replay = rx_replay_json(p), *latency = t4p4s_latency_json(p);
		if (replay != NULL)
			json_object_set_new(port, "rx_replay", replay);
		if (latency != NULL)
			json_object_set_new(port, "latency", latency);
		json_t *test_port = t4p4s_test_port_json(p);
		if (test_port != NULL)
			json_object_set_new(port, "test_port", test_port);
		json_array_append_new(ports, port);
	}
	for (int r = 0; r < T4P4S_DROP_REASONS; r++)
		json_object_set_new(drops, drop_names[r],
				    json_integer((json_int_t)drop_total(r)));
	for (uint16_t e = 0; e < t4p4s_program.n_errors; e++)
		json_object_set_new(errors, t4p4s_program.error_names[e],
			json_integer((json_int_t)parser_error_total(e)));
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		const struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		json_t *queues = json_array();
		for (unsigned q = 0; q < lc->n_rx; q++) {
			const struct t4p4s_queue_stats *s = &lc->qstats[q];
			json_t *hist = json_array();
			for (int b = 0; b < T4P4S_BURST_BUCKETS; b++)
				json_array_append_new(hist,
					json_integer((json_int_t)s->burst_hist[b]));
			json_array_append_new(queues, json_pack(
				"{s:i, s:i, s:I, s:I, s:I, s:o}",
				"port", lc->rx[q].port, "queue", lc->rx[q].queue,
				"polls", (json_int_t)s->polls,
				"empty_polls", (json_int_t)s->empty_polls,
				"packets", (json_int_t)s->packets,
				"burst_histogram", hist));
		}
		json_array_append_new(lcores, json_pack("{s:i, s:o, s:I, s:o}",
			"lcore", lc->lcore_id, "queues", queues,
			"naps", (json_int_t)lc->governor.naps,
			"power", t4p4s_power_lcore_json(lc)));
	}
	return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o}", "ok", 1, "ports", ports,
			 "drops", drops, "parser_errors", errors,
			 "lcores", lcores, "ring_ports", t4p4s_ring_ports_json());
}

int
t4p4s_stats_write(const char *path)
{
	json_t *s = t4p4s_stats_json();
	int ret = json_dump_file(s, path, JSON_INDENT(1));
	json_decref(s);
	if (ret != 0)
		fprintf(stderr, "error: --stats-json %s: cannot write\n", path);
	return ret;
}

static int
telemetry_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (int r = 0; r < T4P4S_DROP_REASONS; r++) {
		char name[64];
		snprintf(name, sizeof(name), "drops_%s", drop_names[r]);
		rte_tel_data_add_dict_u64(d, name, drop_total(r));
	}
	for (uint16_t p = 0; p < t4p4s_rt.n_ports; p++) {
		struct port_totals t;
		struct rte_tel_data *pd = rte_tel_data_alloc();
		char name[32];
		port_totals(p, &t);
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_u64(pd, "rx", t.rx);
		rte_tel_data_add_dict_u64(pd, "tx", t.tx);
		rte_tel_data_add_dict_u64(pd, "rx_dropped", t.rx_dropped);
		rte_tel_data_add_dict_u64(pd, "tx_dropped", t.tx_dropped);
		snprintf(name, sizeof(name), "port%u", p);
		rte_tel_data_add_dict_container(d, name, pd, 0);
	}
	return 0;
}

void
t4p4s_stats_telemetry_init(void)
{
	rte_telemetry_register_cmd("/t4p4s/stats", telemetry_stats,
		"t4p4s runtime drops by reason and per-port rx/tx. No parameters");
}
