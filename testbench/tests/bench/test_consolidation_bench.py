"""The consolidation section of `make bench` (testbench/bench/hybrid_power.py)
without DPDK: per-process shares over a window from two readings of the
runtimes' `power` replies, summed over a process's lcores, with the model
fed each lcore's own deltas; the hosts' totals and the summary line."""
from __future__ import annotations

import pytest

from power.model import estimate
from testbench.bench.hybrid_power import _process_shares, summary

LADDER = [2000 - 100 * i for i in range(13)]
SECOND = 10**9


def lcore(cpu=0, busy=0, paused=0, asleep=0, sleeps=0, residency=None, pstate=0) -> dict:
    return {"cpu_time_ns": cpu, "busy_ns": busy, "paused_ns": paused, "asleep_ns": asleep,
            "sleeps": sleeps, "pstate": pstate,
            "pstate_residency_ns": residency or [0] * len(LADDER)}


def reading(at_ns: int, power: dict) -> dict:
    return {"at_ns": at_ns, "power": power, "backends": {"pstates_mhz": LADDER}}


def test_shares_are_window_deltas_summed_over_lcores():
    before = reading(0, {"nic": {1: lcore(cpu=5 * SECOND, busy=5 * SECOND)},
                         "host0": {2: lcore(), 3: lcore()}})
    after = reading(2 * SECOND, {
        "nic": {1: lcore(cpu=7 * SECOND, busy=7 * SECOND,
                         residency=[2 * SECOND] + [0] * 12)},
        "host0": {2: lcore(cpu=SECOND // 2, busy=SECOND // 2, asleep=3 * SECOND // 2,
                           sleeps=100, residency=[SECOND // 2] + [0] * 12),
                  3: lcore(cpu=SECOND // 2, busy=SECOND // 2, asleep=3 * SECOND // 2,
                           sleeps=300, residency=[SECOND // 2] + [0] * 12)}})
    shares = _process_shares(before, after, estimate)
    assert shares["nic"]["cpu_share"] == pytest.approx(1.0)
    assert shares["host0"]["cpu_share"] == pytest.approx(0.5)       # two lcores, 0.25 each
    assert shares["host0"]["asleep_share"] == pytest.approx(1.5)    # per lcore sums
    assert shares["host0"]["sleeps_per_s"] == pytest.approx(200)
    one = estimate(SECOND // 2, 0, 3 * SECOND // 2, 100, [SECOND // 2] + [0] * 12, 0, LADDER)
    other = estimate(SECOND // 2, 0, 3 * SECOND // 2, 300, [SECOND // 2] + [0] * 12, 0, LADDER)
    assert shares["host0"]["modelled_watts"] == pytest.approx(one.watts + other.watts)
    assert _process_shares(before, after, None)["nic"]["modelled_watts"] is None


def test_summary_names_both_windows_of_each_governor():
    window = {"hosts_cpu_share": 1.5, "delivered_pps": 100_000, "replay_lost": 0}
    line = summary({"governors": {
        "busy": {"off": window, "on": {**window, "hosts_cpu_share": 1.0},
                 "hosts_cpu_ratio": 1.0 / 1.5},
        "adaptive": {"off": window, "on": {**window, "replay_lost": 3},
                     "hosts_cpu_ratio": 1.0}}})
    assert "busy: hosts' CPU 1.50 -> 1.00 CPUs (x0.67)" in line
    assert "adaptive: hosts' CPU 1.50 -> 1.50 CPUs (x1.00), lost 0 / 3" in line
