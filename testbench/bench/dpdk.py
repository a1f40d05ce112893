"""EAL command lines and running DPDK processes without leaking them: every
polling process spins a core at 100%, so each run has a hard deadline and
is killed (its own pid only) when it overstays."""

import contextlib
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path


class BenchError(RuntimeError):
    """A measurement could not be taken; the message says why."""


_prefix_numbers = itertools.count()


@dataclass(frozen=True)
class Eal:
    lcores: str                     # EAL -l argument, e.g. "1" or "0,1"
    vdevs: tuple[str, ...]          # port N is the N-th vdev
    main_lcore: int | None = None
    hugepages: bool = True
    purpose: str = "bench"          # names the file prefix, for whoever lists /var/run/dpdk

    def args(self) -> list[str]:
        # A fresh file prefix per run: other processes sharing the machine
        # must never collide with ours.
        prefix = f"t4p4s-{self.purpose}-{os.getpid()}-{next(_prefix_numbers)}"
        args = ["-l", self.lcores, "--no-pci", "--file-prefix", prefix]
        if self.main_lcore is not None:
            args += ["--main-lcore", str(self.main_lcore)]
        # DPDK 22.11 rejects --in-memory with --no-huge (it implies legacy
        # memory); --no-shconf keeps such runs from sharing state as well.
        args += ["--in-memory"] if self.hugepages else ["--no-huge", "-m", "256", "--no-shconf"]
        for vdev in self.vdevs:
            args += ["--vdev", vdev]
        return args


@dataclass(frozen=True)
class Finished:
    command: list[str]
    returncode: int
    output: str

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.splitlines()[-lines:])


_CAUSE = re.compile(r"error|fatal|cannot|not enough|invalid|failed", re.IGNORECASE)


def first_cause(output: str) -> str:
    """The first line of a failed run's output that looks like its cause
    (later lines are usually consequences: ports stopped, rings freed)."""
    for line in output.splitlines()[1:]:       # line 0 echoes the command
        if _CAUSE.search(line):
            return line.strip()
    return "no error message"


def _stop(process: subprocess.Popen, first_signal: int, grace_s: float) -> None:
    if process.poll() is not None:
        return
    process.send_signal(first_signal)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _remove_runtime_dir(command: list[str]) -> None:
    """EAL leaves /var/run/dpdk/PREFIX behind even in memory-only modes,
    empty after a clean exit, with its telemetry socket in it after a kill
    (how apps without an exit of their own end); ours are unique per run,
    so remove them with whatever is inside."""
    if "--file-prefix" in command:
        prefix = command[command.index("--file-prefix") + 1]
        if prefix not in ("", ".", "..") and "/" not in prefix:   # never /var/run/dpdk itself
            shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


@contextlib.contextmanager
def running(command: list[str], log_path: Path, extra_env: dict[str, str] | None = None
            ) -> Iterator[subprocess.Popen]:
    """Starts `command` with its output in `log_path`, after a first line
    that echoes the command. However the block is left, the process is gone
    afterwards (killed if still there) and its EAL runtime directory too."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **extra_env} if extra_env else None
    with open(log_path, "w") as log:
        log.write("$ " + shlex.join(command) + "\n")
        log.flush()
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, env=env)
        except OSError as e:
            raise BenchError(f"cannot start {command[0]}: {e}") from e
        try:
            yield process
        finally:
            _stop(process, signal.SIGKILL, grace_s=5)
            _remove_runtime_dir(command)


def _run(command: list[str], log_path: Path, *, interrupt_when: Callable[[str], bool] | None,
         deadline_s: float) -> Finished:
    """Runs `command` with its output in `log_path`. With interrupt_when,
    the process gets SIGINT as soon as its output so far satisfies it (how
    testpmd is stopped); otherwise it must exit by itself. Either way it
    must be done before deadline_s."""
    overstayed = False
    deadline = time.monotonic() + deadline_s
    with running(command, log_path) as process:
        if interrupt_when is not None:
            while process.poll() is None and not interrupt_when(log_path.read_text(errors="replace")):
                if time.monotonic() > deadline:
                    overstayed = True
                    break
                time.sleep(0.25)
            _stop(process, signal.SIGINT, grace_s=10)
        else:
            try:
                process.wait(timeout=deadline_s)
            except subprocess.TimeoutExpired:
                overstayed = True
                _stop(process, signal.SIGTERM, grace_s=5)
    output = log_path.read_text(errors="replace")
    if overstayed:
        raise BenchError(f"{command[0]} did not exit within {deadline_s:.0f} s (log: {log_path}):\n"
                         + _tail(output))
    return Finished(command, process.returncode, output)


def run_interrupted(command: list[str], log_path: Path, interrupt_when: Callable[[str], bool],
                    deadline_s: float) -> Finished:
    return _run(command, log_path, interrupt_when=interrupt_when, deadline_s=deadline_s)


def run_to_exit(command: list[str], log_path: Path, deadline_s: float) -> Finished:
    finished = _run(command, log_path, interrupt_when=None, deadline_s=deadline_s)
    if finished.returncode != 0:
        raise BenchError(f"{Path(command[0]).name} exited with status {finished.returncode}: "
                         f"{first_cause(finished.output)}\n(log: {log_path})\n" + _tail(finished.output))
    return finished
