"""The power governor sidecar: `python -m power`.

One per machine. It polls every target's control socket (`power`) and the
machine's meters every --period-ms, keeps their recent samples, and serves
power/proto/power.proto over gRPC (power/service.py): telemetry on demand
and as a stream, governor modes and thresholds set per target or lcore
(passed to the runtime: the runtime owns them, the sidecar keeps no copy),
and power by source. It applies nothing itself: a target's frequency
backend, where it is real (rte_power), changes the P-state inside the
runtime. It also holds the core consolidation policy (power/consolidation.py:
--consolidate, --consolidate-thresholds, then GetConsolidation and
SetConsolidation), which the controller's `gnbctl run` applies to the NICs.

    python -m power --target host0=/run/host0/control.sock --grpc unix:/run/power.grpc
    python -m power --targets targets.toml --grpc 127.0.0.1:9700 --period-ms 100
    python -m power --target nic=/run/nic/control.sock --consolidate on \
        --consolidate-thresholds consolidate_below=0.4,hold_s=5

targets.toml:

    period_ms = 100                  # optional, as --period-ms
    grpc = "unix:/run/power.grpc"    # optional, as --grpc
    [[targets]]
    name = "nic"                     # as gnbctl's topology names it
    control = "/path/to/control.sock"

Once it listens it prints `power: gRPC server on ADDRESS` (port 0: the one
it got). SIGTERM or SIGINT stop it (exit 0)."""
from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
import tomllib
from pathlib import Path

from power import consolidation
from power import targets as targets_mod
from power.meters import METER_SOURCES, SOURCES, Meters
from power.targets import (InvalidArgument, MalformedReply, NotFound, Target, TargetRefused,
                           TargetUnavailable)

DEFAULT_PERIOD_MS = 100
DEFAULT_GRPC = "127.0.0.1:0"


class Sidecar:
    """The sidecar's state: its targets and meters, and what each gRPC
    call asks of them."""

    def __init__(self, targets: list[Target], meters: Meters, period_s: float,
                 policy: consolidation.Policy | None = None):
        names = [t.name for t in targets]
        if len(set(names)) != len(names):
            raise ValueError(f"target names must be unique: {names}")
        self.targets = {t.name: t for t in targets}
        self.meters = meters
        self.period_s = period_s
        self.consolidation = policy or consolidation.Policy()
        # windowed values span one to two periods
        self.min_age_s = period_s

    def target(self, name: str) -> Target:
        if not name:
            raise InvalidArgument("a target name is required")
        try:
            return self.targets[name]
        except KeyError:
            raise NotFound(f"no target {name!r} (the sidecar has "
                           f"{', '.join(self.targets) or 'none'})") from None

    def selected(self, name: str) -> list[Target]:
        return [self.target(name)] if name else list(self.targets.values())

    async def _one(self, target: Target, named: bool) -> dict:
        try:
            sample = await target.sample()
        except (TargetUnavailable, TargetRefused, MalformedReply) as e:
            if named:
                raise
            return targets_mod.unreachable(target, str(e))
        return targets_mod.telemetry(target, sample, target.base(sample, self.min_age_s))

    async def telemetry(self, name: str = "") -> tuple[int, list[dict]]:
        """(wall time ns, each selected target's telemetry, sampled now). A
        named target that does not answer raises; with every target, it is
        a row with reachable false."""
        selected = self.selected(name)
        now = time.time_ns()
        rows = await asyncio.gather(*(self._one(t, bool(name)) for t in selected))
        return now, list(rows)

    async def _lcores(self, target: Target, lcore: int | None) -> None:
        """NOT_FOUND unless the target has that lcore (asked now)."""
        if lcore is None:
            return
        sample = await target.sample()
        known = [lc["lcore"] for lc in sample.power["lcores"]]
        if lcore not in known:
            raise NotFound(f"{target.name} has no lcore {lcore} (its lcores: "
                           f"{', '.join(map(str, known)) or 'none'})")

    async def set_mode(self, name: str, mode: str, lcore: int | None) -> list[int]:
        target = self.target(name)
        if not mode:
            raise InvalidArgument("a mode is required")
        await self._lcores(target, lcore)
        request = {"cmd": "power_mode", "mode": mode}
        if lcore is not None:
            request["lcore"] = lcore
        reply = await target.request(request)
        return [int(v) for v in reply.get("lcores", [])]

    async def set_thresholds(self, name: str, thresholds: dict[str, int],
                             lcore: int | None) -> dict[str, int]:
        target = self.target(name)
        if not thresholds:
            raise InvalidArgument("no thresholds given")
        await self._lcores(target, lcore)
        request = {"cmd": "power_thresholds", "thresholds": dict(thresholds)}
        if lcore is not None:
            request["lcore"] = lcore
        reply = await target.request(request)
        return targets_mod._thresholds("thresholds", reply.get("thresholds", {}))

    async def read_power(self, source: str = "", name: str = "") -> tuple[int, list[dict]]:
        """(wall time ns, readings): the meters' and, per target, the
        model's watts and the polling threads' CPU time."""
        if source and source not in SOURCES:
            raise InvalidArgument(f"no power source {source!r} (sources: {', '.join(SOURCES)})")
        self.selected(name)             # NOT_FOUND for an unknown target
        now = time.time_ns()
        readings = []
        if source in ("", *METER_SOURCES):
            readings += [r.__dict__ | {"target": ""}
                         for r in self.meters.sample(time.monotonic(), self.min_age_s)
                         if source in ("", r.source)]
        if source in ("", "model", "cpu_time"):
            _, rows = await self.telemetry(name)
            for row in rows:
                readings += _target_readings(row, source)
        return now, readings

    async def get_consolidation(self) -> dict:
        return self.consolidation.as_dict()

    async def set_consolidation(self, changes: dict) -> dict:
        """The fields given, all or none (InvalidArgument names the field
        and its rule); the policy afterwards."""
        try:
            return self.consolidation.set(changes)
        except ValueError as e:
            raise InvalidArgument(str(e)) from None

    async def poll_forever(self, stop: asyncio.Event):
        """Every period: a sample of every target and meter (the windows'
        bases); a target that fails is tried again next period."""
        while not stop.is_set():
            try:
                await asyncio.gather(*(self._one(t, False) for t in self.targets.values()))
                self.meters.sample(time.monotonic(), self.min_age_s)
            except Exception as e:      # a bug: said, and the calls still served
                print(f"power: error in the periodic poll: {type(e).__name__}: {e}",
                      file=sys.stderr, flush=True)
            try:
                await asyncio.wait_for(stop.wait(), self.period_s)
            except asyncio.TimeoutError:
                pass

    def close(self):
        for target in self.targets.values():
            target.close()


def _target_readings(row: dict, source: str) -> list[dict]:
    name = row["name"]
    if not row["reachable"]:
        return [{"source": s, "name": name, "path": "", "target": name, "window_s": 0.0,
                 "note": f"unreachable: {row['error']}"}
                for s in ("model", "cpu_time") if source in ("", s)]
    out = []
    lcores = row["lcores"]
    if source in ("", "model"):
        out.append({"source": "model", "name": f"{name}: {len(lcores)} lcores",
                    "path": "", "target": name, "watts": row["modelled_watts"],
                    "window_s": min((lc["model"]["window_s"] for lc in lcores), default=0.0),
                    "note": "power/model.py: the lcores' cores above the machine's idle "
                            "(paper 002's constants)"})
    if source in ("", "cpu_time"):
        procs = [lc["proc"] for lc in lcores if lc["proc"]["available"]]
        out.append({"source": "cpu_time", "name": f"{name}: {len(procs)} polling threads",
                    "path": f"/proc/{row['pid']}/task/*/schedstat", "target": name,
                    "cpu_time_ns": sum(p["run_ns"] for p in procs),
                    "cpu_share": sum(p["cpu_share"] for p in procs),
                    "window_s": row["window_s"],
                    "note": "CPU seconds per second of the polling threads (1.0: a whole CPU)"
                    + ("" if row["window_s"] else "; share from the next sample on")})
    return out


# ---- configuration and entry point -------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m power", description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", type=Path, metavar="TOML",
                   help="the targets (and optionally period_ms, grpc) from a TOML file")
    p.add_argument("--target", action="append", default=[], metavar="NAME=CONTROL_SOCKET",
                   help="one target: its name and its --control socket (repeatable)")
    p.add_argument("--grpc", metavar="ADDRESS",
                   help=f"where to serve: HOST:PORT or unix:PATH (default {DEFAULT_GRPC})")
    p.add_argument("--period-ms", type=int, metavar="MS",
                   help=f"how often to poll targets and meters (default {DEFAULT_PERIOD_MS})")
    p.add_argument("--consolidate", default="off", metavar="on|off",
                   help="core consolidation policy at start (default off; gnbctl run "
                        "applies it, `gnbctl power consolidate` changes it)")
    p.add_argument("--consolidate-thresholds", metavar="NAME=VALUE[,...]",
                   help="its thresholds (default " + ",".join(
                       f"{k}={getattr(consolidation.DEFAULTS, k)}"
                       for k in consolidation.FIELDS) + ")")
    p.add_argument("--sysfs-root", type=Path, default=Path("/sys"), help=argparse.SUPPRESS)
    p.add_argument("--proc-root", type=Path, default=Path("/proc"), help=argparse.SUPPRESS)
    return p


def load_config(args) -> tuple[list[tuple[str, str]], str, int]:
    """([(name, control socket)], gRPC address, period ms) from the options
    and the TOML file; ValueError says what is wrong."""
    pairs, grpc, period = [], None, None
    if args.targets is not None:
        try:
            document = tomllib.loads(args.targets.read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{args.targets}: {e}") from None
        for i, raw in enumerate(document.get("targets", [])):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) \
                    or not isinstance(raw.get("control"), str):
                raise ValueError(f"{args.targets}: targets[{i}] needs name and control "
                                 "(strings)")
            control = Path(raw["control"])
            if not control.is_absolute():
                control = args.targets.resolve().parent / control
            pairs.append((raw["name"], str(control)))
        grpc, period = document.get("grpc"), document.get("period_ms")
    for text in args.target:
        name, sep, control = text.partition("=")
        if not sep or not name or not control:
            raise ValueError(f"--target {text!r}: give NAME=CONTROL_SOCKET")
        pairs.append((name, control))
    if not pairs:
        raise ValueError("no targets: give --targets FILE or --target NAME=SOCKET")
    names = [n for n, _ in pairs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"target names must be unique: {', '.join(duplicates)}")
    period = args.period_ms if args.period_ms is not None else (period or DEFAULT_PERIOD_MS)
    if not isinstance(period, int) or period <= 0:
        raise ValueError(f"the period must be a positive number of ms, not {period!r}")
    return pairs, args.grpc or grpc or DEFAULT_GRPC, period


def load_policy(args) -> consolidation.Policy:
    """The consolidation policy of --consolidate and
    --consolidate-thresholds; ValueError says what is wrong."""
    enabled = consolidation.parse_switch(args.consolidate)
    if args.consolidate_thresholds is None:
        return consolidation.Policy(enabled)
    try:
        thresholds = consolidation.checked(
            consolidation.DEFAULTS, consolidation.parse_thresholds(args.consolidate_thresholds))
    except ValueError as e:
        raise ValueError(f"--consolidate-thresholds: {e}") from None
    return consolidation.Policy(enabled, thresholds)


async def serve(sidecar: Sidecar, address: str, stop: asyncio.Event) -> None:
    import grpc
    from power import service
    server = grpc.aio.server()
    service.add_to_server(sidecar, server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    shown = address if address.startswith("unix:") else f"{address.rsplit(':', 1)[0]}:{port}"
    await server.start()
    print(f"power: gRPC server on {shown}", flush=True)
    poller = asyncio.create_task(sidecar.poll_forever(stop))
    try:
        await stop.wait()
    finally:
        await server.stop(grace=0.5)
        await poller
        sidecar.close()


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        pairs, address, period_ms = load_config(args)
        policy = load_policy(args)
    except ValueError as e:
        print(f"power: error: {e}", file=sys.stderr)
        return 2
    meters = Meters(args.sysfs_root)
    sidecar = Sidecar([Target(n, c, args.proc_root) for n, c in pairs], meters,
                      period_ms / 1000, policy)
    print(f"power: {len(pairs)} targets ({', '.join(n for n, _ in pairs)}), every "
          f"{period_ms} ms; power sources: {', '.join(meters.sources)}", flush=True)
    print(f"power: {policy.describe()}", flush=True)
    for meter in meters.meters:
        print(f"power: meter {meter.source} {meter.name}: {meter.path}", flush=True)

    async def run():
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await serve(sidecar, address, stop)
    try:
        asyncio.run(run())
    except OSError as e:
        print(f"power: error: {e}", file=sys.stderr)
        return 1
    return 0
