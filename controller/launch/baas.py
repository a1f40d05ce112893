"""The buffering service (baas/) as a process: its build and its supervisor.

build() makes build/baas[-VARIANT]/baas with baas/Makefile (once per
session and variant; make decides what is stale; concurrent callers wait
on one lock). Baas runs it like a target (t4p4s.stf.control's
RuntimeProcess: a --control socket whose `ping` means ready), attached to
the ethdev ports its vdevs make, and knows its gRPC address."""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

from t4p4s.stf.control import RuntimeProcess
from controller.launch.processes import eal_leftovers, eal_memory_args, remove_paths

REPO = Path(__file__).resolve().parents[2]
BAAS_SOURCE = REPO / "baas"
_runs = count()
GRPC_LINE = re.compile(r"baas: gRPC server on (\S+)$", re.M)


def build(variant: str = "release") -> Path:
    """The BaaS executable of this variant, built if stale."""
    suffix = "" if variant == "release" else f"-{variant}"
    build_dir = REPO / "build" / f"baas{suffix}"
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(REPO / "build" / f".baas{suffix}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(["make", "-s", "-C", str(BAAS_SOURCE), f"-j{os.cpu_count() or 1}",
                                 f"VARIANT={variant}"], capture_output=True, text=True,
                                timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"building the BaaS ({variant}) failed:\n{result.stdout}\n"
                           f"{result.stderr}")
    return build_dir / "baas"


@dataclass
class BaasSpec:
    """Everything needed to (re)start the BaaS."""
    executable: Path
    vdevs: list[str]
    lcore: int | str                         # EAL -l: one lcore, or a list ("2-3")
    run_dir: Path
    file_prefix: str                         # the EAL file prefix, without its generation
    grpc: str = "127.0.0.1:0"                # --grpc; port 0: any free one (read from its log)
    netns: str | None = None                 # run inside this network namespace
    options: list[str] = field(default_factory=list)   # --t-poll-retransmit MS, ...
    eal: list[str] | None = None              # instead of the test EAL arguments
    hugepages: bool = False                  # --in-memory on hugepages, else --no-huge

    def eal_prefix(self, generation: int) -> str:
        return f"{self.file_prefix}-{generation}"

    def eal_args(self, generation: int) -> list[str]:
        eal = list(self.eal) if self.eal is not None else eal_memory_args(
            self.eal_prefix(generation), str(self.lcore), self.hugepages)
        for vdev in self.vdevs:
            eal += ["--vdev", vdev]
        return eal

    def app_args(self) -> list[str]:
        return ["--grpc", self.grpc, *self.options]

    def argv(self, generation: int, control: Path) -> list[str]:
        """The whole command line (outside a namespace), as RuntimeProcess
        runs it."""
        return [str(self.executable), *self.eal_args(generation), "--",
                "--control", str(control), *self.app_args()]


class Baas:
    """A running BaaS; restart() brings it back on the same ports (and the
    same gRPC port once it had one), with nothing buffered."""

    def __init__(self, spec: BaasSpec):
        self.spec = spec
        self.generation = 0
        self.process: RuntimeProcess | None = None
        self._channels = []
        self.start()

    def start(self):
        self.generation += 1
        if self.spec.run_dir.exists():
            shutil.rmtree(self.spec.run_dir)
        executable, eal = self.spec.executable, self.spec.eal_args(self.generation)
        if self.spec.netns is not None:
            executable, eal = "ip", ["netns", "exec", self.spec.netns, str(executable), *eal]
        self.process = RuntimeProcess(executable, eal, self.spec.app_args(), self.spec.run_dir)
        self.spec.grpc = self.grpc_address()    # a restart listens where clients know it

    def grpc_address(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = GRPC_LINE.search(self.log_text())
            if found:
                return found.group(1)
            time.sleep(0.05)
        raise RuntimeError(f"no gRPC address in the BaaS log:\n{self.log_text()[-3000:]}")

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    def request(self, command: dict) -> dict:
        return self.process.request(command)

    def stats(self) -> dict:
        return self.request({"cmd": "stats"})

    def drb(self, ue_id: int, lcid: int) -> dict:
        return self.request({"cmd": "drb", "ue_id": ue_id, "lcid": lcid})

    def kill(self):
        """Dies as a crash would; what it left (its EAL runtime directory,
        which a clean exit removes) is removed, as Target.kill does."""
        self._close_channels()
        if self.process.alive():
            os.killpg(self.process.process.pid, signal.SIGKILL)
        self.process.process.wait()
        self.process.stop()
        remove_paths(eal_leftovers(self.spec.eal_prefix(self.generation)))

    def restart(self):
        self.stop()
        self.start()

    def stop(self) -> int | None:
        """SIGTERM (a clean exit writes --stats-json); its exit status (a
        sanitizer build's report makes it non-zero)."""
        status = self.process.stop() if self.process is not None else None
        self._close_channels()     # after: a client's stream sees the server end it
        return status

    def log_text(self) -> str:
        return self.process.log_path.read_text(errors="replace")

    @property
    def address(self) -> str:
        """Its gRPC server's address (HOST:PORT or unix:PATH)."""
        return self.spec.grpc

    def stub(self):
        """A synchronous baas.proto stub on a new channel (closed when the
        process stops)."""
        from controller import baas as baas_client   # the stubs are generated on first use
        import grpc
        _, pb2_grpc = baas_client.stubs()
        channel = grpc.insecure_channel(self.address)
        self._channels.append(channel)
        return pb2_grpc.BaasStub(channel)

    def wait_received(self, pdus: int, timeout: float = 10.0):
        """GetStats until it has taken `pdus` copies in (exactly); its
        GlobalStats."""
        from controller import baas as baas_client
        pb2, _ = baas_client.stubs()
        stub = self.stub()
        deadline = time.monotonic() + timeout
        while True:
            stats = stub.GetStats(pb2.StatsRequest(), timeout=5).global_stats
            if stats.counters.pdus_received >= pdus or time.monotonic() > deadline:
                assert stats.counters.pdus_received == pdus, self.log_text()[-3000:]
                return stats
            time.sleep(0.02)

    def _close_channels(self):
        for channel in self._channels:
            channel.close()
        self._channels.clear()


# a small pool (the default --max-pdus needs more than -m 256 gives), and a
# t-PollRetransmit long enough that no DRB reaches maxRetxThreshold (and
# is forgotten) while a test looks at it: nobody answers its polls here
TEST_OPTIONS = ["--max-pdus", "16384", "--t-poll-retransmit", "60000"]


def start_on_port(executable: Path, run_dir: Path, frames: list[bytes] | None = None,
                  options: list[str] | None = None) -> Baas:
    """A BaaS with the test EAL arguments on one port: net_null0, or with
    frames a net_pcap port that replays them once at start."""
    if frames:
        from scapy.layers.l2 import Ether
        from scapy.utils import wrpcap
        pcap = run_dir.with_suffix(".pcap")        # Baas empties run_dir at start
        wrpcap(str(pcap), [Ether(f) for f in frames])
        vdev = f"net_pcap0,rx_pcap={pcap},tx_pcap={run_dir.with_suffix('.out.pcap')}"
    else:
        vdev = "net_null0"
    return Baas(BaasSpec(executable, [vdev], lcore=0, run_dir=run_dir,
                         file_prefix=f"baas-test-{os.getpid()}-{next(_runs)}",
                         options=TEST_OPTIONS if options is None else options))
