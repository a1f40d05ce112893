"""`make bench` section "offered_load": the gNB downlink (step 5 of the
gNB steps, p4src/host.p4 with 65,536 AM DRBs, workloads.GnbFullDownlink)
under an offered load instead of a saturated source (issue 14).

Measured, on the forwarding lcore, with the runtime's paced --rx-replay
(the same 128-byte downlink frames arriving at a set rate into a modelled
1,024-descriptor rx ring) and --latency in every trial (offered_load.py):

* the saturated rate: the gnb_host_p4 workload of the same run (median of
  its repeats) when it was measured, else one run of --duration here;
* the no-drop rate for a loss of at most 0.1% and of 0 (RFC 2544 section
  26.1): binary search between 0 and the saturated rate to 1% of it, the
  0-loss search starting from the 0.1% search's trials, each result then
  tried once more (`confirmation`: one trial per rate may be lucky on a
  lcore the machine now and then deschedules); a trial's loss is
  what arrived in its window and did not leave on the radio port and the
  BaaS port (each arrival leaves once on each): ring overflow, pipeline
  drops and tx drops;
* latency (arrival in the modelled ring to hand-over to the radio port's
  tx burst: p50, p90, p99, p99.9, max) at 10%, 50% and 90% of the 0.1%
  no-drop rate with constant gaps, and at 50% with Poisson arrivals;
* the ratio of the saturated and no-drop rates to testpmd macswap's
  (testpmd_macswap_null of the same run) when it was measured.

A trial is a fresh process (0.7 s to start with its 65,536 entries):
WARMUP_S after it answers, then a window of WINDOW_SHARE of --duration
(2 s by default), from counter deltas over the control socket; about 20
trials, a minute and a half in all. On a shared VM a lcore descheduled for
a millisecond overflows the ring: the bench keeps its own process off the
lcore's CPU during the trials, and a lossy trial with the look of such an
absence (max latency beyond the ring's fill time, p90 small) is run again,
up to AWAY_RETRIES times."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from testbench.bench.dpdk import BenchError
from testbench.bench.gnb_entries import BAAS_PORT
from testbench.bench.offered_load import (DEFAULT_LOSS_SHARE, RESOLUTION_SHARE, WARMUP_S, Trial,
                                          lcore_was_away, no_drop_rate, paced_setup, run_trial,
                                          unaccounted_beyond_in_flight)
from testbench.bench.workloads import N_EXACT_ENTRIES, GnbFullDownlink, Settings

RADIO_PORT = 1
LOSS_SHARES = (DEFAULT_LOSS_SHARE, 0.0)
LATENCY_LOADS = ((0.1, "constant"), (0.5, "constant"), (0.9, "constant"), (0.5, "poisson"))
PERCENTILES = ("p50_us", "p90_us", "p99_us", "p99_9_us", "max_us")
RING = 1024                     # the runtime's default modelled rx ring
WINDOW_SHARE = 0.4              # of --duration: a trial's measured window
# a lossy trial whose loss looks like a descheduled lcore (offered_load.
# lcore_was_away: the machine's doing, not the pipeline's) is run again, at
# most this many times; the last attempt counts, every one is in "trials"
AWAY_RETRIES = 2


@contextlib.contextmanager
def harness_away_from(lcore: int) -> Iterator[None]:
    """This process (and the trials' processes it starts, whose EAL
    control threads inherit the mask) off the forwarding lcore's CPU, so
    that reading `stats` and starting trials do not preempt the lcore and
    overflow its ring; the lcore thread pins itself (-l)."""
    before = os.sched_getaffinity(0)
    others = before - {lcore}
    if others:
        os.sched_setaffinity(0, others)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def share_key(share: float) -> str:
    """"0.1%", "0%": the key of a loss share in the results."""
    return f"{share * 100:g}%"


def _saturated_pps(workload: GnbFullDownlink, settings: Settings, measured_pps: float | None
                   ) -> tuple[float, str]:
    if measured_pps:
        return measured_pps, f"{workload.name} of this run (median of its repeats)"
    sample = workload.measure(settings, 0)
    return sample.pps, f"measured by this section: one run of {settings.duration_s} s ({sample.command})"


def _latency_point(trial: Trial, load_share: float, reference_pps: float) -> dict:
    latency = trial.detail["latency"][str(RADIO_PORT)] or {}
    return {
        "load_share": load_share,
        "pattern": trial.detail["pattern"],
        "rate_pps": trial.rate_pps,
        "of_no_drop_pps": reference_pps,
        "offered_pps": trial.detail["offered_pps"],
        "loss_share": trial.loss_share,
        "count": latency.get("count"),
        **{p: latency.get(p) for p in PERCENTILES},
    }


def measure(settings: Settings, cpu_model: str, host_p4_pps: float | None = None,
            testpmd_pps: float | None = None) -> dict:
    """host_p4_pps, testpmd_pps: the saturated rates of gnb_host_p4 and
    testpmd_macswap_null in this run (None: not measured in it)."""
    workload = GnbFullDownlink()
    workload.prepare(settings)
    setup = paced_setup(workload, settings, output_ports=(RADIO_PORT, BAAS_PORT))
    saturated, saturated_source = _saturated_pps(workload, settings, host_p4_pps)
    window_s = WINDOW_SHARE * settings.duration_s
    work_dir = settings.build_dir / "runs" / "offered_load"
    trials: list[Trial] = []

    def trial_at(rate: float, pattern: str = "constant") -> Trial:
        for _ in range(1 + AWAY_RETRIES):
            trial = run_trial(setup, rate, window_s, work_dir, pattern=pattern, ring=RING,
                              tsc_hz=settings.tsc_hz)
            trials.append(trial)
            if not (trial.lost and lcore_was_away(trial)):
                break
        return trial

    searches = {}
    with harness_away_from(settings.lcore):
        for share in LOSS_SHARES:
            searches[share] = no_drop_rate(trial_at, saturated, loss_share=share,
                                           earlier=list(trials), confirm=True)
    reference = searches[DEFAULT_LOSS_SHARE].no_drop_pps
    if reference <= 0:
        raise BenchError(f"host.p4 lost more than {share_key(DEFAULT_LOSS_SHARE)} at every "
                         f"rate tried, down to {searches[DEFAULT_LOSS_SHARE].lowest_failing_pps:.0f} pps")
    with harness_away_from(settings.lcore):
        points = [_latency_point(trial_at(round(load * reference), pattern), load, reference)
                  for load, pattern in LATENCY_LOADS]
    # the trial at the saturated rate: what the paced pipeline delivers when overloaded
    overloaded = next((t for t in trials if t.rate_pps == round(saturated)), None)
    results = {
        "description": f"p4src/host.p4 (gNB steps, step 5: {N_EXACT_ENTRIES:,} AM DRBs, 128-byte "
                       "GTP-U frames) on one lcore under an offered load: paced --rx-replay into a "
                       f"{RING}-descriptor modelled rx ring, --latency; the no-drop rate (RFC 2544 "
                       "26.1) for 0.1% and 0 loss next to the saturated rate, latency percentiles "
                       "by load",
        "cpu_model": cpu_model,
        "settings": {
            "lcore": settings.lcore, "warmup_s": WARMUP_S, "window_s": window_s, "ring": RING,
            "resolution": f"{RESOLUTION_SHARE:.0%} of the saturated rate",
            "source": "--rx-replay 0:PCAP,rate=PPS,pattern=constant|poisson,ring=1024 on "
                      "net_null0,no-rx=1; radio (1) and BaaS (2) net_null",
            "latency_meter": "--latency in every trial (its tx callbacks cost about 5% of the "
                             "cycles per frame of the saturated run)",
        },
        "loss_definition": "per trial window: arrivals at the paced source that did not leave "
                           "on both output ports (radio 1, BaaS 2): ring overflow + pipeline "
                           "drops + tx drops, as a share of the arrivals",
        "latency_definition": "arrival in the modelled rx ring to hand-over to the radio port's "
                              "tx burst (rx wait, pipeline, tx buffer), histogram reset after "
                              "the warm-up; percentiles within 1/32",
        "saturated_mpps": saturated / 1e6,
        "saturated_source": saturated_source,
        "paced_overloaded_delivered_mpps":
            overloaded.detail["delivered"][str(RADIO_PORT)] / overloaded.detail["window_s"] / 1e6
            if overloaded else None,
        "no_drop": {share_key(share): {**search.as_json(), "mpps": search.no_drop_pps / 1e6,
                                       "share_of_saturated": search.no_drop_pps / saturated,
                                       "confirmed": search.confirmed}
                    for share, search in searches.items()},
        "latency": {"reference": f"no-drop rate at {share_key(DEFAULT_LOSS_SHARE)} loss",
                    "port": RADIO_PORT, "points": points},
        "testpmd_macswap_null_mpps": testpmd_pps / 1e6 if testpmd_pps else None,
        "unaccounted_beyond_in_flight": unaccounted_beyond_in_flight(trials),
        "lossy_trials_lcore_away": {
            "what": "trials that lost frames with the look of a descheduled lcore (max latency "
                    "beyond the ring's fill time, p90 under a tenth of it) rather than of one "
                    "too slow for the rate (offered_load.lcore_was_away); each was run again, "
                    f"up to {AWAY_RETRIES} times, the last attempt counting",
            "rates_pps": [t.rate_pps for t in trials if t.lost and lcore_was_away(t)],
            "of_lossy_trials": sum(1 for t in trials if t.lost)},
        "trials": [{**t.as_json(), "lcore_away": lcore_was_away(t)} for t in trials],
    }
    if testpmd_pps:
        results["ratio_to_testpmd_macswap_null"] = {
            "saturated": saturated / testpmd_pps,
            **{f"no_drop_{share_key(share)}": search.no_drop_pps / testpmd_pps
               for share, search in searches.items()},
        }
    return results


def summary(results: dict) -> str:
    no_drop = ", ".join(f"{key} loss {entry['mpps']:.2f}"
                        + ("" if entry["confirmed"] is not False else " (not confirmed)")
                        for key, entry in results["no_drop"].items())
    parts = [f"no-drop Mpps: {no_drop}; saturated {results['saturated_mpps']:.2f}"]
    ratio = results.get("ratio_to_testpmd_macswap_null")
    if ratio:
        parts.append(f"saturated {ratio['saturated']:.1%} of testpmd macswap")
    parts.append("p99 " + ", ".join(f"{p['load_share']:.0%} {p['pattern']} {p['p99_us']:.1f} us"
                                    for p in results["latency"]["points"]))
    away = results["lossy_trials_lcore_away"]
    if away["rates_pps"]:
        parts.append(f"{len(away['rates_pps'])} of {away['of_lossy_trials']} lossy trials look like "
                     "a descheduled lcore")
    if results["unaccounted_beyond_in_flight"]:
        parts.append("FRAMES UNACCOUNTED (bench.json offered_load.unaccounted_beyond_in_flight)")
    return "; ".join(parts)
