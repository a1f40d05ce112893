"""gnbctl's answer to bad input, without a target to talk to (issue 17,
item 3): each mistake is one line on stderr (what, where, the fix) and its
documented exit code, never a traceback; a usage error is 64, not the bad
topology's 2; a failure no part of gnbctl foresaw is one line asking for a
bug report, exit 70. And what gnbctl prints into a pipe (item 6): no line
wrapped or cut at 80 columns."""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from conftest import GNBCTL, REPO
from test_topology_file import host, nic
from controller import cli
from controller.errors import EXIT_INTERNAL, EXIT_USAGE

HOST_P4 = REPO / "p4src" / "host.p4"


def run(*args, env=None) -> subprocess.CompletedProcess:
    """gnbctl as a user runs it, stdout and stderr pipes (not a terminal)."""
    return subprocess.run([str(GNBCTL), *map(str, args)], capture_output=True, text=True,
                          timeout=60, env=env)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """The single error line of a failed gnbctl run, with nothing on stdout
    (a progress note of a compile that ran before it is no error line)."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines()
             if not (line.startswith("gnbctl: compiling ") and line.endswith(" ..."))]
    assert len(lines) == 1, done.stderr
    assert done.stdout == ""
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def topology_file(tmp_path, text: str, name: str = "topology.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_issue_cases_are_one_line_with_exit_code_2(tmp_path):
    """timeout = "5s" (was a ValueError), a missing p4 file (was a
    FileNotFoundError, with a second target also a storm of cancelled
    tasks), two targets on one address (was finsy's traceback and "another
    live controller uses this election id")."""
    cases = {
        "timeout.toml": ('timeout = "5s"\n' + nic(),
                         "'timeout' must be a number of seconds above 0 (like timeout = 5.0), "
                         "not '5s'"),
        "missing-p4.toml": (nic(p4="host.p4") + host(p4info=str(HOST_P4), nic="nic0", vf=0),
                            f"targets[0] (nic0): p4 = 'host.p4': no such file "
                            f"{tmp_path / 'host.p4'} (relative paths are relative to the "
                            "topology's directory)"),
        "same-address.toml": (nic() + host(address="127.0.0.1:9559"),
                              "nic0 and host0 both name the P4Runtime server 127.0.0.1:9559, "
                              "device id 1: each target process serves its own (give each "
                              "its --p4runtime port)"),
    }
    for name, (text, message) in cases.items():
        path = topology_file(tmp_path, text, name)
        for command in (["status"], ["counters"], ["pipeline", "push"], ["run"]):
            done = run("--topology", path, *command)
            assert done.returncode == 2, (name, command, done.stderr)
            assert one_line_error(done) == f"gnbctl: error: {path}: {message}", command
        done = run("--json", "--topology", path, "status")
        assert done.returncode == 2
        assert json.loads(done.stdout) == {"ok": False, "error": f"{path}: {message}",
                                           "exit_code": 2, "result": None}


def test_a_p4info_file_that_is_no_p4info(tmp_path):
    """`status` compares the target's P4Info with the topology's: a file
    that does not parse is the topology's error (exit 2), not a traceback
    nor an unreachable target."""
    bogus = tmp_path / "nic.p4info.txtpb"
    bogus.write_text("this is not a P4Info\n")
    path = topology_file(tmp_path, nic(address=f"127.0.0.1:{free_port()}",
                                       p4info=bogus.name))
    done = run("--topology", path, "status")
    assert done.returncode == 2
    line = one_line_error(done)
    assert line.startswith(f"gnbctl: error: nic0: {bogus} is no P4Info (text format): ")


def test_a_p4_source_that_does_not_compile(tmp_path):
    broken = tmp_path / "broken.p4"
    broken.write_text("control nothing(\n")
    path = topology_file(tmp_path, nic(p4=broken.name))
    done = run("--topology", path, "pipeline", "push")
    assert done.returncode == 2
    assert one_line_error(done).startswith(
        f"gnbctl: error: nic0: p4 = {broken} does not compile: {broken}:")


def test_usage_errors_are_one_line_with_exit_code_64(tmp_path):
    path = topology_file(tmp_path, nic())
    for args, message in (
            (["nonsense"], "gnbctl: error: argument command: invalid choice: 'nonsense'"),
            (["drb", "add", "seven"], "gnbctl drb add: error: argument drb: 'seven' is not "
                                      "an integer (see gnbctl drb add --help)"),
            (["counters", "--drb", "65536"], "gnbctl counters: error: argument --drb: 65536 "
                                             "does not fit in 16 bits"),
            (["offload", "mode", "fast"], "gnbctl offload mode: error: argument mode: invalid "
                                          "choice: 'fast'"),
            ([], "gnbctl: error: the following arguments are required: command")):
        done = run("--topology", path, *args)
        assert done.returncode == EXIT_USAGE == 64, (args, done.stderr)
        assert one_line_error(done).startswith(message), args
    done = run("--json", "--topology", path, "drb", "add", "seven")
    assert done.returncode == 64
    out = json.loads(done.stdout)
    assert (out["ok"], out["exit_code"]) == (False, 64)
    assert out["error"].startswith("gnbctl drb add: error: argument drb")
    assert run("--help").returncode == 0


def test_an_unforeseen_failure_is_one_line_asking_for_a_report(tmp_path, monkeypatch,
                                                                capsys):
    def broken(path):
        raise KeyError("nobody expected this")
    monkeypatch.setattr(cli.topology, "load", broken)
    monkeypatch.delenv(cli.TRACEBACK_ENV, raising=False)
    assert cli.main(["--topology", "t.toml", "status"]) == EXIT_INTERNAL == 70
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "gnbctl: error: internal error: KeyError: 'nobody expected this'; this is a gnbctl "
        "bug, please report it with the command line (GNBCTL_TRACEBACK=1 shows where it "
        "happened)"]
    assert cli.main(["--json", "--topology", "t.toml", "status"]) == 70
    assert json.loads(capsys.readouterr().out)["exit_code"] == 70
    # and where it happened, for the report
    monkeypatch.setenv(cli.TRACEBACK_ENV, "1")
    with pytest.raises(KeyError):
        cli.main(["--topology", "t.toml", "status"])


def test_piped_output_is_never_wrapped_nor_cut(tmp_path):
    """stdout and stderr are pipes here: a table keeps its whole header and
    every cell, a row is one line however long, an error one line."""
    dead = f"127.0.0.1:{free_port()}"
    long_name = "nic0-" + "x" * 60
    path = topology_file(tmp_path, "timeout = 0.5\n" + nic(dead).replace('"nic0"',
                                                                          f'"{long_name}"'))
    done = run("--topology", path, "status")
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert lines[0] == "targets"
    assert lines[1].split() == ["target", "role", "reachable", "primary", "program", "P4Info",
                                "=", "topology's", "dl_drb", "ul_bearer", "offload", "%",
                                "drops"]
    assert len(lines) == 3 and lines[2].startswith(f"{long_name}  nic   False")
    # the columns line up: each header word starts where its column does
    assert lines[2].index("False") == lines[1].index("reachable")
    error = done.stderr.splitlines()
    assert len(error) == 1 and error[0].startswith(
        f"gnbctl: error: {long_name}: cannot reach the P4Runtime server at {dead}")
    assert len(error[0]) > 80
    assert lines[2].endswith(error[0].removeprefix("gnbctl: error: "))

    # a long error that is not a table: the topology's own path
    deep = tmp_path / ("d" * 70)
    deep.mkdir()
    bad = topology_file(deep, 'timeout = "5s"\n' + nic())
    done = run("--topology", bad, "counters")
    assert one_line_error(done) == (f"gnbctl: error: {bad}: 'timeout' must be a number of "
                                    "seconds above 0 (like timeout = 5.0), not '5s'")
