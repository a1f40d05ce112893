"""DRBs: the model, the generator of the hybrid contract, the CSV reader,
and the bulk load of `dl_drb` and `ul_bearer` on every target.

CSV: a header line, then one DRB per line:
    drb,teid,ue_id,lcid,rlc,rlc_sn,pdcp_sn,qfi,ue_mac,ul_teid,gnb_ip,upf_ip,upf_mac
    0,0x10000,0,4,am,18,18,9,02:00:00:00:00:00,0x20000,10.0.0.1,10.0.0.2,02:00:00:00:ff:ff
Integers are decimal or 0x-hex; rlc is am or um; SN lengths are 12 or 18.
Two more columns may follow, in any order: poll_pdu and poll_byte, the RLC
AM DRB's TS 38.331 pollPDU (p4 .. p65536, infinity) and pollByte (kB1 ..
mB40, infinity); an empty cell leaves that trigger at the pipeline's
default (rlc_poll.py).

A load over installed DRBs is refused (drb_keys.py) unless `replace`: then
a DRB whose index is installed is updated in place (MODIFY; a changed TEID
or bearer is its old entry deleted and the new one inserted) and the
others are inserted. One DRB (`drb show`, `del`, `add`) is found by key,
not by reading the tables whole (drb_keys.locate).
"""
from __future__ import annotations

import asyncio
import contextlib
import csv
import ipaddress
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller import drb_keys, rlc_poll
from controller.errors import GnbctlError
from controller.targets import on_every, write_batches

class _Numpy:
    """numpy, imported where first used: the commands that handle one DRB
    or none (show, del, add, status) never need it and start ~30 ms sooner
    (gnbctl is a new process per command)."""

    def __getattr__(self, name: str):
        import numpy
        globals()["np"] = numpy
        return getattr(numpy, name)


np = _Numpy()

CSV_COLUMNS = ("drb", "teid", "ue_id", "lcid", "rlc", "rlc_sn", "pdcp_sn", "qfi", "ue_mac",
               "ul_teid", "gnb_ip", "upf_ip", "upf_mac")
POLL_COLUMNS = ("poll_pdu", "poll_byte")    # optional: absent or empty = not configured
MAX_DRBS = 65536
DEFAULT_BATCH = 8192


@dataclass(frozen=True)
class Drb:
    drb: int
    teid: int
    ue_id: int
    lcid: int
    rlc: str
    rlc_sn: int
    pdcp_sn: int
    qfi: int
    ue_mac: int
    ul_teid: int
    gnb_ip: int
    upf_ip: int
    upf_mac: int
    poll_pdu: int = 0       # RLC AM pollPDU in PDUs, pollByte in bytes (rlc_poll.py);
    poll_byte: int = 0      # 0: not configured, the pipeline's default

    @property
    def has_poll_config(self) -> bool:
        return bool(self.poll_pdu or self.poll_byte)

    @classmethod
    def generated(cls, i: int) -> "Drb":
        """DRB i of `drb load --count N` (the hybrid contract)."""
        teid, (ue_id, lcid) = drb_keys.generated_keys(i)
        return cls(drb=i, teid=teid, ue_id=ue_id, lcid=lcid, rlc="am", rlc_sn=18,
                   pdcp_sn=18, qfi=9, ue_mac=0x020000000000 | i, ul_teid=0x20000 + i,
                   gnb_ip=0x0A000001, upf_ip=0x0A000002, upf_mac=0x02000000FFFF)

    def as_dict(self) -> dict:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("ue_mac", "upf_mac"):
                value = format_mac(value)
            elif f.name in ("gnb_ip", "upf_ip"):
                value = str(ipaddress.IPv4Address(value))
            elif f.name in ("teid", "ul_teid"):
                value = f"{value:#x}"
            elif f.name == "poll_pdu":
                value = rlc_poll.poll_pdu_name(value)
            elif f.name == "poll_byte":
                value = rlc_poll.poll_byte_name(value)
            out[f.name] = value
        return out


_LIMITS = {"drb": 16, "teid": 32, "ue_id": 16, "lcid": 8, "qfi": 6, "ul_teid": 32}


def validate(drb: Drb) -> None:
    for name, bits in _LIMITS.items():
        value = getattr(drb, name)
        if not 0 <= value < 1 << bits:
            raise ValueError(f"{name} {value} does not fit in {bits} bits")
    if drb.rlc not in ("am", "um"):
        raise ValueError(f"rlc must be am or um, not {drb.rlc!r}")
    for name in ("rlc_sn", "pdcp_sn"):
        if getattr(drb, name) not in (12, 18):
            raise ValueError(f"{name} must be 12 or 18, not {getattr(drb, name)}")
    if drb.has_poll_config and drb.rlc != "am":
        raise ValueError("poll_pdu and poll_byte apply to RLC AM DRBs only (rlc is um)")


def format_mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def parse_int(text: str) -> int:
    return int(text, 0)


def parse_mac(text: str) -> int:
    parts = text.split(":")
    if len(parts) != 6 or not all(len(p) == 2 for p in parts):
        raise ValueError(f"{text!r} is not a MAC address (xx:xx:xx:xx:xx:xx)")
    return int("".join(parts), 16)


def parse_ipv4(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


_PARSERS = {"rlc": str.lower, "ue_mac": parse_mac, "upf_mac": parse_mac,
            "gnb_ip": parse_ipv4, "upf_ip": parse_ipv4,
            "poll_pdu": rlc_poll.parse_poll_pdu, "poll_byte": rlc_poll.parse_poll_byte}


def parse_drb(values: dict[str, str]) -> Drb:
    parsed = {}
    for name in CSV_COLUMNS + POLL_COLUMNS:
        text = (values.get(name) or "").strip()
        if not text:
            if name in POLL_COLUMNS:        # optional: the pipeline's default
                continue
            raise ValueError(f"no value for {name}")
        try:
            parsed[name] = _PARSERS.get(name, parse_int)(text)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    drb = Drb(**parsed)
    validate(drb)
    return drb


class DrbKeys(NamedTuple):
    """The fields of a DRB that no other DRB may share (drb_keys.py)."""
    drb: int
    teid: int
    ue_id: int
    lcid: int


class DrbSet:
    """DRBs as columns (numpy arrays), the form the bulk encoder takes."""

    def __init__(self, columns: dict[str, np.ndarray]):
        self.columns = columns
        self.count = len(columns["drb"])

    @classmethod
    def generate(cls, count: int) -> "DrbSet":
        if not 0 < count <= MAX_DRBS:
            raise GnbctlError(f"--count must be 1..{MAX_DRBS} (the size of dl_drb)")
        i = np.arange(count, dtype=np.uint64)
        template = Drb.generated(0)
        columns = {f.name: np.full(count, getattr(template, f.name), dtype=object)
                   for f in fields(Drb)}
        columns.update(drb=i, teid=drb_keys.GENERATED_TEID_BASE + i, ue_id=i,
                       ue_mac=0x020000000000 | i,
                       ul_teid=0x20000 + i)
        return cls(_numeric(columns))

    @classmethod
    def from_drbs(cls, drbs: list[Drb]) -> "DrbSet":
        return cls(_numeric({f.name: np.array([getattr(d, f.name) for d in drbs], dtype=object)
                             for f in fields(Drb)}))

    def with_poll_defaults(self, poll_pdu: int, poll_byte: int) -> "DrbSet":
        """This set with poll_pdu / poll_byte (non-zero: configured) given
        to every RLC AM DRB that has no value of its own."""
        c = dict(self.columns)
        am = c["rlc_am"] == 1
        for name, value in (("poll_pdu", poll_pdu), ("poll_byte", poll_byte)):
            if value:
                c[name] = np.where(am & (c[name] == 0), np.uint64(value), c[name])
        return DrbSet(c)

    def poll_rows(self) -> np.ndarray:
        """The positions of the DRBs with a poll configuration."""
        return np.flatnonzero((self.columns["poll_pdu"] != 0) | (self.columns["poll_byte"] != 0))

    def key_rows(self) -> list["DrbKeys"]:
        """Each DRB's keys (drb_keys.py), as Python integers."""
        c = self.columns
        return [DrbKeys(*map(int, row))
                for row in zip(c["drb"], c["teid"], c["ue_id"], c["lcid"])]

    def describe(self, i: int, table: str) -> str:
        c = self.columns
        key = (f"teid {int(c['teid'][i]):#x}" if table == "dl_drb"
               else f"ue_id {int(c['ue_id'][i])} lcid {int(c['lcid'][i])}")
        return f"DRB {int(c['drb'][i])} ({table} {key})"


def _numeric(columns: dict) -> dict[str, np.ndarray]:
    """The flag columns the P4 actions take, every column as uint64."""
    out = {name: np.asarray(col, dtype=np.uint64) for name, col in columns.items()
           if name != "rlc"}
    out["rlc_am"] = (np.asarray(columns["rlc"]) == "am").astype(np.uint64)
    out["rlc_sn18"] = (out["rlc_sn"] == 18).astype(np.uint64)
    out["pdcp_sn18"] = (out["pdcp_sn"] == 18).astype(np.uint64)
    return out


def read_csv(path: Path) -> DrbSet:
    """Every bad line is reported with its number, and every line that
    repeats an earlier line's DRB index, TEID or bearer; nothing is loaded
    then."""
    try:
        handle = open(path, newline="")
    except OSError as e:
        raise GnbctlError(f"cannot read {path}: {e.strerror}") from None
    drbs, errors = [], []
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise GnbctlError(f"{path}:1: the header lacks {', '.join(missing)} "
                              f"(expected: {','.join(CSV_COLUMNS)})")
        for row in reader:
            try:
                drbs.append((reader.line_num, parse_drb(row)))
            except ValueError as e:
                errors.append((reader.line_num, str(e)))
    errors += drb_keys.duplicates(drbs)
    if errors:
        shown = [f"{path}:{line}: {text}" for line, text in sorted(errors)[:20]]
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise GnbctlError("\n".join(shown) + more)
    if not drbs:
        raise GnbctlError(f"{path}: no DRBs")
    return DrbSet.from_drbs([drb for _, drb in drbs])


# ---- the bulk load --------------------------------------------------------

DL_COLUMNS = {"teid": "teid", "drb_index": "drb", "ue_id": "ue_id", "lcid": "lcid",
              "rlc_am": "rlc_am", "rlc_sn18": "rlc_sn18", "pdcp_sn18": "pdcp_sn18",
              "default_qfi": "qfi", "ue_mac": "ue_mac"}
UL_COLUMNS = {"ue_id": "ue_id", "lcid": "lcid", "drb_index": "drb", "rlc_am": "rlc_am",
              "rlc_sn18": "rlc_sn18", "pdcp_sn18": "pdcp_sn18", "teid": "ul_teid",
              "gnb_ip": "gnb_ip", "upf_ip": "upf_ip", "upf_mac": "upf_mac"}


TABLE_COLUMNS = {"dl_drb": DL_COLUMNS, "ul_bearer": UL_COLUMNS}
DRB_TABLES = tuple(TABLE_COLUMNS)


@dataclass
class _Plan:
    """What `drb load` writes on one target: per table the positions (in
    the DrbSet) of the DRBs to INSERT and to MODIFY, the installed entries
    to DELETE before them (a replaced DRB whose TEID or bearer changes),
    and the positions whose poll registers to write."""
    insert: dict[str, np.ndarray]
    modify: dict[str, np.ndarray] = field(default_factory=dict)
    delete: list[tuple[str, p4r.TableEntry]] = field(default_factory=list)
    poll_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    replaced: int = 0       # DRBs whose index was installed


async def load(targets, drbs: DrbSet, batch: int = DEFAULT_BATCH, on_progress=None,
               replace: bool = False) -> dict:
    """dl_drb and ul_bearer entries of every DRB on every target (targets
    concurrently, `batch` updates per Write), then the BaaS clone session
    where the topology wants one. A DRB that shares a key with an
    installed one is refused before anything is written, unless `replace`
    and it is the installed DRB of the same index (_replace_plan). Returns
    the timing; raises one GnbctlError listing every target's rejected
    updates."""
    start = time.perf_counter()
    if len(drbs.poll_rows()):
        refuse_poll_without_numbering(targets)
    if replace:
        plans = await _replace_plans(targets, drbs)
    else:
        await drb_keys.refuse_in_use(targets, drbs.key_rows(), drb_keys.REPLACE_HINT)
        everything = np.arange(drbs.count)
        plans = [_Plan(insert={table: everything for table in DRB_TABLES},
                       poll_rows=drbs.poll_rows() if rlc_poll.numbers_amd_pdus(t.config)
                       else np.zeros(0, dtype=np.int64)) for t in targets]
    plan_of = {t.name: plan for t, plan in zip(targets, plans)}
    per_target = {}

    async def load_one(target):
        t0 = time.perf_counter()
        plan = plan_of[target.name]
        # the poll configuration before the entries that give the DRBs traffic
        if len(plan.poll_rows):
            await write_batches(target, _poll_batches(target, drbs, plan.poll_rows, batch),
                                2 * len(plan.poll_rows))
        if plan.delete:
            await _delete_entries(target, plan.delete)
        batches = []
        for table in DRB_TABLES:
            for rows, update_type in ((plan.modify.get(table), p4r.Update.MODIFY),
                                      (plan.insert.get(table), p4r.Update.INSERT)):
                if rows is not None and len(rows):
                    batches += _entry_batches(target, drbs, table, rows, update_type, batch)
        progress = (lambda count: on_progress(target.name, count)) if on_progress else None
        await write_batches(target, batches, 2 * drbs.count, progress)
        if target.config.baas_clone:
            await ensure_clone_session(target)
        seconds = time.perf_counter() - t0
        per_target[target.name] = {"seconds": round(seconds, 4),
                                   "entries": 2 * drbs.count,
                                   "entries_per_s": round(2 * drbs.count / seconds),
                                   "replaced": plan.replaced,
                                   "deleted_first": len(plan.delete),
                                   "poll_configured": len(plan.poll_rows)}

    await on_every(targets, load_one)
    return {"drbs": drbs.count, "batch": batch, "replace": replace,
            "seconds": round(time.perf_counter() - start, 4), "targets": per_target}


def _entry_batches(target, drbs: DrbSet, table: str, rows: np.ndarray, update_type: int,
                   batch: int) -> list:
    """write_batches' batches of the `table` updates of the DRBs at
    positions `rows`, `batch` updates per Write."""
    from controller.bulk import ExactInsertEncoder

    encoder = ExactInsertEncoder(target.schema, target.name, table, drb_keys.ACTIONS[table],
                                 update_type)
    whole = len(rows) == drbs.count
    encoded = encoder.encode(len(rows), {k: drbs.columns[v] if whole else drbs.columns[v][rows]
                                         for k, v in TABLE_COLUMNS[table].items()})

    def batch_of(first: int):
        chunk = encoded[first:first + batch]
        return chunk.tobytes, len(chunk), lambda i: drbs.describe(int(rows[first + i]), table)
    return [batch_of(first) for first in range(0, len(rows), batch)]


async def _delete_entries(target, entries: list[tuple[str, p4r.TableEntry]]) -> None:
    """One Write deleting these installed entries (by their keys)."""
    request = p4r.WriteRequest()
    for _, entry in entries:
        update = request.updates.add(type=p4r.Update.DELETE)
        update.entity.table_entry.table_id = entry.table_id
        update.entity.table_entry.match.extend(entry.match)

    def describe(i: int) -> str:
        table, entry = entries[i]
        index = drb_keys.params(target, table, entry).get("drb_index")
        key = drb_keys.match(target, table, entry)
        return f"DRB {index} (its old {table} entry {key})"
    await target.write_raw(request.SerializeToString(), len(entries), describe)


async def _replace_plans(targets, drbs: DrbSet) -> list[_Plan]:
    """Each target's _Plan for `drb load --replace`; a DRB whose TEID or
    bearer another installed DRB keeps is refused (DrbInUse) before
    anything is written on any target."""
    outcomes = await on_every(targets, lambda t: _replace_plan(t, drbs))
    conflicts: dict[tuple[int, str], list[str]] = {}
    for target, (_, found) in zip(targets, outcomes):
        for index, reason in found:
            conflicts.setdefault((index, reason), []).append(target.name)
    drb_keys.refuse_conflicts(conflicts, drbs.count, "; --replace updates a DRB of the "
                              "same index, it does not move a key from one DRB to another: "
                              "delete that DRB first")
    return [plan for plan, _ in outcomes]


async def _replace_plan(target, drbs: DrbSet) -> tuple[_Plan, list[tuple[int, str]]]:
    """(plan, conflicts) of `drb load --replace` on one target, from both
    tables read whole: a DRB whose index is installed is modified in
    place where its key is unchanged, its old entry deleted and the new
    inserted where the key changes; any other DRB is inserted. A key held
    by an installed DRB that the load does not replace is a conflict."""
    c = drbs.columns
    indexes = [int(i) for i in c["drb"]]
    keys = {"dl_drb": [(int(t),) for t in c["teid"]],
            "ul_bearer": [(int(u), int(lc)) for u, lc in zip(c["ue_id"], c["lcid"])]}
    loaded = set(indexes)
    entries = await asyncio.gather(*(drb_keys.drb_entries(target, t) for t in DRB_TABLES))
    plan = _Plan(insert={})
    conflicts = []
    plan.replaced = len(loaded & {index for found in entries for index, _, _ in found})
    for table, installed in zip(DRB_TABLES, entries):
        fields_ = drb_keys.KEYS[table]
        by_index = {index: (tuple(m[f] for f in fields_), entry)
                    for index, m, entry in installed}
        holder = {key: index for index, (key, _) in by_index.items()}
        insert, modify = [], []
        for row, (index, key) in enumerate(zip(indexes, keys[table])):
            old = by_index.get(index)
            if old is not None and old[0] == key:
                modify.append(row)
                continue
            if old is not None:
                plan.delete.append((table, old[1]))
            insert.append(row)
            other = holder.get(key)
            if other is not None and other != index and other not in loaded:
                what = (drb_keys.describe_teid(key[0]) if table == "dl_drb"
                        else drb_keys.describe_bearer(key))
                conflicts.append((index, f"{what} is DRB {other}'s"))
        plan.insert[table] = np.array(insert, dtype=np.int64)
        plan.modify[table] = np.array(modify, dtype=np.int64)
    if rlc_poll.numbers_amd_pdus(target.config):
        # rewritten only where it changes: writing a DRB's configuration
        # also restarts its poll counting
        current = await rlc_poll.configured(target)
        wanted = (c["poll_byte"] << np.uint64(32)) | c["poll_pdu"]
        now = np.array([current.get(i, 0) for i in indexes], dtype=np.uint64)
        plan.poll_rows = np.flatnonzero(wanted != now)
    return plan, conflicts


def _poll_batches(target, drbs: DrbSet, rows: np.ndarray, batch: int) -> list:
    """write_batches' batches of the poll registers of these DRBs (two
    updates per DRB, `batch` updates per Write)."""
    c = drbs.columns
    indexes = c["drb"][rows]
    cells = (c["poll_byte"][rows] << np.uint64(32)) | c["poll_pdu"][rows]
    per_write = max(1, batch // 2)

    def batch_of(first: int):
        chunk = slice(first, first + per_write)
        chunk_indexes = indexes[chunk]
        return (lambda: rlc_poll.encoded_writes(target, chunk_indexes, cells[chunk]),
                2 * len(chunk_indexes),
                lambda i: f"DRB {int(chunk_indexes[i // 2])} (rlc_poll registers)")
    return [batch_of(first) for first in range(0, len(rows), per_write)]


def refuse_poll_without_numbering(targets) -> None:
    """A poll configuration asked for where no selected target would use it."""
    if not any(rlc_poll.numbers_amd_pdus(t.config) for t in targets):
        raise GnbctlError("nothing written: the RLC poll configuration is kept by the "
                          "targets that number AMD PDUs (NIC targets and hosts without a "
                          "NIC), and none is selected")


async def ensure_clone_session(target) -> None:
    from controller.entities import baas_clone_session
    existing = await target.read(baas_clone_session())
    update = ~baas_clone_session() if existing else +baas_clone_session()
    await target.write([update], lambda u: "clone session 1 -> BaaS port 2")


# ---- single DRBs ----------------------------------------------------------

async def add(targets, drb: Drb) -> None:
    from controller import entities
    validate(drb)
    if drb.has_poll_config:
        refuse_poll_without_numbering(targets)
    await drb_keys.refuse_in_use(targets, [drb])

    async def add_one(target):
        poll = drb.has_poll_config and rlc_poll.numbers_amd_pdus(target.config)
        if poll:
            # before the entries: the DRB's first PDU is counted against it
            await rlc_poll.configure(target, drb.drb, drb.poll_pdu, drb.poll_byte)
        try:
            await target.write([+entities.dl_drb(drb), +entities.ul_bearer(drb)],
                               lambda u: f"DRB {drb.drb} ({u.table_id})")
        except GnbctlError:
            if poll:
                # the index has no DRB: leave it at the defaults for the next one
                with contextlib.suppress(GnbctlError):
                    await rlc_poll.reset(target, drb.drb)
            raise
    await on_every(targets, add_one)


async def find(target, drb_index: int) -> Drb | None:
    """The DRB as installed on the target (None if it lacks either entry),
    with its poll configuration where the target keeps one (rlc_poll.py);
    its entries found by key (drb_keys.locate)."""
    import finsy as fy
    located = await drb_keys.locate(target, drb_index)
    dl, ul = located.dl, located.ul
    if dl is None or ul is None:
        return None
    poll_pdu, poll_byte = (await rlc_poll.read(target, drb_index)
                           if rlc_poll.numbers_amd_pdus(target.config) else (0, 0))
    d = fy.P4TableEntry.decode_entry(dl, target.schema)
    u = fy.P4TableEntry.decode_entry(ul, target.schema)
    a, b = d.action.args, u.action.args
    return Drb(drb=drb_index, teid=d.match["teid"], ue_id=a["ue_id"], lcid=a["lcid"],
               rlc="am" if a["rlc_am"] else "um", rlc_sn=18 if a["rlc_sn18"] else 12,
               pdcp_sn=18 if a["pdcp_sn18"] else 12, qfi=a["default_qfi"],
               ue_mac=_int(a["ue_mac"]), ul_teid=b["teid"], gnb_ip=_int(b["gnb_ip"]),
               upf_ip=_int(b["upf_ip"]), upf_mac=_int(b["upf_mac"]),
               poll_pdu=poll_pdu, poll_byte=poll_byte)


def _int(value) -> int:
    """finsy decodes MAC and IPv4 parameters to address objects."""
    if isinstance(value, int):
        return value
    if hasattr(value, "packed"):
        return int.from_bytes(value.packed, "big")
    return int(value)


async def delete(targets, drb_index: int) -> tuple[int, int] | None:
    """Deletes the DRB's entries on every target (found by key:
    drb_keys.locate) and resets its poll registers where kept; returns its
    (ue_id, lcid) bearer as the first target had it (what the BaaS names
    it by)."""
    import finsy as fy

    async def delete_one(target):
        located = await drb_keys.locate(target, drb_index)
        dl, ul = located.dl, located.ul
        if dl is None and ul is None:
            raise GnbctlError(f"{target.name}: DRB {drb_index}: NOT_FOUND: "
                              "no dl_drb or ul_bearer entry names it")
        updates = [-fy.P4TableEntry.decode_entry(e, target.schema) for e in (dl, ul)
                   if e is not None]
        await target.write(updates, lambda u: f"DRB {drb_index} ({u.table_id})")
        if rlc_poll.numbers_amd_pdus(target.config):
            # after the entries, so no PDU of the DRB counts again: a DRB
            # that reuses the index starts from the defaults
            await rlc_poll.reset(target, drb_index)
        return located.bearer
    bearers = await on_every(targets, delete_one)
    return next((b for b in bearers if b is not None), None)


async def counts(target) -> dict:
    """How many entries dl_drb and ul_bearer hold (counted, not decoded)."""
    tables = [drb_keys.by_table(target, t) for t in DRB_TABLES]
    found = await asyncio.gather(*(target.count(entity) for entity in tables))
    return dict(zip(DRB_TABLES, found))

