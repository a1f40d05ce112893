"""The gNB's counters on one target: drops by reason, downlink and uplink
packets/bytes in total and, on request, per DRB (every DRB that counted
something, or chosen DRBs, zeros included), uplink STATUS PDUs,
retransmissions from the BaaS forwarded to the radio, and on a NIC the
radio frames its hosts built (host_return_counter), per DRB the same way.

The runtime's own drops (no room, tx ring full, ...) are not P4 counters:
runtime_drops() reads them from the target's control socket when the
topology names one, and keeps apart what is expected there, not a drop."""
from __future__ import annotations

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import control_socket
from controller.errors import GnbctlError, MissingP4Object

# p4src/gnb/constants.p4, DROP_*: the index into drop_counter.
DROP_REASONS = {0: "truncated", 1: "not_gtp", 2: "bad_ipv4", 3: "gtp_unsupported",
                4: "unknown_teid", 5: "ul_segmented", 6: "ul_control_pdu",
                7: "unknown_bearer", 8: "wrong_port", 9: "bad_host_frame",
                10: "bearer_format", 11: "bad_baas_frame"}


async def _read_counter(target, name: str) -> dict[int, tuple[int, int]]:
    """index -> (packets, bytes) of every cell of a counter array."""
    if target.schema.counters.get(name) is None:
        raise MissingP4Object(target.name, "counter", name)
    entity = p4r.Entity(counter_entry=p4r.CounterEntry(
        counter_id=target.schema.counters[name].id))
    return {e.counter_entry.index.index: (e.counter_entry.data.packet_count,
                                          e.counter_entry.data.byte_count)
            for e in await target.read_raw(entity)}


def _total(cells) -> dict:
    return {"packets": sum(p for p, _ in cells.values()),
            "bytes": sum(b for _, b in cells.values())}


def _per_drb(target, name: str, cells: dict[int, tuple[int, int]],
             drbs: list[int] | None, nonzero: bool) -> dict[str, dict] | None:
    """The per-DRB cells asked for: `drbs` (zeros included unless
    `nonzero`), or with `nonzero` alone every cell that counted; None when
    neither was asked."""
    if drbs is None and not nonzero:
        return None
    if drbs is None:
        chosen = sorted(cells)
    else:
        beyond = [i for i in drbs if i not in cells]
        if beyond:
            raise GnbctlError(f"{target.name}: no DRB {', '.join(map(str, beyond))} in "
                              f"{name} (it counts DRBs 0..{len(cells) - 1})")
        chosen = sorted(set(drbs))
    return {str(i): {"packets": cells[i][0], "bytes": cells[i][1]} for i in chosen
            if not nonzero or any(cells[i])}


def _direction(target, name: str, cells, drbs, nonzero) -> dict:
    result = {"total": _total(cells), "drbs_counted": sum(1 for c in cells.values() if any(c))}
    per_drb = _per_drb(target, name, cells, drbs, nonzero)
    if per_drb is not None:
        result["per_drb"] = per_drb
    return result


async def read(target, drbs: list[int] | None = None, nonzero: bool = False) -> dict:
    """Drops by reason (those that happened), and per counter array its
    total and how many DRBs counted something; per DRB as _per_drb says."""
    drops = await _read_counter(target, "drop_counter")
    result = {
        "target": target.name,
        "drops": {DROP_REASONS.get(i, f"reason_{i}"): {"packets": p, "bytes": b}
                  for i, (p, b) in sorted(drops.items()) if p or b},
        "downlink": _direction(target, "dl_drb_counter",
                               await _read_counter(target, "dl_drb_counter"), drbs, nonzero),
        "uplink": _direction(target, "ul_drb_counter",
                             await _read_counter(target, "ul_drb_counter"), drbs, nonzero),
    }
    if target.schema.counters.get("ul_status_counter") is not None:
        status = await _read_counter(target, "ul_status_counter")
        result["ul_status_pdus"] = _total(status)
    if target.schema.counters.get("baas_retx_counter") is not None:
        result["baas_retransmissions"] = _direction(
            target, "baas_retx_counter", await _read_counter(target, "baas_retx_counter"),
            drbs, nonzero)
    if target.schema.counters.get("host_return_counter") is not None:
        result["host_return"] = _direction(
            target, "host_return_counter", await _read_counter(target, "host_return_counter"),
            drbs, nonzero)
    return result


# The runtime's drop reasons (t4p4s/runtime/src/stats.c) but "pipeline":
# what the P4 program dropped, which drop_counter counts by reason.
_P4_COUNTED = "pipeline"
# By design on a target with no BaaS clone session (topology baas_clone =
# false: the hosts): the pipeline asks for a copy of every RLC AM frame,
# and without a session none is made. The frame itself is forwarded.
EXPECTED_WITHOUT_CLONE_SESSION = {
    "clone_no_session": "no BaaS copy of RLC AM frames: this target has no clone session "
                        "by design (topology baas_clone = false); the frames are forwarded"}


def split_runtime_drops(config, counted: dict) -> tuple[dict, dict]:
    """The runtime's drop counts (its `stats` reply's "drops", by reason)
    split for this target, zeros kept: ({reason: packets} that are drops,
    not "pipeline", which drop_counter splits by reason; {reason: (packets,
    why)} that are no drop on this target)."""
    expected = {} if config.baas_clone else EXPECTED_WITHOUT_CLONE_SESSION
    drops = {k: n for k, n in sorted(counted.items()) if k != _P4_COUNTED and k not in expected}
    return drops, {k: (counted.get(k, 0), why) for k, why in expected.items()}


async def runtime_drops(config) -> dict | None:
    """None without a control socket in the topology; else {"drops":
    {reason: packets}} of the runtime's reasons that counted and
    {"expected": {reason: {"packets", "why"}}}: counts that are no drop on
    this target (split_runtime_drops). TargetUnreachable / GnbctlError as
    control_socket.request."""
    if config.control is None:
        return None
    counted = (await control_socket.request(config, {"cmd": "stats"}))["drops"]
    drops, expected = split_runtime_drops(config, counted)
    return {"drops": {k: n for k, n in drops.items() if n},
            "expected": {k: {"packets": n, "why": why}
                         for k, (n, why) in expected.items() if n}}


async def add_runtime_drops(result: dict, config) -> dict:
    """read()'s result with "runtime_drops" (runtime_drops()), or with
    "runtime_error" when the control socket does not answer (the P4
    counters stand); unchanged without a control socket."""
    try:
        runtime = await runtime_drops(config)
    except GnbctlError as e:
        result["runtime_error"] = str(e)
        return result
    if runtime is not None:
        result["runtime_drops"] = runtime
    return result


def drop_total(counters: dict | None, runtime: dict | None) -> int:
    """Packets dropped on a target: the P4 program's by reason (read()'s
    "drops") and the runtime's (runtime_drops()), not what is expected."""
    p4 = sum(d["packets"] for d in (counters or {}).get("drops", {}).values())
    return p4 + sum((runtime or {}).get("drops", {}).values())
