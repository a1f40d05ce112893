"""The short fuzz pass of CI (issue 12): each gNB build under the libFuzzer
harness with ASan and UBSan for T4P4S_FUZZ_SECONDS (default 60), from the
seed corpus and the minimized findings in testbench/fuzz/regressions/.
Any sanitizer report, lost or doubly freed mbuf, hang or crash fails it,
with libFuzzer's report. `make fuzz` runs the same for longer."""
import os

import pytest

from testbench.fuzz.run import REPO, run_fuzzer

SECONDS = float(os.environ.get("T4P4S_FUZZ_SECONDS", "60"))
# apart from `make fuzz`'s build/fuzz, which a long run may be using
WORK = REPO / "build" / "fuzz-ci"


@pytest.mark.dpdk
@pytest.mark.parametrize("build", ["host", "nic"])
def test_short_fuzz_pass(build, dpdk_environment):
    result = run_fuzzer(build, SECONDS, work=WORK)
    print(result.summary())
    assert result.clean, (f"{build}: fuzzing found {result.findings or 'a failure'} "
                          f"(exit status {result.exit_status}); in {WORK / build / 'findings'}:\n"
                          + result.log[-6000:])
    # it fuzzed: every seed ran and the pipeline was reached far beyond them
    assert result.runs > result.seed_inputs + result.regression_inputs, result.summary()
    assert result.corpus_inputs > 0 and result.coverage_edges > 0, result.summary()
