/* Ring ports (include/t4p4s/ring_port.h): two rte_rings made into an
 * ethdev with rte_eth_from_rings, so the pipeline sends and receives on
 * it as on any port, and a descriptor in a named memzone that tells the
 * peer the ring names, how many mbufs it may hold and which lcore ids are
 * the target's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include <t4p4s/ring_port.h>

#include "option_number.h"
#include "options.h"
#include "ring_port.h"
#include "runtime.h"

static const struct rte_memzone *zones[T4P4S_MAX_RING_PORTS];

int
t4p4s_ring_port_parse(const char *arg, struct t4p4s_ring_port_option *out)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma != NULL ? (size_t)(comma - arg) : strlen(arg);
	if (len == 0 || len > T4P4S_RING_PORT_NAME_MAX) {
		fprintf(stderr, "error: --ring-port %s: the name must have 1 to %d characters\n",
			arg, T4P4S_RING_PORT_NAME_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		char c = arg[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-')) {
			fprintf(stderr, "error: --ring-port %s: the name may have letters, digits, "
				"'_' and '-' only\n", arg);
			return -1;
		}
	}
	out->name = strndup(arg, len);
	out->hold = T4P4S_RING_PORT_DEFAULT_HOLD;
	if (comma == NULL)
		return out->name != NULL ? 0 : -1;
	if (strncmp(comma + 1, "hold=", 5) != 0) {
		fprintf(stderr, "error: --ring-port %s: expected NAME or NAME,hold=N\n", arg);
		return -1;
	}
	double hold;
	if (t4p4s_option_number("--ring-port hold", comma + 6, 0, 1 << 24, &hold) < 0)
		return -1;
	out->hold = (uint64_t)hold;
	return 0;
}

static struct rte_ring *
create_ring(const char *name, const char *suffix, unsigned flags, char out[RTE_RING_NAMESIZE])
{
	snprintf(out, RTE_RING_NAMESIZE, "%s_%s", name, suffix);
	struct rte_ring *r = rte_ring_create(out, T4P4S_RING_PORT_SIZE, (int)rte_socket_id(),
					     flags);
	if (r == NULL)
		fprintf(stderr, "error: --ring-port %s: cannot create the ring %s: %s\n", name,
			out, rte_strerror(rte_errno));
	return r;
}

static int
create_one(unsigned i, const struct t4p4s_ring_port_option *o)
{
	char zone_name[RTE_MEMZONE_NAMESIZE];
	t4p4s_ring_port_zone_name(zone_name, o->name);
	const struct rte_memzone *mz = rte_memzone_reserve(zone_name,
		sizeof(struct t4p4s_ring_port_info), (int)rte_socket_id(), 0);
	if (mz == NULL) {
		fprintf(stderr, "error: --ring-port %s: cannot make its descriptor %s: %s\n",
			o->name, zone_name, rte_strerror(rte_errno));
		return -1;
	}
	zones[i] = mz;
	struct t4p4s_ring_port_info *info = mz->addr;
	memset(info, 0, sizeof(*info));
	/* every worker sends on the port (its own tx queue, one ring for all);
	 * one peer lcore takes them, and one worker polls what comes back */
	unsigned n_tx = t4p4s_rt.n_workers;
	struct rte_ring *to_peer = create_ring(o->name, "to_peer",
		RING_F_SC_DEQ | (n_tx == 1 ? RING_F_SP_ENQ : 0), info->to_peer);
	struct rte_ring *from_peer = create_ring(o->name, "from_peer",
		RING_F_SP_ENQ | RING_F_SC_DEQ, info->from_peer);
	if (to_peer == NULL || from_peer == NULL)
		return -1;
	struct rte_ring *tx[RTE_MAX_LCORE];
	for (unsigned q = 0; q < n_tx; q++)
		tx[q] = to_peer;
	char dev_name[RTE_ETH_NAME_MAX_LEN];
	snprintf(dev_name, sizeof(dev_name), "net_ring_%s", o->name);
	int port = rte_eth_from_rings(dev_name, &from_peer, 1, tx, n_tx, rte_socket_id());
	if (port < 0) {
		fprintf(stderr, "error: --ring-port %s: cannot make its port: %s\n", o->name,
			rte_strerror(rte_errno));
		return -1;
	}
	info->port = (uint16_t)port;
	info->hold = o->hold;
	unsigned lcore;
	RTE_LCORE_FOREACH(lcore)
		info->target_lcores[lcore / 64] |= 1ull << (lcore % 64);
	/* the descriptor is complete once a peer can see the magic */
	__atomic_store_n(&info->magic, T4P4S_RING_PORT_MAGIC, __ATOMIC_RELEASE);
	printf("ring port %s: port %d, rings %s and %s, up to %llu mbufs held by its peer\n",
	       o->name, port, info->to_peer, info->from_peer, (unsigned long long)o->hold);
	return 0;
}

int
t4p4s_ring_ports_create(void)
{
	const struct t4p4s_options *o = t4p4s_rt.opts;
	if (o->n_ring_ports != 0 && rte_eal_process_type() != RTE_PROC_PRIMARY) {
		fprintf(stderr, "error: --ring-port: only a primary process makes ring ports\n");
		return -1;
	}
	for (unsigned i = 0; i < o->n_ring_ports; i++)
		if (create_one(i, &o->ring_ports[i]) != 0)
			return -1;
	return 0;
}

uint64_t
t4p4s_ring_ports_mbufs(void)
{
	const struct t4p4s_options *o = t4p4s_rt.opts;
	uint64_t n = 0;
	for (unsigned i = 0; i < o->n_ring_ports; i++)
		n += o->ring_ports[i].hold + T4P4S_RING_PORT_SIZE + T4P4S_RING_PORT_PEER_BURST;
	return n;
}

json_t *
t4p4s_ring_ports_json(void)
{
	json_t *list = json_array();
	for (unsigned i = 0; i < t4p4s_rt.opts->n_ring_ports; i++) {
		if (zones[i] == NULL)
			continue;
		const struct t4p4s_ring_port_info *info = zones[i]->addr;
		json_array_append_new(list, json_pack("{s:s, s:i, s:I, s:i, s:I, s:I}",
			"name", t4p4s_rt.opts->ring_ports[i].name, "port", info->port,
			"hold", (json_int_t)info->hold,
			"peer_pid", __atomic_load_n(&info->peer_pid, __ATOMIC_RELAXED),
			"peer_held", (json_int_t)__atomic_load_n(&info->peer_held, __ATOMIC_RELAXED),
			"leaked", (json_int_t)__atomic_load_n(&info->leaked, __ATOMIC_RELAXED)));
	}
	return list;
}
