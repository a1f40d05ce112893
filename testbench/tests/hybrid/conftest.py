"""One hybrid topology per test module (1 NIC + 2 hosts in network
namespaces, 65,536 DRBs loaded by gnbctl): bringing it up costs seconds,
each test runs its own traffic through it. Shared by the tests: the verdict
of a run (assert_clean), the controller's watcher, putting a target back as
the other tests expect it."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from testbench.topology.gnbctl import Gnbctl
from testbench.topology.scenario import RunResult, TrafficRun, spread_drbs
from controller.launch.topology import HybridTopology, TopologyConfig

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

    @contextlib.contextmanager
    def watching(self, log_path: Path):
        """`gnbctl run` for the block, once it watches (its first event);
        stopped after the block whatever state the test left it in."""
        watch = self.gnbctl.start_watch(log_path)
        try:
            assert watch.wait_event("watching", timeout=10) is not None, watch.log_text()
            yield watch
        finally:
            watch.stop()

    def provision(self, name: str):
        """The target up, with its pipeline and the DRBs (and, for the NIC,
        the split cleared to 0%): the other tests of the module share the
        topology, whatever a test did to it."""
        target = self.topology.target(name)
        if not target.alive():
            target.start()
        if target is self.topology.nic:
            for host in self.topology.hosts:   # their VFs do not reconnect to a new NIC
                host.restart()
            for host in self.topology.hosts:
                self.topology.wait_memif_connected(host)
            self.gnbctl("pipeline", "push")
            self.gnbctl("drb", "load", "--count", str(N_DRBS))
            return
        if target.memif_connections() < 2:
            self.topology.wait_memif_connected(target)
        self.gnbctl("--target", name, "pipeline", "push")
        self.gnbctl("--target", name, "drb", "load", "--count", str(N_DRBS))


def hugepages_free() -> int:
    with open("/proc/meminfo") as meminfo:
        return next(int(line.split()[1]) for line in meminfo
                    if line.startswith("HugePages_Free:"))


@pytest.fixture(scope="module")
def hybrid(request, dpdk_environment):
    """A module may set TOPOLOGY_CONFIG (default: 2 hosts, no hugepages).
    After the teardown nothing of the topology may be left on the machine."""
    config = getattr(request.module, "TOPOLOGY_CONFIG", None) or TopologyConfig(n_hosts=2)
    free_before = hugepages_free()
    with HybridTopology(config) as topology:
        gnbctl = Gnbctl(topology.gnbctl_topology)
        gnbctl("pipeline", "push")
        gnbctl("drb", "load", "--count", str(N_DRBS))
        yield Hybrid(topology, gnbctl, spread_drbs(N_DRBS, ACTIVE_DRBS))
    leaked = topology.leftovers()
    print(f"\nleft on the machine after the topology's teardown: {len(leaked)} "
          f"{[str(p) for p in leaked]}; hugepages free {free_before} before its bring-up, "
          f"{hugepages_free()} after its teardown ({'used' if config.hugepages else 'not used'}"
          f" by it; other processes on the machine may use them meanwhile)")
    assert not leaked, f"the topology's processes left {leaked}"


def nic_processed(topology) -> int:
    """Downlink frames the NIC processed itself: its dl_drb_counter (a
    host-built frame is counted in host_return_counter instead). Port
    counters cannot tell: memif's reset when a host goes away."""
    cells = topology.nic.request({"cmd": "counter_read", "counter": "dl_drb_counter"})["values"]
    return sum(cell["packets"] for cell in cells)


def _where(result: RunResult) -> str:
    lines = [f"split {result.split}, lost after numbering {result.side_losses}"]
    for name, stats in result.target_stats.items():
        ports = ", ".join(f"{p['port']}: rx {p['rx']} tx {p['tx']}" for p in stats["ports"])
        drops = {k: v for k, v in stats["drops"].items() if v}
        lines.append(f"{name}: {ports}; drops {drops}")
    return "\n".join(lines)


def assert_clean(result: RunResult, lost_inside: int = 0, baas_unpaired_inside: int = 0,
                 skipped_inside: int = 0):
    """No loss, no duplicates, SNs continuous per DRB, bytes as expected,
    but for frames counted lost on the way to the captures (a loaded
    machine's veth backlog or tcpdump; the NIC's full tx ring) and
    `lost_inside` frames inside a process that died (of which
    `baas_unpaired_inside` came out on one side only: a NIC killed between
    sending a radio frame and its BaaS copy, and `skipped_inside` had been
    numbered by a NIC that died: skipped SNs)."""
    unexplained = result.unexplained(lost_inside, baas_unpaired_inside, skipped_inside)
    assert not unexplained, "\n".join([*unexplained, str(result.check.summary()),
                                       *result.check.problems[:20], _where(result)])
    assert result.check.received > 0 and result.sent > 0
