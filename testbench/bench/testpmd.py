"""The reference: dpdk-testpmd --forward-mode=macswap with one forwarding
lcore, rate read from its periodic port statistics."""

import re
import shutil
import statistics
from pathlib import Path

from testbench.bench.dpdk import BenchError, Eal, run_interrupted
from testbench.bench.sample import Sample

WARMUP_PERIODS = 2  # the first report shows zero, the second a partial second
STEADY_PERIODS = 4  # one-second periods whose median is the result
DEADLINE_S = 30     # startup (mempool in hugepages) plus the periods, generously

_PERIOD_HEADER = "Port statistics ===="
_RX_PPS = re.compile(r"Rx-pps:\s+(\d+)")


def forwarding_rates_pps(output: str) -> list[float]:
    """Packets received per second, summed over all ports, one value per
    statistics period (each received packet is also sent: macswap)."""
    periods = output.split(_PERIOD_HEADER)[1:]
    return [float(sum(int(v) for v in _RX_PPS.findall(period))) for period in periods]


def measure_testpmd(forwarding_lcore: int, control_lcore: int, vdevs: tuple[str, ...],
                    tsc_hz: float, log_path: Path, total_mbufs: int | None = None) -> Sample:
    """`total_mbufs`: testpmd's pool size, for a vdev that keeps mbufs of
    its own (net_pcap's replay holds its whole pcap)."""
    binary = shutil.which("dpdk-testpmd")
    if binary is None:
        raise BenchError("dpdk-testpmd not found (apt package 'dpdk'; run make setup)")
    eal = Eal(lcores=f"{control_lcore},{forwarding_lcore}", main_lcore=control_lcore, vdevs=vdevs)
    command = [binary, *eal.args(), "--", "--forward-mode=macswap", "--nb-cores=1",
               "--stats-period", "1"]
    if total_mbufs is not None:
        command.append(f"--total-num-mbufs={total_mbufs}")
    def enough_periods(output: str) -> bool:
        return len(forwarding_rates_pps(output)) >= WARMUP_PERIODS + STEADY_PERIODS

    finished = run_interrupted(command, log_path, enough_periods, DEADLINE_S)
    steady = forwarding_rates_pps(finished.output)[WARMUP_PERIODS:]
    if not steady or max(steady) == 0:
        raise BenchError(f"testpmd reported no forwarding rate (log: {log_path})")
    pps = statistics.median(steady)
    return Sample(pps=pps, cycles_per_packet=tsc_hz / pps, command=finished.command_line,
                  detail={"periods_used": len(steady)})
