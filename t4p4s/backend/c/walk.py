"""Walking IR trees without following references (``decl``, ``callee``)
back into declarations, which would revisit the program or loop."""
from __future__ import annotations

from ...ir import nodes as ir

_REFERENCES = {"decl", "callee", "type", "type_bindings", "constructor", "src"}


def children(node):
    for name, v in vars(node).items():
        if name in _REFERENCES:
            continue
        if isinstance(v, ir.Node):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, ir.Node):
                    yield x


def walk(node):
    """``node`` and every node it contains, depth first."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(children(n))))


def member_chain(e):
    """`a.b.c` as its root name and field names: (PathExpr of a, ("b",
    "c")); the root is None when it is not a resolved name."""
    names = []
    while isinstance(e, ir.Member):
        names.append(e.name)
        e = e.expr
    root = e if isinstance(e, ir.PathExpr) and e.decl is not None else None
    return root, tuple(reversed(names))
