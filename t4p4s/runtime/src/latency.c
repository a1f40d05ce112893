#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "arrival_stamp.h"
#include "latency.h"
#include "latency_histogram.h"

struct tx_latency {
	struct t4p4s_latency_histogram h;
	/* set by the control thread, acted on by the writer: zeroing the
	 * counters under it would lose its increments */
	bool reset_requested;
} __rte_cache_aligned;

static struct {
	uint16_t n_ports, n_txq;
	struct tx_latency **queues;     /* [port * n_txq + txq] */
} latency;

static const struct {
	const char *name;
	double q;
} percentiles[] = {
	{ "p50_us", 0.50 }, { "p90_us", 0.90 }, { "p99_us", 0.99 }, { "p99_9_us", 0.999 },
};

static uint16_t
record_tx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct tx_latency *t = arg;
	if (unlikely(__atomic_load_n(&t->reset_requested, __ATOMIC_ACQUIRE))) {
		memset(&t->h, 0, sizeof(t->h));
		__atomic_store_n(&t->reset_requested, false, __ATOMIC_RELEASE);
	}
	/* the stamp's place in locals: the histogram's stores might alias
	 * the globals, which the compiler would then load per frame */
	const uint64_t flag = t4p4s_arrival_flag;
	const int offset = t4p4s_arrival_offset;
	uint64_t now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		if (!(pkts[i]->ol_flags & flag))
			continue;
		uint64_t arrival = *RTE_MBUF_DYNFIELD(pkts[i], offset, const uint64_t *);
		t4p4s_latency_record(&t->h, now > arrival ? now - arrival : 0);
	}
	return n;
}

int
t4p4s_latency_init(uint16_t n_ports, uint16_t n_txq)
{
	if (t4p4s_arrival_stamp_register() != 0)
		return -1;
	latency.queues = rte_zmalloc("latency", (size_t)n_ports * n_txq * sizeof(*latency.queues), 0);
	if (latency.queues == NULL)
		goto no_memory;
	for (uint16_t p = 0; p < n_ports; p++)
		for (uint16_t q = 0; q < n_txq; q++) {
			struct tx_latency *t = rte_zmalloc_socket("latency", sizeof(*t),
				RTE_CACHE_LINE_SIZE, rte_eth_dev_socket_id(p));
			if (t == NULL)
				goto no_memory;
			if (rte_eth_add_tx_callback(p, q, record_tx, t) == NULL) {
				fprintf(stderr, "error: --latency: port %u queue %u: %s\n", p, q,
					rte_strerror(rte_errno));
				return -1;
			}
			latency.queues[p * n_txq + q] = t;
		}
	latency.n_ports = n_ports;
	latency.n_txq = n_txq;
	return 0;
no_memory:
	fprintf(stderr, "error: --latency: out of memory for the histograms\n");
	return -1;
}

/* The port's queues together; a copy, as their writers go on. */
static void
port_histogram(uint16_t port, struct t4p4s_latency_histogram *h)
{
	memset(h, 0, sizeof(*h));
	for (uint16_t q = 0; q < latency.n_txq; q++)
		t4p4s_latency_merge(h, &latency.queues[port * latency.n_txq + q]->h);
}

static double
cycles_to_us(double cycles)
{
	return cycles * 1e6 / (double)rte_get_tsc_hz();
}

json_t *
t4p4s_latency_json(uint16_t port)
{
	if (port >= latency.n_ports)
		return NULL;
	struct t4p4s_latency_histogram *h = malloc(sizeof(*h));
	if (h == NULL)
		return NULL;
	port_histogram(port, h);
	json_t *j = json_pack("{s:I, s:f}", "count", (json_int_t)t4p4s_latency_count(h),
			      "max_us", cycles_to_us((double)h->max));
	for (unsigned i = 0; i < RTE_DIM(percentiles); i++)
		json_object_set_new(j, percentiles[i].name,
			json_real(cycles_to_us(t4p4s_latency_quantile(h, percentiles[i].q))));
	free(h);
	return j;
}

bool
t4p4s_latency_enabled(void)
{
	return latency.queues != NULL;
}

void
t4p4s_latency_reset(void)
{
	for (unsigned i = 0; i < (unsigned)latency.n_ports * latency.n_txq; i++)
		__atomic_store_n(&latency.queues[i]->reset_requested, true, __ATOMIC_RELEASE);
}

static int
telemetry_latency(const char *cmd __rte_unused, const char *params __rte_unused,
		  struct rte_tel_data *d)
{
	struct t4p4s_latency_histogram *h = malloc(sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < latency.n_ports; p++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();
		char name[32];
		port_histogram(p, h);
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_u64(pd, "count", t4p4s_latency_count(h));
		for (unsigned i = 0; i < RTE_DIM(percentiles); i++) {
			char key[16];
			/* telemetry has no doubles: nanoseconds keep the precision */
			snprintf(key, sizeof(key), "%.*s_ns",
				 (int)strlen(percentiles[i].name) - 3, percentiles[i].name);
			rte_tel_data_add_dict_u64(pd, key, (uint64_t)(1e3 *
				cycles_to_us(t4p4s_latency_quantile(h, percentiles[i].q)) + 0.5));
		}
		rte_tel_data_add_dict_u64(pd, "max_ns",
					  (uint64_t)(1e3 * cycles_to_us((double)h->max) + 0.5));
		snprintf(name, sizeof(name), "port%u", p);
		rte_tel_data_add_dict_container(d, name, pd, 0);
	}
	free(h);
	return 0;
}

void
t4p4s_latency_telemetry_init(void)
{
	rte_telemetry_register_cmd("/t4p4s/latency", telemetry_latency,
		"t4p4s per-port latency percentiles in ns (--latency). No parameters");
}
