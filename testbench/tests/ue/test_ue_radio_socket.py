"""The UE emulator on a real veth pair between two network namespaces: the
test plays the gNB and a minimal buffering service on one end, the
emulator (`python -m testbench.ue`, and UeEmulator.serve in a thread) runs
on the other. STATUS frames are compared byte for byte with the scapy
layers' encoding; with a seeded link loss the test predicts which frames
the link drops, hence the first STATUS PDUs exactly, then retransmits
what they NACK until everything is acknowledged, and checks that every
frame index k was delivered once, in order."""
from __future__ import annotations

import itertools
import os
import select
import subprocess
import threading
import time
from dataclasses import dataclass, field

import pytest

from testbench.gnb.frames import DlDrb, DownlinkPacket
from controller.launch.namespaces import packet_socket
from testbench.topology.traffic import QFI, generated_drb, inner_packet
from testbench.ue.emulator import EmulatorConfig, UeEmulator, open_radio_socket
from testbench.ue.link import LossyLink, downlink_stream
from testbench.ue.process import UeEmulatorProcess
from testbench.ue.status_pdu import Nack, StatusPdu, decode_status
from ue_status_scapy import scapy_status_frame

from t4p4s.stf.veth import NetworkNamespace

PACKET_OUTGOING = 4
GNB_MAC = "02:00:00:00:00:0a"          # DownlinkPacket's default source MAC
DRB18 = generated_drb(7)
DRB12 = DlDrb(teid=0x99, drb_index=1, ue_id=0x0102, lcid=5, rlc_am=True, rlc_sn18=False,
              pdcp_sn18=False, default_qfi=3, ue_mac="02:00:00:00:11:22")
_pairs = itertools.count()


@dataclass
class RadioLink:
    gnb_netns: str
    gnb_interface: str
    ue_netns: str
    ue_interface: str


@pytest.fixture
def radio_link():
    """A veth pair, one end in a 'gnb' namespace, the other in a 'ue' one;
    both namespaces (and so the pair) removed afterwards."""
    if os.geteuid() != 0:
        pytest.fail("needs root: network namespaces, veth pairs, AF_PACKET sockets",
                    pytrace=False)
    tag = f"ue{os.getpid() % 0xFFFF:x}{next(_pairs):x}"
    namespaces = []
    try:
        for role in ("gnb", "ue"):
            namespaces.append(NetworkNamespace(f"{tag}-{role}"))
        gnb, ue = namespaces
        subprocess.run(["ip", "link", "add", f"{tag}g", "netns", gnb.name, "type", "veth",
                        "peer", "name", f"{tag}u", "netns", ue.name],
                       check=True, capture_output=True, timeout=10)
        for netns, interface in ((gnb.name, f"{tag}g"), (ue.name, f"{tag}u")):
            subprocess.run(["ip", "-n", netns, "link", "set", interface, "up"],
                           check=True, capture_output=True, timeout=10)
        yield RadioLink(gnb.name, f"{tag}g", ue.name, f"{tag}u")
    finally:
        for netns in namespaces:
            netns.close()


def radio_frame(drb: DlDrb, k: int, sn: int, poll: bool = False) -> bytes:
    frame = bytearray(DownlinkPacket(drb, inner_packet(k), qfi=QFI).radio_frame(sn, sn))
    if poll:
        frame[18] |= 0x40
    return bytes(frame)


def with_poll(frame: bytes, poll: bool) -> bytes:
    """A retransmission: byte-identical but for the P bit."""
    return frame[:18] + bytes([(frame[18] & ~0x40) | (0x40 if poll else 0)]) + frame[19:]


def nack_runs(missing: list[int]) -> tuple[Nack, ...]:
    """Sorted missing SNs (no wrap) as 5.3.4 NACKs: runs as ranges."""
    nacks, run = [], []
    for sn in missing + [None]:
        if run and (sn is None or sn != run[-1] + 1):
            nacks.append(Nack(run[0], nack_range=len(run)) if len(run) > 1 else Nack(run[0]))
            run = []
        if sn is not None:
            run.append(sn)
    return tuple(nacks)


def expected_first_statuses(missing: list[int], count: int) -> list[StatusPdu]:
    """The STATUS PDUs of a DRB that received SNs 0..count-1 but `missing`
    within one t-Reassembly, the last one (received) with a poll:
    t-Reassembly starts at the first SN received above the first gap
    (trigger = that SN + 1); its expiry sets RX_Highest_Status to the first
    missing SN >= trigger and restarts while more is missing above, with
    trigger = RX_Next_Highest = count; the poll, delayed (5.3.4) until
    RX_Highest_Status passes it, is released by the expiry that reaches
    count."""
    first_received_above = min(sn for sn in range(missing[0], count) if sn not in missing)
    trigger = first_received_above + 1
    highest_status = min([sn for sn in missing if sn >= trigger] + [count])
    first = StatusPdu(highest_status, nack_runs([sn for sn in missing if sn < highest_status]))
    if highest_status == count:
        return [first]
    return [first, StatusPdu(count, nack_runs(missing))]


@dataclass
class Bearer:
    """What the test's buffering service keeps of one DRB."""
    drb: DlDrb
    frames: dict[int, bytes] = field(default_factory=dict)      # SN -> first transmission
    statuses: list[bytes] = field(default_factory=list)         # STATUS frames received
    done: bool = False
    last_status_at: float = 0.0


class GnbSide:
    """The gNB end of the link: sends radio frames, reads STATUS frames,
    and records which DRB each sent frame belonged to (the link draws one
    number per frame in that order)."""

    def __init__(self, link: RadioLink):
        self.sock = packet_socket(link.gnb_netns, link.gnb_interface)
        self.sent: list[int] = []                       # ue_id of each frame sent, in order

    def send(self, frame: bytes):
        self.sock.send(frame)
        self.sent.append(int.from_bytes(frame[14:16], "big"))

    def receive(self, timeout: float) -> list[bytes]:
        frames = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            readable, _, _ = select.select([self.sock], [], [], max(remaining, 0))
            if not readable:
                return frames
            frame, address = self.sock.recvfrom(65536)
            if address[2] != PACKET_OUTGOING:
                frames.append(frame)
                deadline = min(deadline, time.monotonic() + 0.005)   # drain what is there

    def close(self):
        self.sock.close()


def pick_seed(loss: float, count: int, drbs: int) -> int:
    """The first seed that loses, for every DRB, two runs or more (one of
    them at least two consecutive SNs long) but neither its first nor its
    last frame, in the first pass of count frames per DRB sent
    round-robin."""
    for seed in itertools.count(1):
        stream = downlink_stream(seed)
        drops = [stream.random() < loss for _ in range(count * drbs)]
        ok = True
        for d in range(drbs):
            missing = [sn for sn in range(count) if drops[sn * drbs + d]]
            runs = nack_runs(missing)
            ok &= (0 not in missing and count - 1 not in missing and len(runs) >= 2
                   and any(n.nack_range for n in runs))
        if ok:
            return seed


def test_status_frames_and_delivery_through_a_lossy_veth(radio_link, tmp_path):
    loss, count, t_reassembly_ms = 0.1, 60, 500
    drbs = [DRB18, DRB12]
    seed = pick_seed(loss, count, len(drbs))
    emulator = UeEmulatorProcess(radio_link.ue_netns, radio_link.ue_interface,
                                 tmp_path / "ue.json", loss=loss, seed=seed,
                                 t_reassembly_ms=t_reassembly_ms).start()
    gnb = GnbSide(radio_link)
    bearers = {drb.ue_id: Bearer(drb) for drb in drbs}
    try:
        # first pass: SN = position, k numbered round-robin as traffic.py does, P on the last
        for sn in range(count):
            for d, drb in enumerate(drbs):
                frame = radio_frame(drb, sn * len(drbs) + d, sn, poll=sn == count - 1)
                bearers[drb.ue_id].frames[sn] = frame
                gnb.send(frame)
        stream = downlink_stream(seed)
        drops = [stream.random() < loss for _ in range(count * len(drbs))]
        expected = {drb.ue_id: [scapy_status_frame(drb, status, GNB_MAC) for status in
                                expected_first_statuses(
                                    [sn for sn in range(count) if drops[sn * len(drbs) + d]],
                                    count)]
                    for d, drb in enumerate(drbs)}
        # t-Reassembly once or twice: every expected STATUS, nothing else
        deadline = time.monotonic() + 3 * t_reassembly_ms / 1000 + 2
        first_pass: dict[int, list[bytes]] = {ue_id: [] for ue_id in bearers}
        while time.monotonic() < deadline and any(
                len(first_pass[ue_id]) < len(expected[ue_id]) for ue_id in bearers):
            for frame in gnb.receive(0.05):
                first_pass[int.from_bytes(frame[14:16], "big")].append(frame)
        for ue_id in bearers:
            assert [f.hex() for f in first_pass[ue_id]] == [f.hex() for f in expected[ue_id]], \
                f"UE {ue_id}: STATUS frames of the first pass"
            bearers[ue_id].statuses += first_pass[ue_id]
        # the buffering service: NACKed SNs again (P on the last), and a poll on the
        # highest SN when no STATUS came for a while (t-PollRetransmit)
        for ue_id, bearer in bearers.items():
            respond(gnb, bearer, first_pass[ue_id][-1], count)
        deadline = time.monotonic() + 30
        while not all(b.done for b in bearers.values()) and time.monotonic() < deadline:
            for frame in gnb.receive(0.05):
                bearer = bearers[int.from_bytes(frame[14:16], "big")]
                bearer.statuses.append(frame)
                respond(gnb, bearer, frame, count)
            for bearer in bearers.values():
                if not bearer.done and time.monotonic() - bearer.last_status_at > 0.3:
                    bearer.last_status_at = time.monotonic()
                    gnb.send(with_poll(bearer.frames[count - 1], True))
        assert all(b.done for b in bearers.values()), "not everything acknowledged in 30 s"
        for frame in gnb.receive(0.3):        # answers to polls still on their way
            bearers[int.from_bytes(frame[14:16], "big")].statuses.append(frame)
    finally:
        gnb.close()
        summary = emulator.stop()
    # the link judged every frame sent, in order, with the seeded stream
    stream = downlink_stream(seed)
    dropped = [ue_id for ue_id in gnb.sent if stream.random() < loss]
    assert summary["link"]["downlink_frames"] == len(gnb.sent)
    assert summary["socket"]["kernel_drops"] == 0
    for d, drb in enumerate(drbs):
        result = next(r for r in summary["drbs"] if r["ue_id"] == drb.ue_id)
        assert (result["lcid"], result["flags"]) == (drb.lcid, drb.flags)
        assert result["link_dropped"] == dropped.count(drb.ue_id)
        assert result["pdus_received"] == gnb.sent.count(drb.ue_id) - dropped.count(drb.ue_id)
        assert result["delivered_k"] == [sn * len(drbs) + d for sn in range(count)]
        assert result["duplicate_k"] == [] and result["order_violations"] == []
        assert result["status_frames"] == len(bearers[drb.ue_id].statuses)
        assert result["state"]["rx_next"] == count and result["state"]["buffered_sdus"] == 0
    assert summary["totals"]["delivered"] == count * len(drbs)
    assert summary["ignored"] == {"not_bearer": 0, "truncated": 0, "rlc_um": 0}


def respond(gnb: GnbSide, bearer: Bearer, frame: bytes, count: int):
    """What a buffering service does with a STATUS frame."""
    bearer.last_status_at = time.monotonic()
    sn_bits = 18 if bearer.drb.rlc_sn18 else 12
    assert frame[:18] == scapy_status_frame(bearer.drb, StatusPdu(0), GNB_MAC)[:18]
    status = decode_status(frame[18:], sn_bits)
    nacked = status.nacked_sns(sn_bits)
    if status.ack_sn == count and not nacked:
        bearer.done = True
        return
    for position, sn in enumerate(nacked):
        gnb.send(with_poll(bearer.frames[sn], position == len(nacked) - 1))


def test_serve_loop_runs_the_timers_and_stops_on_its_event(radio_link):
    """UeEmulator.serve in a thread: t-Reassembly expires on the 1 ms clock."""
    sock = open_radio_socket(radio_link.ue_interface, radio_link.ue_netns)
    emulator = UeEmulator(sock.send, LossyLink(), EmulatorConfig(t_reassembly_ms=100))
    stop = threading.Event()
    thread = threading.Thread(target=emulator.serve, args=(sock, stop), daemon=True)
    thread.start()
    gnb = GnbSide(radio_link)
    try:
        frames = [radio_frame(DRB12, sn, sn) for sn in range(5)]
        sent_at = time.monotonic()
        for sn in (0, 1, 3, 4):
            gnb.send(frames[sn])
        statuses = []
        while not statuses and time.monotonic() - sent_at < 5:
            statuses = gnb.receive(0.05)
        waited = time.monotonic() - sent_at
        assert [f.hex() for f in statuses] == \
            [scapy_status_frame(DRB12, StatusPdu(5, (Nack(2),)), GNB_MAC).hex()]
        assert 0.09 < waited < 2, f"STATUS after {waited:.3f} s, t-Reassembly is 100 ms"
        gnb.send(frames[2])
        deadline = time.monotonic() + 5
        while emulator.summary()["totals"]["delivered"] < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop.set()
        thread.join(timeout=5)
        gnb.close()
        sock.close()
    assert not thread.is_alive()
    result = emulator.summary()["drbs"][0]
    assert result["delivered_k"] == [0, 1, 2, 3, 4] and result["status_frames"] == 1
    assert emulator.socket_stats["frames"] == 5


def test_command_line_writes_its_summary_at_the_end_of_duration(radio_link, tmp_path):
    emulator = UeEmulatorProcess(radio_link.ue_netns, radio_link.ue_interface,
                                 tmp_path / "ue.json", duration_s=1.0,
                                 extra_args=["--no-k-lists"]).start()
    gnb = GnbSide(radio_link)
    try:
        for sn in range(3):
            gnb.send(radio_frame(DRB18, sn, sn, poll=sn == 2))
        statuses = gnb.receive(2.0)
    finally:
        gnb.close()
    summary = emulator.wait(10)
    assert [f.hex() for f in statuses] == [scapy_status_frame(DRB18, StatusPdu(3), GNB_MAC).hex()]
    assert summary["totals"]["delivered"] == 3 and "delivered_k" not in summary["drbs"][0]
    assert 900 <= summary["elapsed_ms"] < 3000


def test_sigterm_before_any_frame_still_writes_the_summary(radio_link, tmp_path):
    emulator = UeEmulatorProcess(radio_link.ue_netns, radio_link.ue_interface,
                                 tmp_path / "ue.json").start()
    summary = emulator.stop()
    assert summary["drbs"] == [] and summary["totals"]["drbs"] == 0


def test_a_missing_interface_fails_the_start_with_the_emulators_error(tmp_path):
    emulator = UeEmulatorProcess(None, "no-such-if0", tmp_path / "ue.json")
    with pytest.raises(RuntimeError, match="did not start"):
        emulator.start(timeout=20)
