"""The power governor sidecar's gRPC API (power/proto/power.proto) from
gnbctl: a client, and what `gnbctl status` asks of it.

The stubs are the sidecar's own (power/service.py `stubs()`, generated at
first use by controller/grpc_stubs.py). `Power` is an asyncio client
(grpc.aio) whose methods answer plain dicts (the messages' fields by
name) and raise the controller's errors with the status named:
`PowerUnreachable` (a TargetUnreachable, exit code 3) when the sidecar
does not answer in time or answers UNAVAILABLE (a target it governs does
not answer on its control socket); `PowerError` (exit code 1) for any
other status, its `code` the status name (NOT_FOUND: an unknown target or
lcore; INVALID_ARGUMENT: a bad mode or threshold, with the runtime's
message, or a consolidation policy off its rules)."""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

from controller import offload, targets
from controller.errors import GnbctlError
from controller.grpc_stubs import to_dict
from controller.sidecar_client import SidecarClient, SidecarError, SidecarUnreachable
from power.meters import METER_SOURCES     # a machine's meters, best first

DEFAULT_TIMEOUT_S = 5.0


class PowerError(SidecarError):
    """The sidecar answered with an error status; `code` is its name."""


class PowerUnreachable(SidecarUnreachable):
    """The sidecar did not answer in time, or answered UNAVAILABLE."""


def stubs():
    from power.service import stubs as power_stubs
    return power_stubs()


class Power(SidecarClient):
    """A client of one sidecar: `async with Power(address) as power: ...`."""

    table = "power"
    what = "the power sidecar"
    address_forms = '"unix:PATH" or "HOST:PORT"'
    stub = "PowerStub"
    error_type = PowerError
    unreachable = PowerUnreachable
    stubs = staticmethod(stubs)

    def __init__(self, address: str, name: str = "power", timeout: float = DEFAULT_TIMEOUT_S):
        super().__init__(address, name, timeout)

    def unavailable_message(self, code: str, details: str) -> str:
        # the sidecar's own UNAVAILABLE names the target that does not answer
        return f"{self.name} at {self.address}: {code}: {details}"

    async def telemetry(self, target: str = "") -> dict:
        """{"time_ns", "targets": [TargetTelemetry as a dict]}."""
        return to_dict(await self._unary("GetTelemetry",
                                         self.pb2.TelemetryRequest(target=target)))

    async def stream(self, target: str = "", period_ms: int = 0) -> AsyncIterator[dict]:
        """Telemetry every period until the caller stops iterating (which
        cancels the call)."""
        async for message in self._stream("StreamTelemetry", self.pb2.StreamTelemetryRequest(
                target=target, period_ms=period_ms)):
            yield to_dict(message)

    async def set_mode(self, target: str, mode: str, lcore: int | None = None) -> dict:
        return to_dict(await self._unary("SetMode", self.pb2.SetModeRequest(
            target=target, mode=mode, lcore=lcore)))

    async def set_thresholds(self, target: str, thresholds: dict[str, int],
                             lcore: int | None = None) -> dict:
        return to_dict(await self._unary("SetThresholds", self.pb2.SetThresholdsRequest(
            target=target, thresholds=thresholds, lcore=lcore)))

    async def read_power(self, source: str = "", target: str = "") -> dict:
        """{"time_ns", "readings", "sources"}."""
        return to_dict(await self._unary("ReadPower", self.pb2.ReadPowerRequest(
            source=source, target=target)))

    async def get_consolidation(self) -> dict:
        """The core consolidation policy: {"enabled", "thresholds":
        {"consolidate_below", "spread_above", "hold_s", "min_hosts"},
        "changed_ns"}."""
        return to_dict(await self._unary("GetConsolidation",
                                         self.pb2.GetConsolidationRequest()))

    async def set_consolidation(self, **fields) -> dict:
        """Sets the fields given (enabled, consolidate_below, spread_above,
        hold_s, min_hosts; None: left as it is), all or none: a value off
        the rules is a PowerError INVALID_ARGUMENT naming it. The policy
        afterwards, as get_consolidation()."""
        given = {k: v for k, v in fields.items() if v is not None}
        return to_dict(await self._unary("SetConsolidation",
                                         self.pb2.SetConsolidationRequest(**given)))


@contextlib.asynccontextmanager
async def connect(topology, timeout: float | None = None):
    """The topology's sidecar as a connected client (TopologyError without [power])."""
    async with Power.of(topology, timeout) as client:
        yield client


async def vf_spread(topology, nic) -> dict:
    """How NIC `nic`'s VF buckets are spread over its hosts now
    (controller/offload.py show(), read on its own) and how many
    no host of the topology has ("vf_buckets_on_nic"; None without a
    vf_bucket table); a NIC that cannot be read is a row with its error.
    Read without a session: no primary claimed, no write lock."""
    try:
        async with targets.reading(topology, [nic]) as (target,):
            shown = await offload.show(target, topology.hosts_behind(nic.name))
            has_vf_table = target.has_table("vf_bucket")
    except GnbctlError as e:
        return {"target": nic.name, "error": str(e)}
    on_hosts = sum(h["vf_buckets"] for h in shown["hosts"].values())
    shown["vf_buckets_on_nic"] = offload.VF_BUCKETS - on_hosts if has_vf_table else None
    return shown


async def consolidation(client: Power, topology, nics, changes: dict) -> dict:
    """The consolidation policy, after setting `changes` when any is not
    None (set_consolidation's fields), and each of `nics`' VF spread now:
    {"policy", "nics"}."""
    given = {k: v for k, v in changes.items() if v is not None}
    policy = (await client.set_consolidation(**given) if given
              else await client.get_consolidation())
    spreads = await asyncio.gather(*(vf_spread(topology, n) for n in nics))
    return {"policy": policy, "nics": list(spreads)}


def power_source(sources: list[str]) -> str:
    """What the machine's power figures come from: its best meter, else the model."""
    return next((s for s in METER_SOURCES if s in sources), "model")


STATUS_TIMEOUT_S = 2.0


async def status(topology) -> dict:
    """The sidecar's row for `gnbctl status` (role "power"): whether it
    answers, its power sources, and per target the lcores' modes
    ({"targets": {name: {"modes", "reachable", "modelled_watts"}}})."""
    config = topology.power
    row = {"target": config.name, "role": "power", "address": config.address}
    try:
        async with connect(topology, STATUS_TIMEOUT_S) as client:
            telemetry = await client.telemetry()
            power = await client.read_power("model")
    except GnbctlError as e:
        row.update(reachable=False, error=str(e))
        return row
    row.update(reachable=True, sources=power["sources"],
               source=power_source(power["sources"]),
               targets={t["name"]: {"reachable": t["reachable"],
                                    "modes": sorted({lc["mode"] for lc in t["lcores"]}),
                                    "modelled_watts": t["modelled_watts"],
                                    **({} if t["reachable"] else {"error": t["error"]})}
                        for t in telemetry["targets"]})
    return row
