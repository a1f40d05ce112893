"""`gnbctl power show|mode|thresholds|watch` and `gnbctl status` end to end:
the real CLI (controller/bin/gnbctl) on a topology file whose [power] names
a real sidecar governing two real host.p4 targets (--governor adaptive),
which also serve P4Runtime for `status`. What gnbctl reports is compared
with what the runtime itself answers on its control socket. A topology
without [power] is refused (exit 2), a sidecar that does not answer is
exit 3, a refused mode or threshold exit 1 with the runtime's message."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from controller.power import power_source
from power.meters import Meters

pytestmark = pytest.mark.dpdk
GNBCTL = Path(__file__).resolve().parents[3] / "controller" / "bin" / "gnbctl"


def run(topology: Path, *args, timeout: float = 60) -> subprocess.CompletedProcess:
    # a terminal wide enough that rich's tables do not cut the words compared
    return subprocess.run([str(GNBCTL), "--topology", str(topology), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def gnbctl(topology: Path, *args) -> tuple[int, dict]:
    """(exit code, the --json answer)."""
    done = run(topology, "--json", *args)
    try:
        output = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"gnbctl {args}: no JSON (exit {done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}") from None
    assert output["ok"] == (done.returncode == 0), output
    return done.returncode, output


@pytest.fixture
def governed(start_target, start_sidecar, host_build, tmp_path):
    """(topology file, {name: RuntimeProcess}): host0 (lcores 0 and 1) and
    host1 (lcore 1), adaptive, P4Runtime on free ports, the sidecar on both."""
    targets = {"host0": start_target("adaptive", "0,1", extra=["--p4runtime", "127.0.0.1:0"]),
               "host1": start_target("adaptive", "1", extra=["--p4runtime", "127.0.0.1:0"])}
    sidecar = start_sidecar(targets)
    lines = ["election_id = 1", "timeout = 5.0"]
    for name, runtime in targets.items():
        lines += ["[[targets]]", f'name = "{name}"', 'role = "host"',
                  f'address = "{runtime.p4runtime_address()}"',
                  f'p4info = "{host_build.p4info_text_path}"']
    lines += ["[power]", f'address = "{sidecar.address}"']
    topology = tmp_path / "topology.toml"
    topology.write_text("\n".join(lines) + "\n")
    return topology, targets


def runtime_modes(runtime) -> list[str]:
    return [lc["mode"] for lc in runtime.request({"cmd": "power"})["lcores"]]


def test_show(governed):
    topology, targets = governed
    code, out = gnbctl(topology, "power", "show")
    assert code == 0
    result = out["result"]
    rows = {t["name"]: t for t in result["targets"]}
    assert list(rows) == ["host0", "host1"]
    for name, runtime in targets.items():
        own = runtime.request({"cmd": "power"})
        assert [lc["lcore"] for lc in rows[name]["lcores"]] == \
            [lc["lcore"] for lc in own["lcores"]]
        assert [lc["tid"] for lc in rows[name]["lcores"]] == [lc["tid"] for lc in own["lcores"]]
        assert rows[name]["pid"] == runtime.process.pid
        assert rows[name]["backends"] == own["backends"]
    assert [lc["mode"] for lc in rows["host0"]["lcores"]] == ["adaptive", "adaptive"]
    sources = Meters("/sys").sources
    assert result["power"]["sources"] == sources
    assert result["power"]["source"] == power_source(sources)
    model = {r["target"]: r for r in result["power"]["readings"] if r["source"] == "model"}
    assert set(model) == {"host0", "host1"}
    cpu = {r["target"]: r for r in result["power"]["readings"] if r["source"] == "cpu_time"}
    assert cpu["host0"]["name"] == "host0: 2 polling threads"
    # one lcore; and one the target does not have
    code, out = gnbctl(topology, "--target", "host0", "power", "show", "--lcore", "1")
    assert [lc["lcore"] for lc in out["result"]["targets"][0]["lcores"]] == [1]
    code, out = gnbctl(topology, "--target", "host1", "power", "show", "--lcore", "0")
    assert code == 1 and "no lcore 0" in out["error"]
    # and for people: a table with the modes and the sources
    text = run(topology, "power", "show").stdout
    assert "adaptive" in text and "host1" in text and "cpu_time" in text


def test_mode_all_targets_one_target_one_lcore(governed):
    topology, targets = governed
    code, out = gnbctl(topology, "power", "mode", "proportional")
    assert code == 0
    assert out["result"] == [{"target": "host0", "mode": "proportional", "lcores": [0, 1]},
                             {"target": "host1", "mode": "proportional", "lcores": [1]}]
    deadline = time.monotonic() + 5
    while runtime_modes(targets["host0"]) != ["proportional"] * 2 \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runtime_modes(targets["host0"]) == ["proportional"] * 2
    code, out = gnbctl(topology, "--target", "host0", "power", "mode", "busy", "--lcore", "0")
    assert (code, out["result"]) == (0, [{"target": "host0", "mode": "busy", "lcores": [0]}])
    deadline = time.monotonic() + 5
    while runtime_modes(targets["host0"])[0] != "busy" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runtime_modes(targets["host0"]) == ["busy", "proportional"]
    assert runtime_modes(targets["host1"]) == ["proportional"]
    # refused: the runtime's message; an unknown lcore or target
    code, out = gnbctl(topology, "power", "mode", "warp")
    assert code == 1 and "INVALID_ARGUMENT" in out["error"]
    assert "unknown mode 'warp'" in out["error"]
    code, out = gnbctl(topology, "--target", "host1", "power", "mode", "busy", "--lcore", "0")
    assert code == 1 and "NOT_FOUND" in out["error"] and "no lcore 0" in out["error"]
    code, out = gnbctl(topology, "--target", "host7", "power", "mode", "busy")
    assert code == 2 and "no target named host7" in out["error"]      # not in the topology
    assert runtime_modes(targets["host1"]) == ["proportional"]


def test_thresholds(governed):
    topology, targets = governed
    code, out = gnbctl(topology, "--target", "host0", "power", "thresholds")
    assert code == 0
    shown = out["result"][0]
    own = targets["host0"].request({"cmd": "power"})
    assert shown["defaults"] == own["thresholds"]
    assert shown["lcores"] == {str(lc["lcore"]): lc["thresholds"] for lc in own["lcores"]}
    code, out = gnbctl(topology, "--target", "host0", "power", "thresholds",
                       "idle_short_us=10", "sleep_at_us=500", "--lcore", "1")
    assert code == 0
    assert (out["result"][0]["thresholds"]["idle_short_us"],
            out["result"][0]["thresholds"]["sleep_at_us"]) == (10, 500)
    lcores = targets["host0"].request({"cmd": "power"})["lcores"]
    assert [(lc["thresholds"]["idle_short_us"], lc["thresholds"]["sleep_at_us"])
            for lc in lcores] == [(1, 300), (10, 500)]
    code, out = gnbctl(topology, "power", "thresholds", "trend_limit=0")
    assert code == 1 and "trend_limit: 0 is out of range" in out["error"]
    assert all(lc["thresholds"]["trend_limit"] == 10000
               for r in targets.values() for lc in r.request({"cmd": "power"})["lcores"])
    assert run(topology, "power", "thresholds", "idle_short_us").returncode == 64   # argparse


def test_watch(governed):
    topology, targets = governed
    started = time.monotonic()
    done = run(topology, "--json", "--target", "host1", "power", "watch", "--period-ms", "100",
               "--count", "3")
    assert done.returncode == 0, done.stderr
    decoder, text, samples = json.JSONDecoder(), done.stdout.strip(), []
    while text:
        value, end = decoder.raw_decode(text)
        samples.append(value)
        text = text[end:].strip()
    assert len(samples) == 4 and samples[-1]["ok"] and samples[-1]["result"] is None
    samples = samples[:3]
    assert all([t["name"] for t in s["targets"]] == ["host1"] for s in samples)
    times = [s["time_ns"] for s in samples]
    assert all(90e6 <= b - a < 1e9 for a, b in zip(times, times[1:])), times
    asleep = [s["targets"][0]["lcores"][0]["asleep_ns"] for s in samples]
    assert asleep == sorted(asleep) and asleep[-1] > asleep[0]
    assert time.monotonic() - started < 30
    text = run(topology, "power", "watch", "--count", "2").stdout
    assert text.count("host0") == 2 and "lcore 1 adaptive" in text


def test_status_shows_each_targets_power_mode_and_source(governed):
    topology, targets = governed
    gnbctl(topology, "--target", "host1", "power", "mode", "busy")
    deadline = time.monotonic() + 5
    while runtime_modes(targets["host1"]) != ["busy"] and time.monotonic() < deadline:
        time.sleep(0.05)
    code, out = gnbctl(topology, "status")
    assert code == 0
    rows = {r["target"]: r for r in out["result"]}
    source = power_source(Meters("/sys").sources)
    assert rows["host0"]["power"]["modes"] == ["adaptive"]
    assert rows["host1"]["power"]["modes"] == ["busy"]
    assert rows["host0"]["power"]["source"] == rows["host1"]["power"]["source"] == source
    assert rows["power"]["reachable"] and rows["power"]["role"] == "power"
    assert rows["power"]["targets"]["host1"]["modes"] == ["busy"]
    text = run(topology, "status").stdout
    assert "power mode" in text and "busy" in text and source in text


def test_no_power_table_and_a_sidecar_that_does_not_answer(governed, tmp_path):
    topology, _ = governed
    without = tmp_path / "without.toml"
    without.write_text(topology.read_text().split("[power]")[0])
    code, out = gnbctl(without, "power", "show")
    assert code == 2 and "no [power] table" in out["error"]
    # status without [power]: no power columns, no row
    code, out = gnbctl(without, "status")
    assert code == 0 and all("power" not in r for r in out["result"])
    gone = tmp_path / "gone.toml"
    gone.write_text(topology.read_text().split("[power]")[0]
                    + f'[power]\naddress = "unix:{tmp_path}/nobody.grpc"\n')
    code, out = gnbctl(gone, "power", "show")
    assert code == 3 and "nobody.grpc" in out["error"]
    code, out = gnbctl(gone, "status")
    assert code == 3 and not {r["target"]: r for r in out["result"]}["power"]["reachable"]


@pytest.fixture
def nic_and_host(start_target, start_sidecar, host_build, nic_build, tmp_path):
    """A topology file with a NIC (nic0) and a host behind it (host0, VF 0),
    both governed by a sidecar, their pipelines pushed."""
    nic = start_target("adaptive", "0", extra=["--p4runtime", "127.0.0.1:0"], build=nic_build)
    host = start_target("adaptive", "1", extra=["--p4runtime", "127.0.0.1:0"])
    sidecar = start_sidecar({"nic0": nic, "host0": host})
    topology = tmp_path / "topology.toml"
    topology.write_text("\n".join([
        "election_id = 1", "timeout = 5.0",
        "[[targets]]", 'name = "nic0"', 'role = "nic"', f'address = "{nic.p4runtime_address()}"',
        f'p4info = "{nic_build.p4info_text_path}"',
        "[[targets]]", 'name = "host0"', 'role = "host"',
        f'address = "{host.p4runtime_address()}"', f'p4info = "{host_build.p4info_text_path}"',
        'nic = "nic0"', "vf = 0",
        "[power]", f'address = "{sidecar.address}"']) + "\n")
    assert gnbctl(topology, "pipeline", "push")[0] == 0
    return topology


CONSOLIDATION_DEFAULTS = {"consolidate_below": 0.5, "spread_above": 0.8, "hold_s": 3,
                          "min_hosts": 1}


def test_consolidate_show_on_off(nic_and_host):
    topology = nic_and_host
    code, out = gnbctl(topology, "power", "consolidate")
    assert code == 0
    policy, (nic,) = out["result"]["policy"], out["result"]["nics"]
    assert (policy["enabled"], policy["thresholds"]) == (False, CONSOLIDATION_DEFAULTS)
    # nothing offloaded yet: every VF bucket on the NIC
    assert (nic["target"], nic["percent"], nic["vf_buckets_on_nic"]) == ("nic0", 0, 64)
    assert nic["hosts"]["host0"]["vf_buckets"] == 0
    assert gnbctl(topology, "offload", "set", 50)[0] == 0
    code, out = gnbctl(topology, "power", "consolidate", "on", "--hold-s", 2)
    assert code == 0
    on = out["result"]["policy"]
    assert on["enabled"] is True
    assert on["thresholds"] == {**CONSOLIDATION_DEFAULTS, "hold_s": 2}
    assert on["changed_ns"] > policy["changed_ns"]
    (nic,) = out["result"]["nics"]
    assert nic["percent"] == 50 and nic["vf_buckets_on_nic"] == 0
    assert nic["hosts"]["host0"] == {"port": 3, "vf_buckets": 64, "percent": 50}
    # off, --json after the subcommand: the thresholds stay
    done = run(topology, "power", "consolidate", "off", "--min-hosts", 1, "--json")
    assert done.returncode == 0, done.stderr
    off = json.loads(done.stdout)["result"]["policy"]
    assert off["enabled"] is False and off["thresholds"]["hold_s"] == 2
    code, out = gnbctl(topology, "power", "consolidate", "--consolidate-below", "0.25",
                       "--spread-above", "0.5")
    assert out["result"]["policy"]["thresholds"] == {
        "consolidate_below": 0.25, "spread_above": 0.5, "hold_s": 2, "min_hosts": 1}
    # for people: the policy, the buckets per host, who moves them
    text = run(topology, "power", "consolidate").stdout
    assert "consolidation policy" in text and "off" in text and "0.25" in text
    assert "host0" in text and "(kept on the NIC)" in text
    assert "`gnbctl run` applies the policy" in text
    # --target naming only a host: no NIC to read
    code, out = gnbctl(topology, "--target", "host0", "power", "consolidate")
    assert code == 0 and out["result"]["nics"] == []


def test_consolidate_a_bad_value_is_one_line_and_changes_nothing(nic_and_host):
    topology = nic_and_host
    before = gnbctl(topology, "power", "consolidate")[1]["result"]["policy"]
    done = run(topology, "power", "consolidate", "on", "--spread-above", "1.5")
    assert done.returncode == 1
    assert done.stderr == ("gnbctl: error: power: INVALID_ARGUMENT: spread_above 1.5: must be "
                           "0 < consolidate_below < spread_above <= 1 (consolidate_below is "
                           "0.5)\n")
    for args, message in ((("--hold-s", 0), "hold_s 0: must be 1 <= hold_s <= 3600"),
                          (("--min-hosts", 65), "min_hosts 65: must be 1 <= min_hosts <= 64"),
                          (("--consolidate-below", "0.9"), "consolidate_below 0.9: must be")):
        code, out = gnbctl(topology, "power", "consolidate", "on", *args)
        assert code == 1 and "INVALID_ARGUMENT" in out["error"] and message in out["error"]
    assert gnbctl(topology, "power", "consolidate")[1]["result"]["policy"] == before
