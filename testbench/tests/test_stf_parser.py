"""The STF parser, name resolution and packet comparison on their own."""
import pytest

from t4p4s.stf import parser as stf
from t4p4s.stf.parser import StfError, parse_stf_text
from t4p4s.stf.resolve import MatchFieldInfo, P4InfoNames, Resolver, TableInfo
from t4p4s.stf.runner import compare_frame


def parse_one(line):
    [command] = parse_stf_text(line, "t.stf")
    return command


def test_add_with_priority_keys_and_action():
    command = parse_one("add ingress.t 10 hdr.h.f:0x**01 g : 0x0a&&&0xff a:10.0.0.0/8 "
                        "r:1..5 m:00:11:22:33:44:55 ingress.set(port:2, x : 0x1)")
    assert command.table == "ingress.t" and command.priority == 10
    assert command.keys == [("hdr.h.f", stf.Ternary(0x01, 0xff)), ("g", stf.Ternary(10, 0xff)),
                            ("a", stf.Lpm(0x0a000000, 8)), ("r", stf.Range(1, 5)),
                            ("m", stf.Exact(0x001122334455))]
    assert command.action == stf.ActionCall("ingress.set", [("port", 2), ("x", 1)])


def test_wildcard_nibbles():
    assert stf.parse_key("0x**AB") == stf.Ternary(0x00ab, 0x00ff)
    assert stf.parse_key("0x1*") == stf.Ternary(0x10, 0xf0)
    assert stf.parse_key("0b1*0") == stf.Ternary(0b100, 0b101)


def test_packets_and_expectations():
    packet, expect, any_packet = parse_stf_text(
        "packet 2 00 11 2233  # comment\nexpect 1 00** 22 $\nexpect 3", "t.stf")
    assert packet.port == 2 and packet.data == bytes.fromhex("00112233")
    assert expect.nibbles == "00**22" and expect.exact_length
    assert any_packet.nibbles is None


def test_checks():
    read, counter, direct = parse_stf_text(
        "register_read r 1 == 4\ncheck_counter c(3) packets==2 bytes == 100\n"
        "check_direct_counter t k:5 packets==1", "t.stf")
    assert (read.register, read.index, read.expected) == ("r", 1, 4)
    assert (counter.counter, counter.index, counter.expected) == ("c", 3, {"packets": 2, "bytes": 100})
    assert direct.keys == [("k", stf.Exact(5))] and direct.expected == {"packets": 1}


@pytest.mark.parametrize("text,message", [
    ("frobnicate 1", "unknown command 'frobnicate'"),
    ("packet x 00", "the port must be a number"),
    ("packet 0 0g", "unexpected characters"),
    ("packet 0 001", "odd number of hex digits"),
    ("expect 0 001 $", "odd number of hex digits"),
    ("add t k:zz a()", "bad key value for 'k'"),
    ("check_counter c(1) packets>2", "packets==N"),
    ("wait now", "takes no arguments"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(StfError) as error:
        parse_stf_text("# first line\n" + text, "t.stf")
    assert str(error.value).startswith("t.stf:2: error:")
    assert message in str(error.value)


NAMES = P4InfoNames(
    tables={"MyIngress.t": TableInfo("MyIngress.t", [
        MatchFieldInfo("hdr.h.f", 16, 4), MatchFieldInfo("hdr.h.g", 8, 2)],
        ["MyIngress.fwd", "NoAction"]),
        "MyIngress.other.t": TableInfo("MyIngress.other.t", [MatchFieldInfo("x", 8, 2)],
                                       ["NoAction"])},
    actions={"MyIngress.fwd": [("port", 9)], "NoAction": []},
    registers={"MyIngress.r": 8})


def test_resolution_by_suffix_and_auto_priority():
    resolver = Resolver(NAMES)
    first, other, second = (resolver.control_command(c) for c in parse_stf_text(
        "add MyIngress.t h.f:0x12** g:1 fwd(port:3)\nadd other.t x:1 NoAction()\nadd MyIngress.t f:7 g:2 NoAction()", "t.stf"))
    assert first == {"cmd": "table_add", "table": "MyIngress.t",
                     "match": {"hdr.h.f": {"value": 0x1200, "mask": 0xff00}, "hdr.h.g": 1},
                     "priority": first["priority"], "action": "MyIngress.fwd",
                     "params": {"port": 3}}
    assert other["table"] == "MyIngress.other.t" and "priority" not in other
    assert second["match"]["hdr.h.f"] == {"value": 7, "mask": 0xffff}
    assert second["priority"] < first["priority"], "earlier entries must win"


@pytest.mark.parametrize("text,message", [
    ("add t h.f:1 g:1 fwd(port:1)", "ambiguous"),
    ("add MyIngress.t f:1 fwd(port:1)", "exact match field(s) hdr.h.g"),
    ("add MyIngress.t g:256 fwd(port:1)", "does not fit in 8 bits"),
    ("add MyIngress.t g:1 fwd(port:512)", "does not fit in 9 bits"),
    ("add MyIngress.t g:1 fwd()", "needs parameter(s) port"),
    ("add MyIngress.t g:1 drop()", "no action of table 'MyIngress.t' named 'drop'"),
    ("register_write nope 0 1", "no register named 'nope'"),
])
def test_resolution_errors(text, message):
    command = parse_stf_text(text, "t.stf")[0]
    with pytest.raises(StfError) as error:
        Resolver(NAMES).control_command(command)
    assert str(error.value).startswith("t.stf:1: error:") and message in str(error.value)


def test_an_omitted_ternary_field_is_a_wildcard():
    """Only exact fields are required: hdr.h.f (ternary) left out is sent
    as no match at all, which the runtime reads as mask 0."""
    [command] = parse_stf_text("add MyIngress.t g:1 fwd(port:1)", "t.stf")
    resolved = Resolver(NAMES).control_command(command)
    assert resolved == {"cmd": "table_add", "table": "MyIngress.t", "match": {"hdr.h.g": 1},
                        "priority": resolved["priority"], "action": "MyIngress.fwd",
                        "params": {"port": 1}}
    assert isinstance(resolved["priority"], int) and resolved["priority"] > 0


def test_compare_frame():
    expect = parse_one("expect 1 00 1* 22")
    assert compare_frame(expect, bytes.fromhex("001f22")) is None
    assert compare_frame(expect, bytes.fromhex("001f22ff")) is None, "longer frames match without $"
    assert "1 nibble(s) differ" in compare_frame(expect, bytes.fromhex("002f22"))
    assert "at least 3" in compare_frame(expect, bytes.fromhex("001f"))
    half_byte = parse_one("expect 1 00 1* 2")
    assert compare_frame(half_byte, bytes.fromhex("001f2b")) is None, "an expect may end mid-byte"
    assert "1 nibble(s) differ" in compare_frame(half_byte, bytes.fromhex("001f3b"))
    exact = parse_one("expect 1 00 1* 22 $")
    assert "exactly 3" in compare_frame(exact, bytes.fromhex("001f22ff"))
