"""P4-16 parser: lark LALR(1) grammar (grammar.lark) -> IR with locations.

P4's grammar is not context free on its own: ``h_t x;`` is a declaration
only because ``h_t`` names a type, and ``f<T>(x)`` is a generic call only
because ``T`` is a type.  p4c solves it in its lexer; we solve it between
lark's lexer and parser with a postlexer (:class:`TypeNamePostLex`), which
sees tokens in order, exactly as the parser consumes them:

1. *Type names.*  P4 requires declaration before use, so the postlexer
   records every name declared as a type (``header``, ``header_union``,
   ``struct``, ``enum``, ``extern``, ``parser``, ``control``, ``package``,
   ``typedef``, ``type``) and every type parameter (``<H, M>`` after a
   declared name), the latter only until the end of the declaration that
   introduces it (brace depth tracking).  An IDENTIFIER that is a known type
   name becomes TYPE_IDENTIFIER.
2. *Type argument lists.*  ``<`` right after a TYPE_IDENTIFIER, or after an
   IDENTIFIER when the tokens that follow are a well-formed type list
   closed by ``>`` and followed by ``(``, becomes L_ANGLE_ARGS; every other
   ``<`` is less-than.  ``>>`` is lexed as R_ANGLE_SHIFT ``>`` so nested
   lists (``register<bit<32>>``) close correctly.

The tree is turned into IR nodes by :class:`IRBuilder`; named types stay
``unresolved.*`` placeholders until names.py / typecheck.py resolve them.
"""
from __future__ import annotations

import copy
import os
from collections import deque

import lark
from lark import Token, Transformer, v_args
from lark.lark import PostLex

from ..diagnostics import CompileError
from ..ir import nodes as N
from ..ir import types as T
from .preprocess import SourceMap
from .unresolved import (UnresolvedBits, UnresolvedStack, UnresolvedTuple,
                         UnresolvedType, UnresolvedTypeVarUse, ValueSetDecl)

_GRAMMAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammar.lark")

_TYPE_DECL_KEYWORDS = {"header", "header_union", "struct", "enum", "extern",
                       "parser", "control", "package"}
_TYPE_ARG_WORDS = {"bit", "int", "varbit", "bool", "error", "string", "tuple",
                   "void", "_", ",", "[", "]"}


class TypeNamePostLex(PostLex):
    always_accept = ()

    def process(self, stream):
        return self._angles(self._classify(stream))

    # -- step 1: type names -------------------------------------------------
    def _classify(self, stream):
        global_types: set = set()
        scoped: list = []            # [(brace_depth, set_of_type_params)]
        brace_kinds: list = []       # 'extern' | 'other' per open brace
        paren = 0
        annotation_paren = 0
        header = True                # in a declaration header (not after '=' / '(')
        decl_keyword = None          # keyword of the current top-level declaration
        expect_name = False          # next IDENTIFIER is a declared type name
        typedef_name = None          # pending typedef: last IDENTIFIER seen
        in_typedef = False
        type_params = 0              # >0 while inside '<...>' of type parameters
        prev = prev2 = None

        def known(v):
            return v in global_types or any(v in s for _, s in scoped)

        for tok in stream:
            v, t = tok.value, tok.type
            at_decl_level = not brace_kinds or brace_kinds[-1] == "extern"
            if t == "IDENTIFIER":
                if type_params:
                    scoped[-1][1].add(v)
                elif expect_name:
                    expect_name = False
                    global_types.add(v)
                elif known(v):
                    tok = Token.new_borrow_pos("TYPE_IDENTIFIER", v, tok)
                elif in_typedef:
                    typedef_name = v
            elif expect_name and decl_keyword != "enum":
                expect_name = False               # extern void f(...): not a type
            if v in _TYPE_DECL_KEYWORDS and t != "IDENTIFIER" and at_decl_level and not paren:
                decl_keyword, expect_name = v, True
            elif v in ("typedef", "type") and not brace_kinds and not paren and header:
                in_typedef, typedef_name = True, None
            elif v == "<" and type_params:
                type_params += 1
            elif v == "<" and header and at_decl_level and not paren and prev is not None \
                    and prev.type in ("IDENTIFIER",) and not in_typedef:
                type_params = 1
                scoped.append((len(brace_kinds), set()))
            elif v in (">",) and type_params:
                type_params -= 1
            elif t == "R_ANGLE_SHIFT" and type_params:
                type_params -= 1
            elif v == "(":
                if prev2 is not None and prev2.value == "@":
                    annotation_paren += 1
                elif annotation_paren:
                    annotation_paren += 1
                else:
                    paren += 1
                    header = False
            elif v == ")":
                if annotation_paren:
                    annotation_paren -= 1
                else:
                    paren = max(0, paren - 1)
            elif v == "=" and not annotation_paren:
                header = False
            elif v == "{":
                brace_kinds.append("extern" if not brace_kinds and decl_keyword == "extern" else "other")
                header = brace_kinds[-1] == "extern"
                expect_name = False
            elif v == "}":
                if brace_kinds:
                    brace_kinds.pop()
                while scoped and scoped[-1][0] > len(brace_kinds):
                    scoped.pop()
                if scoped and scoped[-1][0] == len(brace_kinds):
                    scoped.pop()
                header = not brace_kinds or brace_kinds[-1] == "extern"
                if not brace_kinds:
                    decl_keyword = None
            elif v == ";" and not paren:
                while scoped and scoped[-1][0] >= len(brace_kinds):
                    scoped.pop()
                if in_typedef:
                    if typedef_name:
                        global_types.add(typedef_name)
                    in_typedef = False
                header = not brace_kinds or brace_kinds[-1] == "extern"
                if not brace_kinds:
                    decl_keyword = None
            prev2, prev = prev, tok
            yield tok

    # -- step 2: '<' that opens a type argument list -------------------------
    def _angles(self, stream):
        it = iter(stream)
        buf: deque = deque()

        def peek(i):
            while len(buf) <= i:
                try:
                    buf.append(next(it))
                except StopIteration:
                    return None
            return buf[i]

        prev = None
        while True:
            if buf:
                tok = buf.popleft()
            else:
                try:
                    tok = next(it)
                except StopIteration:
                    return
            if tok.value == "<" and tok.type != "STRING_LITERAL" and prev is not None:
                if prev.type == "TYPE_IDENTIFIER" or (
                        prev.type == "IDENTIFIER" and _is_type_arg_list(peek)):
                    tok = Token.new_borrow_pos("L_ANGLE_ARGS", "<", tok)
            prev = tok
            yield tok


def _is_type_arg_list(peek) -> bool:
    depth, i, before = 1, 0, None
    while True:
        t = peek(i)
        if t is None:
            return False
        if t.value == "<":
            if before is None or (before.type != "TYPE_IDENTIFIER" and before.value not in
                                  ("bit", "int", "varbit", "tuple")):
                return False
            depth += 1
        elif t.value == ">" or t.type == "R_ANGLE_SHIFT":
            depth -= 1
            if depth == 0:
                nxt = peek(i + 1)
                return nxt is not None and nxt.value == "("
        elif t.type == "INTEGER":
            if before is None or before.value != "<":
                return False
        elif t.type != "TYPE_IDENTIFIER" and t.value not in _TYPE_ARG_WORDS:
            return False
        before = t
        i += 1


_parser = None


def _lark_parser() -> lark.Lark:
    global _parser
    if _parser is None:
        with open(_GRAMMAR) as f:
            grammar = f.read()
        _parser = lark.Lark(grammar, parser="lalr", lexer="basic",
                            propagate_positions=True, maybe_placeholders=True,
                            postlex=TypeNamePostLex(), cache=True)
    return _parser


# Human names of terminals for syntax error messages.
_TERMINAL_TEXT = {
    "IDENTIFIER": "identifier", "TYPE_IDENTIFIER": "type name",
    "INTEGER": "integer", "STRING_LITERAL": "string", "L_ANGLE_ARGS": "'<'",
    "R_ANGLE_SHIFT": "'>'", "$END": "end of file", "ASSIGN_OP": "compound assignment",
}


def _terminal_text(parser: lark.Lark, name: str) -> str:
    if name in _TERMINAL_TEXT:
        return _TERMINAL_TEXT[name]
    for term in parser.terminals:
        if term.name == name and term.pattern.type == "str":
            return f"'{term.pattern.value}'"
    return name.lower()


def parse(text: str, smap: SourceMap) -> N.Program:
    parser = _lark_parser()
    try:
        tree = parser.parse(text)
    except lark.exceptions.UnexpectedInput as e:
        raise CompileError.at(smap.locate(e.line, e.column), _syntax_message(parser, e)) from None
    builder = IRBuilder(smap, text)
    try:
        return builder.transform(tree)
    except lark.exceptions.VisitError as e:
        if isinstance(e.orig_exc, CompileError):
            raise e.orig_exc from None
        raise e.orig_exc


def _syntax_message(parser: lark.Lark, e) -> str:
    if isinstance(e, lark.exceptions.UnexpectedCharacters):
        return f"syntax error: unexpected character {e.char!r}"
    tok = getattr(e, "token", None)
    if tok is None or tok.type == "$END":
        got = "end of file"
    else:
        got = f"'{tok.value}'"
    expected = sorted({_terminal_text(parser, x) for x in (getattr(e, "expected", None) or ())})
    if len(expected) > 8:
        expected = expected[:8] + ["..."]
    msg = f"syntax error: unexpected {got}"
    if expected:
        msg += ", expected " + ", ".join(expected)
    return msg


# ---------------------------------------------------------------------------
# Tree -> IR
# ---------------------------------------------------------------------------

def _parse_int_literal(text: str, src) -> N.IntLiteral:
    """``5``, ``0x1F``, ``8w5``, ``4s3``, ``16w0xFFFF``, underscores."""
    width, signed, body = None, False, text
    for sep in ("w", "s"):
        head, found, tail = text.partition(sep)
        if found and head.isdigit() and tail and not text.lower().startswith("0x"):
            width, signed, body = int(head), sep == "s", tail
            break
    body = body.replace("_", "")
    base = 10
    low = body.lower()
    if low.startswith("0x"):
        base, digits = 16, body[2:]
    elif low.startswith("0b"):
        base, digits = 2, body[2:]
    elif low.startswith("0o"):
        base, digits = 8, body[2:]
    elif low.startswith("0d"):
        base, digits = 10, body[2:]
    else:
        digits = body
    try:
        value = int(digits, base)
    except ValueError:
        raise CompileError.at(src, f"invalid integer literal '{text}'")
    if width is None:
        return N.IntLiteral(value, base, src=src, type=T.INFINT)
    if width == 0 or (signed and width < 1):
        raise CompileError.at(src, f"invalid width in integer literal '{text}'")
    from .constfold import wrap
    return N.IntLiteral(wrap(value, T.TypeBits(width, signed)), base, src=src,
                        type=T.TypeBits(width, signed))


_BINOPS = {op.value: op for op in N.BinOp}


@v_args(meta=True)
class IRBuilder(Transformer):
    def __init__(self, smap: SourceMap, text: str):
        super().__init__(visit_tokens=False)
        self.smap = smap
        self._text = text

    def _src(self, meta):
        if getattr(meta, "empty", True):
            return N.NO_SRC
        return self.smap.locate(meta.line, meta.column)

    def _tsrc(self, tok):
        return self.smap.locate(tok.line, tok.column)

    # -- program ------------------------------------------------------------
    def start(self, meta, items):
        return N.Program([d for d in items if d is not None], src=self._src(meta))

    def empty_decl(self, meta, _):
        return None

    def name(self, meta, c):
        return str(c[0])

    non_type_name = name

    def annotations(self, meta, c):
        return list(c)

    def annotation(self, meta, c):
        args = c[1] if len(c) > 1 and c[1] is not None else []
        return N.Annotation(c[0], args, src=self._src(meta))

    def expression_list(self, meta, c):
        return list(c)

    # -- types --------------------------------------------------------------
    def bool_type(self, meta, c):
        return T.BOOL

    def error_type(self, meta, c):
        return T.ERROR

    def string_type(self, meta, c):
        return T.STRING

    def match_kind_type(self, meta, c):
        return T.MATCH_KIND

    def void_type(self, meta, c):
        return T.VOID

    def dontcare_type(self, meta, c):
        return T.DONTCARE

    def _bits(self, meta, c, signed, varbit=False):
        if not c:
            if varbit:
                raise CompileError.at(self._src(meta), "varbit needs a width")
            return T.TypeBits(1, signed) if not signed else T.INFINT
        width = c[0]
        if isinstance(width, N.IntLiteral):
            if varbit:
                return T.TypeVarbit(width.value)
            if width.value <= 0 and not (signed and width.value > 0):
                if width.value <= 0:
                    raise CompileError.at(self._src(meta), f"invalid width {width.value}")
            return T.TypeBits(width.value, signed)
        return UnresolvedBits(width, signed, varbit, src=self._src(meta))

    def bit_type(self, meta, c):
        return self._bits(meta, [x for x in c if not isinstance(x, lark.Tree)], False)

    def int_type(self, meta, c):
        if not c:
            return T.INFINT
        return self._bits(meta, [x for x in c if not isinstance(x, lark.Tree)], True)

    def varbit_type(self, meta, c):
        return self._bits(meta, [x for x in c if not isinstance(x, lark.Tree)], False, True)

    def r_angle(self, meta, c):
        return lark.Tree("r_angle", [])

    def named_type(self, meta, c):
        return UnresolvedType(str(c[0]), [], src=self._src(meta))

    def specialized_type(self, meta, c):
        return UnresolvedType(str(c[0]), c[2], src=self._src(meta))

    def stack_type(self, meta, c):
        return UnresolvedStack(c[0], c[1], src=self._src(meta))

    def tuple_type(self, meta, c):
        return UnresolvedTuple(c[0], src=self._src(meta))

    def type_arg_list(self, meta, c):
        return list(c)

    def type_ref(self, meta, c):
        return c[0]

    def type_or_void(self, meta, c):
        return c[0]

    def type_var_use(self, meta, c):
        return UnresolvedTypeVarUse(str(c[0]), src=self._src(meta))

    def type_params(self, meta, c):
        return [T.TypeVar(x) for x in c if isinstance(x, str) and not isinstance(x, Token)]

    # -- params -------------------------------------------------------------
    def direction(self, meta, c):
        return N.Direction(str(c[0]))

    def param(self, meta, c):
        annotations, direction, typ, name, default = c
        return N.Param(name, direction or N.Direction.NONE, typ, default,
                       optional=any(a.name == "optional" for a in annotations or []),
                       annotations=annotations or [], src=self._src(meta))

    def param_list(self, meta, c):
        return [p for p in c if p is not None]

    def ctor_params(self, meta, c):
        return c[0]

    # -- declarations -------------------------------------------------------
    def const_decl(self, meta, c):
        annotations, typ, name, value = c
        return N.ConstDecl(name, typ, value, annotations=annotations or [], src=self._src(meta))

    def var_decl(self, meta, c):
        annotations, typ, name, init = c
        return N.VarDecl(name, typ, init, annotations=annotations or [], src=self._src(meta))

    def instantiation(self, meta, c):
        annotations, typ, args, name = c
        return N.Instantiation(name, typ, list(getattr(typ, "args", []) or []), args,
                               annotations=annotations or [], src=self._src(meta))

    def abstract_instantiation(self, meta, c):
        raise CompileError.at(self._src(meta),
                              "unsupported: instantiation with abstract method implementations")

    def typedef_decl(self, meta, c):
        annotations, typ, name = c
        return N.TypedefDecl(name, typ, annotations=annotations or [], src=self._src(meta))

    def newtype_decl(self, meta, c):
        annotations, _kw, typ, name = c
        return N.TypedefDecl(name, typ, True, annotations=annotations or [], src=self._src(meta))

    def struct_field(self, meta, c):
        annotations, typ, name = c
        return N.StructField(name, typ, annotations or [], src=self._src(meta))

    def _fields_decl(self, cls, meta, c):
        annotations, name, tparams, *fields = c
        if tparams:
            raise CompileError.at(self._src(meta), f"unsupported: generic {cls.__name__[:-4].lower()} '{name}'")
        return cls(name, list(fields), annotations=annotations or [], src=self._src(meta))

    def header_decl(self, meta, c):
        return self._fields_decl(N.HeaderDecl, meta, c)

    def header_union_decl(self, meta, c):
        return self._fields_decl(N.HeaderUnionDecl, meta, c)

    def struct_decl(self, meta, c):
        return self._fields_decl(N.StructDecl, meta, c)

    def enum_decl(self, meta, c):
        annotations, name, *members = c
        return N.EnumDecl(name, [m for m in members if m is not None],
                          annotations=annotations or [], src=self._src(meta))

    def enum_member(self, meta, c):
        return (c[0], c[1])

    def ser_enum_decl(self, meta, c):
        annotations, typ, name, *members = c
        members = [m for m in members if m is not None]
        decl = N.EnumDecl(name, [m[0] for m in members], typ,
                          annotations=annotations or [], src=self._src(meta))
        decl.value_exprs = {m[0]: m[1] for m in members}
        return decl

    def error_decl(self, meta, c):
        return N.ErrorDecl("error", [m for m in c if m is not None], src=self._src(meta))

    def match_kind_decl(self, meta, c):
        return N.MatchKindDecl("match_kind", [m for m in c if m is not None], src=self._src(meta))

    def function_proto(self, meta, c):
        ret, name, tparams, params = c
        return (ret, name, tparams or [], params, self._src(meta))

    def method_proto(self, meta, c):
        annotations, (ret, name, tparams, params, src) = c
        return N.ExternMethod(name, tparams, params, ret, annotations=annotations or [], src=src)

    def abstract_proto(self, meta, c):
        m = self.method_proto(meta, c)
        m.is_abstract = True
        return m

    def ctor_proto(self, meta, c):
        annotations, tname, params = c
        return N.ExternMethod(str(tname), [], params, T.VOID, annotations=annotations or [],
                              src=self._src(meta))

    def extern_decl(self, meta, c):
        annotations, name, tparams, *methods = c
        ctors = [m for m in methods if m.name == name]
        others = [m for m in methods if m not in ctors]
        return N.ExternDecl(name, tparams or [], ctors, others,
                            annotations=annotations or [], src=self._src(meta))

    def extern_function_decl(self, meta, c):
        annotations, (ret, name, tparams, params, src) = c
        return N.ExternFunctionDecl(name, tparams, params, ret,
                                    annotations=annotations or [], src=self._src(meta))

    def extern_forward_decl(self, meta, c):
        raise CompileError.at(self._src(meta), f"unsupported: forward declaration of extern '{c[1]}'")

    def function_decl(self, meta, c):
        annotations, (ret, name, tparams, params, src), body = c
        # The closing brace, where "does not return a value on every path"
        # points (the block's end column is one past the brace).
        body.end_src = self.smap.locate(meta.end_line, max(meta.end_column - 1, 1))
        return N.FunctionDecl(name, tparams, params, ret, body,
                              annotations=annotations or [], src=self._src(meta))

    def action_decl(self, meta, c):
        annotations, name, params, body = c
        return N.ActionDecl(name, params, body, annotations=annotations or [], src=self._src(meta))

    def parser_type_decl(self, meta, c):
        annotations, name, tparams, params = c
        return N.ParserTypeDecl(name, tparams or [], params, annotations=annotations or [],
                                src=self._src(meta))

    def control_type_decl(self, meta, c):
        annotations, name, tparams, params = c
        return N.ControlTypeDecl(name, tparams or [], params, annotations=annotations or [],
                                 src=self._src(meta))

    def package_decl(self, meta, c):
        annotations, name, tparams, params = c
        return N.PackageTypeDecl(name, tparams or [], params, annotations=annotations or [],
                                 src=self._src(meta))

    def parser_decl(self, meta, c):
        annotations, name, tparams, params, ctor_params, *rest = c
        locals_ = [x for x in rest if not isinstance(x, N.ParserState)]
        states = [x for x in rest if isinstance(x, N.ParserState)]
        for x in locals_:
            if isinstance(x, ValueSetDecl):
                raise CompileError.at(x.src, f"unsupported: value_set '{x.name}'")
        src = self._src(meta)
        states += [N.ParserState("accept", [], None, src=src),
                   N.ParserState("reject", [], None, src=src)]
        return N.ParserDecl(name, tparams or [], params, ctor_params or [], locals_, states,
                            annotations=annotations or [], src=src)

    def value_set_decl(self, meta, c):
        return ValueSetDecl(c[-1], src=self._src(meta))

    def parser_state(self, meta, c):
        annotations, _kw, name, *rest = c
        return N.ParserState(name, rest[:-1], rest[-1], annotations=annotations or [],
                             src=self._src(meta))

    def transition_name(self, meta, c):
        return N.PathExpr(c[0], src=self._src(meta))

    def transition_select(self, meta, c):
        return c[0]

    def select_expr(self, meta, c):
        keys, *cases = c
        return N.SelectExpr(keys, cases, src=self._src(meta))

    def select_case(self, meta, c):
        keyset, state = c
        return N.SelectCase(keyset, N.PathExpr(state, src=self._src(meta)), src=self._src(meta))

    def tuple_keyset(self, meta, c):
        node = N.ListExpr(list(c), src=self._src(meta))
        node.is_tuple_keyset = True
        return node

    def mask(self, meta, c):
        return N.Mask(c[0], c[1], src=self._src(meta))

    def range(self, meta, c):
        return N.Range(c[0], c[1], src=self._src(meta))

    def default_keyset(self, meta, c):
        return N.DefaultExpr(src=self._src(meta), type=T.DONTCARE)

    def control_decl(self, meta, c):
        annotations, name, tparams, params, ctor_params, *rest = c
        body = rest[-1]
        locals_ = [x for x in rest[:-2]]
        return N.ControlDecl(name, tparams or [], params, ctor_params or [], locals_, body,
                             annotations=annotations or [], src=self._src(meta))

    # -- tables -------------------------------------------------------------
    def table_decl(self, meta, c):
        annotations, name, *props = c
        src = self._src(meta)
        table = N.TableDecl(name, [], [], annotations=annotations or [], src=src)
        seen = set()
        for kind, value, psrc, is_const in props:
            if kind in seen:
                raise CompileError.at(psrc, f"duplicate table property '{kind}'")
            seen.add(kind)
            if kind == "key":
                table.keys = value
            elif kind == "actions":
                table.actions = value
            elif kind == "entries":
                table.entries, table.entries_are_const = value, is_const
            elif kind == "default_action":
                table.default_action = value
                table.default_action_is_const = is_const
            else:
                table.properties[kind] = value
        table.property_srcs = {p[0]: p[2] for p in props}
        return table

    def key_property(self, meta, c):
        return ("key", list(c[1:]), self._src(meta), False)

    def key_element(self, meta, c):
        expr, kind, annotations = c
        element = N.KeyElement(expr, kind, annotations or [], src=self._src(meta))
        element.source_text = self._source_text(meta, expr)
        return element

    def _source_text(self, meta, expr):
        text = self._text[expr.start_pos:expr.end_pos] if hasattr(expr, "start_pos") else ""
        return "".join(text.split())

    def actions_property(self, meta, c):
        return ("actions", list(c[1:]), self._src(meta), False)

    def action_ref(self, meta, c):
        annotations, path, *args = c
        ref = N.ActionRef(None, args[0] if args else [], annotations or [], src=self._src(meta))
        ref.path = path
        ref.has_parens = bool(args)
        return ref

    def plain_name(self, meta, c):
        return N.PathExpr(c[0], src=self._src(meta))

    def dot_name(self, meta, c):
        return N.PathExpr(c[0], top_level=True, src=self._src(meta))

    def entries_property(self, meta, c):
        is_const, _kw, *entries = c
        return ("entries", entries, self._src(meta), is_const is not None)

    def entry(self, meta, c):
        lead, _const, priority, keyset, action, annotations = c
        annotations = (lead or []) + (annotations or [])
        keys = keyset.elements if getattr(keyset, "is_tuple_keyset", False) else [keyset]
        entry = N.TableEntry(keys, action, None, annotations or [], src=self._src(meta))
        entry.priority_expr = priority
        return entry

    def entry_priority(self, meta, c):
        if str(c[0]) != "priority":
            raise CompileError.at(self._tsrc(c[0]), f"syntax error: unexpected '{c[0]}', expected 'priority'")
        value = c[1]
        if isinstance(value, Token):
            value = _parse_int_literal(str(value), self._tsrc(value))
        return value

    def custom_property(self, meta, c):
        annotations, is_const, name, value = c
        return (str(name), value, self._src(meta), is_const is not None)

    # -- statements ---------------------------------------------------------
    def block(self, meta, c):
        annotations, *stmts = c
        return N.BlockStmt([s for s in stmts if s is not None], annotations or [],
                           src=self._src(meta))

    def assignment(self, meta, c):
        return N.AssignStmt(c[0], c[1], src=self._src(meta))

    def compound_assignment(self, meta, c):
        """``a op= b`` is ``a = a op b`` with `a` evaluated once (P4-16
        "Assignment statement"): the copy of `a` in the value is marked so
        that the mid end, when `a` has a function call in an index, reuses
        the one evaluation of the target."""
        lhs, op, rhs = c
        src = self._src(meta)
        value = N.Binary(_BINOPS[str(op)[:-1]], copy.deepcopy(lhs), rhs, src=src)
        stmt = N.AssignStmt(lhs, value, src=src)
        stmt.compound = True
        return stmt

    def call_statement(self, meta, c):
        if not isinstance(c[0], N.MethodCall):
            raise CompileError.at(self._src(meta), "syntax error: expression is not a statement "
                                  "(expected an assignment or a call)")
        return N.CallStmt(c[0], src=self._src(meta))

    def if_statement(self, meta, c):
        return N.IfStmt(c[0], c[1], c[2], src=self._src(meta))

    def switch_statement(self, meta, c):
        return N.SwitchStmt(c[0], list(c[1:]), src=self._src(meta))

    def switch_case(self, meta, c):
        return N.SwitchCase(c[0], c[1], src=self._src(meta))

    def switch_fallthrough(self, meta, c):
        return N.SwitchCase(c[0], None, src=self._src(meta))

    def return_stmt(self, meta, c):
        return N.ReturnStmt(c[0], src=self._src(meta))

    def exit_stmt(self, meta, c):
        return N.ExitStmt(src=self._src(meta))

    def empty_stmt(self, meta, c):
        return N.EmptyStmt(src=self._src(meta))

    # -- expressions --------------------------------------------------------
    def _expr(self, node, meta):
        node.start_pos = meta.start_pos
        node.end_pos = meta.end_pos
        return node

    def int_lit(self, meta, c):
        tok = c[0]
        return self._expr(_parse_int_literal(str(tok), self._tsrc(tok)), meta)

    def string_lit(self, meta, c):
        raw = str(c[0])[1:-1]
        value = raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
        return self._expr(N.StringLiteral(value, src=self._src(meta), type=T.STRING), meta)

    def true_lit(self, meta, c):
        return self._expr(N.BoolLiteral(True, src=self._src(meta), type=T.BOOL), meta)

    def false_lit(self, meta, c):
        return self._expr(N.BoolLiteral(False, src=self._src(meta), type=T.BOOL), meta)

    def this_expr(self, meta, c):
        raise CompileError.at(self._src(meta), "unsupported: 'this'")

    def invalid_header(self, meta, c):
        raise CompileError.at(self._src(meta), "unsupported: invalid header expression '{#}'")

    def path(self, meta, c):
        return self._expr(N.PathExpr(c[0], src=self._src(meta)), meta)

    def top_path(self, meta, c):
        return self._expr(N.PathExpr(c[0], top_level=True, src=self._src(meta)), meta)

    def type_member(self, meta, c):
        tsrc = self._tsrc(c[0])
        prefix = N.TypeNameExpr(str(c[0]), src=tsrc)
        prefix.type = UnresolvedType(str(c[0]), [], src=tsrc)
        return self._expr(N.Member(prefix, c[1], src=self._src(meta)), meta)

    def error_member(self, meta, c):
        prefix = N.TypeNameExpr("error", src=self._src(meta), type=T.ERROR)
        return self._expr(N.Member(prefix, c[0], src=self._src(meta)), meta)

    def ctor_call(self, meta, c):
        tname = str(c[0])
        type_args = c[2] if len(c) == 5 else []
        args = c[-1]
        node = N.ConstructorCall(args, list(type_args), src=self._src(meta))
        node.ctype = UnresolvedType(tname, list(type_args), src=self._tsrc(c[0]))
        return self._expr(node, meta)

    def list_expr(self, meta, c):
        elements = c[0] if c and c[0] is not None else []
        return self._expr(N.ListExpr(list(elements), src=self._src(meta)), meta)

    def struct_init(self, meta, c):
        return self._expr(N.StructInit([x for x in c if x is not None], src=self._src(meta)), meta)

    def kv_pair(self, meta, c):
        return (c[0], c[1])

    def member(self, meta, c):
        return self._expr(N.Member(c[0], c[1], src=self._src(meta)), meta)

    def index(self, meta, c):
        return self._expr(N.ArrayIndex(c[0], c[1], src=self._src(meta)), meta)

    def slice(self, meta, c):
        node = N.Slice(c[0], 0, 0, src=self._src(meta))
        node.hi_expr, node.lo_expr = c[1], c[2]
        return self._expr(node, meta)

    def call(self, meta, c):
        return self._expr(N.MethodCall(c[0], c[1], [], src=self._src(meta)), meta)

    def generic_call(self, meta, c):
        return self._expr(N.MethodCall(c[0], c[-1], list(c[2]), src=self._src(meta)), meta)

    def arg_list(self, meta, c):
        return [a for a in c if a is not None]

    def arg(self, meta, c):
        return N.Argument(c[0], src=self._src(meta))

    def named_arg(self, meta, c):
        return N.Argument(c[1], c[0], src=self._src(meta))

    def dontcare_arg(self, meta, c):
        return N.Argument(None, src=self._src(meta))

    def cast(self, meta, c):
        node = N.Cast(c[1], src=self._src(meta))
        node.target_type = c[0]
        return self._expr(node, meta)

    def _unary(self, op, meta, c):
        return self._expr(N.Unary(op, c[0], src=self._src(meta)), meta)

    def lnot(self, meta, c):
        return self._unary(N.UnOp.NOT, meta, c)

    def cmpl(self, meta, c):
        return self._unary(N.UnOp.CMPL, meta, c)

    def neg(self, meta, c):
        return self._unary(N.UnOp.NEG, meta, c)

    def uplus(self, meta, c):
        return self._unary(N.UnOp.PLUS, meta, c)

    def _bin(self, op, meta, left, right):
        return self._expr(N.Binary(op, left, right, src=self._src(meta)), meta)

    def binop(self, meta, c):
        return self._bin(_BINOPS[str(c[1])], meta, c[0], c[2])

    def lor(self, meta, c):
        return self._bin(N.BinOp.LOR, meta, c[0], c[1])

    def land(self, meta, c):
        return self._bin(N.BinOp.LAND, meta, c[0], c[1])

    def lt(self, meta, c):
        return self._bin(N.BinOp.LT, meta, c[0], c[1])

    def gt(self, meta, c):
        return self._bin(N.BinOp.GT, meta, c[0], c[1])

    def bor(self, meta, c):
        return self._bin(N.BinOp.BOR, meta, c[0], c[1])

    def bxor(self, meta, c):
        return self._bin(N.BinOp.BXOR, meta, c[0], c[1])

    def band(self, meta, c):
        return self._bin(N.BinOp.BAND, meta, c[0], c[1])

    def shl(self, meta, c):
        return self._bin(N.BinOp.SHL, meta, c[0], c[1])

    def shr(self, meta, c):
        return self._bin(N.BinOp.SHR, meta, c[0], c[-1])

    def sub(self, meta, c):
        return self._bin(N.BinOp.SUB, meta, c[0], c[1])

    def plus(self, meta, c):
        return self._bin(N.BinOp.ADD, meta, c[0], c[1])

    def mux(self, meta, c):
        return self._expr(N.Mux(c[0], c[1], c[2], src=self._src(meta)), meta)
