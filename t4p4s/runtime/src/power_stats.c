/* The governor's state for the control socket, the statistics and DPDK
 * telemetry (power_stats.h). The lcores write their counters without
 * atomics; each is one aligned 64-bit word, read whole here. */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "power_backend.h"
#include "power_stats.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static uint64_t
ns(uint64_t tsc)
{
	return (uint64_t)((double)tsc * 1e9 / (double)rte_get_tsc_hz());
}

/* One lcore's figures, the same for JSON and telemetry. */
struct lcore_power {
	const char *mode;
	int tid;
	unsigned pstate;
	uint64_t transitions, work_ns, poll_ns, paused_ns, asleep_ns;
	uint64_t pauses, sleeps, naps, interrupt_wakeups, cpu_time_ns;
	uint64_t polls, empty_polls, packets;
	uint64_t residency_ns[T4P4S_MAX_PSTATES];
};

static void
lcore_power(const struct t4p4s_governor *g, struct lcore_power *out)
{
	memset(out, 0, sizeof(*out));
	out->mode = t4p4s_governor_name(LOAD(g->policy));
	if (!__atomic_load_n(&g->started, __ATOMIC_ACQUIRE))
		return;
	out->tid = g->tid;
	out->pstate = LOAD(g->pstate);
	out->transitions = LOAD(g->pstate_transitions);
	out->work_ns = ns(LOAD(g->work_tsc));
	out->poll_ns = ns(LOAD(g->poll_tsc));
	out->paused_ns = ns(LOAD(g->pause_tsc));
	out->asleep_ns = ns(LOAD(g->sleep_tsc));
	out->pauses = LOAD(g->pauses);
	out->sleeps = LOAD(g->sleeps);
	out->naps = LOAD(g->naps);
	out->interrupt_wakeups = LOAD(g->interrupt_wakeups);
	struct timespec ts;
	if (clock_gettime(g->cpu_clock, &ts) == 0)
		out->cpu_time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	struct t4p4s_rx_counts counts;
	g->host.rx_counts(g->host.lcore, &counts);
	out->polls = counts.polls;
	out->empty_polls = counts.empty_polls;
	out->packets = counts.packets;
	/* the present P-state's time so far counts too (the lcore adds it
	 * at its next transition) */
	uint64_t now = rte_rdtsc(), since = LOAD(g->pstate_since_tsc);
	for (unsigned p = 0; p < t4p4s_power_backends.n_pstates; p++)
		out->residency_ns[p] = ns(LOAD(g->pstate_tsc[p]) +
					  (p == out->pstate && now > since ? now - since : 0));
}

static json_t *
thresholds_json(const struct t4p4s_power_thresholds *t)
{
	json_t *o = json_object();
	const char *name;
	uint32_t value;
	for (unsigned i = 0; t4p4s_power_threshold_at(t, i, &name, &value); i++)
		json_object_set_new(o, name, json_integer(value));
	return o;
}

json_t *
t4p4s_power_governor_json(const struct t4p4s_governor *g)
{
	struct lcore_power p;
	struct t4p4s_power_thresholds th;
	lcore_power(g, &p);
	json_t *residency = json_array();
	for (unsigned i = 0; i < t4p4s_power_backends.n_pstates; i++)
		json_array_append_new(residency, json_integer((json_int_t)p.residency_ns[i]));
	/* the thresholds asked for last: the lcore applies them within a
	 * millisecond */
	struct t4p4s_governor_request *r = (struct t4p4s_governor_request *)&g->request;
	rte_spinlock_lock(&r->lock);
	th = r->thresholds;
	rte_spinlock_unlock(&r->lock);
	json_t *o = json_pack("{s:i, s:i, s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			      " s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"lcore", g->lcore_id, "tid", p.tid, "mode", p.mode,
		"pstate", p.pstate, "freq_mhz", t4p4s_power_backends.pstate_mhz[p.pstate],
		"pstate_transitions", (json_int_t)p.transitions,
		"polls", (json_int_t)p.polls, "empty_polls", (json_int_t)p.empty_polls,
		"packets", (json_int_t)p.packets,
		"busy_ns", (json_int_t)(p.work_ns + p.poll_ns),
		"work_ns", (json_int_t)p.work_ns, "poll_ns", (json_int_t)p.poll_ns,
		"paused_ns", (json_int_t)p.paused_ns, "asleep_ns", (json_int_t)p.asleep_ns,
		"pauses", (json_int_t)p.pauses, "sleeps", (json_int_t)p.sleeps,
		"naps", (json_int_t)p.naps, "interrupt_wakeups", (json_int_t)p.interrupt_wakeups,
		"cpu_time_ns", (json_int_t)p.cpu_time_ns);
	json_object_set_new(o, "pstate_residency_ns", residency);
	json_object_set_new(o, "thresholds", thresholds_json(&th));
	return o;
}

static json_t *
backends_json(void)
{
	const struct t4p4s_power_backends *b = &t4p4s_power_backends;
	bool intr = t4p4s_governed.n_lcores > 0;
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++)
		intr = intr && LOAD(t4p4s_governed.lcores[w]->rx_intr);
	return json_pack("{s:s, s:s, s:s}", "frequency", b->frequency ? b->frequency : "none",
			 "pause", b->pause ? b->pause : "none",
			 "sleep", intr ? "rx-interrupt" : "timed");
}

json_t *
t4p4s_power_json(void)
{
	json_t *mhz = json_array(), *lcores = json_array();
	for (unsigned i = 0; i < t4p4s_power_backends.n_pstates; i++)
		json_array_append_new(mhz, json_integer(t4p4s_power_backends.pstate_mhz[i]));
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++)
		json_array_append_new(lcores, t4p4s_power_governor_json(t4p4s_governed.lcores[w]));
	return json_pack("{s:b, s:o, s:o, s:o, s:o}", "ok", 1, "backends", backends_json(),
			 "pstates_mhz", mhz,
			 "thresholds", thresholds_json(&t4p4s_governed.defaults),
			 "lcores", lcores);
}

/* The worker index of the command's "lcore" (an EAL lcore id), -1 when
 * it names none (every lcore), -2 (ERR set) when it is not a worker. */
static int
lcore_index(json_t *cmd, char *err, size_t err_len)
{
	json_t *v = json_object_get(cmd, "lcore");
	if (v == NULL)
		return -1;
	if (json_is_integer(v)) {
		for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++)
			if ((json_int_t)t4p4s_governed.lcores[w]->lcore_id == json_integer_value(v))
				return (int)w;
	}
	char *text = json_dumps(v, JSON_ENCODE_ANY);
	snprintf(err, err_len, "\"lcore\": %s is not a forwarding lcore of this process",
		 text ? text : "?");
	free(text);
	return -2;
}

static json_t *
lcores_reply(int index)
{
	json_t *ids = json_array();
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++)
		if (index < 0 || (unsigned)index == w)
			json_array_append_new(ids, json_integer(t4p4s_governed.lcores[w]->lcore_id));
	return ids;
}

json_t *
t4p4s_power_mode_command(json_t *cmd, char *err, size_t err_len)
{
	enum t4p4s_governor_policy policy;
	const char *mode = json_string_value(json_object_get(cmd, "mode"));
	if (mode == NULL) {
		snprintf(err, err_len, "power_mode: \"mode\" must be a string");
		return NULL;
	}
	if (t4p4s_governor_parse(mode, &policy) != 0) {
		snprintf(err, err_len, "power_mode: unknown mode '%s' (" T4P4S_GOVERNOR_MODE_NAMES ")",
			 mode);
		return NULL;
	}
	int index = lcore_index(cmd, err, err_len);
	if (index == -2 || t4p4s_governor_request_policy(index, policy, err, err_len) != 0)
		return NULL;
	return json_pack("{s:b, s:s, s:o}", "ok", 1, "mode", mode, "lcores", lcores_reply(index));
}

json_t *
t4p4s_power_thresholds_command(json_t *cmd, char *err, size_t err_len)
{
	json_t *given = json_object_get(cmd, "thresholds");
	if (!json_is_object(given)) {
		snprintf(err, err_len, "power_thresholds: \"thresholds\" must be an object");
		return NULL;
	}
	int index = lcore_index(cmd, err, err_len);
	if (index == -2)
		return NULL;
	/* the first lcore's present thresholds with the changes: every lcore
	 * named gets the same set */
	struct t4p4s_governor_request *r = &t4p4s_governed.lcores[index < 0 ? 0 : index]->request;
	struct t4p4s_power_thresholds th;
	rte_spinlock_lock(&r->lock);
	th = r->thresholds;
	rte_spinlock_unlock(&r->lock);
	const char *name;
	json_t *v;
	json_object_foreach(given, name, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(err, err_len, "power threshold %s: must be a whole number", name);
			return NULL;
		}
		if (t4p4s_power_threshold_set(&th, name, (uint64_t)json_integer_value(v),
					      err, err_len) != 0)
			return NULL;
	}
	t4p4s_governor_request_thresholds(index, &th);
	return json_pack("{s:b, s:o, s:o}", "ok", 1, "thresholds", thresholds_json(&th),
			 "lcores", lcores_reply(index));
}

/* Adds to the telemetry dict `d` a dict "lcore<id>" for every governed
 * lcore, filled by `fill` from the lcore's figures (lcore_power). */
static void
add_lcore_dicts(struct rte_tel_data *d,
		void (*fill)(struct rte_tel_data *ld, const struct lcore_power *p))
{
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++) {
		const struct t4p4s_governor *g = t4p4s_governed.lcores[w];
		struct lcore_power p;
		struct rte_tel_data *ld = rte_tel_data_alloc();
		char name[32];
		lcore_power(g, &p);
		rte_tel_data_start_dict(ld);
		fill(ld, &p);
		snprintf(name, sizeof(name), "lcore%u", g->lcore_id);
		rte_tel_data_add_dict_container(d, name, ld, 0);
	}
}

static void
fill_lcore_power(struct rte_tel_data *ld, const struct lcore_power *p)
{
	rte_tel_data_add_dict_string(ld, "mode", p->mode);
	rte_tel_data_add_dict_u64(ld, "tid", (uint64_t)p->tid);
	rte_tel_data_add_dict_u64(ld, "pstate", p->pstate);
	rte_tel_data_add_dict_u64(ld, "freq_mhz", t4p4s_power_backends.pstate_mhz[p->pstate]);
	rte_tel_data_add_dict_u64(ld, "pstate_transitions", p->transitions);
	rte_tel_data_add_dict_u64(ld, "polls", p->polls);
	rte_tel_data_add_dict_u64(ld, "empty_polls", p->empty_polls);
	rte_tel_data_add_dict_u64(ld, "packets", p->packets);
	rte_tel_data_add_dict_u64(ld, "busy_ns", p->work_ns + p->poll_ns);
	rte_tel_data_add_dict_u64(ld, "paused_ns", p->paused_ns);
	rte_tel_data_add_dict_u64(ld, "asleep_ns", p->asleep_ns);
	rte_tel_data_add_dict_u64(ld, "cpu_time_ns", p->cpu_time_ns);
}

static int
telemetry_power(const char *cmd __rte_unused, const char *params __rte_unused,
		struct rte_tel_data *d)
{
	const struct t4p4s_power_backends *b = &t4p4s_power_backends;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "frequency_backend", b->frequency ? b->frequency : "none");
	rte_tel_data_add_dict_string(d, "pause_backend", b->pause ? b->pause : "none");
	add_lcore_dicts(d, fill_lcore_power);
	return 0;
}

/* /t4p4s/lcores: each lcore's load since it started, which DPDK 22.11's
 * telemetry has no command for (its /eal/lcore/ commands came later):
 * polls and empty polls (one per rx queue and round), packets, and its
 * time: work_ns in rounds that received packets, total_ns all of it (those,
 * the empty rounds, paused and asleep), busy_share_ppm = work_ns / total_ns
 * in millionths (22.11's telemetry has no floats). The figures of the
 * control socket's `power` (lcore_power), not a second count. */
static void
fill_lcore_load(struct rte_tel_data *ld, const struct lcore_power *p)
{
	uint64_t total = p->work_ns + p->poll_ns + p->paused_ns + p->asleep_ns;
	rte_tel_data_add_dict_u64(ld, "polls", p->polls);
	rte_tel_data_add_dict_u64(ld, "empty_polls", p->empty_polls);
	rte_tel_data_add_dict_u64(ld, "packets", p->packets);
	rte_tel_data_add_dict_u64(ld, "work_ns", p->work_ns);
	rte_tel_data_add_dict_u64(ld, "total_ns", total);
	rte_tel_data_add_dict_u64(ld, "busy_share_ppm",
		total ? (uint64_t)((double)p->work_ns * 1e6 / (double)total) : 0);
}

static int
telemetry_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
		 struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	add_lcore_dicts(d, fill_lcore_load);
	return 0;
}

void
t4p4s_power_telemetry_init(void)
{
	rte_telemetry_register_cmd("/t4p4s/power", telemetry_power,
		"t4p4s governor: backends and per-lcore mode, P-state, time busy/paused/asleep "
		"(ns), CPU time. No parameters");
	/* help: at most 127 characters, or the command is refused */
	if (rte_telemetry_register_cmd("/t4p4s/lcores", telemetry_lcores,
			"t4p4s per-lcore load since start: polls, packets, work_ns of total_ns "
			"(busy_share_ppm). No parameters") != 0)
		fprintf(stderr, "warning: DPDK telemetry refused /t4p4s/lcores\n");
}
