/* Test ports (test_ports.h): per port a ring into the pipeline (the
 * ethdev's one rx queue; the control thread is its only producer) and a
 * ring out of it (every worker's tx queue; the control thread is its only
 * consumer), made an ethdev with rte_eth_from_rings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "options.h"
#include "runtime.h"
#include "test_ports.h"

struct test_port {
	struct rte_ring *to_pipeline;
	struct rte_ring *from_pipeline;
	/* written by the control thread only; read by `stats` on it too */
	uint64_t injected, refused, drained;
};

/* indexed by DPDK port; NULL rings: not a test port */
static struct test_port test_ports[RTE_MAX_ETHPORTS];

static struct rte_ring *
create_ring(unsigned index, const char *direction, unsigned flags)
{
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "t4p4s_test%u_%s", index, direction);
	struct rte_ring *r = rte_ring_create(name, T4P4S_TEST_PORT_RING_SIZE,
					     (int)rte_socket_id(), flags);
	if (r == NULL)
		fprintf(stderr, "error: --test-ports: cannot create the ring %s: %s\n",
			name, rte_strerror(rte_errno));
	return r;
}

int
t4p4s_test_ports_create(void)
{
	unsigned n = t4p4s_rt.opts->n_test_ports, n_tx = t4p4s_rt.n_workers;
	if (n > 0 && rte_eth_dev_count_avail() + n > RTE_MAX_ETHPORTS) {
		fprintf(stderr, "error: --test-ports %u: with the %u --vdev port(s) that is "
			"more than the %d ports DPDK was built for\n", n,
			rte_eth_dev_count_avail(), RTE_MAX_ETHPORTS);
		return -1;
	}
	if (n > 0 && n_tx > RTE_PMD_RING_MAX_TX_RINGS) {
		fprintf(stderr, "error: --test-ports: a test port has one tx queue per "
			"lcore, at most %d: use at most %d lcores\n",
			RTE_PMD_RING_MAX_TX_RINGS, RTE_PMD_RING_MAX_TX_RINGS);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct rte_ring *in = create_ring(i, "in", RING_F_SP_ENQ | RING_F_SC_DEQ);
		struct rte_ring *out = create_ring(i, "out",
			RING_F_SC_DEQ | (n_tx == 1 ? RING_F_SP_ENQ : 0));
		if (in == NULL || out == NULL)
			return -1;
		struct rte_ring *tx[RTE_PMD_RING_MAX_TX_RINGS];
		for (unsigned q = 0; q < n_tx; q++)
			tx[q] = out;
		char dev_name[RTE_ETH_NAME_MAX_LEN];
		snprintf(dev_name, sizeof(dev_name), "t4p4s_test%u", i);
		int port = rte_eth_from_rings(dev_name, &in, 1, tx, n_tx, rte_socket_id());
		if (port < 0 || port >= RTE_MAX_ETHPORTS) {
			fprintf(stderr, "error: --test-ports: cannot make port %u: %s\n", i,
				rte_strerror(rte_errno));
			return -1;
		}
		test_ports[port].to_pipeline = in;
		test_ports[port].from_pipeline = out;
	}
	return 0;
}

uint64_t
t4p4s_test_ports_mbufs(void)
{
	return (uint64_t)t4p4s_rt.opts->n_test_ports * 2 * T4P4S_TEST_PORT_RING_SIZE;
}

int
t4p4s_test_port_is(uint32_t port)
{
	return port < RTE_MAX_ETHPORTS && test_ports[port].to_pipeline != NULL;
}

uint32_t
t4p4s_test_port_max_frame(void)
{
	return rte_pktmbuf_data_room_size(t4p4s_rt.pool) - RTE_PKTMBUF_HEADROOM;
}

int
t4p4s_test_port_inject(uint32_t port, const uint8_t *frame, size_t len,
		       char *err, size_t err_len)
{
	struct test_port *tp = &test_ports[port];
	struct rte_mbuf *m = rte_pktmbuf_alloc(t4p4s_rt.pool);
	if (m == NULL) {
		snprintf(err, err_len, "port %u: no free mbuf in the pool (the pipeline "
			 "holds them all; drain the test ports)", port);
		return -1;
	}
	/* a 0-byte append succeeds: the frame is an empty mbuf */
	uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (data == NULL) {
		rte_pktmbuf_free(m);
		snprintf(err, err_len, "port %u: a %zu-byte frame does not fit one mbuf", port,
			 len);
		return -1;
	}
	if (len > 0)
		memcpy(data, frame, len);
	m->port = (uint16_t)port;
	if (rte_ring_enqueue(tp->to_pipeline, m) != 0) {
		rte_pktmbuf_free(m);
		tp->refused++;
		snprintf(err, err_len, "port %u: its rx ring is full (%u frames the pipeline "
			 "has not taken yet); frame refused", port,
			 rte_ring_count(tp->to_pipeline));
		return -1;
	}
	tp->injected++;
	return 0;
}

/* One frame, all its segments, as lower-case hex. */
static json_t *
frame_hex(const struct rte_mbuf *m)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *text = malloc(2 * (size_t)len + 1);
	if (text == NULL)
		return NULL;
	char *p = text;
	for (const struct rte_mbuf *seg = m; seg != NULL; seg = seg->next) {
		const uint8_t *b = rte_pktmbuf_mtod(seg, const uint8_t *);
		for (uint16_t i = 0; i < seg->data_len && p < text + 2 * (size_t)len; i++) {
			*p++ = digits[b[i] >> 4];
			*p++ = digits[b[i] & 15];
		}
	}
	*p = '\0';
	json_t *s = json_stringn(text, (size_t)(p - text));
	free(text);
	return s;
}

json_t *
t4p4s_test_port_drain(uint32_t port, char *err, size_t err_len)
{
	struct test_port *tp = &test_ports[port];
	json_t *frames = json_array();
	void *burst[64];
	unsigned n;
	while ((n = rte_ring_dequeue_burst(tp->from_pipeline, burst, RTE_DIM(burst),
					   NULL)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			json_t *hex = frame_hex(burst[i]);
			rte_pktmbuf_free(burst[i]);
			tp->drained++;
			if (hex == NULL || json_array_append_new(frames, hex) != 0) {
				/* the rest stay freed, not lost silently: say so */
				for (unsigned j = i + 1; j < n; j++)
					rte_pktmbuf_free(burst[j]);
				json_decref(frames);
				snprintf(err, err_len, "port %u: out of memory for the frames "
					 "drained; %u frame(s) lost", port, n - i);
				return NULL;
			}
		}
	}
	return frames;
}

json_t *
t4p4s_test_port_json(uint16_t port)
{
	if (!t4p4s_test_port_is(port))
		return NULL;
	const struct test_port *tp = &test_ports[port];
	return json_pack("{s:I, s:I, s:I, s:i, s:i}",
		"injected", (json_int_t)tp->injected, "refused", (json_int_t)tp->refused,
		"drained", (json_int_t)tp->drained,
		"waiting_rx", (int)rte_ring_count(tp->to_pipeline),
		"waiting_tx", (int)rte_ring_count(tp->from_pipeline));
}
