/* Runtime-internal parts of the control layer. */
#ifndef T4P4S_CONTROL_INTERNAL_H
#define T4P4S_CONTROL_INTERNAL_H

#include <stddef.h>
#include <jansson.h>

/* control_api.c: `const entries` of every table (at start). */
int t4p4s_ctl_install_const_entries(void);

/* control_json.c: one command object -> its reply object (new ref). */
json_t *t4p4s_control_json(json_t *cmd);
/* One JSON text -> reply text (malloc'd, no newline). */
char *t4p4s_control_line(const char *line, size_t len);
/* --entries FILE: on failure prints which command failed and why. */
int t4p4s_control_load_entries(const char *path);

/* control_socket.c */
#include "control_socket.h"

/* latency.c: latency_reset */
#include "latency.h"

/* lcore_loop.c: stall */
#include "lcore_loop.h"

/* stats.c */
json_t *t4p4s_stats_json(void);
int t4p4s_stats_write(const char *path);
void t4p4s_stats_telemetry_init(void);

#endif
