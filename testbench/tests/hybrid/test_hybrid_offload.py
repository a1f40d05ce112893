"""Traffic through the hybrid topology with a fixed split and with live
shifts: every frame comes out once, SNs continuous per DRB (the NIC
numbers host-built frames), and the split is the one gnbctl set."""
from __future__ import annotations

import pytest

from conftest import assert_clean

MAX_SHIFT_LATENCY_MS = 50


@pytest.mark.parametrize("percent", [0, 50, 100])
def test_fixed_split(hybrid, percent):
    with hybrid.traffic(percent) as run:
        run.run_for(1.0)
    result = run.result
    assert_clean(result)
    # exactly the frames of the offloaded DRBs' buckets went to the hosts
    assert result.split.to_hosts == result.expected_to_hosts
    assert result.split.kept == result.sent - result.expected_to_hosts
    if percent == 50:
        assert 0.3 < result.split.to_hosts / result.sent < 0.7
    if percent > 0:     # the VF buckets spread the offloaded DRBs over both hosts
        host_rx = [result.target_stats[h.name]["ports"][0]["rx"] for h in hybrid.topology.hosts]
        assert all(rx > 0 for rx in host_rx), host_rx


def test_live_shifts_0_100_30(hybrid):
    with hybrid.traffic(0) as run:
        run.run_for(0.7)
        to_all = run.shift(100)
        run.run_for(0.7)
        to_30 = run.shift(30)
        run.run_for(0.7)
    result = run.result
    assert_clean(result)
    for shift in (to_all, to_30):
        assert shift.latency_ms is not None, f"the shift to {shift.percent}% never took effect"
        assert shift.latency_ms <= MAX_SHIFT_LATENCY_MS, shift.as_json()
    print("shifts:", [shift.as_json() for shift in result.shifts])
