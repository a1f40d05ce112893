/* The executable's own options (after EAL's `--`). */
#ifndef T4P4S_OPTIONS_H
#define T4P4S_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "governor.h"
#include "ring_port.h"

#define T4P4S_MAX_RX_REPLAY 8

struct t4p4s_options {
	const char *control_path;   /* --control: UNIX socket, or NULL */
	const char *entries_path;   /* --entries: JSON array of commands */
	const char *stats_json_path;
	uint64_t exit_on_idle_ms;   /* 0: never */
	double duration_s;          /* 0: run until signalled */
	unsigned burst;
	unsigned extra_mbufs;        /* --mbufs: added to the computed pool size */
	enum t4p4s_governor_policy governor;
	struct t4p4s_power_thresholds power_thresholds;   /* --power-thresholds */
	bool log_msg;
	const char *p4runtime_address;  /* --p4runtime [ADDR:]PORT, or NULL */
	uint64_t device_id;             /* --device-id (P4Runtime), default 1 */
	const char *rx_replay[T4P4S_MAX_RX_REPLAY];  /* --rx-replay PORT:FILE.pcap */
	unsigned n_rx_replay;
	bool latency;                   /* --latency: tx latency histograms */
	bool latency_from_payload;      /* --latency=payload */
	const char *registers_file;     /* --registers-file: registers kept in it, or NULL */
	struct t4p4s_ring_port_option ring_ports[T4P4S_MAX_RING_PORTS];   /* --ring-port */
	unsigned n_ring_ports;
	unsigned n_test_ports;          /* --test-ports N (test_ports.h) */
};

/* Parses argv (without the EAL part); on error prints why and the usage to
 * stderr and returns -1. */
int t4p4s_options_parse(int argc, char **argv, const char *prog,
			struct t4p4s_options *out);

#endif
