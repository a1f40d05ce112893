"""What the machine says about power, and what the kernel says about the
polling threads' CPU time.

Meters are detected once, at start, under a sysfs root (default /sys; the
tests give a faked tree):

| source | files | unit |
|---|---|---|
| `rapl` | every powercap zone with an `energy_uj` (`/sys/class/powercap/intel-rapl:N[:M]`, AMD's too), named by its `name` (package-0, core, dram, psys) | cumulative µJ, wrapping at `max_energy_range_uj` |
| `acpi_power_meter` | the hwmon device whose `name` is `power_meter` (the ACPI 4.0 power meter, paper 000's source): `power1_average`, else `power1_input` | µW |
| `hwmon` | any other hwmon device's `powerN_average` / `powerN_input` (µW) and `energyN_input` (µJ) | |

An energy counter gives watts from two readings (the window between
them); a power file gives watts at once (the meter's own averaging). A
file that exists but cannot be read (energy_uj is root-only since Linux
5.10) stays listed with a note instead of watts.

CPU time (`thread_cpu`) is always available: per thread,
`/proc/PID/task/TID/schedstat` (ns on a CPU, ns waiting for one,
timeslices) and `/proc/PID/task/TID/stat` (utime, stime in clock ticks,
the CPU it last ran on). A kernel without schedstat gets run_ns from
utime + stime."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

METER_SOURCES = ("rapl", "acpi_power_meter", "hwmon")
SOURCES = (*METER_SOURCES, "model", "cpu_time")


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


@dataclass
class Meter:
    """One file that tells power: `kind` "energy_uj" (a cumulative µJ
    counter) or "power_uw" (µW now)."""
    source: str
    name: str
    path: Path
    kind: str
    max_range_uj: int | None = None

    def read(self) -> int:
        """The file's integer (µJ or µW); OSError or ValueError when it cannot."""
        return int(self.path.read_text().strip())


@dataclass
class Reading:
    source: str
    name: str
    path: str
    watts: float | None = None
    energy_uj: int | None = None
    window_s: float = 0.0
    note: str = ""


def _powercap_meters(sys_root: Path) -> list[Meter]:
    meters = []
    base = sys_root / "class" / "powercap"
    for zone in sorted(base.glob("*")) if base.is_dir() else ():
        energy = zone / "energy_uj"
        if not energy.exists():
            continue           # a control type (intel-rapl), or a zone without a counter
        label = _read_text(zone / "name") or zone.name
        max_range = _read_text(zone / "max_energy_range_uj")
        meters.append(Meter("rapl", f"{zone.name} {label}", energy, "energy_uj",
                            int(max_range) if max_range and max_range.isdigit() else None))
    return meters


_HWMON_FILE = re.compile(r"^(power|energy)(\d+)_(average|input)$")


def _hwmon_meters(sys_root: Path) -> list[Meter]:
    meters = []
    base = sys_root / "class" / "hwmon"
    for device in sorted(base.glob("hwmon*")) if base.is_dir() else ():
        driver = _read_text(device / "name") or _read_text(device / "device" / "name") or "?"
        # attributes sit in the hwmon directory, or (older drivers) in device/
        files = {}
        for directory in (device / "device", device):
            if directory.is_dir():
                for f in directory.iterdir():
                    match = _HWMON_FILE.match(f.name)
                    if match:
                        files[match.groups()] = f
        if driver == "power_meter":
            chosen = files.get(("power", "1", "average")) or files.get(("power", "1", "input"))
            if chosen is not None:
                meters.append(Meter("acpi_power_meter", f"{device.name} power_meter "
                                    f"{chosen.name}", chosen, "power_uw"))
            continue
        for (what, index, kind), f in sorted(files.items()):
            if what == "power" and kind == "input" and ("power", index, "average") in files:
                continue       # one reading per sensor: its average
            if what == "energy" and kind != "input":
                continue
            label = _read_text(f.parent / f"{what}{index}_label")
            meters.append(Meter("hwmon", f"{device.name} {driver} {label or f.name}", f,
                                "energy_uj" if what == "energy" else "power_uw"))
    return meters


def detect(sys_root: Path | str = "/sys") -> list[Meter]:
    """Every meter under sys_root, RAPL first, then ACPI, then other hwmon."""
    sys_root = Path(sys_root)
    meters = _powercap_meters(sys_root) + _hwmon_meters(sys_root)
    return sorted(meters, key=lambda m: METER_SOURCES.index(m.source))


class Meters:
    """The meters of the machine and their last readings. sample() reads
    every meter; an energy counter's watts are over the window since the
    reading that is at least min_age_s older (the previous period's)."""

    def __init__(self, sys_root: Path | str = "/sys"):
        self.sys_root = Path(sys_root)
        self.meters = detect(self.sys_root)
        self._history: dict[Path, list[tuple[float, int]]] = {}

    @property
    def sources(self) -> list[str]:
        """The sources this machine offers (model and cpu_time always)."""
        present = {m.source for m in self.meters}
        return [s for s in SOURCES if s in present or s in ("model", "cpu_time")]

    def sample(self, now: float, min_age_s: float = 0.0) -> list[Reading]:
        readings = []
        for meter in self.meters:
            reading = Reading(meter.source, meter.name, str(meter.path))
            try:
                value = meter.read()
            except (OSError, ValueError) as e:
                reading.note = f"unreadable: {getattr(e, 'strerror', None) or e}"
                readings.append(reading)
                continue
            if meter.kind == "power_uw":
                reading.watts = value / 1e6
                reading.note = "the meter's own average" if "average" in meter.path.name \
                    else "the meter's current reading"
            else:
                reading.energy_uj = value
                history = self._history.setdefault(meter.path, [])
                base = next((h for h in reversed(history) if now - h[0] >= min_age_s
                             and now > h[0]), None)
                if base is None:
                    reading.note = "an energy counter: watts from the next reading on"
                else:
                    delta = value - base[1]
                    if delta < 0 and meter.max_range_uj:
                        delta += meter.max_range_uj + 1     # the counter wrapped
                    if delta < 0:
                        reading.note = "the counter went back (reset?)"
                    else:
                        reading.window_s = now - base[0]
                        reading.watts = delta / 1e6 / reading.window_s
                history.append((now, value))
                del history[:-16]
            readings.append(reading)
        return readings


# ---- the polling threads' CPU time -------------------------------------------

@dataclass
class ThreadCpu:
    run_ns: int            # schedstat: on a CPU
    wait_ns: int           # schedstat: runnable, waiting
    timeslices: int
    utime_ns: int          # stat
    stime_ns: int
    cpu: int               # stat: the CPU it last ran on
    from_schedstat: bool = True


_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def thread_cpu(pid: int, tid: int, proc_root: Path | str = "/proc",
               clk_tck: int = _CLK_TCK) -> ThreadCpu | None:
    """The thread's CPU time from /proc/PID/task/TID (None: gone or unreadable).
    Without a known pid, pass the tid as pid: /proc/TID/task/TID is the same
    thread."""
    base = Path(proc_root) / str(pid) / "task" / str(tid)
    stat = _read_text(base / "stat")
    if stat is None or ")" not in stat:
        return None
    # after the command name (which may hold spaces and parentheses): field 3 on
    fields = stat[stat.rindex(")") + 2:].split()
    try:
        utime, stime = int(fields[11]), int(fields[12])      # fields 14, 15
        cpu = int(fields[36]) if len(fields) > 36 else -1    # field 39
    except (IndexError, ValueError):
        return None
    tick_ns = 10**9 // clk_tck
    schedstat = _read_text(base / "schedstat")
    try:
        run_ns, wait_ns, slices = (int(v) for v in schedstat.split()[:3])
        from_schedstat = True
    except (AttributeError, ValueError):
        run_ns, wait_ns, slices, from_schedstat = (utime + stime) * tick_ns, 0, 0, False
    return ThreadCpu(run_ns, wait_ns, slices, utime * tick_ns, stime * tick_ns, cpu,
                     from_schedstat)
