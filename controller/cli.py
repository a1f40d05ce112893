"""gnbctl: the command line of the controller.

Every command takes --json (one JSON object on stdout: {"ok": true,
"result": ...} or {"ok": false, "error": ..., "exit_code": N}). Exit codes:
0 done, 1 failed, 2 bad topology or arguments, 3 a target unreachable,
4 a target rejected a write or a P4Info, or a DRB was refused before any
write because a target holds one with its index, TEID or bearer."""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from controller import counters, drbs, offload, pipeline, status, targets, topology, watch
from controller.errors import GnbctlError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gnbctl", description=__doc__.split("\n\n")[0])
    p.add_argument("--topology", type=Path, default=topology.default_path(),
                   help=f"topology file (TOML; default ${topology.ENV_VAR})")
    p.add_argument("--target", action="append", dest="targets", metavar="NAME",
                   help="only this target (repeatable; default: every target)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub = p.add_subparsers(dest="command", required=True)

    pipeline = sub.add_parser("pipeline", help="the forwarding pipeline")
    pipeline.add_subparsers(dest="action", required=True).add_parser(
        "push", help="push each target's P4Info (VERIFY_AND_COMMIT: resets its state); "
                     "nothing is pushed unless every target is reachable, accepts "
                     "its P4Info and the P4Info fits its role")

    sub.add_parser("status", help="targets, pipeline, primary, entries, counters")
    sub.add_parser("counters", help="drops by reason, per-DRB packets and bytes")

    drb = sub.add_parser("drb", help="DRB entries (dl_drb and ul_bearer) on every target")
    drb_sub = drb.add_subparsers(dest="action", required=True)
    load = drb_sub.add_parser("load", help="install many DRBs, in batches")
    source = load.add_mutually_exclusive_group(required=True)
    source.add_argument("--count", type=int, help="generate DRBs 0..COUNT-1 (contract)")
    source.add_argument("--file", type=Path, help=f"CSV: {','.join(drbs.CSV_COLUMNS)}")
    load.add_argument("--batch", type=int, default=drbs.DEFAULT_BATCH,
                      help="updates per Write (default %(default)s)")
    add = drb_sub.add_parser("add", help="one DRB; fields default to the generated DRB's")
    add.add_argument("drb", type=int)
    for name in drbs.CSV_COLUMNS[1:]:
        add.add_argument(f"--{name.replace('_', '-')}", dest=name)
    drb_sub.add_parser("del", help="delete one DRB").add_argument("drb", type=int)
    drb_sub.add_parser("show", help="one DRB, or the entry counts").add_argument(
        "drb", type=int, nargs="?")

    off = sub.add_parser("offload", help="the NIC/host split (NIC targets)")
    off_sub = off.add_subparsers(dest="action", required=True)
    off_sub.add_parser("set", help="ratio mode: PERCENT of the buckets to the hosts") \
        .add_argument("percent", type=float)
    off_sub.add_parser("show", help="the installed split")
    off_sub.add_parser("mode", help="ratio (by bucket) or marker (by IPv4 id)") \
        .add_argument("mode", choices=("ratio", "marker"))
    marker = off_sub.add_parser("marker", help="marker-mode IPv4 Identifications")
    marker.add_argument("op", choices=("add", "del"))
    marker.add_argument("id", type=lambda s: int(s, 0))

    run = sub.add_parser("run", help="watch the targets until stopped: a dead host's share "
                                     "returns to its NIC, a returning host is provisioned "
                                     "and gets its share back, a restarted NIC is restored")
    run.add_argument("--interval", type=float, default=watch.DEFAULT_INTERVAL_S,
                     help="seconds between probes (default %(default)s)")
    return p


class Output:
    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.console = Console(stderr=False)
        self.errors = Console(stderr=True)

    def table(self, title: str, columns: list[str], rows: list[list]):
        if self.as_json:
            return
        t = Table(title=title)
        for c in columns:
            t.add_column(c)
        for r in rows:
            t.add_row(*("" if v is None else str(v) for v in r))
        self.console.print(t)

    def note(self, text: str):
        if not self.as_json:
            self.console.print(text, highlight=False)


def _nics(topo, selected):
    nics = [c for c in selected if c.role == "nic"]
    if not nics:
        raise GnbctlError("no NIC target selected: offload applies to role nic targets")
    return nics


def _drb_from_args(args) -> drbs.Drb:
    values = drbs.Drb.generated(args.drb).as_dict()
    for name in drbs.CSV_COLUMNS[1:]:
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    try:
        return drbs.parse_drb({k: str(v) for k, v in values.items()})
    except ValueError as e:
        raise GnbctlError(f"DRB {args.drb}: {e}") from None


async def _run(args, out: Output):
    topo = topology.load(args.topology)
    selected = topo.select(args.targets)
    cmd = (args.command, getattr(args, "action", None))

    if cmd == ("status", None):
        rows = await asyncio.gather(*(status.target_status(topo, c) for c in selected))
        out.table("targets", ["target", "role", "reachable", "primary", "program",
                              "P4Info = topology's", "dl_drb", "ul_bearer", "offload %",
                              "drops"],
                  [[r["target"], r["role"], r["reachable"], r.get("primary"),
                    r.get("program"), r.get("pipeline_matches_topology"),
                    r.get("drbs", {}).get("dl_drb"), r.get("drbs", {}).get("ul_bearer"),
                    r.get("offload", {}).get("percent"),
                    sum(d["packets"] for d in r.get("counters", {}).get("drops", {}).values())
                    if r["reachable"] else r.get("error")] for r in rows])
        unreachable = [r for r in rows if not r["reachable"]]
        if unreachable:
            error = GnbctlError("\n".join(r["error"] for r in unreachable))
            error.exit_code = 3
            error.result = rows
            raise error
        return rows

    if cmd == ("drb", "load"):
        drb_set = (drbs.DrbSet.generate(args.count) if args.count is not None
                   else drbs.read_csv(args.file))
        if not 1 <= args.batch <= 65536:
            raise GnbctlError("--batch must be 1..65536")
        async with targets.session(topo, selected) as connected:
            if out.as_json:
                return await drbs.load(connected, drb_set, args.batch)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=out.console) as progress:
                tasks = {t.name: progress.add_task(t.name, total=2 * drb_set.count)
                         for t in connected}
                result = await drbs.load(connected, drb_set, args.batch,
                                         lambda name, n: progress.advance(tasks[name], n))
        out.table(f"{drb_set.count} DRBs in {result['seconds']:.3f} s",
                  ["target", "entries", "seconds", "entries/s"],
                  [[n, r["entries"], r["seconds"], f"{r['entries_per_s']:,}"]
                   for n, r in result["targets"].items()])
        return result

    if args.command == "pipeline":
        result = await pipeline.push(topo, selected)
        out.table("pipeline pushed", ["target", "program", "cookie"],
                  [[r["target"], r["program"], f"{r['cookie']:#x}"] for r in result])
        return result

    if args.command == "counters":
        async with targets.session(topo, selected) as connected:
            result = [await counters.read(t) for t in connected]
        for r in result:
            out.table(f"{r['target']}: drops", ["reason", "packets", "bytes"],
                      [[k, v["packets"], v["bytes"]] for k, v in r["drops"].items()])
            out.table(f"{r['target']}: DRBs", ["direction", "DRB", "packets", "bytes"],
                      [[d, i, v["packets"], v["bytes"]]
                       for d in ("downlink", "uplink")
                       for i, v in [("all", r[d]["total"]), *r[d]["per_drb"].items()]])
        return result

    if cmd == ("drb", "add"):
        drb = _drb_from_args(args)
        async with targets.session(topo, selected) as connected:
            await drbs.add(connected, drb)
        out.note(f"DRB {drb.drb} added on {', '.join(c.name for c in selected)}")
        return drb.as_dict()

    if cmd == ("drb", "del"):
        async with targets.session(topo, selected) as connected:
            await drbs.delete(connected, args.drb)
        out.note(f"DRB {args.drb} deleted on {', '.join(c.name for c in selected)}")
        return {"drb": args.drb}

    if cmd == ("drb", "show"):
        async with targets.session(topo, selected) as connected:
            if args.drb is None:
                result = {t.name: await drbs.counts(t) for t in connected}
                out.table("DRB entries", ["target", "dl_drb", "ul_bearer"],
                          [[n, c["dl_drb"], c["ul_bearer"]] for n, c in result.items()])
                return result
            found = {t.name: await drbs.find(t, args.drb) for t in connected}
        result = {n: d.as_dict() if d else None for n, d in found.items()}
        missing = [n for n, d in found.items() if d is None]
        columns = list(drbs.CSV_COLUMNS)
        present = {n: d for n, d in result.items() if d}
        out.table(f"DRB {args.drb}", ["field", *present],
                  [[c, *(d[c] for d in present.values())] for c in columns])
        if missing:
            error = GnbctlError(f"DRB {args.drb}: NOT_FOUND on {', '.join(missing)}")
            error.result = result
            raise error
        return result

    if args.command == "offload":
        nics = _nics(topo, selected)
        async with targets.session(topo, nics) as connected:
            hosts = {t.name: topo.hosts_behind(t.name) for t in connected}
            if args.action == "set":
                # a dead host gets no buckets (as `gnbctl run` would leave it)
                live = await targets.live_hosts([h for hs in hosts.values() for h in hs])
                result = await targets.on_every(
                    connected, lambda t: offload.set_ratio(t, args.percent, hosts[t.name], live))
                for r in result:
                    out.note(f"{r['target']}: {r['percent']:g}% = {r['buckets']} of "
                             f"{offload.OFFLOAD_BUCKETS} buckets (+{r['inserted']} "
                             f"-{r['deleted']}, {r['updates']} updates in one Write)")
                    for n in r["notes"]:
                        out.note(f"  note: {n}")
                return result
            if args.action == "show":
                result = [await offload.show(t, hosts[t.name]) for t in connected]
                out.table("offload", ["target", "mode", "buckets", "percent", "hosts",
                                      "markers"],
                          [[r["target"], r["mode"], r["buckets"], r["percent"],
                            ", ".join(f"{h}: {v['percent']}%" for h, v in r["hosts"].items()),
                            r["markers"]] for r in result])
                return result
            if args.action == "mode":
                await targets.on_every(connected, lambda t: offload.set_mode(t, args.mode))
                out.note(f"offload mode {args.mode}")
                return {"mode": args.mode}
            await targets.on_every(
                connected, lambda t: offload.marker(t, args.op == "add", args.id))
            out.note(f"marker {args.id} {'added' if args.op == 'add' else 'deleted'}")
            return {"marker": args.id, "op": args.op}

    if args.command == "run":
        if not topo.nics():
            raise GnbctlError("no NIC target in the topology: nothing to watch")
        if args.interval <= 0:
            raise GnbctlError("--interval must be positive")

        def report(event: watch.Event):
            if out.as_json:
                print(json.dumps(event.__dict__), flush=True)
            else:
                out.console.print(event.line(), highlight=False)
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        await watch.Watcher(topo, args.interval, report).run(stop)
        return None
    raise AssertionError(cmd)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    out = Output(args.json)
    started = time.perf_counter()
    try:
        result = asyncio.run(_run(args, out))
    except GnbctlError as e:
        if args.json:
            print(json.dumps({"ok": False, "error": str(e), "exit_code": e.exit_code,
                              "result": getattr(e, "result", None)}, indent=1))
        else:
            # soft_wrap: rich would break a long line at the terminal's width
            out.errors.print(f"gnbctl: error: {e}", highlight=False, markup=False,
                             soft_wrap=True)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps({"ok": True, "seconds": round(time.perf_counter() - started, 4),
                          "result": result}, indent=1))
    return 0
