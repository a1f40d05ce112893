"""The v1model hash algorithms as bmv2 defines them, written from their
definitions (not from any implementation under test), for expected values
in the tests.

crc32: reflected CRC-32, polynomial 0x04C11DB7, init and final xor
0xFFFFFFFF (the Ethernet/zlib CRC). crc16: reflected CRC-16, polynomial
0x8005, init 0, no final xor (CRC-16/ARC). identity: the data bits as a
number. csum16: RFC 1071 ones' complement sum, complemented.
"""
from __future__ import annotations


def _reflected_crc(data: bytes, width: int, reflected_poly: int, init: int, xorout: int) -> int:
    crc = init
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ reflected_poly if crc & 1 else crc >> 1
    return (crc ^ xorout) & ((1 << width) - 1)


def crc32(data: bytes) -> int:
    return _reflected_crc(data, 32, 0xEDB88320, 0xFFFFFFFF, 0xFFFFFFFF)


def crc16(data: bytes) -> int:
    return _reflected_crc(data, 16, 0xA001, 0x0000, 0x0000)


def identity(data: bytes) -> int:
    return int.from_bytes(data, "big")


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def v1model_hash(algorithm, base: int, data: bytes, max_value: int) -> int:
    """v1model hash(): base + (h % max)."""
    return base + algorithm(data) % max_value
