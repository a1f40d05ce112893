/* The --control UNIX socket: JSON lines in, JSON lines out, one control
 * thread. The runtime and the BaaS (baas/) serve their own commands on it. */
#ifndef T4P4S_CONTROL_SOCKET_H
#define T4P4S_CONTROL_SOCKET_H

#include <stddef.h>

/* One command line (without its newline) -> the reply text, malloc'd,
 * without a newline; NULL closes the connection. */
typedef char *(*t4p4s_control_line_fn)(const char *line, size_t len);

/* Serves `path` (a stale socket file is replaced) on a control thread;
 * returns 0, or -1 after printing why not. */
int t4p4s_control_socket_start(const char *path, t4p4s_control_line_fn fn);
void t4p4s_control_socket_stop(void);

#endif
