"""`gnbctl status`: per target, whether it answers, whether a controller
is primary (and its election id), which pipeline runs (and whether it is
the topology's), DRB and offload entries, drop totals; and, when the
topology has a [baas], whether the BaaS answers and what it holds. An
unreachable target or BaaS is a row, not an abort.

Nothing here claims primary or takes the write lock: the P4Info comes
from GetForwardingPipelineConfig, the rest from Reads (targets.reading),
and who is primary from a stream that arbitrates without an election id
(targets.primary), so `status` works while another command writes. The
DRB tables are counted, not decoded, and only the drop counter of the
counters is read: with 65,536 DRBs on two targets, under a second."""
from __future__ import annotations

import asyncio

from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import baas, control_socket, counters, drbs, lcore_load, offload, targets
from controller.errors import GnbctlError, MissingP4Object


def _topology_p4info(config) -> p4info_pb2.P4Info | None:
    """The P4Info the topology names for this target (None: it names
    none); one that does not compile or parse is a TopologyError, the
    command's error (exit 2), not this target's row."""
    if config.p4info is None and config.p4 is None:
        return None
    return config.read_p4info()


async def drops(reader) -> dict:
    """Drops by reason (those that happened): the drop counter's cells."""
    info = reader.schema.counters.get("drop_counter")
    if info is None:
        raise MissingP4Object(reader.name, "counter", "drop_counter")
    found = await reader.read_raw(p4r.Entity(counter_entry=p4r.CounterEntry(
        counter_id=info.id)))
    cells = sorted((e.counter_entry.index.index, e.counter_entry.data) for e in found)
    return {counters.DROP_REASONS.get(i, f"reason_{i}"): {"packets": d.packet_count,
                                                          "bytes": d.byte_count}
            for i, d in cells if d.packet_count or d.byte_count}


async def drb_counts(reader, config) -> dict:
    """dl_drb's and ul_bearer's entry counts: from the control socket's
    table_count when the topology names it (a number each; counting over
    P4Runtime has the target serve every entry, ~0.1 s per 65,536), else
    counted over P4Runtime (drbs.counts)."""
    tables = [reader.schema.tables.get(table) for table in drbs.DRB_TABLES]
    if config.control is not None and None not in tables:
        try:
            replies = await asyncio.gather(*(control_socket.request(
                config, {"cmd": "table_count", "table": info.name}) for info in tables))
            return {table: reply["entries"] for table, reply in zip(drbs.DRB_TABLES, replies)}
        except GnbctlError:
            pass    # an older runtime, or its control socket gone: count over P4Runtime
    return await drbs.counts(reader)


async def target_status(topology, config) -> dict:
    row = {"target": config.name, "role": config.role, "address": config.address,
           "device_id": config.device_id}
    expected = _topology_p4info(config)
    try:
        async with targets.reading(topology, [config]) as (reader,):
            schema = reader.schema
            row.update(reachable=True, program=schema.name or None,
                       pipeline_matches_topology=(None if expected is None
                                                  else expected == schema.p4info))
            parts = {"primary": targets.primary(reader, topology.timeout),
                     "drbs": drb_counts(reader, config), "drops": drops(reader)}
            if config.role == "nic" and reader.has_table("offload_bucket"):
                parts["offload"] = offload.show(reader, topology.hosts_behind(config.name))
            found = dict(zip(parts, await asyncio.gather(*parts.values())))
            primary = found.pop("primary")
            # the election id of the controller that is primary now; None: none is
            row["primary"] = primary.election_id if primary.exists else None
            row["counters"] = {"drops": found.pop("drops")}     # as counters.read has them
            row.update(found)
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
