"""The RLC AM poll bit (TS 38.322 5.3.3.2) through the compiled pipeline:
per DRB, the PDU that brings PDU_WITHOUT_POLL to pollPDU or
BYTE_WITHOUT_POLL to pollByte carries P = 1 and starts both counts again;
the thresholds come from rlc_poll_config (0: the defaults, 64 PDUs and
125,000 bytes; all ones: that trigger off). Every radio frame and BaaS copy
is compared byte for byte with the frame frames.py builds (its poll bits
from the SequenceNumbers model), the poll positions are also spelt out by
hand, and the counters left in rlc_poll_state are read back."""
from __future__ import annotations

import random

import pytest
from scapy.layers.l2 import Ether

from testbench.gnb.frames import (POLL_INFINITY, DlDrb, DownlinkPacket, SequenceNumbers,
                                  assert_frames_equal, baas_clone_session, expected_downlink,
                                  inner_packet, poll_cell, poll_config_write)
from testbench.gnb.layers import BearerShim, RlcAmData12, RlcAmData18

pytestmark = pytest.mark.dpdk


def drb(index: int, rlc_am=True, rlc_sn18=False, pdcp_sn18=False) -> DlDrb:
    return DlDrb(teid=0x7000 + index, drb_index=index, ue_id=0x0700 + index, lcid=4,
                 rlc_am=rlc_am, rlc_sn18=rlc_sn18, pdcp_sn18=pdcp_sn18, default_qfi=9,
                 ue_mac=f"02:00:00:00:70:{index:02x}")


DEFAULT12 = drb(51)                                        # no config written: the defaults
EVERY5_18 = drb(52, rlc_sn18=True, pdcp_sn18=True)         # pollPDU 5, pollByte default
EVERY3_NO_BYTES = drb(53, pdcp_sn18=True)                  # pollPDU 3, pollByte infinity
NEVER18 = drb(54, rlc_sn18=True)                           # both infinity
UM = drb(55, rlc_am=False, pdcp_sn18=True)                 # no poll bit at all
PDU_DRBS = [DEFAULT12, EVERY5_18, EVERY3_NO_BYTES, NEVER18, UM]


def polls(frames: list[bytes], of: DlDrb) -> list[int]:
    """The poll bit of each of the DRB's radio frames, read back with the layers."""
    return [frame[RlcAmData18 if of.rlc_sn18 else RlcAmData12].poll
            for frame in map(Ether, frames)
            if frame[BearerShim].ue_id == of.ue_id and frame[BearerShim].lcid == of.lcid]


def polled_positions(frames: list[bytes], of: DlDrb) -> list[int]:
    return [position for position, poll in enumerate(polls(frames, of)) if poll]


def check_run(result, packets, expected, sns, drbs):
    assert_frames_equal(result.radio, expected, "radio")
    assert_frames_equal(result.baas, [frame for frame, packet in zip(expected, packets)
                                      if packet.drb.rlc_am], "BaaS")
    assert result.dropped_packets() == {}
    for one in drbs:
        assert result.registers["rlc_poll_state"][one.drb_index] == \
            poll_cell(*sns.poll_state.get(one.drb_index, (0, 0))), one
        assert result.registers["rlc_tx_sn"][one.drb_index] == sns.rlc.get(one.drb_index, 0)


def test_poll_pdu_every_nth_pdu_per_drb(run_gnb):
    """130 PDUs per DRB, DRBs interleaved, small SDUs (the byte trigger
    never comes first): the default DRB polls on its 64th and 128th PDU,
    pollPDU 5 on every 5th, pollPDU 3 with pollByte off on every 3rd,
    infinity never, and the UM DRB has no poll bit. The RLC SN wraps in
    between (the poll counts do not follow the SN)."""
    rounds = 130
    sns = SequenceNumbers()
    config = (sns.configure_poll(EVERY5_18, poll_pdu=5)
              + sns.configure_poll(EVERY3_NO_BYTES, poll_pdu=3, poll_byte=POLL_INFINITY)
              + sns.configure_poll(NEVER18, poll_pdu=POLL_INFINITY, poll_byte=POLL_INFINITY)
              + sns.preset(DEFAULT12, rlc=4050) + sns.preset(EVERY5_18, rlc=262100))
    packets = [DownlinkPacket(one, inner_packet(round_ * 5 + position, 40 + round_ % 60),
                              qfi=round_ % 3 and 7 or None)
               for round_ in range(rounds) for position, one in enumerate(PDU_DRBS)]
    expected = expected_downlink(packets, sns)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[one.table_entry() for one in PDU_DRBS] + [baas_clone_session()]
                     + config)

    check_run(result, packets, expected, sns, PDU_DRBS)
    assert polled_positions(result.radio, DEFAULT12) == [63, 127]
    assert polled_positions(result.radio, EVERY5_18) == list(range(4, rounds, 5))
    assert polled_positions(result.radio, EVERY3_NO_BYTES) == list(range(2, rounds, 3))
    assert polled_positions(result.radio, NEVER18) == []
    assert all(Ether(frame)[BearerShim].flags & 1 or frame[18] == 0 for frame in result.radio), \
        "an RLC UM header is all 0"
    state = result.registers["rlc_poll_state"]
    assert state[DEFAULT12.drb_index] & POLL_INFINITY == 2           # PDUs 129 and 130
    assert state[EVERY5_18.drb_index] & POLL_INFINITY == 0
    assert state[EVERY3_NO_BYTES.drb_index] & POLL_INFINITY == 1
    assert state[NEVER18.drb_index] & POLL_INFINITY == rounds
    assert state[UM.drb_index] == 0, "RLC UM PDUs are not counted"
    assert result.registers["rlc_poll_config"][EVERY5_18.drb_index] == 5
    assert result.registers["rlc_poll_config"][DEFAULT12.drb_index] == 0


BYTES12 = drb(61)                                          # pollByte 300 exactly
BYTES18 = drb(62, rlc_sn18=True, pdcp_sn18=True)           # pollByte 2,000, pollPDU off
VARIED12 = drb(63, pdcp_sn18=True)                         # pollByte 5,000, pollPDU 20
BIG18 = drb(64, rlc_sn18=True)                             # the defaults, jumbo frames


def sized(one: DlDrb, index: int, sdu_length: int, **fields) -> DownlinkPacket:
    """A packet of the DRB whose RLC SDU is exactly sdu_length bytes."""
    headers = (3 if one.pdcp_sn18 else 2) + 1 + len(fields.get("trailer", b""))
    packet = DownlinkPacket(one, bytes((index + i) & 0xFF for i in range(sdu_length - headers)),
                            **fields)
    assert packet.rlc_sdu_length == sdu_length
    return packet


def test_poll_byte_with_varied_sizes(run_gnb):
    """BYTE_WITHOUT_POLL counts the RLC SDU (PDCP and SDAP headers, the
    T-PDU and any Ethernet padding after it), whatever GTP-U headers and
    IPv4 options the G-PDU came with: exact thresholds at 12- and 18-bit
    PDCP SNs, random sizes against pollByte and pollPDU together, and the
    default pollByte reached by 9,000-byte frames before 64 PDUs."""
    sns = SequenceNumbers()
    config = (sns.configure_poll(BYTES12, poll_byte=300)
              + sns.configure_poll(BYTES18, poll_pdu=POLL_INFINITY, poll_byte=2000)
              + sns.configure_poll(VARIED12, poll_pdu=20, poll_byte=5000))
    rng = random.Random(38322)
    variants = [dict(), dict(qfi=5, rqi=1), dict(seq=1), dict(ip_options=b"\x01" * 8),
                dict(qfi=9, seq=3, npdu=4, ip_options=b"\x01" * 40), dict(trailer=bytes(6))]
    packets = []
    # 100-byte SDUs reach 300 on the 3rd PDU (>=), 99-byte ones on the 4th
    packets += [sized(BYTES12, i, 100, **variants[i % len(variants)]) for i in range(6)]
    packets += [sized(BYTES12, i, 99, **variants[i % len(variants)]) for i in range(8)]
    # 1,000-byte SDUs: every 2nd PDU; then 1,996 + 4 (an empty T-PDU) = 2,000; then
    # one SDU beyond 2,000 on its own
    packets += [sized(BYTES18, i, 1000, **variants[i % len(variants)]) for i in range(4)]
    packets += [sized(BYTES18, 9, 1996), sized(BYTES18, 10, 4), sized(BYTES18, 11, 2001)]
    packets += [sized(VARIED12, i, rng.choice([10, 64, 200, 577, 1400, 1500]),
                      **variants[i % len(variants)]) for i in range(60)]
    packets += [sized(BIG18, i, 8900) for i in range(30)]
    rng.shuffle(packets)       # DRBs interleaved; each DRB's own order is what counts
    expected = expected_downlink(packets, sns)
    drbs = [BYTES12, BYTES18, VARIED12, BIG18]

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[one.table_entry() for one in drbs] + [baas_clone_session()]
                     + config)

    check_run(result, packets, expected, sns, drbs)
    # the same, spelt out in each DRB's own order
    order = {one: [packet for packet in packets if packet.drb == one] for one in drbs}
    def byte_polls(sizes, poll_byte):
        positions, total = [], 0
        for position, size in enumerate(sizes):
            total += size
            if total >= poll_byte:
                positions.append(position)
                total = 0
        return positions
    sizes12 = [packet.rlc_sdu_length for packet in order[BYTES12]]
    assert polled_positions(result.radio, BYTES12) == byte_polls(sizes12, 300)
    assert sorted(sizes12) == [99] * 8 + [100] * 6
    sizes18 = [packet.rlc_sdu_length for packet in order[BYTES18]]
    assert polled_positions(result.radio, BYTES18) == byte_polls(sizes18, 2000)
    # 8,900-byte SDUs: 125,000 bytes on the 15th PDU (14 x 8,900 = 124,600)
    assert polled_positions(result.radio, BIG18) == [14, 29]
    assert 1 < len(polled_positions(result.radio, VARIED12)) < 60


def test_saturated_counts_and_config_halves(run_gnb):
    """Counts preset near 2^32 saturate instead of wrapping (both triggers
    off); a finite threshold then polls at once. A config cell with one
    half 0 takes that half's default."""
    off = drb(71)
    finite = drb(72, rlc_sn18=True)
    half = drb(73)                          # pollPDU default (64), pollByte 1,000
    sns = SequenceNumbers()
    config = (sns.configure_poll(off, poll_pdu=POLL_INFINITY, poll_byte=POLL_INFINITY)
              + sns.preset_poll_state(off, POLL_INFINITY - 1, POLL_INFINITY - 150)
              + sns.preset_poll_state(finite, 0xF000_0000, 0)
              + sns.configure_poll(half, poll_byte=1000))
    packets = [sized(one, i, 100) for i in range(12) for one in (off, finite, half)]
    expected = expected_downlink(packets, sns)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets],
                     entries=[one.table_entry() for one in (off, finite, half)]
                     + [baas_clone_session()] + config)

    check_run(result, packets, expected, sns, [off, finite, half])
    assert polled_positions(result.radio, off) == []
    assert result.registers["rlc_poll_state"][off.drb_index] == poll_cell(POLL_INFINITY,
                                                                           POLL_INFINITY)
    assert polled_positions(result.radio, finite) == [0]
    assert polled_positions(result.radio, half) == [9]
    assert result.registers["rlc_poll_config"][half.drb_index] == poll_cell(0, 1000) == \
        poll_config_write(half.drb_index, 0, 1000)["value"]
