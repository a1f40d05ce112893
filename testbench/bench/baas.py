"""`make bench` section "baas": the buffering service (baas/) on one lcore.

Fed like the gNB steps: a net_null port whose every received mbuf the
BaaS's --rx-replay (the target runtime's t4p4s/runtime/src/rx_replay.c)
overwrites with the next frame of a pcap, round and round
(testbench/bench/baas_workload.py: 128-byte AMD PDU copies of 65,536 RLC AM
DRBs, each DRB's in turn, and the STATUS PDUs acknowledging them; once
with 1% of the STATUS PDUs NACKing one SN). Retransmissions leave on the
same port, where net_null discards them.

Measured per run, from the BaaS's --stats-json: AMD PDUs taken per second
(pdus_received / duration, the rate at which it can take a target's AM
copies) and frames per second (AMD + STATUS), median over the repeats;
and the memory one buffered PDU takes: its mbuf (the pool element: the
mempool object header, struct rte_mbuf, headroom and data room, as the
BaaS reports it) plus its 16-byte slot in the DRB's ring.

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
import statistics
from dataclasses import asdict
from pathlib import Path

from testbench.bench.baas_workload import FRAME_BYTES, Mix, workload_pcap
from testbench.bench.dpdk import BenchError, run_to_exit

N_DRBS = 65_536
NACK_SHARE = 0.01
MIXES = {
    "ack_only": Mix(n_drbs=N_DRBS),
    "nack_1_percent": Mix(n_drbs=N_DRBS, nack_drbs=round(NACK_SHARE * N_DRBS)),
}
EAL_MEMORY_MB = 1024            # the pool (--max-pdus below) and the replayed pcap
STARTUP_ALLOWANCE_S = 60        # EAL, the pool, the pcap's load
SLOT_BYTES = 16                 # struct baas_slot (baas/src/drb.h)
# per DRB besides its slots (baas/src/drb.h, x86-64 gcc): struct baas_drb
# 392 bytes, and per UE seen struct baas_ue_drbs (64 LCID pointers) 512
DRB_STATE_BYTES = 392
UE_STATE_BYTES = 512
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


def _command(executable: Path, lcore: int, pcap: Path, duration_s: int, max_pdus: int,
             stats_path: Path) -> list[str]:
    prefix = f"t4p4s-bench-baas-{os.getpid()}-{next(_prefixes)}"
    return [str(executable), "-l", str(lcore), "--no-pci", "--file-prefix", prefix,
            "--no-huge", "-m", str(EAL_MEMORY_MB), "--no-shconf", "--vdev", "net_null0", "--",
            "--rx-replay", f"0:{pcap}", "--duration", str(duration_s),
            "--max-pdus", str(max_pdus), "--stats-json", str(stats_path)]


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
    frames = sum(lc["frames"] for lc in stats["lcores"])
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
    command = _command(executable, lcore, pcap, duration_s, _max_pdus(cycle.peak_held), stats_path)
    finished = run_to_exit(command, work_dir / "run.log", duration_s + STARTUP_ALLOWANCE_S)
    try:
        stats = json.loads(stats_path.read_text())
    except (OSError, ValueError) as e:
        raise BenchError(f"the BaaS wrote no readable --stats-json ({e}); log: {work_dir / 'run.log'}")
    c = stats["counters"]
    frames = sum(lc["frames"] for lc in stats["lcores"])
    if c["pdus_received"] == 0:
        raise BenchError(f"the BaaS took no AMD PDU in {duration_s} s; log: {work_dir / 'run.log'}")
    amd_pps = c["pdus_received"] / duration_s
    return {
        "amd_mpps": amd_pps / 1e6,
        "frames_mpps": frames / duration_s / 1e6,
        "cycles_per_amd_pdu": tsc_hz / amd_pps,
        "cycles_per_frame": tsc_hz * duration_s / frames,
        "frames": frames,
        "counters": {k: v for k, v in c.items() if k != "dropped"},
        "dropped": {k: v for k, v in c["dropped"].items() if v},
        "held_at_exit": stats["held"],
        "pool_size": stats["pool_size"],
        "pool_element_bytes": stats.get("pool_element_bytes"),
        "losses": losses(stats, mix, cycle),
        "command": finished.command_line,
    }


def _executable() -> Path:
    from testbench.topology.baas import build
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
            "poll_timeouts": [r["counters"]["poll_timeouts"] for r in runs[name]],
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
        "attachments": {"port": "measured (net_null0, --rx-replay)", "ring": "not built"},
        "settings": {"lcore": lcore, "duration_s": duration_s, "repeats": repeats,
                     "eal": f"--no-huge -m {EAL_MEMORY_MB} --no-shconf --no-pci",
                     "frame_bytes": FRAME_BYTES, "burst": 32,
                     "t_poll_retransmit_ms": 45, "mbuf_data_room": 2048},
        "rate_definition": "amd_mpps: AMD PDU copies taken (pdus_received) per second by one "
                           "lcore; frames_mpps: AMD + STATUS frames per second; median over "
                           "the runs",
        "mixes": mixes,
        "memory": {
            "pool_element_bytes": element,
            "slot_bytes": SLOT_BYTES,
            "bytes_per_buffered_pdu": element + SLOT_BYTES,
            "note": "port attachment: each held copy is an mbuf of the BaaS's own pool (its "
                    "element: mempool object header + struct rte_mbuf + 128 B headroom + "
                    "2048 B data room) and a 16-byte slot; per DRB besides: "
                    f"struct baas_drb {DRB_STATE_BYTES} B, per UE {UE_STATE_BYTES} B",
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
