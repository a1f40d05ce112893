"""veth pairs for STF runs: the runtime's net_af_packet port on one end
("dp" end), the test's raw AF_PACKET socket on the other ("test" end).

The kernel must not put frames of its own on the pairs: IPv6 is disabled
before a link goes up (no router solicitations, no MLD) and no addresses
are assigned (no ARP). Frames the test end itself sends show up on its
socket as PACKET_OUTGOING and are ignored.
"""
from __future__ import annotations

import itertools
import os
import select
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from t4p4s.stf.parser import StfError

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ETH_HEADER_LEN = 14
_sequence = itertools.count()


def _ip(*args: str):
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if result.returncode:
        raise StfError(f"'ip {' '.join(args)}' failed: {result.stderr.strip()}")


def _disable_ipv6(interface: str):
    Path(f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6").write_text("1\n")


@dataclass
class VethPair:
    dp: str      # given to the runtime (net_af_packet iface=)
    test: str    # where the test injects and captures


class NetworkNamespace:
    """A named network namespace (`ip netns`) whose kernel stays silent on
    the links moved into it: IPv6 is off by default there, so a link that
    arrives and goes up sends no router solicitations or MLD reports."""

    def __init__(self, name: str):
        self.name = name
        _ip("netns", "add", name)
        try:
            for scope in ("all", "default"):
                _ip("netns", "exec", name, "sysctl", "-qw",
                    f"net.ipv6.conf.{scope}.disable_ipv6=1")
        except BaseException:
            self.close()
            raise

    def close(self):
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=10)


def add_veth_pair(pair: VethPair, test_netns: NetworkNamespace | None = None):
    """Creates the pair with both ends up and silent; the test end inside
    test_netns when given. Deleting the dp end deletes both."""
    peer = ["peer", "name", pair.test] + (["netns", test_netns.name] if test_netns else [])
    _ip("link", "add", pair.dp, "type", "veth", *peer)
    try:
        _disable_ipv6(pair.dp)
        _ip("link", "set", pair.dp, "up")
        if test_netns is None:
            _disable_ipv6(pair.test)
            _ip("link", "set", pair.test, "up")
        else:
            _ip("-n", test_netns.name, "link", "set", pair.test, "up")
    except BaseException:
        subprocess.run(["ip", "link", "del", pair.dp], capture_output=True, timeout=10)
        raise


class VethPorts:
    """One veth pair per P4 port 0..n-1, named uniquely per process and run
    (interface names have at most 15 characters)."""

    def __init__(self, n_ports: int):
        run = f"t4{os.getpid():x}{next(_sequence):x}"
        self.pairs = [VethPair(f"{run}p{p}d", f"{run}p{p}t") for p in range(n_ports)]
        self._created: list[VethPair] = []
        try:
            for pair in self.pairs:
                add_veth_pair(pair)
                self._created.append(pair)
        except BaseException:
            self.close()
            raise

    def close(self):
        while self._created:
            pair = self._created.pop()
            subprocess.run(["ip", "link", "del", pair.dp], capture_output=True, timeout=10)


class PortCapture:
    """Captures every frame arriving at the test ends, in arrival order per
    port, from before the first injection to close()."""

    def __init__(self, pairs: list[VethPair]):
        self.sockets: list[socket.socket] = []
        self.frames: list[list[bytes]] = [[] for _ in pairs]
        self.last_arrival = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        for pair in pairs:
            # Protocol 0 until bound: a packet socket opened with ETH_P_ALL
            # receives from every interface (loopback gRPC, other tests'
            # veths) until bind() narrows it to one, and those frames
            # stayed queued as this port's captures.
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            sock.bind((pair.test, ETH_P_ALL))
            self.sockets.append(sock)
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self):
        port_of = {sock.fileno(): port for port, sock in enumerate(self.sockets)}
        while not self._stop.is_set():
            readable, _, _ = select.select(self.sockets, [], [], 0.05)
            for sock in readable:
                frame, address = sock.recvfrom(65535)
                if address[2] == PACKET_OUTGOING:
                    continue
                with self._lock:
                    self.frames[port_of[sock.fileno()]].append(frame)
                    self.last_arrival = time.monotonic()

    def send(self, port: int, frame: bytes) -> int:
        """Inject `frame`; returns how many zero bytes were appended: the
        kernel refuses to send a frame shorter than an Ethernet header on a
        veth, where p4c's STF tests (replayed from pcap files on bmv2) may
        use shorter packets."""
        padding = max(0, ETH_HEADER_LEN - len(frame))
        self.sockets[port].send(frame + bytes(padding))
        return padding

    def total(self) -> int:
        with self._lock:
            return sum(len(frames) for frames in self.frames)

    def snapshot(self) -> list[list[bytes]]:
        with self._lock:
            return [list(frames) for frames in self.frames]

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2)
        for sock in self.sockets:
            sock.close()
