"""What a fuzz target starts from: the control commands (--entries) that
install the test suites' DRBs, uplink bearers, the BaaS clone session and
some RLC poll configuration (and, for the NIC, its offloading), and a seed
corpus of the very frames
those tests send, each with the port it arrives on.

An input of the harness is one rx burst (t4p4s/runtime/fuzz/frame_fuzzer.c):
[port] then per frame [segments][length, 2 bytes][frame]. The seeds are
each frame alone in one segment, and bursts of up to BURST frames of one
port; libFuzzer mutates ports, segmentation and lengths with the frames."""
from __future__ import annotations

import hashlib
import json
import logging
import random
import sys
from pathlib import Path

# scapy warns of every Ether() without a destination the tests build
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

TESTS = Path(__file__).resolve().parents[1] / "tests"
for _folder in (TESTS, TESTS / "gnb", TESTS / "nic"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import test_baas_retx  # noqa: E402  (the gNB tests' frames, reused as seeds)
import test_downlink  # noqa: E402
import test_drops  # noqa: E402
import test_host_return  # noqa: E402
import test_long_frames  # noqa: E402
import test_uplink  # noqa: E402

from testbench.gnb.frames import (BAAS_PORT, N3_PORT, POLL_INFINITY, RADIO_PORT,  # noqa: E402
                                  baas_clone_session, poll_cell, poll_config_write,
                                  register_write)
from testbench.gnb.nic_entries import (OFFLOAD_BUCKETS, PORTS, drb_entries,  # noqa: E402
                                       host_return_ports, offload_buckets, return_port,
                                       vf_buckets_round_robin)

HOST_PORTS = 3
BURST = 8


def _unique(commands: list[dict]) -> list[dict]:
    """The first command for each table key (clone session, register cell):
    the test modules reuse some keys with other parameters."""
    seen, unique = set(), []
    for command in commands:
        key = json.dumps([command["cmd"], command.get("table"), command.get("match"),
                          command.get("session"), command.get("register"),
                          command.get("index")], sort_keys=True)
        if key not in seen:
            seen.add(key)
            unique.append(command)
    return unique


def poll_registers() -> list[dict]:
    """RLC poll thresholds that fire within a seed burst (every 2nd PDU,
    every 1,000 bytes), both triggers off, and counts a PDU from
    saturation; the other AM DRBs keep the defaults."""
    am = [drb.drb_index for drb in test_downlink.DRBS if drb.rlc_am]
    return [poll_config_write(am[0], poll_pdu=2),
            poll_config_write(am[1], poll_byte=1000),
            poll_config_write(am[2], POLL_INFINITY, POLL_INFINITY),
            register_write("rlc_poll_state", am[2], poll_cell(POLL_INFINITY - 1,
                                                              POLL_INFINITY - 100))]


def host_entries() -> list[dict]:
    """Every DRB and bearer of the gNB tests, the BaaS clone session and
    some RLC poll configuration."""
    commands = [drb.table_entry() for drb in test_downlink.DRBS]
    commands += [bearer.table_entry() for bearer in test_uplink.BEARERS]
    commands += test_drops.ENTRIES + test_long_frames.ENTRIES + test_baas_retx.ENTRIES
    commands.append(baas_clone_session())
    commands += poll_registers()
    return _unique(commands)


def nic_entries() -> list[dict]:
    """The host entries, the NIC tests' DRBs (with their uplink bearers),
    half of the offload buckets to the hosts, every VF bucket to a host and
    both hosts' return ports."""
    commands = host_entries()
    commands += drb_entries(test_host_return.DRBS)
    commands += offload_buckets(range(0, OFFLOAD_BUCKETS, 2))
    commands += vf_buckets_round_robin() + host_return_ports()
    return _unique(commands)


def _host_frames() -> list[tuple[int, bytes]]:
    frames = []
    for index, drb in enumerate(test_downlink.DRBS * 3):
        frames.append((N3_PORT, test_downlink.packet_variants(drb, index).n3_frame()))
    frames += [(N3_PORT, packet.n3_frame()) for packet in test_downlink.padded_packets()]
    frames += [(RADIO_PORT, packet.radio_frame()) for packet in test_uplink.uplink_packets()]
    for bearer in test_uplink.BEARERS:
        frames += [(RADIO_PORT, status) for status in test_uplink.status_pdus(bearer)]
    for reason_frames in test_drops.bad_frames().values():
        frames += reason_frames
    long_drbs = (test_long_frames.AM12, test_long_frames.AM18, test_long_frames.UM)
    for drb, length in zip(long_drbs, (3000, 4000, 9000)):
        frames.append((N3_PORT, test_long_frames.downlink_of_length(drb, 1, length).n3_frame()))
    frames.append((BAAS_PORT, frames[0][1]))
    # retransmissions from the BaaS, good and bad
    frames += [(BAAS_PORT, test_baas_retx.retransmission(drb, i, 80, i, i, i % 2))
               for i, drb in enumerate(test_baas_retx.DRBS) if drb.rlc_am]
    for reason_frames in test_baas_retx.bad_retransmissions().values():
        frames += [(BAAS_PORT, frame) for frame in reason_frames]
    return frames


def _nic_frames() -> list[tuple[int, bytes]]:
    frames = _host_frames()
    rng = random.Random(12)
    for index, drb in enumerate(test_host_return.DRBS):
        packet = test_downlink.packet_variants(drb, index)
        frames.append((N3_PORT, packet.n3_frame()))
        home = return_port(test_host_return.host_of(drb))
        frames.append((home, test_host_return.host_built(packet, rng)))
    drbs = test_host_return.DRBS
    for reason_frames in test_host_return.bad_frames(drbs[1], drbs[4]).values():
        frames += reason_frames
    return frames


TARGETS = {"host": (HOST_PORTS, host_entries, _host_frames),
           "nic": (PORTS, nic_entries, _nic_frames)}


def write_entries(build: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(TARGETS[build][1](), separators=(",", ":")))
    return path


def harness_input(port: int, frames: list[bytes], segments: int = 1) -> bytes:
    """The bytes the harness reads as a burst of `frames` arriving on `port`."""
    return bytes([port]) + b"".join(bytes([segments - 1]) + len(frame).to_bytes(2, "big") + frame
                                    for frame in frames)


def write_seeds(build: str, directory: Path) -> int:
    """Writes the seed corpus (one file per input, named by its hash, as
    libFuzzer names corpus files); returns how many distinct inputs."""
    directory.mkdir(parents=True, exist_ok=True)
    n_ports = TARGETS[build][0]
    by_port: dict[int, list[bytes]] = {}
    inputs = []
    for port, frame in TARGETS[build][2]():
        assert port < n_ports, f"seed frame on port {port}; {build} has {n_ports}"
        inputs.append(harness_input(port, [frame]))
        by_port.setdefault(port, []).append(frame)
    for port, frames in by_port.items():
        inputs += [harness_input(port, frames[i:i + BURST]) for i in range(0, len(frames), BURST)]
    for data in inputs:
        (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
    return len(set(inputs))


def ports(build: str) -> int:
    return TARGETS[build][0]
