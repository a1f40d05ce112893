"""One traffic run through a running topology: captures on the radio and
BaaS sides, paced downlink traffic from the N3 side, live `gnbctl offload
set` shifts with their latency measured, then the SN check of everything
captured. Shared by `make demo`, the tests and the benchmark."""
from __future__ import annotations

import json
import math
import operator
import random
import subprocess
import threading
import time
import zlib
from dataclasses import dataclass, field, fields, replace
from typing import NamedTuple

from testbench.gnb.nic_entries import OFFLOAD_BUCKETS, VF_BUCKETS
from testbench.tests.reference_hashes import crc16
from testbench.topology.gnbctl import Gnbctl
from controller.launch.processes import nic_vf_ports
from testbench.topology.sn_check import SnCheck, check_downlink
from controller.launch.topology import HybridTopology
from testbench.topology.traffic import (FIRST_TEID, Capture, CaptureResult, DownlinkFrames,
                                        PacedSender)

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


def vf_host(drb: int, n_hosts: int) -> int:
    """The host an offloaded DRB goes to while every host is live: the top
    6 bits of the CRC-16 of its TEID (p4src/nic/vf_distributor.p4) pick a
    VF bucket, which gnbctl gives to the hosts round-robin (offload.py)."""
    bucket = crc16((FIRST_TEID + drb).to_bytes(4, "big")) >> (16 - VF_BUCKETS.bit_length() + 1)
    return bucket % n_hosts


def drbs_on_host(drbs, percent: float, host: int, n_hosts: int) -> set[int]:
    return {d for d in drbs if offloaded(d, percent) and vf_host(d, n_hosts) == host}


class _Counters:
    """Counters (a dataclass) that add and subtract field by field; a dict
    field key by key, over the left operand's keys (0 where the right one
    lacks a key)."""

    def _combine(self, other, op):
        def combined(mine, theirs):
            if isinstance(mine, dict):
                return {key: op(value, theirs.get(key, 0)) for key, value in mine.items()}
            return op(mine, theirs)
        return type(self)(**{f.name: combined(getattr(self, f.name), getattr(other, f.name))
                             for f in fields(self)})

    def __add__(self, other):
        return self._combine(other, operator.add)

    def __sub__(self, other):
        return self._combine(other, operator.sub)


@dataclass(frozen=True)
class SplitCounters(_Counters):
    """Downlink N3 frames the NIC kept and the ones it sent to the hosts."""
    kept: int
    to_hosts: int

    @classmethod
    def from_ports(cls, ports: list[dict], n_hosts: int) -> "SplitCounters":
        """From the NIC's port statistics (its stats()["ports"])."""
        to_hosts = sum(ports[nic_vf_ports(i)[0]]["tx"] for i in range(n_hosts))
        return cls(kept=ports[0]["rx"] - to_hosts, to_hosts=to_hosts)

    @classmethod
    def read(cls, topology: HybridTopology) -> "SplitCounters":
        return cls.from_ports(topology.nic.stats()["ports"], len(topology.hosts))


# The NIC's PF port of each captured side (p4src/gnb/constants.p4).
CAPTURED_PORTS = {"ran": 1, "baas": 2}


@dataclass(frozen=True)
class SideLosses(_Counters):
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

    @classmethod
    def from_ports(cls, ports: list[dict], topology: HybridTopology, role: str) -> "SideLosses":
        """From the NIC's port statistics (its stats()["ports"]) and the
        veth into the side's namespace (the capture's are read at its end)."""
        link = topology.network.links[role]
        return cls(nic_tx=ports[CAPTURED_PORTS[role]]["tx_dropped"],
                   veth=_tx_dropped(link.pair.dp))


def _tx_dropped(interface: str, netns: str | None = None) -> int:
    """What the kernel dropped sending on the interface (a veth: its peer's
    backlog was full)."""
    where = ["-n", netns] if netns else []
    shown = subprocess.run(["ip", *where, "-s", "-j", "link", "show", "dev", interface],
                           capture_output=True, text=True, timeout=10, check=True)
    return json.loads(shown.stdout)[0]["stats64"]["tx"]["dropped"]


def n3_dropped(topology: HybridTopology) -> int:
    """Frames of the traffic source the kernel dropped on its N3 veth
    before they reached the NIC (the NIC's side of the pair had no room in
    its backlog: a loaded machine's softirqs fall behind). They never
    reached the gNB: a lost frame each, no skipped SN."""
    link = topology.network.links["n3"]
    return _tx_dropped(link.pair.test, link.netns.name)


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
    captures: dict[str, CaptureResult] = field(default_factory=dict)   # by captured role
    nic_restarted_at: float | None = None    # time.time() the restarted NIC answered
    nic_rx_dropped: int = 0      # N3 frames the NIC's rx ring had no room for (never numbered)
    vf_tx_dropped: dict[str, int] = field(default_factory=dict)   # by host: its VF ring was full
    n3_dropped: int = 0          # frames the kernel dropped on the way to the NIC (n3_dropped())

    def unexplained(self, lost_inside: int = 0, baas_unpaired_inside: int = 0,
                    skipped_inside: int = 0) -> list[str]:
        """What the run got wrong that no counted loss explains: an SN
        skipped without a frame lost after numbering (or, up to
        `skipped_inside`, numbered inside a NIC that died), a frame lost
        beyond those and `lost_inside` (frames inside a process that died),
        a radio frame without its BaaS copy beyond those lost and
        `baas_unpaired_inside` (a NIC that died between the two), or
        anything numbered twice, reordered, duplicated or not byte for byte
        as expected. The same verdict on an idle and on a loaded machine."""
        check = self.check
        radio = self.side_losses.get("ran", SideLosses()).total
        baas = self.side_losses.get("baas", SideLosses()).total
        found = [f"{name}: {getattr(check, name)}"
                 for name in ("duplicated", "unknown_frames", "wrong_bytes", "repeated_sns",
                              "reordered") if getattr(check, name)]
        if check.skipped_sns > radio + skipped_inside:
            found.append(f"{check.skipped_sns} SNs skipped, {radio} frames counted lost "
                         f"after numbering on the radio side ({self.side_losses.get('ran')})"
                         + (f", {skipped_inside} numbered inside a NIC that died"
                            if skipped_inside else ""))
        vf = sum(self.vf_tx_dropped.values())
        if check.lost > radio + self.n3_dropped + vf + lost_inside:
            found.append(f"{check.lost} frames lost, {radio} counted on the radio side, "
                         f"{self.n3_dropped} on the N3 side before the NIC, {vf} at the "
                         f"NIC's full VF rings {self.vf_tx_dropped}, "
                         f"{lost_inside} allowed inside processes")
        if check.baas_mismatch > radio + baas + baas_unpaired_inside:
            found.append(f"{check.baas_mismatch} radio frames and BaaS copies without their "
                         f"pair, {radio + baas} counted lost on the two sides, "
                         f"{baas_unpaired_inside} allowed inside a process that died")
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
        # the NIC's counters up to its kill, when it is killed during the run
        self._nic_at_kill: NicSnapshot | None = None
        self._nic_restarted_at: float | None = None

    def __enter__(self) -> "TrafficRun":
        links = self.topology.network.links
        self.start_sns = self._sn_registers()
        self.split_before, self.losses_before, self.drops_before = self._snapshot()
        self.n3_dropped_before = n3_dropped(self.topology)
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

    def _snapshot(self) -> NicSnapshot:
        """The NIC's counters the run accounts with, from one stats() read."""
        ports = self.topology.nic.stats()["ports"]
        return NicSnapshot(SplitCounters.from_ports(ports, len(self.topology.hosts)),
                           {role: SideLosses.from_ports(ports, self.topology, role)
                            for role in CAPTURED_PORTS},
                           NicDrops.from_ports(ports, self.topology))

    def run_for(self, seconds: float):
        time.sleep(seconds)

    def kill_nic(self) -> list:
        """Kills the NIC (SIGKILL) under traffic, keeping its counters up to
        then for the run's accounting; returns what it left behind (removed)."""
        if self._nic_at_kill is not None:
            raise RuntimeError("one NIC kill per traffic run")
        self._nic_at_kill = self._snapshot()
        return self.topology.nic.kill()

    def restart_nic(self) -> float:
        """Starts the NIC again after kill_nic(); returns when it was ready
        (its control socket answers). The frames captured from then on come
        out of the new process (RunResult.nic_restarted_at)."""
        self.topology.nic.start()
        self._nic_restarted_at = time.time()
        return self._nic_restarted_at

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
        split, losses, drops = self._snapshot()
        split -= self.split_before
        losses = {role: losses[role] - self.losses_before[role] for role in CAPTURED_PORTS}
        drops -= self.drops_before
        restart_from = None
        if self._nic_at_kill is not None:
            # the new NIC's counters started at 0: the old one's up to its kill come first
            kill_split, kill_losses, kill_drops = self._nic_at_kill
            split = split + kill_split
            drops = drops + kill_drops
            losses = {role: replace(losses[role], nic_tx=losses[role].nic_tx
                                    + kill_losses[role].nic_tx)
                      for role in CAPTURED_PORTS}
            restart_from = next((position for position, at in enumerate(captured["ran"].times)
                                 if at >= self._nic_restarted_at), len(captured["ran"].times))
        losses = {role: replace(loss, capture=captured[role].kernel_drops)
                  for role, loss in losses.items()}
        expected = None
        if not self.shifts:
            expected = sum(1 for index in range(sent)
                           if offloaded(self.frames.drb_of(index), self.percent))
        check = check_downlink(self.frames, sent, captured["ran"].frames, captured["baas"].frames,
                               self.start_sns, restart_from)
        self.result = RunResult(sent, check, self.shifts, split, expected,
                                {t.name: t.stats() for t in self.topology.targets}, losses,
                                captured, self._nic_restarted_at, drops.n3_rx, drops.vf_tx,
                                n3_dropped(self.topology) - self.n3_dropped_before)


@dataclass(frozen=True)
class NicDrops(_Counters):
    """Frames the NIC counted lost before numbering them: its N3 rx ring
    full (never read), a host's VF ring full (the host fell behind: on a
    loaded machine it may wait long for its core). Each is a lost frame,
    no skipped SN."""
    n3_rx: int = 0
    vf_tx: dict[str, int] = field(default_factory=dict)     # by host

    @classmethod
    def from_ports(cls, ports: list[dict], topology: HybridTopology) -> "NicDrops":
        """From the NIC's port statistics (its stats()["ports"])."""
        return cls(ports[0]["rx_dropped"],
                   {host.name: ports[nic_vf_ports(i)[0]]["tx_dropped"]
                    for i, host in enumerate(topology.hosts)})

    @classmethod
    def read(cls, topology: HybridTopology) -> "NicDrops":
        return cls.from_ports(topology.nic.stats()["ports"], topology)


class NicSnapshot(NamedTuple):
    """The NIC's counters at one moment, from one stats() read
    (TrafficRun._snapshot)."""
    split: SplitCounters
    losses: dict[str, SideLosses]   # by captured role
    drops: NicDrops


def _int(value) -> int:
    return int(value, 0) if isinstance(value, str) else int(value)


def spread_drbs(n_drbs: int, n_active: int, seed: int = 1) -> list[int]:
    """n_active of the DRBs 0 .. n_drbs-1, drawn at random (seeded): evenly
    spaced ones would differ only in a few TEID bits, and CRC is linear, so
    they could all fall into buckets of one parity (one host)."""
    return sorted(random.Random(seed).sample(range(n_drbs), n_active))
