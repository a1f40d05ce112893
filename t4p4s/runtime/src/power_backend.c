/* The governor's backends (power_backend.h): detected once, before the
 * lcores start. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_power.h>
#include <rte_power_intrinsics.h>

#include "power_backend.h"

struct t4p4s_power_backends t4p4s_power_backends;

/* paper 000: 13 P-states from P0 (above 2 GHz) to P12 (800 MHz) */
#define SIMULATED_PSTATES 13
#define SIMULATED_P0_MHZ 2000
#define SIMULATED_STEP_MHZ 100

static const char *
env_name(enum power_management_env env)
{
	switch (env) {
	case PM_ENV_ACPI_CPUFREQ:
		return "acpi-cpufreq";
	case PM_ENV_PSTATE_CPUFREQ:
		return "intel_pstate";
	case PM_ENV_CPPC_CPUFREQ:
		return "cppc";
	case PM_ENV_KVM_VM:
		return "kvm-guest-channel";
	default:
		return "rte_power";
	}
}

static unsigned
governed_lcore_id(unsigned w)
{
	return t4p4s_governed.lcores[w]->lcore_id;
}

/* rte_power on every governed lcore, where each one's CPU has cpufreq (not
 * tried otherwise: rte_power_init would log an error per backend). */
static bool
real_frequency(void)
{
	unsigned n_lcores = t4p4s_governed.n_lcores;
	if (n_lcores == 0)
		return false;
	for (unsigned w = 0; w < n_lcores; w++) {
		char path[128];
		unsigned cpu = rte_lcore_to_cpu_id((int)governed_lcore_id(w));
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/cpufreq", cpu);
		if (access(path, F_OK) != 0)
			return false;
	}
	for (unsigned w = 0; w < n_lcores; w++) {
		if (rte_power_init(governed_lcore_id(w)) != 0) {
			for (unsigned u = 0; u < w; u++)
				rte_power_exit(governed_lcore_id(u));
			return false;
		}
	}
	uint32_t khz[T4P4S_MAX_PSTATES];
	uint32_t n = rte_power_freqs(governed_lcore_id(0), khz, T4P4S_MAX_PSTATES);
	if (n == 0) {
		t4p4s_power_backends_fini();
		return false;
	}
	for (uint32_t i = 0; i < n; i++)
		t4p4s_power_backends.pstate_mhz[i] = khz[i] / 1000;
	t4p4s_power_backends.n_pstates = n;
	t4p4s_power_backends.frequency = env_name(rte_power_get_env());
	return true;
}

void
t4p4s_power_backends_init(void)
{
	struct t4p4s_power_backends *b = &t4p4s_power_backends;
	struct rte_cpu_intrinsics intrinsics;
	memset(b, 0, sizeof(*b));
	b->frequency_real = real_frequency();
	if (!b->frequency_real) {
		b->frequency = "simulated";
		b->n_pstates = SIMULATED_PSTATES;
		for (unsigned i = 0; i < SIMULATED_PSTATES; i++)
			b->pstate_mhz[i] = SIMULATED_P0_MHZ - i * SIMULATED_STEP_MHZ;
	}
	rte_cpu_get_intrinsics_support(&intrinsics);
	b->power_pause = intrinsics.power_pause;
	b->pause = b->power_pause ? "WAITPKG" : "rte_pause spin";
	printf("power: frequency %s (%u P-states, %u..%u MHz), pause %s\n", b->frequency,
	       b->n_pstates, b->pstate_mhz[b->n_pstates - 1], b->pstate_mhz[0], b->pause);
}

void
t4p4s_power_backends_fini(void)
{
	if (!t4p4s_power_backends.frequency_real)
		return;
	for (unsigned w = 0; w < t4p4s_governed.n_lcores; w++)
		rte_power_exit(governed_lcore_id(w));
	t4p4s_power_backends.frequency_real = false;
}

bool
t4p4s_power_port_has_rx_intr(const char *driver_name)
{
	/* of the drivers this project runs on, only net_tap's rx queues have
	 * an interrupt (an eventfd on its tap fd); rte_eth_dev_rx_intr_ctl_q
	 * fails on the others */
	return strcmp(driver_name, "net_tap") == 0;
}

void
t4p4s_power_set_pstate(unsigned lcore_id, unsigned index)
{
	if (t4p4s_power_backends.frequency_real)
		rte_power_set_freq(lcore_id, index);
}

void
t4p4s_power_pause_until(uint64_t deadline)
{
	if (t4p4s_power_backends.power_pause) {
		rte_power_pause(deadline);
		return;
	}
	while (rte_rdtsc() < deadline)
		rte_pause();
}
