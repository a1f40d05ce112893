"""v1model extern functions and extern object methods in C.

Packet-level methods (``extract``/``lookahead``/``advance`` in parsers,
``emit`` in deparsers) belong to ``parser.py`` and ``controls.py``; this
module covers everything a v1model control (or parser) may call.
"""
from __future__ import annotations

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from ..resources import CounterInfo, RegisterInfo
from .emit import CodeWriter
from .expressions import Bits, Host, c_int, width_of
from .types import is_wide, storage_bytes

NO_FIELD_LIST = 0xFFFF

_HASH_ALGORITHMS = {
    "crc32": "T4P4S_HASH_CRC32", "crc32_custom": "T4P4S_HASH_CRC32_CUSTOM",
    "crc16": "T4P4S_HASH_CRC16", "crc16_custom": "T4P4S_HASH_CRC16_CUSTOM",
    "random": "T4P4S_HASH_RANDOM", "identity": "T4P4S_HASH_IDENTITY",
    "csum16": "T4P4S_HASH_CSUM16", "xor16": "T4P4S_HASH_XOR16",
}

_UNSUPPORTED = {
    "resubmit", "resubmit_preserving_field_list", "recirculate",
    "recirculate_preserving_field_list", "digest", "truncate", "assert",
    "assume", "clone3", "verify_checksum_with_payload",
    "update_checksum_with_payload", "execute_meter", "get",
}


def callee_name(c: ir.MethodCall) -> str:
    if c.callee is not None and getattr(c.callee, "name", None):
        return c.callee.name
    t = c.target
    return t.name if isinstance(t, (ir.PathExpr, ir.Member)) else "?"


def arg(c: ir.MethodCall, i: int):
    return c.args[i].value if i < len(c.args) and c.args[i] is not None else None


def extern_call(sg, c: ir.MethodCall, w: CodeWriter) -> None:
    name = callee_name(c)
    if name in _UNSUPPORTED:
        raise CompileError.at(c.src, f"unsupported: extern '{name}'")
    if c.kind == ir.CallKind.EXTERN_METHOD:
        _method(sg, c, name, w)
        return
    handler = _FUNCTIONS.get(name)
    if handler is None:
        raise CompileError.at(c.src, f"unsupported: extern function '{name}'")
    handler(sg, c, w)


# ---- extern objects ------------------------------------------------------

def _method(sg, c: ir.MethodCall, name: str, w) -> None:
    inst = getattr(c.target.expr, "decl", None) if isinstance(c.target, ir.Member) else None
    info = sg.ctx.resources.of(inst)
    ex = sg.exprs
    if isinstance(info, RegisterInfo):
        ref = f"t4p4s_registers[{info.index}]"
        if name == "read":
            ex.store_value(ex.locate(arg(c, 0)),
                           f"t4p4s_register_read({ref}, {ex.value(arg(c, 1))})", w)
            return
        if name == "write":
            w.line(f"t4p4s_register_write({ref}, {ex.value(arg(c, 0))}, {ex.value(arg(c, 1))});")
            return
    if isinstance(info, CounterInfo) and name == "count":
        if info.direct:
            w.line(f"/* {info.name}: direct counters count on table hits */")
            return
        w.line(f"t4p4s_counter_count(s->lc, t4p4s_counters[{info.index}], "
               f"{ex.value(arg(c, 0))}, rte_pktmbuf_pkt_len(s->m));")
        return
    raise CompileError.at(c.src, f"unsupported: method '{name}' of "
                          f"'{getattr(inst, 'name', '?')}' here")


# ---- extern functions ----------------------------------------------------

def _mark_to_drop(sg, c, w) -> None:
    std = sg.exprs.locate(arg(c, 0)).c if c.args else "s->std"
    w.line(f"{std}.egress_spec = 511;  /* the v1model drop port */")
    if _has_field(sg.ctx.bound.standard_metadata_type, "mcast_grp"):
        w.line(f"{std}.mcast_grp = 0;")


def _clone(sg, c, w) -> None:
    kind = _enum_member(arg(c, 0))
    if kind not in ("I2E", "E2E"):
        raise CompileError.at(c.src, "the clone type must be CloneType.I2E or CloneType.E2E")
    field_list = NO_FIELD_LIST
    if callee_name(c) == "clone_preserving_field_list":
        idx = arg(c, 2)
        if not isinstance(idx, ir.IntLiteral):
            raise CompileError.at(c.src, "the field list index must be a constant")
        field_list = idx.value
    p = f"s->clone_{kind.lower()}"
    w.line(f"{p}.requested = true;")
    w.line(f"{p}.session = (uint32_t){sg.exprs.value(arg(c, 1))};")
    w.line(f"{p}.field_list = {field_list};")


def _hash(sg, c, w) -> None:
    result, algo, base, data, limit = (arg(c, i) for i in range(5))
    h = pack_and_hash(sg, data, _algorithm(algo), w)
    ex = sg.exprs
    rw = width_of(result.type, result.src)
    b, m = ex.value(base), ex.value(limit)
    ex.store_value(ex.locate(result),
                   f"t4p4s_wrap(({m}) >= 1 ? ({b}) + {h} % ({m}) : ({b}), {rw})", w)


def _verify_checksum(sg, c, w) -> None:
    cond, data, checksum, algo = (arg(c, i) for i in range(4))
    ex = sg.exprs
    with w.block(f"if ({ex.value(cond)})"):
        h = pack_and_hash(sg, data, _algorithm(algo), w)
        cw = width_of(checksum.type, checksum.src)
        with w.block(f"if (t4p4s_wrap({h}, {cw}) != {ex.value(checksum)})"):
            w.line("s->std.checksum_error = 1;")


def _update_checksum(sg, c, w) -> None:
    cond, data, checksum, algo = (arg(c, i) for i in range(4))
    ex = sg.exprs
    with w.block(f"if ({ex.value(cond)})"):
        h = pack_and_hash(sg, data, _algorithm(algo), w)
        cw = width_of(checksum.type, checksum.src)
        ex.store_value(ex.locate(checksum), f"t4p4s_wrap({h}, {cw})", w)


def _random(sg, c, w) -> None:
    result, lo, hi = (arg(c, i) for i in range(3))
    ex = sg.exprs
    ex.store_value(ex.locate(result),
                   f"t4p4s_random({ex.value(lo)}, {ex.value(hi)})", w)


def _log_msg(sg, c, w) -> None:
    msg = arg(c, 0)
    if not isinstance(msg, ir.StringLiteral):
        raise CompileError.at(c.src, "log_msg needs a string literal")
    data = arg(c, 1)
    values = []
    if data is not None:
        values = data.elements if isinstance(data, ir.ListExpr) else [data]
    fmt = msg.value.replace("\\", "\\\\").replace('"', '\\"') \
        .replace("%", "%%").replace("\n", "\\n")
    parts = fmt.split("{}")
    if len(parts) - 1 != len(values):
        raise CompileError.at(c.src, f"log_msg: {len(parts) - 1} '{{}}' for "
                              f"{len(values)} values")
    fmt = '%" PRIu64 "'.join(parts)
    args = "".join(f", (uint64_t){sg.exprs.value(v)}" for v in values)
    w.line(f't4p4s_log_msg(s->lc, "{fmt}"{args});')


_FUNCTIONS = {
    "mark_to_drop": _mark_to_drop,
    "clone": _clone,
    "clone_preserving_field_list": _clone,
    "hash": _hash,
    "verify_checksum": _verify_checksum,
    "update_checksum": _update_checksum,
    "random": _random,
    "log_msg": _log_msg,
}


# ---- bit-packed field lists ----------------------------------------------

def leaves(sg, e: ir.Expression) -> list:
    """The bit strings of a hash/checksum data argument, in order: a list
    ``{a, b}``, a struct or header (its fields), or one value."""
    if isinstance(e, ir.ListExpr):
        return [x for el in e.elements for x in leaves(sg, el)]
    t = e.type
    if isinstance(t, (T.TypeStruct, T.TypeHeader)):
        return [x for f in t.decl.fields
                for x in leaves(sg, ir.Member(e, f.name, type=f.type, src=e.src))]
    return [e]


def pack_and_hash(sg, data: ir.Expression, algorithm: str, w) -> str:
    """Writes ``data`` bit-packed into a fresh buffer and returns the C
    expression of its hash (or csum16)."""
    items = leaves(sg, data)
    nbits = sum(width_of(x.type, x.src) for x in items)
    buf = sg.ctx.temp("packed")
    # zeroed: t4p4s_set_bits merges into the bytes already there
    w.line(f"uint8_t {buf}[{max(storage_bytes(nbits), 1)}] = {{ 0 }};")
    offset = 0
    for x in items:
        width = width_of(x.type, x.src)
        if is_wide(x.type):
            ptr, off = sg.exprs.wide_ref(x)
            w.line(f"t4p4s_copy_bits({buf}, {offset}, {ptr}, {off}, {width});")
        else:
            write_bits(w, buf, offset, width, sg.exprs.value(x)
                       if not isinstance(x.type, T.TypeBool) else f"(uint64_t){sg.exprs.value(x)}")
        offset += width
    if algorithm == "T4P4S_HASH_CSUM16":
        return f"(uint64_t)t4p4s_csum16({buf}, {nbits})"
    return f"t4p4s_hash({algorithm}, {buf}, {nbits})"


def write_bits(w, buf: str, offset: int, width: int, value_c: str) -> None:
    """``t4p4s_set_bits`` limited to 64 bits spanned: split when needed."""
    if offset % 8 + width <= 64:
        w.line(f"t4p4s_set_bits({buf}, {offset}, {width}, {value_c});")
        return
    v = f"v_{offset}"
    w.line(f"{{ uint64_t {v} = {value_c};")
    w.line(f"  t4p4s_set_bits({buf}, {offset}, {width - 32}, {v} >> 32);")
    w.line(f"  t4p4s_set_bits({buf}, {offset + width - 32}, 32, {v} & 0xffffffffu); }}")


def _algorithm(e) -> str:
    name = _enum_member(e)
    if name not in _HASH_ALGORITHMS:
        raise CompileError.at(getattr(e, "src", None),
                              "the hash algorithm must be a HashAlgorithm constant")
    return _HASH_ALGORITHMS[name]


def _enum_member(e):
    return e.name if isinstance(e, ir.Member) else None


def _has_field(t, name: str) -> bool:
    return any(f.name == name for f in t.decl.fields)
