"""One run of DPDK's SWX pipeline example app (built by swx_app.py) with
one of its .spec programs on one forwarding lcore: the app compiles the
spec, forwards between our ports, and its own CLI (TCP, what `telnet`
would show) gives the pipeline's port counters at the start and the end
of the measured period."""

import re
import shlex
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from testbench.bench.compiled import MIN_FORWARDED_SHARE
from testbench.bench.dpdk import BenchError, Eal, first_cause, running
from testbench.bench.sample import Sample
from testbench.bench.swx_app import SwxApp
from controller.launch.processes import free_tcp_port

PIPELINE = "PIPELINE0"
PROMPT = b"pipeline> "
STARTUP_DEADLINE_S = 60     # EAL, the mempool in hugepages, gcc compiling the spec's C
WARMUP_S = 1
CLI_TIMEOUT_S = 10


def _write_scripts(app: SwxApp, spec: str, run_dir: Path, lcore: int, ports: list[str]) -> Path:
    """The example's .cli and ethdev.io for SPEC with our ports (vdevs
    0..ports-1, named as EAL names them) in place of its PCI devices and
    our forwarding lcore in place of its thread 1; mempool, queue and burst
    sizes are the example's. Generated C and library go to RUN_DIR."""
    stem = Path(spec).stem
    io = run_dir / "ethdev.io"
    io.write_text("mirroring slots 4 sessions 64\n"
                  + "".join(f"port in {p} ethdev {name} rxq 0 bsz 32\n" for p, name in enumerate(ports))
                  + "".join(f"port out {p} ethdev {name} txq 0 bsz 32\n" for p, name in enumerate(ports)))
    script = run_dir / f"{stem}.cli"
    script.write_text(
        f"pipeline codegen {app.examples / spec} {run_dir / stem}.c\n"
        f"pipeline libbuild {run_dir / stem}.c {run_dir / stem}.so\n"
        "mempool MEMPOOL0 buffer 2304 pool 32K cache 256 cpu 0\n"
        + "".join(f"ethdev {name} rxq 1 128 MEMPOOL0 txq 1 512 promiscuous on\n" for name in ports)
        + f"pipeline {PIPELINE} build lib {run_dir / stem}.so io {io} numa 0\n"
        f"thread {lcore} pipeline {PIPELINE} enable\n")
    return script


class _Cli:
    """The app's command line: every reply ends with the prompt."""

    def __init__(self, connection: socket.socket):
        self._connection = connection
        self._reply()                           # the welcome

    def command(self, line: str) -> str:
        self._connection.sendall(line.encode() + b"\n")
        return self._reply()

    def _reply(self) -> str:
        data = b""
        while not data.endswith(PROMPT):
            chunk = self._connection.recv(65536)
            if not chunk:
                raise BenchError("the SWX pipeline app closed its CLI connection")
            data += chunk
        return data[:-len(PROMPT)].decode(errors="replace")


def _connect(port: int, process, log_path: Path) -> socket.socket:
    """The CLI listens only once the app has run its whole script."""
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while True:
        if process.poll() is not None:
            raise BenchError(f"the SWX pipeline app exited with status {process.returncode}: "
                             f"{first_cause(log_path.read_text(errors='replace'))} (log: {log_path})")
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=CLI_TIMEOUT_S)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise BenchError(f"the SWX pipeline app's CLI did not listen within "
                                 f"{STARTUP_DEADLINE_S} s (log: {log_path})") from None
            time.sleep(0.25)


@dataclass(frozen=True)
class _Counters:
    received: int       # by the pipeline's input ports
    sent: int           # transmitted by its output ports (the DROP port not counted)


_PORT_IN = re.compile(r"^\s*Port \d+: packets (\d+) bytes \d+ empty", re.M)
_PORT_OUT = re.compile(r"^\s*Port \d+: packets (\d+) bytes \d+ packets dropped (\d+)", re.M)


def _read_counters(cli: _Cli, log_path: Path) -> tuple[float, _Counters]:
    """The pipeline's port counters and when they were read (midway
    between asking and the reply)."""
    asked = time.monotonic()
    reply = cli.command(f"pipeline {PIPELINE} stats")
    answered = time.monotonic()
    received = [int(n) for n in _PORT_IN.findall(reply)]
    if not received:
        # The script's replies are in the log; the first failing command is the cause.
        raise BenchError(f"the SWX pipeline is not running: "
                         f"{first_cause(log_path.read_text(errors='replace'))} (log: {log_path})")
    sent = sum(int(n) - int(dropped) for n, dropped in _PORT_OUT.findall(reply))
    return (asked + answered) / 2, _Counters(sum(received), sent)


def measure_swx(app: SwxApp, spec: str, lcore: int, control_lcore: int, vdevs: tuple[str, ...],
                duration_s: int, tsc_hz: float, run_dir: Path) -> Sample:
    run_dir.mkdir(parents=True, exist_ok=True)
    ports = [vdev.split(",")[0] for vdev in vdevs]
    script = _write_scripts(app, spec, run_dir, lcore, ports)
    port = free_tcp_port()
    eal = Eal(lcores=f"{control_lcore},{lcore}", main_lcore=control_lcore, vdevs=vdevs)
    # stdbuf: the app prints its script's replies with printf into our log
    # and is killed at the end, so a fully buffered stdout would lose them
    # (and with them the cause of a failed script).
    command = ["stdbuf", "-oL", str(app.executable), *eal.args(), "--",
               "-h", "127.0.0.1", "-p", str(port), "-s", str(script)]
    log_path = run_dir / "run.log"
    try:
        with running(command, log_path, {"RTE_INSTALL_DIR": str(app.rte_install_dir)}) as process:
            with _connect(port, process, log_path) as connection:
                cli = _Cli(connection)
                time.sleep(WARMUP_S)
                start, before = _read_counters(cli, log_path)
                time.sleep(duration_s)
                end, after = _read_counters(cli, log_path)
    except OSError as e:
        raise BenchError(f"the SWX pipeline app's CLI failed: {e} (log: {log_path})") from e
    received, sent = after.received - before.received, after.sent - before.sent
    if received == 0:
        raise BenchError(f"the SWX pipeline received no packets in {duration_s} s (log: {log_path})")
    if sent < MIN_FORWARDED_SHARE * received:
        raise BenchError(f"the SWX pipeline forwarded only {sent} of {received} packets; "
                         "not a forwarding measurement")
    pps = received / (end - start)
    return Sample(pps=pps, cycles_per_packet=tsc_hz / pps, command=shlex.join(command),
                  detail={"rx": received, "tx": sent, "duration_s": end - start, "spec": spec})
