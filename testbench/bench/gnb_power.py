"""`make bench` section "power": the runtime's power governor (issue 15,
item 9; paper 000 Fig. 3/4's analog) on the gNB downlink of the
offered_load section (step 5, p4src/host.p4 with 65,536 AM DRBs, paced
--rx-replay into a modelled 1,024-descriptor rx ring, --latency, one
forwarding lcore):

* the reference rate: busy mode's no-drop rate at 0.1% loss, the
  offered_load section's of the same run when it ran, else one search here
  (offered_load.no_drop_rate, confirmed once);
* a sweep of constant-gap loads LOADS of the reference (load 0 is a tiny
  IDLE_PPS, not nothing: the lcore must see some frames to have a latency)
  through every MODES' --governor: busy, adaptive (paper 000's Algorithm 1,
  its printed thresholds), adaptive with the authors' published scripts'
  10 us short pause, proportional (50 us budget), proportional with a 500
  us budget and DPDK's rte_power_ethdev_pmgmt pause (refused at start on
  some PMDs: recorded as unsupported with the runtime's words, not tried
  again); loads outer, modes inner, so a slow spell of the machine hits
  every mode;
* per point the forwarding lcore's figures over the trial window
  (offered_load.power_window): the thread's CPU time share (its
  pthread_getcpuclockid clock, what the kernel charged the thread) and the
  governor's own busy / paused / asleep accounting, naps, sleeps, P-state
  residency; delivered Mpps and loss; latency p50/p99/max on the radio
  port; and power/model.py's estimate when that module is there (this
  bench has no model of its own);
* once per run the machine's cost of one timed wakeup (wakeup_cost.c:
  20,000 nanosleeps of 30 us with 1 us timer slack, on the forwarding
  lcore's CPU), which bounds what any napping governor can save;
* the goals of issue 15 ("Done when"), evaluated by evaluate_goals.

Each trial runs with the bench off the lcore's CPU (harness_away_from), and
a lossy trial with the look of a descheduled lcore is run again up to
AWAY_RETRIES times, as in the offered_load section; every attempt is in
"trials". For a mode that sleeps, a long sleep has that look too: the last
attempt counts whatever it shows."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from testbench.bench.dpdk import BenchError
from testbench.bench.gnb_entries import BAAS_PORT
from testbench.bench.gnb_offered_load import (AWAY_RETRIES, RADIO_PORT, RING, WINDOW_SHARE,
                                              _saturated_pps, harness_away_from, share_key)
from testbench.bench.offered_load import (DEFAULT_LOSS_SHARE, WARMUP_S, Trial, lcore_was_away,
                                          no_drop_rate, paced_setup, run_trial,
                                          unaccounted_beyond_in_flight)
from testbench.bench.workloads import N_EXACT_ENTRIES, GnbFullDownlink, Settings

LOADS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 1.0)     # of the reference rate
IDLE_PPS = 1_000                                   # "load 0"


@dataclass(frozen=True)
class Mode:
    key: str
    governor: tuple[str, ...]       # --governor MODE [--power-thresholds ...]
    description: str
    start_only: bool = False        # DPDK pmgmt: may be refused at start; not tried again


MODES = (
    Mode("busy", ("busy",), "busy polling, the baseline"),
    Mode("adaptive", ("adaptive",),
         "paper 000's Algorithm 1 as printed (pause 1 us after 10 empty polls, 300 us after "
         "300; sleep from 300 us) with l3fwd-power's step-down"),
    Mode("adaptive_idle_short_10us", ("adaptive", "--power-thresholds", "idle_short_us=10"),
         "Algorithm 1 with the authors' published scripts' setting: a 10 us pause after 10 "
         "empty polls"),
    Mode("proportional", ("proportional",),
         "naps from the arrival rate and the ring's headroom within the default 50 us latency "
         "budget, P-state lowered first"),
    Mode("proportional_500us", ("proportional", "--power-thresholds", "latency_budget_us=500"),
         "proportional with a 500 us latency budget"),
    Mode("pmgmt_pause", ("pmgmt-pause",),
         "DPDK's rte_power_ethdev_pmgmt_queue_enable, PAUSE type (chosen at start)",
         start_only=True),
)
BASELINE = "busy"

# issue 15, "Done when"
CPU_GOALS = ((0.1, 0.20), (0.01, 0.05))     # (load, best mode's CPU time / busy's at most)
P99_ADDED_LIMIT_US = 50.0                   # the best mode's p99 - busy's, same load
THROUGHPUT_LOAD = 1.0
THROUGHPUT_TOLERANCE = 0.02                 # every mode's delivered within 2% of busy's

WAKEUP_SOURCE = Path(__file__).with_name("wakeup_cost.c")
WAKEUP_SLEEPS = 20_000
WAKEUP_NAP_NS = 30_000
WAKEUP_SLACK_NS = 1_000


# ---- pure parts ------------------------------------------------------------

def offered_pps(load: float, reference_pps: float) -> float:
    """The rate of a sweep point: load 0 is IDLE_PPS, not silence."""
    return float(IDLE_PPS) if load <= 0 else float(round(load * reference_pps))


def mean_freq_mhz(residency_share: list[float] | None, pstates_mhz: list[int] | None
                  ) -> float | None:
    """The P-state ladder's frequency weighted by the window's residency."""
    if not residency_share or not pstates_mhz:
        return None
    pairs = list(zip(residency_share, pstates_mhz))
    total = sum(share for share, _ in pairs)
    return sum(share * mhz for share, mhz in pairs) / total if total > 0 else None


def modelled_power(power: dict | None, window_s: float, backends: dict | None,
                   estimate: Callable | None) -> dict | None:
    """power/model.py's estimate (passed as `estimate`) over a trial's
    window, from the window's shares (offered_load.power_window) turned back
    into nanoseconds; None without the model, the figures or the ladder."""
    if estimate is None or power is None or not backends or not backends.get("pstates_mhz"):
        return None
    window_ns = window_s * 1e9
    kwargs = {"pause_backend": backends["pause"]} if backends.get("pause") else {}
    e = estimate(busy_ns=round(power["busy_share"] * window_ns),
                 paused_ns=round(power["paused_share"] * window_ns),
                 asleep_ns=round(power["asleep_share"] * window_ns),
                 sleeps=power["sleeps"],
                 pstate_residency_ns=[round(s * window_ns) for s in power["pstate_residency_share"]],
                 pstate=power["pstate_end"], pstates_mhz=backends["pstates_mhz"], **kwargs)
    if not e.window_s:
        return None
    return {"watts": e.watts, "mean_freq_mhz_in_c0": e.mean_freq_mhz,
            **{f"{state}_share": getattr(e, f"{state.lower()}_s") / e.window_s
               for state in ("C0", "C1", "C3", "C6")}}


def point(mode: str, load: float, trial: Trial, attempts: int = 1,
          estimate: Callable | None = None) -> dict:
    """One sweep point from its (last) trial: throughput, loss, the lcore's
    power window and the radio port's latency."""
    detail = trial.detail
    power = detail.get("power")
    backends = detail.get("power_backends")
    latency = (detail.get("latency") or {}).get(str(RADIO_PORT)) or {}
    window_s = detail["window_s"]
    shares = ("cpu_time_share", "busy_share", "work_share", "poll_share", "paused_share",
              "asleep_share")
    counts = ("naps", "sleeps", "pauses", "pstate_transitions", "pstate_end")
    residency = power["pstate_residency_share"] if power else None
    return {
        "mode": mode,
        "load_share": load,
        "rate_pps": trial.rate_pps,
        "offered_pps": detail.get("offered_pps"),
        "window_s": window_s,
        "delivered_mpps": detail["delivered"][str(RADIO_PORT)] / window_s / 1e6,
        "arrived": trial.arrived,
        "lost": trial.lost,
        "loss_share": trial.loss_share,
        **{key: power.get(key) if power else None for key in shares + counts},
        "pstate_residency_share": residency,
        "mean_freq_mhz": mean_freq_mhz(residency, (backends or {}).get("pstates_mhz")),
        "p50_us": latency.get("p50_us"),
        "p99_us": latency.get("p99_us"),
        "max_us": latency.get("max_us"),
        "modelled_power": modelled_power(power, window_s, backends, estimate),
        "attempts": attempts,
        "lcore_away": lcore_was_away(trial),
    }


def _at(points: Iterable[dict], mode: str, load: float) -> dict | None:
    return next((p for p in points if p["mode"] == mode and p["load_share"] == load), None)


def cpu_goal(points: list[dict], load: float, limit: float,
             p99_added_limit_us: float = P99_ADDED_LIMIT_US) -> dict:
    """At `load`: every power mode's CPU time share against busy's, its loss
    and its p99 added to busy's; the best mode is the one with the least CPU
    among those that lose nothing and add at most p99_added_limit_us (when
    none does, the least CPU of all, and the goal is missed)."""
    goal = {"load_share": load, "cpu_ratio_limit": limit, "p99_added_limit_us": p99_added_limit_us}
    base = _at(points, BASELINE, load)
    if base is None or not base.get("cpu_time_share"):
        return {**goal, "met": False, "why": f"{BASELINE} mode not measured at this load"}
    modes = []
    for p in points:
        if p["load_share"] != load or p["mode"] == BASELINE or p.get("cpu_time_share") is None:
            continue
        added = (p["p99_us"] - base["p99_us"]
                 if p.get("p99_us") is not None and base.get("p99_us") is not None else None)
        ratio = p["cpu_time_share"] / base["cpu_time_share"]
        modes.append({"mode": p["mode"], "cpu_ratio": ratio, "cpu_met": ratio <= limit,
                      "lost": p["lost"], "zero_loss_met": p["lost"] == 0,
                      "p99_added_us": added,
                      "p99_met": added is not None and added <= p99_added_limit_us})
    if not modes:
        return {**goal, "met": False, "why": "no power mode measured at this load"}
    qualified = [m for m in modes if m["zero_loss_met"] and m["p99_met"]]
    best = min(qualified or modes, key=lambda m: m["cpu_ratio"])
    cheapest = min(modes, key=lambda m: m["cpu_ratio"])
    return {**goal, "busy_cpu_time_share": base["cpu_time_share"], "busy_p99_us": base.get("p99_us"),
            "cheapest_mode": cheapest["mode"], "best_mode": best["mode"],
            **{k: v for k, v in best.items() if k != "mode"},
            "met": best["cpu_met"] and best["zero_loss_met"] and best["p99_met"],
            "modes": modes}


def throughput_goal(points: list[dict], load: float = THROUGHPUT_LOAD,
                    tolerance: float = THROUGHPUT_TOLERANCE,
                    not_measured: dict[str, str] | None = None) -> dict:
    """At `load`: every measured mode's delivered rate at least (1 -
    tolerance) of busy's; the modes that could not run are listed, not
    counted."""
    goal = {"load_share": load, "least_ratio": 1 - tolerance,
            "not_measured": dict(not_measured or {})}
    base = _at(points, BASELINE, load)
    if base is None or not base["delivered_mpps"]:
        return {**goal, "met": False, "why": f"{BASELINE} mode not measured at this load"}
    modes = {p["mode"]: {"delivered_mpps": p["delivered_mpps"],
                         "ratio_to_busy": p["delivered_mpps"] / base["delivered_mpps"],
                         "met": p["delivered_mpps"] >= (1 - tolerance) * base["delivered_mpps"]}
             for p in points if p["load_share"] == load and p["mode"] != BASELINE}
    return {**goal, "busy_delivered_mpps": base["delivered_mpps"], "modes": modes,
            "met": bool(modes) and all(m["met"] for m in modes.values())}


def wakeup_bound(cpu_us_per_wakeup: float, busy_cpu_share: float, work_share: float,
                 limit: float) -> dict | None:
    """What the goal leaves for wakeups: a mode within `limit` of busy's CPU
    that spends work_share of the window on frames has (limit * busy -
    work) of the CPU for its wakeups, so it may wake at most once per
    cpu_us_per_wakeup / that; None when the work alone exceeds the limit."""
    left = limit * busy_cpu_share - work_share
    if left <= 0 or cpu_us_per_wakeup <= 0:
        return None
    return {"cpu_share_left_for_wakeups": left,
            "least_us_between_wakeups": cpu_us_per_wakeup / left}


def evaluate_goals(points: list[dict], not_measured: dict[str, str] | None = None,
                   wakeup_cpu_us: float | None = None) -> dict:
    """Issue 15's goals on the sweep: CPU at 10% and 1% load (with zero loss
    and p99 added), throughput at 100%; with the per-wakeup CPU cost, how
    often the best mode could wake and still meet each CPU goal."""
    goals = {}
    for load, limit in CPU_GOALS:
        goal = cpu_goal(points, load, limit)
        # the least work any power mode did at this load (batching more
        # frames a poll works less): the most room a mode could leave wakeups
        leanest = min((p for p in points if p["load_share"] == load and p["mode"] != BASELINE
                       and p.get("work_share") is not None),
                      key=lambda p: p["work_share"], default=None)
        if wakeup_cpu_us and leanest and goal.get("busy_cpu_time_share"):
            goal["wakeup_bound"] = wakeup_bound(wakeup_cpu_us, goal["busy_cpu_time_share"],
                                                leanest["work_share"], limit)
            goal["leanest_mode"] = leanest["mode"]
        goals[f"cpu_at_{share_key(load)}_load"] = goal
    goals[f"throughput_at_{share_key(THROUGHPUT_LOAD)}_load"] = throughput_goal(
        points, not_measured=not_measured)
    return goals


def notes(points: list[dict], goals: dict, wakeup: dict, backends: dict | None,
          not_measured: dict[str, str]) -> list[str]:
    """The sentences a reader needs beside the table: what a wakeup costs
    here and what that leaves the CPU goals, what the napping modes pay in
    wakeups, what DPDK's pmgmt pause does on this CPU, busy windows the
    machine took CPU from."""
    out = [f"load 0% is {IDLE_PPS:,} pps, not silence: a latency needs frames"]
    cpu_us = wakeup.get("cpu_us_per_sleep")
    if cpu_us:
        out.append(f"one {wakeup['nap_ns'] / 1000:g} us nanosleep (timer slack "
                   f"{wakeup['timer_slack_ns']} ns) costs {cpu_us:.1f} us of thread CPU time and "
                   f"{wakeup['wall_us_per_sleep']:.1f} us of wall time on this machine: a thread "
                   f"doing nothing but such naps is charged {wakeup['cpu_share']:.0%} of a CPU")
    elif "error" in wakeup:
        out.append(f"the per-wakeup cost was not measured: {wakeup['error']}")
    for key, goal in goals.items():
        bound = goal.get("wakeup_bound", False)
        if not key.startswith("cpu_at_") or "best_mode" not in goal or bound is False:
            continue
        if bound is None:
            out.append(f"{share_key(goal['load_share'])} load: {goal['leanest_mode']}'s work alone "
                       f"exceeds {goal['cpu_ratio_limit']:.0%} of busy's CPU time")
        else:
            out.append(f"{share_key(goal['load_share'])} load: within {goal['cpu_ratio_limit']:.0%} "
                       f"of busy's CPU time, {bound['cpu_share_left_for_wakeups']:.1%} of the CPU "
                       f"is left for wakeups after {goal['leanest_mode']}'s work (the "
                       f"least of any mode), so at "
                       f"{cpu_us:.1f} us each at most one every "
                       f"{bound['least_us_between_wakeups']:.0f} us (the latency goal allows "
                       f"{goal['p99_added_limit_us']:g} us more than busy's p99)")
    for p in points:
        if cpu_us and p["load_share"] in dict(CPU_GOALS) and p.get("naps") and p.get("window_s"):
            per_s = (p["naps"] + (p.get("sleeps") or 0)) / p["window_s"]
            out.append(f"{p['mode']} at {share_key(p['load_share'])} load: {per_s:,.0f} naps and "
                       f"sleeps a second x {cpu_us:.1f} us = {per_s * cpu_us / 1e6:.0%} of the "
                       f"CPU on wakeups alone; measured CPU time {p['cpu_time_share']:.0%}")
    pmgmt = [p for p in points if p["mode"] == "pmgmt_pause"]
    if pmgmt and (backends or {}).get("pause") == "rte_pause spin":
        out.append("pmgmt_pause started, but without WAITPKG DPDK's pause callback spins on "
                   "rte_pause inside rx_burst: the thread's CPU time stays busy polling's, and the "
                   "governor counts those spins as polling (busy share), not as pauses")
    for mode, why in not_measured.items():
        out.append(f"{mode} not measured: {why}")
    for p in points:
        if p["mode"] == BASELINE and p.get("cpu_time_share") is not None \
                and p["cpu_time_share"] < 0.9:
            out.append(f"busy at {share_key(p['load_share'])} load was charged only "
                       f"{p['cpu_time_share']:.0%} of the window's CPU time: the machine took the "
                       "lcore's CPU away for the rest (other modes' CPU ratios at that load are "
                       "against that)")
    return out


def goal_verdict(goals: dict) -> dict:
    """The section's `goal` for run.py: met when every goal is."""
    missed = [name for name, goal in goals.items() if not goal["met"]]
    return {"met": not missed, "missed": missed}


# ---- measured --------------------------------------------------------------

def wakeup_cost(build_dir: Path, cpu: int) -> dict:
    """wakeup_cost.c compiled into build_dir and run once on `cpu`; its
    figures, or {"error": ...} when it cannot be built or run."""
    what = {"sleeps": WAKEUP_SLEEPS, "nap_ns": WAKEUP_NAP_NS, "timer_slack_ns": WAKEUP_SLACK_NS,
            "cpu": cpu, "source": "testbench/bench/wakeup_cost.c"}
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        return {**what, "error": "no C compiler (gcc, cc) on PATH"}
    build_dir.mkdir(parents=True, exist_ok=True)
    executable = build_dir / "wakeup_cost"
    try:
        subprocess.run([gcc, "-O2", "-Wall", "-o", str(executable), str(WAKEUP_SOURCE)],
                       check=True, capture_output=True, text=True, timeout=60)
        run = subprocess.run([str(executable), str(WAKEUP_SLEEPS), str(WAKEUP_NAP_NS),
                              str(WAKEUP_SLACK_NS)], check=True, capture_output=True, text=True,
                             timeout=120, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        return {**what, **json.loads(run.stdout)}
    except subprocess.CalledProcessError as e:
        return {**what, "error": f"{e.cmd[0]} exited {e.returncode}: {e.stderr.strip()}"}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return {**what, "error": str(e)}


def _power_model() -> tuple[Callable | None, dict]:
    try:
        from power import model
    except ImportError as e:
        return None, {"available": False,
                      "note": f"power/model.py cannot be imported ({e}): the residencies only, "
                              "no modelled power (this bench writes no model of its own)"}
    return model.estimate, {
        "available": True,
        "source": "power/model.py estimate(): paper 002's constants per core, C0 power by "
                  "P-state, spin pauses as C0, WAITPKG pauses as C1, sleeps in the deepest "
                  "C-state their mean length covers; watts of the lcore's core above the "
                  "machine's idle floor, no meter",
        "constants_w": {name: getattr(model, name, None)
                        for name in ("P_C0_MAX", "P_C1", "P_C3", "P_C6")},
        "halving_saves": getattr(model, "HALVING_SAVES", None),
    }


def _reference(offered_load: dict | None) -> tuple[float, str] | None:
    if not offered_load or "skipped" in offered_load:
        return None
    entry = offered_load.get("no_drop", {}).get(share_key(DEFAULT_LOSS_SHARE), {})
    if not entry.get("no_drop_pps"):
        return None
    confirmed = {True: "confirmed", False: "not confirmed", None: "unconfirmed"}[entry.get("confirmed")]
    return entry["no_drop_pps"], (f"the offered_load section of this run (busy mode, "
                                  f"{share_key(DEFAULT_LOSS_SHARE)} loss, {confirmed})")


def measure(settings: Settings, cpu_model: str, offered_load: dict | None = None,
            host_p4_pps: float | None = None) -> dict:
    """offered_load: that section's results in this run (its 0.1% no-drop
    rate is the reference), host_p4_pps: gnb_host_p4's saturated rate in
    this run (bounds the search when there is none)."""
    workload = GnbFullDownlink()
    workload.prepare(settings)
    setup = paced_setup(workload, settings, output_ports=(RADIO_PORT, BAAS_PORT))
    window_s = WINDOW_SHARE * settings.duration_s
    work_dir = settings.build_dir / "runs" / "power"
    estimate, model_note = _power_model()
    trials: list[tuple[str, float | None, Trial]] = []   # (mode, load, trial), every attempt

    def trial_at(rate: float, mode: Mode = MODES[0], load: float | None = None
                 ) -> tuple[Trial, int]:
        for attempt in range(1, 2 + AWAY_RETRIES):
            trial = run_trial(setup, rate, window_s, work_dir, pattern="constant", ring=RING,
                              tsc_hz=settings.tsc_hz, governor=mode.governor)
            trials.append((mode.key, load, trial))
            if not (trial.lost and lcore_was_away(trial)):
                break
        return trial, attempt

    wakeup = wakeup_cost(settings.build_dir / "power", settings.lcore)
    search = None
    found = _reference(offered_load)
    if found:
        reference, reference_source = found
    else:
        saturated, saturated_source = _saturated_pps(workload, settings, host_p4_pps)
        with harness_away_from(settings.lcore):
            search = no_drop_rate(lambda rate: trial_at(rate)[0], saturated,
                                  loss_share=DEFAULT_LOSS_SHARE, confirm=True)
        reference = search.no_drop_pps
        if reference <= 0:
            raise BenchError(f"host.p4 in busy mode lost more than {share_key(DEFAULT_LOSS_SHARE)} "
                             f"at every rate tried, down to {search.lowest_failing_pps:.0f} pps")
        reference_source = (f"searched by this section (busy mode, {share_key(DEFAULT_LOSS_SHARE)} "
                            f"loss, below the saturated {saturated / 1e6:.2f} Mpps: {saturated_source})")

    points: list[dict] = []
    not_measured: dict[str, str] = {}       # mode: why (a start-only mode refused)
    errors: list[dict] = []                 # other modes' failed points
    with harness_away_from(settings.lcore):
        for load in LOADS:
            rate = offered_pps(load, reference)
            for mode in MODES:
                if mode.key in not_measured:
                    continue
                try:
                    trial, attempts = trial_at(rate, mode, load)
                except BenchError as e:
                    if mode.key == BASELINE:
                        raise
                    if mode.start_only:
                        not_measured[mode.key] = f"unsupported: {e}"
                    else:
                        errors.append({"mode": mode.key, "load_share": load, "error": str(e)})
                    continue
                points.append(point(mode.key, load, trial, attempts, estimate))

    goals = evaluate_goals(points, not_measured, wakeup.get("cpu_us_per_sleep"))
    backends = next((t.detail.get("power_backends") for _, _, t in trials
                     if t.detail.get("power_backends")), None)
    every = [t for _, _, t in trials]
    return {
        "description": f"p4src/host.p4 (gNB steps, step 5: {N_EXACT_ENTRIES:,} AM DRBs, 128-byte "
                       "GTP-U frames) on one lcore under the runtime's --governor modes, by "
                       "offered load (constant gaps) as a share of busy mode's no-drop rate: "
                       "CPU time of the polling thread, the governor's busy/paused/asleep "
                       "shares, P-state residency, modelled power, loss and latency",
        "cpu_model": cpu_model,
        "settings": {
            "lcore": settings.lcore, "warmup_s": WARMUP_S, "window_s": window_s, "ring": RING,
            "pattern": "constant",
            "loads": list(LOADS),
            "load_0": f"{IDLE_PPS:,} pps (a tiny rate rather than none: a latency needs frames)",
            "modes": {m.key: {"governor": " ".join(("--governor", *m.governor)),
                              "description": m.description} for m in MODES},
            "source": f"--rx-replay 0:PCAP,rate=PPS,pattern=constant,ring={RING} on "
                      "net_null0,no-rx=1; radio (1) and BaaS (2) net_null; --latency",
        },
        "reference": {"no_drop_pps": reference, "mpps": reference / 1e6,
                      "source": reference_source,
                      "search": search.as_json() if search else None,
                      "confirmed": search.confirmed if search else None},
        "backends": backends,
        "power_source": "no meter is read by this section: cpu_time_share is the thread's CPU "
                        "clock (what the kernel charged it, measured); busy/paused/asleep and "
                        "the P-state residency are the governor's own accounting (the P-states "
                        "are simulated where the backend says so, changing nothing); watts are "
                        "power/model.py's estimate from them",
        "power_model": model_note,
        "wakeup_cost": wakeup,
        "definitions": {
            "cpu_time_share": "the forwarding thread's CPU time (pthread_getcpuclockid) over "
                              "the window's wall time",
            "busy_share": "governor: time polling or working (work_share + poll_share)",
            "paused_share": "governor: time in pauses (a spin on rte_pause, or WAITPKG)",
            "asleep_share": "governor: time in timed sleeps or rx-interrupt waits",
            "loss_share": "arrivals that did not leave on both output ports (offered_load)",
            "latency": "radio port: arrival in the modelled ring to the tx burst, us",
            "p99_added_us": "the mode's p99 minus busy's at the same load",
        },
        "points": points,
        "not_measured": not_measured,
        "errors": errors,
        "goals": goals,
        "goal": goal_verdict(goals),
        "notes": notes(points, goals, wakeup, backends, not_measured),
        "unaccounted_beyond_in_flight": unaccounted_beyond_in_flight(every),
        "lossy_trials_lcore_away": {
            "what": "trials that lost frames with the look of a descheduled lcore (max latency "
                    "beyond the ring's fill time, p90 under a tenth of it), each run again up "
                    f"to {AWAY_RETRIES} times, the last attempt counting; a sleeping governor "
                    "can have that look by itself",
            "trials": [{"mode": mode, "load_share": load, "rate_pps": t.rate_pps}
                       for mode, load, t in trials if t.lost and lcore_was_away(t)],
            "of_lossy_trials": sum(1 for t in every if t.lost)},
        "trials": [{"mode": mode, "load_share": load, **t.as_json(), "lcore_away": lcore_was_away(t)}
                   for mode, load, t in trials],
    }


def summary(results: dict) -> str:
    parts = [f"reference {results['reference']['mpps']:.2f} Mpps"]
    goals = results["goals"]
    for (load, limit) in CPU_GOALS:
        goal = goals[f"cpu_at_{share_key(load)}_load"]
        if "best_mode" in goal:
            added = goal["p99_added_us"]
            parts.append(f"{share_key(load)} load: {goal['best_mode']} CPU {goal['cpu_ratio']:.0%} of "
                         f"busy (goal {limit:.0%}), lost {goal['lost']}, p99 "
                         + ("?" if added is None else f"{added:+.0f} us")
                         + f": {'met' if goal['met'] else 'missed'}")
            if goal["cheapest_mode"] != goal["best_mode"]:
                cheapest = next(m for m in goal["modes"] if m["mode"] == goal["cheapest_mode"])
                added = cheapest["p99_added_us"]
                parts.append(f"cheapest {cheapest['mode']} {cheapest['cpu_ratio']:.0%} of busy, lost "
                             f"{cheapest['lost']}, p99 " + ("?" if added is None else f"{added:+.0f} us"))
        else:
            parts.append(f"{share_key(load)} load: {goal['why']}")
    throughput = goals[f"throughput_at_{share_key(THROUGHPUT_LOAD)}_load"]
    parts.append(f"100% load throughput within {THROUGHPUT_TOLERANCE:.0%} of busy: "
                 f"{'met' if throughput['met'] else 'missed'}")
    wakeup = results["wakeup_cost"]
    if "cpu_us_per_sleep" in wakeup:
        parts.append(f"a {wakeup['nap_ns'] / 1000:g} us nap costs {wakeup['cpu_us_per_sleep']:.1f} us "
                     f"CPU ({wakeup['wall_us_per_sleep']:.1f} us wall)")
    if results["not_measured"]:
        parts.append("not measured: " + ", ".join(results["not_measured"]))
    if results["unaccounted_beyond_in_flight"]:
        parts.append("FRAMES UNACCOUNTED (bench.json power.unaccounted_beyond_in_flight)")
    return "; ".join(parts)
