"""The BaaS's ring attachment (paper 001 scenario 2): a standalone host.p4
target, a DPDK primary process, makes its port 2 from two rte_rings
(`--ring-port baas`), and the BaaS, a secondary process with the target's
--file-prefix, attaches to it by name (`--ring baas`) and takes the AM
copies and STATUS PDUs as the target's own mbufs, zero copy.

The target's N3 and radio ports are net_af_packet on veth pairs, the test
on their other ends: it sends G-PDUs on N3 and STATUS PDUs from the UE on
the radio side, and captures the radio side, where the retransmissions
arrive byte for byte. The target's stats say what the BaaS holds of its
mbufs (`ring_ports`: peer_pid, peer_held, leaked)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from itertools import count
from pathlib import Path

import pytest

from scapy.layers.l2 import Ether

from t4p4s.stf.control import RuntimeProcess
from t4p4s.stf.veth import PortCapture, VethPorts
from testbench.gnb.frames import (DU_MAC, GNB_RADIO_MAC, DlDrb, DownlinkPacket,
                                  baas_clone_session, inner_packet)
from testbench.gnb.layers import NackSn18, RlcStatus18, UplinkBearerShim
from testbench.gnb.nic_entries import bearer_of, drb_entries
from controller.launch.baas import Baas, BaasSpec
from controller.launch.processes import dpdk_runtime_dir, hugepage_files

pytestmark = pytest.mark.dpdk

P4SRC = Path(__file__).resolve().parents[3] / "p4src"
N3, RADIO = 0, 1
RING = "baas"
HOLD = 64                 # target mbufs the BaaS may hold
AM18 = DlDrb(teid=0x9001, drb_index=91, ue_id=0x0901, lcid=4, rlc_am=True, rlc_sn18=True,
             pdcp_sn18=True, default_qfi=9, ue_mac="02:00:00:00:90:01")
AM12 = DlDrb(teid=0x9002, drb_index=92, ue_id=0x0902, lcid=5, rlc_am=True, rlc_sn18=False,
             pdcp_sn18=False, default_qfi=9, ue_mac="02:00:00:00:90:02")
ENTRIES = [*drb_entries([AM18, AM12]), baas_clone_session()]
_runs = count()


def packet(drb: DlDrb, index: int) -> DownlinkPacket:
    return DownlinkPacket(drb, inner_packet(index, 60 + index))


def status18(drb: DlDrb, ack_sn: int, nacks: list[int] = ()) -> bytes:
    """A STATUS PDU from the UE of an 18-bit AM DRB, as the radio side sends it."""
    entries = [NackSn18(nack_sn=sn, e1=int(i + 1 < len(nacks))) for i, sn in enumerate(nacks)]
    return bytes(Ether(dst=GNB_RADIO_MAC, src=DU_MAC)
                 / UplinkBearerShim(ue_id=drb.ue_id, lcid=drb.lcid, flags=bearer_of(drb).flags)
                 / RlcStatus18(ack_sn=ack_sn, e1=int(bool(nacks)), nacks=entries))


class RingGnb:
    """host.p4 with a ring port on two veth pairs, and a BaaS attached to it."""

    def __init__(self, host_executable: Path, baas_executable: Path, run_dir: Path):
        self.prefix = f"ringgnb{os.getpid()}-{next(_runs)}"
        self.run_dir = run_dir
        self.baas_executable = baas_executable
        self.veth = VethPorts(2)
        self.target = self.baas = self.capture = None
        try:
            (run_dir / "entries.json").write_text(json.dumps(ENTRIES))
            eal = ["-l", "0", "--file-prefix", self.prefix, "--no-pci",
                   "--log-level", "*:warning"]
            for port, pair in enumerate(self.veth.pairs):
                eal += ["--vdev", f"net_af_packet{port},iface={pair.dp}"]
            self.target = RuntimeProcess(
                host_executable, eal,
                ["--governor", "nap", "--ring-port", f"{RING},hold={HOLD}",
                 "--entries", str(run_dir / "entries.json")], run_dir / "target")
            self.capture = PortCapture(self.veth.pairs)
            self.baas = Baas(self.baas_spec())
        except BaseException:
            self.close()
            raise

    def secondary_eal(self, lcore: int = 1) -> list[str]:
        return ["-l", str(lcore), "--proc-type=secondary", "--file-prefix", self.prefix,
                "--no-pci", "--log-level", "*:warning"]

    def baas_spec(self) -> BaasSpec:
        return BaasSpec(self.baas_executable, [], lcore=1, run_dir=self.run_dir / "baas",
                        file_prefix=self.prefix, eal=self.secondary_eal(),
                        options=["--ring", RING, "--t-poll-retransmit", "60000"])

    def send(self, port: int, *frames: bytes):
        for frame in frames:
            self.capture.send(port, frame)

    def radio(self) -> list[bytes]:
        return self.capture.snapshot()[RADIO]

    def wait_radio(self, n: int, timeout: float = 10.0) -> list[bytes]:
        deadline = time.monotonic() + timeout
        while len(self.radio()) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.radio()

    def ring_port(self) -> dict:
        (port,) = self.target.request({"cmd": "stats"})["ring_ports"]
        return port

    def wait_ring_port(self, timeout: float = 5.0, **expected) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            port = self.ring_port()
            if all(port[k] == v for k, v in expected.items()) or time.monotonic() > deadline:
                return port
            time.sleep(0.01)

    def close(self):
        """Stops what still runs and removes the target's hugepage files,
        which a primary with shared memory leaves for its secondaries."""
        for process in (self.baas, self.target):
            if process is not None:
                process.stop()
        for closing in (self.capture, self.veth):
            if closing is not None:
                closing.close()
        for leftover in hugepage_files(self.prefix):
            leftover.unlink(missing_ok=True)


def stop_ring_gnb(gnb: RingGnb):
    """Both processes stopped cleanly (a sanitizer's report makes a status
    non-zero) and the gNB's leftovers removed."""
    baas_status = gnb.baas.stop() if gnb.baas.alive() else 0
    target_status = gnb.target.stop()
    gnb.baas = gnb.target = None
    gnb.close()
    assert (baas_status, target_status) == (0, 0)


@pytest.fixture
def ring_gnb(compiled, baas_executable, tmp_path):
    gnb = RingGnb(compiled(P4SRC / "host.p4").executable_path, baas_executable, tmp_path)
    yield gnb
    stop_ring_gnb(gnb)
    assert not dpdk_runtime_dir(gnb.prefix).exists(), "the target left its runtime directory"


def drb_state(baas: Baas, drb: DlDrb) -> dict:
    return baas.drb(drb.ue_id, drb.lcid)["result"]


def test_copies_held_acked_and_retransmitted_over_the_ring(ring_gnb):
    """The BaaS holds the target's own mbufs, releases what a STATUS PDU
    acknowledges and sends the NACKed one back through the ring, out of
    the radio port byte for byte with the poll bit set; the target sees
    how many of its mbufs the BaaS holds."""
    sent = [(AM18, i) for i in range(6)] + [(AM12, i) for i in range(4)]
    ring_gnb.send(N3, *(packet(drb, i).n3_frame() for drb, i in sent))
    radio = ring_gnb.wait_radio(len(sent))
    expected = [packet(drb, i).radio_frame(i, i, 0) for drb, i in sent]
    assert [f.hex() for f in radio] == [f.hex() for f in expected]
    ring_gnb.baas.wait_received(len(sent))
    assert ring_gnb.wait_ring_port(peer_held=len(sent))["peer_pid"] == \
        ring_gnb.baas.process.process.pid
    assert drb_state(ring_gnb.baas, AM18)["held"] == 6

    ring_gnb.send(RADIO, status18(AM18, ack_sn=6, nacks=[2]))
    radio = ring_gnb.wait_radio(len(sent) + 1)
    assert len(radio) == len(sent) + 1, "no retransmission came out of the radio port"
    assert radio[-1].hex() == packet(AM18, 2).radio_frame(2, 2, 1).hex()
    state = drb_state(ring_gnb.baas, AM18)
    assert (state["held"], state["counters"]["acked"], state["counters"]["retransmitted"]) == \
        (1, 5, 1)
    port = ring_gnb.wait_ring_port(peer_held=1 + 4)
    assert (port["peer_held"], port["hold"], port["leaked"], port["port"]) == (5, HOLD, 0, 2)
    # the target counted the retransmission where its pipeline took it in
    reply = ring_gnb.target.request({"cmd": "counter_read", "counter": "baas_retx_counter",
                                     "index": AM18.drb_index})
    assert reply["packets"] == 1


def test_the_target_bounds_what_the_baas_holds(ring_gnb):
    """hold=64: the BaaS keeps at most 64 of the target's mbufs, releasing
    its oldest beyond, so its copies can never empty the target's pool."""
    ring_gnb.send(N3, *(packet(AM18, i).n3_frame() for i in range(HOLD + 10)))
    ring_gnb.wait_radio(HOLD + 10)
    ring_gnb.baas.wait_received(HOLD + 10)
    state = drb_state(ring_gnb.baas, AM18)
    assert (state["held"], state["counters"]["released_bound"]) == (HOLD, 10)
    assert ring_gnb.wait_ring_port(peer_held=HOLD)["peer_held"] == HOLD


def test_killed_baas_leaks_what_it_held_and_a_restart_attaches_again(ring_gnb):
    """A killed BaaS: the target forwards on, its copies wait in the ring;
    the restarted BaaS counts what the dead one held as leaked, holds that
    many fewer, takes the waiting copies and buffers new ones."""
    gnb = ring_gnb
    gnb.send(N3, *(packet(AM18, i).n3_frame() for i in range(3)))
    gnb.baas.wait_received(3)
    gnb.wait_ring_port(peer_held=3)
    gnb.baas.kill()

    gnb.send(N3, *(packet(AM18, i).n3_frame() for i in range(3, 5)))
    radio = gnb.wait_radio(5)
    assert [f.hex() for f in radio] == \
        [packet(AM18, i).radio_frame(i, i, 0).hex() for i in range(5)]
    assert gnb.ring_port()["peer_held"] == 3

    gnb.baas.start()
    assert "died holding 3 of the target's mbufs" in gnb.baas.log_text()
    assert f"holds at most {HOLD - 3} of its mbufs" in gnb.baas.log_text()
    gnb.baas.wait_received(2)           # the copies that waited in the ring
    state = drb_state(gnb.baas, AM18)
    assert (state["tx_next_ack"], state["tx_next"], state["held"]) == (3, 5, 2)
    port = gnb.wait_ring_port(peer_held=2)
    assert (port["leaked"], port["peer_pid"]) == (3, gnb.baas.process.process.pid)

    gnb.send(RADIO, status18(AM18, ack_sn=5))
    gnb.wait_ring_port(peer_held=0)
    assert drb_state(gnb.baas, AM18)["held"] == 0


def _refused(gnb: RingGnb, eal: list[str], app: list[str]) -> str:
    result = subprocess.run([str(gnb.baas_executable), *eal, "--", *app],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stderr


def test_ring_attachment_refused_with_a_reason(ring_gnb):
    """No such ring port; one of the target's lcores (their mempool caches
    would be shared); a second BaaS on a ring port that has a live one."""
    gnb = ring_gnb
    assert "no ring port of that name" in _refused(gnb, gnb.secondary_eal(), ["--ring", "nosuch"])
    assert "lcore 0 is the target's too" in _refused(gnb, gnb.secondary_eal(0), ["--ring", RING])
    assert f"process {gnb.baas.process.process.pid} is attached to it already" in \
        _refused(gnb, gnb.secondary_eal(), ["--ring", RING, "--grpc", "127.0.0.1:0"])
    assert gnb.baas.alive() and gnb.ring_port()["peer_pid"] == gnb.baas.process.process.pid
