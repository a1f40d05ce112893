"""One traffic run through a running topology: captures on the radio and
BaaS sides, paced downlink traffic from the N3 side, live `gnbctl offload
set` shifts with their latency measured, then the SN check of everything
captured. Shared by `make demo`, the tests and the benchmark."""
from __future__ import annotations

import json
import math
import random
import subprocess
import threading
import time
import zlib
from dataclasses import dataclass, field, replace

from testbench.topology.gnbctl import Gnbctl
from testbench.topology.processes import nic_vf_ports
from testbench.topology.sn_check import SnCheck, check_downlink
from testbench.topology.topology import HybridTopology
from testbench.topology.traffic import FIRST_TEID, Capture, DownlinkFrames, PacedSender

OFFLOAD_BUCKETS = 1024
LATENCY_POLL_S = 0.0005
LATENCY_GIVE_UP_S = 2.0
DRAIN_S = 0.3          # after the last frame is sent: the pipeline, memif and veths empty


def offload_bucket(drb: int) -> int:
    """nic.p4's offload bucket of a generated DRB: the top 10 bits of the
    CRC-32 of its TEID (p4src/nic/offload.p4)."""
    return zlib.crc32((FIRST_TEID + drb).to_bytes(4, "big")) >> 22


def offloaded(drb: int, percent: float) -> bool:
    """Ratio mode: buckets 0 .. round(P * 1024 / 100) - 1 go to the hosts."""
    return offload_bucket(drb) < math.floor(percent * OFFLOAD_BUCKETS / 100 + 0.5)


@dataclass(frozen=True)
class SplitCounters:
    """Downlink N3 frames the NIC kept and the ones it sent to the hosts."""
    kept: int
    to_hosts: int

    @classmethod
    def read(cls, topology: HybridTopology) -> "SplitCounters":
        ports = topology.nic.stats()["ports"]
        to_hosts = sum(ports[nic_vf_ports(i)[0]]["tx"] for i in range(len(topology.hosts)))
        return cls(kept=ports[0]["rx"] - to_hosts, to_hosts=to_hosts)


# The NIC's PF port of each captured side (p4src/gnb/constants.p4).
CAPTURED_PORTS = {"ran": 1, "baas": 2}


@dataclass(frozen=True)
class SideLosses:
    """Frames the NIC numbered and sent towards one captured side that the
    capture cannot have seen, each counted where it was lost: the NIC's tx
    queue (its driver's ring full), the veth into the capture's namespace
    (the kernel's backlog full, `ip -s link`'s tx dropped of the NIC's
    end), tcpdump's socket (its "dropped by kernel"). On a loaded machine
    the last two happen outside the gNB; the first is a radio loss that
    RLC AM's retransmission repairs. Each explains a skipped SN."""
    nic_tx: int = 0
    veth: int = 0
    capture: int = 0

    @property
    def total(self) -> int:
        return self.nic_tx + self.veth + self.capture

    def __sub__(self, other: "SideLosses") -> "SideLosses":
        return SideLosses(self.nic_tx - other.nic_tx, self.veth - other.veth,
                          self.capture - other.capture)

    @classmethod
    def read(cls, topology: HybridTopology, role: str) -> "SideLosses":
        port = topology.nic.stats()["ports"][CAPTURED_PORTS[role]]
        link = topology.network.links[role]
        shown = subprocess.run(["ip", "-s", "-j", "link", "show", "dev", link.pair.dp],
                               capture_output=True, text=True, timeout=10, check=True)
        veth = json.loads(shown.stdout)[0]["stats64"]["tx"]["dropped"]
        return cls(nic_tx=port["tx_dropped"], veth=veth)


@dataclass
class Shift:
    percent: float
    from_percent: float
    invoked_at: float
    returned_at: float
    effective_at: float | None = None    # first moved packet seen on its new path

    @property
    def effective_before_return(self) -> bool:
        return self.effective_at is not None and self.effective_at <= self.returned_at

    @property
    def latency_ms(self) -> float | None:
        """From `gnbctl offload set` returning to the first moved packet on
        its new path; 0 when it was there before the command returned."""
        if self.effective_at is None:
            return None
        return max(0.0, (self.effective_at - self.returned_at) * 1e3)

    @property
    def effective_after_invocation_ms(self) -> float | None:
        return None if self.effective_at is None else (self.effective_at - self.invoked_at) * 1e3

    @property
    def command_ms(self) -> float:
        return (self.returned_at - self.invoked_at) * 1e3

    def as_json(self) -> dict:
        return {"from_percent": self.from_percent, "percent": self.percent,
                "gnbctl_ms": round(self.command_ms, 1),
                "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 2),
                "effective_after_invocation_ms": None if self.effective_at is None
                else round(self.effective_after_invocation_ms, 1),
                "effective_before_return": self.effective_before_return}


@dataclass
class RunResult:
    sent: int
    check: SnCheck
    shifts: list[Shift]
    split: SplitCounters                 # over the run
    expected_to_hosts: int | None        # when the split did not move during the run
    target_stats: dict[str, dict] = field(default_factory=dict)
    side_losses: dict[str, SideLosses] = field(default_factory=dict)   # by captured role

    def unexplained(self, lost_inside: int = 0) -> list[str]:
        """What the run got wrong that no counted loss explains: an SN
        skipped without a frame lost after numbering, a frame lost beyond
        those and `lost_inside` (frames inside a process that died), a
        radio frame without its BaaS copy, or anything numbered twice,
        reordered, duplicated or not byte for byte as expected. The same
        verdict on an idle and on a loaded machine."""
        check = self.check
        radio = self.side_losses.get("ran", SideLosses()).total
        baas = self.side_losses.get("baas", SideLosses()).total
        found = [f"{name}: {getattr(check, name)}"
                 for name in ("duplicated", "unknown_frames", "wrong_bytes", "repeated_sns",
                              "reordered") if getattr(check, name)]
        if check.skipped_sns > radio:
            found.append(f"{check.skipped_sns} SNs skipped, {radio} frames counted lost "
                         f"after numbering on the radio side ({self.side_losses.get('ran')})")
        if check.lost > radio + lost_inside:
            found.append(f"{check.lost} frames lost, {radio} counted on the radio side, "
                         f"{lost_inside} allowed inside processes")
        if check.baas_mismatch > radio + baas:
            found.append(f"{check.baas_mismatch} radio frames and BaaS copies without their "
                         f"pair, {radio + baas} counted lost on the two sides")
        return found


class TrafficRun:
    """with TrafficRun(topology, gnbctl, drbs, rate_pps, percent) as run:
           run.shift(100); ...
       run.result (after the block)."""

    def __init__(self, topology: HybridTopology, gnbctl: Gnbctl, drbs: list[int],
                 rate_pps: float, percent: float):
        self.topology, self.gnbctl = topology, gnbctl
        self.frames = DownlinkFrames(drbs)
        self.rate_pps = rate_pps
        self.percent = percent
        self.shifts: list[Shift] = []
        self.result: RunResult | None = None

    def __enter__(self) -> "TrafficRun":
        links = self.topology.network.links
        self.start_sns = self._sn_registers()
        self.split_before = SplitCounters.read(self.topology)
        self.losses_before = {role: SideLosses.read(self.topology, role) for role in CAPTURED_PORTS}
        self.captures = {role: Capture(links[role].netns.name, role,
                                       self.topology.run_dir / f"{role}-{time.time_ns()}.pcap")
                         for role in CAPTURED_PORTS}
        self.sender = PacedSender(links["n3"].netns.name, "n3", self.frames, self.rate_pps).start()
        return self

    def _sn_registers(self) -> dict[int, tuple[int, int]]:
        """Each DRB's next (PDCP, RLC) SN, read from the NIC that owns them."""
        pdcp, rlc = (self.topology.nic.request({"cmd": "register_read", "register": name})["values"]
                     for name in ("pdcp_tx_sn", "rlc_tx_sn"))
        return {drb: (_int(pdcp[drb]), _int(rlc[drb])) for drb in set(self.frames.drbs)}

    def run_for(self, seconds: float):
        time.sleep(seconds)

    def shift(self, percent: float) -> Shift:
        """`gnbctl offload set percent` under traffic. From or to 0% / 100%,
        where it shows in the NIC's port counters, a thread watches from
        the moment gnbctl is invoked for the first moved packet on its new
        path (gnbctl itself takes most of a second: Python, gRPC, arbitration)."""
        shift = Shift(percent, self.percent, time.monotonic(), 0.0)
        watch = "to_hosts" if shift.from_percent == 0 and percent > 0 else \
            "kept" if shift.from_percent == 100 and percent < 100 else None
        watcher = None
        if watch is not None:
            before = SplitCounters.read(self.topology)
            watcher = threading.Thread(target=self._watch, args=(shift, watch, before), daemon=True)
        shift.invoked_at = time.monotonic()
        if watcher is not None:
            watcher.start()
        self.gnbctl("offload", "set", str(percent))
        shift.returned_at = self.gnbctl.last_returned_at
        if watcher is not None:
            watcher.join()
        self.percent = percent
        self.shifts.append(shift)
        return shift

    def _watch(self, shift: Shift, watch: str, before: SplitCounters):
        # the only user of the NIC's control socket meanwhile: the main thread waits for gnbctl
        deadline = shift.invoked_at + LATENCY_GIVE_UP_S + 5
        while time.monotonic() < deadline:
            if getattr(SplitCounters.read(self.topology), watch) > getattr(before, watch):
                shift.effective_at = time.monotonic()
                return
            time.sleep(LATENCY_POLL_S)

    def __exit__(self, *exc):
        sent = self.sender.stop()
        time.sleep(DRAIN_S)
        captured = {role: capture.stop() for role, capture in self.captures.items()}
        if exc[0] is not None:
            return
        split_after = SplitCounters.read(self.topology)
        split = SplitCounters(split_after.kept - self.split_before.kept,
                              split_after.to_hosts - self.split_before.to_hosts)
        expected = None
        if not self.shifts:
            expected = sum(1 for index in range(sent)
                           if offloaded(self.frames.drb_of(index), self.percent))
        check = check_downlink(self.frames, sent, captured["ran"].frames, captured["baas"].frames,
                               self.start_sns)
        losses = {role: replace(SideLosses.read(self.topology, role) - self.losses_before[role],
                                capture=captured[role].kernel_drops)
                  for role in CAPTURED_PORTS}
        self.result = RunResult(sent, check, self.shifts, split, expected,
                                {t.name: t.stats() for t in self.topology.targets}, losses)


def _int(value) -> int:
    return int(value, 0) if isinstance(value, str) else int(value)


def spread_drbs(n_drbs: int, n_active: int, seed: int = 1) -> list[int]:
    """n_active of the DRBs 0 .. n_drbs-1, drawn at random (seeded): evenly
    spaced ones would differ only in a few TEID bits, and CRC is linear, so
    they could all fall into buckets of one parity (one host)."""
    return sorted(random.Random(seed).sample(range(n_drbs), n_active))
