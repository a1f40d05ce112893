"""Tables: key building and the apply function that looks the key up and
runs the entry's action (``<table>_apply(s)`` returns the entry, for
``.hit``/``.miss``/``action_run``).

Exact tables of the ingress are also looked up ahead, for a whole burst at
once, right after parsing (``<table>_lookahead_key(s, key)`` builds the key
from the parsed packet). The apply uses that entry when the key it builds
is still the same, and looks up again otherwise, so the result never
depends on the lookahead; it only overlaps the cache misses of a burst."""
from __future__ import annotations

from ...ir import nodes as ir
from ...ir import types as T
from ..resources import TableInfo, key_field_name, key_field_width
from .actions import c_ident
from .emit import CodeWriter, source_comment
from .types import storage_bytes


def key_layout(table: TableInfo) -> list:
    """(key element, bitwidth, byte offset) in key-buffer order, and the
    buffer size; each field big-endian in ceil(width/8) bytes."""
    out, offset = [], 0
    for key in table.decl.keys:
        width = key_field_width(key)
        out.append((key, width, offset))
        offset += storage_bytes(width)
    return out, offset


class Tables:
    def __init__(self, ctx, actions):
        self.ctx = ctx
        self.actions = actions
        self.functions = CodeWriter()
        self.lookahead: list[TableInfo] = []   # tables looked up per burst
        self.state_fields: list[str] = []       # their slots in packet_state

    def _looks_ahead(self, table: TableInfo) -> bool:
        """Exact ingress tables keyed on fields of the headers the parser
        filled (the ingress's own parameters) only: right after parsing, a
        key on metadata would not yet hold what the table reads (a wasted
        lookup, and a second one at the apply), and the copy of the headers
        an inlined sub-control works on is not even initialised yet."""
        ingress = self.ctx.bound.ingress
        keys = table.decl.keys
        return (table.control is ingress and bool(keys)
                and all(k.match_kind == "exact" and _header_of(k.expr) is not None
                        and _root_decl(k.expr) in ingress.params for k in keys))

    def lookahead_name(self, table: TableInfo) -> str:
        return f"{c_ident(table.name)}_lookahead"

    def apply_name(self, table: TableInfo) -> str:
        return f"{c_ident(table.name)}_apply"

    def may_exit(self, table: TableInfo) -> bool:
        return any(self.actions.may_exit(r.action.decl) for r in table.actions)

    def emit_apply(self, table: TableInfo, sg) -> None:
        """``sg`` is a statement generator of the table's control (keys and
        action arguments are evaluated in the control's scope)."""
        w = CodeWriter()
        layout, size = key_layout(table)
        buffer = f"T4P4S_KEY_BUFFER_SIZE({max(size, 1)})"
        looks_ahead = self._looks_ahead(table)
        slot = f"s->{self.lookahead_name(table)}"
        if looks_ahead:
            self.lookahead.append(table)
            self.state_fields.append(
                f"struct {{ const struct t4p4s_entry *entry; uint8_t key[{buffer}]; }} "
                f"{self.lookahead_name(table)};  /* {table.name}, looked up per burst */")
            w.line(source_comment(table.decl.src))
            w.line("/* false: a header of the key is invalid, so there is nothing worth looking up */")
            w.line("static __rte_always_inline bool")
            with w.block(f"{self.lookahead_name(table)}_key(struct packet_state *s, uint8_t *key)"):
                for header in _key_headers(table, sg.exprs):
                    w.line(f"if (!{header}.valid)")
                    w.line("\treturn false;")
                self._build_key(layout, sg.exprs, "key", w)
                w.line("return true;")
            w.line()
        w.line(source_comment(table.decl.src))
        w.line("static __rte_always_inline const struct t4p4s_entry *")
        with w.block(f"{self.apply_name(table)}(struct packet_state *s)"):
            w.line(f"uint8_t key[{buffer}] = {{ 0 }};")
            self._build_key(layout, sg.exprs, "key", w)
            lookup = f"t4p4s_table_lookup(t4p4s_tables[{table.index}], key)"
            if looks_ahead:
                w.line(f"const struct t4p4s_entry *e = {slot}.entry;")
                # the key's own bytes (the padding is zero in both): a compare as
                # wide as the stores that built the key forwards from them
                w.line(f"if (e == NULL || memcmp(key, {slot}.key, {max(size, 1)}) != 0)")
                w.line(f"\te = {lookup};")
            else:
                w.line(f"const struct t4p4s_entry *e = {lookup};")
            dc = table.direct_counter
            if dc is not None:
                with w.block("if (e->hit)"):
                    w.line(f"t4p4s_counter_count(s->lc, t4p4s_counters[{dc.index}], "
                           f"e->counter_slot, rte_pktmbuf_pkt_len(s->m));")
            with w.block("switch (e->action)"):
                for i, ref in enumerate(table.actions):
                    decl = ref.action.decl
                    with w.block(f"case {i}:  /* {ref.action.name} */"):
                        struct = self.actions.data_struct(decl)
                        data = f"(const {struct} *)e->data" if struct else None
                        self.actions.call(sg, decl, ref.ref.args, data, w)
                        w.line("break;")
            w.line("return e;")
        w.line()
        self.functions.extend(w)

    @staticmethod
    def _build_key(layout, ex, key: str, w) -> None:
        for element, width, offset in layout:
            w.line(f"/* {key_field_name(element)}: {element.match_kind}, {width} bits, "
                   f"key bytes {offset}..{offset + storage_bytes(width) - 1} */")
            if width > 64:
                ptr, off = ex.wide_ref(element.expr)
                if width % 8:
                    w.line(f"{key}[{offset}] = 0;")
                w.line(f"t4p4s_copy_bits({key}, {offset * 8 + storage_bytes(width) * 8 - width}, "
                       f"{ptr}, {off}, {width});")
            else:
                v = ex.value(element.expr)
                if isinstance(element.expr.type, T.TypeBool):
                    v = f"(uint64_t){v}"
                w.line(f"t4p4s_store_be64({key} + {offset}, {storage_bytes(width)}, {v});")


def _header_of(expr):
    """The header expression a key field reads a field of, or None."""
    node = expr
    while isinstance(node, (ir.Member, ir.Slice)):
        if isinstance(node, ir.Member) and isinstance(node.expr.type, T.TypeHeader):
            return node.expr
        node = node.expr
    return None


def _root_decl(expr):
    """The declaration a path like ``a.b[i].c[7:0]`` starts from."""
    node = expr
    while isinstance(node, (ir.Member, ir.Slice, ir.ArrayIndex)):
        node = node.expr
    return node.decl if isinstance(node, ir.PathExpr) else None


def _key_headers(table: TableInfo, ex) -> list[str]:
    """The C storage of every header a key field reads, once each."""
    found = []
    for element in table.decl.keys:
        host = ex.locate(_header_of(element.expr)).c
        if host not in found:
            found.append(host)
    return found
