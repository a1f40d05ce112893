"""Constant folding with P4-16 semantics.

Fixed-width values wrap around (``bit<W>`` modulo 2^W, ``int<W>`` two's
complement); arbitrary-precision ``int`` literals do not.  Shifts, slices,
concatenation, casts, comparisons and boolean operators fold when every
operand is a literal.  The type checker calls :func:`fold` on every
expression it has typed, so the IR it returns has constants folded.
"""
from __future__ import annotations

from typing import Optional

from ..diagnostics import CompileError
from ..ir import nodes as N
from ..ir import types as T


def wrap(value: int, typ: T.Type) -> int:
    """``value`` reduced to the range of ``typ`` (bit/int), else unchanged."""
    if isinstance(typ, T.TypeBits):
        value &= (1 << typ.width) - 1
        if typ.signed and value >> (typ.width - 1):
            value -= 1 << typ.width
    elif isinstance(typ, T.TypeBool):
        value = 1 if value else 0
    return value


def literal(value, typ: T.Type, src) -> N.Expression:
    if isinstance(typ, T.TypeBool):
        return N.BoolLiteral(bool(value), src=src, type=T.BOOL)
    return N.IntLiteral(wrap(value, typ), src=src, type=typ)


def const_value(e: N.Expression) -> Optional[int]:
    """The value of an int/bool literal, else None."""
    if isinstance(e, N.IntLiteral):
        return e.value
    if isinstance(e, N.BoolLiteral):
        return int(e.value)
    return None


def _is_lit(e) -> bool:
    return isinstance(e, (N.IntLiteral, N.BoolLiteral))


def fold(e: N.Expression) -> N.Expression:
    """``e`` folded to a literal when its operands are literals."""
    if isinstance(e, N.Unary) and _is_lit(e.expr):
        v = const_value(e.expr)
        if e.op == N.UnOp.NOT:
            return literal(not v, T.BOOL, e.src)
        if e.op == N.UnOp.CMPL:
            return literal(~v, e.type, e.src)
        if e.op == N.UnOp.NEG:
            return literal(-v, e.type, e.src)
        return literal(v, e.type, e.src)
    if isinstance(e, N.Binary) and _is_lit(e.left) and _is_lit(e.right):
        return _fold_binary(e)
    if isinstance(e, N.Binary) and e.op in (N.BinOp.LAND, N.BinOp.LOR) and _is_lit(e.left):
        v = const_value(e.left)
        if e.op == N.BinOp.LAND and not v:
            return literal(False, T.BOOL, e.src)
        if e.op == N.BinOp.LOR and v:
            return literal(True, T.BOOL, e.src)
    if isinstance(e, N.Mux) and _is_lit(e.cond):
        return e.then if const_value(e.cond) else e.other
    if isinstance(e, N.Cast) and _is_lit(e.expr) and isinstance(e.type, (T.TypeBits, T.TypeBool, T.TypeInfInt)):
        v = const_value(e.expr)
        if isinstance(e.type, T.TypeBool):
            return literal(v != 0, T.BOOL, e.src)
        return N.IntLiteral(wrap(v, e.type), getattr(e.expr, "base", 10), src=e.src, type=e.type)
    if isinstance(e, N.Slice) and isinstance(e.expr, N.IntLiteral):
        v = e.expr.value
        if isinstance(e.expr.type, T.TypeBits):
            v &= (1 << e.expr.type.width) - 1
        return literal((v >> e.lo) & ((1 << (e.hi - e.lo + 1)) - 1), e.type, e.src)
    return e


def _fold_binary(e: N.Binary) -> N.Expression:
    a, b = const_value(e.left), const_value(e.right)
    op, typ, src = e.op, e.type, e.src
    signed = isinstance(e.left.type, T.TypeBits) and e.left.type.signed
    if op == N.BinOp.ADD:
        return literal(a + b, typ, src)
    if op == N.BinOp.SUB:
        return literal(a - b, typ, src)
    if op == N.BinOp.MUL:
        return literal(a * b, typ, src)
    if op in (N.BinOp.DIV, N.BinOp.MOD):
        if b == 0:
            raise CompileError.at(src, "division by zero")
        if a < 0 or b < 0:
            raise CompileError.at(src, "division and modulo are only defined on non-negative values")
        return literal(a // b if op == N.BinOp.DIV else a % b, typ, src)
    if op in (N.BinOp.ADD_SAT, N.BinOp.SUB_SAT):
        r = a + b if op == N.BinOp.ADD_SAT else a - b
        if isinstance(typ, T.TypeBits):
            lo, hi = ((-(1 << (typ.width - 1)), (1 << (typ.width - 1)) - 1) if typ.signed
                      else (0, (1 << typ.width) - 1))
            r = min(max(r, lo), hi)
        return literal(r, typ, src)
    if op == N.BinOp.SHL:
        return literal(a << b, typ, src)
    if op == N.BinOp.SHR:
        return literal(a >> b, typ, src)      # Python >> is arithmetic: right for int<W>
    if op == N.BinOp.BAND:
        return literal(a & b, typ, src)
    if op == N.BinOp.BOR:
        return literal(a | b, typ, src)
    if op == N.BinOp.BXOR:
        return literal(a ^ b, typ, src)
    if op == N.BinOp.CONCAT:
        rw = e.right.type.width
        return literal(((a & ((1 << e.left.type.width) - 1)) << rw) | (b & ((1 << rw) - 1)), typ, src)
    if op == N.BinOp.LAND:
        return literal(bool(a) and bool(b), T.BOOL, src)
    if op == N.BinOp.LOR:
        return literal(bool(a) or bool(b), T.BOOL, src)
    compare = {N.BinOp.EQ: a == b, N.BinOp.NE: a != b, N.BinOp.LT: a < b,
               N.BinOp.LE: a <= b, N.BinOp.GT: a > b, N.BinOp.GE: a >= b}
    del signed
    return literal(compare[op], T.BOOL, src)
