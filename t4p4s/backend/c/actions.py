"""Actions: their action-data structs and static inline functions, and the
code that calls them (directly, or from a table with data from an entry).

An action is ``action_<name>(s, d, params...)``: ``s`` the packet state,
``d`` its action data (directionless parameters, as the control plane
wrote them into the entry) and one pointer per directional parameter,
passed copy-in/copy-out as P4 specifies.
"""
from __future__ import annotations

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from . import headers
from .emit import CodeWriter, source_comment
from .expressions import Located
from .statements import StatementGen
from .walk import walk
from .types import is_wide


def c_ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def data_params(decl: ir.ActionDecl) -> list:
    return [p for p in decl.params if p.direction == ir.Direction.NONE]


def dir_params(decl: ir.ActionDecl) -> list:
    return [p for p in decl.params if p.direction != ir.Direction.NONE]


def contains_exit(node) -> bool:
    return any(isinstance(n, ir.ExitStmt) for n in walk(node))


class Actions:
    def __init__(self, ctx):
        self.ctx = ctx
        self.structs = CodeWriter()      # action data structs
        self.functions = CodeWriter()    # action functions
        self._names: dict = {}           # id(decl) -> C base name

    def name(self, decl: ir.ActionDecl) -> str:
        return self._names[id(decl)]

    def data_struct(self, decl: ir.ActionDecl):
        """``struct action_data_X`` or None for an action without data."""
        return f"struct action_data_{self.name(decl)}" if data_params(decl) else None

    def may_exit(self, decl: ir.ActionDecl) -> bool:
        return contains_exit(decl.body)

    def require(self, decl: ir.ActionDecl, scope_name: str, exprs, call_stmt) -> str:
        """Emits the action once; returns its C base name."""
        if id(decl) in self._names:
            return self._names[id(decl)]
        info = self.ctx.resources.of(decl)
        base = c_ident(info.name if info else
                       (f"{scope_name}.{decl.name}" if scope_name else decl.name))
        self._names[id(decl)] = base
        self._emit_struct(decl, base)
        self._emit_function(decl, base, exprs, call_stmt)
        return base

    def _emit_struct(self, decl, base) -> None:
        params = data_params(decl)
        if not params:
            return
        w = self.structs
        w.line(source_comment(decl.src))
        with w.block(f"struct action_data_{base}", "};"):
            for p in params:
                w.line(self.ctx.ctypes.declare(p.type, p.name, p.src) + f";  /* {p.type} */")
        w.line()

    def _emit_function(self, decl, base, exprs, call_stmt) -> None:
        bindings = {}
        args = ["struct packet_state *s"]
        if data_params(decl):
            args.append(f"const struct action_data_{base} *d")
            for p in data_params(decl):
                bindings[id(p)] = f"d->{p.name}"
        for p in dir_params(decl):
            const = "const " if p.direction == ir.Direction.IN else ""
            if is_wide(p.type):
                args.append(f"{const}uint8_t *p_{p.name}")
                bindings[id(p)] = f"p_{p.name}"
            else:
                args.append(f"{const}{self.ctx.ctypes.c_type(p.type, p.src)} *p_{p.name}")
                bindings[id(p)] = f"(*p_{p.name})"
        w = CodeWriter()
        w.line(source_comment(decl.src))
        w.line("static __rte_always_inline void")
        with w.block(f"action_{base}({', '.join(args)})"):
            sg = StatementGen(self.ctx, exprs.with_bindings(bindings), call_stmt,
                              on_exit="s->exited = true; return;")
            sg.block(decl.body.statements, w)
        w.line()
        self.functions.extend(w)

    def call(self, sg: StatementGen, decl: ir.ActionDecl, args: list,
             data_c, w: CodeWriter) -> None:
        """Calls an action.  ``args`` are the call's arguments in parameter
        order: all of them for a direct call (``data_c`` None), only the
        directional ones for a table's action (``data_c`` the entry data)."""
        base = self.name(decl)
        ex = sg.exprs
        call_args = ["s"]
        if data_params(decl):
            if data_c is None:
                tmp = self.ctx.temp("data")
                w.line(f"{self.data_struct(decl)} {tmp};")
                by_param = dict(zip([p.name for p in decl.params], args))
                for p in data_params(decl):
                    a = by_param.get(p.name)
                    if a is None or a.value is None:
                        raise CompileError.at(decl.src, f"missing argument '{p.name}'")
                    ex.store(ex._host_or_bits(f"{tmp}.{p.name}", p.type), a.value, w)
                data_c = f"&{tmp}"
            call_args.append(data_c)
        directional = dir_params(decl)
        if len(args) > len(directional):       # a direct call: all arguments
            args = [a for p, a in zip(decl.params, args)
                    if p.direction != ir.Direction.NONE]
        dir_args = args
        writebacks = []
        for p, a in zip(directional, dir_args):
            tmp = self.ctx.temp(f"arg_{p.name}")
            w.line(self.ctx.ctypes.declare(p.type, tmp, p.src) + ";")
            headers.init_storage(tmp, p.type, w)
            loc = ex._host_or_bits(tmp, p.type)
            if p.direction in (ir.Direction.IN, ir.Direction.INOUT):
                ex.store(loc, a.value, w)
            call_args.append(tmp if is_wide(p.type) else f"&{tmp}")
            if p.direction in (ir.Direction.OUT, ir.Direction.INOUT) and a.value is not None:
                writebacks.append((a.value, loc))
        w.line(f"action_{base}({', '.join(call_args)});")
        for target, loc in writebacks:
            ex.assign(target, Located(loc), w)
