"""Counters, direct counters, registers and clone sessions through the
P4Runtime server of a real target."""
from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4data_pb2, p4runtime_pb2 as p4r

from p4rt_client import update, write_errors

pytestmark = pytest.mark.dpdk
Code = grpc.StatusCode


def codes(error) -> list[int]:
    assert error.code() == Code.UNKNOWN, (error.code(), error.details())
    return [e.canonical_code for e in write_errors(error)]


def test_indexed_counter(target, names):
    client = target.primary()
    cid = names.counters["ingress.port_counter"].preamble.id
    cell = lambda i, p=0, b=0: p4r.CounterEntry(  # noqa: E731
        counter_id=cid, index=p4r.Index(index=i),
        data=p4r.CounterData(packet_count=p, byte_count=b))
    client.write([update("MODIFY", counter_entry=cell(3, 11, 1500))])
    assert [e.counter_entry for e in
            client.read(p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=cid, index=p4r.Index(index=3))))] == [cell(3, 11, 1500)]
    everything = client.read(p4r.Entity(counter_entry=p4r.CounterEntry()))
    assert [e.counter_entry for e in everything] == \
        [cell(i, 11, 1500) if i == 3 else cell(i) for i in range(8)]
    # without data nothing changes (spec, "CounterEntry": "the counter value
    # is not modified if this Protobuf field is not set")
    client.write([update("MODIFY", counter_entry=p4r.CounterEntry(counter_id=cid))])
    assert client.read(p4r.Entity(counter_entry=p4r.CounterEntry())) == everything
    # an unset index writes every cell
    client.write([update("MODIFY", counter_entry=p4r.CounterEntry(
        counter_id=cid, data=p4r.CounterData()))])
    assert all(e.counter_entry.data == p4r.CounterData() for e in
               client.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cid))))
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("MODIFY", counter_entry=cell(8)),
                      update("INSERT", counter_entry=cell(1)),
                      update("MODIFY", counter_entry=p4r.CounterEntry(counter_id=1))])
    assert codes(error.value) == [Code.OUT_OF_RANGE.value[0],
                                  Code.INVALID_ARGUMENT.value[0],
                                  Code.NOT_FOUND.value[0]]


def test_direct_counter(target, names):
    client = target.primary()
    entry = names.table_entry("ingress.t_exact", {"hdr.data.f1": 5},
                              names.action("ingress.forward", port=1, tag=1))
    entry.counter_data.packet_count = 4
    entry.counter_data.byte_count = 400
    client.write([update("INSERT", table_entry=entry)])
    key = names.table_entry("ingress.t_exact", {"hdr.data.f1": 5})
    expected = p4r.DirectCounterEntry(table_entry=key,
                                      data=p4r.CounterData(packet_count=4, byte_count=400))
    query = p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=key.table_id)))
    assert [e.direct_counter_entry for e in client.read(query)] == [expected]
    # through the table entry, when asked for
    asked = p4r.TableEntry(table_id=key.table_id)
    asked.counter_data.SetInParent()
    assert [e.table_entry for e in client.read(p4r.Entity(table_entry=asked))] == [entry]

    expected.data.packet_count, expected.data.byte_count = 0, 0
    client.write([update("MODIFY", direct_counter_entry=expected)])
    assert [e.direct_counter_entry for e in client.read(query)] == [expected]
    # a MODIFY of the table entry without an action changes only the counter
    only_counter = names.table_entry("ingress.t_exact", {"hdr.data.f1": 5})
    only_counter.counter_data.packet_count = 9
    client.write([update("MODIFY", table_entry=only_counter)])
    assert client.read(query)[0].direct_counter_entry.data.packet_count == 9

    missing = p4r.DirectCounterEntry(table_entry=names.table_entry(
        "ingress.t_exact", {"hdr.data.f1": 6}))
    no_counter = p4r.DirectCounterEntry(table_entry=names.table_entry(
        "ingress.t_small", {"hdr.data.h2": 1}))
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("MODIFY", direct_counter_entry=missing),
                      update("MODIFY", direct_counter_entry=no_counter)])
    assert codes(error.value) == [Code.NOT_FOUND.value[0], Code.INVALID_ARGUMENT.value[0]]


def test_register(target, names):
    client = target.primary()
    rid = names.registers["ingress.seen"].preamble.id
    cell = lambda i, v: p4r.RegisterEntry(  # noqa: E731
        register_id=rid, index=p4r.Index(index=i), data=p4data_pb2.P4Data(bitstring=v))
    client.write([update("MODIFY", register_entry=cell(2, b"\x00\xde\xad\xbe\xef"))])
    assert [e.register_entry for e in client.read(p4r.Entity(
        register_entry=p4r.RegisterEntry(register_id=rid, index=p4r.Index(index=2))))] \
        == [cell(2, b"\xde\xad\xbe\xef")]
    everything = [e.register_entry for e in
                  client.read(p4r.Entity(register_entry=p4r.RegisterEntry()))]
    assert everything == [cell(i, b"\xde\xad\xbe\xef" if i == 2 else b"\x00")
                          for i in range(16)]
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("MODIFY", register_entry=cell(16, b"\x01")),
                      update("MODIFY", register_entry=cell(1, b"\x01\x00\x00\x00\x00")),
                      update("DELETE", register_entry=cell(1, b"\x01")),
                      update("MODIFY", register_entry=p4r.RegisterEntry(
                          register_id=rid, index=p4r.Index(index=1)))])
    assert codes(error.value) == [Code.OUT_OF_RANGE.value[0], Code.OUT_OF_RANGE.value[0],
                                  Code.INVALID_ARGUMENT.value[0],
                                  Code.INVALID_ARGUMENT.value[0]]


def clone_session(session: int, port: int, truncate: int = 0) -> p4r.PacketReplicationEngineEntry:
    entry = p4r.PacketReplicationEngineEntry()
    s = entry.clone_session_entry
    s.session_id, s.packet_length_bytes = session, truncate
    s.replicas.add(egress_port=port)
    return entry


def test_clone_sessions(target):
    client = target.primary()
    client.write([update("INSERT", packet_replication_engine_entry=clone_session(7, 2)),
                  update("INSERT", packet_replication_engine_entry=clone_session(9, 3, 64))])
    everything = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry()))
    assert [e.packet_replication_engine_entry for e in client.read(everything)] == \
        [clone_session(7, 2), clone_session(9, 3, 64)]
    client.write([update("MODIFY", packet_replication_engine_entry=clone_session(7, 4)),
                  update("DELETE", packet_replication_engine_entry=clone_session(9, 0))])
    assert [e.packet_replication_engine_entry for e in client.read(everything)] == \
        [clone_session(7, 4)]

    by_bytes = clone_session(11, 0)
    by_bytes.clone_session_entry.replicas[0].port = b"\x01\x05"
    client.write([update("INSERT", packet_replication_engine_entry=by_bytes)])
    one = p4r.Entity(packet_replication_engine_entry=clone_session(11, 0))
    one.packet_replication_engine_entry.clone_session_entry.ClearField("replicas")
    assert [e.packet_replication_engine_entry for e in client.read(one)] == \
        [clone_session(11, 0x105)]

    two_replicas = clone_session(12, 1)
    two_replicas.clone_session_entry.replicas.add(egress_port=2)
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("INSERT", packet_replication_engine_entry=clone_session(7, 1)),
                      update("MODIFY", packet_replication_engine_entry=clone_session(8, 1)),
                      update("DELETE", packet_replication_engine_entry=clone_session(8, 1)),
                      update("INSERT", packet_replication_engine_entry=clone_session(40000, 1)),
                      update("INSERT", packet_replication_engine_entry=clone_session(13, 512)),
                      update("INSERT", packet_replication_engine_entry=two_replicas)])
    assert codes(error.value) == [Code.ALREADY_EXISTS.value[0], Code.NOT_FOUND.value[0],
                                  Code.NOT_FOUND.value[0], Code.OUT_OF_RANGE.value[0],
                                  Code.OUT_OF_RANGE.value[0], Code.UNIMPLEMENTED.value[0]]


def test_clone_session_0_is_reserved(target):
    """P4Runtime spec, "CloneSessionEntry": session id 0 is reserved; a write
    of it is INVALID_ARGUMENT, whatever the update type."""
    client = target.primary()
    with pytest.raises(grpc.RpcError) as error:
        client.write([update(kind, packet_replication_engine_entry=clone_session(0, 1))
                      for kind in ("INSERT", "MODIFY", "DELETE")])
    assert codes(error.value) == [Code.INVALID_ARGUMENT.value[0]] * 3
    everything = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry()))
    assert client.read(everything) == []


def test_negative_index_is_invalid_argument(target, names):
    """P4Runtime spec, "CounterEntry" / "RegisterEntry": an index beyond the
    array is OUT_OF_RANGE, a negative one INVALID_ARGUMENT; on writes and
    reads alike, and the cells are left as they were."""
    client = target.primary()
    cid = names.counters["ingress.port_counter"].preamble.id
    rid = names.registers["ingress.seen"].preamble.id
    counter = lambda i: p4r.CounterEntry(  # noqa: E731
        counter_id=cid, index=p4r.Index(index=i), data=p4r.CounterData(packet_count=5))
    register = lambda i: p4r.RegisterEntry(  # noqa: E731
        register_id=rid, index=p4r.Index(index=i), data=p4data_pb2.P4Data(bitstring=b"\x05"))
    with pytest.raises(grpc.RpcError) as error:
        client.write([update("MODIFY", counter_entry=counter(-1)),
                      update("MODIFY", counter_entry=counter(-(2**63))),
                      update("MODIFY", register_entry=register(-1)),
                      update("MODIFY", counter_entry=counter(8)),
                      update("MODIFY", register_entry=register(16))])
    invalid, out_of_range = Code.INVALID_ARGUMENT.value[0], Code.OUT_OF_RANGE.value[0]
    assert codes(error.value) == [invalid, invalid, invalid, out_of_range, out_of_range]
    for query in (p4r.Entity(counter_entry=counter(-1)),
                  p4r.Entity(register_entry=register(-3))):
        with pytest.raises(grpc.RpcError) as error:
            client.read(query)
        assert codes(error.value) == [invalid]
    assert all(e.counter_entry.data == p4r.CounterData() for e in
               client.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cid))))
    assert all(e.register_entry.data.bitstring == b"\x00" for e in
               client.read(p4r.Entity(register_entry=p4r.RegisterEntry(register_id=rid))))


def test_action_profiles_read_as_none(target):
    """The target has no action profiles: wildcard reads of their members
    and groups find nothing, a read naming a profile is NOT_FOUND."""
    client = target.client()
    assert client.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
                       p4r.Entity(action_profile_group=p4r.ActionProfileGroup())) == []
    with pytest.raises(grpc.RpcError) as error:
        client.read(p4r.Entity(action_profile_group=p4r.ActionProfileGroup(
            action_profile_id=0x11000001)))
    assert codes(error.value) == [Code.NOT_FOUND.value[0]]


def test_finsy_delete_all(target, names):
    """finsy's Switch.delete_all() reads every table entry, multicast group
    and clone session in one Read and deletes the table entries it found
    (with a const table in the program, finsy deletes only table entries),
    then reads every action profile member and group."""
    import asyncio

    import finsy as fy

    client = target.primary()
    entry = names.table_entry("ingress.t_exact", {"hdr.data.f1": 5},
                              names.action("ingress.forward", port=1, tag=1))
    client.write([update("INSERT", table_entry=entry)])

    async def delete_all():
        options = fy.SwitchOptions(device_id=1, initial_election_id=100)
        async with fy.Switch("target", target.address, options) as switch:
            await switch.delete_all()

    asyncio.run(asyncio.wait_for(delete_all(), 60))
    tables = client.read(p4r.Entity(table_entry=p4r.TableEntry()))
    const_id = names.tables["ingress.t_const"].preamble.id
    assert [e.table_entry.table_id for e in tables] == [const_id, const_id]
