"""Compile a P4 program once per content: the cache behind `t4p4s stf`,
`t4p4s run`, `t4p4s p4info` and the test suite.

A build lives in CACHE_ROOT/STEM-HASH/, where HASH covers the program, the
files it `#include "..."`s, the include directories given, and every source
of the compiler and runtime: editing any of them gives a new directory, so a
stale executable is never reused. A `build.json` marker, written last, says
the build is complete; a lock serializes concurrent builders of one program.
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


@dataclass
class CachedBuild:
    """The same fields as t4p4s.driver.CompileResult."""
    p4info_binary_path: Path
    p4info_text_path: Path
    c_path: Path
    executable_path: Path | None


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


def compile_cached(p4_path, cache_root=None, include_dirs=(), build=True,
                   variant: str = "release") -> CachedBuild:
    """Compile `p4_path` (raising CompileError like the driver), or reuse a
    complete build of exactly the same sources; `variant` as in
    t4p4s.driver (release, sanitize, fuzz)."""
    from t4p4s import driver  # imported late: `t4p4s --help` needs no compiler

    p4_path = Path(p4_path)
    if not p4_path.is_file():
        raise FileNotFoundError(f"{p4_path}: no such P4 program")
    # absolute: the marker keeps the paths it returns, for callers in any
    # working directory
    cache_root = (Path(cache_root) if cache_root else DEFAULT_CACHE_ROOT).resolve()
    cache_root.mkdir(parents=True, exist_ok=True)
    key = f"{p4_path.stem}-{fingerprint(p4_path, include_dirs, build, variant)}"
    out_dir = cache_root / key
    with open(cache_root / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = out_dir / MARKER
        if marker.is_file():
            return CachedBuild(**{k: Path(v) if v else None
                                  for k, v in json.loads(marker.read_text()).items()})
        shutil.rmtree(out_dir, ignore_errors=True)
        # Built in place, not renamed afterwards: the executable records
        # where its P4Info is.
        result = driver.compile_program(str(p4_path), str(out_dir),
                                        include_dirs=list(include_dirs) or None, build=build,
                                        variant=variant)
        cached = CachedBuild(
            p4info_binary_path=Path(result.p4info_binary_path),
            p4info_text_path=Path(result.p4info_text_path),
            c_path=Path(result.c_path),
            executable_path=Path(result.executable_path) if build else None)
        marker.write_text(json.dumps({k: str(v) if v else None
                                      for k, v in asdict(cached).items()}, indent=1))
        return cached
