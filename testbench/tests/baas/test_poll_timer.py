"""t-PollRetransmit (TS 38.322 5.3.3.2-5.3.3.4) through the real BaaS, for
the lazy timer wheel (baas/src/wheel.h): a stopped timer stays queued in
its bucket, starting it again later only sets its expiry, and only an
earlier expiry moves it. Each test checks a timer fires when it should:
not before, and not a lap of the wheel (4.096 s) late."""
from __future__ import annotations

import time

import pytest

from baas_link import BaasLink
from controller import baas
from testbench.gnb.baas_frames import amd_frame, status_frame, with_poll

UE, LCID = 7, 4
pb2, _ = baas.stubs()


@pytest.fixture
def start_link(baas_executable, tmp_path):
    links = []

    def start(t_poll_retransmit_ms: int) -> BaasLink:
        link = BaasLink(baas_executable, tmp_path / f"baas{len(links)}",
                        ["--t-poll-retransmit", str(t_poll_retransmit_ms),
                         "--max-pdus", "16384"])
        links.append(link)
        return link
    yield start
    for link in links:
        link.close()


def send_copy(link, sn, poll=False) -> tuple[bytes, float]:
    """The copy sent and when (just before it was sent)."""
    frame = amd_frame(UE, LCID, sn, poll=poll)
    before = link.counters()["pdus_received"]
    sent_at = time.monotonic()
    link.send(frame)
    link.wait_counter("pdus_received", before + 1)
    return frame, sent_at


def first_retransmission(link, timeout: float) -> tuple[bytes, float]:
    """The first frame the BaaS sent, and when the test saw it."""
    deadline = time.monotonic() + timeout
    while not link.received():
        assert time.monotonic() < deadline, "no retransmission"
        time.sleep(0.005)
    return link.received()[0], time.monotonic()


def timer_running(link) -> bool:
    return link.baas.drb(UE, LCID)["result"]["poll_timer_running"]


@pytest.mark.parametrize("restart_after", [0.2, 0.6], ids=["still_queued", "dropped"])
def test_a_timer_stopped_and_started_again_fires_a_whole_period_after_the_start(
        start_link, restart_after):
    """Stopped by a STATUS, the timer stays queued for its first expiry
    (400 ms); started again by the next copy before that (still_queued) it
    must not fire there, and after it (dropped: the wheel's only timer was
    stopped meanwhile, yet advancing must not skip its bucket) it must not
    wait a lap: both fire 400 ms after that copy."""
    link = start_link(400)
    send_copy(link, 0)
    link.send(status_frame(UE, LCID, ack_sn=1))
    link.wait_counter("acked", 1, ue_id=UE, lcid=LCID)
    assert not timer_running(link)
    time.sleep(restart_after)
    frame, sent_at = send_copy(link, 1)
    assert timer_running(link)
    time.sleep(max(0.0, sent_at + 0.35 - time.monotonic()))
    assert link.received() == []
    got, seen_at = first_retransmission(link, timeout=3)
    assert got == with_poll(frame, True)
    assert 0.399 <= seen_at - sent_at < 1.5


@pytest.mark.parametrize("per_drb", [True, False], ids=["drb", "defaults"])
def test_a_lowered_t_poll_retransmit_takes_effect_at_the_next_poll(start_link, per_drb):
    """Armed for 60 s, then SetConfig lowers t-PollRetransmit to 100 ms:
    the next poll starts the timer for 100 ms, earlier than the bucket it
    waits in, so it moves there."""
    link = start_link(60000)
    send_copy(link, 0)
    assert timer_running(link)
    drb = pb2.DrbKey(ue_id=UE, lcid=LCID) if per_drb else None
    link.baas.stub().SetConfig(pb2.SetConfigRequest(
        drb=drb, config=pb2.ConfigUpdate(t_poll_retransmit_ms=100)), timeout=10)
    frame, sent_at = send_copy(link, 1, poll=True)
    got, seen_at = first_retransmission(link, timeout=3)
    assert got == with_poll(frame, True)
    assert 0.095 <= seen_at - sent_at < 1.5
    assert link.counters(UE, LCID)["poll_timeouts"] == 1


def test_a_timer_longer_than_the_wheel_waits_for_its_lap(start_link):
    """4.5 s: its bucket comes 0.4 s after the start, a lap early; it must
    fire on the next lap only."""
    link = start_link(4500)
    frame, sent_at = send_copy(link, 0)
    time.sleep(1.0)
    assert link.received() == [] and timer_running(link)
    got, seen_at = first_retransmission(link, timeout=8)
    assert got == with_poll(frame, True)
    assert 4.499 <= seen_at - sent_at < 6.0
