"""Where control goes inside a statement, for functions' ``return``.

The front end uses ``always_returns`` to reject a non-void function with a
path that ends without ``return`` (P4-16 "Function declarations"); the mid
end uses both helpers to turn early returns into structured code when it
inlines a function (``midend/inline_functions.py``). ``walk`` lists a
subtree's nodes for both and for the inlining of sub-controls.
"""
from __future__ import annotations

import dataclasses

from . import nodes as N

# Fields that point at declarations elsewhere rather than owning a subtree:
# walks and copies of a subtree (here and in midend/inline_controls.py) skip them.
REFERENCE_FIELDS = frozenset({"decl", "callee", "action", "type", "type_bindings",
                              "constructor", "src"})


def always_returns(s) -> bool:
    """True when every path through `s` ends in a ``return``."""
    if isinstance(s, N.ReturnStmt):
        return True
    if isinstance(s, N.BlockStmt):
        return any(always_returns(x) for x in s.statements)
    if isinstance(s, N.IfStmt):
        return s.other is not None and always_returns(s.then) and always_returns(s.other)
    if isinstance(s, N.SwitchStmt):
        bodies = [c.body for c in s.cases if c.body is not None]
        return _switch_is_exhaustive(s) and bool(bodies) and \
            all(always_returns(b) for b in bodies) and s.cases[-1].body is not None
    return False


def _switch_is_exhaustive(s: N.SwitchStmt) -> bool:
    """A ``default`` label, or a switch on ``t.apply().action_run`` that
    names every action of the table."""
    if any(isinstance(c.label, N.DefaultExpr) for c in s.cases):
        return True
    e = s.expr
    if isinstance(e, N.Member) and e.name == "action_run" and isinstance(e.expr, N.MethodCall):
        table = e.expr.callee
        labels = {id(getattr(c.label, "decl", None)) for c in s.cases}
        return isinstance(table, N.TableDecl) and all(id(r.action) in labels for r in table.actions)
    return False


def contains_return(s) -> bool:
    """True when a ``return`` appears anywhere inside `s`."""
    return any(isinstance(n, N.ReturnStmt) for n in walk(s))


def walk(tree):
    """Every IR node of a subtree, not following references."""
    stack = [tree]
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (N.Node, N.Annotation)):
            yield value
            for f in dataclasses.fields(value):
                if f.name not in REFERENCE_FIELDS:
                    stack.append(getattr(value, f.name))
