"""StreamChannel robustness against misbehaving clients, on raw gRPC
channels: a client that never reads its responses must not stop the
primary controller's Writes (its stream ends with RESOURCE_EXHAUSTED once
its bounded queue of responses is full), and a message that does not
parse ends the stream with INVALID_ARGUMENT."""
from __future__ import annotations

import threading
import time

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import TIMEOUT, update

pytestmark = pytest.mark.dpdk
Code = grpc.StatusCode

STREAM_METHOD = "/p4.v1.P4Runtime/StreamChannel"
# a Write must be answered within this long, even on a loaded machine
WRITE_DEADLINE = 3.0


def raw_stream(address: str, requests):
    """StreamChannel with bytes as they are (no serialization): returns the
    channel and the response iterator, which the caller may never read.
    The channel keeps HTTP/2's default 64 KB window (no BDP probing grows
    it), so a client that does not read stops the server's writes after
    about a thousand responses, as a slow client on a slow link would."""
    channel = grpc.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)])
    call = channel.stream_stream(STREAM_METHOD)(requests, timeout=60)
    return channel, call


def packet_outs(count: int):
    message = p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x" * 64))
    data = message.SerializeToString()
    for _ in range(count):
        yield data


def arbitration_updates(count: int, election_id: int):
    message = p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=1, election_id=p4r.Uint128(low=election_id)))
    data = message.SerializeToString()
    for _ in range(count):
        yield data


def stream_end(call) -> tuple[Code, int]:
    """Reads the stream to its end: its status code and how many responses
    came before it."""
    responses = 0
    try:
        for _ in call:
            responses += 1
    except grpc.RpcError as error:
        return error.code(), responses
    return Code.OK, responses


def drop_entry(names, f1: int) -> p4r.Update:
    return update("INSERT", table_entry=names.table_entry(
        "ingress.t_exact", {"hdr.data.f1": f1}, names.action("ingress.drop")))


def test_a_client_that_never_reads_does_not_stop_the_primary(target, names):
    primary = target.primary((0, 10))
    floods = [raw_stream(target.address, packet_outs(200_000)),
              raw_stream(target.address, arbitration_updates(200_000, 3))]
    time.sleep(2.0)    # time to fill the transport's windows and the queues
    written = []
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        f1 = len(written) + 1
        request = p4r.WriteRequest(device_id=1, updates=[drop_entry(names, f1)])
        request.election_id.low = 10
        primary.stub.Write(request, timeout=WRITE_DEADLINE)
        written.append(f1)
        time.sleep(0.1)
    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))
    assert sorted(e.table_entry.match[0].exact.value[0] for e in primary.read(table)) \
        == written

    # the primary's own stream still answers at once
    primary.send_stream(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x")))
    assert primary.next_response(timeout=WRITE_DEADLINE).error.canonical_code == \
        Code.UNIMPLEMENTED.value[0]
    # the floods were cut off when their responses had filled the server's
    # bounded queue (1024) behind what the transport held
    for channel, call in floods:
        code, responses = stream_end(call)
        assert (code, responses < 20_000) == (Code.RESOURCE_EXHAUSTED, True), responses
        channel.close()
    # and the primary is still the primary
    primary.write([drop_entry(names, 1000)])


@pytest.mark.parametrize("garbage", [b"\x0f", b"\x0a\x05ab", b"\xff" * 40],
                         ids=["bad wire type", "truncated field", "bad varint"])
def test_unparsable_message_ends_the_stream_with_invalid_argument(target, names, garbage):
    primary = target.primary()
    done = threading.Event()

    def requests():
        yield garbage
        done.wait(TIMEOUT)    # keeps the stream open: the server must end it

    channel, call = raw_stream(target.address, requests())
    try:
        started = time.monotonic()
        assert stream_end(call) == (Code.INVALID_ARGUMENT, 0)
        assert time.monotonic() - started < TIMEOUT / 2
    finally:
        done.set()
        call.cancel()
        channel.close()
    primary.write([drop_entry(names, 1)])
