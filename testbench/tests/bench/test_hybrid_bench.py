"""The hybrid section of `make bench` (testbench/bench/hybrid.py) on short
windows: the topology comes up with the pcap replay and net_null PFs, and
`offload set 100` sends every frame through the host and back out of the
NIC's radio port."""
from __future__ import annotations

import pytest

from testbench.bench.gnb_traffic import downlink_pcap
from testbench.bench.hybrid import DRBS, Placement, sweep

pytestmark = pytest.mark.dpdk


def test_offload_moves_the_replayed_downlink_through_the_host(dpdk_environment, tmp_path):
    pcap = downlink_pcap(tmp_path, DRBS)
    result = sweep(Placement(nic_lcore=0, host_lcores=(1,)), pcap, tmp_path / "run",
                   percents=(0, 100), warmup_s=0.5, window_s=0.5)
    on_nic, on_host = result["points"]

    assert on_nic["radio_mpps"] > 0
    assert on_nic["to_hosts_mpps"] == on_nic["host_built_mpps"] == 0
    assert on_nic["processes"]["nic"]["drops_pps"] == {}, "the NIC knows every DRB of the pcap"

    assert on_host["offloaded_share"] == pytest.approx(1, abs=0.01)
    host = on_host["processes"]["host0"]["ports_pps"]
    assert host["from_nic"]["rx"] > 0 and host["to_nic"]["tx"] > 0
    # Every radio frame is one the host built (the NIC renumbers it and sends it on).
    assert on_host["host_built_mpps"] > 0
    assert on_host["radio_mpps"] == pytest.approx(on_host["host_built_mpps"], rel=0.01)
    nic_ports = on_host["processes"]["nic"]["ports_pps"]
    assert nic_ports["baas"]["tx"] == pytest.approx(nic_ports["ran"]["tx"], rel=0.01), \
        "one AM copy per radio frame"
