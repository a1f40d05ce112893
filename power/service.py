"""The gRPC servicer of power/proto/power.proto (package power.v1): each
call asks the Sidecar (power/sidecar.py) and turns its dicts into the
messages, and its exceptions into status codes:

| exception | status |
|---|---|
| NotFound (unknown target or lcore) | NOT_FOUND |
| InvalidArgument (no target name, no mode, unknown power source, a consolidation policy off its rules) | INVALID_ARGUMENT |
| TargetRefused (the runtime's {"ok": false}: a bad mode or threshold) | INVALID_ARGUMENT with the runtime's message; NOT_FOUND when its code is ENOENT |
| TargetUnavailable (no answer on the control socket) | UNAVAILABLE |
| MalformedReply (not the contract's shape) | INTERNAL |

The stubs are generated at run time (controller/grpc_stubs.py)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from controller import grpc_stubs
from power import consolidation
from power.targets import (InvalidArgument, MalformedReply, NotFound, TargetRefused,
                           TargetUnavailable)

PROTO = Path(__file__).resolve().parent / "proto" / "power.proto"


def stubs():
    """(power_pb2, power_pb2_grpc), generated on first use."""
    return grpc_stubs.stubs(PROTO)


def _status(e: Exception) -> grpc.StatusCode:
    if isinstance(e, NotFound):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(e, TargetRefused):
        return grpc.StatusCode.NOT_FOUND if e.code == "ENOENT" else \
            grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(e, InvalidArgument):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(e, TargetUnavailable):
        return grpc.StatusCode.UNAVAILABLE
    return grpc.StatusCode.INTERNAL


_ERRORS = (NotFound, InvalidArgument, TargetRefused, TargetUnavailable, MalformedReply)


def _lcore_message(pb2, lc: dict):
    return pb2.LcoreTelemetry(
        **{k: lc[k] for k in ("lcore", "tid", "mode", "pstate", "freq_mhz",
                              "pstate_transitions", "polls", "empty_polls", "packets",
                              "busy_ns", "paused_ns", "asleep_ns", "pauses", "sleeps",
                              "interrupt_wakeups", "pstate_residency_ns", "cpu_time_ns",
                              "thresholds", "work_ns")},
        proc=pb2.ProcCpuTime(**lc["proc"]), model=pb2.ModelEstimate(**lc["model"]))


def target_message(pb2, row: dict):
    if not row["reachable"]:
        return pb2.TargetTelemetry(name=row["name"], control=row["control"], reachable=False,
                                   error=row["error"])
    return pb2.TargetTelemetry(
        name=row["name"], control=row["control"], reachable=True, pid=row["pid"],
        backends=pb2.Backends(**row["backends"]), pstates_mhz=row["pstates_mhz"],
        thresholds=row["thresholds"], lcores=[_lcore_message(pb2, lc) for lc in row["lcores"]],
        modelled_watts=row["modelled_watts"], window_s=row["window_s"])


def consolidation_message(pb2, policy: dict):
    return pb2.Consolidation(enabled=policy["enabled"],
                             thresholds=pb2.ConsolidationThresholds(**policy["thresholds"]),
                             changed_ns=policy["changed_ns"])


class PowerServicer:
    def __init__(self, sidecar, pb2):
        self.sidecar = sidecar
        self.pb2 = pb2

    async def _call(self, context, coroutine):
        try:
            return await coroutine
        except _ERRORS as e:
            await context.abort(_status(e), str(e))

    async def _telemetry(self, context, target: str):
        now, rows = await self._call(context, self.sidecar.telemetry(target))
        return self.pb2.Telemetry(time_ns=now,
                                  targets=[target_message(self.pb2, r) for r in rows])

    async def GetTelemetry(self, request, context):
        return await self._telemetry(context, request.target)

    async def StreamTelemetry(self, request, context):
        period = request.period_ms / 1000 if request.period_ms else self.sidecar.period_s
        while True:
            yield await self._telemetry(context, request.target)
            await asyncio.sleep(period)

    async def SetMode(self, request, context):
        lcore = request.lcore if request.HasField("lcore") else None
        lcores = await self._call(context, self.sidecar.set_mode(request.target, request.mode,
                                                                 lcore))
        return self.pb2.SetModeResponse(target=request.target, mode=request.mode,
                                        lcores=lcores)

    async def SetThresholds(self, request, context):
        lcore = request.lcore if request.HasField("lcore") else None
        thresholds = await self._call(context, self.sidecar.set_thresholds(
            request.target, dict(request.thresholds), lcore))
        return self.pb2.SetThresholdsResponse(target=request.target, thresholds=thresholds)

    async def ReadPower(self, request, context):
        now, readings = await self._call(context, self.sidecar.read_power(request.source,
                                                                          request.target))
        fields = set(self.pb2.PowerReading.DESCRIPTOR.fields_by_name)
        return self.pb2.ReadPowerResponse(
            time_ns=now, sources=self.sidecar.meters.sources,
            readings=[self.pb2.PowerReading(**{k: v for k, v in r.items()
                                               if k in fields and v is not None})
                      for r in readings])

    async def GetConsolidation(self, request, context):
        return consolidation_message(self.pb2, await self._call(
            context, self.sidecar.get_consolidation()))

    async def SetConsolidation(self, request, context):
        changes = {f: getattr(request, f) for f in ("enabled", *consolidation.FIELDS)
                   if request.HasField(f)}
        return consolidation_message(self.pb2, await self._call(
            context, self.sidecar.set_consolidation(changes)))


def add_to_server(sidecar, server) -> None:
    pb2, pb2_grpc = stubs()
    pb2_grpc.add_PowerServicer_to_server(PowerServicer(sidecar, pb2), server)
