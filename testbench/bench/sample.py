"""One run of one workload, and the median over repeated runs."""

import statistics
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sample:
    pps: float                      # packets forwarded per second, all ports
    cycles_per_packet: float        # TSC cycles of the one forwarding lcore
    command: str
    detail: dict = field(default_factory=dict)


@dataclass
class Measurement:
    name: str
    description: str
    samples: list[Sample]
    baseline: str | None = None     # name of the measurement this one is compared with
    skipped: str | None = None      # why it was not measured

    @property
    def median_pps(self) -> float | None:
        return statistics.median(s.pps for s in self.samples) if self.samples else None

    @property
    def mpps(self) -> float | None:
        pps = self.median_pps
        return None if pps is None else pps / 1e6

    def cycles_per_packet(self, tsc_hz: float) -> float | None:
        pps = self.median_pps
        return None if pps is None else tsc_hz / pps
