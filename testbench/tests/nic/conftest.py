"""Fixtures for the SmartNIC build (p4src/nic.p4) on the hybrid topology's
ports (nic_topology.py): `run_nic` replays pcap files (each port's frames
in order, ports interleaved as the runtime polls them); `live_nic` runs the
NIC on veth pairs so a test can send, change tables and send again while
it runs."""
from __future__ import annotations

import itertools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from nic_topology import LiveNic, read_state
from testbench.gnb.nic_entries import PORTS

P4SRC = Path(__file__).resolve().parents[3] / "p4src"


@pytest.fixture(scope="session")
def nic_build(compiled):
    return compiled(P4SRC / "nic.p4")


@dataclass
class NicRunResult:
    ports: list[list[bytes]]        # frames sent, per NIC port
    drops: dict[str, dict]          # reason -> {packets, bytes}, only reasons that dropped
    counters: dict[str, dict[int, dict]]
    registers: dict[str, dict[int, int]]
    stats: dict


@pytest.fixture
def run_nic(nic_build, pcap_runtime):
    """run_nic({port: [frames]}, entries, drb_indices) -> NicRunResult; the
    runtime must lose nothing but what the pipeline drops (and counts)."""
    def run(inputs: dict[int, list[bytes]], entries, drb_indices=()) -> NicRunResult:
        per_port = [list(inputs.get(port, ())) for port in range(PORTS)]
        runtime = pcap_runtime(nic_build, per_port, entries=list(entries))
        stats = runtime.wait_received()
        drops, counters, registers = read_state(runtime, sorted(set(drb_indices)))
        runtime_drops = dict(stats["drops"])
        assert runtime_drops.pop("pipeline") == sum(cell["packets"] for cell in drops.values())
        assert not any(runtime_drops.values()), stats["drops"]
        assert runtime.runtime.alive(), runtime.runtime.log_tail()
        outputs = runtime.stop()
        assert runtime.exit_status == 0, runtime.runtime.log_tail()
        outputs += [[] for _ in range(PORTS - len(outputs))]
        return NicRunResult(outputs, drops, counters, registers, stats)
    return run


_live_runs = itertools.count()


@pytest.fixture
def live_nic(nic_build, cache_root):
    """live_nic(entries) -> LiveNic, closed at the end of the test."""
    started: list[LiveNic] = []

    def start(entries) -> LiveNic:
        run_dir = cache_root / "runs" / f"live-nic-{os.getpid()}-{next(_live_runs)}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        nic = LiveNic(nic_build, run_dir, entries)
        started.append(nic)
        return nic

    yield start
    for nic in started:
        nic.close()
