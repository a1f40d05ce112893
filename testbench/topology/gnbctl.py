"""gnbctl, the controller's command line (controller/bin/gnbctl), run
against a topology file; the testbench drives every target through it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

GNBCTL = Path(__file__).resolve().parents[2] / "controller" / "bin" / "gnbctl"
POLL_S = 0.002


class GnbctlError(RuntimeError):
    pass


class Gnbctl:
    def __init__(self, topology: Path):
        self.topology = topology
        self.last_returned_at: float | None = None   # time.monotonic() when the last command returned

    def __call__(self, *args: str, timeout: float = 300) -> dict | list | None:
        """Runs `gnbctl --json ARGS`; its JSON answer (None when it prints none)."""
        command = [str(GNBCTL), "--topology", str(self.topology), "--json", *map(str, args)]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GnbctlError(f"gnbctl {' '.join(map(str, args))} did not finish in {timeout} s") \
                from None
        self.last_returned_at = time.monotonic()
        if result.returncode != 0:
            raise GnbctlError(f"gnbctl {' '.join(map(str, args))} failed "
                              f"({result.returncode}): {result.stderr.strip()}")
        return json.loads(result.stdout) if result.stdout.strip() else None

    def start_watch(self, log_path: Path) -> "Watch":
        """`gnbctl run`: the controller in the foreground, watching the
        targets (host failure and return, NIC restart); stop() it."""
        return Watch(self.topology, log_path)


def wait_until(condition, limit_s: float) -> float | None:
    """Seconds until condition() held, or None within limit_s."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        if condition():
            return time.monotonic() - start
        time.sleep(POLL_S)
    return None


class Watch:
    """A running `gnbctl --json run` and the events it printed (one JSON
    object a line: at (time.time()), target, what, seconds, detail)."""

    def __init__(self, topology: Path, log_path: Path):
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.started_at = time.time()
        self.process = subprocess.Popen(
            [str(GNBCTL), "--topology", str(topology), "--json", "run"],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self) -> bool:
        return self.process.poll() is None

    def events(self, what: str | None = None, target: str | None = None,
               after: float = 0.0) -> list[dict]:
        """Its events so far, those of `what` about `target` after `after`."""
        found = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue        # a line being written, or an error message
            if isinstance(event, dict) and "what" in event and event["at"] >= after \
                    and what in (None, event["what"]) and target in (None, event["target"]):
                found.append(event)
        return found

    def wait_event(self, what: str, target: str | None = None, after: float = 0.0,
                   timeout: float = 10.0) -> dict | None:
        """The first such event, waiting up to `timeout` s for it (while
        the watcher runs); None if none came."""
        found = []

        def came() -> bool:
            found[:] = self.events(what, target, after)
            return bool(found) or not self.alive()
        wait_until(came, timeout)
        return found[0] if found else None

    def kill(self):
        """SIGKILL, as a crash."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")
