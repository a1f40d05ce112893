"""The receiving side of one RLC AM entity (TS 38.322 5.2.3.2, 5.3.4, 7.1),
as a UE runs it per DRB, for a peer that never segments (SI = 00).

State variables (7.1), all SNs modulo 2^sn_bits and compared with RX_Next
as the modulus base (7.1: "RX_Next shall be assumed as the modulus base"):
RX_Next (the lower window edge: first SDU not completely received),
RX_Next_Status_Trigger, RX_Highest_Status (the highest ACK_SN a STATUS may
carry) and RX_Next_Highest (the SN after the highest one received).

Time is injected: every call that can start or expire a timer takes
`now_ms` (an integer count of milliseconds from any origin); on_clock()
expires what is due. Nothing here reads a clock or does I/O, so a test
drives every timer edge exactly.

Where this departs from the letter of the spec, the docstring of the
method says so: in-order delivery (in_order=True, the default), and
SDU segments (SI != 00), which are counted and discarded.
"""
from __future__ import annotations

from typing import Callable

from testbench.ue.status_pdu import (FIXED_PART_BYTES, MAX_NACK_RANGE, Nack, StatusPdu,
                                     check_sn_bits, encode_status)

DEFAULT_T_REASSEMBLY_MS = 35       # TS 38.331 9.2.1 default (SRBs; DRBs have none)
DEFAULT_T_STATUS_PROHIBIT_MS = 0

Deliver = Callable[[int, bytes], None]


class RlcAmReceiver:
    """One RLC AM receiving entity.

    deliver(sn, sdu) is called for each complete RLC SDU (the PDCP PDU:
    the AMD PDU without its RLC header). With in_order (default) SDUs are
    delivered in SN order as RX_Next passes them; that is what PDCP's
    reordering (TS 38.323 5.2.2.2) makes of them, and what the testbench
    checks. With in_order=False each SDU is delivered as soon as it is
    complete, as 5.2.3.2.3 says.

    status_max_bytes bounds the STATUS PDU (the "total size of RLC PDU(s)
    indicated by lower layer" of 5.3.4); None: no bound.
    """

    def __init__(self, sn_bits: int = 12, t_reassembly_ms: int = DEFAULT_T_REASSEMBLY_MS,
                 t_status_prohibit_ms: int = DEFAULT_T_STATUS_PROHIBIT_MS,
                 deliver: Deliver | None = None, in_order: bool = True, rx_next: int = 0,
                 status_max_bytes: int | None = None):
        self.sn_bits = check_sn_bits(sn_bits)
        self.modulus = 1 << sn_bits
        self.mask = self.modulus - 1
        self.window = self.modulus >> 1            # AM_Window_Size, 7.2
        if t_reassembly_ms < 0 or t_status_prohibit_ms < 0:
            raise ValueError("timer values are >= 0 ms")
        if status_max_bytes is not None and status_max_bytes < FIXED_PART_BYTES:
            raise ValueError(f"a STATUS PDU needs {FIXED_PART_BYTES} octets at least")
        self.t_reassembly_ms = t_reassembly_ms
        self.t_status_prohibit_ms = t_status_prohibit_ms
        self.status_max_bytes = status_max_bytes
        self.in_order = in_order
        self.deliver = deliver if deliver is not None else (lambda sn, sdu: None)
        self.reset(rx_next)
        # counters
        self.pdus_received = 0          # AMD PDUs given to receive_* (before any check)
        self.duplicates = 0             # inside the window, already received (5.2.3.2.2)
        self.outside_window = 0         # SN outside [RX_Next, RX_Next + AM_Window_Size)
        self.segments_discarded = 0     # SI != 00
        self.control_discarded = 0      # D/C = 0 given to receive_pdu
        self.truncated = 0              # no Data field after the AMD PDU header
        self.delivered = 0              # SDUs handed to deliver()
        self.polls = 0                  # PDUs with P = 1 (discarded ones included)
        self.status_triggers = 0        # times a STATUS report was triggered
        self.status_sent = 0            # STATUS PDUs take_status() returned
        self.reassembly_expiries = 0

    def reset(self, rx_next: int = 0):
        """Every state variable to rx_next (7.1 sets them to 0 at
        establishment), the buffer emptied, timers stopped, no trigger."""
        rx_next &= self.mask
        self.rx_next = rx_next
        self.rx_next_status_trigger = rx_next
        self.rx_highest_status = rx_next
        self.rx_next_highest = rx_next
        # SNs received in the window and not yet passed by RX_Next; the SDU
        # until it is delivered (in order), None once delivered
        self.buffer: dict[int, bytes | None] = {}
        self.reassembly_deadline: int | None = None
        self.status_prohibit_deadline: int | None = None
        self.status_triggered = False
        self.delayed_polls: list[int] = []     # SNs of polls whose trigger 5.3.4 delays

    # ---- reception, 5.2.3.2 ----------------------------------------------------------

    def receive_pdu(self, pdu: bytes, now_ms: int):
        """An RLC PDU as it came off the link (its first octet the D/C bit).
        A control PDU, a segment (SI != 00: the gNB never sends one) or a
        PDU with no octet after its header is counted and dropped."""
        if not pdu:
            self.truncated += 1
            return
        first = pdu[0]
        if not first & 0x80:
            self.control_discarded += 1
            return
        header = 2 if self.sn_bits == 12 else 3
        if len(pdu) <= header:           # no Data field: not a valid AMD PDU
            self.truncated += 1
            return
        if header == 2:
            sn = ((first & 0x0F) << 8) | pdu[1]
        else:                            # the two R bits (0x0C) are ignored, 6.2.3.8
            sn = ((first & 0x03) << 16) | (pdu[1] << 8) | pdu[2]
        if first & 0x30:
            self.segments_discarded += 1
            return
        self.receive_sdu(sn, bool(first & 0x40), pdu[header:], now_ms)

    def receive_sdu(self, sn: int, poll: bool, sdu: bytes, now_ms: int):
        """An AMD PDU with SN = sn carrying a complete SDU (SI = 00).

        5.2.3.2.2: discarded when outside the receiving window or already
        received; else placed in the buffer and 5.2.3.2.3 runs. A poll is
        handled after that (5.3.4), also in a discarded PDU."""
        self.pdus_received += 1
        mask = self.mask
        rx_next = self.rx_next
        offset = (sn - rx_next) & mask
        if offset >= self.window:
            self.outside_window += 1
            if poll:
                self._poll_in_discarded_pdu()
            return
        buffer = self.buffer
        if sn in buffer:
            self.duplicates += 1
            if poll:
                self._poll_in_discarded_pdu()
            return
        # 5.2.3.2.3, actions when an AMD PDU is placed in the reception buffer
        if self.in_order:
            buffer[sn] = sdu
        else:
            buffer[sn] = None
            self.delivered += 1
            self.deliver(sn, sdu)
        if offset >= ((self.rx_next_highest - rx_next) & mask):
            self.rx_next_highest = (sn + 1) & mask
        state_moved = False
        if sn == self.rx_highest_status:
            self.rx_highest_status = self._first_missing_from((sn + 1) & mask)
            state_moved = True
        if sn == rx_next:
            self._advance_rx_next()
            state_moved = True
        if self.reassembly_deadline is not None:
            trigger = (self.rx_next_status_trigger - self.rx_next) & mask
            # trigger = RX_Next + 1 stops the timer when SDU RX_Next has no
            # missing byte before the last byte received of it: true for a
            # whole-SDU peer (nothing of RX_Next received, or all of it)
            if trigger <= 1 or (trigger > self.window):
                self.reassembly_deadline = None
        if self.reassembly_deadline is None:
            # "RX_Next_Highest = RX_Next + 1 and a missing byte segment of
            # RX_Next" cannot hold without segments
            if ((self.rx_next_highest - self.rx_next) & mask) > 1:
                self._start_reassembly(now_ms)
        if state_moved and self.delayed_polls:
            self._check_delayed_polls()
        if poll:
            self.polls += 1
            self._poll(sn)

    def _first_missing_from(self, sn: int) -> int:
        """The first SN >= sn (mod) not received. Stops at RX_Next_Highest
        at the latest: nothing at or above it is in the buffer."""
        buffer, mask = self.buffer, self.mask
        while sn in buffer:
            sn = (sn + 1) & mask
        return sn

    def _advance_rx_next(self):
        """RX_Next to the first SN above it not received; the SDUs it
        passes leave the buffer (delivered now when in order)."""
        buffer, mask = self.buffer, self.mask
        sn = self.rx_next
        if self.in_order:
            deliver = self.deliver
            while sn in buffer:
                sdu = buffer.pop(sn)
                self.delivered += 1
                deliver(sn, sdu)
                sn = (sn + 1) & mask
        else:
            while sn in buffer:
                del buffer[sn]
                sn = (sn + 1) & mask
        self.rx_next = sn

    def _start_reassembly(self, now_ms: int):
        self.reassembly_deadline = now_ms + self.t_reassembly_ms
        self.rx_next_status_trigger = self.rx_next_highest

    # ---- timers ------------------------------------------------------------------------

    @property
    def reassembly_running(self) -> bool:
        return self.reassembly_deadline is not None

    @property
    def status_prohibit_running(self) -> bool:
        return self.status_prohibit_deadline is not None

    @property
    def needs_clock(self) -> bool:
        """Whether on_clock / take_status have something to do later."""
        return (self.reassembly_deadline is not None or self.status_prohibit_deadline is not None
                or self.status_triggered)

    def next_deadline(self) -> int | None:
        deadlines = [d for d in (self.reassembly_deadline, self.status_prohibit_deadline)
                     if d is not None]
        return min(deadlines) if deadlines else None

    def on_clock(self, now_ms: int):
        """Expires the timers due at now_ms: t-StatusProhibit (a STATUS
        triggered meanwhile can then be sent) and t-Reassembly (5.2.3.2.4)."""
        if self.status_prohibit_deadline is not None and now_ms >= self.status_prohibit_deadline:
            self.status_prohibit_deadline = None
        if self.reassembly_deadline is not None and now_ms >= self.reassembly_deadline:
            self._reassembly_expired(now_ms)

    def _reassembly_expired(self, now_ms: int):
        """5.2.3.2.4: RX_Highest_Status to the first SN >=
        RX_Next_Status_Trigger not received; t-Reassembly restarted while
        more is missing above it; a STATUS report triggered (5.3.4)."""
        self.reassembly_expiries += 1
        self.reassembly_deadline = None
        mask = self.mask
        self.rx_highest_status = self._first_missing_from(self.rx_next_status_trigger)
        rx_next = self.rx_next
        if ((self.rx_next_highest - rx_next) & mask) > ((self.rx_highest_status - rx_next) & mask) + 1:
            self._start_reassembly(now_ms)
        self._trigger_status()
        if self.delayed_polls:
            self._check_delayed_polls()

    # ---- STATUS reporting, 5.3.4 -------------------------------------------------------

    def _trigger_status(self):
        self.status_triggers += 1
        self.status_triggered = True

    def _poll_in_discarded_pdu(self):
        self.polls += 1
        self._trigger_status()

    def _poll(self, sn: int):
        """A poll in a PDU placed in the buffer: trigger now if
        x < RX_Highest_Status or x >= RX_Next + AM_Window_Size, else delay
        the trigger until one of them holds (5.3.4, NOTE 1)."""
        if self._poll_due(sn):
            self._trigger_status()
        else:
            self.delayed_polls.append(sn)

    def _poll_due(self, sn: int) -> bool:
        rx_next, mask = self.rx_next, self.mask
        offset = (sn - rx_next) & mask
        return offset < ((self.rx_highest_status - rx_next) & mask) or offset >= self.window

    def _check_delayed_polls(self):
        waiting = [sn for sn in self.delayed_polls if not self._poll_due(sn)]
        if len(waiting) != len(self.delayed_polls):
            self.delayed_polls = waiting
            self._trigger_status()

    def missing_runs(self) -> list[tuple[int, int]]:
        """(first SN, count) of each run of SNs not received in
        [RX_Next, RX_Highest_Status), in SN order."""
        rx_next, mask = self.rx_next, self.mask
        span = (self.rx_highest_status - rx_next) & mask
        if span == 0:
            return []
        received = sorted(offset for offset in ((sn - rx_next) & mask for sn in self.buffer)
                          if offset < span)
        runs = []
        expected = 0
        for offset in received:
            if offset > expected:
                runs.append(((rx_next + expected) & mask, offset - expected))
            expected = offset + 1
        if expected < span:
            runs.append(((rx_next + expected) & mask, span - expected))
        return runs

    def build_status(self, max_bytes: int | None = None) -> StatusPdu:
        """The STATUS PDU 5.3.4 describes, from the current state: a NACK
        for each SN in [RX_Next, RX_Highest_Status) not received, in SN
        order, a run of consecutive ones as one NACK_SN with a NACK range
        (E3; runs longer than 255 split), a lone one as a plain NACK_SN;
        ACK_SN = RX_Highest_Status. With max_bytes, NACKs stop where the
        next one would not fit and ACK_SN is the first SN left out (the
        next not received SDU not indicated as missing); a run whose range
        NACK does not fit is NACKed by its first SN alone if that fits.
        No side effects."""
        limit = max_bytes if max_bytes is not None else self.status_max_bytes
        if limit is not None and limit < FIXED_PART_BYTES:
            raise ValueError(f"a STATUS PDU needs {FIXED_PART_BYTES} octets at least")
        mask = self.mask
        sn_octets = 2 if self.sn_bits == 12 else 3
        nacks: list[Nack] = []
        size = FIXED_PART_BYTES
        for first, count in self.missing_runs():
            while count:
                chunk = min(count, MAX_NACK_RANGE)
                item = sn_octets + (1 if chunk > 1 else 0)
                if limit is not None and size + item > limit:
                    if chunk > 1 and size + sn_octets <= limit:
                        nacks.append(Nack(first))
                        first = (first + 1) & mask
                    return StatusPdu(first, tuple(nacks))
                nacks.append(Nack(first, nack_range=chunk) if chunk > 1 else Nack(first))
                size += item
                first = (first + chunk) & mask
                count -= chunk
        return StatusPdu(self.rx_highest_status, tuple(nacks))

    def take_status(self, now_ms: int) -> bytes | None:
        """The STATUS PDU to send now, if one is triggered and
        t-StatusProhibit is not running (5.3.4: one PDU however many
        triggers came while it ran); starts t-StatusProhibit. None when
        nothing is to be sent now."""
        if not self.status_triggered or self.status_prohibit_deadline is not None:
            return None
        self.status_triggered = False
        if self.t_status_prohibit_ms > 0:
            self.status_prohibit_deadline = now_ms + self.t_status_prohibit_ms
        self.status_sent += 1
        return encode_status(self.build_status(), self.sn_bits)

    # ---- reporting ---------------------------------------------------------------------

    def state(self) -> dict:
        return {"rx_next": self.rx_next, "rx_next_status_trigger": self.rx_next_status_trigger,
                "rx_highest_status": self.rx_highest_status,
                "rx_next_highest": self.rx_next_highest,
                "t_reassembly_running": self.reassembly_running,
                "t_status_prohibit_running": self.status_prohibit_running,
                "status_triggered": self.status_triggered,
                "delayed_polls": list(self.delayed_polls),
                "buffered_sdus": sum(1 for sdu in self.buffer.values() if sdu is not None)}

    def counters(self) -> dict:
        return {name: getattr(self, name) for name in (
            "pdus_received", "duplicates", "outside_window", "segments_discarded",
            "control_discarded", "truncated", "delivered", "polls", "status_triggers",
            "status_sent", "reassembly_expiries")}
