"""The RLC AM poll configuration of a DRB (TS 38.322 5.3.3.2): pollPDU and
pollByte as TS 38.331 RLC-Config names them, and the two registers the
pipeline keeps them in (docs/wire-format.md, "RLC poll bit"), indexed by
the DRB index, each cell two 32-bit fields:

    rlc_poll_config  bits 31..0 pollPDU (PDUs)      bits 63..32 pollByte (bytes)
    rlc_poll_state   bits 31..0 PDU_WITHOUT_POLL    bits 63..32 BYTE_WITHOUT_POLL

A configuration field of 0 is the pipeline's default (pollPDU 64, pollByte
125,000 bytes), so gnbctl keeps 0 for "not configured": a DRB added
without poll options writes nothing, and `drb del` writes 0 back.

Only a target that numbers a DRB's AMD PDUs uses these registers: a NIC
(it numbers its own frames and every frame its hosts build) and a host
that stands alone. A hybrid host's poll bits are overwritten by its NIC,
so its registers are not written."""
from __future__ import annotations

import finsy as fy
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from controller.errors import MissingP4Object

CONFIG_REGISTER = "rlc_poll_config"
STATE_REGISTER = "rlc_poll_state"
_REGISTERS = (STATE_REGISTER, CONFIG_REGISTER)    # each DRB's two updates, in this order
INFINITY = 0xFFFF_FFFF          # a field of all ones: that trigger is off

# TS 38.331 RLC-Config, PollPDU (in PDUs) and PollByte (in bytes: kB25 is
# 25 kBytes, mB8 8 MBytes; 1 kB = 1,000 bytes), without the spares
POLL_PDU = {**{f"p{n}": n for n in (
    4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 20480,
    24576, 28672, 32768, 40960, 49152, 57344, 65536)}, "infinity": INFINITY}
POLL_BYTE = {**{f"kB{n}": n * 1000 for n in (
    1, 2, 5, 8, 10, 15, 25, 50, 75, 100, 125, 250, 375, 500, 750, 1000, 1250, 1500, 2000,
    3000, 4000, 4500, 5000, 5500, 6000, 6500, 7000, 7500)},
    **{f"mB{n}": n * 1_000_000 for n in (
        8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 25, 30, 40)},
    "infinity": INFINITY}
DEFAULT_POLL_PDU = "p64"        # what a field of 0 means (p4src/gnb/constants.p4)
DEFAULT_POLL_BYTE = "kB125"


def _by_name(values: dict[str, int]) -> dict[str, int]:
    return {name.lower(): value for name, value in values.items()}


_POLL_PDU_BY_NAME = _by_name(POLL_PDU)
_POLL_BYTE_BY_NAME = _by_name(POLL_BYTE)


def parse_poll_pdu(text: str) -> int:
    """pollPDU in PDUs from a TS 38.331 name (p4 .. p65536, infinity) or
    the number of PDUs (4 for p4)."""
    text = text.strip()
    value = _POLL_PDU_BY_NAME.get(text.lower())
    if value is None and text.isdigit() and int(text) in POLL_PDU.values():
        value = int(text)
    if value is None:
        raise ValueError(f"{text!r} is not a TS 38.331 pollPDU: one of "
                         f"{', '.join(POLL_PDU)} (or the number of PDUs, e.g. 4 for p4)")
    return value


def parse_poll_byte(text: str) -> int:
    """pollByte in bytes from a TS 38.331 name (kB1 .. kB7500, mB8 ..
    mB40, infinity)."""
    value = _POLL_BYTE_BY_NAME.get(text.strip().lower())
    if value is None:
        raise ValueError(f"{text.strip()!r} is not a TS 38.331 pollByte: one of "
                         f"{', '.join(POLL_BYTE)} (1 kB = 1,000 bytes)")
    return value


def poll_pdu_name(value: int) -> str | int | None:
    """The TS 38.331 name of a configured pollPDU; None for 0 (not
    configured: the default); the number itself if it has no name (a
    value written past gnbctl)."""
    return _name(POLL_PDU, value)


def poll_byte_name(value: int) -> str | int | None:
    return _name(POLL_BYTE, value)


def _name(values: dict[str, int], value: int) -> str | int | None:
    if not value:
        return None
    return next((name for name, v in values.items() if v == value), value)


def cell(pdus: int, octets: int) -> int:
    """A cell of either register: the PDU field in bits 31..0, bytes in 63..32."""
    return octets << 32 | pdus


def fields(value: int) -> tuple[int, int]:
    """(PDU field, byte field) of a register cell."""
    return value & 0xFFFF_FFFF, value >> 32


def numbers_amd_pdus(config) -> bool:
    """Whether the target's pipeline gives a DRB's AMD PDUs their SNs and
    poll bits (a TargetConfig): a NIC, or a host without a NIC in front."""
    return config.role == "nic" or config.nic is None


def _check(target, register: str) -> None:
    if target.schema.registers.get(register) is None:
        raise MissingP4Object(target.name, "register", register)


async def configure(target, drb_index: int, poll_pdu: int, poll_byte: int) -> None:
    """rlc_poll_config[drb_index] = (poll_pdu, poll_byte) (0: the default),
    rlc_poll_state[drb_index] = 0, in one Write (the state first: counting
    starts afresh whenever the configuration changes)."""
    await target.write_raw(encoded_writes(target, [drb_index], [cell(poll_pdu, poll_byte)]), 2,
                           lambda i: f"DRB {drb_index} ({_REGISTERS[i % 2]}[{drb_index}])")


async def reset(target, drb_index: int) -> None:
    """Both registers of the DRB back to 0: the defaults, counting from 0."""
    await configure(target, drb_index, 0, 0)


async def read(target, drb_index: int) -> tuple[int, int]:
    """(pollPDU, pollByte) configured for the DRB, 0 where not configured."""
    _check(target, CONFIG_REGISTER)
    found = await target.read(fy.P4RegisterEntry(CONFIG_REGISTER, index=drb_index))
    return fields(int(found[0].data)) if found else (0, 0)


async def configured(target) -> dict[int, int]:
    """DRB index -> its rlc_poll_config cell, of every cell that is not 0
    (one Read of the whole register, decoded without finsy)."""
    _check(target, CONFIG_REGISTER)
    found = await target.read_raw(p4r.Entity(register_entry=p4r.RegisterEntry(
        register_id=target.schema.registers[CONFIG_REGISTER].id)))
    cells = {}
    for e in found:
        value = int.from_bytes(e.register_entry.data.bitstring, "big")
        if value:
            cells[e.register_entry.index.index] = value
    return cells


def encoded_writes(target, indexes, config_cells) -> bytes:
    """The serialized updates (WriteRequest field 2, as Target.write_raw
    takes them) that configure each DRB index with its config cell and
    zero its state, state first; two updates per DRB."""
    for register in _REGISTERS:
        _check(target, register)
    ids = {r: target.schema.registers[r].id for r in _REGISTERS}
    request = p4r.WriteRequest()
    for index, value in zip(indexes, config_cells):
        for register, data in zip(_REGISTERS, (0, int(value))):
            entry = request.updates.add(type=p4r.Update.MODIFY).entity.register_entry
            entry.register_id = ids[register]
            entry.index.index = int(index)
            entry.data.bitstring = data.to_bytes(8, "big")
    return request.SerializeToString()
