"""power/meters.py against faked trees: a sysfs with RAPL (powercap)
zones, an ACPI power_meter and other hwmon sensors, and a /proc with a
polling thread's schedstat and stat. Watts from energy counters over a
window (with the counter's wrap), from power files at once; a file that
cannot be read is listed with a note; CPU time in ns from both files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from power import meters


def write(path: Path, text) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{text}\n")
    return path


@pytest.fixture
def sysfs(tmp_path) -> Path:
    root = tmp_path / "sys"
    powercap = root / "class" / "powercap"
    (powercap / "intel-rapl").mkdir(parents=True)           # the control type: no counter
    write(powercap / "intel-rapl" / "enabled", 1)
    for zone, name, energy in (("intel-rapl:0", "package-0", 1_000_000),
                               ("intel-rapl:0:0", "core", 500_000),
                               ("intel-rapl:1", "package-1", 262_143_000_000)):
        write(powercap / zone / "name", name)
        write(powercap / zone / "energy_uj", energy)
        write(powercap / zone / "max_energy_range_uj", 262_143_328_850)
    write(powercap / "dtpm" / "name", "dtpm")                # a zone without energy_uj
    hwmon = root / "class" / "hwmon"
    write(hwmon / "hwmon0" / "name", "coretemp")
    write(hwmon / "hwmon0" / "temp1_input", 45000)
    write(hwmon / "hwmon1" / "name", "power_meter")
    write(hwmon / "hwmon1" / "device" / "power1_average", 187_500_000)   # µW, under device/
    write(hwmon / "hwmon1" / "device" / "power1_input", 1)               # not chosen
    write(hwmon / "hwmon2" / "name", "amd_energy")
    write(hwmon / "hwmon2" / "energy1_input", 7_000_000)
    write(hwmon / "hwmon2" / "energy1_label", "Ecore000")
    write(hwmon / "hwmon3" / "name", "ina3221")
    write(hwmon / "hwmon3" / "power1_input", 2_500_000)
    return root


def test_detects_every_meter_by_source(sysfs):
    found = [(m.source, m.name, m.kind, m.path.relative_to(sysfs).as_posix())
             for m in meters.detect(sysfs)]
    assert found == [
        ("rapl", "intel-rapl:0 package-0", "energy_uj",
         "class/powercap/intel-rapl:0/energy_uj"),
        ("rapl", "intel-rapl:0:0 core", "energy_uj", "class/powercap/intel-rapl:0:0/energy_uj"),
        ("rapl", "intel-rapl:1 package-1", "energy_uj",
         "class/powercap/intel-rapl:1/energy_uj"),
        ("acpi_power_meter", "hwmon1 power_meter power1_average", "power_uw",
         "class/hwmon/hwmon1/device/power1_average"),
        ("hwmon", "hwmon2 amd_energy Ecore000", "energy_uj", "class/hwmon/hwmon2/energy1_input"),
        ("hwmon", "hwmon3 ina3221 power1_input", "power_uw", "class/hwmon/hwmon3/power1_input"),
    ]
    assert meters.Meters(sysfs).sources == ["rapl", "acpi_power_meter", "hwmon", "model",
                                            "cpu_time"]


def test_no_meters_leaves_model_and_cpu_time(tmp_path):
    assert meters.detect(tmp_path) == []
    assert meters.Meters(tmp_path).sources == ["model", "cpu_time"]


def test_watts_from_counters_over_the_window_and_from_power_files(sysfs):
    m = meters.Meters(sysfs)
    first = {r.name: r for r in m.sample(now=100.0)}
    # power files give watts at once; counters only from the second reading
    assert first["hwmon1 power_meter power1_average"].watts == 187.5
    assert first["hwmon3 ina3221 power1_input"].watts == 2.5
    assert first["intel-rapl:0 package-0"].watts is None
    assert first["intel-rapl:0 package-0"].energy_uj == 1_000_000
    assert "next reading" in first["intel-rapl:0 package-0"].note

    capped = sysfs / "class" / "powercap"
    write(capped / "intel-rapl:0" / "energy_uj", 1_000_000 + 30_000_000)       # 30 J in 0.5 s
    write(capped / "intel-rapl:0:0" / "energy_uj", 500_000 + 5_000_000)
    # package-1 wraps: from 262,143,000,000 past 262,143,328,850 to 171,150
    # = 328,850 + 1 + 171,150 = 500,001 µJ
    write(capped / "intel-rapl:1" / "energy_uj", 171_150)
    write(sysfs / "class" / "hwmon" / "hwmon2" / "energy1_input", 7_000_000 + 2_000_000)
    second = {r.name: r for r in m.sample(now=100.5)}
    assert second["intel-rapl:0 package-0"].watts == pytest.approx(60.0)
    assert second["intel-rapl:0 package-0"].window_s == pytest.approx(0.5)
    assert second["intel-rapl:0:0 core"].watts == pytest.approx(10.0)
    assert second["intel-rapl:1 package-1"].watts == pytest.approx(500_001 / 1e6 / 0.5)
    assert second["hwmon2 amd_energy Ecore000"].watts == pytest.approx(4.0)

    # a reading closer than min_age_s to the last one takes an older base
    write(capped / "intel-rapl:0" / "energy_uj", 31_000_000 + 1_000_000)
    third = {r.name: r for r in m.sample(now=100.6, min_age_s=0.5)}
    assert third["intel-rapl:0 package-0"].window_s == pytest.approx(0.6)
    assert third["intel-rapl:0 package-0"].watts == pytest.approx(31.0 / 0.6)


def test_a_file_that_cannot_be_read_is_listed_with_a_note(sysfs):
    m = meters.Meters(sysfs)
    energy = sysfs / "class" / "powercap" / "intel-rapl:0" / "energy_uj"
    energy.unlink()
    energy.mkdir()                     # reading it fails as an unreadable file would
    reading = next(r for r in m.sample(now=1.0) if r.name == "intel-rapl:0 package-0")
    assert reading.watts is None and reading.energy_uj is None
    assert reading.note.startswith("unreadable: ")


def test_a_counter_that_goes_back_without_a_range_gives_no_watts(tmp_path):
    zone = tmp_path / "class" / "powercap" / "intel-rapl:0"
    write(zone / "name", "package-0")
    write(zone / "energy_uj", 5_000_000)
    m = meters.Meters(tmp_path)
    m.sample(now=1.0)
    write(zone / "energy_uj", 1_000)
    reading = m.sample(now=2.0)[0]
    assert reading.watts is None and "went back" in reading.note


def fake_thread(proc: Path, pid: int, tid: int, comm: str, utime: int, stime: int, cpu: int,
                schedstat: str | None) -> None:
    base = proc / str(pid) / "task" / str(tid)
    # fields 3.. of /proc/PID/task/TID/stat; utime and stime are 14 and 15,
    # processor 39; a command name with a space and a parenthesis
    after = ["R", "1", str(pid), str(pid), "0", "-1", "4194368", "100", "0", "0", "0",
             str(utime), str(stime), "0", "0", "20", "0", "3", "0", "12345", "1000", "200",
             "18446744073709551615", "1", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0",
             "0", "17", str(cpu), "0", "0", "0", "0", "0"]
    write(base / "stat", f"{tid} ({comm}) {' '.join(after)}")
    if schedstat is not None:
        write(base / "schedstat", schedstat)


def test_thread_cpu_time_from_schedstat_and_stat(tmp_path):
    proc = tmp_path / "proc"
    fake_thread(proc, 100, 101, "lcore-worker 1)", utime=250, stime=50, cpu=1,
                schedstat="3000000123 4567 89")
    got = meters.thread_cpu(100, 101, proc, clk_tck=100)
    assert got == meters.ThreadCpu(run_ns=3_000_000_123, wait_ns=4567, timeslices=89,
                                   utime_ns=2_500_000_000, stime_ns=500_000_000, cpu=1)


def test_thread_cpu_time_without_schedstat_is_utime_plus_stime(tmp_path):
    proc = tmp_path / "proc"
    fake_thread(proc, 100, 102, "eal-intr", utime=7, stime=3, cpu=0, schedstat=None)
    got = meters.thread_cpu(100, 102, proc, clk_tck=100)
    assert (got.run_ns, got.from_schedstat, got.cpu) == (100_000_000, False, 0)
    assert meters.thread_cpu(100, 999, proc) is None          # a thread that is gone


def test_this_threads_cpu_time_from_the_real_proc():
    """The real /proc: this process's main thread has run, and its
    schedstat agrees with its stat within the stat's ticks."""
    pid = os.getpid()
    got = meters.thread_cpu(pid, pid)
    assert got is not None and got.run_ns > 0
    tick = 10**9 // os.sysconf("SC_CLK_TCK")
    if got.from_schedstat:
        assert abs(got.run_ns - (got.utime_ns + got.stime_ns)) < max(50 * tick,
                                                                     got.run_ns // 5)
