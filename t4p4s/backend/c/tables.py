"""Tables: key building and the apply function that looks the key up and
runs the entry's action (``<table>_apply(s)`` returns the entry, for
``.hit``/``.miss``/``action_run``)."""
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

    def apply_name(self, table: TableInfo) -> str:
        return f"{c_ident(table.name)}_apply"

    def may_exit(self, table: TableInfo) -> bool:
        return any(self.actions.may_exit(r.action.decl) for r in table.actions)

    def emit_apply(self, table: TableInfo, sg) -> None:
        """``sg`` is a statement generator of the table's control (keys and
        action arguments are evaluated in the control's scope)."""
        w = CodeWriter()
        ex = sg.exprs
        layout, size = key_layout(table)
        w.line(source_comment(table.decl.src))
        w.line("static __rte_always_inline const struct t4p4s_entry *")
        with w.block(f"{self.apply_name(table)}(struct packet_state *s)"):
            w.line(f"uint8_t key[{max(size, 1)}];")
            for key, width, offset in layout:
                w.line(f"/* {key_field_name(key)}: {key.match_kind}, {width} bits, "
                       f"key bytes {offset}..{offset + storage_bytes(width) - 1} */")
                if width > 64:
                    ptr, off = ex.wide_ref(key.expr)
                    if width % 8:
                        w.line(f"key[{offset}] = 0;")
                    w.line(f"t4p4s_copy_bits(key, {offset * 8 + storage_bytes(width) * 8 - width}, "
                           f"{ptr}, {off}, {width});")
                else:
                    v = ex.value(key.expr)
                    if isinstance(key.expr.type, T.TypeBool):
                        v = f"(uint64_t){v}"
                    w.line(f"t4p4s_store_be64(key + {offset}, {storage_bytes(width)}, {v});")
            w.line(f"const struct t4p4s_entry *e = t4p4s_table_lookup("
                   f"t4p4s_tables[{table.index}], key);")
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
