"""Table entries through the P4Runtime server of a real target: round
trips for every match kind, default entries, const tables, wildcard reads,
the status codes of bad updates and full tables, batches with one
p4.v1.Error per update."""
from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import update, write_errors

pytestmark = pytest.mark.dpdk
Code = grpc.StatusCode


def table_query(names, table: str, **fields) -> p4r.Entity:
    return p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables[table].preamble.id, **fields))


def read_table(client, names, table: str) -> list[p4r.TableEntry]:
    return [e.table_entry for e in client.read(table_query(names, table))]


def failed_codes(error: grpc.RpcError) -> list[int]:
    assert error.code() == Code.UNKNOWN, (error.code(), error.details())
    return [e.canonical_code for e in write_errors(error)]


# (table, match, priority, action, modified action) per match kind
def match_kind_cases(names):
    a = names.action
    return {
        "exact": ("ingress.t_exact", {"hdr.data.f1": 0x0a0b0c0d}, 0,
                  a("ingress.forward", port=1, tag=0x22),
                  a("ingress.forward", port=3, tag=0x44)),
        "lpm": ("ingress.t_lpm", {"hdr.data.f2": (0x0a010000, 16)}, 0,
                a("ingress.set_h1", value=0x77), a("NoAction")),
        "ternary": ("ingress.t_ternary", {"hdr.data.h1": (0x1200, 0xff00),
                                          "hdr.data.b2": 5}, 10,
                    a("ingress.set_b2", value=9), a("ingress.set_b2", value=0x99)),
        "range": ("ingress.t_range", {"hdr.data.h2": (0x100, 0x1ff)}, 3,
                  a("ingress.set_h1", value=0x1234), a("ingress.set_h1", value=1)),
        "optional": ("ingress.t_optional", {"hdr.data.b1": 3, "hdr.data.b2": 4}, 7,
                     a("ingress.set_b2", value=1), a("NoAction")),
    }


@pytest.mark.parametrize("kind", ["exact", "lpm", "ternary", "range", "optional"])
def test_insert_read_modify_delete(target, names, kind):
    table, match, priority, action, modified = match_kind_cases(names)[kind]
    client = target.primary()
    entry = names.table_entry(table, match, action, priority)
    client.write([update("INSERT", table_entry=entry)])

    assert read_table(client, names, table) == [entry]
    specific = names.table_entry(table, match, priority=priority)
    assert [e.table_entry for e in client.read(p4r.Entity(table_entry=specific))] == [entry]

    changed = names.table_entry(table, match, modified, priority)
    client.write([update("MODIFY", table_entry=changed)])
    assert read_table(client, names, table) == [changed]

    client.write([update("DELETE", table_entry=specific)])
    assert read_table(client, names, table) == []


def test_omitted_fields_are_wildcards_and_read_back_omitted(target, names):
    client = target.primary()
    # ternary h1 omitted: don't care
    entry = names.table_entry("ingress.t_ternary", {"hdr.data.b2": 5},
                              names.action("ingress.set_b2", value=1), priority=1)
    client.write([update("INSERT", table_entry=entry)])
    assert read_table(client, names, "ingress.t_ternary") == [entry]


def test_values_with_leading_zeros_read_back_canonical(target, names):
    client = target.primary()
    entry = names.table_entry("ingress.t_exact", {"hdr.data.f1": b"\x00\x00\x00\x07"},
                              names.action("ingress.forward", port=b"\x00\x01",
                                           tag=b"\x00"))
    client.write([update("INSERT", table_entry=entry)])
    expected = names.table_entry("ingress.t_exact", {"hdr.data.f1": 7},
                                 names.action("ingress.forward", port=1, tag=0))
    assert read_table(client, names, "ingress.t_exact") == [expected]
    assert expected.match[0].exact.value == b"\x07"
    assert expected.action.action.params[1].value == b"\x00"


def test_wildcard_read_of_every_table(target, names):
    client = target.primary()
    written = [names.table_entry(table, match, action, priority)
               for table, match, priority, action, _ in
               match_kind_cases(names).values()]
    client.write([update("INSERT", table_entry=e) for e in written])
    found = [e.table_entry for e in client.read(p4r.Entity(table_entry=p4r.TableEntry()))]
    const = names.tables["ingress.t_const"].preamble.id
    assert sorted(e.SerializeToString(deterministic=True) for e in found
                  if e.table_id != const) == \
        sorted(e.SerializeToString(deterministic=True) for e in written)
    const_entries = [e for e in found if e.table_id == const]
    assert [(e.is_const, e.match[0].exact.value, e.action.action.params[0].value)
            for e in const_entries] == [(True, b"\x01", b"\x01\x01"),
                                        (True, b"\x02", b"\x02\x02")]


def test_filters_on_priority_and_action(target, names):
    client = target.primary()
    a = names.action
    entries = [names.table_entry("ingress.t_range", {"hdr.data.h2": (i, i + 10)},
                                 a("ingress.set_h1", value=i) if i % 2 else a("NoAction"),
                                 priority=i)
               for i in range(1, 7)]
    client.write([update("INSERT", table_entry=e) for e in entries])
    by_priority = client.read(table_query(names, "ingress.t_range", priority=4))
    assert [e.table_entry for e in by_priority] == [entries[3]]
    query = table_query(names, "ingress.t_range")
    query.table_entry.action.action.action_id = names.actions["NoAction"].preamble.id
    assert sorted(e.table_entry.priority for e in client.read(query)) == [2, 4, 6]


def test_default_entry(target, names):
    client = target.primary()
    default = table_query(names, "ingress.t_exact", is_default_action=True)
    declared = names.table_entry("ingress.t_exact", action=names.action("ingress.drop"),
                                 default=True)
    assert [e.table_entry for e in client.read(default)] == [declared]

    changed = names.table_entry("ingress.t_exact",
                                action=names.action("ingress.forward", port=2, tag=5),
                                default=True)
    client.write([update("MODIFY", table_entry=changed)])
    assert [e.table_entry for e in client.read(default)] == [changed]
    # a MODIFY without an action resets it to the P4 program's
    client.write([update("MODIFY", table_entry=names.table_entry("ingress.t_exact",
                                                                 default=True))])
    assert [e.table_entry for e in client.read(default)] == [declared]
    # the default entry is not among the wildcard read's entries
    assert read_table(client, names, "ingress.t_exact") == []

    with pytest.raises(grpc.RpcError) as error:
        client.write([update("INSERT", table_entry=changed),
                      update("DELETE", table_entry=changed)])
    assert failed_codes(error.value) == [Code.INVALID_ARGUMENT.value[0]] * 2


def test_action_scopes_and_const_defaults(target, names):
    client = target.primary()
    a = names.action
    cases = [
        # @defaultonly as an entry's action
        update("INSERT", table_entry=names.table_entry(
            "ingress.t_ternary", {"hdr.data.b2": 1}, a("ingress.miss"), priority=1)),
        # const default action
        update("MODIFY", table_entry=names.table_entry(
            "ingress.t_const", action=a("ingress.set_h1", value=1), default=True)),
        # const entries
        update("INSERT", table_entry=names.table_entry(
            "ingress.t_const", {"hdr.data.b2": 9}, a("NoAction"))),
        update("DELETE", table_entry=names.table_entry(
            "ingress.t_const", {"hdr.data.b2": 1})),
        # allowed: @defaultonly as the default action
        update("MODIFY", table_entry=names.table_entry(
            "ingress.t_ternary", action=a("ingress.set_b2", value=3), default=True)),
    ]
    with pytest.raises(grpc.RpcError) as error:
        client.write(cases)
    assert failed_codes(error.value) == [Code.PERMISSION_DENIED.value[0]] * 4 + [0]


def bad_updates(names):
    """(description, update, expected code)"""
    a = names.action
    fwd = a("ingress.forward", port=1, tag=1)
    exact = lambda match, action=fwd, **kw: update(  # noqa: E731
        "INSERT", table_entry=names.table_entry("ingress.t_exact", match, action, **kw))
    ternary = lambda match, priority=1: update(  # noqa: E731
        "INSERT", table_entry=names.table_entry("ingress.t_ternary", match,
                                                a("ingress.set_b2", value=1), priority))
    lpm = lambda match: update(  # noqa: E731
        "INSERT", table_entry=names.table_entry("ingress.t_lpm", match, a("NoAction")))
    rng = lambda match: update(  # noqa: E731
        "INSERT", table_entry=names.table_entry("ingress.t_range", match,
                                                a("NoAction"), priority=1))
    unknown_table = exact({"hdr.data.f1": 1})
    unknown_table.entity.table_entry.table_id = 0x02fffffe
    no_type = exact({"hdr.data.f1": 1})
    no_type.type = p4r.Update.UNSPECIFIED
    missing_param = exact({"hdr.data.f1": 1})
    del missing_param.entity.table_entry.action.action.params[1]
    return [
        ("modify of a missing entry", update("MODIFY", table_entry=names.table_entry(
            "ingress.t_exact", {"hdr.data.f1": 99}, fwd)), Code.NOT_FOUND),
        ("delete of a missing entry", update("DELETE", table_entry=names.table_entry(
            "ingress.t_exact", {"hdr.data.f1": 99})), Code.NOT_FOUND),
        ("unknown table", unknown_table, Code.NOT_FOUND),
        ("exact value wider than the field", exact({"hdr.data.f1": 1 << 32}),
         Code.OUT_OF_RANGE),
        ("empty value", exact({"hdr.data.f1": b""}), Code.OUT_OF_RANGE),
        ("parameter wider than bit<9>", exact({"hdr.data.f1": 2},
                                              a("ingress.forward", port=512, tag=1)),
         Code.OUT_OF_RANGE),
        ("missing exact field", exact({}), Code.INVALID_ARGUMENT),
        ("priority on an exact table", exact({"hdr.data.f1": 3}, priority=5),
         Code.INVALID_ARGUMENT),
        ("action of another table", exact({"hdr.data.f1": 4},
                                          a("ingress.set_h1", value=1)),
         Code.INVALID_ARGUMENT),
        ("missing parameter", missing_param, Code.INVALID_ARGUMENT),
        ("update type unset", no_type, Code.INVALID_ARGUMENT),
        ("lpm value beyond the prefix", lpm({"hdr.data.f2": (0x0a010000, 8)}),
         Code.INVALID_ARGUMENT),
        ("lpm prefix 0", lpm({"hdr.data.f2": (0, 0)}), Code.INVALID_ARGUMENT),
        ("lpm prefix longer than the field", lpm({"hdr.data.f2": (1, 33)}),
         Code.INVALID_ARGUMENT),
        ("ternary mask 0", ternary({"hdr.data.h1": (0, 0), "hdr.data.b2": 1}),
         Code.INVALID_ARGUMENT),
        ("ternary value outside the mask",
         ternary({"hdr.data.h1": (0x1234, 0xff00), "hdr.data.b2": 1}),
         Code.INVALID_ARGUMENT),
        ("ternary entry without priority",
         ternary({"hdr.data.h1": (0x1200, 0xff00), "hdr.data.b2": 1}, priority=0),
         Code.INVALID_ARGUMENT),
        ("range low > high", rng({"hdr.data.h2": (9, 3)}), Code.INVALID_ARGUMENT),
        ("range covering everything", rng({"hdr.data.h2": (0, 0xffff)}),
         Code.INVALID_ARGUMENT),
        ("a meter entry", update("MODIFY", meter_entry=p4r.MeterEntry(meter_id=1)),
         Code.UNIMPLEMENTED),
        ("an empty entity", p4r.Update(type=p4r.Update.INSERT), Code.INVALID_ARGUMENT),
    ]


def test_bad_updates_get_their_status_code(target, names):
    client = target.primary()
    cases = bad_updates(names)
    with pytest.raises(grpc.RpcError) as error:
        client.write([u for _, u, _ in cases])
    codes = failed_codes(error.value)
    assert [(what, code) for (what, _, _), code in zip(cases, codes)] == \
        [(what, expected.value[0]) for what, _, expected in cases]
    assert all(e.message for e in write_errors(error.value))
    assert read_table(client, names, "ingress.t_exact") == []
    assert target.runtime.alive()


def test_batch_reports_each_update_and_applies_the_good_ones(target, names):
    client = target.primary()
    a = names.action
    good = [names.table_entry("ingress.t_exact", {"hdr.data.f1": i},
                              a("ingress.forward", port=1, tag=i)) for i in (1, 2)]
    client.write([update("INSERT", table_entry=good[0])])
    batch = [update("INSERT", table_entry=good[0]),            # exists
             update("INSERT", table_entry=good[1]),
             update("INSERT", table_entry=names.table_entry(
                 "ingress.t_exact", {"hdr.data.f1": 3}, a("ingress.forward", port=999,
                                                          tag=0)))]
    with pytest.raises(grpc.RpcError) as error:
        client.write(batch)
    errors = write_errors(error.value)
    assert [e.canonical_code for e in errors] == \
        [Code.ALREADY_EXISTS.value[0], 0, Code.OUT_OF_RANGE.value[0]]
    assert errors[1].message == ""
    assert sorted(e.match[0].exact.value for e in
                  read_table(client, names, "ingress.t_exact")) == [b"\x01", b"\x02"]


def test_full_table_is_resource_exhausted(target, names):
    client = target.primary()
    entry = lambda i: names.table_entry(  # noqa: E731
        "ingress.t_small", {"hdr.data.h2": i}, names.action("NoAction"))
    client.write([update("INSERT", table_entry=entry(i)) for i in range(4)])
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("INSERT", table_entry=entry(4))])
    assert failed_codes(error.value) == [Code.RESOURCE_EXHAUSTED.value[0]]
    client.write([update("DELETE", table_entry=entry(0)),
                  update("INSERT", table_entry=entry(4))])
    assert sorted(e.match[0].exact.value[0] for e in
                  read_table(client, names, "ingress.t_small")) == [1, 2, 3, 4]


def test_only_continue_on_error_atomicity(target, names):
    client = target.primary()
    entry = names.table_entry("ingress.t_exact", {"hdr.data.f1": 1},
                              names.action("ingress.drop"))
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("INSERT", table_entry=entry)],
                     atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR)
    assert error.value.code() == Code.UNIMPLEMENTED
    assert read_table(client, names, "ingress.t_exact") == []


def test_read_reports_each_request(target, names):
    client = target.primary()
    with pytest.raises(grpc.RpcError) as error:
        client.read(table_query(names, "ingress.t_const"),
                    p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02fffffe)),
                    p4r.Entity())
    assert failed_codes(error.value) == [0, Code.NOT_FOUND.value[0],
                                         Code.INVALID_ARGUMENT.value[0]]


def with_metadata(entry: p4r.TableEntry, metadata: bytes, cookie: int) -> p4r.TableEntry:
    entry = p4r.TableEntry.FromString(entry.SerializeToString())
    entry.metadata, entry.controller_metadata = metadata, cookie
    return entry


def test_metadata_is_stored_and_read_back(target, names):
    """P4Runtime spec, "TableEntry": metadata (and the deprecated
    controller_metadata) are opaque to the target, stored with the entry and
    returned by Read; a MODIFY with an action replaces them, one that only
    changes direct resources keeps them; a DELETE forgets them."""
    client = target.primary()
    cases = match_kind_cases(names)
    entries = [with_metadata(names.table_entry(table, match, action, priority),
                             b"\x00cookie " + kind.encode() + b"\xff", 1000 + i)
               for i, (kind, (table, match, priority, action, _)) in enumerate(cases.items())]
    client.write([update("INSERT", table_entry=e) for e in entries])
    for (table, *_), entry in zip(cases.values(), entries):
        assert read_table(client, names, table) == [entry]

    table, match, priority, action, modified = cases["exact"]
    changed = with_metadata(names.table_entry(table, match, modified, priority), b"new", 0)
    client.write([update("MODIFY", table_entry=changed)])
    assert read_table(client, names, table) == [changed]
    key = names.table_entry(table, match)
    assert [e.table_entry for e in client.read(p4r.Entity(table_entry=key))] == [changed]

    only_counter = names.table_entry(table, match)
    only_counter.counter_data.packet_count = 3
    client.write([update("MODIFY", table_entry=only_counter)])
    assert read_table(client, names, table) == [changed]

    client.write([update("DELETE", table_entry=key)])
    plain = names.table_entry(table, match, action, priority)
    client.write([update("INSERT", table_entry=plain)])
    assert read_table(client, names, table) == [plain]
