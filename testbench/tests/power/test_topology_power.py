"""The hybrid topology with its power sidecar (TopologyConfig(power=True)):
the sidecar governs the NIC and the host, gnbctl finds it through the
[power] the topology file gets, the targets run the configured governor,
a restarted host is governed again on the same control socket, and the
teardown stops the sidecar."""
from __future__ import annotations

import time

import pytest

from testbench.topology.gnbctl import Gnbctl
from controller.launch.topology import HybridTopology, TopologyConfig

pytestmark = pytest.mark.dpdk


def test_the_topology_starts_the_sidecar(dpdk_environment):
    config = TopologyConfig(n_hosts=1, governor="adaptive", power=True)
    with HybridTopology(config) as topo:
        assert topo.power is not None and topo.power.alive()
        assert f'[power]\naddress = "{topo.power.address}"' in topo.gnbctl_topology.read_text()
        gnbctl = Gnbctl(topo.gnbctl_topology)
        shown = gnbctl("power", "show")["result"]
        rows = {t["name"]: t for t in shown["targets"]}
        assert list(rows) == ["nic", "host0"]
        for target in topo.targets:
            row = rows[target.name]
            assert row["pid"] == target.runtime.process.pid
            assert [lc["mode"] for lc in row["lcores"]] == ["adaptive"]
            assert [lc["lcore"] for lc in row["lcores"]] == [target.spec.lcore]
        # a restarted host: the same control socket, a new process
        old = rows["host0"]["pid"]
        topo.restart_host(0)
        deadline = time.monotonic() + 10
        while True:
            row = {t["name"]: t for t in gnbctl("power", "show")["result"]["targets"]}["host0"]
            if row["reachable"] and row["pid"] != old or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert row["reachable"] and row["pid"] == topo.hosts[0].runtime.process.pid
        sidecar = topo.power
    assert not sidecar.alive() and sidecar.process.returncode == 0
