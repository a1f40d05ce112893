#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <t4p4s/ring_port.h>

#include "baas.h"
#include "option_number.h"
#include "options.h"

/* TS 38.331 9.2.1 gives defaults for SRBs only (t-PollRetransmit ms45,
 * maxRetxThreshold t8); a DRB's come from the gNB's configuration, and
 * these are the ones the BaaS uses until the controller says otherwise. */
#define DEFAULT_T_POLL_RETRANSMIT_MS 45
#define DEFAULT_MAX_RETX 8
#define DEFAULT_DRB_MAX_PDUS 2048      /* AM_Window_Size of 12-bit SNs */
#define DEFAULT_MAX_PDUS 65536
#define MAX_DRB_PDUS 131072            /* AM_Window_Size of 18-bit SNs (TS 38.322 7.2) */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- [options]\n"
		"Buffers copies of RLC AM downlink PDUs per DRB and retransmits them on\n"
		"NACKs and on t-PollRetransmit (TS 38.322). Every ethdev port (--vdev) is an\n"
		"attachment: copies and STATUS PDUs arrive on it, retransmissions leave on it.\n"
		"  --ring NAME            also attach to the ring port NAME of a target, a\n"
		"                         DPDK primary process on this machine (its\n"
		"                         --ring-port NAME; run with --proc-type=secondary,\n"
		"                         the target's --file-prefix and lcores it does not\n"
		"                         use): its copies and STATUS PDUs come as its own\n"
		"                         mbufs, zero copy (up to %d)\n"
		"  --grpc [ADDR:]PORT     serve baas.proto on ADDR (default 127.0.0.1):PORT\n"
		"                         (port 0: any free port, printed at start), or\n"
		"  --grpc unix:PATH       on a UNIX socket\n"
		"  --control PATH         serve JSON control commands on a UNIX socket\n"
		"  --stats-json FILE      write final statistics to FILE on exit\n"
		"  --duration S           exit after S seconds\n"
		"  --burst N              rx burst size, 1..%d (default 32)\n"
		"  --t-poll-retransmit MS default t-PollRetransmit, 1..60000 (default %d)\n"
		"  --max-retx N           default maxRetxThreshold, 1..32 (default %d)\n"
		"  --drb-max-pdus N       default bound per DRB, 1..%d (default %d)\n"
		"  --max-pdus N           bound over all DRBs, 1..16777216 (default %d)\n"
		"  --mbuf-size BYTES      data room of the BaaS's mbufs (default %d)\n"
		"  --rx-replay PORT:FILE.pcap[,rate=PPS][,pattern=constant|poisson][,ring=N]\n"
		"                         the target runtime's benchmark source (up to %d\n"
		"                         times): FILE's frames, round and round, into PORT,\n"
		"                         saturated on a net_null port or paced at PPS into a\n"
		"                         modelled rx ring of N (net_null with no-rx=1)\n"
		"  --governor MODE        the lcores' power governor, the target runtime's:\n"
		"                         busy (default), nap, adaptive, proportional,\n"
		"                         pmgmt-pause, pmgmt-monitor, pmgmt-scale (ports only);\n"
		"                         every idle ends when a retransmission timer is due\n"
		"  --power-thresholds K=V[,K=V...]\n"
		"                         the governor's thresholds (docs/architecture.md)\n",
		prog, BAAS_MAX_RINGS, BAAS_MAX_BURST, DEFAULT_T_POLL_RETRANSMIT_MS,
		DEFAULT_MAX_RETX, MAX_DRB_PDUS, DEFAULT_DRB_MAX_PDUS, DEFAULT_MAX_PDUS,
		RTE_MBUF_DEFAULT_DATAROOM, BAAS_MAX_RX_REPLAY);
}

const char *
baas_config_check(const struct baas_config *c, bool defaults)
{
	if (c->t_poll_retransmit_ms < 1 || c->t_poll_retransmit_ms > 60000)
		return "t_poll_retransmit_ms must be 1..60000";
	if (c->max_retx_threshold < 1 || c->max_retx_threshold > 32)
		return "max_retx_threshold must be 1..32 (TS 38.331 maxRetxThreshold t1..t32)";
	if (c->drb_max_pdus < 1 || c->drb_max_pdus > MAX_DRB_PDUS)
		return "drb_max_pdus must be 1..131072 (AM_Window_Size of 18-bit SNs)";
	if (defaults && (c->max_pdus < 1 || c->max_pdus > (1u << 24)))
		return "max_pdus must be 1..16777216";
	if (!defaults && c->max_pdus != 0)
		return "max_pdus is a global bound: it cannot be set per DRB";
	return NULL;
}

enum { OPT_GRPC = 256, OPT_CONTROL, OPT_STATS_JSON, OPT_DURATION, OPT_BURST,
       OPT_T_POLL, OPT_MAX_RETX, OPT_DRB_MAX_PDUS, OPT_MAX_PDUS, OPT_MBUF_SIZE,
       OPT_RING, OPT_RX_REPLAY, OPT_GOVERNOR, OPT_POWER_THRESHOLDS, OPT_HELP };

static int
parse_ring(const char *arg, struct baas_options *o)
{
	if (o->n_rings == BAAS_MAX_RINGS || arg[0] == '\0' ||
	    strlen(arg) > T4P4S_RING_PORT_NAME_MAX) {
		fprintf(stderr, "error: --ring %s: expected the name of a target's ring port "
			"(1 to %d characters; at most %d rings)\n", arg, T4P4S_RING_PORT_NAME_MAX,
			BAAS_MAX_RINGS);
		return -1;
	}
	o->rings[o->n_rings++] = arg;
	return 0;
}

int
baas_options_parse(int argc, char **argv, const char *prog, struct baas_options *out)
{
	static const struct option longopts[] = {
		{ "grpc", required_argument, NULL, OPT_GRPC },
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "burst", required_argument, NULL, OPT_BURST },
		{ "t-poll-retransmit", required_argument, NULL, OPT_T_POLL },
		{ "max-retx", required_argument, NULL, OPT_MAX_RETX },
		{ "drb-max-pdus", required_argument, NULL, OPT_DRB_MAX_PDUS },
		{ "max-pdus", required_argument, NULL, OPT_MAX_PDUS },
		{ "mbuf-size", required_argument, NULL, OPT_MBUF_SIZE },
		{ "ring", required_argument, NULL, OPT_RING },
		{ "rx-replay", required_argument, NULL, OPT_RX_REPLAY },
		{ "governor", required_argument, NULL, OPT_GOVERNOR },
		{ "power-thresholds", required_argument, NULL, OPT_POWER_THRESHOLDS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	double v;

	memset(out, 0, sizeof(*out));
	out->burst = 32;
	out->mbuf_data_room = RTE_MBUF_DEFAULT_DATAROOM;
	out->defaults = (struct baas_config){
		.t_poll_retransmit_ms = DEFAULT_T_POLL_RETRANSMIT_MS,
		.max_retx_threshold = DEFAULT_MAX_RETX,
		.drb_max_pdus = DEFAULT_DRB_MAX_PDUS,
		.max_pdus = DEFAULT_MAX_PDUS,
	};
	out->governor = T4P4S_GOVERNOR_BUSY;
	t4p4s_power_thresholds_default(&out->power_thresholds);
	optind = 1;
	opterr = 0;
	for (;;) {
		int c = getopt_long(argc, argv, ":", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case OPT_GRPC:
			out->grpc_address = optarg;
			break;
		case OPT_CONTROL:
			out->control_path = optarg;
			break;
		case OPT_STATS_JSON:
			out->stats_json_path = optarg;
			break;
		case OPT_DURATION:
			if (t4p4s_option_number("--duration", optarg, 0.001, 1e7, &v) < 0)
				goto bad;
			out->duration_s = v;
			break;
		case OPT_BURST:
			if (t4p4s_option_number("--burst", optarg, 1, BAAS_MAX_BURST, &v) < 0)
				goto bad;
			out->burst = (unsigned)v;
			break;
		case OPT_T_POLL:
			if (t4p4s_option_number("--t-poll-retransmit", optarg, 1, 60000, &v) < 0)
				goto bad;
			out->defaults.t_poll_retransmit_ms = (uint32_t)v;
			break;
		case OPT_MAX_RETX:
			if (t4p4s_option_number("--max-retx", optarg, 1, 32, &v) < 0)
				goto bad;
			out->defaults.max_retx_threshold = (uint32_t)v;
			break;
		case OPT_DRB_MAX_PDUS:
			if (t4p4s_option_number("--drb-max-pdus", optarg, 1, MAX_DRB_PDUS, &v) < 0)
				goto bad;
			out->defaults.drb_max_pdus = (uint32_t)v;
			break;
		case OPT_MAX_PDUS:
			if (t4p4s_option_number("--max-pdus", optarg, 1, 1 << 24, &v) < 0)
				goto bad;
			out->defaults.max_pdus = (uint64_t)v;
			break;
		case OPT_MBUF_SIZE:
			if (t4p4s_option_number("--mbuf-size", optarg, 256, 65535 - RTE_PKTMBUF_HEADROOM,
						&v) < 0)
				goto bad;
			out->mbuf_data_room = (unsigned)v;
			break;
		case OPT_RING:
			if (parse_ring(optarg, out) < 0)
				goto bad;
			break;
		case OPT_RX_REPLAY:
			if (out->n_rx_replay == BAAS_MAX_RX_REPLAY) {
				fprintf(stderr, "error: --rx-replay: at most %d\n", BAAS_MAX_RX_REPLAY);
				goto bad;
			}
			out->rx_replay[out->n_rx_replay++] = optarg;
			break;
		case OPT_GOVERNOR:
			if (t4p4s_governor_option(optarg, &out->governor) < 0)
				goto bad;
			break;
		case OPT_POWER_THRESHOLDS:
			if (t4p4s_power_thresholds_option(optarg, &out->power_thresholds) < 0)
				goto bad;
			break;
		case OPT_HELP:
			usage(prog);
			return -1;
		case ':':
			fprintf(stderr, "error: %s needs a value\n", argv[optind - 1]);
			goto bad;
		default:
			fprintf(stderr, "error: unknown option '%s'\n", argv[optind - 1]);
			goto bad;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind]);
		goto bad;
	}
	return 0;
bad:
	usage(prog);
	return -1;
}
