"""Multicast groups (P4Runtime spec, "MulticastGroupEntry") through the
P4Runtime server of a real target: INSERT, MODIFY, DELETE and Read, and
the status codes the spec names for each mistake."""
from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import update, write_errors

pytestmark = pytest.mark.dpdk
Code = grpc.StatusCode
INVALID, NOT_FOUND, EXISTS, OUT_OF_RANGE, UNIMPLEMENTED = (
    c.value[0] for c in (Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ALREADY_EXISTS,
                         Code.OUT_OF_RANGE, Code.UNIMPLEMENTED))


def codes(error) -> list[int]:
    assert error.code() == Code.UNKNOWN, (error.code(), error.details())
    return [e.canonical_code for e in write_errors(error)]


def group(gid: int, *replicas, metadata: bytes = b"") -> p4r.PacketReplicationEngineEntry:
    """replicas: (port, instance) pairs, written with the deprecated
    uint32 egress_port, the field this target reads back."""
    entry = p4r.PacketReplicationEngineEntry()
    g = entry.multicast_group_entry
    g.multicast_group_id = gid
    g.metadata = metadata
    for port, instance in replicas:
        g.replicas.add(egress_port=port, instance=instance)
    return entry


def query(gid: int = 0) -> p4r.Entity:
    return p4r.Entity(packet_replication_engine_entry=group(gid))


def write(client, *updates):
    client.write([update(kind, packet_replication_engine_entry=entry)
                  for kind, entry in updates])


def read_groups(client, gid: int = 0) -> list:
    return [e.packet_replication_engine_entry for e in client.read(query(gid))]


def test_insert_modify_delete_and_read(target):
    client = target.primary()
    assert read_groups(client) == []
    one = group(1, (2, 10))
    three = group(7, (1, 20), (3, 20), (2, 21), metadata=b"\x00opaque")
    empty = group(9)
    write(client, ("INSERT", one), ("INSERT", three), ("INSERT", empty))
    # a wildcard read (id 0) in id order, replicas in the order written,
    # the metadata as written
    assert read_groups(client) == [one, three, empty]
    assert read_groups(client, 7) == [three]

    # the data plane's table: what the control socket reads is what was written
    groups = target.runtime.request({"cmd": "mcast_group_read"})["groups"]
    assert groups == [
        {"group": 1, "replicas": [{"port": 2, "rid": 10}]},
        {"group": 7, "replicas": [{"port": 1, "rid": 20}, {"port": 3, "rid": 20},
                                  {"port": 2, "rid": 21}]},
        {"group": 9, "replicas": []}]

    modified = group(7, (5, 1), (5, 2))
    write(client, ("MODIFY", modified), ("DELETE", group(1)))
    assert read_groups(client) == [modified, empty]

    # the bytes `port` of P4Runtime 1.4 is accepted too (read back as egress_port)
    by_bytes = group(11)
    by_bytes.multicast_group_entry.replicas.add(port=b"\x01\x05", instance=3)
    write(client, ("INSERT", by_bytes))
    assert read_groups(client, 11) == [group(11, (0x105, 3))]


def test_write_errors(target):
    client = target.primary()
    write(client, ("INSERT", group(5, (1, 1))))
    backup = group(6, (1, 1))
    backup.multicast_group_entry.replicas[0].backup_replicas.add(port=b"\x02")
    with pytest.raises(grpc.RpcError) as error:
        write(client,
              ("INSERT", group(5, (2, 2))),            # exists
              ("MODIFY", group(6, (2, 2))),            # missing
              ("DELETE", group(6)),                    # missing
              ("INSERT", group(0, (1, 1))),            # 0 is the read wildcard
              ("MODIFY", group(0, (1, 1))),
              ("DELETE", group(0)),
              ("INSERT", group(6, (1, 4), (1, 4))),    # the same (port, instance) twice
              ("INSERT", group(6, (512, 0))),          # no 9-bit port
              ("INSERT", group(6, (1, 0x10000))),      # egress_rid is bit<16>
              ("INSERT", group(0x10000, (1, 1))),      # mcast_grp is bit<16>
              ("INSERT", backup))
    assert codes(error.value) == [EXISTS, NOT_FOUND, NOT_FOUND, INVALID, INVALID, INVALID,
                                  INVALID, INVALID, INVALID, OUT_OF_RANGE, UNIMPLEMENTED]
    # nothing of the failed batch was written; group 5 kept its replica
    assert read_groups(client) == [group(5, (1, 1))]
    # the same (port, instance) in two groups, or one port with two instances: fine
    write(client, ("INSERT", group(6, (1, 1), (1, 2))))
    assert read_groups(client, 6) == [group(6, (1, 1), (1, 2))]


def test_read_errors(target):
    client = target.primary()
    with pytest.raises(grpc.RpcError) as error:
        client.read(query(5))
    assert codes(error.value) == [NOT_FOUND]
    with pytest.raises(grpc.RpcError) as error:
        client.read(query(0x10000))
    assert codes(error.value) == [OUT_OF_RANGE]
