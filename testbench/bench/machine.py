"""What the numbers were measured on, and the TSC rate that turns packet
rates into cycles per packet."""

import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Machine:
    cpu_model: str
    online_cpus: int
    tsc_hz: float
    tsc_hz_source: str
    kernel: str
    dpdk_version: str
    hugepages_total: int
    hugepages_free: int

    def as_json(self) -> dict:
        return asdict(self)


def _cpuinfo() -> str:
    with open("/proc/cpuinfo") as f:
        return f.read()


def _meminfo_value(key: str) -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _tsc_hz() -> tuple[float, str]:
    """The kernel's calibrated TSC rate when it is available: /proc/cpuinfo
    'cpu MHz' is the current core clock, which differs from the TSC on
    machines with frequency scaling."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        log = ""
    for pattern, source in ((r"Refined TSC clocksource calibration: ([\d.]+) MHz", "kernel: refined TSC calibration"),
                            (r"tsc: Detected ([\d.]+) MHz processor", "kernel: detected TSC")):
        found = re.findall(pattern, log)
        if found:
            return float(found[-1]) * 1e6, source
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", _cpuinfo(), re.M)
    if mhz:
        return float(mhz.group(1)) * 1e6, "/proc/cpuinfo cpu MHz"
    raise RuntimeError("cannot determine the TSC frequency (no dmesg access, no 'cpu MHz' in /proc/cpuinfo)")


def _dpdk_version() -> str:
    try:
        return subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def describe_machine() -> Machine:
    model = re.search(r"^model name\s*:\s*(.+)$", _cpuinfo(), re.M)
    tsc_hz, tsc_source = _tsc_hz()
    return Machine(
        cpu_model=model.group(1).strip() if model else platform.processor(),
        online_cpus=os.cpu_count() or 0,
        tsc_hz=tsc_hz,
        tsc_hz_source=tsc_source,
        kernel=platform.release(),
        dpdk_version=_dpdk_version(),
        hugepages_total=_meminfo_value("HugePages_Total"),
        hugepages_free=_meminfo_value("HugePages_Free"),
    )
