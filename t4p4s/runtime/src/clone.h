/* Clone sessions: session id -> (egress port, truncate length), one
 * 64-bit word per session so lcores read it with one relaxed load. */
#ifndef T4P4S_CLONE_H
#define T4P4S_CLONE_H

#include <stdint.h>

#include <t4p4s/control_api.h>

#define T4P4S_MAX_CLONE_SESSIONS T4P4S_CTL_MAX_CLONE_SESSIONS

int t4p4s_clone_session_set(uint32_t session, uint32_t port,
			    uint32_t truncate);
int t4p4s_clone_session_clear(uint32_t session);

#endif
