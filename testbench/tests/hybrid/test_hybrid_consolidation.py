"""Core consolidation under traffic (issue 15 item 7): with the policy on,
`gnbctl run` folds the offloaded DRBs onto host0 at this low load, and
host1's lcore gets no frame; spreading (the policy's thresholds lowered
below the load, then the policy off) gives host1 its buckets back. Every
move is a live shift between hosts: no loss, no duplicate, SNs continuous
per DRB, bytes as expected (assert_clean). The decision's own branches
are testbench/tests/controller/test_consolidate.py."""
from __future__ import annotations

import os
import signal
import time

from conftest import assert_clean
from testbench.topology.gnbctl import wait_until
from controller.launch.processes import nic_vf_ports
from controller.launch.topology import TopologyConfig

TOPOLOGY_CONFIG = TopologyConfig(n_hosts=2, power=True)
MOVE_LIMIT_S = 10.0     # hold_s 1 plus a telemetry period, on a loaded 2-core machine


def vf_tx(topology) -> list[int]:
    """Frames the NIC sent to each host's VF so far."""
    ports = topology.nic.stats()["ports"]
    return [ports[nic_vf_ports(i)[0]]["tx"] for i in range(len(topology.hosts))]


def modes(target) -> set[str]:
    """Its lcores' governor modes, from its control socket."""
    return {lc["mode"] for lc in target.request({"cmd": "power"})["lcores"]}


def host_ports_of_buckets(gnbctl) -> dict[str, int]:
    """VF buckets per host, as the NIC holds them (gnbctl offload show)."""
    shown = gnbctl("offload", "show")["result"]
    (nic,) = shown if isinstance(shown, list) else [shown]
    return {name: host["vf_buckets"] for name, host in nic["hosts"].items()}


def test_fold_and_spread_under_traffic(hybrid, tmp_path):
    topology, gnbctl = hybrid.topology, hybrid.gnbctl
    try:
        with hybrid.watching(tmp_path / "gnbctl-run.log") as watch, \
                hybrid.traffic(50) as run:
            run.run_for(1.0)
            assert all(n > 0 for n in vf_tx(topology)), vf_tx(topology)
            asked = time.time()
            gnbctl("power", "consolidate", "on", "--hold-s", "1")
            folded = watch.wait_event("consolidated", after=asked, timeout=MOVE_LIMIT_S)
            assert folded is not None, watch.log_text()
            assert host_ports_of_buckets(gnbctl) == {"host0": 64, "host1": 0}
            # frames already on host1's VF when the buckets moved are counted first
            run.run_for(0.3)
            during = vf_tx(topology)
            run.run_for(1.5)
            after = vf_tx(topology)
            assert after[1] == during[1], (during, after)      # host1 gets nothing
            assert after[0] > during[0]                          # host0 gets it all
            # host1's lcore left nap (which polls an empty queue) to sleep
            assert modes(topology.hosts[1]) == {"adaptive"}, folded["detail"]
            assert modes(topology.hosts[0]) == {"nap"}
            # a load above the spread threshold spreads at once
            asked = time.time()
            gnbctl("power", "consolidate", "--consolidate-below", "0.00001",
                   "--spread-above", "0.00002")
            spread = watch.wait_event("spread", after=asked, timeout=MOVE_LIMIT_S)
            assert spread is not None, watch.log_text()
            run.run_for(1.0)
            assert vf_tx(topology)[1] > after[1]
            assert host_ports_of_buckets(gnbctl) == {"host0": 32, "host1": 32}
            assert modes(topology.hosts[1]) == {"nap"}          # its mode back
            # and off keeps every bucket home (nothing moves: it is spread)
            gnbctl("power", "consolidate", "off", "--consolidate-below", "0.5",
                   "--spread-above", "0.8")
            run.run_for(1.5)
    finally:
        gnbctl("power", "consolidate", "off")
    print("folded:", folded["detail"], "| spread:", spread["detail"])
    assert_clean(run.result)
    assert host_ports_of_buckets(gnbctl) == {"host0": 32, "host1": 32}


def test_a_watcher_puts_back_what_offload_set_spread(hybrid, tmp_path):
    """`offload set` deals the VF buckets over every live host; a watcher
    that keeps them folded puts them back within a period."""
    gnbctl = hybrid.gnbctl
    try:
        with hybrid.watching(tmp_path / "gnbctl-run.log") as watch:
            gnbctl("offload", "set", "50")
            asked = time.time()
            gnbctl("power", "consolidate", "on", "--hold-s", "1")
            assert watch.wait_event("consolidated", after=asked, timeout=MOVE_LIMIT_S), \
                watch.log_text()
            gnbctl("offload", "set", "60")
            assert wait_until(lambda: host_ports_of_buckets(gnbctl)["host1"] == 0,
                              MOVE_LIMIT_S) is not None, watch.log_text()
    finally:
        gnbctl("power", "consolidate", "off")
        gnbctl("offload", "set", "0")


def test_the_sidecar_killed_while_folded_spreads(hybrid, tmp_path):
    """Without the load the watcher cannot tell a fold is still safe: when
    the sidecar dies (SIGKILL) it says so and spreads the hosts, losing
    nothing; a new sidecar starts with the policy off."""
    topology, gnbctl = hybrid.topology, hybrid.gnbctl
    try:
        with hybrid.watching(tmp_path / "gnbctl-run.log") as watch, \
                hybrid.traffic(50) as run:
            asked = time.time()
            gnbctl("power", "consolidate", "on", "--hold-s", "1")
            assert watch.wait_event("consolidated", after=asked, timeout=MOVE_LIMIT_S), \
                watch.log_text()
            run.run_for(0.5)
            killed = time.time()
            os.killpg(topology.power.process.pid, signal.SIGKILL)
            paused = watch.wait_event("consolidation paused", after=killed, timeout=MOVE_LIMIT_S)
            spread = watch.wait_event("spread", after=killed, timeout=MOVE_LIMIT_S)
            assert paused is not None and spread is not None, watch.log_text()
            run.run_for(0.5)
            before = vf_tx(topology)
            run.run_for(1.0)
            assert vf_tx(topology)[1] > before[1]
            assert host_ports_of_buckets(gnbctl) == {"host0": 32, "host1": 32}
    finally:
        topology.power.stop()
        topology.power = None
        topology.start_power()
        # the mode the dead sidecar could not put back
        topology.hosts[1].request({"cmd": "power_mode", "mode": "nap"})
    print("paused:", paused["detail"], "| spread:", spread["detail"])
    assert_clean(run.result)
    assert gnbctl("power", "consolidate")["result"]["policy"]["enabled"] is False
