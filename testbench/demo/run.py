"""`make demo`: the hybrid gNB user plane end to end on one machine.

Brings up the topology in network namespaces (the NIC process with its PFs
on veths and one memif VF pair per host, two host processes), pushes the
pipelines and 65,536 DRBs with gnbctl, sends downlink GTP-U from the N3
namespace while gnbctl moves the split 0% -> 50% -> 100% -> 0% live, and
checks every frame captured on the radio and BaaS sides: none lost or
duplicated, PDCP/RLC SNs continuous per DRB, bytes as expected. Exit status
0 only when all of that holds."""
from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.table import Table

from testbench.topology.gnbctl import Gnbctl, GnbctlError
from testbench.topology.scenario import RunResult, TrafficRun, spread_drbs
from testbench.topology.topology import HybridTopology, TopologyConfig, TopologyError

N_DRBS = 65536
ACTIVE_DRBS = 1024
RATE_PPS = 20_000
PHASE_S = 1.5
SHIFTS = (50, 100, 0)
MAX_SHIFT_LATENCY_MS = 50


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
        with HybridTopology(TopologyConfig(n_hosts=2)) as topology:
            for target in topology.targets:
                console.print(f"  {target.name}: P4Runtime {target.spec.p4runtime_address}, "
                              f"lcore {target.spec.lcore}, ports {', '.join(target.spec.vdevs)}")
            console.print(f"  namespaces: "
                          f"{', '.join(l.netns.name for l in topology.network.links.values())}")
            console.print(f"  gnbctl topology: {topology.gnbctl_topology}")
            gnbctl = Gnbctl(topology.gnbctl_topology)
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
    ok = not unexplained and not slow
    console.print("[green]all checks passed[/]" if ok else "[red]checks failed[/]")
    return 0 if ok else 1
