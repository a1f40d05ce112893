"""The three keys no two DRBs may share: the DRB index, the downlink TEID
and the (ue_id, lcid) bearer. The targets refuse a second entry with the
same TEID (dl_drb's key) or bearer (ul_bearer's key), but the DRB index is
only an action parameter: two TEIDs given one index would share its SN
registers and counters, and `drb show` / `drb del` would find only one of
them. So gnbctl checks all three itself, in a CSV and against what every
target holds, before it writes anything."""
from __future__ import annotations

from dataclasses import dataclass, field

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import GnbctlError, WriteRejected
from controller.targets import on_every

DL_ACTION = "set_dl_drb"
UL_ACTION = "set_ul_bearer"
ACTIONS = {"dl_drb": DL_ACTION, "ul_bearer": UL_ACTION}    # the action of each DRB table


def describe_teid(teid: int) -> str:
    return f"teid {teid:#x}"


def describe_bearer(bearer: tuple[int, int]) -> str:
    return f"ue_id {bearer[0]} lcid {bearer[1]}"


def keys_of(drb) -> list[tuple[str, object, str]]:
    """(kind, key, description) of each key of a DRB (drbs.Drb)."""
    return [("drb", drb.drb, f"DRB index {drb.drb}"),
            ("teid", drb.teid, describe_teid(drb.teid)),
            ("bearer", (drb.ue_id, drb.lcid), describe_bearer((drb.ue_id, drb.lcid)))]


def duplicates(drbs_with_lines: list[tuple[int, object]]) -> list[tuple[int, str]]:
    """(line, why) for every DRB (given with its CSV line) that has a key
    an earlier line already has."""
    first: dict[tuple[str, object], int] = {}
    errors = []
    for line, drb in drbs_with_lines:
        for kind, key, text in keys_of(drb):
            if (kind, key) in first:
                errors.append((line, f"{text} is also on line {first[kind, key]}"))
            else:
                first[kind, key] = line
    return errors


@dataclass
class Installed:
    """The keys a target's dl_drb and ul_bearer entries hold: each key ->
    the DRB index that has it; each DRB index -> what names it."""
    teid: dict[int, int] = field(default_factory=dict)
    bearer: dict[tuple[int, int], int] = field(default_factory=dict)
    drb: dict[int, list[str]] = field(default_factory=dict)


async def drb_entries(target, table: str) -> list[tuple[int, dict, p4r.TableEntry]]:
    """(drb_index, match by P4Info name as integers, the TableEntry as
    read) of each entry of `table` (dl_drb or ul_bearer) whose action
    names a DRB index."""
    info = target.schema.tables[table]
    fields = {f.id: f.name for f in info.match_fields}
    drb_index = target.schema.actions[ACTIONS[table]].params["drb_index"].id
    found = []
    for entity in await target.read_raw(p4r.Entity(table_entry=p4r.TableEntry(
            table_id=info.id))):
        entry = entity.table_entry
        index = None
        for p in entry.action.action.params:
            if p.param_id == drb_index:
                index = int.from_bytes(p.value, "big")
        if index is not None:
            found.append((index, {fields[m.field_id]: int.from_bytes(m.exact.value, "big")
                                  for m in entry.match}, entry))
    return found


async def installed(target) -> Installed:
    keys = Installed()
    for index, match, _ in await drb_entries(target, "dl_drb"):
        keys.teid[match["teid"]] = index
        keys.drb.setdefault(index, []).append(describe_teid(match["teid"]))
    for index, match, _ in await drb_entries(target, "ul_bearer"):
        bearer = (match["ue_id"], match["lcid"])
        keys.bearer[bearer] = index
        keys.drb.setdefault(index, []).append(describe_bearer(bearer))
    return keys


def conflicts(drb, keys: Installed) -> list[str]:
    """Why `drb` cannot be added next to the installed keys."""
    found = []
    if drb.drb in keys.drb:
        found.append(f"DRB index {drb.drb} is in use by {', '.join(keys.drb[drb.drb])}")
    if drb.teid in keys.teid:
        found.append(f"{describe_teid(drb.teid)} is DRB {keys.teid[drb.teid]}'s")
    bearer = (drb.ue_id, drb.lcid)
    if bearer in keys.bearer:
        found.append(f"{describe_bearer(bearer)} is DRB {keys.bearer[bearer]}'s")
    return found


class DrbInUse(GnbctlError):
    """A DRB shares a key with one a target holds: nothing was written."""
    exit_code = WriteRejected.exit_code


async def refuse_in_use(targets, drbs: list) -> None:
    """Raises DrbInUse, one line per conflicting DRB (targets that hold
    the same conflict are named together), if any of `drbs` shares a key
    with a DRB installed on any of `targets`."""
    per_target = await on_every(targets, installed)
    lines: dict[tuple[int, str], list[str]] = {}
    for target, keys in zip(targets, per_target):
        for drb in drbs:
            for reason in conflicts(drb, keys):
                lines.setdefault((drb.drb, reason), []).append(target.name)
    if not lines:
        return
    by_drb: dict[int, list[str]] = {}
    for (index, reason), names in lines.items():
        by_drb.setdefault(index, []).append(f"{reason} on {', '.join(names)}")
    shown = [f"DRB {index}: {'; '.join(reasons)}" for index, reasons in by_drb.items()]
    if len(shown) == 1:
        raise DrbInUse(f"nothing written: {shown[0]}")
    more = f"\n... and {len(shown) - 20} more" if len(shown) > 20 else ""
    raise DrbInUse(f"nothing written: {len(shown)} DRBs share keys with installed ones:\n"
                   + "\n".join(shown[:20]) + more)
