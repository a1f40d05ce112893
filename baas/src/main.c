/* The buffering service: starts, runs an lcore loop on every EAL lcore
 * until SIGINT/SIGTERM or --duration, stops. */
#include <signal.h>
#include <stdio.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "baas.h"
#include "lifecycle.h"

static void
on_signal(int sig __rte_unused)
{
	baas.quit = true;
}

int
main(int argc, char **argv)
{
	bool eal_up;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int status = baas_start(argc, argv, &eal_up);
	if (status != 0)
		return eal_up ? (baas_stop(false), status) : status;
	rte_eal_mp_remote_launch(baas_lcore_main, NULL, CALL_MAIN);
	rte_eal_mp_wait_lcore();
	return baas_stop(true);
}
