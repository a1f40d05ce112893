"""Controls (verifyChecksum, ingress, egress, computeChecksum) and the
deparser, each one static inline function over the packet state."""
from __future__ import annotations

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from . import externs
from . import headers
from .emit import CodeWriter, source_comment
from .expressions import ExprGen
from .statements import StatementGen
from .walk import walk

K = ir.CallKind


def block_bindings(ctx, params) -> dict:
    """Binds a v1model block's parameters to the packet state."""
    b = ctx.bound
    out = {}
    for p in params:
        if p.type == b.headers_type:
            out[id(p)] = "s->hdr"
        elif p.type == b.metadata_type:
            out[id(p)] = "s->meta"
        elif p.type == b.standard_metadata_type:
            out[id(p)] = "s->std"
    return out


class Controls:
    def __init__(self, ctx, actions, tables, state_fields: list):
        self.ctx = ctx
        self.actions = actions
        self.tables = tables
        self.state_fields = state_fields     # control-local variables
        self.functions = CodeWriter()

    def function_name(self, control: ir.ControlDecl) -> str:
        return f"control_{control.name}"

    def emit(self, control: ir.ControlDecl) -> None:
        ctx = self.ctx
        bindings = block_bindings(ctx, control.params)
        for d in control.locals:
            if isinstance(d, ir.VarDecl):
                field = f"{control.name}_{d.name}"
                self.state_fields.append(ctx.ctypes.declare(d.type, field, d.src)
                                         + f";  /* {control.name}: {d.name} */")
                bindings[id(d)] = f"s->{field}"
        exprs = ExprGen(ctx.ctypes, ctx.constants, ctx.errors, bindings, None)
        sg = StatementGen(ctx, exprs, self._call_stmt, hoist=self._hoist)
        for d in control.locals:
            if isinstance(d, ir.ActionDecl):
                self.actions.require(d, control.name, exprs, self._call_stmt)
            elif isinstance(d, ir.TableDecl):
                info = ctx.resources.of(d)
                for ref in info.actions:
                    self.actions.require(ref.action.decl, control.name, exprs,
                                         self._call_stmt)
                self.tables.emit_apply(info, sg)
        w = CodeWriter()
        w.line(source_comment(control.src))
        w.line("static __rte_always_inline void")
        with w.block(f"{self.function_name(control)}(struct packet_state *s)"):
            if any(self.actions.may_exit(d) for d in control.locals
                   if isinstance(d, ir.ActionDecl)):
                w.line("s->exited = false;")
            for d in control.locals:
                if not isinstance(d, ir.VarDecl):
                    continue
                headers.init_storage(bindings[id(d)], d.type, w)
                if d.init is not None:
                    w.comment_src(d.src)
                    exprs.store(exprs.locate(ir.PathExpr(d.name, decl=d, type=d.type)),
                                d.init, w)
            sg.block(control.body.statements, w)
        w.line()
        self.functions.extend(w)

    # table applies and action calls in control bodies

    def _hoist(self, sg, call: ir.MethodCall, w) -> str:
        info = self.ctx.resources.of(call.callee)
        name = self.ctx.temp("result")
        w.line(f"const struct t4p4s_entry *{name} = {self.tables.apply_name(info)}(s);")
        if self.tables.may_exit(info):
            w.line("if (unlikely(s->exited))")
            w.line("\treturn;")
        return name

    def _call_stmt(self, sg, c: ir.MethodCall, w) -> None:
        if c.kind == K.TABLE_APPLY:
            info = self.ctx.resources.of(c.callee)
            w.line(f"{self.tables.apply_name(info)}(s);")
            if self.tables.may_exit(info):
                w.line("if (unlikely(s->exited))")
                w.line("\treturn;")
        elif c.kind == K.ACTION:
            decl = c.callee
            self.actions.require(decl, None, sg.exprs, self._call_stmt)
            self.actions.call(sg, decl, c.args, None, w)
            if self.actions.may_exit(decl) and sg.on_exit == "return;":
                w.line("if (unlikely(s->exited))")
                w.line("\treturn;")
        elif c.kind in (K.EXTERN_FUNCTION, K.EXTERN_METHOD):
            if externs.callee_name(c) in ("extract", "emit", "advance", "lookahead"):
                raise CompileError.at(c.src, f"'{externs.callee_name(c)}' is "
                                      f"not allowed in this control")
            externs.extern_call(sg, c, w)
        else:
            raise CompileError.at(c.src, f"unsupported: call of kind {c.kind}")


class Deparser:
    """The deparser: the emitted headers (valid ones, in emit order) must
    end up right before the payload.  ``deparser_X`` walks the emits
    checking whether each header already is where it belongs if nothing
    moves (the common case: headers stay in the packet, none added or
    removed), without writing anything.  When the body is a plain list of
    emits, the same walk notes which way the headers in the packet would
    move; if they all move the same way (a gNB adding radio headers in
    place of a GTP tunnel, or a tunnel put in front of a packet), the
    headers are copied to their places right there, one straight-line pass
    whose branches are the headers' validity (p4_deparse_note).  Otherwise
    ``deparser_X_move`` runs the body once, noting at each emit site
    whether it emitted its header, then rewrites the header region site by
    site in emit order (the body has no loops, so a path through it meets
    the sites in that order), each with the header's constant size.  A
    deparser body with extern calls always takes that general path, so
    that their side effects happen once."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.functions = CodeWriter()
        self._collect = False
        self._sites: list = []             # each emit site's header (C), size and source comment
        self._emitted: set = set()
        # every header instance is emitted whenever it is valid, so after
        # deparsing, each valid header is in the packet (v1model_arch's clones)
        self.emits_every_header = False

    def emit(self, control: ir.ControlDecl) -> None:
        name = f"deparser_{control.name}"
        has_externs = any(isinstance(n, ir.MethodCall)
                          and n.kind in (K.EXTERN_FUNCTION, K.EXTERN_METHOD)
                          and externs.callee_name(n) != "emit"
                          for n in walk(control.body))
        w = self.functions
        w.line(source_comment(control.src))
        w.line("/* The emitted headers, collected, in front of the payload "
               "(cold). */")
        w.line("static __rte_noinline bool")
        w.line(f"{name}_move(struct packet_state *s)")
        w.line("{")
        body = self._body(control, collect=True)
        words = max(1, (len(self._sites) + 63) // 64)
        with w.indented():
            w.line(f"uint64_t emitted[{words}] = {{ 0 }};   /* bit k: emit site k emitted its header */")
            w.line("uint32_t len = 0;")
        w.extend(body)
        with w.indented():
            w.line("uint8_t *const payload = rte_pktmbuf_mtod(s->m, uint8_t *) + s->payload_offset;")
            w.line("uint8_t *at = payload - len;")
            self._for_each_emitted(lambda h, size: f"p4_deparse_to_scratch(&{h}.p, {h}.b, at, {size})",
                                   words, w)
            w.line("if (!p4_deparse_resize(s->m, s->payload_offset, len))")
            w.line("\treturn false;")
            w.line("at = payload - len;")
            self._for_each_emitted(lambda h, size: f"p4_deparse_to_place(&{h}.p, at, {size})",
                                   words, w)
            w.line("s->payload_offset = len;")
            w.line("return true;")
        w.line("}")
        straight_line = all(isinstance(st, ir.CallStmt) for st in control.body.statements)
        every = {path for path, (inst, element) in self.ctx.header_instances.items()
                 if element is not None}
        self.emits_every_header = straight_line and not has_externs and every <= self._emitted
        w.line()
        w.line(source_comment(control.src))
        w.line("/* Returns false when the headers do not fit the mbuf. */")
        w.line("static __rte_always_inline bool")
        w.line(f"{name}(struct packet_state *s)")
        w.line("{")
        with w.indented():
            if has_externs:
                w.line("/* extern calls: run the body once, in the general path */")
                w.line(f"return {name}_move(s);")
            elif straight_line:
                self._emit_one_pass(name, w)
            else:
                w.line("uint8_t *const start = rte_pktmbuf_mtod(s->m, uint8_t *);")
                w.line("uint8_t *at = start;    /* where the next header is if "
                       "nothing moves */")
                w.line("bool in_place = true;")
        if not has_externs and not straight_line:
            w.extend(self._body(control, collect=False))
            with w.indented():
                w.line("if (likely(in_place && at == start + s->payload_offset))")
                w.line("\treturn true;")
                w.line(f"return {name}_move(s);")
        w.line("}")
        w.line()

    def _emit_one_pass(self, name: str, w) -> None:
        """The body of ``deparser_X`` for a plain list of emits (see the
        class and p4_deparse_note)."""
        sites = self._sites
        w.line("uint8_t *const start = rte_pktmbuf_mtod(s->m, uint8_t *);")
        w.line("const uint32_t parsed = s->payload_offset;")
        w.line("uint32_t len = 0;       /* the emitted headers' bytes so far */")
        w.line("bool in_place = true;")
        w.line("int64_t most = INT64_MIN, least = INT64_MAX;")
        for h, size, comment in sites:
            w.line(comment)
            with w.block(f"if ({h}.valid)"):
                w.line(f"p4_deparse_note(start, parsed, {h}.p, len, &in_place, &most, &least);")
                w.line(f"len += {size};")
        w.line("if (likely(in_place && len == parsed))")
        w.line("\treturn true;")
        w.line("const int64_t region = (int64_t)parsed - (int64_t)len;")
        w.line("if (most > region && least < region)    /* both ways */")
        w.line(f"\treturn {name}_move(s);")
        w.line("if (!p4_deparse_resize(s->m, parsed, len))")
        w.line("\treturn false;")
        with w.block("if (most <= region)", closer="} else {"):
            w.line("uint8_t *end = start + parsed;     /* last to first */")
            for h, size, _ in reversed(sites):
                w.line(f"if ({h}.valid) end = p4_deparse_to_place_before(&{h}.p, end, {size});")
        with w.indented():
            w.line("uint8_t *at = start + region;     /* first to last */")
            for h, size, _ in sites:
                w.line(f"if ({h}.valid) at = p4_deparse_to_place(&{h}.p, at, {size});")
        w.line("}")
        w.line("s->payload_offset = len;")
        w.line("return true;")

    def _for_each_emitted(self, call, words: int, w) -> None:
        """`at = call(header, size)` for the emitted sites only, in emit
        order: each case has its header's constant size, and a packet pays
        for the headers it has, not for every site of the deparser."""
        with w.block(f"for (unsigned word = 0; word < {words}; word++)"):
            with w.block("for (uint64_t m = emitted[word]; m != 0; m &= m - 1)"):
                with w.block("switch (64 * word + (unsigned)__builtin_ctzll(m))"):
                    for k, (h, size, _) in enumerate(self._sites):
                        w.line(f"case {k}: at = {call(h, size)}; break;")

    def _body(self, control: ir.ControlDecl, collect: bool) -> CodeWriter:
        ctx = self.ctx
        exprs = ExprGen(ctx.ctypes, ctx.constants, ctx.errors,
                        block_bindings(ctx, control.params), None)
        sg = StatementGen(ctx, exprs, self._call_stmt)
        self._collect = collect
        if collect:
            self._sites = []
        body = CodeWriter()
        with body.indented():
            sg.block(control.body.statements, body)
        return body

    def _call_stmt(self, sg, c: ir.MethodCall, w) -> None:
        if externs.callee_name(c) != "emit":
            if c.kind in (K.EXTERN_FUNCTION, K.EXTERN_METHOD):
                externs.extern_call(sg, c, w)
                return
            raise CompileError.at(c.src, "unsupported: only emit() and extern "
                                  "calls in a deparser")
        self._emit(sg, externs.arg(c, 0), w)

    def _emit(self, sg, e: ir.Expression, w) -> None:
        t = e.type
        if isinstance(t, T.TypeStruct):
            for f in t.decl.fields:
                self._emit(sg, ir.Member(e, f.name, type=f.type, src=e.src), w)
        elif isinstance(t, T.TypeStack):
            for i in range(t.size):
                self._emit(sg, ir.ArrayIndex(e, ir.IntLiteral(i, type=T.INFINT),
                                             type=t.element, src=e.src), w)
        elif isinstance(t, T.TypeHeader):
            h = sg.exprs.locate(e).c
            size = self.ctx.ctypes.header_size(t)
            self._emitted.add(h)
            if self._collect:
                k = len(self._sites)
                w.line(f"emitted[{k // 64}] |= (uint64_t)({h}.valid != 0) << {k % 64};")
                w.line(f"len += {h}.valid != 0 ? {size} : 0;")
                self._sites.append((h, size, source_comment(e.src)))
            else:
                with w.block(f"if ({h}.valid)"):
                    w.line(f"in_place &= {h}.p == at;")
                    w.line(f"at += {size};")
        else:
            raise CompileError.at(e.src, f"unsupported: emit of {t}")
