"""The Agilio CX profile check: a pass over the bound program (after the
mid end) and its resource catalog that reports, at the P4 source location,
what nfp4build would reject (errors) and what the profile cannot vouch
for (warnings). limits.py gives every limit with its source."""
from __future__ import annotations

from ...backend import resources as R
from ...backend.c.walk import walk
from ...diagnostics import DiagnosticSink
from ...ir import nodes as ir
from ...midend.v1model import V1ModelProgram
from . import limits
from .memory import ArrayEstimate, TableEstimate


def check(bound: V1ModelProgram, res: R.Resources, tables: list[TableEstimate],
          arrays: list[ArrayEstimate], sink: DiagnosticSink) -> None:
    _check_table_count(bound, res, sink)
    for info, estimate in zip(res.tables, tables):
        _check_table(info, estimate, sink)
    _check_extern_objects(bound, sink)
    for block in bound.blocks:
        _check_calls(block, sink)
    _check_memory(bound, tables, arrays, sink)


def _check_table_count(bound: V1ModelProgram, res: R.Resources, sink) -> None:
    if len(res.tables) > limits.MAX_TABLES:
        sink.error(res.tables[limits.MAX_TABLES].decl.src,
                   f"the program has {len(res.tables)} tables; the Agilio CX "
                   f"supports at most {limits.MAX_TABLES}")


def _check_table(info: R.TableInfo, estimate: TableEstimate, sink) -> None:
    decl = info.decl
    if decl.size is not None and decl.size > limits.MAX_TABLE_ENTRIES:
        sink.error(decl.src, f"table '{info.name}': size {decl.size:,} exceeds "
                   f"the Agilio CX limit of {limits.MAX_TABLE_ENTRIES:,} entries "
                   f"per table (split it over several tables)")
    if decl.size is None and decl.keys:
        sink.warning(decl.src, f"table '{info.name}' has no 'size': nfp4build "
                     f"gives it {limits.DEFAULT_TABLE_SIZE:,} entries "
                     f"(--nfirc_default_table_size), our DPDK runtime "
                     f"{R.DEFAULT_TABLE_SIZE:,}")
    for key in decl.keys:
        if key.match_kind not in limits.MATCH_KINDS:
            sink.error(key.src, f"table '{info.name}': match kind "
                       f"'{key.match_kind}' is not supported by the Agilio P4 "
                       f"SDK (supported: {', '.join(sorted(limits.MATCH_KINDS))})")
    if estimate.key_bits > limits.MAX_KEY_BITS:
        sink.warning(decl.src, f"table '{info.name}': key of {estimate.key_bits} "
                     f"bits is wider than {limits.MAX_KEY_BITS} bits, which the "
                     f"profile cannot vouch for on the Agilio CX")


def _check_extern_objects(bound: V1ModelProgram, sink) -> None:
    scopes = [bound.program.declarations] + [b.locals for b in bound.blocks]
    for decls in scopes:
        for decl in decls:
            if not isinstance(decl, ir.Instantiation):
                continue
            kind = R.extern_type_name(decl)
            if kind and decl.constructor is not None \
                    and kind not in limits.EXTERN_OBJECTS:
                sink.warning(decl.src, f"extern {kind} ('{decl.name}') is not "
                             f"known to be supported by the Agilio P4 SDK")


def _extern_function(call: ir.MethodCall) -> str:
    if call.kind != ir.CallKind.EXTERN_FUNCTION:
        return ""
    return getattr(call.callee, "name", "")


def _check_calls(block, sink) -> None:
    replications = []
    seen = set()
    for node in walk(block):
        if not isinstance(node, ir.MethodCall) or id(node) in seen:
            continue
        seen.add(id(node))
        name = _extern_function(node)
        if not name:
            continue
        if name in limits.EXTERN_FUNCTIONS_NEWER_THAN_SDK:
            sink.error(node.src, f"{name}() is not declared by the v1model.p4 "
                       f"of the Agilio P4 SDK (it is newer than the SDK)")
        elif name not in limits.EXTERN_FUNCTIONS:
            sink.warning(node.src, f"{name}() is not known to be supported by "
                         f"the Agilio P4 SDK")
        if name == "mark_to_drop" and node.args:
            sink.warning(node.src, "the Agilio P4 SDK's v1model.p4 declares "
                         "mark_to_drop() without arguments (Netronome's own "
                         "P4-16 examples call it so); nfp4build may reject "
                         "mark_to_drop(standard_metadata)")
        _check_algorithm(name, node, sink)
        if name in limits.REPLICATING_FUNCTIONS:
            replications.append(node)
    if len(replications) > 1 and isinstance(block, ir.ControlDecl):
        sink.warning(replications[1].src,
                     f"'{block.name}' has {len(replications)} replicating calls "
                     f"(clone, resubmit, recirculate); the Agilio CX performs "
                     f"one per pass, so at most one may run for a packet")


# The HashAlgorithm argument of each extern function that takes one.
_ALGORITHM_ARG = {"hash": 1, "verify_checksum": 3, "update_checksum": 3,
                  "verify_checksum_with_payload": 3,
                  "update_checksum_with_payload": 3}


def _check_algorithm(name: str, call: ir.MethodCall, sink) -> None:
    index = _ALGORITHM_ARG.get(name)
    if index is None or index >= len(call.args) or call.args[index] is None:
        return
    algo = call.args[index].value
    if isinstance(algo, ir.Member) and algo.name not in limits.HASH_ALGORITHMS:
        sink.warning(algo.src, f"{name}(): HashAlgorithm.{algo.name} is not known "
                     f"to be supported by the Agilio CX (known: "
                     f"{', '.join(sorted(limits.HASH_ALGORITHMS))})")


def _check_memory(bound, tables, arrays, sink) -> None:
    total = sum(t.total_bytes for t in tables) + sum(a.total_bytes for a in arrays)
    where = bound.main.src
    if total > limits.EMU_BYTES:
        sink.error(where, f"tables, registers and counters need an estimated "
                   f"{total:,} bytes; the Agilio CX's EMU holds "
                   f"{limits.EMU_BYTES:,}")
    elif total > limits.EMU_CACHE_BYTES:
        sink.warning(where, f"tables, registers and counters need an estimated "
                     f"{total:,} bytes, more than the {limits.EMU_CACHE_BYTES:,}-byte "
                     f"EMU cache: lookups will also go to DRAM")
