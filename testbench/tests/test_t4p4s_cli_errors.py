"""The t4p4s command line's failures (issue 17, item 3): a missing file, an
output directory it cannot make, a bad option or command are one line on
stderr and exit code 1 (failed) or 2 (command line); anything unforeseen
is one line asking for a bug report, exit code 70. No traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from t4p4s import cli

REPO_ROOT = Path(__file__).resolve().parents[2]
L2FWD = REPO_ROOT / "t4p4s" / "examples" / "l2fwd.p4"


def one_line(result) -> str:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_missing_files_are_one_line_exit_1(t4p4s_cli, tmp_path):
    missing = tmp_path / "nothing.p4"
    for args, message in (
            (["compile", missing, "-o", tmp_path / "out"],
             f"{missing}:0:0: error: cannot open source file '{missing}'"),
            (["p4info", missing], f"t4p4s: {missing}: no such P4 program"),
            (["run", missing], f"t4p4s: {missing}: no such P4 program"),
            (["stf", L2FWD, tmp_path / "none.stf"],
             f"t4p4s: {tmp_path / 'none.stf'}: cannot read: No such file or directory")):
        result = t4p4s_cli(*args)
        assert result.returncode == 1, args
        assert one_line(result) == message, args


def test_an_output_directory_it_cannot_make(t4p4s_cli, tmp_path):
    taken = tmp_path / "a-file"
    taken.write_text("")
    # a file where the directory should be: FileExistsError was a traceback
    result = t4p4s_cli("p4info", L2FWD, "-o", taken)
    assert result.returncode == 1
    assert one_line(result) == f"t4p4s: {taken}: File exists"
    result = t4p4s_cli("compile", L2FWD, "-o", taken / "out", "--no-build")
    assert result.returncode == 1
    assert one_line(result) == f"t4p4s: {taken / 'out'}: Not a directory"


def test_command_line_errors_are_one_line_exit_2(t4p4s_cli):
    for args, message in (
            (["frobnicate"], "t4p4s: error: argument COMMAND: invalid choice: 'frobnicate'"),
            (["compile", L2FWD], "t4p4s compile: error: the following arguments are "
                                 "required: -o (see t4p4s compile --help)"),
            (["check", "--target", "tofino", L2FWD], "t4p4s check: error: argument --target: "
                                                     "invalid choice: 'tofino'"),
            (["p4info", L2FWD, "--frobnicate"], "t4p4s: error: unrecognized arguments: "
                                                "--frobnicate (see t4p4s --help)")):
        result = t4p4s_cli(*args)
        assert result.returncode == 2, args
        assert one_line(result).startswith(message), args


def test_an_unforeseen_failure_asks_for_a_report(monkeypatch, capsys):
    def broken(args):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(cli, "_p4info", broken)
    monkeypatch.delenv(cli.TRACEBACK_ENV, raising=False)
    assert cli.main(["p4info", str(L2FWD)]) == cli.EXIT_INTERNAL == 70
    assert capsys.readouterr().err.splitlines() == [
        "t4p4s: internal error: ZeroDivisionError: division by zero; this is a t4p4s bug, "
        "please report it with the command line (T4P4S_TRACEBACK=1 shows where it happened)"]
    monkeypatch.setenv(cli.TRACEBACK_ENV, "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["p4info", str(L2FWD)])
