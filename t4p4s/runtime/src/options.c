#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <t4p4s/ring_port.h>

#include "option_number.h"
#include "options.h"
#include "runtime.h"
#include "test_ports.h"

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- [options]\n"
		"  --control PATH      serve JSON control commands on a UNIX socket\n"
		"  --entries FILE      apply a JSON array of control commands at start\n"
		"  --stats-json FILE   write final statistics to FILE on exit\n"
		"  --exit-on-idle MS   exit once all rx queues were empty for MS ms\n"
		"                      (after at least one packet)\n"
		"  --duration S        exit after S seconds\n"
		"  --burst N           rx burst size, 1..%d (default 32)\n"
		"  --governor MODE     busy (default), nap, adaptive (paper 000's Algorithm 1\n"
		"                      and l3fwd-power's step-down), proportional (naps\n"
		"                      sized from the arrival rate within a latency budget),\n"
		"                      pmgmt-pause, pmgmt-monitor or pmgmt-scale (DPDK's\n"
		"                      rte_power_ethdev_pmgmt); all but pmgmt-* can change live\n"
		"  --power-thresholds NAME=VALUE[,NAME=VALUE...]\n"
		"                      the governor's thresholds (docs/architecture.md)\n"
		"  --mbufs N           extra mbufs in the pool (net_pcap infinite_rx\n"
		"                      keeps a copy of its whole pcap in mbufs)\n"
		"  --log-msg           print log_msg() output\n"
		"  --p4runtime [ADDR:]PORT\n"
		"                      serve P4Runtime on ADDR (default 127.0.0.1):PORT\n"
		"                      (port 0: any free port, printed at start)\n"
		"  --device-id N       P4Runtime device id (default 1)\n"
		"  --rx-replay PORT:FILE.pcap[,rate=PPS][,pattern=constant|poisson][,ring=N]\n"
		"              [,stamp=payload]\n"
		"                      a benchmark source: the frames of FILE, round and\n"
		"                      round, into PORT's rx queues (up to %d times).\n"
		"                      Saturated, on a net_null port: each packet it\n"
		"                      receives is overwritten with the next frame.\n"
		"                      Paced (rate=), on a net_null port with no-rx=1:\n"
		"                      PPS frames a second arrive, at constant gaps or as\n"
		"                      a Poisson process, into a modelled rx ring of N\n"
		"                      descriptors (default 1024) whether or not the lcore\n"
		"                      polls; arrivals while it is full are lost (counted).\n"
		"                      stamp=payload: the arrival time and number are\n"
		"                      also written over each frame's last 16 octets\n"
		"  --latency[=payload] per port, the latency of every frame sent, from its\n"
		"                      arrival at an --rx-replay to transmission (stats:\n"
		"                      p50, p90, p99, p99.9 and max microseconds); with\n"
		"                      =payload also of frames stamped by another process\n"
		"                      (its --rx-replay ...,stamp=payload), and their loss\n"
		"                      and reordering per stream\n"
		"  --registers-file PATH\n"
		"                      keep the program's registers in the file PATH (mapped\n"
		"                      shared): every value stored is in it at once and\n"
		"                      outlives the process, kill -9 included; a pipeline\n"
		"                      commit (P4Runtime VERIFY_AND_COMMIT) keeps them too.\n"
		"                      A missing or empty file is made, zero-filled; one of\n"
		"                      this program with the same register names, widths\n"
		"                      and sizes is reused; any other is refused and left\n"
		"                      as it is (remove it to start from zeros). Locked:\n"
		"                      one process at a time. Best on tmpfs (/dev/shm) or\n"
		"                      hugetlbfs: on a disk file system an lcore's store\n"
		"                      after the kernel wrote a page back takes a fault\n"
		"  --ring-port NAME[,hold=N]\n"
		"                      one more port, after the --vdev ports: two rte_rings\n"
		"                      (NAME_to_peer, NAME_from_peer) that a DPDK secondary\n"
		"                      process with this --file-prefix attaches to by NAME\n"
		"                      and exchanges mbufs with, zero copy (the buffering\n"
		"                      service's `--ring NAME`); the pool grows by the N\n"
		"                      mbufs the peer may hold (default %d); up to %d\n"
		"  --test-ports N      N more ports, after the --vdev ports, whose frames\n"
		"                      the control socket puts in (port_inject) and takes\n"
		"                      out (port_drain), any length from 0 bytes, with no\n"
		"                      kernel in between (the STF runner's ports)\n",
		prog, T4P4S_MAX_BURST, T4P4S_MAX_RX_REPLAY, T4P4S_RING_PORT_DEFAULT_HOLD,
		T4P4S_MAX_RING_PORTS);
}

enum { OPT_CONTROL = 256, OPT_ENTRIES, OPT_STATS_JSON, OPT_EXIT_ON_IDLE,
       OPT_DURATION, OPT_BURST, OPT_GOVERNOR, OPT_MBUFS, OPT_LOG_MSG,
       OPT_P4RUNTIME, OPT_DEVICE_ID, OPT_RX_REPLAY, OPT_LATENCY, OPT_REGISTERS_FILE, OPT_RING_PORT, OPT_POWER_THRESHOLDS, OPT_TEST_PORTS, OPT_HELP };

int
t4p4s_options_parse(int argc, char **argv, const char *prog,
		    struct t4p4s_options *out)
{
	static const struct option longopts[] = {
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "entries", required_argument, NULL, OPT_ENTRIES },
		{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
		{ "exit-on-idle", required_argument, NULL, OPT_EXIT_ON_IDLE },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "burst", required_argument, NULL, OPT_BURST },
		{ "governor", required_argument, NULL, OPT_GOVERNOR },
		{ "mbufs", required_argument, NULL, OPT_MBUFS },
		{ "log-msg", no_argument, NULL, OPT_LOG_MSG },
		{ "p4runtime", required_argument, NULL, OPT_P4RUNTIME },
		{ "device-id", required_argument, NULL, OPT_DEVICE_ID },
		{ "rx-replay", required_argument, NULL, OPT_RX_REPLAY },
		{ "latency", optional_argument, NULL, OPT_LATENCY },
		{ "registers-file", required_argument, NULL, OPT_REGISTERS_FILE },
		{ "ring-port", required_argument, NULL, OPT_RING_PORT },
		{ "test-ports", required_argument, NULL, OPT_TEST_PORTS },
		{ "power-thresholds", required_argument, NULL, OPT_POWER_THRESHOLDS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	double v;

	memset(out, 0, sizeof(*out));
	out->burst = 32;
	out->governor = T4P4S_GOVERNOR_BUSY;
	t4p4s_power_thresholds_default(&out->power_thresholds);
	out->device_id = 1;

	/* argv[0] is EAL's last consumed argument (or the program name) */
	optind = 1;
	opterr = 0;
	for (;;) {
		int c = getopt_long(argc, argv, ":", longopts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case OPT_CONTROL:
			out->control_path = optarg;
			break;
		case OPT_ENTRIES:
			out->entries_path = optarg;
			break;
		case OPT_STATS_JSON:
			out->stats_json_path = optarg;
			break;
		case OPT_EXIT_ON_IDLE:
			if (t4p4s_option_number("--exit-on-idle", optarg, 1, 1e9, &v) < 0)
				goto bad;
			out->exit_on_idle_ms = (uint64_t)v;
			break;
		case OPT_DURATION:
			if (t4p4s_option_number("--duration", optarg, 0.001, 1e7, &v) < 0)
				goto bad;
			out->duration_s = v;
			break;
		case OPT_BURST:
			if (t4p4s_option_number("--burst", optarg, 1, T4P4S_MAX_BURST, &v) < 0)
				goto bad;
			out->burst = (unsigned)v;
			break;
		case OPT_GOVERNOR:
			if (t4p4s_governor_option(optarg, &out->governor) < 0)
				goto bad;
			break;
		case OPT_POWER_THRESHOLDS:
			if (t4p4s_power_thresholds_option(optarg, &out->power_thresholds) < 0)
				goto bad;
			break;
		case OPT_MBUFS:
			if (t4p4s_option_number("--mbufs", optarg, 0, 1 << 24, &v) < 0)
				goto bad;
			out->extra_mbufs = (unsigned)v;
			break;
		case OPT_LOG_MSG:
			out->log_msg = true;
			break;
		case OPT_P4RUNTIME:
			out->p4runtime_address = optarg;
			break;
		case OPT_DEVICE_ID: {
			char *end;
			errno = 0;
			unsigned long long id = strtoull(optarg, &end, 0);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    optarg[0] == '-') {
				fprintf(stderr, "error: --device-id: invalid value '%s' "
					"(expected an unsigned 64-bit integer)\n", optarg);
				goto bad;
			}
			out->device_id = id;
			break;
		}
		case OPT_RX_REPLAY:
			if (out->n_rx_replay == T4P4S_MAX_RX_REPLAY) {
				fprintf(stderr, "error: --rx-replay: at most %d\n",
					T4P4S_MAX_RX_REPLAY);
				goto bad;
			}
			out->rx_replay[out->n_rx_replay++] = optarg;
			break;
		case OPT_LATENCY:
			if (optarg != NULL && strcmp(optarg, "payload") != 0) {
				fprintf(stderr, "error: --latency=%s: the only source is "
					"'payload'\n", optarg);
				goto bad;
			}
			out->latency = true;
			out->latency_from_payload = optarg != NULL;
			break;
		case OPT_REGISTERS_FILE:
			if (optarg[0] == '\0') {
				fprintf(stderr, "error: --registers-file: empty path\n");
				goto bad;
			}
			out->registers_file = optarg;
			break;
		case OPT_RING_PORT:
			if (out->n_ring_ports == T4P4S_MAX_RING_PORTS) {
				fprintf(stderr, "error: --ring-port: at most %d\n",
					T4P4S_MAX_RING_PORTS);
				goto bad;
			}
			if (t4p4s_ring_port_parse(optarg, &out->ring_ports[out->n_ring_ports]) < 0)
				goto bad;
			out->n_ring_ports++;
			break;
		case OPT_TEST_PORTS: {
			double n;
			if (t4p4s_option_number("--test-ports", optarg, 1,
						T4P4S_MAX_TEST_PORTS, &n) < 0)
				goto bad;
			out->n_test_ports = (unsigned)n;
			break;
		}
		case OPT_HELP:
			usage(prog);
			return -1;
		case ':':
			fprintf(stderr, "error: option %s needs a value\n",
				argv[optind - 1]);
			goto bad;
		default:
			fprintf(stderr, "error: unknown option '%s'\n",
				argv[optind - 1]);
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
