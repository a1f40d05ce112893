"""The sidecar's targets: every data-plane process it governs, reached on
its --control socket (JSON lines over a UNIX stream socket, the runtime's
`power`, `power_mode` and `power_thresholds` commands:
/work/notes/power_interface.md, docs/architecture.md).

The socket client is the one the tests and the STF runner use
(t4p4s/stf/control.py's ControlClient, blocking), run in a worker thread
with one connection per target, opened again after any failure. The
runtime's pid comes from the connection (SO_PEERCRED), so each polling
thread's CPU time is read from /proc/PID/task/TID.

Each target keeps its recent samples (the `power` reply, the /proc CPU
times and the time); telemetry() turns the newest into windowed values
against the newest sample at least min_age_s older: CPU share, the
model's estimate (power/model.py)."""
from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from power import model
from power.meters import ThreadCpu, thread_cpu
from t4p4s.stf.control import ControlClient, ControlError

REQUEST_TIMEOUT_S = 2.0
HISTORY = 64

LCORE_COUNTERS = ("pstate_transitions", "polls", "empty_polls", "packets", "busy_ns",
                  "work_ns", "paused_ns", "asleep_ns", "pauses", "sleeps",
                  "interrupt_wakeups", "cpu_time_ns")
LCORE_FIELDS = ("lcore", "tid", "mode", "pstate", "freq_mhz", *LCORE_COUNTERS,
                "pstate_residency_ns", "thresholds")


class TargetUnavailable(Exception):
    """The target does not answer on its control socket."""


class TargetRefused(Exception):
    """The runtime answered {"ok": false}: str() is its message; `code` its
    error code when it gave one."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


class MalformedReply(Exception):
    """A reply that is not the contract's shape."""


def refusal(reply: dict) -> TargetRefused:
    """The runtime's {"ok": false, "error": ..., "message": ...} as one message."""
    error, message = reply.get("error"), reply.get("message")
    text = ": ".join(str(p) for p in (error, message) if p) or "refused (no reason given)"
    return TargetRefused(text, error if message else None)


def _uint(where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedReply(f"{where}: {value!r} is not an unsigned integer")
    return value


def _thresholds(where: str, value) -> dict[str, int]:
    if not isinstance(value, dict):
        raise MalformedReply(f"{where}: not an object")
    return {str(k): _uint(f"{where}.{k}", v) for k, v in value.items()}


def parse_power(reply: dict) -> dict:
    """The `power` reply checked against the contract: backends, pstates_mhz,
    thresholds and lcores with every field (MalformedReply names the first
    that is missing or of the wrong type)."""
    for key in ("backends", "pstates_mhz", "thresholds", "lcores"):
        if key not in reply:
            raise MalformedReply(f"the power reply has no {key!r}")
    backends = reply["backends"]
    if not isinstance(backends, dict) or not all(isinstance(backends.get(k), str)
                                                 for k in ("frequency", "pause", "sleep")):
        raise MalformedReply(f"backends: {backends!r} is not frequency, pause, sleep strings")
    pstates = [_uint("pstates_mhz", f) for f in reply["pstates_mhz"]]
    lcores = []
    for i, raw in enumerate(reply["lcores"]):
        where = f"lcores[{i}]"
        missing = [f for f in LCORE_FIELDS if f not in raw]
        if missing:
            raise MalformedReply(f"{where} has no {', '.join(missing)}")
        lcore = {k: _uint(f"{where}.{k}", raw[k])
                 for k in ("lcore", "tid", "pstate", "freq_mhz", *LCORE_COUNTERS)}
        if lcore["work_ns"] > lcore["busy_ns"]:
            raise MalformedReply(f"{where}.work_ns: {lcore['work_ns']} is more than busy_ns "
                                 f"{lcore['busy_ns']} (busy is work and empty polls)")
        if not isinstance(raw["mode"], str):
            raise MalformedReply(f"{where}.mode: {raw['mode']!r} is not a string")
        lcore["mode"] = raw["mode"]
        lcore["pstate_residency_ns"] = [_uint(f"{where}.pstate_residency_ns", v)
                                        for v in raw["pstate_residency_ns"]]
        lcore["thresholds"] = _thresholds(f"{where}.thresholds", raw["thresholds"])
        lcores.append(lcore)
    return {"backends": dict(backends), "pstates_mhz": pstates,
            "thresholds": _thresholds("thresholds", reply["thresholds"]), "lcores": lcores}


@dataclass
class Sample:
    """One poll of a target: monotonic and wall time, the parsed `power`
    reply, each polling thread's /proc CPU time by tid."""
    mono: float
    wall_ns: int
    power: dict
    proc: dict[int, ThreadCpu | None] = field(default_factory=dict)


def _peer_pid(sock: socket.socket) -> int | None:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[0] or None
    except OSError:
        return None


class Target:
    """One process the sidecar governs."""

    def __init__(self, name: str, control: Path | str, proc_root: Path | str = "/proc"):
        self.name = name
        self.control = Path(control)
        self.proc_root = Path(proc_root)
        self.pid: int | None = None
        self.samples: deque[Sample] = deque(maxlen=HISTORY)
        self._client: ControlClient | None = None
        self._lock = asyncio.Lock()

    def _request_blocking(self, request: dict) -> dict:
        if self._client is None:
            self._client = ControlClient(self.control, timeout=REQUEST_TIMEOUT_S)
            self.pid = _peer_pid(self._client.sock)
        try:
            return self._client.request(request)
        except ControlError:
            raise                      # it answered: the connection is fine
        except BaseException:
            self._close()
            raise

    def _close(self):
        if self._client is not None:
            self._client.close()
            self._client = None

    async def request(self, request: dict) -> dict:
        """One command; its reply when ok. TargetRefused when the runtime
        refuses it, TargetUnavailable when it does not answer."""
        async with self._lock:
            try:
                return await asyncio.to_thread(self._request_blocking, request)
            except ControlError as e:
                raise refusal(e.reply) from None
            except Exception as e:     # OSError (no socket, timeout), the socket closed
                raise TargetUnavailable(f"{self.name}: no answer on its control socket "
                                        f"{self.control}: {e}") from None

    async def sample(self) -> Sample:
        """`power` now, with the threads' CPU time; kept in the history."""
        reply = await self.request({"cmd": "power"})
        power = parse_power(reply)
        proc = {lc["tid"]: thread_cpu(self.pid or lc["tid"], lc["tid"], self.proc_root)
                for lc in power["lcores"]}
        sample = Sample(time.monotonic(), time.time_ns(), power, proc)
        self.samples.append(sample)
        return sample

    def base(self, sample: Sample, min_age_s: float) -> Sample | None:
        """The newest kept sample at least min_age_s older than `sample`
        (None: there is none; windowed values are then since start)."""
        for older in reversed(self.samples):
            if sample.mono - older.mono >= min_age_s and older is not sample:
                return older
        return None

    def close(self):
        self._close()


def _delta(new: int, old: int) -> int:
    # a restarted process starts its counters again: the window is then since start
    return new - old if new >= old else new


def telemetry(target: Target, sample: Sample, base: Sample | None) -> dict:
    """The target's telemetry (TargetTelemetry's fields) from a sample and
    its base: counters as the runtime gave them; CPU share and the model
    over the window between the two, or since start without a base."""
    power = sample.power
    pause_backend = power["backends"]["pause"]
    old_lcores = {lc["lcore"]: lc for lc in base.power["lcores"]} if base else {}
    window_s = sample.mono - base.mono if base else 0.0
    lcores = []
    for lc in power["lcores"]:
        old = old_lcores.get(lc["lcore"])
        if old is not None and old["tid"] != lc["tid"]:
            old = None                  # another process since: since start
        d = ({k: _delta(lc[k], old[k]) for k in ("busy_ns", "paused_ns", "asleep_ns", "sleeps")}
             if old else {k: lc[k] for k in ("busy_ns", "paused_ns", "asleep_ns", "sleeps")})
        residency = lc["pstate_residency_ns"]
        if old:
            before = old["pstate_residency_ns"]
            residency = [_delta(r, before[i] if i < len(before) else 0)
                         for i, r in enumerate(residency)]
        estimate = model.estimate(d["busy_ns"], d["paused_ns"], d["asleep_ns"], d["sleeps"],
                                  residency, lc["pstate"], power["pstates_mhz"], pause_backend)
        proc = _proc(sample.proc.get(lc["tid"]),
                     base.proc.get(lc["tid"]) if base and old else None, window_s)
        lcores.append({**lc, "proc": proc, "model": estimate.__dict__})
    return {"name": target.name, "control": str(target.control), "reachable": True,
            "error": "", "pid": target.pid or 0, "backends": power["backends"],
            "pstates_mhz": power["pstates_mhz"], "thresholds": power["thresholds"],
            "lcores": lcores, "modelled_watts": sum(lc["model"]["watts"] for lc in lcores),
            "window_s": window_s}


def _proc(now: ThreadCpu | None, before: ThreadCpu | None, window_s: float) -> dict:
    if now is None:
        return {"available": False}
    share = 0.0
    if before is not None and window_s > 0:
        share = max(now.run_ns - before.run_ns, 0) / 1e9 / window_s
    return {"available": True, "run_ns": now.run_ns, "wait_ns": now.wait_ns,
            "timeslices": now.timeslices, "utime_ns": now.utime_ns,
            "stime_ns": now.stime_ns, "cpu": now.cpu, "cpu_share": share}


def unreachable(target: Target, error: str) -> dict:
    return {"name": target.name, "control": str(target.control), "reachable": False,
            "error": error}


class NotFound(Exception):
    """An unknown target or lcore."""


class InvalidArgument(Exception):
    """A request the sidecar refuses before asking any target."""
