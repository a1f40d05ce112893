"""Uplink, radio -> N3, through the compiled pipeline: every G-PDU compared
byte for byte with the frame the spec gives, its lengths and checksum
recomputed independently, STATUS PDUs to the buffering service unchanged,
and the per-bearer counters."""
from __future__ import annotations

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from reference_hashes import csum16
from testbench.gnb.frames import UlBearer, UplinkPacket, inner_packet, radio_ethernet
from testbench.gnb.layers import (NackSn12, NackSn18, RlcStatus12, RlcStatus18,
                                  UplinkBearerShim)

pytestmark = pytest.mark.dpdk

BEARERS = [
    UlBearer(ue_id=0x0201, lcid=4, drb_index=11, teid=0x2001, rlc_am=True, rlc_sn18=False,
             pdcp_sn18=False),
    UlBearer(ue_id=0x0202, lcid=5, drb_index=12, teid=0x2002, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=True, upf_ip="203.0.113.9", upf_mac="02:00:00:00:00:0c"),
    UlBearer(ue_id=0x0203, lcid=4, drb_index=13, teid=0x2003, rlc_am=False, rlc_sn18=False,
             pdcp_sn18=False, gnb_ip="198.51.100.77"),
    UlBearer(ue_id=0x0204, lcid=9, drb_index=14, teid=0x2004, rlc_am=False, rlc_sn18=False,
             pdcp_sn18=True),
    UlBearer(ue_id=0x0201, lcid=5, drb_index=15, teid=0x2005, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=False),    # the first UE's second bearer: (ue_id, lcid) tell them apart
    UlBearer(ue_id=0xFFFF, lcid=0xFF, drb_index=65535, teid=0xFFFFFFFF, rlc_am=True,
             rlc_sn18=False, pdcp_sn18=True, gnb_ip="255.255.255.254",
             upf_ip="255.255.255.255", upf_mac="fe:ff:ff:ff:ff:ff"),
]


def uplink_packets() -> list[UplinkPacket]:
    packets = []
    for index in range(36):
        bearer = BEARERS[index % len(BEARERS)]
        size = [1, 20, 64, 333, 1400, 0][index % 6]
        packets.append(UplinkPacket(bearer, inner_packet(index, size) if size else b"",
                                    qfi=(index * 7) % 64, pdcp_sn=(index * 997) % 4096,
                                    rlc_sn=(index * 331) % 4096,
                                    gnb_mac=f"02:00:00:00:01:{index % 3 + 10:02x}"))
    return packets


def check_independently(frame: bytes, packet: UplinkPacket):
    """The G-PDU's lengths and checksum from first principles, not from the
    expected frame: RFC 791 checksum, UDP and GTP-U lengths (TS 29.281 5.1)."""
    ip = frame[14:34]
    assert csum16(ip) == 0, "IPv4 header checksum"
    inner_length = len(packet.inner)
    assert int.from_bytes(ip[2:4], "big") == 20 + 8 + 8 + 4 + 4 + inner_length
    assert int.from_bytes(frame[38:40], "big") == 8 + 8 + 4 + 4 + inner_length
    assert int.from_bytes(frame[44:46], "big") == 4 + 4 + inner_length
    assert frame[len(frame) - inner_length:] == packet.inner
    # scapy, told to recompute every length and checksum, rebuilds the same bytes
    rebuilt = Ether(frame)
    del rebuilt[IP].len, rebuilt[IP].chksum, rebuilt[UDP].len, rebuilt[GTP_U_Header].length
    del rebuilt[GTPPDUSessionContainer].ExtHdrLen
    rebuilt[UDP].chksum = 0
    assert bytes(rebuilt) == frame


def status_pdus(bearer: UlBearer) -> list[bytes]:
    """STATUS PDUs of an AM bearer: ACK only, NACKs with SO ranges and NACK ranges."""
    if bearer.rlc_sn18:
        status, nack = RlcStatus18, NackSn18
        top = 262143
    else:
        status, nack = RlcStatus12, NackSn12
        top = 4095
    shim = radio_ethernet() / UplinkBearerShim(ue_id=bearer.ue_id, lcid=bearer.lcid,
                                               flags=bearer.flags)
    return [bytes(shim / status(ack_sn=top)),
            bytes(shim / status(ack_sn=17, e1=1, nacks=[
                nack(nack_sn=3, e1=1), nack(nack_sn=5, e1=1, e2=1, so_start=100, so_end=0xFFFF),
                nack(nack_sn=top, e3=1, nack_range=4)]))]


def test_uplink_every_format(run_gnb):
    packets = uplink_packets()
    result = run_gnb(radio=[packet.radio_frame() for packet in packets],
                     entries=[bearer.table_entry() for bearer in BEARERS])

    expected = [packet.n3_frame() for packet in packets]
    assert len(result.n3) == len(expected)
    for position, (frame, packet) in enumerate(zip(result.n3, packets)):
        assert frame.hex() == expected[position].hex(), f"frame {position} differs"
        check_independently(frame, packet)
    assert result.radio == [] and result.baas == []
    assert result.dropped_packets() == {}
    for bearer in BEARERS:
        frames = [packet.radio_frame() for packet in packets if packet.bearer == bearer]
        assert result.counters["ul_drb_counter"][bearer.drb_index] == \
            {"packets": len(frames), "bytes": sum(map(len, frames))}, bearer
        assert result.counters["dl_drb_counter"][bearer.drb_index] == {"packets": 0, "bytes": 0}


def test_status_pdus_to_baas_unchanged(run_gnb):
    """STATUS PDUs go to the buffering service as they came, between data
    PDUs that still go to N3; even for a bearer the gNB does not know."""
    unknown = UlBearer(ue_id=0x7777, lcid=4, drb_index=0, teid=0, rlc_am=True, rlc_sn18=True,
                       pdcp_sn18=False)
    statuses = [frame for bearer in BEARERS + [unknown] if bearer.rlc_am
                for frame in status_pdus(bearer)]
    data = uplink_packets()[:len(statuses)]
    radio = [frame for pair in zip(statuses, (p.radio_frame() for p in data)) for frame in pair]

    result = run_gnb(radio=radio, entries=[bearer.table_entry() for bearer in BEARERS])

    assert [frame.hex() for frame in result.baas] == [frame.hex() for frame in statuses]
    assert [frame.hex() for frame in result.n3] == [p.n3_frame().hex() for p in data]
    assert result.counters["ul_status_counter"][0] == \
        {"packets": len(statuses), "bytes": sum(map(len, statuses))}
    assert result.dropped_packets() == {}
