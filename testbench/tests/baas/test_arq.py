"""RLC AM ARQ through the real BaaS process (TS 38.322 5.3.2, 5.3.3,
6.2.2.5): copies in, STATUS PDUs in, retransmissions out, compared byte
for byte with the copies they repeat."""
from __future__ import annotations

import time

import pytest

from baas_link import BaasLink
from t4p4s.stf.control import ControlError
from testbench.gnb.baas_frames import amd_frame, status_frame, with_poll

UE, LCID = 7, 4


def send_copies(link, sns, sn_bits=12, ue=UE, lcid=LCID):
    frames = {sn: amd_frame(ue, lcid, sn, sn_bits) for sn in sns}
    before = link.counters()["pdus_received"]
    link.send(*frames.values())
    link.wait_counter("pdus_received", before + len(frames))
    return frames


def held(link, ue=UE, lcid=LCID):
    return link.baas.drb(ue, lcid)["result"]["held"]


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_ack_releases_every_sn_below_ack_sn(link, sn_bits):
    send_copies(link, range(10), sn_bits)
    assert held(link) == 10
    link.send(status_frame(UE, LCID, ack_sn=6, sn_bits=sn_bits))
    c = link.wait_counter("acked", 6, ue_id=UE, lcid=LCID)
    assert (c["acked"], c["status_received"], c["retransmitted"]) == (6, 1, 0)
    info = link.baas.drb(UE, LCID)["result"]
    assert (info["held"], info["tx_next_ack"], info["tx_next"]) == (4, 6, 10)
    assert link.received() == []


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_nack_retransmits_the_copy_byte_for_byte_with_a_poll_on_the_last(link, sn_bits):
    frames = send_copies(link, range(8), sn_bits)
    link.send(status_frame(UE, LCID, ack_sn=8, sn_bits=sn_bits,
                           nacks=[{"nack_sn": 2}, {"nack_sn": 5}]))
    got = link.wait_received(2)
    assert got == [with_poll(frames[2], False), with_poll(frames[5], True)]
    c = link.counters(UE, LCID)
    assert (c["acked"], c["nacked"], c["retransmitted"]) == (6, 2, 2)
    assert held(link) == 2      # the NACKed ones wait for their acknowledgement
    link.send(status_frame(UE, LCID, ack_sn=8, sn_bits=sn_bits))
    link.wait_counter("acked", 8, ue_id=UE, lcid=LCID)
    assert held(link) == 0


def test_nack_range_and_so_fields(link):
    frames = send_copies(link, range(12))
    link.send(status_frame(UE, LCID, ack_sn=12, nacks=[
        {"nack_sn": 1, "e3": 1, "nack_range": 3},
        {"nack_sn": 6, "e2": 1, "so_start": 4, "so_end": 0xFFFF},
        {"nack_sn": 9, "e2": 1, "e3": 1, "so_start": 10, "so_end": 2, "nack_range": 2}]))
    got = link.wait_received(6)
    # an SO NACK retransmits the whole SDU: the gNB never segments
    expected = [1, 2, 3, 6, 9, 10]
    assert got == [with_poll(frames[sn], sn == expected[-1]) for sn in expected]


def test_sn_wrap_around(link):
    sns = [(4090 + i) % 4096 for i in range(12)]   # 4090..4095, 0..5
    frames = send_copies(link, sns)
    link.send(status_frame(UE, LCID, ack_sn=3, nacks=[{"nack_sn": 4094, "e3": 1,
                                                      "nack_range": 4}]))
    got = link.wait_received(4)
    assert got == [with_poll(frames[sn], sn == 1) for sn in (4094, 4095, 0, 1)]
    info = link.baas.drb(UE, LCID)["result"]
    assert (info["tx_next_ack"], info["tx_next"], info["held"]) == (4094, 6, 4 + 3)


@pytest.mark.parametrize("case, reason", [
    (lambda: status_frame(UE, LCID, ack_sn=9), "status_ack_outside"),
    (lambda: status_frame(UE, LCID, ack_sn=4, nacks=[{"nack_sn": 4}]), "status_nack_outside"),
    (lambda: status_frame(UE, LCID, ack_sn=6, nacks=[{"nack_sn": 3}, {"nack_sn": 2}]),
     "status_nack_order"),
    (lambda: status_frame(UE, LCID, ack_sn=6, nacks=[{"nack_sn": 3, "e3": 1, "nack_range": 0}]),
     "status_nack_order"),
    (lambda: status_frame(UE, LCID, ack_sn=6, nacks=[{"nack_sn": 2, "e3": 1, "nack_range": 5}]),
     "status_nack_outside"),
    (lambda: status_frame(UE, LCID, ack_sn=6, nacks=[{"nack_sn": 2, "e2": 1, "so_start": 9,
                                                      "so_end": 3}]), "status_so"),
    (lambda: status_frame(UE, LCID, ack_sn=6, cpt=1), "status_cpt"),
    (lambda: status_frame(UE, LCID, ack_sn=6, sn_bits=18), "status_sn_length"),
    (lambda: status_frame(UE, LCID + 1, ack_sn=6), "status_unknown_drb"),
    # E1 says a NACK follows, and the frame ends (after its Ethernet padding's zeros
    # a 12-bit NACK decodes, so the cut is made past 60 bytes)
    (lambda: status_frame(UE, LCID, ack_sn=6, nacks=[{"nack_sn": 1}] * 20)[:18 + 3 + 39],
     "status_truncated"),
])
def test_malformed_status_is_dropped_whole_and_counted(link, case, reason):
    send_copies(link, range(8))
    link.send(case())
    c = link.wait_counter(reason, 1)
    assert c["dropped"][reason] == 1
    assert (c["acked"], c["retransmitted"], c["status_received"]) == (0, 0, 0)
    assert held(link) == 8


@pytest.fixture
def timer_link(baas_executable, tmp_path):
    # t-PollRetransmit 50 ms, maxRetxThreshold 2, small bounds
    link = BaasLink(baas_executable, tmp_path / "baas",
                    ["--t-poll-retransmit", "50", "--max-retx", "2", "--drb-max-pdus", "8",
                     "--max-pdus", "16384"])
    yield link
    link.close()


def test_poll_retransmit_expiry_resends_the_highest_sn_with_a_poll(timer_link):
    """5.3.3.4: no STATUS within t-PollRetransmit: the highest SN is
    retransmitted with P = 1; a STATUS answering the poll stops the timer."""
    frames = send_copies(timer_link, range(4))
    got = timer_link.wait_received(1, timeout=2)
    assert got[0] == with_poll(frames[3], True)
    timer_link.send(status_frame(UE, LCID, ack_sn=4))
    timer_link.wait_counter("acked", 4, ue_id=UE, lcid=LCID)
    info = timer_link.baas.drb(UE, LCID)["result"]
    assert (info["held"], info["poll_timer_running"]) == (0, False)
    settled = len(timer_link.received())
    time.sleep(0.3)
    assert len(timer_link.received()) == settled     # nothing held: no more polls


def test_max_retx_threshold_raises_radio_link_failure(timer_link):
    """5.3.2: RETX_COUNT 0, 1, then = maxRetxThreshold (2): RLF, the DRB's
    PDUs are released and its state forgotten."""
    send_copies(timer_link, range(3))
    c = timer_link.wait_counter("rlf", 1, timeout=3)
    assert c["rlf"] == 1 and c["released_rlf"] == 3
    assert c["retransmitted"] == 2 and c["poll_timeouts"] == 3
    with pytest.raises(ControlError, match="ENOENT"):
        timer_link.baas.drb(UE, LCID)
    assert timer_link.baas.stats()["result"]["held"] == 0


def test_per_drb_bound_releases_the_oldest(timer_link):
    send_copies(timer_link, range(12))       # bound 8: SNs 0..3 go
    c = timer_link.counters(UE, LCID)
    assert c["released_bound"] == 4
    assert held(timer_link) == 8
    # the UE may still NACK them: the STATUS stays valid, they are counted as lost
    timer_link.send(status_frame(UE, LCID, ack_sn=12, nacks=[{"nack_sn": 1}, {"nack_sn": 9}]))
    c = timer_link.wait_counter("nack_not_held", 1, ue_id=UE, lcid=LCID)
    assert (c["nack_not_held"], c["acked"], c["status_received"]) == (1, 7, 1)


def test_global_bound_releases_the_inserting_drbs_oldest(baas_executable, tmp_path):
    link = BaasLink(baas_executable, tmp_path / "baas",
                    ["--t-poll-retransmit", "60000", "--max-pdus", "10"])
    try:
        send_copies(link, range(8), ue=1)
        send_copies(link, range(5), ue=2)      # held 8 + 2, then ue 2 gives up its own oldest
        assert (held(link, ue=1), held(link, ue=2)) == (8, 2)
        assert link.counters(2, LCID)["released_bound"] == 3
        link.send(amd_frame(3, LCID, 0))        # a full BaaS, a DRB holding nothing: not kept
        c = link.wait_counter("released_bound", 4)
        assert (c["released_bound"], link.baas.stats()["result"]["held"]) == (4, 10)
        assert link.counters(1, LCID)["released_bound"] == 0
    finally:
        link.close()
