"""P4-16 types as the compiler sees them after the front end.

Every expression in the IR carries one of these in its ``type`` slot once
type checking has run.  Typedefs and ``type`` declarations are resolved to
their underlying type by the front end, so back ends never see them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # only for annotations; nodes.py imports this module
    from .nodes import (EnumDecl, ExternDecl, HeaderDecl, ParserDecl,
                        ControlDecl, StructDecl, TableDecl, ActionDecl,
                        PackageTypeDecl, ParserTypeDecl, ControlTypeDecl)


class Type:
    """Base of all types.  Types compare structurally (dataclass eq)."""

    def is_scalar_bits(self) -> bool:
        return isinstance(self, TypeBits)


@dataclass(frozen=True, eq=True)
class TypeBits(Type):
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True)."""
    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True, eq=True)
class TypeVarbit(Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True, eq=True)
class TypeInfInt(Type):
    """The type of an integer literal written without a width (``5``)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, eq=True)
class TypeBool(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, eq=True)
class TypeString(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True, eq=True)
class TypeVoid(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True, eq=True)
class TypeDontCare(Type):
    """The type of ``_`` and of ``default`` in keysets."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, eq=True)
class TypeError_(Type):
    """The P4 ``error`` type (all ``error {...}`` declarations merged)."""

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True, eq=True)
class TypeMatchKind(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True, eq=False)
class TypeNamed(Type):
    """A type that is a reference to a declaration (header, struct, enum,
    extern, parser, control, package).  Identity is the declaration."""
    decl: "object"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeNamed) and other.decl is self.decl and type(other) is type(self)

    def __hash__(self) -> int:
        return id(self.decl)

    def __str__(self) -> str:
        return getattr(self.decl, "name", "?")


class TypeHeader(TypeNamed):
    decl: "HeaderDecl"


class TypeHeaderUnion(TypeNamed):
    pass


class TypeStruct(TypeNamed):
    decl: "StructDecl"


class TypeEnum(TypeNamed):
    """``enum`` or serializable ``enum bit<W>``: see ``decl.underlying``."""
    decl: "EnumDecl"


class TypeExtern(TypeNamed):
    decl: "ExternDecl"


class TypeParser(TypeNamed):
    pass


class TypeControl(TypeNamed):
    pass


class TypePackage(TypeNamed):
    pass


class TypeTable(TypeNamed):
    """The type of a table instance (``t``); ``t.apply()`` has TypeTableResult."""
    decl: "TableDecl"


class TypeAction(TypeNamed):
    decl: "ActionDecl"


class TypeTableResult(TypeNamed):
    """Result of ``t.apply()``: has ``.hit``, ``.miss``, ``.action_run``."""
    decl: "TableDecl"


@dataclass(frozen=True, eq=True)
class TypeStack(Type):
    """A header stack ``H[size]``."""
    element: Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True, eq=True)
class TypeTuple(Type):
    """``tuple<...>`` and the type of list expressions ``{a, b}``."""
    elements: tuple

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elements)) + ">"


@dataclass(frozen=True, eq=True)
class TypeSet(Type):
    """The type of keyset expressions (masks ``&&&``, ranges ``..``)."""
    element: Type

    def __str__(self) -> str:
        return f"set<{self.element}>"


@dataclass(frozen=True, eq=False)
class TypeVar(Type):
    """A type parameter of a generic extern, function, parser, control or
    package (``T`` in ``register<T>``).  Identity, not name, matters."""
    name: str

    def __str__(self) -> str:
        return self.name


def bits(width: int, signed: bool = False) -> TypeBits:
    return TypeBits(width, signed)


BOOL = TypeBool()
INFINT = TypeInfInt()
VOID = TypeVoid()
STRING = TypeString()
ERROR = TypeError_()
MATCH_KIND = TypeMatchKind()
DONTCARE = TypeDontCare()


def width_of(t: Type) -> int:
    """Width in bits of a fixed-width serializable type, as P4 defines it
    (``sizeInBits``): bit/int, bool (1), serializable enums, headers and
    structs of those.  Raises ValueError for anything else."""
    if isinstance(t, TypeBits):
        return t.width
    if isinstance(t, TypeBool):
        return 1
    if isinstance(t, TypeEnum) and t.decl.underlying is not None:
        return width_of(t.decl.underlying)
    if isinstance(t, (TypeHeader, TypeStruct)):
        return sum(width_of(f.type) for f in t.decl.fields)
    if isinstance(t, TypeStack):
        return t.size * width_of(t.element)
    raise ValueError(f"type {t} has no fixed width")
