/* The BaaS's life: EAL, options, lcores, the pool and attachments, the
 * servers; and their orderly shutdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "baas.h"
#include "control_socket.h"
#include "eal_cleanup.h"
#include "lifecycle.h"
#include "options.h"
#include "power_backend.h"
#include "power_stats.h"
#include "vdevs.h"

struct baas_process baas;
static struct baas_options options;

static int
create_lcores(void)
{
	unsigned lcore, w = 0;
	uint64_t now_ms = rte_rdtsc() / (rte_get_tsc_hz() / 1000);
	baas.n_lcores = rte_lcore_count();
	RTE_LCORE_FOREACH(lcore) {
		struct baas_lcore *lc = rte_zmalloc_socket(NULL, sizeof(*lc), RTE_CACHE_LINE_SIZE,
			(int)rte_lcore_to_socket_id(lcore));
		if (lc == NULL)
			return -1;
		lc->index = w;
		lc->lcore_id = lcore;
		lc->now_ms = now_ms;
		lc->defaults = options.defaults;
		lc->ring_hold = UINT64_MAX;     /* until a ring port says less (ports.c) */
		if (baas_drb_table_init(&lc->drbs, baas_held_share(lc, options.defaults.max_pdus)) != 0)
			return -1;
		baas_wheel_init(&lc->wheel, now_ms);
		t4p4s_governor_init(&lc->governor, options.governor, &options.power_thresholds);
		baas.lcores[w] = lc;
		baas.index_of_lcore[lcore] = (int)w;
		w++;
	}
	return 0;
}

int
baas_start(int argc, char **argv, bool *eal_up)
{
	const char *prog = argv[0];
	*eal_up = false;
	t4p4s_vdevs_note(argc, argv);
	int eal_args = rte_eal_init(argc, argv);
	if (eal_args < 0) {
		fprintf(stderr, "error: EAL initialization failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= eal_args;
	argv += eal_args;
	if (baas_options_parse(argc, argv, prog, &options) != 0) {
		t4p4s_eal_cleanup();
		return 2;
	}
	*eal_up = true;
	baas.opts = &options;
	baas.defaults = options.defaults;
	if (create_lcores() != 0) {
		fprintf(stderr, "error: out of memory for lcore state\n");
		return 1;
	}
	if (baas_ports_init() != 0 || baas_commands_init() != 0 || baas_events_start() != 0)
		return 1;
	baas_telemetry_init();
	t4p4s_power_telemetry_init();
	if (options.grpc_address != NULL && baas_grpc_start(options.grpc_address) != 0)
		return 1;
	/* the socket last: a client's first successful `ping` means ready */
	if (options.control_path != NULL &&
	    t4p4s_control_socket_start(options.control_path, baas_control_line) != 0)
		return 1;
	baas.start_tsc = rte_rdtsc();
	printf("baas: %u lcore(s), pool of %u mbufs, bounds %u PDUs per DRB, %llu in all\n",
	       baas.n_lcores, baas.pool->size, options.defaults.drb_max_pdus,
	       (unsigned long long)options.defaults.max_pdus);
	fflush(stdout);
	return 0;
}

int
baas_stop(bool write_stats)
{
	int status = 0;
	t4p4s_control_socket_stop();
	baas_grpc_stop();
	baas_events_stop();
	if (write_stats && options.stats_json_path != NULL &&
	    baas_stats_write(options.stats_json_path) != 0)
		status = 1;
	for (unsigned w = 0; w < baas.n_lcores; w++)
		baas_drb_table_free(baas.lcores[w]);
	baas_ports_stop();
	t4p4s_power_backends_fini();
	t4p4s_eal_cleanup();
	return status;
}
