"""Reading the pcaps a runtime's net_pcap tx writes, fast enough for the
hundreds of thousands of frames a second of traffic leaves."""
from __future__ import annotations

from pathlib import Path


def read_pcap_frames(path: Path) -> list[bytes]:
    """Frames of a little-endian pcap (micro- or nanosecond); scapy's reader
    is too slow for the hundred thousand frames an rx replay writes in a blink."""
    data = path.read_bytes()
    assert data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"), f"{path} is not a pcap"
    frames, offset = [], 24
    while offset < len(data):
        caplen = int.from_bytes(data[offset + 8:offset + 12], "little")
        frames.append(data[offset + 16:offset + 16 + caplen])
        offset += 16 + caplen
    return frames
