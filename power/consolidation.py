"""The core consolidation policy (issue 15 item 7) that the sidecar holds:
whether the controller may fold the offloaded DRBs onto fewer hosts at low
load (so the freed hosts' lcores sleep deep) and spread them again when
load rises, and the thresholds it does that by.

The sidecar only keeps it (in memory: set at start by --consolidate and
--consolidate-thresholds, then by SetConsolidation) and answers it; the
controller's `gnbctl run` reads it with the telemetry and rewrites the
NIC's vf_bucket. One set of rules checks the start options and every
SetConsolidation: a change is taken whole or not at all."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

HOLD_S_MAX = 3600
# a NIC has 64 VF buckets (controller/offload.py VF_BUCKETS): more hosts
# than that could not each keep one
MIN_HOSTS_MAX = 64


@dataclass(frozen=True)
class Thresholds:
    consolidate_below: float = 0.5   # fold while the work fits fewer hosts at this fill
    spread_above: float = 0.8        # spread at once when the active hosts are busier
    hold_s: int = 3                  # folding waits until its condition held this long
    min_hosts: int = 1               # never fewer hosts per NIC


FIELDS = tuple(f.name for f in dataclasses.fields(Thresholds))
DEFAULTS = Thresholds()
_FILL_RULE = "0 < consolidate_below < spread_above <= 1"


def _problem(name: str, t: Thresholds) -> str | None:
    """What breaks the rules in field `name` of `t` (None: nothing). The
    comparisons are written so that NaN fails them."""
    value = getattr(t, name)
    if name == "consolidate_below" and not 0 < value < t.spread_above:
        return f"consolidate_below {value:g}: must be {_FILL_RULE} (spread_above is " \
               f"{t.spread_above:g})"
    if name == "spread_above" and not t.consolidate_below < value <= 1:
        return f"spread_above {value:g}: must be {_FILL_RULE} (consolidate_below is " \
               f"{t.consolidate_below:g})"
    if name == "hold_s" and not 1 <= value <= HOLD_S_MAX:
        return f"hold_s {value}: must be 1 <= hold_s <= {HOLD_S_MAX} (seconds)"
    if name == "min_hosts" and not 1 <= value <= MIN_HOSTS_MAX:
        return f"min_hosts {value}: must be 1 <= min_hosts <= {MIN_HOSTS_MAX}"
    return None


def checked(base: Thresholds, changes: dict) -> Thresholds:
    """`base` with `changes` ({field: value}) applied, if the result keeps
    every rule; else ValueError naming a field (a changed one first, so the
    message is about what the caller gave) and its rule."""
    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise ValueError(f"no consolidation threshold {unknown[0]!r} (they are "
                         f"{', '.join(FIELDS)})")
    result = dataclasses.replace(base, **changes)
    for name in [*changes, *(f for f in FIELDS if f not in changes)]:
        problem = _problem(name, result)
        if problem:
            raise ValueError(problem)
    return result


def parse_thresholds(text: str) -> dict:
    """`consolidate_below=0.5,spread_above=0.8,hold_s=3,min_hosts=1` (any of
    them) as {field: value}; ValueError says what is wrong. The rules are
    checked() when the values are applied."""
    changes: dict = {}
    for item in text.split(","):
        name, sep, value = item.strip().partition("=")
        if not sep or not name or not value:
            raise ValueError(f"{item.strip()!r}: give NAME=VALUE (names: {', '.join(FIELDS)})")
        if name not in FIELDS:
            raise ValueError(f"no consolidation threshold {name!r} (they are "
                             f"{', '.join(FIELDS)})")
        if name in changes:
            raise ValueError(f"{name} is given twice")
        kind = type(getattr(DEFAULTS, name))
        try:
            changes[name] = kind(value)
        except ValueError:
            raise ValueError(f"{name} {value!r}: not "
                             f"{'an integer' if kind is int else 'a number'}") from None
    return changes


def parse_switch(text: str) -> bool:
    """--consolidate's `on` or `off`."""
    if text not in ("on", "off"):
        raise ValueError(f"--consolidate {text!r}: give on or off")
    return text == "on"


class Policy:
    """The policy in force: whether consolidation is on, its thresholds,
    and when it last changed (CLOCK_REALTIME ns; the start until a Set)."""

    def __init__(self, enabled: bool = False, thresholds: Thresholds = DEFAULTS):
        checked(thresholds, {})
        self.enabled = enabled
        self.thresholds = thresholds
        self.changed_ns = time.time_ns()

    def as_dict(self) -> dict:
        """Consolidation's fields."""
        return {"enabled": self.enabled, "thresholds": dataclasses.asdict(self.thresholds),
                "changed_ns": self.changed_ns}

    def set(self, changes: dict) -> dict:
        """Applies `changes` ({"enabled"?, threshold fields?}) whole, or
        raises ValueError and changes nothing; the policy afterwards."""
        if not changes:
            raise ValueError("no consolidation field given (enabled, "
                             f"{', '.join(FIELDS)})")
        thresholds = checked(self.thresholds,
                             {k: v for k, v in changes.items() if k != "enabled"})
        self.enabled = bool(changes.get("enabled", self.enabled))
        self.thresholds = thresholds
        self.changed_ns = time.time_ns()
        return self.as_dict()

    def describe(self) -> str:
        t = self.thresholds
        return (f"consolidation {'on' if self.enabled else 'off'} (consolidate_below "
                f"{t.consolidate_below:g}, spread_above {t.spread_above:g}, hold_s "
                f"{t.hold_s}, min_hosts {t.min_hosts})")
