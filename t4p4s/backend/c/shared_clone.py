"""When an egress-to-egress clone is the original's bytes, so that the
runtime can send the original's mbuf once more (t4p4s_clone_share())
instead of copying it and running egress a second time.

In simple_switch an E2E clone starts from the headers as the original's
egress left them; egress runs again for it (instance_type 2, metadata reset
but for a preserved field list), then computeChecksum and the deparser. The
clone's bytes are the original's when, for a clone instance,

- egress does nothing: every statement a clone can reach is a clone request
  (a clone is not cloned again), judged with the clone's known metadata
  (zero, instance_type 2);
- computeChecksum does what it does for the original: each
  update_checksum reads headers only (same headers, same result), or its
  condition is false for a clone, and then it must be false for the
  original too: a per-packet check, `clone_shares_bytes()`;
- the deparser puts every valid header into the packet (no header is left
  out of one and kept in the other).

A clone with a truncate length, or of an original that egress drops or
whose headers do not fit, is copied as before (v1model_arch)."""
from __future__ import annotations

import operator
from dataclasses import dataclass

from ...ir import nodes as ir
from ...ir import types as T
from .context import INSTANCE_EGRESS_CLONE
from .controls import block_bindings
from .emit import CodeWriter
from .expressions import ExprGen
from .externs import callee_name
from .v1model_arch import CLONE_CALLS, field_list_paths
from .walk import member_chain, walk

K = ir.CallKind
UNKNOWN = None
_COMPARISONS = {ir.BinOp.EQ: operator.eq, ir.BinOp.NE: operator.ne, ir.BinOp.LT: operator.lt,
                ir.BinOp.LE: operator.le, ir.BinOp.GT: operator.gt, ir.BinOp.GE: operator.ge}


@dataclass
class SharedClonePlan:
    # computeChecksum conditions false for a clone: the original shares its
    # bytes only when they are false for it too
    original_conditions: list


class _CloneValues:
    """What a clone instance's metadata is known to hold in egress and
    computeChecksum: zero unless preserved, instance_type 2."""

    def __init__(self, bound, control: ir.ControlDecl):
        self.meta = {id(p) for p in control.params if p.type == bound.metadata_type}
        self.std = {id(p) for p in control.params if p.type == bound.standard_metadata_type}
        self.headers = {id(p) for p in control.params if p.type == bound.headers_type}
        self.preserved = {path for paths in field_list_paths(bound.metadata_type, "meta").values()
                          for path in paths}

    def value(self, e: ir.Expression):
        """The expression's value for every clone, or UNKNOWN."""
        if isinstance(e, (ir.BoolLiteral, ir.IntLiteral)):
            return e.value
        if isinstance(e, ir.Member):
            return self._field(e)
        if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.ConstDecl):
            return self.value(e.decl.value)
        if isinstance(e, ir.Cast) and (isinstance(e.type, T.TypeBool) or
                                       isinstance(e.type, T.TypeBits) and not e.type.signed):
            v = self.value(e.expr)
            return v if v is UNKNOWN or isinstance(e.type, T.TypeBool) else int(v) & ((1 << e.type.width) - 1)
        if isinstance(e, ir.Unary) and e.op == ir.UnOp.NOT:
            v = self.value(e.expr)
            return UNKNOWN if v is UNKNOWN else not v
        if isinstance(e, ir.Binary):
            return self._binary(e)
        return UNKNOWN

    def _binary(self, e: ir.Binary):
        left, right = self.value(e.left), self.value(e.right)
        if e.op == ir.BinOp.LAND:
            if left is False or right is False:
                return False
            return True if left is True and right is True else UNKNOWN
        if e.op == ir.BinOp.LOR:
            if left is True or right is True:
                return True
            return False if left is False and right is False else UNKNOWN
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return _COMPARISONS[e.op](left, right) if e.op in _COMPARISONS else UNKNOWN

    def _field(self, e: ir.Member):
        path = member_path(e)
        if path is None:
            return UNKNOWN
        root, names = path
        if root in self.std:
            return INSTANCE_EGRESS_CLONE if names == ("instance_type",) else UNKNOWN
        if root not in self.meta or not (isinstance(e.type, T.TypeBool) or
                                         isinstance(e.type, T.TypeBits) and not e.type.signed):
            return UNKNOWN
        dotted = ".".join(["meta", *names])
        if any(dotted == p or dotted.startswith(p + ".") for p in self.preserved):
            return UNKNOWN
        return False if isinstance(e.type, T.TypeBool) else 0

    def reads_headers_only(self, e: ir.Expression) -> bool:
        return _pure(e) and all(id(n.decl) in self.headers
                                for n in walk(e) if isinstance(n, ir.PathExpr))


def member_path(e: ir.Expression):
    """(id of the root declaration, field names) of `a.b.c`, else None."""
    root, names = member_chain(e)
    return None if root is None else (id(root.decl), names)


def _fields_read(e: ir.Expression) -> list:
    """member_path() of each field `e` reads (isValid() reads no field)."""
    inner = set()
    for n in walk(e):
        if isinstance(n, ir.Member):
            inner.add(id(n.expr))
        elif isinstance(n, ir.MethodCall):
            inner.update(id(x) for x in walk(n.target))
    return [member_path(n) for n in walk(e) if isinstance(n, ir.Member) and id(n) not in inner]


def _pure(e: ir.Expression) -> bool:
    return all(not isinstance(n, ir.MethodCall) or n.kind == K.HEADER_IS_VALID for n in walk(e))


def _inert_for_clone(values: _CloneValues, st: ir.Statement) -> bool:
    """True when running `st` for a clone changes nothing."""
    if isinstance(st, ir.EmptyStmt):
        return True
    if isinstance(st, ir.BlockStmt):
        return all(_inert_for_clone(values, x) for x in st.statements)
    if isinstance(st, ir.IfStmt):
        taken = values.value(st.cond)
        taken = taken if taken is UNKNOWN else bool(taken)
        branches = {True: [st.then], False: [st.other]}.get(taken, [st.then, st.other])
        return (taken is not UNKNOWN or _pure(st.cond)) and \
            all(b is None or _inert_for_clone(values, b) for b in branches)
    if isinstance(st, ir.CallStmt):
        return st.call.kind == K.EXTERN_FUNCTION and callee_name(st.call) in CLONE_CALLS
    return False


def _checksum_calls(st: ir.Statement, out: list) -> bool:
    """Collects computeChecksum's update calls; False if it does anything else."""
    if isinstance(st, ir.EmptyStmt):
        return True
    if isinstance(st, ir.BlockStmt):
        return all(_checksum_calls(x, out) for x in st.statements)
    if isinstance(st, ir.CallStmt) and st.call.kind == K.EXTERN_FUNCTION \
            and callee_name(st.call) == "update_checksum":
        out.append(st.call)
        return True
    return False


def plan(bound, clone_kinds, deparser_emits_every_header: bool) -> SharedClonePlan | None:
    if "E2E" not in clone_kinds or not deparser_emits_every_header:
        return None
    egress = bound.egress
    if not _inert_for_clone(_CloneValues(bound, egress), egress.body):
        return None
    cc = bound.compute_checksum
    calls: list = []
    if not _checksum_calls(cc.body, calls):
        return None
    values = _CloneValues(bound, cc)
    written = [member_path(c.args[2].value) for c in calls]
    conditions = []
    for c in calls:
        cond = c.args[0].value
        if all(values.reads_headers_only(a.value) for a in c.args[:3]):
            continue
        if values.value(cond) is not False or not _pure(cond):
            return None
        # the check runs before computeChecksum: what it reads must not be
        # what computeChecksum writes
        read = _fields_read(cond)
        if any(r is not None and w is not None and r[0] == w[0] and
               (r[1][:len(w[1])] == w[1] or w[1][:len(r[1])] == r[1])
               for r in read for w in written):
            return None
        conditions.append(cond)
    return SharedClonePlan(conditions)


def emit_check(ctx, p: SharedClonePlan) -> CodeWriter:
    """`clone_shares_bytes(s)`: the per-packet half of the plan."""
    cc = ctx.bound.compute_checksum
    exprs = ExprGen(ctx.ctypes, ctx.constants, ctx.errors, block_bindings(ctx, cc.params), None)
    w = CodeWriter()
    w.line("/* An E2E clone of this packet is its bytes: computeChecksum's updates "
           "that a clone skips")
    w.line(" * (their conditions are false for it) skip this packet too. */")
    w.line("static __rte_always_inline bool")
    with w.block("clone_shares_bytes(struct packet_state *s)"):
        if not p.original_conditions:
            w.line("(void)s;")
            w.line("return true;")
        else:
            for cond in p.original_conditions:
                w.comment_src(cond.src)
                w.line(f"if ({exprs.value(cond)})")
                w.line("\treturn false;")
            w.line("return true;")
    w.line()
    return w
