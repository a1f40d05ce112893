"""The Netronome Agilio CX profile of the NIC build (issue 5): does the
program fit the card, and how much of its memory would it take?

``check_program(p4_path)`` runs the front and mid end, then the profile
pass (checks.py) against the limits (limits.py) and the memory estimate
(memory.py); ``make nic-profile`` runs it on p4src/nic.p4, ``make
nfp4build`` runs it before the vendor's compiler. docs/netronome.md
explains all of it.
"""
from __future__ import annotations

from pathlib import Path

from ...backend import resources as resources_mod
from ...diagnostics import DiagnosticSink
from ...midend import v1model
from . import checks
from .memory import estimate_counter, estimate_register, estimate_table
from .report import ProfileReport


def check_program(p4_path, include_dirs=()) -> ProfileReport:
    from ...frontend import compile_frontend     # imported late: heavy (lark)

    program = compile_frontend(str(p4_path), tuple(include_dirs or ()))
    bound = v1model.bind(program)
    res = resources_mod.collect(bound)
    tables = [estimate_table(t) for t in res.tables]
    arrays = [estimate_register(r) for r in res.registers] + \
        [estimate_counter(c) for c in res.counters]
    sink = DiagnosticSink(limit=1000)
    checks.check(bound, res, tables, arrays, sink)
    return ProfileReport(Path(p4_path).name, tables, arrays, sink.diagnostics)
