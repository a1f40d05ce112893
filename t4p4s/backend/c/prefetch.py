"""Prefetch hints: which counter and register cells an entry found by the
lookahead will make the pipeline touch.

A gNB's DRB table is typical: its action copies the DRB index from the
entry into metadata, and later the control counts ``drb_counter`` and
reads ``tx_sn`` at that index. With tens of thousands of DRBs every such
cell is a cache miss, paid one after another per packet. Once the burst's
entries are found, their action data tells the indices, so the cells can
be prefetched for the whole stage and the misses overlap.

The analysis is a small data flow over the IR (after inlining): an extern
index counts when, casts aside, it is a parameter of a lookahead table's
action, or a field path that action assigns from a parameter, possibly
through a local variable that is only ever initialised. A hint that is
wrong (the metadata changed in between) costs a useless prefetch and never
a wrong result: the pipeline still reads the cells it indexes.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as ir
from ..resources import CounterInfo, RegisterInfo, TableInfo
from .emit import CodeWriter, source_comment
from .externs import arg, callee_name
from .types import is_wide
from .walk import children, member_chain, walk

# extern method -> position of its index argument
_INDEX_ARGUMENT = {"count": 0, "read": 1, "write": 0}


@dataclass(frozen=True)
class Hint:
    """When ``table``'s entry runs ``action_index``, cell ``param`` of the
    action data of ``extern`` will be used."""
    table: TableInfo
    action_index: int
    param: ir.Param
    extern: CounterInfo | RegisterInfo
    src: ir.SrcInfo

    def c_call(self, data: str) -> str:
        index = f"(uint32_t){data}->{self.param.name}"
        if isinstance(self.extern, CounterInfo):
            return f"t4p4s_counter_prefetch(lc, t4p4s_counters[{self.extern.index}], {index});"
        return f"t4p4s_register_prefetch(t4p4s_registers[{self.extern.index}], {index});"


def hints(resources, controls: list, tables: list[TableInfo], before: tuple = ()) -> list[Hint]:
    """Hints for the lookahead ``tables``, from the extern calls of ``controls``
    (ingress first). ``before``: (block, its parameters that are the
    ingress's, in the ingress's order) of the v1model blocks that run before
    the ingress (parser, verifyChecksum), whose writes to them count too."""
    written = _written_variables(controls)
    sources = {}   # canonical path or param id -> [(table, action index, param)]
    for table in tables:
        for index, ref in enumerate(table.actions):
            if ref.default_only:
                continue
            decl = ref.action.decl
            for p in _data_params(decl):
                sources.setdefault(("param", id(p)), []).append((table, index, p))
            for stmt in walk(decl.body):
                if not isinstance(stmt, ir.AssignStmt):
                    continue
                param = _param_of(stmt.rhs, decl)
                lhs = _canonical(stmt.lhs, written)
                if param is not None and lhs is not None:
                    sources.setdefault(lhs, []).append((table, index, param))
    exclusive = _Exclusion(controls)
    zero_unless = _ZeroUnless(controls, getattr(resources, "tables", []), exclusive, before)
    found: dict = {}
    for call in _extern_calls(controls):
        info = resources.of(getattr(call.target.expr, "decl", None))
        position = _INDEX_ARGUMENT.get(callee_name(call))
        if position is None or not isinstance(info, (CounterInfo, RegisterInfo)):
            continue
        if isinstance(info, CounterInfo) and info.direct:
            continue
        if isinstance(info, RegisterInfo) and callee_name(call) not in ("read", "write"):
            continue
        index = arg(call, position)
        key = _param_key(index) or _canonical(index, written)
        for table, action_index, param in sources.get(key, ()):
            if exclusive.never_both(table, call) or zero_unless.never_reached(table, call):
                continue
            hint = Hint(table, action_index, param, info, call.src)
            found.setdefault((id(table), action_index, id(param), id(info)), hint)
    return list(found.values())


def emit(hints_: list[Hint], actions, lookahead_name) -> CodeWriter | None:
    """`prefetch_cells(lc, p)`, which prefetches the cells packet p's
    entries (found ahead) index; None without hints."""
    if not hints_:
        return None
    w = CodeWriter()
    w.line("/* The counter and register cells packet p's entries, found ahead, index "
           "(t4p4s/backend/c/prefetch.py). */")
    w.line("static __rte_always_inline void")
    with w.block("prefetch_cells(struct t4p4s_lcore *lc, const struct packet_state *p)"):
        by_table: dict = {}
        for h in hints_:
            by_table.setdefault(id(h.table), []).append(h)
        for table_hints in by_table.values():
            table = table_hints[0].table
            with w.block(""):
                w.line(f"const struct t4p4s_entry *e = p->{lookahead_name(table)}.entry;")
                w.line("if (e != NULL)")
                with w.block("switch (e->action)"):
                    by_action: dict = {}
                    for h in table_hints:
                        by_action.setdefault(h.action_index, []).append(h)
                    for action_index, group in sorted(by_action.items()):
                        ref = table.actions[action_index]
                        with w.block(f"case {action_index}:  /* {ref.action.name} */"):
                            struct = actions.data_struct(ref.action.decl)
                            w.line(f"const {struct} *d = (const {struct} *)e->data;")
                            for h in group:
                                w.line(source_comment(h.src))
                                w.line(h.c_call("d"))
                            w.line("break;")
    w.line()
    return w


class _Exclusion:
    """Whether a table's applies and an extern call sit in different
    branches of one if or switch, so no packet reaches both (the DRB index
    of a downlink table says nothing about the uplink's counter)."""

    def __init__(self, controls: list):
        self.parent = {}
        self.applies = {}   # id(table decl) -> apply calls
        for control in controls:
            stack = [control.body]
            while stack:
                node = stack.pop()
                for child in children(node):
                    self.parent[id(child)] = node
                    stack.append(child)
                if isinstance(node, ir.MethodCall) and isinstance(node.target, ir.Member) \
                        and node.target.name == "apply" \
                        and isinstance(getattr(node.target.expr, "decl", None), ir.TableDecl):
                    self.applies.setdefault(id(node.target.expr.decl), []).append(node)

    def _path(self, node) -> list:
        path = [node]
        while id(path[-1]) in self.parent:
            path.append(self.parent[id(path[-1])])
        return path[::-1]

    def never_both(self, table: TableInfo, call) -> bool:
        sites = self.applies.get(id(table.decl), [])
        if not sites or id(call) not in self.parent:
            return False
        return all(self._exclusive(self._path(site), self._path(call)) for site in sites)

    @staticmethod
    def _exclusive(a: list, b: list) -> bool:
        depth = 0
        while depth < min(len(a), len(b)) and a[depth] is b[depth]:
            depth += 1
        if depth == 0 or depth == min(len(a), len(b)):
            return False
        fork, x, y = a[depth - 1], a[depth], b[depth]
        if isinstance(fork, ir.IfStmt):
            return {id(x), id(y)} == {id(fork.then), id(fork.other)}
        if isinstance(fork, ir.SwitchCase) or isinstance(fork, ir.SwitchStmt):
            return isinstance(x, ir.SwitchCase) and isinstance(y, ir.SwitchCase)
        return False


class _ZeroUnless:
    """Ingress metadata fields that keep the 0 every packet's metadata
    starts with unless an action of certain tables sets them to a constant.
    A call under `if (meta.f == c)` (c not 0) is then never reached by a
    packet of a table that is never applied together with those tables:
    nic.p4 counts host_return_counter only when meta.host_built == 1, which
    only host_return_port's action sets, and only frames from the hosts
    meet that table, never the N3 frames dl_drb looks up. Anything else
    written to a field (a computed value, an out argument, a direct action
    call) and the field is not used; a wrong answer would cost only a
    missed prefetch."""

    def __init__(self, controls: list, all_tables: list, exclusive: "_Exclusion", before: tuple = ()):
        self.exclusive = exclusive
        self.ingress = controls[0] if controls else None
        meta_params = self.ingress.params[1:2] if self.ingress is not None else []
        self.meta = meta_params[0] if meta_params else None
        self.applies_of = {id(t.decl): t for t in all_tables}
        action_tables: dict = {}
        for t in all_tables:
            for ref in t.actions:
                action_tables.setdefault(id(ref.action.decl), []).append(t)
        called = set()      # actions called directly, outside any table
        for control in controls:
            for node in walk(control.body):
                if isinstance(node, ir.MethodCall) and isinstance(getattr(node, "callee", None), ir.ActionDecl):
                    called.add(id(node.callee))
        self.writes: list = []   # (root id, names, [TableInfo] or None: written otherwise)
        for control in controls:
            for node in walk(control.body):
                self._note(node, None)
            for local in control.locals:
                if isinstance(local, ir.ActionDecl):
                    tables = None if id(local) in called else action_tables.get(id(local))
                    for node in walk(local.body):
                        self._note(node, tables)
        # whatever the parser or verifyChecksum writes to the metadata: not a 0
        for block, params in before:
            if self.ingress is None:
                continue
            same = {id(p): id(q) for p, q in zip(params, self.ingress.params)}
            first = len(self.writes)
            bodies = [st for state in getattr(block, "states", []) for st in state.statements]
            if getattr(block, "body", None) is not None:
                bodies.append(block.body)
            for local in getattr(block, "locals", []):
                if isinstance(local, ir.ActionDecl):
                    bodies.append(local.body)
            for body in bodies:
                for node in walk(body):
                    self._note(node, None)
            self.writes[first:] = [(same.get(root, root), names, None)
                                   for root, names, _ in self.writes[first:]]

    def _note(self, node, tables) -> None:
        if isinstance(node, ir.AssignStmt):
            root, names = _written_path(node.lhs)
            if root is None:
                return
            value = _strip_casts(node.rhs)
            constant = isinstance(value, (ir.IntLiteral, ir.BoolLiteral)) and bool(value.value)
            self.writes.append((root, names, tables if constant else None))
        elif isinstance(node, ir.MethodCall):
            params = getattr(node.callee, "params", None)
            # v1model's mark_to_drop(inout standard_metadata) writes only these
            fields = _MARK_TO_DROP_WRITES if getattr(node.callee, "name", None) == "mark_to_drop" else ((),)
            for position, a in enumerate(node.args):
                if a is None or not _may_write(params, position):
                    continue
                root, names = _written_path(a.value)
                if root is not None:
                    for field in fields:
                        self.writes.append((root, names + field, None))

    def _setters(self, names: tuple):
        """The tables whose actions alone set the meta field NAMES; None if
        anything else may write it."""
        setters = []
        for root, written, tables in self.writes:
            if root != id(self.meta):
                continue
            n = min(len(names), len(written))
            if names[:n] != written[:n]:
                continue
            if tables is None or len(written) < len(names):
                return None
            setters.extend(tables)
        return setters

    def never_reached(self, table: TableInfo, call) -> bool:
        if self.meta is None or not self._in_ingress(call):
            return False
        node = call
        parent = self.exclusive.parent.get(id(node))
        while parent is not None:
            if isinstance(parent, ir.IfStmt) and parent.then is node:
                for conj in _conjuncts(parent.cond):
                    names = self._meta_equals_nonzero(conj)
                    if names is None:
                        continue
                    setters = self._setters(names)
                    if setters is not None and all(self._never_together(table, s) for s in setters):
                        return True
            node, parent = parent, self.exclusive.parent.get(id(parent))
        return False

    def _in_ingress(self, call) -> bool:
        node = call
        while id(node) in self.exclusive.parent:
            node = self.exclusive.parent[id(node)]
        return node is self.ingress.body

    def _meta_equals_nonzero(self, e):
        if not (isinstance(e, ir.Binary) and e.op == ir.BinOp.EQ):
            return None
        for path, value in ((e.left, e.right), (e.right, e.left)):
            value = _strip_casts(value)
            if not (isinstance(value, ir.IntLiteral) and value.value != 0):
                continue
            root, names = member_chain(_strip_casts(path))
            if root is not None and root.decl is self.meta and names:
                return tuple(names)
        return None

    def _never_together(self, a: TableInfo, b: TableInfo) -> bool:
        sites_a = self.exclusive.applies.get(id(a.decl), [])
        sites_b = self.exclusive.applies.get(id(b.decl), [])
        if not sites_a or not sites_b:
            return False
        return all(self.exclusive._exclusive(self.exclusive._path(x), self.exclusive._path(y))
                   or self._contradict(self._facts(x), self._facts(y))
                   for x in sites_a for y in sites_b)

    def _facts(self, node) -> list:
        """(path, equal, constant) that hold where NODE runs, from the ifs
        around it, for paths of the ingress's parameters that nothing
        writes (standard_metadata.ingress_port)."""
        facts = []
        parent = self.exclusive.parent.get(id(node))
        while parent is not None:
            if isinstance(parent, ir.IfStmt) and node is parent.then:
                for conj in _conjuncts(parent.cond):
                    fact = self._read_only_equals(conj)
                    if fact is not None:
                        facts.append((*fact[:1], True, fact[1]))
            elif isinstance(parent, ir.IfStmt) and node is parent.other:
                fact = self._read_only_equals(parent.cond)
                if fact is not None:
                    facts.append((*fact[:1], False, fact[1]))
            node, parent = parent, self.exclusive.parent.get(id(parent))
        return facts

    def _read_only_equals(self, e):
        if not (isinstance(e, ir.Binary) and e.op == ir.BinOp.EQ):
            return None
        for path, value in ((e.left, e.right), (e.right, e.left)):
            value = _strip_casts(value)
            if not isinstance(value, ir.IntLiteral):
                continue
            root, names = member_chain(_strip_casts(path))
            if root is None or not names or not any(root.decl is p for p in self.ingress.params):
                continue
            if any(r == id(root.decl) and names[:min(len(names), len(w))] == w[:min(len(names), len(w))]
                   for r, w, _ in self.writes):
                continue
            return (id(root.decl), tuple(names)), value.value
        return None

    @staticmethod
    def _contradict(facts_a: list, facts_b: list) -> bool:
        for path, equal, value in facts_a:
            for path_b, equal_b, value_b in facts_b:
                if path != path_b:
                    continue
                if equal and equal_b and value != value_b:
                    return True
                if equal != equal_b and value == value_b:
                    return True
        return False


_MARK_TO_DROP_WRITES = (("egress_spec",), ("mcast_grp",))


def _conjuncts(e) -> list:
    if isinstance(e, ir.Binary) and e.op == ir.BinOp.LAND:
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _written_path(e):
    """(root declaration id, member names up to the first index or slice)
    of an assignment's or out argument's target."""
    names = []
    while isinstance(e, (ir.Member, ir.ArrayIndex, ir.Slice, ir.Cast)):
        if isinstance(e, ir.Member):
            names.append(e.name)
        else:
            names.clear()
        e = e.expr
    if not isinstance(e, ir.PathExpr) or e.decl is None:
        return None, ()
    return id(e.decl), tuple(reversed(names))


def _data_params(decl: ir.ActionDecl) -> list:
    return [p for p in decl.params
            if p.direction == ir.Direction.NONE and not is_wide(p.type)]


def _strip_casts(e):
    while isinstance(e, ir.Cast):
        e = e.expr
    return e


def _param_key(e):
    e = _strip_casts(e)
    if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.Param) \
            and e.decl.direction == ir.Direction.NONE:
        return ("param", id(e.decl))
    return None


def _param_of(e, action: ir.ActionDecl):
    e = _strip_casts(e)
    if isinstance(e, ir.PathExpr) and any(e.decl is p for p in _data_params(action)):
        return e.decl
    return None


def _canonical(e, written: set):
    """A field path as (root declaration id, member names), seeing through
    casts and through locals that are only initialised; None otherwise."""
    root, names = member_chain(_strip_casts(e))
    if root is None:
        return None
    if isinstance(root.decl, ir.VarDecl) and not names and root.decl.init is not None \
            and id(root.decl) not in written:
        return _canonical(root.decl.init, written)
    return (id(root.decl), names)


def _extern_calls(controls: list):
    for control in controls:
        for node in _nodes(control):
            if isinstance(node, ir.MethodCall) and node.kind == ir.CallKind.EXTERN_METHOD \
                    and isinstance(node.target, ir.Member):
                yield node


def _nodes(control: ir.ControlDecl):
    yield from walk(control.body)
    for local in control.locals:
        if isinstance(local, ir.ActionDecl):
            yield from walk(local.body)


def _written_variables(controls: list) -> set:
    """ids of the variables assigned anywhere, or passed where they may be written."""
    written = set()
    for control in controls:
        for node in _nodes(control):
            if isinstance(node, ir.AssignStmt):
                root = node.lhs
                while isinstance(root, (ir.Member, ir.ArrayIndex, ir.Slice)):
                    root = root.expr
                if isinstance(root, ir.PathExpr):
                    written.add(id(root.decl))
            elif isinstance(node, ir.MethodCall):
                params = getattr(node.callee, "params", None)
                for position, a in enumerate(node.args):
                    root = a.value if a is not None else None
                    while isinstance(root, (ir.Member, ir.ArrayIndex, ir.Slice)):
                        root = root.expr
                    if not (isinstance(root, ir.PathExpr) and isinstance(root.decl, ir.VarDecl)):
                        continue
                    if _may_write(params, position):
                        written.add(id(root.decl))
    return written


def _may_write(params, position: int) -> bool:
    if params is None or position >= len(params):
        return True
    return params[position].direction in (ir.Direction.OUT, ir.Direction.INOUT)
