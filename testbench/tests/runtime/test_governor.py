"""The power governor in the real executable (the hand-written l2fwd:
port 0 -> port 1, Ethernet addresses swapped): the backends it detects on
this machine, its per-lcore state over the control socket and DPDK
telemetry, modes and thresholds changed live with the errors the
protocol names, and lcores that pause, nap and sleep under a paced load
without losing or altering a frame. The decisions themselves are tested
against scripted traces in testbench/tests/power/test_power_policy.py."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

from test_runtime import Runtime, frame, write_pcap
from waiting import wait_for

pytestmark = pytest.mark.dpdk

SIMULATED_MHZ = [2000 - 100 * i for i in range(13)]


@pytest.fixture(scope="module")
def binary(handwritten):
    return handwritten


def lcore_power(rt: Runtime) -> dict:
    [lcore] = rt.ok("power")["lcores"]
    return lcore


def test_backends_are_detected_and_named(binary, tmp_path):
    rt = Runtime(binary, tmp_path, extra=["--governor", "adaptive"])
    try:
        power = rt.ok("power")
        cpufreq = Path("/sys/devices/system/cpu/cpu0/cpufreq").exists()
        waitpkg = "waitpkg" in Path("/proc/cpuinfo").read_text()
        backends = power["backends"]
        if cpufreq:
            assert backends["frequency"] in ("acpi-cpufreq", "intel_pstate", "cppc")
        else:
            assert backends["frequency"] == "simulated"
            assert power["pstates_mhz"] == SIMULATED_MHZ
        assert backends["pause"] == ("WAITPKG" if waitpkg else "rte_pause spin")
        assert backends["sleep"] == "timed"         # net_ring has no rx interrupt
        assert power["thresholds"]["idle_long_us"] == 300
        assert power["thresholds"]["stepdown_period_ms"] == 100
    finally:
        rt.stop()


def test_an_idle_adaptive_lcore_sleeps_and_steps_down(binary, tmp_path):
    """No traffic: Algorithm 1 sleeps (10 ms at a time, no rx interrupt on
    net_ring) after 300 empty polls, and l3fwd-power's step-down takes it
    one P-state down every 100 ms to the lowest; time adds up."""
    rt = Runtime(binary, tmp_path, extra=["--governor", "adaptive"])
    try:
        n_pstates = len(rt.ok("power")["pstates_mhz"])
        p = wait_for(lambda: (lambda q: q if q["pstate"] == n_pstates - 1 else None)(lcore_power(rt)),
                     what="the lowest P-state")
        assert p["mode"] == "adaptive"
        assert p["pstate_transitions"] == n_pstates - 1
        assert p["sleeps"] > 0 and p["asleep_ns"] > 0
        assert os.path.isdir(f"/proc/{rt.proc.pid}/task/{p['tid']}")
        time.sleep(0.5)
        p = lcore_power(rt)
        total = p["busy_ns"] + p["paused_ns"] + p["asleep_ns"]
        assert sum(p["pstate_residency_ns"]) == pytest.approx(total, rel=0.05)
        assert p["asleep_ns"] > 0.8 * total
        # the thread's CPU time: far below its wall time while it sleeps
        assert 0 < p["cpu_time_ns"] < 0.5 * total
        # the statistics carry the same object
        stats = rt.ok("stats")
        assert stats["lcores"][0]["power"]["mode"] == "adaptive"
    finally:
        rt.stop()


def test_modes_and_thresholds_change_live(binary, tmp_path):
    rt = Runtime(binary, tmp_path, extra=["--governor", "adaptive", "--power-thresholds",
                                          "idle_short_us=10"])
    try:
        lcore = lcore_power(rt)["lcore"]
        assert lcore_power(rt)["thresholds"]["idle_short_us"] == 10
        assert rt.ok("power_mode", mode="proportional") == {"ok": True, "mode": "proportional",
                                                             "lcores": [lcore]}
        wait_for(lambda: lcore_power(rt)["mode"] == "proportional", what="proportional")
        wait_for(lambda: lcore_power(rt)["naps"] > 0, what="a nap")

        reply = rt.ok("power_thresholds", thresholds={"latency_budget_us": 200}, lcore=lcore)
        assert reply["thresholds"]["latency_budget_us"] == 200
        assert reply["thresholds"]["idle_short_us"] == 10        # the others kept
        assert lcore_power(rt)["thresholds"]["latency_budget_us"] == 200

        rt.ok("power_mode", mode="busy")
        p = wait_for(lambda: (lambda q: q if q["mode"] == "busy" else None)(lcore_power(rt)),
                     what="busy")
        assert p["pstate"] == 0                                   # busy polls at full speed
        naps = p["naps"]
        time.sleep(0.2)
        assert lcore_power(rt)["naps"] == naps
    finally:
        rt.stop()


@pytest.mark.parametrize("name,fields,message", [
    ("power_mode", {"mode": "turbo"}, "unknown mode 'turbo'"),
    ("power_mode", {}, "\"mode\" must be a string"),
    ("power_mode", {"mode": "busy", "lcore": 99}, "99 is not a forwarding lcore"),
    ("power_mode", {"mode": "pmgmt-pause"}, "chosen at start"),
    ("power_thresholds", {"thresholds": {"warp": 1}}, "unknown power threshold 'warp'"),
    ("power_thresholds", {"thresholds": {"trend_limit": 0}}, "out of range"),
    ("power_thresholds", {"thresholds": {"idle_short_us": -1}}, "must be a whole number"),
    ("power_thresholds", {"thresholds": [1]}, "must be an object"),
])
def test_bad_requests_are_refused_and_change_nothing(binary, tmp_path, name, fields, message):
    rt = Runtime(binary, tmp_path, extra=["--governor", "adaptive"])
    try:
        before = lcore_power(rt)
        reply = rt.cmd(name, **fields)
        assert reply["ok"] is False and reply["error"] == "EINVAL"
        assert message in reply["message"]
        time.sleep(0.05)
        after = lcore_power(rt)
        assert (after["mode"], after["thresholds"]) == (before["mode"], before["thresholds"])
    finally:
        rt.stop()


def test_a_pmgmt_mode_that_the_pmd_refuses_says_why(binary, tmp_path):
    """DPDK's pmgmt needs the queue's state from the PMD (net_ring has
    none): the process does not start, and says which queue and why."""
    with pytest.raises(AssertionError) as failed:
        Runtime(binary, tmp_path, extra=["--governor", "pmgmt-monitor"])
    assert "--governor pmgmt-monitor" in str(failed.value)
    assert "port 0 rx queue 0" in str(failed.value)


@pytest.mark.parametrize("mode,rate", [("adaptive", 100_000), ("adaptive", 500),
                                       ("proportional", 100_000), ("proportional", 500)])
def test_an_idling_lcore_loses_and_alters_nothing_under_paced_load(binary, tmp_path, mode, rate):
    """A low paced load (10% of what this lcore forwards and far below):
    the lcore pauses, naps or sleeps between arrivals, and every frame that
    arrived leaves on port 1, in order, with only its addresses swapped."""
    frames = [frame(payload=bytes([i]) * (30 + i)) for i in range(5)]
    pcap = write_pcap(tmp_path / "replay.pcap", frames)
    out = tmp_path / "out1.pcap"
    rt = Runtime(binary, tmp_path, vdevs=["net_null0,no-rx=1", f"net_pcap1,tx_pcap={out}"],
                 extra=["--governor", mode, "--rx-replay", f"0:{pcap},rate={rate}"])
    time.sleep(1.5)
    p = lcore_power(rt)
    stats = rt.stop()
    replay = stats["ports"][0]["rx_replay"]
    assert replay["ring_overflow"] == 0 and replay["in_ring"] == 0 and replay["arrived"] > 0
    assert stats["ports"][1]["tx"] == replay["delivered"] == replay["arrived"]
    # it did idle: Algorithm 1 pauses or sleeps, the proportional mode naps
    assert p["pauses"] + p["sleeps"] + p["naps"] > 0
    if rate == 500:
        assert p["asleep_ns"] > 0
    sent = [bytes(f) for f in rdpcap(str(out))]
    expected = []
    for f in frames:
        e = Ether(f)
        e.src, e.dst = e.dst, e.src
        expected.append(bytes(e))
    assert len(sent) == replay["delivered"]
    assert sent == [expected[i % len(frames)] for i in range(len(sent))]
