"""The unmodified p4runtime-shell from PyPI (own venv, .venv-p4runtime-shell,
made by testbench/setup.sh) talks to the target: it fetches the P4Info,
becomes primary, inserts an entry, and reads back the same bytes our
own client reads."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

pytestmark = pytest.mark.dpdk

REPO = Path(__file__).resolve().parents[3]
SHELL_PYTHON = REPO / ".venv-p4runtime-shell" / "bin" / "python"
SESSION = Path(__file__).resolve().parent / "p4runtime_shell_session.py"


def test_p4runtime_shell_inserts_and_reads_back(target, names):
    assert SHELL_PYTHON.exists(), "no p4runtime-shell venv: run testbench/setup.sh"
    run = subprocess.run([str(SHELL_PYTHON), str(SESSION), target.address],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    read = [p4r.TableEntry.FromString(bytes.fromhex(line.split()[1]))
            for line in run.stdout.splitlines() if line.startswith("READ ")]
    expected = names.table_entry("ingress.t_exact", {"hdr.data.f1": 0x0a0b0c0d},
                                 names.action("ingress.forward", port=3, tag=0x22))
    assert read == [expected]
    ours = target.client().read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=expected.table_id)))
    assert [e.table_entry for e in ours] == [expected]
