/* --rx-replay PORT:FILE.pcap[,rate=PPS][,pattern=constant|poisson][,ring=N]:
 * a benchmark traffic source replaying the frames of FILE into port PORT's
 * rx queues, round and round, in the forwarding lcore as a NIC's DMA would.
 *
 * Saturated (no rate): every packet the port receives is overwritten with
 * the next frame. Put on a `net_null` port (which hands out mbufs without
 * touching their bytes), each packet costs a 64-byte-aligned copy from one
 * contiguous array.  net_pcap's infinite_rx does the same job with a
 * locked ring dequeue and enqueue per packet and its frames spread over
 * 2 KB mbufs, about 50 cycles a packet on our machines, which a benchmark
 * of the pipeline would otherwise count as pipeline work.
 *
 * Paced (rate=PPS, split evenly over the port's rx queues): the frames
 * arrive on a schedule into a modelled rx ring of `ring` descriptors
 * (default 1024), whether or not the lcore polls (paced_arrivals.c); a
 * poll gets those that arrived since, each stamped with its arrival time,
 * in mbufs the replay takes from the pool itself. Put on a
 * `net_null,no-rx=1` port: frames the driver hands out are not the
 * schedule's, so they are freed and counted (`foreign`).
 *
 * With stamping asked for (the runtime's --latency), saturated frames are
 * stamped too, with the time of the poll that took them.
 *
 * stamp=payload: each frame also carries its stamp in its last 16 octets
 * (struct t4p4s_payload_stamp, which overwrites them: the pcap's frames
 * must end in that much payload), with its number in the stream of its
 * rx queue, so the stamp outlives the mbuf: a process the frame reaches
 * later reads it there (--latency=payload), and counts loss and
 * reordering from the numbers.
 *
 * Each rx queue has its own cursor, starting at a different frame.
 * Self-contained (DPDK and libpcap only, no runtime state): the buffering
 * service (baas/) links this file too, for its own --rx-replay. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "arrival_stamp.h"
#include "paced_arrivals.h"
#include "rx_replay.h"

#define DEFAULT_RING 1024
#define MAX_RING (1u << 20)

struct replay_frames {
	uint8_t *bytes;        /* frame i at bytes + i * stride */
	uint16_t *lengths;
	uint32_t count;
	uint32_t stride;
};

struct replay_options {
	double rate;                 /* frames per second over all queues; 0: saturated */
	enum t4p4s_arrival_pattern pattern;
	uint32_t ring;
	bool payload_stamp;          /* stamp=payload */
};

struct replay_cursor {
	const struct replay_frames *frames;
	uint32_t next;
	bool payload_stamp;
	uint16_t stream;             /* port << 8 | queue */
	uint32_t number;             /* saturated: the next frame's number */
	struct rte_mempool *pool;    /* paced: where its mbufs come from */
	uint64_t delivered;
	uint64_t no_mbuf;            /* paced polls that found the pool empty */
	uint64_t foreign;            /* paced: frames the driver handed out, freed */
	struct t4p4s_paced_arrivals arrivals;   /* paced only */
} __rte_cache_aligned;

/* Per port, for the statistics: written at attach, before the lcores run. */
static struct {
	struct replay_options options;
	uint16_t n_queues;
	struct replay_cursor **cursors;
} replays[RTE_MAX_ETHPORTS];

static int
parse_option(const char *spec, char *option, struct replay_options *o)
{
	char *value = strchr(option, '=');
	char *end;
	if (value == NULL)
		goto bad;
	*value++ = '\0';
	errno = 0;
	if (strcmp(option, "rate") == 0) {
		o->rate = strtod(value, &end);
		if (errno != 0 || end == value || *end != '\0' || !(o->rate > 0))
			goto bad;
	} else if (strcmp(option, "pattern") == 0) {
		if (strcmp(value, "constant") == 0)
			o->pattern = T4P4S_ARRIVALS_CONSTANT;
		else if (strcmp(value, "poisson") == 0)
			o->pattern = T4P4S_ARRIVALS_POISSON;
		else
			goto bad;
	} else if (strcmp(option, "stamp") == 0) {
		if (strcmp(value, "payload") != 0)
			goto bad;
		o->payload_stamp = true;
	} else if (strcmp(option, "ring") == 0) {
		unsigned long ring = strtoul(value, &end, 10);
		if (errno != 0 || end == value || *end != '\0' || ring == 0 || ring > MAX_RING)
			goto bad;
		o->ring = (uint32_t)ring;
	} else {
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "error: --rx-replay '%s': bad option (rate=PPS, pattern=constant|poisson, "
		"ring=1..%u, stamp=payload)\n", spec, MAX_RING);
	return -1;
}

/* PORT:FILE.pcap[,rate=PPS][,pattern=...][,ring=N]; PATH is a copy the
 * caller frees. (A file name with a comma needs a link without one.) */
static int
parse_spec(const char *spec, uint16_t *port, char **path, struct replay_options *o)
{
	char *end;
	errno = 0;
	unsigned long p = strtoul(spec, &end, 10);
	if (errno != 0 || end == spec || *end != ':' || end[1] == '\0' || end[1] == ',' ||
	    p > UINT16_MAX) {
		fprintf(stderr, "error: --rx-replay: '%s' is not PORT:FILE.pcap[,OPTION=VALUE...]\n",
			spec);
		return -1;
	}
	*port = (uint16_t)p;
	*o = (struct replay_options){ .pattern = T4P4S_ARRIVALS_CONSTANT, .ring = DEFAULT_RING };
	*path = strdup(end + 1);
	if (*path == NULL)
		return -1;
	char *option = strchr(*path, ',');
	if (option != NULL)
		*option++ = '\0';
	while (option != NULL) {
		char *rest = strchr(option, ',');
		if (rest != NULL)
			*rest++ = '\0';
		if (parse_option(spec, option, o) != 0)
			return -1;
		option = rest;
	}
	return 0;
}

/* Two passes over the file: the first sizes the array. */
static int
load_frames(const char *path, uint32_t max_length, uint32_t min_length, struct replay_frames *f)
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
		if (h->caplen != h->len || h->caplen > max_length || h->caplen < min_length) {
			fprintf(stderr, "error: --rx-replay: %s: frame %u has %u of %u bytes "
				"(frames must be whole, at least %u and at most %u bytes)\n",
				path, count + 1, h->caplen, h->len, min_length, max_length);
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

/* The cursor's place in a local (*NEXT) while a burst is filled: the
 * copies might alias the cursor, so the compiler would store it per frame. */
static inline void
fill(struct rte_mbuf *m, const struct replay_frames *f, uint32_t *next)
{
	uint16_t length = f->lengths[*next];
	rte_memcpy(rte_pktmbuf_mtod(m, void *), f->bytes + (size_t)*next * f->stride, length);
	m->data_len = length;
	m->pkt_len = length;
	if (++*next == f->count)
		*next = 0;
}

static uint16_t
replay_rx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n, uint16_t max __rte_unused, void *arg)
{
	struct replay_cursor *c = arg;
	uint32_t next = c->next;
	for (uint16_t i = 0; i < n; i++)
		fill(pkts[i], c->frames, &next);
	c->next = next;
	c->delivered += n;
	return n;
}

static inline void
write_payload_stamp(struct rte_mbuf *m, uint64_t tsc, uint32_t number, uint16_t stream)
{
	struct t4p4s_payload_stamp *p = rte_pktmbuf_mtod_offset(m, struct t4p4s_payload_stamp *,
		rte_pktmbuf_data_len(m) - sizeof(*p));
	*p = (struct t4p4s_payload_stamp){ .tsc = tsc, .seq = number, .stream = stream,
					   .magic = T4P4S_PAYLOAD_STAMP_MAGIC };
}

static uint16_t
replay_rx_stamped(uint16_t port __rte_unused, uint16_t queue __rte_unused,
		  struct rte_mbuf **pkts, uint16_t n, uint16_t max __rte_unused, void *arg)
{
	struct replay_cursor *c = arg;
	const uint64_t flag = t4p4s_arrival_flag;   /* locals: see fill() */
	const int offset = t4p4s_arrival_offset;
	uint64_t now = rte_rdtsc();
	uint32_t next = c->next;
	for (uint16_t i = 0; i < n; i++) {
		fill(pkts[i], c->frames, &next);
		*RTE_MBUF_DYNFIELD(pkts[i], offset, uint64_t *) = now;
		pkts[i]->ol_flags |= flag;
		if (c->payload_stamp)
			write_payload_stamp(pkts[i], now, c->number++, c->stream);
	}
	c->next = next;
	c->delivered += n;
	return n;
}

static uint16_t
replay_rx_paced(uint16_t port __rte_unused, uint16_t queue __rte_unused,
		struct rte_mbuf **pkts, uint16_t n, uint16_t max, void *arg)
{
	struct replay_cursor *c = arg;
	if (unlikely(n != 0)) {
		rte_pktmbuf_free_bulk(pkts, n);
		c->foreign += n;
	}
	uint32_t waiting = t4p4s_paced_arrivals_poll(&c->arrivals, rte_rdtsc());
	uint16_t k = (uint16_t)RTE_MIN(waiting, (uint32_t)max);
	if (k == 0)
		return 0;
	if (unlikely(rte_pktmbuf_alloc_bulk(c->pool, pkts, k) != 0)) {
		/* the frames wait in the ring, as behind a NIC's empty
		 * descriptors, and overflow it if this goes on */
		c->no_mbuf++;
		return 0;
	}
	uint32_t next = c->next;
	for (uint16_t i = 0; i < k; i++) {
		uint32_t number;
		fill(pkts[i], c->frames, &next);
		uint64_t arrival = t4p4s_paced_arrivals_take(&c->arrivals, &number);
		t4p4s_arrival_set(pkts[i], arrival);
		if (c->payload_stamp)
			write_payload_stamp(pkts[i], arrival, number, c->stream);
	}
	c->next = next;
	c->delivered += k;
	return k;
}

int
t4p4s_rx_replay_attach(const char *spec, struct rte_mempool *pool, bool stamp)
{
	uint16_t port;
	char *path = NULL;
	struct replay_options o;
	struct rte_eth_dev_info info;
	int ret = -1;
	if (parse_spec(spec, &port, &path, &o) != 0)
		goto out;
	if (!rte_eth_dev_is_valid_port(port) || rte_eth_dev_info_get(port, &info) != 0) {
		fprintf(stderr, "error: --rx-replay: no port %u\n", port);
		goto out;
	}
	if (replays[port].cursors != NULL) {
		fprintf(stderr, "error: --rx-replay: port %u has a replay already\n", port);
		goto out;
	}
	bool paced = o.rate > 0;
	stamp = stamp || o.payload_stamp;
	if ((paced || stamp) && t4p4s_arrival_stamp_register() != 0)
		goto out;
	uint16_t n_rx_queues = info.nb_rx_queues;
	struct replay_frames *frames = rte_zmalloc("rx_replay", sizeof(*frames), 0);
	struct replay_cursor **cursors = rte_zmalloc("rx_replay", n_rx_queues * sizeof(*cursors), 0);
	if (frames == NULL || cursors == NULL ||
	    load_frames(path, rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM,
			o.payload_stamp ? RTE_ETHER_HDR_LEN + sizeof(struct t4p4s_payload_stamp) : 0,
			frames) != 0)
		goto out;
	rte_rx_callback_fn callback = paced ? replay_rx_paced : stamp ? replay_rx_stamped : replay_rx;
	for (uint16_t q = 0; q < n_rx_queues; q++) {
		struct replay_cursor *c = rte_zmalloc("rx_replay", sizeof(*c), RTE_CACHE_LINE_SIZE);
		if (c == NULL)
			goto out;
		c->frames = frames;
		c->next = (uint32_t)((uint64_t)frames->count * q / n_rx_queues);
		c->pool = pool;
		c->payload_stamp = o.payload_stamp;
		c->stream = (uint16_t)(port << 8 | (q & 0xff));
		if (paced && t4p4s_paced_arrivals_init(&c->arrivals, o.rate / n_rx_queues,
						       rte_get_tsc_hz(), o.pattern, o.ring,
						       (uint32_t)port << 16 | q) != 0)
			goto out;
		if (rte_eth_add_rx_callback(port, q, callback, c) == NULL) {
			fprintf(stderr, "error: --rx-replay: port %u queue %u: %s\n",
				port, q, rte_strerror(rte_errno));
			goto out;
		}
		cursors[q] = c;
	}
	replays[port].options = o;
	replays[port].n_queues = n_rx_queues;
	replays[port].cursors = cursors;
	if (paced)
		printf("rx replay: port %u receives the %u frames of %s at %.0f frames/s (%s), "
		       "into a ring of %u\n", port, frames->count, path, o.rate,
		       o.pattern == T4P4S_ARRIVALS_POISSON ? "poisson" : "constant", o.ring);
	else
		printf("rx replay: port %u receives the %u frames of %s\n", port, frames->count, path);
	ret = 0;
out:
	free(path);
	return ret;
}

bool
t4p4s_rx_replay_counters(uint16_t port, struct t4p4s_rx_replay_counters *out)
{
	if (port >= RTE_MAX_ETHPORTS || replays[port].cursors == NULL)
		return false;
	const struct replay_options *o = &replays[port].options;
	*out = (struct t4p4s_rx_replay_counters){
		.rate = o->rate,
		.pattern = o->rate == 0 ? "saturated"
			: o->pattern == T4P4S_ARRIVALS_POISSON ? "poisson" : "constant",
		.ring = o->rate == 0 ? 0 : o->ring,
	};
	for (uint16_t q = 0; q < replays[port].n_queues; q++) {
		const struct replay_cursor *c = replays[port].cursors[q];
		/* the lcore writes these as it runs: each read is of one
		 * aligned 64-bit word, so whole, if a few frames apart */
		uint64_t delivered = __atomic_load_n(&c->delivered, __ATOMIC_RELAXED);
		out->delivered += delivered;
		out->no_mbuf += __atomic_load_n(&c->no_mbuf, __ATOMIC_RELAXED);
		out->foreign += __atomic_load_n(&c->foreign, __ATOMIC_RELAXED);
		if (o->rate == 0) {
			out->arrived += delivered;
			continue;
		}
		out->arrived += __atomic_load_n(&c->arrivals.arrived, __ATOMIC_RELAXED);
		out->ring_overflow += __atomic_load_n(&c->arrivals.overflow, __ATOMIC_RELAXED);
		out->in_ring += __atomic_load_n(&c->arrivals.count, __ATOMIC_RELAXED);
	}
	return true;
}

uint32_t
t4p4s_rx_replay_ring_size(uint16_t port)
{
	if (port >= RTE_MAX_ETHPORTS || replays[port].cursors == NULL)
		return 0;
	return replays[port].options.rate == 0 ? 0 : replays[port].options.ring;
}

uint32_t
t4p4s_rx_replay_waiting(uint16_t port, uint16_t queue)
{
	return replays[port].cursors[queue]->arrivals.count;
}
