#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "latency.h"
#include "options.h"
#include "ports.h"
#include "power_backend.h"
#include "ring_port.h"
#include "rx_replay.h"
#include "runtime.h"
#include "test_ports.h"
#include "vdevs.h"

#define RX_DESC 1024
#define TX_DESC 1024
#define MBUF_CACHE 256
#define CLONE_MBUFS 4096

/* net_af_packet copies every frame through one slot of its kernel ring
 * (framesz bytes, default 2048, less the tpacket2 header). On tx it frees
 * a longer frame itself but reports it unsent, so its caller would free
 * it again: such frames must never reach it. On rx the kernel cuts a
 * longer frame to the slot and the PMD gives no sign of it, and the PMD
 * copies the slot into a single mbuf: an interface whose MTU admits
 * longer frames, or a slot larger than an mbuf, is refused at start. */
#define AF_PACKET_DEFAULT_FRAMESZ 2048
#define AF_PACKET_TX_HEADER (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))
/* the kernel puts the MAC header where the network header is aligned */
#define AF_PACKET_RX_HEADER (TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - RTE_ETHER_HDR_LEN)

static int
interface_mtu(const char *iface)
{
	struct ifreq req;
	memset(&req, 0, sizeof(req));
	snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", iface);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	int ret = ioctl(fd, SIOCGIFMTU, &req);
	close(fd);
	return ret == 0 ? req.ifr_mtu : -1;
}

static int
af_packet_max_frame(uint16_t port, const struct rte_eth_dev_info *info, uint32_t *max_frame)
{
	const struct rte_devargs *devargs = rte_dev_devargs(info->device);
	struct rte_kvargs *kv = devargs != NULL && devargs->args != NULL
		? rte_kvargs_parse(devargs->args, NULL) : NULL;
	const char *framesz_arg = kv != NULL ? rte_kvargs_get(kv, "framesz") : NULL;
	const char *iface_arg = kv != NULL ? rte_kvargs_get(kv, "iface") : NULL;
	char iface[IF_NAMESIZE] = "";
	if (iface_arg != NULL)
		snprintf(iface, sizeof(iface), "%s", iface_arg);
	unsigned long framesz = framesz_arg != NULL
		? strtoul(framesz_arg, NULL, 0) : AF_PACKET_DEFAULT_FRAMESZ;
	rte_kvargs_free(kv);

	uint32_t tx_slot = (uint32_t)(framesz - AF_PACKET_TX_HEADER);
	uint32_t rx_slot = (uint32_t)(framesz - AF_PACKET_RX_HEADER);
	uint32_t mbuf_room = rte_pktmbuf_data_room_size(t4p4s_rt.pool) - RTE_PKTMBUF_HEADROOM;
	if (rx_slot > mbuf_room) {
		fprintf(stderr, "error: port %u (net_af_packet, framesz=%lu): frames of up "
			"to %u bytes would not fit one %u-byte mbuf, which is where the "
			"driver copies each one: give framesz=%u or less\n", port,
			framesz, rx_slot, mbuf_room,
			(unsigned)(mbuf_room + AF_PACKET_RX_HEADER));
		return -1;
	}
	int mtu = iface[0] != '\0' ? interface_mtu(iface) : -1;
	if (mtu > 0 && (uint32_t)mtu + RTE_ETHER_HDR_LEN > rx_slot) {
		fprintf(stderr, "error: port %u (net_af_packet on %s): MTU %d admits "
			"%d-byte frames, which the kernel would silently cut to the "
			"driver's %u-byte slots (framesz=%lu): lower the MTU to %u\n",
			port, iface, mtu, mtu + RTE_ETHER_HDR_LEN, rx_slot, framesz,
			rx_slot - RTE_ETHER_HDR_LEN);
		return -1;
	}
	*max_frame = tx_slot;
	return 0;
}

/* The longest frame `port` can send; every other driver here takes
 * multi-segment mbufs of any length the runtime makes. */
static int
port_max_frame(uint16_t port, const struct rte_eth_dev_info *info, uint32_t *max_frame)
{
	*max_frame = UINT32_MAX;
	if (strcmp(info->driver_name, "net_af_packet") == 0)
		return af_packet_max_frame(port, info, max_frame);
	return 0;
}

static void
count_tx_drop(struct rte_mbuf **unsent, uint16_t count, void *counter)
{
	rte_pktmbuf_free_bulk(unsent, count);
	*(uint64_t *)counter += count;
}

static int
configure_port(uint16_t port, uint16_t *nb_rxq, uint32_t *max_frame)
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
	if (port_max_frame(port, &info, max_frame) != 0)
		return -1;

	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	/* a governor that sleeps waits for these (power_backend.h) */
	t4p4s_rt.rx_intr[port] = t4p4s_rt.opts->governor != T4P4S_GOVERNOR_BUSY &&
				 t4p4s_power_port_has_rx_intr(info.driver_name);
	conf.intr_conf.rxq = t4p4s_rt.rx_intr[port];
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
	t4p4s_rt.rx_desc[port] = nb_rxd;
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

/* net_af_packet (DPDK 22.11) opens its socket for every interface
 * (ETH_P_ALL) and sets up its rx ring before bind() narrows the socket to
 * its own: frames of other interfaces (loopback gRPC, other veths) that
 * arrive in between sit in the ring and would reach the pipeline as this
 * port's first frames. Nothing is anybody's traffic before the port
 * starts, so what is queued then is discarded, and said. */
static void
discard_frames_of_other_interfaces(uint16_t port)
{
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(port, &info) != 0 ||
	    strcmp(info.driver_name, "net_af_packet") != 0)
		return;
	unsigned discarded = 0;
	struct rte_mbuf *burst[32];
	for (uint16_t q = 0; q < info.nb_rx_queues; q++) {
		uint16_t n;
		while ((n = rte_eth_rx_burst(port, q, burst, RTE_DIM(burst))) > 0) {
			rte_pktmbuf_free_bulk(burst, n);
			discarded += n;
		}
	}
	if (discarded > 0)
		fprintf(stderr, "port %u (net_af_packet): %u frame(s) queued before it started "
			"discarded (its socket takes every interface's frames until bound)\n",
			port, discarded);
}

int
t4p4s_ports_init(void)
{
	/* P4 port N is DPDK port N: --vdev ports, then test ports, then ring ports */
	if (t4p4s_vdevs_check_probed() != 0 || t4p4s_test_ports_create() != 0 ||
	    t4p4s_ring_ports_create() != 0)
		return -1;
	uint16_t n_ports = rte_eth_dev_count_avail();
	unsigned n_workers = t4p4s_rt.n_workers;
	if (n_ports == 0) {
		fprintf(stderr, "error: no ports: give at least one --vdev "
			"(e.g. --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap) "
			"or --test-ports N\n");
		return -1;
	}
	t4p4s_rt.n_ports = n_ports;

	unsigned n_mbufs = n_ports * n_workers * (RX_DESC + TX_DESC) +
			   n_workers * (MBUF_CACHE + T4P4S_MAX_BURST *
					(n_ports + 1u)) + CLONE_MBUFS +
			   (unsigned)t4p4s_ring_ports_mbufs() + (unsigned)t4p4s_test_ports_mbufs() +
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
	uint32_t max_frame[RTE_MAX_ETHPORTS];
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port) {
		uint16_t nb_rxq;
		if (port >= n_ports) {
			/* P4 port N is DPDK port N: ids must be 0..n-1 */
			fprintf(stderr, "error: port ids are not contiguous\n");
			return -1;
		}
		if (configure_port(port, &nb_rxq, &max_frame[port]) != 0)
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
		if (t4p4s_rx_replay_attach(t4p4s_rt.opts->rx_replay[i], t4p4s_rt.pool,
					   t4p4s_rt.opts->latency) != 0)
			return -1;
	}
	if (t4p4s_rt.opts->latency && t4p4s_latency_init(n_ports, (uint16_t)n_workers,
							  t4p4s_rt.opts->latency_from_payload) != 0)
		return -1;
	for (unsigned w = 0; w < n_workers; w++) {
		struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		lc->n_ports = n_ports;
		lc->txq = (uint16_t)w;
		lc->pool = t4p4s_rt.pool;
		memcpy(lc->max_frame_len, max_frame, n_ports * sizeof(max_frame[0]));
		if (create_tx_buffers(lc) != 0) {
			fprintf(stderr, "error: out of memory for tx buffers\n");
			return -1;
		}
	}
	if (t4p4s_governor_ports_ready() != 0)
		return -1;
	RTE_ETH_FOREACH_DEV(port) {
		int ret = rte_eth_dev_start(port);
		if (ret != 0) {
			fprintf(stderr, "error: port %u: start failed: %s\n",
				port, rte_strerror(-ret));
			return -1;
		}
		/* vdevs without the notion answer -ENOTSUP: harmless */
		rte_eth_promiscuous_enable(port);
		discard_frames_of_other_interfaces(port);
	}
	return 0;
}

void
t4p4s_ports_stop(void)
{
	uint16_t port;
	RTE_ETH_FOREACH_DEV(port)
		rte_eth_dev_stop(port);
	/* DPDK's pmgmt lets go of stopped queues only */
	t4p4s_governor_ports_stopped();
	RTE_ETH_FOREACH_DEV(port)
		rte_eth_dev_close(port);
}
