"""`gnbctl pipeline push`: each target gets the P4Info its topology entry
names (VERIFY_AND_COMMIT, which resets the target's state: DRBs, offload
split, counters, and registers but for those a target keeps in a registers
file: the NIC's SNs then continue).

Everything that can be checked is checked on every target before any is
changed, so a mistake in the topology or an unreachable target leaves
every target as it was:
  1. each P4Info file is read and fits its role (a NIC program has the
     tables gnbctl drives on a NIC, a host program has none of them);
  2. every target answers and we are its primary;
  3. every target accepts its P4Info with VERIFY (the target compares it
     with the program it runs; nothing changes).
Only then is each target committed, one after the other. A commit can
still fail (the target dies or another controller takes over in between):
the error names the targets already pushed, which have been reset, and
those that were not; running the push again completes it."""
from __future__ import annotations

import finsy as fy
import grpc
from finsy.p4client import P4RpcStatus
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from google.protobuf import text_format

from controller import targets
from controller.errors import GnbctlError, PipelineRejected, TargetUnreachable, TopologyError
from controller.topology import TargetConfig, Topology

# The tables gnbctl writes only on a NIC (`offload set`): a NIC program
# needs them, a host program must not have them.
NIC_TABLES = ("offload_bucket", "host_return_port")
_SET_PIPELINE_METHOD = "/p4.v1.P4Runtime/SetForwardingPipelineConfig"


def role_mismatch(role: str, schema: fy.P4Schema) -> str | None:
    """Why a program with this P4Info cannot serve `role`, or None."""
    present = [t for t in NIC_TABLES if schema.tables.get(t) is not None]
    if role == "nic" and len(present) < len(NIC_TABLES):
        missing = [t for t in NIC_TABLES if t not in present]
        return f"it has no table {', '.join(missing)}, so it is not a NIC program"
    if role == "host" and present:
        return f"it has the NIC's table {', '.join(present)}, so it is not a host program"
    return None


def topology_schema(config: TargetConfig) -> fy.P4Schema:
    """The P4Info the topology names for this target, checked against its
    role. The device config is empty: each target runs the program it was
    built from."""
    path = config.p4info_path()
    try:
        schema = fy.P4Schema(path, b"")
    except text_format.ParseError as e:
        raise TopologyError(f"{config.name}: {path} is no P4Info: {e}") from None
    why = role_mismatch(config.role, schema)
    if why:
        raise TopologyError(f"{config.name}: role {config.role}, but its P4Info {path} is "
                            f"program {schema.name or '(unnamed)'}: {why}")
    return schema


async def _set_pipeline(target: targets.Target, schema: fy.P4Schema, action) -> None:
    request = p4r.SetForwardingPipelineConfigRequest(
        device_id=target.config.device_id, action=action,
        config=schema.get_pipeline_config())
    request.election_id.high = target.election_id >> 64
    request.election_id.low = target.election_id & ((1 << 64) - 1)
    call = target.channel.unary_unary(
        _SET_PIPELINE_METHOD, request_serializer=p4r.SetForwardingPipelineConfigRequest
        .SerializeToString,
        response_deserializer=p4r.SetForwardingPipelineConfigResponse.FromString)
    try:
        await call(request, timeout=targets.RPC_TIMEOUT)
    except grpc.aio.AioRpcError as e:
        status = P4RpcStatus.from_rpc_error(e)
        # one line: the target's message goes on with a diff of the P4Infos
        reason = (status.message or "").partition("\n")[0].rstrip(":")
        step = "VERIFY" if action == p4r.SetForwardingPipelineConfigRequest.VERIFY \
            else "VERIFY_AND_COMMIT"
        text = (f"{target.name}: {step} of program {schema.name} failed: "
                f"{status.code.name}: {reason}")
        if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise TargetUnreachable(text) from None
        raise PipelineRejected(text) from None


async def push(topology: Topology, configs: list[TargetConfig]) -> list[dict]:
    """The topology's pipeline on every target in configs, or on none of
    them when a check fails (see the module's doc for what a failed commit
    leaves)."""
    schemas = {c.name: topology_schema(c) for c in configs}
    Request = p4r.SetForwardingPipelineConfigRequest
    async with targets.session(topology, configs) as connected:
        await targets.on_every(
            connected, lambda t: _set_pipeline(t, schemas[t.name], Request.VERIFY))
        pushed = []
        for target in connected:
            try:
                await _set_pipeline(target, schemas[target.name], Request.VERIFY_AND_COMMIT)
            except GnbctlError as e:
                not_pushed = [t.name for t in connected if t not in pushed]
                error = GnbctlError(f"{e}; already pushed (state reset): "
                                    f"{', '.join(t.name for t in pushed) or 'none'}; "
                                    f"not pushed: {', '.join(not_pushed)}; "
                                    "push again to complete it")
                error.exit_code = e.exit_code
                raise error from None
            pushed.append(target)
    return [{"target": c.name, "program": schemas[c.name].name,
             "cookie": schemas[c.name].p4cookie} for c in configs]
