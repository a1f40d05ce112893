"""--registers-file: registers that outlive the process, through real
executables. testbench/p4/t4p4s/registers.p4 (compiled; `per_port`
counts each port's packets, `wrap8` every packet) runs with a registers
file, its registers raised by traffic (net_pcap) and written through the
control socket, is killed with SIGKILL and started again on the same file:
every value is kept, and traffic counts on from it. A P4Runtime
VERIFY_AND_COMMIT of its own P4Info keeps them too (without a file it
zeroes them, as before). A file is never reused or overwritten by another
program (the hand-written l2fwd of test_runtime.py), another register
layout, something that is no registers file, or a second live process:
the executable stops with an error naming the file and why, and the file
keeps its bytes."""
from __future__ import annotations

import hashlib
import itertools
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scapy.all import Ether, Raw, wrpcap

from t4p4s.stf import control
from t4p4s.stf.control import RuntimeProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "p4runtime"))
from p4rt_client import Client, load_p4info  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
REGISTERS_P4 = REPO / "testbench" / "p4" / "t4p4s" / "registers.p4"
PER_PORT, WRAP8 = "ingress.per_port", "ingress.wrap8"
HEADER = struct.Struct("<8sIIQQIIQiI64s")      # registers.c: struct regfile_header
_runs = itertools.count()

pytestmark = pytest.mark.dpdk


@pytest.fixture(scope="module")
def registers_build(compiled):
    return compiled(REGISTERS_P4)


@pytest.fixture(scope="module")
def other_program(handwritten):
    """Another program with registers: the hand-written l2fwd (its
    register ingress.rx_count is bit<32>[16])."""
    return handwritten


def data_frame(i: int) -> bytes:
    """registers.p4's test header (EtherType 0x88b5, 14 bytes) and a payload."""
    return bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", type=0x88b5)
                 / Raw(bytes(14) + i.to_bytes(4, "big")))


def pcap_vdevs(where: Path, frames: int) -> list[str]:
    """Port 0 receives `frames` frames once (net_pcap reads its file at start),
    port 1 nothing; both write what they send."""
    rx = where / f"in{frames}.pcap"
    wrpcap(str(rx), [Raw(data_frame(i)) for i in range(frames)])
    empty = where / "empty.pcap"
    wrpcap(str(empty), [])
    return [f"net_pcap0,rx_pcap={rx},tx_pcap={where / 'out0.pcap'}",
            f"net_pcap1,rx_pcap={empty},tx_pcap={where / 'out1.pcap'}"]


def eal(vdevs: list[str]) -> list[str]:
    args = control.test_eal_args(f"rf{os.getpid()}_{next(_runs)}")
    for vdev in vdevs:
        args += ["--vdev", vdev]
    return args


def start(build, where: Path, registers_file: Path | None, vdevs=("net_ring0",),
          p4runtime=False) -> RuntimeProcess:
    app = ["--governor", "nap"]
    if registers_file is not None:
        app += ["--registers-file", str(registers_file)]
    if p4runtime:
        app += ["--p4runtime", "127.0.0.1:0"]
    executable = getattr(build, "executable_path", build)
    return RuntimeProcess(executable, eal(list(vdevs)), app, where / f"run{next(_runs)}")


def refused(executable, registers_file: Path) -> subprocess.CompletedProcess:
    """Starts an executable on the file; it must stop with an error."""
    done = subprocess.run([str(executable), *eal(["net_ring0"]), "--", "--registers-file",
                           str(registers_file)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stderr
    return done


def kill9(runtime: RuntimeProcess):
    os.killpg(runtime.process.pid, signal.SIGKILL)
    runtime.process.wait()
    runtime.stop()


def registers(runtime: RuntimeProcess) -> dict[str, list[int]]:
    return {name: [int(v, 0) if isinstance(v, str) else v for v in
                   runtime.request({"cmd": "register_read", "register": name})["values"]]
            for name in (PER_PORT, WRAP8)}


def wait_rx(runtime: RuntimeProcess, frames: int, limit_s: float = 20.0):
    deadline = time.monotonic() + limit_s
    while runtime.request({"cmd": "stats"})["ports"][0]["rx"] < frames:
        assert time.monotonic() < deadline, "the frames were not received"
        time.sleep(0.02)


def header(path: Path) -> dict:
    fields = HEADER.unpack_from(path.read_bytes())
    names = ("magic", "version", "header_size", "layout", "file_size", "n_registers",
             "cell_size", "opens", "pid", "reserved", "program")
    found = dict(zip(names, fields))
    found["program"] = found["program"].rstrip(b"\0").decode()
    return found


def cells_in_file(path: Path, offset_cells: int, count: int) -> list[int]:
    """Cells as the file holds them (register 0 from header_size, each
    array from a 64-byte boundary)."""
    data = path.read_bytes()
    at = header(path)["header_size"] + 8 * offset_cells
    return list(struct.unpack_from(f"<{count}Q", data, at))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_registers_survive_kill_9(registers_build, tmp_path):
    path = Path("/dev/shm") / f"t4p4s-test-{os.getpid()}-{next(_runs)}.registers"
    try:
        first = start(registers_build, tmp_path, path, pcap_vdevs(tmp_path, 300))
        try:
            assert "new, the 2 registers of registers start at 0" in first.log_tail(), \
                first.log_tail()
            wait_rx(first, 300)
            first.request({"cmd": "register_write", "register": PER_PORT, "index": 5,
                           "value": 0xFFFFFFF0})
            values = registers(first)
            assert values[PER_PORT] == [300, 0, 0, 0, 0, 0xFFFFFFF0, 0, 0]
            assert values[WRAP8] == [300 % 256]
            # MAP_SHARED: the stores are in the file while the process runs
            assert header(path) | {"layout": 0, "pid": 0} == {
                "magic": b"T4P4SREG", "version": 1, "header_size": 4096, "layout": 0,
                "file_size": 8192, "n_registers": 2, "cell_size": 8, "opens": 1,
                "pid": 0, "reserved": 0, "program": "registers"}
            assert header(path)["pid"] == first.process.pid
            assert cells_in_file(path, 0, 8) == values[PER_PORT]
            assert cells_in_file(path, 8, 1) == values[WRAP8]      # next cache line
        finally:
            kill9(first)

        # the same file, a new process: nothing lost, and traffic counts on
        second = start(registers_build, tmp_path, path, pcap_vdevs(tmp_path, 100))
        try:
            log = second.log_tail()
            assert "the 2 registers of registers kept (mapped 1 times before, last by pid " \
                   f"{first.process.pid})" in log, log
            wait_rx(second, 100)
            after = registers(second)
            assert after[PER_PORT] == [400, 0, 0, 0, 0, 0xFFFFFFF0, 0, 0]
            assert after[WRAP8] == [400 % 256]
            assert header(path)["opens"] == 2
            # an explicit reset clears them, in the file too
            second.request({"cmd": "register_reset", "register": PER_PORT})
        finally:
            kill9(second)
        third = start(registers_build, tmp_path, path)
        try:
            assert registers(third) == {PER_PORT: [0] * 8, WRAP8: [400 % 256]}
        finally:
            assert third.stop() == 0        # a clean exit leaves the file as well
        assert cells_in_file(path, 8, 1) == [400 % 256]
    finally:
        path.unlink(missing_ok=True)


def pipeline_commit(runtime: RuntimeProcess, build):
    """VERIFY_AND_COMMIT of the program's own P4Info, as gnbctl pipeline
    push (and the watcher's restore of a restarted NIC) does."""
    client = Client(runtime.p4runtime_address())
    try:
        assert client.arbitrate((0, 1)).status.code == 0
        client.set_pipeline("VERIFY_AND_COMMIT", load_p4info(build.p4info_text_path))
    finally:
        client.close()


@pytest.mark.parametrize("with_file", [True, False], ids=["registers_file", "no_file"])
def test_pipeline_commit_and_registers(registers_build, tmp_path, with_file):
    """A commit of the same P4Info keeps registers that live in a file (a
    restarted NIC gets its pipeline pushed again and must number on); it
    still clears them without one (the P4Runtime spec's VERIFY_AND_COMMIT
    clears the forwarding state)."""
    path = tmp_path / "commit.registers" if with_file else None
    runtime = start(registers_build, tmp_path, path, p4runtime=True)
    try:
        runtime.request({"cmd": "register_write", "register": PER_PORT, "index": 2,
                         "value": 77})
        runtime.request({"cmd": "register_write", "register": WRAP8, "index": 0,
                         "value": 9})
        pipeline_commit(runtime, registers_build)
        expected = {PER_PORT: [0, 0, 77, 0, 0, 0, 0, 0], WRAP8: [9]} if with_file else \
            {PER_PORT: [0] * 8, WRAP8: [0]}
        assert registers(runtime) == expected
        if with_file:       # a file on a disk file system works, and says what it costs
            noted = "not on tmpfs or hugetlbfs" in runtime.log_tail()
            assert noted == (not _on_tmpfs(tmp_path)), runtime.log_tail()
    finally:
        assert runtime.stop() == 0


def _on_tmpfs(path: Path) -> bool:
    found = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True,
                           text=True, check=True).stdout.strip()
    return found in ("tmpfs", "ramfs")


def test_a_file_is_never_reused_by_another_program_or_layout(registers_build, other_program,
                                                              tmp_path):
    """Decided behaviour: refused, the file left as it is (it may hold
    another process's SNs; zeroing it would repeat them)."""
    ours = tmp_path / "registers.registers"
    runtime = start(registers_build, tmp_path, ours)
    try:
        runtime.request({"cmd": "register_write", "register": PER_PORT, "index": 1,
                         "value": 1234})
    finally:
        kill9(runtime)
    before = digest(ours)

    done = refused(other_program, ours)
    assert f"error: --registers-file {ours}: it holds the registers of program 'registers' " \
           "(2 registers, layout " in done.stderr, done.stderr
    assert "this is program 'l2fwd_handwritten' (1 registers" in done.stderr, done.stderr
    assert "it is left as it is: remove it" in done.stderr, done.stderr
    assert digest(ours) == before

    # the other way round: the l2fwd's file is no file of registers.p4
    theirs = tmp_path / "l2fwd.registers"
    other = start(other_program, tmp_path, theirs, vdevs=["net_ring0", "net_ring1"])
    kill9(other)
    theirs_before = digest(theirs)
    assert "holds the registers of program 'l2fwd_handwritten'" in \
           refused(registers_build.executable_path, theirs).stderr
    assert digest(theirs) == theirs_before

    # the same program name with another register layout (a build whose
    # registers changed): the fingerprint differs
    relaid = tmp_path / "relaid.registers"
    data = bytearray(ours.read_bytes())
    struct.pack_into("<Q", data, 16, header(ours)["layout"] ^ 1)
    relaid.write_bytes(bytes(data))
    done = refused(registers_build.executable_path, relaid)
    assert "holds the registers of program 'registers' (2 registers, layout" in done.stderr
    assert relaid.read_bytes() == bytes(data)

    # no registers file at all
    text = tmp_path / "notes.txt"
    text.write_text("not registers\n")
    assert "it is not a t4p4s registers file" in \
           refused(registers_build.executable_path, text).stderr
    assert text.read_text() == "not registers\n"

    # after all that, ours still holds what it held
    again = start(registers_build, tmp_path, ours)
    try:
        assert registers(again)[PER_PORT][1] == 1234
    finally:
        kill9(again)


def test_one_live_process_per_file(registers_build, tmp_path):
    """A file is locked while mapped: a second process is refused; the lock
    goes with the first process, however it ends (SIGKILL here)."""
    path = tmp_path / "shared.registers"
    empty = path.with_suffix(".empty")
    empty.touch()                       # an empty file is taken as new
    first = start(registers_build, tmp_path, path)
    try:
        first.request({"cmd": "register_write", "register": WRAP8, "index": 0, "value": 200})
        done = refused(registers_build.executable_path, path)
        assert "another process has it mapped" in done.stderr, done.stderr
    finally:
        kill9(first)
    second = start(registers_build, tmp_path, path)
    try:
        assert registers(second)[WRAP8] == [200]
    finally:
        kill9(second)
    fresh = start(registers_build, tmp_path, empty)
    try:
        assert "new, the 2 registers" in fresh.log_tail()
        assert registers(fresh) == {PER_PORT: [0] * 8, WRAP8: [0]}
    finally:
        kill9(fresh)


def test_help_names_the_option(registers_build):
    done = subprocess.run([str(registers_build.executable_path), *eal([]), "--", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert "--registers-file PATH" in done.stderr, done.stderr
