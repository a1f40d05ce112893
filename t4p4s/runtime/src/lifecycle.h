/* Bringing the runtime up and down, shared by the executable (main.c) and
 * the fuzz harness (t4p4s/runtime/fuzz), which runs the pipeline from
 * libFuzzer instead of the lcore loops. */
#ifndef T4P4S_LIFECYCLE_H
#define T4P4S_LIFECYCLE_H

#include <stdbool.h>

/* EAL, options, the lcores' state, the program's tables, counters and
 * registers, ports, --entries, telemetry, the P4Runtime server and the
 * control socket (last: a client's first successful `ping` means ready).
 * Returns 0 when running, 1 on a start failure (said on stderr), 2 on a
 * usage error; after a non-zero return call t4p4s_runtime_stop() only when
 * `*eal_up` is true. */
int t4p4s_runtime_start(int argc, char **argv, bool *eal_up);

/* Stops the servers, writes --stats-json when `write_stats`, stops the
 * ports and frees what start made. Returns 0, or 1 when the statistics
 * could not be written. */
int t4p4s_runtime_stop(bool write_stats);

#endif
