"""C representation of P4 types.

Headers are in wire format, each field at a constant bit offset:
``struct { uint8_t *p; uint8_t valid; uint8_t b[N]; }`` where ``p`` points at
the header's bytes, in the packet or in ``b`` (see headers.py), so a field
access is a constant-offset ``t4p4s_get_bits``/``set_bits`` on ``p``.
Everything else (metadata, locals) is host order: ``bit<W>`` is the
smallest ``uintN_t`` holding it, or big-endian ``uint8_t[ceil(W/8)]`` (value
right-aligned) when W > 64; a signed ``int<W>`` holds its two's complement
bit pattern zero-extended to the storage type.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from .emit import CodeWriter, source_comment

WIDE = 64          # widths above this are byte arrays


def storage_bytes(width: int) -> int:
    return (width + 7) // 8


def uint_type(width: int) -> str:
    for bits in (8, 16, 32, 64):
        if width <= bits:
            return f"uint{bits}_t"
    raise ValueError(width)


def is_wide(t: T.Type) -> bool:
    return isinstance(t, T.TypeBits) and t.width > WIDE


@dataclass(frozen=True)
class FieldLayout:
    name: str
    bit_offset: int
    width: int
    type: T.Type


@dataclass
class HeaderLayout:
    c_name: str
    size: int                  # bytes on the wire
    fields: dict               # name -> FieldLayout


class CTypes:
    """Names and layouts of the C types the program needs; ``definitions()``
    writes them in dependency order."""

    def __init__(self):
        self._headers: dict = {}       # id(decl) -> HeaderLayout
        self._order: list = []         # (kind, decl or type) in definition order
        self._defined: set = set()

    # ---- layouts -------------------------------------------------------

    def header(self, decl: ir.HeaderDecl) -> HeaderLayout:
        layout = self._headers.get(id(decl))
        if layout is None:
            layout = self._layout_header(decl)
            self._headers[id(decl)] = layout
        return layout

    def _layout_header(self, decl: ir.HeaderDecl) -> HeaderLayout:
        fields, offset = {}, 0
        for f in decl.fields:
            t = f.type
            if isinstance(t, T.TypeVarbit):
                raise CompileError.at(f.src, f"unsupported: varbit field "
                                      f"'{decl.name}.{f.name}'")
            try:
                width = T.width_of(t)
            except ValueError:
                raise CompileError.at(f.src, f"unsupported: header field "
                                      f"'{decl.name}.{f.name}' of type {t}")
            fields[f.name] = FieldLayout(f.name, offset, width, t)
            offset += width
        if offset % 8:
            raise CompileError.at(decl.src, f"header '{decl.name}' is "
                                  f"{offset} bits, not a whole number of bytes")
        return HeaderLayout(f"hdr_{decl.name}", offset // 8, fields)

    # ---- declarations --------------------------------------------------

    def c_type(self, t: T.Type, src=None) -> str:
        """C type of a host-order value or composite (not for wide bits)."""
        if isinstance(t, T.TypeBits):
            return uint_type(t.width)
        if isinstance(t, T.TypeBool):
            return "bool"
        if isinstance(t, T.TypeError_):
            return "uint16_t"
        if isinstance(t, T.TypeEnum):
            u = t.decl.underlying
            return uint_type(u.width) if u is not None else "uint32_t"
        if isinstance(t, T.TypeHeader):
            self._require(t)
            return f"struct {self.header(t.decl).c_name}"
        if isinstance(t, T.TypeStruct):
            self._require(t)
            return f"struct struct_{t.decl.name}"
        if isinstance(t, T.TypeStack):
            self._require(t)
            return f"struct {self.stack_name(t)}"
        if isinstance(t, T.TypeHeaderUnion):
            raise CompileError.at(src, f"unsupported: header union "
                                  f"'{t.decl.name}'")
        raise CompileError.at(src, f"unsupported: values of type {t}")

    def header_size(self, t: T.TypeHeader) -> int:
        return self.header(t.decl).size

    def declare(self, t: T.Type, name: str, src=None) -> str:
        if is_wide(t):
            return f"uint8_t {name}[{storage_bytes(t.width)}]"
        return f"{self.c_type(t, src)} {name}"

    def stack_name(self, t: T.TypeStack) -> str:
        return f"stack_{t.element.decl.name}_{t.size}"

    def _require(self, t: T.Type) -> None:
        key = ("stack", t.element.decl.name, t.size) if isinstance(t, T.TypeStack) \
            else id(t.decl)
        if key in self._defined:
            return
        self._defined.add(key)
        if isinstance(t, T.TypeStruct):
            for f in t.decl.fields:
                if not is_wide(f.type):
                    self.c_type(f.type, f.src)     # dependencies first
        elif isinstance(t, T.TypeStack):
            if not isinstance(t.element, T.TypeHeader):
                raise CompileError.at(None, f"unsupported: stack of {t.element}")
            self.c_type(t.element)
        self._order.append(t)

    def definitions(self) -> CodeWriter:
        w = CodeWriter()
        for t in self._order:
            if isinstance(t, T.TypeHeader):
                layout = self.header(t.decl)
                w.line(source_comment(t.decl.src))
                w.line(f"/* wire format, {layout.size} bytes: " + ", ".join(
                    f"{f.name} bits {f.bit_offset}..{f.bit_offset + f.width - 1}"
                    for f in layout.fields.values()) + " */")
                with w.block(f"struct {layout.c_name}", "};"):
                    w.line("uint8_t *p;       /* the bytes: in the packet, or b */")
                    w.line("uint8_t valid;")
                    w.line(f"uint8_t b[{max(layout.size, 1)}];")
            elif isinstance(t, T.TypeStruct):
                w.line(source_comment(t.decl.src))
                with w.block(f"struct struct_{t.decl.name}", "};"):
                    for f in t.decl.fields:
                        w.line(self.declare(f.type, f.name, f.src) + ";")
                    if not t.decl.fields:
                        w.line("uint8_t unused_;  /* empty P4 struct */")
            else:
                with w.block(f"struct {self.stack_name(t)}", "};"):
                    w.line(f"{self.c_type(t.element)} e[{t.size}];")
                    w.line("uint32_t next_index;")
            w.line()
        return w
