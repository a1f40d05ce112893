"""What the radio side and the buffering service received, checked frame by
frame against what was sent (traffic.py numbers every frame):

* every sent frame came out on the radio side exactly once (lost, duplicated);
* per DRB, in output order, PDCP and RLC SNs go up by one (mod 2^18) from
  where the DRB stood, and the frames come out in the order they were sent;
* every radio frame is the expected radio frame of its sent frame, byte
  for byte, its RLC poll bit included (RadioFrames.poll). Building each
  with scapy takes too long at tens of thousands of frames, so RadioFrames
  patches one frames.py-built frame per output frame; every
  BYTES_CHECK_EVERY-th frame is also compared with the one frames.py
  builds for it, which keeps the patching honest;
* the buffering service got the same frames (RLC AM copies).

With `restart_from` (a NIC restart during the run) the first frame of each
DRB from that position on is where the SNs the restarted NIC holds show:
a NIC that keeps its SN registers in a registers file numbers on where the
killed one stopped, so the DRB's SNs continue, or skip the SNs the killed
NIC gave frames that died inside it (`restart_gaps`: per DRB, the SNs
skipped and its last frame out before the restart; they count in `sn_gaps`
and `skipped_sns` too, for the caller to explain by the frames lost in the
killed process). A DRB numbered from (0, 0) again there (a NIC whose
registers died with it) is counted in `sn_restarts`, not as a gap.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from scapy.layers.l2 import Ether

from testbench.gnb.frames import POLL_BYTE_DEFAULT, POLL_PDU_DEFAULT, SN18_MODULUS
from testbench.gnb.layers import BearerShim, Pdcp18, RlcAmData18, SdapDl
from testbench.topology.traffic import (DownlinkFrames, downlink_packet, frame_index_of,
                                        inner_packet)

MAX_LISTED = 10     # problems listed per kind; all are counted
BYTES_CHECK_EVERY = 16


@dataclass
class SnCheck:
    sent: int
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    unknown_frames: int = 0          # not a radio frame of a sent frame
    wrong_bytes: int = 0             # not the expected radio frame
    sn_gaps: int = 0                 # a DRB's next SN was not previous + 1 (gap or duplicate SN)
    skipped_sns: int = 0             # SNs the gaps skipped: frames numbered, then lost on the way
    repeated_sns: int = 0            # a DRB's SN went backwards: numbered twice, never explained
    reordered: int = 0               # a DRB's frame came out before an earlier-sent one
    baas_mismatch: int = 0           # radio frames without their BaaS copy, or the reverse
    sn_restarts: int = 0             # DRBs numbered from (0, 0) again after a NIC restart
    drbs_seen: int = 0
    # after a NIC restart: DRB -> (SNs its first frame out of the restarted
    # NIC skipped, the frame index of its last frame out before, or -1)
    restart_gaps: dict[int, tuple[int, int]] = field(default_factory=dict)
    drbs_after_restart: int = 0      # DRBs with a frame out of the restarted NIC
    missing: list[int] = field(default_factory=list)         # indices of the lost frames
    baas_unpaired: list[int] = field(default_factory=list)   # indices of frames on one side only
    next_sns: dict[int, tuple[int, int]] = field(default_factory=dict)   # DRB -> (pdcp, rlc)
    # RadioFrames.read of each radio frame, by position (None: not a
    # radio frame of a generated DRB)
    radio_read: list[tuple[int, int, int, int] | None] = field(default_factory=list, repr=False)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.unknown_frames or self.wrong_bytes
                    or self.sn_gaps or self.reordered or self.baas_mismatch)

    def summary(self) -> dict:
        return {key: getattr(self, key) for key in
                ("sent", "received", "lost", "duplicated", "unknown_frames", "wrong_bytes",
                 "sn_gaps", "skipped_sns", "repeated_sns", "reordered", "baas_mismatch",
                 "sn_restarts", "drbs_seen")} | {
            "sns_skipped_at_restart": sum(s for s, _ in self.restart_gaps.values()),
            "ok": self.ok}

    def _problem(self, text: str):
        if len(self.problems) < MAX_LISTED * 6:
            self.problems.append(text)


class RadioFrames:
    """Reads (DRB, PDCP SN, RLC SN, frame index) from a downlink radio frame
    of a generated DRB (RLC AM, 18-bit SNs) and builds the frame those
    values must give, from one template; offsets from testbench/gnb/layers.py.

    The RLC poll bit (TS 38.322 5.3.3.2; docs/wire-format.md, RLC poll bit)
    follows from the RLC SN: a generated DRB runs with the default poll
    configuration (nothing writes rlc_poll_config), all its PDUs carry RLC
    SDUs of one size, and its poll counters start at 0 with its RLC SN (a
    new registers file; a NIC restart keeps both or loses both, and every
    PDU that takes an SN, lost later or not, counts). So the transmitter
    polls on every `poll_every`-th PDU, the first of the PDU and byte
    triggers to fire, and the PDU with RLC SN s carries P = 1 exactly when
    (s + 1) is a multiple of it: poll_every divides 2^18, so this holds
    across the SN's wrap."""

    SN_MASK = SN18_MODULUS - 1
    POLL_BIT = 0x40            # the second bit of the RLC AMD PDU header

    def __init__(self):
        self.template = bytes(downlink_packet(0, 0).radio_frame(0, 0))
        self.shim_at = len(Ether(dst="ff:ff:ff:ff:ff:ff"))
        self.rlc_at = self.shim_at + len(BearerShim())
        self.pdcp_at = self.rlc_at + len(RlcAmData18())
        self.inner_at = self.pdcp_at + len(Pdcp18()) + len(SdapDl())
        sdu_length = len(self.template) - self.pdcp_at
        assert sdu_length == downlink_packet(0, 0).rlc_sdu_length
        self.poll_every = min(POLL_PDU_DEFAULT, -(-POLL_BYTE_DEFAULT // sdu_length))
        assert SN18_MODULUS % self.poll_every == 0, \
            f"a poll every {self.poll_every} PDUs does not follow the RLC SN across its wrap"

    def poll(self, rlc_sn: int) -> int:
        """The poll bit of a generated DRB's PDU with this RLC SN."""
        return int((rlc_sn + 1) % self.poll_every == 0)

    def _sn(self, frame: bytes, at: int) -> int:
        return int.from_bytes(frame[at:at + 3], "big") & self.SN_MASK

    def read(self, frame: bytes) -> tuple[int, int, int, int] | None:
        if len(frame) != len(self.template):
            return None
        index = frame_index_of(frame[self.inner_at:])
        if index is None:
            return None
        drb = int.from_bytes(frame[self.shim_at:self.shim_at + 2], "big")
        return drb, self._sn(frame, self.pdcp_at), self._sn(frame, self.rlc_at), index

    def build(self, drb: int, pdcp_sn: int, rlc_sn: int, index: int) -> bytes:
        frame = bytearray(self.template)
        frame[0:6] = (0x020000000000 | drb).to_bytes(6, "big")       # the DRB's UE MAC
        frame[self.shim_at:self.shim_at + 2] = drb.to_bytes(2, "big")  # ue_id = DRB index
        for at, sn in ((self.rlc_at, rlc_sn), (self.pdcp_at, pdcp_sn)):
            flags = frame[at] & ~(self.SN_MASK >> 16)
            frame[at:at + 3] = ((flags << 16) | sn).to_bytes(3, "big")
        if self.poll(rlc_sn):
            frame[self.rlc_at] |= self.POLL_BIT
        frame[self.inner_at:] = inner_packet(index)
        return bytes(frame)


def check_downlink(frames: DownlinkFrames, sent: int, radio: list[bytes], baas: list[bytes],
                   start_sns: dict[int, tuple[int, int]] | None = None,
                   restart_from: int | None = None) -> SnCheck:
    """start_sns: each DRB's (PDCP, RLC) SN before the run (default 0, 0);
    restart_from: the position in `radio` of the first frame out of a
    restarted NIC."""
    check = SnCheck(sent=sent, received=len(radio))
    next_sns = dict(start_sns or {})
    restarted: set[int] = set()
    last_index: dict[int, int] = {}
    seen: Counter[int] = Counter()
    model = RadioFrames()
    for position, frame in enumerate(radio):
        fields = model.read(frame)
        check.radio_read.append(fields)
        if fields is None or fields[3] >= sent or frames.drb_of(fields[3]) != fields[0]:
            check.unknown_frames += 1
            check._problem(f"radio frame {position} is no radio frame of a sent frame: "
                           f"{frame[:48].hex()}")
            continue
        drb, pdcp_sn, rlc_sn, index = fields
        seen[index] += 1
        if seen[index] > 1:
            check.duplicated += 1
            check._problem(f"frame {index} (DRB {drb}) came out again at position {position}")
            continue
        expected_pdcp, expected_rlc = next_sns.get(drb, (0, 0))
        first_after_restart = restart_from is not None and position >= restart_from \
            and drb not in restarted
        if first_after_restart:
            restarted.add(drb)
            if (pdcp_sn, rlc_sn) == (0, 0) != (expected_pdcp, expected_rlc):
                check.sn_restarts += 1
                expected_pdcp, expected_rlc = 0, 0
        if (pdcp_sn, rlc_sn) != (expected_pdcp, expected_rlc):
            check.sn_gaps += 1
            skipped = (pdcp_sn - expected_pdcp) % SN18_MODULUS
            if skipped == (rlc_sn - expected_rlc) % SN18_MODULUS and skipped < SN18_MODULUS // 2:
                check.skipped_sns += skipped
                if first_after_restart:
                    check.restart_gaps[drb] = (skipped, last_index.get(drb, -1))
            else:
                check.repeated_sns += 1
            check._problem(f"DRB {drb}: frame {index} has PDCP SN {pdcp_sn}, RLC SN {rlc_sn}; "
                           f"expected {expected_pdcp}, {expected_rlc}")
        if last_index.get(drb, -1) > index:
            check.reordered += 1
            check._problem(f"DRB {drb}: frame {index} came out after frame {last_index[drb]}")
        last_index[drb] = max(index, last_index.get(drb, -1))
        next_sns[drb] = ((pdcp_sn + 1) % SN18_MODULUS, (rlc_sn + 1) % SN18_MODULUS)
        expected = model.build(drb, pdcp_sn, rlc_sn, index)
        if position % BYTES_CHECK_EVERY == 0:
            reference = downlink_packet(drb, index).radio_frame(pdcp_sn, rlc_sn,
                                                                 model.poll(rlc_sn))
            assert expected == reference, \
                f"RadioFrames disagrees with frames.py:\n{expected.hex()}\n{reference.hex()}"
        if frame != expected:
            check.wrong_bytes += 1
            check._problem(f"frame {index} (DRB {drb}): radio frame differs from the expected "
                           f"one:\n  got      {frame.hex()}\n  expected {expected.hex()}")
    missing = [index for index in range(sent) if index not in seen]
    check.missing = missing
    check.lost = len(missing)
    if missing:
        check._problem(f"{len(missing)} sent frames never came out, e.g. {missing[:MAX_LISTED]}")
    difference = (Counter(radio) - Counter(baas)) + (Counter(baas) - Counter(radio))
    check.baas_mismatch = sum(difference.values())
    check.baas_unpaired = sorted(fields[3] for fields in map(model.read, difference.elements())
                                 if fields is not None)
    if check.baas_mismatch:
        check._problem(f"{check.baas_mismatch} frames on one of radio / BaaS without their copy "
                       f"on the other ({len(radio)} radio, {len(baas)} BaaS)")
    check.drbs_seen = len(last_index)
    check.drbs_after_restart = len(restarted)
    check.next_sns = next_sns
    return check
