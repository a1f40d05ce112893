"""`gnbctl up` / `gnbctl down` as the README has a new user run them
(issue 17, "Done when"): veth pairs made by hand, a topology file with
launch keys, `gnbctl up` (a NIC, two hybrid hosts, the BaaS and the power
sidecar, real processes), `up` again (already up: nothing started),
`pipeline push`, `drb load --count 65536`, `gnbctl counters` while an
`offload set 50` runs in another process, real downlink frames checked byte
for byte on the radio side and their BaaS copies, a /metrics scrape that
agrees with `gnbctl counters`, a host killed and brought back by `up`,
then `gnbctl down`: every process gone, nothing left in the run
directory but the logs. And the one-line refusals."""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import GNBCTL, REPO
from controller.launch import updown
from controller.launch.processes import dpdk_runtime_dir, free_tcp_port
from t4p4s.stf.veth import PortCapture, VethPorts
from testbench.topology.scenario import drbs_on_host, offloaded
from testbench.topology.sn_check import check_downlink
from testbench.topology.traffic import DownlinkFrames

pytestmark = pytest.mark.dpdk
N3, RADIO, BAAS = 0, 1, 2
N_DRBS = 65536
TRAFFIC_DRBS = list(range(0, 4096, 32))      # 128 DRBs, spread over the offload buckets
FRAMES = 512
PERCENT = 50


def gnbctl(topology: Path, *args, json_output: bool = True, timeout: float = 180):
    """(exit code, the --json document or None, stderr)."""
    done = subprocess.run([str(GNBCTL), "--topology", str(topology),
                           *(["--json"] if json_output else []), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)
    document = json.loads(done.stdout) if json_output and done.stdout.strip() else None
    return done.returncode, document, done.stderr


def alive(pid: int) -> bool:
    """Runs and is no zombie (what `up` started is reparented: nobody here
    reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def write_topology(path: Path, veths: VethPorts) -> Path:
    nic_ports = json.dumps([pair.dp for pair in veths.pairs])
    hosts = "".join(f"""
[[targets]]
name = "host{i}"
role = "host"
address = "127.0.0.1:{free_tcp_port()}"
device_id = {2 + i}
p4 = "{REPO}/p4src/host.p4"
nic = "nic0"
vf = {i}
lcores = 1
governor = "nap"
""" for i in range(2))
    path.write_text(f"""[run]
dir = "run"

[[targets]]
name = "nic0"
role = "nic"
address = "127.0.0.1:{free_tcp_port()}"
device_id = 1
p4 = "{REPO}/p4src/nic.p4"
lcores = 0
ports = {nic_ports}
governor = "nap"
{hosts}
[baas]
address = "127.0.0.1:{free_tcp_port()}"
launch = true
ports = ["{veths.pairs[BAAS].test}"]
lcores = 1
governor = "nap"
options = ["--max-pdus", "16384", "--t-poll-retransmit", "60000"]

[power]
address = "unix:run/power.grpc"
launch = true
period_ms = 1000
""")
    return path


@pytest.fixture
def launchable(gnb_builds, tmp_path):
    """(topology, capture): veth pairs for the NIC's N3, radio and BaaS PFs
    (the BaaS on the far end of the last, the test capturing the far ends
    too) and a topology file that launches everything on them; whatever is
    still up afterwards is brought down, the veths removed."""
    from controller.launch.baas import build as build_baas
    build_baas()           # here, not inside the timed gnbctl up
    veths = VethPorts(3)
    capture = PortCapture(veths.pairs)
    topology = write_topology(tmp_path / "gnb.toml", veths)
    try:
        yield topology, capture
    finally:
        subprocess.run([str(GNBCTL), "--topology", str(topology), "down", "--grace", "2"],
                       capture_output=True, timeout=120)
        capture.close()
        veths.close()


def send_downlink(capture: PortCapture, frames: DownlinkFrames, count: int):
    """Frames 0 .. count-1 into N3, a burst at a time (the NIC's rx ring
    holds them while its napping lcore wakes up)."""
    for k in range(count):
        capture.send(N3, frames.frame(k))
        if k % 64 == 63:
            time.sleep(0.01)
    deadline = time.monotonic() + 20
    while len(capture.snapshot()[RADIO]) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)       # and nothing more comes


def scrape(port: int, after: float, timeout: float = 30) -> dict:
    """(name, sorted labels) -> value of a /metrics scrape whose read of
    the targets began after `after` (time.time())."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                           for family in text_string_to_metric_families(r.read().decode())
                           for s in family.samples}
            began = (samples.get(("gnbctl_refresh_timestamp_seconds", ()), 0)
                     - samples.get(("gnbctl_refresh_duration_seconds", ()), 0))
            if began > after:
                return samples
        except OSError:
            pass            # not listening yet
        assert time.monotonic() < deadline, "no /metrics refresh after the traffic"
        time.sleep(0.1)


def test_up_traffic_side_by_side_metrics_down(launchable, tmp_path):
    topology, capture = launchable
    run_dir = tmp_path / "run"

    started_at = time.monotonic()
    code, up, stderr = gnbctl(topology, "up")
    up_seconds = time.monotonic() - started_at
    assert code == 0, stderr
    rows = {p["name"]: p for p in up["result"]["processes"]}
    assert list(rows) == ["nic0", "host0", "host1", "baas", "power"]
    assert {p["state"] for p in rows.values()} == {"started"}
    pids = {name: p["pid"] for name, p in rows.items()}
    for name, pid in pids.items():
        assert alive(pid), name
        assert (run_dir / f"{name}.pid").read_text() == f"{pid}\n"
        assert os.getsid(pid) == pid, f"{name} is not in a session of its own"
    print(f"gnbctl up: {up_seconds:.1f} s")

    # again: already up, one line, exit code 1, nothing started
    code, _, stderr = gnbctl(topology, "up", json_output=False)
    assert code == updown.EXIT_ALREADY_UP
    assert stderr.count("\n") == 1 and "already up" in stderr and "nothing started" in stderr
    assert {name: int((run_dir / f"{name}.pid").read_text()) for name in pids} == pids

    assert gnbctl(topology, "pipeline", "push")[0] == 0
    code, loaded, stderr = gnbctl(topology, "drb", "load", "--count", N_DRBS)
    assert code == 0, stderr
    assert {t: r["entries"] for t, r in loaded["result"]["targets"].items()} == \
        {name: 2 * N_DRBS for name in ("nic0", "host0", "host1")}

    # side by side: counters (read-only) while an offload set writes
    shift = subprocess.Popen([str(GNBCTL), "--topology", str(topology), "--json", "offload",
                              "set", str(PERCENT)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    readings = []
    while shift.poll() is None or not readings:
        readings.append(gnbctl(topology, "counters"))
    shift_out, shift_err = shift.communicate(timeout=60)
    assert shift.returncode == 0, shift_err
    assert [(code, stderr) for code, _, stderr in readings] == [(0, "")] * len(readings)
    assert json.loads(shift_out)["result"][0]["percent"] == PERCENT

    # real frames: each radio frame is the expected one, byte for byte, its
    # BaaS copy too; the hosts built exactly the offloaded DRBs' frames
    frames = DownlinkFrames(TRAFFIC_DRBS)
    send_downlink(capture, frames, FRAMES)
    radio, baas = capture.snapshot()[RADIO], capture.snapshot()[BAAS]
    check = check_downlink(frames, FRAMES, radio, baas)
    assert check.ok, check.summary()
    assert (check.received, check.lost, check.wrong_bytes, check.baas_mismatch) == \
        (FRAMES, 0, 0, 0)
    to_host = [sum(frames.drb_of(k) in drbs_on_host(TRAFFIC_DRBS, PERCENT, h, 2)
                   for k in range(FRAMES)) for h in range(2)]
    assert 0 < sum(to_host) < FRAMES
    assert sum(to_host) == sum(offloaded(frames.drb_of(k), PERCENT) for k in range(FRAMES))
    code, counted, stderr = gnbctl(topology, "counters")
    assert code == 0, stderr
    downlink = {r["target"]: r["downlink"]["total"]["packets"] for r in counted["result"]}
    assert [downlink["host0"], downlink["host1"]] == to_host

    # /metrics says what counters said
    port = free_tcp_port()
    exporter = subprocess.Popen([str(GNBCTL), "--topology", str(topology), "metrics",
                                 "--listen", f"127.0.0.1:{port}", "--interval", "0.5"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        samples = scrape(port, time.time())
    finally:
        exporter.terminate()
        exporter.communicate(timeout=30)
    for r in counted["result"]:
        t = r["target"]
        assert samples[("gnbctl_target_up", (("role", "nic" if t == "nic0" else "host"),
                                             ("target", t)))] == 1
        assert samples[("gnb_packets_total", (("counter", "downlink"), ("target", t)))] == \
            r["downlink"]["total"]["packets"]
        assert samples[("gnb_bytes_total", (("counter", "downlink"), ("target", t)))] == \
            r["downlink"]["total"]["bytes"]

    # a host that died: its pid file is stale, `up` starts it (only it) again
    os.kill(pids["host1"], 9)
    deadline = time.monotonic() + 10
    while alive(pids["host1"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    code, again, stderr = gnbctl(topology, "up")
    assert code == 0, stderr
    states = {p["name"]: p["state"] for p in again["result"]["processes"]}
    assert states == {"nic0": "already running", "host0": "already running",
                      "host1": "started again (stale pid file cleaned)",
                      "baas": "already running", "power": "already running"}
    host1 = next(p["pid"] for p in again["result"]["processes"] if p["name"] == "host1")
    assert host1 != pids["host1"] and alive(host1)
    pids["host1"] = host1

    prefixes = [updown.Process(name, "", run_dir).eal_prefix for name in pids]
    assert all(dpdk_runtime_dir(p).exists() for p in prefixes[:4])   # the DPDK ones
    code, down, stderr = gnbctl(topology, "down")
    assert code == 0, stderr
    assert {p["name"]: p["state"] for p in down["result"]["processes"]} == \
        dict.fromkeys(pids, "stopped")
    assert not [name for name, pid in pids.items() if alive(pid)]
    assert sorted(p.name for p in run_dir.iterdir()) == \
        sorted([".lock"] + [f"{name}.log" for name in pids])
    assert not [p for p in prefixes if dpdk_runtime_dir(p).exists()]

    code, again, stderr = gnbctl(topology, "down", json_output=False)
    assert (code, stderr) == (0, "")


def test_up_refusals_are_one_line(tmp_path, gnb_builds):
    """A topology without launch keys, --target, and a NIC whose port does
    not exist: one line each, the documented exit code, nothing left running."""
    plain = tmp_path / "plain.toml"
    plain.write_text('[[targets]]\nname = "nic0"\nrole = "nic"\naddress = "127.0.0.1:1"\n')
    code, _, stderr = gnbctl(plain, "up", json_output=False)
    assert (code, stderr.count("\n")) == (2, 1)
    assert "targets[0] (nic0): no launch keys: gnbctl up starts every target" in stderr

    code, _, stderr = gnbctl(plain, "--target", "nic0", "up", json_output=False)
    assert (code, stderr.count("\n")) == (64, 1)

    broken = tmp_path / "broken.toml"
    broken.write_text(f'[run]\ndir = "run"\n[[targets]]\nname = "nic0"\nrole = "nic"\n'
                      f'address = "127.0.0.1:{free_tcp_port()}"\np4 = "{REPO}/p4src/nic.p4"\n'
                      'lcores = 0\nports = ["nosuchif0", "nosuchif1", "nosuchif2"]\n')
    code, _, stderr = gnbctl(broken, "up", json_output=False)
    assert (code, stderr.count("\n")) == (1, 1)
    # the runtime's own error line, out of a log that ends in a PMD's debug lines
    assert "nic0 exited while starting (status 1): error: --vdev net_af_packet" in stderr
    assert "did not probe" in stderr and f"(its log: {tmp_path / 'run' / 'nic0.log'})" in stderr
    assert not list((tmp_path / "run").glob("*.pid"))
    code, _, stderr = gnbctl(broken, "down", json_output=False)
    assert (code, stderr) == (0, "")
