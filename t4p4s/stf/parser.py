"""Parse STF (simple test framework) files, as p4c's v1model samples write
them, into commands whose names are still as written (resolution against
the P4Info is t4p4s/stf/resolve.py).

Grammar, one command per line, `#` starts a comment:

    add TABLE [PRIORITY] FIELD:KEY ... ACTION(PARAM:VALUE, ...)
    setdefault TABLE ACTION(PARAM:VALUE, ...)
    packet PORT [HEX...]               hex digits, spaces allowed; no HEX: a
                                       0-byte frame
    expect PORT [HEX... [$]]           `*` nibbles are don't-care; `$`: exact
                                       length (otherwise longer frames match);
                                       no HEX: any packet on PORT; `$` alone:
                                       a 0-byte frame
    mirroring_add SESSION PORT [TRUNCATE]      (TRUNCATE: bytes kept, 0 = all)
    mc_mgrp_create MGRP, mc_node_create RID PORT..., mc_node_associate MGRP
    HANDLE and the other multicast commands of t4p4s/stf/multicast.py
    register_write REGISTER INDEX VALUE
    register_read REGISTER INDEX [[==] VALUE]        with VALUE: a check
    check_counter COUNTER(INDEX) packets==N [bytes==M]
    check_direct_counter TABLE [PRIORITY] FIELD:KEY ... packets==N [bytes==M]
    wait

KEY is VALUE (exact), VALUE&&&MASK or hex/binary with `*` digits (ternary:
0x**AB is value 0x00AB mask 0x00FF), VALUE/PREFIX_LEN (lpm) or LOW..HIGH
(range). Numbers are decimal, 0x hex, 0b binary or 0o octal; dotted
IPv4 addresses and colon-separated MAC addresses are numbers too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


class StfError(Exception):
    """A problem in an STF file or in running it, phrased for the user."""


@dataclass(frozen=True)
class Exact:
    value: int


@dataclass(frozen=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True)
class Range:
    low: int
    high: int


@dataclass
class Command:
    line: int          # 1-based line in the STF file
    source: str        # "file:line", for messages


@dataclass
class ActionCall:
    name: str
    params: list[tuple[str, int]]


@dataclass
class TableAdd(Command):
    table: str
    priority: int | None
    keys: list[tuple[str, object]]
    action: ActionCall


@dataclass
class SetDefault(Command):
    table: str
    action: ActionCall


@dataclass
class Packet(Command):
    port: int
    data: bytes


@dataclass
class Expect(Command):
    port: int
    nibbles: str | None    # lower-case hex digits and '*'; None: any packet
    exact_length: bool


@dataclass
class MirroringAdd(Command):
    session: int
    port: int
    truncate: int = 0


# bmv2's multicast commands (t4p4s/stf/multicast.py): name -> (the
# arguments, whether a port list follows)
MULTICAST_COMMANDS = {
    "mc_mgrp_create": (("MGRP",), False),
    "mc_mgrp_destroy": (("MGRP",), False),
    "mc_node_create": (("RID",), True),
    "mc_node_update": (("HANDLE",), True),
    "mc_node_associate": (("MGRP", "HANDLE"), False),
    "mc_node_dissociate": (("MGRP", "HANDLE"), False),
    "mc_node_destroy": (("HANDLE",), False),
}


@dataclass
class Multicast(Command):
    op: str            # mc_mgrp_create, mc_node_create, ... (t4p4s/stf/multicast.py)
    args: list[int]
    ports: list[int]   # mc_node_create / mc_node_update: the node's ports


@dataclass
class RegisterWrite(Command):
    register: str
    index: int
    value: int


@dataclass
class RegisterRead(Command):
    register: str
    index: int
    expected: int | None


@dataclass
class CheckCounter(Command):
    counter: str
    index: int
    expected: dict[str, int]          # {"packets": N, "bytes": M}


@dataclass
class CheckDirectCounter(Command):
    table: str
    priority: int | None
    keys: list[tuple[str, object]]
    expected: dict[str, int]


@dataclass
class Wait(Command):
    pass


def parse_int(text: str) -> int:
    """A number as STF writes it (also 10.0.0.1 and 00:11:22:33:44:55);
    raises ValueError."""
    text = text.strip().replace("_", "")
    if re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", text):
        octets = [int(part) for part in text.split(".")]
        if max(octets) > 255:
            raise ValueError(f"not an IPv4 address: '{text}'")
        return int.from_bytes(bytes(octets), "big")
    if re.fullmatch(r"[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}", text):
        return int.from_bytes(bytes(int(part, 16) for part in text.split(":")), "big")
    negative = text.startswith("-")
    digits = text[1:] if negative else text
    lowered = digits.lower()
    for prefix, base in (("0x", 16), ("0b", 2), ("0o", 8)):
        if lowered.startswith(prefix):
            value = int(lowered[2:], base)
            break
    else:
        if not digits.isdigit():
            raise ValueError(f"not a number: '{text}'")
        value = int(digits, 10)
    return -value if negative else value


def _wildcard_digits(text: str) -> Ternary:
    """0x**AB -> value 0x00AB, mask 0x00FF (each digit covers 4 or 1 bits;
    bits above the written digits are don't-care, as p4c's STF runner does)."""
    lowered = text.lower()
    if lowered.startswith("0x"):
        bits, base, digits = 4, 16, lowered[2:]
    elif lowered.startswith("0b"):
        bits, base, digits = 1, 2, lowered[2:]
    else:
        raise ValueError(f"'*' digits need a 0x or 0b number: '{text}'")
    value = mask = 0
    for digit in digits:
        value <<= bits
        mask <<= bits
        if digit != "*":
            value |= int(digit, base)
            mask |= (1 << bits) - 1
    return Ternary(value, mask)


def parse_key(text: str):
    if "&&&" in text:
        value, mask = text.split("&&&", 1)
        return Ternary(parse_int(value), parse_int(mask))
    if "/" in text:
        value, prefix_len = text.split("/", 1)
        return Lpm(parse_int(value), parse_int(prefix_len))
    if ".." in text:
        low, high = text.split("..", 1)
        return Range(parse_int(low), parse_int(high))
    if "*" in text:
        return _wildcard_digits(text)
    return Exact(parse_int(text))


_NAME = r"[A-Za-z_$][\w.$\[\]]*"
_ACTION_CALL = re.compile(rf"^(?P<head>.*?)\s*(?P<name>{_NAME})\s*\((?P<args>[^()]*)\)\s*$")
_COUNTER_CHECK = re.compile(r"(packets|bytes)\s*==\s*(\S+)")
_COUNTER_REF = re.compile(rf"^(?P<name>{_NAME})\s*\(\s*(?P<index>[^()\s]+)\s*\)\s*(?P<rest>.*)$")


class _LineParser:
    def __init__(self, path: str, number: int, text: str):
        self.source = f"{path}:{number}"
        self.number = number
        self.text = text

    def error(self, message: str) -> StfError:
        return StfError(f"{self.source}: error: {message}")

    def int(self, text: str, what: str) -> int:
        try:
            return parse_int(text)
        except ValueError:
            raise self.error(f"{what} must be a number, not '{text}'") from None

    def key_list(self, tokens: list[str]) -> list[tuple[str, object]]:
        keys = []
        for token in tokens:
            name, colon, value = token.partition(":")
            if not colon or not name or not value:
                raise self.error(f"expected FIELD:VALUE, got '{token}'")
            try:
                keys.append((name, parse_key(value)))
            except ValueError as problem:
                raise self.error(f"bad key value for '{name}': {problem}") from None
        return keys

    def action_call(self, rest: str) -> tuple[str, ActionCall]:
        """Splits 'HEAD ACTION(P:V, ...)' into HEAD and the action call."""
        found = _ACTION_CALL.match(rest)
        if not found:
            head, _, name = rest.rpartition(" ")
            if not re.fullmatch(_NAME, name or ""):
                raise self.error("expected an action call ACTION(PARAM:VALUE, ...)")
            return head, ActionCall(name, [])
        params = []
        for argument in filter(None, (a.strip() for a in found["args"].split(","))):
            name, colon, value = argument.partition(":")
            if not colon:
                raise self.error(f"expected PARAM:VALUE in the action call, got '{argument}'")
            params.append((name.strip(), self.int(value, f"action parameter '{name.strip()}'")))
        return found["head"], ActionCall(found["name"], params)

    def table_head(self, head: str) -> tuple[str, int | None, list]:
        tokens = re.sub(r"\s*:\s*", ":", head).split()
        if not tokens:
            raise self.error("missing table name")
        table, rest = tokens[0], tokens[1:]
        priority = None
        if rest and ":" not in rest[0]:
            priority = self.int(rest[0], "the priority")
            rest = rest[1:]
        return table, priority, self.key_list(rest)

    def counter_expectations(self, text: str) -> dict[str, int]:
        expected = {kind: self.int(value, f"the expected {kind}")
                    for kind, value in _COUNTER_CHECK.findall(text)}
        if not expected or _COUNTER_CHECK.sub("", text).strip():
            raise self.error("expected packets==N and/or bytes==N")
        return expected

    def parse(self):
        command, _, rest = self.text.partition(" ")
        rest = rest.strip()
        args = rest.split()
        where = dict(line=self.number, source=self.source)
        if command == "add":
            head, action = self.action_call(rest)
            table, priority, keys = self.table_head(head)
            return TableAdd(**where, table=table, priority=priority, keys=keys, action=action)
        if command == "setdefault":
            head, action = self.action_call(rest)
            if len(head.split()) != 1:
                raise self.error("expected: setdefault TABLE ACTION(PARAM:VALUE, ...)")
            return SetDefault(**where, table=head.strip(), action=action)
        if command in ("packet", "expect"):
            if not args:
                raise self.error(f"expected: {command} PORT HEX")
            port = self.int(args[0], "the port")
            hex_text = "".join(args[1:]).lower()
            exact_length = hex_text.endswith("$")
            hex_text = hex_text.rstrip("$")
            allowed = "0123456789abcdef" + ("*" if command == "expect" else "")
            bad = sorted(set(hex_text) - set(allowed))
            if bad:
                raise self.error(f"unexpected characters {''.join(bad)!r} in the packet data")
            # An expect compares nibbles, so it may end mid-byte (p4c's
            # samples do); an injected packet or an exact length may not.
            if len(hex_text) % 2 and (command == "packet" or exact_length):
                raise self.error("packet data has an odd number of hex digits")
            if command == "packet":
                return Packet(**where, port=port, data=bytes.fromhex(hex_text))
            return Expect(**where, port=port, nibbles=hex_text or (None if not exact_length else ""),
                          exact_length=exact_length)
        if command == "mirroring_add":
            if len(args) not in (2, 3):
                raise self.error("expected: mirroring_add SESSION PORT [TRUNCATE]")
            return MirroringAdd(**where, session=self.int(args[0], "the session"),
                                port=self.int(args[1], "the port"),
                                truncate=self.int(args[2], "the truncate length") if len(args) == 3 else 0)
        if command in MULTICAST_COMMANDS:
            names, has_ports = MULTICAST_COMMANDS[command]
            usage = " ".join((command,) + names + (("PORT...",) if has_ports else ()))
            if len(args) < len(names) or (not has_ports and len(args) != len(names)):
                raise self.error(f"expected: {usage}")
            return Multicast(**where, op=command,
                             args=[self.int(a, f"the {n.lower()}") for a, n in zip(args, names)],
                             ports=[self.int(a, "a port") for a in args[len(names):]])
        if command == "mirroring_add_mc":
            raise self.error("unsupported: mirroring_add_mc (a clone session that multicasts "
                             "to a group): this target's clone sessions have one port")
        if command == "register_write":
            if len(args) != 3:
                raise self.error("expected: register_write REGISTER INDEX VALUE")
            return RegisterWrite(**where, register=args[0], index=self.int(args[1], "the index"),
                                 value=self.int(args[2], "the value"))
        if command == "register_read":
            checked = [a for a in args[2:] if a != "=="]
            if len(args) < 2 or len(checked) > 1:
                raise self.error("expected: register_read REGISTER INDEX [VALUE]")
            return RegisterRead(**where, register=args[0], index=self.int(args[1], "the index"),
                                expected=self.int(checked[0], "the expected value") if checked else None)
        if command == "check_counter":
            found = _COUNTER_REF.match(rest)
            if not found:
                raise self.error("expected: check_counter COUNTER(INDEX) packets==N")
            return CheckCounter(**where, counter=found["name"],
                                index=self.int(found["index"], "the index"),
                                expected=self.counter_expectations(found["rest"]))
        if command == "check_direct_counter":
            checks = _COUNTER_CHECK.search(rest)
            if not checks:
                raise self.error("expected: check_direct_counter TABLE FIELD:KEY ... packets==N")
            table, priority, keys = self.table_head(rest[:checks.start()])
            return CheckDirectCounter(**where, table=table, priority=priority, keys=keys,
                                      expected=self.counter_expectations(rest[checks.start():]))
        if command == "wait":
            if args:
                raise self.error("'wait' takes no arguments")
            return Wait(**where)
        raise self.error(f"unknown command '{command}'")


def parse_stf_text(text: str, path: str = "<stf>") -> list[Command]:
    commands = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            commands.append(_LineParser(path, number, line).parse())
    return commands


def parse_stf_file(path) -> list[Command]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as problem:
        raise StfError(f"{path}: cannot read: {problem.strerror}") from None
    return parse_stf_text(text, str(path))
