"""The NIC build's RLC AM poll bit and BaaS retransmissions: one set of
poll counters per DRB counts the frames the NIC builds itself and those
its hosts built (whose own poll bits it overwrites), and a retransmission
on the BaaS port goes to the radio port unchanged, even where the port is
(wrongly) listed in host_return_port."""
from __future__ import annotations

import random

import pytest
from scapy.layers.l2 import Ether

from nic_topology import frames_of, sent_polls
from test_host_return import host_built
from testbench.gnb.frames import (BAAS_PORT, N3_PORT, RADIO_PORT, DlDrb, DownlinkPacket,
                                  SequenceNumbers, assert_frames_equal, baas_clone_session,
                                  inner_packet, poll_cell)
from testbench.gnb.layers import BearerShim
from testbench.gnb.nic_entries import (HOSTS, drb_entries, host_return_ports, return_port,
                                       to_host_port)

pytestmark = pytest.mark.dpdk

DRBS = [
    DlDrb(teid=0x9001, drb_index=91, ue_id=0x0901, lcid=4, rlc_am=True, rlc_sn18=False,
          pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:90:01"),
    DlDrb(teid=0x9002, drb_index=92, ue_id=0x0902, lcid=5, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=True, default_qfi=1, ue_mac="02:00:00:00:90:02"),
    DlDrb(teid=0x9003, drb_index=93, ue_id=0x0903, lcid=6, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=False, default_qfi=5, ue_mac="02:00:00:00:90:03"),
    DlDrb(teid=0x9004, drb_index=94, ue_id=0x0904, lcid=7, rlc_am=False, rlc_sn18=False,
          pdcp_sn18=True, default_qfi=2, ue_mac="02:00:00:00:90:04"),
]
INDICES = [drb.drb_index for drb in DRBS]


def configure(sns: SequenceNumbers) -> list[dict]:
    return (sns.configure_poll(DRBS[0], poll_pdu=4)
            + sns.configure_poll(DRBS[1], poll_pdu=0xFFFF_FFFF, poll_byte=1500)
            + sns.preset(DRBS[2], pdcp=4000, rlc=262100))          # the defaults


def inner_of(frame: bytes, drb: DlDrb) -> bytes:
    return frame[18 + (3 if drb.rlc_sn18 else 2 if drb.rlc_am else 1)
                 + (3 if drb.pdcp_sn18 else 2) + 1:]


def test_nic_and_host_frames_share_the_poll_counters(run_nic):
    """Each DRB's packets arrive both from N3 (the NIC builds the frame) and
    from a host (built with SNs and a poll bit of its own). The two ports'
    frames interleave in an order the test cannot know, so the expected
    frames follow the radio port's order: per DRB, each frame out must be
    its packet's radio frame with the DRB's next SNs and the poll bit the
    counters give at that point."""
    rng = random.Random(322)
    packets = [DownlinkPacket(drb, inner_packet(i * 4 + n, 30 + rng.randrange(700)),
                              qfi=i % 3 and 4 or None)
               for i in range(70) for n, drb in enumerate(DRBS)]
    choice = random.Random(38)
    from_host = {packet.inner for packet in packets if choice.randrange(2)}
    inputs = {port: [] for port in range(3 + 2 * HOSTS)}
    for packet in packets:
        if packet.inner in from_host:
            inputs[return_port(packet.drb.drb_index % HOSTS)].append(host_built(packet, rng))
        else:
            inputs[N3_PORT].append(packet.n3_frame())
    sns = SequenceNumbers()
    config = configure(sns)

    result = run_nic(inputs, drb_entries(DRBS) + [baas_clone_session()] + host_return_ports()
                     + config, INDICES)

    assert result.drops == {}
    by_inner = {packet.inner: packet for packet in packets}
    radio = result.ports[RADIO_PORT]
    assert len(radio) == len(packets)
    expected = []
    for frame in radio:
        drb = next(drb for drb in DRBS if Ether(frame)[BearerShim].ue_id == drb.ue_id)
        expected.append(sns.radio_frame(by_inner[inner_of(frame, drb)]))
    assert_frames_equal(radio, expected, "radio")
    assert_frames_equal(result.ports[BAAS_PORT],
                        [frame for frame in radio if Ether(frame)[BearerShim].flags & 1], "BaaS")
    for drb in DRBS[:3]:
        # from both sources, and polled
        polled = [frame for frame, poll in zip(frames_of(radio, drb), sent_polls(radio, drb))
                  if poll]
        assert {inner_of(frame, drb) in from_host for frame in frames_of(radio, drb)} == \
            {True, False}
        assert polled or drb == DRBS[2], drb
        assert result.registers["rlc_poll_state"][drb.drb_index] == \
            poll_cell(*sns.poll_state.get(drb.drb_index, (0, 0)))
        assert result.registers["rlc_tx_sn"][drb.drb_index] == sns.rlc[drb.drb_index]
    assert [i for i, poll in enumerate(sent_polls(radio, DRBS[0])) if poll] == \
        list(range(3, 70, 4))
    assert sent_polls(radio, DRBS[2]) == [0] * 63 + [1] + [0] * 6


def test_baas_retransmissions_unchanged_on_the_nic(run_nic):
    """Retransmissions on the BaaS port go to the radio port unchanged and
    are counted per DRB, beside host-built and N3 frames of the same DRBs,
    even with the BaaS port in host_return_port (a wrong entry): the NIC
    never numbers what the BaaS sends."""
    rng = random.Random(5322)
    retx = [DownlinkPacket(drb, inner_packet(500 + i, 90 + 40 * i)).radio_frame(
        i * 7, i * 11, i % 2) for i, drb in enumerate(DRBS[:3] * 3)]
    n3 = [DownlinkPacket(drb, inner_packet(i, 64), qfi=3) for i, drb in enumerate(DRBS * 2)]
    hosts = [DownlinkPacket(drb, inner_packet(100 + i, 80)) for i, drb in enumerate(DRBS * 2)]
    wrong = {"cmd": "table_add", "table": "host_return_port", "match": {"port": BAAS_PORT},
             "action": "from_host", "params": {}}

    result = run_nic({BAAS_PORT: retx, N3_PORT: [p.n3_frame() for p in n3],
                      return_port(0): [host_built(p, rng) for p in hosts]},
                     drb_entries(DRBS) + [baas_clone_session()] + host_return_ports() + [wrong],
                     INDICES)

    assert result.drops == {}
    radio = result.ports[RADIO_PORT]
    assert [frame for frame in radio if frame in retx] == retx
    numbered = [frame for frame in radio if frame not in retx]
    assert len(numbered) == len(n3) + len(hosts)
    assert sorted(result.ports[BAAS_PORT]) == \
        sorted(frame for frame in numbered if Ether(frame)[BearerShim].flags & 1)
    for drb in DRBS:
        mine = frames_of(retx, drb)
        assert result.counters["baas_retx_counter"][drb.drb_index] == \
            {"packets": len(mine), "bytes": sum(map(len, mine))}
        assert result.counters["host_return_counter"][drb.drb_index]["packets"] == 2
        assert result.registers["pdcp_tx_sn"][drb.drb_index] == 4
        assert result.registers["rlc_tx_sn"][drb.drb_index] == (4 if drb.rlc_am else 0)
    for port in (N3_PORT, *map(to_host_port, range(HOSTS)), *map(return_port, range(HOSTS))):
        assert result.ports[port] == []
