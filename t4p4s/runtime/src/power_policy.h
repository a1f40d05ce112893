/* The power governor's decisions, as pure functions of what a lcore saw
 * (no DPDK, no clock): paper 000's Algorithm 1 per rx queue and per
 * lcore, DPDK l3fwd-power's step-down rule, and the `proportional` mode's
 * nap length. governor.c applies them; testbench/tests/power/ drives them
 * with scripted queue traces through policy_trace.c. */
#ifndef T4P4S_POWER_POLICY_H
#define T4P4S_POWER_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Every threshold is configurable (--power-thresholds, the control
 * socket's power_thresholds); the defaults are paper 000's Algorithm 1,
 * l3fwd-power's step-down and issue 15's proportional mode. */
#define T4P4S_POWER_THRESHOLDS(X)                                             \
	/* Algorithm 1, lines 5-10: idle hints after empty polls */           \
	X(idle_short_after, 10, 1, 1000000)                                   \
	X(idle_long_after, 300, 1, 1000000)                                   \
	X(idle_short_us, 1, 0, 1000000)                                       \
	X(idle_long_us, 300, 0, 1000000)                                      \
	/* lines 28-36: a hint from this many us on sleeps instead of pausing */ \
	X(sleep_at_us, 300, 1, 1000000)                                       \
	X(sleep_recheck_ms, 10, 1, 10000)                                     \
	/* lines 13-21: frequency hints from the rx queue's fill */           \
	X(freq_max_above, 96, 0, 65535)                                       \
	X(trend_fast_above, 64, 0, 65535)                                     \
	X(trend_fast_step, 250, 0, 1000000)                                   \
	X(trend_slow_above, 32, 0, 65535)                                     \
	X(trend_slow_step, 3, 0, 1000000)                                     \
	X(trend_limit, 10000, 1, 100000000)                                   \
	/* l3fwd-power: every period, one P-state down if the lcore slept   \
	 * this share of it or received fewer packets per busy poll */        \
	X(stepdown_period_ms, 100, 1, 100000)                                 \
	X(stepdown_sleep_pct, 25, 0, 100)                                     \
	X(stepdown_packets_per_poll, 32, 0, 65535)                            \
	/* proportional: nap so the rx ring stays below this fill and the    \
	 * added latency below this budget */                                 \
	X(latency_budget_us, 50, 1, 1000000)                                  \
	X(ring_fill_pct, 50, 1, 100)                                          \
	/* proportional: step the P-state down while the lcore would stay    \
	 * below this share busy one P-state lower, up above the second */    \
	X(target_busy_pct, 80, 1, 100)                                        \
	X(step_up_busy_pct, 90, 1, 100)

struct t4p4s_power_thresholds {
#define T4P4S_POWER_FIELD(name, def, min, max) uint32_t name;
	T4P4S_POWER_THRESHOLDS(T4P4S_POWER_FIELD)
#undef T4P4S_POWER_FIELD
};

void t4p4s_power_thresholds_default(struct t4p4s_power_thresholds *t);
/* Sets NAME to VALUE; -1 (and nothing changed) for an unknown name or a
 * value out of range, with why in ERR. */
int t4p4s_power_threshold_set(struct t4p4s_power_thresholds *t, const char *name,
			      uint64_t value, char *err, size_t err_len);
/* Names and values in declaration order (I from 0 while it returns true). */
bool t4p4s_power_threshold_at(const struct t4p4s_power_thresholds *t, unsigned i,
			      const char **name, uint32_t *value);
/* "k=v,k=v" (--power-thresholds); -1 with why in ERR. */
int t4p4s_power_thresholds_parse(struct t4p4s_power_thresholds *t, const char *spec,
				 char *err, size_t err_len);

/* Algorithm 1's frequency hints (lines 15, 21, 24-27). */
enum t4p4s_freq_hint {
	T4P4S_FREQ_HINT_NONE = 0,
	T4P4S_FREQ_HINT_STEP_UP = 1,   /* one P-state up */
	T4P4S_FREQ_HINT_MAX = 2,       /* the highest P-state at once */
};

/* One rx queue's Algorithm 1 state (lines 5, 17, 19: the counter and the
 * trend persist from poll to poll). */
struct t4p4s_alg1_queue {
	uint32_t empty_polls;
	uint32_t trend;
};

/* What one queue's poll hints (this poll only: a queue that received
 * packets hints no idle, one that did not hints no frequency). */
struct t4p4s_alg1_hints {
	uint32_t idle_us;
	enum t4p4s_freq_hint freq;
};

/* Lines 4-21 for one queue: RECEIVED packets this poll, QUEUED still in
 * its rx ring after it (the burst size where the PMD cannot count). */
struct t4p4s_alg1_hints t4p4s_alg1_queue_poll(const struct t4p4s_power_thresholds *t,
					      struct t4p4s_alg1_queue *q,
					      unsigned received, unsigned queued);

/* Lines 22-23: the lcore's minimum idle hint and maximum frequency hint. */
static inline void
t4p4s_alg1_combine(struct t4p4s_alg1_hints *lcore, const struct t4p4s_alg1_hints *queue,
		   bool first)
{
	if (first || queue->idle_us < lcore->idle_us)
		lcore->idle_us = queue->idle_us;
	if (first || queue->freq > lcore->freq)
		lcore->freq = queue->freq;
}

/* Lines 24-31 and the step-down: what the lcore does after a round. */
enum t4p4s_idle_action {
	T4P4S_IDLE_NONE,    /* poll again at once */
	T4P4S_IDLE_PAUSE,   /* pause (stay in C0 / C0.x) for the hint */
	T4P4S_IDLE_SLEEP,   /* rx interrupts and sleep (line 31) */
};

static inline enum t4p4s_idle_action
t4p4s_alg1_idle_action(const struct t4p4s_power_thresholds *t, uint32_t idle_us)
{
	if (idle_us == 0)
		return T4P4S_IDLE_NONE;
	return idle_us < t->sleep_at_us ? T4P4S_IDLE_PAUSE : T4P4S_IDLE_SLEEP;
}

/* The P-state after a frequency hint; P-state 0 is the fastest. */
unsigned t4p4s_alg1_pstate_after(unsigned pstate, enum t4p4s_freq_hint hint);

/* l3fwd-power's step-down, once per period: true to go one P-state down.
 * SLEPT_NS of PERIOD_NS asleep or paused; PACKETS received in POLLS polls
 * (l3fwd-power's nb_rx_processed / nb_iteration_looped). */
bool t4p4s_stepdown(const struct t4p4s_power_thresholds *t, uint64_t period_ns,
		    uint64_t slept_ns, uint64_t packets, uint64_t polls);

/* The proportional mode. Once per period it moves the P-state by the
 * share of the period the arrivals need, projected onto the next lower
 * P-state (paper 002: run slower rather than race to idle, "act like a
 * tortoise"); between rounds it naps for t4p4s_proportional_nap_ns().
 *
 * What the arrivals need is the measured arrival rate times the cost of a
 * frame in rounds that received a batch, not the work share the lcore
 * measured: polling without naps hands it one frame per round, and the
 * whole round (the rx burst call, the tx flush, the round's bookkeeping)
 * then counts as that frame's work, so at a quarter of its capacity an
 * lcore measures itself some 80% busy, never finds room for a nap and
 * never batches. Napping batches the arrivals, and a batch pays a round's
 * fixed cost once. */

/* Rounds that received at least this many frames measure the cost of a
 * frame: the round's fixed cost, spread over 16 frames or more, makes it
 * a little dearer than a frame's own work, which errs towards shorter
 * naps and a higher P-state. */
#define T4P4S_PROPORTIONAL_BATCH_FRAMES 16

struct t4p4s_proportional {
	uint64_t rate_ppus_fp;   /* arrival rate, packets per us << 16, EWMA */
	uint64_t frame_mcycles;  /* a frame's cost in batched rounds, millicycles at the
				  * modelled frequency (ns x MHz), EWMA; 0: none measured */
	uint32_t busy_pct;       /* the share of the period the arrivals need at the P-state */
	bool naps;               /* the lcore has time to spare at this P-state */
	bool probe;              /* no batched round last period and no naps: one nap
				  * to measure the frame cost */
};

/* What a lcore measured over one period. Work is time in rounds that
 * received frames, modelled at the present P-state. */
struct t4p4s_proportional_period {
	uint64_t period_ns;
	uint64_t work_ns;
	uint64_t batch_work_ns;  /* of it, in rounds of T4P4S_PROPORTIONAL_BATCH_FRAMES or more */
	uint64_t batch_frames;   /* the frames those rounds received */
	uint32_t freq_now;       /* MHz of the present P-state */
	uint32_t freq_lower;     /* of the next lower one; 0 at the lowest */
};

/* -1: one P-state up, +1: one down, 0: stay; sets P->naps and P->probe.
 * The work needed is the smaller of the work measured and the arrival
 * rate (t4p4s_proportional_observe(), called first) times the frame cost.
 * Every period the P-state goes one down while the work needed would take
 * at most target_busy_pct of the time there, one up above
 * step_up_busy_pct at the present one; naps are taken while it is at most
 * target_busy_pct at the present one. (Naps only once the P-state could go
 * no lower made the lcore oscillate.) A period without a batched round
 * and without naps asks for one probe nap, within the same limits: the
 * frames it gathers measure the frame cost (a lcore that gets no batch
 * keeps up frame by frame, so a batch only drains faster). */
int t4p4s_proportional_step(const struct t4p4s_power_thresholds *t, struct t4p4s_proportional *p,
			    const struct t4p4s_proportional_period *s);

/* The lcore took a nap: a probe is done. */
static inline void
t4p4s_proportional_napped(struct t4p4s_proportional *p)
{
	p->probe = false;
}

/* The frame cost in ns at FREQ_MHZ (0: none measured). */
static inline uint64_t
t4p4s_proportional_frame_ns(const struct t4p4s_proportional *p, uint32_t freq_mhz)
{
	return freq_mhz != 0 ? p->frame_mcycles / freq_mhz : 0;
}

/* The measured arrival rate: PACKETS received over ELAPSED_NS (a period). */
void t4p4s_proportional_observe(struct t4p4s_proportional *p, uint64_t packets,
				uint64_t elapsed_ns);

/* How long to nap now (0: not at all): until the ring (RING descriptors,
 * QUEUED in it) reaches ring_fill_pct at the measured rate, and at most
 * what keeps the added latency in the budget: a frame that arrives as the
 * nap begins waits the nap, its oversleep (OVERSHOOT_NS, measured) and the
 * frames that arrived before it, so nap * (1 + busy share) + overshoot
 * <= budget, the busy share being what the arrivals need. */
uint64_t t4p4s_proportional_nap_ns(const struct t4p4s_power_thresholds *t,
				   const struct t4p4s_proportional *p,
				   uint32_t ring, uint32_t queued, uint64_t overshoot_ns);

#endif
