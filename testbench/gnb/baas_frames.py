"""Frames the buffering service (baas/) receives and sends, built with the
project's scapy layers: a target's AMD PDU copies, uplink STATUS PDUs, and
a retransmission's expected bytes (docs/wire-format.md)."""
from __future__ import annotations

from scapy.layers.l2 import Ether
from scapy.packet import Raw

from testbench.gnb.layers import (BearerShim, NackSn12, NackSn18, Pdcp12, Pdcp18, RlcAmData12,
                                  RlcAmData18, RlcStatus12, RlcStatus18)

GNB_MAC = "02:00:00:00:01:01"
DU_MAC = "02:00:00:00:02:02"
SHIM_AM, SHIM_RLC_SN18, SHIM_PDCP_SN18 = 0x01, 0x02, 0x04


def amd_frame(ue_id: int, lcid: int, sn: int, sn_bits: int = 12, poll: bool = False,
              payload: bytes | None = None) -> bytes:
    """A downlink radio frame as the pipeline sends it (and copies to the BaaS)."""
    flags = SHIM_AM | (SHIM_RLC_SN18 | SHIM_PDCP_SN18 if sn_bits == 18 else 0)
    rlc = (RlcAmData18 if sn_bits == 18 else RlcAmData12)(sn=sn, poll=int(poll))
    pdcp = (Pdcp18 if sn_bits == 18 else Pdcp12)(sn=sn)
    body = payload if payload is not None else sn.to_bytes(4, "big") * 10
    return bytes(Ether(dst=DU_MAC, src=GNB_MAC, type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=lcid, flags=flags) / rlc / pdcp / Raw(body))


def status_frame(ue_id: int, lcid: int, ack_sn: int, nacks: list[dict] | None = None,
                 sn_bits: int = 12, **fields) -> bytes:
    """An uplink STATUS PDU; nacks: dicts of NackSn fields (nack_sn, e2,
    so_start, so_end, e3, nack_range); E1 chains are set here."""
    nack_class = NackSn18 if sn_bits == 18 else NackSn12
    items = [nack_class(**n) for n in (nacks or [])]
    for i, item in enumerate(items):
        item.e1 = int(i + 1 < len(items))
    status = (RlcStatus18 if sn_bits == 18 else RlcStatus12)(
        ack_sn=ack_sn, e1=int(bool(items)), nacks=items, **fields)
    flags = SHIM_AM | (SHIM_RLC_SN18 | SHIM_PDCP_SN18 if sn_bits == 18 else 0)
    return bytes(Ether(dst=GNB_MAC, src=DU_MAC, type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=lcid, flags=flags) / status)


def with_poll(frame: bytes, poll: bool) -> bytes:
    """The same frame with the RLC poll bit (first RLC octet, 0x40) as given."""
    first = frame[18] | 0x40 if poll else frame[18] & ~0x40
    return frame[:18] + bytes([first]) + frame[19:]
