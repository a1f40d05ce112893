/* The governor's mechanics (governor.h): per round, the mode's decision
 * and its idle; per check period, requests from the control thread, the
 * step-down and the proportional step; the accounting of where the lcore's
 * time went. Whose lcores they are is t4p4s_governed's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_power_pmd_mgmt.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "governor.h"
#include "power_backend.h"
#include "rx_replay.h"

/* the nap mode */
#define NAP_US 100
#define NAP_AFTER_EMPTY_ROUNDS 1024
/* a proportional nap shorter than this costs more than it saves */
#define MIN_NAP_NS 2000
/* the lcore threads' timer slack: a 20 us nanosleep ends within a
 * microsecond of its time, not within the default 50 us */
#define TIMER_SLACK_NS 1000

struct t4p4s_governed t4p4s_governed;

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

int
t4p4s_governor_option(const char *arg, enum t4p4s_governor_policy *out)
{
	if (t4p4s_governor_parse(arg, out) == 0)
		return 0;
	fprintf(stderr, "error: --governor: unknown mode '%s' (" T4P4S_GOVERNOR_MODE_NAMES ")\n",
		arg);
	return -1;
}

int
t4p4s_power_thresholds_option(const char *arg, struct t4p4s_power_thresholds *out)
{
	char err[160];
	if (t4p4s_power_thresholds_parse(out, arg, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "error: --power-thresholds: %s\n", err);
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

/* ---- the process's lcores and ports ------------------------------------- */

void
t4p4s_governed_init(enum t4p4s_governor_policy started,
		    const struct t4p4s_power_thresholds *defaults, struct rte_rcu_qsbr *rcu)
{
	memset(&t4p4s_governed, 0, sizeof(t4p4s_governed));
	t4p4s_governed.started = started;
	t4p4s_governed.defaults = *defaults;
	t4p4s_governed.rcu = rcu;
}

void
t4p4s_governed_add(struct t4p4s_governor *g, unsigned lcore_id,
		   const struct t4p4s_governor_host *host)
{
	g->index = t4p4s_governed.n_lcores;
	g->lcore_id = lcore_id;
	g->host = *host;
	g->n_rx = 0;
	g->ring_min = UINT32_MAX;
	t4p4s_governed.lcores[t4p4s_governed.n_lcores++] = g;
}

static struct t4p4s_governor_queue *
add_queue(struct t4p4s_governor *g, uint32_t size)
{
	if (g->n_rx == T4P4S_GOVERNOR_MAX_RXQ)
		return NULL;
	struct t4p4s_governor_queue *q = &g->queues[g->n_rx++];
	memset(q, 0, sizeof(*q));
	q->size = size;
	g->ring_min = RTE_MIN(g->ring_min, size);
	return q;
}

int
t4p4s_governor_add_ethdev_queue(struct t4p4s_governor *g, uint16_t port, uint16_t queue,
				uint32_t desc, bool rx_intr)
{
	/* a paced replay fills a ring of its own size, not the port's */
	uint32_t replay_ring = t4p4s_rx_replay_ring_size(port);
	struct t4p4s_governor_queue *q = add_queue(g, replay_ring != 0 ? replay_ring : desc);
	if (q == NULL)
		return -1;
	q->port = port;
	q->queue = queue;
	q->rx_intr = rx_intr;
	return 0;
}

int
t4p4s_governor_add_ring_queue(struct t4p4s_governor *g, struct rte_ring *ring)
{
	struct t4p4s_governor_queue *q = add_queue(g, rte_ring_get_capacity(ring));
	if (q == NULL)
		return -1;
	q->ring = ring;
	q->fill = T4P4S_FILL_RING;
	return 0;
}

static enum rte_power_pmd_mgmt_type
pmgmt_type(enum t4p4s_governor_policy p)
{
	return p == T4P4S_GOVERNOR_PMGMT_MONITOR ? RTE_POWER_MGMT_TYPE_MONITOR
	     : p == T4P4S_GOVERNOR_PMGMT_SCALE ? RTE_POWER_MGMT_TYPE_SCALE
	     : RTE_POWER_MGMT_TYPE_PAUSE;
}

int
t4p4s_governed_ready(void)
{
	t4p4s_power_backends_init();
	enum t4p4s_governor_policy policy = t4p4s_governed.started;
	if (!t4p4s_governor_is_pmgmt(policy))
		return 0;
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++) {
		const struct t4p4s_governor *g = t4p4s_governed.lcores[w];
		for (unsigned q = 0; q < g->n_rx; q++) {
			const struct t4p4s_governor_queue *rxq = &g->queues[q];
			if (rxq->ring != NULL) {
				fprintf(stderr, "error: --governor %s: lcore %u polls the ring %s, "
					"which DPDK's power management cannot watch (it works "
					"on ethdev rx queues only)\n", t4p4s_governor_name(policy),
					g->lcore_id, rxq->ring->name);
				return -1;
			}
			int ret = rte_power_ethdev_pmgmt_queue_enable(g->lcore_id, rxq->port,
					rxq->queue, pmgmt_type(policy));
			if (ret != 0) {
				fprintf(stderr, "error: --governor %s: DPDK's power management "
					"refuses port %u rx queue %u on lcore %u: %s (monitor needs "
					"the PMD's monitor address and WAITPKG or MONITORX; scale "
					"needs cpufreq; pause works on any PMD that reports its "
					"queue state)\n", t4p4s_governor_name(policy),
					rxq->port, rxq->queue, g->lcore_id, rte_strerror(-ret));
				return -1;
			}
		}
	}
	return 0;
}

void
t4p4s_governor_ports_stopped(void)
{
	if (!t4p4s_governor_is_pmgmt(t4p4s_governed.started))
		return;
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++) {
		const struct t4p4s_governor *g = t4p4s_governed.lcores[w];
		for (unsigned q = 0; q < g->n_rx; q++)
			if (g->queues[q].ring == NULL)
				rte_power_ethdev_pmgmt_queue_disable(g->lcore_id, g->queues[q].port,
								     g->queues[q].queue);
	}
}

/* ---- the lcore ---------------------------------------------------------- */

static void
set_pstate(struct t4p4s_governor *g, unsigned pstate, uint64_t now)
{
	if (pstate >= t4p4s_power_backends.n_pstates)
		pstate = t4p4s_power_backends.n_pstates - 1;
	if (pstate == g->pstate)
		return;
	g->pstate_tsc[g->pstate] += now - g->pstate_since_tsc;
	g->pstate_since_tsc = now;
	g->pstate = pstate;
	g->pstate_transitions++;
	t4p4s_power_set_pstate(g->lcore_id, pstate);
}

/* Every queue of the lcore signals received frames to this thread's
 * epoll (Algorithm 1 line 31), or none: then it sleeps by the clock. */
static bool
arm_rx_intr(const struct t4p4s_governor *g)
{
	if (g->n_rx == 0)
		return false;
	for (unsigned q = 0; q < g->n_rx; q++) {
		const struct t4p4s_governor_queue *rxq = &g->queues[q];
		if (rxq->ring != NULL || !rxq->rx_intr ||
		    rte_eth_dev_rx_intr_ctl_q(rxq->port, rxq->queue, RTE_EPOLL_PER_THREAD,
					      RTE_INTR_EVENT_ADD, (void *)(uintptr_t)q) != 0)
			return false;
	}
	return true;
}

static enum t4p4s_queue_fill
fill_source(const struct t4p4s_governor_queue *q)
{
	if (q->ring != NULL)
		return T4P4S_FILL_RING;
	if (t4p4s_rx_replay_ring_size(q->port) != 0)
		return T4P4S_FILL_REPLAY;
	/* read as unsigned, -ENOTSUP would look like a full ring */
	return rte_eth_rx_queue_count(q->port, q->queue) >= 0 ? T4P4S_FILL_ETHDEV
							      : T4P4S_FILL_BURST;
}

void
t4p4s_governor_start(struct t4p4s_governor *g)
{
	g->tid = rte_sys_gettid();
	if (pthread_getcpuclockid(pthread_self(), &g->cpu_clock) != 0)
		g->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
	prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0, 0, 0);
	/* the ports run now: a PMD answers whether it counts its queue */
	for (unsigned q = 0; q < g->n_rx; q++)
		g->queues[q].fill = fill_source(&g->queues[q]);
	g->rx_intr = arm_rx_intr(g);
	uint64_t now = rte_rdtsc();
	g->last_tsc = g->pstate_since_tsc = now;
	g->next_period_tsc = now + ns_to_tsc((uint64_t)g->th.stepdown_period_ms * 1000000);
	__atomic_store_n(&g->started, true, __ATOMIC_RELEASE);
}

static unsigned
queue_fill(const struct t4p4s_governor *g, unsigned q, unsigned received)
{
	const struct t4p4s_governor_queue *rxq = &g->queues[q];
	switch (rxq->fill) {
	case T4P4S_FILL_REPLAY:
		return t4p4s_rx_replay_waiting(rxq->port, rxq->queue);
	case T4P4S_FILL_ETHDEV: {
		int n = rte_eth_rx_queue_count(rxq->port, rxq->queue);
		return n >= 0 ? (unsigned)n : received;
	}
	case T4P4S_FILL_RING:
		return rte_ring_count(rxq->ring);
	default:
		return received;
	}
}

/* Off RCU while idle, so control-plane writers waiting for a grace
 * period do not wait for the lcore to wake. */
static void
rcu_offline(const struct t4p4s_governor *g)
{
	if (t4p4s_governed.rcu != NULL)
		rte_rcu_qsbr_thread_offline(t4p4s_governed.rcu, g->index);
}

static void
rcu_online(const struct t4p4s_governor *g)
{
	if (t4p4s_governed.rcu != NULL)
		rte_rcu_qsbr_thread_online(t4p4s_governed.rcu, g->index);
}

/* Where an idle that would last until UNTIL ends: there, or earlier when
 * the process has work due before (the BaaS's retransmission timers). */
static inline uint64_t
idle_end(const struct t4p4s_governor *g, uint64_t now, uint64_t until)
{
	if (g->host.wake_by == NULL)
		return until;
	uint64_t by = g->host.wake_by(g->host.lcore, now, until);
	return by < until ? by : until;
}

static uint64_t
pause_us(struct t4p4s_governor *g, uint32_t us, uint64_t now)
{
	uint64_t end = idle_end(g, now, now + ns_to_tsc((uint64_t)us * 1000));
	if (end <= now)
		return now;
	t4p4s_power_pause_until(end);
	uint64_t after = rte_rdtsc();
	g->pause_tsc += after - now;
	g->pauses++;
	return after;
}

/* Algorithm 1 lines 31-36: rx interrupts on, sleep until one fires or the
 * recheck time passes, interrupts off. Work due sooner shortens the
 * sleep; one shorter than the epoll's millisecond goes by the clock. */
static uint64_t
sleep_until_rx(struct t4p4s_governor *g, uint64_t now)
{
	uint64_t tsc_per_ms = rte_get_tsc_hz() / 1000;
	uint64_t end = idle_end(g, now, now + g->th.sleep_recheck_ms * tsc_per_ms);
	if (end <= now)
		return now;
	uint64_t ms = (end - now) / tsc_per_ms;
	rcu_offline(g);
	if (g->rx_intr && ms != 0) {
		struct rte_epoll_event events[T4P4S_GOVERNOR_MAX_RXQ];
		for (unsigned q = 0; q < g->n_rx; q++)
			rte_eth_dev_rx_intr_enable(g->queues[q].port, g->queues[q].queue);
		int n = rte_epoll_wait(RTE_EPOLL_PER_THREAD, events, (int)g->n_rx, (int)ms);
		for (unsigned q = 0; q < g->n_rx; q++)
			rte_eth_dev_rx_intr_disable(g->queues[q].port, g->queues[q].queue);
		if (n > 0)
			g->interrupt_wakeups++;
	} else {
		rte_delay_us_sleep((unsigned)((end - now) * 1000000 / rte_get_tsc_hz()));
	}
	rcu_online(g);
	uint64_t after = rte_rdtsc();
	g->sleep_tsc += after - now;
	g->sleeps++;
	return after;
}

/* A nap of up to NS, ending earlier when work is due; *ASKED_NS: how long
 * it was meant to last (0: none taken). */
static uint64_t
nap_ns(struct t4p4s_governor *g, uint64_t ns, uint64_t now, uint64_t *asked_ns)
{
	uint64_t end = idle_end(g, now, now + ns_to_tsc(ns));
	*asked_ns = end > now ? tsc_to_ns(end - now) : 0;
	if (*asked_ns == 0)
		return now;
	struct timespec ts = { .tv_sec = (time_t)(*asked_ns / 1000000000u),
			       .tv_nsec = (long)(*asked_ns % 1000000000u) };
	rcu_offline(g);
	nanosleep(&ts, NULL);
	rcu_online(g);
	uint64_t after = rte_rdtsc();
	g->sleep_tsc += after - now;
	g->naps++;
	return after;
}

static uint64_t
decide_adaptive(struct t4p4s_governor *g, const unsigned *received, uint64_t now)
{
	struct t4p4s_alg1_hints lcore_hints = { 0, T4P4S_FREQ_HINT_NONE };
	for (unsigned q = 0; q < g->n_rx; q++) {
		unsigned queued = received[q] != 0 ? queue_fill(g, q, received[q]) : 0;
		struct t4p4s_alg1_hints h = t4p4s_alg1_queue_poll(&g->th, &g->queues[q].alg1,
								  received[q], queued);
		t4p4s_alg1_combine(&lcore_hints, &h, q == 0);
	}
	set_pstate(g, t4p4s_alg1_pstate_after(g->pstate, lcore_hints.freq), now);
	switch (t4p4s_alg1_idle_action(&g->th, lcore_hints.idle_us)) {
	case T4P4S_IDLE_PAUSE:
		return pause_us(g, lcore_hints.idle_us, now);
	case T4P4S_IDLE_SLEEP:
		return sleep_until_rx(g, now);
	default:
		return now;
	}
}

static uint64_t
decide_proportional(struct t4p4s_governor *g, unsigned round, uint64_t now)
{
	/* what arrived is processed in one go: nap only once the rings are
	 * drained (a poll found them empty) */
	if (round != 0)
		return now;
	uint64_t ns = t4p4s_proportional_nap_ns(&g->th, &g->prop, g->ring_min, 0,
						g->overshoot_ns);
	if (ns < MIN_NAP_NS)
		return now;
	uint64_t asked;
	uint64_t after = nap_ns(g, ns, now, &asked);
	if (asked == 0)
		return now;
	t4p4s_proportional_napped(&g->prop);
	uint64_t slept = tsc_to_ns(after - now);
	/* a nap oversleeps by the timer's and the scheduler's delay: naps
	 * are shortened by its average (weight 1/8). One taken over by a
	 * descheduled vCPU says nothing of the timer: a sample counts at
	 * most half the budget, so naps never stop for good. */
	uint64_t over = slept > asked ? slept - asked : 0;
	over = RTE_MIN(over, (uint64_t)g->th.latency_budget_us * 500);
	g->overshoot_ns = g->overshoot_ns - g->overshoot_ns / 8 + over / 8;
	return after;
}

static uint64_t
decide_nap(struct t4p4s_governor *g, unsigned round, uint64_t now)
{
	if (round != 0) {
		g->empty_rounds = 0;
		return now;
	}
	if (++g->empty_rounds < NAP_AFTER_EMPTY_ROUNDS)
		return now;
	/* keep napping on every following empty round */
	g->empty_rounds = NAP_AFTER_EMPTY_ROUNDS;
	uint64_t asked;
	return nap_ns(g, NAP_US * 1000u, now, &asked);
}

uint64_t
t4p4s_governor_decide(struct t4p4s_governor *g, const unsigned *received, unsigned round,
		      uint64_t now)
{
	switch (g->policy) {
	case T4P4S_GOVERNOR_ADAPTIVE:
		return decide_adaptive(g, received, now);
	case T4P4S_GOVERNOR_PROPORTIONAL:
		return decide_proportional(g, round, now);
	case T4P4S_GOVERNOR_NAP:
		return decide_nap(g, round, now);
	default:
		return now;
	}
}

/* A mode or thresholds the control thread asked for; the lcore never
 * waits for the lock. */
static void
apply_request(struct t4p4s_governor *g, uint64_t now)
{
	uint64_t generation = __atomic_load_n(&g->request.generation, __ATOMIC_ACQUIRE);
	if (generation == g->applied_generation || !rte_spinlock_trylock(&g->request.lock))
		return;
	enum t4p4s_governor_policy policy = g->request.policy;
	g->th = g->request.thresholds;
	g->applied_generation = g->request.generation;
	rte_spinlock_unlock(&g->request.lock);
	if (policy == g->policy)
		return;
	g->policy = policy;
	for (unsigned q = 0; q < g->n_rx; q++)
		g->queues[q].alg1 = (struct t4p4s_alg1_queue){ 0, 0 };
	g->prop = (struct t4p4s_proportional){ 0 };
	g->empty_rounds = 0;
	/* polling at full speed is what busy means (paper 000, Fig. 4) */
	if (policy == T4P4S_GOVERNOR_BUSY)
		set_pstate(g, 0, now);
}

static void
period_end(struct t4p4s_governor *g, uint64_t now)
{
	const struct t4p4s_power_backends *b = &t4p4s_power_backends;
	uint64_t period_tsc = ns_to_tsc((uint64_t)g->th.stepdown_period_ms * 1000000);
	uint64_t elapsed_ns = tsc_to_ns(now - (g->next_period_tsc - period_tsc));
	struct t4p4s_rx_counts counts;
	g->host.rx_counts(g->host.lcore, &counts);
	uint64_t idle = g->pause_tsc + g->sleep_tsc;
	uint64_t d_packets = counts.packets - g->period_packets;
	uint64_t d_polls = counts.polls - g->period_polls;
	uint64_t d_idle_ns = tsc_to_ns(idle - g->period_idle_tsc);
	uint64_t d_work_ns = tsc_to_ns(g->work_tsc - g->period_work_tsc);
	uint64_t d_batch_work_ns = tsc_to_ns(g->batch_work_tsc - g->period_batch_work_tsc);
	uint64_t d_batch_frames = g->batch_frames - g->period_batch_frames;
	g->period_packets = counts.packets;
	g->period_polls = counts.polls;
	g->period_idle_tsc = idle;
	g->period_work_tsc = g->work_tsc;
	g->period_batch_work_tsc = g->batch_work_tsc;
	g->period_batch_frames = g->batch_frames;
	g->next_period_tsc = now + period_tsc;

	if (g->policy == T4P4S_GOVERNOR_ADAPTIVE) {
		if (t4p4s_stepdown(&g->th, elapsed_ns, d_idle_ns, d_packets, d_polls))
			set_pstate(g, g->pstate + 1, now);
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
			set_pstate(g, g->pstate - 1, now);
		else if (step > 0)
			set_pstate(g, g->pstate + 1, now);
	}
}

void
t4p4s_governor_tick(struct t4p4s_governor *g, uint64_t now)
{
	apply_request(g, now);
	if (now >= g->next_period_tsc)
		period_end(g, now);
}

/* ---- the control thread's requests --------------------------------------- */

static int
for_lcores(int lcore_index, void (*fn)(struct t4p4s_governor_request *, const void *),
	   const void *arg)
{
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++) {
		if (lcore_index >= 0 && (unsigned)lcore_index != w)
			continue;
		struct t4p4s_governor_request *r = &t4p4s_governed.lcores[w]->request;
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
	enum t4p4s_governor_policy started = t4p4s_governed.started;
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
