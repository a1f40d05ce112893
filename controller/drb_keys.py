"""The three keys no two DRBs may share: the DRB index, the downlink TEID
and the (ue_id, lcid) bearer. The targets refuse a second entry with the
same TEID (dl_drb's key) or bearer (ul_bearer's key), but the DRB index is
only an action parameter: two TEIDs given one index would share its SN
registers and counters, and `drb show` / `drb del` would find only one of
them. So gnbctl checks all three itself, in a CSV and against what every
target holds, before it writes anything.

Finding one DRB. The DRB index is no table's key, so finding DRB N's
entries among 65,536 could mean reading both tables whole. locate() reads
by key instead: the generated DRBs (`drb load --count`, `drb add N`
without keys of its own) have TEID 0x10000 + N and bearer (N, 4), so one
Read of those two keys finds them, and a dl_drb entry found names the
DRB's bearer (its ue_id and lcid parameters). Only a DRB whose keys are
not derived from its index (a CSV's own TEIDs) is looked for by a scan:
the table is read whole but parsed only in the responses whose bytes
contain the encoded `drb_index` parameter (scan())."""
from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import GnbctlError, MissingP4Object, WriteRejected
from controller.targets import on_every

DL_ACTION = "set_dl_drb"
UL_ACTION = "set_ul_bearer"
ACTIONS = {"dl_drb": DL_ACTION, "ul_bearer": UL_ACTION}    # the action of each DRB table
KEYS = {"dl_drb": ("teid",), "ul_bearer": ("ue_id", "lcid")}   # each one's match fields

# the generated DRB N (drbs.Drb.generated, `drb load --count`): its keys
GENERATED_TEID_BASE = 0x10000
GENERATED_LCID = 4


def generated_keys(drb_index: int) -> tuple[int, tuple[int, int]]:
    """(TEID, (ue_id, lcid)) of the generated DRB drb_index."""
    return GENERATED_TEID_BASE + drb_index, (drb_index, GENERATED_LCID)


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


# ---- one DRB's entries, by key ------------------------------------------------

def _table(target, table: str):
    info = target.schema.tables.get(table)
    if info is None:
        raise MissingP4Object(target.name, "table", table)
    if target.schema.actions.get(ACTIONS[table]) is None:
        raise MissingP4Object(target.name, "action", ACTIONS[table])
    return info


def by_table(target, table: str) -> p4r.Entity:
    """A Read entity for every entry of `table`."""
    return p4r.Entity(table_entry=p4r.TableEntry(table_id=_table(target, table).id))


def by_key(target, table: str, *key: int) -> p4r.Entity:
    """A Read entity for the one entry of `table` with this key (dl_drb:
    teid; ul_bearer: ue_id, lcid), each value at its field's full width."""
    info = _table(target, table)
    entry = p4r.TableEntry(table_id=info.id)
    for name, value in zip(KEYS[table], key):
        f = info.match_fields[name]
        entry.match.add(field_id=f.id).exact.value = value.to_bytes((f.bitwidth + 7) // 8, "big")
    return p4r.Entity(table_entry=entry)


def params(target, table: str, entry: p4r.TableEntry) -> dict[str, int]:
    """The action parameters of an entry of `table`, by name, as integers."""
    names = {p.id: p.name for p in target.schema.actions[ACTIONS[table]].params}
    return {names[p.param_id]: int.from_bytes(p.value, "big")
            for p in entry.action.action.params if p.param_id in names}


def match(target, table: str, entry: p4r.TableEntry) -> dict[str, int]:
    """The key of an entry of `table`, by field name, as integers."""
    names = {f.id: f.name for f in target.schema.tables[table].match_fields}
    return {names[m.field_id]: int.from_bytes(m.exact.value, "big") for m in entry.match}


def _names(target, table: str, entry: p4r.TableEntry, drb_index: int) -> bool:
    return (entry.table_id == target.schema.tables[table].id
            and params(target, table, entry).get("drb_index") == drb_index)


def _naming(target, table: str, found, drb_index: int) -> p4r.TableEntry | None:
    return next((e.table_entry for e in found
                 if _names(target, table, e.table_entry, drb_index)), None)


@dataclass
class Located:
    """DRB N's entries on one target as read (None: it has none), and the
    tables that had to be scanned to find them."""
    target: object
    dl: p4r.TableEntry | None
    ul: p4r.TableEntry | None
    scanned: tuple[str, ...] = ()

    @property
    def bearer(self) -> tuple[int, int] | None:
        """(ue_id, lcid): the ul_bearer entry's key, else the dl_drb
        entry's parameters; None without either entry."""
        if self.ul is not None:
            key = match(self.target, "ul_bearer", self.ul)
            return key["ue_id"], key["lcid"]
        if self.dl is not None:
            named = params(self.target, "dl_drb", self.dl)
            return named["ue_id"], named["lcid"]
        return None


async def locate(target, drb_index: int) -> Located:
    """DRB drb_index's dl_drb and ul_bearer entries: read by the generated
    DRB's keys, then by the bearer its dl_drb entry names; a table where
    that finds nothing naming the index is scanned (scan())."""
    teid, bearer = generated_keys(drb_index)
    found = await target.read_raw([by_key(target, "dl_drb", teid),
                                   by_key(target, "ul_bearer", *bearer)])
    dl = _naming(target, "dl_drb", found, drb_index)
    ul = _naming(target, "ul_bearer", found, drb_index)
    scanned: tuple[str, ...] = ()
    if dl is None:
        scanned += ("dl_drb",)
        dl = await scan(target, "dl_drb", drb_index)
    if ul is None and dl is not None:
        named = params(target, "dl_drb", dl)
        own = (named["ue_id"], named["lcid"])
        if own != bearer:
            ul = _naming(target, "ul_bearer",
                         await target.read_raw(by_key(target, "ul_bearer", *own)), drb_index)
    if ul is None:      # a DRB without a dl_drb entry, or none at all
        scanned += ("ul_bearer",)
        ul = await scan(target, "ul_bearer", drb_index)
    return Located(target, dl, ul, scanned)


async def scan(target, table: str, drb_index: int) -> p4r.TableEntry | None:
    """The entry of `table` whose action names drb_index, by reading the
    table whole: a ReadResponse is parsed only if its bytes contain the
    `drb_index` parameter as protobuf encodes it (canonical or at full
    width), so one of the ~16 responses of 65,536 entries is decoded
    instead of every entry."""
    entity = by_table(target, table)        # MissingP4Object without the table
    param = target.schema.actions[ACTIONS[table]].params["drb_index"]
    widths = {max(1, (drb_index.bit_length() + 7) // 8), (param.bitwidth + 7) // 8}
    patterns = [p4r.Action(params=[p4r.Action.Param(
        param_id=param.id, value=drb_index.to_bytes(w, "big"))]).SerializeToString()
        for w in widths]
    async with contextlib.aclosing(target.read_chunks(entity)) as chunks:
        async for chunk in chunks:
            if not any(p in chunk for p in patterns):
                continue
            entry = _naming(target, table, p4r.ReadResponse.FromString(chunk).entities,
                            drb_index)
            if entry is not None:
                return entry
    return None


async def installed_near(target, drb) -> "Installed":
    """The part of installed() that can conflict with adding `drb`: the
    entries that name its index (locate()) and those that hold its TEID
    or its bearer (read by key)."""
    located, found = await asyncio.gather(
        locate(target, drb.drb),
        target.read_raw([by_key(target, "dl_drb", drb.teid),
                         by_key(target, "ul_bearer", drb.ue_id, drb.lcid)]))
    keys = Installed()
    for table, mine in (("dl_drb", located.dl), ("ul_bearer", located.ul)):
        table_id = target.schema.tables[table].id
        entries = ([mine] if mine is not None else []) + [
            e.table_entry for e in found if e.table_entry.table_id == table_id
            and (mine is None or e.table_entry.match != mine.match)]
        for entry in entries:
            index = params(target, table, entry).get("drb_index")
            if index is not None:
                _add(keys, table, index, match(target, table, entry))
    return keys


def _add(keys: "Installed", table: str, index: int, key: dict[str, int]) -> None:
    if table == "dl_drb":
        keys.teid[key["teid"]] = index
        keys.drb.setdefault(index, []).append(describe_teid(key["teid"]))
    else:
        bearer = (key["ue_id"], key["lcid"])
        keys.bearer[bearer] = index
        keys.drb.setdefault(index, []).append(describe_bearer(bearer))


# ---- every DRB's keys ---------------------------------------------------------

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
    """Every DRB key the target holds (both tables read whole)."""
    keys = Installed()
    dl, ul = await asyncio.gather(drb_entries(target, "dl_drb"),
                                  drb_entries(target, "ul_bearer"))
    for table, entries in (("dl_drb", dl), ("ul_bearer", ul)):
        for index, key, _ in entries:
            _add(keys, table, index, key)
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


REPLACE_HINT = "; `gnbctl drb load --replace` updates installed DRBs in place"


async def refuse_in_use(targets, drbs: list, hint: str = "") -> None:
    """Raises DrbInUse (refuse_conflicts) if any of `drbs` shares a key
    with a DRB installed on any of `targets`. A single DRB is checked by
    key (installed_near), several against whole tables."""
    if len(drbs) == 1:
        per_target = await on_every(targets, lambda t: installed_near(t, drbs[0]))
    else:
        per_target = await on_every(targets, installed)
    lines: dict[tuple[int, str], list[str]] = {}
    for target, keys in zip(targets, per_target):
        for drb in drbs:
            for reason in conflicts(drb, keys):
                lines.setdefault((drb.drb, reason), []).append(target.name)
    refuse_conflicts(lines, len(drbs), hint)


def refuse_conflicts(lines: dict[tuple[int, str], list[str]], total: int,
                     hint: str = "") -> None:
    """Raises DrbInUse, in one line, for conflicts given as (DRB index,
    reason) -> the targets where it holds: the conflicts of one DRB, or
    with several the first DRB's and how many DRBs there are; then
    `hint`. Nothing when there are none."""
    if not lines:
        return
    by_drb: dict[int, list[str]] = {}
    for (index, reason), names in lines.items():
        by_drb.setdefault(index, []).append(f"{reason} on {', '.join(names)}")
    shown = [f"DRB {index}: {'; '.join(reasons)}" for index, reasons in by_drb.items()]
    if len(shown) == 1:
        raise DrbInUse(f"nothing written: {shown[0]}{hint}")
    raise DrbInUse(f"nothing written: {len(shown)} of {total} DRBs share keys with "
                   f"installed ones (the first: {shown[0]}){hint}")
