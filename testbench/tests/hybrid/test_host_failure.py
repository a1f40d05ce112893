"""A host process dies under traffic: the controller (`gnbctl run`)
notices within a second and its DRBs come back through the NIC; when the
host returns, the controller provisions it again and the ratio is restored.
SNs stay continuous throughout (the NIC numbers every frame it forwards;
frames lost inside the dead host never got an SN)."""
from __future__ import annotations

import subprocess
import time

from conftest import N_DRBS, assert_clean

FAILOVER_LIMIT_S = 1.0
RETURN_LIMIT_S = 10.0
POLL_S = 0.002


def nic_processed(topology) -> int:
    """Downlink frames the NIC processed itself: its dl_drb_counter (a
    host-built frame is counted in host_return_counter instead). Port
    counters cannot tell: memif's reset when a host goes away."""
    cells = topology.nic.request({"cmd": "counter_read", "counter": "dl_drb_counter"})["values"]
    return sum(cell["packets"] for cell in cells)


def _wait_until(condition, limit_s: float) -> float | None:
    """Seconds until condition() held, or None within limit_s."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if condition():
            return time.monotonic() - start
        time.sleep(POLL_S)
    return None


def test_host_dies_and_returns(hybrid, tmp_path):
    topology = hybrid.topology
    watcher = hybrid.gnbctl.start_watch(tmp_path / "gnbctl-run.log")
    try:
        time.sleep(0.5)
        assert watcher.poll() is None, (tmp_path / "gnbctl-run.log").read_text()
        with hybrid.traffic(100) as run:
            run.run_for(0.5)
            before = nic_processed(topology)
            topology.hosts[0].kill()
            failover_s = _wait_until(lambda: nic_processed(topology) > before,
                                     FAILOVER_LIMIT_S + 0.5)
            run.run_for(0.5)
            topology.restart_host(0)
            host_rx = lambda: topology.hosts[0].stats()["ports"][0]["rx"]  # noqa: E731
            return_s = _wait_until(lambda: host_rx() > 0, RETURN_LIMIT_S)
            run.run_for(0.5)
            restored = nic_processed(topology)
            run.run_for(0.3)
            after = nic_processed(topology)
    finally:
        watcher.terminate()
        try:
            watcher.wait(timeout=5)
        except subprocess.TimeoutExpired:
            watcher.kill()
        _leave_host_provisioned(hybrid, 0)
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


def _leave_host_provisioned(hybrid, index: int):
    """The other tests of the folder share the topology: the host must be
    up with its pipeline and DRBs whatever happened here."""
    host = hybrid.topology.hosts[index]
    if not host.alive():
        hybrid.topology.restart_host(index)
    hybrid.gnbctl("--target", host.name, "pipeline", "push")
    hybrid.gnbctl("--target", host.name, "drb", "load", "--count", str(N_DRBS))


def hybrid_rate_budget(rate_pps: float, failover_s: float) -> int:
    return int(rate_pps * (failover_s + 0.05)) + 1
