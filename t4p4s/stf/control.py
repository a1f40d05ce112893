"""A client for the compiled executable's --control socket (JSON lines),
and the process wrapper that starts an executable and waits until it
answers. Used by the STF runner and the tests."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from t4p4s.stf.parser import StfError


def parse_json_int(value) -> int:
    """Integers in the control protocol: JSON numbers or "0x1f"/"31" strings."""
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value, 0)
    raise ValueError(f"not an integer: {value!r}")


def test_eal_args(file_prefix: str, lcores: str = "0") -> list[str]:
    """EAL options for test runs that share the machine: no hugepages
    (DPDK 22.11 rejects --in-memory with --no-huge, so --no-shconf keeps
    runs from sharing state), no PCI scan, quiet logs."""
    return ["-l", lcores, "--no-huge", "-m", "256", "--no-shconf", "--no-pci",
            "--file-prefix", file_prefix, "--log-level", "*:warning"]


class ControlError(StfError):
    """The runtime answered {"ok": false, ...}."""

    def __init__(self, request: dict, reply: dict):
        self.request, self.reply = request, reply
        super().__init__(f"{request.get('cmd')} failed: {reply.get('error', '?')}: "
                         f"{reply.get('message', '')} (request {json.dumps(request)})")


class ControlClient:
    def __init__(self, path, timeout: float = 10.0):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(self.path)
        self._pending = b""

    def request(self, request: dict) -> dict:
        """One request, one reply; raises ControlError on {"ok": false}."""
        reply = self.raw(json.dumps(request))
        if not reply.get("ok"):
            raise ControlError(request, reply)
        return reply

    def raw(self, line: str) -> dict:
        """Send one line as is (tests send malformed ones) and parse the reply."""
        self.sock.sendall(line.encode() + b"\n")
        return self.read_reply()

    def send_lines(self, requests: list[dict]):
        """Sends requests without waiting for their replies (the runtime
        answers them in order): read_reply() once per request afterwards.
        Keep a batch small enough that its replies fit the socket buffer."""
        self.sock.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in requests))

    def read_reply(self) -> dict:
        """The next reply line, parsed."""
        while b"\n" not in self._pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise StfError(f"control socket {self.path} closed by the runtime")
            self._pending += chunk
        reply, self._pending = self._pending.split(b"\n", 1)
        try:
            return json.loads(reply)
        except json.JSONDecodeError:
            raise StfError(f"the runtime replied with invalid JSON: {reply[:200]!r}") from None

    def close(self):
        self.sock.close()


# sun_path holds 108 bytes with the terminating NUL.
MAX_SOCKET_PATH = 107


def _control_socket_path(run_dir: Path) -> tuple[Path, Path | None]:
    """The socket in the run directory, or in a short private directory
    (returned second, for removal) when the run directory is too deep for a
    UNIX socket address."""
    path = run_dir.resolve() / "control.sock"
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path, None
    short_dir = Path(tempfile.mkdtemp(prefix="t4p4s-ctl-"))
    return short_dir / "control.sock", short_dir


# DPDK 22.11's net_af_packet joins each port's socket to the fanout group
# (pid ^ ifindex) & 0xffff, and the kernel refuses (EINVAL) a group id that
# another process's socket holds on another interface: two runtimes on
# veths made one after the other (pids and ifindexes both close) collide
# now and then. Another process is another pid, so another group.
FANOUT_ATTEMPTS = 3
FANOUT_REFUSED = "could not set PACKET_FANOUT"


def fanout_group_taken(log: str) -> bool:
    """Whether a runtime that exited at startup failed on a fanout group id
    another process's af_packet socket holds (worth starting again)."""
    return FANOUT_REFUSED in log and "Invalid argument" in log


class RuntimeProcess:
    """A compiled executable running with a control socket. Always stop()
    it (it polls at 100% CPU); stop() is safe to call twice."""

    def __init__(self, executable, eal_args, app_args, run_dir, startup_timeout=30.0):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.control_path, self._socket_dir = _control_socket_path(self.run_dir)
        self.log_path = self.run_dir / "runtime.log"
        self.control_path.unlink(missing_ok=True)
        self.argv = [str(executable), *eal_args, "--",
                     "--control", str(self.control_path), *app_args]
        self.control: ControlClient | None = None
        for attempt in range(1, FANOUT_ATTEMPTS + 1):
            self._log = open(self.log_path, "wb")
            self.process = subprocess.Popen(self.argv, stdout=self._log,
                                            stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                self._connect(startup_timeout)
                return
            except StfError:
                if (attempt < FANOUT_ATTEMPTS and self.process.poll() is not None
                        and fanout_group_taken(self.log_tail())):
                    self._log.close()       # it exited: start another process
                    continue
                self.stop()
                raise
            except BaseException:
                self.stop()
                raise

    def _connect(self, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise StfError(f"the runtime exited with status {self.process.returncode} "
                               f"during startup:\n{self.log_tail()}")
            if self.control_path.exists():
                try:
                    self.control = ControlClient(self.control_path)
                    self.control.request({"cmd": "ping"})
                    return
                except OSError:
                    self.control = None
            if time.monotonic() > deadline:
                raise StfError(f"the runtime did not answer on {self.control_path} within "
                               f"{timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.05)

    def request(self, request: dict) -> dict:
        return self.control.request(request)

    def p4runtime_address(self, timeout: float = 10.0) -> str:
        """HOST:PORT of the P4Runtime server (started with --p4runtime), as
        the runtime prints it once it listens (port 0 picks a free one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(r"P4Runtime server on (\S+):(\d+)",
                              self.log_path.read_text(errors="replace"))
            if found:
                return f"{found.group(1)}:{found.group(2)}"
            time.sleep(0.05)
        raise StfError(f"no P4Runtime address in the log:\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        if not self._log.closed:
            self._log.flush()
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        # a sanitizer's report from its first line (the build of
        # `--variant=sanitize`): its last lines alone do not say what it found
        report = next((i for i, line in enumerate(text) if "ERROR: AddressSanitizer" in line
                       or "ERROR: LeakSanitizer" in line or "runtime error:" in line), None)
        start = len(text) - lines if report is None else min(report, len(text) - lines)
        return "\n".join("    " + line for line in text[max(0, start):])

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (a clean exit flushes and writes --stats-json), then SIGKILL."""
        if self.control:
            self.control.close()
            self.control = None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
        self.control_path.unlink(missing_ok=True)
        if self._socket_dir is not None:
            self._socket_dir.rmdir()
            self._socket_dir = None
        return self.process.returncode
