"""The power sidecar (python -m power) through its gRPC API against real
targets: compiled host.p4 processes with `--governor MODE` and a control
socket. Telemetry compared with what each process is doing (an idle
adaptive lcore asleep most of the time, a busy lcore on a CPU the whole
time: its /proc CPU time, its model watts), the sidecar's /proc reading
against the runtime's own thread clock, modes and thresholds set per
target and per lcore and read back, every error status (NOT_FOUND,
INVALID_ARGUMENT with the runtime's message, UNAVAILABLE), the telemetry
stream, and ReadPower by source, with meters in a faked sysfs tree."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc
import pytest

from power import model
from power.service import stubs
from waiting import wait_for

pytestmark = pytest.mark.dpdk

pb2, _ = stubs()
TIMEOUT = 10
SIMULATED = not Path("/sys/devices/system/cpu/cpu0/cpufreq").exists()


def telemetry(stub, target: str = ""):
    return stub.GetTelemetry(pb2.TelemetryRequest(target=target), timeout=TIMEOUT)


def rpc_error(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as failed:
        call(request, timeout=TIMEOUT)
    return failed.value


def test_telemetry_of_an_idle_adaptive_and_a_busy_target(start_target, start_sidecar):
    idle = start_target("adaptive", lcores="0")
    busy = start_target("busy", lcores="1", traffic=True)
    sidecar = start_sidecar({"idle": idle, "busy": busy}, period_ms=200)
    stub = sidecar.stub()
    time.sleep(1.0)                       # a few periods: windows of ~0.2 s
    sample = telemetry(stub)
    rows = {t.name: t for t in sample.targets}
    assert list(rows) == ["idle", "busy"]
    for name, runtime in (("idle", idle), ("busy", busy)):
        t = rows[name]
        assert t.reachable and t.pid == runtime.process.pid
        assert t.control == str(runtime.control_path)
        assert 0.1 <= t.window_s <= 1.0
        assert len(t.lcores) == 1 and t.lcores[0].tid > 0
        if SIMULATED:
            assert t.backends.frequency == "simulated"
            assert list(t.pstates_mhz) == list(range(2000, 799, -100))
        assert t.backends.sleep in ("timed", "rx-interrupt")
        assert t.thresholds["idle_long_after"] == 300           # paper 000's default
        lc = t.lcores[0]
        assert lc.proc.available
        # the sidecar's /proc reading and the runtime's own thread clock
        # (pthread_getcpuclockid) are the same thread's CPU time, read
        # milliseconds apart
        assert abs(lc.proc.run_ns - lc.cpu_time_ns) < 100_000_000, (lc.proc, lc.cpu_time_ns)
        assert lc.freq_mhz == t.pstates_mhz[lc.pstate]
        assert t.modelled_watts == pytest.approx(lc.model.watts)

    a, b = rows["idle"].lcores[0], rows["busy"].lcores[0]
    assert (a.lcore, a.mode, b.lcore, b.mode) == (0, "adaptive", 1, "busy")
    # idle: asleep most of the time, a small share of a CPU, under a C1 core's watts
    assert a.packets == 0 and a.empty_polls == a.polls > 0
    assert a.asleep_ns > 0.8 * (a.busy_ns + a.paused_ns + a.asleep_ns)
    assert a.proc.cpu_share < 0.2
    assert a.model.watts < model.P_C1
    # busy: the traffic port's every poll full, the other two ports' empty
    # (polls count each rx queue), never paused or asleep, a whole CPU (less
    # what the VM and the other processes take), C0 for the whole window
    assert b.packets > 0 and b.paused_ns == b.asleep_ns == 0
    assert b.empty_polls == pytest.approx(2 / 3 * b.polls, rel=0.01)
    # on a CPU or waiting for one (this machine is shared) all the time: run +
    # wait in schedstat grow as fast as the clock, where the idle lcore's
    # hardly grow at all
    time.sleep(0.5)
    later = {t.name: t.lcores[0] for t in telemetry(stub).targets}
    seconds = (later["busy"].proc.run_ns + later["busy"].proc.wait_ns - b.proc.run_ns
               - b.proc.wait_ns) / 1e9
    assert seconds / 0.5 == pytest.approx(1.0, abs=0.15)
    seconds = (later["idle"].proc.run_ns + later["idle"].proc.wait_ns - a.proc.run_ns
               - a.proc.wait_ns) / 1e9
    assert seconds / 0.5 < 0.2
    assert b.proc.cpu_share > 5 * a.proc.cpu_share
    assert b.model.c0_s == pytest.approx(b.model.window_s)
    assert b.model.watts == pytest.approx(model.c0_watts(b.model.mean_freq_mhz,
                                                         rows["busy"].pstates_mhz[0]))
    assert b.model.watts > 10 * a.model.watts


def test_modes_and_thresholds_per_target_and_lcore(start_target, start_sidecar):
    target = start_target("adaptive", lcores="0,1")
    other = start_target("adaptive", lcores="0")
    stub = start_sidecar({"host0": target, "host1": other}).stub()

    def modes(name="host0"):
        return [lc.mode for lc in telemetry(stub, name).targets[0].lcores]

    assert modes() == ["adaptive", "adaptive"]
    reply = stub.SetMode(pb2.SetModeRequest(target="host0", mode="proportional"),
                         timeout=TIMEOUT)
    assert (reply.target, reply.mode, list(reply.lcores)) == ("host0", "proportional", [0, 1])
    wait_for(lambda: modes() == ["proportional", "proportional"], what="proportional")
    assert modes("host1") == ["adaptive"]                 # another target: untouched
    reply = stub.SetMode(pb2.SetModeRequest(target="host0", mode="busy", lcore=1),
                         timeout=TIMEOUT)
    assert list(reply.lcores) == [1]
    wait_for(lambda: modes() == ["proportional", "busy"], what="busy on lcore 1")
    # the runtime's own view agrees with the sidecar's
    assert [lc["mode"] for lc in target.request({"cmd": "power"})["lcores"]] == \
        ["proportional", "busy"]

    reply = stub.SetThresholds(pb2.SetThresholdsRequest(
        target="host0", lcore=0, thresholds={"idle_short_us": 10, "sleep_recheck_ms": 20}),
        timeout=TIMEOUT)
    assert (reply.thresholds["idle_short_us"], reply.thresholds["sleep_recheck_ms"]) == (10, 20)
    assert reply.thresholds["idle_long_after"] == 300     # the rest as it was
    lcores = telemetry(stub, "host0").targets[0].lcores
    assert [lc.thresholds["idle_short_us"] for lc in lcores] == [10, 1]
    assert [lc.thresholds["sleep_recheck_ms"] for lc in lcores] == [20, 10]
    stub.SetThresholds(pb2.SetThresholdsRequest(target="host0",
                                                thresholds={"latency_budget_us": 30}),
                       timeout=TIMEOUT)
    lcores = telemetry(stub, "host0").targets[0].lcores
    assert [lc.thresholds["latency_budget_us"] for lc in lcores] == [30, 30]
    assert telemetry(stub, "host1").targets[0].lcores[0].thresholds["latency_budget_us"] == 50


def test_every_error_status(start_target, start_sidecar):
    target = start_target("adaptive", lcores="0")
    doomed = start_target("adaptive", lcores="1")
    stub = start_sidecar({"host0": target, "host1": doomed}).stub()

    e = rpc_error(stub.GetTelemetry, pb2.TelemetryRequest(target="nope"))
    assert e.code() == grpc.StatusCode.NOT_FOUND and "no target 'nope'" in e.details()
    e = rpc_error(stub.SetMode, pb2.SetModeRequest(target="nope", mode="busy"))
    assert e.code() == grpc.StatusCode.NOT_FOUND
    e = rpc_error(stub.SetMode, pb2.SetModeRequest(target="host0", mode="busy", lcore=7))
    assert e.code() == grpc.StatusCode.NOT_FOUND and "no lcore 7" in e.details()
    e = rpc_error(stub.SetThresholds, pb2.SetThresholdsRequest(
        target="host0", lcore=7, thresholds={"idle_short_us": 5}))
    assert e.code() == grpc.StatusCode.NOT_FOUND
    e = rpc_error(stub.ReadPower, pb2.ReadPowerRequest(target="nope"))
    assert e.code() == grpc.StatusCode.NOT_FOUND

    # the runtime's refusals, its message passed on; nothing changed
    e = rpc_error(stub.SetMode, pb2.SetModeRequest(target="host0", mode="warp"))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "unknown mode 'warp'" in e.details()
    e = rpc_error(stub.SetMode, pb2.SetModeRequest(target="host0", mode="pmgmt-pause"))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "at start" in e.details()
    e = rpc_error(stub.SetThresholds, pb2.SetThresholdsRequest(
        target="host0", thresholds={"idle_short_us": 10, "trend_limit": 0}))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "trend_limit: 0 is out of range" in e.details()
    e = rpc_error(stub.SetThresholds, pb2.SetThresholdsRequest(
        target="host0", thresholds={"warp": 1}))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "warp" in e.details()
    lc = telemetry(stub, "host0").targets[0].lcores[0]
    assert (lc.mode, lc.thresholds["idle_short_us"], lc.thresholds["trend_limit"]) == \
        ("adaptive", 1, 10000)
    # the sidecar's own
    for call, request in ((stub.SetMode, pb2.SetModeRequest(mode="busy")),
                          (stub.SetMode, pb2.SetModeRequest(target="host0")),
                          (stub.SetThresholds, pb2.SetThresholdsRequest(target="host0")),
                          (stub.ReadPower, pb2.ReadPowerRequest(source="smoke signals"))):
        assert rpc_error(call, request).code() == grpc.StatusCode.INVALID_ARGUMENT

    # a target that no longer answers
    doomed.stop()
    for call, request in ((stub.GetTelemetry, pb2.TelemetryRequest(target="host1")),
                          (stub.SetMode, pb2.SetModeRequest(target="host1", mode="busy")),
                          (stub.SetThresholds, pb2.SetThresholdsRequest(
                              target="host1", thresholds={"idle_short_us": 5}))):
        e = rpc_error(call, request)
        assert e.code() == grpc.StatusCode.UNAVAILABLE and "host1" in e.details()
    # with every target: a row that says so, the others answered
    rows = {t.name: t for t in telemetry(stub).targets}
    assert rows["host0"].reachable and not rows["host1"].reachable
    assert "control socket" in rows["host1"].error
    readings = stub.ReadPower(pb2.ReadPowerRequest(source="model"), timeout=TIMEOUT).readings
    assert {r.target: r.HasField("watts") for r in readings} == {"host0": True, "host1": False}


def test_stream_telemetry_until_cancelled(start_target, start_sidecar):
    target = start_target("adaptive", lcores="0")
    stub = start_sidecar({"host0": target}).stub()
    call = stub.StreamTelemetry(pb2.StreamTelemetryRequest(target="host0", period_ms=50))
    samples = []
    for message in call:
        samples.append(message)
        if len(samples) == 5:
            call.cancel()
            break
    times = [s.time_ns for s in samples]
    gaps = [(b - a) / 1e6 for a, b in zip(times, times[1:])]
    assert all(g >= 45 for g in gaps) and sum(gaps) / len(gaps) < 500, gaps
    polls = [s.targets[0].lcores[0].polls for s in samples]
    asleep = [s.targets[0].lcores[0].asleep_ns for s in samples]
    assert polls == sorted(polls) and asleep == sorted(asleep) and asleep[-1] > asleep[0]
    assert call.code() == grpc.StatusCode.CANCELLED
    e = rpc_error(lambda r, timeout: next(stub.StreamTelemetry(r, timeout=timeout)),
                  pb2.StreamTelemetryRequest(target="nope"))
    assert e.code() == grpc.StatusCode.NOT_FOUND


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{value}\n")


def test_read_power_by_source(start_target, start_sidecar, tmp_path):
    """ReadPower with meters in a faked sysfs tree (--sysfs-root): a RAPL
    counter that a thread advances at 40 W, an ACPI power meter at
    187.5 W; and the model and CPU time of a real target."""
    sysfs = tmp_path / "sys"
    energy = sysfs / "class" / "powercap" / "intel-rapl:0" / "energy_uj"
    write(energy.parent / "name", "package-0")
    write(energy, 0)
    write(sysfs / "class" / "hwmon" / "hwmon0" / "name", "power_meter")
    write(sysfs / "class" / "hwmon" / "hwmon0" / "power1_average", 187_500_000)
    stop = threading.Event()
    start = time.monotonic()

    def advance():            # 40 W = 40 uJ per us
        while not stop.wait(0.002):
            write(energy, int((time.monotonic() - start) * 40e6))
    writer = threading.Thread(target=advance)
    writer.start()
    try:
        target = start_target("adaptive", lcores="0")
        sidecar = start_sidecar({"host0": target}, period_ms=200,
                                extra=["--sysfs-root", str(sysfs)])
        stub = sidecar.stub()
        time.sleep(0.6)
        answer = stub.ReadPower(pb2.ReadPowerRequest(), timeout=TIMEOUT)
    finally:
        stop.set()
        writer.join()
    assert list(answer.sources) == ["rapl", "acpi_power_meter", "model", "cpu_time"]
    by = {r.source: r for r in answer.readings}
    assert [r.source for r in answer.readings] == ["rapl", "acpi_power_meter", "model",
                                                   "cpu_time"]
    rapl = by["rapl"]
    assert (rapl.name, rapl.path) == ("intel-rapl:0 package-0", str(energy))
    assert rapl.window_s >= 0.1 and rapl.watts == pytest.approx(40, rel=0.25)
    assert by["acpi_power_meter"].watts == 187.5
    assert by["model"].target == "host0" and 0 <= by["model"].watts < model.P_C1
    cpu = by["cpu_time"]
    assert cpu.target == "host0" and cpu.cpu_time_ns > 0 and 0 <= cpu.cpu_share < 0.2
    assert str(target.process.pid) in cpu.path
    only = stub.ReadPower(pb2.ReadPowerRequest(source="acpi_power_meter"), timeout=TIMEOUT)
    assert [r.source for r in only.readings] == ["acpi_power_meter"]
    # a source this machine does not have: none, and the list says which it has
    assert not stub.ReadPower(pb2.ReadPowerRequest(source="hwmon"), timeout=TIMEOUT).readings
    assert f"meter rapl intel-rapl:0 package-0: {energy}" in sidecar.log_text()


def test_work_ns_is_the_rounds_that_received(start_target, start_sidecar):
    """work_ns: an idle lcore never received (0 while it polls), one whose
    port fills every poll worked most of its busy time; never more than
    busy_ns, and a total that only grows, as the runtime's own."""
    idle = start_target("adaptive", lcores="0")
    busy = start_target("busy", lcores="1", traffic=True)
    stub = start_sidecar({"idle": idle, "busy": busy}).stub()
    time.sleep(0.5)
    rows = {t.name: t.lcores[0] for t in telemetry(stub).targets}
    a, b = rows["idle"], rows["busy"]
    assert a.work_ns == 0 < a.busy_ns
    assert 0 < b.work_ns <= b.busy_ns
    # every round receives on the traffic port: the empty polls of the other
    # two ports take little of its busy time
    assert b.work_ns > 0.5 * b.busy_ns
    own = busy.request({"cmd": "power"})["lcores"][0]
    assert b.work_ns <= own["work_ns"] <= own["busy_ns"]
    later = telemetry(stub, "busy").targets[0].lcores[0]
    assert b.work_ns < later.work_ns <= later.busy_ns
