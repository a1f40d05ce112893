"""The target runtime's power governor in the real BaaS (baas/src/power.c,
linked from t4p4s/runtime/src): --governor and --power-thresholds, the
`power`, `power_mode` and `power_thresholds` commands on its control
socket with the runtime's replies, and ARQ on time while its lcore
pauses, naps and sleeps: every idle ends by the time the timer wheel's
next bucket is due. The runtime's own governor tests:
testbench/tests/runtime/test_governor.py."""
from __future__ import annotations

import json
import os
import time

import pytest

from baas_link import BaasLink
from waiting import wait_for
from test_arq import send_copies
from test_poll_timer import LCID, UE, first_retransmission, send_copy
from test_ring_attachment import (AM18, N3, P4SRC, RADIO, RING, RingGnb, _refused, packet,
                                  status18, stop_ring_gnb)
from testbench.gnb.baas_frames import status_frame, with_poll
from controller.launch.baas import BaasSpec

QUIET = ["--t-poll-retransmit", "60000", "--max-pdus", "16384"]


@pytest.fixture
def start_link(baas_executable, tmp_path):
    links = []

    def start(options: list[str]) -> BaasLink:
        link = BaasLink(baas_executable, tmp_path / f"baas{len(links)}", options)
        links.append(link)
        return link
    yield start
    for link in links:
        link.close()


def lcore_power(link) -> dict:
    """The power object of the BaaS's lcore (link: a BaasLink or RingGnb)."""
    [lcore] = link.baas.request({"cmd": "power"})["lcores"]
    return lcore


def test_power_answers_with_its_lcores(start_link):
    link = start_link([*QUIET, "--governor", "adaptive", "--power-thresholds",
                       "idle_short_us=10"])
    power = link.baas.request({"cmd": "power"})
    assert power["ok"] is True
    assert set(power["backends"]) == {"frequency", "pause", "sleep"}
    assert power["backends"]["sleep"] == "timed"      # af_packet has no rx interrupt
    assert power["thresholds"]["idle_short_us"] == 10
    [lcore] = power["lcores"]
    assert (lcore["lcore"], lcore["mode"]) == (0, "adaptive")
    assert len(lcore["pstate_residency_ns"]) == len(power["pstates_mhz"])
    assert os.path.isdir(f"/proc/{link.baas.process.process.pid}/task/{lcore['tid']}")
    # nothing arrives: Algorithm 1 sleeps after 300 empty polls
    p = wait_for(lambda: (lambda q: q if q["sleeps"] > 0 else None)(lcore_power(link)),
                 what="a sleep")
    assert p["asleep_ns"] > 0 and p["polls"] >= p["empty_polls"] > 0
    # the statistics carry the same object
    [stats_lcore] = link.baas.stats()["result"]["lcores"]
    assert stats_lcore["power"]["mode"] == "adaptive"


def test_mode_and_thresholds_change_live(start_link):
    link = start_link([*QUIET, "--governor", "adaptive"])
    assert link.baas.request({"cmd": "power_mode", "mode": "proportional"}) == {
        "ok": True, "mode": "proportional", "lcores": [0]}
    wait_for(lambda: lcore_power(link)["mode"] == "proportional", what="proportional")
    wait_for(lambda: lcore_power(link)["naps"] > 0, what="a nap")

    reply = link.baas.request({"cmd": "power_thresholds", "lcore": 0,
                               "thresholds": {"latency_budget_us": 200}})
    assert reply["ok"] is True and reply["lcores"] == [0]
    assert reply["thresholds"]["latency_budget_us"] == 200
    assert lcore_power(link)["thresholds"]["latency_budget_us"] == 200

    # refused as the runtime refuses, nothing changed
    for command, message in [
            ({"cmd": "power_mode", "mode": "turbo"}, "unknown mode 'turbo'"),
            ({"cmd": "power_mode", "mode": "busy", "lcore": 5}, "5 is not a forwarding lcore"),
            ({"cmd": "power_mode", "mode": "pmgmt-pause"}, "chosen at start"),
            ({"cmd": "power_thresholds", "thresholds": {"warp": 1}},
             "unknown power threshold 'warp'")]:
        reply = link.baas.process.control.raw(json.dumps(command))
        assert reply["ok"] is False and reply["error"] == "EINVAL", reply
        assert message in reply["message"]
    assert lcore_power(link)["mode"] == "proportional"

    link.baas.request({"cmd": "power_mode", "mode": "busy"})
    p = wait_for(lambda: (lambda q: q if q["mode"] == "busy" else None)(lcore_power(link)),
                 what="busy")
    assert p["pstate"] == 0
    naps = p["naps"]
    time.sleep(0.2)
    assert lcore_power(link)["naps"] == naps


# Governors whose idles, left alone, would outlast the 400 ms timer by far:
# Algorithm 1 sleeping 1 s at a time (no rx interrupt on af_packet), and
# proportional napping up to its 1 s latency budget on an empty link.
LONG_IDLES = [
    ("adaptive", "sleep_recheck_ms=1000"),
    ("proportional", "latency_budget_us=1000000"),
    ("nap", None),
]


@pytest.mark.parametrize("governor,thresholds", LONG_IDLES, ids=[g for g, _ in LONG_IDLES])
def test_poll_retransmit_fires_on_time_while_the_lcore_idles(start_link, governor, thresholds):
    """test_poll_timer.py's scenario under a governor: a copy starts
    t-PollRetransmit (400 ms); its expiry resends it with P = 1 400 ms
    after the BaaS received it, not when the lcore's idle would end."""
    options = ["--t-poll-retransmit", "400", "--max-pdus", "16384", "--governor", governor]
    if thresholds is not None:
        options += ["--power-thresholds", thresholds]
    link = start_link(options)
    # the governor's first period (100 ms) decides proportional's naps
    idled = wait_for(lambda: (lambda q: q if q["sleeps"] + q["naps"] > 0 else None)(
        lcore_power(link)), what="an idle")
    frame, sent_at = send_copy(link, 0)
    received_by = time.monotonic()        # the BaaS had it (its counter said so)
    got, seen_at = first_retransmission(link, timeout=3)
    assert got == with_poll(frame, True)
    assert seen_at - sent_at >= 0.399
    # a timer's wheel bucket is a millisecond; the rest is this machine's
    # capture and scheduling (an idle left to end by itself: 0.6 s late)
    assert seen_at - received_by < 0.4 + 0.15, seen_at - received_by
    after = lcore_power(link)
    assert after["mode"] == governor
    assert after["sleeps"] + after["naps"] > idled["sleeps"] + idled["naps"]


def test_nack_retransmits_under_adaptive(start_link):
    """test_arq.py's NACK scenario with Algorithm 1 sleeping between frames."""
    link = start_link([*QUIET, "--governor", "adaptive"])
    wait_for(lambda: lcore_power(link)["sleeps"] > 0, what="a sleep")
    frames = send_copies(link, range(8))
    link.send(status_frame(UE, LCID, ack_sn=8, nacks=[{"nack_sn": 2}, {"nack_sn": 5}]))
    got = link.wait_received(2)
    assert got == [with_poll(frames[2], False), with_poll(frames[5], True)]
    c = link.counters(UE, LCID)
    assert (c["acked"], c["nacked"], c["retransmitted"]) == (6, 2, 2)


class GovernedRingGnb(RingGnb):
    """test_ring_attachment.py's target and BaaS, the BaaS under Algorithm 1."""

    def baas_spec(self) -> BaasSpec:
        spec = super().baas_spec()
        spec.options = [*spec.options, "--governor", "adaptive"]
        return spec


@pytest.fixture
def governed_ring_gnb(compiled, baas_executable, tmp_path):
    gnb = GovernedRingGnb(compiled(P4SRC / "host.p4").executable_path, baas_executable,
                          tmp_path)
    yield gnb
    stop_ring_gnb(gnb)


@pytest.mark.dpdk
def test_a_ring_attachment_under_adaptive(governed_ring_gnb):
    """The BaaS's queue is the target's ring (its fill: the ring's count):
    it sleeps between frames, holds the copies and sends the NACKed one
    back; DPDK's pmgmt cannot watch a ring and is refused, saying why."""
    gnb = governed_ring_gnb
    wait_for(lambda: lcore_power(gnb)["sleeps"] > 0, what="a sleep")
    gnb.send(N3, *(packet(AM18, i).n3_frame() for i in range(4)))
    gnb.wait_radio(4)
    gnb.baas.wait_received(4)
    gnb.send(RADIO, status18(AM18, ack_sn=4, nacks=[1]))
    radio = gnb.wait_radio(5)
    assert len(radio) == 5, "no retransmission came out of the radio port"
    assert radio[-1].hex() == packet(AM18, 1).radio_frame(1, 1, 1).hex()
    p = lcore_power(gnb)
    assert p["mode"] == "adaptive" and p["packets"] == 5 and p["sleeps"] > 0

    assert gnb.baas.stop() == 0
    stderr = _refused(gnb, gnb.secondary_eal(), ["--ring", RING, "--governor", "pmgmt-pause"])
    assert "--governor pmgmt-pause: lcore 1 polls the ring" in stderr
    assert "DPDK's power management cannot watch" in stderr
