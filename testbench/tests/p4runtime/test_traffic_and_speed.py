"""Writes while traffic flows, and the write rate.

Traffic: net_pcap replays a pcap forever (infinite_rx) into the exact
table; the P4Runtime client meanwhile inserts, modifies and deletes
thousands of entries in batches. The fast path must keep forwarding (the
direct counter of an entry that stays keeps counting, every received
packet is either sent or dropped by the default action) and the tables
must read back exactly as written.

Speed: 65,536 exact entries (the gNB's DRB table size) to two targets in
batches of 8,192, under 1 s in total for the Write RPCs."""
from __future__ import annotations

import time

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapWriter

from p4rt_client import TIMEOUT, update

pytestmark = pytest.mark.dpdk

STABLE_F1 = 0xABCD0000


def data_frame(f1: int) -> bytes:
    header = f1.to_bytes(4, "big") + bytes(10)
    return bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01",
                       type=0x88B5) / Raw(header + b"payload"))


def exact_entry(names, f1: int, tag: int) -> p4r.TableEntry:
    return names.table_entry("ingress.t_exact", {"hdr.data.f1": f1},
                             names.action("ingress.forward", port=0, tag=tag))


def test_writes_while_traffic_flows(start_target, names, cache_root, tmp_path):
    pcap = tmp_path / "in.pcap"
    writer = RawPcapWriter(str(pcap), linktype=1, sync=True)
    writer.write_header(None)
    for f1 in [STABLE_F1] + list(range(64)):
        writer.write(data_frame(f1))
    writer.close()
    target = start_target(vdevs=[f"net_pcap0,rx_pcap={pcap},tx_pcap=/dev/null,"
                                 "infinite_rx=1"],
                          app_args=["--mbufs", "4096"])
    client = target.primary()
    client.write([update("INSERT", table_entry=exact_entry(names, STABLE_F1, 1))])
    stable_counter = p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=names.table_entry("ingress.t_exact", {"hdr.data.f1": STABLE_F1})))

    def hits() -> int:
        return client.read(stable_counter)[0].direct_counter_entry.data.packet_count

    before = hits()
    rounds, per_round = 20, 2048
    for r in range(rounds):
        batch = [exact_entry(names, i, (r + 2) & 0x7f) for i in range(per_round)]
        kind = "INSERT" if r % 2 == 0 else "MODIFY"
        client.write([update(kind, table_entry=e) for e in batch])
        if r % 2 == 1 and r != rounds - 1:
            client.write([update("DELETE", table_entry=e) for e in batch])
    during = hits()
    assert during > before, "the fast path stopped while entries were written"

    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))
    found = {e.table_entry.match[0].exact.value: e.table_entry for e in client.read(table)}
    expected = [exact_entry(names, STABLE_F1, 1)] + \
        [exact_entry(names, i, (rounds - 1 + 2) & 0x7f) for i in range(per_round)]
    assert len(found) == len(expected)
    for e in expected:
        assert found[e.match[0].exact.value] == e

    time.sleep(0.2)
    assert hits() > during
    stats = target.runtime.request({"cmd": "stats"})
    rx = stats["ports"][0]["rx"]
    assert rx > 10_000
    assert target.runtime.alive()


def batched_requests(names, n: int, batch: int) -> list[p4r.WriteRequest]:
    table_id = names.tables["ingress.t_exact"].preamble.id
    action_id = names.actions["ingress.forward"].preamble.id
    requests = []
    for start in range(0, n, batch):
        request = p4r.WriteRequest(device_id=1)
        request.election_id.low = 1
        for i in range(start, start + batch):
            u = request.updates.add(type=p4r.Update.INSERT)
            e = u.entity.table_entry
            e.table_id = table_id
            e.match.add(field_id=1).exact.value = i.to_bytes(4, "big")
            e.action.action.action_id = action_id
            e.action.action.params.add(param_id=1, value=b"\x01")
            e.action.action.params.add(param_id=2, value=(i & 0xff).to_bytes(1, "big"))
        requests.append(request)
    return requests


def test_65536_entries_reach_two_targets_in_under_a_second(start_target, names):
    n, batch = 65_536, 8_192
    targets = [start_target(), start_target()]
    clients = [t.primary() for t in targets]
    requests = batched_requests(names, n, batch)   # built once, sent to both
    start = time.perf_counter()
    for client in clients:
        for request in requests:
            client.stub.Write(request, timeout=TIMEOUT)
    elapsed = time.perf_counter() - start
    rate = 2 * n / elapsed
    print(f"\n{2 * n} entries to 2 targets in {elapsed:.3f} s: {rate:,.0f} entries/s")
    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))
    for client in clients:
        entries = client.read(table)
        assert len(entries) == n
        sample = entries[12345].table_entry
        f1 = int.from_bytes(sample.match[0].exact.value, "big")
        assert sample.action.action.params[1].value == (f1 & 0xff).to_bytes(1, "big")
    assert elapsed < 1.0
