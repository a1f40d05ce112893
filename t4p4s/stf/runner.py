"""Run an STF test through the real compiled DPDK executable.

The executable runs with a --control socket; control commands go over it in
STF order, packets are injected into its P4 ports and everything it sends
is captured; at the end the captures are compared per port, in order, byte
for byte. A missing, extra or different packet fails the test.

Ports, two modes (`ports=`, `t4p4s stf --ports`):
- "ring" (default): the runtime's --test-ports, net_ring ports fed and
  drained over the control socket (ring_ports.py): any frame, 0 bytes and
  up, goes in and comes out unchanged, and nothing else arrives.
- "veth": one veth pair per P4 port, the executable on the "dp" ends
  (net_af_packet), injection and capture on the "test" ends (veth.py): the
  kernel path, for tests about it; frames shorter than 14 bytes are padded.

"Settling" (STF `wait`, before any control command that follows packets,
and at the end): the runtime's rx counters show every injected packet, its
tx counters have stopped moving and every frame it sent has been captured.
"""
from __future__ import annotations

import itertools
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from t4p4s.stf import parser as stf
from t4p4s.stf.compile_cache import compile_cached
from t4p4s.stf.control import ControlError, RuntimeProcess, parse_json_int, test_eal_args
from t4p4s.stf.parser import StfError, parse_stf_file
from t4p4s.stf.resolve import P4InfoNames, Resolver
from t4p4s.stf.ring_ports import RingPortCapture, test_ports_app_args
from t4p4s.stf.veth import PortCapture, VethPorts

MIN_PORTS = 4              # capture on a few ports even if the STF names fewer
MAX_PORTS = 32             # DPDK's RTE_MAX_ETHPORTS (P4 port N is DPDK port N)
RX_TIMEOUT = 10.0          # seconds for the runtime to receive what was injected
QUIET_INTERVAL = 0.05      # tx counters unchanged and no capture for this long
QUIET_TIMEOUT = 5.0
BYTES_PER_DIFF_LINE = 16
PORT_MODES = ("ring", "veth")
_run_sequence = itertools.count()

_STATE_CHANGES = (stf.TableAdd, stf.SetDefault, stf.MirroringAdd, stf.RegisterWrite,
                  stf.Multicast)
_STATE_CHECKS = (stf.RegisterRead, stf.CheckCounter, stf.CheckDirectCounter)


@dataclass
class StfOutcome:
    failures: list[str] = field(default_factory=list)
    captured: list[list[bytes]] = field(default_factory=list)
    stats: dict | None = None

    @property
    def passed(self) -> bool:
        return not self.failures


def _hex_lines(nibbles: str, marks: str = "") -> list[str]:
    """Hex as 'offset: xx xx ...' lines; `marks` puts '^' under differences."""
    lines = []
    step = 2 * BYTES_PER_DIFF_LINE
    for start in range(0, max(len(nibbles), 1), step):
        chunk = nibbles[start:start + step]
        text = " ".join(chunk[i:i + 2] for i in range(0, len(chunk), 2))
        lines.append(f"{start // 2:04x}: {text}")
        if marks:
            mark_chunk = marks[start:start + step]
            mark_text = " ".join(mark_chunk[i:i + 2] for i in range(0, len(mark_chunk), 2))
            if mark_text.strip():
                lines.append(f"      {mark_text.rstrip()}")
    return lines


def compare_frame(expect: stf.Expect, frame: bytes) -> str | None:
    """None if `frame` matches, else a readable expected/got diff."""
    if expect.nibbles is None:
        return None
    got = frame.hex()
    want = expect.nibbles
    differs = [i < len(got) and w != "*" and w != got[i] for i, w in enumerate(want)]
    too_short = len(got) < len(want)
    too_long = expect.exact_length and len(got) > len(want)
    if not any(differs) and not too_short and not too_long:
        return None
    marks = "".join("^" if d else " " for d in differs)
    why = []
    if any(differs):
        why.append(f"{sum(differs)} nibble(s) differ")
    if too_short or too_long:
        why.append(f"length {len(got) // 2} bytes, expected "
                   f"{'exactly ' if expect.exact_length else 'at least '}{len(want) // 2}")
    lines = [", ".join(why), "  expected:"]
    lines += ["    " + l for l in _hex_lines(want)]
    lines.append("  got:")
    lines += ["    " + l for l in _hex_lines(got, marks)]
    return "\n".join(lines)


def _ports_used(commands) -> int:
    ports = [c.port for c in commands if isinstance(c, (stf.Packet, stf.Expect, stf.MirroringAdd))]
    for command in commands:
        if isinstance(command, stf.Packet | stf.Expect | stf.MirroringAdd) and \
                not 0 <= command.port < MAX_PORTS:
            raise StfError(f"{command.source}: error: port {command.port} is out of range "
                           f"0..{MAX_PORTS - 1} (the runtime's DPDK has {MAX_PORTS} ports)")
    return max([MIN_PORTS] + [p + 1 for p in ports])


def _canonical_match(match: dict) -> dict:
    """Control-protocol match objects compared by value, whatever the
    integer spelling (number, "0x..", "31")."""
    canonical = {}
    for name, value in match.items():
        if isinstance(value, dict):
            fields = {k: parse_json_int(v) for k, v in value.items()}
            canonical[name] = fields["value"] if set(fields) == {"value"} else tuple(sorted(fields.items()))
        else:
            canonical[name] = parse_json_int(value)
    return canonical


class _Run:
    def __init__(self, commands, resolver: Resolver, executable, run_dir: Path,
                 lcores: str, verbose: bool, log, ports: str = "ring"):
        if ports not in PORT_MODES:
            raise StfError(f"ports={ports!r}: expected one of {', '.join(PORT_MODES)}")
        self.ports = ports
        self.commands = commands
        self.resolver = resolver
        self.verbose = verbose
        self.log = log
        self.outcome = StfOutcome()
        self.n_ports = _ports_used(commands)
        self.injected = [0] * self.n_ports
        self.expects: list[list[stf.Expect]] = [[] for _ in range(self.n_ports)]
        self.unsettled = False
        self.padded: list[str] = []
        self.executable = executable
        self.run_dir = run_dir
        self.lcores = lcores
        # Resolve every name before creating anything: name errors come first.
        self.requests = {id(c): resolver.control_command(c) for c in commands
                         if isinstance(c, _STATE_CHANGES + _STATE_CHECKS)}

    def _say(self, text: str):
        if self.verbose:
            self.log(text)

    def _stats(self) -> dict:
        if not self.runtime.alive():
            raise StfError(f"the runtime exited (status {self.runtime.process.returncode}):\n"
                           f"{self.runtime.log_tail()}")
        return self.runtime.request({"cmd": "stats"})

    @staticmethod
    def _port_counts(stats: dict, counter: str) -> dict[int, int]:
        return {p["port"]: p[counter] for p in stats["ports"]}

    def settle(self):
        deadline = time.monotonic() + RX_TIMEOUT
        while True:
            rx = self._port_counts(self._stats(), "rx")
            short = [(p, rx.get(p, 0), n) for p, n in enumerate(self.injected) if rx.get(p, 0) < n]
            if not short:
                break
            if time.monotonic() > deadline:
                raise StfError("the runtime did not receive every injected packet: " + ", ".join(
                    f"port {p}: {got} of {n}" for p, got, n in short))
            time.sleep(0.005)
        deadline = time.monotonic() + QUIET_TIMEOUT
        previous_tx = None
        while time.monotonic() < deadline:
            tx = sum(self._port_counts(self._stats(), "tx").values())
            quiet = time.monotonic() - self.capture.last_arrival >= QUIET_INTERVAL
            if tx == previous_tx and quiet and self.capture.total() >= tx:
                break
            previous_tx = tx
            time.sleep(QUIET_INTERVAL)
        self.unsettled = False

    def _check_register(self, command: stf.RegisterRead, reply: dict):
        if command.expected is None:
            self.log(f"{command.source}: {command.register}[{command.index}] = {reply['value']}")
            return
        value = parse_json_int(reply["value"])
        if value != command.expected:
            self.outcome.failures.append(
                f"{command.source}: register {command.register}[{command.index}] is "
                f"{value} ({value:#x}), expected {command.expected} ({command.expected:#x})")

    def _check_counts(self, command, what: str, counts: dict):
        for kind, expected in command.expected.items():
            got = parse_json_int(counts.get(kind, -1))
            if got != expected:
                self.outcome.failures.append(f"{command.source}: {what}: {kind} is {got}, "
                                             f"expected {expected}")

    def _check_direct_counter(self, command: stf.CheckDirectCounter, reply: dict):
        match, priority = self.resolver.direct_counter_entry(command)
        wanted = _canonical_match(match)
        for entry in reply.get("entries", []):
            if _canonical_match(entry.get("match", {})) == wanted and (
                    priority is None or entry.get("priority") == priority):
                self._check_counts(command, f"direct counter of {command.table} entry",
                                   entry.get("counter", {}))
                return
        self.outcome.failures.append(f"{command.source}: no entry of {command.table} with "
                                     f"match {match}")

    def execute(self, command):
        if isinstance(command, stf.Packet):
            self._say(f"{command.source}: packet on port {command.port}: {command.data.hex()}")
            padding = self.capture.send(command.port, command.data)
            if padding:
                self.padded.append(f"{command.source}: the {len(command.data)}-byte packet was "
                                   f"sent with {padding} zero bytes appended (a veth carries "
                                   f"no frame shorter than an Ethernet header)")
                self._say(self.padded[-1])
            self.injected[command.port] += 1
            self.unsettled = True
        elif isinstance(command, stf.Expect):
            self.expects[command.port].append(command)
        elif isinstance(command, stf.Wait):
            self.settle()
        else:
            if self.unsettled:
                self.settle()
            request = self.requests[id(command)]
            for one in request if isinstance(request, list) else [request]:
                self._say(f"{command.source}: {one}")
                try:
                    reply = self.runtime.request(one)
                except ControlError as error:
                    raise StfError(f"{command.source}: error: {error}") from None
            if isinstance(command, stf.RegisterRead):
                self._check_register(command, reply)
            elif isinstance(command, stf.CheckCounter):
                self._check_counts(command, f"counter {command.counter}[{command.index}]", reply)
            elif isinstance(command, stf.CheckDirectCounter):
                self._check_direct_counter(command, reply)

    def compare(self, captured: list[list[bytes]]):
        failures = self.outcome.failures
        for port in range(self.n_ports):
            expects, frames = self.expects[port], captured[port]
            for index, (expect, frame) in enumerate(zip(expects, frames)):
                diff = compare_frame(expect, frame)
                if diff:
                    failures.append(f"{expect.source}: port {port}, packet {index + 1}: "
                                    f"mismatch: {diff}")
            for expect in expects[len(frames):]:
                wanted = "(any)" if expect.nibbles is None else expect.nibbles or "(0 bytes)"
                failures.append(f"{expect.source}: port {port}: expected packet missing: "
                                f"{wanted}")
            for index, frame in enumerate(frames[len(expects):], start=len(expects) + 1):
                failures.append(f"port {port}, packet {index}: unexpected extra packet: "
                                + "\n    ".join([""] + _hex_lines(frame.hex())))

    def _start(self, veths: VethPorts | None):
        """The runtime on the ports of the mode, and their capture."""
        eal = test_eal_args(self.run_dir.name, self.lcores)
        app = ["--governor", "nap"] + (["--log-msg"] if self.verbose else [])
        if veths is None:
            app += test_ports_app_args(self.n_ports)
            self.runtime = RuntimeProcess(self.executable, eal, app, self.run_dir)
            self.capture = RingPortCapture(self.runtime.control, self.n_ports)
            return
        # capture first: nothing the runtime sends may go unseen
        self.capture = PortCapture(veths.pairs)
        for port, pair in enumerate(veths.pairs):
            eal += ["--vdev", f"net_af_packet{port},iface={pair.dp}"]
        self.runtime = RuntimeProcess(self.executable, eal, app, self.run_dir)

    def run(self) -> StfOutcome:
        veths = VethPorts(self.n_ports) if self.ports == "veth" else None
        self.capture = None
        self.runtime = None
        try:
            self._start(veths)
            try:
                for command in self.commands:
                    self.execute(command)
                self.settle()
                self.outcome.stats = self._stats()
            except StfError as error:
                self.outcome.failures.append(str(error))
            self.outcome.captured = self.capture.snapshot()
            if not self.outcome.failures:
                self.compare(self.outcome.captured)
            if self.outcome.failures:
                self.outcome.failures += self.padded
            if not self.runtime.alive():
                self.outcome.failures.append(f"the runtime died:\n{self.runtime.log_tail()}")
        finally:
            if self.runtime:
                status = self.runtime.stop()
                if status not in (0, None):
                    self.outcome.failures.append(
                        f"the runtime exited with status {status} on SIGTERM:\n"
                        f"{self.runtime.log_tail()}")
            if self.capture:
                self.capture.close()
            if veths:
                veths.close()
        return self.outcome


def _write_pcaps(run_dir: Path, captured: list[list[bytes]]):
    from scapy.utils import RawPcapWriter
    for port, frames in enumerate(captured):
        if frames:
            # raw: the bytes as captured, a 0-byte or partial frame too
            writer = RawPcapWriter(str(run_dir / f"port{port}-out.pcap"), linktype=1)
            writer.write_header(None)
            for frame in frames:
                writer.write(frame)
            writer.close()


def run_stf(p4_path, commands, cache_root=None, include_dirs=(), verbose=False, keep=False,
            lcores="0", log=print, variant="release", ports="ring") -> StfOutcome:
    """ports: "ring" (default; any frame length, no kernel) or "veth" (the
    kernel path; see the module's docstring)."""
    build = compile_cached(p4_path, cache_root, include_dirs, variant=variant)
    resolver = Resolver(P4InfoNames.load(build.p4info_text_path))
    run_dir = Path(build.executable_path).parent.parent / "runs" / \
        f"{Path(p4_path).stem}-{os.getpid()}-{next(_run_sequence)}"
    shutil.rmtree(run_dir, ignore_errors=True)
    outcome = _Run(commands, resolver, build.executable_path, run_dir, lcores, verbose, log,
                   ports).run()
    if keep or not outcome.passed:
        _write_pcaps(run_dir, outcome.captured)
        outcome.failures and outcome.failures.append(
            f"(runtime log and captured packets kept in {run_dir})")
    else:
        shutil.rmtree(run_dir, ignore_errors=True)
    return outcome


def run_stf_file(p4_path, stf_path, **options) -> StfOutcome:
    return run_stf(p4_path, parse_stf_file(stf_path), **options)
