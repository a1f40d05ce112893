"""The BaaS as a process for its gRPC API tests (and gnbctl's:
testbench/tests/controller/test_gnbctl_baas.py imports BaasProcess and
amd_frame from here).

`start_baas(frames=..., options=...)` runs build/baas/baas (built with
baas/Makefile first; with pytest's `--variant sanitize`,
build/baas-sanitize/baas) on one port: `net_null0` (no frames: it receives only
empty frames, dropped as not_bearer), or, with frames, a `net_pcap` port
that replays them once at start, so the BaaS holds those DRBs before the
test begins. App arguments: `--grpc 0` (the port is read from the line it
prints) and the test's options. Stopped with SIGTERM at the test's end,
where its exit status is checked."""
from __future__ import annotations

import fcntl
import itertools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import grpc
import pytest

from controller import baas as baas_client

REPO = Path(__file__).resolve().parents[3]

EXECUTABLE = REPO / "build" / "baas" / "baas"
GRPC_LINE = re.compile(r"baas: gRPC server on (\S+):(\d+)")
SHIM_AM, SHIM_RLC_SN18, SHIM_PDCP_SN18 = 0x01, 0x02, 0x04
# a small pool (the default --max-pdus needs more than -m 256 gives), and a
# t-PollRetransmit long enough that no DRB reaches maxRetxThreshold (and
# is forgotten) while a test looks at it: nobody answers its polls here
DEFAULT_OPTIONS = ["--max-pdus", "16384", "--t-poll-retransmit", "60000"]
_runs = itertools.count()


def build(variant: str = "release") -> Path:
    """build/baas[-VARIANT]/baas, made if stale (one make at a time)."""
    suffix = "" if variant == "release" else f"-{variant}"
    (REPO / "build").mkdir(exist_ok=True)
    with open(REPO / "build" / f".baas{suffix}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["make", "-s", "-C", str(REPO / "baas"),
                               f"-j{os.cpu_count() or 1}", f"VARIANT={variant}"],
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"building the BaaS ({variant}) failed:\n{done.stdout}\n"
                           f"{done.stderr}")
    return REPO / "build" / f"baas{suffix}" / "baas"


def amd_frame(ue_id: int, lcid: int, sn: int, sn_bits: int = 12) -> bytes:
    """An RLC AMD PDU copy as a target sends it to the BaaS (docs/wire-format.md)."""
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    from testbench.gnb.layers import BearerShim, Pdcp12, Pdcp18, RlcAmData12, RlcAmData18
    flags = SHIM_AM | (SHIM_RLC_SN18 | SHIM_PDCP_SN18 if sn_bits == 18 else 0)
    rlc = (RlcAmData18 if sn_bits == 18 else RlcAmData12)(sn=sn)
    pdcp = (Pdcp18 if sn_bits == 18 else Pdcp12)(sn=sn)
    return bytes(Ether(dst="02:00:00:00:02:02", src="02:00:00:00:01:01", type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=lcid, flags=flags) / rlc / pdcp
                 / Raw(sn.to_bytes(4, "big") * 10))


class BaasProcess:
    """One build/baas/baas; `address` is its gRPC server's HOST:PORT."""

    def __init__(self, run_dir: Path, frames: list[bytes] | None = None,
                 options: list[str] | None = None, executable: Path = EXECUTABLE):
        self.run_dir = run_dir
        self._channels = []
        run_dir.mkdir(parents=True, exist_ok=True)
        self.prefix = f"baas-test-{os.getpid()}-{next(_runs)}"
        if frames:
            from scapy.layers.l2 import Ether
            from scapy.utils import wrpcap
            wrpcap(str(run_dir / "in.pcap"), [Ether(f) for f in frames])
            vdev = (f"net_pcap0,rx_pcap={run_dir / 'in.pcap'},"
                    f"tx_pcap={run_dir / 'out.pcap'}")
        else:
            vdev = "net_null0"
        eal = ["--no-huge", "-m", "256", "--no-shconf", "--no-pci", "-l", "0",
               "--file-prefix", self.prefix, "--log-level", "*:warning", "--vdev", vdev]
        app = ["--grpc", "0", *(DEFAULT_OPTIONS if options is None else options)]
        self.log_path = run_dir / "baas.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([str(executable), *eal, "--", *app],
                                            stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self.address = self._wait_address()
        except BaseException:
            self.kill()
            raise

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _wait_address(self, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = GRPC_LINE.search(self.log())
            if found:
                return f"{found.group(1)}:{found.group(2)}"
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"the BaaS printed no gRPC address (exit {self.process.poll()}):\n"
                           f"{self.log()[-3000:]}")

    def stub(self):
        """A synchronous stub on a new channel (closed with the process)."""
        _, pb2_grpc = baas_client.stubs()
        channel = grpc.insecure_channel(self.address)
        self._channels.append(channel)
        return pb2_grpc.BaasStub(channel)

    def wait_received(self, pdus: int, timeout: float = 10.0) -> dict:
        """GetStats until the BaaS has taken `pdus` copies in; its counters."""
        pb2, _ = baas_client.stubs()
        stub = self.stub()
        deadline = time.monotonic() + timeout
        while True:
            stats = stub.GetStats(pb2.StatsRequest(), timeout=5).global_stats
            if stats.counters.pdus_received >= pdus or time.monotonic() > deadline:
                assert stats.counters.pdus_received == pdus, self.log()[-3000:]
                return stats
            time.sleep(0.02)

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then its exit status (SIGKILL after timeout: an error)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"the BaaS did not stop within {timeout} s:\n"
                                     f"{self.log()[-3000:]}")
        self._cleanup()
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._cleanup()

    def _cleanup(self):
        for channel in self._channels:
            channel.close()
        self._channels.clear()
        shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)


@pytest.fixture(scope="session")
def baas_executable(dpdk_environment, build_variant) -> Path:
    """The BaaS of pytest's --variant (release, or sanitize: ASan + UBSan)."""
    return build(build_variant)


@pytest.fixture
def start_baas(baas_executable, tmp_path):
    """start_baas(frames=None, options=None) -> a running BaasProcess; each
    is stopped at the test's end, and must exit 0 (a clean stop, its gRPC
    server included)."""
    started: list[BaasProcess] = []

    def start(frames: list[bytes] | None = None, options: list[str] | None = None):
        process = BaasProcess(tmp_path / f"baas{len(started)}", frames, options,
                              baas_executable)
        started.append(process)
        return process
    yield start
    failures = []
    for process in started:
        if process.process.poll() is not None:
            process._cleanup()
            continue
        status = process.stop()
        if status != 0:
            failures.append(f"the BaaS exited with {status}:\n{process.log()[-2000:]}")
    assert not failures, "\n".join(failures)
