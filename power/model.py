"""A documented estimate of a polling lcore's power from its P-state and
C-state residency, for machines (such as this project's VMs) that offer no
meter, and beside a meter where there is one.

The estimate is the power of the lcore's core above the machine's deepest
idle, averaged over a window:

    W = ( sum_p  t_C0 * share_p * P_C0(f_p)  +  t_C1 * P_C1  +  t_C3 * P_C3
          +  t_C6 * P_C6 ) / (t_C0 + t_C1 + t_C3 + t_C6)

    P_C0(f) = P_C0_MAX * (1 - 2 * HALVING_SAVES * (1 - f / f_max))

where, from the runtime's per-lcore counters over the window:

* t_C0 = busy_ns, plus paused_ns when the pause backend is a spin
  ("rte_pause spin": the core executes PAUSE in C0 at its P-state);
  share_p is P-state p's share of the window's `pstate_residency_ns`
  (the current P-state when the window has none), f_p its frequency from
  `pstates_mhz` and f_max = pstates_mhz[0] (paper 000's ladder: 13
  P-states, P0 above 2 GHz .. P12 800 MHz, which the runtime simulates
  where cpufreq is missing);
* paused_ns with the WAITPKG backend (UMWAIT's C0.2: clock gated, wakes
  in well under a microsecond) counts as C1;
* asleep_ns counts as the deepest of C1, C3, C6 whose exit latency
  (paper 002 Table 1: C1 < 1 us, C3 60 us, C6 87 us) the window's mean
  sleep (asleep_ns / sleeps) covers: the kernel's idle governor picks a
  state whose target residency fits the expected idle time, at least its
  exit latency. This is the optimistic choice; a sleep shorter than 60 us
  is C1.

The constants are paper 002's (Xeon 5680 "Westmere", two sockets of six
cores, 12 cores; sections 3 and 5, Table 1), spread evenly over the cores:

| constant | value | from |
|---|---|---|
| P_C0_MAX | (262 - 115) / 12 = 12.25 W | 262 W with Click polling and no traffic (every core in C0 at the top frequency) against 115 W idle (Fig. 1) |
| P_C1 | (133 - 115) / 12 = 1.5 W | Table 1: system power with every core in C1, 133 W, against C6's 115 W |
| P_C3 | (120 - 115) / 12 = 0.42 W | Table 1: C3, 120 W |
| P_C6 | 0 W | Table 1: C6, 115 W, the machine's idle floor |
| HALVING_SAVES | 0.25 | Fig. 4: halving the frequency saves only 5% (one core) to 25% (twelve cores) of active power; the upper end, so the model never understates what a lower P-state gives. Linear in f between the two points |

So a busy-polling lcore at P0 is 12.25 W, the same lcore at P12 (800 of
2,000 MHz) 8.58 W (30% less), one that sleeps all the time in C6 0 W and
one paused in C1 1.5 W. The machine's own floor (paper 002: 115 W idle
system; the uncore, memory, NICs) is not in the figure: it is what every
mode pays alike. Paper 000 measured +52% (busy polling) against +11%
(Algorithm 1) of the machine's power with an ACPI power meter; this model
gives the per-lcore share of such a difference, not the machine's total.
"""
from __future__ import annotations

from dataclasses import dataclass

SYSTEM_IDLE_W = 115.0        # paper 002 Fig. 1, Table 1 (every core in C6)
SYSTEM_POLLING_W = 262.0     # paper 002 Fig. 1: Click polling, no traffic
SYSTEM_C1_W = 133.0          # Table 1
SYSTEM_C3_W = 120.0          # Table 1
CORES = 12                   # 2 x Xeon 5680, 6 cores each

P_C0_MAX = (SYSTEM_POLLING_W - SYSTEM_IDLE_W) / CORES
P_C1 = (SYSTEM_C1_W - SYSTEM_IDLE_W) / CORES
P_C3 = (SYSTEM_C3_W - SYSTEM_IDLE_W) / CORES
P_C6 = 0.0
HALVING_SAVES = 0.25         # paper 002 Fig. 4: 5% (1 core) .. 25% (12 cores)

# exit latency of each idle state, ns (paper 002 Table 1; C1 "< 1 us")
EXIT_LATENCY_NS = {"C1": 1_000, "C3": 60_000, "C6": 87_000}
STATE_WATTS = {"C1": P_C1, "C3": P_C3, "C6": P_C6}

SPIN_PAUSE = "rte_pause spin"


def c0_watts(freq_mhz: float, max_mhz: float) -> float:
    """P_C0(f): the core's power while it executes at freq_mhz."""
    if max_mhz <= 0:
        return P_C0_MAX
    return P_C0_MAX * (1.0 - 2.0 * HALVING_SAVES * (1.0 - min(freq_mhz, max_mhz) / max_mhz))


def sleep_state(asleep_ns: int, sleeps: int) -> str:
    """The idle state a window's sleeps are counted in: the deepest whose
    exit latency the mean sleep covers."""
    if sleeps <= 0 or asleep_ns <= 0:
        return "C1"
    mean = asleep_ns / sleeps
    chosen = "C1"
    for state in ("C3", "C6"):
        if mean >= EXIT_LATENCY_NS[state]:
            chosen = state
    return chosen


@dataclass
class Estimate:
    watts: float
    window_s: float
    c0_s: float
    c1_s: float
    c3_s: float
    c6_s: float
    mean_freq_mhz: float


def estimate(busy_ns: int, paused_ns: int, asleep_ns: int, sleeps: int,
             pstate_residency_ns: list[int], pstate: int, pstates_mhz: list[int],
             pause_backend: str = SPIN_PAUSE) -> Estimate:
    """The model over one window; every count is that window's (a delta of
    the runtime's counters, or the totals since start)."""
    busy_ns, paused_ns, asleep_ns = max(busy_ns, 0), max(paused_ns, 0), max(asleep_ns, 0)
    total = busy_ns + paused_ns + asleep_ns
    if total == 0:
        return Estimate(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    state_ns = {"C0": busy_ns, "C1": 0, "C3": 0, "C6": 0}
    if pause_backend == SPIN_PAUSE:
        state_ns["C0"] += paused_ns
    else:
        state_ns["C1"] += paused_ns
    state_ns[sleep_state(asleep_ns, sleeps)] += asleep_ns

    max_mhz = pstates_mhz[0] if pstates_mhz else 0
    residency = [max(r, 0) for r in pstate_residency_ns[:len(pstates_mhz)]]
    if sum(residency) > 0:
        shares = [r / sum(residency) for r in residency]
    else:
        shares = [1.0 if p == pstate else 0.0 for p in range(len(pstates_mhz))]
    if pstates_mhz:
        freq = sum(s * f for s, f in zip(shares, pstates_mhz))
        c0 = sum(s * c0_watts(f, max_mhz) for s, f in zip(shares, pstates_mhz))
    else:
        freq, c0 = 0.0, P_C0_MAX
    energy = state_ns["C0"] * c0 + sum(state_ns[s] * STATE_WATTS[s] for s in STATE_WATTS)
    return Estimate(energy / total, total / 1e9, state_ns["C0"] / 1e9, state_ns["C1"] / 1e9,
                    state_ns["C3"] / 1e9, state_ns["C6"] / 1e9,
                    freq if state_ns["C0"] else 0.0)
