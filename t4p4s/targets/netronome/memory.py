"""Memory estimate per table, register and counter array on the Agilio CX,
in the spirit of paper 001's Table I (docs/netronome.md has the formula
next to the paper's figures).

    table:    entries * (key bytes + action data bytes + ENTRY_OVERHEAD_BYTES)
    register: cells * (cell width rounded up to whole 32-bit words)
    counter:  cells * 8 bytes per unit (16 for packets_and_bytes)

Key bytes: exact fields count their width; ternary, lpm and range fields
count twice (value and mask, or low and high bound); the sum is rounded up
to whole bytes. Action data bytes: the largest action data of the table's
actions (sum of its directionless parameters' widths, rounded up to bytes).
A keyless table holds one entry, its default action.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...backend import resources as R
from ...ir import nodes as ir
from ...ir import types as T
from . import limits

_TWO_VALUE_KINDS = frozenset({"ternary", "lpm", "range", "optional"})


@dataclass
class TableEstimate:
    name: str
    src: ir.SrcInfo
    match_kinds: list
    key_bits: int
    entries: int
    size_declared: bool           # False: the SDK's default size applies
    key_bytes: int
    action_data_bytes: int

    @property
    def bytes_per_entry(self) -> int:
        return self.key_bytes + self.action_data_bytes + limits.ENTRY_OVERHEAD_BYTES

    @property
    def total_bytes(self) -> int:
        return self.entries * self.bytes_per_entry


@dataclass
class ArrayEstimate:
    """A register or counter array (direct counters: one cell per entry)."""
    name: str
    src: ir.SrcInfo
    kind: str                     # "register" | "counter" | "direct_counter"
    cells: int
    bytes_per_cell: int

    @property
    def total_bytes(self) -> int:
        return self.cells * self.bytes_per_cell


def _bytes(bits: int) -> int:
    return (bits + 7) // 8


def table_entries(table: R.TableInfo) -> Optional[int]:
    """Entries the card allocates: the declared size, the SDK's default
    without one, 1 for a keyless table (only its default action)."""
    if not table.decl.keys:
        return 1
    if table.decl.size is not None:
        return table.decl.size
    return limits.DEFAULT_TABLE_SIZE


def estimate_table(table: R.TableInfo) -> TableEstimate:
    widths = [R.key_field_width(k) for k in table.decl.keys]
    stored_bits = sum(w * (2 if k.match_kind in _TWO_VALUE_KINDS else 1)
                      for k, w in zip(table.decl.keys, widths))
    action_bits = max((sum(T.width_of(p.type) for p in ref.action.data_params)
                       for ref in table.actions), default=0)
    return TableEstimate(
        name=table.name, src=table.decl.src,
        match_kinds=[k.match_kind for k in table.decl.keys],
        key_bits=sum(widths), entries=table_entries(table),
        size_declared=table.decl.size is not None or not table.decl.keys,
        key_bytes=_bytes(stored_bits), action_data_bytes=_bytes(action_bits))


def estimate_register(reg: R.RegisterInfo) -> ArrayEstimate:
    words = -(-reg.bitwidth // (8 * limits.WORD_BYTES))
    return ArrayEstimate(reg.name, reg.decl.src, "register", reg.size,
                         words * limits.WORD_BYTES)


def estimate_counter(counter: R.CounterInfo) -> ArrayEstimate:
    units = 2 if counter.unit == "packets_and_bytes" else 1
    if counter.direct:
        cells = table_entries(counter.table) if counter.table else 0
        kind = "direct_counter"
    else:
        cells, kind = counter.size, "counter"
    return ArrayEstimate(counter.name, counter.decl.src, kind, cells,
                         units * limits.COUNTER_UNIT_BYTES)
