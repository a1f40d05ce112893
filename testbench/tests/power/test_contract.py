"""The sidecar's side of the runtime contract (/work/notes/power_interface.md)
against a recorded `power` reply (recorded_power.json): the reply parsed and
checked field by field, a reply that breaks the contract named by its
field, windowed telemetry between two samples (the model on the window's
deltas, not the totals), the runtime's refusals turned into messages, and
the sidecar's configuration. The same calls against the real runtime:
test_sidecar.py."""
from __future__ import annotations

import asyncio
import copy
import json
from types import SimpleNamespace

import pytest

from power import model, sidecar, targets
from recorded_runtime import RECORDED, RecordedRuntime

LADDER = list(range(2000, 799, -100))


@pytest.fixture
def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def test_the_recorded_reply_parses(recorded):
    power = targets.parse_power(recorded)
    assert power["backends"] == {"frequency": "simulated", "pause": "rte_pause spin",
                                 "sleep": "timed"}
    assert power["pstates_mhz"] == LADDER
    assert power["thresholds"]["idle_long_after"] == 300
    assert [(lc["lcore"], lc["tid"], lc["mode"], lc["pstate"], lc["freq_mhz"])
            for lc in power["lcores"]] == [(0, 4242, "adaptive", 12, 800),
                                           (1, 4243, "busy", 0, 2000)]
    assert power["lcores"][0]["pstate_residency_ns"][12] == 900_000_000
    assert len(power["lcores"][0]["thresholds"]) == 17


@pytest.mark.parametrize("damage, message", [
    (lambda r: r.pop("lcores"), "no 'lcores'"),
    (lambda r: r["lcores"][1].pop("asleep_ns"), "lcores[1] has no asleep_ns"),
    (lambda r: r["lcores"][0].update(busy_ns=-1), "lcores[0].busy_ns: -1"),
    (lambda r: r["lcores"][0].pop("work_ns"), "lcores[0] has no work_ns"),
    (lambda r: r["lcores"][1].update(work_ns=2_000_000_000),
     "lcores[1].work_ns: 2000000000 is more than busy_ns 1000000000"),
    (lambda r: r["lcores"][0].update(mode=3), "lcores[0].mode: 3 is not a string"),
    (lambda r: r["backends"].pop("sleep"), "backends"),
    (lambda r: r["thresholds"].update(ring_fill_pct="50"), "thresholds.ring_fill_pct"),
])
def test_a_reply_off_contract_is_named(recorded, damage, message):
    damage(recorded)
    with pytest.raises(targets.MalformedReply, match=message.replace("[", r"\[")
                       .replace("]", r"\]")):
        targets.parse_power(recorded)


def test_refusal_messages():
    e = targets.refusal({"ok": False, "error": "EINVAL", "message": "unknown mode fast"})
    assert (str(e), e.code) == ("EINVAL: unknown mode fast", "EINVAL")
    e = targets.refusal({"ok": False, "error": "unknown lcore 7"})      # the contract's form
    assert (str(e), e.code) == ("unknown lcore 7", None)


def test_telemetry_over_a_window_uses_the_deltas(recorded, tmp_path):
    target = targets.Target("host0", tmp_path / "none.sock", proc_root=tmp_path)
    first = targets.Sample(10.0, 0, targets.parse_power(recorded))
    later = copy.deepcopy(recorded)
    lc0 = later["lcores"][0]
    # in 0.5 s: 0.1 s busy at P0, 0.4 s asleep in 4 sleeps of 100 ms (C6)
    lc0["busy_ns"] += 100_000_000
    lc0["asleep_ns"] += 400_000_000
    lc0["sleeps"] += 4
    lc0["pstate_residency_ns"][0] += 500_000_000
    second = targets.Sample(10.5, 0, targets.parse_power(later))
    target.samples.extend([first, second])
    assert target.base(second, 0.25) is first
    assert target.base(second, 0.75) is None

    row = targets.telemetry(target, second, first)
    assert row["window_s"] == 0.5 and row["reachable"]
    w0 = row["lcores"][0]["model"]
    assert (w0["c0_s"], w0["c6_s"], w0["mean_freq_mhz"]) == (pytest.approx(0.1),
                                                             pytest.approx(0.4), 2000)
    assert w0["watts"] == pytest.approx(0.2 * model.P_C0_MAX)
    # lcore 1 did nothing in the window
    assert row["lcores"][1]["model"]["watts"] == 0
    assert row["modelled_watts"] == pytest.approx(w0["watts"])
    # counters are the runtime's totals, not deltas
    assert row["lcores"][0]["busy_ns"] == recorded["lcores"][0]["busy_ns"] + 100_000_000
    assert [lc["work_ns"] for lc in row["lcores"]] == [20_000_000, 100_000_000]

    # since start: the totals (0.2 busy + 0.1 spin paused at 10% P0 / 90% P12, 0.7 asleep
    # in 1,000 sleeps of 700 us: C6)
    row = targets.telemetry(target, first, None)
    w0 = row["lcores"][0]["model"]
    assert (w0["c0_s"], w0["c6_s"]) == (pytest.approx(0.3), pytest.approx(0.7))
    assert w0["watts"] == pytest.approx(0.3 * (0.1 * 12.25 + 0.9 * 12.25 * 0.7))
    assert not row["lcores"][0]["proc"]["available"]        # no such thread in tmp_path


def test_sidecar_against_the_recording(tmp_path):
    """The Sidecar's calls on a control socket that answers the recording:
    what it sends and what it makes of the answers."""
    runtime = RecordedRuntime(tmp_path / "control.sock", advance_ns=50_000_000)

    async def run():
        car = sidecar.Sidecar([targets.Target("host0", runtime.path)],
                              SimpleNamespace(sources=["model", "cpu_time"],
                                              sample=lambda *a: []), 0.1)
        _, rows = await car.telemetry()
        assert rows[0]["lcores"][1]["mode"] == "busy"
        assert await car.set_mode("host0", "proportional", 1) == [1]
        assert runtime.requests[-1] == {"cmd": "power_mode", "mode": "proportional",
                                        "lcore": 1}
        _, rows = await car.telemetry("host0")
        assert [lc["mode"] for lc in rows[0]["lcores"]] == ["adaptive", "proportional"]
        with pytest.raises(targets.NotFound, match="no lcore 9"):
            await car.set_mode("host0", "busy", 9)
        with pytest.raises(targets.TargetRefused, match="unknown mode warp"):
            await car.set_mode("host0", "warp", None)
        assert (await car.set_thresholds("host0", {"idle_short_us": 10}, None)
                )["idle_short_us"] == 10
        with pytest.raises(targets.NotFound, match="no target 'h9'"):
            await car.telemetry("h9")
        _, readings = await car.read_power("model")
        assert [r["source"] for r in readings] == ["model"]
        car.close()
    try:
        asyncio.run(run())
    finally:
        runtime.close()


def test_configuration(tmp_path):
    toml = tmp_path / "targets.toml"
    toml.write_text('period_ms = 250\ngrpc = "unix:/run/x.grpc"\n'
                    '[[targets]]\nname = "nic"\ncontrol = "nic/control.sock"\n')
    args = sidecar._parser().parse_args(["--targets", str(toml), "--target", "h0=/s"])
    assert sidecar.load_config(args) == (
        [("nic", str(tmp_path / "nic" / "control.sock")), ("h0", "/s")], "unix:/run/x.grpc", 250)
    args = sidecar._parser().parse_args(["--targets", str(toml), "--period-ms", "50",
                                         "--grpc", "127.0.0.1:0"])
    assert sidecar.load_config(args)[1:] == ("127.0.0.1:0", 50)
    for bad, message in ((["--target", "x"], "NAME=CONTROL_SOCKET"), ([], "no targets"),
                         (["--target", "a=/1", "--target", "a=/2"], "unique: a"),
                         (["--target", "a=/1", "--period-ms", "0"], "positive")):
        with pytest.raises(ValueError, match=message):
            sidecar.load_config(sidecar._parser().parse_args(bad))
