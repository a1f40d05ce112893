/* The P4Runtime server of a target process, callable from the C runtime.
 *
 * It runs in gRPC's own threads and changes the forwarding state only
 * through the C control API (control_api.h), so the lcores never see it.
 */
#ifndef T4P4S_P4RUNTIME_SERVER_H
#define T4P4S_P4RUNTIME_SERVER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Serves P4Runtime for device `device_id` on `address` ("[HOST:]PORT", the
 * host defaulting to 127.0.0.1; port 0 picks a free one). Prints the
 * address it listens on; returns 0, or -1 after printing why not. */
int t4p4s_p4runtime_start(const char *address, uint64_t device_id);

/* Closes every stream and waits for the RPCs in progress (no-op when not
 * started). */
void t4p4s_p4runtime_stop(void);

#ifdef __cplusplus
}
#endif

#endif
