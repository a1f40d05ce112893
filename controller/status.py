"""`gnbctl status`: per target, whether it answers, who is primary, which
pipeline runs (and whether it is the topology's), DRB and offload entries,
drop totals. An unreachable target is a row, not an abort."""
from __future__ import annotations

import finsy as fy
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from controller import counters, drbs, offload, targets
from controller.errors import GnbctlError


def _topology_p4info(config) -> p4info_pb2.P4Info | None:
    try:
        path = config.p4info_path()
    except GnbctlError:
        return None
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


async def target_status(topology, config) -> dict:
    row = {"target": config.name, "role": config.role, "address": config.address,
           "device_id": config.device_id}
    try:
        async with targets.session(topology, [config]) as (target,):
            schema = target.schema
            expected = _topology_p4info(config)
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
        row.update(reachable=False, error=str(e))
    return row
