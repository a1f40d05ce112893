"""Lcore load outside the control socket (issue 17 item 6): DPDK 22.11's
telemetry has no /eal/lcore/ commands, so the runtime registers
/t4p4s/lcores (per lcore: polls, empty polls, packets, work_ns of
total_ns, busy share in millionths) from the figures the control socket's
`power` gives. Read on the real executable (the hand-written l2fwd) after
it forwarded frames from a pcap: the telemetry socket's numbers lie between
two control socket readings taken around it, and gnbctl's reader
(controller/lcore_load.py) agrees with both."""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from controller import lcore_load
from t4p4s.stf.control import RuntimeProcess
from t4p4s.stf.control import test_eal_args as eal_args
from test_runtime import frame, write_pcap
from waiting import wait_for

pytestmark = pytest.mark.dpdk
N_FRAMES = 40
_runs = itertools.count()


def telemetry_socket(prefix: str) -> Path:
    """Where DPDK's EAL puts it (rte_eal_get_runtime_dir)."""
    if os.geteuid() == 0:
        base = Path("/var/run")
    else:
        base = Path(os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    return base / "dpdk" / prefix / "dpdk_telemetry.v2"


def telemetry(prefix: str, command: str):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(5)
        s.connect(str(telemetry_socket(prefix)))
        hello = json.loads(s.recv(1024))
        s.send(command.encode())
        return json.loads(s.recv(hello["max_output_len"]))[command]


@pytest.fixture
def forwarded(handwritten, tmp_path):
    """(RuntimeProcess, file prefix): l2fwd on two ports
    (net_pcap in, net_pcap out) that has forwarded N_FRAMES frames."""
    prefix = f"lcoretel{os.getpid()}_{next(_runs)}"
    rx = write_pcap(tmp_path / "in0.pcap", [frame(payload=bytes([i]) * 40)
                                            for i in range(N_FRAMES)])
    eal = eal_args(prefix) + [
        "--vdev", f"net_pcap0,rx_pcap={rx},tx_pcap={tmp_path / 'out0.pcap'}",
        "--vdev", f"net_pcap1,rx_pcap={write_pcap(tmp_path / 'in1.pcap', [])},"
                  f"tx_pcap={tmp_path / 'out1.pcap'}"]
    rt = RuntimeProcess(handwritten, eal, ["--governor", "nap"], tmp_path / "run")
    try:
        wait_for(lambda: sum(lc["packets"] for lc in rt.request({"cmd": "power"})["lcores"])
                 == N_FRAMES, what=f"{N_FRAMES} frames forwarded")
        yield rt, prefix
    finally:
        rt.stop()


def _control_lcores(rt) -> dict[int, dict]:
    return {lc["lcore"]: {**lc, "total_ns": lc["busy_ns"] + lc["paused_ns"] + lc["asleep_ns"]}
            for lc in rt.request({"cmd": "power"})["lcores"]}


def test_telemetry_lcores_gives_the_control_sockets_figures(forwarded):
    rt, prefix = forwarded
    assert "/t4p4s/lcores" in telemetry(prefix, "/")
    before = _control_lcores(rt)
    told = telemetry(prefix, "/t4p4s/lcores")
    after = _control_lcores(rt)

    assert set(told) == {f"lcore{lcore}" for lcore in before}
    for lcore, b in before.items():
        t, a = told[f"lcore{lcore}"], after[lcore]
        assert set(t) == {"polls", "empty_polls", "packets", "work_ns", "total_ns",
                          "busy_share_ppm"}
        for key in ("polls", "empty_polls", "work_ns", "total_ns"):
            assert b[key] <= t[key] <= a[key], (lcore, key, b[key], t[key], a[key])
        # the frames came once: the packet count stands still
        assert b["packets"] == t["packets"] == a["packets"]
        assert t["busy_share_ppm"] == pytest.approx(1e6 * t["work_ns"] / t["total_ns"], abs=1)
        assert t["polls"] > t["empty_polls"] >= 0
    assert sum(t["packets"] for t in told.values()) == N_FRAMES
    # some rounds received frames: work, and not all of the time (it naps since)
    assert 0 < sum(t["work_ns"] for t in told.values())
    assert all(t["busy_share_ppm"] < 1e6 for t in told.values())


def test_gnbctls_reader_agrees(forwarded):
    rt, _ = forwarded
    config = SimpleNamespace(name="l2fwd", control=rt.control_path)
    before = _control_lcores(rt)
    since_start = asyncio.run(lcore_load.read(config))
    windowed = asyncio.run(lcore_load.read(config, window_s=0.2))
    after = _control_lcores(rt)

    assert since_start["window_s"] is None and 0.2 <= windowed["window_s"] < 1.0
    for load in (since_start, windowed):
        assert [lc["lcore"] for lc in load["lcores"]] == sorted(before)
        for lc in load["lcores"]:
            b, a = before[lc["lcore"]], after[lc["lcore"]]
            for key in lcore_load.COUNTERS:
                assert b[key] <= lc[key] <= a[key], (key, b[key], lc[key], a[key])
            assert lc["mode"] == "nap"
    for lc in since_start["lcores"]:
        assert lc["busy_share"] == lc["work_ns"] / lc["total_ns"]
        assert lc["empty_share"] == lc["empty_polls"] / lc["polls"]
    # no frames in the window: nothing but empty polls, no work
    for lc in windowed["lcores"]:
        assert lc["busy_share"] == 0.0 and lc["empty_share"] == 1.0
    assert asyncio.run(lcore_load.read(SimpleNamespace(name="x", control=None))) is None
