"""Pre-generated traffic for the pcap-driven benchmarks: one 64-byte
UDP/IPv4 frame per table key, in random order, so every lookup goes to a
different entry (no help from a warm cache line per flow)."""

import random
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.data import DLT_EN10MB
from scapy.utils import PcapWriter, checksum

FRAME_BYTES = 64            # the size net_null generates, so both workloads move the same bytes
SOURCE_MAC = "02:00:00:00:00:01"
SOURCE_IP = "10.255.0.1"


def key_mac(key: int) -> str:
    """Destination MAC of the frame that carries `key` (key < 2**32)."""
    return "02:00:" + ":".join(f"{(key >> shift) & 0xFF:02x}" for shift in (24, 16, 8, 0))


def key_ipv4(key: int) -> str:
    """Destination IPv4 address of the frame that carries `key` (key < 2**24)."""
    return f"10.{(key >> 16) & 0xFF}.{(key >> 8) & 0xFF}.{key & 0xFF}"


def _template() -> bytes:
    headers = Ether(src=SOURCE_MAC, dst=key_mac(0)) / IP(src=SOURCE_IP, dst=key_ipv4(0)) \
        / UDP(sport=1024, dport=2152, chksum=0)
    return bytes(headers / Raw(b"\x00" * (FRAME_BYTES - len(headers))))


_TEMPLATE = _template()
_DST_MAC = slice(0, 6)
_IPV4 = slice(14, 34)
_IPV4_CHECKSUM = slice(24, 26)
_IPV4_DST = slice(30, 34)


def key_frame(key: int) -> bytes:
    """Scapy builds one template; the keys are patched into copies of it
    (building 65,536 frames in scapy takes about a minute)."""
    frame = bytearray(_TEMPLATE)
    frame[_DST_MAC] = bytes.fromhex(key_mac(key).replace(":", ""))
    frame[_IPV4_DST] = bytes(int(octet) for octet in key_ipv4(key).split("."))
    frame[_IPV4_CHECKSUM] = b"\x00\x00"
    frame[_IPV4_CHECKSUM] = checksum(bytes(frame[_IPV4])).to_bytes(2, "big")
    return bytes(frame)


def shuffled_keys_pcap(path: Path, n_keys: int, seed: int, frame_of) -> Path:
    """A pcap at `path` with frame_of(key) for keys 0..n_keys-1, each once,
    shuffled; reused when it already exists (the content is deterministic)."""
    if path.exists():
        return path
    keys = list(range(n_keys))
    random.Random(seed).shuffle(keys)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    writer = PcapWriter(str(partial), linktype=DLT_EN10MB, sync=False)
    for key in keys:
        writer.write(frame_of(key))
    writer.close()
    partial.rename(path)
    return path


def distinct_keys_pcap(directory: Path, n_keys: int, seed: int = 1) -> Path:
    return shuffled_keys_pcap(directory / f"distinct_keys_{n_keys}_seed{seed}.pcap", n_keys, seed,
                              key_frame)
