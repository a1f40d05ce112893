"""power/model.py's formula on known residencies: the constants derived
from paper 002 (12.25 W polling core, 1.5 W in C1, 0.42 W in C3, 0 in C6;
halving the frequency saves 25% of C0 power), the P-state weighting, the
pause backend, and the sleep's C-state by its mean length against the
exit latencies (C3 60 us, C6 87 us)."""
from __future__ import annotations

import pytest

from power import model

LADDER = list(range(2000, 799, -100))        # paper 000's 13 P-states, simulated
S = 1_000_000_000                            # 1 s in ns


def test_constants_from_paper_002():
    assert model.P_C0_MAX == pytest.approx(12.25)
    assert model.P_C1 == pytest.approx(1.5)
    assert model.P_C3 == pytest.approx(5 / 12)
    assert model.P_C6 == 0
    assert len(LADDER) == 13 and (LADDER[0], LADDER[-1]) == (2000, 800)
    # halving the frequency saves HALVING_SAVES of the active power
    assert model.c0_watts(1000, 2000) == pytest.approx(12.25 * 0.75)
    assert model.c0_watts(800, 2000) == pytest.approx(12.25 * 0.70)
    assert model.c0_watts(2000, 2000) == pytest.approx(12.25)


def test_busy_polling_at_p0_is_the_whole_core():
    e = model.estimate(busy_ns=S, paused_ns=0, asleep_ns=0, sleeps=0,
                       pstate_residency_ns=[S] + [0] * 12, pstate=0, pstates_mhz=LADDER)
    assert (e.watts, e.window_s, e.c0_s, e.mean_freq_mhz) == (pytest.approx(12.25), 1.0, 1.0,
                                                              2000)


def test_c0_weighted_by_the_p_state_residency_of_the_window():
    # a quarter of the window at P0, three quarters at P12; all of it busy
    e = model.estimate(S, 0, 0, 0, [S // 4] + [0] * 11 + [3 * S // 4], pstate=12,
                       pstates_mhz=LADDER)
    assert e.watts == pytest.approx(0.25 * 12.25 + 0.75 * 12.25 * 0.70)
    assert e.mean_freq_mhz == pytest.approx(0.25 * 2000 + 0.75 * 800)
    # no residency in the window: the current P-state
    e = model.estimate(S, 0, 0, 0, [0] * 13, pstate=10, pstates_mhz=LADDER)
    assert e.watts == pytest.approx(12.25 * (1 - 0.5 * (1 - 1000 / 2000)))


def test_spin_pauses_are_c0_waitpkg_pauses_c1():
    spin = model.estimate(S // 2, S // 2, 0, 0, [S] + [0] * 12, 0, LADDER, "rte_pause spin")
    assert (spin.c0_s, spin.c1_s, spin.watts) == (1.0, 0.0, pytest.approx(12.25))
    umwait = model.estimate(S // 2, S // 2, 0, 0, [S] + [0] * 12, 0, LADDER, "WAITPKG")
    assert (umwait.c0_s, umwait.c1_s) == (0.5, 0.5)
    assert umwait.watts == pytest.approx(0.5 * 12.25 + 0.5 * 1.5)


@pytest.mark.parametrize("mean_sleep_us, state", [(10, "C1"), (59.9, "C1"), (60, "C3"),
                                                  (86, "C3"), (87, "C6"), (10_000, "C6")])
def test_a_sleep_counts_in_the_deepest_state_its_mean_length_covers(mean_sleep_us, state):
    sleeps = 1000
    asleep = int(mean_sleep_us * 1000 * sleeps)
    assert model.sleep_state(asleep, sleeps) == state


def test_mixed_window():
    # 10% busy at P12, 20% spin pause, 70% asleep in 1,000 sleeps of 700 us (C6)
    e = model.estimate(S // 10, S // 5, 7 * S // 10, 1000, [0] * 12 + [S], 12, LADDER)
    assert (e.c0_s, e.c1_s, e.c3_s, e.c6_s) == pytest.approx((0.3, 0, 0, 0.7))
    assert e.watts == pytest.approx(0.3 * 12.25 * 0.70)
    # the same sleep in 100,000 naps of 7 us: C1
    e = model.estimate(S // 10, S // 5, 7 * S // 10, 100_000, [0] * 12 + [S], 12, LADDER)
    assert e.c1_s == pytest.approx(0.7)
    assert e.watts == pytest.approx(0.3 * 12.25 * 0.70 + 0.7 * 1.5)


def test_an_empty_window_is_zero():
    assert model.estimate(0, 0, 0, 0, [0] * 13, 0, LADDER).watts == 0
