"""Scapy layers for the radio side of the gNB (docs/wire-format.md draws
them): the bearer shim, RLC (TS 38.322 6.2.2), PDCP (TS 38.323 6.2.2) and
SDAP (TS 37.324 6.2.2). The N3 side uses scapy's own GTP-U layers
(scapy.contrib.gtp: GTP_U_Header, GTPPDUSessionContainer).

The radio headers do not say their own formats (SN lengths, RLC mode): the
bearer shim's flags do, so each layer below the shim asks the shim of its
frame which layer comes next. SDAP's first bit means RDI downlink and D/C
uplink, and nothing in the frame says the direction: `BearerShim` dissects
downlink frames (Ether type 0x88B5 binds to it), `UplinkBearerShim` uplink
ones (`dissect_uplink_radio_frame`).
"""
from __future__ import annotations

from scapy.fields import (BitEnumField, BitField, ByteField, ConditionalField, FlagsField,
                          PacketListField, ShortField)
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_bottom_up, bind_top_down

ETHERTYPE_BEARER = 0x88B5

# Bearer shim flags: the formats of the bearer the frame belongs to.
SHIM_RLC_AM = 0x01
SHIM_RLC_SN18 = 0x02
SHIM_PDCP_SN18 = 0x04

# TS 38.322 6.2.3.4
SI_COMPLETE, SI_FIRST, SI_LAST, SI_MIDDLE = 0, 1, 2, 3
SEGMENTATION_INFO = {SI_COMPLETE: "complete SDU", SI_FIRST: "first segment",
                     SI_LAST: "last segment", SI_MIDDLE: "middle segment"}
DATA_OR_CONTROL = {0: "control", 1: "data"}


def _segment_needs_so(pkt) -> bool:
    """TS 38.322 6.2.2.3/6.2.2.4: an SO follows for every segment but the first."""
    return pkt.si in (SI_LAST, SI_MIDDLE)


def _inner_packet_class(payload: bytes):
    """What an SDU carries: IPv4 or IPv6 by its version nibble, else raw bytes."""
    if payload and payload[0] >> 4 == 4:
        return IP
    if payload and payload[0] >> 4 == 6:
        return IPv6
    return Raw


def _shim_of(pkt) -> "BearerShim | None":
    layer = pkt.underlayer
    while layer is not None and not isinstance(layer, BearerShim):
        layer = layer.underlayer
    return layer


class BearerShim(Packet):
    """Our radio-side framing (not 3GPP): which bearer a frame belongs to
    and its formats, in 4 octets after an Ethernet header of type 0x88B5."""
    name = "Bearer shim"
    fields_desc = [
        ShortField("ue_id", 0),
        ByteField("lcid", 0),
        FlagsField("flags", 0, 8, ["RLC_AM", "RLC_SN18", "PDCP_SN18"]),
    ]

    def sdap_class(self):
        return SdapDl

    def guess_payload_class(self, payload):
        if not payload:
            return Raw
        if self.flags & SHIM_RLC_AM:
            is_data = payload[0] >> 7
            if self.flags & SHIM_RLC_SN18:
                return RlcAmData18 if is_data else RlcStatus18
            return RlcAmData12 if is_data else RlcStatus12
        return RlcUmData


class UplinkBearerShim(BearerShim):
    """The same shim on an uplink frame: its SDAP header is the UL one."""
    name = "Bearer shim (uplink)"

    def sdap_class(self):
        return SdapUl


class _RlcData(Packet):
    """A complete SDU carries a PDCP PDU; a segment carries a piece of one."""

    def guess_payload_class(self, payload):
        shim = _shim_of(self)
        if self.si != SI_COMPLETE or shim is None or not payload:
            return Raw
        if not payload[0] >> 7:
            return PdcpControl
        return Pdcp18 if shim.flags & SHIM_PDCP_SN18 else Pdcp12


class RlcAmData12(_RlcData):
    """TS 38.322 6.2.2.4, AMD PDU with a 12-bit SN."""
    name = "RLC AMD PDU (12-bit SN)"
    fields_desc = [
        BitEnumField("dc", 1, 1, DATA_OR_CONTROL),
        BitField("poll", 0, 1),
        BitEnumField("si", SI_COMPLETE, 2, SEGMENTATION_INFO),
        BitField("sn", 0, 12),
        ConditionalField(ShortField("so", 0), _segment_needs_so),
    ]


class RlcAmData18(_RlcData):
    """TS 38.322 6.2.2.4, AMD PDU with an 18-bit SN."""
    name = "RLC AMD PDU (18-bit SN)"
    fields_desc = [
        BitEnumField("dc", 1, 1, DATA_OR_CONTROL),
        BitField("poll", 0, 1),
        BitEnumField("si", SI_COMPLETE, 2, SEGMENTATION_INFO),
        BitField("reserved", 0, 2),
        BitField("sn", 0, 18),
        ConditionalField(ShortField("so", 0), _segment_needs_so),
    ]


class RlcUmData(_RlcData):
    """TS 38.322 6.2.2.3, UMD PDU: a complete SDU has only SI and R; a
    segment has an SN, here in its 6-bit configuration (the shim does not
    carry the UM SN length; the gNB forwards complete SDUs only)."""
    name = "RLC UMD PDU"
    fields_desc = [
        BitEnumField("si", SI_COMPLETE, 2, SEGMENTATION_INFO),
        ConditionalField(BitField("reserved", 0, 6), lambda pkt: pkt.si == SI_COMPLETE),
        ConditionalField(BitField("sn", 0, 6), lambda pkt: pkt.si != SI_COMPLETE),
        ConditionalField(ShortField("so", 0), _segment_needs_so),
    ]


class _NackSn(Packet):
    """One NACK of a STATUS PDU: its E1 says whether another follows."""

    def extract_padding(self, s):
        return b"", s


def _nack_fields(sn_bits: int, reserved_bits: int):
    return [
        BitField("nack_sn", 0, sn_bits),
        BitField("e1", 0, 1),
        BitField("e2", 0, 1),
        BitField("e3", 0, 1),
        BitField("reserved", 0, reserved_bits),
        ConditionalField(ShortField("so_start", 0), lambda pkt: pkt.e2 == 1),
        ConditionalField(ShortField("so_end", 0), lambda pkt: pkt.e2 == 1),
        ConditionalField(ByteField("nack_range", 0), lambda pkt: pkt.e3 == 1),
    ]


class NackSn12(_NackSn):
    name = "NACK_SN (12-bit)"
    fields_desc = _nack_fields(12, 1)


class NackSn18(_NackSn):
    name = "NACK_SN (18-bit)"
    fields_desc = _nack_fields(18, 3)


def _next_nack(nack_class):
    """The NACK list runs while the E1 before it (ACK_SN's, then each NACK's) is 1."""
    def next_class(pkt, done, current, remaining):
        previous_e1 = current.e1 if current is not None else pkt.e1
        return nack_class if previous_e1 and remaining else None
    return next_class


CONTROL_PDU_TYPES = {0: "STATUS PDU"}


class RlcStatus12(Packet):
    """TS 38.322 6.2.2.5, STATUS PDU with 12-bit SNs."""
    name = "RLC STATUS PDU (12-bit SN)"
    fields_desc = [
        BitEnumField("dc", 0, 1, DATA_OR_CONTROL),
        BitEnumField("cpt", 0, 3, CONTROL_PDU_TYPES),
        BitField("ack_sn", 0, 12),
        BitField("e1", 0, 1),
        BitField("reserved", 0, 7),
        PacketListField("nacks", [], NackSn12, next_cls_cb=_next_nack(NackSn12)),
    ]


class RlcStatus18(Packet):
    """TS 38.322 6.2.2.5, STATUS PDU with 18-bit SNs."""
    name = "RLC STATUS PDU (18-bit SN)"
    fields_desc = [
        BitEnumField("dc", 0, 1, DATA_OR_CONTROL),
        BitEnumField("cpt", 0, 3, CONTROL_PDU_TYPES),
        BitField("ack_sn", 0, 18),
        BitField("e1", 0, 1),
        BitField("reserved", 0, 1),
        PacketListField("nacks", [], NackSn18, next_cls_cb=_next_nack(NackSn18)),
    ]


class _PdcpData(Packet):
    def guess_payload_class(self, payload):
        shim = _shim_of(self)
        return shim.sdap_class() if shim is not None and payload else Raw


class Pdcp12(_PdcpData):
    """TS 38.323 6.2.2.2, data PDU for DRBs with a 12-bit SN (no MAC-I)."""
    name = "PDCP data PDU (12-bit SN)"
    fields_desc = [
        BitEnumField("dc", 1, 1, DATA_OR_CONTROL),
        BitField("reserved", 0, 3),
        BitField("sn", 0, 12),
    ]


class Pdcp18(_PdcpData):
    """TS 38.323 6.2.2.3, data PDU for DRBs with an 18-bit SN (no MAC-I)."""
    name = "PDCP data PDU (18-bit SN)"
    fields_desc = [
        BitEnumField("dc", 1, 1, DATA_OR_CONTROL),
        BitField("reserved", 0, 5),
        BitField("sn", 0, 18),
    ]


class PdcpControl(Packet):
    """TS 38.323 6.2.2.4/6.2.2.5: a control PDU; only its type is decoded."""
    name = "PDCP control PDU"
    fields_desc = [
        BitEnumField("dc", 0, 1, DATA_OR_CONTROL),
        BitEnumField("pdu_type", 0, 3, {0: "PDCP status report",
                                        1: "interspersed ROHC feedback",
                                        2: "EHC feedback"}),
        BitField("reserved", 0, 4),
    ]


class SdapDl(Packet):
    """TS 37.324 6.2.2.2, the downlink SDAP data PDU header."""
    name = "SDAP DL header"
    fields_desc = [
        BitField("rdi", 0, 1),
        BitField("rqi", 0, 1),
        BitField("qfi", 0, 6),
    ]

    def guess_payload_class(self, payload):
        return _inner_packet_class(payload)


class SdapUl(Packet):
    """TS 37.324 6.2.2.3, the uplink SDAP data PDU header; D/C = 0 is the
    end-marker control PDU of 6.2.3."""
    name = "SDAP UL header"
    fields_desc = [
        BitEnumField("dc", 1, 1, DATA_OR_CONTROL),
        BitField("reserved", 0, 1),
        BitField("qfi", 0, 6),
    ]

    def guess_payload_class(self, payload):
        return _inner_packet_class(payload) if self.dc else Raw


# Dissection of type 0x88B5 gives the downlink shim; both build with that type.
bind_bottom_up(Ether, BearerShim, type=ETHERTYPE_BEARER)
bind_top_down(Ether, BearerShim, type=ETHERTYPE_BEARER)
bind_top_down(Ether, UplinkBearerShim, type=ETHERTYPE_BEARER)


def dissect_uplink_radio_frame(frame: bytes) -> Packet:
    """An uplink radio frame (Ethernet / UplinkBearerShim / ...) from bytes."""
    ethernet = Ether(frame[:14])
    if ethernet.type != ETHERTYPE_BEARER or len(frame) < 18:
        return Ether(frame)
    return ethernet / UplinkBearerShim(frame[14:])
