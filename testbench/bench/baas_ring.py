"""`make bench` section "baas", the ring attachment (paper 001 scenario 2):
host.p4 on one lcore, fed as the gNB steps' step 5 (--rx-replay of the
128-byte downlink frames of 65,536 AM DRBs into N3; the radio port
net_null), makes its port 2 a ring port (`--ring-port`); the BaaS, a DPDK
secondary process on the other lcore, takes every AM copy from it as the
target's own mbuf.

No STATUS PDUs come: each DRB holds one copy (--drb-max-pdus 1), so
each copy taken releases its DRB's one before (the per-DRB bound), an
insert and a release as the port mix's copy and ACK are; the 65,536 held
are the ring port's hold. t-PollRetransmit is 60 s, longer than the run, so no timer
retransmits (65,536 DRBs polled every 45 ms would be 1.5 M
retransmissions a second through the target).

The BaaS keeps up when the target's port 2 counts no tx drops in the
window (its ring never full): every copy the target made was taken."""
from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

from testbench.bench.baas import _executable, _stats, control_path, wait_ready
from testbench.bench.compiled import REPO_ROOT, compile_p4
from testbench.bench.dpdk import BenchError, first_cause, running
from testbench.bench.gnb_entries import write_drb_entries
from testbench.bench.gnb_traffic import downlink_pcap
from controller.launch.processes import hugepage_files

N_DRBS = 65_536
RING = "baas"
HOLD = N_DRBS
WARMUP_S = 1.0
_prefixes = itertools.count()


def target_stats(control: Path) -> tuple[float, dict]:
    """(the time half-way through the request, the target runtime's `stats`
    reply: its counters at the top level, not under "result")."""
    from t4p4s.stf.control import ControlClient
    client = ControlClient(control, timeout=5.0)
    try:
        before = time.monotonic()
        reply = client.request({"cmd": "stats"})
        return (before + time.monotonic()) / 2, reply
    finally:
        client.close()


def _port(stats: dict, port: int) -> dict:
    return next(p for p in stats["ports"] if p["port"] == port)


def _run(target: Path, baas: Path, target_lcore: int, baas_lcore: int, duration_s: int,
         tsc_hz: float, work_dir: Path, pcap: Path, entries: Path) -> dict:
    work_dir.mkdir(parents=True, exist_ok=True)
    prefix = f"t4p4s-bench-ring-{os.getpid()}-{next(_prefixes)}"
    target_control = control_path(work_dir / "target")
    baas_control = control_path(work_dir / "baas")
    for path in (target_control, baas_control):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
    target_command = [
        str(target), "-l", str(target_lcore), "--no-pci", "--file-prefix", prefix,
        "--log-level", "*:warning", "--vdev", "net_null0", "--vdev", "net_null1,no-rx=1", "--",
        "--rx-replay", f"0:{pcap}", "--ring-port", f"{RING},hold={HOLD}",
        "--entries", str(entries), "--control", str(target_control)]
    baas_command = [
        str(baas), "-l", str(baas_lcore), "--proc-type=secondary", "--file-prefix", prefix,
        "--no-pci", "--log-level", "*:warning", "--",
        "--ring", RING, "--max-pdus", str(HOLD), "--drb-max-pdus", "1",
        "--t-poll-retransmit", "60000",
        "--duration", str(duration_s), "--control", str(baas_control)]
    try:
        with running(target_command, work_dir / "target.log") as target_process:
            try:
                wait_ready(target_control, target_process, time.monotonic() + 120, what="host.p4")
            except BenchError as e:
                raise BenchError(f"host.p4 with a ring port, not the BaaS: {e}; log: "
                                 f"{work_dir / 'target.log'}") from e
            with running(baas_command, work_dir / "baas.log") as baas_process:
                wait_ready(baas_control, baas_process, time.monotonic() + 60)
                started = time.monotonic()
                time.sleep(WARMUP_S)
                t1, target1 = target_stats(target_control)
                _, baas1 = _stats(baas_control)
                time.sleep(max(0.5, duration_s - WARMUP_S - 1.0))
                t2, target2 = target_stats(target_control)
                _, baas2 = _stats(baas_control)
                window_s = t2 - t1
                if baas_process.poll() is not None:
                    raise BenchError("the BaaS exited early: "
                                     + first_cause((work_dir / "baas.log").read_text()))
    finally:
        for leftover in hugepage_files(prefix):
            leftover.unlink(missing_ok=True)

    def rate(before: float, after: float) -> float:
        return (after - before) / window_s / 1e6

    n3_before, n3_after = _port(target1, 0), _port(target2, 0)
    ring_before, ring_after = _port(target1, 2), _port(target2, 2)
    baas_mpps = rate(baas1["counters"]["pdus_received"], baas2["counters"]["pdus_received"])
    ring_full = ring_after["tx_dropped"] - ring_before["tx_dropped"]
    return {
        "target_mpps": rate(n3_before["rx"], n3_after["rx"]),
        "copies_to_ring_mpps": rate(ring_before["tx"], ring_after["tx"]),
        "amd_mpps": baas_mpps,
        "cycles_per_amd_pdu": tsc_hz / (baas_mpps * 1e6) if baas_mpps else None,
        "ring_full_drops_in_window": ring_full,
        "kept_up": ring_full == 0,
        "window_s": [round(t1 - started, 3), round(t2 - started, 3)],
        "released_bound_mpps": rate(baas1["counters"]["released_bound"],
                                    baas2["counters"]["released_bound"]),
        "ring_port": target2["ring_ports"][0],
        "commands": [" ".join(target_command), " ".join(baas_command)],
    }


def measure(repeats: int, duration_s: int, target_lcore: int, baas_lcore: int, tsc_hz: float,
            build_dir: Path) -> dict:
    """Medians of `repeats` runs; the BaaS on baas_lcore, host.p4 on target_lcore."""
    target = Path(compile_p4(REPO_ROOT / "p4src" / "host.p4",
                             build_dir / "programs").executable_path)
    pcap = downlink_pcap(build_dir / "traffic", N_DRBS)
    entries = write_drb_entries(N_DRBS, build_dir / "entries")
    runs = [_run(target, _executable(), target_lcore, baas_lcore, duration_s, tsc_hz,
                 build_dir / "runs" / f"baas_ring.{repeat}", pcap, entries)
            for repeat in range(repeats)]
    by_rate = sorted(runs, key=lambda run: run["amd_mpps"])
    median = by_rate[len(by_rate) // 2]
    return {
        "description": "host.p4 (step 5, --rx-replay, 65,536 AM DRBs) on one lcore, its port 2 "
                       "a ring port; the BaaS a secondary process on another lcore taking every "
                       "AM copy (no STATUS: one held per DRB, each copy releases the one before)",
        "lcores": {"target": target_lcore, "baas": baas_lcore},
        "amd_mpps": median["amd_mpps"],
        "target_mpps": median["target_mpps"],
        "kept_up_every_run": all(run["kept_up"] for run in runs),
        "runs": runs,
    }


def summary(results: dict) -> str:
    return (f"ring: BaaS {results['amd_mpps']:.2f} Mpps AMD from host.p4 at "
            f"{results['target_mpps']:.2f} Mpps, "
            + ("kept up" if results["kept_up_every_run"] else "ring full in some runs"))
