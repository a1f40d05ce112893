"""The SmartNIC build (p4src/nic.p4) on the hybrid topology's
ports: 0 N3, 1 radio side, 2 BaaS, then per host i the port 3 + 2i that
carries offloaded G-PDUs to it and the port 4 + 2i on which its radio
frames come back. The tests play the hosts (frames from
testbench/gnb/frames.py); the expected ports come from the v1model hashes
computed independently (reference_hashes.py).

Here: the expected hash buckets, reading the NIC's state back, and `LiveNic`
(the NIC on veth pairs, for tests that change tables under traffic).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from reference_hashes import crc16, crc32
from scapy.layers.l2 import Ether

from t4p4s.stf.control import RuntimeProcess, parse_json_int, test_eal_args
from t4p4s.stf.veth import PortCapture, VethPorts
from testbench.gnb.frames import DROP_REASONS, DlDrb
from testbench.gnb.nic_entries import HOSTS, OFFLOAD_BUCKETS, PORTS, VF_BUCKETS, to_host_port
from testbench.gnb.layers import BearerShim, Pdcp12, Pdcp18, RlcAmData12, RlcAmData18

DRB_COUNTERS = ("dl_drb_counter", "ul_drb_counter", "host_return_counter", "baas_retx_counter")
SN_REGISTERS = ("pdcp_tx_sn", "rlc_tx_sn", "rlc_poll_config", "rlc_poll_state")


def teid_bytes(teid: int) -> bytes:
    return teid.to_bytes(4, "big")


def offload_bucket_of(teid: int) -> int:
    """The top 10 bits of the TEID's crc32."""
    return crc32(teid_bytes(teid)) >> (32 - OFFLOAD_BUCKETS.bit_length() + 1)


def vf_bucket_of(teid: int) -> int:
    """The top 6 bits of the TEID's crc16."""
    return crc16(teid_bytes(teid)) >> (16 - VF_BUCKETS.bit_length() + 1)


def vf_port_round_robin(teid: int, hosts=range(HOSTS)) -> int:
    hosts = list(hosts)
    return to_host_port(hosts[vf_bucket_of(teid) % len(hosts)])


# ---- reading the NIC's state back ----

def _cell(run, request: dict) -> dict:
    reply = run.request(request)
    assert reply.get("ok"), reply
    return reply


def register_cell(run, name: str, index: int) -> int:
    return parse_json_int(_cell(run, {"cmd": "register_read", "register": name,
                                      "index": index})["value"])


def frames_of(frames: list[bytes], drb: DlDrb) -> list[bytes]:
    """The radio frames of one DRB (by UE id and LCID)."""
    return [frame for frame in frames
            if Ether(frame)[BearerShim].ue_id == drb.ue_id
            and Ether(frame)[BearerShim].lcid == drb.lcid]


def sent_sns(frames: list[bytes], drb: DlDrb) -> list[tuple[int, int | None]]:
    """(PDCP SN, RLC SN or None) of the DRB's radio frames, in order."""
    sns = []
    for frame in map(Ether, frames_of(frames, drb)):
        pdcp = frame[Pdcp18 if drb.pdcp_sn18 else Pdcp12].sn
        rlc = frame[RlcAmData18 if drb.rlc_sn18 else RlcAmData12].sn if drb.rlc_am else None
        sns.append((pdcp, rlc))
    return sns


def sent_polls(frames: list[bytes], drb: DlDrb) -> list[int]:
    """The RLC poll bit of each of the (RLC AM) DRB's radio frames, in order."""
    assert drb.rlc_am
    return [frame[RlcAmData18 if drb.rlc_sn18 else RlcAmData12].poll
            for frame in map(Ether, frames_of(frames, drb))]


def read_state(run, drb_indices) -> tuple[dict, dict, dict]:
    """(drops: reason -> {packets, bytes} for the reasons that dropped,
    counters: name -> index -> {packets, bytes},
    registers name -> index -> value) of these DRB cells."""
    values = _cell(run, {"cmd": "counter_read", "counter": "drop_counter"})["values"]
    assert all(value["packets"] == 0 for value in values[len(DROP_REASONS):]), \
        f"drops under no known reason: {values}"
    drops = {reason: {"packets": values[index]["packets"], "bytes": values[index]["bytes"]}
             for index, reason in enumerate(DROP_REASONS) if values[index]["packets"]}
    counters = {name: {index: {key: cell[key] for key in ("packets", "bytes")}
                       for index in drb_indices
                       for cell in [_cell(run, {"cmd": "counter_read", "counter": name,
                                                "index": index})]}
                for name in DRB_COUNTERS}
    registers = {name: {index: register_cell(run, name, index) for index in drb_indices}
                 for name in SN_REGISTERS}
    return drops, counters, registers



class LiveNic:
    """The NIC executable on one veth pair per port (net_af_packet), with
    its control socket: the test sends frames, reads what each port sent,
    and writes tables between the two."""

    def __init__(self, build, run_dir: Path, entries):
        self.veths = VethPorts(PORTS)
        self.capture = None
        self.runtime = None
        try:
            self.capture = PortCapture(self.veths.pairs)
            eal = test_eal_args(run_dir.name)
            for port, pair in enumerate(self.veths.pairs):
                eal += ["--vdev", f"net_af_packet{port},iface={pair.dp}"]
            (run_dir / "entries.json").write_text(json.dumps(list(entries), indent=1))
            self.runtime = RuntimeProcess(build.executable_path, eal,
                                          ["--governor", "nap", "--entries",
                                           str(run_dir / "entries.json")], run_dir)
        except BaseException:
            self.close()
            raise
        self.taken = [0] * PORTS      # frames of each port already handed to the test

    def request(self, request: dict) -> dict:
        reply = self.runtime.request(request)
        assert reply.get("ok"), (request, reply)
        return reply

    def send(self, port: int, frames) -> None:
        for frame in frames:
            self.capture.send(port, frame)

    def receive(self, port: int, count: int, timeout: float = 10.0) -> list[bytes]:
        """The next `count` frames the NIC sent on `port`; fails on fewer."""
        deadline = time.monotonic() + timeout
        while True:
            frames = self.capture.snapshot()[port][self.taken[port]:]
            if len(frames) >= count:
                self.taken[port] += count
                return frames[:count]
            assert self.runtime.alive(), self.runtime.log_tail()
            assert time.monotonic() < deadline, \
                f"port {port}: {len(frames)} of {count} frames:\n{self.runtime.log_tail()}"
            time.sleep(0.01)

    def unexpected(self, settle: float = 0.2) -> list[list[bytes]]:
        """After `settle` seconds of quiet: the frames no receive() took."""
        time.sleep(settle)
        return [frames[taken:] for frames, taken in zip(self.capture.snapshot(), self.taken)]

    def close(self) -> int | None:
        status = self.runtime.stop() if self.runtime else None
        if self.capture:
            self.capture.close()
        self.veths.close()
        return status
