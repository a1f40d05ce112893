"""STATUS PDU encoding and decoding (testbench/ue/status_pdu.py) against
octets written out by hand from TS 38.322 6.2.2.5 and, byte for byte,
against the scapy layers of testbench/gnb/layers.py."""
from __future__ import annotations

import itertools
import random

import pytest
from scapy.layers.l2 import Ether

from testbench.gnb.layers import (RlcStatus12, RlcStatus18, UplinkBearerShim,
                                  dissect_uplink_radio_frame)
from testbench.ue.status_pdu import (MalformedStatus, Nack, StatusPdu, decode_status,
                                     encode_status, shim_flags, status_frame, status_size,
                                     window_size)
from ue_status_scapy import from_scapy, scapy_status


def bits(text: str) -> bytes:
    digits = text.replace(" ", "")
    return int(digits, 2).to_bytes(len(digits) // 8, "big")


def assert_matches_scapy(status: StatusPdu, sn_bits: int):
    encoded = encode_status(status, sn_bits)
    expected = bytes(scapy_status(status, sn_bits))
    assert encoded.hex() == expected.hex()
    assert len(encoded) == status_size(status, sn_bits)
    assert decode_status(encoded, sn_bits) == status
    dissected = (RlcStatus12 if sn_bits == 12 else RlcStatus18)(encoded)
    assert from_scapy(dissected) == status


HAND_WRITTEN = [
    # 12-bit: D/C CPT(3) ACK_SN 11..8 | ACK_SN 7..0 | E1 R(7)
    (12, StatusPdu(0x123), bits("0000 0001  00100011  0 0000000")),
    (12, StatusPdu(0xFFF), bits("0000 1111  11111111  0 0000000")),
    # one NACK: NACK_SN 11..4 | NACK_SN 3..0 E1 E2 E3 R
    (12, StatusPdu(0x010, (Nack(0xABC),)),
     bits("0000 0000 00010000 1 0000000") + bits("10101011 1100 0 0 0 0")),
    # NACK with SO pair and range, then a plain NACK
    (12, StatusPdu(0x800, (Nack(0x7F0, so_start=0x0102, so_end=0xFFFF, nack_range=3),
                           Nack(0x7F8))),
     bits("0000 1000 00000000 1 0000000") + bits("01111111 0000 1 1 1 0")
     + bytes.fromhex("0102 FFFF 03") + bits("01111111 1000 0 0 0 0")),
    # 18-bit: D/C CPT(3) ACK_SN 17..14 | ACK_SN 13..6 | ACK_SN 5..0 E1 R
    (18, StatusPdu(0x2ABCD), bits("0000 1010  10101111  001101 0 0")),
    (18, StatusPdu(0x3FFFF), bits("0000 1111  11111111  111111 0 0")),
    # NACK: NACK_SN 17..10 | 9..2 | 1..0 E1 E2 E3 R(3)
    (18, StatusPdu(0x00100, (Nack(0x3FFFF, nack_range=255),)),         # 0x3FFFF, 0 .. 253
     bits("0000 0000 00000100 000000 1 0") + bits("11111111 11111111 11 0 0 1 000") + b"\xff"),
    (18, StatusPdu(0x20001, (Nack(0x1FFFE, so_start=7, so_end=9), Nack(0x1FFFF, nack_range=2))),
     bits("0000 1000 00000000 000001 1 0") + bits("01111111 11111111 10 1 1 0 000")
     + bytes.fromhex("0007 0009") + bits("01111111 11111111 11 0 0 1 000") + b"\x02"),
]


@pytest.mark.parametrize("sn_bits,status,octets", HAND_WRITTEN)
def test_encoding_matches_hand_written_octets(sn_bits, status, octets):
    assert encode_status(status, sn_bits).hex() == octets.hex()
    assert decode_status(octets, sn_bits) == status
    assert bytes(scapy_status(status, sn_bits)).hex() == octets.hex()


E_BIT_CASES = list(itertools.product((12, 18), (False, True), (False, True), (False, True)))


@pytest.mark.parametrize("sn_bits,another_follows,e2,e3", E_BIT_CASES)
def test_every_e1_e2_e3_combination_matches_scapy(sn_bits, another_follows, e2, e3):
    """A NACK with each E2/E3 combination, either the last one (E1 = 0) or
    followed by another (E1 = 1), which also takes each combination."""
    def nack(sn):
        return Nack(sn, so_start=10 if e2 else None, so_end=20 if e2 else None,
                    nack_range=4 if e3 else None)

    ack_sn = 100
    nacks = (nack(90),) + ((nack(96),) if another_follows else ())
    assert_matches_scapy(StatusPdu(ack_sn, nacks), sn_bits)
    # and the E bits sit where 6.2.2.5 puts them
    encoded = encode_status(StatusPdu(ack_sn, nacks), sn_bits)
    e_bits = encoded[4] if sn_bits == 12 else encoded[5]
    shift = 1 if sn_bits == 12 else 3
    assert (e_bits >> shift) & 0b111 == (another_follows << 2) | (e2 << 1) | e3


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_random_status_pdus_match_scapy(sn_bits):
    """Valid STATUS PDUs of every shape (seeded), byte for byte."""
    generator = random.Random(13 + sn_bits)
    modulus = 1 << sn_bits
    for _ in range(300):
        ack_sn = generator.randrange(modulus)
        nacks, position = [], ack_sn - generator.randrange(1, window_size(sn_bits))
        while position < ack_sn and len(nacks) < 12:
            count = generator.choice([1, 1, 2, generator.randrange(1, 256)])
            if position + count > ack_sn:
                break
            with_so = generator.random() < 0.3
            nacks.append(Nack(position % modulus,
                              so_start=generator.randrange(100) if with_so else None,
                              so_end=generator.choice([200, 0xFFFF]) if with_so else None,
                              nack_range=count if count > 1 or generator.random() < 0.2 else None))
            position += count + generator.randrange(0, 40)
        assert_matches_scapy(StatusPdu(ack_sn, tuple(nacks)), sn_bits)


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_nacks_across_the_sn_wrap(sn_bits):
    top = (1 << sn_bits) - 1
    status = StatusPdu(3, (Nack(top - 1, nack_range=3), Nack(1)))   # top-1, top, 0; then 1
    assert_matches_scapy(status, sn_bits)
    assert status.nacked_sns(sn_bits) == [top - 1, top, 0, 1]
    # the lowest SN a STATUS can NACK: ACK_SN - AM_Window_Size
    lowest = (3 - window_size(sn_bits)) % (1 << sn_bits)
    assert_matches_scapy(StatusPdu(3, (Nack(lowest),)), sn_bits)
    with pytest.raises(MalformedStatus, match="not below ACK_SN"):
        decode_status(encode_status(StatusPdu(3, (Nack((lowest - 1) % (1 << sn_bits)),)),
                                    sn_bits), sn_bits)


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_decoding_ignores_padding_after_the_last_nack(sn_bits):
    status = StatusPdu(40, (Nack(30), Nack(35, nack_range=2)))
    encoded = encode_status(status, sn_bits)
    assert decode_status(encoded + b"\xff" * 40, sn_bits) == status
    assert decode_status(encode_status(StatusPdu(40), sn_bits) + b"\x80\x80", sn_bits) \
        == StatusPdu(40)


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_reserved_bits_are_ignored_unless_asked(sn_bits):
    encoded = bytearray(encode_status(StatusPdu(40, (Nack(30),)), sn_bits))
    encoded[2] |= 0x01                                   # R after ACK_SN's E1
    encoded[-1] |= 0x01                                  # the NACK's last R bit
    assert decode_status(bytes(encoded), sn_bits) == StatusPdu(40, (Nack(30),))
    with pytest.raises(MalformedStatus, match="R bits"):
        decode_status(bytes(encoded), sn_bits, reject_reserved_bits=True)


def _malformed_cases():
    nack12 = encode_status(StatusPdu(100, (Nack(50, so_start=1, so_end=2, nack_range=2),)), 12)
    nack18 = encode_status(StatusPdu(100, (Nack(50, so_start=1, so_end=2, nack_range=2),)), 18)
    cases = [
        (12, b"", "at least 3"),
        (18, b"\x00\x01", "at least 3"),
        (12, b"\x80\x00\x00", "D/C = 1"),
        (12, nack12[:3], "ends inside NACK 1"),           # E1 = 1 and nothing after
        (12, nack12[:4], "ends inside NACK 1"),
        (18, nack18[:5], "ends inside NACK 1"),
        (12, nack12[:5], "inside SOstart/SOend"),
        (12, nack12[:8], "inside SOstart/SOend"),
        (18, nack18[:9], "inside SOstart/SOend"),
        (12, nack12[:9], "before NACK range"),
        (18, nack18[:10], "before NACK range"),
        (12, nack12[:9] + b"\x00", "NACK range 0"),
        (18, nack18[:10] + b"\x00", "NACK range 0"),
    ]
    for cpt in range(1, 8):
        cases.append((12, bytes([cpt << 4, 0, 0]), f"CPT {cpt:03b} is reserved"))
        cases.append((18, bytes([cpt << 4, 0, 0]), f"CPT {cpt:03b} is reserved"))
    return cases


@pytest.mark.parametrize("sn_bits,octets,error", _malformed_cases())
def test_malformed_octets_raise_a_clear_error(sn_bits, octets, error):
    with pytest.raises(MalformedStatus, match=error):
        decode_status(octets, sn_bits)


@pytest.mark.parametrize("sn_bits", [12, 18])
@pytest.mark.parametrize("status,error", [
    (StatusPdu(100, (Nack(100),)), "not below ACK_SN"),
    (StatusPdu(100, (Nack(101),)), "not below ACK_SN"),
    (StatusPdu(100, (Nack(98, nack_range=3),)), "not below ACK_SN"),       # 98, 99, 100
    (StatusPdu(100, (Nack(50), Nack(40))), "not above the previous"),
    (StatusPdu(100, (Nack(50), Nack(50))), "not above the previous"),
    (StatusPdu(100, (Nack(50, nack_range=5), Nack(54))), "not above the previous"),
    (StatusPdu(100, (Nack(50, so_start=9, so_end=3),)), "SOstart 9 > SOend 3"),
    (StatusPdu(100, (Nack(50, so_start=0, so_end=10), Nack(50, so_start=5, so_end=20))),
     "not above the previous"),
    (StatusPdu(100, (Nack(50, so_start=0, so_end=0xFFFF), Nack(50, so_start=5, so_end=20))),
     "not above the previous"),
])
def test_nacks_a_receiver_cannot_produce_are_malformed(sn_bits, status, error):
    encoded = encode_status(status, sn_bits)
    with pytest.raises(MalformedStatus, match=error):
        decode_status(encoded, sn_bits)
    assert decode_status(encoded, sn_bits, check_order=False) == status


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_byte_ranges_of_one_sn_in_order_are_valid(sn_bits):
    status = StatusPdu(100, (Nack(50, so_start=0, so_end=10), Nack(50, so_start=20, so_end=0xFFFF),
                             Nack(51, so_start=30, so_end=5, nack_range=2)))
    assert_matches_scapy(status, sn_bits)


@pytest.mark.parametrize("status,sn_bits,error", [
    (StatusPdu(4096), 12, "ACK_SN 4096"),
    (StatusPdu(1 << 18), 18, "ACK_SN 262144"),
    (StatusPdu(-1), 12, "ACK_SN -1"),
    (StatusPdu(10, (Nack(4096),)), 12, "NACK_SN 4096"),
    (StatusPdu(10, (Nack(5, nack_range=0),)), 12, "NACK range 0"),
    (StatusPdu(10, (Nack(5, nack_range=256),)), 18, "NACK range 256"),
    (StatusPdu(10, (Nack(5, so_start=1),)), 12, "come together"),
    (StatusPdu(10, (Nack(5, so_start=1, so_end=0x10000),)), 12, "16 bits"),
    (StatusPdu(10), 16, "12 or 18"),
])
def test_encoding_refuses_fields_that_do_not_fit(status, sn_bits, error):
    with pytest.raises(ValueError, match=error):
        encode_status(status, sn_bits)


@pytest.mark.parametrize("sn_bits,pdcp_sn18", [(12, False), (12, True), (18, False), (18, True)])
def test_uplink_status_frame_matches_scapy(sn_bits, pdcp_sn18):
    status = StatusPdu(77, (Nack(70, nack_range=2), Nack(75)))
    flags = shim_flags(sn_bits, pdcp_sn18)
    frame = status_frame("02:00:00:00:01:0a", "02:00:00:00:00:05", 0x1234, 4, flags,
                         encode_status(status, sn_bits))
    expected = (Ether(dst="02:00:00:00:01:0a", src="02:00:00:00:00:05", type=0x88B5)
                / UplinkBearerShim(ue_id=0x1234, lcid=4, flags=flags)
                / scapy_status(status, sn_bits))
    assert frame.hex() == bytes(expected).hex()
    dissected = dissect_uplink_radio_frame(frame)
    layer = dissected[RlcStatus12 if sn_bits == 12 else RlcStatus18]
    assert from_scapy(layer) == status
    assert dissected[UplinkBearerShim].flags == flags


def test_uplink_status_frame_padding_and_flags():
    status = encode_status(StatusPdu(5), 12)
    frame = status_frame(bytes(6), b"\x02" * 6, 1, 4, 0x01, status, pad_to=60)
    assert len(frame) == 60 and frame[21:] == bytes(39)
    assert decode_status(frame[18:], 12) == StatusPdu(5)
    assert status_frame(bytes(6), bytes(6), 1, 4, 0x01, status, pad_to=10) == \
        status_frame(bytes(6), bytes(6), 1, 4, 0x01, status)
    with pytest.raises(ValueError, match="RLC AM"):
        status_frame(bytes(6), bytes(6), 1, 4, 0x04, status)
    with pytest.raises(ValueError, match="MAC"):
        status_frame("02:00", bytes(6), 1, 4, 0x01, status)
