"""The BaaS's gRPC API (baas/proto/baas.proto) through the real process:
every RPC, its answers and its error codes (unknown DRB -> NOT_FOUND, a
key or config value out of range -> INVALID_ARGUMENT with nothing
changed), partial SetConfig, Flush of one DRB and of all, and the Events
stream (from a sequence number, followed, cancelled, ended by a stopping
BaaS). The client is the stubs controller/baas.py generates."""
from __future__ import annotations

import asyncio
import threading
import time

import grpc
import pytest

from testbench.gnb.baas_frames import amd_frame
from controller import baas

pytestmark = pytest.mark.dpdk

pb2, _ = baas.stubs()
# DRB A: ue 1 lcid 4, 12-bit SNs 0..9; DRB B: ue 2 lcid 5, 18-bit SNs 0..2
A, B = (1, 4), (2, 5)
A_SNS, B_SNS = range(10), range(3)


def key(drb) -> "pb2.DrbKey":
    return pb2.DrbKey(ue_id=drb[0], lcid=drb[1])


def frames() -> list[bytes]:
    return ([amd_frame(*A, sn) for sn in A_SNS]
            + [amd_frame(*B, sn, sn_bits=18) for sn in B_SNS])


@pytest.fixture
def held(start_baas):
    """A BaaS holding DRBs A and B (replayed once from a pcap at start)."""
    process = start_baas(frames=frames())
    process.wait_received(len(A_SNS) + len(B_SNS))
    return process


def rpc_error(call, *args, **kwargs) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as failed:
        call(*args, timeout=10, **kwargs)
    return failed.value


def config_of(stub, drb=None) -> dict:
    return baas.to_dict(stub.GetConfig(
        pb2.ConfigRequest(drb=None if drb is None else key(drb)), timeout=10).config)


def test_stats_and_lists(held):
    stub = held.stub()
    sent = frames()
    stats = stub.GetStats(pb2.StatsRequest(), timeout=10)
    assert stats.WhichOneof("stats") == "global_stats"
    g = stats.global_stats
    assert (g.n_drbs, g.held, g.n_lcores) == (2, 13, 1)
    assert g.held_bytes == g.counters.bytes_received == sum(map(len, sent))
    assert g.counters.pdus_received == 13
    assert g.pool_in_use >= 13 and g.pool_size >= g.pool_in_use
    # every drop reason by its name, zero or not
    assert {"not_bearer", "not_am", "duplicate_sn", "outside_window"} <= set(g.counters.dropped)
    assert not any(g.counters.dropped.values())

    a = stub.GetStats(pb2.StatsRequest(drb=key(A)), timeout=10).drb
    assert (a.drb.ue_id, a.drb.lcid, a.sn_bits, a.tx_next_ack, a.tx_next, a.held) == \
        (*A, 12, 0, 10, 10)
    assert a.counters.pdus_received == 10
    assert a.held_bytes == a.counters.bytes_received == sum(map(len, sent[:10]))
    b = stub.GetStats(pb2.StatsRequest(drb=key(B)), timeout=10).drb
    assert (b.sn_bits, b.tx_next, b.held) == (18, 3, 3)

    listed = [d for r in stub.ListDrbs(pb2.ListDrbsRequest(), timeout=10) for d in r.drbs]
    assert [(d.drb.ue_id, d.drb.lcid, d.held) for d in listed] == [(*A, 10), (*B, 3)]
    assert listed[0] == a

    sns = stub.ListSns(pb2.ListSnsRequest(drb=key(A)), timeout=10)
    assert (list(sns.sns), sns.truncated, sns.drb) == (list(A_SNS), False, key(A))
    sns = stub.ListSns(pb2.ListSnsRequest(drb=key(A), max=4), timeout=10)
    assert (list(sns.sns), sns.truncated) == ([0, 1, 2, 3], True)
    sns = stub.ListSns(pb2.ListSnsRequest(drb=key(A), max=10), timeout=10)
    assert (list(sns.sns), sns.truncated) == (list(A_SNS), False)
    assert list(stub.ListSns(pb2.ListSnsRequest(drb=key(B)), timeout=10).sns) == [0, 1, 2]


def test_unknown_drb_and_bad_keys(held):
    stub = held.stub()
    unknown = key((9, 4))
    calls = {"GetStats": (stub.GetStats, pb2.StatsRequest(drb=unknown)),
             "ListSns": (stub.ListSns, pb2.ListSnsRequest(drb=unknown)),
             "GetConfig": (stub.GetConfig, pb2.ConfigRequest(drb=unknown)),
             "SetConfig": (stub.SetConfig, pb2.SetConfigRequest(
                 drb=unknown, config=pb2.ConfigUpdate(max_retx_threshold=4))),
             "Flush": (stub.Flush, pb2.FlushRequest(drb=unknown))}
    for name, (call, request) in calls.items():
        e = rpc_error(call, request)
        assert (e.code(), e.details()) == (grpc.StatusCode.NOT_FOUND,
                                           "no DRB ue_id=9 lcid=4"), name

    for bad, why in (((70000, 4), "ue_id 70000 does not fit in 16 bits"),
                     ((1, 256), "lcid 256 does not fit in 8 bits"),
                     ((1, 64), "lcid must be 0..63")):     # the BaaS's own bound
        for request in (pb2.StatsRequest(drb=key(bad)), pb2.ListSnsRequest(drb=key(bad)),
                        pb2.ConfigRequest(drb=key(bad)), pb2.FlushRequest(drb=key(bad))):
            call = {"StatsRequest": stub.GetStats, "ListSnsRequest": stub.ListSns,
                    "ConfigRequest": stub.GetConfig,
                    "FlushRequest": stub.Flush}[type(request).__name__]
            e = rpc_error(call, request)
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, (bad, request)
            assert why in e.details(), (bad, e.details())
    # nothing was flushed by any of them
    assert stub.GetStats(pb2.StatsRequest(), timeout=10).global_stats.held == 13


BAD_VALUES = [("t_poll_retransmit_ms", 0), ("t_poll_retransmit_ms", 60001),
              ("max_retx_threshold", 0), ("max_retx_threshold", 33),
              ("drb_max_pdus", 0), ("drb_max_pdus", 131073)]


def test_bad_config_changes_nothing(held):
    stub = held.stub()
    defaults, a = config_of(stub), config_of(stub, A)
    for drb in (None, A):
        for field, value in BAD_VALUES:
            # alone, and beside a good value of another field
            other = ("max_retx_threshold" if field != "max_retx_threshold"
                     else "t_poll_retransmit_ms")
            for update in ({field: value}, {field: value, other: 7}):
                e = rpc_error(stub.SetConfig, pb2.SetConfigRequest(
                    drb=None if drb is None else key(drb), config=pb2.ConfigUpdate(**update)))
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, (drb, update)
                assert field in e.details(), (drb, update, e.details())
                assert (config_of(stub), config_of(stub, A)) == (defaults, a), (drb, update)
    # the global bound is no DRB's
    e = rpc_error(stub.SetConfig, pb2.SetConfigRequest(
        drb=key(A), config=pb2.ConfigUpdate(max_pdus=100)))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "max_pdus" in e.details()
    e = rpc_error(stub.SetConfig, pb2.SetConfigRequest(config=pb2.ConfigUpdate(max_pdus=0)))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "max_pdus" in e.details()
    assert (config_of(stub), config_of(stub, A)) == (defaults, a)
    assert stub.GetStats(pb2.StatsRequest(drb=key(A)), timeout=10).drb.held == 10


def test_partial_set_config_changes_only_the_fields_given(held):
    stub = held.stub()
    defaults = config_of(stub)
    assert defaults["max_pdus"] == 16384                  # the fixture's --max-pdus
    # a DRB without values of its own has the defaults' (and no global bound)
    assert config_of(stub, A) == {**defaults, "max_pdus": 0}

    def set_config(drb=None, **fields):
        return baas.to_dict(stub.SetConfig(pb2.SetConfigRequest(
            drb=None if drb is None else key(drb), config=pb2.ConfigUpdate(**fields)),
            timeout=10).config)

    expected = {**defaults, "t_poll_retransmit_ms": 100}
    assert set_config(t_poll_retransmit_ms=100) == expected == config_of(stub)
    expected["max_retx_threshold"] = 4
    assert set_config(max_retx_threshold=4) == expected == config_of(stub)
    expected.update(drb_max_pdus=1024, max_pdus=8192)
    assert set_config(drb_max_pdus=1024, max_pdus=8192) == expected == config_of(stub)
    assert set_config() == expected                       # no field: nothing changes

    # one DRB's own value: the others and the defaults keep theirs
    a = set_config(A, drb_max_pdus=4)
    assert a == {**expected, "drb_max_pdus": 4, "max_pdus": 0} == config_of(stub, A)
    assert config_of(stub, B) == {**expected, "max_pdus": 0}
    assert config_of(stub) == expected
    assert set_config(A, max_retx_threshold=2) == {**a, "max_retx_threshold": 2}
    # a lowered bound releases the DRB's oldest PDUs
    info = stub.GetStats(pb2.StatsRequest(drb=key(A)), timeout=10).drb
    assert (info.held, info.counters.released_bound) == (4, 6)
    assert list(stub.ListSns(pb2.ListSnsRequest(drb=key(A)), timeout=10).sns) == [6, 7, 8, 9]


def test_flush_one_drb_then_all(held):
    stub = held.stub()
    for request, why in ((pb2.FlushRequest(), "names a DRB or all"),
                         (pb2.FlushRequest(drb=key(A), all=True), "not both"),
                         (pb2.FlushRequest(drb=key((1 << 16, 4))), "does not fit")):
        e = rpc_error(stub.Flush, request)
        assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and why in e.details(), request
    assert stub.GetStats(pb2.StatsRequest(), timeout=10).global_stats.held == 13

    assert stub.Flush(pb2.FlushRequest(drb=key(A)), timeout=10).released == 10
    e = rpc_error(stub.GetStats, pb2.StatsRequest(drb=key(A)))
    assert e.code() == grpc.StatusCode.NOT_FOUND
    assert rpc_error(stub.Flush, pb2.FlushRequest(drb=key(A))).code() == \
        grpc.StatusCode.NOT_FOUND
    g = stub.GetStats(pb2.StatsRequest(), timeout=10).global_stats
    assert (g.n_drbs, g.held, g.counters.released_flush) == (1, 3, 10)

    assert stub.Flush(pb2.FlushRequest(all=True), timeout=10).released == 3
    g = stub.GetStats(pb2.StatsRequest(), timeout=10).global_stats
    assert (g.n_drbs, g.held, g.held_bytes, g.counters.released_flush) == (0, 0, 0, 13)
    assert list(stub.ListDrbs(pb2.ListDrbsRequest(), timeout=10)) == []
    assert stub.Flush(pb2.FlushRequest(all=True), timeout=10).released == 0


def events(stub, **request) -> list:
    return list(stub.Events(pb2.EventsRequest(**request), timeout=10))


def test_events_from_a_seq_followed_and_cancelled(held):
    stub = held.stub()
    # no event yet: the log is empty from 1, and 0 without follow is nothing
    assert events(stub, from_seq=1) == events(stub, from_seq=0) == []

    # a follower from the next event on: lowering A's bound to 4 releases 6
    # PDUs, one OVERFLOW event
    follow = stub.Events(pb2.EventsRequest(from_seq=1, follow=True))
    got, ended = [], []

    def read():
        try:
            got.extend(follow)
        except grpc.RpcError as e:
            ended.append(e.code())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.3)
    stub.SetConfig(pb2.SetConfigRequest(drb=key(A), config=pb2.ConfigUpdate(drb_max_pdus=4)),
                   timeout=10)
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(got) == 1 and got[0].WhichOneof("item") == "event", got
    event = got[0].event
    assert (event.seq, event.type, event.drb, event.count) == \
        (1, pb2.EVENT_TYPE_OVERFLOW, key(A), 6)
    assert abs(event.time_ns / 1e9 - time.time()) < 60
    # cancelled, the stream ends at once
    cancelled = time.monotonic()
    follow.cancel()
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - cancelled < 2
    assert ended == [grpc.StatusCode.CANCELLED] and len(got) == 1

    # the same event read again, from the start and from its seq; none after it
    assert [e.event for e in events(stub, from_seq=1)] == [event]
    assert [e.event for e in events(stub, from_seq=1, follow=False)] == [event]
    assert events(stub, from_seq=2) == []
    # a follower that starts after it sees nothing until the next one
    follow = stub.Events(pb2.EventsRequest(from_seq=0, follow=True), timeout=0.5)
    with pytest.raises(grpc.RpcError) as ended:
        list(follow)
    assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED

    # through the asyncio client: the same, and its follow stops when left
    async def client_events():
        async with baas.Baas(held.address) as client:
            kept = [e async for e in client.events()]
            stream = client.events(follow=True)
            first = await asyncio.wait_for(stream.__anext__(), 5)
            await stream.aclose()
            return kept, first
    kept, first = asyncio.run(client_events())
    assert kept == [first] and first["type"] == "OVERFLOW"
    assert (first["drb"], first["count"]) == ({"ue_id": 1, "lcid": 4}, 6)


def test_a_stopping_baas_ends_open_streams(start_baas):
    process = start_baas()
    stub = process.stub()
    follow = stub.Events(pb2.EventsRequest(follow=True))
    ended = []

    def read():
        try:
            list(follow)
        except grpc.RpcError as e:
            ended.append(e)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.3)
    assert reader.is_alive()
    started = time.monotonic()
    assert process.stop() == 0
    assert time.monotonic() - started < 5
    reader.join(5)
    assert ended and ended[0].code() == grpc.StatusCode.UNAVAILABLE, ended


def test_the_client_names_the_status(held):
    async def calls():
        async with baas.Baas(held.address, name="b0") as client:
            assert (await client.stats())["held"] == 13
            assert (await client.stats(A))["held"] == 10
            assert [d["drb"] for d in await client.list_drbs()] == \
                [{"ue_id": 1, "lcid": 4}, {"ue_id": 2, "lcid": 5}]
            assert (await client.list_sns(B))["sns"] == [0, 1, 2]
            assert (await client.set_config(max_retx_threshold=3))["max_retx_threshold"] == 3
            with pytest.raises(baas.BaasError) as e:
                await client.stats((9, 4))
            assert (e.value.code, e.value.exit_code) == ("NOT_FOUND", 1)
            assert str(e.value) == "b0: NOT_FOUND: no DRB ue_id=9 lcid=4"
            with pytest.raises(baas.BaasError) as e:
                await client.set_config(max_retx_threshold=33)
            assert e.value.code == "INVALID_ARGUMENT" and "max_retx_threshold" in str(e.value)
            assert await client.flush(B) == 3
            assert await client.flush(all=True) == 10
    asyncio.run(calls())

    process_address = held.address
    held.stop()

    async def gone():
        async with baas.Baas(process_address, timeout=2) as client:
            await client.stats()
    with pytest.raises(baas.BaasUnreachable) as e:
        asyncio.run(gone())
    assert e.value.exit_code == 3 and e.value.code == "UNAVAILABLE"
    assert f"cannot reach the BaaS at {process_address}" in str(e.value)
