"""The scapy layers against octets written out by hand from the 3GPP
figures (TS 38.322 6.2.2, TS 38.323 6.2.2, TS 37.324 6.2.2, TS 38.415
5.5.2, TS 29.281 5.1) and docs/wire-format.md: build gives those octets,
dissection gives back the fields. No P4, no DPDK."""
from __future__ import annotations

import pytest
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from testbench.gnb.frames import (POLL_INFINITY, DlDrb, DownlinkPacket, SequenceNumbers,
                                  UlBearer, UplinkPacket, poll_cell, poll_config_write,
                                  poll_fields, register_write)
from testbench.gnb.layers import (SHIM_PDCP_SN18, SHIM_RLC_AM, SHIM_RLC_SN18, BearerShim,
                                  NackSn12, NackSn18, Pdcp12, Pdcp18, PdcpControl, RlcAmData12,
                                  RlcAmData18, RlcStatus12, RlcStatus18, RlcUmData, SdapDl,
                                  SdapUl, UplinkBearerShim, dissect_uplink_radio_frame)

ETHERNET_DL = bytes.fromhex("020000001001" "02000000000a" "88b5")


def bits(text: str) -> bytes:
    """Octets written bit by bit, as the spec figures draw them."""
    groups = text.split()
    assert all(len(group) == 8 and set(group) <= {"0", "1"} for group in groups), text
    return bytes(int(group, 2) for group in groups)


hexa = bytes.fromhex


# (layer as built, its octets; bits in the order the figures draw them)
CASES = [
    # bearer shim: ue_id 0x1234, lcid 4, flags AM | RLC SN18 | PDCP SN18
    (BearerShim(ue_id=0x1234, lcid=4, flags=SHIM_RLC_AM | SHIM_RLC_SN18 | SHIM_PDCP_SN18),
     hexa("12 34 04 07")),
    # AMD PDU 12-bit SN (38.322 fig 6.2.2.4-1): D/C P SI(2) SN(4) | SN(8)
    (RlcAmData12(sn=0xABC), bits("10001010 10111100")),
    (RlcAmData12(sn=1, poll=1, si=2, so=0x0102), bits("11100000 00000001 00000001 00000010")),
    (RlcAmData12(sn=0xFFF, si=1), bits("10011111 11111111")),
    # AMD PDU 18-bit SN (fig 6.2.2.4-3): D/C P SI(2) R R SN(2) | SN(8) | SN(8)
    (RlcAmData18(sn=0x3FFFF), bits("10000011 11111111 11111111")),
    (RlcAmData18(sn=0x2ABCD, si=1), bits("10010010 10101011 11001101")),
    (RlcAmData18(sn=0x10000, si=3, so=0xFFFF),
     bits("10110001 00000000 00000000 11111111 11111111")),
    # UMD PDU (fig 6.2.2.3-1..5): complete SDU SI R(6); segment SI SN(6) [SO(16)]
    (RlcUmData(), bits("00000000")),
    (RlcUmData(si=1, sn=5), bits("01000101")),
    (RlcUmData(si=3, sn=0x2A, so=0x1234), bits("11101010 00010010 00110100")),
    # STATUS PDU 12-bit SN (fig 6.2.2.5-1): D/C CPT(3) ACK_SN(4) | ACK_SN(8) | E1 R(7),
    # NACK: NACK_SN(8) | NACK_SN(4) E1 E2 E3 R | [SOstart(16) SOend(16)] [NACK_range(8)]
    (RlcStatus12(ack_sn=0x123), bits("00000001 00100011 00000000")),
    (RlcStatus12(ack_sn=0xFFF, e1=1, nacks=[
        NackSn12(nack_sn=0xABC, e1=1, e2=1, so_start=0x10, so_end=0x20),
        NackSn12(nack_sn=1, e3=1, nack_range=3)]),
     bits("00001111 11111111 10000000"
          " 10101011 11001100 00000000 00010000 00000000 00100000"
          " 00000000 00010010 00000011")),
    # STATUS PDU 18-bit SN (fig 6.2.2.5-2): D/C CPT ACK_SN(4) | ACK_SN(8) | ACK_SN(6) E1 R,
    # NACK: NACK_SN(8) | NACK_SN(8) | NACK_SN(2) E1 E2 E3 R(3)
    (RlcStatus18(ack_sn=0x2ABCD), bits("00001010 10101111 00110100")),
    (RlcStatus18(ack_sn=0, e1=1, nacks=[NackSn18(nack_sn=0x3FFFF, e3=1, nack_range=255)]),
     bits("00000000 00000000 00000010 11111111 11111111 11001000 11111111")),
    # PDCP data PDU for DRBs (38.323 fig 6.2.2.2-1, 6.2.2.3-1)
    (Pdcp12(sn=0x123), bits("10000001 00100011")),
    (Pdcp18(sn=0x3FFFF), bits("10000011 11111111 11111111")),
    (Pdcp18(sn=0x10000), bits("10000001 00000000 00000000")),
    # PDCP control PDU (fig 6.2.3.1-1): D/C PDU type(3) R(4)
    (PdcpControl(pdu_type=1), bits("00010000")),
    # SDAP (37.324 fig 6.2.2.2-1, 6.2.2.3-1)
    (SdapDl(rqi=1, qfi=63), bits("01111111")),
    (SdapDl(rdi=1, qfi=1), bits("10000001")),
    (SdapUl(qfi=5), bits("10000101")),
    (SdapUl(dc=0, qfi=9), bits("00001001")),
]


@pytest.mark.parametrize("layer, wire", CASES, ids=lambda case: getattr(case, "name", None))
def test_build_and_dissect(layer, wire):
    assert bytes(layer).hex() == wire.hex()
    dissected = type(layer)(wire)
    assert bytes(dissected) == wire
    for name, value in layer.fields.items():
        assert dissected.getfieldval(name) == value, name


def test_status_pdu_nack_list_ends_at_e1_zero():
    """Bytes after the last NACK (E1 = 0) are not NACKs."""
    status = RlcStatus12(bits("00000000 00000101 10000000 00000000 00110000") + hexa("99 99"))
    assert [nack.nack_sn for nack in status.nacks] == [3]
    assert bytes(status.payload) == b"\x99\x99"


def test_downlink_radio_frame_dissects_by_shim_flags():
    frame = ETHERNET_DL + hexa("01 01 04 05" "80 05" "83 ff ff" "49" "de ad be ef")
    packet = Ether(frame)
    assert packet[BearerShim].flags == SHIM_RLC_AM | SHIM_PDCP_SN18
    assert packet[RlcAmData12].sn == 5
    assert packet[Pdcp18].sn == 0x3FFFF
    assert (packet[SdapDl].rqi, packet[SdapDl].qfi) == (1, 9)
    assert packet[Raw].load == hexa("de ad be ef")
    assert bytes(packet) == frame


@pytest.mark.parametrize("shim, headers, layers", [
    ("00", "00" "8001", [RlcUmData, Pdcp12]),
    ("02", "00" "8001", [RlcUmData, Pdcp12]),                     # RLC SN18 means nothing in UM
    ("06", "00" "800001", [RlcUmData, Pdcp18]),
    ("03", "800001" "8001", [RlcAmData18, Pdcp12]),
    ("01", "0001" "00", [RlcStatus12]),                           # D/C = 0: STATUS PDU
    ("03", "000004" "00", [RlcStatus18]),
    ("01", "8001" "00", [RlcAmData12, PdcpControl]),
])
def test_shim_flags_choose_the_layers(shim, headers, layers):
    packet = Ether(ETHERNET_DL + hexa("0101 04" + shim + headers))
    for layer in layers:
        assert layer in packet, packet.summary()


def test_uplink_frame_has_the_uplink_sdap_header():
    frame = ETHERNET_DL + hexa("0201 04 01" "8005" "8005" "85" "45")
    packet = dissect_uplink_radio_frame(frame)
    assert packet[UplinkBearerShim].flags == SHIM_RLC_AM
    assert (packet[SdapUl].dc, packet[SdapUl].qfi) == (1, 5)
    assert bytes(packet) == frame
    end_marker = dissect_uplink_radio_frame(ETHERNET_DL + hexa("0201 04 00" "00" "8005" "05"))
    assert end_marker[SdapUl].dc == 0


def test_scapy_gtp_layers_match_ts_38_415():
    """The N3 side is scapy's GTP-U: its PDU Session Container octets are
    the ones TS 29.281 5.2.2.7 / TS 38.415 5.5.2 draw."""
    dl = GTP_U_Header(teid=0x01020304, gtp_type=0xFF, E=1, next_ex=0x85) \
        / GTPPDUSessionContainer(type=0, RQI=1, QFI=5) / b"\x45"
    assert bytes(dl).hex() == hexa("34 ff 0009 01020304 0000 00 85" "01 00 45 00" "45").hex()
    ul = GTP_U_Header(teid=1, gtp_type=0xFF, E=1, next_ex=0x85) \
        / GTPPDUSessionContainer(type=1, QFI=63)
    assert bytes(ul).hex() == hexa("34 ff 0008 00000001 0000 00 85" "01 10 3f 00").hex()


DRB = DlDrb(teid=0xA0B0C0D0, drb_index=7, ue_id=0x0102, lcid=4, rlc_am=True, rlc_sn18=False,
            pdcp_sn18=True, default_qfi=9, ue_mac="02:00:00:00:10:01")


def test_expected_downlink_frame_spelt_out():
    packet = DownlinkPacket(DRB, b"\x45\x00\x00\x14" + bytes(16), qfi=33, rqi=1,
                            trailer=b"\xee\xee")
    n3 = packet.n3_frame()
    assert n3[14 + 20 + 8:14 + 20 + 8 + 16] == hexa("34 ff 001c a0b0c0d0 0000 00 85"
                                                      "01 00 61 00")
    assert n3.endswith(b"\xee\xee")
    assert packet.radio_frame(pdcp_sn=0x12345, rlc_sn=0x678) == (
        ETHERNET_DL + hexa("0102 04 05" "86 78" "81 23 45" "61") + packet.inner + b"\xee\xee")
    no_container = DownlinkPacket(DRB, b"\x01\x02", seq=9)
    assert no_container.radio_frame(0, 0)[18:] == hexa("8000 800000 09 0102")


def test_expected_uplink_frame_spelt_out():
    bearer = UlBearer(ue_id=0x0102, lcid=4, drb_index=7, teid=0x11223344, rlc_am=False,
                      rlc_sn18=False, pdcp_sn18=False, gnb_ip="192.0.2.10", upf_ip="192.0.2.1",
                      upf_mac="02:00:00:00:00:0b")
    packet = UplinkPacket(bearer, b"\xab" * 10, qfi=5, pdcp_sn=0xFFF)
    assert packet.radio_frame()[14:] == hexa("0102 04 00" "00" "8fff" "85") + b"\xab" * 10
    n3 = packet.n3_frame()
    total = 20 + 8 + 8 + 4 + 4 + 10
    header = hexa(f"45 00 {total:04x} 0000 0000 40 11 0000 c000020a c0000201")
    checksum = 0xFFFF - (sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, 20, 2))
                         % 0xFFFF)
    assert n3[:14] == hexa("02000000000b 02000000010a 0800")
    assert n3[14:34] == header[:10] + checksum.to_bytes(2, "big") + header[12:]
    assert n3[34:] == hexa(f"0868 0868 {total - 20:04x} 0000" "34 ff 0012 11223344 0000 00 85"
                             "01 10 05 00") + b"\xab" * 10
    assert IP(n3[14:]).chksum == checksum


def test_sequence_numbers_wrap_and_um_has_no_rlc_sn():
    sns = SequenceNumbers()
    assert sns.preset(DRB, pdcp=262142, rlc=4094) == [register_write("pdcp_tx_sn", 7, 262142),
                                                      register_write("rlc_tx_sn", 7, 4094)]
    assert [sns.take(DRB) for _ in range(3)] == [(262142, 4094), (262143, 4095), (0, 0)]
    um = DlDrb(teid=1, drb_index=8, ue_id=1, lcid=4, rlc_am=False, rlc_sn18=True,
               pdcp_sn18=False, default_qfi=1, ue_mac="02:00:00:00:00:01")
    sns.preset(um, pdcp=4095)
    assert [sns.take(um) for _ in range(2)] == [(4095, None), (0, None)]
    assert um.flags == 0, "RLC SN 18 is an AM flag only"


def test_poll_bit_in_the_expected_frame_spelt_out():
    """P is the second bit of both AMD PDU headers (TS 38.322 6.2.2.4)."""
    packet = DownlinkPacket(DRB, b"\x01\x02", seq=9)
    assert packet.radio_frame(0, 0x678, poll=1)[18:] == hexa("c678 800000 09 0102")
    am18 = DlDrb(teid=2, drb_index=9, ue_id=1, lcid=4, rlc_am=True, rlc_sn18=True,
                 pdcp_sn18=False, default_qfi=1, ue_mac="02:00:00:00:00:01")
    assert DownlinkPacket(am18, b"").radio_frame(0, 0x3FFFF, 1)[18:21] == \
        bits("11000011 11111111 11111111")
    assert Ether(DownlinkPacket(am18, b"").radio_frame(0, 5, 1))[RlcAmData18].poll == 1
    assert packet.rlc_sdu_length == 3 + 1 + 2
    assert DownlinkPacket(DRB, b"ab", trailer=bytes(5)).rlc_sdu_length == 3 + 1 + 2 + 5


def test_poll_register_layout():
    """The PDU count in bits 31..0, the byte count in bits 63..32; JSON
    values beyond 53 bits are hex strings."""
    assert poll_cell(64, 125_000) == 0x0001E848_00000040
    assert poll_fields(0x0001E848_00000040) == (64, 125_000)
    assert poll_config_write(7, poll_pdu=16, poll_byte=POLL_INFINITY) == {
        "cmd": "register_write", "register": "rlc_poll_config", "index": 7,
        "value": "0xffffffff00000010"}
    assert register_write("rlc_poll_config", 7, 1 << 52)["value"] == 1 << 52
    with pytest.raises(AssertionError):
        poll_cell(1 << 32, 0)


def test_poll_model():
    """Every pollPDU-th PDU, or the PDU that brings the bytes to pollByte;
    a config field of 0 is its default; all ones is off; saturation."""
    sns = SequenceNumbers()
    assert [sns.poll(DRB, 10) for _ in range(130)] == ([0] * 63 + [1]) * 2 + [0, 0]
    assert sns.poll_state[DRB.drb_index] == (2, 20)
    other = DlDrb(teid=3, drb_index=10, ue_id=1, lcid=5, rlc_am=True, rlc_sn18=False,
                  pdcp_sn18=False, default_qfi=1, ue_mac="02:00:00:00:00:01")
    assert sns.configure_poll(other, poll_byte=300) == [poll_config_write(10, 0, 300)]
    assert [sns.poll(other, size) for size in (100, 100, 100, 299, 1, 1000)] == \
        [0, 0, 1, 0, 1, 1]
    assert [sns.poll(other, 125_000) for _ in range(2)] == [1, 1]
    sns.configure_poll(other, POLL_INFINITY, POLL_INFINITY)
    sns.preset_poll_state(other, POLL_INFINITY - 1, POLL_INFINITY - 5)
    assert [sns.poll(other, 4) for _ in range(3)] == [0, 0, 0]
    assert sns.poll_state[10] == (POLL_INFINITY, POLL_INFINITY)
    sns.configure_poll(other, poll_pdu=64)
    assert sns.poll(other, 1) == 1
    # the default pollByte first: 1,954-byte SDUs reach 125,000 on the 64th too
    # (63 x 1,954 = 123,102), 2,000-byte ones on the 63rd
    big = SequenceNumbers()
    assert [big.poll(DRB, 2000) for _ in range(63)] == [0] * 62 + [1]


def test_control_entries():
    assert DRB.table_entry() == {
        "cmd": "table_add", "table": "dl_drb", "match": {"teid": 0xA0B0C0D0},
        "action": "set_dl_drb",
        "params": {"drb_index": 7, "ue_id": 0x0102, "lcid": 4, "rlc_am": 1, "rlc_sn18": 0,
                   "pdcp_sn18": 1, "default_qfi": 9, "ue_mac": 0x020000001001}}
    bearer = UlBearer(ue_id=3, lcid=5, drb_index=9, teid=0x10, rlc_am=True, rlc_sn18=True,
                      pdcp_sn18=True, gnb_ip="10.0.0.1", upf_ip="10.0.0.2",
                      upf_mac="02:00:00:00:00:0b")
    assert bearer.table_entry() == {
        "cmd": "table_add", "table": "ul_bearer", "match": {"ue_id": 3, "lcid": 5},
        "action": "set_ul_bearer",
        "params": {"drb_index": 9, "rlc_am": 1, "rlc_sn18": 1, "pdcp_sn18": 1, "teid": 0x10,
                   "gnb_ip": 0x0A000001, "upf_ip": 0x0A000002, "upf_mac": 0x02000000000B}}
    assert bearer.flags == SHIM_RLC_AM | SHIM_RLC_SN18 | SHIM_PDCP_SN18
