"""Clones of frames longer than one mbuf (net_pcap hands them over as
chains of 2,048-byte segments), truncated by their clone session: the cut
may fall in the first segment (the later ones are freed) or in a later one.
rte_pktmbuf_trim() trims only within the last segment, so before
t4p4s_truncate() a chained clone left untruncated."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.dpdk

CLONE_P4 = Path(__file__).resolve().parents[3] / "testbench" / "p4" / "t4p4s" / "clone.p4"
E2E_SESSION, E2E_PORT = 6, 3     # clone.p4 / clone.stf


def data_frame(length: int, b1: int) -> bytes:
    """clone.stf's frame layout: dst src 88b5 | f1 f2 h1 h2 b1 b2, then payload."""
    head = bytes.fromhex("000000000001" "000000000002" "88b5" "00000001" "00000002" "0003" "0004")
    head += bytes([b1, 0])
    return head + bytes((i * 7) & 0xFF for i in range(length - len(head)))


@pytest.mark.parametrize("truncate", [100, 2048, 2100, 4999, 5000, 0])
def test_e2e_clone_of_a_chained_frame_is_truncated(compiled, pcap_runtime, truncate):
    """b1 = 2: an E2E clone of what egress emitted (h2 = 0e0e), b2 = c2 in
    its own egress pass, cut to the session's length (0: whole)."""
    frame = data_frame(5000, b1=2)
    sent = frame[:24] + bytes.fromhex("0e0e") + frame[26:]       # h2
    clone = sent[:27] + b"\xc2" + sent[28:]                        # b2
    run = pcap_runtime(compiled(CLONE_P4), [[frame, frame], [], [], []], entries=[
        {"cmd": "clone_session_add", "session": E2E_SESSION, "port": E2E_PORT,
         "truncate": truncate}])
    stats = run.wait_received()
    outputs = run.stop()
    assert run.exit_status == 0
    assert not any(stats["drops"].values()), stats["drops"]
    assert [f.hex() for f in outputs[1]] == [sent.hex()] * 2
    expected = clone[:truncate] if truncate else clone
    assert [f.hex() for f in outputs[E2E_PORT]] == [expected.hex()] * 2
