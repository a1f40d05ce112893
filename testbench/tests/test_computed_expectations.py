"""STF runs whose expected packets are computed here, independently of the
compiler: hash values from reference_hashes.py, IPv4 checksums by scapy."""
import random
from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from reference_hashes import crc16, crc32, csum16, identity, v1model_hash
from t4p4s.stf.parser import parse_stf_text

PROGRAMS = Path(__file__).resolve().parents[1] / "p4" / "t4p4s"
DST, SRC = "000000000001", "000000000002"


def data_frame(f1, f2, h1, h2, b1, b2, dst=DST, src=SRC) -> str:
    return f"{dst}{src}88b5{f1:08x}{f2:08x}{h1:04x}{h2:04x}{b1:02x}{b2:02x}"


@pytest.mark.dpdk
def test_hash_algorithms_on_random_inputs(run_stf):
    rng = random.Random(7)
    lines = []
    for _ in range(16):
        f1, h1, b1, b2 = rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(8), rng.getrandbits(8)
        key = f1.to_bytes(4, "big") + h1.to_bytes(2, "big")
        expected = data_frame(f1, crc32(key), v1model_hash(crc16, 5, key, 1000), crc16(key), b1, b2,
                              src=f"{identity(bytes([h1 >> 8, h1 & 0xff, b1, b2])):012x}")
        lines += [f"packet 0 {data_frame(f1, 0, h1, 0, b1, b2)}", f"expect 1 {expected} $"]
    outcome = run_stf(PROGRAMS / "hash.p4", parse_stf_text("\n".join(lines), "hash(random)"))
    if not outcome.passed:
        pytest.fail("\n".join(outcome.failures), pytrace=False)


@pytest.mark.dpdk
def test_ipv4_checksum_rewritten_as_scapy_computes_it(run_stf):
    rng = random.Random(11)
    lines = []
    for index in range(16):
        packet = (Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02")
                  / IP(src=f"10.{index}.{rng.randrange(256)}.1", dst="192.0.2.7",
                       ttl=rng.randrange(1, 256), tos=rng.randrange(256), id=rng.getrandbits(16),
                       proto=rng.randrange(256), flags=rng.choice(["", "DF"]))
                  / bytes(rng.randrange(0, 40)))
        received = bytes(packet)
        packet[IP].ttl -= 1
        packet[IP].tos = 0xb8
        del packet[IP].chksum
        expected = Ether(bytes(packet))
        assert csum16(bytes(expected[IP])[:20]) == 0, "scapy gave a bad checksum"
        lines += [f"packet 0 {received.hex()}", f"expect 1 {bytes(expected).hex()} $"]
    outcome = run_stf(PROGRAMS / "checksum.p4", parse_stf_text("\n".join(lines), "checksum(random)"))
    if not outcome.passed:
        pytest.fail("\n".join(outcome.failures), pytrace=False)
