"""--test-ports: ports the control socket feeds (port_inject) and drains
(port_drain), the STF runner's default ports (issue 18 item 1).

Frames of any length, 0 bytes up to one mbuf, reach the pipeline and come
back byte for byte and in order; what does not fit a ring is counted, never
lost silently; any malformed command gets an error reply and the runtime
stays up."""
from __future__ import annotations

import json
import os
import random
import subprocess
import time

import pytest

from t4p4s.stf.control import RuntimeProcess
# under another name: pytest would collect test_* as a test
from t4p4s.stf.control import test_eal_args as eal_args

pytestmark = pytest.mark.dpdk

MAX_FRAME = 2048          # one mbuf's data room (RTE_MBUF_DEFAULT_BUF_SIZE)
RING_CAPACITY = 1023      # T4P4S_TEST_PORT_RING_SIZE - 1


def start(executable, tmp_path, tag: str, *app_args, vdevs=()) -> RuntimeProcess:
    eal = eal_args(f"tp{os.getpid()}_{tag}")
    for vdev in vdevs:
        eal += ["--vdev", vdev]
    return RuntimeProcess(executable, eal, ["--governor", "nap", *app_args], tmp_path / tag)


def l2fwd_out(frame: bytes) -> bytes:
    """What l2fwd sends for `frame`: MACs swapped once the Ethernet header
    parses, a shorter frame as it came (PacketTooShort)."""
    return frame[6:12] + frame[0:6] + frame[12:] if len(frame) >= 14 else frame


def drain_until(rt: RuntimeProcess, port: int, count: int, timeout: float = 10.0) -> list[bytes]:
    frames: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(frames) < count and time.monotonic() < deadline:
        frames += [bytes.fromhex(f) for f in rt.request({"cmd": "port_drain", "port": port})["frames"]]
        time.sleep(0.01)
    return frames


def test_frames_of_any_length_go_through_unchanged_and_in_order(l2fwd, tmp_path):
    rng = random.Random(18)
    lengths = [0, 1, 5, 13, 14, 15, 60, 64, 1514, 2047, MAX_FRAME] + \
        [rng.randrange(0, MAX_FRAME + 1) for _ in range(40)]
    frames = [bytes(rng.randrange(256) for _ in range(n)) for n in lengths]
    rt = start(l2fwd, tmp_path, "lengths", "--test-ports", "2")
    try:
        for frame in frames:
            assert rt.request({"cmd": "port_inject", "port": 0, "frame": frame.hex()}) == {"ok": True}
        got = drain_until(rt, 1, len(frames))
        assert got == [l2fwd_out(f) for f in frames]
        assert rt.request({"cmd": "port_drain", "port": 1})["frames"] == []
        assert rt.request({"cmd": "port_drain", "port": 0})["frames"] == []
        ports = rt.request({"cmd": "stats"})["ports"]
        assert ports[0]["rx"] == ports[1]["tx"] == len(frames)
        assert ports[0]["test_port"]["injected"] == ports[1]["test_port"]["drained"] == len(frames)
    finally:
        assert rt.stop() == 0, rt.log_tail()


def test_ring_overflow_is_refused_or_dropped_and_counted(l2fwd, tmp_path):
    """While the lcore stalls, the rx ring fills: the frame after its
    capacity is refused (ENOSPC, counted). Undrained, port 1's out ring
    fills: what the pipeline sends beyond it is counted as tx_dropped."""
    rt = start(l2fwd, tmp_path, "overflow", "--test-ports", "2")
    try:
        def frame(i: int) -> bytes:
            return bytes.fromhex("020000000001020000000002") + i.to_bytes(4, "big")
        rt.request({"cmd": "stall", "ms": 3000})
        time.sleep(0.05)
        batch = [{"cmd": "port_inject", "port": 0, "frame": frame(i).hex()}
                 for i in range(RING_CAPACITY + 1)]
        replies = []
        for start_at in range(0, len(batch), 64):
            chunk = batch[start_at:start_at + 64]
            rt.control.send_lines(chunk)
            replies += [rt.control.read_reply() for _ in chunk]
        assert all(r == {"ok": True} for r in replies[:RING_CAPACITY])
        assert replies[-1]["ok"] is False and replies[-1]["error"] == "ENOSPC", replies[-1]
        assert "rx ring is full" in replies[-1]["message"]
        stats = rt.request({"cmd": "stats"})["ports"][0]["test_port"]
        assert (stats["injected"], stats["refused"]) == (RING_CAPACITY, 1)
        # after the stall: all of them into port 1's out ring, which they fill
        deadline = time.monotonic() + 10
        while rt.request({"cmd": "stats"})["ports"][0]["rx"] < RING_CAPACITY:
            assert time.monotonic() < deadline, "the lcore did not take the frames"
            time.sleep(0.05)
        extra = 5
        for i in range(RING_CAPACITY, RING_CAPACITY + extra):
            rt.request({"cmd": "port_inject", "port": 0, "frame": frame(i).hex()})
        deadline = time.monotonic() + 10
        while rt.request({"cmd": "stats"})["ports"][0]["rx"] < RING_CAPACITY + extra:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        port1 = rt.request({"cmd": "stats"})["ports"][1]
        assert (port1["tx"], port1["tx_dropped"]) == (RING_CAPACITY, extra), port1
        got = drain_until(rt, 1, RING_CAPACITY)
        assert got == [l2fwd_out(frame(i)) for i in range(RING_CAPACITY)]
    finally:
        assert rt.stop() == 0, rt.log_tail()


# (request, error code, words the message must have)
MALFORMED = [
    ({"cmd": "port_inject", "frame": "00"}, "EINVAL", 'missing field "port"'),
    ({"cmd": "port_inject", "port": 0}, "EINVAL", '"frame" must be a string'),
    ({"cmd": "port_inject", "port": 0, "frame": None}, "EINVAL", '"frame" must be a string'),
    ({"cmd": "port_inject", "port": 0, "frame": 1234}, "EINVAL", '"frame" must be a string'),
    ({"cmd": "port_inject", "port": 0, "frame": ["00"]}, "EINVAL", '"frame" must be a string'),
    ({"cmd": "port_inject", "port": 0, "frame": "abc"}, "EINVAL", "odd number (3)"),
    ({"cmd": "port_inject", "port": 0, "frame": "0g"}, "EINVAL", "not a hex digit at offset 1"),
    ({"cmd": "port_inject", "port": 0, "frame": "00 11"}, "EINVAL", "not a hex digit at offset 2"),
    ({"cmd": "port_inject", "port": 0, "frame": "0x00"}, "EINVAL", "not a hex digit at offset 1"),
    # jansson refuses a NUL in a string before the command sees it
    ({"cmd": "port_inject", "port": 0, "frame": "00\u0000a"}, "EPARSE", "is not allowed"),
    ({"cmd": "port_inject", "port": 0, "frame": "\u00e9\u00e9"}, "EINVAL", "not a hex digit at offset 0"),
    ({"cmd": "port_inject", "port": 0, "frame": "00" * (MAX_FRAME + 1)}, "EINVAL",
     f"has {MAX_FRAME + 1} bytes, more than the {MAX_FRAME}"),
    ({"cmd": "port_inject", "port": 0, "frame": "00" * (4 << 20)}, "EINVAL", "more than the"),
    ({"cmd": "port_inject", "port": 2, "frame": ""}, "EINVAL", "port 2 is not a test port"),
    ({"cmd": "port_inject", "port": 31, "frame": ""}, "EINVAL", "port 31 is not a test port"),
    ({"cmd": "port_inject", "port": 32, "frame": ""}, "EINVAL", "port 32 is not a test port"),
    ({"cmd": "port_inject", "port": 65535, "frame": ""}, "EINVAL", "not a test port"),
    ({"cmd": "port_inject", "port": 2 ** 32, "frame": ""}, "EINVAL", "does not fit in 32 bits"),
    ({"cmd": "port_inject", "port": -1, "frame": ""}, "EINVAL", "negative"),
    ({"cmd": "port_inject", "port": "one", "frame": ""}, "EINVAL", "expected an unsigned integer"),
    ({"cmd": "port_inject", "port": 1.5, "frame": ""}, "EINVAL", "expected an unsigned integer"),
    ({"cmd": "port_inject", "port": True, "frame": ""}, "EINVAL", "expected an unsigned integer"),
    ({"cmd": "port_drain"}, "EINVAL", 'missing field "port"'),
    ({"cmd": "port_drain", "port": 7}, "EINVAL", "port 7 is not a test port"),
    ({"cmd": "port_drain", "port": {}}, "EINVAL", "expected an unsigned integer"),
]


def test_malformed_commands_get_an_error_and_the_runtime_stays_up(l2fwd, tmp_path):
    rt = start(l2fwd, tmp_path, "malformed", "--test-ports", "2")
    try:
        for request, code, words in MALFORMED:
            reply = rt.control.raw(json.dumps(request))
            assert reply["ok"] is False and reply["error"] == code, (request, reply)
            assert words in reply["message"], (words, reply)
        # random mutations of a valid port_inject; each reply says whether
        # the request was valid, as a model of the rules computes it
        rng = random.Random(1818)
        ports = [0, 1, 2, 3, 31, 32, 255, 2 ** 16, 2 ** 32, -1, "0", "0x1", "x", None, 0.0, []]
        alphabet = "0123456789abcdefABCDEF g-x\u00ff\\\"\n"
        valid = 0
        for _ in range(600):
            request = {"cmd": rng.choice(["port_inject", "port_inject", "port_drain"])}
            if rng.random() < 0.9:
                request["port"] = rng.choice(ports)
            if rng.random() < 0.9:
                length = rng.choice([0, 1, 2, 3, 28, 2 * MAX_FRAME, 2 * MAX_FRAME + 2])
                request["frame"] = "".join(rng.choice(alphabet) for _ in range(length)) \
                    if rng.random() < 0.5 else os.urandom(length // 2).hex()
            reply = rt.control.raw(json.dumps(request))
            port = request.get("port")
            port_ok = port in (0, 1, "0", "0x1") and not isinstance(port, float)
            frame = request.get("frame")
            frame_ok = isinstance(frame, str) and len(frame) % 2 == 0 and \
                len(frame) <= 2 * MAX_FRAME and all(c in "0123456789abcdefABCDEF" for c in frame)
            expected_ok = port_ok and (request["cmd"] == "port_drain" or frame_ok)
            assert reply["ok"] is expected_ok, (request, reply)
            if not expected_ok:
                assert reply["error"] and reply["message"], reply
            valid += expected_ok
        assert valid > 50, "the mutations should leave some requests valid"
        # malformed JSON lines too
        for line in ['{"cmd": "port_inject", "port": 0, "frame": "00"', '{"cmd": "port_inject",'
                     ' "port": 0, "port": 1, "frame": ""}', "[]", '"port_drain"']:
            reply = rt.control.raw(line)
            assert reply["ok"] is False and reply["error"] == "EPARSE", (line, reply)
        assert rt.alive(), rt.log_tail()
        assert rt.request({"cmd": "ping"}) == {"ok": True}
        # and the ports still carry frames (the valid mutations' first)
        time.sleep(0.2)
        for port in (0, 1):
            rt.request({"cmd": "port_drain", "port": port})
        rt.request({"cmd": "port_inject", "port": 1, "frame": "aabbcc"})
        assert drain_until(rt, 0, 1) == [bytes.fromhex("aabbcc")]
    finally:
        assert rt.stop() == 0, rt.log_tail()


def test_test_ports_follow_the_vdev_ports(l2fwd, tmp_path):
    """--vdev net_ring0 is port 0, the test ports 1 and 2; a runtime without
    --test-ports says so to port_inject."""
    rt = start(l2fwd, tmp_path, "after_vdev", "--test-ports", "2", vdevs=["net_ring0"])
    try:
        reply = rt.control.raw(json.dumps({"cmd": "port_inject", "port": 0, "frame": ""}))
        assert reply["error"] == "EINVAL" and "port 0 is not a test port" in reply["message"]
        # l2fwd sends port 2's frames to port 3, which does not exist
        rt.request({"cmd": "port_inject", "port": 2, "frame": "00" * 20})
        time.sleep(0.2)
        assert [p["port"] for p in rt.request({"cmd": "stats"})["ports"]] == [0, 1, 2]
        assert rt.request({"cmd": "stats"})["drops"]["bad_port"] == 1
    finally:
        assert rt.stop() == 0, rt.log_tail()
    rt = start(l2fwd, tmp_path, "without", vdevs=["net_ring0"])
    try:
        reply = rt.control.raw(json.dumps({"cmd": "port_drain", "port": 0}))
        assert reply["error"] == "EINVAL" and "without --test-ports" in reply["message"], reply
    finally:
        assert rt.stop() == 0, rt.log_tail()


@pytest.mark.parametrize("value,words", [("0", "--test-ports"), ("33", "--test-ports"),
                                         ("two", "--test-ports")])
def test_bad_test_ports_values_are_refused(l2fwd, value, words):
    r = subprocess.run([str(l2fwd), *eal_args(f"tp{os.getpid()}_bad"), "--", "--test-ports", value],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"error: {words}" in r.stderr, r.stderr
