"""Header storage in the generated C: headers stay in the packet.

A header value is ``struct { uint8_t *p; uint8_t valid; uint8_t b[N]; }``:
``p`` points at its N wire-format bytes.  For a header of the headers
struct that the parser extracted, ``p`` points into the mbuf (extract is a
bounds check and a pointer, no copy) and field writes change the packet in
place; otherwise ``p`` points at the header's own scratch bytes ``b`` (a
header made valid by setValid() or by assignment while invalid, header
variables, action arguments).

Invariants the deparser and the I2E clone snapshot rely on: ``p`` is either
the header's own ``b`` or points into the parsed region of the packet; no
two headers point at the same packet bytes; only headers of the headers
struct point into the packet.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...ir import types as T
from .types import is_wide


def contains_header(t: T.Type) -> bool:
    if isinstance(t, (T.TypeHeader, T.TypeStack)):
        return True
    if isinstance(t, T.TypeStruct):
        return any(contains_header(f.type) for f in t.decl.fields)
    return False


def make_valid(h: str) -> str:
    """setValid(): an invalid header gets its scratch bytes (an extracted
    header invalidated since may still point into the packet)."""
    return f"if (!{h}.valid) {{ {h}.p = {h}.b; {h}.valid = 1; }}"


def init_storage(c: str, t: T.Type, w) -> None:
    """Every header inside ``c`` invalid, on its own scratch bytes; stacks
    empty.  Other fields are left alone."""
    if isinstance(t, T.TypeHeader):
        w.line(f"{c}.valid = 0;")
        w.line(f"{c}.p = {c}.b;")
    elif isinstance(t, T.TypeStack):
        for i in range(t.size):
            init_storage(f"{c}.e[{i}]", t.element, w)
        w.line(f"{c}.next_index = 0;")
    elif isinstance(t, T.TypeStruct):
        for f in t.decl.fields:
            if contains_header(f.type):
                init_storage(f"{c}.{f.name}", f.type, w)


def copy(dst: str, src: str, t: T.Type, size_of, w) -> None:
    """``dst = src`` for a header, struct or stack: header bytes are copied
    into dst's storage, never its pointer (which would alias src's bytes).
    ``size_of(header_type)`` gives a header's wire size."""
    if not contains_header(t):
        w.line(f"{dst} = {src};")
    elif isinstance(t, T.TypeHeader):
        with w.block(f"if ({src}.valid)"):
            w.line(f"if (!{dst}.valid) {dst}.p = {dst}.b;")
            w.line(f"p4_move_bytes({dst}.p, {src}.p, {size_of(t)});")
        w.line(f"{dst}.valid = {src}.valid;")
    elif isinstance(t, T.TypeStack):
        for i in range(t.size):
            copy(f"{dst}.e[{i}]", f"{src}.e[{i}]", t.element, size_of, w)
        w.line(f"{dst}.next_index = {src}.next_index;")
    else:
        for f in t.decl.fields:
            d, s = f"{dst}.{f.name}", f"{src}.{f.name}"
            if is_wide(f.type):
                w.line(f"memcpy({d}, {s}, sizeof({d}));")
            else:
                copy(d, s, f.type, size_of, w)


def rebase(dst: str, src: str, t: T.Type, to: str, base: str, w) -> None:
    """``dst`` takes ``src``'s headers (all in the packet at ``base``) as
    pointers to the same offsets from ``to``, in a copy of that packet."""
    if isinstance(t, T.TypeHeader):
        with w.block(f"if ({src}.valid)"):
            w.line(f"{dst}.valid = 1;")
            w.line(f"{dst}.p = {to} + ({src}.p - {base});")
    elif isinstance(t, T.TypeStack):
        for i in range(t.size):
            rebase(f"{dst}.e[{i}]", f"{src}.e[{i}]", t.element, to, base, w)
        w.line(f"{dst}.next_index = {src}.next_index;")
    elif isinstance(t, T.TypeStruct):
        for f in t.decl.fields:
            if contains_header(f.type):
                rebase(f"{dst}.{f.name}", f"{src}.{f.name}", f.type, to, base, w)


def relocate(dst: str, src: str, t: T.Type, to: str, base: str, w) -> None:
    """``dst``, a byte-for-byte copy of ``src`` (its scratch bytes too), made
    independent: each header in the packet at ``base`` points at the same
    offset from ``to`` (a copy of that packet), each header on its scratch
    bytes at dst's own.  For a multicast replica, whose egress may write
    any header."""
    if isinstance(t, T.TypeHeader):
        w.line(f"{dst}.p = {src}.p == {src}.b ? {dst}.b : {to} + ({src}.p - {base});")
    elif isinstance(t, T.TypeStack):
        for i in range(t.size):
            relocate(f"{dst}.e[{i}]", f"{src}.e[{i}]", t.element, to, base, w)
    elif isinstance(t, T.TypeStruct):
        for f in t.decl.fields:
            if contains_header(f.type):
                relocate(f"{dst}.{f.name}", f"{src}.{f.name}", f.type, to, base, w)


def move_element(dst: str, src: str, size: int, w) -> None:
    """One step of push_front/pop_front: element ``dst`` takes ``src``'s
    value.  A header in the packet moves by pointer; one on its scratch
    bytes is copied, because each element's scratch belongs to it."""
    w.line(f"{dst}.valid = {src}.valid;")
    with w.block(f"if ({src}.p == {src}.b)"):
        w.line(f"memcpy({dst}.b, {src}.b, {size});")
        w.line(f"{dst}.p = {dst}.b;")
    w.line(f"else {dst}.p = {src}.p;")


@dataclass(frozen=True)
class Instance:
    """A header of the headers struct (a stack counts as ``stack_size``
    consecutive instances)."""
    path: str                  # C lvalue, e.g. "s->hdr.ethernet" or the stack
    type: T.TypeHeader
    size: int                  # wire bytes of one header
    index: int                 # first instance number
    offset: int                # first byte in a buffer of all instances' bytes
    stack_size: Optional[int] = None

    @property
    def count(self) -> int:
        return self.stack_size or 1


def instances(t: T.Type, path: str, size_of) -> list:
    """The header instances inside struct type ``t`` at C path ``path``."""
    out: list = []

    def visit(t, path):
        for f in t.decl.fields if isinstance(t, T.TypeStruct) else []:
            p = f"{path}.{f.name}"
            index = sum(i.count for i in out)
            offset = sum(i.count * i.size for i in out)
            if isinstance(f.type, T.TypeHeader):
                out.append(Instance(p, f.type, size_of(f.type), index, offset))
            elif isinstance(f.type, T.TypeStack):
                out.append(Instance(p, f.type.element, size_of(f.type.element),
                                    index, offset, f.type.size))
            elif isinstance(f.type, T.TypeStruct):
                visit(f.type, p)

    visit(t, path)
    return out
