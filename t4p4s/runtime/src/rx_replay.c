/* --rx-replay PORT:FILE.pcap: every packet port PORT receives is
 * overwritten with the next frame of FILE, round and round.
 *
 * A traffic source for benchmarks, in the forwarding lcore as a NIC's DMA
 * would be: put on a `net_null` port (which hands out mbufs without
 * touching their bytes), each packet costs a 64-byte-aligned copy from one
 * contiguous array.  net_pcap's infinite_rx does the same job with a
 * locked ring dequeue and enqueue per packet and its frames spread over
 * 2 KB mbufs, about 50 cycles a packet on our machines, which a benchmark
 * of the pipeline would otherwise count as pipeline work.  Each rx queue
 * has its own cursor, starting at a different frame.
 *
 * Self-contained (DPDK and libpcap only, no runtime state): the buffering
 * service (baas/) links this file too, for its own --rx-replay. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "rx_replay.h"

struct replay_frames {
	uint8_t *bytes;        /* frame i at bytes + i * stride */
	uint16_t *lengths;
	uint32_t count;
	uint32_t stride;
};

struct replay_cursor {
	const struct replay_frames *frames;
	uint32_t next;
} __rte_cache_aligned;

static int
split_spec(const char *spec, uint16_t *port, const char **path)
{
	char *end;
	errno = 0;
	unsigned long p = strtoul(spec, &end, 10);
	if (errno != 0 || end == spec || *end != ':' || end[1] == '\0' || p > UINT16_MAX) {
		fprintf(stderr, "error: --rx-replay: '%s' is not PORT:FILE.pcap\n", spec);
		return -1;
	}
	*port = (uint16_t)p;
	*path = end + 1;
	return 0;
}

/* Two passes over the file: the first sizes the array. */
static int
load_frames(const char *path, uint32_t max_length, struct replay_frames *f)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t count = 0, longest = 0;
	pcap_t *pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		fprintf(stderr, "error: --rx-replay: %s\n", err);
		return -1;
	}
	while (pcap_next_ex(pc, &h, &data) == 1) {
		if (h->caplen != h->len || h->caplen > max_length) {
			fprintf(stderr, "error: --rx-replay: %s: frame %u has %u of %u bytes "
				"(frames must be whole and at most %u bytes)\n",
				path, count + 1, h->caplen, h->len, max_length);
			pcap_close(pc);
			return -1;
		}
		longest = RTE_MAX(longest, h->caplen);
		count++;
	}
	pcap_close(pc);
	if (count == 0) {
		fprintf(stderr, "error: --rx-replay: %s has no frames\n", path);
		return -1;
	}
	f->count = count;
	f->stride = RTE_ALIGN_CEIL(longest, RTE_CACHE_LINE_SIZE);
	f->bytes = rte_malloc("rx_replay", (size_t)count * f->stride, RTE_CACHE_LINE_SIZE);
	f->lengths = rte_malloc("rx_replay", (size_t)count * sizeof(uint16_t), 0);
	if (f->bytes == NULL || f->lengths == NULL) {
		fprintf(stderr, "error: --rx-replay: no memory for %u frames of %s\n", count, path);
		return -1;
	}
	pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		fprintf(stderr, "error: --rx-replay: %s\n", err);
		return -1;
	}
	uint32_t loaded = 0;
	while (loaded < count && pcap_next_ex(pc, &h, &data) == 1 &&
	       h->caplen == h->len && h->caplen <= longest) {
		memcpy(f->bytes + (size_t)loaded * f->stride, data, h->caplen);
		f->lengths[loaded++] = (uint16_t)h->caplen;
	}
	pcap_close(pc);
	if (loaded < count) {
		fprintf(stderr, "error: --rx-replay: %s changed while it was read\n", path);
		return -1;
	}
	return 0;
}

static uint16_t
replay_rx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n, uint16_t max __rte_unused, void *arg)
{
	struct replay_cursor *c = arg;
	const struct replay_frames *f = c->frames;
	uint32_t next = c->next;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t length = f->lengths[next];
		rte_memcpy(rte_pktmbuf_mtod(pkts[i], void *), f->bytes + (size_t)next * f->stride,
			   length);
		pkts[i]->data_len = length;
		pkts[i]->pkt_len = length;
		if (++next == f->count)
			next = 0;
	}
	c->next = next;
	return n;
}

int
t4p4s_rx_replay_attach(const char *spec, struct rte_mempool *pool)
{
	uint16_t port;
	const char *path;
	struct rte_eth_dev_info info;
	if (split_spec(spec, &port, &path) != 0)
		return -1;
	if (!rte_eth_dev_is_valid_port(port) || rte_eth_dev_info_get(port, &info) != 0) {
		fprintf(stderr, "error: --rx-replay: no port %u\n", port);
		return -1;
	}
	uint16_t n_rx_queues = info.nb_rx_queues;
	struct replay_frames *frames = rte_zmalloc("rx_replay", sizeof(*frames), 0);
	if (frames == NULL ||
	    load_frames(path, rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM, frames) != 0)
		return -1;
	for (uint16_t q = 0; q < n_rx_queues; q++) {
		struct replay_cursor *c = rte_zmalloc("rx_replay", sizeof(*c), RTE_CACHE_LINE_SIZE);
		if (c == NULL)
			return -1;
		c->frames = frames;
		c->next = (uint32_t)((uint64_t)frames->count * q / n_rx_queues);
		if (rte_eth_add_rx_callback(port, q, replay_rx, c) == NULL) {
			fprintf(stderr, "error: --rx-replay: port %u queue %u: %s\n",
				port, q, rte_strerror(rte_errno));
			return -1;
		}
	}
	printf("rx replay: port %u receives the %u frames of %s\n", port, frames->count, path);
	return 0;
}
