"""Offered load for any compiled workload of the bench whose source is a
pcap (--rx-replay or net_pcap): the no-drop rate (RFC 2544 section 26.1's
throughput, with a loss share allowed) and the loss and latency at a given
load.

A trial runs the workload's executable with its source paced: the
runtime's `--rx-replay 0:PCAP,rate=PPS,pattern=...` on `net_null0,no-rx=1`
(frames arrive on a schedule into a modelled NIC rx ring of 1,024
descriptors, lost when it overflows; t4p4s/runtime/src/rx_replay.c) and
`--latency` (arrival to transmission, per output port). After WARMUP_S
the histograms are reset, and the measured window is the difference of two
`stats` replies over the control socket (as baas.py's runs).

A trial's loss is what arrived at the source in the window and never left
on the output ports: the modelled ring's overflow, the pipeline's drops
(every reason) and the output ports' tx drops, each counted where it
happens. That equals arrivals minus deliveries except for the frames in
flight at the window's edges (`stats` is no atomic snapshot: the output's
tx is read after the input's arrivals), which a zero-loss threshold could
not tolerate; that difference is kept per trial as `unaccounted`, a check
that no frame vanished uncounted.

The search (no_drop_rate) is pure: binary search of the offered rate
between 0 and the saturated rate (measured in the same run) for the
highest rate whose loss is at most a share of its arrivals, to a
resolution; trials of another share's search bound it (a rate that lost
nothing passes every share)."""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from testbench.bench.baas import control_path, wait_ready
from testbench.bench.baas_ring import target_stats
from testbench.bench.dpdk import BenchError, Eal, first_cause, running

DEFAULT_LOSS_SHARE = 0.001      # 0.1% of the arrivals
RESOLUTION_SHARE = 0.01         # of the saturated rate
WARMUP_S = 0.5                  # after ready: caches and the ring settle, then the histograms reset
RESET_SETTLE_S = 0.005          # each lcore zeroes its histograms at its next tx (within ~1 ms)
STARTUP_ALLOWANCE_S = 90        # EAL, ports, up to 65,536 entries
# what `unaccounted` may show per output port: a few bursts in the
# pipeline, and what arrives while one `stats` reply reads port after port
IN_FLIGHT_FRAMES = 4 * 32
STATS_SKEW_S = 100e-6
PATTERNS = ("constant", "poisson")
_runs = itertools.count()


# ---- the search ------------------------------------------------------------

@dataclass(frozen=True)
class Trial:
    """One offered rate, measured: `lost` of `arrived` frames in the window."""
    rate_pps: float
    arrived: int
    lost: int
    detail: dict = field(default_factory=dict)

    @property
    def loss_share(self) -> float:
        return self.lost / self.arrived if self.arrived else 1.0

    def passes(self, loss_share: float) -> bool:
        """No arrivals at all is no measurement: it fails."""
        return self.arrived > 0 and self.lost <= loss_share * self.arrived

    def as_json(self) -> dict:
        return {"rate_pps": self.rate_pps, "arrived": self.arrived, "lost": self.lost,
                "loss_share": self.loss_share, **self.detail}


@dataclass(frozen=True)
class Search:
    loss_share: float
    no_drop_pps: float              # 0: every rate tried lost more
    lowest_failing_pps: float | None  # None: the saturated rate passed
    resolution_pps: float
    trials: tuple[Trial, ...]       # this search's own, in order
    confirmation: Trial | None = None   # the result tried again (not part of the search)

    @property
    def confirmed(self) -> bool | None:
        return None if self.confirmation is None else self.confirmation.passes(self.loss_share)

    def as_json(self) -> dict:
        def brief(t: Trial) -> dict:
            return {"rate_pps": t.rate_pps, "loss_share": t.loss_share,
                    "passed": t.passes(self.loss_share)}
        return {"loss_share": self.loss_share, "no_drop_pps": self.no_drop_pps,
                "lowest_failing_pps": self.lowest_failing_pps,
                "resolution_pps": self.resolution_pps,
                "trials": [brief(t) for t in self.trials],
                "confirmation": brief(self.confirmation) if self.confirmation else None}


def _bounds(trials: Iterable[Trial], loss_share: float) -> tuple[float, float | None]:
    """(highest passing rate below the lowest failing one, lowest failing
    rate or None). A pass above a failure is taken as noise and ignored."""
    trials = list(trials)
    failing = min((t.rate_pps for t in trials if not t.passes(loss_share)), default=None)
    passing = [t.rate_pps for t in trials if t.passes(loss_share)
               and (failing is None or t.rate_pps < failing)]
    return max(passing, default=0.0), failing


def no_drop_rate(trial_at: Callable[[float], Trial], saturated_pps: float,
                 loss_share: float = DEFAULT_LOSS_SHARE, resolution_pps: float | None = None,
                 earlier: Iterable[Trial] = (), confirm: bool = False) -> Search:
    """The highest offered rate in (0, saturated_pps] whose trial lost at
    most `loss_share` of its arrivals, within `resolution_pps` (default
    RESOLUTION_SHARE of the saturated rate): first the saturated rate
    itself, then halving the interval between the highest passing and the
    lowest failing rate. trial_at(rate) runs one trial (rates are whole
    frames per second); `earlier`: trials already run (another share's
    search), which narrow the interval first. With `confirm`, one more
    trial at the result (unless 0) says whether it passes again: a
    search takes one trial per rate, and on a machine whose lcore is now
    and then descheduled a passing trial may have been lucky."""
    if saturated_pps <= 0:
        raise ValueError("the saturated rate must be positive")
    resolution = resolution_pps if resolution_pps is not None else RESOLUTION_SHARE * saturated_pps
    if resolution <= 0:
        raise ValueError("the resolution must be positive")
    known, own = list(earlier), []

    def run(rate: float) -> None:
        trial = trial_at(float(round(rate)))
        known.append(trial)
        own.append(trial)

    low, high = _bounds(known, loss_share)
    if high is None and low < saturated_pps:
        run(saturated_pps)
        low, high = _bounds(known, loss_share)
    while high is not None and high - low > resolution:
        middle = round((low + high) / 2)
        if middle <= low or middle >= high:       # below a frame per second
            break
        run(middle)
        low, high = _bounds(known, loss_share)
    confirmation = trial_at(float(low)) if confirm and low > 0 else None
    return Search(loss_share=loss_share, no_drop_pps=low, lowest_failing_pps=high,
                  resolution_pps=resolution, trials=tuple(own), confirmation=confirmation)


# ---- a trial on the real executable -----------------------------------------

@dataclass(frozen=True)
class PacedSetup:
    """A workload's command with its port 0 source paced."""
    name: str
    executable: Path
    lcore: int
    vdevs: tuple[str, ...]          # port 0 a net_null without rx: the replay allocates
    pcap: Path
    options: tuple[str, ...]        # the workload's own, without its source
    output_ports: tuple[int, ...]   # each arrival leaves once on each


def _free_null_name(vdevs: Iterable[str]) -> str:
    used = {v.split(",", 1)[0] for v in vdevs}
    return next(f"net_null{i}" for i in itertools.count() if f"net_null{i}" not in used)


def paced_setup(workload, settings, output_ports: tuple[int, ...] = (1,)) -> PacedSetup:
    """From a prepared CompiledWorkload (workloads.py) whose port 0 replays
    a pcap, by --rx-replay or net_pcap's infinite_rx; output_ports: where
    every arrival is to leave (host.p4: the radio and the BaaS copy)."""
    if not hasattr(workload, "compiled"):
        raise BenchError(f"{workload.name} is not a compiled workload prepared for this run")
    vdevs, options = list(workload.vdevs(settings)), list(workload.options(settings))
    entries = workload.entries()
    pcap = None
    if "--rx-replay" in options:
        at = options.index("--rx-replay")
        port, _, spec = options[at + 1].partition(":")
        if port != "0" or "," in spec:
            raise BenchError(f"{workload.name}: --rx-replay {options[at + 1]} is not port 0's plain replay")
        pcap = Path(spec)
        del options[at:at + 2]
    elif vdevs and vdevs[0].startswith("net_pcap"):
        found = [kv.split("=", 1)[1] for kv in vdevs[0].split(",")[1:] if kv.startswith("rx_pcap=")]
        pcap = Path(found[0]) if found else None
    if pcap is None:
        raise BenchError(f"{workload.name}: port 0 replays no pcap, nothing to pace")
    rest = vdevs[1:]
    paced = f"{_free_null_name(rest)},no-rx=1"
    if entries is not None:
        options += ["--entries", str(entries)]
    return PacedSetup(name=workload.name, executable=Path(workload.compiled.executable_path),
                      lcore=settings.lcore, vdevs=(paced, *rest), pcap=pcap,
                      options=tuple(options), output_ports=output_ports)


def _port(stats: dict, port: int) -> dict:
    found = [p for p in stats["ports"] if p["port"] == port]
    if not found:
        raise BenchError(f"the stats reply has no port {port}")
    return found[0]


def window_counts(first: dict, second: dict, output_ports: tuple[int, ...]) -> dict:
    """Counter deltas between two `stats` replies of a paced run: arrivals,
    the loss counted where it happens, deliveries per output port and the
    frames in flight that no counter explains (`unaccounted`)."""
    source1, source2 = _port(first, 0).get("rx_replay"), _port(second, 0).get("rx_replay")
    if source1 is None or source2 is None:
        raise BenchError("port 0 has no rx_replay in the stats reply (no paced --rx-replay)")

    def delta(before: dict, after: dict, key: str) -> int:
        return int(after[key]) - int(before[key])
    arrived = delta(source1, source2, "arrived")
    overflow = delta(source1, source2, "ring_overflow")
    in_ring = delta(source1, source2, "in_ring")
    rx_dropped = delta(_port(first, 0), _port(second, 0), "rx_dropped")
    # tx_full counts every port's tx drops: the output ports' are below
    drops = {reason: second["drops"][reason] - first["drops"].get(reason, 0)
             for reason in second["drops"] if reason != "tx_full"}
    tx_dropped = {port: delta(_port(first, port), _port(second, port), "tx_dropped")
                  for port in output_ports}
    delivered = {port: delta(_port(first, port), _port(second, port), "tx") for port in output_ports}
    lost = overflow + rx_dropped + sum(drops.values()) + sum(tx_dropped.values())
    return {
        "arrived": arrived,
        "lost": lost,
        "ring_overflow": overflow,
        "rx_dropped": rx_dropped,
        "pipeline_drops": {reason: n for reason, n in drops.items() if n},
        "tx_dropped": {str(port): n for port, n in tx_dropped.items()},
        "delivered": {str(port): n for port, n in delivered.items()},
        "unaccounted": {str(port): arrived - in_ring - lost - n for port, n in delivered.items()},
    }


def _command(setup: PacedSetup, rate_pps: float, pattern: str, ring: int | None, control: Path,
             lifetime_s: int, governor: tuple[str, ...] = ("busy",)) -> list[str]:
    source = f"0:{setup.pcap},rate={rate_pps:.0f},pattern={pattern}"
    if ring is not None:
        source += f",ring={ring}"
    # --duration: a safety net only, the run is killed once its window is read
    return [str(setup.executable), *Eal(lcores=str(setup.lcore), vdevs=setup.vdevs,
                                        purpose="offered-load").args(), "--",
            "--governor", *governor, "--duration", str(lifetime_s), "--rx-replay", source,
            "--latency", "--control", str(control), *setup.options]


def run_trial(setup: PacedSetup, rate_pps: float, window_s: float, work_dir: Path,
              pattern: str = "constant", ring: int | None = None, tsc_hz: float | None = None,
              warmup_s: float = WARMUP_S, governor: tuple[str, ...] = ("busy",)) -> Trial:
    """One trial: the setup's executable offered `rate_pps`, measured over
    `window_s` after `warmup_s`; latency per output port over the window.
    governor: the --governor mode and any further options (e.g.
    "--power-thresholds", "..."); the lcore's power figures over the
    window are in detail["power"]."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern {pattern!r}: not one of {PATTERNS}")
    work_dir = work_dir / f"{setup.name}.{rate_pps:.0f}.{pattern}.{next(_runs)}"
    work_dir.mkdir(parents=True, exist_ok=True)
    control = control_path(work_dir)
    control.unlink(missing_ok=True)
    log = work_dir / "run.log"
    lifetime = math.ceil(warmup_s + window_s) + STARTUP_ALLOWANCE_S
    command = _command(setup, rate_pps, pattern, ring, control, lifetime, governor)
    with running(command, log) as process:
        try:
            wait_ready(control, process, time.monotonic() + STARTUP_ALLOWANCE_S, what=setup.name)
        except BenchError as e:     # the runtime's own words (e.g. a --governor it refuses)
            raise BenchError(f"{e}: {first_cause(log.read_text(errors='replace'))} "
                             f"(log: {log})") from e
        backends = _power_backends(control)
        time.sleep(warmup_s)
        _request(control, {"cmd": "latency_reset"})
        time.sleep(RESET_SETTLE_S)
        t1, first = target_stats(control)
        time.sleep(window_s)
        t2, second = target_stats(control)
        if process.poll() is not None:
            raise BenchError(f"{setup.name} exited during the trial: "
                             f"{first_cause(log.read_text(errors='replace'))} (log: {log})")
    counts = window_counts(first, second, setup.output_ports)
    seconds = t2 - t1
    latency = {str(port): _port(second, port).get("latency") for port in setup.output_ports}
    detail = {
        "pattern": pattern,
        "window_s": round(seconds, 4),
        "offered_pps": counts["arrived"] / seconds,
        # how long the modelled ring covers a lcore that does not poll: a
        # max latency beyond it means the lcore was away (descheduled) that long
        "ring_fill_us": _port(second, 0)["rx_replay"]["ring"] / rate_pps * 1e6,
        **{k: v for k, v in counts.items() if k not in ("arrived", "lost")},
        "latency": latency,
        "power": power_window(first, second, seconds),
        "power_backends": backends,
        "command": " ".join(command),
    }
    if tsc_hz:
        detail["cycles_per_arrival"] = tsc_hz * seconds / counts["arrived"] if counts["arrived"] else None
    return Trial(rate_pps=rate_pps, arrived=counts["arrived"], lost=counts["lost"], detail=detail)


POWER_TIMES = ("cpu_time_ns", "busy_ns", "work_ns", "poll_ns", "paused_ns", "asleep_ns")
POWER_COUNTS = ("pauses", "sleeps", "naps", "interrupt_wakeups", "pstate_transitions")


def power_window(first: dict, second: dict, seconds: float) -> dict | None:
    """The first forwarding lcore's governor figures between two `stats`
    replies: shares of the window (CPU time, busy, paused, asleep, each
    P-state's residency) and counts; None from a runtime without them."""
    try:
        a, b = first["lcores"][0]["power"], second["lcores"][0]["power"]
    except (KeyError, IndexError):
        return None
    window_ns = seconds * 1e9
    residency = [(y - x) / window_ns for x, y in zip(a["pstate_residency_ns"], b["pstate_residency_ns"])]
    return {
        "mode": b["mode"],
        **{key.replace("_ns", "_share"): (b[key] - a[key]) / window_ns for key in POWER_TIMES},
        **{key: b[key] - a[key] for key in POWER_COUNTS},
        "pstate_end": b["pstate"],
        "freq_mhz_end": b["freq_mhz"],
        "pstate_residency_share": residency,
    }


def _power_backends(control: Path) -> dict | None:
    """The governor's backends (frequency, pause, sleep) and P-state
    ladder, from the `power` command; None from a runtime without it."""
    try:
        reply = _request(control, {"cmd": "power"})
    except BenchError:
        return None
    return {**reply.get("backends", {}), "pstates_mhz": reply.get("pstates_mhz")}


def _request(control: Path, request: dict) -> dict:
    from t4p4s.stf.control import ControlClient
    try:
        client = ControlClient(control, timeout=5.0)
        try:
            return client.request(request)
        finally:
            client.close()
    except Exception as e:      # OSError, the client's own errors
        raise BenchError(f"{request['cmd']} on {control}: {e}") from e


def lcore_was_away(trial: Trial) -> bool:
    """Whether the trial's loss looks like a lcore the machine descheduled
    rather than one too slow: on some output port the max latency exceeds
    the time the ring covers while p90 is under a tenth of it (a lcore too
    slow for the rate keeps the ring full, and most frames wait about that
    long)."""
    fill = trial.detail.get("ring_fill_us")
    return bool(fill) and any(
        latency and latency["max_us"] > fill and latency["p90_us"] < fill / 10
        for latency in trial.detail.get("latency", {}).values())


def unaccounted_beyond_in_flight(trials: Iterable[Trial]) -> list[dict]:
    """Trials where more frames are unexplained than could be in flight at
    the window's edges: a frame lost without a counter (none expected)."""
    return [{"rate_pps": t.rate_pps, "unaccounted": t.detail["unaccounted"]} for t in trials
            if any(abs(n) > IN_FLIGHT_FRAMES + t.rate_pps * STATS_SKEW_S
                   for n in t.detail.get("unaccounted", {}).values())]
