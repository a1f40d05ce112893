"""The UE emulator's logic (testbench/ue/emulator.py) and the lossy link
(testbench/ue/link.py), fed radio frames built with testbench/gnb/frames.py
and driven by hand: no socket, no clock."""
from __future__ import annotations

import json
import random
import time

import pytest
from scapy.layers.l2 import Ether

from testbench.gnb.frames import DlDrb, DownlinkPacket
from testbench.topology.traffic import QFI, generated_drb, inner_packet
from testbench.ue.emulator import EmulatorConfig, UeEmulator
from testbench.ue.link import LossyLink, downlink_stream
from testbench.ue.status_pdu import Nack, StatusPdu, decode_status, encode_status
from ue_status_scapy import scapy_status_frame

GNB_MAC = "02:00:00:00:00:0a"          # DownlinkPacket's default source (the gNB's N3 MAC)
DRB18 = generated_drb(7)               # RLC SN18, PDCP SN18, as gnbctl drb load makes them
DRB12 = DlDrb(teid=0x99, drb_index=1, ue_id=0x0102, lcid=5, rlc_am=True, rlc_sn18=False,
              pdcp_sn18=False, default_qfi=3, ue_mac="02:00:00:00:11:22")
DRB_UM = DlDrb(teid=0x98, drb_index=2, ue_id=9, lcid=6, rlc_am=False, rlc_sn18=False,
               pdcp_sn18=True, default_qfi=3, ue_mac="02:00:00:00:11:23")


def radio_frame(drb: DlDrb, k: int, rlc_sn: int, poll: bool = False, pdcp_sn: int | None = None):
    frame = bytearray(DownlinkPacket(drb, inner_packet(k), qfi=QFI).radio_frame(
        pdcp_sn if pdcp_sn is not None else rlc_sn, rlc_sn if drb.rlc_am else None))
    if poll:
        frame[18] |= 0x40
    return bytes(frame)


class Wire:
    def __init__(self):
        self.frames: list[bytes] = []

    def send(self, frame: bytes):
        self.frames.append(frame)


def emulator(loss=0.0, seed=0, uplink_loss=0.0, **config):
    wire = Wire()
    return UeEmulator(wire.send, LossyLink(loss, seed, uplink_loss), EmulatorConfig(**config)), wire


def expected_status_frame(drb: DlDrb, status: StatusPdu) -> bytes:
    return scapy_status_frame(drb, status, GNB_MAC)


def test_frames_are_demultiplexed_per_drb_with_their_formats():
    ue, wire = emulator()
    for i in range(6):
        ue.handle_frame(radio_frame(DRB18, 100 + i, i), 0)
        ue.handle_frame(radio_frame(DRB12, 200 + i, i), 0)
    summary = ue.summary()
    first, second = summary["drbs"]                    # (ue_id, lcid) order: 7 before 0x0102
    assert (first["ue_id"], first["lcid"], first["sn_bits"], first["flags"]) == (7, 4, 18, 0x07)
    assert (second["ue_id"], second["lcid"], second["sn_bits"], second["flags"]) == \
        (0x0102, 5, 12, 0x01)
    assert first["delivered_k"] == list(range(100, 106))
    assert second["delivered_k"] == list(range(200, 206))
    assert summary["totals"]["delivered"] == 12 and summary["totals"]["unrecognized_sdus"] == 0
    assert wire.frames == []
    json.dumps(summary)


@pytest.mark.parametrize("drb", [DRB18, DRB12], ids=["sn18", "sn12"])
def test_poll_sends_a_status_frame_back_to_the_gnb_mac(drb):
    ue, wire = emulator()
    for sn in range(3):
        ue.handle_frame(radio_frame(drb, sn, sn, poll=sn == 2), 5)
    assert wire.frames == [expected_status_frame(drb, StatusPdu(3))]
    assert ue.summary()["drbs"][0]["status_frames"] == 1


@pytest.mark.parametrize("drb", [DRB18, DRB12], ids=["sn18", "sn12"])
def test_a_lost_frame_is_nacked_after_t_reassembly_and_delivered_after_retransmission(drb):
    ue, wire = emulator(t_reassembly_ms=35)
    frames = [radio_frame(drb, 1000 + sn, sn) for sn in range(8)]
    for sn in (0, 1, 2, 5, 6, 7):
        ue.handle_frame(frames[sn], 10)
    ue.on_clock(44)
    assert wire.frames == []
    ue.on_clock(45)
    # trigger 6 (set by 5): RX_Highest_Status = 8 at once
    assert wire.frames == [expected_status_frame(drb, StatusPdu(8, (Nack(3, nack_range=2),)))]
    ue.handle_frame(frames[4], 50)
    ue.handle_frame(frames[3], 50)
    drb_summary = ue.summary()["drbs"][0]
    assert drb_summary["delivered_k"] == [1000 + sn for sn in range(8)]
    assert drb_summary["state"]["rx_next"] == 8 and drb_summary["state"]["buffered_sdus"] == 0


def test_duplicate_and_out_of_order_k_are_flagged():
    """The RLC cannot tell: the same k under two SNs, or k going down."""
    ue, _ = emulator()
    for sn, k in enumerate([10, 11, 11, 9, 12]):
        ue.handle_frame(radio_frame(DRB12, k, sn), 0)
    drb = ue.summary()["drbs"][0]
    assert drb["delivered_k"] == [10, 11, 11, 9, 12]
    assert drb["duplicate_k"] == [11] and drb["order_violations"] == [[11, 9]]
    assert (drb["distinct_k"], drb["duplicate_k_count"], drb["order_violation_count"]) == (4, 1, 1)


def test_out_of_order_delivery_shows_up_as_order_violations():
    ue, _ = emulator(in_order=False)
    for sn in (0, 2, 1):
        ue.handle_frame(radio_frame(DRB12, sn, sn), 0)
    assert ue.summary()["drbs"][0]["order_violations"] == [[2, 1]]


def test_link_loss_is_seeded_per_downlink_frame_in_arrival_order():
    ue, _ = emulator(loss=0.2, seed=42)
    stream = downlink_stream(42)
    frames = [(DRB18 if i % 2 else DRB12, i) for i in range(200)]
    dropped = {i for i in range(200) if stream.random() < 0.2}
    for i, (drb, k) in enumerate(frames):
        ue.handle_frame(radio_frame(drb, k, i // 2), 0)
    summary = ue.summary()
    assert summary["link"]["downlink_frames"] == 200
    assert summary["link"]["downlink_dropped"] == len(dropped) > 0
    per_drb = {drb["sn_bits"]: drb for drb in summary["drbs"]}
    assert per_drb[18]["link_dropped"] == len({i for i in dropped if i % 2})
    assert per_drb[12]["link_dropped"] == len({i for i in dropped if not i % 2})
    assert summary["totals"]["link_dropped"] == len(dropped)
    # received = everything not dropped, held behind the first gap
    assert summary["totals"]["pdus_received"] == 200 - len(dropped)
    first_loss_12 = min(i for i in dropped if not i % 2)
    assert per_drb[12]["delivered_k"] == list(range(0, first_loss_12, 2))


def test_uplink_loss_drops_status_frames_on_their_own_stream():
    ue, wire = emulator(uplink_loss=0.5, seed=3)
    for sn in range(40):
        ue.handle_frame(radio_frame(DRB12, sn, sn, poll=True), 0)
    drb = ue.summary()["drbs"][0]
    assert drb["status_sent"] == 40
    assert drb["status_frames"] + drb["status_link_dropped"] == 40
    assert 5 < drb["status_link_dropped"] < 35 and len(wire.frames) == drb["status_frames"]
    assert ue.summary()["link"]["downlink_dropped"] == 0


def test_t_status_prohibit_through_the_clock():
    ue, wire = emulator(t_status_prohibit_ms=20)
    ue.handle_frame(radio_frame(DRB12, 0, 0, poll=True), 0)
    ue.handle_frame(radio_frame(DRB12, 1, 1, poll=True), 5)
    ue.on_clock(19)
    assert len(wire.frames) == 1
    ue.on_clock(20)
    assert len(wire.frames) == 2
    assert decode_status(wire.frames[1][18:], 12) == StatusPdu(2)
    ue.on_clock(40)
    assert len(wire.frames) == 2 and not ue._timed


def test_other_frames_are_counted_and_ignored():
    ue, wire = emulator()
    ue.handle_frame(bytes(Ether(dst="ff:ff:ff:ff:ff:ff", type=0x0806) / bytes(30)), 0)
    ue.handle_frame(bytes(Ether(dst=GNB_MAC, type=0x88B5) / b"\x00\x01\x04"), 0)       # ends in the shim
    ue.handle_frame(radio_frame(DRB_UM, 5, 0), 0)
    ue.handle_frame(radio_frame(DRB12, 0, 0), 0)
    bad_flags = bytearray(radio_frame(DRB12, 1, 1))
    bad_flags[17] = 0x03                                   # another SN length, same bearer
    ue.handle_frame(bytes(bad_flags), 0)
    summary = ue.summary()
    assert summary["ignored"] == {"not_bearer": 1, "truncated": 1, "rlc_um": 1}
    assert summary["drbs"][0]["bearer_format"] == 1
    assert summary["drbs"][0]["delivered_k"] == [0] and len(summary["drbs"]) == 1


def test_status_goes_to_a_configured_gnb_mac_and_can_be_padded():
    ue, wire = emulator(gnb_mac="02:00:00:00:01:0a", status_pad_to=60)
    ue.handle_frame(radio_frame(DRB12, 0, 0, poll=True), 0)
    frame = wire.frames[0]
    assert frame[:6] == bytes.fromhex("02000000010a") and len(frame) == 60
    assert frame[18:21] == encode_status(StatusPdu(1), 12) and frame[21:] == bytes(39)


def test_learn_first_sn_starts_rx_next_at_the_first_frame():
    """For runs that attach to a gNB whose SNs did not start at 0."""
    ue, _ = emulator(learn_first_sn=True)
    for sn in range(3000, 3005):
        ue.handle_frame(radio_frame(DRB12, sn, sn), 0)
    drb = ue.summary()["drbs"][0]
    assert drb["delivered_k"] == list(range(3000, 3005)) and drb["state"]["rx_next"] == 3005
    plain, _ = emulator()
    for sn in range(3000, 3005):
        plain.handle_frame(radio_frame(DRB12, sn, sn), 0)
    assert plain.summary()["drbs"][0]["outside_window"] == 5   # RX_Next 0: 3000 is outside


def test_frames_without_a_frame_index_count_as_unrecognized():
    ue, _ = emulator()
    ue.handle_frame(bytes(DownlinkPacket(DRB12, b"\x45" + bytes(30), qfi=QFI).radio_frame(0, 0)), 0)
    drb = ue.summary()["drbs"][0]
    assert drb["delivered"] == 1 and drb["unrecognized_sdus"] == 1 and drb["delivered_k"] == []


def test_summary_without_k_lists():
    ue, _ = emulator(record_k=False)
    ue.handle_frame(radio_frame(DRB12, 4, 0), 0)
    ue.handle_frame(radio_frame(DRB12, 4, 1), 0)
    drb = ue.summary(with_k=False)["drbs"][0]
    assert "delivered_k" not in drb and drb["distinct_k"] == 1 and drb["duplicate_k_count"] == 1


def test_link_arguments_and_counters():
    with pytest.raises(ValueError):
        LossyLink(1.5)
    with pytest.raises(ValueError):
        LossyLink(0.1, uplink_loss=-0.1)
    link = LossyLink(0.01, seed=5)
    drops = sum(link.drop_downlink() for _ in range(100_000))
    assert 800 < drops < 1200 and link.counters()["downlink_dropped"] == drops
    again, stream = LossyLink(0.01, seed=5), random.Random(5)
    assert [again.drop_downlink() for _ in range(1000)] == \
        [stream.random() < 0.01 for _ in range(1000)]
    assert not any(LossyLink(0.0).drop_uplink() for _ in range(100))


def test_per_frame_cost_allows_tens_of_thousands_of_frames_per_second():
    """The hot path only (no socket): 64 DRBs, 1% loss, everything
    eventually in order. Loose bound: the machine is shared."""
    ue, wire = emulator(loss=0.01, seed=1)
    # the headers of each DRB's frame once (scapy), then SN and k patched in
    headers = [radio_frame(generated_drb(i), 0, 0)[:25] for i in range(64)]
    frames = [headers[k % 64][:18] + ((0x80 << 16) | k // 64).to_bytes(3, "big")
              + headers[k % 64][21:] + inner_packet(k) for k in range(32_000)]
    start = time.perf_counter()
    for now_ms, frame in enumerate(frames):
        ue.handle_frame(frame, now_ms // 20)
        if now_ms % 20 == 0:
            ue.on_clock(now_ms // 20)
    rate = len(frames) / (time.perf_counter() - start)
    print(f"UE emulator hot path: {rate:,.0f} frames/s")
    assert rate > 20_000
    totals = ue.summary(with_k=False)["totals"]
    assert totals["pdus_received"] + totals["link_dropped"] == len(frames)
    assert 100 < totals["link_dropped"] < 600 and totals["status_frames"] > 0
    # no retransmissions here: each DRB delivers up to its first loss and holds the rest
    assert totals["delivered"] + totals["buffered_sdus"] == totals["pdus_received"]
    assert totals["distinct_k"] == totals["delivered"] > 0
    assert totals["order_violation_count"] == 0 and totals["duplicate_k_count"] == 0


def test_status_is_trimmed_to_fit_the_mtu_by_default():
    """1,023 lone missing SNs would take 2,049 octets: the STATUS is cut to
    what fits 1,496 (MTU less the shim) and ACK_SN is the first SN left out."""
    ue, wire = emulator()
    header = radio_frame(DRB12, 0, 0)[:23]
    for sn in range(0, 2048, 2):
        ue.handle_frame(header[:18] + bytes([0x80 | sn >> 8, sn & 0xFF]) + header[20:]
                        + inner_packet(sn), 0)
    ue.on_clock(35)                 # RX_Highest_Status 3: NACK 1; restarted, trigger 2047
    ue.on_clock(70)                 # RX_Highest_Status 2047
    assert len(wire.frames) == 2 and len(wire.frames[1]) == 18 + 3 + 746 * 2
    status = decode_status(wire.frames[1][18:], 12)
    assert status == StatusPdu(1 + 2 * 746, tuple(Nack(sn) for sn in range(1, 1 + 2 * 746, 2)))
    unbounded, _ = emulator(status_max_bytes=None)
    unbounded.send = lambda frame: (_ for _ in ()).throw(OSError(90, "Message too long"))
    for sn in range(0, 2048, 2):
        unbounded.handle_frame(header[:18] + bytes([0x80 | sn >> 8, sn & 0xFF]) + header[20:]
                               + inner_packet(sn), 0)
    unbounded.on_clock(35)
    unbounded.on_clock(70)
    assert unbounded.send_errors == 2 and unbounded.summary()["drbs"][0]["status_frames"] == 0


class ScriptedLink(LossyLink):
    """Drops the downlink frames at the given positions (0 = the first)."""

    def __init__(self, drop_positions):
        super().__init__()
        self.drop_positions = set(drop_positions)

    def drop_downlink(self) -> bool:
        self.downlink_frames += 1
        if self.downlink_frames - 1 in self.drop_positions:
            self.downlink_dropped += 1
            return True
        return False


def test_learn_first_sn_learns_even_from_a_frame_the_link_drops():
    """The SN the UE starts at is the gNB's (bearer setup), not the radio's:
    a lost first frame is a gap to NACK, not a new start past it."""
    wire = Wire()
    ue = UeEmulator(wire.send, ScriptedLink({0}), EmulatorConfig(learn_first_sn=True))
    frames = [radio_frame(DRB12, 500 + sn, sn) for sn in range(3000, 3004)]
    for frame in frames:
        ue.handle_frame(frame, 0)
    ue.on_clock(35)
    assert [decode_status(f[18:], 12) for f in wire.frames] == [StatusPdu(3004, (Nack(3000),))]
    ue.handle_frame(frames[0], 40)                    # the retransmission
    assert ue.summary()["drbs"][0]["delivered_k"] == [3500, 3501, 3502, 3503]
