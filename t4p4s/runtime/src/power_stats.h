/* The governor seen from outside: the control socket's `power`,
 * `power_mode` and `power_thresholds`, the statistics' per-lcore `power`,
 * and DPDK telemetry's /t4p4s/power and /t4p4s/lcores (docs/architecture.md,
 * Power). */
#ifndef T4P4S_POWER_STATS_H
#define T4P4S_POWER_STATS_H

#include <stddef.h>

#include <jansson.h>

struct t4p4s_governor;
struct t4p4s_lcore;

/* {"backends", "pstates_mhz", "thresholds", "lcores": [...]}: every lcore
 * of t4p4s_governed */
json_t *t4p4s_power_json(void);
/* One lcore's state (the statistics' lcores[i].power). */
json_t *t4p4s_power_governor_json(const struct t4p4s_governor *g);
/* The same for a forwarding lcore of the target runtime (governor_runtime.c). */
json_t *t4p4s_power_lcore_json(const struct t4p4s_lcore *lc);
/* {"cmd": "power_mode", "mode": M[, "lcore": L]} and
 * {"cmd": "power_thresholds", "thresholds": {...}[, "lcore": L]}: the
 * reply, or NULL with why in ERR (nothing changed). */
json_t *t4p4s_power_mode_command(json_t *cmd, char *err, size_t err_len);
json_t *t4p4s_power_thresholds_command(json_t *cmd, char *err, size_t err_len);
void t4p4s_power_telemetry_init(void);

#endif
