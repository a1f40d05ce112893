"""Executables the runtime tests share, each built once per session: the
hand-written program (t4p4s/runtime/tests/l2fwd_handwritten.c, linked
with the runtime directly, no compiler) and the compiled l2fwd example."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
RUNTIME = REPO / "t4p4s" / "runtime"
HANDWRITTEN = RUNTIME / "tests" / "l2fwd_handwritten.c"
L2FWD = REPO / "t4p4s" / "examples" / "l2fwd.p4"


@pytest.fixture(scope="session")
def handwritten(tmp_path_factory, dpdk_environment) -> Path:
    out = tmp_path_factory.mktemp("handwritten") / "l2fwd_handwritten"
    subprocess.run(["make", "-s", "-C", str(RUNTIME), "program", f"PROGRAM_C={HANDWRITTEN}",
                    f"OUT={out}"], check=True, capture_output=True, timeout=600)
    return out


@pytest.fixture(scope="session")
def l2fwd(compiled) -> Path:
    return compiled(L2FWD).executable_path
