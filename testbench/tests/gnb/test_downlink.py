"""Downlink, N3 -> radio, through the compiled pipeline: every radio frame
(and every BaaS copy) compared byte for byte with the frame the spec gives,
SNs across packets, DRBs and wrap-around, and the per-DRB counters."""
from __future__ import annotations

import pytest

from scapy.layers.l2 import Ether

from testbench.gnb.frames import (DlDrb, assert_frames_equal, DownlinkPacket, SequenceNumbers, baas_clone_session,
                                  expected_downlink, inner_packet, register_write)
from testbench.gnb.layers import BearerShim, Pdcp12, Pdcp18, RlcAmData12, RlcAmData18

pytestmark = pytest.mark.dpdk

# Every RLC mode and SN length combination; the last one at the edges of
# every field the DRB table gives (index 65535, 32-bit TEID, all-ones ids).
DRBS = [
    DlDrb(teid=0x1001, drb_index=1, ue_id=0x0101, lcid=4, rlc_am=True, rlc_sn18=False,
          pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:10:01"),
    DlDrb(teid=0x1002, drb_index=2, ue_id=0x0102, lcid=5, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=True, default_qfi=1, ue_mac="02:00:00:00:10:02"),
    DlDrb(teid=0x1003, drb_index=3, ue_id=0x0103, lcid=6, rlc_am=True, rlc_sn18=False,
          pdcp_sn18=True, default_qfi=5, ue_mac="02:00:00:00:10:03"),
    DlDrb(teid=0x1004, drb_index=4, ue_id=0x0104, lcid=7, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=False, default_qfi=8, ue_mac="02:00:00:00:10:04"),
    DlDrb(teid=0x1005, drb_index=5, ue_id=0x0105, lcid=8, rlc_am=False, rlc_sn18=False,
          pdcp_sn18=False, default_qfi=2, ue_mac="02:00:00:00:10:05"),
    DlDrb(teid=0xFFFFFFFE, drb_index=65535, ue_id=0xFFFF, lcid=0xFF, rlc_am=False,
          rlc_sn18=False, pdcp_sn18=True, default_qfi=63, ue_mac="fe:ff:ff:ff:ff:ff"),
]


def packet_variants(drb: DlDrb, index: int) -> DownlinkPacket:
    """The ways a G-PDU may arrive, cycled through by index: with a PDU
    Session Container (QFI/RQI from it), without one (the DRB's default
    QFI), with S and/or PN but no E, E with no extension, IPv4 options,
    Ethernet padding."""
    inner = inner_packet(index, 40 + (index * 37) % 1400)
    variants = [
        dict(qfi=(index * 11) % 64, rqi=index % 2),
        dict(),
        dict(seq=0x1234 + index),
        dict(npdu=0x5A),
        dict(seq=0xFFFF, npdu=0xFF),
        dict(seq=7, gtp_fields={"next_ex": 0x85}),     # no E: the next type means nothing
        dict(qfi=63, rqi=1, seq=1, npdu=2),
        dict(gtp_fields={"E": 1, "next_ex": 0}),         # E with no extension after all
        dict(qfi=0, ip_options=b"\x01" * 4 * (1 + index % 10)),  # IHL 6..15
        dict(ip_options=b"\x01\x01\x01\x00" * 10),       # IHL 15
        dict(qfi=17, gnb_mac="02:00:00:00:00:1a"),       # another of the gNB's addresses
    ]
    return DownlinkPacket(drb, inner, **variants[index % len(variants)])


def padded_packets() -> list[DownlinkPacket]:
    """Frames under the Ethernet minimum, padded to 60 octets: the padding
    rides along after the inner packet."""
    return [DownlinkPacket(DRBS[0], b"\x45\x00\x00\x04", trailer=bytes(6)),
            DownlinkPacket(DRBS[4], b"\x99", qfi=3, trailer=b"\x00" * 5),
            DownlinkPacket(DRBS[1], b"", trailer=bytes(10))]      # an empty T-PDU


def check_counts(result, packets: list[DownlinkPacket]):
    for drb in {packet.drb for packet in packets}:
        frames = [packet.n3_frame() for packet in packets if packet.drb == drb]
        assert result.counters["dl_drb_counter"][drb.drb_index] == \
            {"packets": len(frames), "bytes": sum(map(len, frames))}, drb


def test_interleaved_drbs_every_format(run_gnb):
    """Several packets per DRB, DRBs interleaved: each DRB counts its own SNs."""
    packets = [packet_variants(drb, round_ * len(DRBS) + position)
               for round_ in range(5) for position, drb in enumerate(DRBS)]
    packets += padded_packets()
    sns = SequenceNumbers()
    expected = expected_downlink(packets, sns)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[drb.table_entry() for drb in DRBS] + [baas_clone_session()])

    assert_frames_equal(result.radio, expected, "radio")
    assert_frames_equal(result.baas, [frame for frame, packet in zip(expected, packets)
                                      if packet.drb.rlc_am], "BaaS")
    assert result.n3 == []
    assert result.dropped_packets() == {}
    check_counts(result, packets)
    for drb in DRBS:
        assert result.registers["pdcp_tx_sn"][drb.drb_index] == sns.pdcp[drb.drb_index]
        assert result.registers["rlc_tx_sn"][drb.drb_index] == sns.rlc.get(drb.drb_index, 0), \
            "a UM DRB must not touch rlc_tx_sn"


def test_without_a_baas_clone_session_no_copy_is_made(run_gnb):
    """A hybrid host runs without clone session 1 (the NIC copies for the
    buffering service): its radio frames are the same, no copy is made, and
    each AM frame's clone request is counted once as clone_no_session."""
    packets = [packet_variants(drb, position) for position, drb in enumerate(DRBS)]
    am_frames = sum(packet.drb.rlc_am for packet in packets)
    assert 0 < am_frames < len(packets)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[drb.table_entry() for drb in DRBS],
                     clones_without_session=am_frames)

    assert_frames_equal(result.radio, expected_downlink(packets, SequenceNumbers()), "radio")
    assert result.baas == []
    assert result.dropped_packets() == {}


def sent_sns(frames: list[bytes], drb: DlDrb) -> list[tuple[int, int | None]]:
    """(PDCP SN, RLC SN) of a DRB's radio frames, read back with the layers."""
    sns = []
    for frame in map(Ether, frames):
        if frame[BearerShim].ue_id == drb.ue_id and frame[BearerShim].lcid == drb.lcid:
            pdcp = frame[Pdcp18 if drb.pdcp_sn18 else Pdcp12].sn
            rlc = frame[RlcAmData18 if drb.rlc_sn18 else RlcAmData12].sn if drb.rlc_am else None
            sns.append((pdcp, rlc))
    return sns


def test_sn_wrap_around(run_gnb):
    """4095 -> 0 for 12-bit SNs, 262143 -> 0 for 18-bit ones, PDCP and RLC
    each on their own length; a UM DRB leaves its rlc_tx_sn cell alone."""
    sns = SequenceNumbers()
    presets = (sns.preset(DRBS[0], pdcp=4093, rlc=4094)          # AM12 / PDCP12
               + sns.preset(DRBS[1], pdcp=262142, rlc=262141)    # AM18 / PDCP18
               + sns.preset(DRBS[2], pdcp=262143, rlc=4095)      # AM12 / PDCP18
               + sns.preset(DRBS[3], pdcp=4095, rlc=262143)      # AM18 / PDCP12
               + sns.preset(DRBS[4], pdcp=4095)                  # UM / PDCP12
               + sns.preset(DRBS[5], pdcp=262143)                # UM / PDCP18
               + [register_write("rlc_tx_sn", DRBS[4].drb_index, 1234)])
    packets = [packet_variants(drb, round_ * len(DRBS) + position)
               for round_ in range(4) for position, drb in enumerate(DRBS)]
    expected = expected_downlink(packets, sns)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[drb.table_entry() for drb in DRBS] + [baas_clone_session()]
                     + presets)

    # the SNs spelt out, independently of the SequenceNumbers model
    assert sent_sns(result.radio, DRBS[0]) == [(4093, 4094), (4094, 4095), (4095, 0), (0, 1)]
    assert sent_sns(result.radio, DRBS[1]) == [(262142, 262141), (262143, 262142),
                                               (0, 262143), (1, 0)]
    assert sent_sns(result.radio, DRBS[2]) == [(262143, 4095), (0, 0), (1, 1), (2, 2)]
    assert sent_sns(result.radio, DRBS[3]) == [(4095, 262143), (0, 0), (1, 1), (2, 2)]
    assert sent_sns(result.radio, DRBS[4]) == [(4095, None), (0, None), (1, None), (2, None)]
    assert sent_sns(result.radio, DRBS[5]) == [(262143, None), (0, None), (1, None), (2, None)]
    assert_frames_equal(result.radio, expected, "radio")
    assert_frames_equal(result.baas, [frame for frame, packet in zip(expected, packets)
                                      if packet.drb.rlc_am], "BaaS")
    assert result.dropped_packets() == {}
    check_counts(result, packets)
    assert result.registers["rlc_tx_sn"][DRBS[4].drb_index] == 1234
    assert result.registers["pdcp_tx_sn"][DRBS[0].drb_index] == 1
    assert result.registers["rlc_tx_sn"][DRBS[1].drb_index] == 1
