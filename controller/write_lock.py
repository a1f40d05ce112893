"""The write lock of a topology: gnbctl commands that write to the
targets (pipeline push, drb load/add/del, offload set/mode/marker and
each write of `gnbctl run`) take turns.

Every gnbctl of one topology uses the topology's election id, and a
P4Runtime server refuses a second live stream with an id it already has:
two writers at once failed ("another live controller uses this election
id"). So a write session holds an exclusive advisory lock (flock) on a
file named after the topology file's resolved path, for as long as its
P4Runtime session lasts, with the holder's pid and command line written
in it. A second writer waits for it up to the topology's timeout, then
gives up with WriteLockBusy naming the holder. Reads take no lock (they
need no primary: targets.reading).

The lock belongs to the process: the kernel drops it when the holder
exits, however it exits, so a killed gnbctl leaves nothing to clean up
(its file stays, empty or with its record, and is free). A holder that
ends normally removes the file; a waiter that locked the removed file
sees it is no longer the one at the path and locks the new one. Within
one process (`gnbctl run`'s concurrent sessions) it is taken once and
counted."""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from controller.errors import WriteLockBusy

LOCK_DIR_ENV = "GNBCTL_LOCK_DIR"
SYSTEM_LOCK_DIR = Path("/run/gnbctl")
POLL_S = 0.02

# the words of the command line the holder is named by (cli.main sets it;
# sys.argv otherwise)
command_words: list[str] | None = None


def lock_dir() -> Path:
    """Where the lock files are: $GNBCTL_LOCK_DIR, else /run/gnbctl when
    it can be made and written (root), else $XDG_RUNTIME_DIR/gnbctl, else
    gnbctl-UID in the temporary directory."""
    if os.environ.get(LOCK_DIR_ENV):
        candidates = [Path(os.environ[LOCK_DIR_ENV])]
    else:
        candidates = [SYSTEM_LOCK_DIR]
        if os.environ.get("XDG_RUNTIME_DIR"):
            candidates.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "gnbctl")
        candidates.append(Path(tempfile.gettempdir()) / f"gnbctl-{os.getuid()}")
    for directory in candidates:
        with contextlib.suppress(OSError):
            directory.mkdir(parents=True, exist_ok=True)
            if os.access(directory, os.W_OK | os.X_OK):
                return directory
    return candidates[-1]       # os.open names it in the error


def lock_path(topology_path: Path) -> Path:
    """One lock file per topology file, by its resolved path (the same file
    named through another path or a symlink is the same topology)."""
    resolved = str(Path(topology_path).resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    return lock_dir() / f"{Path(resolved).name}.{digest}.lock"


def _command() -> str:
    """The holder's command line as a user would type it again: gnbctl and
    its words, without --json and --topology FILE (the message names the
    topology)."""
    words = list(sys.argv[1:] if command_words is None else command_words)
    shown, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word == "--topology":
            skip = True
        elif word != "--json" and not word.startswith("--topology="):
            shown.append(word)
    return " ".join(["gnbctl", *shown])


def holder(path: Path) -> dict | None:
    """What the lock file says of its holder ({"pid", "command"}); None
    when it is empty (nobody holds it, or its holder is just taking it)."""
    try:
        return json.loads(path.read_text() or "null")
    except (OSError, ValueError):
        return None


class _Held:
    def __init__(self, fd: int):
        self.fd = fd
        self.depth = 0


_held: dict[Path, _Held] = {}


@contextlib.asynccontextmanager
async def held(topology):
    """The topology's write lock for the duration of the block, waited for
    up to topology.timeout (polled, so the event loop keeps running)."""
    path = lock_path(topology.path)
    mine = _held.get(path)
    if mine is None:
        mine = _Held(await _acquire(path, topology))
        _held[path] = mine
    mine.depth += 1
    try:
        yield
    finally:
        mine.depth -= 1
        if mine.depth == 0:
            del _held[path]
            # removed while locked (a waiter that has it open finds it gone
            # from the path and takes the new one), then unlocked by closing
            with contextlib.suppress(OSError):
                os.ftruncate(mine.fd, 0)
                os.unlink(path)
            os.close(mine.fd)


def _open(path: Path, topology) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise WriteLockBusy(f"cannot open the write lock {path} of {topology.path}: "
                            f"{e.strerror}; set {LOCK_DIR_ENV} to a directory gnbctl may "
                            "write") from None


def _is_at(fd: int, path: Path) -> bool:
    """Whether the open file is still the one at `path` (its holder
    removes it when it ends)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


async def _acquire(path: Path, topology) -> int:
    deadline = time.monotonic() + topology.timeout
    fd = _open(path, topology)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise _busy(path, topology) from None
            await asyncio.sleep(POLL_S)
            continue
        if _is_at(fd, path):
            break
        os.close(fd)            # locked a file its holder removed: the new one
        fd = _open(path, topology)
    record = json.dumps({"pid": os.getpid(), "command": _command()}) + "\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, record.encode(), 0)
    return fd


def _busy(path: Path, topology) -> WriteLockBusy:
    found = holder(path)
    who = (f"{found['command']} (pid {found['pid']})" if found
           else f"another gnbctl command (lock file {path})")
    return WriteLockBusy(f"{who} holds the write lock of {topology.path} (waited "
                         f"{topology.timeout:g} s, the topology's timeout); retry when it ends")
