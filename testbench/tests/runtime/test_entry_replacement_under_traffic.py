"""Exact-table entries replaced while traffic flows: every forwarded frame
must carry the bytes of an entry that the table really held (the old or the
new one), never those of freed or reused memory.

The runtime never changes an entry in place: table_modify publishes a new
entry and frees the old one only after an RCU grace period, because an
lcore may have found the old one (the burst's lookahead) and not yet
applied it. Freeing it at once leaves such a packet reading memory that
rte_free zeroes and the next entry may reuse; this test sees that as bytes
no generation of the entry ever had (with table_modify freeing at once,
every run sends hundreds of frames stamped with zeroes or with another
key's newer entry).

The program (testbench/p4/runtime/stamp_exact.p4) stamps both MAC addresses
and f2 from the entry's action data. Each key's generation g is written to
all three fields, each in its own form, so a frame names the generation it
got and whether its 16 bytes all came from that generation. Traffic is the
runtime's --rx-replay on a net_null port (every frame hits one of the keys,
as fast as the lcore goes); frames leave through net_pcap into a file. The
table starts empty and is cleared after the writes (a miss drops), so the
file holds the frames forwarded while entries were being replaced."""
from __future__ import annotations

import functools
import itertools
import os
from collections import Counter
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from pcap_frames import read_pcap_frames
from t4p4s.stf.control import RuntimeProcess
from t4p4s.stf.control import test_eal_args as eal_args  # not collected as a test

pytestmark = pytest.mark.dpdk

STAMP_EXACT = Path(__file__).resolve().parents[2] / "p4" / "runtime" / "stamp_exact.p4"
TABLE = "ingress.stamps"
KEYS = range(1, 9)              # few keys: the lcore holds each one's current entry most of the time
GENERATIONS = 2000              # per key: about a quarter of a second of writes on an idle machine
COMMANDS_PER_SEND = 256         # pipelined on the control socket: replies are read after each send
_runs = itertools.count()


def stamp(key: int, generation: int) -> dict[str, int]:
    """Generation `generation` of `key`'s entry: three fields that all encode
    it differently (none is ever zero, which is what rte_free leaves)."""
    return {"dmac": (0x02 << 40) | (key << 32) | generation,
            "smac": (0x06 << 40) | (key << 32) | (generation ^ 0xFFFFFFFF),
            "f2": (generation * 2654435761 + key) & 0xFFFFFFFF}


@functools.cache
def data_frame(key: int) -> bytes:
    """What the replay sends: f1 = key; the stamped fields hold other bytes."""
    header = key.to_bytes(4, "big") + bytes.fromhex("eeeeeeee") + bytes(6)
    return bytes(Ether(dst="0a:00:00:00:00:01", src="0a:00:00:00:00:02", type=0x88B5)
                 / Raw(header + b"payload-of-the-replay"))


@functools.cache
def stamped_frame(key: int, generation: int) -> bytes:
    """The frame the program sends for `key` when it applied that generation."""
    fields = stamp(key, generation)
    original = data_frame(key)
    return (fields["dmac"].to_bytes(6, "big") + fields["smac"].to_bytes(6, "big")
            + original[12:18] + fields["f2"].to_bytes(4, "big") + original[22:])


def entry_command(cmd: str, key: int, generation: int) -> dict:
    return {"cmd": cmd, "table": TABLE, "match": {"hdr.data.f1": key},
            "action": "ingress.stamp", "params": stamp(key, generation)}


def request_pipelined(runtime: RuntimeProcess, requests: list[dict]):
    """Sends the requests in one go and checks every reply: one round trip
    per COMMANDS_PER_SEND commands instead of per command, so the writer
    replaces entries as fast as the control thread applies them."""
    control = runtime.control
    for replies_pending in (requests[i:i + COMMANDS_PER_SEND]
                            for i in range(0, len(requests), COMMANDS_PER_SEND)):
        control.send_lines(replies_pending)
        for request in replies_pending:
            reply = control.read_reply()
            assert reply == {"ok": True}, (request, reply)


def replace_entries(runtime: RuntimeProcess):
    """Modifies every key's entry to generations 1 .. GENERATIONS in turn
    (a count, not a time: a loaded machine writes as many, only slower)."""
    per_send = COMMANDS_PER_SEND // len(KEYS)
    for first in range(1, GENERATIONS + 1, per_send):
        request_pipelined(runtime, [entry_command("table_modify", key, generation)
                                    for generation in range(first, min(first + per_send, GENERATIONS + 1))
                                    for key in KEYS])


def wrong_frames(frames: list[bytes]) -> list[str]:
    """Each frame that is not exactly some generation's stamp of its key, or
    that shows an older generation than a frame of the same key before it
    (one lcore, one tx queue: once it found an entry it never finds an older
    one)."""
    problems = []
    # a second of traffic is millions of frames but only thousands of distinct ones
    for frame, count in Counter(frames).items():
        key = int.from_bytes(frame[14:18], "big")
        generation = int.from_bytes(frame[2:6], "big")
        if key not in KEYS or generation > GENERATIONS:
            problems.append(f"{count} frame(s) of key {key}, generation {generation}: "
                            f"no such entry: {frame[:22].hex()}")
        elif frame != stamped_frame(key, generation):
            problems.append(f"{count} frame(s) of key {key} with bytes of no entry (the dmac says "
                            f"generation {generation})\n"
                            f"    got      {frame.hex()}\n"
                            f"    expected {stamped_frame(key, generation).hex()}")
    if problems:
        return problems
    latest_seen = dict.fromkeys(KEYS, 0)
    for index, frame in enumerate(frames):
        key, generation = frame[17], int.from_bytes(frame[2:6], "big")
        if generation < latest_seen[key]:
            problems.append(f"frame {index}: key {key}: generation {generation} "
                            f"after {latest_seen[key]}")
        latest_seen[key] = max(generation, latest_seen[key])
    return problems


def test_frames_carry_old_or_new_entry_while_entries_are_replaced(compiled, cache_root):
    build = compiled(STAMP_EXACT)
    run_dir = cache_root / "runs" / f"replace-{os.getpid()}-{next(_runs)}"
    run_dir.mkdir(parents=True, exist_ok=True)
    replay = run_dir / "replay.pcap"
    wrpcap(str(replay), [Ether(data_frame(key)) for key in KEYS])
    sent = run_dir / "out1.pcap"
    sent.unlink(missing_ok=True)
    eal = eal_args(run_dir.name) + ["--vdev", "net_null0", "--vdev", f"net_pcap1,tx_pcap={sent}"]
    runtime = RuntimeProcess(build.executable_path, eal,
                             ["--governor", "busy", "--rx-replay", f"0:{replay}"], run_dir)
    try:
        request_pipelined(runtime, [entry_command("table_add", key, 0) for key in KEYS])
        replace_entries(runtime)
        runtime.request({"cmd": "table_clear", "table": TABLE})
        stats = runtime.request({"cmd": "stats"})
    finally:
        exit_status = runtime.stop()
    assert exit_status == 0, runtime.log_tail()

    frames = read_pcap_frames(sent)
    sent.unlink()       # about 50 MB
    problems = wrong_frames(frames)
    assert not problems, (f"of {len(frames)} frames forwarded while {GENERATIONS} generations of "
                          f"{len(KEYS)} entries were written:\n" + "\n".join(problems[:10]))
    # the writes and the traffic overlapped: frames of many generations went out
    generations_seen = {int.from_bytes(frame[2:6], "big") for frame in frames}
    assert len(generations_seen) > 100, (len(generations_seen), stats["ports"])
