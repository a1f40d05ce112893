"""gnbctl: the command line of the controller.

Every command takes --json (one JSON object on stdout: {"ok": true,
"result": ...} or {"ok": false, "error": ..., "exit_code": N}). Every
failure is one line on stderr (one per failing target or update) and one
of these exit codes (docs/operations.md): 0 done, 1 failed, 2 bad topology
(or no [baas] for `gnbctl baas`, no [power] for `gnbctl power`, or a
target without the topology's device id), 3 a target, the BaaS or the
power sidecar unreachable, 4 a target rejected a write or a P4Info, or a
DRB was refused before any write because a target holds one with its
index, TEID or bearer, 5 another gnbctl command held the topology's write
lock for longer than the topology's timeout, 64 a bad command line, 70
an internal error (a bug; GNBCTL_TRACEBACK=1 shows where), 130 interrupted,
141 stdout's reader stopped reading."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from controller import (baas, counters, drbs, metrics, offload, pipeline, power, rlc_poll,
                        status, targets, topology, watch, write_lock)
from controller.errors import EXIT_INTERNAL, EXIT_USAGE, GnbctlError
from t4p4s.usage import OneLineParser, UsageError


class _Parser(OneLineParser):
    """A usage error is exit code EXIT_USAGE: argparse's own, 2, is
    gnbctl's bad topology."""
    usage_exit_code = EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gnbctl", description=__doc__.split("\n\n")[0])
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
    c = sub.add_parser("counters", help="drops by reason, totals, and per-DRB packets and "
                                        "bytes with --nonzero or --drb")
    c.add_argument("--drb", type=_uint(16), action="append", dest="counter_drbs",
                   metavar="N", help="this DRB's counters, zero or not (repeatable)")
    c.add_argument("--nonzero", action="store_true",
                   help="every DRB that counted something (default: totals only)")
    # also after the subcommand: its own dest, since a subcommand's default
    # would replace a --target given before it
    c.add_argument("--target", action="append", dest="counter_targets", metavar="NAME",
                   help="only this target (repeatable; as gnbctl --target)")

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
    load.add_argument("--replace", action="store_true",
                      help="update the installed DRBs of the same index in place (MODIFY) "
                           "and insert the others (default: refuse any installed DRB)")
    add = drb_sub.add_parser("add", help="one DRB; fields default to the generated DRB's")
    add.add_argument("drb", type=_uint(16))
    for name in drbs.CSV_COLUMNS[1:]:
        add.add_argument(f"--{name.replace('_', '-')}", dest=name)
    _poll_arguments(add, "")
    drb_sub.add_parser("del", help="delete one DRB").add_argument("drb", type=_uint(16))
    drb_sub.add_parser("show", help="one DRB, or the entry counts").add_argument(
        "drb", type=_uint(16), nargs="?")

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
    _power_parser(sub)

    sub.add_parser("up", help="start every process the topology describes (its launch keys) "
                              "and wait until each answers; pid files and logs in its run "
                              "directory")
    sub.add_parser("down", help="stop what gnbctl up started (SIGTERM, then SIGKILL) and "
                                "remove what the processes leave").add_argument(
        "--grace", type=float, default=10.0, metavar="S",
        help="seconds from SIGTERM to SIGKILL (default %(default)s)")

    run = sub.add_parser("run", help="watch the targets until stopped: a dead host's share "
                                     "returns to its NIC, a returning host is provisioned "
                                     "and gets its share back, a restarted NIC is restored")
    run.add_argument("--interval", type=float, default=watch.DEFAULT_INTERVAL_S,
                     help="seconds between probes (default %(default)s)")

    m = sub.add_parser("metrics", help="a Prometheus exporter of the targets' counters, "
                                       "offload split, BaaS and power figures, until stopped")
    m.add_argument("--listen", type=_listen, required=True, metavar="ADDR:PORT",
                   help="where /metrics is served (127.0.0.1:9464, [::1]:9464, :9464 for "
                        "every IPv4 address; port 0: a free one, announced)")
    m.add_argument("--per-drb", action="store_true",
                   help="also each DRB's packets and bytes (every DRB that counted something)")
    m.add_argument("--interval", type=float, default=metrics.DEFAULT_INTERVAL_S,
                   help="seconds between reads of the targets; a scrape answers the last "
                        "read (default %(default)s)")
    return p


def _listen(text: str) -> metrics.Listen:
    try:
        return metrics.Listen.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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


def _threshold(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=VALUE")
    return name, _uint(64)(value)


def _power_parser(sub):
    p = sub.add_parser("power", help="the power governor sidecar (the topology's [power]): "
                                     "each target's lcores, modes, thresholds, power")
    p_sub = p.add_subparsers(dest="action", required=True)
    lcore_help = "only this lcore (EAL lcore id; default: every lcore)"
    show = p_sub.add_parser("show", help="per target and lcore: mode, P-state, polls, "
                                         "time busy/paused/asleep, CPU time, modelled "
                                         "watts; and power by source")
    show.add_argument("--lcore", type=_uint(32), help=lcore_help)
    mode = p_sub.add_parser("mode", help="set the governor mode of the targets' lcores")
    mode.add_argument("mode", help="busy, nap, adaptive, proportional (pmgmt-* only at start)")
    mode.add_argument("--lcore", type=_uint(32), help=lcore_help)
    th = p_sub.add_parser("thresholds", help="show the governor thresholds; with NAME=VALUE, "
                                             "change those (nothing changes if one is refused)")
    th.add_argument("values", nargs="*", type=_threshold, metavar="NAME=VALUE")
    th.add_argument("--lcore", type=_uint(32), help=lcore_help)
    watch_p = p_sub.add_parser("watch", help="telemetry every period until interrupted "
                                             "(JSON lines with --json)")
    watch_p.add_argument("--period-ms", type=_uint(32), default=0,
                         help="default: the sidecar's period")
    watch_p.add_argument("--count", type=_uint(32), default=0,
                         help="stop after this many samples (default: never)")
    cons = p_sub.add_parser("consolidate", help="the core consolidation policy the sidecar "
                                                "holds and `gnbctl run` applies to the NICs' "
                                                "VF buckets; without on/off or a flag it shows "
                                                "it, with each NIC's VF buckets per host")
    cons.add_argument("switch", nargs="?", choices=("on", "off"), metavar="on|off")
    cons.add_argument("--consolidate-below", type=float, metavar="F",
                      help="fold hosts while their work fits fewer hosts' lcores at this "
                           "fill (0 < F < spread-above)")
    cons.add_argument("--spread-above", type=float, metavar="F",
                      help="spread at once when the active hosts' lcores are busier than "
                           "this (consolidate-below < F <= 1)")
    cons.add_argument("--hold-s", type=_uint(32), metavar="N",
                      help="folding waits until its condition has held N s (1..3600)")
    cons.add_argument("--min-hosts", type=_uint(32), metavar="N",
                      help="never fewer hosts per NIC (1..64)")
    # also after the subcommand; SUPPRESS keeps a --json given before it
    cons.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                      help="as gnbctl --json")


class Output:
    """What a command prints. On a terminal: rich tables. Anywhere else (a
    pipe, a file): plain text, a table as aligned columns, every row and
    message on one line however long, since rich would wrap and cut at 80
    columns there (it cannot ask a pipe its width). With --json, nothing but
    the JSON document main() prints."""

    def __init__(self, as_json: bool):
        self.as_json = as_json
        # soft_wrap: a long line is left for the terminal to wrap, never broken
        self.console = Console(stderr=False, soft_wrap=True)
        self.errors = Console(stderr=True, soft_wrap=True)
        self.plain = not self.console.is_terminal
        self._blocks = 0

    def table(self, title: str, columns: list[str], rows: list[list]):
        if self.as_json:
            return
        if self.plain:
            self._plain_table(title, columns, rows)
            return
        t = Table(title=title)
        for c in columns:
            t.add_column(c)
        for r in rows:
            t.add_row(*("" if v is None else str(v) for v in r))
        self.console.print(t)

    def _plain_table(self, title: str, columns: list[str], rows: list[list]):
        """The title, then the header and each row on a line, columns two
        spaces apart; an empty cell is "-", so that every line has a field
        per column for awk and cut."""
        def cell(value) -> str:
            return "-" if value is None or value == "" else " ".join(str(value).split("\n"))
        lines = [[cell(c) for c in columns]] + [[cell(v) for v in r] for r in rows]
        widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
        if self._blocks:
            print()
        print(title)
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        sys.stdout.flush()
        self._blocks += 1

    def note(self, text: str):
        if not self.as_json:
            self.console.print(text, highlight=False, markup=False)


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


def _counters_out(out: Output, r: dict):
    """One target's `gnbctl counters`: drops, totals, and the per-DRB rows
    counters.read was asked for."""
    t = r["target"]
    runtime = r.get("runtime_drops", {})
    if r["drops"]:
        out.table(f"{t}: drops", ["reason", "packets", "bytes"],
                  [[k, v["packets"], v["bytes"]] for k, v in r["drops"].items()])
    if runtime.get("drops"):
        out.table(f"{t}: runtime drops", ["reason", "packets"],
                  [[k, n] for k, n in runtime["drops"].items()])
    if not r["drops"] and not runtime.get("drops"):
        out.note(f"{t}: no drops")
    if runtime.get("expected"):
        out.table(f"{t}: expected, not drops", ["reason", "packets", "why"],
                  [[k, v["packets"], v["why"]] for k, v in runtime["expected"].items()])
    if "runtime_error" in r:
        out.note(f"{t}: no runtime drops: {r['runtime_error']}")
    directions = [("downlink", r["downlink"]), ("uplink", r["uplink"])]
    if "baas_retransmissions" in r:
        directions.append(("BaaS retransmissions", r["baas_retransmissions"]))
    if "host_return" in r:
        directions.append(("host-built frames", r["host_return"]))
    totals = [[name, d["total"]["packets"], d["total"]["bytes"], d["drbs_counted"]]
              for name, d in directions]
    if "ul_status_pdus" in r:
        totals.append(["uplink STATUS PDUs", r["ul_status_pdus"]["packets"],
                       r["ul_status_pdus"]["bytes"], None])
    out.table(f"{t}: totals", ["counter", "packets", "bytes", "DRBs counted"], totals)
    if all("per_drb" in d for _, d in directions):
        out.table(f"{t}: DRBs", ["counter", "DRB", "packets", "bytes"],
                  [[name, i, v["packets"], v["bytes"]]
                   for name, d in directions for i, v in d["per_drb"].items()])
    elif any(d["drbs_counted"] for _, d in directions):
        out.note(f"{t}: per DRB: --nonzero lists the DRBs that counted, --drb N shows one")


def _lcore_load_out(out: Output, rows: list[dict]):
    """status's lcores: targets whose topology entry names a control socket."""
    loads = [r["lcore_load"] for r in rows if r.get("lcore_load")]
    if loads:
        windows = {load["window_s"] for load in loads}
        over = "since start" if windows == {None} else \
            f"over the last {max(w or 0 for w in windows):.1f} s"
        out.table(f"lcore load (busy and empty % {over}; polls and packets since start)",
                  ["target", "lcore", "mode", "polls", "empty polls", "packets", "empty %",
                   "busy %"],
                  [[load["target"], lc["lcore"], lc["mode"], lc["polls"], lc["empty_polls"],
                    lc["packets"], *("-" if lc[k] is None else f"{100 * lc[k]:.1f}"
                                     for k in ("empty_share", "busy_share"))]
                   for load in loads for lc in load["lcores"]])
    for r in rows:
        if r.get("control_error") and r["reachable"]:
            out.note(f"{r['target']}: no lcore load: {r['control_error']}")


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

        async def follow():
            async for event in client.events(follow=True):
                if out.as_json:
                    print(json.dumps(event), flush=True)
                else:
                    out.console.print(_event_line(event), highlight=False)
        return await _until_stopped(follow())


def _stop_on_signals() -> asyncio.Event:
    """An event SIGINT or SIGTERM sets: how a command that runs until
    stopped ends cleanly."""
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    return stop


async def _until_stopped(following) -> None:
    """Runs `following` (a stream printed line by line) until it ends or
    SIGINT/SIGTERM; an error the stream ended with is raised."""
    stop = _stop_on_signals()
    following = asyncio.create_task(following)
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for task in (following, stopped):
        task.cancel()
    if following.done() and not following.cancelled():
        following.result()      # the stream's error, if it ended with one
    return None


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}" if whole else "-"


def _lcores(row: dict, lcore: int | None) -> list[dict]:
    if lcore is None:
        return row["lcores"]
    chosen = [lc for lc in row["lcores"] if lc["lcore"] == lcore]
    if not chosen:
        raise GnbctlError(f"{row['name']}: NOT_FOUND: no lcore {lcore} (its lcores: "
                          f"{', '.join(str(lc['lcore']) for lc in row['lcores'])})")
    return chosen


def _power_line(sample: dict) -> str:
    """One `power watch` sample: per target, each lcore's mode, P-state,
    CPU share and modelled watts."""
    parts = [time.strftime("%H:%M:%S", time.localtime(sample["time_ns"] // 10**9))]
    for t in sample["targets"]:
        if not t["reachable"]:
            parts.append(f"{t['name']}: unreachable")
            continue
        parts.append(f"{t['name']} {t['modelled_watts']:.2f} W: " + ", ".join(
            f"lcore {lc['lcore']} {lc['mode']} P{lc['pstate']} {lc['freq_mhz']} MHz "
            f"cpu {100 * lc['proc']['cpu_share']:.1f}% {lc['packets']} pkts"
            for lc in t["lcores"]))
    return " | ".join(parts)


def _consolidation(args, topo, out: Output, result: dict) -> dict:
    """`power consolidate`'s tables: the policy, then per NIC its VF
    buckets per host now."""
    policy, t = result["policy"], result["policy"]["thresholds"]
    changed = time.strftime("%Y-%m-%d %H:%M:%S",
                            time.localtime(policy["changed_ns"] // 10**9))
    out.table(f"consolidation policy ({topo.power.name})",
              ["consolidation", "consolidate below", "spread above", "hold s", "min hosts",
               "changed"],
              [["on" if policy["enabled"] else "off", f"{t['consolidate_below']:g}",
                f"{t['spread_above']:g}", t["hold_s"], t["min_hosts"], changed]])
    rows = []
    for nic in result["nics"]:
        if "error" in nic:
            rows.append([nic["target"], None, None, None, nic["error"]])
            continue
        rows += [[nic["target"], f"{nic['percent']:g}", host, v["vf_buckets"],
                  f"{v['percent']:g}"] for host, v in nic["hosts"].items()]
        rows.append([nic["target"], f"{nic['percent']:g}",
                     "(no vf_bucket table)" if nic["vf_buckets_on_nic"] is None
                     else "(kept on the NIC)", nic["vf_buckets_on_nic"], None])
    if result["nics"]:
        out.table(f"VF buckets per host now (of {offload.VF_BUCKETS} per NIC)",
                  ["NIC", "offloaded %", "host", "VF buckets", "% of traffic"], rows)
    else:
        out.note("no NIC selected: no VF buckets to show")
    out.note("`gnbctl run` applies the policy to the NICs' VF buckets every second: "
             "nothing moves while no `gnbctl run` runs")
    return result


async def _power(args, topo, out: Output):
    """gnbctl power ...: one client of the topology's power sidecar, on the
    targets --target names (default: every target the sidecar has)."""
    async with power.connect(topo) as client:
        where = f"{client.name} at {client.address}"
        lcore = getattr(args, "lcore", None)

        async def rows() -> list[dict]:
            if not args.targets:
                return (await client.telemetry())["targets"]
            return [(await client.telemetry(n))["targets"][0] for n in args.targets]

        if args.action == "show":
            targets_ = await rows()
            readings = await client.read_power()
            for t in targets_:
                if t["reachable"]:
                    t["lcores"] = _lcores(t, lcore)
            out.table(f"{where}: governor (busy/paused/asleep since start; CPU and "
                      f"watts over the last {max((t.get('window_s') or 0) for t in targets_):.2f}"
                      f" s)",
                      ["target", "lcore", "mode", "P-state", "packets", "busy %", "paused %",
                       "asleep %", "CPU %", "model W"],
                      [[t["name"], lc["lcore"], lc["mode"], f"P{lc['pstate']} {lc['freq_mhz']}",
                        lc["packets"],
                        *(_pct(lc[k], lc["busy_ns"] + lc["paused_ns"] + lc["asleep_ns"])
                          for k in ("busy_ns", "paused_ns", "asleep_ns")),
                        f"{100 * lc['proc']['cpu_share']:.1f}"
                        if lc["proc"]["available"] else "-",
                        f"{lc['model']['watts']:.2f}"]
                       for t in targets_ if t["reachable"] for lc in t["lcores"]]
                      + [[t["name"], None, "unreachable", None, None, None, None, None,
                          None, t["error"]]
                         for t in targets_ if not t["reachable"]])
            shown = [r for r in readings["readings"]
                     if not args.targets or r["target"] in ("", *args.targets)]
            out.table(f"power by source (this machine: {', '.join(readings['sources'])})",
                      ["source", "name", "watts", "CPU share", "window s", "note"],
                      [[r["source"], r["name"],
                        None if r["watts"] is None else f"{r['watts']:.2f}",
                        None if r["cpu_share"] is None else f"{r['cpu_share']:.3f}",
                        f"{r['window_s']:.2f}", r["note"]] for r in shown])
            return {"time_ns": readings["time_ns"], "targets": targets_,
                    "power": {"sources": readings["sources"],
                              "source": power.power_source(readings["sources"]),
                              "readings": shown}}
        if args.action == "consolidate":
            return _consolidation(args, topo, out, await power.consolidation(
                client, topo, [c for c in topo.select(args.targets) if c.role == "nic"],
                {"enabled": None if args.switch is None else args.switch == "on",
                 "consolidate_below": args.consolidate_below,
                 "spread_above": args.spread_above, "hold_s": args.hold_s,
                 "min_hosts": args.min_hosts}))
        names = args.targets or [t["name"] for t in (await client.telemetry())["targets"]]
        if args.action == "mode":
            result = [await client.set_mode(n, args.mode, lcore) for n in names]
            for r in result:
                out.note(f"{r['target']}: mode {r['mode']} on lcores "
                         f"{', '.join(map(str, r['lcores']))}")
            return result
        if args.action == "thresholds":
            if args.values:
                values = dict(args.values)
                result = [await client.set_thresholds(n, values, lcore) for n in names]
                for r in result:
                    out.note(f"{r['target']}: " + ", ".join(
                        f"{k} = {r['thresholds'][k]}" for k in values))
                return result
            result = []
            for t in await rows():
                if not t["reachable"]:
                    raise power.PowerUnreachable(f"{t['name']}: {t['error']}", "UNAVAILABLE")
                lcores = _lcores(t, lcore)
                result.append({"target": t["name"], "defaults": t["thresholds"],
                               "lcores": {lc["lcore"]: lc["thresholds"] for lc in lcores}})
                out.table(f"{t['name']}: thresholds", ["name", "default",
                                                       *(f"lcore {lc['lcore']}" for lc in lcores)],
                          [[k, v, *(lc["thresholds"].get(k) for lc in lcores)]
                           for k, v in sorted(t["thresholds"].items())])
            return result

        # watch: one line per sample (JSON lines with --json) until SIGINT/SIGTERM or --count
        one = args.targets[0] if args.targets and len(args.targets) == 1 else ""

        async def follow():
            seen = 0
            async for sample in client.stream(one, args.period_ms):
                if args.targets:
                    sample["targets"] = [t for t in sample["targets"]
                                         if t["name"] in args.targets]
                if out.as_json:
                    print(json.dumps(sample), flush=True)
                else:
                    out.console.print(_power_line(sample), highlight=False, soft_wrap=True)
                seen += 1
                if args.count and seen >= args.count:
                    return
        return await _until_stopped(follow())


async def _run(args, out: Output):
    topo = topology.load(args.topology)
    if args.command in ("up", "down"):
        from controller.launch import updown
        if args.targets:
            error = GnbctlError("gnbctl up and down act on the whole topology: drop --target")
            error.exit_code = EXIT_USAGE
            raise error
        return await (updown.up(topo, out) if args.command == "up"
                      else updown.down(topo, out, args.grace))
    if getattr(args, "counter_targets", None):
        args.targets = (args.targets or []) + args.counter_targets
    selected = topo.select(args.targets)
    cmd = (args.command, getattr(args, "action", None))

    if cmd == ("status", None):
        checks = [status.target_status(topo, c) for c in selected]
        # and the BaaS's row, unless --target picked targets
        with_baas = topo.baas is not None and not args.targets
        if with_baas:
            checks.append(status.baas_status(topo))
        # the power sidecar's row: each target's governor mode and the power source
        with_power = topo.power is not None
        if with_power:
            checks.append(power.status(topo))
        # lcore load and the runtime's drops from the control sockets, meanwhile
        control = asyncio.gather(*(status.control_socket_status(c) for c in selected))
        rows = await asyncio.gather(*checks)
        power_rows = [rows.pop()] if with_power else []
        rows, baas_rows = (rows[:-1], rows[-1:]) if with_baas else (rows, [])
        for r, extra in zip(rows, await control):
            r.update(extra)
        governed = power_rows[0].get("targets", {}) if power_rows else {}
        for r in rows:
            if r["target"] in governed:
                g = governed[r["target"]]
                r["power"] = {"modes": g["modes"], "source": power_rows[0]["source"],
                              "modelled_watts": g["modelled_watts"]}
        power_columns = ["power mode", "power source"] if with_power else []
        # primary: the election id of the controller that is, or none
        out.table("targets", ["target", "role", "reachable", "primary", "program",
                              "P4Info = topology's", "dl_drb", "ul_bearer", "offload %",
                              *power_columns, "drops"],
                  [[r["target"], r["role"], r["reachable"],
                    (r["primary"] if r["primary"] is not None else "none")
                    if r["reachable"] else None,
                    r.get("program"), r.get("pipeline_matches_topology"),
                    r.get("drbs", {}).get("dl_drb"), r.get("drbs", {}).get("ul_bearer"),
                    r.get("offload", {}).get("percent"),
                    *([", ".join(r["power"]["modes"]), r["power"]["source"]] if "power" in r
                      else [None] * len(power_columns)),
                    counters.drop_total(r.get("counters"), r.get("runtime_drops"))
                    if r["reachable"] else r.get("error")] for r in rows])
        _lcore_load_out(out, rows)
        if baas_rows:
            out.table("BaaS", ["name", "address", "reachable", "DRBs", "held PDUs",
                               "held bytes"],
                      [[r["target"], r["address"], r["reachable"],
                        *((r["baas"]["n_drbs"], r["baas"]["held"], r["baas"]["held_bytes"])
                          if r["reachable"] else (None, None, r["error"]))]
                       for r in baas_rows])
        if power_rows:
            out.table("power sidecar", ["name", "address", "reachable", "sources", "targets"],
                      [[r["target"], r["address"], r["reachable"],
                        ", ".join(r.get("sources", [])) or None,
                        ", ".join(f"{n}: {', '.join(t['modes']) or 'unreachable'}"
                                  for n, t in r.get("targets", {}).items())
                        if r["reachable"] else r["error"]] for r in power_rows])
        rows += baas_rows + power_rows
        unreachable = [r for r in rows if not r["reachable"]]
        if unreachable:
            error = GnbctlError("\n".join(r["error"] for r in unreachable))
            error.exit_code = max(r.get("exit_code", 3) for r in unreachable)
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
            if out.as_json or out.plain:
                # no progress bar where nobody watches it redraw
                result = await drbs.load(connected, drb_set, args.batch, replace=args.replace)
            else:
                with Progress(TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TimeElapsedColumn(),
                              console=out.console) as progress:
                    tasks = {t.name: progress.add_task(t.name, total=2 * drb_set.count)
                             for t in connected}
                    result = await drbs.load(connected, drb_set, args.batch,
                                             lambda name, n: progress.advance(tasks[name], n),
                                             replace=args.replace)
        replaced = ["DRBs replaced"] if args.replace else []
        out.table(f"{drb_set.count} DRBs in {result['seconds']:.3f} s",
                  ["target", "entries", "seconds", "entries/s", *replaced,
                   "RLC poll configured"],
                  [[n, r["entries"], r["seconds"], f"{r['entries_per_s']:,}",
                    *([r["replaced"]] if args.replace else []), r["poll_configured"]]
                   for n, r in result["targets"].items()])
        return result

    if args.command == "pipeline":
        result = await pipeline.push(topo, selected)
        out.table("pipeline pushed", ["target", "program", "cookie"],
                  [[r["target"], r["program"], f"{r['cookie']:#x}"] for r in result])
        return result

    if args.command == "counters":
        async with targets.reading(topo, selected) as connected:
            result = [await counters.read(t, args.counter_drbs, args.nonzero)
                      for t in connected]
        # the runtime's own drops, when the topology names a control socket
        by_name = {c.name: c for c in selected}
        result = [await counters.add_runtime_drops(r, by_name[r["target"]]) for r in result]
        for r in result:
            _counters_out(out, r)
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
            # the BaaS names a DRB by its bearer, as the deleted entries had it
            bearer = await drbs.delete(connected, args.drb)
        out.note(f"DRB {args.drb} deleted on {', '.join(c.name for c in selected)}")
        result = {"drb": args.drb}
        if bearer is not None and topo.baas:
            bearer = baas.DrbKey(*bearer)
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
        async with targets.reading(topo, selected) as connected:
            if args.drb is None:
                result = dict(zip((t.name for t in connected), await asyncio.gather(
                    *(drbs.counts(t) for t in connected))))
                out.table("DRB entries", ["target", "dl_drb", "ul_bearer"],
                          [[n, c["dl_drb"], c["ul_bearer"]] for n, c in result.items()])
                return result
            found = dict(zip((t.name for t in connected), await asyncio.gather(
                *(drbs.find(t, args.drb) for t in connected))))
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
        # show reads (no primary, no write lock); the others write
        connect = targets.reading if args.action == "show" else targets.session
        async with connect(topo, nics) as connected:
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

    if args.command == "power":
        return await _power(args, topo, out)

    if args.command == "metrics":
        return await metrics.serve(topo, selected, args.listen, args.per_drb, args.interval,
                                   _stop_on_signals(), out.note)

    if args.command == "run":
        if not topo.nics():
            raise GnbctlError("no NIC target in the topology: nothing to watch")
        if args.interval <= 0:
            raise GnbctlError("--interval must be positive")
        # the watcher pushes these P4Infos to targets that restart: one that
        # cannot serve its role would fail there every round, so refuse now
        for config in topo.targets:
            if config.p4info is not None or config.p4 is not None:
                pipeline.topology_schema(config)

        def report(event: watch.Event):
            if out.as_json:
                print(json.dumps(event.__dict__), flush=True)
            else:
                out.console.print(event.line(), highlight=False, markup=False)
        stop = _stop_on_signals()
        await watch.Watcher(topo, args.interval, report).run(stop)
        return None
    raise AssertionError(cmd)


TRACEBACK_ENV = "GNBCTL_TRACEBACK"


def _internal_error(e: BaseException) -> GnbctlError:
    """The last resort, for an exception no part of gnbctl turned into its
    own error: a bug, said in one line that asks for a report."""
    error = GnbctlError(f"internal error: {type(e).__name__}: "
                        f"{' '.join(str(e).split()) or '(no message)'}; this is a gnbctl "
                        f"bug, please report it with the command line "
                        f"({TRACEBACK_ENV}=1 shows where it happened)")
    error.exit_code = EXIT_INTERNAL
    return error


def _fail(out: Output, as_json: bool, e, prefix: str = "gnbctl: error: ") -> int:
    if as_json:
        print(json.dumps({"ok": False, "error": str(e), "exit_code": e.exit_code,
                          "result": getattr(e, "result", None)}, indent=1))
    else:
        out.errors.print(f"{prefix}{e}", highlight=False, markup=False)
    return e.exit_code


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    write_lock.command_words = argv     # how a writer is named to another one waiting
    try:
        args = _parser().parse_args(argv)
    except UsageError as e:
        # before parsing, --json is known only as a word of the command line
        return _fail(Output("--json" in argv), "--json" in argv, e, prefix="")
    out = Output(args.json)
    started = time.perf_counter()
    try:
        result = asyncio.run(_run(args, out))
    except GnbctlError as e:
        return _fail(out, args.json, e)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_gone()
    except (Exception, asyncio.CancelledError) as e:
        if os.environ.get(TRACEBACK_ENV):
            raise
        return _fail(out, args.json, _internal_error(e))
    if args.json:
        try:
            print(json.dumps({"ok": True, "seconds": round(time.perf_counter() - started, 4),
                              "result": result}, indent=1), flush=True)
        except BrokenPipeError:
            return _reader_gone()
    return 0


EXIT_READER_GONE = 141


def _reader_gone() -> int:
    """stdout's reader stopped reading (`gnbctl counters | head`): the
    command is done, quietly, with the code of a process SIGPIPE ended;
    stdout goes to /dev/null so that Python's flush at exit fails no more."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_READER_GONE
