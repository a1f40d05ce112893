"""Copying a target's table entries to another target: how `gnbctl run`
provisions a returning host from its NIC (the NIC's `dl_drb` and
`ul_bearer` are the record of which DRBs exist) and restores a restarted
NIC from a host that kept them.

The two programs share names, not necessarily ids, so entries are matched
by name. When every id is the same (both builds come from our compiler)
the entries are not decoded at all: each Entity read is wrapped as an
INSERT as it was serialized and sent in Writes of COPY_BATCH, two in
flight, as the bulk DRB load does (decoding and re-encoding 131,072
entries in Python took about 2 s of the 2.8 s a host's provisioning took)."""
from __future__ import annotations

import asyncio

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import GnbctlError
from controller.targets import write_batches

COPY_BATCH = 8192
_INSERT = b"\x08\x01"          # Update.type (field 1) = INSERT
_ENTITY_TAG = b"\x12"          # Update.entity (field 2)
_UPDATES_TAG = b"\x22"         # WriteRequest.updates (field 4)


def _entity_ids(schema, table: str) -> dict:
    info = schema.tables[table]
    return {"table": info.id,
            "fields": {f.name: f.id for f in info.match_fields},
            "actions": {a.name: (schema.actions[a.name].id,
                                 {p.name: p.id for p in schema.actions[a.name].params})
                        for a in info.actions}}


def id_map(source_schema, dest_schema, table: str):
    """(table id, {field id}, {action id: (action id, {param id})}) from
    the source's ids to the destination's, matched by name."""
    src, dst = _entity_ids(source_schema, table), _entity_ids(dest_schema, table)
    try:
        fields = {src["fields"][n]: dst["fields"][n] for n in src["fields"]}
        actions = {src["actions"][n][0]: (dst["actions"][n][0],
                                          {src["actions"][n][1][p]: dst["actions"][n][1][p]
                                           for p in src["actions"][n][1]})
                   for n in src["actions"]}
    except KeyError as e:
        raise GnbctlError(f"table {table}: {e.args[0]} is not in both P4Infos") from None
    return dst["table"], fields, actions


def _is_identity(source_table_id: int, ids) -> bool:
    table_id, fields, actions = ids
    return (table_id == source_table_id and all(a == b for a, b in fields.items())
            and all(a == b and all(p == q for p, q in params.items())
                    for a, (b, params) in actions.items()))


def _renumbered(entry: p4r.TableEntry, ids) -> p4r.TableEntry:
    table_id, fields, actions = ids
    copy = p4r.TableEntry()
    copy.CopyFrom(entry)
    copy.table_id = table_id
    for m in copy.match:
        m.field_id = fields[m.field_id]
    action = copy.action.action
    action.action_id, params = actions[action.action_id]
    for p in action.params:
        p.param_id = params[p.param_id]
    return copy


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def insert_updates(entities: list[bytes]) -> bytes:
    """The `updates` of a WriteRequest inserting these serialized Entities."""
    parts = []
    for entity in entities:
        update = _INSERT + _ENTITY_TAG + _varint(len(entity)) + entity
        parts.append(_UPDATES_TAG + _varint(len(update)) + update)
    return b"".join(parts)


async def copy_table(source, dest, table: str) -> int:
    """Every entry of `table` on target `source` inserted on `dest`."""
    if not (source.has_table(table) and dest.has_table(table)):
        raise GnbctlError(f"table {table} is not in both {source.name}'s and "
                          f"{dest.name}'s pipelines")
    source_id = source.schema.tables[table].id
    ids = id_map(source.schema, dest.schema, table)
    found = await source.read_raw(p4r.Entity(table_entry=p4r.TableEntry(table_id=source_id)))
    if _is_identity(source_id, ids):
        encoded = [entity.SerializeToString() for entity in found]
    else:
        encoded = [p4r.Entity(table_entry=_renumbered(entity.table_entry, ids))
                   .SerializeToString() for entity in found]

    def batch_of(first: int):
        chunk = encoded[first:first + COPY_BATCH]
        return (lambda: insert_updates(chunk), len(chunk),
                lambda i: f"{table} entry {first + i} of {source.name}")

    await write_batches(dest, [batch_of(first) for first in range(0, len(encoded), COPY_BATCH)],
                        len(encoded))
    return len(found)


async def copy_tables(source, dest, tables) -> int:
    """Every entry of each of `tables` on `source` inserted on `dest`, the
    tables concurrently (one is read while the other is written)."""
    outcomes = await asyncio.gather(*(copy_table(source, dest, t) for t in tables),
                                    return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return sum(outcomes)


def read_request(schema, tables) -> list[p4r.Entity]:
    """The Read entities for every entry, and the default entry, of each
    table of `tables` the program has."""
    entities = []
    for table in tables:
        if schema.tables.get(table) is None:
            continue
        table_id = schema.tables[table].id
        entities += [p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id)),
                     p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id,
                                                           is_default_action=True))]
    return entities


def restore_updates(entities: list[p4r.Entity]) -> list[p4r.Update]:
    """Updates that put the entries a read_request() found back on a target
    of the same program whose tables are empty: INSERT for an entry, MODIFY
    for a default entry."""
    return [p4r.Update(type=p4r.Update.MODIFY if e.table_entry.is_default_action
                       else p4r.Update.INSERT, entity=e) for e in entities]
