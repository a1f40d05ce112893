"""The STF runner's two port modes (issue 18 item 1): ring ports (the
default) carry frames of any length unchanged; veth ports, kept for tests
of the kernel path, still pass a standard STF test and say when they
padded a short frame."""
from pathlib import Path

import pytest

from t4p4s.stf.parser import StfError, parse_stf_text

REPO_ROOT = Path(__file__).resolve().parents[2]
L2FWD = REPO_ROOT / "t4p4s" / "examples" / "l2fwd.p4"
SHORT = REPO_ROOT / "testbench" / "p4" / "t4p4s" / "short_frames.p4"

pytestmark = [pytest.mark.dpdk, pytest.mark.stf]


def test_veth_mode_passes_a_standard_test(run_stf):
    outcome = run_stf(L2FWD, L2FWD.with_suffix(".stf"), ports="veth")
    assert outcome.passed, "\n".join(outcome.failures)


def test_veth_mode_pads_short_frames_and_says_so(run_stf):
    """The reason for ring ports: the same test passes on them
    (test_stf_programs.py::test_stf[short_frames])."""
    outcome = run_stf(SHORT, SHORT.with_suffix(".stf"), ports="veth")
    assert not outcome.passed
    assert any("the 0-byte packet was sent with 14 zero bytes appended" in f
               for f in outcome.failures), outcome.failures


def test_ring_mode_compares_a_zero_byte_frame_exactly(run_stf):
    """`expect 2 $` is a 0-byte frame: a 0-byte one passes, and the
    comparison does fail when the program sends bytes instead."""
    commands = parse_stf_text("packet 0\nexpect 2 $\npacket 0 0102\nexpect 2 $\n", "zero")
    outcome = run_stf(SHORT, commands)
    assert not outcome.passed
    assert len(outcome.failures) == 2 and outcome.captured[2] == [b"", b"\x01\x02"], outcome.failures
    assert "length 2 bytes, expected exactly 0" in outcome.failures[0], outcome.failures


def test_ports_beyond_dpdk_and_unknown_modes_are_refused(run_stf):
    with pytest.raises(StfError, match="port 32 is out of range 0..31"):
        run_stf(SHORT, parse_stf_text("packet 32 00\n", "far"))
    with pytest.raises(StfError, match="ports='tap': expected one of ring, veth"):
        run_stf(SHORT, parse_stf_text("packet 0 00\n", "mode"), ports="tap")


def test_cli_takes_the_port_mode(t4p4s_cli, dpdk_environment):
    for mode in ("ring", "veth"):
        result = t4p4s_cli("stf", "--ports", mode, L2FWD, L2FWD.with_suffix(".stf"))
        assert result.returncode == 0 and "PASS" in result.stdout, (mode, result.stderr)
