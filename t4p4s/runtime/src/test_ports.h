/* --test-ports N: ports whose frames go in and out through the control
 * socket (port_inject, port_drain), for the STF runner and tests. Each is
 * a net_ring ethdev made of two rte_rings in this process: no kernel and
 * no minimum or maximum length in between, so a frame of any length from
 * 0 bytes up to one mbuf reaches the pipeline as given, and what the
 * pipeline sends is taken back byte for byte, in order. Only the control
 * thread touches the test's end of the rings; the lcores see an ordinary
 * port. */
#ifndef T4P4S_TEST_PORTS_H
#define T4P4S_TEST_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <rte_config.h>

#define T4P4S_MAX_TEST_PORTS RTE_MAX_ETHPORTS
/* frames each ring holds (one less than its size): the pipeline's side
 * drops and counts what does not fit (tx_dropped), the control side
 * refuses and counts (refused) */
#define T4P4S_TEST_PORT_RING_SIZE 1024

/* Makes the N ports, after the --vdev ports (their numbers follow them);
 * before t4p4s_ports_init configures the ports. -1 after printing why. */
int t4p4s_test_ports_create(void);

/* The mbufs the pool needs on top: both rings of every test port full. */
uint64_t t4p4s_test_ports_mbufs(void);

/* Whether DPDK port `port` is a test port. */
int t4p4s_test_port_is(uint32_t port);

/* The longest frame port_inject takes: one mbuf's data room (the parser
 * reads the first segment). */
uint32_t t4p4s_test_port_max_frame(void);

/* Puts a copy of `frame` into the rx ring of test port `port`. 0, or -1
 * with the reason in err (the ring full: counted as refused; no mbuf). */
int t4p4s_test_port_inject(uint32_t port, const uint8_t *frame, size_t len,
			   char *err, size_t err_len);

/* Takes every frame the pipeline has sent on test port `port` (in the
 * order sent): a JSON array of hex strings, or NULL with err set. */
json_t *t4p4s_test_port_drain(uint32_t port, char *err, size_t err_len);

/* {injected, refused, drained, waiting_rx, waiting_tx} of a test port for
 * its `stats` entry; NULL for any other port. */
json_t *t4p4s_test_port_json(uint16_t port);

#endif
