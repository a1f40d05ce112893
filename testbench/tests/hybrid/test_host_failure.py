"""A host process dies under traffic: the controller (`gnbctl run`)
notices within a second and its DRBs come back through the NIC; when the
host returns, the controller provisions it again and the ratio is restored.
SNs stay continuous throughout (the NIC numbers every frame it forwards;
frames lost inside the dead host never got an SN).
test_fault_injection.py kills every process of the topology this way."""
from __future__ import annotations

from conftest import assert_clean, nic_processed
from testbench.topology.gnbctl import wait_until

FAILOVER_LIMIT_S = 1.0
RETURN_LIMIT_S = 10.0


def test_host_dies_and_returns(hybrid, tmp_path):
    topology = hybrid.topology
    try:
        with hybrid.watching(tmp_path / "gnbctl-run.log"), hybrid.traffic(100) as run:
            run.run_for(0.5)
            before = nic_processed(topology)
            topology.hosts[0].kill()
            failover_s = wait_until(lambda: nic_processed(topology) > before,
                                    FAILOVER_LIMIT_S + 0.5)
            run.run_for(0.5)
            topology.restart_host(0)
            host_rx = lambda: topology.hosts[0].stats()["ports"][0]["rx"]  # noqa: E731
            return_s = wait_until(lambda: host_rx() > 0, RETURN_LIMIT_S)
            run.run_for(0.5)
            restored = nic_processed(topology)
            run.run_for(0.3)
            after = nic_processed(topology)
    finally:
        hybrid.provision(topology.hosts[0].name)
    print(f"failover {failover_s} s, host back in {return_s} s")
    assert failover_s is not None and failover_s <= FAILOVER_LIMIT_S
    assert return_s is not None
    # at 100% everything goes to the hosts again: the NIC keeps nothing
    assert after == restored
    # only frames that were inside the dead host or on its VF when it died
    # are lost (they never got an SN), and any frames counted lost after
    # numbering on the way to the captures (a loaded machine's veth or
    # tcpdump): each such loss explains exactly one skipped SN
    assert_clean(run.result, lost_inside=hybrid_rate_budget(run.rate_pps, failover_s))


def hybrid_rate_budget(rate_pps: float, failover_s: float) -> int:
    return int(rate_pps * (failover_s + 0.05)) + 1
