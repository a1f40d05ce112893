"""`gnbctl status`: per target, whether it answers, who is primary, which
pipeline runs (and whether it is the topology's), DRB and offload entries,
drop totals; and, when the topology has a [baas], whether the BaaS answers
and what it holds. An unreachable target or BaaS is a row, not an abort."""
from __future__ import annotations

import asyncio

from finsy.proto.p4.config.v1 import p4info_pb2

from controller import baas, counters, drbs, lcore_load, offload, targets
from controller.errors import GnbctlError


def _topology_p4info(config) -> p4info_pb2.P4Info | None:
    """The P4Info the topology names for this target (None: it names
    none); one that does not compile or parse is a TopologyError, the
    command's error (exit 2), not this target's row."""
    if config.p4info is None and config.p4 is None:
        return None
    return config.read_p4info()


async def target_status(topology, config) -> dict:
    row = {"target": config.name, "role": config.role, "address": config.address,
           "device_id": config.device_id}
    expected = _topology_p4info(config)
    try:
        async with targets.session(topology, [config]) as (target,):
            schema = target.schema
            row.update(reachable=True, primary=target.switch.is_primary,
                       election_id=target.election_id,
                       program=schema.name or None,
                       pipeline_matches_topology=(None if expected is None
                                                  else expected == schema.p4info))
            row["drbs"] = await drbs.counts(target)
            if config.role == "nic" and target.has_table("offload_bucket"):
                row["offload"] = await offload.show(target, topology.hosts_behind(config.name))
            row["counters"] = await counters.read(target)
    except GnbctlError as e:
        # exit_code: a target without the topology's device id is the
        # topology's mistake (2), not an unreachable target (3)
        row.update(reachable=False, error=str(e), exit_code=e.exit_code)
    return row


BAAS_TIMEOUT_S = 1.0


async def baas_status(topology) -> dict:
    """The BaaS's row (role "baas"): whether it answers a GetStats within
    BAAS_TIMEOUT_S and, if so, its DRBs, held PDUs and mbuf pool."""
    config = topology.baas
    row = {"target": config.name, "role": "baas", "address": config.address}
    try:
        async with baas.connect(topology, BAAS_TIMEOUT_S) as client:
            stats = await client.stats()
    except GnbctlError as e:
        row.update(reachable=False, error=str(e))
        return row
    row.update(reachable=True, baas={k: stats[k] for k in (
        "n_drbs", "held", "held_bytes", "pool_size", "pool_in_use", "n_lcores")})
    return row


# Lcore load's shares over this window (two readings), read while the
# P4Runtime reads run: the load now, not the average since the start.
LOAD_WINDOW_S = 0.2


async def control_socket_status(config) -> dict:
    """What the target's control socket (topology key `control`) adds to
    its row: "lcore_load" (lcore_load.read over LOAD_WINDOW_S) and
    "runtime_drops" (counters.runtime_drops), or "control_error" when it
    does not answer; {} without a control socket. Never raises: the row's
    reachability is its P4Runtime server's."""
    if config.control is None:
        return {}
    try:
        load, runtime = await asyncio.gather(lcore_load.read(config, LOAD_WINDOW_S),
                                             counters.runtime_drops(config))
    except GnbctlError as e:
        return {"control_error": str(e)}
    return {"lcore_load": load, "runtime_drops": runtime}
