"""Retransmissions from the buffering service (TS 38.322 5.3.2): a complete
RLC AM data PDU of a known bearer, in the bearer's formats, arriving on the
BaaS port leaves on the radio port byte for byte as it came (its SNs and
poll bit are the BaaS's), takes no SN and no poll count, makes no copy to
the BaaS and is counted in baas_retx_counter at the bearer's DRB index.
Anything else on the BaaS port is dropped under its reason."""
from __future__ import annotations

from dataclasses import replace

import pytest
from scapy.contrib.gtp import GTP_U_Header
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from testbench.gnb.frames import (GTPU_GPDU, DlDrb, DownlinkPacket, SequenceNumbers,
                                  assert_frames_equal, baas_clone_session, expected_downlink,
                                  inner_packet, n3_encapsulate, pdcp_data_header,
                                  rlc_data_header)
from testbench.gnb.layers import (SHIM_RLC_AM, SI_FIRST, SI_LAST, SI_MIDDLE, BearerShim,
                                  PdcpControl, RlcStatus12, RlcStatus18, SdapDl)
from testbench.gnb.nic_entries import bearer_of

pytestmark = pytest.mark.dpdk

AM12 = DlDrb(teid=0x8001, drb_index=81, ue_id=0x0801, lcid=4, rlc_am=True, rlc_sn18=False,
             pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:80:01")
AM18 = DlDrb(teid=0x8002, drb_index=82, ue_id=0x0802, lcid=5, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=True, default_qfi=3, ue_mac="02:00:00:00:80:02")
AM12_PDCP18 = DlDrb(teid=0x8003, drb_index=83, ue_id=0x0801, lcid=6, rlc_am=True,
                    rlc_sn18=False, pdcp_sn18=True, default_qfi=4, ue_mac="02:00:00:00:80:01")
UM = DlDrb(teid=0x8004, drb_index=84, ue_id=0x0804, lcid=4, rlc_am=False, rlc_sn18=False,
           pdcp_sn18=False, default_qfi=5, ue_mac="02:00:00:00:80:04")
DRBS = [AM12, AM18, AM12_PDCP18, UM]
ENTRIES = [entry for one in DRBS for entry in (one.table_entry(), bearer_of(one).table_entry())]
ENTRIES.append(baas_clone_session())


def retransmission(one: DlDrb, index: int, size: int, pdcp_sn: int, rlc_sn: int,
                   poll: int) -> bytes:
    """A copy the BaaS kept of a downlink PDU, as it sends it back."""
    return DownlinkPacket(one, inner_packet(index, size), qfi=index % 64 or None).radio_frame(
        pdcp_sn, rlc_sn, poll)


def frame(one: DlDrb, rlc, pdcp=None, flags=None, ue_id=None, payload=b"\x45" + bytes(39)):
    """A bearer frame of the DRB with any of its headers replaced."""
    shim = BearerShim(ue_id=one.ue_id if ue_id is None else ue_id, lcid=one.lcid,
                      flags=one.flags if flags is None else flags)
    layers = Ether(dst=one.ue_mac, src="02:00:00:00:02:0b") / shim / rlc
    if pdcp is not None:
        layers = layers / pdcp / SdapDl(qfi=1)
    return bytes(layers / Raw(payload))


def test_retransmissions_forwarded_unchanged(run_gnb):
    """Retransmissions of every AM format (P 0 and 1, any SNs, PDUs of one
    byte to 3,000 bytes, a PDCP control PDU inside) between the N3 traffic
    of the same DRBs: the N3 traffic is numbered and polled as if they were
    not there."""
    retx = [retransmission(one, i, size, (i * 977) % 4096, (i * 331) % 4096, i % 2)
            for i, (one, size) in enumerate((one, size) for size in (1, 60, 1400, 2980)
                                            for one in (AM12, AM18, AM12_PDCP18))]
    retx.append(frame(AM12, rlc_data_header(True, False, 7, poll=1), PdcpControl(pdu_type=0)))
    retx.append(frame(AM18, rlc_data_header(True, True, 262143, reserved=3),
                      pdcp_data_header(True, 1)))      # R bits are the BaaS's
    sns = SequenceNumbers()
    config = sns.configure_poll(AM12, poll_pdu=2) + sns.preset(AM18, pdcp=7, rlc=9)
    packets = [DownlinkPacket(one, inner_packet(i, 80 + i)) for i in range(4) for one in DRBS]
    expected = expected_downlink(packets, sns)

    result = run_gnb(n3=[packet.n3_frame() for packet in packets], baas=retx,
                     entries=ENTRIES + config)

    assert result.dropped_packets() == {}
    radio = {frame.hex() for frame in result.radio}
    assert len(result.radio) == len(expected) + len(retx)
    assert_frames_equal([f for f in result.radio if f not in retx], expected, "radio (N3)")
    assert_frames_equal([f for f in result.radio if f in retx], retx, "radio (BaaS)")
    assert all(f.hex() in radio for f in retx)
    assert_frames_equal(result.baas, [f for f, p in zip(expected, packets) if p.drb.rlc_am],
                        "BaaS")
    for one in DRBS:
        mine = [f for f in retx if Ether(f)[BearerShim].ue_id == one.ue_id
                and Ether(f)[BearerShim].lcid == one.lcid]
        assert result.counters["baas_retx_counter"][one.drb_index] == \
            {"packets": len(mine), "bytes": sum(map(len, mine))}, one
        assert result.counters["ul_drb_counter"][one.drb_index]["packets"] == 0
        assert result.counters["dl_drb_counter"][one.drb_index]["packets"] == 4
        assert result.registers["rlc_tx_sn"][one.drb_index] == sns.rlc.get(one.drb_index, 0)
        assert result.registers["pdcp_tx_sn"][one.drb_index] == sns.pdcp[one.drb_index]
    assert result.registers["rlc_poll_state"][AM12.drb_index] == 0    # polled on the 4th


def bad_retransmissions() -> dict[str, list[bytes]]:
    """reason -> frames arriving on the BaaS port."""
    good12 = retransmission(AM12, 1, 60, 5, 6, 0)
    return {
        "BAD_BAAS_FRAME": [
            frame(AM12, RlcStatus12(ack_sn=5)),                      # a STATUS PDU
            frame(AM18, RlcStatus18(ack_sn=262143, e1=1), payload=bytes(3)),
            DownlinkPacket(UM, inner_packet(2, 70)).radio_frame(3, None),   # RLC UM
            frame(AM12, rlc_data_header(True, False, 4, si=SI_FIRST), payload=bytes(20)),
            frame(AM12, rlc_data_header(True, False, 4, si=SI_MIDDLE, so=8), payload=bytes(20)),
            frame(AM18, rlc_data_header(True, True, 4, si=SI_LAST, so=8), payload=bytes(20)),
            # the AM bearer's (UE id, LCID) as RLC UM: the frame itself is no AMD PDU
            frame(AM12, rlc_data_header(False, False, 0), pdcp_data_header(False, 1),
                  flags=AM12.flags & ~SHIM_RLC_AM),
        ],
        "UNKNOWN_BEARER": [
            frame(AM12, rlc_data_header(True, False, 1), pdcp_data_header(False, 1),
                  ue_id=0x0999),
            frame(replace(AM12, lcid=9), rlc_data_header(True, False, 1),
                  pdcp_data_header(False, 1)),
        ],
        "BEARER_FORMAT": [
            frame(AM12, rlc_data_header(True, True, 1), pdcp_data_header(False, 1),
                  flags=AM12.flags | 0x02),                          # RLC SN 18, not 12
            frame(AM18, rlc_data_header(True, True, 1), pdcp_data_header(False, 1),
                  flags=AM18.flags & ~0x04),                         # PDCP SN 12, not 18
            frame(AM12, rlc_data_header(True, False, 1), pdcp_data_header(False, 1),
                  flags=AM12.flags | 0x80),                          # a reserved flag bit
            frame(UM, rlc_data_header(True, False, 1), pdcp_data_header(False, 1),
                  flags=SHIM_RLC_AM),                                # a UM bearer's as AM
        ],
        "WRONG_PORT": [
            DownlinkPacket(AM12, inner_packet(3, 50)).n3_frame(),    # GTP-U
            n3_encapsulate(GTP_U_Header(teid=0, gtp_type=1, S=1)),   # GTP-U echo
            bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP()),
            bytes(Ether(type=0x86DD) / Raw(b"\x60" + bytes(60))),
        ],
        "TRUNCATED": [good12[:length] for length in (13, 17, 19, 21)]
                     + [frame(AM12, RlcStatus12(ack_sn=5))[:18]],
    }


def test_bad_baas_frames_dropped_by_reason(run_gnb):
    """Every frame on the BaaS port that is no retransmission is dropped
    under its reason (packets and bytes); good retransmissions around them
    still leave, nothing is numbered or counted as a retransmission."""
    bad = bad_retransmissions()
    good = [retransmission(one, i, 100, i, i, 1) for i, one in enumerate([AM12, AM18] * 2)]
    baas = good[:1] + [f for frames in bad.values() for f in frames] + good[1:]

    result = run_gnb(baas=baas, entries=ENTRIES)

    assert {reason: value for reason, value in result.drops.items() if value["packets"]} == \
        {reason: {"packets": len(frames), "bytes": sum(map(len, frames))}
         for reason, frames in bad.items()}
    assert_frames_equal(result.radio, good, "radio")
    assert result.baas == [] and result.n3 == []
    assert result.counters["baas_retx_counter"][AM12.drb_index] == \
        {"packets": 2, "bytes": len(good[0]) + len(good[2])}
    assert result.counters["baas_retx_counter"][UM.drb_index]["packets"] == 0
    for one in DRBS:
        assert result.registers["rlc_tx_sn"][one.drb_index] == 0
        assert result.registers["pdcp_tx_sn"][one.drb_index] == 0
        assert result.registers["rlc_poll_state"][one.drb_index] == 0
    assert result.counters["ul_status_counter"][0]["packets"] == 0
