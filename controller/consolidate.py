"""Core consolidation (issue 15 item 7): at low load the offloaded DRBs
are folded onto fewer hosts, so the freed hosts' lcores find their rx
queues empty and their governors sleep; when load rises they are spread
again. Paper 002's lesson: an idle core in a deep C-state saves far more
than a busy one at a lower frequency.

The policy (on/off and its thresholds) is the power sidecar's state
(power/proto/power.proto, `gnbctl power consolidate`); the load is the
sidecar's telemetry (each host lcore's `work_ns`: time in rounds that
received frames, whatever the governor mode); `gnbctl run` decides here
once per CONSOLIDATION_PERIOD_S and writes the NIC's `vf_bucket`
(controller/offload.py's `vf_assignment(..., active=...)`). Moving a VF
bucket is a live shift between hosts: the NIC numbers every frame when it
comes back, so SNs stay continuous, and frames already inside the old
host come back through it.

The rule, per NIC (hosts in topology order, only live ones count):
- work W = the sum of the hosts' lcores' work shares (1.0 = one lcore
  busy the whole time), capacity C(k) = the lcores of the first k hosts;
- spread at once when W > spread_above * C(active): to the fewest hosts k
  with W <= consolidate_below * C(k) (all hosts if none is enough): a
  rising load must not wait, or the one host left overflows its rx ring;
- fold when the fewest hosts k with W <= consolidate_below * C(k) (at
  least min_hosts) is below the active count and has been for hold_s:
  a dip must not fold hosts that the next second needs again.
Spreading to where W fits at consolidate_below, not spread_above, is the
hysteresis: after a spread the hosts sit below consolidate_below, and a
fold needs the load to fall by one host's share first.

Where the load cannot be read (no sidecar, a host without telemetry) the
hosts are spread: a wrong fold can lose frames, a wrong spread only
costs power.

A freed host's lcores must sleep for the fold to save anything: one that
polls in `busy` burns its core with no traffic as with some, and one that
wakes every 100 us (`nap`) or within its latency budget (`proportional`)
pays a wakeup each time. So the watcher sets them to SLEEPING_MODE through
the sidecar once their buckets have left, and puts back the modes they had
before it gives them buckets again (waiting WAKE_S, so that an lcore
asleep in its 10 ms re-check has taken the change before traffic comes).
Lcores already in adaptive and DPDK's pmgmt modes (start only) are left
alone."""
from __future__ import annotations

from dataclasses import dataclass, field

CONSOLIDATION_PERIOD_S = 1.0
SLEEPING_MODE = "adaptive"          # Algorithm 1: an empty queue sleeps 10 ms at a time
# the modes a freed lcore leaves for SLEEPING_MODE: on an empty queue busy
# polls, nap wakes every 100 us and proportional within its latency budget
# (50 us), each wakeup ~20 us of CPU on a VM (measured: a freed host in
# proportional kept 15% of a CPU); adaptive sleeps 10 ms at a time
SWITCHED_MODES = ("busy", "nap", "proportional")
WAKE_S = 0.02                       # two of the governor's 10 ms sleep re-checks
DEFAULTS = {"consolidate_below": 0.5, "spread_above": 0.8, "hold_s": 3, "min_hosts": 1}


@dataclass(frozen=True)
class Policy:
    enabled: bool = False
    consolidate_below: float = DEFAULTS["consolidate_below"]
    spread_above: float = DEFAULTS["spread_above"]
    hold_s: float = DEFAULTS["hold_s"]
    min_hosts: int = DEFAULTS["min_hosts"]

    @classmethod
    def from_sidecar(cls, answer: dict) -> "Policy":
        """From GetConsolidation's answer (controller/power.py's dict)."""
        thresholds = {**DEFAULTS, **(answer.get("thresholds") or {})}
        return cls(enabled=bool(answer.get("enabled")), **{k: thresholds[k] for k in DEFAULTS})


@dataclass(frozen=True)
class HostLoad:
    lcores: int             # polling lcores of the host
    work: float             # the sum of their work shares over the last period


@dataclass(frozen=True)
class Decision:
    active: tuple[str, ...]     # the hosts that get every VF bucket; empty: each
                                # bucket on its home host (a dead one's parked)
    reason: str


def hosts_needed(work: float, lcores: list[int], fill: float) -> int:
    """The fewest leading hosts whose lcores carry `work` at `fill` or
    below; all of them when none is enough."""
    capacity = 0
    for k, n in enumerate(lcores, start=1):
        capacity += n
        if work <= fill * capacity:
            return k
    return len(lcores)


@dataclass
class Consolidator:
    """One NIC's hosts: which are active, and since when a fold has been
    possible. `decide` is called once per period with the hosts' loads."""
    hosts: list[str]                        # topology order
    active: tuple[str, ...] = ()            # empty: every live host
    fold_since: float | None = None
    last: Decision | None = field(default=None, repr=False)

    def decide(self, policy: Policy, live: list[str], loads: dict[str, HostLoad] | None,
               now: float) -> Decision:
        live = [h for h in self.hosts if h in live]
        decision = self._decide(policy, live, loads, now)
        self.active = decision.active
        self.last = decision
        return decision

    def _spread(self, reason: str) -> Decision:
        self.fold_since = None
        return Decision((), reason)

    def _decide(self, policy, live, loads, now) -> Decision:
        if not policy.enabled:
            return self._spread("consolidation off")
        if len(live) <= 1:
            return self._spread(f"{len(live)} live host(s): nothing to fold")
        if loads is None or any(h not in loads for h in live):
            missing = [h for h in live if loads is None or h not in loads]
            return self._spread(f"no load known for {', '.join(missing)}")
        # the active hosts as they stand among the live ones (a dead active
        # host's share went to the NIC; the live ones in order replace it)
        current = [h for h in live if h in self.active] if self.active else live
        count = len(current) or len(live)
        lcores = [loads[h].lcores for h in live]
        work = sum(loads[h].work for h in live)
        capacity = sum(loads[h].lcores for h in live[:count])
        fill = work / capacity if capacity else 0.0
        needed = max(min(policy.min_hosts, len(live)),
                     hosts_needed(work, lcores, policy.consolidate_below))
        figures = f"work {work:.3g} lcores on {count} of {len(live)} hosts (fill {fill:.3g})"
        if fill > policy.spread_above and count < len(live):
            self.fold_since = None
            target = max(needed, count + 1)
            return Decision(tuple(live[:target]) if target < len(live) else (),
                            f"spread to {target}: {figures} > {policy.spread_above:g}")
        if needed < count:
            if self.fold_since is None:
                self.fold_since = now
            if now - self.fold_since >= policy.hold_s:
                self.fold_since = None
                return Decision(tuple(live[:needed]),
                                f"folded to {needed}: {figures}, fits {needed} at "
                                f"{policy.consolidate_below:g} for {policy.hold_s:g} s")
            return Decision(self._prefix(live, count), f"fold to {needed} pending: {figures}")
        self.fold_since = None
        return Decision(self._prefix(live, count), f"kept {count}: {figures}")

    @staticmethod
    def _prefix(live: list[str], count: int) -> tuple[str, ...]:
        """The first `count` live hosts; empty (every bucket home) for all."""
        return tuple(live[:count]) if count < len(live) else ()

    def effective(self, live) -> set[str]:
        """The hosts that hold VF buckets under the current decision."""
        return set(self.active) if self.active else {h for h in self.hosts if h in live}


class WorkMeter:
    """Work shares from the sidecar's cumulative per-lcore `work_ns`:
    the difference between two samples over the time between them."""

    def __init__(self):
        self.previous: dict[str, tuple[int, dict[int, int]]] = {}   # target -> (time_ns, lcore -> work_ns)

    def loads(self, telemetry: dict, names: list[str]) -> dict[str, HostLoad]:
        """The loads of `names` that have two samples, from one Telemetry."""
        now = int(telemetry.get("time_ns", 0))
        found = {}
        for target in telemetry.get("targets", []):
            name = target.get("name")
            if name not in names or not target.get("reachable"):
                self.previous.pop(name, None)
                continue
            lcores = {int(lc.get("lcore", 0)): int(lc.get("work_ns", 0))
                      for lc in target.get("lcores", [])}
            before = self.previous.get(name)
            self.previous[name] = (now, lcores)
            if before is None or now <= before[0] or set(before[1]) != set(lcores):
                continue
            elapsed = now - before[0]
            work = sum(max(0, lcores[lc] - before[1][lc]) for lc in lcores) / elapsed
            found[name] = HostLoad(lcores=len(lcores), work=work)
        return found


def modes_to_switch(telemetry: dict | None, host: str) -> dict[int, str]:
    """A freed host's lcores that poll on an empty queue (SWITCHED_MODES):
    lcore -> its mode now."""
    for target in (telemetry or {}).get("targets", []):
        if target.get("name") == host and target.get("reachable"):
            return {int(lc["lcore"]): lc["mode"] for lc in target.get("lcores", [])
                    if lc.get("mode") in SWITCHED_MODES}
    return {}
