"""The SmartNIC build (p4src/nic.p4) on the hybrid topology's
ports: 0 N3, 1 radio side, 2 BaaS, then per host i the port 3 + 2i that
carries offloaded G-PDUs to it and the port 4 + 2i on which its radio
frames come back. The tests play the hosts (frames from
testbench/gnb/frames.py); the expected ports come from the v1model hashes
computed independently (reference_hashes.py).

Here: the port layout, the control commands that configure offloading,
the expected hash buckets, reading the NIC's state back, and `LiveNic`
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
from testbench.gnb.frames import DROP_REASONS, DlDrb, UlBearer
from testbench.gnb.layers import BearerShim, Pdcp12, Pdcp18, RlcAmData12, RlcAmData18

HOSTS = 2
PORTS = 3 + 2 * HOSTS
OFFLOAD_BUCKETS = 1024
VF_BUCKETS = 64
DRB_COUNTERS = ("dl_drb_counter", "ul_drb_counter", "host_return_counter")
SN_REGISTERS = ("pdcp_tx_sn", "rlc_tx_sn")


def to_host_port(host: int) -> int:
    """The NIC port whose frames the host receives on its port 0 (N3 side)."""
    return 3 + 2 * host


def return_port(host: int) -> int:
    """The NIC port on which the host's port 1 (radio side) sends."""
    return 4 + 2 * host


def teid_bytes(teid: int) -> bytes:
    return teid.to_bytes(4, "big")


def offload_bucket_of(teid: int) -> int:
    """The top 10 bits of the TEID's crc32."""
    return crc32(teid_bytes(teid)) >> (32 - OFFLOAD_BUCKETS.bit_length() + 1)


def vf_bucket_of(teid: int) -> int:
    """The top 6 bits of the TEID's crc16."""
    return crc16(teid_bytes(teid)) >> (16 - VF_BUCKETS.bit_length() + 1)


# ---- control commands ----

def offload_buckets(buckets) -> list[dict]:
    return [{"cmd": "table_add", "table": "offload_bucket", "match": {"bucket": bucket},
             "action": "offload_to_host", "params": {}} for bucket in sorted(set(buckets))]


def offload_by_ip_id() -> dict:
    return {"cmd": "table_set_default", "table": "offload_mode", "action": "offload_by_ip_id",
            "params": {}}


def offload_ip_ids(identifications) -> list[dict]:
    return [{"cmd": "table_add", "table": "offload_ip_id",
             "match": {"identification": identification}, "action": "offload_to_host",
             "params": {}} for identification in identifications]


def vf_buckets_round_robin(hosts=range(HOSTS)) -> list[dict]:
    """Every VF bucket to a host, in turn, as the controller spreads them."""
    hosts = list(hosts)
    return [{"cmd": "table_add", "table": "vf_bucket", "match": {"bucket": bucket},
             "action": "to_vf", "params": {"port": to_host_port(hosts[bucket % len(hosts)])}}
            for bucket in range(VF_BUCKETS)]


def vf_port_round_robin(teid: int, hosts=range(HOSTS)) -> int:
    hosts = list(hosts)
    return to_host_port(hosts[vf_bucket_of(teid) % len(hosts)])


def host_return_ports(hosts=range(HOSTS)) -> list[dict]:
    return [{"cmd": "table_add", "table": "host_return_port", "match": {"port": return_port(h)},
             "action": "from_host", "params": {}} for h in hosts]


def bearer_of(drb: DlDrb, teid: int | None = None) -> UlBearer:
    """The DRB's uplink bearer: the same (UE id, LCID), DRB index and formats."""
    return UlBearer(ue_id=drb.ue_id, lcid=drb.lcid, drb_index=drb.drb_index,
                    teid=teid if teid is not None else 0x20000 + drb.drb_index,
                    rlc_am=drb.rlc_am, rlc_sn18=drb.rlc_sn18, pdcp_sn18=drb.pdcp_sn18)


def drb_entries(drbs) -> list[dict]:
    """dl_drb and ul_bearer entries of these DRBs."""
    return [entry for drb in drbs for entry in (drb.table_entry(), bearer_of(drb).table_entry())]


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
