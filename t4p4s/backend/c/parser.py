"""The parser: one function, one label per state, ``goto`` transitions.

The packet is read from the first mbuf segment; ``off`` is the cursor in
bytes.  An error (PacketTooShort, StackOutOfBounds, NoMatch, verify())
stops parsing: as in v1model/bmv2 the packet goes on to ingress with
``standard_metadata.parser_error`` set, headers extracted so far valid, and
the payload starting where parsing stopped.

Extracting into a header of the headers struct only points it at its bytes
in the mbuf (headers.py); any other header variable gets a copy.
"""
from __future__ import annotations

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from . import externs
from .controls import block_bindings
from . import headers
from .emit import CodeWriter, source_comment
from .expressions import ExprGen, c_int, width_of
from .statements import StatementGen
from .walk import walk
from .types import storage_bytes

K = ir.CallKind


def _label(state: ir.ParserState) -> str:
    return f"state_{state.name}"


class Parser:
    def __init__(self, ctx):
        self.ctx = ctx
        self.functions = CodeWriter()

    def emit(self, parser: ir.ParserDecl, out_of_line: bool = False) -> None:
        ctx = self.ctx
        bindings = block_bindings(ctx, parser.params)
        # the `out H` parameter is the headers struct too
        bindings[id(parser.params[1])] = "s->hdr"
        w = CodeWriter()
        exprs = ExprGen(ctx.ctypes, ctx.constants, ctx.errors, bindings, None)
        sg = StatementGen(ctx, exprs, self._call_stmt, value_call=self._value_call,
                          before=lambda stmt, w: self._require_lookahead([stmt], w))
        w.line(source_comment(parser.src))
        w.line("static __rte_noinline void" if out_of_line else "static __rte_always_inline void")
        with w.block(f"parser_{parser.name}(struct packet_state *s)"):
            w.line("uint8_t *pkt = rte_pktmbuf_mtod(s->m, uint8_t *);")
            w.line("const uint32_t len = rte_pktmbuf_data_len(s->m);")
            w.line("uint32_t off = 0;")
            w.line("uint16_t err = 0;")
            for d in parser.locals:
                if isinstance(d, ir.VarDecl):
                    name = ctx.temp(d.name)
                    w.line(ctx.ctypes.declare(d.type, name, d.src) + ";")
                    headers.init_storage(name, d.type, w)
                    exprs.bindings[id(d)] = name
                    if d.init is not None:
                        exprs.store(exprs.locate(ir.PathExpr(d.name, decl=d, type=d.type)),
                                    d.init, w)
                elif isinstance(d, ir.Instantiation):
                    pass            # extern instances: catalogued as resources
            states = {s.name: s for s in parser.states}
            if "start" not in states:
                raise CompileError.at(parser.src, "parser has no 'start' state")
            order = [states["start"]] + [s for s in parser.states
                                         if s.name not in ("start", "accept", "reject")]
            for state in order:
                w.line(f"{_label(state)}: __attribute__((unused));")
                w.comment_src(state.src)
                with w.indented():
                    sg.block(state.statements, w)
                    self._transition(state, sg, w)
            w.line("state_accept: __attribute__((unused));")
            w.line("\ts->payload_offset = off;")
            w.line("\treturn;")
            w.line("state_reject: __attribute__((unused));")
            w.line("\ts->payload_offset = off;")
            w.line(f"\t{self._std_field('parser_error')}")
            with w.indented():
                with w.block("if (err != 0)"):
                    w.line("t4p4s_count_parser_error(s->lc, err);")
        w.line()
        self.functions.extend(w)

    def _std_field(self, name: str) -> str:
        return f"s->std.{name} = err;"

    def _goto_error(self, error: str) -> str:
        return f"{{ err = {self.ctx.error_code(error)}; goto state_reject; }}  /* error.{error} */"

    def _transition(self, state: ir.ParserState, sg, w) -> None:
        t = state.transition
        if t is None:
            w.line("goto state_reject;")
            return
        if isinstance(t, ir.PathExpr):
            w.line(f"goto {_label(t.decl) if t.decl else 'state_' + t.name};")
            return
        if not isinstance(t, ir.SelectExpr):
            raise CompileError.at(t.src, "unsupported: transition expression")
        w.comment_src(t.src)
        self._require_lookahead(t.keys, w)
        with w.block(""):
            keys = []
            for i, k in enumerate(t.keys):
                if width_of(k.type, k.src) > 64:
                    raise CompileError.at(k.src, f"unsupported: select on "
                                          f"{k.type} (wider than 64 bits)")
                name = f"k{i}"
                w.line(f"const uint64_t {name} = {sg.exprs.value(k)};")
                keys.append((name, k))
            for case in t.cases:
                cond = self._keyset(sg, keys, case.keyset)
                target = f"goto {_label(case.state.decl) if case.state.decl else 'state_' + case.state.name};"
                if cond == "1":
                    w.line(target)
                    break
                w.line(f"if ({cond})")
                w.line(f"\t{target}")
            else:
                w.line(self._goto_error("NoMatch"))

    def _keyset(self, sg, keys, ks) -> str:
        if isinstance(ks, ir.DefaultExpr):
            return "1"
        if len(keys) > 1:
            elements = ks.elements if isinstance(ks, ir.ListExpr) else None
            if elements is None or len(elements) != len(keys):
                raise CompileError.at(ks.src, "keyset does not match the select keys")
        else:
            elements = ks.elements if isinstance(ks, ir.ListExpr) else [ks]
        conds = []
        for (name, _), e in zip(keys, elements):
            if isinstance(e, ir.DefaultExpr):
                continue
            if isinstance(e, ir.Mask):
                m = sg.exprs.value(e.mask)
                conds.append(f"({name} & {m}) == ({sg.exprs.value(e.value)} & {m})")
            elif isinstance(e, ir.Range):
                conds.append(f"({sg.exprs.value(e.lo)} <= {name} && {name} <= {sg.exprs.value(e.hi)})")
            else:
                v = sg.exprs.value(e)
                conds.append(f"{name} == (uint64_t){v}")
        return " && ".join(conds) if conds else "1"

    # ---- packet_in methods ---------------------------------------------

    def _call_stmt(self, sg, c: ir.MethodCall, w) -> None:
        name = externs.callee_name(c)
        if c.kind == K.EXTERN_METHOD and name == "extract":
            if len(c.args) > 1:
                raise CompileError.at(c.src, "unsupported: two-argument extract (varbit)")
            self._extract(sg, externs.arg(c, 0), w)
        elif c.kind == K.EXTERN_METHOD and name == "advance":
            n = externs.arg(c, 0)
            if isinstance(n, ir.IntLiteral) and n.value % 8:
                raise CompileError.at(c.src, "unsupported: advance by a number of "
                                      "bits that is not a multiple of 8")
            with w.block(""):
                w.line(f"const uint64_t n = ({sg.exprs.value(n)}) / 8;")
                w.line(f"if (unlikely(n > len - off)) {self._goto_error('PacketTooShort')}")
                w.line("off += (uint32_t)n;")
        elif c.kind == K.EXTERN_FUNCTION and name == "verify":
            cond, error = externs.arg(c, 0), externs.arg(c, 1)
            w.line(f"if (unlikely(!({sg.exprs.value(cond)})))")
            w.line(f"\t{{ err = (uint16_t){sg.exprs.value(error)}; goto state_reject; }}")
        elif c.kind in (K.EXTERN_FUNCTION, K.EXTERN_METHOD):
            externs.extern_call(sg, c, w)
        else:
            raise CompileError.at(c.src, f"unsupported: {c.kind} in a parser")

    def _extract(self, sg, target: ir.Expression, w) -> None:
        t = target.type
        if not isinstance(t, T.TypeHeader):
            raise CompileError.at(target.src, f"unsupported: extract into {t}")
        size = self.ctx.ctypes.header(t.decl).size
        stack = None
        if isinstance(target, ir.Member) and target.name == "next" and \
                isinstance(target.expr.type, T.TypeStack):
            stack = sg.exprs.locate(target.expr).c
            n = target.expr.type.size
            w.line(f"if (unlikely({stack}.next_index >= {n})) "
                   f"{self._goto_error('StackOutOfBounds')}")
        h = sg.exprs.locate(target).c
        w.line(f"if (unlikely(len - off < {size})) {self._goto_error('PacketTooShort')}")
        instance = self.ctx.header_instances.get(stack or h)
        if instance is None:
            # not a header of the headers struct: a copy (headers.py invariants)
            w.line(f"memcpy({h}.b, pkt + off, {size});")
            w.line(f"{h}.p = {h}.b;")
        else:
            inst, element = instance
            if self.ctx.snapshot_i2e:
                self._snapshot(inst, f"{stack}.next_index" if stack else str(element), w)
            w.line(f"{h}.p = pkt + off;      /* in place: no copy */")
        w.line(f"{h}.valid = 1;")
        w.line(f"off += {size};")
        if stack:
            w.line(f"{stack}.next_index++;")

    @staticmethod
    def _snapshot(inst, element: str, w) -> None:
        """The header's bytes as received, for I2E clones (in-place writes
        change the packet itself)."""
        w.line(f"s->i2e_received.at[{inst.index} + {element}] = off;")
        w.line(f"memcpy(s->i2e_received.bytes + {inst.offset} + {inst.size} * ({element}), "
               f"pkt + off, {inst.size});")

    def _value_call(self, sg, c: ir.MethodCall) -> str:
        name = externs.callee_name(c)
        if name == "lookahead":
            width = width_of(c.type, c.src)
            if width > 64:
                raise CompileError.at(c.src, "unsupported: lookahead wider than 64 bits")
            v = f"t4p4s_get_bits(pkt + off, 0, {width})"
            return f"({v} != 0)" if isinstance(c.type, T.TypeBool) else v
        if name == "length":
            return "(uint64_t)rte_pktmbuf_pkt_len(s->m)"
        raise CompileError.at(c.src, f"unsupported: '{name}' in an expression")

    def _require_lookahead(self, exprs, w) -> None:
        """Checks the packet is long enough for the lookaheads in ``exprs``
        before the statement that reads them."""
        for call in _lookaheads(exprs):
            nbytes = storage_bytes(width_of(call.type, call.src))
            w.line(f"if (unlikely(len - off < {nbytes})) {self._goto_error('PacketTooShort')}")


def _lookaheads(items):
    for x in items:
        for n in walk(x):
            if isinstance(n, ir.MethodCall) and externs.callee_name(n) == "lookahead":
                yield n
