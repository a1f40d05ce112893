"""RLC STATUS PDUs (TS 38.322 6.2.2.5): encoding, decoding with
validation, and the uplink radio frame that carries one.

Layout (docs/wire-format.md draws it octet by octet):

    12-bit SN: D/C CPT(3) ACK_SN(12) E1 R(7)
               per NACK: NACK_SN(12) E1 E2 E3 R(1) [SOstart(16) SOend(16)] [NACK range(8)]
    18-bit SN: D/C CPT(3) ACK_SN(18) E1 R(1)
               per NACK: NACK_SN(18) E1 E2 E3 R(3) [SOstart(16) SOend(16)] [NACK range(8)]

Every part (the fixed part, a NACK_SN with its E bits, the SO pair, the
range) is a whole number of octets, so each is packed as one big-endian
integer. The E1 before a NACK (the fixed part's, or the previous NACK's)
says that it follows; E2 and E3 of a NACK say that its SO pair / range
follow (6.2.3.11-6.2.3.13). Encoding sets every E bit from the Nack list
and every R bit and CPT to 0; decoding stops at the first E1 = 0 and
leaves the octets after it alone (Ethernet padding of a short frame).

No scapy here: the UE emulator encodes on its hot path and BaaS tests can
decode thousands of PDUs.
"""
from __future__ import annotations

from dataclasses import dataclass

DC_CONTROL = 0
CPT_STATUS = 0                 # 6.2.3.9: 000 STATUS PDU, 001-111 reserved
SO_END_OF_SDU = 0xFFFF         # 6.2.3.16: SOend 0xFFFF: up to the SDU's last byte
MAX_NACK_RANGE = 255           # 6.2.3.18: NACK range is 8 bits; 0 means nothing
FIXED_PART_BYTES = 3           # both SN lengths
SO_PAIR_BYTES = 4
NACK_RANGE_BYTES = 1

ETHERTYPE_BEARER = 0x88B5
SHIM_RLC_AM = 0x01
SHIM_RLC_SN18 = 0x02
SHIM_PDCP_SN18 = 0x04


class MalformedStatus(ValueError):
    """A STATUS PDU that TS 38.322 says to discard (5.6.1: reserved or
    invalid values), or one that ends inside a field."""


@dataclass(frozen=True)
class Nack:
    """One NACK_SN with what follows it: an SO pair (E2) for a missing byte
    range, a NACK range (E3) for consecutive missing SDUs, or both (then
    SOstart applies to the first SDU and SOend to the last, 6.2.3.15-18)."""
    sn: int
    so_start: int | None = None
    so_end: int | None = None
    nack_range: int | None = None

    @property
    def has_so(self) -> bool:
        return self.so_start is not None

    @property
    def count(self) -> int:
        """How many SNs the NACK names."""
        return self.nack_range if self.nack_range is not None else 1


@dataclass(frozen=True)
class StatusPdu:
    ack_sn: int
    nacks: tuple[Nack, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "nacks", tuple(self.nacks))

    def nacked_sns(self, sn_bits: int) -> list[int]:
        """Every SN a NACK names (the SNs of ranges spelt out), in PDU order."""
        mask = (1 << sn_bits) - 1
        return [(nack.sn + i) & mask for nack in self.nacks for i in range(nack.count)]


def check_sn_bits(sn_bits: int) -> int:
    if sn_bits not in (12, 18):
        raise ValueError(f"an RLC AM SN is 12 or 18 bits, not {sn_bits}")
    return sn_bits


def window_size(sn_bits: int) -> int:
    """AM_Window_Size (7.2): half the SN space."""
    return 1 << (check_sn_bits(sn_bits) - 1)


def nack_size(nack: Nack, sn_bits: int) -> int:
    """Octets of one NACK: NACK_SN with E1-E3 and R, then SO pair, then range."""
    return ((2 if sn_bits == 12 else 3) + (SO_PAIR_BYTES if nack.has_so else 0)
            + (NACK_RANGE_BYTES if nack.nack_range is not None else 0))


def status_size(status: StatusPdu, sn_bits: int) -> int:
    return FIXED_PART_BYTES + sum(nack_size(nack, sn_bits) for nack in status.nacks)


def _check_nack_fields(nack: Nack, sn_bits: int):
    if not 0 <= nack.sn < 1 << sn_bits:
        raise ValueError(f"NACK_SN {nack.sn} does not fit {sn_bits} bits")
    if (nack.so_start is None) != (nack.so_end is None):
        raise ValueError(f"NACK_SN {nack.sn}: SOstart and SOend come together (E2)")
    if nack.has_so and not (0 <= nack.so_start <= 0xFFFF and 0 <= nack.so_end <= 0xFFFF):
        raise ValueError(f"NACK_SN {nack.sn}: SOstart/SOend are 16 bits")
    if nack.nack_range is not None and not 1 <= nack.nack_range <= MAX_NACK_RANGE:
        raise ValueError(f"NACK_SN {nack.sn}: NACK range {nack.nack_range} is not 1..255")


def encode_status(status: StatusPdu, sn_bits: int) -> bytes:
    """The STATUS PDU's octets; every R bit 0, CPT 000, E bits from the
    Nack list. Raises ValueError for a field that does not fit."""
    check_sn_bits(sn_bits)
    if not 0 <= status.ack_sn < 1 << sn_bits:
        raise ValueError(f"ACK_SN {status.ack_sn} does not fit {sn_bits} bits")
    more = 1 if status.nacks else 0
    if sn_bits == 12:
        # D/C CPT ACK_SN(12) | E1 R(7)
        out = bytearray(((status.ack_sn << 8) | (more << 7)).to_bytes(3, "big"))
    else:
        # D/C CPT ACK_SN(18) E1 R
        out = bytearray(((status.ack_sn << 2) | (more << 1)).to_bytes(3, "big"))
    last = len(status.nacks) - 1
    for position, nack in enumerate(status.nacks):
        _check_nack_fields(nack, sn_bits)
        e1 = 1 if position < last else 0
        e2 = 1 if nack.has_so else 0
        e3 = 1 if nack.nack_range is not None else 0
        if sn_bits == 12:
            out += ((nack.sn << 4) | (e1 << 3) | (e2 << 2) | (e3 << 1)).to_bytes(2, "big")
        else:
            out += ((nack.sn << 6) | (e1 << 5) | (e2 << 4) | (e3 << 3)).to_bytes(3, "big")
        if e2:
            out += ((nack.so_start << 16) | nack.so_end).to_bytes(4, "big")
        if e3:
            out.append(nack.nack_range)
    return bytes(out)


def decode_status(data: bytes, sn_bits: int, *, reject_reserved_bits: bool = False,
                  check_order: bool = True) -> StatusPdu:
    """The STATUS PDU at the start of `data` (octets after its last NACK
    are ignored: padding). Raises MalformedStatus, saying what is wrong,
    for: too short / ending inside a NACK, SO pair or range; D/C = 1 (a
    data PDU); CPT other than 000 (reserved, 5.6.1); NACK range 0;
    and, with check_order (the default), NACKs that a receiver cannot
    have produced (see check_status_order). R bits are ignored, as
    6.2.3.8 tells a receiver to, unless reject_reserved_bits."""
    check_sn_bits(sn_bits)
    data = bytes(data)
    if len(data) < FIXED_PART_BYTES:
        raise MalformedStatus(f"{len(data)} octets: a STATUS PDU has at least {FIXED_PART_BYTES}")
    if data[0] & 0x80:
        raise MalformedStatus("D/C = 1: a data PDU, not a control PDU")
    cpt = (data[0] >> 4) & 0x7
    if cpt != CPT_STATUS:
        raise MalformedStatus(f"CPT {cpt:03b} is reserved (only 000, STATUS PDU, is defined)")
    fixed = int.from_bytes(data[:3], "big")
    if sn_bits == 12:
        ack_sn, more, reserved = (fixed >> 8) & 0xFFF, (fixed >> 7) & 1, fixed & 0x7F
    else:
        ack_sn, more, reserved = (fixed >> 2) & 0x3FFFF, (fixed >> 1) & 1, fixed & 0x1
    if reserved and reject_reserved_bits:
        raise MalformedStatus(f"R bits after ACK_SN are {reserved:#x}, not 0")
    sn_octets = 2 if sn_bits == 12 else 3
    nacks = []
    offset = FIXED_PART_BYTES
    while more:
        if offset + sn_octets > len(data):
            raise MalformedStatus(f"ends inside NACK {len(nacks) + 1} (NACK_SN at octet "
                                  f"{offset}, {len(data)} octets)")
        word = int.from_bytes(data[offset:offset + sn_octets], "big")
        if sn_bits == 12:
            sn, more, e2, e3, reserved = word >> 4, (word >> 3) & 1, (word >> 2) & 1, \
                (word >> 1) & 1, word & 1
        else:
            sn, more, e2, e3, reserved = word >> 6, (word >> 5) & 1, (word >> 4) & 1, \
                (word >> 3) & 1, word & 0x7
        if reserved and reject_reserved_bits:
            raise MalformedStatus(f"NACK_SN {sn}: R bits are {reserved:#x}, not 0")
        offset += sn_octets
        so_start = so_end = nack_range = None
        if e2:
            if offset + SO_PAIR_BYTES > len(data):
                raise MalformedStatus(f"NACK_SN {sn}: E2 = 1 but the PDU ends inside SOstart/SOend")
            so_start = int.from_bytes(data[offset:offset + 2], "big")
            so_end = int.from_bytes(data[offset + 2:offset + 4], "big")
            offset += SO_PAIR_BYTES
        if e3:
            if offset + NACK_RANGE_BYTES > len(data):
                raise MalformedStatus(f"NACK_SN {sn}: E3 = 1 but the PDU ends before NACK range")
            nack_range = data[offset]
            offset += NACK_RANGE_BYTES
            if nack_range == 0:
                raise MalformedStatus(f"NACK_SN {sn}: NACK range 0 names no SDU")
        nacks.append(Nack(sn, so_start, so_end, nack_range))
    status = StatusPdu(ack_sn, tuple(nacks))
    if check_order:
        check_status_order(status, sn_bits)
    return status


def check_status_order(status: StatusPdu, sn_bits: int):
    """What a STATUS PDU built per 5.3.4 always satisfies, without knowing
    the peer's window (all SNs mod 2^n, base ACK_SN - AM_Window_Size,
    since a receiver NACKs only SNs in [RX_Next, RX_Highest_Status) and
    RX_Highest_Status <= RX_Next + AM_Window_Size):
    every NACKed SN (a range's last one included) lies in
    [ACK_SN - AM_Window_Size, ACK_SN); NACKs go up in SN order, never
    overlapping, except NACKs of byte ranges of the same SN, whose SO
    ranges go up; SOstart <= SOend (SOend 0xFFFF: to the SDU's end) when
    both apply to one SDU. Raises MalformedStatus."""
    modulus = 1 << sn_bits
    window = modulus >> 1
    base = (status.ack_sn - window) % modulus
    previous_last = -1            # offset from base of the last SN named so far
    previous_so_end = None        # SOend of the previous NACK when it had an SO pair
    for nack in status.nacks:
        first = (nack.sn - base) % modulus
        last = first + nack.count - 1
        if first >= window or last >= window:
            raise MalformedStatus(
                f"NACK_SN {nack.sn}" + (f" range {nack.nack_range}" if nack.nack_range else "")
                + f" is not below ACK_SN {status.ack_sn} (within AM_Window_Size)")
        if nack.has_so and nack.count == 1 and nack.so_end != SO_END_OF_SDU \
                and nack.so_start > nack.so_end:
            raise MalformedStatus(f"NACK_SN {nack.sn}: SOstart {nack.so_start} > SOend {nack.so_end}")
        if first < previous_last or (first == previous_last and not (
                nack.has_so and previous_so_end is not None and previous_so_end != SO_END_OF_SDU
                and nack.so_start > previous_so_end)):
            raise MalformedStatus(f"NACK_SN {nack.sn} is not above the previous NACK "
                                  f"(NACKs go up in SN order, 5.3.4)")
        previous_last = last
        previous_so_end = nack.so_end if nack.has_so else None


def shim_flags(sn_bits: int, pdcp_sn18: bool) -> int:
    """The bearer shim flags of an RLC AM bearer."""
    return SHIM_RLC_AM | (SHIM_RLC_SN18 if check_sn_bits(sn_bits) == 18 else 0) \
        | (SHIM_PDCP_SN18 if pdcp_sn18 else 0)


def mac_bytes(mac: str | bytes) -> bytes:
    if isinstance(mac, (bytes, bytearray)):
        if len(mac) != 6:
            raise ValueError(f"a MAC address is 6 octets, not {len(mac)}")
        return bytes(mac)
    octets = bytes.fromhex(mac.replace(":", "").replace("-", ""))
    if len(octets) != 6:
        raise ValueError(f"{mac!r} is not a MAC address")
    return octets


def status_frame(dst_mac: str | bytes, src_mac: str | bytes, ue_id: int, lcid: int,
                 flags: int, status: bytes, pad_to: int = 0) -> bytes:
    """An uplink radio frame carrying a STATUS PDU: Ethernet (type 0x88B5)
    + the bearer shim with the bearer's exact flags (the gNB drops other
    flags as BEARER_FORMAT) + the STATUS octets, zero-padded to pad_to
    octets (60 is Ethernet's minimum without FCS; 0: no padding)."""
    if not flags & SHIM_RLC_AM:
        raise ValueError(f"shim flags {flags:#04x}: STATUS PDUs exist on RLC AM bearers only")
    frame = (mac_bytes(dst_mac) + mac_bytes(src_mac) + ETHERTYPE_BEARER.to_bytes(2, "big")
             + ue_id.to_bytes(2, "big") + lcid.to_bytes(1, "big") + flags.to_bytes(1, "big")
             + status)
    return frame + bytes(max(0, pad_to - len(frame)))
