"""What `t4p4s check --target netronome` prints: the memory estimate as a
table (rich) or as JSON, and the profile's diagnostics."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...diagnostics import Diagnostic
from . import limits
from .memory import ArrayEstimate, TableEstimate


@dataclass
class ProfileReport:
    program: str
    tables: list = field(default_factory=list)        # list[TableEstimate]
    arrays: list = field(default_factory=list)        # list[ArrayEstimate]
    diagnostics: list = field(default_factory=list)   # list[Diagnostic]

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def total_bytes(self) -> int:
        return sum(t.total_bytes for t in self.tables) + \
            sum(a.total_bytes for a in self.arrays)

    def to_json(self) -> dict:
        return {
            "target": "netronome",
            "program": self.program,
            "ok": self.ok,
            "limits": {
                "max_table_entries": limits.MAX_TABLE_ENTRIES,
                "max_tables": limits.MAX_TABLES,
                "default_table_size": limits.DEFAULT_TABLE_SIZE,
                "entry_overhead_bytes": limits.ENTRY_OVERHEAD_BYTES,
                "emu_cache_bytes": limits.EMU_CACHE_BYTES,
                "emu_bytes": limits.EMU_BYTES,
            },
            "tables": [_table_json(t) for t in self.tables],
            "arrays": [_array_json(a) for a in self.arrays],
            "total_bytes": self.total_bytes,
            "emu_cache_percent": round(100 * self.total_bytes / limits.EMU_CACHE_BYTES, 2),
            "diagnostics": [_diagnostic_json(d) for d in self.diagnostics],
        }

    def render(self, console) -> None:
        from rich.table import Table

        tables = Table(title=f"{self.program}: Agilio CX tables (estimate)")
        tables.add_column("table", no_wrap=True)
        tables.add_column("match kind")
        for heading in ("key bits", "entries", "bytes/entry", "memory (B)"):
            tables.add_column(heading, justify="right", no_wrap=True)
        for t in self.tables:
            entries = f"{t.entries:,}" if t.size_declared else f"{t.entries:,} (default)"
            tables.add_row(t.name, ", ".join(t.match_kinds) or "(keyless)",
                           str(t.key_bits), entries, str(t.bytes_per_entry),
                           f"{t.total_bytes:,}")
        console.print(tables)
        arrays = Table(title="registers and counters (estimate)")
        arrays.add_column("name", no_wrap=True)
        arrays.add_column("kind")
        for heading in ("cells", "bytes/cell", "memory (B)"):
            arrays.add_column(heading, justify="right", no_wrap=True)
        for a in self.arrays:
            arrays.add_row(a.name, a.kind, f"{a.cells:,}", str(a.bytes_per_cell),
                           f"{a.total_bytes:,}")
        console.print(arrays)
        share = 100 * self.total_bytes / limits.EMU_CACHE_BYTES
        console.print(f"total {_size(self.total_bytes)} = {share:.2f} % of the "
                      f"{_size(limits.EMU_CACHE_BYTES)} EMU cache "
                      f"(per-entry overhead {limits.ENTRY_OVERHEAD_BYTES} bytes, "
                      f"see docs/netronome.md)")
        errors = sum(1 for d in self.diagnostics if d.severity == "error")
        warnings = sum(1 for d in self.diagnostics if d.severity == "warning")
        verdict = "fits the Agilio CX profile" if self.ok else "violates the Agilio CX profile"
        console.print(f"{self.program} {verdict}: {errors} error(s), {warnings} warning(s)")


def _size(n: int) -> str:
    return f"{n:,} B ({n / 1024 / 1024:.2f} MiB)" if n >= 1024 * 1024 else f"{n:,} B"


def _table_json(t: TableEstimate) -> dict:
    return {"name": t.name, "match_kinds": t.match_kinds, "key_bits": t.key_bits,
            "entries": t.entries, "size_declared": t.size_declared,
            "key_bytes": t.key_bytes, "action_data_bytes": t.action_data_bytes,
            "bytes_per_entry": t.bytes_per_entry, "total_bytes": t.total_bytes,
            "source": str(t.src)}


def _array_json(a: ArrayEstimate) -> dict:
    return {"name": a.name, "kind": a.kind, "cells": a.cells,
            "bytes_per_cell": a.bytes_per_cell, "total_bytes": a.total_bytes,
            "source": str(a.src)}


def _diagnostic_json(d: Diagnostic) -> dict:
    return {"file": d.src.file, "line": d.src.line, "col": d.src.col,
            "severity": d.severity, "message": d.message}
