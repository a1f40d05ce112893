"""The UE emulator: the receiving RLC AM entities of every UE behind the
radio port, on one AF_PACKET socket.

Per downlink radio frame (Ethernet 0x88B5, docs/wire-format.md): the
lossy link may drop it; the bearer shim's (UE id, LCID) select the DRB,
whose RlcAmReceiver is made on its first frame with the SN length the
shim's RLC SN18 flag gives; the AMD PDU goes to that entity; each SDU it
delivers is PDCP header (2 or 3 octets, the PDCP SN18 flag) + SDAP DL
header (1 octet: the gNB writes one on every DRB) + the inner packet, whose
frame index k (testbench/topology/traffic.py) is recorded. STATUS PDUs go
back on the same socket to the MAC address the DRB's frames came from.

UeEmulator holds the logic and takes `now_ms` from its caller (tests drive
it frame by frame); serve() is the loop on a socket: frames as they come,
timers every millisecond of time.monotonic().
"""
from __future__ import annotations

import select
import socket
import struct
import threading
import time
from array import array
from dataclasses import asdict, dataclass
from typing import Callable

from testbench.topology.traffic import frame_index_of
from testbench.ue.link import LossyLink
from testbench.ue.rlc_am_rx import DEFAULT_T_REASSEMBLY_MS, DEFAULT_T_STATUS_PROHIBIT_MS, \
    RlcAmReceiver
from testbench.ue.status_pdu import (ETHERTYPE_BEARER, SHIM_PDCP_SN18, SHIM_RLC_AM,
                                     SHIM_RLC_SN18, mac_bytes)

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
SO_RCVBUFFORCE = 33
BEARER_TYPE = ETHERTYPE_BEARER.to_bytes(2, "big")
SHIM_END = 18                     # Ethernet 14 + bearer shim 4: the RLC header starts here
SDAP_DL_BYTES = 1
STATUS_MAX_BYTES_DEFAULT = 1500 - 4
RECEIVE_BATCH = 256               # frames read before the clock is looked at again


@dataclass
class EmulatorConfig:
    t_reassembly_ms: int = DEFAULT_T_REASSEMBLY_MS
    t_status_prohibit_ms: int = DEFAULT_T_STATUS_PROHIBIT_MS
    in_order: bool = True                # deliver SDUs in SN order (see RlcAmReceiver)
    sdap: bool = True                    # an SDAP DL header precedes the inner packet
    learn_first_sn: bool = False         # RX_Next from a DRB's first frame, not 0
    # STATUS PDU size bound (5.3.4 trimming): what fits a 1,500-octet MTU after the
    # 4-octet shim; None: unbounded (a frame over the MTU is then not sent)
    status_max_bytes: int | None = STATUS_MAX_BYTES_DEFAULT
    status_pad_to: int = 0               # zero-pad STATUS frames to this length
    gnb_mac: str | None = None           # STATUS destination; None: each DRB's frames' source
    record_k: bool = True                # keep every delivered k (else only counts)


class Drb:
    """One (UE id, LCID): its receiving entity and what was delivered."""

    def __init__(self, emulator: "UeEmulator", ue_id: int, lcid: int, flags: int,
                 first_frame: bytes):
        config = emulator.config
        self.ue_id = ue_id
        self.lcid = lcid
        self.flags = flags
        self.sn_bits = 18 if flags & SHIM_RLC_SN18 else 12
        self.rlc_header = 3 if self.sn_bits == 18 else 2
        self.sdu_header = (3 if flags & SHIM_PDCP_SN18 else 2) + (SDAP_DL_BYTES if config.sdap else 0)
        gnb_mac = mac_bytes(config.gnb_mac) if config.gnb_mac else first_frame[6:12]
        ue_mac = first_frame[0:6]
        # uplink: to the gNB from the UE, the shim as received (the bearer's exact flags)
        self.uplink_header = gnb_mac + ue_mac + first_frame[12:SHIM_END]
        self.pad_to = config.status_pad_to
        self.rx = RlcAmReceiver(self.sn_bits, config.t_reassembly_ms, config.t_status_prohibit_ms,
                                deliver=self._deliver, in_order=config.in_order,
                                status_max_bytes=config.status_max_bytes)
        self.learn_first_sn = config.learn_first_sn
        self.record_k = config.record_k
        self.link_dropped = 0
        self.bearer_format = 0          # frames whose shim flags differ from the first frame's
        self.status_frames = 0          # STATUS frames sent (after the link's uplink loss)
        self.status_link_dropped = 0
        self.unrecognized_sdus = 0      # SDUs with no frame index (not traffic.py's packets)
        self.delivered_k = array("q")
        self.seen_k: set[int] = set()
        self.duplicate_k: list[int] = []
        self.order_violations: list[tuple[int, int]] = []
        self.max_k = -1

    def _deliver(self, sn: int, sdu: bytes):
        k = frame_index_of(sdu[self.sdu_header:])
        if k is None:
            self.unrecognized_sdus += 1
            return
        if k in self.seen_k:
            self.duplicate_k.append(k)
        else:
            self.seen_k.add(k)
            if k < self.max_k:
                self.order_violations.append((self.max_k, k))
            else:
                self.max_k = k
        if self.record_k:
            self.delivered_k.append(k)

    def summary(self, with_k: bool = True) -> dict:
        result = {"ue_id": self.ue_id, "lcid": self.lcid, "flags": self.flags,
                  "sn_bits": self.sn_bits, "link_dropped": self.link_dropped,
                  "bearer_format": self.bearer_format, "status_frames": self.status_frames,
                  "status_link_dropped": self.status_link_dropped,
                  "unrecognized_sdus": self.unrecognized_sdus,
                  "distinct_k": len(self.seen_k), "duplicate_k_count": len(self.duplicate_k),
                  "order_violation_count": len(self.order_violations),
                  **self.rx.counters(), "state": self.rx.state()}
        if with_k:
            result["delivered_k"] = self.delivered_k.tolist()
            result["duplicate_k"] = list(self.duplicate_k)
            result["order_violations"] = [list(pair) for pair in self.order_violations]
        return result


class UeEmulator:
    """The receiving RLC AM entities of every DRB seen; send(frame) puts a
    STATUS frame on the wire."""

    def __init__(self, send: Callable[[bytes], object], link: LossyLink | None = None,
                 config: EmulatorConfig | None = None):
        self.send = send
        self.link = link if link is not None else LossyLink()
        self.config = config if config is not None else EmulatorConfig()
        self.drbs: dict[int, Drb] = {}          # key: ue_id << 8 | lcid
        self._timed: set[Drb] = set()          # DRBs with a timer running or a STATUS pending
        self.ignored = {"not_bearer": 0, "truncated": 0, "rlc_um": 0}
        self.send_errors = 0
        self.socket_stats = {"frames": 0, "outgoing_ignored": 0, "kernel_drops": 0}
        self.elapsed_ms = 0

    # ---- per frame ---------------------------------------------------------------------

    def handle_frame(self, frame: bytes, now_ms: int):
        """One frame from the radio port at now_ms."""
        if len(frame) <= SHIM_END or frame[12] != 0x88 or frame[13] != 0xB5:
            self.ignored["truncated" if frame[12:14] == BEARER_TYPE else "not_bearer"] += 1
            return
        key = (frame[14] << 16) | (frame[15] << 8) | frame[16]
        drb = self.drbs.get(key)
        flags = frame[17]
        if drb is None:
            if not flags & SHIM_RLC_AM:
                self.ignored["rlc_um"] += 1
                return
            drb = self.drbs[key] = Drb(self, key >> 8, key & 0xFF, flags, frame)
        rx = drb.rx
        if drb.learn_first_sn:
            # before the link: the UE joins knowing where the gNB's numbering
            # stands (as bearer setup tells it), even if this frame is lost
            drb.learn_first_sn = False
            if frame[SHIM_END] & 0x80 and len(frame) > SHIM_END + drb.rlc_header:
                first = frame[SHIM_END]
                rx.reset((((first & 0x03) << 16) | (frame[19] << 8) | frame[20]) if drb.sn_bits == 18
                         else (((first & 0x0F) << 8) | frame[19]))
        if self.link.drop_downlink():
            drb.link_dropped += 1
            return
        if flags != drb.flags:
            drb.bearer_format += 1
            return
        rx.receive_pdu(frame[SHIM_END:], now_ms)
        if rx.status_triggered:
            self._send_status(drb, now_ms)
        if rx.reassembly_deadline is not None or rx.status_prohibit_deadline is not None \
                or rx.status_triggered:
            self._timed.add(drb)

    def _send_status(self, drb: Drb, now_ms: int):
        status = drb.rx.take_status(now_ms)
        if status is None:
            return
        if self.link.drop_uplink():
            drb.status_link_dropped += 1
            return
        frame = drb.uplink_header + status
        if len(frame) < drb.pad_to:
            frame += bytes(drb.pad_to - len(frame))
        try:
            self.send(frame)
        except OSError:              # a full queue, a frame over the MTU: lost, counted
            self.send_errors += 1
            return
        drb.status_frames += 1

    def on_clock(self, now_ms: int):
        """Timers due at now_ms, and the STATUS PDUs they let out."""
        self.elapsed_ms = now_ms
        if not self._timed:
            return
        done = []
        for drb in self._timed:
            rx = drb.rx
            rx.on_clock(now_ms)
            if rx.status_triggered:
                self._send_status(drb, now_ms)
            if not rx.needs_clock:
                done.append(drb)
        for drb in done:
            self._timed.discard(drb)

    # ---- on a socket -------------------------------------------------------------------

    def serve(self, sock: socket.socket, stop: threading.Event, duration_s: float | None = None,
              clock: Callable[[], float] = time.monotonic):
        """Reads frames from sock until stop is set or duration_s passed;
        timers run every millisecond. Frames the socket itself sent
        (PACKET_OUTGOING) are skipped. Returns when done; the socket stays
        open (and blocking mode is left off)."""
        sock.setblocking(False)
        receive = sock.recvfrom
        handle = self.handle_frame
        stats = self.socket_stats
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        start = clock()
        end = start + duration_s if duration_s is not None else None
        last_ms = -1
        while not stop.is_set():
            now = clock()
            if end is not None and now >= end:
                break
            now_ms = int((now - start) * 1000)
            received = 0
            while received < RECEIVE_BATCH:
                try:
                    frame, address = receive(65536)
                except (BlockingIOError, InterruptedError):
                    break
                received += 1
                if address[2] == PACKET_OUTGOING:
                    stats["outgoing_ignored"] += 1
                    continue
                handle(frame, now_ms)
            stats["frames"] += received
            if now_ms != last_ms:
                self.on_clock(now_ms)
                last_ms = now_ms
            if received < RECEIVE_BATCH:
                poller.poll(1)
        self.elapsed_ms = int((clock() - start) * 1000)
        stats["kernel_drops"] += kernel_drops(sock)

    # ---- results -----------------------------------------------------------------------

    def summary(self, with_k: bool = True) -> dict:
        """Everything the run counted, as JSON-ready dicts:

        config, elapsed_ms; link (LossyLink.counters: frames seen and
        dropped per direction); socket (frames read, own frames skipped,
        kernel_drops: frames the receive buffer lost, which the RLC sees
        as losses too); send_errors; ignored (not_bearer, truncated,
        rlc_um frames); drbs: one dict per DRB in (ue_id, lcid) order with
        the RlcAmReceiver counters (pdus_received, duplicates,
        outside_window, delivered, polls, status_sent, ...), link_dropped,
        status_frames (STATUS frames put on the wire), status_link_dropped,
        unrecognized_sdus, distinct_k, duplicate_k_count,
        order_violation_count, state (the RX state variables, timers,
        buffered_sdus: received but held behind a gap) and, with_k,
        delivered_k (every k in delivery order), duplicate_k and
        order_violations ([highest k before, k] pairs); totals: the sums
        of those counters over the DRBs, buffered_sdus and drbs."""
        drbs = [drb.summary(with_k) for _, drb in sorted(self.drbs.items())]
        total_keys = ("pdus_received", "duplicates", "outside_window", "link_dropped",
                      "delivered", "status_sent", "status_frames", "status_link_dropped",
                      "segments_discarded", "control_discarded", "truncated", "bearer_format",
                      "unrecognized_sdus", "distinct_k", "duplicate_k_count",
                      "order_violation_count", "polls", "reassembly_expiries")
        totals = {key: sum(drb[key] for drb in drbs) for key in total_keys}
        totals["buffered_sdus"] = sum(drb["state"]["buffered_sdus"] for drb in drbs)
        totals["drbs"] = len(drbs)
        return {"config": asdict(self.config), "elapsed_ms": self.elapsed_ms,
                "link": self.link.counters(), "socket": dict(self.socket_stats),
                "send_errors": self.send_errors, "ignored": dict(self.ignored),
                "totals": totals, "drbs": drbs}


def open_radio_socket(interface: str, netns: str | None = None,
                      receive_buffer: int = 32 << 20) -> socket.socket:
    """An AF_PACKET socket on `interface` (inside netns when given, through
    controller.launch.namespaces.packet_socket), with a large receive
    buffer and, where the kernel has it, PACKET_IGNORE_OUTGOING."""
    if netns is not None:
        from controller.launch.namespaces import packet_socket
        sock = packet_socket(netns, interface)
    else:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        sock.bind((interface, ETH_P_ALL))
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, receive_buffer)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass                      # serve() skips PACKET_OUTGOING frames itself
    kernel_drops(sock)            # the counters start now (reading them resets them)
    return sock


def kernel_drops(sock: socket.socket) -> int:
    """Frames the kernel dropped for this socket (full receive buffer)
    since the last call (PACKET_STATISTICS resets on read)."""
    try:
        _, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    except OSError:
        return 0
    return drops
