"""P4Runtime object ids, assigned the way p4c's control-plane serializer does.

One P4Info must drive our targets and any p4c-built one (bmv2, Tofino, the
vendor's SmartNIC build), so an object's id has to be the id p4c gives it:

* the most significant byte is the resource-type prefix of the P4Runtime
  specification (``PREFIX_*`` below);
* an ``@id(N)`` annotation wins: N keeps its prefix byte if it has one (it
  must be the object's), otherwise gets it;
* every other object gets ``prefix << 24 | (h & 0xFFFFFF)``, where ``h`` is
  Bob Jenkins' one-at-a-time hash of the object's fully qualified
  control-plane name (``Control.object``, ``@name`` applied, no leading dot),
  hashed as bytes;
* a collision with an id already taken (an ``@id``, or a name hashed
  earlier) is resolved by linear probing: ``h + 1``, ``h + 2``, ... (32-bit
  arithmetic, the prefix re-applied each time), and names are hashed in
  byte order (C ``strcmp``) so the result is deterministic.

p4c keeps one set of taken ids for all resource types; since the prefix
differs per type, probing only ever meets ids of the same type, so the
assignment can be done type by type.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

PREFIX_ACTION = 0x01
PREFIX_TABLE = 0x02
PREFIX_VALUE_SET = 0x03
PREFIX_CONTROLLER_HEADER = 0x04
PREFIX_ACTION_PROFILE = 0x11
PREFIX_COUNTER = 0x12
PREFIX_DIRECT_COUNTER = 0x13
PREFIX_METER = 0x14
PREFIX_DIRECT_METER = 0x15
PREFIX_REGISTER = 0x16
PREFIX_DIGEST = 0x17

_MASK32 = 0xFFFFFFFF
_LOW24 = 0xFFFFFF


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash, 32-bit (p4c's name hash)."""
    h = 0
    for byte in data:
        h = (h + byte) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    h = (h + (h << 15)) & _MASK32
    return h


def name_hash(name: str) -> int:
    return jenkins_one_at_a_time(name.encode("utf-8"))


def hashed_id(prefix: int, name: str) -> int:
    """The id of NAME when nothing collides with it."""
    return prefix << 24 | (name_hash(name) & _LOW24)


class IdError(ValueError):
    """An ``@id`` that cannot be honoured; ``name`` says whose."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


def with_prefix(prefix: int, name: str, explicit: int) -> int:
    """An ``@id`` value as p4c reads it: the type prefix added when the top
    byte is zero, refused when it is another type's."""
    if not 0 <= explicit <= _MASK32:
        raise IdError(name, f"@id {explicit} of '{name}' is not a 32-bit "
                      f"unsigned integer")
    top = explicit >> 24
    if top not in (0, prefix):
        raise IdError(name, f"@id 0x{explicit:08x} of '{name}' has the wrong "
                      f"resource prefix (expected 0x{prefix:02x})")
    return explicit | prefix << 24


def assign_ids(prefix: int, names: Iterable[str],
               explicit: Optional[Mapping[str, int]] = None) -> dict:
    """Ids for the objects of one resource type.

    NAMES are the fully qualified control-plane names (duplicates count
    once, as in p4c's symbol table); EXPLICIT maps some of them to their
    ``@id`` value.  Returns {name: id}.  Raises IdError for a bad or
    repeated ``@id``.
    """
    explicit = explicit or {}
    ids = {}
    taken = {}
    for name, value in explicit.items():
        value = with_prefix(prefix, name, value)
        if value in taken:
            raise IdError(name, f"@id 0x{value:08x} of '{name}' is already "
                          f"used by '{taken[value]}'")
        taken[value] = name
        ids[name] = value
    pending = sorted({n for n in names if n not in ids},
                     key=lambda n: n.encode("utf-8"))
    for name in pending:
        start = name_hash(name)
        value = start
        while True:
            candidate = prefix << 24 | (value & _LOW24)
            if candidate not in taken:
                break
            value = (value + 1) & _MASK32
            if value == start:      # cannot happen below 2**24 objects
                raise IdError(name, f"no id left for '{name}'")
        taken[candidate] = name
        ids[name] = candidate
    return ids
