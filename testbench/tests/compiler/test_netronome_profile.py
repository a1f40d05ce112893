"""The Agilio CX profile (t4p4s/targets/netronome, docs/netronome.md): the
NIC build passes, every limit is reported at its source location, the
memory estimate follows the documented formula, and `make nfp4build` calls
the SDK with the documented arguments or says it is not there."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from t4p4s.targets import check_program
from t4p4s.targets.netronome import limits

from backend_util import PRELUDE, REPO, write_program

NIC_P4 = REPO / "p4src" / "nic.p4"
T4P4S = REPO / "t4p4s" / "bin" / "t4p4s"


def _line_col(path: Path, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """1-based line and column of the `occurrence`-th `needle` in the file."""
    hits = [(n, line.index(needle) + 1)
            for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    return hits[occurrence]


def _diagnostics(report, severity):
    return [d for d in report.diagnostics if d.severity == severity]


def _one(report, severity, fragment):
    found = [d for d in _diagnostics(report, severity) if fragment in d.message]
    assert len(found) == 1, [str(d) for d in report.diagnostics]
    return found[0]


def _at(diagnostic, path: Path, line_col) -> None:
    assert (diagnostic.src.file, diagnostic.src.line, diagnostic.src.col) == \
        (str(path), *line_col), str(diagnostic)


# --- the NIC build ----------------------------------------------------------

def test_nic_p4_fits_the_profile():
    report = check_program("netronome", NIC_P4)
    assert report.ok, [str(d) for d in report.diagnostics]
    names = {t.name for t in report.tables}
    assert {"dl_drb", "ul_bearer"} <= names
    for table in report.tables:
        assert table.entries <= limits.MAX_TABLE_ENTRIES


def test_cli_on_nic_p4_exits_zero_and_prints_the_table():
    proc = subprocess.run([str(T4P4S), "check", "--target", "netronome", str(NIC_P4)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "dl_drb" in proc.stdout and "bytes/entry" in proc.stdout
    assert "fits the Agilio CX profile" in proc.stdout
    assert " error: " not in proc.stderr


# --- the memory estimate ----------------------------------------------------

ESTIMATED = """
    register<bit<48>>(10) last_src;
    counter(5, CounterType.packets_and_bytes) per_class;
    counter(7, CounterType.packets) packets_only;
    direct_counter(CounterType.bytes) fib_bytes;
    action set(bit<48> mac, bit<9> port) { hdr.eth.dst = mac; sm.egress_spec = port; }
    action small(bit<8> x) { meta.m = (bit<32>)x; }
    table fib {
        key = { meta.m : exact; hdr.eth.type : ternary; }
        actions = { set; small; NoAction; }
        counters = fib_bytes;
        size = 1000;
    }
    apply { fib.apply(); last_src.write(0, hdr.eth.src); per_class.count(1);
            packets_only.count(2); }
"""


def test_estimate_follows_the_documented_formula(tmp_path):
    report = check_program("netronome", write_program(tmp_path, ESTIMATED))
    (fib,) = [t for t in report.tables if t.name == "I.fib"]
    # key: exact bit<32> once, ternary bit<16> twice (value and mask) = 64 bits
    assert (fib.key_bits, fib.key_bytes) == (48, 8)
    # action data: the largest action, set: 48 + 9 = 57 bits -> 8 bytes
    assert fib.action_data_bytes == 8
    assert fib.bytes_per_entry == 8 + 8 + limits.ENTRY_OVERHEAD_BYTES == 40
    assert fib.total_bytes == 1000 * 40
    arrays = {a.name: a for a in report.arrays}
    assert (arrays["I.last_src"].bytes_per_cell, arrays["I.last_src"].total_bytes) == (8, 80)
    assert arrays["I.per_class"].total_bytes == 5 * 16
    assert arrays["I.packets_only"].total_bytes == 7 * 8
    assert (arrays["I.fib_bytes"].cells, arrays["I.fib_bytes"].total_bytes) == (1000, 8000)
    assert report.total_bytes == 40_000 + 80 + 80 + 56 + 8000


def test_json_report_has_the_same_figures(tmp_path):
    path = write_program(tmp_path, ESTIMATED)
    proc = subprocess.run([str(T4P4S), "check", "--target", "netronome", "--json", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (fib,) = [t for t in data["tables"] if t["name"] == "I.fib"]
    assert (fib["entries"], fib["bytes_per_entry"], fib["total_bytes"]) == (1000, 40, 40_000)
    assert data["ok"] is True
    assert data["total_bytes"] == 48_216


def test_nic_dl_drb_estimate_from_its_declared_widths():
    """dl_drb: a 32-bit TEID key, set_dl_drb's data 16+16+8+1+1+1+6+48 bits."""
    report = check_program("netronome", NIC_P4)
    (dl_drb,) = [t for t in report.tables if t.name == "dl_drb"]
    assert (dl_drb.key_bytes, dl_drb.action_data_bytes) == (4, 13)
    assert dl_drb.total_bytes == 65_536 * (4 + 13 + 24)


# --- each limit ---------------------------------------------------------------

def _table(size_line: str, key: str = "meta.m : exact;") -> str:
    return f"""
    action a() {{ }}
    table big {{
        key = {{ {key} }}
        actions = {{ a; }}
        {size_line}
    }}
    apply {{ big.apply(); }}
"""


def test_table_over_64k_entries_is_an_error_at_the_table(tmp_path):
    path = write_program(tmp_path, _table("size = 65537;"))
    report = check_program("netronome", path)
    assert not report.ok
    _at(_one(report, "error", "65,537 exceeds the Agilio CX limit of 65,536"),
        path, _line_col(path, "table big"))


def test_table_of_exactly_64k_entries_fits(tmp_path):
    report = check_program("netronome", write_program(tmp_path, _table("size = 65536;")))
    assert report.ok


def test_table_without_size_gets_the_sdk_default_and_a_warning(tmp_path):
    path = write_program(tmp_path, _table(""))
    report = check_program("netronome", path)
    assert report.ok
    _at(_one(report, "warning", "has no 'size'"), path, _line_col(path, "table big"))
    (big,) = report.tables
    assert (big.entries, big.size_declared) == (limits.DEFAULT_TABLE_SIZE, False)


def test_optional_match_kind_is_an_error_at_the_key(tmp_path):
    path = write_program(tmp_path, _table("size = 16;", "meta.m : optional;"))
    report = check_program("netronome", path)
    assert not report.ok
    _at(_one(report, "error", "match kind 'optional'"), path, _line_col(path, "meta.m : optional"))


def test_key_wider_than_512_bits_is_a_warning(tmp_path):
    key = "meta.big : exact; hdr.w.addr : exact; meta.m : exact; hdr.eth.dst : exact; " \
          "hdr.eth.src : exact; meta.big : ternary;"   # 128+128+32+48+48+128 = 512
    path = write_program(tmp_path, _table("size = 16;", key + " hdr.w.x : exact;"))
    report = check_program("netronome", path)
    assert report.ok
    _at(_one(report, "warning", "key of 520 bits"), path, _line_col(path, "table big"))
    fits = check_program("netronome", write_program(tmp_path, _table("size = 16;", key), "fits"))
    assert not _diagnostics(fits, "warning")


def test_more_than_256_tables_is_an_error_at_the_257th(tmp_path):
    tables = "\n".join(f"    table t{i} {{ key = {{ meta.m : exact; }} actions = {{ a; }} "
                       f"size = 4; }}" for i in range(257))
    applies = " ".join(f"t{i}.apply();" for i in range(257))
    path = write_program(tmp_path, f"    action a() {{ }}\n{tables}\n    apply {{ {applies} }}")
    report = check_program("netronome", path)
    assert not report.ok
    _at(_one(report, "error", "257 tables"), path, _line_col(path, "table t256 "))


def test_extern_newer_than_the_sdk_is_an_error_at_the_call(tmp_path):
    path = write_program(tmp_path, """
    apply {
        log_msg("seen");
    }
""")
    report = check_program("netronome", path)
    assert not report.ok
    _at(_one(report, "error", "log_msg() is not declared"), path, _line_col(path, "log_msg"))


def test_unverified_hash_algorithm_is_a_warning_at_the_argument(tmp_path):
    path = write_program(tmp_path, """
    apply {
        hash(meta.m, HashAlgorithm.xor16, (bit<32>)0, { hdr.eth.dst }, (bit<32>)1024);
        hash(meta.m, HashAlgorithm.crc32, (bit<32>)0, { hdr.eth.dst }, (bit<32>)1024);
    }
""")
    report = check_program("netronome", path)
    assert report.ok
    _at(_one(report, "warning", "HashAlgorithm.xor16"), path,
        _line_col(path, "HashAlgorithm.xor16"))
    assert len(_diagnostics(report, "warning")) == 1      # crc32 is known


def test_two_replications_in_one_control_are_a_warning_at_the_second(tmp_path):
    path = write_program(tmp_path, """
    apply {
        if (meta.m == 1) { clone(CloneType.I2E, 1); }
        if (meta.m == 2) { clone(CloneType.I2E, 2); }
    }
""")
    report = check_program("netronome", path)
    assert report.ok
    _at(_one(report, "warning", "2 replicating calls"), path, _line_col(path, "clone(", 1))


def test_mark_to_drop_with_an_argument_is_a_warning(tmp_path):
    path = write_program(tmp_path, "    apply { mark_to_drop(sm); }")
    report = check_program("netronome", path)
    assert report.ok
    _at(_one(report, "warning", "mark_to_drop() without arguments"), path,
        _line_col(path, "mark_to_drop"))


def test_memory_beyond_the_emu_is_an_error(tmp_path):
    path = write_program(tmp_path, """
    register<bit<64>>(300000000) huge;
    apply { huge.write(0, 1); }
""")
    report = check_program("netronome", path)
    assert not report.ok
    diagnostic = _one(report, "error", "the Agilio CX's EMU holds")
    assert "2,400,000,000 bytes" in diagnostic.message
    _at(diagnostic, path, _line_col(path, "V1Switch"))


def test_cli_reports_violations_as_file_line_col_and_exits_nonzero(tmp_path):
    path = write_program(tmp_path, _table("size = 100000;"))
    proc = subprocess.run([str(T4P4S), "check", "--target", "netronome", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    line, col = _line_col(path, "table big")
    assert f"{path}:{line}:{col}: error: table 'I.big': size 100,000 exceeds" in proc.stderr
    assert "violates the Agilio CX profile" in proc.stdout


def test_cli_rejects_unknown_target(tmp_path):
    proc = subprocess.run([str(T4P4S), "check", "--target", "tofino", str(NIC_P4)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "invalid choice: 'tofino'" in proc.stderr


# --- make nfp4build -----------------------------------------------------------

NFP4BUILD_ARGS = [
    "-4", "p4src/nic.p4", "-o", "{out}/nic.nffw", "-p", "{out}/pif",
    "-l", "beryllium", "-s", "AMDA0097-0001:0",
    "--nfp4c_p4_version", "16", "--nfp4c_p4_compiler", "p4c-nfp",
    "--nfirc_default_table_size", str(limits.DEFAULT_TABLE_SIZE),
    "--nfirc_all_header_ops", "--nfirc_zero_new_headers",
    "--reduced-thread-usage", "--shared-codestore", "--no-debug-info",
]


def _path_without_nfp4build() -> str:
    return os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "nfp4build").exists())


def _fake_nfp4build(directory: Path, record: Path) -> None:
    directory.mkdir(parents=True)
    script = directory / "nfp4build"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\n')
    script.chmod(0o755)


def _make(*args, path: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NFP_", "MAKE"))}
    env["PATH"] = path
    return subprocess.run(["make", "--no-print-directory", "-C", str(REPO), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_make_nfp4build_without_the_sdk_fails_and_says_so(tmp_path):
    proc = _make("nfp4build", f"NFP_OUT={tmp_path}/out", path=_path_without_nfp4build())
    assert proc.returncode != 0
    assert "the Netronome Agilio P4 SDK is not installed (no nfp4build on PATH and " \
           "NFP_SDK_DIR is not set); nothing was built" in proc.stderr
    assert "fits the Agilio CX profile" in proc.stdout      # the check ran first
    assert not (tmp_path / "out").exists()


def test_make_nfp4build_with_an_empty_sdk_dir_fails_and_says_so(tmp_path):
    proc = _make("nfp4build", f"NFP_SDK_DIR={tmp_path}", path=_path_without_nfp4build())
    assert proc.returncode != 0
    assert f"NFP_SDK_DIR={tmp_path} has no executable p4/bin/nfp4build" in proc.stderr


def test_make_nfp4build_calls_the_sdk_from_path_with_the_documented_arguments(tmp_path):
    record = tmp_path / "args"
    _fake_nfp4build(tmp_path / "bin", record)
    out = tmp_path / "out"
    proc = _make("nfp4build", f"NFP_OUT={out}",
                 path=f"{tmp_path / 'bin'}{os.pathsep}{_path_without_nfp4build()}")
    assert proc.returncode == 0, proc.stderr
    assert record.read_text().splitlines() == [a.format(out=out) for a in NFP4BUILD_ARGS]


def test_make_nfp4build_uses_nfp_sdk_dir_and_platform_overrides(tmp_path):
    record = tmp_path / "args"
    _fake_nfp4build(tmp_path / "sdk" / "p4" / "bin", record)
    out = tmp_path / "out"
    proc = _make("nfp4build", f"NFP_SDK_DIR={tmp_path / 'sdk'}", f"NFP_OUT={out}",
                 "NFP_PLATFORM=lithium", "NFP_SKU=AMDA0096-0001:0",
                 path=_path_without_nfp4build())
    assert proc.returncode == 0, proc.stderr
    args = record.read_text().splitlines()
    assert args[args.index("-l") + 1] == "lithium"
    assert args[args.index("-s") + 1] == "AMDA0096-0001:0"


def test_make_nfp4build_does_not_run_the_sdk_when_the_profile_fails(tmp_path):
    record = tmp_path / "args"
    _fake_nfp4build(tmp_path / "bin", record)
    program = write_program(tmp_path, _table("size = 70000;"))
    proc = _make("nfp4build", f"NIC_P4={program}", f"NFP_OUT={tmp_path}/out",
                 path=f"{tmp_path / 'bin'}{os.pathsep}{_path_without_nfp4build()}")
    assert proc.returncode != 0
    assert "exceeds the Agilio CX limit" in proc.stderr
    assert not record.exists()


def test_make_nic_profile_runs_the_check():
    proc = _make("nic-profile", path=os.environ["PATH"])
    assert proc.returncode == 0, proc.stderr
    assert "nic.p4 fits the Agilio CX profile" in proc.stdout
