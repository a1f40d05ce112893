"""Downlink GTP-U traffic into the N3 veth from the `n3` namespace at a
controlled rate, and captures on the radio and BaaS sides.

Frame k of a run belongs to DRB drbs[k % len(drbs)] and carries k in its
inner packet, so the radio output says which sent frame each output frame
is (loss, duplicates and order are checked per frame, sn_check.py).
The DRBs are the ones `gnbctl drb load` generates (hybrid contract)."""
from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.utils import RawPcapReader

from testbench.gnb.frames import DlDrb, DownlinkPacket
from controller.launch.namespaces import packet_socket

FIRST_TEID = 0x10000
QFI = 9
INDEX_BYTES = 8
INNER_PAYLOAD_BYTES = 40
TEID_OFFSET = 14 + 20 + 8 + 4       # Ethernet, IPv4 without options, UDP, GTP-U flags/type/length


def generated_drb(index: int) -> DlDrb:
    """DRB i as `gnbctl drb load` installs it on every target."""
    return DlDrb(teid=FIRST_TEID + index, drb_index=index, ue_id=index, lcid=4, rlc_am=True,
                 rlc_sn18=True, pdcp_sn18=True, default_qfi=QFI,
                 ue_mac=":".join(f"{b:02x}" for b in (0x020000000000 | index).to_bytes(6, "big")))


def _inner_template() -> bytes:
    return bytes(IP(src="198.51.100.7", dst="10.45.0.2", id=0)
                 / UDP(sport=443, dport=40000, chksum=0) / bytes(INNER_PAYLOAD_BYTES))


_INNER_TEMPLATE = _inner_template()
_INNER_HEADER_BYTES = len(_INNER_TEMPLATE) - INNER_PAYLOAD_BYTES


def inner_packet(frame_index: int) -> bytes:
    """The UE's packet inside frame k: IPv4/UDP (checksum 0) whose payload
    starts with k."""
    return (_INNER_TEMPLATE[:_INNER_HEADER_BYTES] + frame_index.to_bytes(INDEX_BYTES, "big")
            + _INNER_TEMPLATE[_INNER_HEADER_BYTES + INDEX_BYTES:])


def frame_index_of(inner: bytes) -> int | None:
    """k from an inner packet inner_packet(k) made; None for anything else."""
    if len(inner) != len(_INNER_TEMPLATE):
        return None
    index = int.from_bytes(inner[_INNER_HEADER_BYTES:_INNER_HEADER_BYTES + INDEX_BYTES], "big")
    return index if inner == inner_packet(index) else None


def downlink_packet(drb: int, frame_index: int) -> DownlinkPacket:
    return DownlinkPacket(generated_drb(drb), inner_packet(frame_index), qfi=QFI)


class DownlinkFrames:
    """Frame k of the run, made by patching one template (scapy builds
    only the template: 65,536 DRBs at tens of kpps leave no time for more)."""

    def __init__(self, drbs: list[int]):
        self.drbs = list(drbs)
        self.template = bytearray(downlink_packet(0, 0).n3_frame())
        self.index_offset = len(self.template) - INNER_PAYLOAD_BYTES

    def drb_of(self, frame_index: int) -> int:
        return self.drbs[frame_index % len(self.drbs)]

    def frame(self, frame_index: int) -> bytes:
        frame = self.template
        frame[TEID_OFFSET:TEID_OFFSET + 4] = (FIRST_TEID + self.drb_of(frame_index)).to_bytes(4, "big")
        frame[self.index_offset:self.index_offset + INDEX_BYTES] = frame_index.to_bytes(INDEX_BYTES, "big")
        return bytes(frame)


class PacedSender:
    """Sends frames 0, 1, 2, ... at `rate_pps` from a thread, in ticks of
    about a millisecond, until stop(); `sent` counts them."""

    TICK_S = 0.001

    def __init__(self, netns: str, interface: str, frames: DownlinkFrames, rate_pps: float):
        self.frames = frames
        self.rate_pps = rate_pps
        self.sent = 0
        self.send_errors = 0
        self._socket = packet_socket(netns, interface)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="paced-sender")
        self.started_at = self.stopped_at = None

    def start(self) -> "PacedSender":
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def _run(self):
        start = time.perf_counter()
        while not self._stop.is_set():
            due = int((time.perf_counter() - start) * self.rate_pps)
            while self.sent < due:
                try:
                    self._socket.send(self.frames.frame(self.sent))
                    self.sent += 1
                except BlockingIOError:
                    self.send_errors += 1        # the veth queue is full: retry next tick
                    break
            time.sleep(self.TICK_S)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        self.stopped_at = time.monotonic()
        self._socket.close()
        return self.sent

    def wait_sent(self, count: int, timeout: float):
        deadline = time.monotonic() + timeout
        while self.sent < count and time.monotonic() < deadline:
            time.sleep(0.01)


@dataclass
class CaptureResult:
    frames: list[bytes]
    kernel_drops: int
    times: list[float] = field(default_factory=list)   # each frame's capture time (time.time())


class Capture:
    """tcpdump on `interface` inside the namespace into a pcap file, from
    the moment the constructor returns to stop()."""

    def __init__(self, netns: str, interface: str, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._stderr_path = path.with_suffix(".log")
        self._stderr = open(self._stderr_path, "w")
        # -Z root: tcpdump would otherwise drop privileges and fail to write
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", netns, "tcpdump", "-n", "-i", interface, "-Q", "in",
             "--immediate-mode", "-B", "65536", "-Z", "root", "-w", str(path)],
            stdout=subprocess.DEVNULL, stderr=self._stderr, start_new_session=True)
        deadline = time.monotonic() + 10
        while "listening on" not in self._stderr_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"tcpdump on {netns}/{interface} did not start: "
                                   f"{self._stderr_path.read_text().strip()}")
            time.sleep(0.02)

    def stop(self) -> CaptureResult:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        report = self._stderr_path.read_text()
        drops = re.search(r"(\d+) packets? dropped by kernel", report)
        records = list(RawPcapReader(str(self.path))) \
            if self.path.exists() and self.path.stat().st_size > 24 else []
        return CaptureResult([frame for frame, _ in records],
                             int(drops.group(1)) if drops else 0,
                             [meta.sec + meta.usec * 1e-6 for _, meta in records])
