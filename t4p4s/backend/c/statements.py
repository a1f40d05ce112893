"""P4 statements to C, shared by parsers, controls and actions.

A ``StatementGen`` translates the statements of one block; what a call
statement means depends on the block (``extract`` in a parser, ``emit`` in
a deparser, table applies in a control), so calls go to the block's
``call_stmt`` hook after the common builtins (validity, stacks) are
handled here.  Table applies inside expressions (``if (t.apply().hit)``,
``switch (t.apply().action_run)``) are hoisted into a statement before the
expression, because applying a table is a statement in C.
"""
from __future__ import annotations

from typing import Callable

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from .emit import CodeWriter, source_comment
from .walk import walk
from . import headers
from .expressions import ExprGen

K = ir.CallKind


class StatementGen:
    def __init__(self, ctx, exprs: ExprGen,
                 call_stmt: Callable[["StatementGen", ir.MethodCall, CodeWriter], None],
                 value_call: Callable[["StatementGen", ir.MethodCall], str] = None,
                 hoist: Callable[["StatementGen", ir.MethodCall, CodeWriter], str] = None,
                 on_exit: str = "return;",
                 before: Callable[[ir.Statement, CodeWriter], None] = None):
        self.ctx = ctx
        self.before = before
        self.exprs = exprs
        self.call_stmt = call_stmt
        self.value_call_hook = value_call
        self.hoist = hoist
        self.on_exit = on_exit
        self.hoisted: dict = {}          # id(MethodCall) -> C name of its result
        exprs.calls = self._value_call

    def _value_call(self, c: ir.MethodCall) -> str:
        if id(c) in self.hoisted:
            return self.hoisted[id(c)]
        if self.value_call_hook is None:
            raise CompileError.at(c.src, "unsupported: this call in an expression")
        return self.value_call_hook(self, c)

    # ---- statements ----------------------------------------------------

    def block(self, stmts, w: CodeWriter) -> None:
        for s in stmts:
            self.stmt(s, w)

    def stmt(self, s, w: CodeWriter) -> None:
        if isinstance(s, ir.EmptyStmt):
            return
        if isinstance(s, ir.BlockStmt):
            with w.block(""):
                self.block(s.statements, w)
            return
        comment = source_comment(s.src)
        if comment:
            w.line(comment)
        if self.before is not None:
            self.before(s, w)
        self._hoist_table_applies(s, w)
        if isinstance(s, ir.AssignStmt):
            self.exprs.assign(s.lhs, s.rhs, w)
        elif isinstance(s, ir.VarDecl):
            self._var_decl(s, w)
        elif isinstance(s, ir.ConstDecl):
            pass                          # folded into its uses by the front end
        elif isinstance(s, ir.CallStmt):
            self.call(s.call, w)
        elif isinstance(s, ir.IfStmt):
            w.line(f"if ({self.exprs.value(s.cond)}) {{")
            with w.indented():
                self._body(s.then, w)
            if s.other is not None:
                w.line("} else {")
                with w.indented():
                    self._body(s.other, w)
            w.line("}")
        elif isinstance(s, ir.SwitchStmt):
            self._switch(s, w)
        elif isinstance(s, ir.ReturnStmt):
            if s.value is not None:
                raise CompileError.at(s.src, "unsupported: return with a value "
                                      "(functions)")
            w.line("return;")
        elif isinstance(s, ir.ExitStmt):
            w.line(self.on_exit)
        elif isinstance(s, ir.Instantiation):
            raise CompileError.at(s.src, "unsupported: instantiation inside "
                                  "a block body")
        else:
            raise CompileError.at(s.src, f"unsupported: statement "
                                  f"{type(s).__name__}")

    def _body(self, s, w):
        if isinstance(s, ir.BlockStmt):
            self.block(s.statements, w)
        else:
            self.stmt(s, w)

    def _var_decl(self, s: ir.VarDecl, w):
        name = self.ctx.temp(s.name)
        w.line(self.ctx.ctypes.declare(s.type, name, s.src) + ";")
        self.exprs.bindings[id(s)] = name
        headers.init_storage(name, s.type, w)
        if s.init is not None:
            self.exprs.store(self.exprs.locate(ir.PathExpr(s.name, decl=s, type=s.type)),
                             s.init, w)

    def _switch(self, s: ir.SwitchStmt, w):
        e = s.expr
        if isinstance(e, ir.Member) and e.name == "action_run":
            table = e.expr.callee if isinstance(e.expr, ir.MethodCall) else None
            info = self.ctx.resources.of(table)
            selector = f"{self.hoisted[id(e.expr)]}->action"
            label = lambda lab: str(info.action_index(lab.decl))   # noqa: E731
        else:
            selector = self.exprs.value(e)
            label = lambda lab: self.exprs.value(lab)              # noqa: E731
        with w.block(f"switch ({selector})"):
            for case in s.cases:
                if isinstance(case.label, ir.DefaultExpr):
                    w.line("default:")
                else:
                    w.line(f"case {label(case.label)}:")
                if case.body is not None:
                    with w.indented():
                        with w.block(""):
                            self.block(case.body.statements, w)
                        w.line("break;")

    # ---- calls ---------------------------------------------------------

    def call(self, c: ir.MethodCall, w: CodeWriter) -> None:
        if c.kind in (K.HEADER_SET_VALID, K.HEADER_SET_INVALID):
            hdr = self.exprs.locate(c.target.expr)
            w.line(headers.make_valid(hdr.c) if c.kind == K.HEADER_SET_VALID
                   else f"{hdr.c}.valid = 0;")
        elif c.kind in (K.STACK_PUSH_FRONT, K.STACK_POP_FRONT):
            self._stack_shift(c, w)
        elif c.kind == K.HEADER_IS_VALID:
            pass                                   # no side effect
        elif c.kind in (K.CONTROL_APPLY, K.PARSER_APPLY):
            raise CompileError.at(c.src, "unsupported: applying a sub-parser "
                                  "or sub-control instance")
        elif c.kind == K.TABLE_APPLY and id(c) in self.hoisted:
            pass                                   # already applied
        else:
            self.call_stmt(self, c, w)

    def _stack_shift(self, c: ir.MethodCall, w):
        stack = self.exprs.locate(c.target.expr)
        n_arg = c.args[0].value if c.args else None
        if not isinstance(n_arg, ir.IntLiteral):
            raise CompileError.at(c.src, "push_front/pop_front need a constant count")
        n, size = n_arg.value, stack.type.size
        s = stack.c
        hsize = self.ctx.ctypes.header_size(stack.type.element)
        if c.kind == K.STACK_PUSH_FRONT:
            order = [(i, i - n) for i in range(size - 1, -1, -1)]
        else:
            order = [(i, i + n) for i in range(size)]
        for dst, src in order:
            if 0 <= src < size:
                headers.move_element(f"{s}.e[{dst}]", f"{s}.e[{src}]", hsize, w)
            else:
                headers.init_storage(f"{s}.e[{dst}]", stack.type.element, w)
        if c.kind == K.STACK_PUSH_FRONT:
            w.line(f"{s}.next_index = {s}.next_index + {n} > {size} ? {size} : {s}.next_index + {n};")
        else:
            w.line(f"{s}.next_index = {s}.next_index > {n} ? {s}.next_index - {n} : 0;")

    def _hoist_table_applies(self, s, w):
        """Applies the tables whose results ``s`` reads (its own expressions,
        not nested statements) into named results first."""
        if self.hoist is None:
            return
        exprs = []
        if isinstance(s, ir.IfStmt):
            exprs = [s.cond]
        elif isinstance(s, ir.SwitchStmt):
            exprs = [s.expr]
        elif isinstance(s, ir.AssignStmt):
            exprs = [s.rhs]
        elif isinstance(s, ir.VarDecl) and s.init is not None:
            exprs = [s.init]
        for e in exprs:
            for call in _table_applies(e):
                self.hoisted[id(call)] = self.hoist(self, call, w)


def _table_applies(e):
    return [n for n in walk(e)
            if isinstance(n, ir.MethodCall) and n.kind == K.TABLE_APPLY]
