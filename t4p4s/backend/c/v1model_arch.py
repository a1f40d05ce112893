"""v1model (bmv2 simple_switch) sequencing: the packet state,
``t4p4s_pipeline_process()`` and its burst form
``t4p4s_pipeline_process_burst()`` (parse a stage, look up the exact
ingress tables of all its packets at once, finish each packet in order).

parser -> verifyChecksum -> ingress -> I2E clone -> multicast if mcast_grp
is not 0, else drop if egress_spec is the drop port -> egress (egress_port =
egress_spec) -> E2E clone -> drop check -> computeChecksum -> deparser ->
t4p4s_send.

Multicast follows simple_switch: a packet whose mcast_grp is not 0 at the
end of ingress (mark_to_drop sets it to 0) is not sent to egress_spec; it
leaves as one copy per replica of its group, each through egress with
egress_port the replica's port, egress_rid its instance, instance_type 5
(replication) and no E2E clone request of ingress (simple_switch clears
them for replicas).  An unknown or empty group drops the packet.  Each
replica but the last is a deep copy of the mbuf (egress writes headers in
place, so replicas cannot share bytes) with its headers relocated into it;
the last replica is the packet itself, so a group of one copies nothing.

Clones follow simple_switch: an ingress-to-egress clone is the packet as
received, parsed again (metadata reset except the preserved field list,
instance_type 1), sent through egress to the session's port; an
egress-to-egress clone keeps the headers as egress left them (metadata
reset likewise, instance_type 2).  A clone is not cloned again.

Headers are written in place (headers.py), so the packet an I2E clone
starts from is not the received one: programs that clone I2E keep the
received bytes of each extracted header (the parser's snapshot) and put
them back into the clone.  Programs without clone calls carry no clone
code at all.
"""
from __future__ import annotations

from ...ir import nodes as ir
from ...ir import types as T
from .context import (DROP_PORT, INSTANCE_EGRESS_CLONE, INSTANCE_INGRESS_CLONE,
                      INSTANCE_REPLICATION)
from .emit import CodeWriter
from . import headers
from .externs import NO_FIELD_LIST, arg, callee_name
from .walk import walk


def _fields(t) -> list:
    return t.decl.fields if isinstance(t, T.TypeStruct) else []


def state_struct(ctx, extra_fields: list) -> CodeWriter:
    b = ctx.bound
    w = CodeWriter()
    w.line("/* Everything one packet carries through the pipeline. */")
    with w.block("struct clone_request", "};"):
        w.line("bool requested;")
        w.line("uint16_t field_list;   /* @field_list index to preserve, "
               f"{NO_FIELD_LIST:#x}: none */")
        w.line("uint32_t session;")
    w.line()
    with w.block("struct packet_state", "};"):
        w.line("struct t4p4s_lcore *lc;")
        w.line("struct rte_mbuf *m;")
        w.line("uint32_t payload_offset;   /* bytes of the packet the parser consumed */")
        w.line("bool exited;               /* an action ran `exit` */")
        w.line("struct clone_request clone_i2e, clone_e2e;")
        w.line(f"{ctx.ctypes.c_type(b.headers_type)} hdr;")
        w.line(f"{ctx.ctypes.c_type(b.metadata_type)} meta;")
        w.line(f"{ctx.ctypes.c_type(b.standard_metadata_type)} std;")
        for f in extra_fields:
            w.line(f)
        if ctx.snapshot_i2e:
            insts = _instances(ctx)
            n = sum(i.count for i in insts)
            nbytes = sum(i.count * i.size for i in insts)
            w.line("/* I2E clones are the packet as received, but the pipeline "
                   "writes headers in place:")
            w.line(" * the parser keeps the bytes of every header it extracts "
                   "(at[k]: packet offset of")
            w.line(" * header instance k, or UINT32_MAX) */")
            with w.block("struct", "} i2e_received;"):
                w.line(f"uint32_t at[{n}];")
                w.line(f"uint8_t bytes[{max(nbytes, 1)}];")
    w.line()
    return w


def _instances(ctx) -> list:
    seen, out = set(), []
    for inst, _ in ctx.header_instances.values():
        if inst.index not in seen:
            seen.add(inst.index)
            out.append(inst)
    return out


CLONE_CALLS = ("clone", "clone_preserving_field_list")


def clone_kinds(bound) -> frozenset:
    """The clone types ("I2E", "E2E") of the program's clone() and
    clone_preserving_field_list() calls (always compile-time constants)."""
    code = bound.blocks + [d for d in bound.program.declarations
                           if isinstance(d, (ir.ActionDecl, ir.FunctionDecl))]
    kinds = set()
    for n in (n for block in code for n in walk(block)):
        if isinstance(n, ir.MethodCall) and callee_name(n) in CLONE_CALLS:
            kind = arg(n, 0)
            if isinstance(kind, ir.Member):
                kinds.add(kind.name)
    return frozenset(kinds)


def uses_multicast(bound) -> bool:
    """Whether the program names standard_metadata's mcast_grp (any
    `.mcast_grp`: a false positive only costs the check after ingress)."""
    if "mcast_grp" not in {f.name for f in bound.standard_metadata_type.decl.fields}:
        return False
    code = bound.blocks + [d for d in bound.program.declarations
                           if isinstance(d, (ir.ActionDecl, ir.FunctionDecl))]
    return any(isinstance(n, ir.Member) and n.name == "mcast_grp"
               for block in code for n in walk(block))


def field_list_paths(t, path: str) -> dict:
    """@field_list(i, ...) annotated metadata fields: index -> C paths."""
    out: dict = {}
    for f in _fields(t):
        p = f"{path}.{f.name}"
        for a in f.annotations:
            if a.name == "field_list":
                for number in a.args:
                    v = number.value if isinstance(number, ir.IntLiteral) \
                        else int(str(number), 0)
                    out.setdefault(v, []).append(p)
        if isinstance(f.type, T.TypeStruct):
            for k, v in field_list_paths(f.type, p).items():
                out.setdefault(k, []).extend(v)
    return out


# Packet i + CELL_PREFETCH_DISTANCE's cells are prefetched while packet i
# runs: by then its entry, prefetched when the stage was looked up, is in
# the cache, and the cells have a few packets' time to arrive.
CELL_PREFETCH_DISTANCE = 8


def pipeline(ctx, parser, controls, deparser, lookahead=(), prefetch_cells=None,
             deparser_emits_every_header=False, shared_clone=None) -> CodeWriter:
    """`lookahead`: (packet_state slot, table index) of each table looked
    up per stage of a burst (tables.py); `prefetch_cells`: the function
    that prefetches the cells a packet's entries index (prefetch.py). With `deparser_emits_every_header`, an
    E2E clone copies the packet once the original is deparsed: the copy
    then has every header in place and its own deparser moves nothing.
    `shared_clone`: the code of `clone_shares_bytes()` (shared_clone.py)
    when E2E clones may be sent as the original's bytes instead."""
    b = ctx.bound
    w = CodeWriter()
    std_fields = {f.name for f in b.standard_metadata_type.decl.fields}

    # -- state reset ---------------------------------------------------------
    w.line("/* Headers invalid (on their scratch bytes: never a pointer into "
           "an earlier packet),")
    w.line(" * metadata zero (as bmv2), standard metadata of a fresh packet. */")
    w.line("static __rte_always_inline void")
    with w.block("packet_state_reset(struct packet_state *s)"):
        headers.init_storage("s->hdr", b.headers_type, w)
        w.line("memset(&s->meta, 0, sizeof(s->meta));")
        headers.init_storage("s->meta", b.metadata_type, w)
        w.line("memset(&s->std, 0, sizeof(s->std));")
        for kind in sorted(ctx.clone_kinds):
            w.line(f"s->clone_{kind.lower()}.requested = false;")
        if ctx.snapshot_i2e:
            w.line("memset(s->i2e_received.at, 0xff, sizeof(s->i2e_received.at));")
    w.line()

    # -- I2E clones: the received bytes back into the copy ---------------------
    if ctx.snapshot_i2e:
        w.line("/* Puts the bytes of the headers the parser extracted back as "
               "received. */")
        w.line("static void")
        with w.block("restore_received(const struct packet_state *s, struct rte_mbuf *copy)"):
            w.line("uint8_t *pkt = rte_pktmbuf_mtod(copy, uint8_t *);")
            for inst in _instances(ctx):
                with w.block(f"for (unsigned i = 0; i < {inst.count}; i++)"):
                    w.line(f"uint32_t at = s->i2e_received.at[{inst.index} + i];")
                    w.line(f"if (at != UINT32_MAX && at + {inst.size} <= rte_pktmbuf_data_len(copy))")
                    w.line(f"\tmemcpy(pkt + at, s->i2e_received.bytes + {inst.offset} + "
                           f"{inst.size} * i, {inst.size});")
        w.line()

    # -- field lists preserved by clones ------------------------------------
    lists = field_list_paths(b.metadata_type, "meta")
    w.line("static __rte_always_inline void")
    with w.block("preserve_field_list(struct packet_state *dst, "
                 "const struct packet_state *src, uint16_t index)"):
        if lists:
            with w.block("switch (index)"):
                for idx, paths in sorted(lists.items()):
                    w.line(f"case {idx}:")
                    for p in paths:
                        w.line(f"\tdst->{p} = src->{p};")
                    w.line("\tbreak;")
        else:
            w.line("(void)dst; (void)src; (void)index;")
    w.line()

    vc, ig, eg, cc = controls
    # -- egress and out -----------------------------------------------------
    if ctx.clone_kinds:
        w.line("static void clone_to_egress(struct packet_state *s, struct rte_mbuf *copy,")
        w.line("\t\t\t    const struct clone_request *req, uint32_t instance_type,")
        w.line("\t\t\t    bool deparsed, uint32_t port, uint32_t truncate);")
        w.line()
    if "E2E" in ctx.clone_kinds:
        if shared_clone is not None:
            w.extend(shared_clone)
        w.line("/* An E2E clone as a copy of the packet, sent through egress again. */")
        w.line("static __rte_always_inline void")
        with w.block("copy_clone_e2e(struct packet_state *s, uint32_t port, uint32_t truncate)"):
            if deparser_emits_every_header:
                w.line("/* deparsing does not change header values, and computeChecksum "
                       "runs on them where they are */")
                w.line(f"bool deparsed = {deparser}(s);")
            else:
                w.line("bool deparsed = false;")
            w.line("struct rte_mbuf *copy = t4p4s_clone_copy(s->lc, s->m);")
            w.line("if (copy != NULL)")
            w.line(f"\tclone_to_egress(s, copy, &s->clone_e2e, {INSTANCE_EGRESS_CLONE}, "
                   "deparsed, port, truncate);")
        w.line()
    w.line("/* egress, computeChecksum, deparser, transmit; `is_clone` stops "
           "clones of clones. */")
    w.line("static __rte_always_inline void")
    with w.block("egress_and_send(struct packet_state *s, bool is_clone)"):
        w.line("s->std.egress_port = s->std.egress_spec;")
        w.line(f"{eg}(s);")
        if "E2E" in ctx.clone_kinds:
            if shared_clone is not None:
                w.line("bool clone_shared = false;    /* sent as the original's bytes (shared_clone.py) */")
                w.line("uint32_t clone_port = 0;")
            with w.block("if (unlikely(s->clone_e2e.requested) && !is_clone)"):
                w.line("uint32_t port, truncate;")
                with w.block("if (t4p4s_clone_session(s->lc, s->clone_e2e.session, &port, &truncate))"):
                    if shared_clone is not None:
                        with w.block(f"if (truncate == 0 && s->std.egress_spec != {DROP_PORT} && "
                                     "clone_shares_bytes(s))", closer="} else {"):
                            w.line("clone_shared = true;")
                            w.line("clone_port = port;")
                        with w.indented():
                            w.line("copy_clone_e2e(s, port, truncate);")
                        w.line("}")
                    else:
                        w.line("copy_clone_e2e(s, port, truncate);")
        else:
            w.line("(void)is_clone;     /* the program makes no E2E clones */")
        with w.block(f"if (unlikely(s->std.egress_spec == {DROP_PORT}))"):
            w.line("t4p4s_drop(s->lc, s->m, T4P4S_DROP_PIPELINE);")
            w.line("return;")
        w.line(f"{cc}(s);")
        with w.block(f"if (unlikely(!{deparser}(s)))"):
            if shared_clone is not None:
                w.line("if (clone_shared)")
                w.line("\tt4p4s_drop(s->lc, t4p4s_clone_share(s->m), T4P4S_DROP_NO_ROOM);")
            w.line("t4p4s_drop(s->lc, s->m, T4P4S_DROP_NO_ROOM);")
            w.line("return;")
        if shared_clone is not None:
            w.line("if (clone_shared)")
            w.line("\tt4p4s_send(s->lc, t4p4s_clone_share(s->m), clone_port);")
        w.line("t4p4s_send(s->lc, s->m, s->std.egress_port);")
    w.line()

    if ctx.clone_kinds:
        _clone_to_egress(ctx, parser, std_fields, w)
    if ctx.multicast:
        _multicast(ctx, std_fields, w)

    # -- the pipeline -----------------------------------------------------------
    w.line("/* A fresh packet up to the end of the parser and verifyChecksum. */")
    w.line("static __rte_always_inline void")
    with w.block("packet_begin(struct packet_state *s, struct t4p4s_lcore *lc, "
                 "struct rte_mbuf *m, uint16_t in_port)"):
        w.line("s->lc = lc;")
        w.line("s->m = m;")
        w.line("s->exited = false;")
        w.line("packet_state_reset(s);")
        for name, _ in lookahead:
            w.line(f"s->{name}.entry = NULL;")
        w.line("s->std.ingress_port = in_port;")
        if "packet_length" in std_fields:
            w.line("s->std.packet_length = rte_pktmbuf_pkt_len(m);")
        w.line(f"{parser}(s);")
        w.line(f"{vc}(s);")
    w.line()
    w.line("/* Ingress to transmission. */")
    w.line("static __rte_always_inline void")
    with w.block("packet_finish(struct packet_state *s)"):
        w.line(f"{ig}(s);")
        if ctx.snapshot_i2e:
            with w.block("if (unlikely(s->clone_i2e.requested))"):
                w.line("/* the mbuf has the received layout (the deparser has not "
                       "run); its header bytes come back from the parser's snapshot */")
                w.line("uint32_t port, truncate;")
                w.line("struct rte_mbuf *copy;")
                with w.block("if (t4p4s_clone_session(s->lc, s->clone_i2e.session, &port, &truncate) && "
                             "(copy = t4p4s_clone_copy(s->lc, s->m)) != NULL)"):
                    w.line("restore_received(s, copy);")
                    w.line(f"clone_to_egress(s, copy, &s->clone_i2e, {INSTANCE_INGRESS_CLONE}, "
                           "false, port, truncate);")
        if ctx.multicast:
            with w.block("if (unlikely(s->std.mcast_grp != 0))"):
                w.line("multicast(s);")
                w.line("return;")
        with w.block(f"if (unlikely(s->std.egress_spec == {DROP_PORT}))"):
            w.line("t4p4s_drop(s->lc, s->m, T4P4S_DROP_PIPELINE);")
            w.line("return;")
        w.line("egress_and_send(s, false);")
    w.line()
    with w.block("void\nt4p4s_pipeline_process(struct t4p4s_lcore *lc, "
                 "struct rte_mbuf *m, uint16_t in_port)"):
        w.line("struct packet_state s;")
        w.line("packet_begin(&s, lc, m, in_port);")
        w.line("packet_finish(&s);")
    w.line()
    if prefetch_cells is not None:
        w.extend(prefetch_cells)
    w.line("/* Parse a stage of packets, look up their exact ingress tables together, "
           "finish each. */")
    with w.block("void\nt4p4s_pipeline_process_burst(struct t4p4s_lcore *lc, "
                 "struct rte_mbuf **pkts, unsigned n, uint16_t in_port)"):
        if not lookahead:
            w.line("/* no table to look up ahead: nothing to gain from stages */")
            w.line("for (unsigned i = 0; i < n; i++)")
            w.line("\tt4p4s_pipeline_process(lc, pkts[i], in_port);")
            return w
        w.line("struct packet_state s[T4P4S_STAGE_BURST];")
        with w.block("for (unsigned first = 0; first < n; first += T4P4S_STAGE_BURST)"):
            w.line("unsigned count = RTE_MIN(n - first, (unsigned)T4P4S_STAGE_BURST);")
            w.line("for (unsigned i = 0; i < count; i++)")
            w.line("\tpacket_begin(&s[i], lc, pkts[first + i], in_port);")
            for name, index in lookahead:
                with w.block(""):
                    w.line("const uint8_t *keys[T4P4S_STAGE_BURST];")
                    w.line("const struct t4p4s_entry *found[T4P4S_STAGE_BURST];")
                    w.line("struct packet_state *of[T4P4S_STAGE_BURST];")
                    w.line("unsigned k = 0;")
                    with w.block("for (unsigned i = 0; i < count; i++)"):
                        w.line(f"memset(s[i].{name}.key, 0, sizeof(s[i].{name}.key));")
                        with w.block(f"if ({name}_key(&s[i], s[i].{name}.key))"):
                            w.line(f"keys[k] = s[i].{name}.key;")
                            w.line("of[k++] = &s[i];")
                    w.line(f"t4p4s_table_lookup_burst(t4p4s_tables[{index}], keys, k, found);")
                    w.line("for (unsigned j = 0; j < k; j++)")
                    w.line(f"\tof[j]->{name}.entry = found[j];")
            if prefetch_cells is None:
                w.line("for (unsigned i = 0; i < count; i++)")
                w.line("\tpacket_finish(&s[i]);")
            else:
                w.line(f"for (unsigned i = 0; i < count && i < {CELL_PREFETCH_DISTANCE}; i++)")
                w.line("\tprefetch_cells(lc, &s[i]);")
                with w.block("for (unsigned i = 0; i < count; i++)"):
                    w.line(f"if (i + {CELL_PREFETCH_DISTANCE} < count)")
                    w.line(f"\tprefetch_cells(lc, &s[i + {CELL_PREFETCH_DISTANCE}]);")
                    w.line("packet_finish(&s[i]);")
    return w


def _clone_to_egress(ctx, parser: str, std_fields: set, w) -> None:
    b = ctx.bound
    w.line("/* A clone goes through egress to its session's port; rare, so "
           "kept out of line. */")
    w.line("static __rte_noinline void")
    w.line("clone_to_egress(struct packet_state *s, struct rte_mbuf *copy,")
    w.line("\t\tconst struct clone_request *req, uint32_t instance_type, bool deparsed,")
    w.line("\t\tuint32_t port, uint32_t truncate)")
    with w.block(""):
        w.line("struct packet_state c;")
        w.line("c.lc = s->lc;")
        w.line("c.m = copy;")
        w.line("c.exited = false;")
        w.line("packet_state_reset(&c);")
        w.line("preserve_field_list(&c, s, req->field_list);")
        if "instance_type" in std_fields:
            w.line("c.std.instance_type = instance_type;")
        for name in ("ingress_port", "packet_length"):
            if name in std_fields:
                w.line(f"c.std.{name} = s->std.{name};")
        with w.block(f"if (instance_type == {INSTANCE_INGRESS_CLONE})"):
            w.line("/* the packet as received, parsed again (as simple_switch) */")
            w.line(f"{parser}(&c);")
        with w.block("else if (deparsed)"):
            w.line("/* headers as egress left them, all in s->m: the same offsets in the copy */")
            w.line("const uint8_t *from = rte_pktmbuf_mtod(s->m, const uint8_t *);")
            w.line("uint8_t *to = rte_pktmbuf_mtod(copy, uint8_t *);")
            headers.rebase("c.hdr", "s->hdr", b.headers_type, "to", "from", w)
            w.line("c.payload_offset = s->payload_offset;")
        w.line("else {")
        with w.indented():
            w.line("/* headers as egress left them: s's point into s->m, so copy bytes */")
            headers.copy("c.hdr", "s->hdr", b.headers_type, ctx.ctypes.header_size, w)
            w.line("c.payload_offset = s->payload_offset;")
        w.line("}")
        w.line("c.std.egress_spec = port;")
        with w.block("if (truncate != 0 && rte_pktmbuf_pkt_len(copy) > truncate)"):
            w.line("t4p4s_truncate(copy, truncate);")
            w.line("if (c.payload_offset > truncate) c.payload_offset = truncate;")
        w.line("egress_and_send(&c, true);")
    w.line()


def _multicast(ctx, std_fields: set, w) -> None:
    b = ctx.bound
    w.line("/* One replica of a multicast packet through egress. */")
    w.line("static __rte_always_inline void")
    with w.block("replica_to_egress(struct packet_state *r, "
                 "const struct t4p4s_mcast_replica *replica)"):
        w.line("r->std.egress_spec = replica->port;")
        if "egress_rid" in std_fields:
            w.line("r->std.egress_rid = replica->rid;")
        if "instance_type" in std_fields:
            w.line(f"r->std.instance_type = {INSTANCE_REPLICATION};")
        if "E2E" in ctx.clone_kinds:
            w.line("r->clone_e2e.requested = false;   /* as simple_switch's replicas */")
        w.line("egress_and_send(r, false);")
    w.line()
    w.line("/* The packet replication engine: a copy per replica of group "
           "mcast_grp, the last one")
    w.line(" * the packet itself; rare, so kept out of line. */")
    w.line("static __rte_noinline void")
    with w.block("multicast(struct packet_state *s)"):
        w.line("const struct t4p4s_mcast_group *g = t4p4s_mcast_group(s->lc, s->std.mcast_grp);")
        with w.block("if (unlikely(g == NULL || g->n_replicas == 0))"):
            w.line("t4p4s_drop(s->lc, s->m, g == NULL ? T4P4S_DROP_MCAST_NO_GROUP "
                   ": T4P4S_DROP_MCAST_EMPTY_GROUP);")
            w.line("return;")
        w.line("uint32_t last = g->n_replicas - 1;")
        with w.block("for (uint32_t i = 0; i < last; i++)"):
            w.line("/* copied from s->m before any replica's egress ran on it */")
            w.line("struct rte_mbuf *copy = t4p4s_clone_copy(s->lc, s->m);")
            w.line("if (unlikely(copy == NULL))")
            w.line("	continue;    /* counted as clone_failed */")
            w.line("struct packet_state r = *s;")
            w.line("r.m = copy;")
            w.line("const uint8_t *from = rte_pktmbuf_mtod(s->m, const uint8_t *);")
            w.line("uint8_t *to = rte_pktmbuf_mtod(copy, uint8_t *);")
            w.line("(void)from; (void)to;")
            headers.relocate("r.hdr", "s->hdr", b.headers_type, "to", "from", w)
            headers.relocate("r.meta", "s->meta", b.metadata_type, "to", "from", w)
            w.line("replica_to_egress(&r, &g->replicas[i]);")
        w.line("replica_to_egress(s, &g->replicas[last]);")
    w.line()
