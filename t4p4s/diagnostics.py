"""Compiler diagnostics shared by every stage (front end, mid end, back ends).

A stage that rejects a program raises :class:`CompileError` holding one or
more :class:`Diagnostic`; ``str()`` of the error is one
``file:line:col: error: message`` line per diagnostic, the format editors
and CI logs understand.  Stages that can keep going after an error collect
diagnostics in a :class:`DiagnosticSink` and raise once at the end of the
pass, so users see several errors per run where that is cheap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from .ir.nodes import NO_SRC, SrcInfo


@dataclass(frozen=True)
class Diagnostic:
    src: SrcInfo
    message: str
    severity: str = "error"          # "error" | "warning" | "note"

    def __str__(self) -> str:
        src = self.src or NO_SRC
        return f"{src.file}:{src.line}:{src.col}: {self.severity}: {self.message}"


class CompileError(Exception):
    """A rejected program.  ``diagnostics`` holds at least one error."""

    def __init__(self, diagnostics: Iterable[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__(str(self))

    @classmethod
    def at(cls, src: Optional[SrcInfo], message: str) -> "CompileError":
        """The common case: one error at one location."""
        return cls([Diagnostic(src or NO_SRC, message)])

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)


class DiagnosticSink:
    """Collects diagnostics during a pass; ``check()`` raises if any error."""

    def __init__(self, limit: int = 50):
        self.diagnostics: list[Diagnostic] = []
        self.limit = limit

    def error(self, src: Optional[SrcInfo], message: str) -> None:
        self.diagnostics.append(Diagnostic(src or NO_SRC, message))
        if self.error_count() >= self.limit:
            raise CompileError(self.diagnostics)

    def warning(self, src: Optional[SrcInfo], message: str) -> None:
        self.diagnostics.append(Diagnostic(src or NO_SRC, message, "warning"))

    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    def check(self) -> None:
        if self.error_count():
            raise CompileError([d for d in self.diagnostics if d.severity == "error"])
