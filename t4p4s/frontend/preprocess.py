"""Preprocessing with the system C preprocessor, as p4c does.

``cpp -undef -nostdinc -x c`` with ``t4p4s/p4include`` and the user's
include directories.  Line markers are kept and turned into a
:class:`SourceMap`, so every later diagnostic names the real file and line
(columns are exact except on lines where a macro was expanded, because cpp
re-spaces those lines; p4c has the same property).
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from ..diagnostics import CompileError, Diagnostic
from ..ir.nodes import SrcInfo

P4INCLUDE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "p4include")

_LINE_MARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"')
# cpp gives no column for some errors (an unterminated #ifndef at the end of
# a file): column 1 then
_CPP_DIAG = re.compile(r"^(.*?):(\d+):(?:(\d+):)? (?:fatal error|error): (.*)$")


@dataclass
class SourceMap:
    """Maps a line of the preprocessed text (1-based) to its origin."""
    origins: list          # index line-1 -> (file, line)

    def locate(self, line: int, col: int) -> SrcInfo:
        if 1 <= line <= len(self.origins):
            file, orig_line = self.origins[line - 1]
            return SrcInfo(file, orig_line, col)
        file, orig_line = self.origins[-1] if self.origins else ("<input>", 0)
        return SrcInfo(file, orig_line, col)


def preprocess(p4_path: str, include_dirs=()) -> tuple[str, SourceMap]:
    """Run cpp; return the text without line markers and its source map."""
    if not os.path.isfile(p4_path):
        raise CompileError.at(SrcInfo(p4_path, 0, 0), f"cannot open source file '{p4_path}'")
    cmd = ["cpp", "-undef", "-nostdinc", "-x", "c", "-I", P4INCLUDE_DIR]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    cmd.append(p4_path)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise CompileError.at(SrcInfo(p4_path, 0, 0), f"cannot run the C preprocessor (cpp): {e}")
    if proc.returncode != 0:
        raise CompileError(_cpp_diagnostics(proc.stderr, p4_path))
    return _strip_line_markers(proc.stdout, p4_path)


def _cpp_diagnostics(stderr: str, p4_path: str) -> list:
    diags = []
    for line in stderr.splitlines():
        m = _CPP_DIAG.match(line)
        if m:
            diags.append(Diagnostic(SrcInfo(m.group(1), int(m.group(2)), int(m.group(3) or 1)),
                                    m.group(4)))
    if not diags:
        diags.append(Diagnostic(SrcInfo(p4_path, 0, 0),
                                "preprocessing failed: " + (stderr.strip() or "cpp error")))
    return diags


def _strip_line_markers(text: str, p4_path: str) -> tuple[str, SourceMap]:
    out_lines, origins = [], []
    file, line = p4_path, 1
    for raw in text.split("\n"):
        m = _LINE_MARKER.match(raw)
        if m:
            line, file = int(m.group(1)), m.group(2).encode().decode("unicode_escape")
            out_lines.append("")           # keep the line count aligned
            origins.append((file, line))
            continue
        out_lines.append(raw)
        origins.append((file, line))
        line += 1
    return "\n".join(out_lines), SourceMap(origins)
