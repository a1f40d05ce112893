/* A ring port: a target's port made of two rte_rings in its shared memory
 * (`--ring-port NAME`), which a DPDK secondary process on the same machine
 * attaches to by NAME and exchanges mbuf pointers with, zero copy: the
 * buffering service's ring attachment (paper 001 scenario 2; baas/src/
 * ports.c). The target, the primary, creates the rings, this descriptor
 * and the pool its mbufs come from; the peer takes the mbufs the target
 * sends (and frees them into the target's pool when done), and sends mbufs
 * of its own pool, which the target frees after transmitting them.
 *
 * The peer may hold up to `hold` of the target's mbufs at once: the target's
 * pool was made that much larger, so a peer that keeps to it never starves
 * the data plane. A peer that dies leaks what it held (no process can tell
 * which mbufs those are); the next peer counts them from `peer_held` into
 * `leaked` and holds that many fewer. */
#ifndef T4P4S_RING_PORT_H
#define T4P4S_RING_PORT_H

#include <stdint.h>
#include <stdio.h>

#include <rte_lcore.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#define T4P4S_RING_PORT_MAGIC 0x52505431u      /* "RPT1": this layout */
#define T4P4S_RING_PORT_NAME_MAX 20            /* fits the ring and memzone names */
#define T4P4S_RING_PORT_SIZE 4096              /* descriptors per ring */
#define T4P4S_RING_PORT_DEFAULT_HOLD 65536     /* the BaaS's default --max-pdus */
/* what a peer may have in hand besides what it holds: a dequeued burst
 * per poll round, before it publishes peer_held */
#define T4P4S_RING_PORT_PEER_BURST 64

struct t4p4s_ring_port_info {
	uint32_t magic;
	uint16_t port;                           /* the target's port number */
	char to_peer[RTE_RING_NAMESIZE];         /* the target's tx: its frames for the peer */
	char from_peer[RTE_RING_NAMESIZE];       /* the target's rx: the peer's frames */
	uint64_t hold;                           /* mbufs the peer may hold */
	/* a mempool's per-lcore caches live in shared memory, indexed by lcore
	 * id: a peer must use lcore ids the target does not */
	uint64_t target_lcores[RTE_MAX_LCORE / 64];
	/* written by the peer */
	int32_t peer_pid;                        /* attached, 0 when none */
	uint64_t peer_held;                      /* the target's mbufs it holds, once per round */
	uint64_t leaked;                         /* held by peers that died attached */
};

/* The memzone holding NAME's descriptor. */
static inline void
t4p4s_ring_port_zone_name(char out[RTE_MEMZONE_NAMESIZE], const char *name)
{
	snprintf(out, RTE_MEMZONE_NAMESIZE, "ringport_%s", name);
}

#endif
