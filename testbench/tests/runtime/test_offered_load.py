"""The offered-load facility of the runtime: a paced --rx-replay (frames
arriving on a schedule into a modelled rx ring, lost when it overflows)
and --latency (per port, arrival to transmission). Through the real
executable (the hand-written l2fwd: port 0 -> port 1) on net_null ports,
read over its control socket; the histogram's percentiles against a known
distribution through its own C code."""
from __future__ import annotations

import ctypes
import random
import subprocess
import time

import pytest

from conftest import RUNTIME
from test_runtime import Runtime, eal, frame, write_pcap

pytestmark = pytest.mark.dpdk

PACED_VDEVS = ["net_null0,no-rx=1", "net_null1,no-rx=1"]


@pytest.fixture(scope="module")
def binary(handwritten):
    return handwritten


def paced(binary, tmp_path, options: str) -> Runtime:
    frames = [frame(payload=bytes([i]) * (20 + i)) for i in range(4)]
    pcap = write_pcap(tmp_path / "replay.pcap", frames)
    return Runtime(binary, tmp_path, vdevs=PACED_VDEVS,
                   extra=["--rx-replay", f"0:{pcap},{options}", "--latency", "--governor", "busy"])


def sample(rt: Runtime) -> tuple[float, dict]:
    """(the time half-way through the request, the `stats` reply)."""
    before = time.monotonic()
    stats = rt.ok("stats")
    return (before + time.monotonic()) / 2, stats


def replay(stats: dict) -> dict:
    return stats["ports"][0]["rx_replay"]


@pytest.mark.parametrize("pattern", ["constant", "poisson"])
def test_paced_source_offers_its_rate(binary, tmp_path, pattern):
    """Arrivals follow the schedule within 1% over 3 s, whether polled or
    not; every arrival is delivered, lost or waiting, and every delivered
    frame is forwarded and its latency taken."""
    rate = 200_000
    rt = paced(binary, tmp_path, f"rate={rate},pattern={pattern}")
    time.sleep(0.2)
    t0, first = sample(rt)
    time.sleep(3)
    t1, second = sample(rt)
    offered = (replay(second)["arrived"] - replay(first)["arrived"]) / (t1 - t0)
    assert offered == pytest.approx(rate, rel=0.01)
    final = rt.stop()
    r = replay(final)
    assert r["rate_pps"] == rate and r["pattern"] == pattern and r["ring"] == 1024
    assert r["arrived"] == r["delivered"] + r["ring_overflow"] + r["in_ring"]
    assert r["foreign"] == 0 and r["no_mbuf"] == 0
    out = final["ports"][1]
    assert out["tx"] == r["delivered"] == final["ports"][0]["rx"]
    assert out["latency"]["count"] == out["tx"]
    lat = out["latency"]
    assert 0 < lat["p50_us"] <= lat["p90_us"] <= lat["p99_us"] <= lat["p99_9_us"] <= lat["max_us"]


def test_a_stalled_lcore_loses_what_overflows_the_ring(binary, tmp_path):
    """While the lcore sleeps (the control socket's `stall`), frames keep
    arriving: the ring's 1024 wait, every later one is lost, and the
    oldest waited the whole stall."""
    rate, ring, stall_ms = 100_000, 1024, 200
    rt = paced(binary, tmp_path, f"rate={rate},ring={ring}")
    try:
        time.sleep(0.3)
        rt.ok("latency_reset")
        time.sleep(0.05)
        _, before = sample(rt)
        rt.ok("stall", ms=stall_ms)
        time.sleep(stall_ms / 1000 + 0.3)
        _, after = sample(rt)
    finally:
        rt.stop()
    lost = replay(after)["ring_overflow"] - replay(before)["ring_overflow"]
    arrivals_in_stall = rate * stall_ms // 1000
    # the sleep lasts at least stall_ms (allow 10 ms of overshoot), on a
    # schedule kept by DPDK's estimate of the TSC's rate (allow 1%)
    assert 0.99 * arrivals_in_stall - ring <= lost <= 1.01 * (arrivals_in_stall + rate // 100) - ring
    latency = after["ports"][1]["latency"]
    assert latency["max_us"] >= stall_ms * 1000 * 0.99
    assert latency["count"] > 0


def test_latency_and_stall_commands_check_their_input(binary, tmp_path):
    pcap = write_pcap(tmp_path / "replay.pcap", [frame()])
    rt = Runtime(binary, tmp_path, vdevs=PACED_VDEVS, extra=["--rx-replay", f"0:{pcap},rate=1000"])
    try:
        assert rt.error("latency_reset") == "EINVAL"
        for ms in (0, -1, 10_001, "5", None):
            assert rt.error("stall", ms=ms) == "EINVAL"
        stats = rt.ok("stats")
        assert "latency" not in stats["ports"][1]
        assert replay(stats)["pattern"] == "constant"
    finally:
        rt.stop()


def test_payload_stamp_survives_a_hop_through_a_second_process(binary, tmp_path):
    """Process A's paced source writes each frame's arrival time and number
    into its last 16 octets and A forwards it over net_memif; process B
    receives it in an mbuf of its own and sends it on: B's --latency=payload
    reads the stamp from the frame. While B stalls, A's memif tx fills and
    drops: B counts exactly those frames lost, from the numbers."""
    rate, stall_ms = 100_000, 100
    memif = tmp_path / "memif.sock"
    frames = [frame(payload=bytes([i]) * 64) for i in range(4)]
    pcap = write_pcap(tmp_path / "replay.pcap", frames)
    (tmp_path / "b").mkdir()
    b = Runtime(binary, tmp_path / "b", lcores="1",
                vdevs=[f"net_memif0,role=server,socket={memif},socket-abstract=no",
                       "net_null1,no-rx=1"],
                extra=["--latency=payload", "--governor", "busy"])
    (tmp_path / "a").mkdir()
    a = Runtime(binary, tmp_path / "a", lcores="0",
                vdevs=["net_null0,no-rx=1", f"net_memif1,role=client,socket={memif},socket-abstract=no"],
                extra=["--rx-replay", f"0:{pcap},rate={rate},stamp=payload", "--governor", "busy"])
    try:
        deadline = time.monotonic() + 10
        while b.ok("stats")["ports"][1]["tx"] < rate // 10:
            assert time.monotonic() < deadline, "no frames reached B"
            time.sleep(0.05)
        b.ok("stall", ms=stall_ms)
        time.sleep(stall_ms / 1000 + 0.3)
        a_stats = a.stop()
        time.sleep(0.2)        # what is still in the memif ring reaches B
        b_stats = b.stop()
    finally:
        for rt in (a, b):
            if rt.proc.poll() is None:
                rt.proc.kill()
    a_replay, a_out = replay(a_stats), a_stats["ports"][1]
    b_out = b_stats["ports"][1]
    (stream,) = b_out["latency"]["streams"]
    assert stream["stream"] == 0                      # port 0, queue 0 of A
    assert b_out["tx"] == stream["frames"] == b_out["latency"]["count"]
    assert a_out["tx_dropped"] > 0                    # the stall overflowed memif
    # every number A gave is seen by B, or lost in A's ring or memif tx,
    # or still in A's ring when it stopped
    assert stream["lost"] == a_replay["ring_overflow"] + a_out["tx_dropped"]
    assert stream["frames"] + stream["lost"] + a_replay["in_ring"] == a_replay["arrived"]
    assert stream["reordered"] == 0
    latency = b_out["latency"]
    assert latency["max_us"] >= 1000                  # frames that waited out B's stall in memif
    assert 0 < latency["p50_us"] < latency["max_us"]


@pytest.mark.parametrize("options,message", [
    ("rate=abc", "bad option"),
    ("rate=0", "bad option"),
    ("rate=-5", "bad option"),
    ("rate=1e12", "out of range"),
    ("pattern=bursty", "bad option"),
    ("ring=0", "bad option"),
    ("ring=x", "bad option"),
    ("speed=1", "bad option"),
    ("rate", "bad option"),
    ("stamp=tsc", "bad option"),
])
def test_paced_replay_option_errors(binary, tmp_path, options, message):
    pcap = write_pcap(tmp_path / "one.pcap", [frame()])
    r = subprocess.run([str(binary), *eal(), *sum((["--vdev", v] for v in PACED_VDEVS), []),
                        "--", "--duration", "1", "--rx-replay", f"0:{pcap},{options}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert message in r.stderr


# ---- the histogram's own code ---------------------------------------------

SHIM = r"""
#include "latency_histogram.h"
void record(struct t4p4s_latency_histogram *h, uint64_t v) { t4p4s_latency_record(h, v); }
unsigned bucket(uint64_t v) { return t4p4s_latency_bucket(v); }
"""


class Histogram(ctypes.Structure):
    _fields_ = [("max", ctypes.c_uint64),
                ("buckets", ctypes.c_uint64 * 976)]


@pytest.fixture(scope="module")
def histogram_library(tmp_path_factory):
    src = RUNTIME / "src"
    work = tmp_path_factory.mktemp("histogram")
    (work / "shim.c").write_text(SHIM)
    library = work / "libhistogram.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{src}", str(work / "shim.c"),
                    str(src / "latency_histogram.c"), "-lm", "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    lib.record.argtypes = [ctypes.POINTER(Histogram), ctypes.c_uint64]
    lib.bucket.argtypes = [ctypes.c_uint64]
    lib.bucket.restype = ctypes.c_uint
    lib.t4p4s_latency_quantile.argtypes = [ctypes.POINTER(Histogram), ctypes.c_double]
    lib.t4p4s_latency_quantile.restype = ctypes.c_double
    lib.t4p4s_latency_bucket_middle.argtypes = [ctypes.c_uint]
    lib.t4p4s_latency_bucket_middle.restype = ctypes.c_double
    lib.t4p4s_latency_count.argtypes = [ctypes.POINTER(Histogram)]
    lib.t4p4s_latency_count.restype = ctypes.c_uint64
    return lib


def test_histogram_percentiles_match_a_known_distribution(histogram_library):
    """Latencies in cycles as a loaded port sees them: a lognormal body
    around 2,000 cycles and a 0.5% tail of stalls around 100,000; each
    percentile within the buckets' 1/32 of the exact one."""
    rng = random.Random(7)
    values = [int(rng.lognormvariate(7.6, 0.5)) for _ in range(199_000)]
    values += [int(rng.uniform(50_000, 150_000)) for _ in range(1_000)]
    h = Histogram()
    for v in values:
        histogram_library.record(ctypes.byref(h), v)
    values.sort()
    assert histogram_library.t4p4s_latency_count(ctypes.byref(h)) == len(values)
    assert h.max == values[-1]
    for q in (0.5, 0.9, 0.99, 0.999):
        exact = values[max(0, -(-int(q * len(values) * 1000) // 1000) - 1)]
        got = histogram_library.t4p4s_latency_quantile(ctypes.byref(h), q)
        assert abs(got - exact) <= exact / 32 + 1, (q, got, exact)
    assert histogram_library.t4p4s_latency_quantile(ctypes.byref(Histogram()), 0.5) == 0


def test_histogram_buckets_are_ordered_and_tight(histogram_library):
    """Every value maps to a bucket whose middle is within 1/32 of it, and
    buckets grow with the values, over the whole 64-bit range."""
    rng = random.Random(3)
    values = sorted({rng.getrandbits(rng.randrange(1, 65)) for _ in range(20_000)} | set(range(64))
                    | {2**64 - 1})
    last = -1
    for v in values:
        b = histogram_library.bucket(v)
        assert b >= last and b < 976
        last = b
        middle = histogram_library.t4p4s_latency_bucket_middle(b)
        assert abs(middle - v) <= v / 32 + 0.5, (v, b, middle)
