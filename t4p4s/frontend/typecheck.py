"""Name resolution, type checking/inference and constant folding, in one
in-order walk over the IR (P4 declares before use, so a single walk with a
scope chain sees every declaration before its uses, p4c's ResolveReferences
and TypeInference fused).

Results, per the contract in ``ir/nodes.py``: every expression typed, every
PathExpr resolved, every typedef/unresolved type replaced, implicit casts
explicit (untyped integer literals take the width the context gives them),
constants folded (via ``constfold``), every MethodCall's kind/callee/type
bindings set, table properties and select keysets checked.
"""
from __future__ import annotations

from typing import Optional

from ..diagnostics import CompileError, DiagnosticSink
from ..ir import nodes as N
from ..ir import types as T
from ..ir import flow
from . import constfold
from .scopes import DuplicateName, Scope
from .unresolved import (UnresolvedBits, UnresolvedStack, UnresolvedTuple,
                         UnresolvedType, UnresolvedTypeVarUse)

_NAMED = {N.HeaderDecl: T.TypeHeader, N.StructDecl: T.TypeStruct, N.EnumDecl: T.TypeEnum,
          N.ExternDecl: T.TypeExtern, N.ParserDecl: T.TypeParser, N.ParserTypeDecl: T.TypeParser,
          N.ControlDecl: T.TypeControl, N.ControlTypeDecl: T.TypeControl,
          N.PackageTypeDecl: T.TypePackage, N.HeaderUnionDecl: T.TypeHeaderUnion}


class Checker:
    def __init__(self):
        self.sink = DiagnosticSink()
        self.top = Scope(None, "top")
        self.errors: Optional[N.ErrorDecl] = None
        self.match_kinds: Optional[N.MatchKindDecl] = None
        self.table: Optional[N.TableDecl] = None       # table being checked
        self.function: Optional[N.FunctionDecl] = None  # function whose body is checked

    # ------------------------------------------------------------ program
    def run(self, program: N.Program) -> N.Program:
        kept = []
        for d in program.declarations:
            try:
                if self.top_decl(d):
                    kept.append(d)
            except CompileError as e:
                self.sink.diagnostics.extend(e.diagnostics)
                kept.append(d)
        program.declarations = kept
        self.sink.check()
        return program

    def declare(self, scope: Scope, name: str, decl) -> None:
        try:
            scope.declare(name, decl)
        except DuplicateName as e:
            prev = getattr(e.previous, "src", None)
            where = f" (previous declaration at {prev})" if prev and prev.line else ""
            raise CompileError.at(decl.src, f"duplicate declaration of '{name}'{where}")

    def top_decl(self, d) -> bool:
        s = self.top
        if isinstance(d, N.ErrorDecl):
            return self._merge_members(d, "errors")
        if isinstance(d, N.MatchKindDecl):
            return self._merge_members(d, "match_kinds")
        if isinstance(d, N.HeaderUnionDecl):
            raise CompileError.at(d.src, "unsupported: header_union")
        if isinstance(d, (N.HeaderDecl, N.StructDecl)):
            self.declare(s, d.name, d)
            self.check_fields(d, s)
        elif isinstance(d, N.TypedefDecl):
            d.type = self.resolve_type(d.type, s)
            self.declare(s, d.name, d)
        elif isinstance(d, N.EnumDecl):
            self.check_enum(d, s)
            self.declare(s, d.name, d)
        elif isinstance(d, N.ConstDecl):
            self.const_decl(d, s)
            self.declare(s, d.name, d)
        elif isinstance(d, N.ExternDecl):
            self.declare(s, d.name, d)
            self.check_extern(d, s)
        elif isinstance(d, N.ExternFunctionDecl):
            inner = self.generic_scope(s, d.type_params)
            d.params = self.check_params(d.params, inner)
            d.return_type = self.resolve_type(d.return_type, inner)
            self.declare(s, d.name, d)
        elif isinstance(d, N.FunctionDecl):
            self.declare(s, d.name, d)
            self.function_decl(d, s)
        elif isinstance(d, (N.ParserTypeDecl, N.ControlTypeDecl, N.PackageTypeDecl)):
            inner = self.generic_scope(s, d.type_params)
            d.params = self.check_params(d.params, inner)
            self.declare(s, d.name, d)
        elif isinstance(d, N.ActionDecl):
            self.declare(s, d.name, d)
            self.action_decl(d, s)
        elif isinstance(d, N.ParserDecl):
            self.declare(s, d.name, d)
            self.parser_decl(d, s)
        elif isinstance(d, N.ControlDecl):
            self.declare(s, d.name, d)
            self.control_decl(d, s)
        elif isinstance(d, N.Instantiation):
            self.instantiation(d, s)
            self.declare(s, d.name, d)
        else:
            raise CompileError.at(d.src, f"unsupported: declaration {type(d).__name__}")
        return True

    def _merge_members(self, d, attr) -> bool:
        existing = getattr(self, attr)
        if existing is None:
            setattr(self, attr, d)
            self.declare(self.top, d.name, d)
            members = []
            for m in d.members:
                if m in members:
                    raise CompileError.at(d.src, f"duplicate {d.name} member '{m}'")
                members.append(m)
            return True
        for m in d.members:
            if m in existing.members:
                raise CompileError.at(d.src, f"duplicate {d.name} member '{m}'")
            existing.members.append(m)
        return False

    # -------------------------------------------------------------- types
    def generic_scope(self, parent: Scope, type_params) -> Scope:
        scope = Scope(parent, "generic")
        for tv in type_params:
            self.declare(scope, tv.name, tv) if False else scope.names.__setitem__(tv.name, tv)
        return scope

    def resolve_type(self, t, scope: Scope) -> T.Type:
        if isinstance(t, (UnresolvedType, UnresolvedTypeVarUse)):
            decl = scope.lookup(t.name)
            if decl is None:
                raise CompileError.at(t.src, f"undeclared type '{t.name}'")
            if isinstance(decl, T.TypeVar):
                return decl
            if isinstance(decl, N.TypedefDecl):
                return decl.type
            if isinstance(decl, N.HeaderUnionDecl):
                raise CompileError.at(t.src, "unsupported: header_union")
            cls = _NAMED.get(type(decl))
            if cls is None:
                raise CompileError.at(t.src, f"'{t.name}' is not a type")
            if isinstance(t, UnresolvedType) and t.args:
                t.args = [self.resolve_type(a, scope) for a in t.args]
            return cls(decl)
        if isinstance(t, UnresolvedBits):
            w = self.const_int(t.width, scope, "a type width")
            if w <= 0:
                raise CompileError.at(t.src, f"invalid width {w}")
            if t.varbit:
                return T.TypeVarbit(w)
            return T.TypeBits(w, t.signed)
        if isinstance(t, UnresolvedStack):
            elem = self.resolve_type(t.element, scope)
            size = self.const_int(t.size, scope, "a header stack size")
            if not isinstance(elem, T.TypeHeader):
                raise CompileError.at(t.src, f"header stack elements must be headers, not {elem}")
            if size <= 0:
                raise CompileError.at(t.src, f"invalid header stack size {size}")
            return T.TypeStack(elem, size)
        if isinstance(t, UnresolvedTuple):
            return T.TypeTuple(tuple(self.resolve_type(x, scope) for x in t.elements))
        if isinstance(t, T.TypeVarbit):
            return t
        return t

    def type_args_of(self, t) -> list:
        return list(getattr(t, "args", []) or [])

    def check_fields(self, d, scope):
        names = set()
        for f in d.fields:
            if f.name in names:
                raise CompileError.at(f.src, f"duplicate field '{f.name}' in {d.name}")
            names.add(f.name)
            f.type = self.resolve_type(f.type, scope)
            if isinstance(f.type, T.TypeVarbit):
                raise CompileError.at(f.src, "unsupported: varbit")
            if isinstance(d, N.HeaderDecl) and not isinstance(
                    f.type, (T.TypeBits, T.TypeBool)) and not (
                    isinstance(f.type, T.TypeEnum) and f.type.decl.underlying is not None):
                raise CompileError.at(f.src, f"header field '{f.name}' must be bit<W>, int<W>, "
                                             f"bool or a serializable enum, not {f.type}")

    def check_enum(self, d: N.EnumDecl, scope):
        if len(set(d.members)) != len(d.members):
            raise CompileError.at(d.src, f"duplicate member in enum {d.name}")
        if d.underlying is not None:
            d.underlying = self.resolve_type(d.underlying, scope)
            if not isinstance(d.underlying, T.TypeBits):
                raise CompileError.at(d.src, "a serializable enum's type must be bit<W> or int<W>")
            for m, e in getattr(d, "value_exprs", {}).items():
                d.values[m] = constfold.wrap(self.const_int(e, scope, "an enum value", d.underlying),
                                             d.underlying)

    def check_extern(self, d: N.ExternDecl, scope):
        inner = self.generic_scope(scope, d.type_params)
        for m in d.constructors + d.methods:
            mscope = self.generic_scope(inner, m.type_params)
            m.params = self.check_params(m.params, mscope)
            m.return_type = self.resolve_type(m.return_type, mscope)
            m.extern = d

    def check_params(self, params, scope) -> list:
        names = set()
        for p in params:
            if p.name in names:
                raise CompileError.at(p.src, f"duplicate parameter '{p.name}'")
            names.add(p.name)
            p.type = self.resolve_type(p.type, scope)
            if p.default is not None:
                p.default = self.expr(p.default, scope, p.type)
        return params

    # -------------------------------------------------------- constants
    def const_int(self, e, scope, what, typ=None) -> int:
        e = self.expr(e, scope, typ)
        v = constfold.const_value(e)
        if v is None or not isinstance(e, N.IntLiteral):
            raise CompileError.at(e.src, f"{what} must be a compile-time constant integer")
        return v

    def const_decl(self, d: N.ConstDecl, scope):
        d.type = self.resolve_type(d.type, scope)
        d.value = self.convert(self.expr(d.value, scope, d.type), d.type, "initialize")
        if isinstance(d.type, (T.TypeBits, T.TypeBool, T.TypeInfInt)) and \
                not isinstance(d.value, (N.IntLiteral, N.BoolLiteral)):
            raise CompileError.at(d.value.src, f"initializer of constant '{d.name}' is not a "
                                               "compile-time constant")

    # ------------------------------------------------------- containers
    def declare_params(self, params, scope):
        for p in params:
            self.declare(scope, p.name, p)

    def action_decl(self, d: N.ActionDecl, scope):
        inner = Scope(scope, "action")
        d.params = self.check_params(d.params, inner)
        seen_directionless = False
        for p in d.params:
            if p.direction == N.Direction.NONE:
                seen_directionless = True
            elif seen_directionless:
                raise CompileError.at(p.src, "directional action parameters must come before "
                                             "directionless ones")
        self.declare_params(d.params, inner)
        self.block(d.body, inner, new_scope=False)

    def function_decl(self, d: N.FunctionDecl, scope):
        """P4-16 "Function declarations": top level only (the grammar has
        no other place), no recursion, a value returned on every path unless
        the type is void. A parameter without a direction is taken as
        ``in``, as p4c does (the spec asks for a direction)."""
        if d.type_params:
            d.unsupported = True
            raise CompileError.at(d.src, f"unsupported: generic function '{d.name}'")
        inner = Scope(scope, "function")
        d.params = self.check_params(d.params, inner)
        d.return_type = self.resolve_type(d.return_type, inner)
        self.declare_params(d.params, inner)
        self.function = d
        try:
            self.block(d.body, inner, new_scope=False)
        finally:
            self.function = None
        if d.return_type != T.VOID and not flow.always_returns(d.body):
            end = getattr(d.body, "end_src", None) or d.src
            raise CompileError.at(end, f"function '{d.name}' does not return a value on every "
                                       f"path (it returns {d.return_type})")

    def block_scope(self, d, scope, kind: str):
        """The scope inside a parser or control: its type parameters, apply
        and constructor parameters, and its local declarations."""
        inner = self.generic_scope(scope, d.type_params)
        inner.kind = kind
        d.params = self.check_params(d.params, inner)
        d.ctor_params = self.check_params(d.ctor_params, inner)
        self.declare_params(d.params + d.ctor_params, inner)
        for loc in d.locals:
            self.local_decl(loc, inner)
        return inner

    def parser_decl(self, d: N.ParserDecl, scope):
        inner = self.block_scope(d, scope, "parser")
        for st in d.states:
            self.declare(inner, st.name, st)
        if not any(st.name == "start" for st in d.states):
            raise CompileError.at(d.src, f"parser '{d.name}' has no 'start' state")
        for st in d.states:
            if st.name in ("accept", "reject") and (st.statements or st.transition):
                raise CompileError.at(st.src, f"state '{st.name}' cannot be redefined")
            sscope = Scope(inner, "state")
            st.statements = [self.statement(x, sscope) for x in st.statements]
            if isinstance(st.transition, N.PathExpr):
                st.transition = self.state_ref(st.transition, inner)
            elif isinstance(st.transition, N.SelectExpr):
                self.select(st.transition, sscope, inner)

    def state_ref(self, p: N.PathExpr, scope) -> N.PathExpr:
        decl = scope.lookup(p.name)
        if not isinstance(decl, N.ParserState):
            raise CompileError.at(p.src, f"undeclared parser state '{p.name}'")
        p.decl = decl
        return p

    def select(self, sel: N.SelectExpr, scope, parser_scope):
        sel.keys = [self.expr(k, scope) for k in sel.keys]
        key_types = [k.type for k in sel.keys]
        for k in sel.keys:
            self.require_scalar(k, "select key")
        for case in sel.cases:
            case.keyset = self.keyset(case.keyset, key_types, scope)
            case.state = self.state_ref(case.state, parser_scope)
        sel.type = T.VOID

    def keyset(self, ks, key_types, scope):
        if isinstance(ks, N.DefaultExpr):
            return ks
        if getattr(ks, "is_tuple_keyset", False) or (len(key_types) > 1 and isinstance(ks, N.ListExpr)):
            if len(ks.elements) != len(key_types):
                raise CompileError.at(ks.src, f"keyset has {len(ks.elements)} elements but the "
                                              f"select has {len(key_types)} keys")
            ks.elements = [self.simple_keyset(e, t, scope) for e, t in zip(ks.elements, key_types)]
            ks.type = T.TypeTuple(tuple(key_types))
            return ks
        if len(key_types) != 1:
            raise CompileError.at(ks.src, f"keyset has 1 element but the select has "
                                          f"{len(key_types)} keys")
        return self.simple_keyset(ks, key_types[0], scope)

    def simple_keyset(self, ks, typ, scope):
        if isinstance(ks, N.DefaultExpr):
            return ks
        if isinstance(ks, N.Mask):
            ks.value = self.convert(self.expr(ks.value, scope, typ), typ, "match")
            ks.mask = self.convert(self.expr(ks.mask, scope, typ), typ, "match")
            ks.type = T.TypeSet(typ)
            return ks
        if isinstance(ks, N.Range):
            ks.lo = self.convert(self.expr(ks.lo, scope, typ), typ, "match")
            ks.hi = self.convert(self.expr(ks.hi, scope, typ), typ, "match")
            ks.type = T.TypeSet(typ)
            return ks
        return self.convert(self.expr(ks, scope, typ), typ, "match")

    def control_decl(self, d: N.ControlDecl, scope):
        inner = self.block_scope(d, scope, "control")
        self.block(d.body, inner)

    def local_decl(self, loc, scope):
        if isinstance(loc, N.ActionDecl):
            self.declare(scope, loc.name, loc)
            self.action_decl(loc, scope)
        elif isinstance(loc, N.TableDecl):
            self.table_decl(loc, scope)
            self.declare(scope, loc.name, loc)
        else:
            self.statement(loc, scope)

    # ------------------------------------------------------------ tables
    def table_decl(self, t: N.TableDecl, scope):
        self.table = t
        try:
            kinds = self.match_kinds.members if self.match_kinds else []
            for k in t.keys:
                k.expr = self.expr(k.expr, scope)
                self.require_scalar(k.expr, "table key")
                if k.match_kind not in kinds:
                    raise CompileError.at(k.src, f"unknown match kind '{k.match_kind}' (declared: "
                                                 f"{', '.join(kinds)})")
            names = set()
            for ref in t.actions:
                self.action_ref(ref, scope, in_list=True)
                if ref.action.name in names:
                    raise CompileError.at(ref.src, f"action '{ref.action.name}' listed twice")
                names.add(ref.action.name)
            if t.default_action is not None:
                t.default_action = self.action_call(t.default_action, scope, "default_action")
            for e in t.entries:
                self.table_entry(e, scope)
            for name, value in list(t.properties.items()):
                value = self.expr(value, scope)
                if name == "size":
                    v = constfold.const_value(value)
                    if not isinstance(value, N.IntLiteral) or v <= 0:
                        raise CompileError.at(value.src, "table size must be a positive constant integer")
                    t.size = v
                    del t.properties[name]
                elif name == "largest_priority_wins":
                    if not isinstance(value, N.BoolLiteral):
                        raise CompileError.at(value.src, "largest_priority_wins must be true or false")
                    t.largest_priority_wins = value.value
                    del t.properties[name]
                else:
                    t.properties[name] = value
        finally:
            self.table = None

    def resolve_action(self, path: N.PathExpr, scope) -> N.ActionDecl:
        decl = (scope.top() if path.top_level else scope).lookup(path.name)
        if decl is None:
            raise CompileError.at(path.src, f"undeclared action '{path.name}'")
        if not isinstance(decl, N.ActionDecl):
            raise CompileError.at(path.src, f"'{path.name}' is not an action")
        path.decl, path.type = decl, T.TypeAction(decl)
        return decl

    def action_ref(self, ref: N.ActionRef, scope, in_list: bool):
        action = self.resolve_action(ref.path, scope)
        ref.action = action
        directional = [p for p in action.params if p.direction != N.Direction.NONE]
        if ref.has_parens or directional:
            wanted = directional if in_list else action.params
            ref.args = self.match_args(ref.args, wanted, scope, {}, ref.src, f"action '{action.name}'")
        return ref

    def action_call(self, value, scope, what) -> N.ActionRef:
        """``default_action = a(1)`` / entry actions: an ActionRef with all
        directionless arguments, for an action in the table's list."""
        if isinstance(value, N.ActionRef):
            ref = value
        elif isinstance(value, N.MethodCall) and isinstance(value.target, N.PathExpr):
            ref = N.ActionRef(None, value.args, src=value.src)
            ref.path, ref.has_parens = value.target, True
        elif isinstance(value, N.PathExpr):
            ref = N.ActionRef(None, [], src=value.src)
            ref.path, ref.has_parens = value, False
        else:
            raise CompileError.at(value.src, f"{what} must be an action call")
        action = self.resolve_action(ref.path, scope)
        ref.action = action
        listed = [r for r in self.table.actions if r.action is action]
        if not listed:
            raise CompileError.at(ref.src, f"{what} '{action.name}' is not in the actions list "
                                           f"of table '{self.table.name}'")
        list_args = listed[0].args
        directionless = [p for p in action.params if p.direction == N.Direction.NONE]
        args = self.match_args(ref.args, directionless if len(ref.args) == len(directionless) and
                               len(directionless) != len(action.params) else action.params,
                               scope, {}, ref.src, f"action '{action.name}'")
        if len(args) == len(action.params) and list_args and len(directionless) != len(action.params):
            args = args[len(action.params) - len(directionless):]
        ref.args = args
        ref.annotations = ref.annotations or []
        return ref

    def table_entry(self, e: N.TableEntry, scope):
        keys = self.table.keys
        if len(e.keys) != len(keys):
            raise CompileError.at(e.src, f"entry has {len(e.keys)} key values but table "
                                         f"'{self.table.name}' has {len(keys)} keys")
        e.keys = [self.simple_keyset(v, k.expr.type, scope) for v, k in zip(e.keys, keys)]
        for v, k in zip(e.keys, keys):
            if isinstance(v, N.Range) and k.match_kind not in ("range",):
                raise CompileError.at(v.src, f"a range needs match kind 'range', key "
                                             f"'{k.source_text}' is '{k.match_kind}'")
            if isinstance(v, N.Mask) and k.match_kind not in ("ternary", "optional", "lpm"):
                raise CompileError.at(v.src, f"a mask needs match kind ternary/lpm, key "
                                             f"'{k.source_text}' is '{k.match_kind}'")
        e.action = self.action_call(e.action, scope, "entry action")
        prio = getattr(e, "priority_expr", None)
        if prio is None:
            a = next((a for a in e.annotations if a.name == "priority"), None)
            prio = a.args[0] if a and a.args else None
        if prio is not None:
            e.priority = self.const_int(prio, scope, "an entry priority")

    # -------------------------------------------------------- statements
    def block(self, b: N.BlockStmt, scope, new_scope=True):
        inner = Scope(scope, "block") if new_scope else scope
        b.statements = [self.statement(s, inner) for s in b.statements]
        return b

    def statement(self, s, scope):
        try:
            return self._statement(s, scope)
        except CompileError as e:
            self.sink.diagnostics.extend(e.diagnostics)
            return s

    def _statement(self, s, scope):
        if isinstance(s, N.BlockStmt):
            return self.block(s, scope)
        if isinstance(s, N.AssignStmt):
            s.lhs = self.expr(s.lhs, scope)
            self.require_lvalue(s.lhs)
            s.rhs = self.convert(self.expr(s.rhs, scope, s.lhs.type), s.lhs.type, "assign")
            return s
        if isinstance(s, N.CallStmt):
            s.call = self.expr(s.call, scope)
            return s
        if isinstance(s, N.IfStmt):
            s.cond = self.expr(s.cond, scope, T.BOOL)
            if s.cond.type != T.BOOL:
                raise CompileError.at(s.cond.src, f"if condition must be bool, not {s.cond.type}")
            s.then = self.statement(s.then, Scope(scope))
            if s.other is not None:
                s.other = self.statement(s.other, Scope(scope))
            return s
        if isinstance(s, N.SwitchStmt):
            return self.switch(s, scope)
        if isinstance(s, N.ReturnStmt):
            return self.return_stmt(s, scope)
        if isinstance(s, N.ExitStmt) and self.function is not None:
            raise CompileError.at(s.src, f"'exit' is not allowed in a function "
                                         f"('{self.function.name}')")
        if isinstance(s, (N.ExitStmt, N.EmptyStmt)):
            return s
        if isinstance(s, N.ConstDecl):
            self.const_decl(s, scope)
            self.declare(scope, s.name, s)
            return s
        if isinstance(s, N.VarDecl):
            s.type = self.resolve_type(s.type, scope)
            if s.init is not None:
                s.init = self.convert(self.expr(s.init, scope, s.type), s.type, "initialize")
            self.declare(scope, s.name, s)
            return s
        if isinstance(s, N.Instantiation):
            self.instantiation(s, scope)
            self.declare(scope, s.name, s)
            return s
        raise CompileError.at(s.src, f"unsupported: statement {type(s).__name__}")

    def return_stmt(self, s: N.ReturnStmt, scope):
        fn = self.function
        if fn is None:
            if s.value is not None:
                raise CompileError.at(s.src, "return with a value outside a function")
            return s
        if fn.return_type == T.VOID:
            if s.value is not None:
                raise CompileError.at(s.value.src, f"function '{fn.name}' returns void: "
                                                   "'return' takes no value")
            return s
        if s.value is None:
            raise CompileError.at(s.src, f"function '{fn.name}' must return a "
                                         f"{fn.return_type} value")
        s.value = self.convert(self.expr(s.value, scope, fn.return_type), fn.return_type, "return")
        return s

    def switch(self, s: N.SwitchStmt, scope):
        s.expr = self.expr(s.expr, scope)
        on_table = isinstance(s.expr, N.Member) and s.expr.name == "action_run"
        seen = set()
        for case in s.cases:
            if isinstance(case.label, N.DefaultExpr):
                key = "default"
            elif on_table:
                table = s.expr.type.decl
                if not isinstance(case.label, N.PathExpr):
                    raise CompileError.at(case.label.src, "switch label must be an action name")
                decl = scope.lookup(case.label.name)
                if not any(r.action is decl for r in table.actions):
                    raise CompileError.at(case.label.src, f"'{case.label.name}' is not an action "
                                                          f"of table '{table.name}'")
                case.label.decl, case.label.type = decl, T.TypeAction(decl)
                key = decl.name
            else:
                self.require_scalar(s.expr, "switch expression")
                case.label = self.convert(self.expr(case.label, scope, s.expr.type), s.expr.type, "match")
                if not isinstance(case.label, (N.IntLiteral, N.BoolLiteral, N.Member)):
                    raise CompileError.at(case.label.src, "switch label must be a compile-time constant")
                key = repr(constfold.const_value(case.label)) if not isinstance(case.label, N.Member) \
                    else case.label.name
            if key in seen:
                raise CompileError.at(case.src, f"duplicate switch label '{key}'")
            seen.add(key)
            if case.body is not None:
                self.block(case.body, scope)
        return s

    def instantiation(self, d: N.Instantiation, scope):
        utype = d.type
        d.type = self.resolve_type(d.type, scope)
        d.type_args = self.type_args_of(utype)
        decl = getattr(d.type, "decl", None)
        if isinstance(decl, N.ExternDecl):
            if len(d.type_args) != len(decl.type_params):
                raise CompileError.at(d.src, f"extern '{decl.name}' takes {len(decl.type_params)} "
                                             f"type arguments, got {len(d.type_args)}")
            bindings = dict(zip(decl.type_params, d.type_args))
            ctor = self.pick_overload(decl.constructors, d.args, d.src, f"constructor of '{decl.name}'")
            d.args = self.match_args(d.args, ctor.params, scope, bindings, d.src,
                                     f"constructor of '{decl.name}'")
            d.constructor = ctor
        elif isinstance(decl, (N.ParserDecl, N.ControlDecl)):
            d.args = self.match_args(d.args, decl.ctor_params, scope, {}, d.src, f"'{decl.name}'")
        elif isinstance(decl, N.PackageTypeDecl):
            bindings = dict(zip(decl.type_params, d.type_args))
            d.args = self.match_args(d.args, decl.params, scope, bindings, d.src, f"package '{decl.name}'")
        else:
            raise CompileError.at(d.src, f"cannot instantiate {d.type}")

    # ------------------------------------------------------- expressions
    def expr(self, e, scope, expected: Optional[T.Type] = None) -> N.Expression:
        e = self._expr(e, scope, expected)
        return constfold.fold(e)

    def _expr(self, e, scope, expected):
        if isinstance(e, (N.IntLiteral, N.BoolLiteral, N.StringLiteral, N.DefaultExpr)):
            return e
        if isinstance(e, N.PathExpr):
            return self.path(e, scope)
        if isinstance(e, N.Member):
            return self.member(e, scope)
        if isinstance(e, N.ArrayIndex):
            e.expr = self.expr(e.expr, scope)
            e.index = self.expr(e.index, scope)
            if not isinstance(e.expr.type, T.TypeStack):
                raise CompileError.at(e.src, f"cannot index a value of type {e.expr.type}")
            if not isinstance(e.index.type, (T.TypeBits, T.TypeInfInt)):
                raise CompileError.at(e.index.src, "a stack index must be an integer")
            v = constfold.const_value(e.index)
            if v is not None and not 0 <= v < e.expr.type.size:
                raise CompileError.at(e.index.src, f"index {v} out of bounds of {e.expr.type}")
            e.type = e.expr.type.element
            return e
        if isinstance(e, N.Slice):
            e.expr = self.expr(e.expr, scope)
            e.hi = self.const_int(e.hi_expr, scope, "a slice bound")
            e.lo = self.const_int(e.lo_expr, scope, "a slice bound")
            t = e.expr.type
            if not isinstance(t, T.TypeBits):
                raise CompileError.at(e.src, f"cannot slice a value of type {t}")
            if not (0 <= e.lo <= e.hi < t.width):
                raise CompileError.at(e.src, f"slice [{e.hi}:{e.lo}] out of range for {t}")
            e.type = T.TypeBits(e.hi - e.lo + 1)
            return e
        if isinstance(e, N.Unary):
            return self.unary(e, scope, expected)
        if isinstance(e, N.Binary):
            return self.binary(e, scope, expected)
        if isinstance(e, N.Mux):
            e.cond = self.expr(e.cond, scope, T.BOOL)
            if e.cond.type != T.BOOL:
                raise CompileError.at(e.cond.src, f"condition must be bool, not {e.cond.type}")
            e.then = self.expr(e.then, scope, expected)
            e.other = self.expr(e.other, scope, expected)
            e.then, e.other, e.type = self.unify(e.then, e.other, e.src, "?:")
            return e
        if isinstance(e, N.Cast):
            return self.cast(e, scope)
        if isinstance(e, N.ListExpr):
            return self.list_expr(e, scope, expected)
        if isinstance(e, N.StructInit):
            return self.struct_init(e, scope, expected)
        if isinstance(e, N.MethodCall):
            return self.call(e, scope)
        if isinstance(e, N.ConstructorCall):
            ctype = self.resolve_type(e.ctype, scope)
            decl = getattr(ctype, "decl", None)
            e.type_args = self.type_args_of(e.ctype)
            params = decl.ctor_params if isinstance(decl, (N.ParserDecl, N.ControlDecl)) else None
            if params is None:
                raise CompileError.at(e.src, f"unsupported: constructor call of {ctype}")
            e.args = self.match_args(e.args, params, scope, {}, e.src, f"'{decl.name}'")
            e.type = ctype
            return e
        if isinstance(e, (N.Mask, N.Range)):
            raise CompileError.at(e.src, "'&&&' and '..' are only allowed in keysets")
        raise CompileError.at(e.src, f"unsupported: expression {type(e).__name__}")

    def path(self, e: N.PathExpr, scope):
        decl = (scope.top() if e.top_level else scope).lookup(e.name)
        if decl is None:
            raise CompileError.at(e.src, f"undeclared name '{e.name}'")
        if isinstance(decl, list):
            e.decl, e.type = decl, None                  # overloaded: resolved by the call
            return e
        e.decl = decl
        if isinstance(decl, N.ConstDecl):
            if isinstance(decl.value, (N.IntLiteral, N.BoolLiteral)):
                return constfold.literal(constfold.const_value(decl.value), decl.type, e.src) \
                    if not isinstance(decl.type, T.TypeInfInt) else N.IntLiteral(
                        decl.value.value, src=e.src, type=T.INFINT)
            e.type = decl.type
        elif isinstance(decl, (N.Param, N.VarDecl)):
            e.type = decl.type
        elif isinstance(decl, N.Instantiation):
            e.type = decl.type
        elif isinstance(decl, N.TableDecl):
            e.type = T.TypeTable(decl)
        elif isinstance(decl, N.ActionDecl):
            e.type = T.TypeAction(decl)
        elif isinstance(decl, (N.ParserState,)):
            raise CompileError.at(e.src, f"parser state '{e.name}' used as a value")
        elif isinstance(decl, N.FunctionDecl):
            raise CompileError.at(e.src, f"function '{e.name}' used as a value (call it: "
                                         f"{e.name}(...))")
        else:
            raise CompileError.at(e.src, f"'{e.name}' is a type, not a value")
        return e

    def member(self, e: N.Member, scope):
        if isinstance(e.expr, N.TypeNameExpr):
            if e.expr.name == "error":
                if not self.errors or e.name not in self.errors.members:
                    raise CompileError.at(e.src, f"error.{e.name} is not declared")
                e.expr.type = T.ERROR
                e.type = T.ERROR
                return e
            t = self.resolve_type(e.expr.type, scope)
            e.expr.type = t
            if isinstance(t, T.TypeEnum):
                if e.name not in t.decl.members:
                    raise CompileError.at(e.src, f"enum {t.decl.name} has no member '{e.name}'")
                e.type = t
                return e
            raise CompileError.at(e.src, f"type {t} has no member '{e.name}'")
        e.expr = self.expr(e.expr, scope)
        t = e.expr.type
        if isinstance(t, (T.TypeHeader, T.TypeStruct)):
            for f in t.decl.fields:
                if f.name == e.name:
                    e.type = f.type
                    return e
            if isinstance(t, T.TypeHeader) and e.name in ("isValid", "setValid", "setInvalid"):
                return e
            raise CompileError.at(e.src, f"{t.decl.name} has no field '{e.name}'")
        if isinstance(t, T.TypeStack):
            if e.name in ("next", "last"):
                e.type = t.element
                return e
            if e.name == "lastIndex":
                e.type = T.bits(32)
                return e
            if e.name == "size":
                return N.IntLiteral(t.size, src=e.src, type=T.bits(32))
            if e.name in ("push_front", "pop_front"):
                return e
            raise CompileError.at(e.src, f"header stack has no member '{e.name}'")
        if isinstance(t, T.TypeTableResult):
            if e.name in ("hit", "miss"):
                e.type = T.BOOL
                return e
            if e.name == "action_run":
                e.type = t
                return e
            raise CompileError.at(e.src, f"table apply result has no member '{e.name}'")
        if isinstance(t, (T.TypeExtern, T.TypeTable, T.TypeParser, T.TypeControl)):
            return e                                     # a method: typed by the call
        raise CompileError.at(e.src, f"a value of type {t} has no member '{e.name}'")

    def unary(self, e: N.Unary, scope, expected):
        e.expr = self.expr(e.expr, scope, expected if e.op != N.UnOp.NOT else T.BOOL)
        t = e.expr.type
        if e.op == N.UnOp.NOT:
            if t != T.BOOL:
                raise CompileError.at(e.src, f"'!' needs a bool operand, not {t}")
            e.type = T.BOOL
        else:
            if not isinstance(t, (T.TypeBits, T.TypeInfInt)):
                raise CompileError.at(e.src, f"'{e.op.value}' needs an integer operand, not {t}")
            if e.op == N.UnOp.CMPL and isinstance(t, T.TypeInfInt):
                raise CompileError.at(e.src, "'~' needs a fixed-width operand (write e.g. 8w5)")
            e.type = t
        return e

    def binary(self, e: N.Binary, scope, expected):
        op = e.op
        B = N.BinOp
        if op in (B.LAND, B.LOR):
            e.left = self.expr(e.left, scope, T.BOOL)
            e.right = self.expr(e.right, scope, T.BOOL)
            for side in (e.left, e.right):
                if side.type != T.BOOL:
                    raise CompileError.at(side.src, f"'{op.value}' needs bool operands, not {side.type}")
            e.type = T.BOOL
            return e
        e.left = self.expr(e.left, scope, expected if op not in _COMPARE else None)
        e.right = self.expr(e.right, scope, expected if op not in _COMPARE and op not in (B.SHL, B.SHR) else None)
        if op == B.CONCAT:
            lt, rt = e.left.type, e.right.type
            if not isinstance(lt, T.TypeBits) or not isinstance(rt, T.TypeBits):
                raise CompileError.at(e.src, f"'++' needs fixed-width operands, not {lt} and {rt}")
            e.type = T.TypeBits(lt.width + rt.width, lt.signed)
            return e
        if op in (B.SHL, B.SHR):
            lt, rt = e.left.type, e.right.type
            if not isinstance(lt, (T.TypeBits, T.TypeInfInt)) or not isinstance(rt, (T.TypeBits, T.TypeInfInt)):
                raise CompileError.at(e.src, f"'{op.value}' needs integer operands, not {lt} and {rt}")
            if isinstance(rt, T.TypeBits) and rt.signed:
                raise CompileError.at(e.right.src, "shift amount must be unsigned")
            if isinstance(lt, T.TypeInfInt) and not isinstance(e.right, N.IntLiteral):
                raise CompileError.at(e.src, "shifting an untyped integer needs a constant amount")
            e.type = lt
            return e
        if op in (B.EQ, B.NE):
            e.left, e.right, t = self.unify(e.left, e.right, e.src, op.value)
            e.type = T.BOOL
            return e
        e.left, e.right, t = self.unify(e.left, e.right, e.src, op.value)
        if not isinstance(t, (T.TypeBits, T.TypeInfInt)):
            raise CompileError.at(e.src, f"'{op.value}' needs integer operands, not {t}")
        if op in (B.DIV, B.MOD) and isinstance(t, T.TypeBits) and t.signed:
            raise CompileError.at(e.src, f"'{op.value}' is not defined on signed int<W>")
        e.type = T.BOOL if op in _COMPARE else t
        return e

    def unify(self, a, b, src, what):
        """Operands of a binary operator: same type; an untyped integer
        takes the other side's type (an implicit cast made explicit)."""
        ta, tb = a.type, b.type
        if ta == tb:
            return a, b, ta
        if isinstance(ta, T.TypeInfInt) and isinstance(tb, (T.TypeBits, T.TypeEnum)):
            return self.convert(a, tb, "use"), b, tb
        if isinstance(tb, T.TypeInfInt) and isinstance(ta, (T.TypeBits, T.TypeEnum)):
            return a, self.convert(b, ta, "use"), ta
        raise CompileError.at(src, f"type mismatch: '{what}' on {ta} and {tb}")

    def cast(self, e: N.Cast, scope):
        target = self.resolve_type(e.target_type, scope)
        if isinstance(e.expr, (N.ListExpr, N.StructInit)):
            inner = self.expr(e.expr, scope, target)
            return inner
        e.expr = self.expr(e.expr, scope, target)
        src_t = e.expr.type
        e.type = target
        if src_t == target:
            return e.expr if isinstance(e.expr, (N.IntLiteral, N.BoolLiteral)) else e
        ok = False
        if isinstance(target, T.TypeBits):
            ok = isinstance(src_t, (T.TypeBits, T.TypeInfInt)) or \
                (src_t == T.BOOL and target.width == 1 and not target.signed) or \
                (isinstance(src_t, T.TypeEnum) and src_t.decl.underlying is not None)
        elif target == T.BOOL:
            ok = (isinstance(src_t, T.TypeBits) and src_t.width == 1 and not src_t.signed) or \
                (isinstance(e.expr, N.IntLiteral) and e.expr.value in (0, 1))
        elif isinstance(target, T.TypeEnum) and target.decl.underlying is not None:
            ok = isinstance(src_t, (T.TypeBits, T.TypeInfInt))
        if not ok:
            raise CompileError.at(e.src, f"cannot cast {src_t} to {target}")
        return e

    def list_expr(self, e: N.ListExpr, scope, expected):
        if isinstance(expected, (T.TypeHeader, T.TypeStruct)):
            fields = expected.decl.fields
            if len(fields) != len(e.elements):
                raise CompileError.at(e.src, f"{expected.decl.name} has {len(fields)} fields, "
                                             f"initializer has {len(e.elements)}")
            e.elements = [self.convert(self.expr(x, scope, f.type), f.type, "initialize")
                          for x, f in zip(e.elements, fields)]
            e.type = expected
            return e
        if isinstance(expected, T.TypeTuple) and len(expected.elements) == len(e.elements):
            e.elements = [self.convert(self.expr(x, scope, t), t, "initialize")
                          for x, t in zip(e.elements, expected.elements)]
            e.type = expected
            return e
        e.elements = [self.expr(x, scope) for x in e.elements]
        e.type = T.TypeTuple(tuple(x.type for x in e.elements))
        return e

    def struct_init(self, e: N.StructInit, scope, expected):
        if not isinstance(expected, (T.TypeHeader, T.TypeStruct)):
            raise CompileError.at(e.src, "cannot infer the type of a struct initializer here; "
                                         "cast it: (T){ ... }")
        fields = {f.name: f for f in expected.decl.fields}
        given = [n for n, _ in e.fields]
        if sorted(given) != sorted(fields):
            raise CompileError.at(e.src, f"initializer fields {given} do not match "
                                         f"{expected.decl.name} fields {list(fields)}")
        e.fields = [(n, self.convert(self.expr(x, scope, fields[n].type), fields[n].type, "initialize"))
                    for n, x in e.fields]
        e.type = expected
        return e

    def convert(self, e, target, verb):
        """``e`` used where ``target`` is required: identical types, or an
        untyped integer literal retyped (value must fit)."""
        if target is None or e.type == target:
            return e
        if isinstance(e.type, T.TypeInfInt):
            if isinstance(target, T.TypeBits) and isinstance(e, N.IntLiteral):
                lo = -(1 << (target.width - 1)) if target.signed else 0
                hi = (1 << (target.width - (1 if target.signed else 0))) - 1
                if not lo <= e.value <= hi and not (not target.signed and -(1 << target.width) < e.value < 0):
                    raise CompileError.at(e.src, f"value {e.value} does not fit in {target}")
                return N.IntLiteral(constfold.wrap(e.value, target), e.base, src=e.src, type=target)
            if isinstance(target, T.TypeBits):
                c = N.Cast(e, src=e.src, type=target)
                return constfold.fold(c)
            if isinstance(target, T.TypeInfInt):
                return e
        if isinstance(target, T.TypeInfInt) and isinstance(e.type, T.TypeBits):
            return e
        if isinstance(target, T.TypeVar) or isinstance(target, T.TypeDontCare):
            return e
        if isinstance(e, N.ListExpr) and isinstance(target, T.TypeTuple):
            return e
        if self.conforms(e.type, target):
            return e
        if verb == "assign":
            raise CompileError.at(e.src, f"cannot assign {e.type} to {target}")
        if verb == "return":
            raise CompileError.at(e.src, f"cannot return {e.type} from a function returning {target}")
        raise CompileError.at(e.src, f"cannot {verb} {target} with {e.type}")

    def conforms(self, actual, proto) -> bool:
        """A parser/control declaration passed where a parser/control type
        (``Parser<H, M>``) is expected: same kind and parameter count and
        directions (type parameters bind to the block's own types)."""
        pairs = ((T.TypeParser, N.ParserDecl, N.ParserTypeDecl),
                 (T.TypeControl, N.ControlDecl, N.ControlTypeDecl))
        for cls, impl, proto_decl in pairs:
            if isinstance(actual, cls) and isinstance(proto, cls) and \
                    isinstance(actual.decl, impl) and isinstance(proto.decl, proto_decl):
                a, p = actual.decl.params, proto.decl.params
                return len(a) == len(p) and all(x.direction == y.direction for x, y in zip(a, p))
        return False

    # -------------------------------------------------------------- calls
    def call(self, e: N.MethodCall, scope):
        tgt = e.target
        if isinstance(tgt, N.PathExpr):
            fn = (scope.top() if tgt.top_level else scope).lookup(tgt.name)
            if isinstance(fn, N.FunctionDecl):
                return self.function_call(e, tgt, fn, scope)
            tgt = self.path(tgt, scope)
            e.target = tgt
            decl = tgt.decl
            if isinstance(decl, list):                                  # extern functions
                fn = self.pick_overload(decl, e.args, e.src, f"'{tgt.name}'")
                return self.finish_call(e, fn, N.CallKind.EXTERN_FUNCTION, fn.params,
                                        fn.type_params, fn.return_type, {}, scope)
            if isinstance(decl, N.ActionDecl):
                e.kind, e.callee = N.CallKind.ACTION, decl
                e.args = self.match_args(e.args, decl.params, scope, {}, e.src, f"action '{decl.name}'")
                e.type = T.VOID
                return e
            raise CompileError.at(e.src, f"'{tgt.name}' is not callable")
        if not isinstance(tgt, N.Member):
            raise CompileError.at(e.src, "this expression is not callable")
        tgt = self.member(tgt, scope)
        e.target = tgt
        obj, name = tgt.expr, tgt.name
        t = obj.type
        if isinstance(t, T.TypeHeader) and name in ("isValid", "setValid", "setInvalid"):
            self.no_args(e, name)
            e.kind = {"isValid": N.CallKind.HEADER_IS_VALID, "setValid": N.CallKind.HEADER_SET_VALID,
                      "setInvalid": N.CallKind.HEADER_SET_INVALID}[name]
            e.type = T.BOOL if name == "isValid" else T.VOID
            if name != "isValid":
                self.require_lvalue(obj)
            return e
        if isinstance(t, T.TypeStack) and name in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise CompileError.at(e.src, f"{name} takes 1 argument, got {len(e.args)}")
            e.args[0].value = self.expr(e.args[0].value, scope)
            if not isinstance(e.args[0].value, N.IntLiteral):
                raise CompileError.at(e.args[0].src, f"{name} count must be a compile-time constant")
            self.require_lvalue(obj)
            e.kind = N.CallKind.STACK_PUSH_FRONT if name == "push_front" else N.CallKind.STACK_POP_FRONT
            e.type = T.VOID
            return e
        if isinstance(t, T.TypeTable):
            if name != "apply":
                raise CompileError.at(tgt.src, f"table has no method '{name}'")
            self.no_args(e, name)
            e.kind, e.callee, e.type = N.CallKind.TABLE_APPLY, t.decl, T.TypeTableResult(t.decl)
            return e
        if isinstance(t, (T.TypeParser, T.TypeControl)) and name == "apply":
            decl = t.decl
            inst = obj.decl if isinstance(obj, N.PathExpr) else None
            e.kind = N.CallKind.PARSER_APPLY if isinstance(t, T.TypeParser) else N.CallKind.CONTROL_APPLY
            e.callee = inst
            e.args = self.match_args(e.args, decl.params, scope, {}, e.src, f"'{decl.name}.apply'")
            e.type = T.VOID
            return e
        if isinstance(t, T.TypeExtern):
            ext = t.decl
            methods = [m for m in ext.methods if m.name == name]
            if not methods:
                raise CompileError.at(tgt.src, f"extern {ext.name} has no method '{name}'")
            m = self.pick_overload(methods, e.args, e.src, f"'{ext.name}.{name}'")
            inst = obj.decl if isinstance(obj, N.PathExpr) else None
            type_args = inst.type_args if isinstance(inst, N.Instantiation) else []
            bindings = dict(zip(ext.type_params, type_args))
            return self.finish_call(e, m, N.CallKind.EXTERN_METHOD, m.params, m.type_params,
                                    m.return_type, bindings, scope)
        raise CompileError.at(tgt.src, f"a value of type {t} has no method '{name}'")

    def function_call(self, e: N.MethodCall, tgt: N.PathExpr, fn: N.FunctionDecl, scope):
        if fn is self.function:
            raise CompileError.at(e.src, f"recursive call of function '{fn.name}': P4 does not "
                                         "allow recursion")
        if getattr(fn, "unsupported", False):
            # Its declaration was reported: abandon this statement without
            # a second, misleading diagnostic.
            raise CompileError([])
        if e.type_args:
            raise CompileError.at(e.src, f"function '{fn.name}' takes no type arguments")
        tgt.decl, tgt.type = fn, T.VOID
        e.kind, e.callee = N.CallKind.FUNCTION, fn
        e.args = self.match_args(e.args, fn.params, scope, {}, e.src, f"function '{fn.name}'")
        e.type = fn.return_type
        return e

    def no_args(self, e, name):
        if e.args:
            raise CompileError.at(e.src, f"{name}() takes no arguments, got {len(e.args)}")

    def finish_call(self, e, callee, kind, params, type_params, ret, bindings, scope):
        e.kind, e.callee = kind, callee
        if e.type_args:
            if len(e.type_args) != len(type_params):
                raise CompileError.at(e.src, f"expected {len(type_params)} type arguments, "
                                             f"got {len(e.type_args)}")
            e.type_args = [self.resolve_type(a, scope) for a in e.type_args]
            bindings.update(zip(type_params, e.type_args))
        e.args = self.match_args(e.args, params, scope, bindings, e.src, f"'{callee.name}'")
        e.type_bindings = bindings
        e.type = self.subst(ret, bindings)
        if isinstance(e.type, T.TypeVar):
            raise CompileError.at(e.src, f"cannot infer type argument {e.type} of '{callee.name}'; "
                                         "give it explicitly")
        return e

    def pick_overload(self, candidates, args, src, what):
        n = len(args)
        fits = [c for c in candidates
                if sum(1 for p in c.params if p.default is None and not p.optional) <= n <= len(c.params)]
        if not fits:
            counts = sorted({len(c.params) for c in candidates})
            raise CompileError.at(src, f"wrong number of arguments to {what}: expected "
                                       f"{' or '.join(map(str, counts))}, got {n}")
        return fits[0]

    def subst(self, t, bindings):
        if isinstance(t, T.TypeVar):
            return bindings.get(t, t)
        return t

    def match_args(self, args, params, scope, bindings, src, what) -> list:
        by_name = any(a.name for a in args)
        if by_name:
            ordered = []
            named = {a.name: a for a in args}
            for p in params:
                ordered.append(named.pop(p.name, None))
            if named:
                raise CompileError.at(src, f"{what} has no parameter '{next(iter(named))}'")
        else:
            if len(args) > len(params) or len(args) < sum(
                    1 for p in params if p.default is None and not p.optional):
                raise CompileError.at(src, f"wrong number of arguments to {what}: expected "
                                           f"{len(params)}, got {len(args)}")
            ordered = list(args) + [None] * (len(params) - len(args))
        # bind type variables from typed arguments first, then check the rest
        typed = []
        for a, p in zip(ordered, params):
            if a is None or a.value is None:
                if a is None and p.default is None and not p.optional:
                    raise CompileError.at(src, f"missing argument '{p.name}' of {what}")
                if a is not None and a.value is None and p.direction not in (N.Direction.OUT,):
                    raise CompileError.at(a.src, "'_' is only allowed for out arguments")
                typed.append(a)
                continue
            ptype = self.subst(p.type, bindings)
            a.value = self.expr(a.value, scope, None if isinstance(ptype, T.TypeVar) else ptype)
            if isinstance(ptype, T.TypeVar) and not isinstance(a.value.type, T.TypeInfInt):
                bindings[ptype] = a.value.type
            typed.append(a)
        for a, p in zip(typed, params):
            if a is None or a.value is None:
                continue
            ptype = self.subst(p.type, bindings)
            if isinstance(ptype, T.TypeVar):
                raise CompileError.at(a.src, f"cannot infer type {ptype} of argument '{p.name}' from "
                                             "an untyped integer; give it a width (e.g. 32w5)")
            a.value = self.convert(a.value, ptype, "pass")
            if p.direction in (N.Direction.OUT, N.Direction.INOUT):
                self.require_lvalue(a.value)
        return typed

    # ---------------------------------------------------------- checks
    def require_lvalue(self, e):
        base = e
        while isinstance(base, (N.Member, N.ArrayIndex, N.Slice)):
            base = base.expr
        ok = isinstance(base, N.PathExpr) and (
            isinstance(base.decl, N.VarDecl) or
            (isinstance(base.decl, N.Param) and base.decl.direction in (N.Direction.OUT, N.Direction.INOUT)))
        if not ok:
            raise CompileError.at(e.src, "expression is not assignable (not an l-value: only "
                                         "variables and out/inout parameters can be written)")

    def require_scalar(self, e, what):
        t = e.type
        if not isinstance(t, (T.TypeBits, T.TypeBool, T.TypeEnum, T.TypeError_)):
            raise CompileError.at(e.src, f"{what} must be bit<W>, int<W>, bool, enum or error, not {t}")


_COMPARE = {N.BinOp.EQ, N.BinOp.NE, N.BinOp.LT, N.BinOp.LE, N.BinOp.GT, N.BinOp.GE}
