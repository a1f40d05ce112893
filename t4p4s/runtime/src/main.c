/* The compiled program's executable: the runtime started (lifecycle.c),
 * one poll loop per EAL lcore (main included) until a signal, --duration
 * or --exit-on-idle, then an orderly shutdown. */
#include <signal.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "lcore_loop.h"
#include "lifecycle.h"
#include "runtime.h"

static void
on_signal(int sig __rte_unused)
{
	t4p4s_rt.quit = true;
}

int
main(int argc, char **argv)
{
	bool eal_up;
	/* before the start: a signal while it runs stops the loops at once */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int status = t4p4s_runtime_start(argc, argv, &eal_up);
	if (!eal_up)
		return status;
	if (status == 0) {
		printf("t4p4s: %s running on %u lcore(s), %u port(s)\n",
		       t4p4s_program.name, t4p4s_rt.n_workers, t4p4s_rt.n_ports);
		fflush(stdout);
		t4p4s_rt.start_tsc = rte_rdtsc();
		rte_eal_mp_remote_launch(t4p4s_lcore_main, NULL, CALL_MAIN);
		rte_eal_mp_wait_lcore();
	}
	int stopped = t4p4s_runtime_stop(status == 0);
	return status != 0 ? status : stopped;
}
