"""The BaaS's --rx-replay PORT:FILE.pcap (the target runtime's
t4p4s/runtime/src/rx_replay.c, linked into the BaaS): a net_null port's
every received mbuf becomes the pcap's next frame, round and round, as
the buffering-service benchmark feeds it (testbench/bench/baas.py).

A small cycle of the benchmark's workload (testbench/bench/baas_workload.py:
16 DRBs, 2 AMD PDUs each, then the STATUS PDUs acknowledging them; NACKs
for 4 of them, each followed by a STATUS acknowledging all) with --burst
the cycle's length: net_null always fills the whole burst, and the lcore
stops between bursts, so a run takes a whole number k of cycles and every
counter is exactly k times the cycle's. Nothing about speed is asserted."""
from __future__ import annotations

import json
import os
import subprocess
from itertools import count

import pytest

from testbench.bench.baas_workload import Mix, workload_pcap
from controller.launch import baas as baas_process

pytestmark = pytest.mark.dpdk
MIXES = {
    "ack_only": Mix(n_drbs=16, pdus_per_status=2, status_lag=4),
    "nack": Mix(n_drbs=16, pdus_per_status=2, status_lag=4, nack_drbs=4, full_ack_lag=2),
}
_runs = count()


@pytest.fixture(scope="module")
def executable(dpdk_environment):
    return baas_process.build()


def run_baas(executable, tmp_path, app: list[str], seconds: float = 1.0,
             vdev: str = "net_null0") -> tuple[subprocess.CompletedProcess, dict | None]:
    prefix = f"baas-replay-{os.getpid()}-{next(_runs)}"
    stats_path = tmp_path / f"stats{prefix}.json"
    eal = ["-l", "0", "--no-huge", "-m", "256", "--no-shconf", "--no-pci",
           "--file-prefix", prefix, "--log-level", "*:warning", "--vdev", vdev]
    done = subprocess.run([str(executable), *eal, "--", "--duration", str(seconds),
                           "--max-pdus", "16384", "--stats-json", str(stats_path), *app],
                          capture_output=True, text=True, timeout=60)
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else None
    return done, stats


@pytest.mark.parametrize("name", MIXES)
def test_replayed_cycles_are_buffered_and_acknowledged_exactly(executable, tmp_path, name):
    mix = MIXES[name]
    pcap, cycle = workload_pcap(tmp_path, mix)
    assert cycle.frames <= 64            # one cycle per rx burst
    done, stats = run_baas(executable, tmp_path,
                           ["--rx-replay", f"0:{pcap}", "--burst", str(cycle.frames)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"rx replay: port 0 receives the {cycle.frames} frames of {pcap}" in done.stdout
    (lcore,) = stats["lcores"]
    (port,) = stats["attachments"]
    cycles, rest = divmod(lcore["frames"], cycle.frames)
    assert rest == 0 and cycles > 0
    c = stats["counters"]
    assert c["dropped"] == {reason: 0 for reason in c["dropped"]}
    del c["dropped"]
    retransmitted = cycles * cycle.nacks
    assert c == {
        "pdus_received": cycles * cycle.amd_pdus,
        "bytes_received": cycles * cycle.amd_pdus * 128,
        "status_received": cycles * cycle.status_pdus,
        "acked": cycles * cycle.amd_pdus,
        "nacked": retransmitted,
        "retransmitted": retransmitted,
        "poll_timeouts": 0, "rlf": 0, "released_rlf": 0, "released_bound": 0,
        "released_flush": 0, "nack_not_held": 0,
    }
    assert (stats["held"], stats["drbs"], lcore["drbs"]) == (0, mix.n_drbs, mix.n_drbs)
    # every frame a replayed one; the retransmissions went out on the port
    assert (port["rx"], port["tx"], port["rx_dropped"], port["tx_dropped"]) == \
        (lcore["frames"], retransmitted, 0, 0)
    # one held copy: struct rte_mbuf, headroom and data room, and the
    # mempool's object header (at least), in the BaaS's default pool
    assert stats["pool_element_bytes"] >= 128 + 128 + 2048


def test_without_replay_a_net_null_port_gives_empty_frames(executable, tmp_path):
    done, stats = run_baas(executable, tmp_path, [], seconds=0.2)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rx replay" not in done.stdout
    c = stats["counters"]
    assert c["pdus_received"] == 0 and c["dropped"]["not_bearer"] == stats["lcores"][0]["frames"]


@pytest.mark.parametrize("spec, message", [
    ("0", "'0' is not PORT:FILE.pcap"),
    ("0:{missing}", "--rx-replay: "),
    ("7:{pcap}", "--rx-replay: no port 7"),
])
def test_rx_replay_errors(executable, tmp_path, spec, message):
    pcap, _ = workload_pcap(tmp_path, MIXES["ack_only"])
    spec = spec.format(missing=tmp_path / "missing.pcap", pcap=pcap)
    done, _ = run_baas(executable, tmp_path, ["--rx-replay", spec], seconds=0.2)
    assert done.returncode != 0
    assert message in done.stderr
