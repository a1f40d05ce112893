"""Writes while traffic flows, and many entries in a few large Writes.

Traffic: net_pcap replays a pcap forever (infinite_rx) into the exact
table; the P4Runtime client meanwhile inserts, modifies and deletes
thousands of entries in batches. The fast path must keep forwarding, every
forwarded frame must carry the tag of an entry that was installed for its
key (and the last ones the final entries' tags), and the tables must read
back exactly as written.

Then 65,536 exact entries (the gNB's DRB table size) to two targets in
batches of 8,192, every one read back. How fast that goes is measured by
`make bench` (p4runtime_write), not asserted here: a time limit in a test
fails on a loaded machine."""
from __future__ import annotations

import time

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapWriter

from p4rt_client import TIMEOUT, update
from pcap_frames import read_pcap_frames
from testbench.bench.p4runtime_write import exact_entry_requests

pytestmark = pytest.mark.dpdk

STABLE_F1 = 0xABCD0000
STABLE_TAG = 1
# Not a data frame (the ingress drops it): most of the replay, so that the
# capture of a second of traffic stays small.
FILLER = bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01", type=0x0800) / Raw(bytes(46)))
FILLERS_PER_DATA_FRAME = 10


def data_frame(f1: int) -> bytes:
    header = f1.to_bytes(4, "big") + bytes(10)
    return bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01",
                       type=0x88B5) / Raw(header + b"payload"))


def forwarded_frame(f1: int, tag: int) -> bytes:
    """data_frame(f1) as the program sends it with t_exact's forward(0, tag):
    b1 = tag, and b2 = 0xee from t_ternary's default miss() (no other table
    has entries)."""
    frame = bytearray(data_frame(f1))
    frame[26], frame[27] = tag, 0xEE
    return bytes(frame)


def exact_entry(names, f1: int, tag: int) -> p4r.TableEntry:
    return names.table_entry("ingress.t_exact", {"hdr.data.f1": f1},
                             names.action("ingress.forward", port=0, tag=tag))


def test_writes_while_traffic_flows(start_target, names, tmp_path):
    pcap = tmp_path / "in.pcap"
    writer = RawPcapWriter(str(pcap), linktype=1, sync=True)
    writer.write_header(None)
    for f1 in [STABLE_F1] + list(range(64)):
        writer.write(data_frame(f1))
        for _ in range(FILLERS_PER_DATA_FRAME):
            writer.write(FILLER)
    writer.close()
    sent = tmp_path / "out.pcap"
    target = start_target(vdevs=[f"net_pcap0,rx_pcap={pcap},tx_pcap={sent},infinite_rx=1"],
                          app_args=["--mbufs", "4096"])
    client = target.primary()
    client.write([update("INSERT", table_entry=exact_entry(names, STABLE_F1, STABLE_TAG))])
    stable_counter = p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=names.table_entry("ingress.t_exact", {"hdr.data.f1": STABLE_F1})))

    def hits() -> int:
        return client.read(stable_counter)[0].direct_counter_entry.data.packet_count

    before = hits()
    rounds, per_round = 20, 2048
    tags = [(r + 2) & 0x7f for r in range(rounds)]
    for r in range(rounds):
        batch = [exact_entry(names, i, tags[r]) for i in range(per_round)]
        kind = "INSERT" if r % 2 == 0 else "MODIFY"
        client.write([update(kind, table_entry=e) for e in batch])
        if r % 2 == 1 and r != rounds - 1:
            client.write([update("DELETE", table_entry=e) for e in batch])
    during = hits()
    assert during > before, "the fast path stopped while entries were written"

    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))
    found = {e.table_entry.match[0].exact.value: e.table_entry for e in client.read(table)}
    expected = [exact_entry(names, STABLE_F1, STABLE_TAG)] + \
        [exact_entry(names, i, tags[-1]) for i in range(per_round)]
    assert len(found) == len(expected)
    for e in expected:
        assert found[e.match[0].exact.value] == e

    time.sleep(0.2)
    assert hits() > during
    stats = target.runtime.request({"cmd": "stats"})
    assert stats["ports"][0]["rx"] > 10_000
    assert target.stop() == 0, target.runtime.log_tail()

    # Every frame sent is one the entries of its key allowed, byte for byte;
    # the last one of each key carries the final entry's tag (traffic went
    # on for 0.2 s after the last write).
    frames = read_pcap_frames(sent)
    allowed = {forwarded_frame(STABLE_F1, STABLE_TAG)} | \
        {forwarded_frame(f1, tag) for f1 in range(64) for tag in tags}
    unexpected = [f.hex() for f in set(frames) - allowed]
    assert not unexpected, f"{len(unexpected)} kinds of frames no entry allows, e.g. {unexpected[:3]}"
    last_of_key = {int.from_bytes(f[14:18], "big"): f for f in frames}
    assert last_of_key == {f1: forwarded_frame(f1, tags[-1]) for f1 in range(64)} | \
        {STABLE_F1: forwarded_frame(STABLE_F1, STABLE_TAG)}


def test_65536_entries_reach_two_targets_in_batches_of_8192(start_target, names):
    n, batch = 65_536, 8_192
    targets = [start_target(), start_target()]
    clients = [t.primary() for t in targets]
    requests = exact_entry_requests(names, n, batch)   # built once, sent to both
    for client in clients:
        for request in requests:
            client.stub.Write(request, timeout=TIMEOUT)
    table = p4r.Entity(table_entry=p4r.TableEntry(
        table_id=names.tables["ingress.t_exact"].preamble.id))
    def contents(entries) -> set[tuple[int, ...]]:
        """(f1, action id, port, tag) of each entry, byte strings as integers
        (the server may answer in canonical form what was sent padded)."""
        return {(int.from_bytes(e.match[0].exact.value, "big"), e.action.action.action_id,
                 *(int.from_bytes(p.value, "big") for p in e.action.action.params))
                for e in entries}

    written = contents(u.entity.table_entry for request in requests for u in request.updates)
    assert len(written) == n
    for client in clients:
        read_back = [e.table_entry for e in client.read(table)]
        assert len(read_back) == n
        assert contents(read_back) == written
