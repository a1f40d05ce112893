"""Frames for the gNB pipeline and what it must make of them, computed from
the behaviour in docs/wire-format.md with the scapy layers (never from the
P4), and the control commands that configure DRBs and bearers.

A test describes a packet (`DownlinkPacket`, `UplinkPacket`) once; the
description gives the frame to send and, with the sequence numbers and the
RLC poll bits the `SequenceNumbers` model hands out, the frame expected on
the other side.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from testbench.gnb.layers import (SHIM_PDCP_SN18, SHIM_RLC_AM, SHIM_RLC_SN18, BearerShim,
                                  Pdcp12, Pdcp18, RlcAmData12, RlcAmData18, RlcUmData, SdapDl,
                                  SdapUl, UplinkBearerShim)

N3_PORT, RADIO_PORT, BAAS_PORT = 0, 1, 2
BAAS_CLONE_SESSION = 1
GTPU_PORT = 2152
GTPU_GPDU = 0xFF
EXT_PDU_SESSION_CONTAINER = 0x85
PDU_TYPE_DL, PDU_TYPE_UL = 0, 1

# drop_counter cells (docs/wire-format.md, "Drop reasons")
DROP_REASONS = ("TRUNCATED", "NOT_GTP", "BAD_IPV4", "GTP_UNSUPPORTED", "UNKNOWN_TEID",
                "UL_SEGMENTED", "UL_CONTROL_PDU", "UNKNOWN_BEARER", "WRONG_PORT",
                "BAD_HOST_FRAME", "BEARER_FORMAT", "BAD_BAAS_FRAME")
DROP_COUNTER_CELLS = 16

# The addresses the test network uses.
GNB_N3_MAC = "02:00:00:00:00:0a"       # the gNB's N3 interface
UPF_MAC = "02:00:00:00:00:0b"
GNB_RADIO_MAC = "02:00:00:00:01:0a"    # the gNB's radio-side interface
DU_MAC = "02:00:00:00:01:0b"           # the DU that sends uplink frames
GNB_N3_IP = "192.0.2.10"
UPF_IP = "192.0.2.1"

SN12_MODULUS = 1 << 12
SN18_MODULUS = 1 << 18

# RLC AM poll triggers (TS 38.322 5.3.3.2; docs/wire-format.md, "RLC poll
# bit"): registers rlc_poll_config (pollPDU in bits 31..0, pollByte in bits
# 63..32; a field of 0 is its default) and rlc_poll_state (PDU_WITHOUT_POLL,
# BYTE_WITHOUT_POLL in the same places).
POLL_PDU_DEFAULT = 64
POLL_BYTE_DEFAULT = 125_000       # kB125, 1 kB = 1000 bytes
POLL_INFINITY = 0xFFFF_FFFF       # a field of all ones: that trigger off


def mac_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


def ip_int(address: str) -> int:
    return int.from_bytes(bytes(int(octet) for octet in address.split(".")), "big")


def shim_flags(rlc_am: bool, rlc_sn18: bool, pdcp_sn18: bool) -> int:
    """The bearer shim flags of a bearer: RLC SN 18 only means something in AM."""
    return ((SHIM_RLC_AM if rlc_am else 0) | (SHIM_RLC_SN18 if rlc_am and rlc_sn18 else 0)
            | (SHIM_PDCP_SN18 if pdcp_sn18 else 0))


def rlc_data_header(rlc_am: bool, rlc_sn18: bool, sn: int, **fields) -> Packet:
    """The RLC data PDU header of a bearer (a complete SDU unless fields say otherwise)."""
    if not rlc_am:
        return RlcUmData(**fields)
    return (RlcAmData18 if rlc_sn18 else RlcAmData12)(sn=sn, **fields)


def pdcp_data_header(pdcp_sn18: bool, sn: int, **fields) -> Packet:
    return (Pdcp18 if pdcp_sn18 else Pdcp12)(sn=sn, **fields)


@dataclass(frozen=True)
class DlDrb:
    """One downlink DRB: the dl_drb entry that maps a TEID to it."""
    teid: int
    drb_index: int
    ue_id: int
    lcid: int
    rlc_am: bool
    rlc_sn18: bool
    pdcp_sn18: bool
    default_qfi: int
    ue_mac: str

    @property
    def flags(self) -> int:
        return shim_flags(self.rlc_am, self.rlc_sn18, self.pdcp_sn18)

    def table_entry(self) -> dict:
        return {"cmd": "table_add", "table": "dl_drb", "match": {"teid": self.teid},
                "action": "set_dl_drb",
                "params": {"drb_index": self.drb_index, "ue_id": self.ue_id, "lcid": self.lcid,
                           "rlc_am": int(self.rlc_am), "rlc_sn18": int(self.rlc_sn18),
                           "pdcp_sn18": int(self.pdcp_sn18), "default_qfi": self.default_qfi,
                           "ue_mac": mac_int(self.ue_mac)}}


@dataclass(frozen=True)
class UlBearer:
    """One uplink bearer: the ul_bearer entry of (ue_id, lcid) and the radio
    formats the UE uses on it."""
    ue_id: int
    lcid: int
    drb_index: int
    teid: int
    rlc_am: bool
    rlc_sn18: bool
    pdcp_sn18: bool
    gnb_ip: str = GNB_N3_IP
    upf_ip: str = UPF_IP
    upf_mac: str = UPF_MAC

    @property
    def flags(self) -> int:
        return shim_flags(self.rlc_am, self.rlc_sn18, self.pdcp_sn18)

    def table_entry(self) -> dict:
        return {"cmd": "table_add", "table": "ul_bearer",
                "match": {"ue_id": self.ue_id, "lcid": self.lcid},
                "action": "set_ul_bearer",
                "params": {"drb_index": self.drb_index, "rlc_am": int(self.rlc_am),
                           "rlc_sn18": int(self.rlc_sn18), "pdcp_sn18": int(self.pdcp_sn18),
                           "teid": self.teid, "gnb_ip": ip_int(self.gnb_ip), "upf_ip": ip_int(self.upf_ip),
                           "upf_mac": mac_int(self.upf_mac)}}


def baas_clone_session() -> dict:
    """Points the RLC AM copies (clone session 1) at the buffering service."""
    return {"cmd": "clone_session_add", "session": BAAS_CLONE_SESSION, "port": BAAS_PORT}


def register_write(register: str, index: int, value: int) -> dict:
    """A JSON integer beyond 53 bits would not survive every JSON reader: hex then."""
    return {"cmd": "register_write", "register": register, "index": index,
            "value": value if value < 1 << 53 else hex(value)}


def poll_cell(pdus: int, octets: int) -> int:
    """A cell of rlc_poll_config (pollPDU, pollByte) or rlc_poll_state
    (PDU_WITHOUT_POLL, BYTE_WITHOUT_POLL): the PDU count in bits 31..0, the
    byte count in bits 63..32."""
    assert 0 <= pdus <= POLL_INFINITY and 0 <= octets <= POLL_INFINITY
    return octets << 32 | pdus


def poll_fields(cell: int) -> tuple[int, int]:
    """(PDU count, byte count) of a poll register cell."""
    return cell & POLL_INFINITY, cell >> 32


def poll_config_write(drb_index: int, poll_pdu: int = 0, poll_byte: int = 0) -> dict:
    """Writes a DRB's poll thresholds (0: the default, POLL_INFINITY: off)."""
    return register_write("rlc_poll_config", drb_index, poll_cell(poll_pdu, poll_byte))


class SequenceNumbers:
    """The transmit SNs a DRB's packets get (TS 38.323 TX_NEXT, TS 38.322
    TX_Next): each packet takes the next one, modulo 2^(SN length); RLC
    SNs only for AM DRBs. And the RLC AM transmitter's poll bit (TS 38.322
    5.3.3.2): each new AMD PDU counts one PDU and its RLC SDU's bytes; the
    PDU that brings either count to its threshold carries P = 1 and starts
    both again from 0. The counts saturate at 2^32 - 1."""

    def __init__(self):
        self.pdcp: dict[int, int] = {}
        self.rlc: dict[int, int] = {}
        self.poll_config: dict[int, tuple[int, int]] = {}    # (pollPDU, pollByte) as written
        self.poll_state: dict[int, tuple[int, int]] = {}     # (PDU_, BYTE_WITHOUT_POLL)

    def preset(self, drb: DlDrb, pdcp: int | None = None, rlc: int | None = None) -> list[dict]:
        """Start a DRB at these SNs; returns the register writes that do it."""
        commands = []
        if pdcp is not None:
            self.pdcp[drb.drb_index] = pdcp
            commands.append(register_write("pdcp_tx_sn", drb.drb_index, pdcp))
        if rlc is not None:
            self.rlc[drb.drb_index] = rlc
            commands.append(register_write("rlc_tx_sn", drb.drb_index, rlc))
        return commands

    def configure_poll(self, drb: DlDrb, poll_pdu: int = 0, poll_byte: int = 0) -> list[dict]:
        """The DRB's poll thresholds (0: the default); returns the register write."""
        self.poll_config[drb.drb_index] = (poll_pdu, poll_byte)
        return [poll_config_write(drb.drb_index, poll_pdu, poll_byte)]

    def preset_poll_state(self, drb: DlDrb, pdus: int, octets: int) -> list[dict]:
        """Start a DRB's poll counters here; returns the register write."""
        self.poll_state[drb.drb_index] = (pdus, octets)
        return [register_write("rlc_poll_state", drb.drb_index, poll_cell(pdus, octets))]

    def thresholds(self, drb: DlDrb) -> tuple[int, int]:
        """(pollPDU, pollByte) in force: a field of 0 is its default."""
        poll_pdu, poll_byte = self.poll_config.get(drb.drb_index, (0, 0))
        return poll_pdu or POLL_PDU_DEFAULT, poll_byte or POLL_BYTE_DEFAULT

    def poll(self, drb: DlDrb, sdu_length: int) -> int:
        """The P bit of the DRB's next new AMD PDU, whose RLC SDU has sdu_length bytes."""
        assert drb.rlc_am
        poll_pdu, poll_byte = self.thresholds(drb)
        pdus, octets = self.poll_state.get(drb.drb_index, (0, 0))
        pdus, octets = min(pdus + 1, POLL_INFINITY), min(octets + sdu_length, POLL_INFINITY)
        if (poll_pdu != POLL_INFINITY and pdus >= poll_pdu) \
                or (poll_byte != POLL_INFINITY and octets >= poll_byte):
            self.poll_state[drb.drb_index] = (0, 0)
            return 1
        self.poll_state[drb.drb_index] = (pdus, octets)
        return 0

    def radio_frame(self, packet: "DownlinkPacket") -> bytes:
        """The packet's radio frame with its DRB's next SNs and poll bit."""
        pdcp, rlc = self.take(packet.drb)
        poll = self.poll(packet.drb, packet.rlc_sdu_length) if rlc is not None else 0
        return packet.radio_frame(pdcp, rlc, poll)

    def take(self, drb: DlDrb) -> tuple[int, int | None]:
        pdcp = self.pdcp.get(drb.drb_index, 0)
        self.pdcp[drb.drb_index] = (pdcp + 1) % (SN18_MODULUS if drb.pdcp_sn18 else SN12_MODULUS)
        if not drb.rlc_am:
            return pdcp, None
        rlc = self.rlc.get(drb.drb_index, 0)
        self.rlc[drb.drb_index] = (rlc + 1) % (SN18_MODULUS if drb.rlc_sn18 else SN12_MODULUS)
        return pdcp, rlc


@dataclass
class DownlinkPacket:
    """A G-PDU for a DRB as the UPF sends it on N3.

    qfi set: the GTP-U header carries E and a DL PDU Session Container with
    qfi and rqi; seq / npdu set: S / PN and the optional octets (also when
    E is not set); ip_options: IPv4 options (a multiple of 4 octets);
    trailer: bytes after the G-PDU that the GTP length does not cover
    (Ethernet padding).
    """
    drb: DlDrb
    inner: bytes
    qfi: int | None = None
    rqi: int = 0
    seq: int | None = None
    npdu: int | None = None
    ip_options: bytes = b""
    trailer: bytes = b""
    gnb_mac: str = GNB_N3_MAC     # the address the UPF sends to; the gNB answers from it
    ip_id: int = 0x4242           # the outer IPv4 Identification (nic.p4's marker mode)
    gtp_fields: dict = field(default_factory=dict)   # overrides, for malformed frames

    def gtp_layers(self) -> Packet:
        flags = {"E": int(self.qfi is not None), "S": int(self.seq is not None),
                 "PN": int(self.npdu is not None)}
        gtp = GTP_U_Header(teid=self.drb.teid, gtp_type=GTPU_GPDU, **flags,
                           seq=self.seq or 0, npdu=self.npdu or 0,
                           next_ex=EXT_PDU_SESSION_CONTAINER if self.qfi is not None else 0)
        for name, value in self.gtp_fields.items():
            setattr(gtp, name, value)
        if self.qfi is None:
            return gtp
        return gtp / GTPPDUSessionContainer(type=PDU_TYPE_DL, QFI=self.qfi, RQI=self.rqi,
                                            NextExtHdr=0)

    def n3_frame(self) -> bytes:
        return n3_encapsulate(self.gtp_layers() / Raw(self.inner), self.ip_options,
                              self.gnb_mac, self.ip_id) + self.trailer

    @property
    def rlc_sdu_length(self) -> int:
        """The RLC SDU of its radio frame (the PDCP PDU): PDCP and SDAP
        headers, the inner packet and the trailer, which rides along."""
        return (3 if self.drb.pdcp_sn18 else 2) + 1 + len(self.inner) + len(self.trailer)

    def radio_frame(self, pdcp_sn: int, rlc_sn: int | None, poll: int = 0) -> bytes:
        """What the gNB sends the UE: the inner packet (and any trailer)
        under SDAP, PDCP and RLC headers with these SNs and RLC AM poll bit."""
        drb = self.drb
        qfi, rqi = (self.qfi, self.rqi) if self.qfi is not None else (drb.default_qfi, 0)
        rlc_fields = {"poll": poll} if drb.rlc_am else {}
        assert drb.rlc_am or not poll, "RLC UM has no poll bit"
        frame = (Ether(dst=drb.ue_mac, src=self.gnb_mac)
                 / BearerShim(ue_id=drb.ue_id, lcid=drb.lcid, flags=drb.flags)
                 / rlc_data_header(drb.rlc_am, drb.rlc_sn18, rlc_sn or 0, **rlc_fields)
                 / pdcp_data_header(drb.pdcp_sn18, pdcp_sn)
                 / SdapDl(rdi=0, rqi=rqi, qfi=qfi) / Raw(self.inner + self.trailer))
        return bytes(frame)


def n3_encapsulate(gtp: Packet, ip_options: bytes = b"", gnb_mac: str = GNB_N3_MAC,
                   ip_id: int = 0x4242) -> bytes:
    """A GTP-U message as the UPF sends it to the gNB's N3 address."""
    frame = (Ether(dst=gnb_mac, src=UPF_MAC)
             / IP(src=UPF_IP, dst=GNB_N3_IP, ihl=5 + len(ip_options) // 4, id=ip_id,
                  options=ip_options)
             / UDP(sport=GTPU_PORT, dport=GTPU_PORT) / gtp)
    return bytes(frame)


def expected_downlink(packets: list[DownlinkPacket], sns: SequenceNumbers) -> list[bytes]:
    """The radio frames of these packets, in order, taking SNs and poll
    bits from sns."""
    return [sns.radio_frame(packet) for packet in packets]


@dataclass
class UplinkPacket:
    """A complete SDU from a UE on a bearer, as the DU sends it."""
    bearer: UlBearer
    inner: bytes
    qfi: int
    pdcp_sn: int = 0
    rlc_sn: int = 0
    ue_mac: str = DU_MAC
    gnb_mac: str = GNB_RADIO_MAC  # the address the DU sends to; the gNB answers from it

    def radio_frame(self) -> bytes:
        bearer = self.bearer
        frame = (Ether(dst=self.gnb_mac, src=self.ue_mac)
                 / UplinkBearerShim(ue_id=bearer.ue_id, lcid=bearer.lcid, flags=bearer.flags)
                 / rlc_data_header(bearer.rlc_am, bearer.rlc_sn18, self.rlc_sn)
                 / pdcp_data_header(bearer.pdcp_sn18, self.pdcp_sn)
                 / SdapUl(dc=1, qfi=self.qfi) / Raw(self.inner))
        return bytes(frame)

    def n3_frame(self) -> bytes:
        """The G-PDU towards the UPF: scapy computes the lengths and the
        IPv4 checksum; UDP checksum 0 (TS 29.281 4.4.2.3 allows it on IPv4)."""
        bearer = self.bearer
        frame = (Ether(dst=bearer.upf_mac, src=self.gnb_mac)
                 / IP(version=4, ihl=5, tos=0, id=0, flags=0, frag=0, ttl=64, proto=17,
                      src=bearer.gnb_ip, dst=bearer.upf_ip)
                 / UDP(sport=GTPU_PORT, dport=GTPU_PORT, chksum=0)
                 / GTP_U_Header(E=1, S=0, PN=0, gtp_type=GTPU_GPDU, teid=bearer.teid,
                                seq=0, npdu=0, next_ex=EXT_PDU_SESSION_CONTAINER)
                 / GTPPDUSessionContainer(type=PDU_TYPE_UL, QFI=self.qfi, NextExtHdr=0)
                 / Raw(self.inner))
        return bytes(frame)


def radio_ethernet(ue_mac: str = DU_MAC) -> Ether:
    """The Ethernet header of an uplink frame, for hand-made radio frames."""
    return Ether(dst=GNB_RADIO_MAC, src=ue_mac, type=0x88B5)


def inner_packet(index: int, size: int) -> bytes:
    """A UE's packet of about `size` octets, different for each index:
    IPv4/UDP, IPv4/TCP, IPv6/UDP, or bytes that are no IP at all (the gNB
    must carry any T-PDU unchanged)."""
    payload = bytes((index * 7 + i) & 0xFF for i in range(max(size - 48, 0)))
    kind = index % 4
    if kind == 0:
        return bytes(IP(src="10.45.0.2", dst="198.51.100.7", id=index) / UDP(sport=40000 + index,
                                                                           dport=443) / payload)
    if kind == 1:
        return bytes(IP(src="10.45.0.3", dst="198.51.100.8", id=index)
                     / TCP(sport=50000 + index, dport=80, seq=index) / payload)
    if kind == 2:
        return bytes(IPv6(src="2001:db8::2", dst="2001:db8:1::7")
                     / UDP(sport=5000 + index, dport=53) / payload)
    return bytes(((index + i) * 13) & 0xFF for i in range(size))


def assert_frames_equal(actual: list[bytes], expected: list[bytes], port: str):
    """Frame by frame, in order, bytes compared (as hex, so a failure shows
    where they differ)."""
    assert len(actual) == len(expected), \
        f"{len(actual)} frames on the {port} port, expected {len(expected)}"
    for position, (got, want) in enumerate(zip(actual, expected)):
        assert got.hex() == want.hex(), f"{port} frame {position} differs"
