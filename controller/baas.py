"""The BaaS's gRPC API (baas/proto/baas.proto) from Python: the generated
stubs and a client.

The stubs are generated at first use, not committed: `stubs()` is
controller/grpc_stubs.py's for baas/proto/baas.proto (build/python/baas/<hash>/,
imported as `baas_pb2` and `baas_pb2_grpc`).

`Baas` is an asyncio client (grpc.aio). Its methods answer plain dicts and
lists (the messages' fields by name; 64-bit counters stay integers, event
types lose their EVENT_TYPE_ prefix), and raise the controller's errors
with the gRPC status code named: `BaasUnreachable` (a TargetUnreachable,
exit code 3) when nothing answers at the address, the deadline passes or
the BaaS answers UNAVAILABLE (an lcore did not answer, it is stopping);
`BaasError` (exit code 1) for any other status, its `code` the status name
(NOT_FOUND: the DRB has no state; INVALID_ARGUMENT: a value out of range)."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import AsyncIterator, NamedTuple

import grpc

from controller import grpc_stubs
from controller.errors import GnbctlError
from controller.grpc_stubs import to_dict
from controller.sidecar_client import SidecarClient, SidecarError, SidecarUnreachable

REPO = Path(__file__).resolve().parents[1]
PROTO = REPO / "baas" / "proto" / "baas.proto"
MAX_SNS = 262144                       # ListSns' bound (baas/grpc/service.h kMaxSns)
DEFAULT_TIMEOUT_S = 5.0
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 << 20)]
# the messages of our own server's UNAVAILABLE (baas/grpc/status.cc): it answered
_SERVER_UNAVAILABLE = ("an lcore did not answer", "the BaaS is stopping")


# ---- stubs -------------------------------------------------------------------

def stubs():
    """(baas_pb2, baas_pb2_grpc), generated on first use (controller/grpc_stubs.py)."""
    return grpc_stubs.stubs(PROTO)


# ---- keys and messages -------------------------------------------------------

class DrbKey(NamedTuple):
    """A DRB as the BaaS names it (the bearer shim's ue_id and lcid)."""
    ue_id: int
    lcid: int

    @classmethod
    def parse(cls, text: str) -> "DrbKey":
        """"UE:LCID" (decimal or 0x-hex each); ValueError says what is wrong."""
        parts = text.split(":")
        if len(parts) != 2:
            raise ValueError(f"{text!r}: a DRB is UE_ID:LCID")
        try:
            ue_id, lcid = (int(p, 0) for p in parts)
        except ValueError:
            raise ValueError(f"{text!r}: UE_ID and LCID are integers") from None
        if not 0 <= ue_id <= 0xFFFF:
            raise ValueError(f"{text!r}: ue_id {ue_id} does not fit in 16 bits")
        if not 0 <= lcid <= 0xFF:
            raise ValueError(f"{text!r}: lcid {lcid} does not fit in 8 bits")
        return cls(ue_id, lcid)

    def __str__(self) -> str:
        return f"{self.ue_id}:{self.lcid}"


CONFIG_FIELDS = ("t_poll_retransmit_ms", "max_retx_threshold", "drb_max_pdus", "max_pdus")


def _event(item) -> dict:
    if item.HasField("lost"):
        return {"lost": item.lost.count}
    event = to_dict(item.event)
    event["type"] = event["type"].removeprefix("EVENT_TYPE_")
    return event


# ---- errors ------------------------------------------------------------------

class BaasError(SidecarError):
    """The BaaS answered with an error status; `code` is its name."""


class BaasUnreachable(SidecarUnreachable):
    """Nothing answered at the BaaS's address in time, or it answered
    UNAVAILABLE; `code` is the status name."""


# ---- the client --------------------------------------------------------------

class Baas(SidecarClient):
    """A client of one BaaS: `async with Baas(address) as baas: ...`.
    `name` prefixes every error; `timeout` is each call's deadline."""

    table = "baas"
    what = "the BaaS"
    address_forms = '"HOST:PORT"'
    stub = "BaasStub"
    channel_options = _CHANNEL_OPTIONS
    error_type = BaasError
    unreachable = BaasUnreachable
    stubs = staticmethod(stubs)

    def __init__(self, address: str, name: str = "baas", timeout: float = DEFAULT_TIMEOUT_S):
        super().__init__(address, name, timeout)

    def unavailable_message(self, code: str, details: str) -> str:
        if details.startswith(_SERVER_UNAVAILABLE):
            return f"{self.name}: the BaaS at {self.address} is unavailable: {code}: {details}"
        return super().unavailable_message(code, details)

    def _key(self, key) -> object:
        return None if key is None else self.pb2.DrbKey(ue_id=key[0], lcid=key[1])

    async def stats(self, drb=None) -> dict:
        """The process's statistics (GlobalStats), or DRB (ue_id, lcid)'s (DrbInfo)."""
        response = await self._unary("GetStats", self.pb2.StatsRequest(drb=self._key(drb)))
        return to_dict(getattr(response, response.WhichOneof("stats")))

    async def list_drbs(self) -> list[dict]:
        """Every DRB with state (DrbInfo), in (ue_id, lcid) order."""
        drbs = []
        try:
            async for response in self._stub.ListDrbs(self.pb2.ListDrbsRequest(),
                                                      timeout=self.timeout):
                drbs.extend(to_dict(d) for d in response.drbs)
        except grpc.aio.AioRpcError as e:
            raise self.error(e) from None
        return drbs

    async def list_sns(self, drb, max: int = 0) -> dict:
        """{"drb", "sns" (from TX_Next_Ack upwards), "truncated"}."""
        return to_dict(await self._unary(
            "ListSns", self.pb2.ListSnsRequest(drb=self._key(drb), max=max)))

    async def get_config(self, drb=None) -> dict:
        """The defaults, or the DRB's own values: {field: value}."""
        response = await self._unary("GetConfig",
                                     self.pb2.ConfigRequest(drb=self._key(drb)))
        return to_dict(response.config)

    async def set_config(self, drb=None, **fields) -> dict:
        """Changes only the fields given (CONFIG_FIELDS); answers the config
        as it is afterwards."""
        unknown = set(fields) - set(CONFIG_FIELDS)
        if unknown:
            raise TypeError(f"no config field {', '.join(sorted(unknown))}")
        update = self.pb2.ConfigUpdate(**{k: v for k, v in fields.items() if v is not None})
        response = await self._unary(
            "SetConfig", self.pb2.SetConfigRequest(drb=self._key(drb), config=update))
        return to_dict(response.config)

    async def flush(self, drb=None, all: bool = False) -> int:
        """Releases DRB (ue_id, lcid)'s PDUs, or every DRB's (all): how many."""
        response = await self._unary("Flush", self.pb2.FlushRequest(drb=self._key(drb),
                                                                    all=all))
        return response.released

    async def events(self, follow: bool = False, from_seq: int = 1) -> AsyncIterator[dict]:
        """The event log from event from_seq on (1: the oldest kept, 0: only
        new ones): each event as a dict, or {"lost": N} where the log
        overwrote N events this reader had not read. Without follow it ends
        once it has caught up; with follow it waits for new events (no
        deadline) until the caller stops iterating, which cancels the call."""
        async for item in self._stream("Events", self.pb2.EventsRequest(
                from_seq=from_seq, follow=follow), None if follow else self.timeout):
            yield _event(item)


@contextlib.asynccontextmanager
async def connect(topology, timeout: float | None = None):
    """The topology's BaaS as a connected client (TopologyError without [baas])."""
    async with Baas.of(topology, timeout) as client:
        yield client


# ---- what other commands ask of the BaaS -------------------------------------

async def flush_deleted(topology, drb: DrbKey) -> dict:
    """After `drb del`: flushes the deleted DRB in the topology's BaaS.
    {"drb": "UE:LCID", "released": N}; NOT_FOUND (nothing was buffered)
    is released 0. A BaaS that fails (down, or any other error) does not
    fail the delete, which is done: {"drb", "warning": why}."""
    result = {"drb": str(drb)}
    try:
        async with connect(topology) as client:
            result["released"] = await client.flush(drb)
    except BaasError as e:
        if e.code != "NOT_FOUND":
            result["warning"] = f"DRB {drb} not flushed in the BaaS: {e}"
        else:
            result["released"] = 0
    except GnbctlError as e:
        result["warning"] = f"DRB {drb} not flushed in the BaaS: {e}"
    return result

