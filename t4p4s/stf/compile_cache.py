"""Compile a P4 program once per content: the cache behind `t4p4s stf`,
`t4p4s run`, `t4p4s p4info` and the test suite.

A build lives in CACHE_ROOT/STEM-HASH/, where HASH covers the program, the
files it `#include "..."`s, the include directories given, and every source
of the compiler and runtime: editing any of them gives a new directory, so a
stale executable is never reused. A `build.json` marker, written last, says
the build is complete; a lock serializes concurrent builders of one program.

`p4info_cached` gives the P4Info of the release build without building
it (the front end and the P4Info only, under a second): it compiles into
the directory that build will use, with a `p4info.json` marker, and a
later `compile_cached` of the same sources keeps those files (it writes
the same bytes, so the paths handed out stay valid and unchanged). When
the build exists already, its P4Info is the answer.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PACKAGE_DIR.parent
DEFAULT_CACHE_ROOT = REPO_ROOT / "build" / "t4p4s-cache"

# Parts of the package that do not influence what the compiler produces.
# Everything else counts, whatever its suffix: the executable is built from
# C, C++ (the P4Runtime server), headers, .proto-driven Makefile rules and
# the compiler's Python, and a source left out here would be silently stale.
_NOT_COMPILER = ("stf", "examples", "bin", "cli.py", "__main__.py")
_NOT_SOURCE_SUFFIXES = {".pyc", ".pyo", ".o", ".a", ".d", ".so"}
_LOCAL_INCLUDE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
MARKER = "build.json"
P4INFO_MARKER = "p4info.json"


@dataclass
class CachedBuild:
    """The same fields as t4p4s.driver.CompileResult."""
    p4info_binary_path: Path
    p4info_text_path: Path
    c_path: Path
    executable_path: Path | None


@dataclass
class CachedP4Info:
    """The same fields as t4p4s.driver.P4InfoResult."""
    p4info_binary_path: Path
    p4info_text_path: Path


def _compiler_files() -> list[Path]:
    files = []
    for path in sorted(PACKAGE_DIR.rglob("*")):
        relative = path.relative_to(PACKAGE_DIR)
        if relative.parts[0] in _NOT_COMPILER or "__pycache__" in relative.parts:
            continue
        if path.is_file() and path.suffix not in _NOT_SOURCE_SUFFIXES:
            files.append(path)
    return files


def _program_files(p4_path: Path) -> list[Path]:
    """The program and, transitively, the local files it includes."""
    seen: list[Path] = []
    pending = [p4_path.resolve()]
    while pending:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        for name in _LOCAL_INCLUDE.findall(path.read_bytes()):
            pending.append((path.parent / name.decode()).resolve())
    return seen


def fingerprint(p4_path: Path, include_dirs=(), build: bool = True,
                variant: str = "release") -> str:
    digest = hashlib.sha256()
    digest.update(f"build {variant}".encode() if build else b"no-build")
    for directory in include_dirs:
        digest.update(str(Path(directory).resolve()).encode() + b"\0")
    for path in _program_files(p4_path) + _compiler_files():
        digest.update(str(path).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _entry(p4_path, cache_root, include_dirs, build: bool, variant: str) -> tuple[Path, str]:
    """The cache root (created, absolute) and the entry's name, STEM-HASH."""
    p4_path = Path(p4_path)
    if not p4_path.is_file():
        raise FileNotFoundError(f"{p4_path}: no such P4 program")
    # absolute: the marker keeps the paths it returns, for callers in any
    # working directory
    cache_root = (Path(cache_root) if cache_root else DEFAULT_CACHE_ROOT).resolve()
    cache_root.mkdir(parents=True, exist_ok=True)
    return cache_root, f"{p4_path.stem}-{fingerprint(p4_path, include_dirs, build, variant)}"


def _read_marker(path: Path, cls):
    """A marker as `cls`: a build's marker read as CachedP4Info gives its P4Info."""
    fields = json.loads(path.read_text())
    return cls(**{k: Path(fields[k]) if fields[k] else None for k in cls.__dataclass_fields__})


def _write_marker(path: Path, value) -> None:
    path.write_text(json.dumps({k: str(v) if v else None for k, v in asdict(value).items()},
                               indent=1))


def compile_cached(p4_path, cache_root=None, include_dirs=(), build=True,
                   variant: str = "release") -> CachedBuild:
    """Compile `p4_path` (raising CompileError like the driver), or reuse a
    complete build of exactly the same sources; `variant` as in
    t4p4s.driver (release, sanitize, fuzz)."""
    from t4p4s import driver  # imported late: `t4p4s --help` needs no compiler

    cache_root, key = _entry(p4_path, cache_root, include_dirs, build, variant)
    out_dir = cache_root / key
    with open(cache_root / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = out_dir / MARKER
        if marker.is_file():
            return _read_marker(marker, CachedBuild)
        _clear_partial_build(out_dir)
        # Built in place, not renamed afterwards: the executable records
        # where its P4Info is. From the resolved path: the generated C names
        # its source, and one entry serves callers that spell it relative
        # to any working directory (the key is the resolved path's).
        result = driver.compile_program(str(Path(p4_path).resolve()), str(out_dir),
                                        include_dirs=list(include_dirs) or None, build=build,
                                        variant=variant)
        cached = CachedBuild(
            p4info_binary_path=Path(result.p4info_binary_path),
            p4info_text_path=Path(result.p4info_text_path),
            c_path=Path(result.c_path),
            executable_path=Path(result.executable_path) if build else None)
        _write_marker(marker, cached)
        return cached


def _clear_partial_build(out_dir: Path) -> None:
    """What an interrupted build left (a half-linked executable would look
    up to date), but for a complete P4Info-only compile: its files are
    what the build writes again, byte for byte, and a controller may hold
    their paths or read them right now."""
    keep = set()
    p4info_marker = out_dir / P4INFO_MARKER
    if p4info_marker.is_file():
        p4info = _read_marker(p4info_marker, CachedP4Info)
        keep = {p4info_marker, p4info.p4info_binary_path, p4info.p4info_text_path}
    if not keep:
        shutil.rmtree(out_dir, ignore_errors=True)
        return
    for path in out_dir.iterdir():
        if path in keep:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def p4info_cached(p4_path, cache_root=None, include_dirs=(),
                  on_compile=None) -> CachedP4Info:
    """The P4Info of `p4_path`'s release build: the build's when it exists,
    else compiled as far as the P4Info (no C, no build) into the directory
    that build will use, once per content. on_compile() is called before
    a compile actually runs (a progress note: the cached case is silent).
    Raises CompileError and FileNotFoundError as compile_cached."""
    from t4p4s import driver  # imported late: `t4p4s --help` needs no compiler

    # the release build's key: one cache, one entry per program and sources
    cache_root, key = _entry(p4_path, cache_root, include_dirs, True, "release")
    out_dir = cache_root / key
    with open(cache_root / f".{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # another process compiles these sources now (maybe a whole
            # build): slow too, so the note comes before the wait
            if on_compile is not None:
                on_compile()
                on_compile = None
            fcntl.flock(lock, fcntl.LOCK_EX)
        for name in (MARKER, P4INFO_MARKER):
            if (out_dir / name).is_file():
                return _read_marker(out_dir / name, CachedP4Info)
        if on_compile is not None:
            on_compile()
        shutil.rmtree(out_dir, ignore_errors=True)
        result = driver.compile_p4info(str(Path(p4_path).resolve()), str(out_dir),
                                       include_dirs=list(include_dirs) or None)
        cached = CachedP4Info(p4info_binary_path=Path(result.p4info_binary_path),
                              p4info_text_path=Path(result.p4info_text_path))
        _write_marker(out_dir / P4INFO_MARKER, cached)
        return cached
