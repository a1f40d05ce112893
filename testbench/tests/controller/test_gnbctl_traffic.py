"""gnbctl on a NIC target that carries traffic (veth pairs, net_af_packet,
with its P4Runtime server): its counters after real frames, and `offload
set` moving the split of a running NIC in one command: at 0 % the NIC
makes the radio frames itself, at 100 % the same G-PDUs leave on the
host's VF port byte for byte as they came in on N3."""
from __future__ import annotations

import pytest

from conftest import receive, target_on_veths, write_topology
from testbench.gnb.frames import DownlinkPacket, SequenceNumbers, expected_downlink
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk
N3, RADIO, BAAS, VF0, RETURN0 = range(5)
N_DRBS = 8


def _topology(tmp_path, nic, gnb_builds, host_address: str):
    """The NIC (its VF pair captured, not a host's) and host0 at host_address."""
    return write_topology(tmp_path / "topology.toml", [
        {"name": "nic0", "role": "nic", "address": nic.address,
         "p4info": gnb_builds["nic"].p4info_text_path},
        {"name": "host0", "role": "host", "address": host_address, "nic": "nic0", "vf": 0}])


@pytest.fixture
def live_nic(start_target, gnb_builds, tmp_path):
    """(topology, PortCapture): the NIC with 5 ports on veths; host0 is a
    host process that answers P4Runtime (gnbctl gives buckets only to live
    hosts)."""
    host = start_target(vdevs=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                        build=gnb_builds["host"])
    with target_on_veths(start_target, gnb_builds["nic"], 5) as (nic, capture):
        yield _topology(tmp_path, nic, gnb_builds, host.address), capture


@pytest.fixture
def nic_with_dead_host(start_target, gnb_builds, tmp_path):
    """(topology, PortCapture): the NIC on veths; nothing answers at host0's address."""
    with target_on_veths(start_target, gnb_builds["nic"], 5) as (nic, capture):
        yield _topology(tmp_path, nic, gnb_builds, "127.0.0.1:1"), capture


def test_counters_and_a_live_offload_shift(live_nic, gnbctl):
    topology, capture = live_nic
    nic_only = ["--target", "nic0"]
    assert gnbctl(topology, *nic_only, "pipeline", "push")[0] == 0
    assert gnbctl(topology, *nic_only, "drb", "load", "--count", N_DRBS)[0] == 0
    assert gnbctl(topology, "offload", "set", 0)[0] == 0

    drbs = [generated_drb(i) for i in range(N_DRBS)]
    packets = [DownlinkPacket(drbs[i % N_DRBS], bytes([i]) * (40 + i)) for i in range(24)]
    frames = [p.n3_frame() for p in packets]
    unknown = DownlinkPacket(generated_drb(N_DRBS), b"lost" * 10).n3_frame()
    for frame in frames + [unknown]:
        capture.send(N3, frame)
    assert receive(capture, RADIO, len(frames)) == \
        expected_downlink(packets, SequenceNumbers())
    assert len(receive(capture, BAAS, len(frames))) == len(frames)   # the AM clones

    code, out = gnbctl(topology, *nic_only, "counters", "--nonzero")
    assert code == 0
    counters = out["result"][0]
    assert counters["drops"] == {"unknown_teid": {"packets": 1, "bytes": len(unknown)}}
    per_drb = {int(i): c for i, c in counters["downlink"]["per_drb"].items()}
    assert per_drb == {d.drb_index: {
        "packets": sum(p.drb is d for p in packets),
        "bytes": sum(len(f) for p, f in zip(packets, frames) if p.drb is d)} for d in drbs}
    assert counters["uplink"]["total"] == {"packets": 0, "bytes": 0}

    # one command moves every DRB to the host: the G-PDUs leave on its VF as they came
    code, out = gnbctl(topology, "offload", "set", 100)
    assert code == 0 and out["result"][0]["buckets"] == 1024
    for frame in frames:
        capture.send(N3, frame)
    assert receive(capture, VF0, len(frames)) == frames
    assert len(capture.snapshot()[RADIO]) == len(frames)     # nothing new on the NIC's radio
    code, out = gnbctl(topology, *nic_only, "counters", "--nonzero")
    assert {int(i): c["packets"] for i, c in out["result"][0]["downlink"]["per_drb"].items()} \
        == {d.drb_index: c["packets"] for d, c in zip(drbs, per_drb.values())}


def test_offload_set_keeps_a_dead_hosts_share_on_the_nic(nic_with_dead_host, gnbctl):
    topology, capture = nic_with_dead_host
    nic_only = ["--target", "nic0"]
    assert gnbctl(topology, *nic_only, "pipeline", "push")[0] == 0
    assert gnbctl(topology, *nic_only, "drb", "load", "--count", N_DRBS)[0] == 0
    code, out = gnbctl(topology, "offload", "set", 100)
    assert code == 0 and out["result"][0]["buckets"] == 1024

    packets = [DownlinkPacket(generated_drb(i % N_DRBS), bytes([i]) * 40) for i in range(16)]
    for packet in packets:
        capture.send(N3, packet.n3_frame())
    assert receive(capture, RADIO, len(packets)) == \
        expected_downlink(packets, SequenceNumbers())
    assert capture.snapshot()[VF0] == []
    code, out = gnbctl(topology, *nic_only, "offload", "show")
    assert code == 0 and out["result"][0]["hosts"]["host0"]["vf_buckets"] == 0
