"""A Read of millions of entities (40 wildcard reads of a 131,072-cell
counter, as a controller polling the gNB's per-DRB counters would send)
is streamed in bounded ReadResponse messages: Writes of another client go
through while it runs, the target's memory does not grow with it, and
every cell comes back exactly once per request, with its value."""
from __future__ import annotations

import threading
import time

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import Names, load_p4info, proc_status_bytes, update

pytestmark = pytest.mark.dpdk

CELLS = 131072
READS = 40
WRITE_DEADLINE = 2.0          # seconds; the old server made Writes wait 11 s
RSS_GROWTH_LIMIT = 300 << 20  # bytes; the old server grew by about 1 GB


def peak_rss(pid: int) -> int:
    """VmHWM (the highest resident set size so far) of a process, in bytes."""
    return proc_status_bytes(pid, "VmHWM")


def cell(counter_id: int, index: int) -> p4r.CounterEntry:
    return p4r.CounterEntry(counter_id=counter_id, index=p4r.Index(index=index),
                            data=p4r.CounterData(packet_count=index,
                                                 byte_count=64 * index + 1))


def test_large_counter_read_is_streamed_while_writes_go_through(
        start_target, large_counter_build):
    names = Names(load_p4info(large_counter_build.p4info_text_path))
    target = start_target(build=large_counter_build)
    writer = target.primary()
    cid = names.counters["ingress.per_drb"].preamble.id
    writer.write([update("MODIFY", counter_entry=cell(cid, i)) for i in range(CELLS)])

    # half the requests name the counter, half read every counter (id 0)
    request = p4r.ReadRequest(device_id=1, entities=[
        p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=cid if r % 2 else 0))
        for r in range(READS)])
    reader = target.client()
    rss_before = peak_rss(target.runtime.process.pid)
    received: dict = {"indices": [], "wrong": [], "largest": 0, "error": None}

    def read_all():
        try:
            for response in reader.stub.Read(request, timeout=600):
                received["largest"] = max(received["largest"], len(response.entities))
                for e in response.entities:
                    c = e.counter_entry
                    i = c.index.index
                    received["indices"].append(i)
                    if (c.counter_id, c.data.packet_count, c.data.byte_count) != \
                            (cid, i, 64 * i + 1):
                        received["wrong"].append(c)
        except grpc.RpcError as error:
            received["error"] = error

    reading = threading.Thread(target=read_all)
    reading.start()
    time.sleep(0.5)
    writes_during_read = 0
    f1 = 0
    while reading.is_alive():
        f1 += 1
        started = time.monotonic()
        writer.stub.Write(p4r.WriteRequest(
            device_id=1, election_id=p4r.Uint128(low=1),
            updates=[update("INSERT", table_entry=names.table_entry(
                "ingress.t", {"hdr.data.f1": f1}, names.action("ingress.drop")))]),
            timeout=WRITE_DEADLINE)
        writes_during_read += reading.is_alive()
        assert time.monotonic() - started < WRITE_DEADLINE
        time.sleep(0.05)
    reading.join()

    assert received["error"] is None, received["error"]
    assert writes_during_read >= 3, "the read ended before Writes could overlap it"
    assert received["wrong"] == []
    assert received["indices"] == list(range(CELLS)) * READS
    # bounded messages (P4Runtime has no limit; gRPC's default is 4 MB)
    assert 0 < received["largest"] <= 4096
    growth = peak_rss(target.runtime.process.pid) - rss_before
    assert growth < RSS_GROWTH_LIMIT, f"the target grew by {growth >> 20} MB"
    table = p4r.Entity(table_entry=p4r.TableEntry(table_id=names.tables["ingress.t"].preamble.id))
    assert sorted(int.from_bytes(e.table_entry.match[0].exact.value, "big")
                  for e in writer.read(table)) == list(range(1, f1 + 1))


def exact_entries(names, count: int) -> list[p4r.TableEntry]:
    return [names.table_entry("ingress.t_exact", {"hdr.data.f1": f1},
                              names.action("ingress.forward", port=f1 % 512, tag=f1 % 256))
            for f1 in range(count)]


def test_full_table_read_is_a_snapshot_streamed_in_chunks(target, names):
    """A wildcard read of a full table (65,536 entries) comes in several
    messages; entries deleted by another client while it is being sent
    still come back, each exactly once, as they were when read."""
    writer = target.primary()
    entries = exact_entries(names, 65536)
    writer.write([update("INSERT", table_entry=e) for e in entries])
    query = p4r.ReadRequest(device_id=1, entities=[p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))])
    reader = target.client()
    responses = reader.stub.Read(query, timeout=60)
    found = list(next(responses).entities)
    writer.write([update("DELETE", table_entry=names.table_entry(
        "ingress.t_exact", {"hdr.data.f1": f1})) for f1 in range(65536)])
    messages = 1
    for response in responses:
        messages += 1
        found.extend(response.entities)
    assert messages >= 65536 // 4096
    key = lambda e: e.match[0].exact.value  # noqa: E731
    assert sorted((e.table_entry for e in found), key=key) == sorted(entries, key=key)
    assert writer.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))) == []


def test_a_reader_that_goes_away_mid_read(target, names):
    """The client cancels a large read after its first message: the server
    stops sending and keeps serving."""
    writer = target.primary()
    writer.write([update("INSERT", table_entry=e) for e in exact_entries(names, 65000)])
    counters = p4r.Entity(counter_entry=p4r.CounterEntry())
    tables = p4r.Entity(table_entry=p4r.TableEntry())
    reader = target.client()
    call = reader.stub.Read(p4r.ReadRequest(device_id=1, entities=[tables, counters] * 8),
                            timeout=60)
    assert next(call).entities
    call.cancel()
    extra = names.table_entry("ingress.t_exact", {"hdr.data.f1": 70000},
                              names.action("ingress.drop"))
    writer.write([update("INSERT", table_entry=extra)])
    assert [e.table_entry for e in writer.read(p4r.Entity(table_entry=names.table_entry(
        "ingress.t_exact", {"hdr.data.f1": 70000})))] == [extra]
