"""Radio frames the hosts built, arriving on their return ports: the NIC
overwrites the provisional SNs with the DRB's next ones from its own
registers (12 and 18 bits, wrapping), sends the frame to the radio port and
an identical RLC AM copy to the BaaS; bad frames are dropped and counted by
reason without taking SNs."""
from __future__ import annotations

import random

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from nic_topology import frames_of, sent_polls, sent_sns
from testbench.gnb.frames import (BAAS_PORT, N3_PORT, POLL_INFINITY, RADIO_PORT, DlDrb,
                                  DownlinkPacket, SequenceNumbers, baas_clone_session,
                                  inner_packet, pdcp_data_header, poll_cell, rlc_data_header)
from testbench.gnb.nic_entries import (HOSTS, drb_entries, host_return_ports, return_port,
                                       to_host_port)
from testbench.gnb.layers import (SHIM_PDCP_SN18, SHIM_RLC_AM, SI_FIRST, SI_MIDDLE, BearerShim,
                                  PdcpControl, RlcStatus12, RlcStatus18, SdapDl)

pytestmark = pytest.mark.dpdk

# Every RLC mode and SN length combination.
DRBS = [
    DlDrb(teid=0x5001, drb_index=41, ue_id=0x0501, lcid=4, rlc_am=True, rlc_sn18=False,
          pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:50:01"),
    DlDrb(teid=0x5002, drb_index=42, ue_id=0x0502, lcid=5, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=True, default_qfi=1, ue_mac="02:00:00:00:50:02"),
    DlDrb(teid=0x5003, drb_index=43, ue_id=0x0503, lcid=6, rlc_am=True, rlc_sn18=False,
          pdcp_sn18=True, default_qfi=5, ue_mac="02:00:00:00:50:03"),
    DlDrb(teid=0x5004, drb_index=44, ue_id=0x0504, lcid=7, rlc_am=True, rlc_sn18=True,
          pdcp_sn18=False, default_qfi=8, ue_mac="02:00:00:00:50:04"),
    DlDrb(teid=0x5005, drb_index=45, ue_id=0x0505, lcid=8, rlc_am=False, rlc_sn18=False,
          pdcp_sn18=False, default_qfi=2, ue_mac="02:00:00:00:50:05"),
    DlDrb(teid=0x5006, drb_index=46, ue_id=0xFFFF, lcid=0xFF, rlc_am=False, rlc_sn18=False,
          pdcp_sn18=True, default_qfi=63, ue_mac="fe:ff:ff:ff:ff:ff"),
]
INDICES = [drb.drb_index for drb in DRBS]


def host_of(drb: DlDrb) -> int:
    return DRBS.index(drb) % HOSTS


def host_built(packet: DownlinkPacket, rng: random.Random) -> bytes:
    """The frame a host makes of the packet, with SNs and an RLC AM poll
    bit of its own (arbitrary)."""
    drb = packet.drb
    pdcp_modulus = 1 << (18 if drb.pdcp_sn18 else 12)
    rlc_modulus = 1 << (18 if drb.rlc_sn18 else 12)
    if not drb.rlc_am:
        return packet.radio_frame(rng.randrange(pdcp_modulus), None)
    return packet.radio_frame(rng.randrange(pdcp_modulus), rng.randrange(rlc_modulus),
                              poll=rng.randrange(2))


def test_host_built_frames_get_the_nics_sns(run_nic):
    """Each DRB's frames come back from its host in order: per DRB the radio
    port sends them in that order with the NIC's next SNs (across both
    wraps) and the poll bits of the NIC's counters (a host's own is
    overwritten), the BaaS a copy of each AM one; host_return_counter counts
    them, dl_drb_counter does not."""
    rng = random.Random(5)
    sns = SequenceNumbers()
    presets = (sns.preset(DRBS[0], pdcp=4093, rlc=4094)
               + sns.preset(DRBS[1], pdcp=262142, rlc=262141)
               + sns.preset(DRBS[2], pdcp=262143, rlc=4095)
               + sns.preset(DRBS[3], pdcp=4095, rlc=262143)
               + sns.preset(DRBS[4], pdcp=4095)
               + sns.preset(DRBS[5], pdcp=262143)
               + sns.configure_poll(DRBS[0], poll_pdu=2)
               + sns.configure_poll(DRBS[1], poll_pdu=POLL_INFINITY, poll_byte=300)
               + sns.configure_poll(DRBS[3], poll_pdu=3, poll_byte=POLL_INFINITY))
    packets = [DownlinkPacket(drb, inner_packet(round_ * 6 + i, 40 + 97 * i),
                              qfi=round_ % 2 and 7 or None)
               for round_ in range(4) for i, drb in enumerate(DRBS)]
    returned = {host: [] for host in range(HOSTS)}
    for packet in packets:
        returned[host_of(packet.drb)].append(host_built(packet, rng))
    expected = {drb: [sns.radio_frame(packet) for packet in packets if packet.drb == drb]
                for drb in DRBS}

    result = run_nic({return_port(host): frames for host, frames in returned.items()},
                     drb_entries(DRBS) + [baas_clone_session()] + host_return_ports() + presets,
                     INDICES)

    assert len(result.ports[RADIO_PORT]) == len(packets)
    for drb in DRBS:
        assert [f.hex() for f in frames_of(result.ports[RADIO_PORT], drb)] == \
            [f.hex() for f in expected[drb]], drb
        assert [f.hex() for f in frames_of(result.ports[BAAS_PORT], drb)] == \
            ([f.hex() for f in expected[drb]] if drb.rlc_am else []), drb
    # the SNs spelt out, independently of the SequenceNumbers model
    assert sent_sns(result.ports[RADIO_PORT], DRBS[0]) == [(4093, 4094), (4094, 4095),
                                                           (4095, 0), (0, 1)]
    assert sent_sns(result.ports[RADIO_PORT], DRBS[1]) == [(262142, 262141), (262143, 262142),
                                                           (0, 262143), (1, 0)]
    assert sent_sns(result.ports[RADIO_PORT], DRBS[4]) == [(4095, None), (0, None), (1, None),
                                                           (2, None)]
    # the poll bits spelt out: every 2nd PDU; 300 bytes (RLC SDUs of 133, 141, 133, 141
    # bytes: the 3rd brings 407); the defaults (64 PDUs) not yet; every 3rd PDU
    assert [packet.rlc_sdu_length for packet in packets if packet.drb == DRBS[1]] == \
        [133, 141, 133, 141]
    assert sent_polls(result.ports[RADIO_PORT], DRBS[0]) == [0, 1, 0, 1]
    assert sent_polls(result.ports[RADIO_PORT], DRBS[1]) == [0, 0, 1, 0]
    assert sent_polls(result.ports[RADIO_PORT], DRBS[2]) == [0, 0, 0, 0]
    assert sent_polls(result.ports[RADIO_PORT], DRBS[3]) == [0, 0, 1, 0]
    assert result.drops == {}
    for port in (N3_PORT, *map(to_host_port, range(HOSTS)), *map(return_port, range(HOSTS))):
        assert result.ports[port] == []
    for drb in DRBS:
        frames = frames_of(returned[host_of(drb)], drb)
        assert result.counters["host_return_counter"][drb.drb_index] == \
            {"packets": 4, "bytes": sum(map(len, frames))}
        assert result.counters["dl_drb_counter"][drb.drb_index]["packets"] == 0
        assert result.counters["ul_drb_counter"][drb.drb_index]["packets"] == 0
        assert result.registers["pdcp_tx_sn"][drb.drb_index] == sns.pdcp[drb.drb_index]
        assert result.registers["rlc_tx_sn"][drb.drb_index] == sns.rlc.get(drb.drb_index, 0)
        assert result.registers["rlc_poll_state"][drb.drb_index] == \
            poll_cell(*sns.poll_state.get(drb.drb_index, (0, 0)))


def bad_frames(drb_am: DlDrb, drb_um: DlDrb) -> dict[str, list[tuple[int, bytes]]]:
    """(port, frame) per drop reason, on the return ports and the others."""
    good_am = DownlinkPacket(drb_am, inner_packet(1, 90)).radio_frame(7, 9)
    good_um = DownlinkPacket(drb_um, inner_packet(2, 90)).radio_frame(3, None)
    shim_am = (Ether(dst=drb_am.ue_mac, src="02:00:00:00:00:0a")
               / BearerShim(ue_id=drb_am.ue_id, lcid=drb_am.lcid, flags=drb_am.flags))
    home, other = return_port(0), return_port(1)
    n3 = DownlinkPacket(drb_am, inner_packet(3, 60)).n3_frame()
    status = RlcStatus18 if drb_am.rlc_sn18 else RlcStatus12
    unknown = bytes(Ether(dst=drb_am.ue_mac) / BearerShim(ue_id=0x7777, lcid=4, flags=drb_am.flags)
                    / rlc_data_header(True, drb_am.rlc_sn18, 1)
                    / pdcp_data_header(drb_am.pdcp_sn18, 1) / SdapDl(qfi=9) / Raw(b"x" * 40))

    def built(drb: DlDrb, flags: int, rlc, pdcp) -> tuple[int, bytes]:
        """A data PDU of drb as a faulty host might build it."""
        return (home, bytes(Ether(dst=drb.ue_mac, src="02:00:00:00:00:0a")
                            / BearerShim(ue_id=drb.ue_id, lcid=drb.lcid, flags=flags)
                            / rlc / pdcp / SdapDl(qfi=9) / Raw(b"y" * 40)))

    am_rlc = lambda **fields: rlc_data_header(True, drb_am.rlc_sn18, 5, **fields)  # noqa: E731
    am_pdcp = lambda **fields: pdcp_data_header(drb_am.pdcp_sn18, 5, **fields)  # noqa: E731
    um_rlc = lambda **fields: rlc_data_header(False, False, 0, **fields)  # noqa: E731
    um_pdcp = lambda **fields: pdcp_data_header(drb_um.pdcp_sn18, 5, **fields)  # noqa: E731
    assert drb_am.rlc_sn18 and drb_am.pdcp_sn18 and not drb_um.rlc_am and not drb_um.pdcp_sn18
    return {
        "TRUNCATED": [(home, good_am[:length]) for length in (14, 17, 19, 20, 22)]
                     + [(home, good_um[:19])],
        "NOT_GTP": [(home, bytes(Ether() / ARP())),
                    (home, bytes(Ether(type=0x86DD) / Raw(b"\x60" + bytes(60))))],
        "WRONG_PORT": [(home, n3), (to_host_port(0), good_am), (to_host_port(1), n3),
                       (BAAS_PORT, n3), (other, good_am),
                       (home, bytes(Ether() / IP() / UDP(dport=2152) / Raw(b"\x30\xff" + bytes(6))))],
        "UNKNOWN_BEARER": [(home, unknown)],
        # the BaaS port takes retransmissions only (complete RLC AM data PDUs)
        "BAD_BAAS_FRAME": [(BAAS_PORT, good_um), (BAAS_PORT, bytes(shim_am / status(ack_sn=5)))],
        "BAD_HOST_FRAME": [
            (home, bytes(shim_am / status(ack_sn=5))),
            (home, bytes(shim_am / rlc_data_header(True, drb_am.rlc_sn18, 4, si=SI_FIRST)
                         / Raw(bytes(30)))),
            (home, bytes(shim_am / rlc_data_header(True, drb_am.rlc_sn18, 4, si=SI_MIDDLE, so=8)
                         / Raw(bytes(30)))),
            (home, bytes(shim_am / rlc_data_header(True, drb_am.rlc_sn18, 4)
                         / PdcpControl(pdu_type=0) / Raw(bytes(10)))),
            # reserved bits set (TS 38.322 6.2.2.3/6.2.2.4, TS 38.323 6.2.2)
            built(drb_am, drb_am.flags, am_rlc(reserved=2), am_pdcp()),
            built(drb_am, drb_am.flags, am_rlc(), am_pdcp(reserved=0x10)),
            built(drb_um, drb_um.flags, um_rlc(reserved=1), um_pdcp()),
            built(drb_um, drb_um.flags, um_rlc(), um_pdcp(reserved=4)),
        ],
        # the DRB's (UE id, LCID) in other formats than its own: numbered, it
        # would take SNs from the wrong SN space or be read wrong on the air
        "BEARER_FORMAT": [
            built(drb_am, drb_am.flags | 0x80, am_rlc(), am_pdcp()),       # reserved flag bit
            built(drb_am, SHIM_RLC_AM | SHIM_PDCP_SN18, rlc_data_header(True, False, 5),
                  am_pdcp()),                                              # RLC SN 12, not 18
            built(drb_am, drb_am.flags & ~SHIM_PDCP_SN18, am_rlc(),
                  pdcp_data_header(False, 5)),                             # PDCP SN 12, not 18
            built(drb_um, SHIM_RLC_AM, rlc_data_header(True, False, 5), um_pdcp()),  # AM, not UM
            built(drb_um, SHIM_PDCP_SN18, um_rlc(), pdcp_data_header(True, 5)),     # PDCP 18
        ],
    }


def test_bad_frames_dropped_by_reason(run_nic):
    """Only host 0's return port is configured. Every bad frame is dropped
    under its reason (packets and bytes), takes no SN, and the good frames
    around them are still numbered in order."""
    drb_am, drb_um = DRBS[1], DRBS[4]
    rng = random.Random(9)
    bad = bad_frames(drb_am, drb_um)
    good = [DownlinkPacket(drb, inner_packet(i, 50 + i)) for i in range(6)
            for drb in (drb_am, drb_um)]
    inputs = {port: [] for port in range(3 + 2 * HOSTS)}
    for reason_frames in bad.values():
        for port, frame in reason_frames:
            inputs[port].append(frame)
    home = return_port(0)
    # good frames interleaved with the bad ones on the return port
    mixed = []
    for position, packet in enumerate(good):
        mixed.append(host_built(packet, rng))
        mixed += inputs[home][position::len(good)]
    inputs[home] = mixed
    sns = SequenceNumbers()
    expected = [sns.radio_frame(packet) for packet in good]

    result = run_nic(inputs, drb_entries([drb_am, drb_um]) + [baas_clone_session()]
                     + host_return_ports([0]), [drb_am.drb_index, drb_um.drb_index])

    assert result.drops == {reason: {"packets": len(frames),
                                     "bytes": sum(len(frame) for _, frame in frames)}
                            for reason, frames in bad.items()}
    for port in (N3_PORT, *map(to_host_port, range(HOSTS)), *map(return_port, range(HOSTS))):
        assert result.ports[port] == []
    for drb in (drb_am, drb_um):
        assert [f.hex() for f in frames_of(result.ports[RADIO_PORT], drb)] == \
            [f.hex() for f, p in zip(expected, good) if p.drb == drb]
        assert result.registers["pdcp_tx_sn"][drb.drb_index] == sns.pdcp[drb.drb_index]
        assert result.counters["host_return_counter"][drb.drb_index]["packets"] == 6
    assert [f.hex() for f in result.ports[BAAS_PORT]] == \
        [f.hex() for f, p in zip(expected, good) if p.drb.rlc_am]
    assert len(result.ports[RADIO_PORT]) == len(good)
