"""Sessions and the pipeline: arbitration by election id, the device id,
Capabilities, Get/SetForwardingPipelineConfig against the P4Info the
target was compiled with, and malformed requests that must not hurt the
target."""
from __future__ import annotations

import copy

import grpc
import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import TIMEOUT, update

pytestmark = pytest.mark.dpdk
Code = grpc.StatusCode
OK, ALREADY_EXISTS, NOT_FOUND = 0, Code.ALREADY_EXISTS.value[0], Code.NOT_FOUND.value[0]


def drop_entry(names, f1: int) -> p4r.Update:
    return update("INSERT", table_entry=names.table_entry(
        "ingress.t_exact", {"hdr.data.f1": f1}, names.action("ingress.drop")))


def test_primary_and_backup(target, names):
    first = target.client()
    assert first.arbitrate((0, 5)).status.code == OK
    backup = target.client()
    update_ = backup.arbitrate((0, 3))
    assert (update_.status.code, update_.election_id.low) == (ALREADY_EXISTS, 5)

    with pytest.raises(grpc.RpcError) as error:
        backup.write([drop_entry(names, 1)])
    assert error.value.code() == Code.PERMISSION_DENIED
    first.write([drop_entry(names, 1)])

    # a higher election id takes over; both hear of it
    newcomer = target.client()
    assert newcomer.arbitrate((1, 0)).status.code == OK
    assert first.next_response().arbitration.status.code == ALREADY_EXISTS
    assert backup.next_response().arbitration.status.code == ALREADY_EXISTS
    with pytest.raises(grpc.RpcError) as error:
        first.write([drop_entry(names, 2)])
    assert error.value.code() == Code.PERMISSION_DENIED
    newcomer.write([drop_entry(names, 2)])

    # the primary leaves: nobody is primary, even the lower ids that remain
    newcomer.close()
    assert first.next_response().arbitration.status.code == NOT_FOUND
    with pytest.raises(grpc.RpcError) as error:
        first.write([drop_entry(names, 3)])
    assert error.value.code() == Code.PERMISSION_DENIED
    # until one comes back with an id at least the highest seen
    assert first.arbitrate((1, 0)).status.code == OK
    first.write([drop_entry(names, 3)])


def test_arbitration_errors_end_the_stream(target):
    taken = target.client()
    assert taken.arbitrate((0, 9)).status.code == OK
    same_id = target.client()
    same_id.send_arbitration((0, 9))
    assert same_id.next_response() is None
    assert same_id.stream_error.code() == Code.INVALID_ARGUMENT

    wrong_device = target.client()
    wrong_device.send_arbitration((0, 10), device_id=42)
    assert wrong_device.next_response() is None
    assert wrong_device.stream_error.code() == Code.NOT_FOUND

    # the stream keeps its device id and role
    switching = target.client()
    assert switching.arbitrate((0, 11)).status.code == OK
    switching.send_arbitration((0, 11), role="other")
    assert taken.next_response().arbitration.status.code == ALREADY_EXISTS
    assert switching.next_response() is None
    assert switching.stream_error.code() == Code.FAILED_PRECONDITION


def test_packet_out_is_answered_with_a_stream_error(target):
    client = target.primary()
    client.send_stream(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x")))
    response = client.next_response()
    assert response.error.canonical_code == Code.UNIMPLEMENTED.value[0]


def test_device_id(start_target, names):
    target = start_target(device_id=7)
    client = target.client(device_id=7)
    assert client.arbitrate((0, 1)).status.code == OK
    client.write([drop_entry(names, 1)])
    for call in (lambda: client.write([drop_entry(names, 2)], device_id=1),
                 lambda: client.read(p4r.Entity(table_entry=p4r.TableEntry()), device_id=1)):
        with pytest.raises(grpc.RpcError) as error:
            call()
        assert error.value.code() == Code.NOT_FOUND


def test_capabilities(target):
    response = target.client().stub.Capabilities(p4r.CapabilitiesRequest(), timeout=TIMEOUT)
    assert response.p4runtime_api_version == "1.5.0"


def test_get_returns_the_compiled_p4info(target, names, objects_build):
    client = target.client()
    config = client.get_pipeline("ALL").config
    compiled = p4info_pb2.P4Info.FromString(
        objects_build.p4info_text_path.with_suffix(".binpb").read_bytes())
    assert config.p4info == compiled == names.p4info
    assert not config.HasField("cookie")
    only_cookie = client.get_pipeline("COOKIE_ONLY").config
    assert not only_cookie.HasField("p4info")


def test_set_pipeline(target, names):
    client = target.primary()
    client.write([drop_entry(names, 1)])
    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))

    client.set_pipeline("VERIFY", names.p4info)
    client.set_pipeline("RECONCILE_AND_COMMIT", names.p4info, b"blob", cookie=3)
    assert len(client.read(table)) == 1
    config = client.get_pipeline("ALL").config
    assert (config.cookie.cookie, config.p4_device_config) == (3, b"blob")

    client.set_pipeline("VERIFY_AND_SAVE", names.p4info, b"saved", cookie=4)
    assert client.get_pipeline("COOKIE_ONLY").config.cookie.cookie == 3
    client.set_pipeline("COMMIT")
    assert client.get_pipeline("COOKIE_ONLY").config.cookie.cookie == 4
    assert len(client.read(table)) == 1
    with pytest.raises(grpc.RpcError) as error:
        client.set_pipeline("COMMIT")
    assert error.value.code() == Code.NOT_FOUND

    # VERIFY_AND_COMMIT: the forwarding state starts over
    client.write([update("MODIFY", table_entry=names.table_entry(
        "ingress.t_exact", action=names.action("ingress.forward", port=1, tag=1),
        default=True))])
    client.set_pipeline("VERIFY_AND_COMMIT", names.p4info, cookie=5)
    assert client.read(table) == []
    default = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id, is_default_action=True))
    assert client.read(default)[0].table_entry.action.action.action_id == \
        names.actions["ingress.drop"].preamble.id


def test_set_pipeline_refuses_another_p4info(target, names):
    client = target.primary()
    other = copy.deepcopy(names.p4info)
    other.tables[0].size = 12
    for action in ("VERIFY", "VERIFY_AND_COMMIT", "RECONCILE_AND_COMMIT"):
        with pytest.raises(grpc.RpcError) as error:
            client.set_pipeline(action, other)
        assert error.value.code() == Code.INVALID_ARGUMENT, action
        assert "size" in error.value.details()
    backup = target.client()
    backup.arbitrate((0, 0))
    with pytest.raises(grpc.RpcError) as error:
        backup.set_pipeline("VERIFY", names.p4info)
    assert error.value.code() == Code.PERMISSION_DENIED


def test_malformed_requests_do_not_hurt_the_target(target, names):
    client = target.primary()
    for method in ("Write", "Read", "SetForwardingPipelineConfig", "StreamChannel"):
        path = f"/p4.v1.P4Runtime/{method}"
        if method == "StreamChannel":
            call = client.channel.stream_stream(path)
            responses = call(iter([b"\xff\xff\xff", b"\x0a\x05garbage"]), timeout=5)
            # the server stops reading at the first bad message: the
            # stream ends, with or without an error status
            try:
                assert list(responses) == []
            except grpc.RpcError as error:
                assert error.code() != Code.DEADLINE_EXCEEDED
            continue
        if method == "Read":
            call = client.channel.unary_stream(path)
            with pytest.raises(grpc.RpcError):
                list(call(b"\x12\x03\xff\xff\xff", timeout=5))
            continue
        with pytest.raises(grpc.RpcError):
            client.channel.unary_unary(path)(b"\x22\x10\x08\x01\x12\xff", timeout=5)
    # still serving, state intact
    client.write([drop_entry(names, 1)])
    assert len(client.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id)))) == 1
    assert target.runtime.alive()
