"""Every STF test of the suite (testbench/p4/t4p4s/*.stf, t4p4s/examples/*.stf)
through the real compiled DPDK executable, packets compared byte for byte."""
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
STF_DIRS = [REPO_ROOT / "testbench" / "p4" / "t4p4s", REPO_ROOT / "t4p4s" / "examples"]
PAIRS = [(stf.with_suffix(".p4"), stf) for directory in STF_DIRS
         for stf in sorted(directory.glob("*.stf"))]


@pytest.mark.dpdk
@pytest.mark.stf
@pytest.mark.parametrize("program,stf", PAIRS, ids=[stf.stem for _, stf in PAIRS])
def test_stf(program, stf, run_stf):
    assert program.is_file(), f"{stf} has no program {program.name} next to it"
    outcome = run_stf(program, stf)
    if not outcome.passed:
        pytest.fail("\n".join(outcome.failures), pytrace=False)
