"""The gNB's counters on one target: drops by reason, per-DRB downlink and
uplink packets/bytes (only DRBs that counted something), uplink STATUS
PDUs, retransmissions from the BaaS forwarded to the radio."""
from __future__ import annotations

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import MissingP4Object

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


def _nonzero(cells: dict[int, tuple[int, int]]) -> dict[str, dict]:
    return {str(i): {"packets": p, "bytes": b} for i, (p, b) in sorted(cells.items()) if p or b}


def _total(cells) -> dict:
    return {"packets": sum(p for p, _ in cells.values()),
            "bytes": sum(b for _, b in cells.values())}


async def read(target) -> dict:
    drops = await _read_counter(target, "drop_counter")
    dl = await _read_counter(target, "dl_drb_counter")
    ul = await _read_counter(target, "ul_drb_counter")
    result = {
        "target": target.name,
        "drops": {DROP_REASONS.get(i, f"reason_{i}"): {"packets": p, "bytes": b}
                  for i, (p, b) in sorted(drops.items()) if p or b},
        "downlink": {"total": _total(dl), "per_drb": _nonzero(dl)},
        "uplink": {"total": _total(ul), "per_drb": _nonzero(ul)},
    }
    if target.schema.counters.get("ul_status_counter") is not None:
        status = await _read_counter(target, "ul_status_counter")
        result["ul_status_pdus"] = _total(status)
    if target.schema.counters.get("baas_retx_counter") is not None:
        retx = await _read_counter(target, "baas_retx_counter")
        result["baas_retransmissions"] = {"total": _total(retx), "per_drb": _nonzero(retx)}
    return result
