"""Headers stay in the packet (t4p4s/backend/c/headers.py): every way the
emitted layout can differ from the parsed one, through the real executable
on net_pcap, against a Python model of the program written independently."""
from __future__ import annotations

import re
import struct

import pytest

from backend_util import PRELUDE, c_of, gcc_syntax_check

PROGRAM = PRELUDE + """
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> op; bit<8> x; bit<8> next; bit<8> pad; }
header cap_t { bit<32> v; }
struct H { cap_t cap; eth_t eth; tag_t a; tag_t b; }
struct M { }

parser P(packet_in p, out H hdr, inout M meta, inout standard_metadata_t sm) {
    state start {
        p.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x1234: parse_a; default: accept; }
    }
    state parse_a {
        p.extract(hdr.a);
        transition select(hdr.a.next) { 1: parse_b; default: accept; }
    }
    state parse_b { p.extract(hdr.b); transition accept; }
}
control V(inout H hdr, inout M meta) { apply { } }
control I(inout H hdr, inout M meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.eth.src = 0x0000000000ee;
        if (hdr.a.isValid()) {
            if (hdr.a.op == 1) {
                hdr.a.setInvalid();
            } else if (hdr.a.op == 3) {
                hdr.cap.setValid();
                hdr.cap.v = 0xcafef00d;
            } else if (hdr.a.op == 4) {
                hdr.b = hdr.a;
                hdr.a.x = 0x44;
            } else if (hdr.a.op == 6) {
                hdr.eth.setInvalid();
            }
        }
    }
}
control E(inout H hdr, inout M meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0 && hdr.a.isValid() && hdr.a.op == 5) {
            hdr.a.x = 0x55;
            clone(CloneType.E2E, 32w7);
        } else if (sm.instance_type == 2) {
            hdr.a.op = 0x66;
        }
    }
}
control C(inout H hdr, inout M meta) { apply { } }
control D(packet_out p, in H hdr) {
    apply { p.emit(hdr.cap); p.emit(hdr.eth); p.emit(hdr.b); p.emit(hdr.a); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

# Every kind of header copy: parser locals, struct and stack assignment,
# control locals, directional action arguments, pushes and pops, lists.
COPIES = PRELUDE + """
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> op; bit<8> x; }
struct inner_t { eth_t e; tag_t t; }
struct H { eth_t eth; tag_t[3] tags; inner_t inner; }
struct M { bit<32> m; }
parser P(packet_in p, out H hdr, inout M meta, inout standard_metadata_t sm) {
    eth_t tmp;
    state start {
        p.extract(tmp); hdr.eth = tmp; p.extract(hdr.tags.next); p.extract(hdr.inner.t);
        transition accept;
    }
}
control V(inout H hdr, inout M meta) { apply { } }
control I(inout H hdr, inout M meta, inout standard_metadata_t sm) {
    tag_t saved;
    action flip(inout tag_t t, in eth_t e) { t.x = t.x + 1; t.op = e.dst[7:0]; }
    apply {
        H copy = hdr;
        saved = hdr.tags[0];
        flip(hdr.tags[0], hdr.eth);
        hdr.inner = copy.inner;
        hdr.tags[1] = saved;
        hdr.tags.push_front(1);
        hdr.tags.pop_front(2);
        hdr.inner.e = { 1, 2, 3 };
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M meta, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M meta) { apply { } }
control D(packet_out p, in H hdr) { apply { p.emit(hdr); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

CLONE_PORT = 2
PAYLOAD = bytes(range(0x80, 0x90))
DST, SRC = bytes.fromhex("0a0000000001"), bytes.fromhex("0a0000000002")


def frame(tags: list[tuple[int, int]], ether_type: int = 0x1234, payload: bytes = PAYLOAD) -> bytes:
    """Ethernet + tags (op, x), each tag's `next` saying whether another follows."""
    out = DST + SRC + struct.pack("!H", ether_type)
    for i, (op, x) in enumerate(tags):
        out += bytes([op, x, 1 if i + 1 < len(tags) else 0, 0])
    return out + payload


def model(pkt: bytes) -> dict[int, list[bytes]]:
    """What the program sends, per port."""
    h = {"eth": bytearray(pkt[:14])}
    off = 14
    if pkt[12:14] == b"\x12\x34" and len(pkt) >= off + 4:
        h["a"] = bytearray(pkt[off:off + 4])
        off += 4
        if h["a"][2] == 1 and len(pkt) >= off + 4:
            h["b"] = bytearray(pkt[off:off + 4])
            off += 4
    payload = pkt[off:]
    h["eth"][6:12] = bytes.fromhex("0000000000ee")
    op = h["a"][0] if "a" in h else None
    if op == 1:
        del h["a"]
    elif op == 3:
        h["cap"] = bytearray(bytes.fromhex("cafef00d"))
    elif op == 4:
        h["b"] = bytearray(h["a"])
        h["a"][1] = 0x44
    elif op == 6:
        del h["eth"]
    out: dict[int, list[bytes]] = {1: [], CLONE_PORT: []}

    def deparse(h):
        return b"".join(bytes(h[k]) for k in ("cap", "eth", "b", "a") if k in h) + payload

    if op == 5:
        h["a"][1] = 0x55
        clone = {k: bytearray(v) for k, v in h.items()}
        clone["a"][0] = 0x66
        out[CLONE_PORT].append(deparse(clone))
    out[1].append(deparse(h))
    return out


FRAMES = [
    frame([], ether_type=0x0800),          # nothing moves
    frame([(2, 9)]),                       # nothing moves
    frame([(1, 9), (7, 8)]),               # middle header removed
    frame([(2, 9), (7, 8)]),               # two headers swap places
    frame([(3, 9)]),                       # a header added in front
    frame([(4, 9)]),                       # assignment to an invalid header
    frame([(5, 9)]),                       # E2E clone of in-place headers
    frame([(6, 9), (7, 8)]),               # first header removed, the rest swapped
    frame([], payload=b"\x01\x02"),        # PacketTooShort for a: the rest is payload
]


def test_header_copies_compile(tmp_path):
    source = tmp_path / "copies.p4"
    source.write_text(COPIES)
    c = c_of(source)
    # a header copy moves bytes, never the pointer (that would alias)
    assert not re.search(r"s->hdr\.eth(\.p)? = tmp_\d+(\.p)?;", c)
    assert re.search(r"p4_move_bytes\(s->hdr\.eth\.p, tmp_\d+\.p, 14\);", c)
    (tmp_path / "copies.c").write_text(c)
    result = gcc_syntax_check(tmp_path / "copies.c")
    assert result.returncode == 0, result.stderr[-3000:]


def test_model_agrees_with_frames_written_by_hand():
    """The model against two layouts worked out by hand, so that the
    executable is compared with something checked on its own."""
    tag_removed = frame([(1, 9), (7, 8)])
    assert model(tag_removed) == {1: [DST + bytes.fromhex("0000000000ee") + bytes.fromhex("1234")
                                      + bytes([7, 8, 0, 0]) + PAYLOAD], CLONE_PORT: []}
    cap_added = frame([(3, 9)])
    assert model(cap_added) == {1: [bytes.fromhex("cafef00d") + DST + bytes.fromhex("0000000000ee")
                                    + bytes.fromhex("1234") + bytes([3, 9, 0, 0]) + PAYLOAD],
                                CLONE_PORT: []}


@pytest.mark.dpdk
def test_emitted_layouts_match_the_model(tmp_path, compiled, pcap_runtime):
    source = tmp_path / "in_place.p4"
    source.write_text(PROGRAM)
    run = pcap_runtime(compiled(source), [FRAMES, [], []],
                       entries=[{"cmd": "clone_session_add", "session": 7, "port": CLONE_PORT}])
    run.wait_received()
    outputs = run.stop()
    assert run.exit_status == 0
    expected = {1: [], CLONE_PORT: []}
    for f in FRAMES:
        for port, frames in model(f).items():
            expected[port] += frames
    # every frame comes out changed (at least its new source address), so
    # forwarding frames untouched cannot pass for in-place header handling
    assert len(outputs[1]) == len(FRAMES)
    assert all(sent != received for sent, received in zip(outputs[1], FRAMES))
    assert [o.hex() for o in outputs[1]] == [e.hex() for e in expected[1]]
    assert [o.hex() for o in outputs[CLONE_PORT]] == [e.hex() for e in expected[CLONE_PORT]]
