/* What the governor acts through, detected at start and named in the log,
 * the statistics and telemetry (issue 15, item 5):
 *
 *   frequency  rte_power (acpi-cpufreq, intel_pstate, cppc) where the CPU
 *              has a cpufreq directory in sysfs; otherwise `simulated`: a
 *              13-level ladder P0 2,000 MHz .. P12 800 MHz (paper 000: P0
 *              above 2 GHz, P12 800 MHz) whose level is tracked and
 *              reported but changes nothing
 *   pause      rte_power_pause (WAITPKG's tpause) where the CPU has it;
 *              otherwise `rte_pause spin` to a TSC deadline
 *   sleep      `rx-interrupt` (an epoll on the lcore's rx queues' interrupts,
 *              armed at start on ports whose driver has them: net_tap here)
 *              where every queue of a lcore has one; otherwise `timed`
 *              (nanosleep) */
#ifndef T4P4S_POWER_BACKEND_H
#define T4P4S_POWER_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "governor.h"

struct t4p4s_power_backends {
	const char *frequency;
	const char *pause;
	bool frequency_real;
	bool power_pause;
	unsigned n_pstates;
	uint32_t pstate_mhz[T4P4S_MAX_PSTATES];   /* P0 (fastest) first */
};

extern struct t4p4s_power_backends t4p4s_power_backends;

/* Detects the backends for the governed lcores (frequency per lcore
 * through rte_power_init); prints what it found. */
void t4p4s_power_backends_init(void);
void t4p4s_power_backends_fini(void);

/* The port's driver wakes a sleeping lcore by rx interrupt (arm it when
 * configuring the port). */
bool t4p4s_power_port_has_rx_intr(const char *driver_name);

/* P-state INDEX on LCORE_ID (a no-op when simulated). */
void t4p4s_power_set_pstate(unsigned lcore_id, unsigned index);

/* Pause until the TSC reaches DEADLINE. */
void t4p4s_power_pause_until(uint64_t deadline);

#endif
