"""The power section of `make bench` (testbench/bench/gnb_power.py) without
DPDK: a trial's power window from two `stats` replies, a sweep point from a
trial (shares, P-state residency, latency, the model fed back nanoseconds),
and issue 15's goals on made-up sweeps (the best mode chosen among those
that lose nothing and add at most 50 us to p99, each goal's verdict, the
throughput at 100% load, what a wakeup's cost leaves)."""
from __future__ import annotations

import pytest

from power.model import Estimate
from testbench.bench.gnb_power import (BASELINE, IDLE_PPS, cpu_goal, evaluate_goals, goal_verdict,
                                       mean_freq_mhz, modelled_power, offered_pps, point,
                                       throughput_goal, wakeup_bound)
from testbench.bench.offered_load import Trial, power_window

LADDER = [2000 - 100 * i for i in range(13)]       # the runtime's simulated P0 .. P12


def lcore_power(mode="proportional", cpu=0, busy=0, work=0, poll=0, paused=0, asleep=0,
                naps=0, sleeps=0, pauses=0, pstate=0, residency=None) -> dict:
    residency = residency or [0] * 13
    return {"mode": mode, "cpu_time_ns": cpu, "busy_ns": busy, "work_ns": work, "poll_ns": poll,
            "paused_ns": paused, "asleep_ns": asleep, "pauses": pauses, "sleeps": sleeps,
            "naps": naps, "interrupt_wakeups": 0, "pstate_transitions": 0, "pstate": pstate,
            "freq_mhz": LADDER[pstate], "pstate_residency_ns": residency}


def stats(power: dict) -> dict:
    return {"lcores": [{"power": power}]}


def test_power_window_is_shares_of_the_window_and_count_deltas():
    first = lcore_power(cpu=5_000, busy=1_000, work=600, poll=400, naps=10, sleeps=1,
                        residency=[100] + [0] * 12)
    second = lcore_power(cpu=5_000 + 500_000_000, busy=1_000 + 300_000_000,
                         work=600 + 100_000_000, poll=400 + 200_000_000, paused=50_000_000,
                         asleep=600_000_000, naps=10 + 2_000, sleeps=1 + 40, pstate=12,
                         residency=[100 + 250_000_000] + [0] * 11 + [750_000_000])
    window = power_window(stats(first), stats(second), 1.0)
    assert window["mode"] == "proportional"
    assert window["cpu_time_share"] == pytest.approx(0.5)
    assert (window["busy_share"], window["work_share"], window["poll_share"]) == \
        (pytest.approx(0.3), pytest.approx(0.1), pytest.approx(0.2))
    assert (window["paused_share"], window["asleep_share"]) == (pytest.approx(0.05),
                                                               pytest.approx(0.6))
    assert (window["naps"], window["sleeps"], window["pauses"]) == (2_000, 40, 0)
    assert window["pstate_end"] == 12 and window["freq_mhz_end"] == 800
    assert window["pstate_residency_share"][0] == pytest.approx(0.25)
    assert window["pstate_residency_share"][12] == pytest.approx(0.75)
    # a runtime without a governor: no window
    assert power_window({"lcores": [{}]}, {"lcores": [{}]}, 1.0) is None


def test_load_zero_is_a_tiny_rate():
    assert offered_pps(0, 12_000_000) == IDLE_PPS
    assert offered_pps(0.1, 12_345_678) == 1_234_568
    assert offered_pps(1.0, 12_000_000) == 12_000_000


def test_mean_frequency_weights_the_ladder_by_residency():
    assert mean_freq_mhz([0.25] + [0] * 11 + [0.75], LADDER) == pytest.approx(1100)
    # shares need not sum to one (the window's edges): normalised
    assert mean_freq_mhz([0.1] + [0] * 12, LADDER) == pytest.approx(2000)
    assert mean_freq_mhz([0] * 13, LADDER) is None
    assert mean_freq_mhz(None, LADDER) is None and mean_freq_mhz([1.0], None) is None


def test_modelled_power_gives_the_model_nanoseconds_and_the_backends():
    calls = []

    def estimate(**kwargs):
        calls.append(kwargs)
        return Estimate(watts=3.0, window_s=2.0, c0_s=0.5, c1_s=1.5, c3_s=0, c6_s=0,
                            mean_freq_mhz=900)
    window = {"busy_share": 0.25, "paused_share": 0.0, "asleep_share": 0.75, "sleeps": 300,
              "pstate_residency_share": [0.5] + [0] * 11 + [0.5], "pstate_end": 12}
    backends = {"frequency": "simulated", "pause": "rte_pause spin", "sleep": "timed",
                "pstates_mhz": LADDER}
    result = modelled_power(window, 2.0, backends, estimate)
    (call,) = calls
    assert (call["busy_ns"], call["paused_ns"], call["asleep_ns"], call["sleeps"]) == \
        (500_000_000, 0, 1_500_000_000, 300)
    assert call["pstate_residency_ns"][0] == call["pstate_residency_ns"][12] == 1_000_000_000
    assert (call["pstate"], call["pstates_mhz"], call["pause_backend"]) == (12, LADDER,
                                                                            "rte_pause spin")
    assert result["watts"] == 3.0 and result["mean_freq_mhz_in_c0"] == 900
    assert (result["C0_share"], result["C1_share"]) == (0.25, 0.75)
    # no model, no figures or no ladder: nothing modelled
    assert modelled_power(window, 2.0, backends, None) is None
    assert modelled_power(None, 2.0, backends, estimate) is None
    assert modelled_power(window, 2.0, {**backends, "pstates_mhz": None}, estimate) is None


def test_a_point_from_a_trial():
    window = power_window(stats(lcore_power()), stats(lcore_power(
        cpu=400_000_000, busy=300_000_000, work=100_000_000, poll=200_000_000,
        asleep=700_000_000, naps=5_000, residency=[0] * 12 + [2_000_000_000])), 2.0)
    latency = {"count": 10, "p50_us": 20.0, "p90_us": 40.0, "p99_us": 60.0, "p99_9_us": 70.0,
               "max_us": 80.0}
    trial = Trial(rate_pps=100_000, arrived=200_000, lost=0, detail={
        "window_s": 2.0, "offered_pps": 100_000.0, "delivered": {"1": 200_000, "2": 200_000},
        "latency": {"1": latency, "2": latency}, "ring_fill_us": 10_240.0, "power": window,
        "power_backends": {"pause": "rte_pause spin", "pstates_mhz": LADDER}})
    p = point("proportional", 0.01, trial, attempts=1)
    assert p["mode"] == "proportional" and p["load_share"] == 0.01
    assert p["delivered_mpps"] == pytest.approx(0.1)
    assert (p["lost"], p["loss_share"]) == (0, 0.0)
    assert p["cpu_time_share"] == pytest.approx(0.2)
    assert p["busy_share"] == pytest.approx(0.15) and p["asleep_share"] == pytest.approx(0.35)
    assert p["naps"] == 5_000 and p["pstate_end"] == 0
    assert p["mean_freq_mhz"] == pytest.approx(800)
    assert (p["p50_us"], p["p99_us"], p["max_us"]) == (20.0, 60.0, 80.0)
    assert p["modelled_power"] is None          # no model given
    assert p["lcore_away"] is False
    # a runtime without a governor: the shares are None, the rest is there
    bare = Trial(rate_pps=1000, arrived=2000, lost=0, detail={
        "window_s": 2.0, "delivered": {"1": 2000}, "latency": {"1": latency}})
    p = point("busy", 0.0, bare)
    assert p["cpu_time_share"] is None and p["pstate_residency_share"] is None
    assert p["mean_freq_mhz"] is None and p["delivered_mpps"] == pytest.approx(0.001)


def pt(mode, load, cpu, p99=20.0, lost=0, mpps=1.0, work=0.05) -> dict:
    return {"mode": mode, "load_share": load, "cpu_time_share": cpu, "p99_us": p99, "lost": lost,
            "delivered_mpps": mpps, "work_share": work}


def test_the_best_mode_is_the_cheapest_that_loses_nothing_within_the_p99_budget():
    points = [pt(BASELINE, 0.1, 1.0, p99=10.0),
              pt("sleepy", 0.1, 0.05, p99=400.0),         # cheapest, but +390 us
              pt("lossy", 0.1, 0.10, lost=3),             # cheap, loses frames
              pt("good", 0.1, 0.18, p99=55.0),            # +45 us: within
              pt("costly", 0.1, 0.60, p99=12.0),
              pt("good", 0.01, 0.01)]                     # another load: not counted
    goal = cpu_goal(points, 0.1, 0.20)
    assert goal["best_mode"] == "good" and goal["cheapest_mode"] == "sleepy"
    assert goal["cpu_ratio"] == pytest.approx(0.18)
    assert goal["p99_added_us"] == pytest.approx(45.0)
    assert goal["met"] and goal["cpu_met"] and goal["zero_loss_met"] and goal["p99_met"]
    assert {m["mode"] for m in goal["modes"]} == {"sleepy", "lossy", "good", "costly"}
    sleepy = next(m for m in goal["modes"] if m["mode"] == "sleepy")
    assert sleepy["cpu_met"] and not sleepy["p99_met"]


def test_a_cpu_goal_is_missed_when_the_qualified_modes_burn_too_much():
    points = [pt(BASELINE, 0.1, 0.98), pt("a", 0.1, 0.45), pt("b", 0.1, 0.30)]
    goal = cpu_goal(points, 0.1, 0.20)
    assert goal["best_mode"] == "b" and not goal["met"]
    assert goal["cpu_ratio"] == pytest.approx(0.30 / 0.98)
    assert goal["zero_loss_met"] and goal["p99_met"] and not goal["cpu_met"]


def test_when_no_mode_qualifies_the_cheapest_is_shown_and_the_goal_missed():
    points = [pt(BASELINE, 0.01, 1.0), pt("a", 0.01, 0.02, lost=1), pt("b", 0.01, 0.04, p99=500)]
    goal = cpu_goal(points, 0.01, 0.05)
    assert goal["best_mode"] == "a" and goal["cpu_met"] and not goal["zero_loss_met"]
    assert not goal["met"]


def test_a_cpu_goal_without_busy_or_power_modes_is_missed():
    assert not cpu_goal([pt("a", 0.1, 0.1)], 0.1, 0.2)["met"]
    assert "busy" in cpu_goal([pt("a", 0.1, 0.1)], 0.1, 0.2)["why"]
    goal = cpu_goal([pt(BASELINE, 0.1, 1.0)], 0.1, 0.2)
    assert not goal["met"] and "no power mode" in goal["why"]
    # a p99 missing on either side cannot meet the latency part
    goal = cpu_goal([pt(BASELINE, 0.1, 1.0, p99=None), pt("a", 0.1, 0.1)], 0.1, 0.2)
    assert goal["p99_added_us"] is None and not goal["met"]


def test_throughput_at_full_load_within_two_percent_of_busy():
    points = [pt(BASELINE, 1.0, 1.0, mpps=12.0), pt("a", 1.0, 1.0, mpps=11.80),
              pt("b", 1.0, 1.0, mpps=11.76), pt("a", 0.5, 0.5, mpps=1.0)]
    goal = throughput_goal(points, not_measured={"pmgmt_pause": "unsupported: ..."})
    assert goal["met"] and set(goal["modes"]) == {"a", "b"}
    assert goal["modes"]["b"]["ratio_to_busy"] == pytest.approx(0.98)
    assert goal["not_measured"] == {"pmgmt_pause": "unsupported: ..."}
    goal = throughput_goal(points + [pt("c", 1.0, 1.0, mpps=11.7)])
    assert not goal["met"] and not goal["modes"]["c"]["met"]
    assert not throughput_goal([pt("a", 1.0, 1.0)])["met"]
    assert not throughput_goal([pt(BASELINE, 1.0, 1.0)])["met"], "no power mode: nothing shown"


def test_what_a_wakeups_cost_leaves():
    # 20% of a busy lcore's 100% is 20%; 10% goes to the frames: 10% is
    # left, so a 20 us wakeup may come once per 200 us at most
    bound = wakeup_bound(20.0, 1.0, 0.10, 0.20)
    assert bound["cpu_share_left_for_wakeups"] == pytest.approx(0.10)
    assert bound["least_us_between_wakeups"] == pytest.approx(200.0)
    assert wakeup_bound(20.0, 1.0, 0.25, 0.20) is None
    assert wakeup_bound(0.0, 1.0, 0.0, 0.20) is None


def test_evaluate_goals_and_the_verdict():
    points = [pt(BASELINE, 0.1, 1.0), pt("a", 0.1, 0.15, work=0.05), pt("b", 0.1, 0.9, work=0.5),
              pt(BASELINE, 0.01, 1.0), pt("a", 0.01, 0.08, work=0.01),
              pt(BASELINE, 1.0, 1.0, mpps=12.0), pt("a", 1.0, 1.0, mpps=12.0)]
    goals = evaluate_goals(points, {"pmgmt_pause": "unsupported"}, wakeup_cpu_us=20.0)
    assert set(goals) == {"cpu_at_10%_load", "cpu_at_1%_load", "throughput_at_100%_load"}
    assert goals["cpu_at_10%_load"]["met"] and not goals["cpu_at_1%_load"]["met"]
    assert goals["throughput_at_100%_load"]["met"]
    assert goals["cpu_at_10%_load"]["wakeup_bound"]["least_us_between_wakeups"] == \
        pytest.approx(20.0 / 0.15)
    assert goals["cpu_at_10%_load"]["leanest_mode"] == "a"      # the least work, not b's
    assert goals["cpu_at_1%_load"]["wakeup_bound"]["least_us_between_wakeups"] == \
        pytest.approx(20.0 / 0.04)
    assert goal_verdict(goals) == {"met": False, "missed": ["cpu_at_1%_load"]}
    assert "wakeup_bound" not in evaluate_goals(points)["cpu_at_10%_load"]


def test_modelled_power_with_power_model():
    """The call fits power/model.py's estimate: a busy lcore at P0 is the
    model's whole-core figure, one asleep 3/4 of the time in long sleeps
    a quarter of it."""
    model = pytest.importorskip("power.model")
    backends = {"pause": "rte_pause spin", "pstates_mhz": LADDER}
    busy = {"busy_share": 1.0, "paused_share": 0.0, "asleep_share": 0.0, "sleeps": 0,
            "pstate_residency_share": [1.0] + [0] * 12, "pstate_end": 0}
    assert modelled_power(busy, 2.0, backends, model.estimate)["watts"] == \
        pytest.approx(model.P_C0_MAX)
    sleepy = {**busy, "busy_share": 0.25, "asleep_share": 0.75, "sleeps": 100}   # 15 ms each
    result = modelled_power(sleepy, 2.0, backends, model.estimate)
    assert result["watts"] == pytest.approx(0.25 * model.P_C0_MAX + 0.75 * model.P_C6)
    assert result["C6_share"] == pytest.approx(0.75)
