"""The lossy radio link between the gNB and the UE emulator: a seeded
Bernoulli drop of a share of the frames in each direction.

Each direction has its own pseudo-random stream, seeded from the seed:
the downlink draws one number per downlink radio frame the emulator
receives (first transmissions and retransmissions alike, in arrival
order) and drops the frame when it is below `loss`; the uplink does the
same per STATUS frame with `uplink_loss`. Two runs that see the same
frames in the same order drop the same ones, and the number of STATUS
frames sent never changes which downlink frames are dropped.
"""
from __future__ import annotations

import random


def downlink_stream(seed: int) -> random.Random:
    """The downlink's stream: Random(seed). A test predicts the drops with
    `stream.random() < loss` per frame, in arrival order."""
    return random.Random(seed)


def uplink_stream(seed: int) -> random.Random:
    return random.Random(f"{seed}/uplink")


class LossyLink:
    def __init__(self, loss: float = 0.0, seed: int = 0, uplink_loss: float = 0.0):
        for name, share in (("loss", loss), ("uplink_loss", uplink_loss)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"{name} is a share of frames, 0..1, not {share}")
        self.loss = loss
        self.uplink_loss = uplink_loss
        self.seed = seed
        self._downlink = downlink_stream(seed).random
        self._uplink = uplink_stream(seed).random
        self.downlink_frames = 0
        self.downlink_dropped = 0
        self.uplink_frames = 0
        self.uplink_dropped = 0

    def drop_downlink(self) -> bool:
        """Whether the next downlink frame is lost."""
        self.downlink_frames += 1
        if self._downlink() < self.loss:
            self.downlink_dropped += 1
            return True
        return False

    def drop_uplink(self) -> bool:
        """Whether the next uplink (STATUS) frame is lost."""
        self.uplink_frames += 1
        if self.uplink_loss and self._uplink() < self.uplink_loss:
            self.uplink_dropped += 1
            return True
        return False

    def counters(self) -> dict:
        return {"loss": self.loss, "uplink_loss": self.uplink_loss, "seed": self.seed,
                "downlink_frames": self.downlink_frames,
                "downlink_dropped": self.downlink_dropped,
                "uplink_frames": self.uplink_frames, "uplink_dropped": self.uplink_dropped}
