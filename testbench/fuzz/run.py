"""Building and running a fuzz target: the harness linked with a gNB
build (compile cache, VARIANT=fuzz), started on net_null ports with the
build's --entries, over a corpus directory of its own plus the seeds and
the minimized findings kept in the repository (testbench/fuzz/regressions/
BUILD/), for a set time; libFuzzer's final statistics parsed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from t4p4s.stf.compile_cache import compile_cached
from t4p4s.stf.control import test_eal_args
from testbench.fuzz import seeds

REPO = Path(__file__).resolve().parents[2]
P4SRC = REPO / "p4src"
REGRESSIONS = Path(__file__).resolve().parent / "regressions"
WORK = REPO / "build" / "fuzz"
# The longest frame of the gNB tests is 9,000 bytes; the harness adds two.
MAX_LEN = 9100
# An input that takes longer than this is a hang (one frame takes microseconds).
HANG_SECONDS = 10
SYMBOLIZER = "/usr/lib/llvm-14/bin/llvm-symbolizer"   # testbench/setup.sh installs it
_FINAL = re.compile(r"stat::(\w+):\s+(\d+)")
_STATUS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")


@dataclass
class FuzzResult:
    build: str
    seconds: float
    exit_status: int
    runs: int = 0
    execs_per_s: int = 0
    coverage_edges: int = 0      # libFuzzer's "cov": edges of the instrumented code reached
    features: int = 0            # "ft": edges, counters and comparisons told apart
    corpus_inputs: int = 0
    peak_rss_mb: int = 0
    seed_inputs: int = 0
    regression_inputs: int = 0
    findings: list[str] = field(default_factory=list)   # crash-/leak-/timeout- files
    log: str = ""

    @property
    def clean(self) -> bool:
        return self.exit_status == 0 and not self.findings

    def summary(self) -> dict:
        values = asdict(self)
        values.pop("log")
        return values


def build_fuzzer(build: str, cache_root: Path | None = None) -> Path:
    """The harness linked with p4src/BUILD.p4 (built once per content)."""
    return Path(compile_cached(P4SRC / f"{build}.p4", cache_root, variant="fuzz").executable_path)


def runtime_args(build: str, entries: Path, prefix: str) -> str:
    """The runtime's command line the harness starts from (T4P4S_FUZZ_ARGS)."""
    eal = test_eal_args(prefix, lcores="0") + ["-m", "512"]
    vdevs = [f"--vdev=net_null{port}" for port in range(seeds.ports(build))]
    return " ".join(eal + vdevs + ["--", "--entries", str(entries)])


def run_fuzzer(build: str, seconds: float, work: Path = WORK, cache_root: Path | None = None,
               extra_args: tuple[str, ...] = ()) -> FuzzResult:
    """Fuzzes `build` for `seconds`: the corpus grows in work/BUILD/corpus
    (kept between runs), findings land in work/BUILD/findings."""
    fuzzer = build_fuzzer(build, cache_root)
    directory = work / build
    corpus, seed_dir, findings = directory / "corpus", directory / "seeds", directory / "findings"
    shutil.rmtree(seed_dir, ignore_errors=True)
    shutil.rmtree(findings, ignore_errors=True)
    for path in (corpus, findings):
        path.mkdir(parents=True, exist_ok=True)
    n_seeds = seeds.write_seeds(build, seed_dir)
    entries = seeds.write_entries(build, directory / "entries.json")
    regressions = REGRESSIONS / build
    corpora = [corpus, seed_dir] + ([regressions] if regressions.is_dir() else [])
    env = dict(os.environ, ASAN_SYMBOLIZER_PATH=SYMBOLIZER,
               T4P4S_FUZZ_ARGS=runtime_args(build, entries, f"fuzz_{build}_{os.getpid()}"))
    command = [str(fuzzer), f"-max_total_time={max(1, int(seconds))}", f"-max_len={MAX_LEN}",
               f"-timeout={HANG_SECONDS}", "-rss_limit_mb=2048", "-print_final_stats=1",
               f"-artifact_prefix={findings}/", *extra_args, *map(str, corpora)]
    started = time.monotonic()
    # libFuzzer stops by itself at -max_total_time; the margin covers
    # loading the corpus and a last slow input
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", timeout=seconds + 300)
    result = FuzzResult(build=build, seconds=round(time.monotonic() - started, 1),
                        exit_status=proc.returncode, seed_inputs=n_seeds,
                        regression_inputs=len(list(regressions.glob("*"))) if regressions.is_dir() else 0,
                        findings=sorted(p.name for p in findings.iterdir()), log=proc.stdout)
    _parse(proc.stdout, result)
    return result


def _parse(log: str, result: FuzzResult):
    final = {name: int(value) for name, value in _FINAL.findall(log)}
    result.runs = final.get("number_of_executed_units", 0)
    result.execs_per_s = final.get("average_exec_per_sec", 0)
    result.peak_rss_mb = final.get("peak_rss_mb", 0)
    status = _STATUS.findall(log)
    if status:
        _, cov, ft, corp = status[-1]
        result.coverage_edges, result.features, result.corpus_inputs = int(cov), int(ft), int(corp)
