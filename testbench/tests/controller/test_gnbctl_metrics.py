"""`gnbctl metrics` (issue 17 item 7) as an operator runs it: the real CLI
as a process on real targets, scraped over HTTP and parsed with
prometheus_client's own parser. Every value is compared with what
`gnbctl counters / offload show / baas stats / power show --json` read
after the exporter's last refresh: the NIC's drops, totals and per-DRB
cells after real frames, the offload split set from another gnbctl while
the exporter runs (it holds no primary), the BaaS's and the power
sidecar's figures. A target that does not answer, or stops answering, is
gnbctl_target_up 0 while the scrape still answers at once; a bad --listen
is one line and its exit code."""
from __future__ import annotations

import json
import math
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import (GNBCTL, target_on_veths, wait_for, write_controlled_topology,
                      write_topology)
from controller.counters import DROP_REASONS
from controller.launch.baas import build as build_baas, start_on_port
from controller.launch.power import PowerSidecar, PowerSpec
from testbench.gnb.baas_frames import amd_frame
from testbench.gnb.frames import DownlinkPacket
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk
N3, RADIO = 0, 1
N_DRBS = 16
INTERVAL_S = 0.3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


Samples = dict[tuple[str, tuple], float]


def parse(text: str) -> Samples:
    """(sample name, sorted labels) -> value, as prometheus_client parses it."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels) -> float:
    key = (name, tuple(sorted((k, str(v)) for k, v in labels.items())))
    assert key in samples, f"no {name}{labels} in the scrape"
    return samples[key]


def series(samples: Samples, name: str, **labels) -> dict[tuple, float]:
    """Every sample of `name` whose labels include `labels`."""
    return {k[1]: v for k, v in samples.items()
            if k[0] == name and all((n, str(w)) in k[1] for n, w in labels.items())}


class Exporter:
    """`gnbctl metrics` running as a process; stop() ends it with a signal."""

    def __init__(self, topology: Path, *args, port: int | None = None):
        self.port = port or free_port()
        self.process = subprocess.Popen(
            [str(GNBCTL), "--topology", str(topology), "metrics", "--listen",
             f"127.0.0.1:{self.port}", *map(str, args)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def scrape(self, timeout: float = 5.0) -> tuple[Samples, float]:
        """(samples, seconds the scrape took)."""
        started = time.monotonic()
        with urllib.request.urlopen(self.url, timeout=timeout) as response:
            assert response.status == 200
            text = response.read().decode()
        return parse(text), time.monotonic() - started

    def refreshed_after(self, moment: float, timeout: float = 30.0) -> Samples:
        """A scrape of a refresh that began after `moment` (time.time())."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, self.process.communicate()
            try:
                samples, _ = self.scrape()
            except OSError:
                samples = {}        # not listening yet
            if ("gnbctl_refresh_timestamp_seconds", ()) in samples:
                began = (value(samples, "gnbctl_refresh_timestamp_seconds")
                         - value(samples, "gnbctl_refresh_duration_seconds"))
                if began > moment:
                    return samples
            assert time.monotonic() < deadline, "no refresh after the moment asked for"
            time.sleep(0.05)

    def stop(self, signum=signal.SIGTERM) -> tuple[int, str, str]:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err


@pytest.fixture
def exporters():
    started: list[Exporter] = []

    def start(topology, *args, **kw) -> Exporter:
        started.append(Exporter(topology, *args, **kw))
        return started[-1]
    yield start
    for e in started:
        if e.process.poll() is None:
            e.process.kill()
            e.process.communicate()


@pytest.fixture
def gnb(start_target, gnb_builds, gnbctl, tmp_path):
    """(topology, capture, nic): the NIC with its N3, radio and BaaS ports
    on veths and host0 (net_null) behind it, both with their control
    sockets in the topology, DRBs 0..15 loaded, offload 0%."""
    host = start_target(vdevs=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                        build=gnb_builds["host"])
    with target_on_veths(start_target, gnb_builds["nic"], 3) as (nic, capture):
        topology = write_controlled_topology(tmp_path / "topology.toml", gnb_builds, nic, host)
        assert gnbctl(topology, "pipeline", "push")[0] == 0
        assert gnbctl(topology, "drb", "load", "--count", N_DRBS)[0] == 0
        assert gnbctl(topology, "offload", "set", 0)[0] == 0
        yield topology, capture, nic


def send_downlink(capture, drbs: list[int], radio_before: int) -> list[bytes]:
    frames = [DownlinkPacket(generated_drb(i), bytes([i]) * (40 + i)).n3_frame()
              for i in drbs]
    for frame in frames:
        capture.send(N3, frame)
    wait_for(capture, RADIO, radio_before + len(frames))
    return frames


def assert_counters_equal(samples: Samples, result: list[dict]):
    """The scrape holds what `gnbctl counters --nonzero --json` printed:
    every drop reason (zeros too), every counter's totals and DRBs
    counted, and per DRB exactly the DRBs that counted."""
    for r in result:
        t = r["target"]
        assert value(samples, "gnbctl_target_up", target=t,
                     role="nic" if t.startswith("nic") else "host") == 1
        for reason in DROP_REASONS.values():
            cell = r["drops"].get(reason, {"packets": 0, "bytes": 0})
            assert value(samples, "gnb_pipeline_drops_total", target=t,
                         reason=reason) == cell["packets"], (t, reason)
            assert value(samples, "gnb_pipeline_dropped_bytes_total", target=t,
                         reason=reason) == cell["bytes"], (t, reason)
        counted = {k: v for k, v in r.items()
                   if isinstance(v, dict) and k not in ("drops", "runtime_drops")}
        assert set(counted) >= {"downlink", "uplink"}
        # the runtime's drops, as counters splits them (zeros for the rest)
        runtime = r["runtime_drops"]
        drops = series(samples, "gnb_runtime_drops_total", target=t)
        assert {dict(k)["reason"]: v for k, v in drops.items() if v} == runtime["drops"]
        assert "tx_full" in {dict(k)["reason"] for k in drops}
        expected = series(samples, "gnb_runtime_expected_drops_total", target=t)
        assert {dict(k)["reason"]: v for k, v in expected.items() if v} == \
            {k: v["packets"] for k, v in runtime["expected"].items()}
        for name, c in counted.items():
            total = c.get("total", c)
            assert value(samples, "gnb_packets_total", target=t, counter=name) == \
                total["packets"], (t, name)
            assert value(samples, "gnb_bytes_total", target=t, counter=name) == \
                total["bytes"], (t, name)
            if "drbs_counted" in c:
                assert value(samples, "gnb_drbs_counted", target=t, counter=name) == \
                    c["drbs_counted"]
                per_drb = {dict(k)["drb"]: v for k, v in
                           series(samples, "gnb_drb_packets_total", target=t,
                                  counter=name).items()}
                assert per_drb == {d: v["packets"] for d, v in c["per_drb"].items()}, name
                per_drb = {dict(k)["drb"]: v for k, v in
                           series(samples, "gnb_drb_bytes_total", target=t,
                                  counter=name).items()}
                assert per_drb == {d: v["bytes"] for d, v in c["per_drb"].items()}, name


def lcores(nic) -> dict[int, dict]:
    """The NIC runtime's own `power` reply, by lcore."""
    return {lc["lcore"]: lc for lc in nic.runtime.request({"cmd": "power"})["lcores"]}


def test_scrape_equals_gnbctl_counters_and_offload(gnb, gnbctl, exporters):
    topology, capture, nic = gnb
    first = send_downlink(capture, [2, 2, 2, 5], 0)
    unknown = DownlinkPacket(generated_drb(N_DRBS), b"lost" * 10).n3_frame()
    capture.send(N3, unknown)

    exporter = exporters(topology, "--per-drb", "--interval", INTERVAL_S)
    samples = exporter.refreshed_after(time.time())

    # the exporter claims no primary: offload set (a session) works meanwhile
    code, out = gnbctl(topology, "offload", "set", 25)
    assert code == 0, out
    second = send_downlink(capture, [7, 7, 2], len(first))
    changed = time.time()
    lcores_before = lcores(nic)
    samples = exporter.refreshed_after(changed)
    lcores_after = lcores(nic)
    stats = nic.runtime.request({"cmd": "stats"})
    code, counted = gnbctl(topology, "counters", "--nonzero")
    assert code == 0
    code, shown = gnbctl(topology, "offload", "show")
    assert code == 0

    # what was sent, so that a scrape of zeros cannot pass
    nic = next(r for r in counted["result"] if r["target"] == "nic0")
    assert nic["downlink"]["total"] == {"packets": 7, "bytes": sum(map(len, first + second))}
    assert nic["drops"]["unknown_teid"] == {"packets": 1, "bytes": len(unknown)}
    assert set(nic["downlink"]["per_drb"]) == {"2", "5", "7"}
    assert_counters_equal(samples, counted["result"])
    assert value(samples, "gnb_drb_packets_total", target="nic0", counter="downlink",
                 drb=2) == 4

    [split] = shown["result"]
    assert split["buckets"] == 256 and split["mode"] == "ratio"
    assert value(samples, "gnb_offload_buckets", target="nic0") == split["buckets"]
    assert value(samples, "gnb_offload_ratio", target="nic0") == split["percent"] / 100
    assert value(samples, "gnb_offload_mode", target="nic0", mode="ratio") == 1
    assert value(samples, "gnb_offload_markers", target="nic0") == len(split["markers"])
    for host, v in split["hosts"].items():
        assert value(samples, "gnb_offload_host_vf_buckets", target="nic0",
                     host=host) == v["vf_buckets"] == 64
        assert math.isclose(value(samples, "gnb_offload_host_ratio", target="nic0",
                                  host=host), v["percent"] / 100)
    assert not series(samples, "gnb_offload_buckets", target="host0")

    # the control socket's: ports and parser errors as the runtime counts
    # them, lcore counters between two readings of its own (packets: exact)
    assert value(samples, "gnbctl_target_control_up", target="nic0") == 1
    assert [p["port"] for p in stats["ports"]] == [0, 1, 2]
    assert (stats["ports"][N3]["rx"], stats["ports"][RADIO]["tx"]) == (8, 7)
    for port in stats["ports"]:
        for key, name in (("rx", "received"), ("tx", "transmitted"),
                          ("rx_dropped", "rx_dropped"), ("tx_dropped", "tx_dropped")):
            assert value(samples, f"gnb_port_{name}_packets_total", target="nic0",
                         port=port["port"]) == port[key], (port, key)
    assert {dict(k)["error"]: v for k, v in
            series(samples, "gnb_parser_errors_total", target="nic0").items()} == \
        stats["parser_errors"]
    assert set(lcores_after) == {int(dict(k)["lcore"]) for k in
                                 series(samples, "gnb_lcore_polls_total", target="nic0")}
    assert sum(lc["packets"] for lc in lcores_after.values()) == 8
    for lcore, lc in lcores_after.items():
        labels = {"target": "nic0", "lcore": lcore}
        assert value(samples, "gnb_lcore_packets_total", **labels) == lc["packets"]
        for key, name, scale in (("polls", "polls", 1), ("empty_polls", "empty_polls", 1),
                                 ("work_ns", "work_seconds", 1e9)):
            assert lcores_before[lcore][key] / scale <= \
                value(samples, f"gnb_lcore_{name}_total", **labels) <= lc[key] / scale, key
        busy = value(samples, "gnb_lcore_busy_ratio", **labels)
        assert 0 < busy < 1 and math.isclose(
            busy, value(samples, "gnb_lcore_work_seconds_total", **labels)
            / value(samples, "gnb_lcore_seconds_total", **labels), rel_tol=1e-6)
    assert series(samples, "gnb_lcore_polls_total", target="host0")

    # a refresh later nothing changed: the same values (but the lcores')
    again = exporter.refreshed_after(time.time())

    def unchanged(s: Samples) -> Samples:
        return {k: v for k, v in s.items()
                if not k[0].startswith(("gnbctl_", "gnb_lcore_"))}
    assert unchanged(again) == unchanged(samples)

    code, out, err = exporter.stop(signal.SIGINT)
    assert code == 0, err
    assert err == ""
    assert out.splitlines() == [f"serving http://127.0.0.1:{exporter.port}/metrics (every "
                                f"{INTERVAL_S:g} s, per DRB): 2 targets"]


class Silent:
    """A TCP port that accepts connections and never answers: a target
    that hangs (its P4Runtime server stopped, the process not dead)."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.address = "127.0.0.1:%d" % self.socket.getsockname()[1]

    def close(self):
        self.socket.close()


def test_a_target_that_does_not_answer_is_up_0_and_the_scrape_answers(
        start_target, gnb_builds, gnbctl, exporters, tmp_path):
    nic = start_target(vdevs=["net_ring0"], build=gnb_builds["nic"])
    silent = Silent()
    try:
        topology = write_topology(tmp_path / "topology.toml", [
            {"name": "nic0", "role": "nic", "address": nic.address,
             "p4info": gnb_builds["nic"].p4info_text_path},
            {"name": "ghost", "role": "host", "address": f"127.0.0.1:{free_port()}"},
            {"name": "hung", "role": "host", "address": silent.address}], timeout=2.0)
        assert gnbctl(topology, "--target", "nic0", "pipeline", "push")[0] == 0
        exporter = exporters(topology, "--interval", INTERVAL_S)
        samples = exporter.refreshed_after(time.time())
        assert value(samples, "gnbctl_target_up", target="nic0", role="nic") == 1
        assert value(samples, "gnbctl_target_up", target="ghost", role="host") == 0
        assert value(samples, "gnbctl_target_up", target="hung", role="host") == 0
        # the hung target costs the refresh its timeout, not the scrape
        assert value(samples, "gnbctl_target_read_duration_seconds", target="hung") >= 1.9
        _, seconds = exporter.scrape()
        assert seconds < 0.5, seconds
        # nothing but up and the read time of a target that was not read
        assert {k[0] for k in samples if dict(k[1]).get("target") == "ghost"} == {
            "gnbctl_target_up", "gnbctl_target_read_duration_seconds"}
        assert value(samples, "gnb_pipeline_drops_total", target="nic0",
                     reason="unknown_teid") == 0
        # no --per-drb: no per-DRB series
        assert not series(samples, "gnb_drb_packets_total")

        # the NIC stops: up 0 from the next refresh on, the scrape still answers
        nic.stop()
        stopped = time.time()
        samples = exporter.refreshed_after(stopped)
        assert value(samples, "gnbctl_target_up", target="nic0", role="nic") == 0
        assert not series(samples, "gnb_pipeline_drops_total", target="nic0")
        code, out, err = exporter.stop(signal.SIGTERM)
    finally:
        silent.close()
    assert code == 0, err
    # a line when a target goes down (the first of each here: on a loaded
    # machine nic0 may miss a deadline before it stops, and come back)
    lines = err.splitlines()
    down = {}
    for line in lines:
        name = line.removeprefix("gnbctl metrics: ").split(" ")[0]
        if line.startswith(f"gnbctl metrics: {name} down: "):
            down.setdefault(name, line)
    assert set(down) == {"ghost", "hung", "nic0"}, err
    assert down["ghost"].startswith("gnbctl metrics: ghost down: ghost: cannot reach the "
                                    "P4Runtime server at 127.0.0.1:"), err
    assert "UNAVAILABLE" in down["ghost"] and "no answer within 2 s" in down["hung"], err
    assert not [line for line in lines if line.endswith(("ghost up again", "hung up again"))]
    assert lines[-1].startswith("gnbctl metrics: nic0 down: nic0: "), err


def test_bad_listen_is_one_line_and_its_exit_code(tmp_path):
    topology = write_topology(tmp_path / "topology.toml", [
        {"name": "nic0", "role": "nic", "address": f"127.0.0.1:{free_port()}"}])

    def metrics(*args, json_output=False):
        done = subprocess.run([str(GNBCTL), *(["--json"] if json_output else []),
                               "--topology", str(topology), "metrics", *args],
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    for listen in ("nonsense", "127.0.0.1:http", "127.0.0.1:65536", "::1:9464"):
        code, out, err = metrics("--listen", listen)
        assert code == 64, (listen, err)
        assert out == "" and len(err.splitlines()) == 1, err
        assert err.startswith("gnbctl metrics: error: argument --listen: "), err
    code, _, err = metrics()
    assert code == 64 and "the following arguments are required: --listen" in err

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, out, err = metrics("--listen", f"127.0.0.1:{port}")
        assert (code, out) == (1, "")
        assert err == (f"gnbctl: error: metrics: cannot listen on 127.0.0.1:{port}: "
                       f"Address already in use: another process listens there; give "
                       f"another port\n")
        code, out, _ = metrics("--listen", f"127.0.0.1:{port}", json_output=True)
        answer = json.loads(out)
        assert (code, answer["ok"], answer["exit_code"]) == (1, False, 1)
        assert answer["error"].startswith(f"metrics: cannot listen on 127.0.0.1:{port}")
    # TEST-NET-1: no address of this machine
    code, _, err = metrics("--listen", "192.0.2.1:9464")
    assert code == 1 and err == ("gnbctl: error: metrics: cannot listen on 192.0.2.1:9464: "
                                 "Cannot assign requested address: not an address of this "
                                 "machine\n")
    code, _, err = metrics("--listen", "no-such-host.invalid:9464")
    assert code == 1 and len(err.splitlines()) == 1
    assert err.startswith("gnbctl: error: metrics: cannot listen on no-such-host.invalid:9464")
    code, _, err = metrics("--listen", "127.0.0.1:0", "--interval", "0")
    assert code == 1 and err == ("gnbctl: error: --interval must be a number of seconds "
                                 "above 0, not 0\n")


# ---- the BaaS and the power sidecar ---------------------------------------------

HELD = {(3, 4): range(5), (5, 4): range(2)}


@pytest.fixture(scope="module")
def baas_executable(dpdk_environment, build_variant):
    return build_baas(build_variant)


@pytest.fixture
def sidecars(two_targets, baas_executable, tmp_path):
    """(topology with [baas] and [power]): the NIC and host of two_targets,
    a BaaS holding 7 PDUs of 2 DRBs, the power sidecar on both targets'
    control sockets."""
    topology, targets = two_targets
    baas = start_on_port(baas_executable, tmp_path / "baas",
                         [amd_frame(*drb, sn) for drb, sns in HELD.items() for sn in sns])
    sidecar = None
    try:
        baas.wait_received(sum(len(s) for s in HELD.values()))
        sidecar = PowerSidecar(PowerSpec({name: t.runtime.control_path
                                          for name, (t, _) in targets.items()},
                                         tmp_path / "power"))
        topology.write_text(topology.read_text() + f'[baas]\naddress = "{baas.address}"\n'
                            f'[power]\naddress = "{sidecar.address}"\n')
        yield topology, baas, sidecar
    finally:
        if sidecar is not None:
            sidecar.stop()
        if baas.alive():
            baas.stop()


def test_baas_and_power_series_equal_their_gnbctl_commands(sidecars, gnbctl, exporters):
    topology, baas, sidecar = sidecars
    assert gnbctl(topology, "pipeline", "push")[0] == 0
    before_refresh = time.time()
    code, power_before = gnbctl(topology, "power", "show")
    assert code == 0, power_before
    exporter = exporters(topology, "--interval", INTERVAL_S)
    samples = exporter.refreshed_after(before_refresh)
    code, power_after = gnbctl(topology, "power", "show")
    assert code == 0
    code, stats = gnbctl(topology, "baas", "stats")
    assert code == 0

    b = {"baas": "baas"}
    s = stats["result"]
    assert s["held"] == 7
    assert value(samples, "gnbctl_baas_up", **b) == 1
    for key, name in (("n_drbs", "gnb_baas_drbs"), ("held", "gnb_baas_held_pdus"),
                      ("held_bytes", "gnb_baas_held_bytes"), ("pool_size", "gnb_baas_pool_mbufs"),
                      ("pool_in_use", "gnb_baas_pool_mbufs_in_use"),
                      ("n_lcores", "gnb_baas_lcores")):
        assert value(samples, name, **b) == s[key], key
    c = s["counters"]
    assert c["pdus_received"] == 7
    for key, name in (("pdus_received", "gnb_baas_received_pdus_total"),
                      ("bytes_received", "gnb_baas_received_bytes_total"),
                      ("status_received", "gnb_baas_status_pdus_total"),
                      ("acked", "gnb_baas_acked_pdus_total"),
                      ("nacked", "gnb_baas_nacked_sns_total"),
                      ("retransmitted", "gnb_baas_retransmissions_total"),
                      ("poll_timeouts", "gnb_baas_poll_timeouts_total"),
                      ("rlf", "gnb_baas_rlf_events_total"),
                      ("nack_not_held", "gnb_baas_nack_not_held_total")):
        assert value(samples, name, **b) == c[key], key
    for cause in ("rlf", "bound", "flush"):
        assert value(samples, "gnb_baas_released_pdus_total", cause=cause, **b) == \
            c[f"released_{cause}"]
    assert c["dropped"]
    for reason, n in c["dropped"].items():
        assert value(samples, "gnb_baas_dropped_frames_total", reason=reason, **b) == n

    assert value(samples, "gnbctl_power_up", power="power") == 1
    before = {t["name"]: {lc["lcore"]: lc for lc in t["lcores"]}
              for t in power_before["result"]["targets"]}
    after = {t["name"]: {lc["lcore"]: lc for lc in t["lcores"]}
             for t in power_after["result"]["targets"]}
    assert set(before) == {"nic0", "host0"}
    for name, lcores in after.items():
        assert value(samples, "gnb_power_target_up", target=name) == 1
        for lcore, lc in lcores.items():
            labels = {"target": name, "lcore": lcore}
            assert value(samples, "gnb_power_lcore_mode", mode=lc["mode"], **labels) == 1
            assert len(series(samples, "gnb_power_lcore_mode", **labels)) == 1
            for state in ("busy", "paused", "asleep"):
                scraped = value(samples, f"gnb_power_lcore_{state}_seconds_total", **labels)
                # read between the two power shows, as the exporter read it
                assert before[name][lcore][f"{state}_ns"] / 1e9 <= scraped <= \
                    lc[f"{state}_ns"] / 1e9, (name, lcore, state)
            assert value(samples, "gnb_power_lcore_pstate", **labels) in \
                (before[name][lcore]["pstate"], lc["pstate"])

    # the sidecars stop: down, the targets' series stay, the scrape answers
    assert baas.stop() == 0
    sidecar.stop()
    samples = exporter.refreshed_after(time.time())
    assert value(samples, "gnbctl_baas_up", **b) == 0
    assert value(samples, "gnbctl_power_up", power="power") == 0
    assert not series(samples, "gnb_baas_held_pdus")
    assert not series(samples, "gnb_power_lcore_mode")
    assert value(samples, "gnbctl_target_up", target="nic0", role="nic") == 1
    code, _, err = exporter.stop()
    assert code == 0, err
    lines = [line.split(":")[0:2] for line in err.splitlines()]
    assert ["gnbctl metrics", " baas down"] in lines and \
        ["gnbctl metrics", " power down"] in lines, err
