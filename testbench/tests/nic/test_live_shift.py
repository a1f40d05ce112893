"""A DRB moved between NIC and host under traffic, one table write each
way, on the running NIC (veth ports): the radio port's SNs of the DRB stay
continuous in the order it sends them (none twice, none skipped, across the
18-bit wrap), including host-built frames that arrive late, after the DRB
has already moved back, and its RLC poll counters count the NIC's own and
the host-built frames alike. The test plays the host."""
from __future__ import annotations

import pytest

from nic_topology import (SN_REGISTERS, frames_of, offload_bucket_of, register_cell, sent_polls,
                          sent_sns, vf_port_round_robin)
from testbench.gnb.frames import (BAAS_PORT, N3_PORT, RADIO_PORT, DlDrb, DownlinkPacket,
                                  SequenceNumbers, baas_clone_session, inner_packet, poll_cell)
from testbench.gnb.nic_entries import (drb_entries, host_return_ports, offload_buckets,
                                       vf_buckets_round_robin)

pytestmark = pytest.mark.dpdk

MOVING = DlDrb(teid=0x10007, drb_index=7, ue_id=7, lcid=4, rlc_am=True, rlc_sn18=True,
               pdcp_sn18=True, default_qfi=9, ue_mac="02:00:00:00:00:07")
STAYING = DlDrb(teid=0x10008, drb_index=8, ue_id=8, lcid=4, rlc_am=False, rlc_sn18=False,
                pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:00:08")


class Traffic:
    """Sends the DRBs' packets and keeps the radio frames expected, in order."""

    def __init__(self, nic, sns: SequenceNumbers):
        self.nic, self.sns = nic, sns
        self.count = 0
        self.radio: list[bytes] = []
        self.processed = {"nic": 0, "host": 0}
        self.vf = vf_port_round_robin(MOVING.teid)

    def packets(self, n: int) -> list[DownlinkPacket]:
        packets = [DownlinkPacket(MOVING, inner_packet(self.count + i, 64 + 31 * i),
                                  qfi=i % 2 and 3 or None) for i in range(n)]
        self.count += n
        return packets

    def on_nic(self, n: int) -> None:
        """n packets of the moving DRB, each followed by one of the staying
        one, processed by the NIC."""
        packets = [p for packet in self.packets(n)
                   for p in (packet, DownlinkPacket(STAYING, inner_packet(self.count, 50)))]
        self.nic.send(N3_PORT, [packet.n3_frame() for packet in packets])
        expected = [self.sns.radio_frame(packet) for packet in packets]
        self.expect_radio(expected)
        self.processed["nic"] += n

    def to_host(self, n: int) -> list[DownlinkPacket]:
        """n packets of the moving DRB, which the NIC must pass to its VF
        unchanged; returns them for the host to build."""
        packets = self.packets(n)
        self.nic.send(N3_PORT, [packet.n3_frame() for packet in packets])
        got = self.nic.receive(self.vf, n)
        assert [f.hex() for f in got] == [packet.n3_frame().hex() for packet in packets]
        return packets

    def from_host(self, packets: list[DownlinkPacket]) -> None:
        """The host's frames of these packets (its SNs all 0, its poll bit
        1: the NIC decides both) come back."""
        self.nic.send(self.vf + 1, [packet.radio_frame(0, 0, poll=1) for packet in packets])
        self.expect_radio([self.sns.radio_frame(packet) for packet in packets])
        self.processed["host"] += len(packets)

    def expect_radio(self, expected: list[bytes]) -> None:
        got = self.nic.receive(RADIO_PORT, len(expected))
        assert [f.hex() for f in got] == [f.hex() for f in expected]
        self.radio += got


def test_sn_continuity_across_shifts(live_nic):
    assert offload_bucket_of(MOVING.teid) != offload_bucket_of(STAYING.teid)
    shift_to_host = offload_buckets([offload_bucket_of(MOVING.teid)])[0]
    shift_to_nic = {**shift_to_host, "cmd": "table_delete"}
    sns = SequenceNumbers()
    # polls every 6th PDU: the NIC's own frames and the host's count together
    presets = (sns.preset(MOVING, pdcp=262135, rlc=262130) + sns.preset(STAYING, pdcp=4090)
               + sns.configure_poll(MOVING, poll_pdu=6))
    nic = live_nic(drb_entries([MOVING, STAYING]) + [baas_clone_session()]
                   + host_return_ports() + vf_buckets_round_robin() + presets)
    traffic = Traffic(nic, sns)

    traffic.on_nic(4)
    nic.request(shift_to_host)
    traffic.from_host(traffic.to_host(5))
    nic.request(shift_to_nic)
    traffic.on_nic(3)
    nic.request(shift_to_host)
    in_flight = traffic.to_host(4)
    nic.request(shift_to_nic)          # the host's frames are still on their way
    traffic.on_nic(2)
    traffic.from_host(in_flight)
    traffic.on_nic(2)

    total = 4 + 5 + 3 + 4 + 2 + 2
    assert sent_sns(traffic.radio, MOVING) == \
        [((262135 + i) % (1 << 18), (262130 + i) % (1 << 18)) for i in range(total)]
    assert [i for i, poll in enumerate(sent_polls(traffic.radio, MOVING)) if poll] == [5, 11, 17]
    assert [f.hex() for f in nic.receive(BAAS_PORT, total)] == \
        [f.hex() for f in frames_of(traffic.radio, MOVING)]
    assert nic.unexpected() == [[] for _ in range(len(nic.taken))]

    assert {name: register_cell(nic, name, MOVING.drb_index) for name in SN_REGISTERS} == \
        {"pdcp_tx_sn": sns.pdcp[MOVING.drb_index], "rlc_tx_sn": sns.rlc[MOVING.drb_index],
         "rlc_poll_config": poll_cell(6, 0), "rlc_poll_state": poll_cell(*sns.poll_state[MOVING.drb_index])}
    counters = {name: nic.request({"cmd": "counter_read", "counter": name,
                                   "index": MOVING.drb_index})["packets"]
                for name in ("dl_drb_counter", "host_return_counter", "ul_drb_counter")}
    assert counters == {"dl_drb_counter": traffic.processed["nic"],
                        "host_return_counter": traffic.processed["host"], "ul_drb_counter": 0}
