/* Latency at transmission (--latency): for every stamped frame a port
 * sends, now minus its arrival stamp (arrival_stamp.h), into a histogram
 * per port and tx queue (so per lcore: one writer each), reported as
 * percentiles in microseconds per port. */
#ifndef T4P4S_LATENCY_H
#define T4P4S_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* Installs a tx callback on tx queues 0..N_TXQ-1 of every port 0..N_PORTS-1
 * and the telemetry command /t4p4s/latency;
 * FROM_PAYLOAD: frames carry their stamp in their last octets too
 * (struct t4p4s_payload_stamp), read there when the mbuf has none, and
 * their numbers count loss and reordering per stream. -1 after printing
 * why. */
int t4p4s_latency_init(uint16_t n_ports, uint16_t n_txq, bool from_payload);

/* Port PORT's latency as {"count", "p50_us", "p90_us", "p99_us",
 * "p99_9_us", "max_us"} (and "streams": [{"stream", "frames", "lost",
 * "reordered"}] from payload stamps), or NULL when --latency is off. */
json_t *t4p4s_latency_json(uint16_t port);

bool t4p4s_latency_enabled(void);

/* Every histogram starts again (each at its queue's next transmission). */
void t4p4s_latency_reset(void);

#endif
