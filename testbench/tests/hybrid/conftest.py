"""One hybrid topology for the whole folder (1 NIC + 2 hosts in network
namespaces, 65,536 DRBs loaded by gnbctl): bringing it up costs seconds,
each test runs its own traffic through it."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from testbench.topology.gnbctl import Gnbctl
from testbench.topology.scenario import RunResult, TrafficRun, spread_drbs
from testbench.topology.topology import HybridTopology, TopologyConfig

N_DRBS = 65536
ACTIVE_DRBS = 512          # several packets per DRB and second, over every TEID bucket range
RATE_PPS = 20_000          # moderate: the NIC and both hosts share two cores with the sender


@dataclass
class Hybrid:
    topology: HybridTopology
    gnbctl: Gnbctl
    drbs: list[int]

    def traffic(self, percent: float, rate_pps: float = RATE_PPS) -> TrafficRun:
        """Sets the split, then a traffic run (a context manager)."""
        self.gnbctl("offload", "set", str(percent))
        return TrafficRun(self.topology, self.gnbctl, self.drbs, rate_pps, percent)


@pytest.fixture(scope="module")
def hybrid(dpdk_environment):
    with HybridTopology(TopologyConfig(n_hosts=2)) as topology:
        gnbctl = Gnbctl(topology.gnbctl_topology)
        gnbctl("pipeline", "push")
        gnbctl("drb", "load", "--count", str(N_DRBS))
        yield Hybrid(topology, gnbctl, spread_drbs(N_DRBS, ACTIVE_DRBS))


def _where(result: RunResult) -> str:
    lines = [f"split {result.split}, lost after numbering {result.side_losses}"]
    for name, stats in result.target_stats.items():
        ports = ", ".join(f"{p['port']}: rx {p['rx']} tx {p['tx']}" for p in stats["ports"])
        drops = {k: v for k, v in stats["drops"].items() if v}
        lines.append(f"{name}: {ports}; drops {drops}")
    return "\n".join(lines)


def assert_clean(result: RunResult, lost_inside: int = 0):
    """No loss, no duplicates, SNs continuous per DRB, bytes as expected,
    but for frames counted lost on the way to the captures (a loaded
    machine's veth backlog or tcpdump; the NIC's full tx ring) and
    `lost_inside` frames inside a process that died."""
    unexplained = result.unexplained(lost_inside)
    assert not unexplained, "\n".join([*unexplained, str(result.check.summary()),
                                       *result.check.problems[:20], _where(result)])
    assert result.check.received > 0 and result.sent > 0
