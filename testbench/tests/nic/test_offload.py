"""The offload manager and the VF distributor of nic.p4: which downlink
packets leave for a host (byte for byte as they arrived, on the VF the TEID
hash picks) and which the NIC processes itself (byte-exact radio frames),
in ratio mode (TEID buckets) and marker mode (IPv4 Identification)."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from nic_topology import offload_bucket_of, vf_bucket_of, vf_port_round_robin
from testbench.gnb.frames import (BAAS_PORT, N3_PORT, RADIO_PORT, DlDrb, DownlinkPacket,
                                  SequenceNumbers, assert_frames_equal, baas_clone_session,
                                  expected_downlink, inner_packet)
from testbench.gnb.nic_entries import (HOSTS, OFFLOAD_BUCKETS, VF_BUCKETS, drb_entries,
                                       host_return_ports, offload_buckets, offload_by_ip_id,
                                       offload_ip_ids, to_host_port, vf_buckets_round_robin)
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk


def mixed_drb(i: int) -> DlDrb:
    """DRB i with RLC mode and SN lengths cycling through every combination."""
    am, rlc18, pdcp18 = [(True, False, False), (True, True, True), (False, False, True),
                         (True, False, True), (False, False, False)][i % 5]
    return DlDrb(teid=0x10000 + i, drb_index=i, ue_id=0x100 + i, lcid=4 + i % 3, rlc_am=am,
                 rlc_sn18=rlc18, pdcp_sn18=pdcp18, default_qfi=1 + i % 63,
                 ue_mac=f"02:00:00:01:{i >> 8 & 0xFF:02x}:{i & 0xFF:02x}")


def check_split(result, packets: list[DownlinkPacket], to_host, vf_port):
    """Packets to_host(packet) left on vf_port(teid) unchanged, in order per
    port; the rest left as radio frames with the NIC's SNs, AM copies on the
    BaaS port; only what the NIC processed is counted and numbered."""
    on_nic = [packet for packet in packets if not to_host(packet)]
    sns = SequenceNumbers()
    expected_radio = expected_downlink(on_nic, sns)
    assert_frames_equal(result.ports[RADIO_PORT], expected_radio, "radio")
    assert_frames_equal(result.ports[BAAS_PORT],
                        [frame for frame, packet in zip(expected_radio, on_nic)
                         if packet.drb.rlc_am], "BaaS")
    for host in range(HOSTS):
        port = to_host_port(host)
        assert_frames_equal(result.ports[port],
                            [packet.n3_frame() for packet in packets
                             if to_host(packet) and vf_port(packet.drb.teid) == port],
                            f"VF {port}")
    for port in (N3_PORT, *(to_host_port(h) + 1 for h in range(HOSTS))):
        assert result.ports[port] == [], f"port {port} sent frames"
    assert result.drops == {}
    for drb in {packet.drb for packet in packets}:
        mine = [packet.n3_frame() for packet in on_nic if packet.drb == drb]
        assert result.counters["dl_drb_counter"][drb.drb_index] == \
            {"packets": len(mine), "bytes": sum(map(len, mine))}, drb
        assert result.registers["pdcp_tx_sn"][drb.drb_index] == sns.pdcp.get(drb.drb_index, 0)
        assert result.registers["rlc_tx_sn"][drb.drb_index] == sns.rlc.get(drb.drb_index, 0)


def test_ratio_mode_half_the_buckets(run_nic):
    """P = 50 %: buckets 0..511 on the host. Each DRB's packets all go one
    way; the host's ones leave on their VF byte-identical."""
    drbs = [mixed_drb(i) for i in range(40)]
    packets = [DownlinkPacket(drb, inner_packet(round_ * 40 + i, 60 + 13 * i),
                              qfi=(i % 2) and 5 or None)
               for round_ in range(3) for i, drb in enumerate(drbs)]
    host_buckets = range(OFFLOAD_BUCKETS // 2)

    def to_host(packet):
        return offload_bucket_of(packet.drb.teid) in host_buckets

    assert 0 < sum(map(to_host, packets)) < len(packets), "both targets must get DRBs"
    assert {vf_port_round_robin(drb.teid) for drb in drbs if to_host(DownlinkPacket(drb, b""))} \
        == {to_host_port(h) for h in range(HOSTS)}, "every VF must get DRBs"

    result = run_nic({N3_PORT: [packet.n3_frame() for packet in packets]},
                     drb_entries(drbs) + [baas_clone_session()] + offload_buckets(host_buckets)
                     + vf_buckets_round_robin() + host_return_ports(),
                     [drb.drb_index for drb in drbs])

    check_split(result, packets, to_host, vf_port_round_robin)


def test_vf_spread_over_many_drbs(run_nic):
    """Everything offloaded, 1,024 DRBs of the generated set, two packets
    each: every frame on the VF its TEID's crc16 bucket names, and the two
    VFs about even."""
    drbs = [generated_drb(i) for i in range(1024)]
    packets = [DownlinkPacket(drb, bytes([round_, i & 0xFF]))
               for round_ in range(2) for i, drb in enumerate(drbs)]

    result = run_nic({N3_PORT: [packet.n3_frame() for packet in packets]},
                     drb_entries(drbs) + offload_buckets(range(OFFLOAD_BUCKETS))
                     + vf_buckets_round_robin(), [])

    check_split_ports = Counter(vf_port_round_robin(drb.teid) for drb in drbs)
    for host in range(HOSTS):
        port = to_host_port(host)
        expected = [packet.n3_frame() for packet in packets
                    if vf_port_round_robin(packet.drb.teid) == port]
        assert_frames_equal(result.ports[port], expected, f"VF {port}")
        assert 0.45 <= check_split_ports[port] / len(drbs) <= 0.55, check_split_ports
    assert result.ports[RADIO_PORT] == [] and result.drops == {}
    assert len({vf_bucket_of(drb.teid) for drb in drbs}) == VF_BUCKETS


def test_buckets_without_a_vf_stay_on_the_nic(run_nic):
    """Host 1 is gone: the controller points its VF buckets at no_vf, and
    their DRBs are processed on the NIC although offloaded."""
    drbs = [mixed_drb(i) for i in range(30)]
    packets = [DownlinkPacket(drb, inner_packet(i, 80)) for i, drb in enumerate(drbs)] * 2
    dead_host_buckets = [bucket for bucket in range(VF_BUCKETS) if bucket % HOSTS == 1]
    no_vf = [{"cmd": "table_modify", "table": "vf_bucket", "match": {"bucket": bucket},
              "action": "no_vf", "params": {}} for bucket in dead_host_buckets]

    def to_host(packet):
        return vf_bucket_of(packet.drb.teid) not in dead_host_buckets

    assert 0 < sum(map(to_host, packets)) < len(packets)

    result = run_nic({N3_PORT: [packet.n3_frame() for packet in packets]},
                     drb_entries(drbs) + [baas_clone_session()]
                     + offload_buckets(range(OFFLOAD_BUCKETS)) + vf_buckets_round_robin()
                     + no_vf, [drb.drb_index for drb in drbs])

    check_split(result, packets, to_host, vf_port_round_robin)


@pytest.mark.parametrize("mode", ["ip_id", "bucket"])
def test_marker_mode(run_nic, mode):
    """Marker mode: the outer IPv4 Identification values in offload_ip_id go
    to the host whatever the bucket; the others stay. In bucket mode (the
    default) the same Identification table means nothing."""
    drbs = [mixed_drb(i) for i in range(10)]
    markers = [1, 0xBEEF]
    packets = [DownlinkPacket(drb, inner_packet(i, 70 + i),
                              ip_id=[1, 0, 0xBEEF, 2, 0x4242][(i + round_) % 5])
               for round_ in range(5) for i, drb in enumerate(drbs)]
    host_buckets = {offload_bucket_of(drb.teid) for drb in drbs[:5]}

    def to_host(packet):
        if mode == "ip_id":
            return packet.ip_id in markers
        return offload_bucket_of(packet.drb.teid) in host_buckets

    result = run_nic({N3_PORT: [packet.n3_frame() for packet in packets]},
                     drb_entries(drbs) + [baas_clone_session()] + offload_ip_ids(markers)
                     + offload_buckets(host_buckets) + vf_buckets_round_robin()
                     + ([offload_by_ip_id()] if mode == "ip_id" else []),
                     [drb.drb_index for drb in drbs])

    check_split(result, packets, to_host, vf_port_round_robin)


def test_offloaded_frames_with_ipv4_options_leave_consistent(run_nic):
    """The gNB's parser skips IPv4 options and its deparser does not emit
    them: an offloaded G-PDU with IHL 6..15 must leave on its VF as the
    same G-PDU without options, IHL 5, total length and header checksum of
    what is sent (the host dropped it as NOT_GTP while they were stale);
    on the NIC the same frames become the usual radio frames."""
    drbs = [mixed_drb(i) for i in range(12)]
    packets = [DownlinkPacket(drb, inner_packet(i, 90 + i), qfi=i % 3 and 7 or None,
                              ip_options=b"\x01\x01\x01\x00" * (1 + i % 10))
               for i, drb in enumerate(drbs * 2)]
    host_buckets = {offload_bucket_of(drb.teid) for drb in drbs[:6]}

    def to_host(packet):
        return offload_bucket_of(packet.drb.teid) in host_buckets

    result = run_nic({N3_PORT: [packet.n3_frame() for packet in packets]},
                     drb_entries(drbs) + [baas_clone_session()] + offload_buckets(host_buckets)
                     + vf_buckets_round_robin(), [drb.drb_index for drb in drbs])

    without_options = [replace(packet, ip_options=b"") if to_host(packet) else packet
                       for packet in packets]
    assert any(to_host(packet) for packet in packets) and not all(map(to_host, packets))
    check_split(result, without_options, to_host, vf_port_round_robin)
