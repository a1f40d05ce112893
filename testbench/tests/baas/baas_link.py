"""A BaaS on one veth pair, the test on the other end: the frames a target
would send it (AMD PDU copies, uplink STATUS PDUs) built with the project's
scapy layers, and what it sends back (retransmissions) captured."""
from __future__ import annotations

import os
import time
from itertools import count

from scapy.layers.l2 import Ether
from scapy.packet import Raw

from t4p4s.stf.veth import PortCapture, VethPorts
from testbench.gnb.layers import (BearerShim, NackSn12, NackSn18, Pdcp12, Pdcp18, RlcAmData12,
                                  RlcAmData18, RlcStatus12, RlcStatus18)
from testbench.topology.baas import Baas, BaasSpec

GNB_MAC = "02:00:00:00:01:01"
DU_MAC = "02:00:00:00:02:02"
SHIM_AM, SHIM_RLC_SN18, SHIM_PDCP_SN18 = 0x01, 0x02, 0x04
_runs = count()


def amd_frame(ue_id: int, lcid: int, sn: int, sn_bits: int = 12, poll: bool = False,
              payload: bytes | None = None) -> bytes:
    """A downlink radio frame as the pipeline sends it (and copies to the BaaS)."""
    flags = SHIM_AM | (SHIM_RLC_SN18 | SHIM_PDCP_SN18 if sn_bits == 18 else 0)
    rlc = (RlcAmData18 if sn_bits == 18 else RlcAmData12)(sn=sn, poll=int(poll))
    pdcp = (Pdcp18 if sn_bits == 18 else Pdcp12)(sn=sn)
    body = payload if payload is not None else sn.to_bytes(4, "big") * 10
    return bytes(Ether(dst=DU_MAC, src=GNB_MAC, type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=lcid, flags=flags) / rlc / pdcp / Raw(body))


def status_frame(ue_id: int, lcid: int, ack_sn: int, nacks: list[dict] | None = None,
                 sn_bits: int = 12, **fields) -> bytes:
    """An uplink STATUS PDU; nacks: dicts of NackSn fields (nack_sn, e2,
    so_start, so_end, e3, nack_range); E1 chains are set here."""
    nack_class = NackSn18 if sn_bits == 18 else NackSn12
    items = [nack_class(**n) for n in (nacks or [])]
    for i, item in enumerate(items):
        item.e1 = int(i + 1 < len(items))
    status = (RlcStatus18 if sn_bits == 18 else RlcStatus12)(
        ack_sn=ack_sn, e1=int(bool(items)), nacks=items, **fields)
    flags = SHIM_AM | (SHIM_RLC_SN18 | SHIM_PDCP_SN18 if sn_bits == 18 else 0)
    return bytes(Ether(dst=GNB_MAC, src=DU_MAC, type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=lcid, flags=flags) / status)


def with_poll(frame: bytes, poll: bool) -> bytes:
    """The same frame with the RLC poll bit (first RLC octet, 0x40) as given."""
    first = frame[18] | 0x40 if poll else frame[18] & ~0x40
    return frame[:18] + bytes([first]) + frame[19:]


class BaasLink:
    """The BaaS on the dp end of a veth pair (net_af_packet); send() and
    the capture on the test end."""

    def __init__(self, executable, run_dir, options: list[str]):
        self.veth = VethPorts(1)
        self.capture = None
        self.baas = None
        try:
            pair = self.veth.pairs[0]
            self.baas = Baas(BaasSpec(
                executable, [f"net_af_packet0,iface={pair.dp}"], lcore=0, run_dir=run_dir,
                file_prefix=f"baas{os.getpid()}-{next(_runs)}", options=options))
            self.capture = PortCapture(self.veth.pairs)
        except BaseException:
            self.close()
            raise

    def send(self, *frames: bytes):
        for frame in frames:
            self.capture.send(0, frame)

    def received(self) -> list[bytes]:
        return self.capture.snapshot()[0]

    def wait_received(self, n: int, timeout: float = 5.0) -> list[bytes]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(self.received()) < n:
            time.sleep(0.01)
        return self.received()

    def counters(self, ue_id: int | None = None, lcid: int | None = None) -> dict:
        if ue_id is None:
            return self.baas.stats()["result"]["counters"]
        return self.baas.drb(ue_id, lcid)["result"]["counters"]

    def wait_counter(self, name: str, value: int, timeout: float = 5.0, **drb) -> dict:
        """Waits until counters[name] (global, or the DRB's) reaches value."""
        deadline = time.monotonic() + timeout
        while True:
            c = self.counters(**drb)
            got = c["dropped"][name] if name in c["dropped"] else c[name]
            if got >= value or time.monotonic() > deadline:
                return c
            time.sleep(0.01)

    def close(self):
        """Stops everything; the BaaS must exit cleanly (status 0: no
        sanitizer report on the sanitize build)."""
        if self.capture is not None:
            self.capture.close()
        status = self.baas.stop() if self.baas is not None else 0
        self.veth.close()
        assert status == 0, f"the BaaS exited with {status}:\n{self.baas.log_text()[-4000:]}"
