"""The power governor sidecar (power/, `python -m power`) as a process:
started on the targets' control sockets, serving gRPC where its spec says,
stopped with SIGTERM (its exit status is 0 when it stopped cleanly)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GRPC_LINE = re.compile(r"^power: gRPC server on (\S+)$", re.M)


@dataclass
class PowerSpec:
    targets: dict[str, Path]             # name -> control socket
    run_dir: Path
    grpc: str = "127.0.0.1:0"            # port 0: any free one (read from its log)
    period_ms: int = 100
    extra: list[str] = field(default_factory=list)   # --sysfs-root DIR, ...

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "power", "--grpc", self.grpc,
                "--period-ms", str(self.period_ms), *self.extra]
        for name, control in self.targets.items():
            argv += ["--target", f"{name}={control}"]
        return argv

    @staticmethod
    def environment() -> dict[str, str]:
        """Its environment: this one, with the repository importable (the
        `power` package) from any working directory."""
        return {**os.environ, "PYTHONPATH": str(REPO)}


class PowerSidecar:
    def __init__(self, spec: PowerSpec, startup_timeout: float = 30.0):
        self.spec = spec
        spec.run_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = spec.run_dir / "power.log"
        self._log = open(self.log_path, "wb")
        self._channels = []
        self.process = subprocess.Popen(spec.argv(), cwd=REPO, env=spec.environment(),
                                        stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self.address = self._wait_address(startup_timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_address(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = GRPC_LINE.search(self.log_text())
            if found:
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"the power sidecar did not start (status "
                           f"{self.process.poll()}):\n{self.log_text()[-3000:]}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
        for channel in self._channels:
            channel.close()
        self._channels.clear()
        return self.process.returncode

    def stub(self):
        """A synchronous power.proto stub on a new channel."""
        import grpc
        from power.service import stubs
        _, pb2_grpc = stubs()
        channel = grpc.insecure_channel(self.address)
        self._channels.append(channel)
        return pb2_grpc.PowerStub(channel)
