"""The t4p4s command line: what compile writes, how errors look, and that
`t4p4s stf` fails on a wrong, a missing and an extra packet."""
import os
import re
from pathlib import Path

import pytest
from google.protobuf import text_format

REPO_ROOT = Path(__file__).resolve().parents[2]
L2FWD = REPO_ROOT / "t4p4s" / "examples" / "l2fwd.p4"
L2FWD_STF = L2FWD.with_suffix(".stf").read_text()
BAD_PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in p, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { hdr.h.a = undeclared_name; }
}
"""
UNPARSABLE_PROGRAM = "#include <core.p4>\nheader h_t { bit<8> a }\n"


def _no_traceback(result):
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def _l2fwd_frames() -> dict[int, list[bytes]]:
    """l2fwd.stf's packets per input port."""
    frames: dict[int, list[bytes]] = {}
    for line in L2FWD_STF.splitlines():
        if line.startswith("packet "):
            _, port, data = line.split(" ", 2)
            frames.setdefault(int(port), []).append(bytes.fromhex(data.replace(" ", "")))
    return frames


def _mac_swapped(frame: bytes) -> bytes:
    return frame[6:12] + frame[0:6] + frame[12:]


@pytest.mark.dpdk
def test_compile_writes_p4info_c_and_executable(t4p4s_cli, tmp_path, pcap_runtime):
    """What compile writes is what the program is: the P4Info says what
    `t4p4s p4info` says, the C defines the pipeline, and the executable
    forwards l2fwd.stf's packets as l2fwd.p4 does (MAC swap, port p to p^1)."""
    from types import SimpleNamespace

    from finsy.proto.p4.config.v1 import p4info_pb2
    result = t4p4s_cli("compile", L2FWD, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    for name in ("l2fwd.p4info.binpb", "l2fwd.p4info.txtpb", "l2fwd.c", "l2fwd"):
        assert str(out / name) in result.stdout, f"compile did not say it wrote {name}"
    binary = p4info_pb2.P4Info.FromString((out / "l2fwd.p4info.binpb").read_bytes())
    text = text_format.Parse((out / "l2fwd.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    printed = t4p4s_cli("p4info", L2FWD)
    assert printed.returncode == 0, printed.stderr
    assert binary == text == text_format.Parse(printed.stdout, p4info_pb2.P4Info())
    c = (out / "l2fwd.c").read_text()
    assert "t4p4s_pipeline_process(struct t4p4s_lcore *lc" in c and "/* l2fwd.p4:" in c

    inputs = _l2fwd_frames()
    n_ports = max(inputs) + 1
    run = pcap_runtime(SimpleNamespace(executable_path=out / "l2fwd"),
                       [inputs.get(port, []) for port in range(n_ports)])
    run.wait_received()
    outputs = run.stop()
    assert run.exit_status == 0
    assert outputs == [[_mac_swapped(f) for f in inputs.get(port ^ 1, [])] for port in range(n_ports)]


def test_compile_no_build_writes_no_executable(t4p4s_cli, tmp_path):
    result = t4p4s_cli("compile", L2FWD, "-o", tmp_path, "--no-build")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "l2fwd.c").is_file() and (tmp_path / "l2fwd.p4info.txtpb").is_file()
    assert not (tmp_path / "l2fwd").exists()


def test_compile_p4info_only_writes_the_p4info_alone(t4p4s_cli, tmp_path):
    """The same bytes as the P4Info that --no-build writes next to its C."""
    result = t4p4s_cli("compile", L2FWD, "-o", tmp_path / "only", "--p4info-only")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "only").iterdir()) == \
        ["l2fwd.p4info.binpb", "l2fwd.p4info.txtpb"]
    assert t4p4s_cli("compile", L2FWD, "-o", tmp_path / "c", "--no-build").returncode == 0
    for name in ("l2fwd.p4info.binpb", "l2fwd.p4info.txtpb"):
        assert str(tmp_path / "only" / name) in result.stdout
        assert (tmp_path / "only" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
    both = t4p4s_cli("compile", L2FWD, "-o", tmp_path / "x", "--p4info-only", "--no-build")
    assert both.returncode == 2 and "not allowed with" in both.stderr
    _no_traceback(both)


@pytest.mark.parametrize("source,line", [(BAD_PROGRAM, 10), (UNPARSABLE_PROGRAM, 2)],
                         ids=["undeclared", "syntax"])
def test_bad_program_reports_file_line_col(t4p4s_cli, tmp_path, source, line):
    program = tmp_path / "bad.p4"
    program.write_text(source)
    result = t4p4s_cli("compile", program, "-o", tmp_path / "out")
    assert result.returncode == 1
    _no_traceback(result)
    assert re.search(rf"bad\.p4:{line}:\d+: error: \S", result.stderr), result.stderr
    assert not (tmp_path / "out" / "bad").exists()


def test_missing_program_is_a_clear_error(t4p4s_cli, tmp_path):
    result = t4p4s_cli("compile", tmp_path / "nothing.p4", "-o", tmp_path)
    assert result.returncode != 0
    _no_traceback(result)
    assert "nothing.p4" in result.stderr


def test_p4info_prints_the_text_p4info(t4p4s_cli):
    from finsy.proto.p4.config.v1 import p4info_pb2
    result = t4p4s_cli("p4info", REPO_ROOT / "t4p4s" / "examples" / "exact_table.p4")
    assert result.returncode == 0, result.stderr
    info = text_format.Parse(result.stdout, p4info_pb2.P4Info())
    assert [t.preamble.name for t in info.tables] == ["ExactIngress.ipv4_exact"]
    assert info.tables[0].size == 65536


def _stf(t4p4s_cli, tmp_path, text):
    test = tmp_path / "l2fwd_variant.stf"
    test.write_text(text)
    return t4p4s_cli("stf", L2FWD, test)


@pytest.mark.dpdk
def test_stf_passes(t4p4s_cli, tmp_path, dpdk_environment):
    result = _stf(t4p4s_cli, tmp_path, L2FWD_STF)
    assert result.returncode == 0, result.stderr
    assert "PASS" in result.stdout


@pytest.mark.dpdk
def test_stf_fails_on_a_wrong_byte(t4p4s_cli, tmp_path, dpdk_environment):
    wrong = L2FWD_STF.replace("expect 1 000000000001 000000000002 0800 45000014 00000000 $",
                              "expect 1 000000000001 000000000002 0800 45000014 00000001 $")
    assert wrong != L2FWD_STF
    result = _stf(t4p4s_cli, tmp_path, wrong)
    assert result.returncode == 1
    _no_traceback(result)
    assert "mismatch" in result.stderr and "l2fwd_variant.stf:3" in result.stderr
    # the diff shows both sides and marks the differing byte
    assert "expected:" in result.stderr and "got:" in result.stderr and "^" in result.stderr


@pytest.mark.dpdk
def test_stf_fails_on_a_missing_packet(t4p4s_cli, tmp_path, dpdk_environment):
    result = _stf(t4p4s_cli, tmp_path, L2FWD_STF + "expect 2 ffffffffffff\n")
    assert result.returncode == 1
    _no_traceback(result)
    assert "missing" in result.stderr


@pytest.mark.dpdk
def test_stf_fails_on_an_extra_packet(t4p4s_cli, tmp_path, dpdk_environment):
    without_last_expect = "\n".join(L2FWD_STF.splitlines()[:-1]) + "\n"
    result = _stf(t4p4s_cli, tmp_path, without_last_expect)
    assert result.returncode == 1
    _no_traceback(result)
    assert "port 2, packet 1: unexpected extra packet" in result.stderr


@pytest.mark.dpdk
def test_stf_fails_on_a_too_long_packet_with_end_marker(t4p4s_cli, tmp_path, dpdk_environment):
    shorter = L2FWD_STF.replace("0806 0001 $", "0806 $")
    assert shorter != L2FWD_STF
    result = _stf(t4p4s_cli, tmp_path, shorter)
    assert result.returncode == 1
    assert "expected exactly" in result.stderr


def test_stf_unknown_table_names_the_line(t4p4s_cli, tmp_path):
    result = _stf(t4p4s_cli, tmp_path, "packet 0 00\nadd no_such_table x:1 a()\n")
    assert result.returncode == 1
    _no_traceback(result)
    assert "l2fwd_variant.stf:2: error: no table named 'no_such_table'" in result.stderr


def test_stf_syntax_error_names_the_line(t4p4s_cli, tmp_path):
    result = _stf(t4p4s_cli, tmp_path, "# comment\n\nexpect 1 0g\n")
    assert result.returncode == 1
    _no_traceback(result)
    assert "l2fwd_variant.stf:3: error:" in result.stderr


@pytest.mark.dpdk
def test_cli_runs_from_any_directory(t4p4s_cli, tmp_path, dpdk_environment):
    """From a directory that is not the repository's, with relative paths:
    the help lists the commands, compile writes where -o says, and stf
    compares the packets (PASS)."""
    help_text = t4p4s_cli("--help", cwd=tmp_path)
    assert help_text.returncode == 0
    for command in ("compile", "stf", "run", "p4info"):
        assert command in help_text.stdout
    program = Path(os.path.relpath(L2FWD, tmp_path))
    assert not program.is_absolute() and str(program).startswith("..")
    compiled = t4p4s_cli("compile", program, "-o", "out", "--no-build", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    assert "t4p4s_pipeline_process(struct t4p4s_lcore *lc" in (tmp_path / "out" / "l2fwd.c").read_text()
    stf = t4p4s_cli("stf", program, program.with_suffix(".stf"), cwd=tmp_path)
    assert stf.returncode == 0, stf.stderr
    assert f"PASS {program.with_suffix('.stf')}" in stf.stdout
