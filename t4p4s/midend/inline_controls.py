"""Inlines sub-control instances into the controls that apply them.

``MyCtl() c;  apply { c.apply(hdr, x); }`` becomes, in the caller:

* the callee's locals (variables, actions, tables, extern instances),
  declared once per instance, renamed ``c_<name>`` and given the
  control-plane name ``c.<name>`` (so a table ``t`` of ``c`` inside
  ``ingress`` is ``ingress.c.t`` in the P4Info, as with p4c);
* one variable ``c_<param>`` per apply parameter, shared by every apply of
  the instance (the callee's tables and actions read them);
* at each ``c.apply(...)``: a block that copies the ``in``/``inout``
  arguments into those variables, runs a copy of the callee's apply body,
  and copies ``out``/``inout`` variables back into the arguments. That is
  the spec's copy-in/copy-out calling convention, so aliasing arguments
  behave exactly as the spec says.

Copying is skipped where it cannot be observed, as p4c's optimizer also
does: when an instance is applied once and an argument is a plain path
(``hdr``, ``meta.drb``) rooted at the caller's parameters or control-level
variables and overlapping no other argument, the callee uses the argument
itself. That matters for speed: a gNB's headers struct is hundreds of
bytes, copied twice per sub-control per packet otherwise.

The back ends then never see a sub-control.  Sub-parsers are not inlined
(the back end rejects applying them).
"""
from __future__ import annotations

import copy
import dataclasses
import itertools

from ..diagnostics import CompileError
from ..ir import nodes as ir
from ..ir.flow import REFERENCE_FIELDS, walk
from ..ir import types as T


def inline_sub_controls(program: ir.Program) -> None:
    """Rewrites every control of `program` in place so that none applies a
    sub-control instance."""
    done: set[int] = set()
    for decl in program.declarations:
        if isinstance(decl, ir.ControlDecl):
            _inline_into(decl, done)


def _control_of(inst) -> ir.ControlDecl | None:
    decl = getattr(inst.type, "decl", None) if isinstance(inst, ir.Instantiation) else None
    return decl if isinstance(decl, ir.ControlDecl) else None


def _inline_into(control: ir.ControlDecl, done: set[int]) -> None:
    if id(control) in done:
        return
    done.add(id(control))
    instances = [d for d in control.locals if _control_of(d) is not None]
    if not instances:
        return
    taken = {d.name for d in control.locals} | {p.name for p in control.params}
    expansions = {}
    applies = _applies_by_instance(control.body)
    control_level = {id(d) for d in list(control.params) + list(control.locals)}
    for inst in instances:
        callee = _control_of(inst)
        _inline_into(callee, done)
        _check_inlinable(inst, callee)
        calls = applies.get(id(inst), [])
        by_reference = _by_reference(callee, calls[0], control_level) if len(calls) == 1 else {}
        expansions[id(inst)] = _Expansion(inst, callee, taken, by_reference)
    new_locals = []
    for d in control.locals:
        expansion = expansions.get(id(d))
        new_locals += expansion.declarations if expansion else [d]
    control.locals = new_locals
    control.body = _rewrite_applies(control.body, expansions)


def _check_inlinable(inst: ir.Instantiation, callee: ir.ControlDecl) -> None:
    if callee.ctor_params or inst.args:
        raise CompileError.at(inst.src, f"unsupported: sub-control '{callee.name}' with "
                              f"constructor parameters")
    for node in walk(callee.body):
        if isinstance(node, ir.ReturnStmt):
            raise CompileError.at(node.src, f"unsupported: 'return' in the apply block of "
                                  f"'{callee.name}', which is applied as a sub-control")


def _applies_by_instance(body) -> dict[int, list[ir.MethodCall]]:
    applies: dict[int, list[ir.MethodCall]] = {}
    for node in walk(body):
        if isinstance(node, ir.MethodCall) and node.kind == ir.CallKind.CONTROL_APPLY:
            applies.setdefault(id(node.callee), []).append(node)
    return applies


def _lvalue_path(expr, roots: set[int]) -> tuple | None:
    """('root id', 'field', ...) for ``x.f.g`` rooted at one of `roots`;
    None for anything else (an index, a slice, a call, a block variable)."""
    names = []
    while isinstance(expr, ir.Member):
        names.append(expr.name)
        expr = expr.expr
    if isinstance(expr, ir.PathExpr) and id(expr.decl) in roots:
        return (id(expr.decl), *reversed(names))
    return None


def _by_reference(callee: ir.ControlDecl, call: ir.MethodCall, roots: set[int]) -> dict[int, ir.Expression]:
    """Parameter id -> argument, for the parameters the callee may use in
    place: plain paths overlapping no other argument."""
    paths = {}
    for param, arg in zip(callee.params, call.args):
        value = arg.value if arg is not None else None
        path = _lvalue_path(value, roots) if value is not None else None
        if path is not None:
            paths[id(param)] = (path, value)
    overlapping = set()
    for a, (path_a, _) in paths.items():
        for b, (path_b, _) in paths.items():
            shorter = min(len(path_a), len(path_b))
            if a != b and path_a[:shorter] == path_b[:shorter]:
                overlapping.add(a)
    return {param: value for param, (_, value) in paths.items() if param not in overlapping}


class _Expansion:
    """One sub-control instance: its hoisted declarations, and the code
    that replaces each of its applies."""

    def __init__(self, inst: ir.Instantiation, callee: ir.ControlDecl, taken: set[str],
                 by_reference: dict[int, ir.Expression]):
        self.inst = inst
        self.callee = callee
        self.prefix = inst.name
        # original declaration id -> its copy in the caller
        self.mapping: dict[int, object] = {}
        self.param_vars = [self._param_var(p, taken) for p in callee.params]
        # parameter variable id -> the argument used in its place
        self.substitutes = {id(var): by_reference[id(param)]
                            for param, var in zip(callee.params, self.param_vars)
                            if id(param) in by_reference}
        hoisted = _Cloner(self.mapping).clone(list(callee.locals))
        for decl in hoisted:
            self._rename(decl, taken)
        _Cloner.fix_references(hoisted, self.mapping)
        hoisted = _substitute(hoisted, self.substitutes)
        # A local variable's initializer runs at every apply, not once.
        self.initializers = []
        for d in hoisted:
            if isinstance(d, ir.VarDecl) and d.init is not None:
                self.initializers.append((d, d.init))
                d.init = None
        self.declarations = [v for v in self.param_vars if id(v) not in self.substitutes] + hoisted

    def _unique(self, name: str, taken: set[str]) -> str:
        base = f"{self.prefix}_{name}"
        candidate = base
        for n in itertools.count(1):
            if candidate not in taken:
                break
            candidate = f"{base}_{n}"
        taken.add(candidate)
        return candidate

    def _param_var(self, param: ir.Param, taken: set[str]) -> ir.VarDecl:
        var = ir.VarDecl(self._unique(param.name, taken), param.type, None, src=param.src)
        self.mapping[id(param)] = var
        return var

    def _rename(self, decl, taken: set[str]) -> None:
        external = decl.external_name
        decl.name = self._unique(decl.name, taken)
        if not external.startswith("."):
            external = f"{self.inst.external_name}.{external}"
        decl.annotations = [a for a in decl.annotations if a.name != "name"] + [
            ir.Annotation("name", [ir.StringLiteral(external, src=decl.src, type=T.STRING)],
                          src=decl.src)]

    def apply_block(self, call: ir.MethodCall) -> ir.BlockStmt:
        src = call.src
        before, after = [], []
        for param, var, arg in zip(self.callee.params, self.param_vars, call.args):
            value = arg.value if arg is not None else None
            if value is None or id(var) in self.substitutes:
                continue
            if param.direction != ir.Direction.OUT:
                before.append(ir.AssignStmt(_ref(var, src), value, src=src))
            if param.direction in (ir.Direction.OUT, ir.Direction.INOUT):
                after.append(ir.AssignStmt(_Cloner({}).clone(value), _ref(var, src), src=src))
        for var, init in self.initializers:
            before.append(ir.AssignStmt(_ref(var, src), self._copy(init), src=src))
        return ir.BlockStmt(before + [self._copy(self.callee.body)] + after, src=src)

    def _copy(self, tree):
        """A copy of part of the callee, referring to the hoisted copies."""
        mapping = dict(self.mapping)
        new = _Cloner(mapping).clone(tree)
        _Cloner.fix_references(new, mapping)
        return _substitute(new, self.substitutes)


def _ref(var: ir.VarDecl, src) -> ir.PathExpr:
    return ir.PathExpr(var.name, decl=var, src=src, type=var.type)


class _Cloner:
    """Copies IR subtrees, recording original -> copy for every node, so the
    copies' references to each other can be redirected afterwards."""

    def __init__(self, mapping: dict[int, object]):
        self.mapping = mapping

    def clone(self, value):
        if isinstance(value, list):
            return [self.clone(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.clone(v) for v in value)
        if isinstance(value, dict):
            return {k: self.clone(v) for k, v in value.items()}
        if not isinstance(value, (ir.Node, ir.Annotation)):
            return value
        new = copy.copy(value)
        self.mapping[id(value)] = new
        for f in dataclasses.fields(value):
            if f.name not in REFERENCE_FIELDS:
                setattr(new, f.name, self.clone(getattr(value, f.name)))
        return new

    @staticmethod
    def fix_references(tree, mapping: dict[int, object]) -> None:
        for node in walk(tree):
            for name in ("decl", "callee", "action"):
                target = getattr(node, name, None)
                if target is not None and id(target) in mapping:
                    setattr(node, name, mapping[id(target)])
            if isinstance(node, ir.Expression):
                node.type = _remap_type(node.type, mapping)
            if isinstance(node, ir.PathExpr) and node.decl is not None and \
                    hasattr(node.decl, "name") and not isinstance(node.decl, list):
                node.name = node.decl.name


def _remap_type(t, mapping):
    if isinstance(t, T.TypeNamed) and id(t.decl) in mapping:
        return dataclasses.replace(t, decl=mapping[id(t.decl)])
    return t


def _substitute(tree, substitutes: dict[int, ir.Expression]):
    """`tree` with every use of a substituted parameter variable replaced by
    a fresh copy of its argument."""
    if not substitutes:
        return tree

    def replace(value):
        if isinstance(value, ir.PathExpr) and id(value.decl) in substitutes:
            return _Cloner({}).clone(substitutes[id(value.decl)])
        return value
    return _replace_nodes(tree, replace)


def _replace_nodes(tree, replace):
    """Applies `replace` to every node of `tree` (children first seen from
    their parents), returning the possibly replaced root."""
    if isinstance(tree, list):
        return [_replace_nodes(v, replace) for v in tree]
    for node in list(walk(tree)):
        for f in dataclasses.fields(node):
            if f.name in REFERENCE_FIELDS:
                continue
            value = getattr(node, f.name)
            if isinstance(value, list):
                setattr(node, f.name, [replace(v) for v in value])
            elif isinstance(value, tuple):
                setattr(node, f.name, tuple(replace(v) for v in value))
            else:
                setattr(node, f.name, replace(value))
    return replace(tree)


def _rewrite_applies(stmt, expansions: dict[int, _Expansion]):
    """`stmt` with every apply of an expanded instance replaced."""
    return _replace_nodes(stmt, lambda value: _expand(value, expansions))


def _expand(value, expansions):
    if isinstance(value, ir.CallStmt) and value.call.kind == ir.CallKind.CONTROL_APPLY:
        expansion = expansions.get(id(value.call.callee))
        if expansion is not None:
            return expansion.apply_block(value.call)
    return value
