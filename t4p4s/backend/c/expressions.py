"""P4 expressions to C.

Values up to 64 bits are ``uint64_t`` C expressions holding the value
wrapped to its width (signed values as their two's complement bit pattern,
sign-extended with ``t4p4s_sext`` only where the operation needs it).
Bit strings wider than 64 bits are referenced, not evaluated: a
``(pointer, bit offset)`` into a byte array (header bytes, host-order
big-endian storage, action data or a constant), which supports copy,
equality, slicing and use as a table key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from . import headers
from .types import CTypes, is_wide, storage_bytes

B = ir.BinOp


@dataclass(frozen=True)
class Host:
    """A host-order C lvalue: scalar, struct, header struct or stack."""
    c: str
    type: T.Type


@dataclass(frozen=True)
class Bits:
    """``width`` big-endian bits at ``bit_offset`` of the bytes at ``ptr``."""
    ptr: str
    bit_offset: int
    width: int
    type: T.Type


Location = Union[Host, Bits]


def c_int(v: int) -> str:
    if v < 0:
        v &= (1 << 64) - 1
    return f"UINT64_C({v})" if v < 10 else f"UINT64_C(0x{v:x})"


def width_of(t: T.Type, src=None) -> int:
    try:
        return T.width_of(t)
    except ValueError:
        raise CompileError.at(src, f"unsupported: expression of type {t} "
                              f"where a bit string is needed")


class ExprGen:
    """Translates expressions of one block.  ``bindings`` maps declarations
    (params, locals) to their C lvalues; ``calls`` translates the
    value-returning method calls (table results, lookahead, ...) that
    belong to the block's kind."""

    def __init__(self, ctypes: CTypes, constants, errors: list,
                 bindings: dict, calls: Callable[[ir.MethodCall], str]):
        self.ctypes = ctypes
        self.constants = constants        # WideConstants
        self.errors = errors              # error member names, code = index
        self.bindings = bindings          # id(decl) -> str (C lvalue)
        self.calls = calls

    def with_bindings(self, extra: dict) -> "ExprGen":
        merged = dict(self.bindings)
        merged.update(extra)
        return ExprGen(self.ctypes, self.constants, self.errors, merged,
                       self.calls)

    # ---- locations -----------------------------------------------------

    def locate(self, e: ir.Expression) -> Location:
        if isinstance(e, Located):
            return e.loc
        if isinstance(e, ir.PathExpr):
            c = self.bindings.get(id(e.decl))
            if c is None:
                raise CompileError.at(e.src, f"unsupported: reference to "
                                      f"'{e.name}' here")
            return self._host_or_bits(c, e.type)
        if isinstance(e, ir.Member):
            return self._locate_member(e)
        if isinstance(e, ir.ArrayIndex):
            base = self._host(e.expr)
            st = e.expr.type
            if not isinstance(st, T.TypeStack):
                raise CompileError.at(e.src, "unsupported: indexing a non-stack")
            if isinstance(e.index, ir.IntLiteral):
                if not 0 <= e.index.value < st.size:
                    raise CompileError.at(e.index.src, f"index {e.index.value} "
                                          f"out of bounds of {st}")
                idx = str(e.index.value)
            else:
                idx = f"p4_stack_index({self.value(e.index)}, {st.size})"
            return Host(f"{base.c}.e[{idx}]", st.element)
        if isinstance(e, ir.Slice):
            loc = self.locate(e.expr)
            if isinstance(loc, Bits):
                return Bits(loc.ptr, loc.bit_offset + loc.width - 1 - e.hi,
                            e.hi - e.lo + 1, e.type)
            raise _NotBits()
        if isinstance(e, ir.Cast) and e.type == e.expr.type:
            return self.locate(e.expr)          # a cast to its own type is a no-op
        raise CompileError.at(e.src, f"unsupported: {type(e).__name__} "
                              f"used as a location")

    def _host_or_bits(self, c: str, t: T.Type) -> Location:
        if is_wide(t):
            n = storage_bytes(t.width)
            return Bits(c, 8 * n - t.width, t.width, t)
        return Host(c, t)

    def _host(self, e: ir.Expression) -> Host:
        loc = self.locate(e)
        if not isinstance(loc, Host):
            raise CompileError.at(e.src, "unsupported: expected a header, "
                                  "struct or stack")
        return loc

    def _locate_member(self, e: ir.Member) -> Location:
        bt = e.expr.type
        if isinstance(bt, T.TypeHeader):
            base = self._host(e.expr)
            layout = self.ctypes.header(bt.decl)
            f = layout.fields.get(e.name)
            if f is None:
                raise CompileError.at(e.src, f"no field '{e.name}' in header "
                                      f"'{bt.decl.name}'")
            return Bits(f"{base.c}.p", f.bit_offset, f.width, e.type)
        if isinstance(bt, T.TypeStruct):
            base = self._host(e.expr)
            return self._host_or_bits(f"{base.c}.{e.name}", e.type)
        if isinstance(bt, T.TypeStack):
            base = self._host(e.expr)
            n = bt.size
            if e.name == "next":
                return Host(f"{base.c}.e[p4_stack_index({base.c}.next_index, {n})]",
                            bt.element)
            if e.name == "last":
                return Host(f"{base.c}.e[p4_stack_index({base.c}.next_index - 1u, {n})]",
                            bt.element)
        raise CompileError.at(e.src, f"unsupported: '.{e.name}' used as a "
                              f"location")

    # ---- values --------------------------------------------------------

    def value(self, e: ir.Expression) -> str:
        """C expression for the value of ``e`` (not for wide bit strings)."""
        t = e.type
        if is_wide(t) and not isinstance(e, (ir.Binary, ir.Unary)):
            raise CompileError.at(e.src, f"unsupported: {t} value here (wide "
                                  f"bit strings support copy, ==, !=, slices "
                                  f"and table keys)")
        if isinstance(e, ir.IntLiteral):
            if isinstance(t, T.TypeBits):
                return c_int(e.value & ((1 << t.width) - 1))
            return c_int(e.value)
        if isinstance(e, Located):
            return self.read(e.loc)
        if isinstance(e, ir.BoolLiteral):
            return "true" if e.value else "false"
        if isinstance(e, (ir.PathExpr, ir.ArrayIndex)):
            if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.ConstDecl):
                return self.value(e.decl.value)
            return self.read(self.locate(e))
        if isinstance(e, ir.Member):
            return self._member_value(e)
        if isinstance(e, ir.Slice):
            return self._slice_value(e)
        if isinstance(e, ir.Cast):
            return self._cast(e)
        if isinstance(e, ir.Unary):
            return self._unary(e)
        if isinstance(e, ir.Binary):
            return self._binary(e)
        if isinstance(e, ir.Mux):
            return (f"({self.value(e.cond)} ? {self.value(e.then)} : "
                    f"{self.value(e.other)})")
        if isinstance(e, ir.MethodCall):
            if e.kind == ir.CallKind.HEADER_IS_VALID:
                return f"({self._host(e.target.expr).c}.valid != 0)"
            return self.calls(e)
        raise CompileError.at(e.src, f"unsupported: expression "
                              f"{type(e).__name__}")

    def read(self, loc: Location) -> str:
        if isinstance(loc, Bits):
            if loc.width > 64:
                raise CompileError.at(None, "internal: wide read")
            v = f"t4p4s_get_bits({loc.ptr}, {loc.bit_offset}, {loc.width})"
            return f"({v} != 0)" if isinstance(loc.type, T.TypeBool) else v
        if isinstance(loc.type, T.TypeBool):
            return loc.c
        return f"(uint64_t){loc.c}"

    def _member_value(self, e: ir.Member) -> str:
        bt = e.expr.type
        if isinstance(e.expr, ir.TypeNameExpr):
            return str(self.enum_code(e))
        if isinstance(bt, T.TypeStack):
            base = self._host(e.expr).c
            if e.name == "size":
                return c_int(bt.size)
            if e.name == "lastIndex":
                return f"t4p4s_wrap((uint64_t){base}.next_index - 1, 32)"
            if e.name == "nextIndex":
                return f"(uint64_t){base}.next_index"
        if isinstance(bt, T.TypeTableResult) or isinstance(e.expr, ir.MethodCall) \
                and e.expr.kind == ir.CallKind.TABLE_APPLY:
            entry = self.calls(e.expr)
            if e.name == "hit":
                return f"({entry}->hit)"
            if e.name == "miss":
                return f"(!{entry}->hit)"
            raise CompileError.at(e.src, f"unsupported: table result '.{e.name}' "
                                  f"outside a switch statement")
        return self.read(self.locate(e))

    def enum_code(self, e: ir.Member) -> int:
        """Code of ``error.X`` or ``E.x``: error members by declaration
        order, serializable enums by value, others by position."""
        t = e.type
        if isinstance(t, T.TypeError_):
            if e.name not in self.errors:
                raise CompileError.at(e.src, f"unknown error '{e.name}'")
            return self.errors.index(e.name)
        if isinstance(t, T.TypeEnum):
            d = t.decl
            if d.underlying is not None:
                return d.values[e.name]
            return d.members.index(e.name)
        raise CompileError.at(e.src, f"unsupported: member '{e.name}' of "
                              f"{e.expr.type}")

    def _slice_value(self, e: ir.Slice) -> str:
        try:
            loc = self.locate(e)
        except (_NotBits, CompileError):
            loc = None
        if isinstance(loc, Bits):
            return self.read(loc)
        if is_wide(e.expr.type):
            raise CompileError.at(e.src, "unsupported: slice of this wide expression")
        width = e.hi - e.lo + 1
        return f"t4p4s_wrap({self.value(e.expr)} >> {e.lo}, {width})"

    def _cast(self, e: ir.Cast) -> str:
        to, src_t = e.type, e.expr.type
        if isinstance(to, T.TypeBool):
            return f"({self.value(e.expr)} != 0)"
        if isinstance(to, T.TypeBits) and is_wide(src_t) and to.width <= 64:
            ptr, off = self.wide_ref(e.expr)
            return f"t4p4s_get_bits({ptr}, {off + src_t.width - to.width}, {to.width})"
        v = self.value(e.expr)
        if isinstance(to, T.TypeBits):
            if isinstance(src_t, T.TypeBits) and src_t.signed and to.width > src_t.width:
                return f"t4p4s_wrap((uint64_t)t4p4s_sext({v}, {src_t.width}), {to.width})"
            if isinstance(src_t, T.TypeBool):
                return f"(uint64_t)({v})"
            src_w = _value_width(src_t)
            if src_w is not None and src_w <= to.width:
                return v
            return f"t4p4s_wrap({v}, {to.width})"
        return v        # enums/errors of the same representation

    def _unary(self, e: ir.Unary) -> str:
        v = self.value(e.expr)
        if e.op == ir.UnOp.NOT:
            return f"(!{v})"
        if e.op == ir.UnOp.PLUS:
            return v
        w = width_of(e.type, e.src)
        if e.op == ir.UnOp.CMPL:
            return f"t4p4s_wrap(~{v}, {w})"
        return f"t4p4s_wrap(-{v}, {w})"

    def _binary(self, e: ir.Binary) -> str:
        op = e.op
        if op in (B.EQ, B.NE) and (is_wide(e.left.type) or is_wide(e.right.type)):
            (pa, oa), (pb, ob) = self.wide_ref(e.left), self.wide_ref(e.right)
            eq = f"p4_bits_equal({pa}, {oa}, {pb}, {ob}, {e.left.type.width})"
            return eq if op == B.EQ else f"(!{eq})"
        if is_wide(e.type) or is_wide(e.left.type):
            raise CompileError.at(e.src, f"unsupported: arithmetic on "
                                  f"{e.left.type if is_wide(e.left.type) else e.type} "
                                  f"('{op.value}')")
        if op in (B.EQ, B.NE) and isinstance(e.left.type, (T.TypeHeader, T.TypeStruct, T.TypeStack, T.TypeTuple)):
            raise CompileError.at(e.src, f"unsupported: comparing {e.left.type} values")
        a, b = self.value(e.left), self.value(e.right)
        if op == B.LAND:
            return f"({a} && {b})"
        if op == B.LOR:
            return f"({a} || {b})"
        lt = e.left.type
        signed = isinstance(lt, T.TypeBits) and lt.signed
        if op in (B.EQ, B.NE):
            return f"({a} {op.value} {b})"
        if op in (B.LT, B.LE, B.GT, B.GE):
            if signed:
                a, b = f"t4p4s_sext({a}, {lt.width})", f"t4p4s_sext({b}, {lt.width})"
            return f"({a} {op.value} {b})"
        w = width_of(e.type, e.src)
        if op == B.CONCAT:
            rw = width_of(e.right.type, e.right.src)
            if w > 64:
                raise CompileError.at(e.src, f"unsupported: concatenation "
                                      f"wider than 64 bits (bit<{w}>)")
            return f"(({a} << {rw}) | {b})"
        if op in (B.BAND, B.BOR, B.BXOR):
            return f"({a} {op.value} {b})"
        if op in (B.ADD, B.SUB, B.MUL):
            return f"t4p4s_wrap({a} {op.value} {b}, {w})"
        if op == B.SHL:
            return f"p4_shl({a}, {b}, {w})"
        if op == B.SHR:
            return f"p4_sshr({a}, {b}, {w})" if signed else f"p4_shr({a}, {b}, {w})"
        if op in (B.DIV, B.MOD):
            if signed:
                raise CompileError.at(e.src, f"unsupported: '{op.value}' on "
                                      f"signed {lt}")
            return f"p4_{'div' if op == B.DIV else 'mod'}({a}, {b})"
        if op == B.ADD_SAT:
            return f"p4_sadd_sat({a}, {b}, {w})" if signed else f"p4_add_sat({a}, {b}, {w})"
        if op == B.SUB_SAT:
            return f"p4_ssub_sat({a}, {b}, {w})" if signed else f"p4_sub_sat({a}, {b})"
        raise CompileError.at(e.src, f"unsupported: operator '{op.value}'")

    # ---- wide bit strings ----------------------------------------------

    def wide_ref(self, e: ir.Expression) -> tuple:
        """``(ptr, bit_offset)`` of a bit string of any width."""
        if isinstance(e, ir.IntLiteral):
            return self.constants.literal(e.value, width_of(e.type, e.src)), \
                self.constants.offset(width_of(e.type, e.src))
        if isinstance(e, ir.Cast) and isinstance(e.expr, ir.IntLiteral):
            return self.wide_ref(ir.IntLiteral(e.expr.value, type=e.type, src=e.src))
        if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.ConstDecl):
            return self.wide_ref(e.decl.value)
        if isinstance(e, (ir.Binary, ir.Unary)):
            self.value(e)           # raises the precise "unsupported: ..." error
        try:
            loc = self.locate(e)
        except _NotBits:
            loc = None
        if isinstance(loc, Bits):
            return loc.ptr, loc.bit_offset
        raise CompileError.at(e.src, f"unsupported: this {e.type} expression "
                              f"(wide bit strings support copy, ==, !=, "
                              f"slices and table keys)")

    # ---- stores --------------------------------------------------------

    def store(self, loc: Location, rhs: ir.Expression, w) -> None:
        """Writes ``loc = rhs`` as C statements."""
        if isinstance(loc, Bits):
            if loc.width > 64:
                ptr, off = self.wide_ref(rhs)
                w.line(f"t4p4s_copy_bits({loc.ptr}, {loc.bit_offset}, {ptr}, {off}, {loc.width});")
            else:
                w.line(f"t4p4s_set_bits({loc.ptr}, {loc.bit_offset}, {loc.width}, {self.value(rhs)});")
            return
        t = loc.type
        if isinstance(t, (T.TypeHeader, T.TypeStruct)) and isinstance(rhs, (ir.ListExpr, ir.StructInit)):
            self._store_initializer(loc, rhs, w)
            return
        if isinstance(t, (T.TypeHeader, T.TypeStruct, T.TypeStack)):
            headers.copy(loc.c, self._host(rhs).c, t, self.ctypes.header_size, w)
            return
        w.line(f"{loc.c} = {self.value(rhs)};")

    def store_value(self, loc: Location, c_value: str, w) -> None:
        """Writes ``loc = <C value>`` for a scalar of at most 64 bits."""
        if isinstance(loc, Bits):
            w.line(f"t4p4s_set_bits({loc.ptr}, {loc.bit_offset}, {loc.width}, {c_value});")
        else:
            w.line(f"{loc.c} = {c_value};")

    def assign(self, lhs: ir.Expression, rhs: ir.Expression, w) -> None:
        if isinstance(lhs, ir.Slice):
            try:
                loc = self.locate(lhs)
            except _NotBits:
                loc = None
            if loc is None:
                base = self.locate(lhs.expr)
                width = lhs.hi - lhs.lo + 1
                mask = c_int(((1 << width) - 1) << lhs.lo)
                old = self.read(base)
                w.line(f"{base.c} = ({old} & ~{mask}) | (({self.value(rhs)} << {lhs.lo}) & {mask});")
                return
            self.store(loc, rhs, w)
            return
        self.store(self.locate(lhs), rhs, w)

    def _store_initializer(self, loc: Host, rhs, w) -> None:
        decl = loc.type.decl
        if isinstance(rhs, ir.ListExpr):
            pairs = list(zip([f.name for f in decl.fields], rhs.elements))
        else:
            pairs = list(rhs.fields)
        if isinstance(loc.type, T.TypeHeader):
            values = self._header_word(decl, dict(pairs))
            w.line(headers.make_valid(loc.c))
            if values is not None:
                # one store: field-by-field stores of a few bits each would make
                # the next field's wider load wait on store forwarding
                w.line(f"t4p4s_store_be64({loc.c}.p, {values[0]}, {values[1]});")
                return
        for name, value in pairs:
            member = ir.Member(Located(loc), name, type=_field_type(decl, name), src=rhs.src)
            self.store(self.locate(member), value, w)


    def _header_word(self, decl, values: dict):
        """(bytes, C value) of a whole header of at most 64 bits built from
        ``values`` (every field), or None."""
        widths = [_value_width(f.type) if isinstance(f.type, T.TypeBits) else None
                  for f in decl.fields]
        if None in widths or sum(widths) > 64 or sum(widths) % 8 or set(values) != {
                f.name for f in decl.fields}:
            return None
        constant, terms, shift = 0, [], sum(widths)
        for f, width in zip(decl.fields, widths):
            shift -= width
            mask = (1 << width) - 1
            value = values[f.name]
            while isinstance(value, ir.Cast) and isinstance(value.expr, ir.IntLiteral):
                value = value.expr
            if isinstance(value, ir.IntLiteral):
                constant |= (value.value & mask) << shift
                continue
            term = f"((uint64_t)({self.value(value)}) & {c_int(mask)})"
            terms.append(f"({term} << {shift})" if shift else term)
        if constant or not terms:
            terms.insert(0, c_int(constant))
        return sum(widths) // 8, " | ".join(terms)


class _NotBits(Exception):
    """A slice of something that is not a byte-array bit string."""


class Located(ir.Expression):
    """An expression whose location is already known (initializer fields,
    copy-out of temporaries)."""

    def __init__(self, loc: Location):
        super().__init__(type=loc.type)
        self.loc = loc


def _field_type(decl, name):
    for f in decl.fields:
        if f.name == name:
            return f.type
    raise CompileError.at(decl.src, f"no field '{name}' in '{decl.name}'")


def _value_width(t) -> Optional[int]:
    if isinstance(t, T.TypeBits):
        return t.width
    if isinstance(t, T.TypeEnum) and t.decl.underlying is not None:
        return t.decl.underlying.width
    return None


class WideConstants:
    """Static const byte arrays for literals wider than 64 bits."""

    def __init__(self):
        self._names: dict = {}
        self.lines: list = []

    def literal(self, value: int, width: int) -> str:
        key = (value, width)
        if key not in self._names:
            n = storage_bytes(width)
            name = f"wide_const_{len(self._names)}"
            data = (value & ((1 << (8 * n)) - 1)).to_bytes(n, "big")
            self.lines.append(f"static const uint8_t {name}[{n}] = {{ "
                              + ", ".join(f"0x{b:02x}" for b in data) + " };")
            self._names[key] = name
        return self._names[key]

    @staticmethod
    def offset(width: int) -> int:
        return 8 * storage_bytes(width) - width
