"""Shared fixtures: the repository, a session-wide compile cache, the
`t4p4s` command, the STF runner, and compiled executables on net_pcap ports
with a control socket.

Nothing is skipped silently: without DPDK, root or the tools the tests need,
the tests that need them fail and say what is missing.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
T4P4S_CLI = REPO_ROOT / "t4p4s" / "bin" / "t4p4s"
CACHE_ROOT = REPO_ROOT / "build" / "t4p4s-cache"

sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

from t4p4s.driver import VARIANTS  # noqa: E402
from t4p4s.stf.compile_cache import compile_cached  # noqa: E402
from t4p4s.stf.control import RuntimeProcess, test_eal_args  # noqa: E402


def _missing_prerequisites() -> list[str]:
    missing = []
    if os.geteuid() != 0:
        missing.append("root (veth pairs, AF_PACKET sockets)")
    if subprocess.run(["pkg-config", "--exists", "libdpdk"]).returncode:
        missing.append("DPDK development files (pkg-config libdpdk)")
    for tool in ("ip", "cpp", "gcc", "make"):
        if not shutil.which(tool):
            missing.append(f"the '{tool}' command")
    return missing


def pytest_addoption(parser):
    parser.addoption("--variant", choices=VARIANTS[:2], default="release",
                     help="build of the runtime the compiled programs link: release, or "
                          "sanitize (ASan + UBSan, every report fails the run); `make test` "
                          "runs the STF and gNB tests with both")


@pytest.fixture(scope="session")
def build_variant(request) -> str:
    return request.config.getoption("variant")


@pytest.fixture(scope="session")
def dpdk_environment():
    """Requested by every test that runs an executable; fails (never skips)
    with what is missing. `make setup` installs it."""
    missing = _missing_prerequisites()
    if missing:
        pytest.fail("cannot run DPDK tests; missing: " + ", ".join(missing)
                    + " (run 'make setup' as root)", pytrace=False)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def cache_root() -> Path:
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    return CACHE_ROOT


@pytest.fixture(scope="session")
def compiled(cache_root, dpdk_environment, build_variant):
    """compiled(path_to_p4) -> build with p4info_text_path, c_path,
    executable_path (of --variant); each program is compiled once per
    content (and reused across sessions while the compiler and runtime
    sources are unchanged)."""
    def compile_program(p4_path):
        return compile_cached(Path(p4_path), cache_root, variant=build_variant)
    return compile_program


@pytest.fixture(scope="session")
def t4p4s_cli():
    """t4p4s_cli(*args, timeout=..) -> CompletedProcess (text, captured)."""
    def run(*args, timeout=600, cwd=None):
        return subprocess.run([str(T4P4S_CLI), *map(str, args)], capture_output=True,
                              text=True, timeout=timeout, cwd=cwd)
    return run


@pytest.fixture(scope="session")
def run_stf(cache_root, dpdk_environment, build_variant):
    """run_stf(program.p4, test.stf or a list of parsed commands) -> StfOutcome."""
    from t4p4s.stf.runner import run_stf as run_commands, run_stf_file

    def run(p4_path, stf, **options):
        options.setdefault("cache_root", cache_root)
        options.setdefault("variant", build_variant)
        if isinstance(stf, (str, Path)):
            return run_stf_file(p4_path, stf, **options)
        return run_commands(p4_path, stf, **options)
    return run


_pcap_runs = itertools.count()


@dataclass
class PcapRun:
    """An executable whose port N reads inN.pcap once and writes outN.pcap."""
    runtime: RuntimeProcess
    run_dir: Path
    n_frames_in: int
    outputs: list[list[bytes]] = field(default_factory=list)
    exit_status: int | None = None

    def request(self, request: dict) -> dict:
        return self.runtime.request(request)

    def wait_received(self, timeout: float = 20.0) -> dict:
        """Until the runtime has received every frame of the input pcaps;
        returns the stats at that point."""
        deadline = time.monotonic() + timeout
        while True:
            stats = self.request({"cmd": "stats"})
            received = sum(port["rx"] for port in stats["ports"])
            if received >= self.n_frames_in:
                time.sleep(0.1)        # the last burst's transmissions
                return self.request({"cmd": "stats"})
            assert self.runtime.alive(), f"runtime died:\n{self.runtime.log_tail()}"
            assert time.monotonic() < deadline, \
                f"runtime received {received} of {self.n_frames_in} frames"
            time.sleep(0.02)

    def stop(self) -> list[list[bytes]]:
        """Clean exit (pcap files are complete only then); the frames sent per port."""
        from scapy.utils import RawPcapReader
        self.exit_status = self.runtime.stop()
        self.outputs = []
        for port in itertools.count():
            path = self.run_dir / f"out{port}.pcap"
            if not path.exists():
                break
            self.outputs.append([frame for frame, _ in RawPcapReader(str(path))])
        return self.outputs


@pytest.fixture
def pcap_runtime(dpdk_environment, cache_root):
    """pcap_runtime(build, inputs=[[frame, ...] per port], entries=[...]) ->
    PcapRun with a --control socket; stopped at the end of the test."""
    from scapy.utils import RawPcapWriter
    started: list[PcapRun] = []

    def start(build, inputs, entries=(), app_args=()):
        run_dir = cache_root / "runs" / f"pcap-{os.getpid()}-{next(_pcap_runs)}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        eal = test_eal_args(run_dir.name)
        for port, frames in enumerate(inputs):
            writer = RawPcapWriter(str(run_dir / f"in{port}.pcap"), linktype=1, sync=True)
            writer.write_header(None)
            for frame in frames:
                writer.write(frame)
            writer.close()
            eal += ["--vdev", f"net_pcap{port},rx_pcap={run_dir}/in{port}.pcap,"
                              f"tx_pcap={run_dir}/out{port}.pcap"]
        app = ["--governor", "nap", *app_args]
        if entries:
            (run_dir / "entries.json").write_text(json.dumps(list(entries), indent=1))
            app += ["--entries", str(run_dir / "entries.json")]
        runtime = RuntimeProcess(build.executable_path, eal, app, run_dir)
        run = PcapRun(runtime, run_dir, sum(len(frames) for frames in inputs))
        started.append(run)
        return run

    yield start
    for run in started:
        run.runtime.stop()

