/* The BaaS's own options (after EAL's `--`). */
#ifndef BAAS_OPTIONS_H
#define BAAS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <baas/api.h>

#include "governor.h"

#define BAAS_MAX_RINGS 8
#define BAAS_MAX_RX_REPLAY 8

struct baas_options {
	const char *grpc_address;      /* --grpc [ADDR:]PORT, or NULL */
	const char *control_path;      /* --control PATH, or NULL */
	const char *stats_json_path;   /* --stats-json FILE, or NULL */
	double duration_s;             /* 0: until signalled */
	unsigned burst;
	unsigned mbuf_data_room;       /* --mbuf-size */
	struct baas_config defaults;   /* --t-poll-retransmit, --max-retx, --drb-max-pdus, --max-pdus */
	const char *rings[BAAS_MAX_RINGS];     /* --ring NAME: a target's ring port */
	unsigned n_rings;
	const char *rx_replay[BAAS_MAX_RX_REPLAY];  /* --rx-replay PORT:FILE.pcap */
	unsigned n_rx_replay;
	enum t4p4s_governor_policy governor;       /* --governor, the target runtime's modes */
	struct t4p4s_power_thresholds power_thresholds;   /* --power-thresholds */
};

/* Parses argv (without the EAL part); on error prints why and the usage
 * to stderr and returns -1. */
int baas_options_parse(int argc, char **argv, const char *prog, struct baas_options *out);

/* The ranges every configuration source (options, gRPC) must respect;
 * NULL if c is valid, else what is wrong. */
const char *baas_config_check(const struct baas_config *c, bool defaults);

#endif
