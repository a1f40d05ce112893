"""The poll bits a DRB's configuration through gnbctl gives on the radio
port (issue 13, item 6): the NIC on veths (net_af_packet) with its
P4Runtime server, G-PDUs sent on N3 and the radio frames compared byte
for byte with those the SequenceNumbers model of testbench/gnb/frames.py
builds with the project's scapy layers. pollPDU p4 polls every 4th AMD
PDU, pollByte kB1 after 1,000 bytes of RLC SDUs, infinity for both never
(past the 64 PDUs and 125,000 bytes of the defaults), and a DRB deleted
and added again without options polls every 64th PDU again."""
from __future__ import annotations

import time

import pytest
from scapy.layers.l2 import Ether

from conftest import target_on_veths, wait_for, write_topology
from t4p4s.stf.veth import PortCapture
from testbench.gnb.frames import (POLL_INFINITY, DlDrb, DownlinkPacket, SequenceNumbers,
                                  expected_downlink)
from testbench.gnb.layers import RlcAmData18
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk
N3, RADIO, BAAS = range(3)


@pytest.fixture
def nic(start_target, gnb_builds, tmp_path):
    """(topology, PortCapture): the NIC alone, its N3, radio and BaaS ports on veths."""
    with target_on_veths(start_target, gnb_builds["nic"], 3) as (target, capture):
        yield write_topology(tmp_path / "topology.toml", [
            {"name": "nic0", "role": "nic", "address": target.address,
             "p4info": gnb_builds["nic"].p4info_text_path}]), capture


def send_and_receive(capture: PortCapture, packets: list[DownlinkPacket],
                     timeout: float = 10.0) -> list[bytes]:
    """The radio frames these G-PDUs give (the radio port's new frames)."""
    before = len(capture.snapshot()[RADIO])
    for packet in packets:
        capture.send(N3, packet.n3_frame())
    wait_for(capture, RADIO, before + len(packets), timeout)
    time.sleep(0.2)     # nothing more may come
    return capture.snapshot()[RADIO][before:]


def polled(frames: list[bytes], drb: DlDrb) -> list[int]:
    """The positions, among the DRB's frames, of those with P = 1."""
    mine = [Ether(f) for f in frames if Ether(f).dst == drb.ue_mac]
    return [i for i, f in enumerate(mine) if f[RlcAmData18].poll]


def test_poll_bits_follow_the_drb_configuration(nic, gnbctl):
    topology, capture = nic
    assert gnbctl(topology, "pipeline", "push")[0] == 0
    every_4th, by_bytes, never = (generated_drb(i) for i in range(3))
    for drb, options in ((every_4th, ["--poll-pdu", 4]), (by_bytes, ["--poll-byte", "kB1"]),
                         (never, ["--poll-pdu", "infinity", "--poll-byte", "infinity"])):
        code, out = gnbctl(topology, "drb", "add", drb.drb_index, *options)
        assert code == 0, out
    sns = SequenceNumbers()
    sns.configure_poll(every_4th, poll_pdu=4)
    sns.configure_poll(by_bytes, poll_byte=1000)
    sns.configure_poll(never, poll_pdu=POLL_INFINITY, poll_byte=POLL_INFINITY)

    # pollPDU 4 and pollByte kB1 side by side: each DRB counts its own PDUs
    sizes = [200, 300, 100, 450, 92, 900, 250, 250, 250, 500, 10, 10]
    packets = []
    for i, size in enumerate(sizes + [40, 40]):
        packets.append(DownlinkPacket(every_4th, bytes([i]) * 40))
        if i < len(sizes):
            packets.append(DownlinkPacket(by_bytes, bytes([0x80 + i]) * size))
    frames = send_and_receive(capture, packets)
    assert frames == expected_downlink(packets, sns)
    assert polled(frames, every_4th) == [3, 7, 11]
    # RLC SDUs of size + 4 bytes (PDCP 18-bit and SDAP headers): 1,000 bytes
    # reached at the 4th SDU (1,066 bytes), exactly at the 6th (96 + 904),
    # then at the 10th (3 x 254 + 504 = 1,266)
    assert polled(frames, by_bytes) == [3, 5, 9]

    # infinity for both: no poll past 64 PDUs and 125,000 bytes
    packets = [DownlinkPacket(never, bytes([i]) * 1400) for i in range(100)]
    frames = send_and_receive(capture, packets)
    assert frames == expected_downlink(packets, sns)
    assert polled(frames, never) == []

    # del and add again without options: the defaults, counted from 0 (the
    # pipeline had counted 2 PDUs since DRB 0's last poll), SNs where they were
    assert gnbctl(topology, "drb", "del", every_4th.drb_index)[0] == 0
    assert gnbctl(topology, "drb", "add", every_4th.drb_index)[0] == 0
    del sns.poll_config[every_4th.drb_index]
    del sns.poll_state[every_4th.drb_index]
    packets = [DownlinkPacket(every_4th, bytes([i]) * 40) for i in range(70)]
    frames = send_and_receive(capture, packets)
    assert frames == expected_downlink(packets, sns)
    assert polled(frames, every_4th) == [63]
