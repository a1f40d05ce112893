"""gnbctl against real targets: the host and NIC builds of p4src/ with
their P4Runtime servers (started by the p4runtime tests' start_target),
gnbctl run as a subprocess on a topology file written per test."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "p4runtime"))

from p4runtime.conftest import objects_build, start_target  # noqa: E402,F401

REPO = Path(__file__).resolve().parents[3]
GNBCTL = REPO / "controller" / "bin" / "gnbctl"


@pytest.fixture(scope="session")
def gnb_builds(compiled):
    return {role: compiled(REPO / "p4src" / f"{role}.p4") for role in ("nic", "host")}


def write_topology(path: Path, targets: list[dict], timeout: float = 5.0) -> Path:
    """targets: dicts of topology keys (name, role, address, p4info, ...)."""
    lines = ["election_id = 1", f"timeout = {timeout}"]
    for target in targets:
        lines.append("[[targets]]")
        lines += [f"{key} = {json.dumps(str(v) if isinstance(v, Path) else v)}"
                  for key, v in target.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def gnbctl():
    """gnbctl(topology, *args) -> (exit code, parsed --json output)."""
    def run(topology: Path, *args, timeout: float = 120):
        done = subprocess.run([str(GNBCTL), "--json", "--topology", str(topology),
                               *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
        try:
            output = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"gnbctl {' '.join(map(str, args))}: no JSON "
                                 f"(exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
        assert output["ok"] == (done.returncode == 0), output
        return done.returncode, output
    return run
