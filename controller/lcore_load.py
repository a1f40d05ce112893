"""Lcore load of one target: per forwarding lcore, its polls (one per rx
queue and round), the empty ones, its packets, and how busy it is, from
its control socket's `power` command (topology key `control`; the same
figures DPDK telemetry's /t4p4s/lcores gives).

Busy share is work over all of the lcore's time: `work_ns`, the rounds
that received packets, over `total_ns`, those and the empty rounds, the
pauses and the sleeps. A busy-polling lcore without traffic is 100% on
the CPU but 0% busy here: empty polls are no load. Counters are since the
lcore started; the shares are over a window when one is asked for (two
readings window_s apart), else since start too.

`gnbctl status` shows it; metrics (Prometheus) reads it with window_s 0
and exports the counters."""
from __future__ import annotations

import asyncio
import time

from controller import control_socket

COUNTERS = ("polls", "empty_polls", "packets", "work_ns", "total_ns")


def _lcores(reply: dict) -> dict[int, dict]:
    """lcore id -> its counters (and mode and thread id) from `power`."""
    lcores = {}
    for lc in reply.get("lcores", []):
        lcores[lc["lcore"]] = {
            "lcore": lc["lcore"], "mode": lc["mode"], "tid": lc["tid"],
            "polls": lc["polls"], "empty_polls": lc["empty_polls"], "packets": lc["packets"],
            "work_ns": lc["work_ns"],
            # busy_ns is work and empty rounds (power_stats.c)
            "total_ns": lc["busy_ns"] + lc["paused_ns"] + lc["asleep_ns"]}
    return lcores


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole > 0 else None


async def read(config, window_s: float = 0.0) -> dict | None:
    """None when the topology gives the target no `control` socket; else
    {"target", "window_s" (None: shares since start), "lcores": [{"lcore",
    "mode", "polls", "empty_polls", "packets", "work_ns", "total_ns",
    "busy_share", "empty_share"}]}, shares 0..1 (None before the lcore ran).
    TargetUnreachable (exit code 3) when the socket does not answer,
    GnbctlError when the runtime refuses."""
    if config.control is None:
        return None
    before = _lcores(await control_socket.request(config, {"cmd": "power"}))
    started = time.monotonic()
    now, window = before, None
    if window_s > 0:
        await asyncio.sleep(window_s)
        now = _lcores(await control_socket.request(config, {"cmd": "power"}))
        window = round(time.monotonic() - started, 3)
    lcores = []
    for lcore, lc in sorted(now.items()):
        base = before.get(lcore) if window is not None else None
        if base is None or base["tid"] != lc["tid"] or base["polls"] > lc["polls"]:
            # a restart in between: since its start
            base = {k: 0 for k in COUNTERS}
        delta = {k: lc[k] - base[k] for k in COUNTERS}
        lcores.append({**{k: lc[k] for k in ("lcore", "mode", *COUNTERS)},
                       "busy_share": _share(delta["work_ns"], delta["total_ns"]),
                       "empty_share": _share(delta["empty_polls"], delta["polls"])})
    return {"target": config.name, "window_s": window, "lcores": lcores}
