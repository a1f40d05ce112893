"""The buffering service's benchmark traffic: one pcap that the BaaS's
--rx-replay feeds into a net_null port round and round, the mix a BaaS
attachment carries when the gNB's downlink is the gNB steps' (one 128-byte
frame per DRB in turn, every DRB in RLC AM with 18-bit SNs as
testbench/topology/traffic.py generated_drb sets them up).

One cycle of the pcap, for D DRBs (ue_id = DRB index, lcid 4) in one
shuffled order P (the same each round, as the gNB steps' pcap replays):

  rounds r = 0 .. N-1: the AMD PDU copy with SN r of every DRB, in order P;
      the last round's PDU carries the poll bit (what the UE's STATUS
      answers, TS 38.322 5.3.3.2);
  the STATUS PDU of DRB P[i] (ACK_SN = N: everything acknowledged) comes
      `status_lag` positions after that DRB's last PDU, interleaved with
      the last round's PDUs of other DRBs (a radio round trip later; the
      DRB's state has left the cache meanwhile);
  with NACKs: for `nack_drbs` of the D DRBs (1% of the STATUS PDUs), that
      STATUS NACKs one SN (the BaaS retransmits it on the port, where
      net_null discards it), and a second STATUS acknowledging everything
      follows `full_ack_lag` positions later;
  the STATUS PDUs still due at the end of the last round close the cycle.

So every DRB holds nothing when a cycle ends, and its next cycle starts at
SN 0 again: the BaaS restarts a DRB's transmitting window when it holds
nothing (baas/src/drb.c baas_drb_pdu), so the replay runs round and round
with every PDU acknowledged and nothing dropped, from the very first frame
(no STATUS arrives before its DRB's first copy). Per cycle the BaaS
receives D * N AMD PDUs and D + nack_drbs STATUS PDUs, acknowledges
D * N PDUs and retransmits nack_drbs.

Frames are made by patching a few templates (scapy builds the templates
only: a cycle over 65,536 DRBs is about 200,000 frames) and written as a
plain pcap."""

from __future__ import annotations

import random
import struct
from dataclasses import asdict, dataclass
from pathlib import Path

from scapy.layers.l2 import Ether
from scapy.packet import Raw

from testbench.gnb.layers import BearerShim, NackSn18, Pdcp18, RlcAmData18, RlcStatus18, SdapDl

FRAME_BYTES = 128           # an AMD PDU copy: Ethernet through payload, as the gNB steps' frames
LCID = 4
SN_BITS = 18
QFI = 9
GNB_MAC = "02:00:00:00:01:01"     # the target's side of the attachment
DU_MAC = "02:00:00:00:02:02"
SHIM_FLAGS = 0x01 | 0x02 | 0x04   # RLC AM, 18-bit RLC SN, 18-bit PDCP SN
_UE_ID = slice(14, 16)            # in the bearer shim, both kinds of frame


@dataclass(frozen=True)
class Mix:
    n_drbs: int = 65_536
    # N: AMD PDUs per DRB per cycle, one STATUS acknowledges them. 4 is
    # TS 38.331's most frequent polling (PollPDU p4), 16 times the
    # STATUS load of the pipeline's default (pollPDU 64): the BaaS's
    # dearest frame is the STATUS PDU, so the bench errs on its side
    pdus_per_status: int = 4
    status_lag: int = 8_192           # positions between a DRB's last PDU and its STATUS
    nack_drbs: int = 0                # DRBs whose STATUS NACKs one SN, each cycle
    full_ack_lag: int = 4_096         # positions between a NACK and the STATUS acknowledging all
    seed: int = 1

    def __post_init__(self):
        if not 1 <= self.n_drbs <= 65_536:
            raise ValueError("n_drbs must be 1..65536 (ue_id is 16 bits)")
        if not 1 <= self.pdus_per_status <= 1 << 16:
            raise ValueError("pdus_per_status must be 1..65536")
        if not 0 <= self.nack_drbs <= self.n_drbs:
            raise ValueError("nack_drbs must be 0..n_drbs")
        if self.status_lag < 0 or self.full_ack_lag < 1:
            raise ValueError("status_lag must be >= 0 and full_ack_lag >= 1")

    @property
    def name(self) -> str:
        nacks = f"_nack{self.nack_drbs}lag{self.full_ack_lag}" if self.nack_drbs else ""
        return (f"baas_{self.n_drbs}drbs_{self.pdus_per_status}per_status_lag{self.status_lag}"
                f"{nacks}_seed{self.seed}")


@dataclass(frozen=True)
class Cycle:
    """What one pass over the pcap makes the BaaS do."""
    frames: int
    amd_pdus: int
    status_pdus: int
    nacks: int
    peak_held: int          # most PDUs held at once (the BaaS's --max-pdus must allow it)

    def as_json(self) -> dict:
        return asdict(self)


def amd_frame(ue_id: int, sn: int, poll: bool = False) -> bytes:
    """An AMD PDU copy as the pipeline sends it, FRAME_BYTES long."""
    headers = (Ether(dst=DU_MAC, src=GNB_MAC, type=0x88B5)
               / BearerShim(ue_id=ue_id, lcid=LCID, flags=SHIM_FLAGS)
               / RlcAmData18(sn=sn, poll=int(poll)) / Pdcp18(sn=sn) / SdapDl(qfi=QFI))
    return bytes(headers / Raw(bytes(FRAME_BYTES - len(headers))))


def status_frame(ue_id: int, ack_sn: int, nack_sn: int | None = None) -> bytes:
    """An uplink STATUS PDU: ACK_SN, and at most one NACK_SN."""
    nacks = [NackSn18(nack_sn=nack_sn)] if nack_sn is not None else []
    return bytes(Ether(dst=GNB_MAC, src=DU_MAC, type=0x88B5)
                 / BearerShim(ue_id=ue_id, lcid=LCID, flags=SHIM_FLAGS)
                 / RlcStatus18(ack_sn=ack_sn, e1=int(bool(nacks)), nacks=nacks))


def _with_ue(template: bytes, ue_id: int) -> bytes:
    return template[:_UE_ID.start] + ue_id.to_bytes(2, "big") + template[_UE_ID.stop:]


# event kinds, in their order at one position
_AMD, _STATUS, _FULL_ACK = 0, 1, 2


def _events(mix: Mix) -> list[tuple[int, int, int, int]]:
    """(position, kind, drb, sn or NACK_SN or -1), in the cycle's order."""
    d, n = mix.n_drbs, mix.pdus_per_status
    rng = random.Random(mix.seed)
    order = list(range(d))
    rng.shuffle(order)
    nacked = {drb: rng.randrange(n) for drb in rng.sample(range(d), mix.nack_drbs)}
    events = []
    for r in range(n):
        for i, drb in enumerate(order):
            events.append((r * d + i, _AMD, drb, r))
    last_round = (n - 1) * d
    for i, drb in enumerate(order):
        at = last_round + i + mix.status_lag
        events.append((at, _STATUS, drb, nacked.get(drb, -1)))
        if drb in nacked:
            events.append((at + mix.full_ack_lag, _FULL_ACK, drb, -1))
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def cycle_of(mix: Mix) -> Cycle:
    events = _events(mix)
    held = [0] * mix.n_drbs
    total = peak = 0
    for _, kind, drb, nack in events:
        if kind == _AMD:
            held[drb] += 1
            total += 1
        else:
            keep = 1 if kind == _STATUS and nack >= 0 else 0
            total -= held[drb] - keep
            held[drb] = keep
        peak = max(peak, total)
    assert total == 0, "a cycle must end with nothing held"
    return Cycle(frames=len(events), amd_pdus=mix.n_drbs * mix.pdus_per_status,
                 status_pdus=mix.n_drbs + mix.nack_drbs, nacks=mix.nack_drbs, peak_held=peak)


def _write_pcap(path: Path, frames) -> None:
    """A classic pcap (microsecond timestamps, Ethernet), written directly:
    scapy's writer takes seconds for 200,000 frames."""
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for k, frame in enumerate(frames):
            f.write(struct.pack("<IIII", k // 1_000_000, k % 1_000_000, len(frame), len(frame)))
            f.write(frame)
    partial.rename(path)


def workload_pcap(directory: Path, mix: Mix) -> tuple[Path, Cycle]:
    """The pcap of one cycle of MIX in DIRECTORY (reused when it exists:
    the content is deterministic) and what the cycle holds."""
    path = directory / f"{mix.name}.pcap"
    cycle = cycle_of(mix)
    if path.exists():
        return path, cycle
    n = mix.pdus_per_status
    amd = [amd_frame(0, sn, poll=sn == n - 1) for sn in range(n)]
    ack_all = status_frame(0, ack_sn=n)
    with_nack = [status_frame(0, ack_sn=n, nack_sn=sn) for sn in range(n)]

    def frames():
        for _, kind, drb, arg in _events(mix):
            if kind == _AMD:
                yield _with_ue(amd[arg], drb)
            elif kind == _STATUS and arg >= 0:
                yield _with_ue(with_nack[arg], drb)
            else:
                yield _with_ue(ack_all, drb)
    directory.mkdir(parents=True, exist_ok=True)
    _write_pcap(path, frames())
    return path, cycle
