/* The governor's mechanics (governor.h): per round, the mode's decision
 * and its idle; per check period, requests from the control thread, the
 * step-down and the proportional step; the accounting of where the lcore's
 * time went. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_malloc.h>
#include <rte_power_pmd_mgmt.h>

#include "governor.h"
#include "options.h"
#include "power_backend.h"
#include "rx_replay.h"
#include "runtime.h"

/* the nap mode */
#define NAP_US 100
#define NAP_AFTER_EMPTY_ROUNDS 1024
/* a proportional nap shorter than this costs more than it saves */
#define MIN_NAP_NS 2000
/* the lcore threads' timer slack: a 20 us nanosleep ends within a
 * microsecond of its time, not within the default 50 us */
#define TIMER_SLACK_NS 1000

static const char *const policy_names[T4P4S_GOVERNOR_POLICIES] = {
	[T4P4S_GOVERNOR_BUSY] = "busy",
	[T4P4S_GOVERNOR_NAP] = "nap",
	[T4P4S_GOVERNOR_ADAPTIVE] = "adaptive",
	[T4P4S_GOVERNOR_PROPORTIONAL] = "proportional",
	[T4P4S_GOVERNOR_PMGMT_PAUSE] = "pmgmt-pause",
	[T4P4S_GOVERNOR_PMGMT_MONITOR] = "pmgmt-monitor",
	[T4P4S_GOVERNOR_PMGMT_SCALE] = "pmgmt-scale",
};

int
t4p4s_governor_parse(const char *name, enum t4p4s_governor_policy *out)
{
	for (int p = 0; p < T4P4S_GOVERNOR_POLICIES; p++) {
		if (strcmp(name, policy_names[p]) == 0) {
			*out = (enum t4p4s_governor_policy)p;
			return 0;
		}
	}
	return -1;
}

const char *
t4p4s_governor_name(enum t4p4s_governor_policy policy)
{
	return policy < T4P4S_GOVERNOR_POLICIES ? policy_names[policy] : "?";
}

void
t4p4s_governor_init(struct t4p4s_governor *g, enum t4p4s_governor_policy policy,
		    const struct t4p4s_power_thresholds *th)
{
	memset(g, 0, sizeof(*g));
	g->policy = policy;
	g->th = *th;
	rte_spinlock_init(&g->request.lock);
	g->request.policy = policy;
	g->request.thresholds = *th;
}

static inline uint64_t
ns_to_tsc(uint64_t ns)
{
	return ns * rte_get_tsc_hz() / 1000000000u;
}

static inline uint64_t
tsc_to_ns(uint64_t tsc)
{
	return tsc * 1000000000u / rte_get_tsc_hz();
}

/* ---- the ports ---------------------------------------------------------- */

static enum rte_power_pmd_mgmt_type
pmgmt_type(enum t4p4s_governor_policy p)
{
	return p == T4P4S_GOVERNOR_PMGMT_MONITOR ? RTE_POWER_MGMT_TYPE_MONITOR
	     : p == T4P4S_GOVERNOR_PMGMT_SCALE ? RTE_POWER_MGMT_TYPE_SCALE
	     : RTE_POWER_MGMT_TYPE_PAUSE;
}

int
t4p4s_governor_ports_ready(void)
{
	t4p4s_power_backends_init();
	enum t4p4s_governor_policy policy = t4p4s_rt.opts->governor;
	if (!t4p4s_governor_is_pmgmt(policy))
		return 0;
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		const struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		for (unsigned q = 0; q < lc->n_rx; q++) {
			int ret = rte_power_ethdev_pmgmt_queue_enable(lc->lcore_id, lc->rx[q].port,
					lc->rx[q].queue, pmgmt_type(policy));
			if (ret != 0) {
				fprintf(stderr, "error: --governor %s: DPDK's power management "
					"refuses port %u rx queue %u on lcore %u: %s (monitor needs "
					"the PMD's monitor address and WAITPKG or MONITORX; scale "
					"needs cpufreq; pause works on any PMD that reports its "
					"queue state)\n", t4p4s_governor_name(policy),
					lc->rx[q].port, lc->rx[q].queue, lc->lcore_id,
					rte_strerror(-ret));
				return -1;
			}
		}
	}
	return 0;
}

void
t4p4s_governor_ports_stopped(void)
{
	if (t4p4s_rt.opts == NULL || !t4p4s_governor_is_pmgmt(t4p4s_rt.opts->governor))
		return;
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		const struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		for (unsigned q = 0; q < lc->n_rx; q++)
			rte_power_ethdev_pmgmt_queue_disable(lc->lcore_id, lc->rx[q].port,
							     lc->rx[q].queue);
	}
}

/* ---- the lcore ---------------------------------------------------------- */

static void
set_pstate(struct t4p4s_lcore *lc, unsigned pstate, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	if (pstate >= t4p4s_power_backends.n_pstates)
		pstate = t4p4s_power_backends.n_pstates - 1;
	if (pstate == g->pstate)
		return;
	g->pstate_tsc[g->pstate] += now - g->pstate_since_tsc;
	g->pstate_since_tsc = now;
	g->pstate = pstate;
	g->pstate_transitions++;
	t4p4s_power_set_pstate(lc->lcore_id, pstate);
}

/* Every queue of the lcore signals received frames to this thread's
 * epoll (Algorithm 1 line 31), or none: then it sleeps by the clock. */
static bool
arm_rx_intr(const struct t4p4s_lcore *lc)
{
	if (lc->n_rx == 0)
		return false;
	for (unsigned q = 0; q < lc->n_rx; q++) {
		if (!t4p4s_rt.rx_intr[lc->rx[q].port] ||
		    rte_eth_dev_rx_intr_ctl_q(lc->rx[q].port, lc->rx[q].queue,
					      RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD,
					      (void *)(uintptr_t)q) != 0)
			return false;
	}
	return true;
}

static enum t4p4s_queue_fill
fill_source(const struct t4p4s_rx_queue *q)
{
	if (t4p4s_rx_replay_ring_size(q->port) != 0)
		return T4P4S_FILL_REPLAY;
	/* read as unsigned, -ENOTSUP would look like a full ring */
	return rte_eth_rx_queue_count(q->port, q->queue) >= 0 ? T4P4S_FILL_ETHDEV
							      : T4P4S_FILL_BURST;
}

void
t4p4s_governor_start(struct t4p4s_lcore *lc)
{
	struct t4p4s_governor *g = &lc->governor;
	g->tid = rte_sys_gettid();
	if (pthread_getcpuclockid(pthread_self(), &g->cpu_clock) != 0)
		g->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);
	g->queues = rte_zmalloc_socket("governor", (lc->n_rx + 1) * sizeof(*g->queues),
				       RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	g->ring_min = UINT32_MAX;
	for (unsigned q = 0; q < lc->n_rx; q++) {
		const struct t4p4s_rx_queue *rxq = &lc->rx[q];
		uint32_t ring = t4p4s_rx_replay_ring_size(rxq->port);
		if (g->queues != NULL)
			g->queues[q].fill = fill_source(rxq);
		g->ring_min = RTE_MIN(g->ring_min, ring != 0 ? ring : t4p4s_rt.rx_desc[rxq->port]);
	}
	if (g->queues == NULL) {
		/* no Algorithm 1 state: the lcore polls as busy */
		fprintf(stderr, "warning: lcore %u: out of memory for the governor: busy\n",
			lc->lcore_id);
		g->policy = g->request.policy = T4P4S_GOVERNOR_BUSY;
	}
	g->rx_intr = arm_rx_intr(lc);
	uint64_t now = rte_rdtsc();
	g->last_tsc = g->pstate_since_tsc = now;
	g->next_period_tsc = now + ns_to_tsc((uint64_t)g->th.stepdown_period_ms * 1000000);
	__atomic_store_n(&g->started, true, __ATOMIC_RELEASE);
}

static unsigned
queue_fill(const struct t4p4s_lcore *lc, unsigned q, unsigned received)
{
	const struct t4p4s_rx_queue *rxq = &lc->rx[q];
	switch (lc->governor.queues[q].fill) {
	case T4P4S_FILL_REPLAY:
		return t4p4s_rx_replay_waiting(rxq->port, rxq->queue);
	case T4P4S_FILL_ETHDEV: {
		int n = rte_eth_rx_queue_count(rxq->port, rxq->queue);
		return n >= 0 ? (unsigned)n : received;
	}
	default:
		return received;
	}
}

/* Off RCU while idle, so control-plane writers waiting for a grace
 * period do not wait for the lcore to wake. */
static void
rcu_offline(const struct t4p4s_lcore *lc)
{
	rte_rcu_qsbr_thread_offline(t4p4s_rt.rcu, lc->index);
}

static void
rcu_online(const struct t4p4s_lcore *lc)
{
	rte_rcu_qsbr_thread_online(t4p4s_rt.rcu, lc->index);
}

static uint64_t
pause_us(struct t4p4s_governor *g, uint32_t us, uint64_t now)
{
	t4p4s_power_pause_until(now + ns_to_tsc((uint64_t)us * 1000));
	uint64_t after = rte_rdtsc();
	g->pause_tsc += after - now;
	g->pauses++;
	return after;
}

/* Algorithm 1 lines 31-36: rx interrupts on, sleep until one fires or the
 * recheck time passes, interrupts off. */
static uint64_t
sleep_until_rx(struct t4p4s_lcore *lc, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	rcu_offline(lc);
	if (g->rx_intr) {
		struct rte_epoll_event events[T4P4S_MAX_RX_PER_LCORE];
		for (unsigned q = 0; q < lc->n_rx; q++)
			rte_eth_dev_rx_intr_enable(lc->rx[q].port, lc->rx[q].queue);
		int n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, events, (int)lc->n_rx,
				       (int)g->th.sleep_recheck_ms);
		for (unsigned q = 0; q < lc->n_rx; q++)
			rte_eth_dev_rx_intr_disable(lc->rx[q].port, lc->rx[q].queue);
		if (n > 0)
			g->interrupt_wakeups++;
	} else {
		rte_delay_us_sleep(g->th.sleep_recheck_ms * 1000u);
	}
	rcu_online(lc);
	uint64_t after = rte_rdtsc();
	g->sleep_tsc += after - now;
	g->sleeps++;
	return after;
}

static uint64_t
nap_ns(struct t4p4s_lcore *lc, uint64_t ns, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };
	rcu_offline(lc);
	nanosleep(&ts, NULL);
	rcu_online(lc);
	uint64_t after = rte_rdtsc();
	g->sleep_tsc += after - now;
	g->naps++;
	return after;
}

static uint64_t
decide_adaptive(struct t4p4s_lcore *lc, const unsigned *received, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	struct t4p4s_alg1_hints lcore_hints = { 0, T4P4S_FREQ_HINT_NONE };
	for (unsigned q = 0; q < lc->n_rx; q++) {
		unsigned queued = received[q] != 0 ? queue_fill(lc, q, received[q]) : 0;
		struct t4p4s_alg1_hints h = t4p4s_alg1_queue_poll(&g->th, &g->queues[q].alg1,
								  received[q], queued);
		t4p4s_alg1_combine(&lcore_hints, &h, q == 0);
	}
	set_pstate(lc, t4p4s_alg1_pstate_after(g->pstate, lcore_hints.freq), now);
	switch (t4p4s_alg1_idle_action(&g->th, lcore_hints.idle_us)) {
	case T4P4S_IDLE_PAUSE:
		return pause_us(g, lcore_hints.idle_us, now);
	case T4P4S_IDLE_SLEEP:
		return sleep_until_rx(lc, now);
	default:
		return now;
	}
}

static uint64_t
decide_proportional(struct t4p4s_lcore *lc, unsigned round, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	/* what arrived is processed in one go: nap only once the rings are
	 * drained (a poll found them empty) */
	if (round != 0)
		return now;
	uint64_t ns = t4p4s_proportional_nap_ns(&g->th, &g->prop, g->ring_min, 0,
						g->overshoot_ns);
	if (ns < MIN_NAP_NS)
		return now;
	uint64_t after = nap_ns(lc, ns, now);
	t4p4s_proportional_napped(&g->prop);
	uint64_t slept = tsc_to_ns(after - now);
	/* a nap oversleeps by the timer's and the scheduler's delay: naps
	 * are shortened by its average (weight 1/8). One taken over by a
	 * descheduled vCPU says nothing of the timer: a sample counts at
	 * most half the budget, so naps never stop for good. */
	uint64_t over = slept > ns ? slept - ns : 0;
	over = RTE_MIN(over, (uint64_t)g->th.latency_budget_us * 500);
	g->overshoot_ns = g->overshoot_ns - g->overshoot_ns / 8 + over / 8;
	return after;
}

static uint64_t
decide_nap(struct t4p4s_lcore *lc, unsigned round, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	if (round != 0) {
		g->empty_rounds = 0;
		return now;
	}
	if (++g->empty_rounds < NAP_AFTER_EMPTY_ROUNDS)
		return now;
	/* keep napping on every following empty round */
	g->empty_rounds = NAP_AFTER_EMPTY_ROUNDS;
	return nap_ns(lc, NAP_US * 1000u, now);
}

uint64_t
t4p4s_governor_decide(struct t4p4s_lcore *lc, const unsigned *received, unsigned round,
		      uint64_t now)
{
	switch (lc->governor.policy) {
	case T4P4S_GOVERNOR_ADAPTIVE:
		return decide_adaptive(lc, received, now);
	case T4P4S_GOVERNOR_PROPORTIONAL:
		return decide_proportional(lc, round, now);
	case T4P4S_GOVERNOR_NAP:
		return decide_nap(lc, round, now);
	default:
		return now;
	}
}

/* A mode or thresholds the control thread asked for; the lcore never
 * waits for the lock. */
static void
apply_request(struct t4p4s_lcore *lc, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	uint64_t generation = __atomic_load_n(&g->request.generation, __ATOMIC_ACQUIRE);
	if (generation == g->applied_generation || !rte_spinlock_trylock(&g->request.lock))
		return;
	enum t4p4s_governor_policy policy = g->request.policy;
	g->th = g->request.thresholds;
	g->applied_generation = g->request.generation;
	rte_spinlock_unlock(&g->request.lock);
	/* without per-queue state (out of memory at start) the lcore stays busy */
	if (policy == g->policy || g->queues == NULL)
		return;
	g->policy = policy;
	for (unsigned q = 0; q < lc->n_rx; q++)
		g->queues[q].alg1 = (struct t4p4s_alg1_queue){ 0, 0 };
	g->prop = (struct t4p4s_proportional){ 0 };
	g->empty_rounds = 0;
	/* polling at full speed is what busy means (paper 000, Fig. 4) */
	if (policy == T4P4S_GOVERNOR_BUSY)
		set_pstate(lc, 0, now);
}

static void
period_end(struct t4p4s_lcore *lc, uint64_t now)
{
	struct t4p4s_governor *g = &lc->governor;
	const struct t4p4s_power_backends *b = &t4p4s_power_backends;
	uint64_t period_tsc = ns_to_tsc((uint64_t)g->th.stepdown_period_ms * 1000000);
	uint64_t elapsed_ns = tsc_to_ns(now - (g->next_period_tsc - period_tsc));
	uint64_t packets = 0, polls = 0;
	for (unsigned q = 0; q < lc->n_rx; q++) {
		packets += lc->qstats[q].packets;
		polls += lc->qstats[q].polls;
	}
	uint64_t idle = g->pause_tsc + g->sleep_tsc;
	uint64_t d_packets = packets - g->period_packets, d_polls = polls - g->period_polls;
	uint64_t d_idle_ns = tsc_to_ns(idle - g->period_idle_tsc);
	uint64_t d_work_ns = tsc_to_ns(g->work_tsc - g->period_work_tsc);
	uint64_t d_batch_work_ns = tsc_to_ns(g->batch_work_tsc - g->period_batch_work_tsc);
	uint64_t d_batch_frames = g->batch_frames - g->period_batch_frames;
	g->period_packets = packets;
	g->period_polls = polls;
	g->period_idle_tsc = idle;
	g->period_work_tsc = g->work_tsc;
	g->period_batch_work_tsc = g->batch_work_tsc;
	g->period_batch_frames = g->batch_frames;
	g->next_period_tsc = now + period_tsc;

	if (g->policy == T4P4S_GOVERNOR_ADAPTIVE) {
		if (t4p4s_stepdown(&g->th, elapsed_ns, d_idle_ns, d_packets, d_polls))
			set_pstate(lc, g->pstate + 1, now);
	} else if (g->policy == T4P4S_GOVERNOR_PROPORTIONAL) {
		t4p4s_proportional_observe(&g->prop, d_packets, elapsed_ns);
		uint32_t mhz = b->pstate_mhz[g->pstate];
		/* a simulated P-state does not slow the CPU: the work is what
		 * it would take at the modelled frequency */
		if (!b->frequency_real) {
			d_work_ns = d_work_ns * b->pstate_mhz[0] / mhz;
			d_batch_work_ns = d_batch_work_ns * b->pstate_mhz[0] / mhz;
		}
		struct t4p4s_proportional_period s = {
			.period_ns = elapsed_ns,
			.work_ns = d_work_ns,
			.batch_work_ns = d_batch_work_ns,
			.batch_frames = d_batch_frames,
			.freq_now = mhz,
			.freq_lower = g->pstate + 1 < b->n_pstates ? b->pstate_mhz[g->pstate + 1] : 0,
		};
		int step = t4p4s_proportional_step(&g->th, &g->prop, &s);
		if (step < 0 && g->pstate > 0)
			set_pstate(lc, g->pstate - 1, now);
		else if (step > 0)
			set_pstate(lc, g->pstate + 1, now);
	}
}

void
t4p4s_governor_tick(struct t4p4s_lcore *lc, uint64_t now)
{
	apply_request(lc, now);
	if (now >= lc->governor.next_period_tsc)
		period_end(lc, now);
}

/* ---- the control thread's requests --------------------------------------- */

static int
for_lcores(int lcore_index, void (*fn)(struct t4p4s_governor_request *, const void *),
	   const void *arg)
{
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		if (lcore_index >= 0 && (unsigned)lcore_index != w)
			continue;
		struct t4p4s_governor_request *r = &t4p4s_rt.lcores[w]->governor.request;
		rte_spinlock_lock(&r->lock);
		fn(r, arg);
		__atomic_store_n(&r->generation, r->generation + 1, __ATOMIC_RELEASE);
		rte_spinlock_unlock(&r->lock);
	}
	return 0;
}

static void
set_policy(struct t4p4s_governor_request *r, const void *arg)
{
	r->policy = *(const enum t4p4s_governor_policy *)arg;
}

static void
set_thresholds(struct t4p4s_governor_request *r, const void *arg)
{
	r->thresholds = *(const struct t4p4s_power_thresholds *)arg;
}

int
t4p4s_governor_request_policy(int lcore_index, enum t4p4s_governor_policy policy,
			      char *err, size_t err_len)
{
	enum t4p4s_governor_policy started = t4p4s_rt.opts->governor;
	if (t4p4s_governor_is_pmgmt(policy) || t4p4s_governor_is_pmgmt(started)) {
		snprintf(err, err_len, "the pmgmt modes are chosen at start (--governor): "
			 "DPDK enables and disables them on stopped rx queues only, "
			 "which these ports cannot be while they run");
		return -1;
	}
	return for_lcores(lcore_index, set_policy, &policy);
}

int
t4p4s_governor_request_thresholds(int lcore_index, const struct t4p4s_power_thresholds *th)
{
	return for_lcores(lcore_index, set_thresholds, th);
}
