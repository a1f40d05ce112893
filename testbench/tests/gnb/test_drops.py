"""Bad traffic through the compiled pipeline: every kind of frame the gNB
must drop, on every port, counted under exactly its reason in drop_counter
(packets and bytes), without consuming SNs or touching the DRB counters;
good frames around and after them are still forwarded byte-exact and the
process stays up."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from testbench.gnb.frames import (BAAS_PORT, GNB_N3_MAC, GTPU_GPDU, GTPU_PORT, N3_PORT,
                                  RADIO_PORT, UPF_MAC, DlDrb, DownlinkPacket, SequenceNumbers,
                                  UlBearer, UplinkPacket, baas_clone_session, expected_downlink,
                                  inner_packet, n3_encapsulate, pdcp_data_header, radio_ethernet,
                                  rlc_data_header)
from testbench.gnb.layers import (SI_FIRST, SI_LAST, SI_MIDDLE, PdcpControl, RlcStatus12,
                                  SdapUl, UplinkBearerShim)

pytestmark = pytest.mark.dpdk

DL_AM = DlDrb(teid=0x3001, drb_index=21, ue_id=0x0301, lcid=4, rlc_am=True, rlc_sn18=True,
              pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:30:01")
DL_UM = DlDrb(teid=0x3002, drb_index=22, ue_id=0x0302, lcid=5, rlc_am=False, rlc_sn18=False,
              pdcp_sn18=True, default_qfi=7, ue_mac="02:00:00:00:30:02")
UL_BEARERS = [
    UlBearer(ue_id=0x0301, lcid=4, drb_index=31, teid=0x4001, rlc_am=True, rlc_sn18=False,
             pdcp_sn18=False),
    UlBearer(ue_id=0x0302, lcid=5, drb_index=32, teid=0x4002, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=True),
    UlBearer(ue_id=0x0303, lcid=6, drb_index=33, teid=0x4003, rlc_am=False, rlc_sn18=False,
             pdcp_sn18=False),
    UlBearer(ue_id=0x0304, lcid=7, drb_index=34, teid=0x4004, rlc_am=False, rlc_sn18=False,
             pdcp_sn18=True),
]
ENTRIES = ([DL_AM.table_entry(), DL_UM.table_entry(), baas_clone_session()]
           + [bearer.table_entry() for bearer in UL_BEARERS])

# Ethernet, IPv4 with 4 octets of options, UDP, GTP-U with its optional octets, container
GTP_HEADERS_END = 14 + 24 + 8 + 12 + 4


def full_downlink_frame() -> bytes:
    """A DL frame with every optional header: IPv4 options, S and PN, container."""
    packet = DownlinkPacket(DL_UM, inner_packet(0, 48), qfi=5, seq=1, npdu=2,
                            ip_options=b"\x01\x01\x01\x00")
    frame = packet.n3_frame()
    assert len(frame) > GTP_HEADERS_END
    return frame


def uplink_header_lengths(bearer: UlBearer) -> int:
    return 14 + 4 + (3 if bearer.rlc_am and bearer.rlc_sn18 else 2 if bearer.rlc_am else 1) \
        + (3 if bearer.pdcp_sn18 else 2) + 1


def ul_frame(bearer: UlBearer, rlc=None, pdcp=None, sdap=None, payload=b"\x45" + bytes(27),
             ue_id=None, lcid=None, flags=None) -> bytes:
    """An uplink frame of a bearer, with any of its headers replaced."""
    shim = UplinkBearerShim(ue_id=bearer.ue_id if ue_id is None else ue_id,
                            lcid=bearer.lcid if lcid is None else lcid,
                            flags=bearer.flags if flags is None else flags)
    rlc = rlc if rlc is not None else rlc_data_header(bearer.rlc_am, bearer.rlc_sn18, 9)
    pdcp = pdcp if pdcp is not None else pdcp_data_header(bearer.pdcp_sn18, 9)
    sdap = sdap if sdap is not None else SdapUl(qfi=1)
    return bytes(radio_ethernet() / shim / rlc / pdcp / sdap / Raw(payload))


def with_gtp_length(frame: bytes, length: int) -> bytes:
    """The frame with its GTP-U length field (IPv4 without options) replaced."""
    offset = 14 + 20 + 8 + 2
    return frame[:offset] + length.to_bytes(2, "big") + frame[offset + 2:]


def n3(gtp, inner=b"\x45" + bytes(39)) -> bytes:
    return n3_encapsulate(gtp / Raw(inner))


def gpdu(**fields) -> GTP_U_Header:
    return GTP_U_Header(**{"teid": DL_UM.teid, "gtp_type": GTPU_GPDU, **fields})


def ethernet_to_gnb() -> Ether:
    return Ether(dst=GNB_N3_MAC, src=UPF_MAC)


def bad_frames() -> dict[str, list[tuple[int, bytes]]]:
    """reason -> [(ingress port, frame)]"""
    good_dl = DownlinkPacket(DL_UM, inner_packet(1, 64)).n3_frame()
    good_ul = UplinkPacket(UL_BEARERS[0], inner_packet(2, 64), qfi=3).radio_frame()
    status = bytes(radio_ethernet() / UplinkBearerShim(ue_id=0x0301, lcid=4, flags=0x01)
                   / RlcStatus12(ack_sn=5))
    full_dl = full_downlink_frame()
    frames = defaultdict(list)

    truncated = frames["TRUNCATED"]
    truncated += [(N3_PORT, full_dl[:length]) for length in range(1, len(full_dl))]
    truncated += [(N3_PORT, with_gtp_length(good_dl, len(good_dl) - 14 - 20 - 8 - 8 + 1)),
                  (N3_PORT, with_gtp_length(good_dl, 0xFFFF))]
    for bearer in UL_BEARERS:
        frame = ul_frame(bearer)
        truncated += [(RADIO_PORT, frame[:length])
                      for length in range(1, uplink_header_lengths(bearer))]
    truncated.append((RADIO_PORT, status[:18]))      # AM shim, no RLC header
    # a parser error comes before the port checks, whichever port
    truncated += [(RADIO_PORT, full_dl[:length]) for length in (13, 20, 40, GTP_HEADERS_END - 1)]
    truncated += [(N3_PORT, good_ul[:17]), (BAAS_PORT, good_dl[:30]), (BAAS_PORT, good_ul[:20])]

    frames["NOT_GTP"] = [(port, frame) for port in (N3_PORT, RADIO_PORT) for frame in [
        bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=UPF_MAC)
              / ARP(psrc="192.0.2.1", pdst="192.0.2.10")),
        bytes(ethernet_to_gnb() / IP(dst="192.0.2.10") / TCP(dport=GTPU_PORT)),
        bytes(ethernet_to_gnb() / IP(dst="192.0.2.10") / ICMP()),
        bytes(ethernet_to_gnb() / IP(dst="192.0.2.10") / UDP(sport=2123, dport=2123) / bytes(12)),
        bytes(ethernet_to_gnb() / IP(dst="192.0.2.10") / UDP(sport=GTPU_PORT, dport=9999)
              / bytes(16)),
        bytes(ethernet_to_gnb() / IPv6() / UDP(sport=GTPU_PORT, dport=GTPU_PORT) / gpdu()),
        bytes(ethernet_to_gnb() / Dot1Q(vlan=5) / IP() / UDP(dport=GTPU_PORT) / gpdu()),
        bytes(Ether(dst=GNB_N3_MAC, src=UPF_MAC, type=0x9000) / bytes(46)),
    ]]
    # IPv4 that is no IPv4 is "not GTP" on the radio side (only N3 expects IPv4)
    frames["NOT_GTP"].append((RADIO_PORT, bytes(ethernet_to_gnb() / IP(ihl=4) / bytes(40))))

    frames["BAD_IPV4"] = [(N3_PORT, bytes(ethernet_to_gnb() / IP(version=version) / UDP(
        dport=GTPU_PORT) / gpdu())) for version in (0, 5, 6, 15)]
    frames["BAD_IPV4"] += [(N3_PORT, bytes(ethernet_to_gnb() / IP(ihl=ihl) / bytes(40)))
                           for ihl in range(5)]

    frames["GTP_UNSUPPORTED"] = [(N3_PORT, frame) for frame in [
        n3(gpdu(version=2)),
        n3(gpdu(version=0)),
        n3(gpdu(PT=0)),
        n3(GTP_U_Header(teid=0, gtp_type=1, S=1, seq=1)),                   # Echo Request
        n3(GTP_U_Header(teid=0, gtp_type=2, S=1, seq=1)),                   # Echo Response
        n3(GTP_U_Header(teid=DL_UM.teid, gtp_type=26, S=1)),                # Error Indication
        n3(gpdu(gtp_type=254), inner=b""),                                  # End Marker
        n3(gpdu(E=1, next_ex=0x40) / bytes([1, 0x08, 0x68, 0])),            # UDP Port extension
        n3(gpdu(E=1, next_ex=0xC0) / bytes([1, 0x12, 0x34, 0])),            # PDCP PDU Number
        n3(gpdu(E=1, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=5)),  # UL PDU type
        n3(gpdu(E=1, next_ex=0x85)
           / GTPPDUSessionContainer(type=0, QFI=5, PPP=1, PPI=2)),          # length 2
        n3(gpdu(E=1, next_ex=0x85) / GTPPDUSessionContainer(type=0, QFI=5, NextExtHdr=0x85)
           / GTPPDUSessionContainer(type=0, QFI=6)),                          # two containers
        n3(gpdu(E=1, next_ex=0x85) / GTPPDUSessionContainer(type=0, QFI=5, NextExtHdr=0x40)
           / bytes([1, 0x08, 0x68, 0])),                                    # container, then more
    ]]

    frames["UNKNOWN_TEID"] = [(N3_PORT, DownlinkPacket(
        DlDrb(teid=teid, drb_index=0, ue_id=0, lcid=0, rlc_am=False, rlc_sn18=False,
              pdcp_sn18=False, default_qfi=0, ue_mac="00:00:00:00:00:00"),
        inner_packet(teid & 3, 50), **variant).n3_frame())
        for teid in (0, 0x3003, 0x3001 ^ 0x80000000, 0xFFFFFFFF)
        for variant in (dict(), dict(qfi=5))]

    segmented = frames["UL_SEGMENTED"]
    for bearer in UL_BEARERS:
        for si in (SI_FIRST, SI_LAST, SI_MIDDLE):
            segment = rlc_data_header(bearer.rlc_am, bearer.rlc_sn18, 77, si=si, so=40)
            segmented.append((RADIO_PORT, bytes(radio_ethernet()
                                                / UplinkBearerShim(ue_id=bearer.ue_id,
                                                                   lcid=bearer.lcid,
                                                                   flags=bearer.flags)
                                                / segment / bytes(30))))

    frames["UL_CONTROL_PDU"] = [(RADIO_PORT, frame) for bearer in UL_BEARERS for frame in [
        # PDCP status report: FMC, no bitmap (TS 38.323 6.2.3.1)
        bytes(radio_ethernet() / UplinkBearerShim(ue_id=bearer.ue_id, lcid=bearer.lcid,
                                                  flags=bearer.flags)
              / rlc_data_header(bearer.rlc_am, bearer.rlc_sn18, 3) / PdcpControl(pdu_type=0)
              / bytes(4)),
        ul_frame(bearer, sdap=SdapUl(dc=0, qfi=1), payload=b""),   # SDAP end-marker
    ]]

    frames["UNKNOWN_BEARER"] = [(RADIO_PORT, frame) for frame in [
        ul_frame(UL_BEARERS[0], ue_id=0x0999),
        ul_frame(UL_BEARERS[0], lcid=5),                      # the UE's other LCID
        ul_frame(UL_BEARERS[1], ue_id=0x0303),                # another UE's LCID
        ul_frame(UL_BEARERS[3], ue_id=0xFFFF, lcid=0xFF),
    ]]

    # the bearer's (UE id, LCID) in formats other than its own: read as the
    # flags say, it would be forwarded misread
    frames["BEARER_FORMAT"] = [(RADIO_PORT, frame) for frame in [
        ul_frame(replace(UL_BEARERS[0], rlc_sn18=True)),           # AM 12 sent as AM 18
        ul_frame(replace(UL_BEARERS[1], pdcp_sn18=False)),         # PDCP 18 sent as 12
        ul_frame(replace(UL_BEARERS[2], rlc_am=True)),             # UM sent as AM
        ul_frame(replace(UL_BEARERS[0], rlc_am=False)),            # AM sent as UM
        ul_frame(UL_BEARERS[3], flags=UL_BEARERS[3].flags | 0x80),  # a reserved flag bit
    ]]

    frames["WRONG_PORT"] = [(N3_PORT, good_ul), (N3_PORT, status), (RADIO_PORT, good_dl),
                            (RADIO_PORT, full_dl)]
    frames["WRONG_PORT"] += [(BAAS_PORT, frame) for frame in [
        good_dl, frames["NOT_GTP"][0][1], frames["GTP_UNSUPPORTED"][0][1]]]
    # on the BaaS port only complete RLC AM data PDUs (retransmissions) pass
    # (test_baas_retx.py has every case)
    frames["BAD_BAAS_FRAME"] = [(BAAS_PORT, status), (BAAS_PORT, ul_frame(UL_BEARERS[2])),
                                (BAAS_PORT, segmented[0][1])]
    return frames


def test_every_drop_reason_counted_and_good_traffic_still_forwarded(run_gnb):
    bad = bad_frames()
    good_dl = [DownlinkPacket(drb, inner_packet(index, 80 + index),
                              qfi=index if index % 2 else None)
               for index, drb in enumerate([DL_AM, DL_UM] * 3)]
    good_ul = [UplinkPacket(bearer, inner_packet(index, 60 + index), qfi=index + 1)
               for index, bearer in enumerate(UL_BEARERS * 2)]
    inputs = {N3_PORT: [], RADIO_PORT: [], BAAS_PORT: []}
    for frames in bad.values():
        for port, frame in frames:
            inputs[port].append(frame)
    # good traffic first, in the middle and after all the bad frames
    for port, good in ((N3_PORT, [p.n3_frame() for p in good_dl]),
                       (RADIO_PORT, [p.radio_frame() for p in good_ul])):
        middle = len(inputs[port]) // 2
        dropped = inputs[port]
        inputs[port] = good[:1] + dropped[:middle] + good[1:3] + dropped[middle:] + good[3:]

    result = run_gnb(n3=inputs[N3_PORT], radio=inputs[RADIO_PORT], baas=inputs[BAAS_PORT],
                     entries=ENTRIES)

    expected_drops = {reason: {"packets": len(frames), "bytes": sum(len(f) for _, f in frames)}
                      for reason, frames in bad.items()}
    assert {reason: value for reason, value in result.drops.items() if value["packets"]} == \
        expected_drops
    expected_radio = expected_downlink(good_dl, SequenceNumbers())
    assert [f.hex() for f in result.radio] == [f.hex() for f in expected_radio], \
        "dropped frames must not consume SNs"
    assert [f.hex() for f in result.baas] == \
        [f.hex() for f, p in zip(expected_radio, good_dl) if p.drb.rlc_am]
    assert [f.hex() for f in result.n3] == [p.n3_frame().hex() for p in good_ul]
    for drb in (DL_AM, DL_UM):
        frames = [p.n3_frame() for p in good_dl if p.drb == drb]
        assert result.counters["dl_drb_counter"][drb.drb_index] == \
            {"packets": len(frames), "bytes": sum(map(len, frames))}
    for bearer in UL_BEARERS:
        frames = [p.radio_frame() for p in good_ul if p.bearer == bearer]
        assert result.counters["ul_drb_counter"][bearer.drb_index] == \
            {"packets": len(frames), "bytes": sum(map(len, frames))}
    assert result.counters["ul_status_counter"][0] == {"packets": 0, "bytes": 0}
