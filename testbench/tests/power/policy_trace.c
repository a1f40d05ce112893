/* Drives the governor's decisions (t4p4s/runtime/src/power_policy.c) with
 * a scripted trace on stdin, one command per line, and answers one JSON
 * object per command on stdout (test_power_policy.py):
 *
 *   thresholds K=V,...          -> {"ok": bool, "error": "..."}
 *   poll Q RECEIVED QUEUED      -> queue Q's hints this poll
 *   round PSTATE                -> the lcore's combined hints of the polls since
 *                                  the last round, its action and next P-state
 *   stepdown PERIOD_NS SLEPT_NS PACKETS POLLS
 *   observe PACKETS ELAPSED_NS  -> the proportional rate afterwards
 *   step PERIOD_NS WORK_NS FREQ_NOW FREQ_LOWER [BATCH_WORK_NS BATCH_FRAMES]
 *                               -> the step, naps, probe, the work share the
 *                                  arrivals need and the frame cost (ns at FREQ_NOW)
 *   napped                      -> a nap was taken (ends a probe)
 *   nap RING QUEUED OVERSHOOT_NS */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "power_policy.h"

#define MAX_QUEUES 8

static const char *
action_name(enum t4p4s_idle_action a)
{
	return a == T4P4S_IDLE_PAUSE ? "pause" : a == T4P4S_IDLE_SLEEP ? "sleep" : "none";
}

int
main(void)
{
	struct t4p4s_power_thresholds t;
	struct t4p4s_alg1_queue queues[MAX_QUEUES] = { { 0, 0 } };
	struct t4p4s_alg1_hints lcore = { 0, T4P4S_FREQ_HINT_NONE };
	struct t4p4s_proportional prop = { 0 };
	bool first = true;
	char line[512], arg[400];
	t4p4s_power_thresholds_default(&t);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		unsigned q, received, queued, pstate;
		uint64_t a, b, c, d;
		if (sscanf(line, "thresholds %399s", arg) == 1) {
			char err[200] = "";
			int ret = t4p4s_power_thresholds_parse(&t, arg, err, sizeof(err));
			printf("{\"ok\": %s, \"error\": \"%s\"}\n", ret == 0 ? "true" : "false", err);
		} else if (sscanf(line, "poll %u %u %u", &q, &received, &queued) == 3 && q < MAX_QUEUES) {
			struct t4p4s_alg1_hints h = t4p4s_alg1_queue_poll(&t, &queues[q], received, queued);
			t4p4s_alg1_combine(&lcore, &h, first);
			first = false;
			printf("{\"idle_us\": %u, \"freq\": %d, \"empty_polls\": %u, \"trend\": %u}\n",
			       h.idle_us, (int)h.freq, queues[q].empty_polls, queues[q].trend);
		} else if (sscanf(line, "round %u", &pstate) == 1) {
			printf("{\"idle_us\": %u, \"freq\": %d, \"action\": \"%s\", \"pstate\": %u}\n",
			       lcore.idle_us, (int)lcore.freq,
			       action_name(t4p4s_alg1_idle_action(&t, lcore.idle_us)),
			       t4p4s_alg1_pstate_after(pstate, lcore.freq));
			lcore = (struct t4p4s_alg1_hints){ 0, T4P4S_FREQ_HINT_NONE };
			first = true;
		} else if (sscanf(line, "stepdown %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
				  &a, &b, &c, &d) == 4) {
			printf("{\"down\": %s}\n", t4p4s_stepdown(&t, a, b, c, d) ? "true" : "false");
		} else if (sscanf(line, "observe %" SCNu64 " %" SCNu64, &a, &b) == 2) {
			t4p4s_proportional_observe(&prop, a, b);
			printf("{\"rate_pps\": %.1f}\n", (double)prop.rate_ppus_fp / 65536.0 * 1e6);
		} else if (sscanf(line, "step %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
				  &a, &b, &c, &d) == 4) {
			struct t4p4s_proportional_period s = {
				.period_ns = a, .work_ns = b,
				.freq_now = (uint32_t)c, .freq_lower = (uint32_t)d,
			};
			sscanf(line, "step %*u %*u %*u %*u %" SCNu64 " %" SCNu64,
			       &s.batch_work_ns, &s.batch_frames);
			int step = t4p4s_proportional_step(&t, &prop, &s);
			printf("{\"step\": %d, \"naps\": %s, \"probe\": %s, \"busy_pct\": %u, "
			       "\"frame_ns\": %" PRIu64 "}\n", step, prop.naps ? "true" : "false",
			       prop.probe ? "true" : "false", prop.busy_pct,
			       t4p4s_proportional_frame_ns(&prop, s.freq_now));
		} else if (strncmp(line, "napped", 6) == 0) {
			t4p4s_proportional_napped(&prop);
			printf("{\"probe\": %s}\n", prop.probe ? "true" : "false");
		} else if (sscanf(line, "nap %" SCNu64 " %" SCNu64 " %" SCNu64, &a, &b, &c) == 3) {
			printf("{\"nap_ns\": %" PRIu64 "}\n",
			       t4p4s_proportional_nap_ns(&t, &prop, (uint32_t)a, (uint32_t)b, c));
		} else {
			printf("{\"error\": \"bad line\"}\n");
		}
	}
	return 0;
}
