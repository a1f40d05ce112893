"""The UE emulator as a process of its own (`python -m testbench.ue`), for
tests and demos: started on an interface inside a network namespace,
stopped with SIGTERM, its summary read from the JSON it writes.

    ue = UeEmulatorProcess("t1-ran", "ran", Path("run/ue.json"), loss=0.01, seed=7).start()
    ...  # traffic
    summary = ue.stop()            # UeEmulator.summary() as written by the process
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from testbench.ue.__main__ import READY_LINE

REPO_ROOT = Path(__file__).resolve().parents[2]


class UeEmulatorProcess:
    def __init__(self, netns: str | None, interface: str, json_path: Path, *, loss: float = 0.0,
                 seed: int = 0, uplink_loss: float = 0.0, duration_s: float | None = None,
                 t_reassembly_ms: int | None = None, t_status_prohibit_ms: int | None = None,
                 extra_args: list[str] = (), python: str = sys.executable):
        self.json_path = Path(json_path)
        self.log_path = self.json_path.with_suffix(".log")
        self.command = [python, "-m", "testbench.ue", "--interface", interface,
                        "--loss", str(loss), "--uplink-loss", str(uplink_loss),
                        "--seed", str(seed), "--json", str(self.json_path)]
        if netns is not None:
            self.command += ["--netns", netns]
        if duration_s is not None:
            self.command += ["--duration", str(duration_s)]
        if t_reassembly_ms is not None:
            self.command += ["--t-reassembly-ms", str(t_reassembly_ms)]
        if t_status_prohibit_ms is not None:
            self.command += ["--t-status-prohibit-ms", str(t_status_prohibit_ms)]
        self.command += list(extra_args)
        self.process: subprocess.Popen | None = None
        self.summary: dict | None = None

    def start(self, timeout: float = 30.0) -> "UeEmulatorProcess":
        """Starts the process; returns once its socket is bound."""
        self.json_path.parent.mkdir(parents=True, exist_ok=True)
        self.json_path.unlink(missing_ok=True)
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT)] + ([environment["PYTHONPATH"]] if environment.get("PYTHONPATH") else []))
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(self.command, cwd=REPO_ROOT, env=environment,
                                            stdout=subprocess.PIPE, stderr=log, text=True,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        line = ""
        while not line:
            remaining = deadline - time.monotonic()
            readable, _, _ = select.select([self.process.stdout], [], [], max(remaining, 0))
            if readable:
                line = self.process.stdout.readline()
                if line.strip() == READY_LINE:
                    return self
            if self.process.poll() is not None or remaining <= 0:
                self.kill()
                raise RuntimeError(f"the UE emulator did not start ({' '.join(self.command)}):\n"
                                   f"{self.log_path.read_text()}")
            line = ""
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30.0) -> dict:
        """SIGTERM, wait for the exit, read the summary JSON."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> dict:
        """Waits for the exit (the end of --duration), reads the summary."""
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"the UE emulator did not stop within {timeout} s:\n"
                               f"{self.log_path.read_text()}")
        self.process.stdout.close()
        if status != 0 or not self.json_path.exists():
            raise RuntimeError(f"the UE emulator exited with {status}, summary "
                               f"{'written' if self.json_path.exists() else 'missing'}:\n"
                               f"{self.log_path.read_text()}")
        self.summary = json.loads(self.json_path.read_text())
        return self.summary

    def kill(self):
        if self.alive():
            self.process.kill()
            self.process.wait()
