/* The governor's decisions (power_policy.h): no DPDK, no clock, so the
 * tests drive them with scripted traces (testbench/tests/power/). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "power_policy.h"

static const struct {
	const char *name;
	size_t offset;
	uint32_t def, min, max;
} thresholds[] = {
#define T4P4S_POWER_ROW(n, d, lo, hi) \
	{ #n, offsetof(struct t4p4s_power_thresholds, n), d, lo, hi },
	T4P4S_POWER_THRESHOLDS(T4P4S_POWER_ROW)
#undef T4P4S_POWER_ROW
};
#define N_THRESHOLDS (sizeof(thresholds) / sizeof(thresholds[0]))

static uint32_t *
field(struct t4p4s_power_thresholds *t, unsigned i)
{
	return (uint32_t *)((char *)t + thresholds[i].offset);
}

void
t4p4s_power_thresholds_default(struct t4p4s_power_thresholds *t)
{
	for (unsigned i = 0; i < N_THRESHOLDS; i++)
		*field(t, i) = thresholds[i].def;
}

int
t4p4s_power_threshold_set(struct t4p4s_power_thresholds *t, const char *name,
			  uint64_t value, char *err, size_t err_len)
{
	for (unsigned i = 0; i < N_THRESHOLDS; i++) {
		if (strcmp(thresholds[i].name, name) != 0)
			continue;
		if (value < thresholds[i].min || value > thresholds[i].max) {
			snprintf(err, err_len, "power threshold %s: %" PRIu64
				 " is out of range %" PRIu32 "..%" PRIu32,
				 name, value, thresholds[i].min, thresholds[i].max);
			return -1;
		}
		*field(t, i) = (uint32_t)value;
		return 0;
	}
	snprintf(err, err_len, "unknown power threshold '%s'", name);
	return -1;
}

bool
t4p4s_power_threshold_at(const struct t4p4s_power_thresholds *t, unsigned i,
			 const char **name, uint32_t *value)
{
	if (i >= N_THRESHOLDS)
		return false;
	*name = thresholds[i].name;
	*value = *field((struct t4p4s_power_thresholds *)(uintptr_t)t, i);
	return true;
}

int
t4p4s_power_thresholds_parse(struct t4p4s_power_thresholds *t, const char *spec,
			     char *err, size_t err_len)
{
	struct t4p4s_power_thresholds next = *t;
	char *copy = strdup(spec), *save = NULL;
	int ret = 0;
	if (copy == NULL) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (char *kv = strtok_r(copy, ",", &save); kv != NULL && ret == 0;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *end;
		if (eq == NULL || eq[1] == '\0') {
			snprintf(err, err_len, "'%s' is not NAME=VALUE", kv);
			ret = -1;
			break;
		}
		*eq = '\0';
		errno = 0;
		unsigned long long v = strtoull(eq + 1, &end, 10);
		if (errno != 0 || *end != '\0' || eq[1] == '-') {
			snprintf(err, err_len, "power threshold %s: '%s' is not a whole number",
				 kv, eq + 1);
			ret = -1;
			break;
		}
		ret = t4p4s_power_threshold_set(&next, kv, v, err, err_len);
	}
	free(copy);
	if (ret == 0)
		*t = next;
	return ret;
}

struct t4p4s_alg1_hints
t4p4s_alg1_queue_poll(const struct t4p4s_power_thresholds *t, struct t4p4s_alg1_queue *q,
		      unsigned received, unsigned queued)
{
	struct t4p4s_alg1_hints h = { 0, T4P4S_FREQ_HINT_NONE };
	if (received == 0) {                                   /* line 4 */
		if (q->empty_polls != UINT32_MAX)
			q->empty_polls++;                      /* line 5 */
		if (q->empty_polls > t->idle_short_after)      /* line 6 */
			h.idle_us = q->empty_polls < t->idle_long_after
				? t->idle_short_us : t->idle_long_us;   /* lines 7-10 */
		return h;
	}
	q->empty_polls = 0;                                    /* line 12 */
	if (queued > t->freq_max_above) {                      /* line 14 */
		h.freq = T4P4S_FREQ_HINT_MAX;
		q->trend = 0;                                  /* line 15 */
	} else if (queued > t->trend_fast_above) {             /* line 16 */
		q->trend += t->trend_fast_step;                /* line 17 */
	} else if (queued > t->trend_slow_above) {             /* line 18 */
		q->trend += t->trend_slow_step;                /* line 19 */
	}
	if (q->trend > t->trend_limit) {                       /* line 20 */
		h.freq = T4P4S_FREQ_HINT_STEP_UP;
		q->trend = 0;                                  /* line 21 */
	}
	return h;
}

unsigned
t4p4s_alg1_pstate_after(unsigned pstate, enum t4p4s_freq_hint hint)
{
	switch (hint) {
	case T4P4S_FREQ_HINT_MAX:
		return 0;                                      /* line 25 */
	case T4P4S_FREQ_HINT_STEP_UP:
		return pstate > 0 ? pstate - 1 : 0;            /* line 27 */
	default:
		return pstate;
	}
}

bool
t4p4s_stepdown(const struct t4p4s_power_thresholds *t, uint64_t period_ns,
	       uint64_t slept_ns, uint64_t packets, uint64_t polls)
{
	if (period_ns == 0)
		return false;
	if (slept_ns * 100 >= (uint64_t)t->stepdown_sleep_pct * period_ns)
		return true;
	return polls != 0 && packets / polls < t->stepdown_packets_per_poll;
}

/* The frame cost's average: the first sample counts whole, the next ones
 * with weight 1/4 (a P-state change or a new traffic mix shows within a
 * few periods). */
static void
frame_cost_sample(struct t4p4s_proportional *p, const struct t4p4s_proportional_period *s)
{
	uint64_t sample = s->batch_work_ns * s->freq_now / s->batch_frames;
	if (p->frame_mcycles == 0)
		p->frame_mcycles = sample;
	else if (sample >= p->frame_mcycles)
		p->frame_mcycles += (sample - p->frame_mcycles) / 4;
	else
		p->frame_mcycles -= (p->frame_mcycles - sample) / 4;
}

/* The work the period's arrivals need at the present P-state: the
 * measured work, or less, the arrival rate times the frame cost when one
 * was measured. */
static uint64_t
work_needed_ns(const struct t4p4s_proportional *p, const struct t4p4s_proportional_period *s)
{
	if (p->frame_mcycles == 0 || s->freq_now == 0)
		return s->work_ns;
	/* frames per us << 16, times the period's us, times ns per frame */
	uint64_t frames_fp = p->rate_ppus_fp * (s->period_ns / 1000);
	uint64_t needed = frames_fp / 65536 * p->frame_mcycles / s->freq_now;
	return needed < s->work_ns ? needed : s->work_ns;
}

int
t4p4s_proportional_step(const struct t4p4s_power_thresholds *t, struct t4p4s_proportional *p,
			const struct t4p4s_proportional_period *s)
{
	if (s->period_ns == 0)
		return 0;
	if (s->batch_frames != 0)
		frame_cost_sample(p, s);
	uint64_t work_ns = work_needed_ns(p, s);
	uint64_t busy = work_ns * 100 / s->period_ns;
	p->busy_pct = (uint32_t)(busy > 100 ? 100 : busy);
	int step = 0;
	if (p->busy_pct > t->step_up_busy_pct) {
		p->naps = false;
		step = -1;
	} else {
		p->naps = p->busy_pct <= t->target_busy_pct;
		/* the same work at the next lower frequency takes
		 * freq_now/freq_lower times as long */
		if (s->freq_lower != 0 && work_ns * s->freq_now * 100 <
					  (uint64_t)t->target_busy_pct * s->period_ns * s->freq_lower)
			step = +1;
	}
	p->probe = !p->naps && s->batch_frames == 0;
	return step;
}

void
t4p4s_proportional_observe(struct t4p4s_proportional *p, uint64_t packets, uint64_t elapsed_ns)
{
	if (elapsed_ns == 0)
		return;
	uint64_t now = (packets << 16) * 1000 / elapsed_ns;
	/* a rising rate counts at once (naps shorten before the ring fills),
	 * a falling one with weight 1/4 */
	if (now >= p->rate_ppus_fp)
		p->rate_ppus_fp = now;
	else
		p->rate_ppus_fp -= (p->rate_ppus_fp - now) / 4;
}

uint64_t
t4p4s_proportional_nap_ns(const struct t4p4s_power_thresholds *t,
			  const struct t4p4s_proportional *p,
			  uint32_t ring, uint32_t queued, uint64_t overshoot_ns)
{
	if (!p->naps && !p->probe)
		return 0;
	uint64_t budget_ns = (uint64_t)t->latency_budget_us * 1000;
	if (overshoot_ns >= budget_ns)
		return 0;
	uint64_t nap = (budget_ns - overshoot_ns) * 100 / (100 + p->busy_pct);
	uint64_t fill = (uint64_t)ring * t->ring_fill_pct / 100;
	if (queued >= fill)
		return 0;
	if (p->rate_ppus_fp != 0) {
		uint64_t until_fill = (((fill - queued) << 16) * 1000) / p->rate_ppus_fp;
		if (until_fill < nap)
			nap = until_fill;
	}
	return nap;
}
