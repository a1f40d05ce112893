"""The governor's decisions (t4p4s/runtime/src/power_policy.c) against
scripted queue traces: every branch of paper 000's Algorithm 1 (its line
numbers below), l3fwd-power's step-down and the proportional mode's
P-state step and nap length. policy_trace.c links the runtime's own
power_policy.c and answers one JSON line per trace line."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
RUNTIME_SRC = REPO / "t4p4s" / "runtime" / "src"


@pytest.fixture(scope="module")
def trace_binary(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("policy") / "policy_trace"
    subprocess.run(["gcc", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                    "-I", str(RUNTIME_SRC), str(Path(__file__).with_name("policy_trace.c")),
                    str(RUNTIME_SRC / "power_policy.c"), "-o", str(out)], check=True)
    return out


def run(binary: Path, lines: list[str]) -> list[dict]:
    r = subprocess.run([str(binary)], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60, check=True)
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(answers) == len(lines)
    assert not any(a.get("error") == "bad line" for a in answers)
    return answers


def test_idle_hints_follow_the_empty_poll_counter(trace_binary):
    # lines 4-10: no hint up to 10 empty polls, 1 us from the 11th, 300 us from the 300th
    answers = run(trace_binary, ["poll 0 0 0"] * 301)
    hints = [a["idle_us"] for a in answers]
    assert hints[:10] == [0] * 10
    assert hints[10:299] == [1] * 289
    assert hints[299:] == [300, 300]
    assert answers[-1]["empty_polls"] == 301


def test_a_poll_with_packets_resets_the_counter_and_hints_no_idle(trace_binary):
    answers = run(trace_binary, ["poll 0 0 0"] * 20 + ["poll 0 5 0", "poll 0 0 0"])
    assert answers[19]["idle_us"] == 1
    assert answers[20] == {"idle_us": 0, "freq": 0, "empty_polls": 0, "trend": 0}   # line 12
    assert answers[21]["idle_us"] == 0 and answers[21]["empty_polls"] == 1


@pytest.mark.parametrize("queued,freq,trend", [
    (97, 2, 0),      # lines 14-15: more than 96 queued: the highest P-state at once
    (96, 0, 250),    # lines 16-17
    (65, 0, 250),
    (64, 0, 3),      # lines 18-19
    (33, 0, 3),
    (32, 0, 0),      # nothing
])
def test_frequency_hints_by_queue_fill(trace_binary, queued, freq, trend):
    [answer] = run(trace_binary, [f"poll 0 32 {queued}"])
    assert (answer["freq"], answer["trend"]) == (freq, trend)


def test_the_trend_steps_up_once_past_its_limit_and_starts_again(trace_binary):
    # lines 20-21: 40 x 250 = 10,000 is not past the limit, the 41st poll is
    answers = run(trace_binary, ["poll 0 32 65"] * 42)
    assert [a["freq"] for a in answers[:40]] == [0] * 40
    assert answers[39]["trend"] == 10000
    assert (answers[40]["freq"], answers[40]["trend"]) == (1, 0)
    assert (answers[41]["freq"], answers[41]["trend"]) == (0, 250)


def test_max_hint_clears_an_accumulated_trend(trace_binary):
    answers = run(trace_binary, ["poll 0 32 65"] * 3 + ["poll 0 32 200", "poll 0 32 40"])
    assert answers[2]["trend"] == 750
    assert (answers[3]["freq"], answers[3]["trend"]) == (2, 0)
    assert answers[4]["trend"] == 3


def rounds(n: int, queue_polls, pstate: int = 6) -> list[str]:
    """N lcore rounds, each polling every queue once: queue_polls(i) the
    round's (received, queued) per queue, then the lcore's decision."""
    lines = []
    for i in range(n):
        lines += [f"poll {q} {received} {queued}" for q, (received, queued) in enumerate(queue_polls(i))]
        lines.append(f"round {pstate}")
    return lines


def test_the_lcore_takes_the_minimum_idle_and_maximum_frequency_hint(trace_binary):
    # lines 22-31 over two queues
    both_idle = run(trace_binary, rounds(300, lambda i: [(0, 0), (0, 0)]))
    assert both_idle[-1] == {"idle_us": 300, "freq": 0, "action": "sleep", "pstate": 6}
    assert both_idle[-4] == {"idle_us": 1, "freq": 0, "action": "pause", "pstate": 6}
    assert both_idle[3 * 9 + 2] == {"idle_us": 0, "freq": 0, "action": "none", "pstate": 6}

    # queue 1 received in round 289: it hints 1 us at the end, queue 0 300 us
    one_short = run(trace_binary, rounds(300, lambda i: [(0, 0), (1 if i == 288 else 0, 0)]))
    assert one_short[-1] == {"idle_us": 1, "freq": 0, "action": "pause", "pstate": 6}

    # a queue that received packets hints no idle: the lcore polls on;
    # the frequency hint is the largest of the queues'
    one_busy = run(trace_binary, rounds(20, lambda i: [(0, 0), (32, 100 if i == 19 else 10)]))
    assert one_busy[-1] == {"idle_us": 0, "freq": 2, "action": "none", "pstate": 0}


def test_frequency_hints_move_the_p_state(trace_binary):
    # line 27: the 41st poll over 64 queued steps one P-state up
    step_up = run(trace_binary, rounds(41, lambda i: [(32, 65), (32, 10)]))
    assert [a["pstate"] for a in step_up[2::3]] == [6] * 40 + [5]
    at_top = run(trace_binary, rounds(41, lambda i: [(32, 65)], pstate=0))
    assert at_top[-1]["pstate"] == 0


def test_the_authors_published_pause_and_other_thresholds_are_settable(trace_binary):
    answers = run(trace_binary, ["thresholds idle_short_us=10,idle_short_after=2",
                                 *rounds(3, lambda i: [(0, 0)], pstate=3)])
    assert answers[0] == {"ok": True, "error": ""}
    assert [a["action"] for a in answers[2::2]] == ["none", "none", "pause"]
    assert answers[-1]["idle_us"] == 10
    answers = run(trace_binary, ["thresholds sleep_at_us=5,idle_short_us=10",
                                 *rounds(11, lambda i: [(0, 0)])])
    assert answers[-1]["action"] == "sleep"


@pytest.mark.parametrize("spec,error", [
    ("idle_short_us=x", "power threshold idle_short_us: 'x' is not a whole number"),
    ("trend_limit=0", "power threshold trend_limit: 0 is out of range 1..100000000"),
    ("warp=3", "unknown power threshold 'warp'"),
    ("idle_short_us", "'idle_short_us' is not NAME=VALUE"),
    ("ring_fill_pct=101", "power threshold ring_fill_pct: 101 is out of range 1..100"),
])
def test_bad_thresholds_change_nothing(trace_binary, spec, error):
    answers = run(trace_binary, [f"thresholds idle_short_us=7,{spec}", *["poll 0 0 0"] * 11])
    assert answers[0] == {"ok": False, "error": error}
    assert answers[-1]["idle_us"] == 1        # the default, not the 7 of the refused line


@pytest.mark.parametrize("slept_ms,packets,polls,down", [
    (25, 10 ** 6, 1000, True),       # asleep a quarter of the period
    (24, 32000, 1000, False),        # busy and full bursts: stay
    (24, 31999, 1000, True),         # fewer than 32 packets a poll
    (0, 0, 0, False),                # no polls: nothing to judge
])
def test_l3fwd_power_step_down(trace_binary, slept_ms, packets, polls, down):
    [answer] = run(trace_binary, [f"stepdown 100000000 {slept_ms * 1000000} {packets} {polls}"])
    assert answer == {"down": down}


def test_proportional_lowers_the_p_state_while_the_load_allows_and_naps_with_time_to_spare(trace_binary):
    answers = run(trace_binary, [
        "step 100000000 10000000 2000 1900",     # 10% busy: one down, naps
        "step 100000000 78000000 2000 1900",     # 78%: 82% at 1,900 MHz, stay; still naps
        "step 100000000 85000000 2000 1900",     # 85%: stay, no naps (over 80%)
        "step 100000000 95000000 2000 1900",     # 95%: one up
        "step 100000000 50000000 800 0",         # at the lowest: stay, naps
    ])
    # no batched rounds, no frame cost: the work share measured is the work needed;
    # a period without naps and without a batched round asks for a probe nap
    assert answers == [
        {"step": 1, "naps": True, "probe": False, "busy_pct": 10, "frame_ns": 0},
        {"step": 0, "naps": True, "probe": False, "busy_pct": 78, "frame_ns": 0},
        {"step": 0, "naps": False, "probe": True, "busy_pct": 85, "frame_ns": 0},
        {"step": -1, "naps": False, "probe": True, "busy_pct": 95, "frame_ns": 0},
        {"step": 0, "naps": True, "probe": False, "busy_pct": 50, "frame_ns": 0},
    ]


def test_proportional_nap_length(trace_binary):
    answers = run(trace_binary, [
        "nap 1024 0 0",                       # no naps decided yet
        "observe 1200000 1000000000",         # 1.2 Mpps
        "step 100000000 10000000 2000 1900",  # 10% busy: naps
        "nap 1024 0 0",                       # the budget: 50 us / 1.1
        "nap 1024 0 20000",                   # less the measured oversleep
        "nap 1024 512 0",                     # the ring at its fill threshold: no nap
        "nap 1024 0 50000",                   # oversleep as long as the budget: no nap
        "observe 12000000 1000000000",        # 12 Mpps, counted at once
        "nap 1024 0 0",                       # the ring fills first: 512 frames / 12 per us
        "observe 0 1000000000",               # a falling rate counts a quarter
    ])
    assert answers[0] == {"nap_ns": 0}
    assert answers[1]["rate_pps"] == pytest.approx(1.2e6, rel=1e-4)
    assert answers[3] == {"nap_ns": 50000 * 100 // 110}
    assert answers[4] == {"nap_ns": 30000 * 100 // 110}
    assert answers[5] == {"nap_ns": 0}
    assert answers[6] == {"nap_ns": 0}
    assert answers[7]["rate_pps"] == pytest.approx(12e6, rel=1e-4)
    assert answers[8]["nap_ns"] == pytest.approx(512 / 12 * 1000, rel=1e-3)
    assert answers[9]["rate_pps"] == pytest.approx(9e6, rel=1e-4)


# The bench's case (AMD EPYC here): busy's no-drop rate ~10.65 Mpps, a quarter of it
# 2.66 Mpps, one frame every ~375 ns; polled without naps nearly every round gets one
# frame and costs ~330 ns, so the lcore measures itself ~87% busy; in 32-frame rounds
# a frame costs ~80 ns, so the arrivals need ~21%.
QUARTER_PPS = 2_660_000
PERIOD_NS = 100_000_000
ONE_FRAME_WORK_NS = 87_000_000
BATCH = "1600000 20000"           # 20,000 frames in batched rounds took 1.6 ms: 80 ns each


def test_proportional_naps_at_a_moderate_load_with_one_frame_rounds(trace_binary):
    answers = run(trace_binary, [
        f"observe {QUARTER_PPS // 10} {PERIOD_NS}",
        f"step {PERIOD_NS} {ONE_FRAME_WORK_NS} 2000 1900",          # no batch yet
        "nap 1024 0 0",                                             # the probe
        "napped",
        "nap 1024 0 0",
        f"step {PERIOD_NS} {ONE_FRAME_WORK_NS} 2000 1900 {BATCH}",  # the probe's batch
        "nap 1024 0 0",
        f"step {PERIOD_NS} {ONE_FRAME_WORK_NS} 2000 1900",          # the cost is kept
        # at the lowest P-state (800 MHz) the same frames take 2.5 times as long
        f"step {PERIOD_NS} 99000000 800 0 4000000 20000",
        "nap 1024 0 0",
    ])
    # without a frame cost: 87% busy, no naps at P0 and no step down (91.6% at 1,900
    # MHz), as before; but a probe nap, the length the latency budget allows at 87%
    assert answers[1] == {"step": 0, "naps": False, "probe": True, "busy_pct": 87,
                          "frame_ns": 0}
    assert answers[2] == {"nap_ns": 50000 * 100 // 187}
    assert answers[3] == {"probe": False}
    assert answers[4] == {"nap_ns": 0}
    # the probe's batched rounds: 80 ns a frame, the arrivals need 21%: one P-state
    # down, and naps sized from the 21%, not the 87% measured frame by frame
    assert answers[5] == {"step": 1, "naps": True, "probe": False, "busy_pct": 21,
                          "frame_ns": 80}
    assert answers[6] == {"nap_ns": 50000 * 100 // 121}
    # a period of one-frame rounds again (it napped, but nothing arrived in a batch):
    # the frame cost measured stays
    assert answers[7]["busy_pct"] == 21 and answers[7]["naps"]
    # at 800 MHz: 200 ns a frame, 53%: it naps (the P-state went as low as it goes)
    assert answers[8] == {"step": 0, "naps": True, "probe": False, "busy_pct": 53,
                          "frame_ns": 200}
    assert answers[9] == {"nap_ns": 50000 * 100 // 153}


def test_proportional_still_steps_up_when_batches_say_the_lcore_is_busy(trace_binary):
    # 11.875 Mpps at 80 ns a frame is 95%: the frame cost agrees with the work
    answers = run(trace_binary, [
        f"observe 1187500 {PERIOD_NS}",
        f"step {PERIOD_NS} 95000000 2000 1900 95000000 1187500",
        "nap 1024 0 0",
    ])
    assert answers[1] == {"step": -1, "naps": False, "probe": False, "busy_pct": 95,
                          "frame_ns": 80}
    assert answers[2] == {"nap_ns": 0}


@pytest.mark.parametrize("budget_us", [50, 500])
def test_proportional_never_naps_beyond_the_latency_budget(trace_binary, budget_us):
    """Whatever the load, the frame cost and the oversleep: a frame that
    arrives as a nap begins waits nap * (1 + busy share) + oversleep at
    most, and that is within the budget; naps and probes alike."""
    lines, checks = [f"thresholds latency_budget_us={budget_us}"], []
    for pps in (1_000, 1_000_000, QUARTER_PPS, 6_000_000, 12_000_000):
        for work_pct in (0, 20, 50, 79, 87, 95, 100):
            for batch in ("", BATCH, "95000000 1187500"):
                for overshoot_us in (0, 10, budget_us // 2, budget_us - 1, budget_us):
                    lines += [f"observe {pps // 10} {PERIOD_NS}",
                              f"step {PERIOD_NS} {work_pct * 1_000_000} 2000 1900 {batch}",
                              f"nap 1024 0 {overshoot_us * 1000}"]
                    checks.append(overshoot_us * 1000)
    answers = run(trace_binary, lines)[1:]
    napped = 0
    for i, overshoot_ns in enumerate(checks):
        step, nap = answers[3 * i + 1], answers[3 * i + 2]["nap_ns"]
        assert nap * (100 + step["busy_pct"]) // 100 + overshoot_ns <= budget_us * 1000
        assert nap == 0 or step["naps"] or step["probe"]
        napped += nap > 0
    assert napped > len(checks) // 2
