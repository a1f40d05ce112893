"""The bulk-write hot path: many INSERTs (or MODIFYs: `drb load --replace`)
into one exact-match table, encoded by column instead of entity by entity.

protobuf serializes one template Update whose every key and parameter is
given at its full width (P4Runtime servers accept such zero-padded byte
strings; Read answers are canonical). With every value at a fixed width the
layout is the same for every entry, so the template's byte offsets of each
value are found once (by serializing it with all-zero and all-one values
and comparing) and the N encoded updates are the template repeated N times
with the value columns written in with numpy. 131,072 updates take ~10 ms
this way against ~4 s through finsy's P4TableEntry.encode (and ~1.3 s
building protobuf messages field by field)."""
from __future__ import annotations

from dataclasses import dataclass

import finsy as fy
import numpy as np
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import MissingP4Object


@dataclass(frozen=True)
class _Slot:
    column: str
    offset: int
    width: int


class ExactInsertEncoder:
    """Encodes INSERTs of `table` with `action` (or updates of another
    `update_type`: MODIFY); encode() takes one value (int, or a numpy
    integer array of one value per entry) per match field and action
    parameter name."""

    def __init__(self, schema: fy.P4Schema, target_name: str, table: str, action: str,
                 update_type: int = p4r.Update.INSERT):
        if schema.tables.get(table) is None:
            raise MissingP4Object(target_name, "table", table)
        if schema.actions.get(action) is None:
            raise MissingP4Object(target_name, "action", action)
        self.table = schema.tables[table]
        self.action = schema.actions[action]
        self.update_type = update_type
        self.fields = {f.name: (f.id, f.bitwidth) for f in self.table.match_fields}
        self.params = {p.name: (p.id, p.bitwidth) for p in self.action.params}
        too_wide = [n for n, (_, bits) in {**self.fields, **self.params}.items() if bits > 64]
        if too_wide:
            raise ValueError(f"{table}/{action}: wider than 64 bits: {too_wide}")
        clash = set(self.fields) & set(self.params)
        if clash:
            raise ValueError(f"{table}/{action}: names used for key and parameter: {clash}")
        zeros = self._update(fill=0x00)
        ones = self._update(fill=0xFF)
        if len(zeros) != len(ones):
            raise AssertionError("template layout depends on values")
        self.template = np.frombuffer(zeros, dtype=np.uint8)
        self.slots = self._slots(zeros, ones)

    def _update(self, fill: int) -> bytes:
        """`updates` field of a WriteRequest (tag, length, Update)."""
        request = p4r.WriteRequest()
        update = request.updates.add(type=self.update_type)
        entry = update.entity.table_entry
        entry.table_id = self.table.id
        for field_id, bits in self.fields.values():
            entry.match.add(field_id=field_id).exact.value = \
                _full_width(bits, fill)
        action = entry.action.action
        action.action_id = self.action.id
        for param_id, bits in self.params.values():
            action.params.add(param_id=param_id, value=_full_width(bits, fill))
        return request.SerializeToString()

    def _slots(self, zeros: bytes, ones: bytes) -> list[_Slot]:
        differing = [i for i, (a, b) in enumerate(zip(zeros, ones)) if a != b]
        slots, cursor = [], 0
        # protobuf writes fields in the order they were added: keys, then params
        for name, (_, bits) in [*self.fields.items(), *self.params.items()]:
            width = (bits + 7) // 8
            offset = differing[cursor]
            if differing[cursor:cursor + width] != list(range(offset, offset + width)):
                raise AssertionError(f"{name}: value bytes are not contiguous")
            slots.append(_Slot(name, offset, width))
            cursor += width
        return slots

    def encode(self, count: int, values: dict) -> np.ndarray:
        """count x len(template) bytes: one serialized update per row."""
        missing = {s.column for s in self.slots} - set(values)
        if missing:
            raise ValueError(f"no value for {', '.join(sorted(missing))}")
        rows = np.tile(self.template, (count, 1))
        for slot in self.slots:
            column = np.broadcast_to(np.asarray(values[slot.column], dtype=np.uint64),
                                     (count,))
            bits = {**self.fields, **self.params}[slot.column][1]
            if bits < 64 and np.any(column >> np.uint64(bits)):
                raise ValueError(f"{slot.column}: a value does not fit in {bits} bits")
            big_endian = column.astype(">u8").view(np.uint8).reshape(count, 8)
            rows[:, slot.offset:slot.offset + slot.width] = big_endian[:, 8 - slot.width:]
        return rows


def _full_width(bits: int, fill: int) -> bytes:
    width = (bits + 7) // 8
    value = bytearray([fill]) * width
    value[0] &= (1 << (bits - 8 * (width - 1))) - 1
    return bytes(value)
