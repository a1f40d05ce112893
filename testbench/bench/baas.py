"""`make bench` section "baas": the buffering service (baas/) on one lcore.

Fed like the gNB steps: a net_null port whose every received mbuf the
BaaS's --rx-replay (the target runtime's t4p4s/runtime/src/rx_replay.c)
overwrites with the next frame of a pcap, round and round
(testbench/bench/baas_workload.py: 128-byte AMD PDU copies of 65,536 RLC AM
DRBs, each DRB's in turn, and a STATUS PDU acknowledging every 4 PDUs
of a DRB, TS 38.331's most frequent polling; once with 1% of the STATUS
PDUs NACKing one SN). Retransmissions leave on the
same port, where net_null discards them.

Measured per run: AMD PDUs taken per second (the rate at which it can
take a target's AM copies) and frames per second (AMD + STATUS), in the
steady state: the counters read on the BaaS's control socket once its
first cycles are done (WARMUP_S: the first pass creates the 65,536 DRBs,
several times slower than the rest) and again shortly before it exits;
the whole run's average (--stats-json over --duration) is recorded too.
Median over the repeats. And the memory one buffered PDU takes: its mbuf
(the pool element: the mempool object header, struct rte_mbuf, headroom
and data room, as the BaaS reports it) plus its 16-byte slot in the
DRB's ring.

Memory as the gNB steps run: hugepages (--in-memory) when enough are
free, else --no-huge -m 1024 (recorded per run: 4 KB pages cost the BaaS
about 15%, in TLB misses over its pool).

Every run is checked for lost AM PDUs: no drop of any reason, none
released by a bound or a radio link failure, no NACK for a PDU not held,
nothing the port refused, and acked + held at exit == pdus_received.
t-PollRetransmit expiries are not losses (the PDU is retransmitted, then
acknowledged) but spurious here, where every poll is answered: they are
counted per run (a lcore descheduled for longer than t-PollRetransmit on
a shared machine makes them).

Goal (issue 13): one BaaS lcore takes AMD PDUs at least as fast as one
host.p4 lcore makes AM copies (the gnb_host_p4 step of the same run: every
frame it receives is an AM DRB's, copied once to the BaaS port), in both
mixes, with no AM PDU lost.

Only the port attachment is measured: the ring attachment (the BaaS a
secondary process on a host.p4 primary's rte_rings) is not built yet."""

from __future__ import annotations

import itertools
import json
import os
import signal
import statistics
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from testbench.bench.baas_workload import FRAME_BYTES, Mix, workload_pcap
from testbench.bench.dpdk import BenchError, first_cause, running

N_DRBS = 65_536
NACK_SHARE = 0.01
MIXES = {
    "ack_only": Mix(n_drbs=N_DRBS),
    "nack_1_percent": Mix(n_drbs=N_DRBS, nack_drbs=round(NACK_SHARE * N_DRBS)),
}
EAL_MEMORY_MB = 1024            # without hugepages: the pool (--max-pdus below) and the pcap
STARTUP_ALLOWANCE_S = 60        # EAL, the pool, the pcap's load
WARMUP_S = 1.0                  # the first cycles (DRBs created), left out of the rate
EAL_OVERHEAD_BYTES = 128 << 20  # hugepage memory besides the pool and the pcap (EAL, rings)
SLOT_BYTES = 16                 # struct baas_slot (baas/src/drb.h)
# per DRB besides its slots (baas/src/drb.h, x86-64 gcc): struct baas_drb
# 448 bytes; per UE a 16-byte entry of a table made whole per lcore (1 MB),
# and a 512-byte LCID table only for a UE with a second DRB
DRB_STATE_BYTES = 448
UE_STATE_BYTES = 16
# Published figures the issue compares with (RLC AM buffering of 128-byte PDUs).
PAPERS = {
    "paper_001_vfs": {"mpps": 8.62, "cores": 2, "attachment": "SR-IOV VFs",
                      "note": "8.62 Mpps needing 2 cores"},
    "paper_001_rings": {"mpps": 7.6, "cores": 2, "attachment": "rte_rings",
                        "note": "7.6 Mpps on 2 cores"},
    "paper_004": {"mpps": 7.6, "cores": 1, "attachment": "-",
                  "note": "7.6 Mpps per core at 128 B"},
}
_DROP_FREE = ("released_bound", "released_rlf", "released_flush", "rlf", "nack_not_held")
_prefixes = itertools.count()


def _max_pdus(peak_held: int) -> int:
    """--max-pdus: the cycle's peak, rounded up to a multiple of 65,536
    (a bound the replay never reaches: nothing is released by it)."""
    return -(-peak_held // 65_536) * 65_536


def _free_hugepage_bytes() -> int:
    values = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, _, rest = line.partition(":")
            values[key] = int(rest.split()[0]) if rest.split() else 0
    return values.get("HugePages_Free", 0) * values.get("Hugepagesize", 0) * 1024


def _memory_args(pcap: Path, max_pdus: int) -> tuple[list[str], bool]:
    """Hugepages as the gNB steps have them, when enough are free for the
    pool (its mbufs of about 2.4 KB), the replayed pcap and the EAL."""
    needed = (max_pdus + 8192) * 2432 + 2 * pcap.stat().st_size + EAL_OVERHEAD_BYTES
    if _free_hugepage_bytes() >= needed:
        return ["--in-memory"], True
    return ["--no-huge", "-m", str(EAL_MEMORY_MB), "--no-shconf"], False


def _command(executable: Path, lcore: int, pcap: Path, duration_s: int, max_pdus: int,
             stats_path: Path, control: Path, memory: list[str]) -> list[str]:
    prefix = f"t4p4s-bench-baas-{os.getpid()}-{next(_prefixes)}"
    return [str(executable), "-l", str(lcore), "--no-pci", "--file-prefix", prefix, *memory,
            "--vdev", "net_null0", "--",
            "--rx-replay", f"0:{pcap}", "--duration", str(duration_s),
            "--max-pdus", str(max_pdus), "--stats-json", str(stats_path),
            "--control", str(control)]


def control_path(work_dir: Path) -> Path:
    path = work_dir.resolve() / "control.sock"
    if len(os.fsencode(path)) <= 100:
        return path
    return Path(tempfile.mkdtemp(prefix="baas-bench-")) / "control.sock"


def _stats(control: Path) -> tuple[float, dict]:
    """(the time half-way through the request, the `stats` result)."""
    from t4p4s.stf.control import ControlClient
    try:
        client = ControlClient(control, timeout=5.0)
        try:
            before = time.monotonic()
            reply = client.request({"cmd": "stats"})
            return (before + time.monotonic()) / 2, reply["result"]
        finally:
            client.close()
    except Exception as e:      # OSError, the client's own errors
        raise BenchError(f"the BaaS's control socket {control}: {e}") from e


def wait_ready(control: Path, process, deadline: float, what: str = "the BaaS") -> None:
    """The BaaS (as the target runtime) opens its control socket last: a
    `ping` answered means it runs (its --duration counts from there)."""
    from t4p4s.stf.control import ControlClient
    while time.monotonic() < deadline and process.poll() is None:
        try:
            client = ControlClient(control, timeout=2.0)
        except OSError:
            time.sleep(0.02)
            continue
        try:
            client.request({"cmd": "ping"})
            return
        except Exception:
            time.sleep(0.02)
        finally:
            client.close()
    raise BenchError(f"{what} never answered on its control socket "
                     + ("(it exited)" if process.poll() is not None else "in time"))


def _frames(stats: dict) -> int:
    return sum(lc["frames"] for lc in stats["lcores"])


def losses(stats: dict, mix: Mix, cycle) -> list[str]:
    """What in a run's --stats-json says an AM PDU was lost, or that the
    BaaS did not see the workload as it is (empty: none)."""
    c = stats["counters"]
    found = [f"dropped {reason}: {n}" for reason, n in c["dropped"].items() if n]
    found += [f"{name}: {c[name]}" for name in _DROP_FREE if c[name]]
    for a in stats["attachments"]:
        for key in ("rx_dropped", "tx_dropped"):
            if a.get(key):
                found.append(f"port {a.get('port')} {key}: {a[key]}")
    if c["acked"] + stats["held"] != c["pdus_received"]:
        found.append(f"acked {c['acked']} + held {stats['held']} != pdus_received "
                     f"{c['pdus_received']}")
    frames = _frames(stats)
    if c["pdus_received"] + c["status_received"] != frames:
        found.append(f"pdus_received + status_received != {frames} frames")
    expected = frames * cycle.amd_pdus / cycle.frames
    if abs(c["pdus_received"] - expected) > cycle.amd_pdus:
        found.append(f"pdus_received {c['pdus_received']}: not the mix's share of {frames} "
                     f"frames ({expected:.0f})")
    if c["retransmitted"] != c["nacked"] + c["poll_timeouts"]:
        found.append(f"retransmitted {c['retransmitted']} != nacked {c['nacked']} + "
                     f"poll_timeouts {c['poll_timeouts']}")
    if not mix.nack_drbs and c["nacked"]:
        found.append(f"nacked {c['nacked']} in a mix without NACKs")
    return found


def _run(executable: Path, lcore: int, pcap: Path, mix: Mix, cycle, duration_s: int,
         tsc_hz: float, work_dir: Path) -> dict:
    work_dir.mkdir(parents=True, exist_ok=True)
    stats_path = work_dir / "stats.json"
    stats_path.unlink(missing_ok=True)
    log_path = work_dir / "run.log"
    control = control_path(work_dir)
    control.unlink(missing_ok=True)
    max_pdus = _max_pdus(cycle.peak_held)
    memory, hugepages = _memory_args(pcap, max_pdus)
    command = _command(executable, lcore, pcap, duration_s, max_pdus, stats_path, control, memory)
    warmup = min(WARMUP_S, duration_s / 4)
    window_end = duration_s - max(0.25, duration_s / 20)
    with running(command, log_path) as process:
        wait_ready(control, process, time.monotonic() + STARTUP_ALLOWANCE_S)
        started = time.monotonic()
        time.sleep(warmup)
        t1, first = _stats(control)
        time.sleep(max(0.0, started + window_end - time.monotonic()))
        t2, second = _stats(control)
        try:
            process.wait(timeout=duration_s + STARTUP_ALLOWANCE_S)
        except Exception:
            process.send_signal(signal.SIGTERM)
            raise BenchError(f"the BaaS did not exit after its --duration (log: {log_path})")
    output = log_path.read_text(errors="replace")
    if process.returncode != 0:
        raise BenchError(f"the BaaS exited with status {process.returncode}: {first_cause(output)} "
                         f"(log: {log_path})")
    try:
        stats = json.loads(stats_path.read_text())
    except (OSError, ValueError) as e:
        raise BenchError(f"the BaaS wrote no readable --stats-json ({e}); log: {log_path}")
    c = stats["counters"]
    if c["pdus_received"] == 0:
        raise BenchError(f"the BaaS took no AMD PDU in {duration_s} s; log: {log_path}")
    window_s = t2 - t1
    amd_pps = (second["counters"]["pdus_received"] - first["counters"]["pdus_received"]) / window_s
    frames_pps = (_frames(second) - _frames(first)) / window_s
    return {
        "amd_mpps": amd_pps / 1e6,
        "frames_mpps": frames_pps / 1e6,
        "cycles_per_amd_pdu": tsc_hz / amd_pps,
        "cycles_per_frame": tsc_hz / frames_pps,
        "window_s": [round(t1 - started, 3), round(t2 - started, 3)],
        "poll_timeouts_in_window": second["counters"]["poll_timeouts"]
        - first["counters"]["poll_timeouts"],
        "whole_run_amd_mpps": c["pdus_received"] / duration_s / 1e6,
        "whole_run_frames_mpps": _frames(stats) / duration_s / 1e6,
        "hugepages": hugepages,
        "frames": _frames(stats),
        "counters": {k: v for k, v in c.items() if k != "dropped"},
        "dropped": {k: v for k, v in c["dropped"].items() if v},
        "held_at_exit": stats["held"],
        "pool_size": stats["pool_size"],
        "pool_element_bytes": stats.get("pool_element_bytes"),
        "losses": losses(stats, mix, cycle),
        "command": " ".join(command),
    }


def _executable() -> Path:
    from controller.launch.baas import build
    try:
        return build()
    except RuntimeError as e:
        raise BenchError(str(e)) from e


def measure(repeats: int, duration_s: int, lcore: int, tsc_hz: float, build_dir: Path,
            host_p4_am_mpps: float | None = None) -> dict:
    """The section's results. host_p4_am_mpps: the AM copies per second one
    host.p4 lcore made in this run (None: not measured in it)."""
    executable = _executable()
    traffic = {name: workload_pcap(build_dir / "traffic", mix) for name, mix in MIXES.items()}
    runs: dict[str, list[dict]] = {name: [] for name in MIXES}
    # interleaved, as the forwarding workloads are
    for repeat in range(repeats):
        for name, mix in MIXES.items():
            pcap, cycle = traffic[name]
            runs[name].append(_run(executable, lcore, pcap, mix, cycle, duration_s, tsc_hz,
                                   build_dir / "runs" / f"baas_{name}.{repeat}"))
    mixes = {}
    for name, mix in MIXES.items():
        pcap, cycle = traffic[name]
        median_run = sorted(runs[name], key=lambda r: r["amd_mpps"])[len(runs[name]) // 2]
        mixes[name] = {
            "mix": asdict(mix),
            "cycle": cycle.as_json(),
            "pcap": str(pcap),
            "max_pdus": _max_pdus(cycle.peak_held),
            "amd_mpps": statistics.median(r["amd_mpps"] for r in runs[name]),
            "frames_mpps": statistics.median(r["frames_mpps"] for r in runs[name]),
            "cycles_per_amd_pdu": median_run["cycles_per_amd_pdu"],
            "whole_run_amd_mpps": statistics.median(r["whole_run_amd_mpps"] for r in runs[name]),
            "poll_timeouts": [r["counters"]["poll_timeouts"] for r in runs[name]],
            "poll_timeouts_in_window": [r["poll_timeouts_in_window"] for r in runs[name]],
            "losses": sorted({loss for r in runs[name] for loss in r["losses"]}),
            "runs": runs[name],
        }
    element = next((r["pool_element_bytes"] for rs in runs.values() for r in rs
                    if r["pool_element_bytes"]), None)
    if element is None:
        raise BenchError("the BaaS's --stats-json has no pool_element_bytes")
    no_loss = not any(m["losses"] for m in mixes.values())
    results = {
        "description": "the buffering service on one lcore, fed by --rx-replay on a net_null "
                       "port: 128-byte AMD PDU copies of 65,536 RLC AM DRBs and the STATUS PDUs "
                       "acknowledging them (baas_workload.py), ack-only and with 1% NACKs",
        "attachments": {"port": "measured (net_null0, --rx-replay)",
                        "ring": "not measured (make bench measures it after the port)"},
        "settings": {"lcore": lcore, "duration_s": duration_s, "repeats": repeats,
                     "warmup_s": min(WARMUP_S, duration_s / 4),
                     "eal": "--no-pci, --in-memory (hugepages) when enough are free, else "
                            f"--no-huge -m {EAL_MEMORY_MB} --no-shconf (each run's 'hugepages')",
                     "frame_bytes": FRAME_BYTES,
                     "baas_defaults": "--burst 32, --t-poll-retransmit 45, --mbuf-size 2048"},
        "rate_definition": "amd_mpps: AMD PDU copies taken (pdus_received) per second by one "
                           "lcore, frames_mpps: AMD + STATUS frames per second, both in the "
                           "steady state (each run's window_s, after the first pass that "
                           "creates the DRBs); whole_run_*: over the whole --duration; median "
                           "over the runs",
        "mixes": mixes,
        "memory": {
            "pool_element_bytes": element,
            "slot_bytes": SLOT_BYTES,
            "bytes_per_buffered_pdu": element + SLOT_BYTES,
            "note": "port attachment: each held copy is an mbuf of the BaaS's own pool (its "
                    "element: mempool object header + struct rte_mbuf + 128 B headroom + "
                    "2048 B data room) and a 16-byte slot; per DRB besides: "
                    f"struct baas_drb {DRB_STATE_BYTES} B, per UE {UE_STATE_BYTES} B (+512 B with "
                    "a second DRB)",
        },
        "host_p4_am_mpps": host_p4_am_mpps,
        "host_p4_source": "gnb_host_p4 (step 5) in this run: each frame it takes is an AM "
                          "DRB's, copied once to the BaaS port"
                          if host_p4_am_mpps is not None else "gnb_host_p4 not measured in this run",
        "papers": PAPERS,
        "no_am_pdu_lost": no_loss,
    }
    if host_p4_am_mpps is not None:
        slowest = min(m["amd_mpps"] for m in mixes.values())
        results["goal"] = {
            "what": "one BaaS lcore's AMD Mpps (both mixes) >= one host.p4 lcore's AM Mpps, "
                    "no AM PDU lost",
            "baas_amd_mpps": {name: m["amd_mpps"] for name, m in mixes.items()},
            "host_p4_am_mpps": host_p4_am_mpps,
            "ratio": slowest / host_p4_am_mpps if host_p4_am_mpps else None,
            "no_am_pdu_lost": no_loss,
            "met": no_loss and slowest >= host_p4_am_mpps,
        }
    return results


def summary(results: dict) -> str:
    parts = [f"{name}: {m['amd_mpps']:.2f} Mpps AMD ({m['frames_mpps']:.2f} Mpps frames)"
             for name, m in results["mixes"].items()]
    parts.append(f"{results['memory']['bytes_per_buffered_pdu']} B per buffered PDU")
    if results["host_p4_am_mpps"] is not None:
        parts.append(f"host.p4 AM {results['host_p4_am_mpps']:.2f} Mpps")
    if not results["no_am_pdu_lost"]:
        parts.append("AM PDUs LOST (see bench.json baas.mixes.*.losses)")
    return "; ".join(parts)
