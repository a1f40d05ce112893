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


def hints(resources, controls: list, tables: list[TableInfo]) -> list[Hint]:
    """Hints for the lookahead ``tables``, from the extern calls of ``controls``."""
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
            if exclusive.never_both(table, call):
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
