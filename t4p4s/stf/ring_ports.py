"""The runtime's --test-ports for STF runs ("ring" ports): each P4 port a net_ring port
inside the runtime, fed with the control socket's port_inject and emptied
with port_drain. No kernel is in between, so a frame of any length (0
bytes and up) goes in and comes out exactly as the program leaves it, and
no other process's frames can arrive on a port.

Same interface as veth.PortCapture (send, total, last_arrival, snapshot,
close), so the runner settles and compares the same way in both modes.
"""
from __future__ import annotations

import time

from t4p4s.stf.control import ControlClient, ControlError
from t4p4s.stf.parser import StfError


def test_ports_app_args(n_ports: int) -> list[str]:
    return ["--test-ports", str(n_ports)]


class RingPortCapture:
    """Frames the pipeline sent per port, in order, taken with port_drain
    whenever total() or snapshot() is asked (the runner's settle loop asks
    every QUIET_INTERVAL)."""

    def __init__(self, control: ControlClient, n_ports: int):
        self.control = control
        self.frames: list[list[bytes]] = [[] for _ in range(n_ports)]
        self.last_arrival = time.monotonic()

    def send(self, port: int, frame: bytes) -> int:
        """Inject `frame` as it is; returns 0 (bytes appended: none)."""
        try:
            self.control.request({"cmd": "port_inject", "port": port, "frame": frame.hex()})
        except ControlError as error:
            raise StfError(f"port {port}: {error.reply.get('message', error)}") from None
        return 0

    def _drain(self):
        # one batch of small requests, then the replies in order: the
        # runtime answers each before reading the next, so nothing blocks
        self.control.send_lines([{"cmd": "port_drain", "port": p}
                                 for p in range(len(self.frames))])
        replies = [self.control.read_reply() for _ in self.frames]
        for port, reply in enumerate(replies):
            if not reply.get("ok"):
                raise StfError(f"port_drain on port {port} failed: {reply.get('message')}")
            if reply["frames"]:
                self.frames[port] += [bytes.fromhex(f) for f in reply["frames"]]
                self.last_arrival = time.monotonic()

    def total(self) -> int:
        self._drain()
        return sum(len(frames) for frames in self.frames)

    def snapshot(self) -> list[list[bytes]]:
        """What was taken, after a last drain if the runtime still answers
        (when it died, the run fails on that, with its log)."""
        try:
            self._drain()
        except (StfError, OSError):
            pass
        return [list(frames) for frames in self.frames]

    def close(self):
        pass
