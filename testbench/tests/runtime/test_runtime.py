"""The DPDK target runtime through its real executable, built from the
hand-written pipeline t4p4s/runtime/tests/l2fwd_handwritten.c (no compiler
involved): net_pcap in/out compared byte for byte, the JSON control socket
and every error code, --entries, bad options, garbage frames, and table
writes under traffic."""
from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, Raw, rdpcap, wrpcap

from pcap_frames import read_pcap_frames

_prefix = itertools.count()

pytestmark = pytest.mark.dpdk


@pytest.fixture(scope="module")
def binary(handwritten):
    return handwritten


def eal(lcores="0"):
    # DPDK 22.11 rejects --in-memory with --no-huge: --no-shconf instead
    return ["-l", lcores, "--no-huge", "-m", "256", "--no-shconf", "--no-pci",
            "--file-prefix", f"rt{os.getpid()}_{next(_prefix)}",
            "--log-level", "lib.eal:error"]


def frame(dst="00:00:00:00:00:02", src="00:00:00:00:00:01", ip_dst="10.0.0.1",
          payload=b"payload-bytes"):
    return bytes(Ether(dst=dst, src=src) / IP(dst=ip_dst) / UDP() / Raw(payload))


def swapped(pkt: bytes) -> bytes:
    return pkt[6:12] + pkt[0:6] + pkt[12:]


def write_pcap(path: Path, frames: list[bytes]):
    wrpcap(str(path), [Raw(f) for f in frames])  # empty list: header only
    return path


def run_pcap(binary, tmp_path, inputs: list[list[bytes]], *app_args,
             lcores="0"):
    """Runs with one net_pcap port per element of `inputs`; returns the
    frames sent on each port and the final statistics."""
    args = [str(binary), *eal(lcores)]
    for port, frames in enumerate(inputs):
        rx = write_pcap(tmp_path / f"in{port}.pcap", frames)
        args += ["--vdev", f"net_pcap{port},rx_pcap={rx},"
                 f"tx_pcap={tmp_path / f'out{port}.pcap'}"]
    stats = tmp_path / "stats.json"
    args += ["--", "--exit-on-idle", "300", "--duration", "20",
             "--stats-json", str(stats), *map(str, app_args)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    outputs = [[bytes(p) for p in rdpcap(str(tmp_path / f"out{port}.pcap"))]
               for port in range(len(inputs))]
    return outputs, json.loads(stats.read_text())


class Runtime:
    """The executable on quiet net_ring ports (or given vdevs) with a
    control socket; stopped with SIGTERM."""

    def __init__(self, binary, tmp_path, vdevs=None, extra=(), lcores="0"):
        self.path = str(tmp_path / "control.sock")
        vdevs = vdevs or ["net_ring0", "net_ring1"]
        args = [str(binary), *eal(lcores)]
        for v in vdevs:
            args += ["--vdev", v]
        self.stats_path = tmp_path / "final_stats.json"
        args += ["--", "--control", self.path, "--governor", "nap",
                 "--stats-json", str(self.stats_path), *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(self.path)
                break
            except OSError:
                self.sock.close()
                if self.proc.poll() is not None or time.time() > deadline:
                    raise AssertionError("runtime did not start: "
                                         + self.proc.stderr.read())
                time.sleep(0.05)
        self.reader = self.sock.makefile("r")
        assert self.cmd("ping") == {"ok": True}

    def send_raw(self, text: str) -> dict:
        self.sock.sendall(text.encode() + b"\n")
        return json.loads(self.reader.readline())

    def cmd(self, name, **fields) -> dict:
        return self.send_raw(json.dumps({"cmd": name, **fields}))

    def ok(self, name, **fields) -> dict:
        reply = self.cmd(name, **fields)
        assert reply["ok"], reply
        return reply

    def error(self, name, **fields) -> str:
        reply = self.cmd(name, **fields)
        assert reply["ok"] is False and reply["message"], reply
        return reply["error"]

    def stop(self):
        self.sock.close()
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        return json.loads(self.stats_path.read_text())


@pytest.fixture
def runtime(binary, tmp_path):
    rt = Runtime(binary, tmp_path)
    yield rt
    if rt.proc.poll() is None:
        rt.stop()


DMAC = "ingress.dmac"
DST = "hdr.ethernet.dstAddr"


def test_forwards_with_mac_swap(binary, tmp_path):
    frames = [frame(payload=bytes([i]) * 30) for i in range(5)]
    (out0, out1), stats = run_pcap(binary, tmp_path, [frames, []])
    assert out0 == []
    assert out1 == [swapped(f) for f in frames]
    assert stats["ports"][0]["rx"] == 5
    assert stats["ports"][1]["tx"] == 5
    assert sum(stats["drops"].values()) == 0


def test_garbage_frames_are_dropped_and_counted(binary, tmp_path):
    good = frame()
    inputs = [b"\x01", b"\xff" * 13, good, b"\x00" * 14, good]
    (out0, out1), stats = run_pcap(binary, tmp_path, [inputs, []])
    assert out1 == [swapped(good), swapped(b"\x00" * 14), swapped(good)]
    assert stats["parser_errors"]["PacketTooShort"] == 2
    assert stats["drops"]["pipeline"] == 2


def test_entries_lpm_priority_clone_and_counters(binary, tmp_path):
    entries = [
        {"cmd": "table_add", "table": "ingress.ipv4_lpm",
         "match": {"hdr.ipv4.dstAddr": {"value": "0x0a000000", "prefix_len": 8}},
         "action": "ingress.set_port", "params": {"port": 0}},
        {"cmd": "table_add", "table": "ingress.ipv4_lpm",
         "match": {"hdr.ipv4.dstAddr": {"value": 0x0a010200, "prefix_len": 24}},
         "action": "ingress.set_port", "params": {"port": 1}},
        {"cmd": "table_add", "table": "ingress.ipv4_lpm",
         "match": {"hdr.ipv4.dstAddr": {"value": 0x0b000000, "prefix_len": 8}},
         "action": "ingress.drop", "params": {}},
        # acl: after the swap the source is the original destination
        {"cmd": "table_add", "table": "ingress.acl", "priority": 10,
         "match": {"hdr.ethernet.srcAddr": {"value": "0x0000000000aa",
                                            "mask": "0xffffffffffff"}},
         "action": "ingress.set_smac", "params": {"smac": "0x0a0b0c0d0e0f"}},
        {"cmd": "table_add", "table": "ingress.acl", "priority": 20,
         "match": {"hdr.ethernet.srcAddr": {"value": "0x0000000000aa",
                                            "mask": "0xffffffffffff"},
                   "hdr.ethernet.etherType": {"low": 0x0800, "high": 0x0800}},
         "action": "ingress.drop", "params": {}},
        {"cmd": "table_add", "table": DMAC, "match": {DST: "0x0000000000cc"},
         "action": "ingress.clone_to", "params": {"session": 7}},
        {"cmd": "clone_session_add", "session": 7, "port": 0},
    ]
    path = tmp_path / "entries.json"
    path.write_text(json.dumps(entries))
    f_24 = frame(ip_dst="10.1.2.3")        # /24 wins -> port 1
    f_8 = frame(ip_dst="10.9.9.9")         # /8 -> port 0
    f_drop = frame(ip_dst="11.0.0.1")      # dropped by lpm
    f_acl = bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:00:01",
                        type=0x86dd) / Raw(b"x" * 40))  # set_smac (prio 10)
    f_acl_drop = frame(dst="00:00:00:00:00:aa")  # prio 20 drop wins
    f_clone = frame(dst="00:00:00:00:00:cc", ip_dst="12.0.0.1")
    (out0, out1), stats = run_pcap(
        binary, tmp_path, [[f_24, f_8, f_drop, f_acl, f_acl_drop, f_clone], []],
        "--entries", path)
    acl_out = bytes.fromhex("000000000001") + bytes.fromhex("0a0b0c0d0e0f") + f_acl[12:]
    assert out1 == [swapped(f_24), acl_out, swapped(f_clone)]
    # the clone is the packet as received (before the swap)
    assert out0 == [swapped(f_8), f_clone]
    assert stats["drops"]["pipeline"] == 2


def test_control_table_entries(runtime):
    rt = runtime
    rt.ok("table_add", table=DMAC, match={DST: "0x000000000001"},
          action="ingress.set_port", params={"port": 1})
    rt.ok("table_add", table=DMAC, match={DST: 2}, action="ingress.drop")
    assert rt.error("table_add", table=DMAC, match={DST: 2},
                    action="ingress.drop") == "EEXIST"
    rt.ok("table_modify", table=DMAC, match={DST: 2},
          action="ingress.set_port", params={"port": "0x1ff"})
    entries = {e["match"][DST]: e for e in rt.ok("table_read", table=DMAC)["entries"]}
    assert entries[1]["action"] == "ingress.set_port"
    assert entries[1]["params"] == {"port": 1}
    assert entries[2]["params"] == {"port": 511}
    assert entries[2]["counter"] == {"packets": 0, "bytes": 0}
    rt.ok("table_delete", table=DMAC, match={DST: 1})
    assert rt.error("table_delete", table=DMAC, match={DST: 1}) == "ENOENT"
    assert rt.error("table_modify", table=DMAC, match={DST: 1},
                    action="ingress.drop") == "ENOENT"
    assert [e["match"] for e in rt.ok("table_read", table=DMAC)["entries"]] == [{DST: 2}]
    rt.ok("table_clear", table=DMAC)
    assert rt.ok("table_read", table=DMAC)["entries"] == []


def test_control_defaults_and_const(runtime):
    rt = runtime
    assert rt.ok("table_read", table=DMAC)["default"] == {
        "action": "NoAction", "params": {}}
    rt.ok("table_set_default", table="ingress.ipv4_lpm",
          action="ingress.set_port", params={"port": 3})
    assert rt.ok("table_read", table="ingress.ipv4_lpm")["default"] == {
        "action": "ingress.set_port", "params": {"port": 3}}
    # @tableonly action as default, @defaultonly action in an entry
    assert rt.error("table_set_default", table="ingress.acl",
                    action="ingress.tag", params={"value": 1}) == "EINVAL"
    assert rt.error("table_add", table=DMAC, match={DST: 5},
                    action="NoAction") == "EINVAL"
    const = rt.ok("table_read", table="ingress.const_tbl")
    assert const["entries"][0]["match"] == {"hdr.ethernet.etherType": 0x88cc}
    assert rt.error("table_add", table="ingress.const_tbl",
                    match={"hdr.ethernet.etherType": 1},
                    action="ingress.drop") == "EPERM"
    assert rt.error("table_delete", table="ingress.const_tbl",
                    match={"hdr.ethernet.etherType": 0x88cc}) == "EPERM"
    assert rt.error("table_set_default", table="ingress.const_tbl",
                    action="ingress.drop") == "EPERM"


def test_control_validation_errors(runtime):
    rt = runtime
    lpm = "ingress.ipv4_lpm"
    acl = "ingress.acl"
    bad = [
        # value wider than the field / parameter
        dict(cmd="table_add", table=DMAC, match={DST: "0x1000000000000"},
             action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: 1},
             action="ingress.set_port", params={"port": 512}),
        # missing / unknown fields and params
        dict(cmd="table_add", table=DMAC, match={}, action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: 1, "nope": 1},
             action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: 1},
             action="ingress.set_port", params={}),
        dict(cmd="table_add", table=DMAC, match={DST: 1},
             action="ingress.set_port", params={"port": 1, "x": 2}),
        dict(cmd="table_add", table="nope", match={}, action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: 1}, action="nope"),
        dict(cmd="table_add", table=DMAC, match={DST: "12z"}, action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: -1}, action="ingress.drop"),
        # priorities: required for ternary/range/optional, refused otherwise
        dict(cmd="table_add", table=acl, match={}, action="ingress.drop"),
        dict(cmd="table_add", table=DMAC, match={DST: 1}, priority=3,
             action="ingress.drop"),
        # value bits outside the mask / beyond the prefix
        dict(cmd="table_add", table=acl, priority=1, action="ingress.drop",
             match={"hdr.ethernet.srcAddr": {"value": 3, "mask": 1}}),
        dict(cmd="table_add", table=lpm, action="ingress.drop",
             match={"hdr.ipv4.dstAddr": {"value": "0x0a000001", "prefix_len": 8}}),
        dict(cmd="table_add", table=lpm, action="ingress.drop",
             match={"hdr.ipv4.dstAddr": {"value": 0, "prefix_len": 33}}),
        dict(cmd="table_add", table=acl, priority=1, action="ingress.drop",
             match={"hdr.ethernet.etherType": {"low": 9, "high": 8}}),
        dict(cmd="table_add", table=acl, priority=1, action="ingress.drop",
             match={"meta.flag": 2}),
        dict(cmd="register_read", register="ingress.rx_count", index=16),
        dict(cmd="register_write", register="ingress.rx_count", index=0,
             value="0x100000000"),
        dict(cmd="counter_read", counter="ingress.port_counter", index=99),
        dict(cmd="clone_session_add", session=1, port=512),
        dict(cmd="clone_session_add", session=1 << 20, port=1),
        dict(cmd="no_such_command"),
        dict(nocmd=1),
    ]
    for c in bad:
        reply = rt.send_raw(json.dumps(c))
        assert reply["ok"] is False and reply["error"] == "EINVAL", (c, reply)
        assert reply["message"]
    assert rt.error("clone_session_delete", session=3) == "ENOENT"
    for text in ["{not json", "[1,2]", '"x"', "{}" + "}"]:
        assert rt.send_raw(text)["error"] == "EPARSE", text
    assert rt.cmd("ping") == {"ok": True}   # still serving


def test_control_table_full(runtime):
    rt = runtime
    acl = "ingress.acl"
    for i in range(64):   # size 64
        rt.ok("table_add", table=acl, priority=i + 1, action="ingress.drop",
              match={"hdr.ethernet.srcAddr": {"value": i, "mask": "0xffffffffffff"}})
    assert rt.error("table_add", table=acl, priority=99, action="ingress.drop",
                    match={"hdr.ethernet.srcAddr": {"value": 99, "mask": 255}}) == "ENOSPC"
    read = rt.ok("table_read", table=acl)["entries"]
    assert len(read) == 64 and read[0]["priority"] >= 1
    rt.ok("table_delete", table=acl, priority=1,
          match={"hdr.ethernet.srcAddr": {"value": 0, "mask": "0xffffffffffff"}})
    rt.ok("table_add", table=acl, priority=99, action="ingress.drop",
          match={"hdr.ethernet.srcAddr": {"value": 99, "mask": 255}})


def test_control_wide_values_and_lpm_ranking(runtime):
    rt = runtime
    wide = "ingress.wide_lpm"
    rt.ok("table_add", table=wide, action="ingress.set_port", params={"port": 1},
          match={"meta.wide": {"value": "0xffff000000000000", "prefix_len": 16}})
    rt.ok("table_add", table=wide, action="ingress.drop",
          match={"meta.wide": {"value": "18446744073709551615", "prefix_len": 64}})
    got = {e["match"]["meta.wide"]["prefix_len"]: e["match"]["meta.wide"]["value"]
           for e in rt.ok("table_read", table=wide)["entries"]}
    assert got == {16: "0xffff000000000000", 64: "0xffffffffffffffff"}
    rt.ok("table_add", table="ingress.acl", priority=5, action="ingress.tag",
          params={"value": "0xffffffffffffffffffff"}, match={})
    entry = rt.ok("table_read", table="ingress.acl")["entries"][0]
    assert entry["params"] == {"value": "0xffffffffffffffffffff"}
    assert entry["match"] == {}


def test_registers_counters_clone_sessions(runtime):
    rt = runtime
    reg = "ingress.rx_count"
    rt.ok("register_write", register=reg, index=3, value=77)
    assert rt.ok("register_read", register=reg, index=3)["value"] == 77
    values = rt.ok("register_read", register=reg)["values"]
    assert len(values) == 16 and values[3] == 77
    rt.ok("register_reset", register=reg)
    assert rt.ok("register_read", register=reg, index=3)["value"] == 0
    c = rt.ok("counter_read", counter="ingress.port_counter", index=0)
    assert (c["packets"], c["bytes"]) == (0, 0)
    assert len(rt.ok("counter_read", counter="ingress.port_counter")["values"]) == 16
    rt.ok("counter_reset", counter="ingress.port_counter")
    rt.ok("clone_session_add", session=5, port=1, truncate=64)
    rt.ok("clone_session_add", session=5, port=0)   # replaces
    rt.ok("clone_session_delete", session=5)
    stats = rt.ok("stats")
    assert [p["port"] for p in stats["ports"]] == [0, 1]
    assert set(stats["drops"]) == {"pipeline", "bad_port", "no_room",
                                   "clone_failed", "clone_no_session", "tx_full", "too_long",
                                   "mcast_no_group", "mcast_empty_group"}
    assert stats["lcores"][0]["queues"][0]["polls"] > 0


def test_counters_and_registers_see_traffic(binary, tmp_path):
    frames = [frame(dst="00:00:00:00:00:dd", payload=b"z" * n) for n in (10, 20, 30)]
    rx = write_pcap(tmp_path / "in.pcap", frames)
    rt = Runtime(binary, tmp_path, vdevs=[
        f"net_pcap0,rx_pcap={rx},tx_pcap={tmp_path / 'o0.pcap'}",
        f"net_pcap1,rx_pcap={write_pcap(tmp_path / 'e.pcap', [])},"
        f"tx_pcap={tmp_path / 'o1.pcap'}"],
        extra=["--entries", str(_write(tmp_path / "e.json", [
            {"cmd": "table_add", "table": DMAC, "match": {DST: "0xdd"},
             "action": "ingress.set_port", "params": {"port": 1}}]))])
    deadline = time.time() + 20
    while rt.ok("stats")["ports"][0]["rx"] < 3:
        assert time.time() < deadline
        time.sleep(0.05)
    total = sum(len(f) for f in frames)
    assert rt.ok("register_read", register="ingress.rx_count", index=0)["value"] == 3
    c = rt.ok("counter_read", counter="ingress.port_counter", index=0)
    assert (c["packets"], c["bytes"]) == (3, total)
    entry = rt.ok("table_read", table=DMAC)["entries"][0]
    assert entry["counter"] == {"packets": 3, "bytes": total}
    stats = rt.stop()
    assert stats["ports"][1]["tx"] == 3


def _write(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_entries_errors_are_fatal_and_clear(binary, tmp_path):
    def start(entries_text):
        p = tmp_path / "entries.json"
        p.write_text(entries_text)
        return subprocess.run([str(binary), *eal(), "--vdev", "net_ring0", "--",
                               "--entries", str(p), "--duration", "5"],
                              capture_output=True, text=True, timeout=60)
    good = {"cmd": "table_add", "table": DMAC, "match": {DST: 1},
            "action": "ingress.drop"}
    r = start(json.dumps([good, good]))
    assert r.returncode != 0
    assert "command 1: EEXIST" in r.stderr
    r = start("[{")
    assert r.returncode != 0 and "entries" in r.stderr
    r = start('{"cmd": "ping"}')
    assert r.returncode != 0 and "JSON array" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["--bogus"], "unknown option"),
    (["--burst", "0"], "--burst"),
    (["--burst", "x"], "--burst"),
    (["--governor", "turbo"], "unknown mode"),
    (["--power-thresholds", "idle_short_us=x"], "not a whole number"),
    (["--power-thresholds", "trend_limit=0"], "out of range 1..100000000"),
    (["--power-thresholds", "warp=1"], "unknown power threshold 'warp'"),
    (["--exit-on-idle"], "needs a value"),
    (["extra"], "unexpected argument"),
])
def test_bad_options(binary, args, message):
    r = subprocess.run([str(binary), *eal(), "--vdev", "net_ring0", "--", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert message in r.stderr


def test_no_ports_is_an_error(binary):
    r = subprocess.run([str(binary), *eal(), "--", "--duration", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "no ports" in r.stderr


def test_table_writes_under_traffic(binary, tmp_path):
    """A writer adds, modifies and deletes exact and ternary entries while
    --rx-replay traffic flows: no crash, no lost entries, traffic keeps
    flowing, and every frame sent is one of the replayed frames exactly as
    the program sends it (MAC swap)."""
    stable = [{DST: 0x100000 + i} for i in range(200)]
    replayed = [frame(dst=f"00:00:00:10:00:{i:02x}") for i in range(0, 200, 7)]
    replayed += [frame(dst=f"00:00:00:20:00:{i:02x}") for i in range(0, 50, 7)]
    # LLDP frames, dropped by the constant table before any written one:
    # most of the traffic, so that the capture stays small
    lldp = bytes(Ether(dst="01:80:c2:00:00:0e", type=0x88CC) / Raw(bytes(46)))
    replay = write_pcap(tmp_path / "replay.pcap", [g for f in replayed for g in [f] + [lldp] * 10])
    sent = tmp_path / "out1.pcap"
    rt = Runtime(binary, tmp_path, vdevs=["net_null0", f"net_pcap1,tx_pcap={sent}"],
                 extra=["--governor", "busy", "--rx-replay", f"0:{replay}"])
    for m in stable:
        rt.ok("table_add", table=DMAC, match=m, action="ingress.set_port",
              params={"port": 1})
    rounds = 40      # a count, not a time: a loaded machine does as many, slower
    for r in range(rounds):
        for i in range(50):
            rt.ok("table_add", table=DMAC, match={DST: 0x200000 + i},
                  action="ingress.drop")
            rt.ok("table_add", table="ingress.acl", priority=i + 1,
                  match={"hdr.ethernet.srcAddr": {"value": i, "mask": 255}},
                  action="ingress.drop")
        for i in range(50):
            rt.ok("table_modify", table=DMAC, match=stable[i],
                  action="ingress.set_port", params={"port": r % 2})
            rt.ok("table_delete", table=DMAC, match={DST: 0x200000 + i})
            rt.ok("table_delete", table="ingress.acl", priority=i + 1,
                  match={"hdr.ethernet.srcAddr": {"value": i, "mask": 255}})
    read = rt.ok("table_read", table=DMAC)["entries"]
    assert sorted(e["match"][DST] for e in read) == [m[DST] for m in stable]
    assert rt.ok("table_read", table="ingress.acl")["entries"] == []
    stats = rt.stop()
    assert stats["ports"][0]["rx"] > 100000

    # Port 1 gets the swapped frame of each destination whenever its entry
    # says port 1 (the last modify does, for all), of the 0x200000 ones
    # whenever their drop entry is absent (the default egress, in_port ^ 1),
    # of those the acl drops whenever its entries are absent; nothing else,
    # and no frame changed.
    frames = read_pcap_frames(sent)
    assert set(frames) == {swapped(f) for f in replayed}


def test_rx_replay_overwrites_every_received_frame(binary, tmp_path):
    """--rx-replay on a net_null port: each received mbuf carries the next
    frame of the pcap, in order and round and round, whatever its length."""
    frames = [frame(payload=bytes([i]) * n) for i, n in enumerate((10, 300, 1))]
    replayed = write_pcap(tmp_path / "replay.pcap", frames)
    out = tmp_path / "out1.pcap"
    stats = tmp_path / "stats.json"
    r = subprocess.run([str(binary), *eal(), "--vdev", "net_null0", "--vdev", f"net_pcap1,tx_pcap={out}",
                        "--", "--duration", "0.02", "--stats-json", str(stats),
                        "--rx-replay", f"0:{replayed}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"port 0 receives the 3 frames of {replayed}" in r.stdout
    sent = read_pcap_frames(out)
    assert len(sent) > 3 * 100
    assert json.loads(stats.read_text())["ports"][0]["rx"] == len(sent)
    assert sent == [swapped(frames[i % 3]) for i in range(len(sent))]


@pytest.mark.parametrize("spec,message", [
    ("x", "is not PORT:FILE.pcap"),
    ("0:", "is not PORT:FILE.pcap"),
    ("7:{pcap}", "no port 7"),
    ("0:{missing}", "--rx-replay: "),
    ("0:{empty}", "has no frames"),
    ("0:{jumbo}", "frame 2 has 3000 of 3000 bytes"),
])
def test_rx_replay_errors(binary, tmp_path, spec, message):
    pcaps = {"pcap": write_pcap(tmp_path / "one.pcap", [frame()]), "missing": tmp_path / "missing.pcap",
             "empty": write_pcap(tmp_path / "empty.pcap", []),
             "jumbo": write_pcap(tmp_path / "jumbo.pcap", [frame(), frame(payload=b"j" * (3000 - 42))])}
    r = subprocess.run([str(binary), *eal(), "--vdev", "net_null0", "--", "--duration", "1",
                        "--rx-replay", spec.format(**pcaps)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert message in r.stderr
