"""A BaaS on one veth pair, the test on the other end: it sends the frames
a target would (testbench/gnb/baas_frames.py) and captures what the BaaS
sends back (retransmissions)."""
from __future__ import annotations

import os
import time
from itertools import count

from t4p4s.stf.veth import PortCapture, VethPorts
from controller.launch.baas import Baas, BaasSpec

_runs = count()


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
