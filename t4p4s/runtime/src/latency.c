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

/* Streams told apart per tx queue (a source's rx queues): more are
 * counted as "other_streams" frames. */
#define MAX_STREAMS 16

/* One stream's numbers as a transmitter sees them: exact when one tx
 * queue sends the whole stream (otherwise each queue sees the others'
 * frames as gaps). */
struct stream_seen {
	bool used;
	uint16_t id;
	uint32_t next;            /* the number expected next */
	uint64_t frames;
	uint64_t lost;            /* numbers skipped, less those that came late */
	uint64_t reordered;       /* came after a later number */
};

struct tx_latency {
	struct t4p4s_latency_histogram h;
	struct stream_seen streams[MAX_STREAMS];
	uint64_t other_streams;
	/* set by the control thread, acted on by the writer: zeroing the
	 * counters under it would lose its increments */
	bool reset_requested;
} __rte_cache_aligned;

static struct {
	uint16_t n_ports, n_txq;
	bool from_payload;
	struct tx_latency **queues;     /* [port * n_txq + txq] */
} latency;

static const struct {
	const char *name;
	double q;
} percentiles[] = {
	{ "p50_us", 0.50 }, { "p90_us", 0.90 }, { "p99_us", 0.99 }, { "p99_9_us", 0.999 },
};

/* latency_reset's work, done by the queue's one writer */
static inline void
reset_if_asked(struct tx_latency *t)
{
	if (likely(!__atomic_load_n(&t->reset_requested, __ATOMIC_ACQUIRE)))
		return;
	memset(&t->h, 0, sizeof(t->h));
	memset(t->streams, 0, sizeof(t->streams));
	t->other_streams = 0;
	__atomic_store_n(&t->reset_requested, false, __ATOMIC_RELEASE);
}

static void telemetry_init(void);

static uint16_t
record_tx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct tx_latency *t = arg;
	reset_if_asked(t);
	/* the stamp's place in locals: the histogram's stores might alias
	 * the globals, which the compiler would then load per frame */
	const uint64_t flag = t4p4s_arrival_flag;
	const int offset = t4p4s_arrival_offset;
	uint64_t *buckets = t->h.buckets;
	/* the burst's max in a register, stored once: a bucket's store
	 * might alias h.max, which would be reloaded per frame */
	uint64_t max = t->h.max;
	uint64_t now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		if (!(pkts[i]->ol_flags & flag))
			continue;
		uint64_t arrival = *RTE_MBUF_DYNFIELD(pkts[i], offset, const uint64_t *);
		uint64_t cycles = now > arrival ? now - arrival : 0;
		buckets[t4p4s_latency_bucket(cycles)]++;
		max = cycles > max ? cycles : max;
	}
	t->h.max = max;
	return n;
}

static void
count_number(struct tx_latency *t, uint16_t id, uint32_t number)
{
	struct stream_seen *s = NULL;
	for (unsigned i = 0; i < MAX_STREAMS && s == NULL; i++)
		if (!t->streams[i].used || t->streams[i].id == id)
			s = &t->streams[i];
	if (s == NULL) {
		t->other_streams++;
		return;
	}
	if (!s->used) {
		/* numbers start at 0: any below the first seen were lost */
		*s = (struct stream_seen){ .used = true, .id = id };
	}
	s->frames++;
	int32_t ahead = (int32_t)(number - s->next);
	if (ahead >= 0) {
		s->lost += (uint32_t)ahead;
		s->next = number + 1;
	} else {
		s->reordered++;
		if (s->lost > 0)
			s->lost--;
	}
}

/* The stamp in the frame's last octets, if it has one. */
static inline const struct t4p4s_payload_stamp *
payload_stamp(const struct rte_mbuf *m, struct t4p4s_payload_stamp *copy)
{
	if (rte_pktmbuf_pkt_len(m) < sizeof(*copy))
		return NULL;
	const struct t4p4s_payload_stamp *p =
		rte_pktmbuf_read(m, rte_pktmbuf_pkt_len(m) - sizeof(*copy), sizeof(*copy), copy);
	return p != NULL && p->magic == T4P4S_PAYLOAD_STAMP_MAGIC ? p : NULL;
}

static uint16_t
record_tx_payload(uint16_t port __rte_unused, uint16_t queue __rte_unused,
		  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct tx_latency *t = arg;
	reset_if_asked(t);
	uint64_t now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		struct t4p4s_payload_stamp copy;
		const struct t4p4s_payload_stamp *p = payload_stamp(pkts[i], &copy);
		uint64_t arrival;
		if (p != NULL) {
			arrival = p->tsc;
			count_number(t, p->stream, p->seq);
		} else if (!t4p4s_arrival_get(pkts[i], &arrival)) {
			continue;
		}
		t4p4s_latency_record(&t->h, now > arrival ? now - arrival : 0);
	}
	return n;
}

int
t4p4s_latency_init(uint16_t n_ports, uint16_t n_txq, bool from_payload)
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
			if (rte_eth_add_tx_callback(p, q, from_payload ? record_tx_payload : record_tx,
						    t) == NULL) {
				fprintf(stderr, "error: --latency: port %u queue %u: %s\n", p, q,
					rte_strerror(rte_errno));
				return -1;
			}
			latency.queues[p * n_txq + q] = t;
		}
	latency.n_ports = n_ports;
	latency.n_txq = n_txq;
	latency.from_payload = from_payload;
	telemetry_init();
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

/* The port's streams over its tx queues, by stream id. */
static json_t *
streams_json(uint16_t port)
{
	json_t *by_id = json_object(), *list = json_array();
	uint64_t other = 0;
	for (uint16_t q = 0; q < latency.n_txq; q++) {
		const struct tx_latency *t = latency.queues[port * latency.n_txq + q];
		other += t->other_streams;
		for (unsigned i = 0; i < MAX_STREAMS && t->streams[i].used; i++) {
			const struct stream_seen *s = &t->streams[i];
			char key[8];
			snprintf(key, sizeof(key), "%u", s->id);
			json_t *e = json_object_get(by_id, key);
			if (e == NULL) {
				e = json_pack("{s:i, s:I, s:I, s:I}", "stream", s->id, "frames",
					      (json_int_t)0, "lost", (json_int_t)0, "reordered",
					      (json_int_t)0);
				json_object_set_new(by_id, key, e);
				json_array_append(list, e);
			}
			static const char *const fields[] = { "frames", "lost", "reordered" };
			const uint64_t values[] = { s->frames, s->lost, s->reordered };
			for (unsigned f = 0; f < RTE_DIM(fields); f++)
				json_object_set_new(e, fields[f], json_integer(
					json_integer_value(json_object_get(e, fields[f])) +
					(json_int_t)values[f]));
		}
	}
	json_decref(by_id);
	if (other != 0)
		json_array_append_new(list, json_pack("{s:s, s:I}", "stream", "other",
						      "frames", (json_int_t)other));
	return list;
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
	if (latency.from_payload)
		json_object_set_new(j, "streams", streams_json(port));
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

static void
telemetry_init(void)
{
	rte_telemetry_register_cmd("/t4p4s/latency", telemetry_latency,
		"t4p4s per-port latency percentiles in ns (--latency). No parameters");
}
