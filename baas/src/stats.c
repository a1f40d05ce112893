/* Statistics: the `stats` and `drb` control commands, --stats-json and
 * DPDK telemetry (/baas/stats), all from the control API (baas_api.c),
 * as the target runtime's stats.c does for its counters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "baas.h"
#include "power_stats.h"

static const char *const drop_names[BAAS_DROP_REASONS] = {
	[BAAS_DROP_NOT_BEARER] = "not_bearer",
	[BAAS_DROP_NOT_AM] = "not_am",
	[BAAS_DROP_BAD_SHIM_FLAGS] = "bad_shim_flags",
	[BAAS_DROP_BAD_LCID] = "bad_lcid",
	[BAAS_DROP_TRUNCATED] = "truncated",
	[BAAS_DROP_SEGMENT] = "segment",
	[BAAS_DROP_STATUS_TRUNCATED] = "status_truncated",
	[BAAS_DROP_STATUS_CPT] = "status_cpt",
	[BAAS_DROP_STATUS_UNKNOWN_DRB] = "status_unknown_drb",
	[BAAS_DROP_STATUS_SN_LENGTH] = "status_sn_length",
	[BAAS_DROP_STATUS_ACK_OUTSIDE] = "status_ack_outside",
	[BAAS_DROP_STATUS_NACK_OUTSIDE] = "status_nack_outside",
	[BAAS_DROP_STATUS_NACK_ORDER] = "status_nack_order",
	[BAAS_DROP_STATUS_SO] = "status_so",
	[BAAS_DROP_STATUS_TOO_MANY] = "status_too_many",
	[BAAS_DROP_DRB_SN_LENGTH] = "drb_sn_length",
	[BAAS_DROP_OUTSIDE_WINDOW] = "outside_window",
	[BAAS_DROP_DUPLICATE_SN] = "duplicate_sn",
	[BAAS_DROP_NO_MEMORY] = "no_memory",
	[BAAS_DROP_TX_FULL] = "tx_full",
};

const char *
baas_drop_reason_name(enum baas_drop_reason r)
{
	return (unsigned)r < BAAS_DROP_REASONS && drop_names[r] != NULL ? drop_names[r] : "unknown";
}

void
baas_counters_add(struct baas_counters *into, const struct baas_counters *c)
{
	const uint64_t *from = (const uint64_t *)c;
	uint64_t *to = (uint64_t *)into;
	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		to[i] += from[i];
}

static json_t *
counters_json(const struct baas_counters *c)
{
	json_t *dropped = json_object();
	for (unsigned r = 0; r < BAAS_DROP_REASONS; r++)
		json_object_set_new(dropped, drop_names[r], json_integer((json_int_t)c->dropped[r]));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}",
		"pdus_received", (json_int_t)c->pdus_received,
		"bytes_received", (json_int_t)c->bytes_received,
		"status_received", (json_int_t)c->status_received,
		"acked", (json_int_t)c->acked,
		"nacked", (json_int_t)c->nacked,
		"retransmitted", (json_int_t)c->retransmitted,
		"poll_timeouts", (json_int_t)c->poll_timeouts,
		"rlf", (json_int_t)c->rlf,
		"released_rlf", (json_int_t)c->released_rlf,
		"released_bound", (json_int_t)c->released_bound,
		"released_flush", (json_int_t)c->released_flush,
		"nack_not_held", (json_int_t)c->nack_not_held,
		"dropped", dropped);
}

static json_t *
global_json(void)
{
	struct baas_global_info g;
	baas_api_global(&g);
	json_t *lcores = json_array();
	json_t *attachments = json_array();
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		const struct baas_lcore *lc = baas.lcores[w];
		json_array_append_new(lcores, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:o}",
			"lcore", (int)lc->lcore_id, "polls", (json_int_t)lc->polls,
			"empty_polls", (json_int_t)lc->empty_polls,
			"frames", (json_int_t)lc->frames, "drbs", (json_int_t)lc->drbs.n_drbs,
			"events_lost", (json_int_t)lc->events_lost,
			"power", t4p4s_power_governor_json(&lc->governor)));
		for (unsigned i = 0; i < lc->n_attach; i++) {
			const struct baas_attachment *a = &lc->attach[i];
			json_t *j = a->ring_in != NULL
				? json_pack("{s:s,s:s}", "ring_in", a->ring_in->name,
					    "ring_out", a->ring_out->name)
				: json_pack("{s:i}", "port", a->port);
			struct rte_eth_stats es;
			if (a->ring_in == NULL && rte_eth_stats_get(a->port, &es) == 0) {
				json_object_set_new(j, "rx", json_integer((json_int_t)es.ipackets));
				json_object_set_new(j, "tx", json_integer((json_int_t)es.opackets));
				json_object_set_new(j, "rx_dropped", json_integer(
					(json_int_t)(es.imissed + es.ierrors + es.rx_nombuf)));
			}
			json_object_set_new(j, "tx_dropped", json_integer((json_int_t)a->tx_dropped));
			json_object_set_new(j, "lcore", json_integer((json_int_t)lc->lcore_id));
			json_array_append_new(attachments, j);
		}
	}
	/* what one held copy costs in the pool (port mode): mempool object
	 * header, struct rte_mbuf, headroom and data room, trailer */
	const struct rte_mempool *mp = baas.pool;
	uint64_t element = mp != NULL ? (uint64_t)mp->header_size + mp->elt_size + mp->trailer_size : 0;
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}",
		"drbs", (json_int_t)g.n_drbs, "held", (json_int_t)g.held,
		"held_bytes", (json_int_t)g.held_bytes, "pool_size", (json_int_t)g.pool_size,
		"pool_in_use", (json_int_t)g.pool_in_use,
		"pool_element_bytes", (json_int_t)element, "counters", counters_json(&g.counters),
		"lcores", lcores, "attachments", attachments);
}

static json_t *
drb_json(const struct baas_drb_info *d)
{
	return json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:b,s:I,s:I,s:o}",
		"ue_id", d->key.ue_id, "lcid", d->key.lcid, "sn_bits", d->sn_bits,
		"tx_next_ack", (json_int_t)d->tx_next_ack, "tx_next", (json_int_t)d->tx_next,
		"poll_sn", (json_int_t)d->poll_sn, "poll_timer_running", d->poll_timer_running,
		"held", (json_int_t)d->held, "held_bytes", (json_int_t)d->held_bytes,
		"counters", counters_json(&d->counters));
}

int
baas_stats_write(const char *path)
{
	json_t *j = global_json();
	int ret = json_dump_file(j, path, JSON_INDENT(1));
	json_decref(j);
	if (ret != 0)
		fprintf(stderr, "error: --stats-json %s: cannot write\n", path);
	return ret == 0 ? 0 : -1;
}

static int
telemetry_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	struct baas_global_info g;
	baas_api_global(&g);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "drbs", g.n_drbs);
	rte_tel_data_add_dict_u64(d, "held", g.held);
	rte_tel_data_add_dict_u64(d, "held_bytes", g.held_bytes);
	rte_tel_data_add_dict_u64(d, "pdus_received", g.counters.pdus_received);
	rte_tel_data_add_dict_u64(d, "status_received", g.counters.status_received);
	rte_tel_data_add_dict_u64(d, "acked", g.counters.acked);
	rte_tel_data_add_dict_u64(d, "retransmitted", g.counters.retransmitted);
	rte_tel_data_add_dict_u64(d, "rlf", g.counters.rlf);
	return 0;
}

void
baas_telemetry_init(void)
{
	rte_telemetry_register_cmd("/baas/stats", telemetry_stats,
				   "BaaS statistics: DRBs, held PDUs, acks, retransmissions");
}

static json_t *
error_reply(int err, const char *message)
{
	return json_pack("{s:b,s:s,s:s}", "ok", 0,
			 "error", err == -ENOENT ? "ENOENT" : err == -EINVAL ? "EINVAL" : "EFAIL",
			 "message", message);
}

static int
key_of(json_t *cmd, struct baas_drb_key *key)
{
	json_int_t ue, lcid;
	if (json_unpack(cmd, "{s:I,s:I}", "ue_id", &ue, "lcid", &lcid) != 0 ||
	    ue < 0 || ue > UINT16_MAX || lcid < 0 || lcid > 63)
		return -1;
	key->ue_id = (uint16_t)ue;
	key->lcid = (uint8_t)lcid;
	return 0;
}

/* The target runtime's power commands (power_stats.h), whose replies are
 * the runtime's: {"ok": true, ...} at the top level, not in "result". */
static json_t *
power_command(json_t *cmd, json_t *(*run)(json_t *cmd, char *err, size_t err_len))
{
	char err[320];
	json_t *reply = run(cmd, err, sizeof(err));
	return reply != NULL ? reply : error_reply(-EINVAL, err);
}

/* {"cmd":"ping"} | {"cmd":"stats"} | {"cmd":"drb","ue_id":U,"lcid":L}
 * | {"cmd":"flush"[,"ue_id":U,"lcid":L]} | {"cmd":"power"}
 * | {"cmd":"power_mode",...} | {"cmd":"power_thresholds",...} */
static json_t *
control_json(json_t *cmd)
{
	const char *name = NULL;
	if (json_unpack(cmd, "{s:s}", "cmd", &name) != 0)
		return error_reply(-EINVAL, "expected {\"cmd\": NAME, ...}");
	if (strcmp(name, "ping") == 0)
		return json_pack("{s:b}", "ok", 1);
	if (strcmp(name, "stats") == 0)
		return json_pack("{s:b,s:o}", "ok", 1, "result", global_json());
	if (strcmp(name, "power") == 0)
		return t4p4s_power_json();
	if (strcmp(name, "power_mode") == 0)
		return power_command(cmd, t4p4s_power_mode_command);
	if (strcmp(name, "power_thresholds") == 0)
		return power_command(cmd, t4p4s_power_thresholds_command);
	struct baas_drb_key key;
	bool has_key = json_object_get(cmd, "ue_id") != NULL;
	if ((has_key || strcmp(name, "drb") == 0) && key_of(cmd, &key) != 0)
		return error_reply(-EINVAL, "ue_id (0..65535) and lcid (0..63) expected");
	int ret;
	if (strcmp(name, "drb") == 0) {
		struct baas_drb_info info;
		ret = baas_api_drb(&key, &info);
		if (ret == 0)
			return json_pack("{s:b,s:o}", "ok", 1, "result", drb_json(&info));
	} else if (strcmp(name, "flush") == 0) {
		uint64_t released = 0;
		ret = baas_api_flush(has_key ? &key : NULL, &released);
		if (ret == 0)
			return json_pack("{s:b,s:{s:I}}", "ok", 1, "result", "released",
					 (json_int_t)released);
	} else {
		return error_reply(-EINVAL, "unknown command (ping, stats, drb, flush, power, "
				   "power_mode, power_thresholds)");
	}
	return error_reply(ret, ret == -ENOENT ? "no such DRB" : strerror(-ret));
}

char *
baas_control_line(const char *line, size_t len)
{
	json_error_t err;
	json_t *cmd = json_loadb(line, len, 0, &err);
	json_t *reply = cmd != NULL ? control_json(cmd)
		: json_pack("{s:b,s:s,s:s}", "ok", 0, "error", "EPARSE", "message", err.text);
	char *text = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	json_decref(cmd);
	return text;
}
