"""Inlines P4 functions at every call, so back ends never see one.

P4-16 "Function declarations" and "Calling convention: call by copy
in/copy out" give the semantics this pass keeps:

* arguments are evaluated left to right; an ``in``/``inout`` argument's
  value is copied into a fresh variable for its parameter when it is
  evaluated (so a later argument with side effects cannot change it), the
  l-value of an ``out``/``inout`` argument is fixed then too (a
  non-constant stack index is saved in a variable);
* ``out`` parameters start uninitialized (headers in them invalid: the
  back end's variable declaration does that);
* the body runs on those variables; ``return e`` stores e in a result
  variable; an early return sets a "returned" flag and the statements after
  the one that may return are guarded by ``if (!returned)`` (a structured
  rewrite: no flag when every return is the last thing on its path);
* after the body, ``out``/``inout`` variables are copied back to the saved
  l-values, left to right; the call's value is the result variable.

A call inside an expression is hoisted into statements before the
statement that holds it. To keep the order of evaluation the spec gives
(left to right; ``&&``, ``||`` and ``?:`` evaluate an operand only when
needed), an operand evaluated before a call is saved in a variable first,
a call in the right operand of ``&&``/``||`` runs under an ``if`` on the
left operand, and a call in a branch of ``?:`` runs in that branch of an
``if``. Expressions without function calls are left untouched, and a
program without functions is not changed at all.

Calls where no statement can precede them (a table key, a parser-local
initializer, a table's action arguments) are rejected as unsupported.
"""
from __future__ import annotations

from ..diagnostics import CompileError
from ..ir import flow
from ..ir import nodes as ir
from ..ir import types as T
from .inline_controls import _Cloner

MAX_DEPTH = 64          # nesting of inlined calls; P4 has no recursion, so only a safety net


def inline_functions(program: ir.Program) -> None:
    """Rewrites `program` in place: no function calls, no function
    declarations."""
    if not any(isinstance(d, ir.FunctionDecl) for d in program.declarations):
        return
    inliner = _Inliner()
    for d in program.declarations:
        if isinstance(d, ir.ActionDecl):
            inliner.block(d.body)
        elif isinstance(d, ir.ControlDecl):
            inliner.control(d)
        elif isinstance(d, ir.ParserDecl):
            inliner.parser(d)
    program.declarations = [d for d in program.declarations
                            if not isinstance(d, ir.FunctionDecl)]
    for node in flow.walk(program):
        if isinstance(node, ir.MethodCall) and node.kind == ir.CallKind.FUNCTION:
            raise CompileError.at(node.src, f"unsupported: calling function "
                                  f"'{node.callee.name}' here (only in statements, "
                                  "conditions and the expressions they contain)")


def has_call(tree) -> bool:
    return tree is not None and any(
        isinstance(n, ir.MethodCall) and n.kind == ir.CallKind.FUNCTION
        for n in flow.walk(tree))


def _ref(var: ir.VarDecl, src) -> ir.PathExpr:
    return ir.PathExpr(var.name, decl=var, src=src, type=var.type)


def _is_constant(e) -> bool:
    return isinstance(e, (ir.IntLiteral, ir.BoolLiteral, ir.StringLiteral)) or (
        isinstance(e, ir.Member) and isinstance(e.expr, ir.TypeNameExpr))


def _params_of(call: ir.MethodCall):
    callee = call.callee
    if isinstance(callee, ir.Instantiation):
        callee = getattr(callee.type, "decl", None)
    return getattr(callee, "params", None)


class _Inliner:
    def __init__(self):
        self.depth = 0

    # ---------------------------------------------------------- containers
    def block(self, b: ir.BlockStmt) -> None:
        b.statements = self.statements(b.statements)

    def control(self, c: ir.ControlDecl) -> None:
        # A control-level initializer that calls a function runs, like
        # every local initializer, before the apply body: it (and the
        # initializers after it, to keep their order) become assignments
        # at the start of the body.
        moved = []
        for d in c.locals:
            if isinstance(d, ir.ActionDecl):
                self.block(d.body)
            elif isinstance(d, ir.VarDecl) and d.init is not None and (moved or has_call(d.init)):
                moved.append(ir.AssignStmt(_ref(d, d.src), d.init, src=d.src))
                d.init = None
        c.body.statements = moved + c.body.statements
        self.block(c.body)

    def parser(self, p: ir.ParserDecl) -> None:
        for st in p.states:
            st.statements = self.statements(st.statements)
            if isinstance(st.transition, ir.SelectExpr) and has_call(st.transition.keys):
                pre, st.transition.keys = self.sequence(st.transition.keys)
                st.statements += pre

    # ---------------------------------------------------------- statements
    def statements(self, stmts: list) -> list:
        out = []
        for s in stmts:
            out += self.statement(s)
        return out

    def single(self, s):
        stmts = self.statement(s)
        return stmts[0] if len(stmts) == 1 else ir.BlockStmt(stmts, src=s.src)

    def statement(self, s) -> list:
        if isinstance(s, ir.BlockStmt):
            self.block(s)
            return [s]
        if isinstance(s, ir.IfStmt):
            pre, s.cond = self.value(s.cond)
            s.then = self.single(s.then)
            if s.other is not None:
                s.other = self.single(s.other)
            return pre + [s]
        if isinstance(s, ir.SwitchStmt):
            pre, s.expr = self.value(s.expr)
            for case in s.cases:
                if case.body is not None:
                    self.block(case.body)
            return pre + [s]
        if isinstance(s, ir.AssignStmt):
            if not has_call(s.lhs) and not has_call(s.rhs):
                return [s]
            # The target is evaluated to an l-value before the value.
            pre, s.lhs = self.lvalue(s.lhs, save=has_call(s.rhs))
            if getattr(s, "compound", False) and isinstance(s.rhs, ir.Binary):
                # `a[i] op= e`: the target is evaluated once (P4-16 12.1)
                s.rhs.left = _Cloner({}).clone(s.lhs)
            pre_rhs, s.rhs = self.value(s.rhs)
            return pre + pre_rhs + [s]
        if isinstance(s, ir.CallStmt):
            if s.call.kind == ir.CallKind.FUNCTION:
                pre, _ = self.inline(s.call)
                return [ir.BlockStmt(pre, src=s.src)]
            if not has_call(s.call):
                return [s]
            pre, s.call = self.value(s.call)
            return pre + [s]
        if isinstance(s, ir.VarDecl) and has_call(s.init):
            pre, s.init = self.value(s.init)
            return pre + [s]
        return [s]

    # --------------------------------------------------------- expressions
    def value(self, e):
        """(statements to run first, expression to use instead of `e`)."""
        if not has_call(e):
            return [], e
        if isinstance(e, ir.MethodCall):
            if e.kind == ir.CallKind.FUNCTION:
                pre, result = self.inline(e)
                if result is None:
                    raise CompileError.at(e.src, f"function '{e.callee.name}' returns void: "
                                          "its call is not a value")
                return pre, result
            pre = []
            if isinstance(e.target, ir.Member) and has_call(e.target.expr):
                pre, e.target.expr = self.value(e.target.expr)
            pre_args, e.args = self.arguments(e.args, _params_of(e))
            return pre + pre_args, e
        if isinstance(e, ir.Binary) and e.op in (ir.BinOp.LAND, ir.BinOp.LOR):
            return self.short_circuit(e)
        if isinstance(e, ir.Mux):
            return self.mux(e)
        if isinstance(e, ir.Binary):
            pre, (e.left, e.right) = self.sequence([e.left, e.right])
            return pre, e
        if isinstance(e, (ir.Unary, ir.Cast, ir.Member, ir.Slice)):
            pre, e.expr = self.value(e.expr)
            return pre, e
        if isinstance(e, ir.ArrayIndex):
            pre, e.expr = self.value(e.expr)
            pre_index, e.index = self.value(e.index)
            return pre + pre_index, e
        if isinstance(e, ir.ListExpr):
            pre, e.elements = self.sequence(e.elements)
            return pre, e
        if isinstance(e, ir.StructInit):
            pre, values = self.sequence([v for _, v in e.fields])
            e.fields = [(name, v) for (name, _), v in zip(e.fields, values)]
            return pre, e
        raise CompileError.at(e.src, f"unsupported: function call inside {type(e).__name__}")

    def sequence(self, exprs: list):
        """Operands evaluated left to right: one evaluated before a later
        operand's function call is saved in a variable first."""
        parts = [self.value(x) for x in exprs]
        pre, out = [], []
        for i, (stmts, v) in enumerate(parts):
            pre += stmts
            later_effects = any(p for p, _ in parts[i + 1:])
            if later_effects and not _is_constant(v) and \
                    not isinstance(v, (ir.ListExpr, ir.StructInit)) and \
                    not isinstance(v.type, (T.TypeInfInt, T.TypeTuple)):
                tmp = ir.VarDecl("operand", v.type, v, src=v.src)
                pre.append(tmp)
                v = _ref(tmp, v.src)
            out.append(v)
        return pre, out

    def short_circuit(self, e: ir.Binary):
        pre, left = self.value(e.left)
        pre_right, right = self.value(e.right)
        if not pre_right:
            e.left, e.right = left, right
            return pre, e
        # `a && f()`: f runs only when a is true (`||`: when a is false).
        tmp = ir.VarDecl("cond", T.BOOL, left, src=e.src)
        test = _ref(tmp, e.src) if e.op == ir.BinOp.LAND else \
            ir.Unary(ir.UnOp.NOT, _ref(tmp, e.src), src=e.src, type=T.BOOL)
        then = ir.BlockStmt(pre_right + [ir.AssignStmt(_ref(tmp, e.src), right, src=e.src)],
                            src=e.src)
        return pre + [tmp, ir.IfStmt(test, then, None, src=e.src)], _ref(tmp, e.src)

    def mux(self, e: ir.Mux):
        pre, e.cond = self.value(e.cond)
        pre_then, then = self.value(e.then)
        pre_other, other = self.value(e.other)
        if not pre_then and not pre_other:
            e.then, e.other = then, other
            return pre, e
        # Only the branch the condition selects is evaluated.
        tmp = ir.VarDecl("choice", e.type, None, src=e.src)
        branch = lambda stmts, v: ir.BlockStmt(                    # noqa: E731
            stmts + [ir.AssignStmt(_ref(tmp, e.src), v, src=e.src)], src=e.src)
        return pre + [tmp, ir.IfStmt(e.cond, branch(pre_then, then), branch(pre_other, other),
                                     src=e.src)], _ref(tmp, e.src)

    def lvalue(self, e, save: bool):
        """An l-value evaluated now: its index expressions are evaluated
        (and, with `save`, kept in variables so later side effects cannot
        move the location)."""
        if isinstance(e, (ir.Member, ir.Slice)):
            pre, e.expr = self.lvalue(e.expr, save)
            return pre, e
        if isinstance(e, ir.ArrayIndex):
            pre, e.expr = self.lvalue(e.expr, save)
            pre_index, index = self.value(e.index)
            pre += pre_index
            if save and not _is_constant(index):
                tmp = ir.VarDecl("index", index.type, index, src=index.src)
                pre.append(tmp)
                index = _ref(tmp, index.src)
            e.index = index
            return pre, e
        return [], e

    def arguments(self, args: list, params):
        """Arguments of a call that is not inlined (an extern, an action, a
        sub-control): evaluated left to right like any operands."""
        directions = [p.direction for p in params] if params else []
        directions += [ir.Direction.IN] * (len(args) - len(directions))
        parts = []
        for a, d in zip(args, directions):
            if a is None or a.value is None:
                parts.append(([], None))
            elif d in (ir.Direction.OUT, ir.Direction.INOUT):
                parts.append(self.lvalue(a.value, save=True))
            else:
                parts.append(self.value(a.value))
        pre = []
        for i, (a, d, (stmts, v)) in enumerate(zip(args, directions, parts)):
            pre += stmts
            if v is None:
                continue
            if d not in (ir.Direction.OUT, ir.Direction.INOUT) and any(p for p, _ in parts[i + 1:]) \
                    and not _is_constant(v) and not isinstance(v.type, (T.TypeInfInt, T.TypeTuple)):
                tmp = ir.VarDecl("arg", v.type, v, src=v.src)
                pre.append(tmp)
                v = _ref(tmp, v.src)
            a.value = v
        return pre, args

    # ------------------------------------------------------------ inlining
    def inline(self, call: ir.MethodCall):
        """(statements that run the call, its result variable or None)."""
        fn: ir.FunctionDecl = call.callee
        src = call.src
        if self.depth >= MAX_DEPTH:
            raise CompileError.at(src, f"function calls nest more than {MAX_DEPTH} deep "
                                  f"(at '{fn.name}')")
        self.depth += 1
        try:
            pre, mapping, copy_out = [], {}, []
            for param, arg in zip(fn.params, call.args):
                var = ir.VarDecl(f"{fn.name}_{param.name}", param.type, None, src=src)
                mapping[id(param)] = var
                value = arg.value if arg is not None else None
                if param.direction in (ir.Direction.IN, ir.Direction.NONE):
                    if value is None:
                        value = _Cloner({}).clone(param.default)
                    stmts, var.init = self.value(value)
                    pre += stmts
                elif value is not None:
                    stmts, place = self.lvalue(value, save=True)
                    pre += stmts
                    if param.direction == ir.Direction.INOUT:
                        var.init = _Cloner({}).clone(place)
                    copy_out.append((place, var))
                pre.append(var)
            body = _Cloner(mapping).clone(fn.body)
            _Cloner.fix_references(body, mapping)
            result = None
            if fn.return_type != T.VOID:
                result = ir.VarDecl(f"{fn.name}_result", fn.return_type, None, src=src)
                pre.append(result)
            returned = ir.VarDecl(f"{fn.name}_returned", T.BOOL,
                                  ir.BoolLiteral(False, src=src, type=T.BOOL), src=src)
            rewrite = _Returns(result, returned)
            body.statements = rewrite.statements(body.statements)
            if rewrite.flag_used:
                pre.append(returned)
            else:
                rewrite.drop_flag_writes(body)
            self.block(body)
            pre.append(body)
            for place, var in copy_out:
                pre.append(ir.AssignStmt(place, _ref(var, src), src=src))
            return pre, (_ref(result, src) if result is not None else None)
        finally:
            self.depth -= 1


class _Returns:
    """Rewrites the returns of one inlined body (see the module docstring)."""

    def __init__(self, result, returned):
        self.result = result
        self.returned = returned
        self.flag_used = False
        self.flag_writes: set[int] = set()

    def statements(self, stmts: list) -> list:
        out = []
        for i, s in enumerate(stmts):
            always, may = flow.always_returns(s), flow.contains_return(s)
            out.append(self.statement(s))
            if always:
                break                      # the rest cannot run
            rest = stmts[i + 1:]
            if rest and may:
                self.flag_used = True
                src = s.src
                not_returned = ir.Unary(ir.UnOp.NOT, _ref(self.returned, src), src=src, type=T.BOOL)
                out.append(ir.IfStmt(not_returned, ir.BlockStmt(self.statements(rest), src=src),
                                     None, src=src))
                break
        return out

    def statement(self, s):
        if isinstance(s, ir.ReturnStmt):
            src = s.src
            stmts = []
            if s.value is not None:
                stmts.append(ir.AssignStmt(_ref(self.result, src), s.value, src=src))
            flag = ir.AssignStmt(_ref(self.returned, src), ir.BoolLiteral(True, src=src, type=T.BOOL),
                                 src=src)
            self.flag_writes.add(id(flag))
            return ir.BlockStmt(stmts + [flag], src=src)
        if isinstance(s, ir.BlockStmt):
            s.statements = self.statements(s.statements)
        elif isinstance(s, ir.IfStmt):
            s.then = self.statement(s.then)
            if s.other is not None:
                s.other = self.statement(s.other)
        elif isinstance(s, ir.SwitchStmt):
            for case in s.cases:
                if case.body is not None:
                    case.body.statements = self.statements(case.body.statements)
        return s

    def drop_flag_writes(self, tree) -> None:
        for node in flow.walk(tree):
            if isinstance(node, ir.BlockStmt):
                node.statements = [x for x in node.statements if id(x) not in self.flag_writes]
