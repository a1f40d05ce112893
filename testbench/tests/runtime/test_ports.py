"""Ports as the user gives them: every --vdev must become the port its
position names, and no port may be handed a frame it cannot carry.

Regressions (issue 12): a vdev that failed to probe was skipped, the ports
after it renumbered and the run went on ("running ... 1 port(s)", exit 0),
so P4 port numbers named the wrong interfaces; net_af_packet freed a frame
longer than its ring's slots itself and reported it unsent, so the caller
freed it again."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap, wrpcap

# under another name: pytest would collect test_* as a test
from t4p4s.stf.control import test_eal_args as eal_args

pytestmark = pytest.mark.dpdk


def file_prefix(tag: str) -> str:
    return f"ports{os.getpid()}_{tag}"


def eal(tag: str) -> list[str]:
    return eal_args(file_prefix(tag))


@pytest.fixture
def veth():
    """A veth pair of our own (both ends up); yields the end the runtime uses."""
    name = f"tp{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"],
                   check=True, timeout=10)
    for end in (name, name + "p"):
        subprocess.run(["ip", "link", "set", end, "up"], check=True, timeout=10)
    yield name
    subprocess.run(["ip", "link", "del", name], capture_output=True, timeout=10)


def run(executable, vdevs: list[str], *app_args, tag: str = "t", timeout: float = 60):
    args = [str(executable), *eal(tag)]
    for vdev in vdevs:
        args += ["--vdev", vdev]
    return subprocess.run(args + ["--", *app_args], capture_output=True, text=True,
                          timeout=timeout)


def test_a_vdev_that_does_not_probe_stops_the_run(l2fwd, tmp_path):
    """The missing interface is the second of three vdevs: nothing runs,
    and the error names it (not "no ports", not a renumbered run)."""
    missing = "net_af_packet1,iface=tp_no_such_if"
    r = run(l2fwd, ["net_ring0", missing, "net_ring2"], "--duration", "1", tag="probe")
    assert r.returncode != 0
    assert f"error: --vdev {missing} did not probe" in r.stderr, r.stderr
    assert "running" not in r.stdout
    # the only vdev missing: the same message, not "give at least one --vdev"
    r = run(l2fwd, [missing], "--duration", "1", tag="probe_only")
    assert r.returncode != 0
    assert f"error: --vdev {missing} did not probe" in r.stderr and "no ports" not in r.stderr


def test_af_packet_slot_larger_than_an_mbuf_is_refused(l2fwd, veth):
    r = run(l2fwd, [f"net_af_packet0,iface={veth},framesz=4096", "net_ring1"],
            "--duration", "1", tag="framesz")
    assert r.returncode != 0
    assert "framesz=4096" in r.stderr and "give framesz=" in r.stderr, r.stderr


def test_af_packet_interface_mtu_beyond_its_slots_is_refused(l2fwd, veth):
    """The kernel would cut longer frames to the slot without a sign."""
    subprocess.run(["ip", "link", "set", veth, "mtu", "9000"], check=True, timeout=10)
    r = run(l2fwd, [f"net_af_packet0,iface={veth}", "net_ring1"], "--duration", "1", tag="mtu")
    assert r.returncode != 0
    assert f"on {veth}): MTU 9000" in r.stderr and "lower the MTU to" in r.stderr, r.stderr


def test_frames_too_long_for_af_packet_are_dropped_and_counted(l2fwd, veth, tmp_path):
    """Chained frames from net_pcap (port 0) forwarded to net_af_packet
    (port 1): those longer than its 2,016-byte slots are dropped as
    too_long, the rest leave the veth byte for byte."""
    frames = [bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
                    / Raw(bytes([i]) * (length - 14)))
              for i, length in enumerate([100, 2016, 2017, 3000, 1500, 9000, 64])]
    rx = tmp_path / "in.pcap"
    wrpcap(str(rx), [Ether(frame) for frame in frames])
    stats = tmp_path / "stats.json"
    capture = tmp_path / "out.pcap"
    # the peer end sees what the runtime sends on port 1
    tcpdump = subprocess.Popen(["tcpdump", "-n", "-i", veth + "p", "-Q", "in", "-w", str(capture),
                                "--immediate-mode", "-Z", "root"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in tcpdump.stderr.readline()
        # the largest MTU whose frames fit net_af_packet's 1,982-byte rx slots
        subprocess.run(["ip", "link", "set", veth, "mtu", "1968"], check=True, timeout=10)
        r = run(l2fwd, [f"net_pcap0,rx_pcap={rx}", f"net_af_packet1,iface={veth}"],
                "--exit-on-idle", "500", "--stats-json", str(stats), tag="toolong")
    finally:
        tcpdump.terminate()
        tcpdump.wait(timeout=10)
    assert r.returncode == 0, r.stderr
    drops = json.loads(stats.read_text())["drops"]
    assert drops["too_long"] == sum(len(frame) > 2016 for frame in frames) == 3, drops
    # l2fwd swaps the MACs; the kernel drops frames over the MTU itself
    # (the 2,016-byte one never arrives); the veth's own IPv6 chatter is not ours
    sent = [bytes(packet) for packet in rdpcap(str(capture)) if packet.type == 0x9000]
    assert sent == [frame[6:12] + frame[0:6] + frame[12:] for frame in frames
                    if len(frame) <= 1968 + 14]
