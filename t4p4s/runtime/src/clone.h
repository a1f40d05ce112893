/* Clone sessions: session id -> (egress port, truncate length), one
 * 64-bit word per session so lcores read it with one relaxed load. */
#ifndef T4P4S_CLONE_H
#define T4P4S_CLONE_H

#include <stdint.h>

#define T4P4S_MAX_CLONE_SESSIONS 32768

int t4p4s_clone_session_set(uint32_t session, uint32_t port,
			    uint32_t truncate);
int t4p4s_clone_session_clear(uint32_t session);

#endif
