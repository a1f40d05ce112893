"""gnbctl, the controller's command line (controller/bin/gnbctl), run
against a topology file; the testbench drives every target through it."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

GNBCTL = Path(__file__).resolve().parents[2] / "controller" / "bin" / "gnbctl"


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

    def start_watch(self, log_path: Path) -> subprocess.Popen:
        """`gnbctl run`: the controller in the foreground, watching the
        targets (host failure and return); stop it with terminate()."""
        log = open(log_path, "w")
        return subprocess.Popen([str(GNBCTL), "--topology", str(self.topology), "run"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
