"""Type references as the parser writes them, before name resolution.

The parser cannot build ``ir.types`` objects for named types (the
declaration may carry type arguments, widths may be constant expressions);
it writes these placeholders, which ``names.py`` links to declarations and
``typecheck.py`` replaces by real types.  None survives the front end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ir.nodes import NO_SRC, Expression, SrcInfo
from ..ir.types import Type


@dataclass(eq=False)
class UnresolvedType(Type):
    """``Name`` or ``Name<args>``; ``decl`` filled by name resolution."""
    name: str
    args: list = field(default_factory=list)
    src: SrcInfo = NO_SRC
    decl: Optional[object] = None

    def __str__(self) -> str:
        return self.name + (f"<{', '.join(map(str, self.args))}>" if self.args else "")

    __hash__ = object.__hash__


@dataclass(eq=False)
class UnresolvedBits(Type):
    """``bit<(expr)>``, ``int<(expr)>``, ``varbit<(expr)>``."""
    width: Expression
    signed: bool = False
    varbit: bool = False
    src: SrcInfo = NO_SRC

    __hash__ = object.__hash__


@dataclass(eq=False)
class UnresolvedStack(Type):
    """``T[size]``: size is an expression folded by the type checker."""
    element: Type
    size: Expression
    src: SrcInfo = NO_SRC

    __hash__ = object.__hash__


@dataclass(eq=False)
class UnresolvedTuple(Type):
    elements: list
    src: SrcInfo = NO_SRC

    __hash__ = object.__hash__


@dataclass(eq=False)
class UnresolvedTypeVarUse(Type):
    """A bare identifier used as a return type before its type parameter
    list (``T lookahead<T>()``)."""
    name: str
    src: SrcInfo = NO_SRC

    __hash__ = object.__hash__


@dataclass(eq=False)
class ValueSetDecl:
    """Parsed only to be rejected with a clear message."""
    name: str
    src: SrcInfo = NO_SRC
