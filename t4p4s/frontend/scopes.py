"""Lexical scopes for name resolution.

P4 requires declaration before use, so one in-order walk with a chain of
scopes (top level -> parser/control -> action/state/block) resolves every
name.  A scope maps a name to its declaration; extern functions and extern
methods may be overloaded by arity, so those map to a list.
"""
from __future__ import annotations

from typing import Optional

from ..ir import nodes as N

_OVERLOADABLE = (N.ExternFunctionDecl, N.ExternMethod)


class DuplicateName(Exception):
    def __init__(self, previous):
        self.previous = previous


class Scope:
    def __init__(self, parent: Optional["Scope"] = None, kind: str = "block"):
        self.parent = parent
        self.kind = kind
        self.names: dict = {}

    def declare(self, name: str, decl) -> None:
        old = self.names.get(name)
        if old is None:
            self.names[name] = [decl] if isinstance(decl, _OVERLOADABLE) else decl
        elif isinstance(old, list) and isinstance(decl, _OVERLOADABLE):
            old.append(decl)
        else:
            raise DuplicateName(old[0] if isinstance(old, list) else old)

    def lookup(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def top(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope
