#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "options.h"
#include "ports.h"
#include "rx_replay.h"
#include "runtime.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define MBUF_CACHE 256
#define CLONE_MBUFS 4096

static void
count_tx_drop(struct rte_mbuf **unsent, uint16_t count, void *counter)
{
	rte_pktmbuf_free_bulk(unsent, count);
	*(uint64_t *)counter += count;
}

static int
configure_port(uint16_t port, uint16_t *nb_rxq)
{
	struct rte_eth_dev_info info;
	unsigned n_workers = t4p4s_rt.n_workers;
	int ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0) {
		fprintf(stderr, "error: port %u: cannot get device info: %s\n",
			port, rte_strerror(-ret));
		return -1;
	}
	if (info.max_tx_queues < n_workers) {
		fprintf(stderr, "error: port %u (%s) has %u tx queues but %u lcores "
			"need one each: use at most %u lcores\n", port,
			info.driver_name, info.max_tx_queues, n_workers,
			info.max_tx_queues);
		return -1;
	}
	*nb_rxq = (uint16_t)RTE_MIN(n_workers, (unsigned)info.max_rx_queues);

	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	uint64_t rss = info.flow_type_rss_offloads &
		       (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
	if (*nb_rxq > 1 && rss != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = rss;
	}
	ret = rte_eth_dev_configure(port, *nb_rxq, (uint16_t)n_workers, &conf);
	if (ret != 0) {
		fprintf(stderr, "error: port %u (%s): configure failed: %s\n",
			port, info.driver_name, rte_strerror(-ret));
		return -1;
	}
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	int socket = rte_eth_dev_socket_id(port);
	for (uint16_t q = 0; q < *nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, NULL,
					     t4p4s_rt.pool);
		if (ret != 0) {
			fprintf(stderr, "error: port %u: rx queue %u: %s\n",
				port, q, rte_strerror(-ret));
			return -1;
		}
	}
	/* a clone may be the original's mbuf sent twice (t4p4s_clone_share):
	 * fast free, which assumes one reference, must stay off */
	struct rte_eth_txconf txconf = info.default_txconf;
	txconf.offloads &= ~RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	for (uint16_t q = 0; q < n_workers; q++) {
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, &txconf);
		if (ret != 0) {
			fprintf(stderr, "error: port %u: tx queue %u: %s\n",
				port, q, rte_strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static int
create_tx_buffers(struct t4p4s_lcore *lc)
{
	for (uint16_t p = 0; p < t4p4s_rt.n_ports; p++) {
		struct rte_eth_dev_tx_buffer *b = rte_zmalloc_socket(NULL,
			RTE_ETH_TX_BUFFER_SIZE(T4P4S_MAX_BURST), RTE_CACHE_LINE_SIZE,
			(int)rte_lcore_to_socket_id(lc->lcore_id));
		if (b == NULL)
			return -1;
		rte_eth_tx_buffer_init(b, (uint16_t)t4p4s_rt.opts->burst);
		rte_eth_tx_buffer_set_err_callback(b, count_tx_drop,
						   &lc->tx_dropped[p]);
		lc->tx[p] = b;
	}
	return 0;
}

int
t4p4s_ports_init(void)
{
	uint16_t n_ports = rte_eth_dev_count_avail();
	unsigned n_workers = t4p4s_rt.n_workers;
	if (n_ports == 0) {
		fprintf(stderr, "error: no ports: give at least one --vdev "
			"(e.g. --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap)\n");
		return -1;
	}
	t4p4s_rt.n_ports = n_ports;

	unsigned n_mbufs = n_ports * n_workers * (RX_DESC + TX_DESC) +
			   n_workers * (MBUF_CACHE + T4P4S_MAX_BURST *
					(n_ports + 1u)) + CLONE_MBUFS +
			   t4p4s_rt.opts->extra_mbufs;
	t4p4s_rt.pool = rte_pktmbuf_pool_create("t4p4s_mbufs", n_mbufs,
		MBUF_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (t4p4s_rt.pool == NULL) {
		fprintf(stderr, "error: cannot create a pool of %u mbufs: %s "
			"(more memory: -m / hugepages)\n", n_mbufs,
			rte_strerror(rte_errno));
		return -1;
	}

	/* rx queues of all ports go round-robin over the lcores */
	unsigned next_worker = 0;
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port) {
		uint16_t nb_rxq;
		if (port >= n_ports) {
			/* P4 port N is DPDK port N: ids must be 0..n-1 */
			fprintf(stderr, "error: port ids are not contiguous\n");
			return -1;
		}
		if (configure_port(port, &nb_rxq) != 0)
			return -1;
		for (uint16_t q = 0; q < nb_rxq; q++) {
			struct t4p4s_lcore *lc =
				t4p4s_rt.lcores[next_worker++ % n_workers];
			if (lc->n_rx == T4P4S_MAX_RX_PER_LCORE) {
				fprintf(stderr, "error: too many rx queues per lcore\n");
				return -1;
			}
			lc->rx[lc->n_rx++] = (struct t4p4s_rx_queue){ port, q };
		}
	}
	for (unsigned i = 0; i < t4p4s_rt.opts->n_rx_replay; i++) {
		if (t4p4s_rx_replay_attach(t4p4s_rt.opts->rx_replay[i], t4p4s_rt.pool) != 0)
			return -1;
	}
	for (unsigned w = 0; w < n_workers; w++) {
		struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		lc->n_ports = n_ports;
		lc->txq = (uint16_t)w;
		lc->pool = t4p4s_rt.pool;
		if (create_tx_buffers(lc) != 0) {
			fprintf(stderr, "error: out of memory for tx buffers\n");
			return -1;
		}
	}
	RTE_ETH_FOREACH_DEV(port) {
		int ret = rte_eth_dev_start(port);
		if (ret != 0) {
			fprintf(stderr, "error: port %u: start failed: %s\n",
				port, rte_strerror(-ret));
			return -1;
		}
		/* vdevs without the notion answer -ENOTSUP: harmless */
		rte_eth_promiscuous_enable(port);
	}
	return 0;
}

void
t4p4s_ports_stop(void)
{
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
}
