/* The runtime's life: EAL, options, objects built from the program's
 * descriptors, ports, the servers; and their orderly shutdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include <t4p4s/control_api.h>

#include "control_internal.h"
#include "counters.h"
#include "eal_cleanup.h"
#include "lifecycle.h"
#include "options.h"
#include "power_backend.h"
#include "power_stats.h"
#include "p4runtime_server.h"
#include "ports.h"
#include "rcu.h"
#include "registers.h"
#include "runtime.h"
#include "tables.h"
#include "vdevs.h"

struct t4p4s_runtime t4p4s_rt;
static struct t4p4s_options options;

static int
create_lcores(void)
{
	unsigned lcore, w = 0;
	RTE_LCORE_FOREACH(lcore) {
		struct t4p4s_lcore *lc = rte_zmalloc_socket(NULL, sizeof(*lc),
			RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(lcore));
		if (lc == NULL)
			return -1;
		lc->index = w;
		lc->lcore_id = lcore;
		lc->parser_errors = rte_zmalloc(NULL, (t4p4s_program.n_errors + 1u) *
						sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		if (lc->parser_errors == NULL)
			return -1;
		t4p4s_governor_init(&lc->governor, options.governor, &options.power_thresholds);
		t4p4s_rt.lcores[w] = lc;
		t4p4s_rt.worker_of_lcore[lcore] = (int)w;
		w++;
	}
	t4p4s_rt.n_workers = w;
	return 0;
}

static int
create_objects(void)
{
	int ret = t4p4s_rcu_init(t4p4s_rt.n_workers);
	if (ret == 0)
		ret = t4p4s_registers_init();
	if (ret == 0)
		ret = t4p4s_counters_init(t4p4s_rt.n_workers);
	if (ret == 0)
		ret = t4p4s_tables_init();
	if (ret != 0) {
		fprintf(stderr, "error: cannot create the program's tables, "
			"counters and registers: %s\n", strerror(-ret));
		return -1;
	}
	if (t4p4s_ctl_install_const_entries() != 0) {
		fprintf(stderr, "error: %s\n", t4p4s_ctl_last_error());
		return -1;
	}
	return 0;
}

static int
start_objects_and_servers(void)
{
	if (create_lcores() != 0) {
		fprintf(stderr, "error: out of memory for lcore state\n");
		return -1;
	}
	if (create_objects() != 0 || t4p4s_ports_init() != 0)
		return -1;
	if (options.entries_path != NULL &&
	    t4p4s_control_load_entries(options.entries_path) != 0)
		return -1;
	t4p4s_stats_telemetry_init();
	t4p4s_power_telemetry_init();
	if (options.p4runtime_address != NULL &&
	    t4p4s_p4runtime_start(options.p4runtime_address,
				  options.device_id) != 0)
		return -1;
	/* the socket last: a client's first successful `ping` means ready */
	if (options.control_path != NULL &&
	    t4p4s_control_socket_start(options.control_path, t4p4s_control_line) != 0)
		return -1;
	return 0;
}

int
t4p4s_runtime_start(int argc, char **argv, bool *eal_up)
{
	const char *prog = argv[0];
	*eal_up = false;
	t4p4s_vdevs_note(argc, argv);
	int eal_args = rte_eal_init(argc, argv);
	if (eal_args < 0) {
		fprintf(stderr, "error: EAL initialization failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= eal_args;
	argv += eal_args;
	if (t4p4s_options_parse(argc, argv, prog, &options) != 0) {
		t4p4s_eal_cleanup();
		return 2;
	}
	*eal_up = true;
	t4p4s_rt.opts = &options;
	return start_objects_and_servers() == 0 ? 0 : 1;
}

int
t4p4s_runtime_stop(bool write_stats)
{
	int status = 0;
	t4p4s_control_socket_stop();
	t4p4s_p4runtime_stop();
	if (write_stats && options.stats_json_path != NULL &&
	    t4p4s_stats_write(options.stats_json_path) != 0)
		status = 1;
	if (t4p4s_rt.n_ports > 0)
		t4p4s_ports_stop();
	t4p4s_power_backends_fini();
	t4p4s_tables_fini();
	t4p4s_registers_fini();
	t4p4s_rcu_fini();
	t4p4s_eal_cleanup();
	return status;
}
