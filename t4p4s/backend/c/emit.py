"""A small C code writer: indentation, blocks, and source-line comments."""
from __future__ import annotations

import contextlib
import functools
import os

from ...ir.nodes import SrcInfo


@functools.lru_cache(maxsize=64)
def _source_lines(path: str) -> tuple:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return tuple(f.read().splitlines())
    except OSError:
        return ()


def source_comment(src: SrcInfo) -> str:
    """``/* file.p4:LINE: source text */`` for a node's location."""
    if src is None or src.line <= 0:
        return ""
    lines = _source_lines(src.file)
    text = lines[src.line - 1].strip() if src.line <= len(lines) else ""
    text = text.replace("/*", "/ *").replace("*/", "* /")
    if len(text) > 90:
        text = text[:87] + "..."
    where = f"{os.path.basename(src.file)}:{src.line}"
    return f"/* {where}: {text} */" if text else f"/* {where} */"


class CodeWriter:
    def __init__(self, indent: str = "\t"):
        self._lines: list[str] = []
        self._depth = 0
        self._indent = indent

    def line(self, text: str = "") -> None:
        self._lines.append(self._indent * self._depth + text if text else "")

    def lines(self, text: str) -> None:
        for t in text.splitlines():
            self.line(t)

    def comment_src(self, src: SrcInfo) -> None:
        c = source_comment(src)
        if c:
            self.line(c)

    @contextlib.contextmanager
    def block(self, opener: str, closer: str = "}"):
        """``opener {`` ... ``}`` with the body indented."""
        self.line(opener + " {" if opener else "{")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.line(closer)

    @contextlib.contextmanager
    def indented(self):
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def extend(self, other: "CodeWriter") -> None:
        self._lines.extend(self._indent * self._depth + l if l else ""
                           for l in other._lines)

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"
