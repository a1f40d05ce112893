/* The power governor: every lcore calls t4p4s_governor_after_round() once
 * after each poll round with what each of its rx queues received, and
 * t4p4s_governor_tick() once per check period (a millisecond). Modes:
 *
 *   busy          poll without pause (the baseline)
 *   nap           sleep 100 us after 1,024 empty rounds in a row (what the
 *                 tests' and the demo's many processes on 2 vCPUs run)
 *   adaptive      paper 000's Algorithm 1 per rx queue and lcore, plus DPDK
 *                 l3fwd-power's step-down every stepdown_period_ms
 *   proportional  naps sized from the measured arrival rate and the rx
 *                 ring's headroom within a latency budget, after lowering
 *                 the P-state as far as the load allows (paper 002)
 *   pmgmt-pause, pmgmt-monitor, pmgmt-scale
 *                 DPDK's rte_power_ethdev_pmgmt on every rx queue, enabled
 *                 before the ports start; the loop then polls as in busy
 *
 * The decisions are power_policy.c's; the backends (P-states, pause,
 * sleep) power_backend.c's; the statistics, telemetry and control
 * commands power_stats.c's. Every lcore owns its governor state; the
 * control thread reads its counters and hands it new modes and thresholds
 * through a lock the lcore only ever try-locks.
 *
 * None of it knows whose lcores it governs: a process (the target runtime,
 * governor_runtime.c; the BaaS, baas/src/power.c) describes each
 * lcore (its rx queues, its counters, when it must be polling again) in
 * t4p4s_governed before its ports start. */
#ifndef T4P4S_GOVERNOR_H
#define T4P4S_GOVERNOR_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_config.h>
#include <rte_spinlock.h>

#include "power_policy.h"

enum t4p4s_governor_policy {
	T4P4S_GOVERNOR_BUSY,
	T4P4S_GOVERNOR_NAP,
	T4P4S_GOVERNOR_ADAPTIVE,
	T4P4S_GOVERNOR_PROPORTIONAL,
	T4P4S_GOVERNOR_PMGMT_PAUSE,
	T4P4S_GOVERNOR_PMGMT_MONITOR,
	T4P4S_GOVERNOR_PMGMT_SCALE,
	T4P4S_GOVERNOR_POLICIES
};

#define T4P4S_MAX_PSTATES 32
/* the runtime's T4P4S_MAX_RX_PER_LCORE; the BaaS's attachments per lcore */
#define T4P4S_GOVERNOR_MAX_RXQ 64

/* What the control thread asks of a lcore; applied by the lcore within a
 * check period. */
struct t4p4s_governor_request {
	rte_spinlock_t lock;
	uint64_t generation;             /* bumped by every request */
	enum t4p4s_governor_policy policy;
	struct t4p4s_power_thresholds thresholds;
};

/* Where a queue's fill after a poll is read (Algorithm 1's "READ
 * rxq_packet_cnt"). */
enum t4p4s_queue_fill {
	T4P4S_FILL_REPLAY,    /* a paced --rx-replay's modelled ring */
	T4P4S_FILL_ETHDEV,    /* rte_eth_rx_queue_count */
	T4P4S_FILL_BURST,     /* the PMD cannot count (-ENOTSUP): what the burst received */
	T4P4S_FILL_RING,      /* a software ring's count (the BaaS's ring attachments) */
};

struct rte_ring;
struct rte_rcu_qsbr;

/* One rx queue a lcore polls: an ethdev queue or a software ring. */
struct t4p4s_governor_queue {
	struct t4p4s_alg1_queue alg1;
	enum t4p4s_queue_fill fill;
	uint16_t port, queue;            /* the ethdev queue */
	struct rte_ring *ring;           /* or the ring (then no port) */
	uint32_t size;                   /* descriptors (a replay's modelled ring's) or slots */
	bool rx_intr;                    /* its port's rx interrupts are armed */
};

/* What the lcore counted over its queues since it started (polls: one per
 * queue and round). */
struct t4p4s_rx_counts {
	uint64_t polls, empty_polls, packets;
};

/* What the governor asks of the process about one of its lcores. */
struct t4p4s_governor_host {
	const void *lcore;               /* the process's lcore, the hooks' argument */
	void (*rx_counts)(const void *lcore, struct t4p4s_rx_counts *out);
	/* The TSC by which the lcore must poll again, for an idle that would
	 * last from NOW until UNTIL (UNTIL or later: no work due before it);
	 * NULL: the lcore has nothing but its queues. */
	uint64_t (*wake_by)(const void *lcore, uint64_t now, uint64_t until);
};

struct t4p4s_governor {
	/* the lcore's own, read per round */
	enum t4p4s_governor_policy policy;
	struct t4p4s_power_thresholds th;
	uint64_t last_tsc;               /* end of the previous round (after any idle) */
	uint32_t empty_rounds;           /* nap */
	struct t4p4s_proportional prop;
	uint64_t overshoot_ns;           /* proportional: how much naps oversleep, EWMA */
	uint32_t ring_min;               /* the smallest rx ring of the lcore's queues */
	bool rx_intr;                    /* every queue of the lcore wakes it by interrupt */
	uint64_t next_period_tsc;

	/* counters: written by the lcore only, read by the control thread */
	uint64_t work_tsc;               /* rounds that received packets */
	uint64_t batch_work_tsc;         /* of them, rounds that received a batch
					  * (T4P4S_PROPORTIONAL_BATCH_FRAMES or more) */
	uint64_t batch_frames;           /* what those rounds received */
	uint64_t poll_tsc;               /* rounds that received none */
	uint64_t pause_tsc, sleep_tsc;
	uint64_t pauses, sleeps, naps, interrupt_wakeups;
	unsigned pstate;
	uint64_t pstate_transitions;
	uint64_t pstate_since_tsc;
	uint64_t pstate_tsc[T4P4S_MAX_PSTATES];
	/* the period's start, for the step-down and the proportional step */
	uint64_t period_idle_tsc, period_work_tsc, period_packets, period_polls;
	uint64_t period_batch_work_tsc, period_batch_frames;

	/* the thread, for its CPU time */
	int tid;
	clockid_t cpu_clock;
	bool started;

	uint64_t applied_generation;
	struct t4p4s_governor_request request;

	/* what the process described before its ports started */
	unsigned index;                  /* in t4p4s_governed, and its RCU thread id */
	unsigned lcore_id;
	struct t4p4s_governor_host host;
	unsigned n_rx;
	struct t4p4s_governor_queue queues[T4P4S_GOVERNOR_MAX_RXQ];
};

/* The lcores a process governs, described before its ports start and
 * read-only once they run. */
struct t4p4s_governed {
	enum t4p4s_governor_policy started;      /* --governor: pmgmt modes stay */
	struct t4p4s_power_thresholds defaults;  /* --power-thresholds */
	struct rte_rcu_qsbr *rcu;                /* the lcores leave it while idle; NULL: none */
	unsigned n_lcores;
	struct t4p4s_governor *lcores[RTE_MAX_LCORE];
};

extern struct t4p4s_governed t4p4s_governed;

/* NAME of a mode; -1 for an unknown one. */
int t4p4s_governor_parse(const char *name, enum t4p4s_governor_policy *out);
#define T4P4S_GOVERNOR_MODE_NAMES \
	"busy, nap, adaptive, proportional, pmgmt-pause, pmgmt-monitor or pmgmt-scale"
/* The options --governor MODE and --power-thresholds K=V,... of every
 * process that runs the governor (targets, the BaaS): 0, or -1 after
 * printing why to stderr. */
int t4p4s_governor_option(const char *arg, enum t4p4s_governor_policy *out);
int t4p4s_power_thresholds_option(const char *arg, struct t4p4s_power_thresholds *out);
const char *t4p4s_governor_name(enum t4p4s_governor_policy policy);
static inline bool
t4p4s_governor_is_pmgmt(enum t4p4s_governor_policy p)
{
	return p >= T4P4S_GOVERNOR_PMGMT_PAUSE && p <= T4P4S_GOVERNOR_PMGMT_SCALE;
}

void t4p4s_governor_init(struct t4p4s_governor *g, enum t4p4s_governor_policy policy,
			 const struct t4p4s_power_thresholds *th);

/* The process's description, on its main thread before the ports start:
 * t4p4s_governed_init, then each lcore in the order of its RCU thread ids
 * (t4p4s_governed_add) with its queues, then t4p4s_governed_ready. */
void t4p4s_governed_init(enum t4p4s_governor_policy started,
			 const struct t4p4s_power_thresholds *defaults, struct rte_rcu_qsbr *rcu);
void t4p4s_governed_add(struct t4p4s_governor *g, unsigned lcore_id,
			const struct t4p4s_governor_host *host);
/* ethdev rx queue PORT/QUEUE of DESC descriptors, RX_INTR if its port's rx
 * interrupts are armed; -1 when the lcore has T4P4S_GOVERNOR_MAX_RXQ. */
int t4p4s_governor_add_ethdev_queue(struct t4p4s_governor *g, uint16_t port, uint16_t queue,
				    uint32_t desc, bool rx_intr);
int t4p4s_governor_add_ring_queue(struct t4p4s_governor *g, struct rte_ring *ring);
/* The backends, and DPDK's pmgmt on every rx queue in a pmgmt mode. -1
 * after printing why. */
int t4p4s_governed_ready(void);
/* After the ports stopped: pmgmt off again. */
void t4p4s_governor_ports_stopped(void);

/* The target runtime's description of its forwarding lcores
 * (governor_runtime.c), from ports.c before the ports start. */
int t4p4s_governor_ports_ready(void);

/* On the lcore, before its first poll. */
void t4p4s_governor_start(struct t4p4s_governor *g);
/* Once per check period, on the lcore: requests, the step-down and the
 * proportional step. */
void t4p4s_governor_tick(struct t4p4s_governor *g, uint64_t now);
/* The slow path of after_round: every mode that may idle. Returns the TSC
 * after the idle. */
uint64_t t4p4s_governor_decide(struct t4p4s_governor *g, const unsigned *received,
			       unsigned round, uint64_t now);

/* The control thread's requests (power_stats.c); LCORE_INDEX -1: all.
 * -1 with why in ERR. */
int t4p4s_governor_request_policy(int lcore_index, enum t4p4s_governor_policy policy,
				  char *err, size_t err_len);
int t4p4s_governor_request_thresholds(int lcore_index, const struct t4p4s_power_thresholds *th);

/* After each round, ending at NOW: RECEIVED per queue, ROUND in all.
 * Returns the TSC after any idle, where the next round starts. */
static inline uint64_t
t4p4s_governor_after_round(struct t4p4s_governor *g, const unsigned *received,
			   unsigned round, uint64_t now)
{
	uint64_t spent = now - g->last_tsc;
	if (round != 0) {
		g->work_tsc += spent;
		if (round >= T4P4S_PROPORTIONAL_BATCH_FRAMES) {
			g->batch_work_tsc += spent;
			g->batch_frames += round;
		}
	} else {
		g->poll_tsc += spent;
	}
	g->last_tsc = now;
	if (g->policy == T4P4S_GOVERNOR_BUSY || t4p4s_governor_is_pmgmt(g->policy))
		return now;
	g->last_tsc = t4p4s_governor_decide(g, received, round, now);
	return g->last_tsc;
}

#endif
