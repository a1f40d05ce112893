"""``compile_program``: P4 source -> P4Info + C -> DPDK executable.

front end -> mid end (v1model binding) -> resource catalog (ids) ->
P4Info (binary and text) -> C -> ``make -C t4p4s/runtime program``.
The build is skipped when neither the C file nor the runtime library
changed since the executable was linked.

``compile_p4info`` stops after the P4Info (no C, no make): a fraction of
a second where a build takes half a minute, for a controller that needs
only the program's P4Info. Both write the P4Info with the same code, so
the files are byte for byte the same.

Variants (t4p4s/runtime/Makefile): "release" (what targets run),
"sanitize" (ASan + UBSan, what the tests run a second time) and "fuzz"
(the program linked with the libFuzzer harness instead of main()).
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .backend import resources as resources_mod
from .backend.c import generate_c
from .backend.p4info import build_p4info, write_p4info
from .diagnostics import CompileError
from .ir.nodes import SrcInfo
from .midend import v1model

REPO = Path(__file__).resolve().parent.parent
RUNTIME_DIR = REPO / "t4p4s" / "runtime"
VARIANTS = ("release", "sanitize", "fuzz")


@dataclass
class CompileResult:
    p4info_binary_path: Path
    p4info_text_path: Path
    c_path: Path
    executable_path: Path


class BuildError(CompileError):
    """The generated C did not build: a compiler or runtime bug, reported
    with the build output."""


@dataclass
class P4InfoResult:
    p4info_binary_path: Path
    p4info_text_path: Path


def _to_p4info(p4_path: Path, out_dir: Path, include_dirs):
    """Front end, mid end, resource catalog and the P4Info written to
    out_dir: what a build and a P4Info-only compile share."""
    from .frontend import compile_frontend      # imported late: heavy (lark)

    out_dir.mkdir(parents=True, exist_ok=True)
    program = compile_frontend(str(p4_path), tuple(include_dirs or ()))
    bound = v1model.bind(program)
    res = resources_mod.collect(bound)
    binary, text = write_p4info(build_p4info(res, p4_path.stem), out_dir, p4_path.stem)
    return bound, res, binary, text


def compile_p4info(p4_path, out_dir, include_dirs=None) -> P4InfoResult:
    """The program's P4Info only (NAME.p4info.binpb and .txtpb in out_dir),
    the same bytes compile_program writes; errors as compile_program's."""
    _, _, binary, text = _to_p4info(Path(p4_path), Path(out_dir), include_dirs)
    return P4InfoResult(binary, text)


def compile_program(p4_path, out_dir, include_dirs=None, build: bool = True,
                    build_dir: Optional[Path] = None, variant: str = "release") -> CompileResult:
    p4_path = Path(p4_path)
    out_dir = Path(out_dir)
    name = p4_path.stem
    bound, res, binary, text = _to_p4info(p4_path, out_dir, include_dirs)
    c_text = generate_c(bound, res, name, str(p4_path), str(binary.resolve()))
    c_path = out_dir / f"{name}.c"
    if not c_path.exists() or c_path.read_text() != c_text:
        c_path.write_text(c_text)
    exe = out_dir / name
    result = CompileResult(binary, text, c_path, exe)
    if build:
        build_executable(c_path, exe, build_dir, variant)
    return result


def runtime_build_dir(variant: str = "release") -> Path:
    """Where the runtime library of a variant is built."""
    return REPO / "build" / ("runtime" if variant == "release" else f"runtime-{variant}")


def build_executable(c_path: Path, exe: Path, build_dir: Optional[Path] = None,
                     variant: str = "release") -> None:
    """Links the C file with the runtime library of `variant`.  The library
    is brought up to date first (make rebuilds it only when runtime sources
    changed); the link is skipped when the executable is newer than both the
    C file and the library."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown build variant {variant!r}: one of {', '.join(VARIANTS)}")
    build_dir = Path(build_dir).resolve() if build_dir else runtime_build_dir(variant)
    build_dir.mkdir(parents=True, exist_ok=True)
    make = ["make", "--no-print-directory", "-C", str(RUNTIME_DIR),
            f"BUILD_DIR={build_dir}", f"VARIANT={variant}"]
    _run(["flock", str(build_dir / ".lock")] + make + ["lib"], c_path)
    lib = build_dir / "libt4p4s_runtime.a"
    if exe.exists() and lib.exists() and \
            exe.stat().st_mtime >= max(c_path.stat().st_mtime, lib.stat().st_mtime):
        return
    target = "fuzzer" if variant == "fuzz" else "program"
    _run(make + [target, f"PROGRAM_C={c_path.resolve()}", f"OUT={exe.resolve()}"], c_path)


def _run(cmd: list, c_path: Path) -> None:
    env = dict(os.environ)
    env.setdefault("MAKEFLAGS", "-j2")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-40:])
        raise BuildError.at(SrcInfo(str(c_path), 0, 0),
                            f"building the DPDK executable failed:\n{tail}")
