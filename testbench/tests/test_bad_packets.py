"""Truncated and garbage frames through the compiled router (net_pcap
ports): each is dropped or forwarded as v1model says, parser errors are
counted, nothing crashes, and good packets after them are forwarded."""
import random
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from reference_hashes import csum16

ROUTER = Path(__file__).resolve().parents[2] / "t4p4s" / "examples" / "basic_router.p4"
ROUTES = [{"cmd": "table_add", "table": "RouterIngress.ipv4_lpm",
           "match": {"hdr.ipv4.dstAddr": {"value": "0x0a000000", "prefix_len": 8}},
           "action": "RouterIngress.ipv4_forward",
           "params": {"dstAddr": "0x00000000000a", "port": 1}}]


def good_packet(index: int) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02")
                 / IP(src="192.168.1.1", dst=f"10.0.0.{index}", ttl=64, id=index)
                 / UDP(sport=1000 + index, dport=2152) / b"payload")


def routed(frame: bytes) -> bytes:
    """What the router makes of a routable frame, computed with scapy."""
    packet = Ether(frame)
    packet.src, packet.dst = packet.dst, "00:00:00:00:00:0a"
    packet[IP].ttl -= 1
    del packet[IP].chksum
    return bytes(packet)[:len(frame)]


def random_frames(rng: random.Random):
    """(frame, parser error or None) for frames the router must drop."""
    frames = [(rng.randbytes(n), "PacketTooShort") for n in range(1, 14)]
    ethernet = bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02", type=0x0800))
    frames.append((ethernet, "PacketTooShort"))                       # IPv4 missing
    frames.append((good_packet(1)[:14 + 10], "PacketTooShort"))       # IPv4 cut at 10 bytes
    for _ in range(20):                                               # not IPv4
        frame = bytearray(rng.randbytes(rng.randrange(14, 200)))
        frame[12:14] = (0x88b6).to_bytes(2, "big")
        frames.append((bytes(frame), None))
    for _ in range(20):                                               # IPv4, garbage header
        frame = bytearray(rng.randbytes(rng.randrange(34, 200)))
        frame[12:14] = (0x0800).to_bytes(2, "big")
        assert csum16(bytes(frame[14:34])) != 0, "the seed made a valid checksum"
        frames.append((bytes(frame), None))
    return frames


@pytest.mark.dpdk
def test_bad_frames_dropped_and_counted_good_ones_forwarded(compiled, pcap_runtime):
    rng = random.Random(20240607)
    bad = random_frames(rng)
    # IPv4 header intact but the UDP header cut: the router parses no UDP, so
    # v1model forwards it (routed, TTL - 1)
    truncated_udp = good_packet(2)[:14 + 20 + 4]
    good = [good_packet(3), truncated_udp, good_packet(4)]
    run = pcap_runtime(compiled(ROUTER), [[f for f, _ in bad] + good, []], entries=ROUTES)
    stats = run.wait_received()
    assert run.request({"cmd": "ping"})["ok"], "runtime stopped answering"
    assert run.runtime.alive()

    assert stats["ports"][0]["rx"] == len(bad) + len(good)
    too_short = sum(1 for _, error in bad if error == "PacketTooShort")
    assert stats["parser_errors"].get("PacketTooShort") == too_short, stats["parser_errors"]
    assert stats["drops"]["pipeline"] == len(bad), stats["drops"]

    outputs = run.stop()
    assert run.exit_status == 0, run.runtime.log_tail()
    assert outputs[0] == [], "nothing may go back out of the ingress port"
    assert [f.hex() for f in outputs[1]] == [routed(f).hex() for f in good]


@pytest.mark.dpdk
def test_every_length_of_a_good_packet(compiled, pcap_runtime):
    """A good packet cut at every length: short ones are parser errors and
    drops, the complete IPv4 header onwards is routed."""
    frame = good_packet(5)
    cuts = [frame[:n] for n in range(1, len(frame) + 1)]
    run = pcap_runtime(compiled(ROUTER), [cuts, []], entries=ROUTES)
    stats = run.wait_received()
    assert stats["parser_errors"].get("PacketTooShort") == 14 + 20 - 1
    outputs = run.stop()
    assert run.exit_status == 0
    assert [f.hex() for f in outputs[1]] == [routed(c).hex() for c in cuts[33:]]
