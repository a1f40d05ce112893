"""The receiving RLC AM entity (testbench/ue/rlc_am_rx.py) against TS 38.322
5.2.3.2 (reception, t-Reassembly), 5.3.4 (STATUS triggers and building)
and 7.1 (state variables), with time driven by hand."""
from __future__ import annotations

import random

import pytest

from testbench.ue.rlc_am_rx import RlcAmReceiver
from testbench.ue.status_pdu import Nack, StatusPdu, decode_status, encode_status


def amd_pdu(sn: int, sn_bits: int, poll: bool = False, si: int = 0, payload: bytes | None = None,
            dc: int = 1) -> bytes:
    """An AMD PDU (6.2.2.4): D/C P SI SN, then a payload naming its SN."""
    first = (dc << 7) | (int(poll) << 6) | (si << 4)
    if sn_bits == 12:
        header = bytes([first | (sn >> 8), sn & 0xFF])
    else:
        header = bytes([first | (sn >> 16), (sn >> 8) & 0xFF, sn & 0xFF])
    return header + (payload if payload is not None else b"sdu%d" % sn)


class Ue:
    """An entity and what it delivered."""

    def __init__(self, sn_bits: int = 12, **options):
        self.sn_bits = sn_bits
        self.delivered: list[int] = []
        self.sdus: list[bytes] = []
        self.rx = RlcAmReceiver(sn_bits, deliver=self._deliver, **options)

    def _deliver(self, sn, sdu):
        self.delivered.append(sn)
        self.sdus.append(sdu)

    def send(self, sns, now_ms=0, poll_on=()):
        for sn in sns:
            self.rx.receive_pdu(amd_pdu(sn, self.sn_bits, poll=sn in poll_on), now_ms)

    def state(self):
        rx = self.rx
        return (rx.rx_next, rx.rx_next_status_trigger, rx.rx_highest_status, rx.rx_next_highest)

    def status(self, now_ms=0) -> StatusPdu | None:
        octets = self.rx.take_status(now_ms)
        return None if octets is None else decode_status(octets, self.sn_bits)


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_in_order_pdus_are_delivered_and_move_every_state_variable(sn_bits):
    ue = Ue(sn_bits)
    ue.send(range(10))
    assert ue.delivered == list(range(10))
    assert ue.sdus[3] == b"sdu3"                      # the SDU: the PDU without its RLC header
    assert ue.state() == (10, 0, 10, 10)
    assert not ue.rx.reassembly_running and not ue.rx.status_triggered
    assert ue.rx.buffer == {}


def test_a_gap_holds_delivery_starts_t_reassembly_and_its_expiry_sends_a_nack():
    ue = Ue(12, t_reassembly_ms=35)
    ue.send([0, 1, 3], now_ms=0)
    assert ue.delivered == [0, 1]
    # 3 made RX_Next_Highest 4 > RX_Next + 1: t-Reassembly, trigger = RX_Next_Highest
    assert ue.state() == (2, 4, 2, 4) and ue.rx.reassembly_deadline == 35
    ue.send([4], now_ms=10)
    assert ue.state() == (2, 4, 2, 5) and ue.rx.reassembly_deadline == 35   # not restarted
    ue.rx.on_clock(34)
    assert ue.rx.reassembly_running and ue.status(34) is None
    ue.rx.on_clock(35)
    # 5.2.3.2.4: RX_Highest_Status = first SN >= trigger (4) not received = 5;
    # RX_Next_Highest (5) is not > 5 + 1: no restart
    assert ue.state() == (2, 4, 5, 5) and not ue.rx.reassembly_running
    octets = ue.rx.take_status(35)
    assert octets == encode_status(StatusPdu(5, (Nack(2),)), 12)
    assert ue.rx.take_status(36) is None              # one trigger, one STATUS
    ue.send([2], now_ms=40)                           # the retransmission
    assert ue.delivered == [0, 1, 2, 3, 4]
    assert ue.state() == (5, 4, 5, 5) and not ue.rx.status_triggered


def test_consecutive_missing_sns_are_one_nack_with_a_range():
    ue = Ue(12)
    ue.send([0, 1, 5, 6, 8, 9], now_ms=0)
    ue.rx.on_clock(35)
    # trigger was 6 (set when 5 arrived); first missing >= 6 is 7; RX_Next_Highest 10 > 8:
    # t-Reassembly restarts with trigger 10
    assert ue.state() == (2, 10, 7, 10) and ue.rx.reassembly_deadline == 70
    assert ue.status(35) == StatusPdu(7, (Nack(2, nack_range=3),))
    ue.rx.on_clock(70)
    assert ue.state() == (2, 10, 10, 10) and not ue.rx.reassembly_running
    assert ue.status(70) == StatusPdu(10, (Nack(2, nack_range=3), Nack(7)))


def test_runs_longer_than_255_are_split_and_the_window_edge_is_usable():
    """SN RX_Next + AM_Window_Size - 1 is the last one in the window; the
    trigger then equals RX_Next + AM_Window_Size, which does not stop
    t-Reassembly (5.2.3.2.3)."""
    ue = Ue(12)
    ue.send([2047], now_ms=0)
    assert ue.state() == (0, 2048, 0, 2048) and ue.rx.reassembly_running
    ue.send([2048, 3000, 4095], now_ms=1)               # outside the window: discarded
    assert ue.rx.outside_window == 3 and ue.rx.pdus_received == 4
    ue.rx.on_clock(35)
    status = ue.status(35)
    assert status.ack_sn == 2048
    assert [(n.sn, n.nack_range) for n in status.nacks] == \
        [(255 * i, 255) for i in range(8)] + [(2040, 7)]
    assert status.nacked_sns(12) == list(range(2047))


def test_window_edge_with_18_bit_sns():
    ue = Ue(18)
    ue.send([131071, 131072], now_ms=0)
    assert ue.rx.outside_window == 1 and ue.state() == (0, 131072, 0, 131072)
    ue.send([0], now_ms=1)
    assert ue.delivered == [0] and ue.state() == (1, 131072, 1, 131072)


def test_t_reassembly_restarts_while_more_is_missing_above():
    ue = Ue(12, t_reassembly_ms=35)
    ue.send([0, 2], now_ms=0)                          # trigger 3
    ue.send([3, 5], now_ms=10)
    ue.rx.on_clock(35)
    # first missing >= 3 is 4; RX_Next_Highest 6 > 4 + 1: restart, trigger 6
    assert ue.state() == (1, 6, 4, 6) and ue.rx.reassembly_deadline == 70
    assert ue.status(35) == StatusPdu(4, (Nack(1),))
    ue.rx.on_clock(69)
    assert ue.status(69) is None
    ue.rx.on_clock(70)
    assert ue.state() == (1, 6, 6, 6) and not ue.rx.reassembly_running
    assert ue.status(70) == StatusPdu(6, (Nack(1), Nack(4)))
    assert ue.rx.reassembly_expiries == 2


@pytest.mark.parametrize("fill", [[2, 3], [3, 2]])
def test_t_reassembly_stops_when_the_gap_fills_in_time(fill):
    ue = Ue(12)
    ue.send([0, 1, 4], now_ms=0)                       # trigger 5
    ue.send(fill[:1], now_ms=5)
    assert ue.rx.reassembly_running
    ue.send(fill[1:], now_ms=6)
    # RX_Next reached 5 = RX_Next_Status_Trigger: stopped
    assert ue.state()[0] == 5 and not ue.rx.reassembly_running
    ue.rx.on_clock(1000)
    assert not ue.rx.status_triggered and ue.rx.reassembly_expiries == 0
    assert ue.delivered == [0, 1, 2, 3, 4]


def test_t_reassembly_stops_when_rx_next_jumps_past_the_trigger():
    """The trigger then falls below the window (outside it and not
    RX_Next + AM_Window_Size): stopped."""
    ue = Ue(12)
    ue.send([0, 2], now_ms=0)                          # trigger 3
    ue.send([3, 4], now_ms=1)
    assert ue.rx.reassembly_running
    ue.send([1], now_ms=2)                             # RX_Next 1 -> 5
    assert ue.state() == (5, 3, 5, 5) and not ue.rx.reassembly_running


def test_t_reassembly_restarts_at_once_when_a_new_gap_remains():
    ue = Ue(12)
    ue.send([0, 2], now_ms=0)                          # trigger 3
    ue.send([4], now_ms=1)
    ue.send([1], now_ms=2)        # RX_Next 3 = trigger: stopped; 5 > 3 + 1: started again
    assert ue.state() == (3, 5, 3, 5) and ue.rx.reassembly_deadline == 37


def test_poll_in_an_in_sequence_pdu_triggers_at_once():
    ue = Ue(12)
    ue.send([0, 1, 2], poll_on={2})
    assert ue.rx.status_triggered and ue.rx.delayed_polls == []
    assert ue.status() == StatusPdu(3)
    assert ue.rx.polls == 1 and ue.rx.status_sent == 1


def test_poll_above_a_gap_is_delayed_until_rx_highest_status_passes_it():
    """5.3.4: x >= RX_Highest_Status: the trigger waits (NOTE 1, HARQ
    reordering) until x < RX_Highest_Status."""
    ue = Ue(12)
    ue.send([0, 2, 4, 5], poll_on={5})
    assert not ue.rx.status_triggered and ue.rx.delayed_polls == [5]
    ue.send([1])                                       # RX_Highest_Status 1 -> 3: 5 still above
    assert not ue.rx.status_triggered and ue.rx.delayed_polls == [5]
    ue.send([3])                                       # RX_Highest_Status 3 -> 6
    assert ue.rx.status_triggered and ue.rx.delayed_polls == []
    assert ue.status() == StatusPdu(6)
    assert ue.rx.reassembly_expiries == 0


def test_delayed_poll_released_by_t_reassembly_expiry():
    ue = Ue(12)
    ue.send([0, 2, 3], now_ms=0, poll_on={3})          # trigger 3 (set by 2)
    assert ue.rx.delayed_polls == [3]
    ue.rx.on_clock(35)                                 # RX_Highest_Status = 4 > 3
    assert ue.rx.delayed_polls == [] and ue.status(35) == StatusPdu(4, (Nack(1),))
    assert ue.rx.status_triggers == 2                  # the expiry and the released poll


def test_delayed_poll_stays_pending_across_a_partial_expiry():
    ue = Ue(12)
    ue.send([0, 2], now_ms=0)                          # trigger 3
    ue.send([4, 5], now_ms=1, poll_on={5})
    ue.rx.on_clock(35)                                 # RX_Highest_Status 3: 5 still waits
    assert ue.status(35) == StatusPdu(3, (Nack(1),)) and ue.rx.delayed_polls == [5]
    ue.rx.on_clock(70)                                 # RX_Highest_Status 6: released
    assert ue.rx.delayed_polls == [] and ue.status(70) == StatusPdu(6, (Nack(1), Nack(3)))


@pytest.mark.parametrize("sn,counter", [(0, "outside_window"), (3, "duplicates"),
                                        (3000, "outside_window")])
def test_poll_in_a_discarded_pdu_triggers_at_once(sn, counter):
    """An SN RX_Next passed, one in the buffer, one beyond the window."""
    ue = Ue(12)
    ue.send([0, 1, 3])                                 # RX_Next 2, 3 buffered
    ue.send([sn], poll_on={sn})
    assert getattr(ue.rx, counter) == 1
    assert ue.rx.status_triggered and ue.rx.delayed_polls == []
    assert ue.status() == StatusPdu(2)                 # nothing expired yet: ACK_SN = RX_Next
    assert ue.delivered == [0, 1]


def test_duplicates_are_discarded_and_never_delivered_twice():
    ue = Ue(12)
    ue.send([0, 2, 2, 0, 1, 2, 1])
    assert ue.delivered == [0, 1, 2]
    # 2 while buffered: duplicate; 0, 1, 2 after RX_Next passed them: outside the window
    assert ue.rx.duplicates == 1 and ue.rx.outside_window == 3
    assert ue.rx.pdus_received == 7 and ue.rx.delivered == 3


@pytest.mark.parametrize("sn_bits", [12, 18])
def test_sn_wrap_around(sn_bits):
    top = (1 << sn_bits) - 1
    ue = Ue(sn_bits, rx_next=top - 5)
    order = [top - 5, top - 4, top - 1, 1, 2, 4]       # missing top-3, top-2, top, 0, 3
    ue.send(order, now_ms=0)
    assert ue.delivered == [top - 5, top - 4]
    assert ue.rx.rx_next == top - 3 and ue.rx.rx_next_highest == 5
    ue.rx.on_clock(35)                  # trigger was top (set by top-1): first missing >= top is top
    assert ue.status(35) == StatusPdu(top, (Nack(top - 3, nack_range=2),))
    # restarted with trigger = RX_Next_Highest = 5, across the wrap
    assert ue.state() == (top - 3, 5, top, 5) and ue.rx.reassembly_running
    ue.rx.on_clock(70)
    assert ue.status(70) == StatusPdu(5, (Nack(top - 3, nack_range=2), Nack(top, nack_range=2),
                                          Nack(3)))
    ue.send([top - 3, top - 2, top, 0, 3], now_ms=80)
    assert ue.delivered == [top - 5, top - 4, top - 3, top - 2, top - 1, top, 0, 1, 2, 3, 4]
    assert ue.state() == (5, 5, 5, 5)
    # and SNs just below the new RX_Next (across the wrap) are old: outside the window
    ue.send([top, 4])
    assert ue.rx.outside_window == 2


def test_t_status_prohibit_holds_triggers_and_sends_one_status_at_expiry():
    ue = Ue(12, t_status_prohibit_ms=50)
    ue.send([0], now_ms=0, poll_on={0})
    assert ue.status(0) == StatusPdu(1)
    assert ue.rx.status_prohibit_deadline == 50
    ue.send([1], now_ms=10, poll_on={1})
    ue.send([2], now_ms=20, poll_on={2})
    assert ue.rx.status_triggered and ue.status(20) is None
    ue.rx.on_clock(49)
    assert ue.status(49) is None
    ue.send([3], now_ms=49)
    ue.rx.on_clock(50)
    assert ue.status(50) == StatusPdu(4)               # built at sending time
    assert ue.status(50) is None                       # one STATUS for the three triggers
    assert ue.rx.status_prohibit_deadline == 100 and ue.rx.status_sent == 2


def test_no_t_status_prohibit_by_default():
    ue = Ue(12)
    ue.send([0], poll_on={0})
    assert ue.status() == StatusPdu(1) and not ue.rx.status_prohibit_running
    ue.send([1], poll_on={1})
    assert ue.status() == StatusPdu(2)


def test_status_size_limit_lowers_ack_sn_to_the_first_sn_left_out():
    ue = Ue(12)
    ue.send([0, 2, 4, 10, 12])                         # missing 1, 3, 5..9, 11
    ue.rx.on_clock(35)
    ue.rx.on_clock(70)
    assert ue.rx.rx_highest_status == 13
    full = ue.rx.build_status()
    assert full == StatusPdu(13, (Nack(1), Nack(3), Nack(5, nack_range=5), Nack(11)))
    assert ue.rx.build_status(3) == StatusPdu(1)
    assert ue.rx.build_status(3 + 2) == StatusPdu(3, (Nack(1),))
    assert ue.rx.build_status(3 + 2 + 2) == StatusPdu(5, (Nack(1), Nack(3)))
    # the range NACK takes 3 octets; with 2 left, 5 is NACKed alone and ACK_SN is 6
    assert ue.rx.build_status(3 + 2 + 2 + 2) == StatusPdu(6, (Nack(1), Nack(3), Nack(5)))
    # 11 left out: ACK_SN 11 (10 was received)
    assert ue.rx.build_status(3 + 2 + 2 + 3) == \
        StatusPdu(11, (Nack(1), Nack(3), Nack(5, nack_range=5)))
    assert ue.rx.build_status(3 + 2 + 2 + 3 + 2) == full
    with pytest.raises(ValueError):
        ue.rx.build_status(2)
    bounded = Ue(12, status_max_bytes=5)
    bounded.send([0, 2, 4])
    bounded.rx.on_clock(35)
    assert len(bounded.rx.take_status(35)) == 5


def test_status_size_limit_with_18_bit_sns():
    ue = Ue(18)
    ue.send([0, 3, 5])                                 # missing 1, 2, 4
    ue.rx.on_clock(35)
    ue.rx.on_clock(70)
    assert ue.rx.build_status() == StatusPdu(6, (Nack(1, nack_range=2), Nack(4)))
    assert ue.rx.build_status(3 + 3) == StatusPdu(2, (Nack(1),))
    assert ue.rx.build_status(3 + 4) == StatusPdu(4, (Nack(1, nack_range=2),))


def test_segments_control_pdus_and_short_pdus_are_counted_and_dropped():
    ue = Ue(12)
    for si in (1, 2, 3):
        ue.rx.receive_pdu(amd_pdu(0, 12, si=si, poll=True), 0)
    ue.rx.receive_pdu(amd_pdu(0, 12, dc=0), 0)
    ue.rx.receive_pdu(b"", 0)
    ue.rx.receive_pdu(amd_pdu(0, 12, payload=b""), 0)
    ue18 = Ue(18)
    ue18.rx.receive_pdu(amd_pdu(0, 18)[:3], 0)
    assert (ue.rx.segments_discarded, ue.rx.control_discarded, ue.rx.truncated) == (3, 1, 2)
    assert ue18.rx.truncated == 1
    assert ue.state() == (0, 0, 0, 0) and not ue.rx.status_triggered and ue.delivered == []


def test_reserved_bits_of_an_18_bit_header_are_ignored():
    ue = Ue(18)
    pdu = bytearray(amd_pdu(0, 18))
    pdu[0] |= 0x0C
    ue.rx.receive_pdu(bytes(pdu), 0)
    assert ue.delivered == [0]


def test_out_of_order_delivery_as_5_2_3_2_3_says():
    ue = Ue(12, in_order=False)
    ue.send([0, 2, 3, 2])
    assert ue.delivered == [0, 2, 3] and ue.rx.duplicates == 1
    ue.send([1])
    assert ue.delivered == [0, 2, 3, 1] and ue.state()[0] == 4 and ue.rx.buffer == {}


@pytest.mark.parametrize("sn_bits,start", [(12, 0), (12, 4000), (18, 262000)])
def test_random_loss_and_retransmission_deliver_everything_once_in_order(sn_bits, start):
    """A sender model: new PDUs with random loss, and on each STATUS the
    NACKed SNs again (also lossy), with a poll on the last new PDU and on
    a timer: in the end every SDU is delivered exactly once, in order,
    and every STATUS NACKs only SNs really missing."""
    generator = random.Random(sn_bits + start)
    mask = (1 << sn_bits) - 1
    ue = Ue(sn_bits, rx_next=start, t_reassembly_ms=20, t_status_prohibit_ms=5)
    total = 3000
    sent = [(start + i) & mask for i in range(total)]
    acked_up_to = 0                                    # count of SNs below ACK_SN
    now = 0
    position = 0
    while acked_up_to < total and now < 100_000:
        now += 1
        for _ in range(generator.randrange(0, 4)):
            if position < total:
                sn = sent[position]
                position += 1
                if generator.random() > 0.1:
                    ue.rx.receive_pdu(amd_pdu(sn, sn_bits, poll=position == total), now)
        if position == total and now % 50 == 0 and generator.random() > 0.1:
            ue.rx.receive_pdu(amd_pdu(sent[-1], sn_bits, poll=True), now)   # t-PollRetransmit
        ue.rx.on_clock(now)
        octets = ue.rx.take_status(now)
        if octets is None:
            continue
        status = decode_status(octets, sn_bits)
        received = set(ue.delivered) | set(ue.rx.buffer)
        for sn in status.nacked_sns(sn_bits):
            assert sn not in received
        acked_up_to = (status.ack_sn - start) & mask
        for sn in status.nacked_sns(sn_bits):
            if generator.random() > 0.1:
                ue.rx.receive_pdu(amd_pdu(sn, sn_bits), now)
    assert acked_up_to == total, f"stalled at {acked_up_to} of {total} after {now} ms"
    assert ue.delivered == sent
