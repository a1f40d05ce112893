"""`make demo`: the hybrid gNB user plane end to end on one machine.

Brings up the topology in network namespaces (the NIC process with its PFs
on veths and one memif VF pair per host, two host processes, the power
governor sidecar on every target's control socket), pushes the
pipelines and 65,536 DRBs with gnbctl, sends downlink GTP-U from the N3
namespace while gnbctl moves the split 0% -> 50% -> 100% -> 0% live, and
checks every frame captured on the radio and BaaS sides: none lost or
duplicated, PDCP/RLC SNs continuous per DRB, bytes as expected. Then RLC
acknowledged mode over a lossy radio link: the buffering service (BaaS)
comes up on the NIC's BaaS PF, a UE emulator behind the radio PF drops 1%
of the radio frames, and every SDU sent must reach the UE exactly once
and in order. Exit status 0 only when all of that holds."""
from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.table import Table

from testbench.topology.gnbctl import Gnbctl, GnbctlError, wait_until
from testbench.topology.scenario import RunResult, TrafficRun, spread_drbs
from controller.launch.topology import HybridTopology, TopologyConfig, TopologyError
from testbench.topology.traffic import DownlinkFrames, PacedSender
from testbench.ue.process import UeEmulatorProcess

N_DRBS = 65536
ACTIVE_DRBS = 1024
RATE_PPS = 20_000
PHASE_S = 1.5
SHIFTS = (50, 100, 0)
MAX_SHIFT_LATENCY_MS = 50
ARQ_RATE_PPS = 5_000        # the UE emulator is Python: it reads every radio frame itself
ARQ_DRBS = 64               # ~80 PDUs per DRB and second: gaps show before t-PollRetransmit
ARQ_SECONDS = 4.0
ARQ_OFFLOAD = 50
RADIO_LOSS = 0.01
ARQ_SETTLE_S = 30.0
# the demo reads the sidecar once: a slow poll leaves the two vCPUs to the
# traffic (at 100 ms it would poll three control sockets ten times a second)
POWER_PERIOD_MS = 1000


def _power_line(gnbctl: Gnbctl, address: str) -> str:
    """`gnbctl power show`'s facts in one line: each target's governor
    mode(s) and where the power figures come from."""
    shown = gnbctl("power", "show")["result"]
    modes = ", ".join(f"{t['name']} " + ("/".join(sorted({lc["mode"] for lc in t["lcores"]}))
                                         if t["reachable"] else "unreachable")
                      for t in shown["targets"])
    power = shown["power"]
    return (f"  power sidecar: {address}; governor {modes}; power source "
            f"{power['source']} (this machine: {', '.join(power['sources'])})")


def _arq_run(topology: HybridTopology, gnbctl: Gnbctl, drbs: list[int], console) -> dict:
    """The BaaS up, the UE emulator on the radio PF's far end with 1% loss,
    paced downlink traffic; then until the BaaS holds nothing. The DRBs
    carried traffic before: the UE's receiving entities start at each DRB's
    next SN (--learn-first-sn), as bearer setup would tell them."""
    topology.start_baas()
    console.print(f"[bold]BaaS[/] in {topology.baas.spec.netns} on the BaaS PF, gRPC "
                  f"{topology.baas.spec.grpc}; UE emulator behind the radio PF, "
                  f"{RADIO_LOSS:.0%} of the radio frames lost")
    gnbctl("offload", "set", str(ARQ_OFFLOAD))
    links = topology.network.links
    ue = UeEmulatorProcess(links["ran"].netns.name, links["ran"].pair.test,
                           topology.run_dir / "ue" / "summary.json", loss=RADIO_LOSS,
                           seed=2026, extra_args=["--learn-first-sn"]).start()
    try:
        sender = PacedSender(links["n3"].netns.name, links["n3"].pair.test,
                             DownlinkFrames(drbs), ARQ_RATE_PPS).start()
        time.sleep(ARQ_SECONDS)
        sent = sender.stop()
        settled = wait_until(lambda: gnbctl("baas", "stats")["result"]["held"] == 0,
                             ARQ_SETTLE_S)
        baas = gnbctl("baas", "stats")["result"]
    finally:
        summary = ue.stop()
    delivered = [k for drb in summary["drbs"] for k in drb["delivered_k"]]
    distinct = set(delivered)
    return {"sent": sent, "settled_s": settled, "baas": baas, "ue": summary,
            "lost": sum(1 for k in range(sent) if k not in distinct),
            "duplicates": len(delivered) - len(distinct),
            "order_violations": summary["totals"]["order_violation_count"]}


def _arq_table(arq: dict) -> Table:
    table = Table(title=f"RLC AM over a lossy radio link ({ARQ_OFFLOAD}% offloaded, "
                        f"{ARQ_RATE_PPS} pps over {ARQ_DRBS} DRBs for {ARQ_SECONDS:g} s)")
    table.add_column("")
    table.add_column("value", justify="right")
    c, link, totals = arq["baas"]["counters"], arq["ue"]["link"], arq["ue"]["totals"]
    rows = [
        ("SDUs sent on N3", arq["sent"]),
        ("radio frames the link dropped (first transmissions and retransmissions)",
         f"{link['downlink_dropped']} of {link['downlink_frames']}"),
        ("BaaS: AMD PDU copies buffered", c["pdus_received"]),
        ("BaaS: STATUS PDUs applied", c["status_received"]),
        ("BaaS: NACKed SNs", c["nacked"]),
        ("BaaS: retransmissions (NACKs and t-PollRetransmit)", c["retransmitted"]),
        ("BaaS: t-PollRetransmit expiries", c["poll_timeouts"]),
        ("BaaS: radio link failures", c["rlf"]),
        ("UE: SDUs delivered", totals["delivered"]),
        ("UE: duplicates discarded (RLC)", totals["duplicates"] + totals["outside_window"]),
        ("SDUs lost", arq["lost"]),
        ("SDUs delivered twice / out of order", f"{arq['duplicates']} / {arq['order_violations']}"),
        ("BaaS empty after", "-" if arq["settled_s"] is None else f"{arq['settled_s']:.2f} s"),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def _arq_ok(arq: dict) -> bool:
    return (arq["settled_s"] is not None and arq["lost"] == 0 and arq["duplicates"] == 0
            and arq["order_violations"] == 0 and arq["baas"]["counters"]["rlf"] == 0)


def _targets_table(result: RunResult) -> Table:
    table = Table(title="packets per target and port (this run's totals since start)")
    for column in ("target", "port", "rx", "tx", "drops"):
        table.add_column(column, justify="right" if column != "target" else "left")
    for name, stats in result.target_stats.items():
        drops = ", ".join(f"{k} {v}" for k, v in stats["drops"].items() if v) or "0"
        for port in stats["ports"]:
            table.add_row(name, str(port["port"]), str(port["rx"]), str(port["tx"]),
                          drops if port["port"] == 0 else "")
    return table


def _shifts_table(result: RunResult) -> Table:
    table = Table(title="live shifts (gnbctl offload set under traffic)")
    for column in ("from %", "to %", "gnbctl ms", "in effect after invocation, ms",
                   "after return, ms"):
        table.add_column(column, justify="right")
    for shift in result.shifts:
        latency = "-" if shift.latency_ms is None else (
            "before return" if shift.effective_before_return else f"{shift.latency_ms:.2f}")
        after_invocation = "-" if shift.effective_at is None else \
            f"{shift.effective_after_invocation_ms:.1f}"
        table.add_row(f"{shift.from_percent:g}", f"{shift.percent:g}", f"{shift.command_ms:.0f}",
                      after_invocation, latency)
    return table


def _check_table(result: RunResult) -> Table:
    table = Table(title="radio output checked frame by frame")
    table.add_column("check")
    table.add_column("value", justify="right")
    for key, value in result.check.summary().items():
        table.add_row(key, str(value))
    table.add_row("frames kept on the NIC", str(result.split.kept))
    table.add_row("frames processed by hosts", str(result.split.to_hosts))
    for role, losses in result.side_losses.items():
        table.add_row(f"lost after numbering ({role}): NIC tx / veth / tcpdump",
                      f"{losses.nic_tx} / {losses.veth} / {losses.capture}")
    return table


def main() -> int:
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        console.print("[bold]bringing up[/] 1 NIC + 2 hosts in network namespaces")
        with HybridTopology(TopologyConfig(n_hosts=2, power=True,
                                           power_period_ms=POWER_PERIOD_MS)) as topology:
            for target in topology.targets:
                console.print(f"  {target.name}: P4Runtime {target.spec.p4runtime_address}, "
                              f"lcore {target.spec.lcore}, ports {', '.join(target.spec.vdevs)}")
            console.print(f"  namespaces: "
                          f"{', '.join(l.netns.name for l in topology.network.links.values())}")
            console.print(f"  gnbctl topology: {topology.gnbctl_topology}")
            gnbctl = Gnbctl(topology.gnbctl_topology)
            console.print(_power_line(gnbctl, topology.power.address), highlight=False)
            started = time.monotonic()
            gnbctl("pipeline", "push")
            console.print(f"[bold]gnbctl pipeline push[/] {time.monotonic() - started:.1f} s")
            started = time.monotonic()
            gnbctl("drb", "load", "--count", str(N_DRBS))
            console.print(f"[bold]gnbctl drb load --count {N_DRBS}[/] "
                          f"{time.monotonic() - started:.1f} s (every target)")
            gnbctl("offload", "set", "0")
            console.print(f"[bold]traffic[/] {RATE_PPS} pps over {ACTIVE_DRBS} DRBs; "
                          f"offload 0% -> {' -> '.join(f'{p}%' for p in SHIFTS)}, "
                          f"{PHASE_S} s each")
            with TrafficRun(topology, gnbctl, spread_drbs(N_DRBS, ACTIVE_DRBS), RATE_PPS, 0) as run:
                run.run_for(PHASE_S)
                for percent in SHIFTS:
                    run.shift(percent)
                    run.run_for(PHASE_S)
            result = run.result
            arq = _arq_run(topology, gnbctl, spread_drbs(N_DRBS, ARQ_DRBS, seed=2), console)
    except (TopologyError, GnbctlError, OSError) as e:
        console.print(f"[red]demo failed: {e}[/]")
        return 1
    for table in (_targets_table(result), _shifts_table(result), _check_table(result)):
        console.print(table)
    console.print("Hosts count every downlink frame as clone_no_session: the contract gives them "
                  "no clone session, since the NIC makes the BaaS copy after numbering the frame.")
    unexplained = result.unexplained()
    for problem in unexplained + (result.check.problems[:10] if unexplained else []):
        console.print(f"  [red]{problem}[/]")
    slow = [s for s in result.shifts if s.latency_ms is not None
            and s.latency_ms > MAX_SHIFT_LATENCY_MS]
    console.print(_arq_table(arq))
    console.print("Losses inside a DRB's stream come back by NACK (the UE's t-Reassembly); a "
                  "lost last PDU before a pause by t-PollRetransmit: the pipeline cannot mark "
                  "the last PDU before a pause with a poll (TS 38.322 5.3.3.2), so the BaaS "
                  "polls by retransmitting the highest SN when the timer expires, and the UE "
                  "discards the duplicate if it had it.")
    ok = not unexplained and not slow and _arq_ok(arq)
    console.print("[green]all checks passed[/]" if ok else "[red]checks failed[/]")
    return 0 if ok else 1
