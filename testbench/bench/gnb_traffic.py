"""Downlink N3 traffic for the gNB steps (paper 001 Fig. 7/8): 128-byte
GTP-U frames with a PDU Session Container, one per TEID, in random order,
so every DRB lookup and sequence-number update touches a different entry."""

from pathlib import Path

from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from testbench.bench.traffic import shuffled_keys_pcap

FRAME_BYTES = 128
FIRST_TEID = 0x10000          # TEID of DRB 0; DRB i has FIRST_TEID + i
GNB_MAC = "02:00:00:00:00:01"
UPF_MAC = "02:00:00:00:00:02"
QFI = 9


def drb_teid(drb: int) -> int:
    return FIRST_TEID + drb


def _template() -> tuple[bytes, slice]:
    tunnel = (Ether(src=UPF_MAC, dst=GNB_MAC) / IP(src="10.200.0.1", dst="10.100.0.1")
              / UDP(sport=2152, dport=2152, chksum=0)
              / GTP_U_Header(teid=0, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=0, QFI=QFI))
    inner = IP(src="8.8.8.8", dst="10.45.0.2") / UDP(sport=53, dport=40000)
    padding = FRAME_BYTES - len(tunnel) - len(inner)
    frame = bytes(tunnel / inner / Raw(b"\x00" * padding))
    assert len(frame) == FRAME_BYTES
    teid_offset = len(Ether() / IP() / UDP()) + 4
    return frame, slice(teid_offset, teid_offset + 4)


def downlink_pcap(directory: Path, n_drbs: int, seed: int = 1) -> Path:
    """DRBs 0..n_drbs-1, one frame each, shuffled."""
    template, teid_bytes = _template()

    def frame_of(drb: int) -> bytes:
        frame = bytearray(template)
        frame[teid_bytes] = drb_teid(drb).to_bytes(4, "big")
        return bytes(frame)
    return shuffled_keys_pcap(directory / f"gnb_downlink_{n_drbs}_seed{seed}.pcap", n_drbs, seed,
                              frame_of)
