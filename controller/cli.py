"""gnbctl: the command line of the controller.

Every command takes --json (one JSON object on stdout: {"ok": true,
"result": ...} or {"ok": false, "error": ..., "exit_code": N}). Exit codes:
0 done, 1 failed, 2 bad topology or arguments (or no [baas] for `gnbctl
baas`), 3 a target or the BaaS unreachable,
4 a target rejected a write or a P4Info, or a DRB was refused before any
write because a target holds one with its index, TEID or bearer."""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from controller import (baas, counters, drbs, offload, pipeline, rlc_poll, status, targets,
                        topology, watch)
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
    source.add_argument("--file", type=Path, help=f"CSV: {','.join(drbs.CSV_COLUMNS)}"
                        f"[,{','.join(drbs.POLL_COLUMNS)}]")
    load.add_argument("--batch", type=int, default=drbs.DEFAULT_BATCH,
                      help="updates per Write (default %(default)s)")
    _poll_arguments(load, " of every RLC AM DRB the CSV gives none")
    add = drb_sub.add_parser("add", help="one DRB; fields default to the generated DRB's")
    add.add_argument("drb", type=int)
    for name in drbs.CSV_COLUMNS[1:]:
        add.add_argument(f"--{name.replace('_', '-')}", dest=name)
    _poll_arguments(add, "")
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

    _baas_parser(sub)

    run = sub.add_parser("run", help="watch the targets until stopped: a dead host's share "
                                     "returns to its NIC, a returning host is provisioned "
                                     "and gets its share back, a restarted NIC is restored")
    run.add_argument("--interval", type=float, default=watch.DEFAULT_INTERVAL_S,
                     help="seconds between probes (default %(default)s)")
    return p


def _poll_arguments(parser, of_which: str):
    """--poll-pdu and --poll-byte: TS 38.331 names, checked by drbs.parse_drb
    or _poll_values (a bad value is an error naming the allowed ones)."""
    parser.add_argument("--poll-pdu", dest="poll_pdu", metavar="VALUE",
                        help=f"RLC AM pollPDU{of_which}: p4 .. p65536 (or the number: 4 for p4) or "
                             f"infinity; default: the pipeline's {rlc_poll.DEFAULT_POLL_PDU}")
    parser.add_argument("--poll-byte", dest="poll_byte", metavar="VALUE",
                        help=f"RLC AM pollByte{of_which}: kB1 .. kB7500, mB8 .. mB40 "
                             f"(1 kB = 1,000 bytes) or infinity; default: the pipeline's "
                             f"{rlc_poll.DEFAULT_POLL_BYTE}")


def _drb_key(text: str) -> baas.DrbKey:
    try:
        return baas.DrbKey.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _uint(bits: int):
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not 0 <= value < 1 << bits:
            raise argparse.ArgumentTypeError(f"{value} does not fit in {bits} bits")
        return value
    return parse


# `baas config` flag -> the config field it sets (controller/baas.py CONFIG_FIELDS)
_BAAS_CONFIG_FLAGS = {
    "--t-poll-retransmit": ("t_poll_retransmit_ms", "MS", 32, "t-PollRetransmit, 1..60000 ms"),
    "--max-retx": ("max_retx_threshold", "N", 32, "maxRetxThreshold, 1..32"),
    "--drb-max-pdus": ("drb_max_pdus", "N", 32,
                       "PDUs held per DRB at most, 1..131072 (rounded up to a power of 2)"),
    "--max-pdus": ("max_pdus", "N", 64, "PDUs held over all DRBs at most (defaults only)")}


def _baas_parser(sub):
    b = sub.add_parser("baas", help="the buffering service (the topology's [baas])")
    b_sub = b.add_subparsers(dest="action", required=True)
    drb_help = "one DRB: UE_ID:LCID"
    b_sub.add_parser("stats", help="the BaaS's counters, held PDUs and pool, or one "
                                   "DRB's state").add_argument(
        "--drb", type=_drb_key, metavar="UE:LCID", help=drb_help)
    config = b_sub.add_parser("config", help="show the defaults (or a DRB's own values); "
                                             "with values, change only those")
    config.add_argument("--drb", type=_drb_key, metavar="UE:LCID", help=drb_help)
    for flag, (field, metavar, bits, text) in _BAAS_CONFIG_FLAGS.items():
        config.add_argument(flag, dest=field, metavar=metavar, type=_uint(bits), help=text)
    flush = b_sub.add_parser("flush", help="release a DRB's PDUs and forget its state, "
                                           "or every DRB's")
    which = flush.add_mutually_exclusive_group(required=True)
    which.add_argument("--drb", type=_drb_key, metavar="UE:LCID", help=drb_help)
    which.add_argument("--all", action="store_true", help="every DRB")
    b_sub.add_parser("list", help="the DRBs the BaaS holds state of, or (--drb) the SNs "
                                  "it holds of one").add_argument(
        "--drb", type=_drb_key, metavar="UE:LCID", help=drb_help)
    b_sub.add_parser("events", help="the events the BaaS keeps (RLF, OVERFLOW, "
                                    "NACK_NOT_HELD)").add_argument(
        "--follow", action="store_true", help="then wait for new ones until interrupted")


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
    for name in drbs.CSV_COLUMNS[1:] + drbs.POLL_COLUMNS:
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    try:
        return drbs.parse_drb({k: str(v) for k, v in values.items() if v is not None})
    except ValueError as e:
        raise GnbctlError(f"DRB {args.drb}: {e}") from None


def _poll_values(args) -> tuple[int, int]:
    """drb load's --poll-pdu and --poll-byte (0: not given)."""
    try:
        return (rlc_poll.parse_poll_pdu(args.poll_pdu) if args.poll_pdu else 0,
                rlc_poll.parse_poll_byte(args.poll_byte) if args.poll_byte else 0)
    except ValueError as e:
        raise GnbctlError(str(e)) from None


def _sn_ranges(sns: list[int]) -> str:
    """1, 2, 3, 7 -> "1-3, 7" (consecutive SNs held, as listed)."""
    parts, first, last = [], None, None
    for sn in sns:
        if last is not None and sn == last + 1:
            last = sn
            continue
        if first is not None:
            parts.append(f"{first}" if first == last else f"{first}-{last}")
        first = last = sn
    if first is not None:
        parts.append(f"{first}" if first == last else f"{first}-{last}")
    return ", ".join(parts)


def _event_time(time_ns: int) -> str:
    return (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time_ns // 10**9))
            + f".{time_ns // 10**6 % 1000:03d}")


def _event_line(event: dict) -> str:
    if "lost" in event:
        return f"lost {event['lost']} events (the log overwrote them before they were read)"
    drb = baas.DrbKey(**event["drb"]) if event["drb"] else "-"
    return (f"#{event['seq']} {_event_time(event['time_ns'])} {event['type']} DRB {drb} "
            f"sn {event['sn']} count {event['count']}")


def _counter_rows(counters: dict) -> list[list]:
    rows = [[k, v] for k, v in counters.items() if k != "dropped"]
    return rows + [[f"dropped: {k}", v] for k, v in sorted(counters["dropped"].items()) if v]


async def _baas(args, topo, out: Output):
    """gnbctl baas ...: one client of the topology's BaaS."""
    async with baas.connect(topo) as client:
        where = f"{client.name} at {client.address}"
        drb = getattr(args, "drb", None)
        if args.action == "stats":
            result = await client.stats(drb)
            if drb is None:
                out.table(f"{where}", ["", "value"],
                          [["DRBs", result["n_drbs"]], ["held PDUs", result["held"]],
                           ["held bytes", result["held_bytes"]],
                           ["mbufs in use", f"{result['pool_in_use']} of {result['pool_size']}"],
                           ["lcores", result["n_lcores"]]])
            else:
                out.table(f"{where}: DRB {drb}", ["", "value"],
                          [[k, v] for k, v in result.items() if k not in ("drb", "counters")])
            out.table("counters", ["counter", "value"],
                      _counter_rows(result["counters"]))
            return result
        if args.action == "config":
            changes = {f: getattr(args, f) for f, *_ in _BAAS_CONFIG_FLAGS.values()
                       if getattr(args, f) is not None}
            result = (await client.set_config(drb, **changes) if changes
                      else await client.get_config(drb))
            title = "defaults" if drb is None else f"DRB {drb}"
            out.table(f"{where}: {title}{' (changed)' if changes else ''}",
                      ["field", "value"],
                      [[f"{k}{' *' if k in changes else ''}", v] for k, v in result.items()])
            return result
        if args.action == "flush":
            released = await client.flush(drb, all=args.all)
            out.note(f"{where}: {'every DRB' if args.all else f'DRB {drb}'} flushed, "
                     f"{released} PDUs released")
            return {"drb": None if drb is None else str(drb), "all": args.all,
                    "released": released}
        if args.action == "list":
            if drb is None:
                result = await client.list_drbs()
                out.table(f"{where}: {len(result)} DRBs",
                          ["DRB", "SN bits", "TX_Next_Ack", "TX_Next", "POLL_SN", "poll timer",
                           "held", "held bytes", "retransmitted", "RLF"],
                          [[baas.DrbKey(**d["drb"]), d["sn_bits"], d["tx_next_ack"],
                            d["tx_next"], d["poll_sn"], d["poll_timer_running"], d["held"],
                            d["held_bytes"], d["counters"]["retransmitted"],
                            d["counters"]["rlf"]] for d in result])
                return result
            result = await client.list_sns(drb)
            more = " (more held than listed)" if result["truncated"] else ""
            out.note(f"{where}: DRB {drb} holds {len(result['sns'])} PDUs{more}: "
                     f"{_sn_ranges(result['sns']) or 'none'}")
            return result
        if not args.follow:
            events = [e async for e in client.events()]
            listed = [e for e in events if "lost" not in e]
            out.table(f"{where}: {len(listed)} events", ["seq", "time", "type", "DRB",
                                                         "sn", "count"],
                      [[e["seq"], _event_time(e["time_ns"]), e["type"],
                        baas.DrbKey(**e["drb"]) if e["drb"] else None, e["sn"], e["count"]]
                       for e in listed])
            lost = sum(e.get("lost", 0) for e in events)
            if lost:
                out.note(f"{lost} older events are no longer kept")
            return {"events": listed, "lost": lost}

        # --follow: one line per event (JSON lines with --json) until SIGINT/SIGTERM
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)

        async def follow():
            async for event in client.events(follow=True):
                if out.as_json:
                    print(json.dumps(event), flush=True)
                else:
                    out.console.print(_event_line(event), highlight=False)
        following = asyncio.create_task(follow())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
        for task in (following, stopped):
            task.cancel()
        if following.done() and not following.cancelled():
            following.result()      # the stream's error, if it ended with one
        return None


async def _run(args, out: Output):
    topo = topology.load(args.topology)
    selected = topo.select(args.targets)
    cmd = (args.command, getattr(args, "action", None))

    if cmd == ("status", None):
        checks = [status.target_status(topo, c) for c in selected]
        # and the BaaS's row, unless --target picked targets
        with_baas = topo.baas is not None and not args.targets
        if with_baas:
            checks.append(status.baas_status(topo))
        rows = await asyncio.gather(*checks)
        rows, baas_rows = (rows[:-1], rows[-1:]) if with_baas else (rows, [])
        out.table("targets", ["target", "role", "reachable", "primary", "program",
                              "P4Info = topology's", "dl_drb", "ul_bearer", "offload %",
                              "drops"],
                  [[r["target"], r["role"], r["reachable"], r.get("primary"),
                    r.get("program"), r.get("pipeline_matches_topology"),
                    r.get("drbs", {}).get("dl_drb"), r.get("drbs", {}).get("ul_bearer"),
                    r.get("offload", {}).get("percent"),
                    sum(d["packets"] for d in r.get("counters", {}).get("drops", {}).values())
                    if r["reachable"] else r.get("error")] for r in rows])
        out.table("BaaS", ["name", "address", "reachable", "DRBs", "held PDUs", "held bytes"],
                  [[r["target"], r["address"], r["reachable"],
                    *((r["baas"]["n_drbs"], r["baas"]["held"], r["baas"]["held_bytes"])
                      if r["reachable"] else (None, None, r["error"]))] for r in baas_rows])
        rows += baas_rows
        unreachable = [r for r in rows if not r["reachable"]]
        if unreachable:
            error = GnbctlError("\n".join(r["error"] for r in unreachable))
            error.exit_code = 3
            error.result = rows
            raise error
        return rows

    if cmd == ("drb", "load"):
        poll_pdu, poll_byte = _poll_values(args)
        drb_set = (drbs.DrbSet.generate(args.count) if args.count is not None
                   else drbs.read_csv(args.file)).with_poll_defaults(poll_pdu, poll_byte)
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
                  ["target", "entries", "seconds", "entries/s", "RLC poll configured"],
                  [[n, r["entries"], r["seconds"], f"{r['entries_per_s']:,}",
                    r["poll_configured"]] for n, r in result["targets"].items()])
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
        if drb.has_poll_config:
            shown = drb.as_dict()
            numbering = [c.name for c in selected if rlc_poll.numbers_amd_pdus(c)]
            out.note(f"RLC poll: pollPDU {shown['poll_pdu'] or rlc_poll.DEFAULT_POLL_PDU}, "
                     f"pollByte {shown['poll_byte'] or rlc_poll.DEFAULT_POLL_BYTE} "
                     f"(on {', '.join(numbering)})")
        return drb.as_dict()

    if cmd == ("drb", "del"):
        async with targets.session(topo, selected) as connected:
            # the BaaS names a DRB by its bearer: read before it is gone
            bearer = await baas.bearer_of(connected, args.drb) if topo.baas else None
            await drbs.delete(connected, args.drb)
        out.note(f"DRB {args.drb} deleted on {', '.join(c.name for c in selected)}")
        result = {"drb": args.drb}
        if bearer is not None:
            # its copies in the BaaS go too; a BaaS that fails is a warning
            result["baas"] = await baas.flush_deleted(topo, bearer)
            if "warning" in result["baas"]:
                if not out.as_json:
                    out.errors.print(f"gnbctl: warning: {result['baas']['warning']}",
                                     highlight=False, markup=False, soft_wrap=True)
            else:
                out.note(f"{topo.baas.name}: DRB {bearer} flushed, "
                         f"{result['baas']['released']} PDUs released")
        return result

    if cmd == ("drb", "show"):
        async with targets.session(topo, selected) as connected:
            if args.drb is None:
                result = {t.name: await drbs.counts(t) for t in connected}
                out.table("DRB entries", ["target", "dl_drb", "ul_bearer"],
                          [[n, c["dl_drb"], c["ul_bearer"]] for n, c in result.items()])
                return result
            found = {t.name: await drbs.find(t, args.drb) for t in connected}
        result = {n: d.as_dict() if d else None for n, d in found.items()}
        numbering = {c.name for c in selected if rlc_poll.numbers_amd_pdus(c)}
        for name, d in result.items():
            if d and name not in numbering:
                # a hybrid host's poll bits are its NIC's: it keeps no configuration
                for column in drbs.POLL_COLUMNS:
                    del d[column]
        missing = [n for n, d in found.items() if d is None]
        columns = list(drbs.CSV_COLUMNS)
        present = {n: d for n, d in result.items() if d}
        if any(d.get(c) is not None for d in present.values() for c in drbs.POLL_COLUMNS):
            columns += drbs.POLL_COLUMNS
        defaults = {"poll_pdu": rlc_poll.DEFAULT_POLL_PDU,
                    "poll_byte": rlc_poll.DEFAULT_POLL_BYTE}

        def shown(d: dict, column: str):
            if column not in defaults:
                return d[column]
            if column not in d:
                return "(the NIC's)"
            return f"default ({defaults[column]})" if d[column] is None else d[column]
        out.table(f"DRB {args.drb}", ["field", *present],
                  [[c, *(shown(d, c) for d in present.values())] for c in columns])
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

    if args.command == "baas":
        return await _baas(args, topo, out)

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
