/* --ring-port NAME[,hold=N]: ports made of two rte_rings each, for a
 * secondary process to attach to (include/t4p4s/ring_port.h). */
#ifndef T4P4S_RING_PORT_SRC_H
#define T4P4S_RING_PORT_SRC_H

#include <stdint.h>

#include <jansson.h>

#define T4P4S_MAX_RING_PORTS 4

struct t4p4s_ring_port_option {
	const char *name;
	uint64_t hold;
};

/* Parses one --ring-port value; -1 (and why, on stderr) when malformed. */
int t4p4s_ring_port_parse(const char *arg, struct t4p4s_ring_port_option *out);

/* Makes every --ring-port's rings, descriptor and ethdev, after the --vdev
 * ports (so their port numbers follow); before t4p4s_ports_init. */
int t4p4s_ring_ports_create(void);

/* The mbufs the pool needs on top for the ring ports' peers. */
uint64_t t4p4s_ring_ports_mbufs(void);

/* [{name, port, hold, peer_pid, peer_held, leaked}, ...] */
json_t *t4p4s_ring_ports_json(void);

#endif
