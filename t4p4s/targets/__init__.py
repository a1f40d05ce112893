"""Target profiles: checks of a bound program against what a hardware
target accepts, run after the mid end (``t4p4s check --target NAME``).

Each target is a subpackage with a ``check_program(p4_path,
include_dirs) -> report`` function; the report says whether the program
fits (``report.ok``) and how (``report.diagnostics``, ``report.to_json()``,
``report.render(console)``).
"""
from __future__ import annotations

TARGET_NAMES = ("netronome",)


def check_program(target: str, p4_path, include_dirs=()):
    if target == "netronome":
        from .netronome import check_program as check_netronome
        return check_netronome(p4_path, include_dirs)
    raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGET_NAMES)})")
