"""Frames longer than one mbuf segment (2,048 bytes of data room): net_pcap
hands them over as chains of mbufs, and every part of the pipeline (parser,
deparser, the shared and the copied BaaS clone, tx) must process them byte
for byte, up to 9,000-byte jumbo frames, on both builds.

The regression: RLC AM frames of 3,000 bytes are sent twice (to the radio
and, as a shared clone, to the buffering service); the clone's second
reference was taken on the first segment only, so the first transmission
freed the later segments under the second, the pool held them twice, and
net_pcap's rx later hung inside a corrupted chain (issue 12, defect 1)."""
from __future__ import annotations

import pytest
from testbench.gnb.frames import (DlDrb, DownlinkPacket, SequenceNumbers, UlBearer, UplinkPacket,
                                  assert_frames_equal, baas_clone_session, expected_downlink,
                                  inner_packet)

pytestmark = pytest.mark.dpdk

AM12 = DlDrb(teid=0x5001, drb_index=41, ue_id=0x0501, lcid=4, rlc_am=True, rlc_sn18=False,
             pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:50:01")
AM18 = DlDrb(teid=0x5002, drb_index=42, ue_id=0x0502, lcid=5, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=True, default_qfi=3, ue_mac="02:00:00:00:50:02")
UM = DlDrb(teid=0x5003, drb_index=43, ue_id=0x0503, lcid=6, rlc_am=False, rlc_sn18=False,
           pdcp_sn18=True, default_qfi=5, ue_mac="02:00:00:00:50:03")
BEARER = UlBearer(ue_id=0x0601, lcid=4, drb_index=44, teid=0x6001, rlc_am=True, rlc_sn18=False,
                  pdcp_sn18=False)
ENTRIES = [AM12.table_entry(), AM18.table_entry(), UM.table_entry(), BEARER.table_entry(),
           baas_clone_session()]


def inner_of_length(index: int, length: int) -> bytes:
    """inner_packet() of exactly `length` bytes (its size is approximate)."""
    inner = inner_packet(index, length)
    inner = inner_packet(index, 2 * length - len(inner))
    assert len(inner) == length
    return inner


def downlink_of_length(drb: DlDrb, index: int, frame_length: int) -> DownlinkPacket:
    """A G-PDU whose N3 frame is exactly `frame_length` bytes."""
    headers = len(DownlinkPacket(drb, b"", qfi=index % 64).n3_frame())
    packet = DownlinkPacket(drb, inner_of_length(index, frame_length - headers), qfi=index % 64)
    assert len(packet.n3_frame()) == frame_length
    return packet


def test_three_thousand_byte_am_frames_then_drops_do_not_hang(run_gnb):
    """The reported sequence: 40 RLC AM G-PDUs of 3,000 bytes, then 100
    frames of 3,000 bytes that are dropped (unknown TEID)."""
    packets = [downlink_of_length((AM12, AM18)[i % 2], i, 3000) for i in range(40)]
    unknown = DlDrb(teid=0x5FFF, drb_index=0, ue_id=0, lcid=0, rlc_am=True, rlc_sn18=False,
                    pdcp_sn18=False, default_qfi=1, ue_mac="02:00:00:00:5f:ff")
    dropped = [downlink_of_length(unknown, i, 3000).n3_frame() for i in range(100)]

    result = run_gnb(n3=[packet.n3_frame() for packet in packets] + dropped, entries=ENTRIES)

    expected = expected_downlink(packets, SequenceNumbers())
    assert_frames_equal(result.radio, expected, "radio")
    assert_frames_equal(result.baas, expected, "BaaS")
    assert result.dropped_packets() == {"UNKNOWN_TEID": 100}


# 2,049: one byte into a second segment (net_pcap fills 2,048 bytes of data room each)
@pytest.mark.parametrize("frame_length", [2049, 4000, 9000])
def test_jumbo_frames_both_directions_byte_exact(run_gnb, frame_length):
    """AM (shared clone to the BaaS) and UM downlink frames and uplink
    frames of one to five segments, interleaved with short ones."""
    lengths = [frame_length, 128, frame_length - 1, frame_length]
    packets = [downlink_of_length(drb, i, length)
               for i, (drb, length) in enumerate((drb, length) for length in lengths
                                                 for drb in (AM12, AM18, UM))]
    uplink = [UplinkPacket(BEARER, inner_of_length(i, frame_length - 14 - 4 - 2 - 2 - 1),
                           qfi=7, pdcp_sn=i, rlc_sn=i) for i in range(3)]
    assert len(uplink[0].radio_frame()) == frame_length

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     radio=[packet.radio_frame() for packet in uplink], entries=ENTRIES)

    expected = expected_downlink(packets, SequenceNumbers())
    assert_frames_equal(result.radio, expected, "radio")
    assert_frames_equal(result.baas, [frame for frame, packet in zip(expected, packets)
                                      if packet.drb.rlc_am], "BaaS")
    assert_frames_equal(result.n3, [packet.n3_frame() for packet in uplink], "N3")
    assert result.dropped_packets() == {}
