"""The compiler's intermediate representation: one tree of dataclasses.

The parser (``frontend/parser.py``) builds it with ``type``/``decl`` slots
empty; front-end passes resolve names, check and infer types and fold
constants in place; the mid end binds the program to an architecture; back
ends (``backend/``) only read it.

Contract after the front end (what back ends may rely on):

* every ``Expression.type`` is set and is never a typedef;
* every ``PathExpr.decl`` points at its declaration (a ``Param``,
  ``VarDecl``, ``ConstDecl``, ``ActionDecl``, ``TableDecl``,
  ``Instantiation``, ``ParserState``, ``ExternFunctionDecl``...);
* ``const`` values and compile-time expressions are folded to ``IntLiteral``
  / ``BoolLiteral``; integer literals carry a concrete ``TypeBits`` wherever
  the context gives one (``TypeInfInt`` remains only where P4 allows it,
  e.g. a stack index or an extern constructor argument);
* implicit casts the type checker inserted are explicit ``Cast`` nodes;
* every ``MethodCall`` has ``kind`` set (see ``CallKind``).

Every node has ``src`` (file, line, column) so diagnostics and generated C
can name the P4 source line.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Union

from .types import Type


@dataclass(frozen=True)
class SrcInfo:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_SRC = SrcInfo("<builtin>", 0, 0)


@dataclass
class Annotation:
    name: str                      # without the '@'
    args: list = field(default_factory=list)   # expressions or raw strings
    src: SrcInfo = NO_SRC


@dataclass(eq=False)
class Node:
    src: SrcInfo = field(default=NO_SRC, kw_only=True)


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------

@dataclass(eq=False)
class Expression(Node):
    type: Optional[Type] = field(default=None, kw_only=True)


@dataclass(eq=False)
class IntLiteral(Expression):
    value: int                     # already wrapped/sign-interpreted for its type
    base: int = 10                 # how it was written, for readable output


@dataclass(eq=False)
class BoolLiteral(Expression):
    value: bool


@dataclass(eq=False)
class StringLiteral(Expression):
    value: str


@dataclass(eq=False)
class PathExpr(Expression):
    """A name: ``x``, ``.x`` (top-level), resolved to ``decl``."""
    name: str
    decl: Optional[object] = None
    top_level: bool = False


@dataclass(eq=False)
class TypeNameExpr(Expression):
    """A type used as an expression prefix: ``error``, ``HashAlgorithm`` in
    ``HashAlgorithm.crc16``, ``MyEnum``.  ``type`` is the named type."""
    name: str


@dataclass(eq=False)
class Member(Expression):
    """``expr.name``.  Also enum members (``E.a``), errors (``error.X``),
    header/stack properties (``hs.next``, ``hs.last``, ``hs.lastIndex``,
    ``hs.size``), table results (``t.apply().hit``) and methods (as call
    targets)."""
    expr: Expression
    name: str


@dataclass(eq=False)
class ArrayIndex(Expression):
    expr: Expression
    index: Expression


@dataclass(eq=False)
class Slice(Expression):
    """``expr[hi:lo]``; hi and lo are folded to ints by the front end."""
    expr: Expression
    hi: int
    lo: int


class UnOp(str, enum.Enum):
    NOT = "!"
    CMPL = "~"
    NEG = "-"
    PLUS = "+"


@dataclass(eq=False)
class Unary(Expression):
    op: UnOp
    expr: Expression


class BinOp(str, enum.Enum):
    MUL = "*"
    DIV = "/"
    MOD = "%"
    ADD = "+"
    SUB = "-"
    ADD_SAT = "|+|"
    SUB_SAT = "|-|"
    SHL = "<<"
    SHR = ">>"
    LE = "<="
    GE = ">="
    LT = "<"
    GT = ">"
    EQ = "=="
    NE = "!="
    BAND = "&"
    BXOR = "^"
    BOR = "|"
    CONCAT = "++"
    LAND = "&&"
    LOR = "||"


@dataclass(eq=False)
class Binary(Expression):
    op: BinOp
    left: Expression
    right: Expression


@dataclass(eq=False)
class Mux(Expression):
    """``cond ? a : b``"""
    cond: Expression
    then: Expression
    other: Expression


@dataclass(eq=False)
class Cast(Expression):
    """``(T) expr``; ``type`` is T.  Also inserted for implicit casts."""
    expr: Expression


@dataclass(eq=False)
class ListExpr(Expression):
    """``{a, b, c}``: a tuple/list value, struct or header initializer (the
    type checker sets ``type`` to the struct/header type when used as one)."""
    elements: list


@dataclass(eq=False)
class StructInit(Expression):
    """``{ f = a, g = b }`` or ``(T){...}``: named-field initializer."""
    fields: list                   # list[tuple[str, Expression]]


@dataclass(eq=False)
class Mask(Expression):
    """``value &&& mask`` in a keyset."""
    value: Expression
    mask: Expression


@dataclass(eq=False)
class Range(Expression):
    """``lo .. hi`` in a keyset."""
    lo: Expression
    hi: Expression


@dataclass(eq=False)
class DefaultExpr(Expression):
    """``default`` or ``_`` in a keyset (matches anything)."""


@dataclass(eq=False)
class ConstructorCall(Expression):
    """``MyParser()`` or ``E<T>(args)`` written as an expression (the blocks
    passed to ``V1Switch(...)``); ``type`` is the instantiated type
    (TypeParser / TypeControl / TypeExtern), ``type_args`` bind its type
    parameters, ``args`` are constructor arguments (list[Argument])."""
    args: list
    type_args: list = field(default_factory=list)


@dataclass(eq=False)
class Argument(Node):
    """A call argument; ``name`` for named arguments (``f(x = 1)``), and
    ``value`` None for a don't-care ``_`` out argument."""
    value: Optional[Expression]
    name: Optional[str] = None


class CallKind(str, enum.Enum):
    """What a MethodCall calls, set by the type checker."""
    EXTERN_METHOD = "extern_method"        # target is Member(instance, m)
    EXTERN_FUNCTION = "extern_function"    # mark_to_drop(), hash(), clone() ...
    ACTION = "action"                      # direct action call
    FUNCTION = "function"                  # a P4 function (FunctionDecl); inlined by the mid end
    TABLE_APPLY = "table_apply"            # t.apply()
    CONTROL_APPLY = "control_apply"        # sub-control instance .apply()
    PARSER_APPLY = "parser_apply"          # sub-parser instance .apply()
    HEADER_IS_VALID = "isValid"
    HEADER_SET_VALID = "setValid"
    HEADER_SET_INVALID = "setInvalid"
    STACK_PUSH_FRONT = "push_front"
    STACK_POP_FRONT = "pop_front"
    BUILTIN_MIN_SIZE = "minSizeInBits"     # folded when possible


@dataclass(eq=False)
class MethodCall(Expression):
    """``target<type_args>(args)``.

    ``callee`` is the resolved declaration: ``ExternMethod``,
    ``ExternFunctionDecl``, ``ActionDecl``, ``TableDecl``, the
    ``Instantiation`` of a control/parser, or None for header/stack builtins.
    ``args`` are in declaration order after the type checker has matched
    named and default arguments (missing optional ones are None)."""
    target: Expression
    args: list                                 # list[Argument]
    type_args: list = field(default_factory=list)
    kind: Optional[CallKind] = None
    callee: Optional[object] = None
    # type variables of the callee bound at this call site (TypeVar -> Type)
    type_bindings: dict = field(default_factory=dict)


# --------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------

@dataclass(eq=False)
class Statement(Node):
    pass


@dataclass(eq=False)
class AssignStmt(Statement):
    lhs: Expression
    rhs: Expression


@dataclass(eq=False)
class CallStmt(Statement):
    call: MethodCall


@dataclass(eq=False)
class BlockStmt(Statement):
    statements: list = field(default_factory=list)
    annotations: list = field(default_factory=list)


@dataclass(eq=False)
class IfStmt(Statement):
    cond: Expression
    then: Statement
    other: Optional[Statement] = None


@dataclass(eq=False)
class SwitchCase(Node):
    """``label: body``; labels are action names (PathExpr resolved to
    ActionDecl) for ``switch (t.apply().action_run)``, constant expressions
    for a switch on a value, or DefaultExpr.  ``body`` None is fall-through
    to the next case."""
    label: Expression
    body: Optional[BlockStmt]


@dataclass(eq=False)
class SwitchStmt(Statement):
    expr: Expression
    cases: list                                  # list[SwitchCase]


@dataclass(eq=False)
class ReturnStmt(Statement):
    value: Optional[Expression] = None


@dataclass(eq=False)
class ExitStmt(Statement):
    pass


@dataclass(eq=False)
class EmptyStmt(Statement):
    pass


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------

@dataclass(eq=False)
class Declaration(Node):
    name: str
    annotations: list = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Optional[Annotation]:
        for a in self.annotations:
            if a.name == name:
                return a
        return None

    @property
    def external_name(self) -> str:
        """``@name("...")`` if present, else the declared name."""
        a = self.annotation("name")
        if a and a.args and isinstance(a.args[0], StringLiteral):
            return a.args[0].value
        return self.name


@dataclass(eq=False)
class ConstDecl(Declaration, Statement):
    type: Type
    value: Expression


@dataclass(eq=False)
class VarDecl(Declaration, Statement):
    type: Type
    init: Optional[Expression] = None


@dataclass(eq=False)
class TypedefDecl(Declaration):
    """``typedef`` and ``type``; front end replaces uses by ``type``."""
    type: Type
    is_newtype: bool = False


@dataclass(eq=False)
class StructField(Node):
    name: str
    type: Type
    annotations: list = field(default_factory=list)


@dataclass(eq=False)
class HeaderDecl(Declaration):
    fields: list                                 # list[StructField]


@dataclass(eq=False)
class HeaderUnionDecl(Declaration):
    fields: list


@dataclass(eq=False)
class StructDecl(Declaration):
    fields: list


@dataclass(eq=False)
class EnumDecl(Declaration):
    """``enum E { a, b }`` (underlying None) or ``enum bit<8> E { a = 1 }``."""
    members: list                                # list[str]
    underlying: Optional[Type] = None
    values: dict = field(default_factory=dict)   # member -> int (serializable)


@dataclass(eq=False)
class ErrorDecl(Declaration):
    """All ``error { }`` declarations merged, in declaration order; the
    front end puts the core.p4 ones first (NoError = 0, ...)."""
    members: list


@dataclass(eq=False)
class MatchKindDecl(Declaration):
    members: list


class Direction(str, enum.Enum):
    NONE = ""            # directionless (action data from the control plane)
    IN = "in"
    OUT = "out"
    INOUT = "inout"


@dataclass(eq=False)
class Param(Declaration):
    direction: Direction
    type: Type
    default: Optional[Expression] = None
    optional: bool = False           # @optional


@dataclass(eq=False)
class ExternMethod(Declaration):
    type_params: list                 # list[TypeVar]
    params: list                      # list[Param]
    return_type: Type
    is_abstract: bool = False


@dataclass(eq=False)
class ExternDecl(Declaration):
    """``extern E<T> { E(...); R m(...); }``; constructors have name == E."""
    type_params: list
    constructors: list                # list[ExternMethod]
    methods: list                     # list[ExternMethod]


@dataclass(eq=False)
class ExternFunctionDecl(Declaration):
    type_params: list
    params: list
    return_type: Type


@dataclass(eq=False)
class ParserTypeDecl(Declaration):
    """``parser P<H, M>(packet_in b, out H h, ...);`` (a prototype)."""
    type_params: list
    params: list


@dataclass(eq=False)
class ControlTypeDecl(Declaration):
    type_params: list
    params: list


@dataclass(eq=False)
class PackageTypeDecl(Declaration):
    """``package V1Switch<H, M>(Parser<H, M> p, ...);``"""
    type_params: list
    params: list


@dataclass(eq=False)
class Instantiation(Declaration, Statement):
    """``T<args>(ctor_args) name;``: an extern, parser, control or package
    instance.  ``type`` is the instantiated type (TypeExtern, TypeControl,
    ...); ``type_args`` bind the callee's type parameters."""
    type: Type
    type_args: list
    args: list                        # list[Argument]
    constructor: Optional[ExternMethod] = None   # for externs


@dataclass(eq=False)
class ActionDecl(Declaration):
    params: list                      # list[Param]; directionless ones last
    body: BlockStmt


@dataclass(eq=False)
class KeyElement(Node):
    expr: Expression
    match_kind: str                   # "exact", "lpm", "ternary", "range", "optional", ...
    annotations: list = field(default_factory=list)

    @property
    def name(self) -> str:
        """Control-plane name: ``@name`` annotation or the source text."""
        for a in self.annotations:
            if a.name == "name" and a.args and isinstance(a.args[0], StringLiteral):
                return a.args[0].value
        return getattr(self, "source_text", "")


@dataclass(eq=False)
class ActionRef(Node):
    """An entry of a table's ``actions`` list, or an action call in
    ``default_action`` / ``entries``: the action and its arguments (only
    directional args in the list; all directionless args when called as a
    default action or in an entry)."""
    action: ActionDecl
    args: list = field(default_factory=list)      # list[Argument]
    annotations: list = field(default_factory=list)   # @tableonly, @defaultonly


@dataclass(eq=False)
class TableEntry(Node):
    """One ``const entries`` / ``entries`` element.  ``keys`` has one
    expression per key element: a value, Mask, Range, or DefaultExpr."""
    keys: list
    action: ActionRef
    priority: Optional[int] = None
    annotations: list = field(default_factory=list)


@dataclass(eq=False)
class TableDecl(Declaration):
    keys: list                                   # list[KeyElement]
    actions: list                                # list[ActionRef]
    default_action: Optional[ActionRef] = None   # None -> NoAction
    default_action_is_const: bool = False
    entries: list = field(default_factory=list)  # list[TableEntry]
    entries_are_const: bool = True
    size: Optional[int] = None
    # other properties by name, e.g. "counters" -> Expression (direct_counter
    # instance), "implementation", "support_timeout"
    properties: dict = field(default_factory=dict)
    largest_priority_wins: bool = True


@dataclass(eq=False)
class ParserState(Declaration):
    """A state: statements then a transition.  ``accept`` and ``reject``
    exist as ParserState objects with no statements and no transition."""
    statements: list
    transition: Optional[Union["SelectExpr", PathExpr]] = None


@dataclass(eq=False)
class SelectCase(Node):
    keyset: Expression                 # value, ListExpr of keysets, Mask, Range, DefaultExpr
    state: PathExpr                    # resolved to a ParserState


@dataclass(eq=False)
class SelectExpr(Expression):
    """``select (e1, e2) { ks: state; ... }``; ``keys`` is the list of e_i."""
    keys: list
    cases: list                        # list[SelectCase]


@dataclass(eq=False)
class ParserDecl(Declaration):
    type_params: list
    params: list                       # apply parameters
    ctor_params: list
    locals: list                       # VarDecl, ConstDecl, Instantiation
    states: list                       # list[ParserState], incl. accept/reject


@dataclass(eq=False)
class ControlDecl(Declaration):
    type_params: list
    params: list
    ctor_params: list
    locals: list                       # VarDecl, ConstDecl, Instantiation, ActionDecl, TableDecl
    body: BlockStmt


@dataclass(eq=False)
class FunctionDecl(Declaration):
    """``T f(in A a, out B b) { ... return e; }`` at the top level.  The
    mid end (``midend/inline_functions.py``) inlines every call and removes
    the declaration, so back ends never see one."""
    type_params: list
    params: list
    return_type: Type
    body: BlockStmt


@dataclass(eq=False)
class Program(Node):
    """A whole translation unit after preprocessing and include expansion,
    declarations in source order."""
    declarations: list

    def find(self, name: str):
        for d in self.declarations:
            if getattr(d, "name", None) == name:
                return d
        return None
