/* Attachments: every ethdev port (one rx queue, polled by one lcore; one
 * tx queue per lcore), and every --ring port of a target (a primary process). The
 * BaaS's own mbuf pool, sized for its bounds, so held copies can never
 * take a target's mbufs (port mode) and retransmissions never wait for
 * the target's pool (both modes). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include <t4p4s/ring_port.h>

#include "baas.h"
#include "options.h"
#include "power_backend.h"
#include "vdevs.h"
#include "rx_replay.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define MBUF_CACHE 256
#define RETX_MBUFS 4096
#define POOL_NAME "baas_mbufs"

static void
count_tx_drop(struct rte_mbuf **unsent, uint16_t count, void *attachment)
{
	struct baas_attachment *a = attachment;
	rte_pktmbuf_free_bulk(unsent, count);
	a->tx_dropped += count;
}

static int
configure_port(uint16_t port, struct baas_attachment *a)
{
	struct rte_eth_dev_info info;
	int ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0) {
		fprintf(stderr, "error: port %u: cannot get device info: %s\n", port,
			rte_strerror(-ret));
		return -1;
	}
	if (info.max_tx_queues < baas.n_lcores) {
		fprintf(stderr, "error: port %u (%s) has %u tx queues but %u lcores need one "
			"each\n", port, info.driver_name, info.max_tx_queues, baas.n_lcores);
		return -1;
	}
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	a->rx_intr = baas.opts->governor != T4P4S_GOVERNOR_BUSY &&
		     t4p4s_power_port_has_rx_intr(info.driver_name);
	conf.intr_conf.rxq = a->rx_intr;
	ret = rte_eth_dev_configure(port, 1, (uint16_t)baas.n_lcores, &conf);
	if (ret != 0) {
		fprintf(stderr, "error: port %u (%s): configure failed: %s\n", port,
			info.driver_name, rte_strerror(-ret));
		return -1;
	}
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	a->rx_desc = nb_rxd;
	int socket = rte_eth_dev_socket_id(port);
	ret = rte_eth_rx_queue_setup(port, 0, nb_rxd, socket, NULL, baas.pool);
	for (uint16_t q = 0; ret == 0 && q < baas.n_lcores; q++)
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, NULL);
	if (ret != 0) {
		fprintf(stderr, "error: port %u: queue setup: %s\n", port, rte_strerror(-ret));
		return -1;
	}
	return 0;
}

static struct baas_attachment *
new_attachment(unsigned *next_lcore)
{
	struct baas_lcore *lc = baas.lcores[(*next_lcore)++ % baas.n_lcores];
	if (lc->n_attach == BAAS_MAX_ATTACH_PER_LCORE) {
		fprintf(stderr, "error: more than %d attachments per lcore\n",
			BAAS_MAX_ATTACH_PER_LCORE);
		return NULL;
	}
	struct baas_attachment *a = &lc->attach[lc->n_attach++];
	memset(a, 0, sizeof(*a));
	a->port = UINT16_MAX;
	return a;
}

static int
attach_port(uint16_t port, unsigned *next_lcore)
{
	unsigned lcore_index = *next_lcore % baas.n_lcores;
	struct baas_attachment *a = new_attachment(next_lcore);
	if (a == NULL || configure_port(port, a) != 0)
		return -1;
	struct baas_lcore *lc = baas.lcores[lcore_index];
	a->port = port;
	a->tx = rte_zmalloc_socket(NULL, RTE_ETH_TX_BUFFER_SIZE(BAAS_MAX_BURST),
				   RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(lc->lcore_id));
	if (a->tx == NULL)
		return -1;
	rte_eth_tx_buffer_init(a->tx, (uint16_t)baas.opts->burst);
	rte_eth_tx_buffer_set_err_callback(a->tx, count_tx_drop, a);
	return 0;
}

/* The target's lcore ids, which the BaaS must not use: both processes
 * free the target's mbufs, each through the pool's cache of its lcore id,
 * and those caches are the pool's, in shared memory. */
static int
check_lcores(const char *name, const struct t4p4s_ring_port_info *info)
{
	unsigned lcore;
	RTE_LCORE_FOREACH(lcore) {
		if (info->target_lcores[lcore / 64] & (1ull << (lcore % 64))) {
			fprintf(stderr, "error: --ring %s: lcore %u is the target's too (a mempool "
				"cache per lcore id, shared by both processes): give -l lcores "
				"the target does not use\n", name, lcore);
			return -1;
		}
	}
	return 0;
}

/* One BaaS per ring port: a live one refuses a second; a dead one's held
 * mbufs are lost to the target's pool (nothing can tell which), so they
 * count as leaked and the hold shrinks by them. */
static int
claim(const char *name, struct t4p4s_ring_port_info *info)
{
	pid_t before = __atomic_load_n(&info->peer_pid, __ATOMIC_ACQUIRE);
	if (before != 0 && (kill(before, 0) == 0 || errno != ESRCH)) {
		fprintf(stderr, "error: --ring %s: process %d is attached to it already\n",
			name, (int)before);
		return -1;
	}
	if (before != 0) {
		uint64_t lost = __atomic_load_n(&info->peer_held, __ATOMIC_RELAXED);
		__atomic_fetch_add(&info->leaked, lost, __ATOMIC_RELAXED);
		fprintf(stderr, "baas: --ring %s: the BaaS before (pid %d) died holding %llu of "
			"the target's mbufs: they stay lost until the target restarts\n", name,
			(int)before, (unsigned long long)lost);
	}
	__atomic_store_n(&info->peer_held, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&info->peer_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	return 0;
}

static int
attach_ring(const char *name, unsigned *next_lcore)
{
	char zone_name[RTE_MEMZONE_NAMESIZE];
	t4p4s_ring_port_zone_name(zone_name, name);
	const struct rte_memzone *mz = rte_memzone_lookup(zone_name);
	struct t4p4s_ring_port_info *info = mz != NULL ? mz->addr : NULL;
	if (info == NULL ||
	    __atomic_load_n(&info->magic, __ATOMIC_ACQUIRE) != T4P4S_RING_PORT_MAGIC) {
		fprintf(stderr, "error: --ring %s: no ring port of that name (is the target "
			"running with --ring-port %s, and this process with --proc-type=secondary "
			"and the target's --file-prefix?)\n", name, name);
		return -1;
	}
	struct rte_ring *in = rte_ring_lookup(info->to_peer);
	struct rte_ring *out = rte_ring_lookup(info->from_peer);
	if (in == NULL || out == NULL) {
		fprintf(stderr, "error: --ring %s: its ring %s is gone\n", name,
			in == NULL ? info->to_peer : info->from_peer);
		return -1;
	}
	if (check_lcores(name, info) != 0 || claim(name, info) != 0)
		return -1;
	unsigned lcore_index = *next_lcore % baas.n_lcores;
	struct baas_attachment *a = new_attachment(next_lcore);
	if (a == NULL)
		return -1;
	a->ring_in = in;
	a->ring_out = out;
	a->ring_info = info;
	struct baas_lcore *lc = baas.lcores[lcore_index];
	uint64_t leaked = __atomic_load_n(&info->leaked, __ATOMIC_RELAXED);
	uint64_t hold = info->hold > leaked ? info->hold - leaked : 0;
	lc->ring_hold = RTE_MIN(lc->ring_hold, hold);
	lc->drbs.max_held = RTE_MIN(lc->drbs.max_held, lc->ring_hold);
	printf("baas: attached to ring port %s (the target's port %u): holds at most %llu of "
	       "its mbufs\n", name, info->port, (unsigned long long)lc->ring_hold);
	return 0;
}

void
baas_ports_publish_held(const struct baas_lcore *lc)
{
	for (unsigned i = 0; i < lc->n_attach; i++)
		if (lc->attach[i].ring_info != NULL)
			__atomic_store_n(&lc->attach[i].ring_info->peer_held, lc->drbs.held,
					 __ATOMIC_RELAXED);
}

/* A restarted secondary finds the pool its predecessor made in the
 * primary's memory (named objects outlive a secondary): it reuses it. */
static struct rte_mempool *
create_pool(unsigned n_ports)
{
	const struct baas_options *o = baas.opts;
	uint64_t n = o->defaults.max_pdus + RETX_MBUFS +
		     (uint64_t)n_ports * (RX_DESC + TX_DESC) +
		     (uint64_t)baas.n_lcores * (MBUF_CACHE + 2 * BAAS_MAX_BURST);
	struct rte_mempool *mp = rte_mempool_lookup(POOL_NAME);
	if (mp != NULL && rte_eal_process_type() == RTE_PROC_SECONDARY) {
		fprintf(stderr, "baas: reusing the pool %s of an earlier run (%u mbufs)\n",
			POOL_NAME, mp->size);
		return mp;
	}
	mp = rte_pktmbuf_pool_create(POOL_NAME, (unsigned)n, MBUF_CACHE, 0,
				     (uint16_t)(o->mbuf_data_room + RTE_PKTMBUF_HEADROOM),
				     (int)rte_socket_id());
	if (mp == NULL)
		fprintf(stderr, "error: cannot create a pool of %llu mbufs: %s (more memory: "
			"-m / hugepages, or a lower --max-pdus)\n", (unsigned long long)n,
			rte_strerror(rte_errno));
	return mp;
}

int
baas_ports_init(void)
{
	/* a secondary process sees its primary's ports: they are not its own */
	bool secondary = rte_eal_process_type() == RTE_PROC_SECONDARY;
	uint16_t n_ports = secondary ? 0 : rte_eth_dev_count_avail();
	if (t4p4s_vdevs_check_probed() != 0)
		return -1;
	if (n_ports == 0 && baas.opts->n_rings == 0) {
		fprintf(stderr, "error: nothing to attach to: give a --vdev (a port) or "
			"--ring NAME\n");
		return -1;
	}
	/* the rings first: what refuses an attachment is checked before
	 * anything is made in the target's memory */
	unsigned next_lcore = 0;
	for (unsigned i = 0; i < baas.opts->n_rings; i++)
		if (attach_ring(baas.opts->rings[i], &next_lcore) != 0)
			return -1;
	baas.pool = create_pool(n_ports);
	if (baas.pool == NULL)
		return -1;
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port) {
		if (!secondary && attach_port(port, &next_lcore) != 0)
			return -1;
	}
	/* the target runtime's benchmark source (t4p4s/runtime/src/rx_replay.c),
	 * on ports configured (rx queue set up) but not yet started */
	for (unsigned i = 0; i < baas.opts->n_rx_replay; i++) {
		if (secondary) {
			fprintf(stderr, "error: --rx-replay: a secondary process has no ports of "
				"its own\n");
			return -1;
		}
		if (t4p4s_rx_replay_attach(baas.opts->rx_replay[i], baas.pool, false) != 0)
			return -1;
	}
	for (unsigned w = 0; w < baas.n_lcores; w++)
		baas.lcores[w]->txq = (uint16_t)w;
	/* DPDK's pmgmt (--governor pmgmt-*) takes stopped rx queues only */
	if (baas_power_ready() != 0)
		return -1;
	RTE_ETH_FOREACH_DEV(port) {
		if (secondary)
			break;
		int ret = rte_eth_dev_start(port);
		if (ret != 0) {
			fprintf(stderr, "error: port %u: start failed: %s\n", port,
				rte_strerror(-ret));
			return -1;
		}
		rte_eth_promiscuous_enable(port);
	}
	return 0;
}

/* After every DRB was flushed: the ring ports' mbufs are all back. */
void
baas_ports_stop(void)
{
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		const struct baas_lcore *lc = baas.lcores[w];
		for (unsigned i = 0; lc != NULL && i < lc->n_attach; i++) {
			struct t4p4s_ring_port_info *info = lc->attach[i].ring_info;
			if (info != NULL) {
				__atomic_store_n(&info->peer_held, 0, __ATOMIC_RELAXED);
				__atomic_store_n(&info->peer_pid, 0, __ATOMIC_RELEASE);
			}
		}
	}
	if (rte_eal_process_type() == RTE_PROC_SECONDARY)
		return;
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port)
		rte_eth_dev_stop(port);
	/* DPDK's pmgmt lets go of stopped queues only */
	t4p4s_governor_ports_stopped();
	RTE_ETH_FOREACH_DEV(port)
		rte_eth_dev_close(port);
}
