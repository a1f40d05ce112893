"""gnbctl against real targets: the host and NIC builds of p4src/ with
their P4Runtime servers (started by the p4runtime tests' start_target),
gnbctl run as a subprocess on a topology file written per test."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "p4runtime"))

from p4rt_client import Names, load_p4info  # noqa: E402
from p4runtime.conftest import objects_build, start_target  # noqa: E402,F401

from t4p4s.stf.veth import PortCapture, VethPorts  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
GNBCTL = REPO / "controller" / "bin" / "gnbctl"


@pytest.fixture(scope="session")
def gnb_builds(compiled):
    return {role: compiled(REPO / "p4src" / f"{role}.p4") for role in ("nic", "host")}


@contextlib.contextmanager
def target_on_veths(start_target, build, n_ports: int) -> Iterator[tuple[object, PortCapture]]:
    """(target, PortCapture): the build (a NIC's or a host's) with its first
    n_ports ports on veth pairs (net_af_packet), the other ends captured;
    the veths and the capture are gone afterwards."""
    veths = VethPorts(n_ports)
    capture = PortCapture(veths.pairs)
    try:
        yield start_target(vdevs=[f"net_af_packet{p},iface={pair.dp}"
                                  for p, pair in enumerate(veths.pairs)],
                           build=build), capture
    finally:
        capture.close()
        veths.close()


def wait_for(capture: PortCapture, port: int, count: int, timeout: float = 10.0) -> None:
    """Until `port` has captured at least `count` frames."""
    deadline = time.monotonic() + timeout
    while len(capture.snapshot()[port]) < count:
        assert time.monotonic() < deadline, \
            f"port {port}: {len(capture.snapshot()[port])} of {count} frames"
        time.sleep(0.01)


def receive(capture: PortCapture, port: int, count: int, timeout: float = 10.0) -> list[bytes]:
    """The `count` frames `port` captured, checked to be all of them."""
    wait_for(capture, port, count, timeout)
    time.sleep(0.2)     # nothing more may come
    frames = capture.snapshot()[port]
    assert len(frames) == count
    return frames


def write_topology(path: Path, targets: list[dict], timeout: float = 5.0) -> Path:
    """targets: dicts of topology keys (name, role, address, p4info, ...)."""
    lines = ["election_id = 1", f"timeout = {timeout}"]
    for target in targets:
        lines.append("[[targets]]")
        lines += [f"{key} = {json.dumps(str(v) if isinstance(v, Path) else v)}"
                  for key, v in target.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_controlled_topology(path: Path, gnb_builds, nic, host) -> Path:
    """nic0 and host0 (behind nic0's VF 0), each with its control socket."""
    return write_topology(path, [
        {"name": "nic0", "role": "nic", "address": nic.address,
         "p4info": gnb_builds["nic"].p4info_text_path,
         "control": nic.runtime.control_path},
        {"name": "host0", "role": "host", "address": host.address,
         "p4info": gnb_builds["host"].p4info_text_path, "nic": "nic0", "vf": 0,
         "control": host.runtime.control_path}])


@pytest.fixture
def gnbctl():
    """gnbctl(topology, *args) -> (exit code, parsed --json output)."""
    def run(topology: Path, *args, timeout: float = 120):
        done = subprocess.run([str(GNBCTL), "--json", "--topology", str(topology),
                               *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
        try:
            output = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"gnbctl {' '.join(map(str, args))}: no JSON "
                                 f"(exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
        assert output["ok"] == (done.returncode == 0), output
        return done.returncode, output
    return run


@pytest.fixture
def two_targets(start_target, gnb_builds, tmp_path):
    """(topology path, {name: (Target, Names)}): a NIC and a hybrid host."""
    nic = start_target(vdevs=["net_ring0"], build=gnb_builds["nic"])
    host = start_target(vdevs=["net_ring1"], build=gnb_builds["host"])
    topology = write_topology(tmp_path / "topology.toml", [
        {"name": "nic0", "role": "nic", "address": nic.address,
         "p4info": gnb_builds["nic"].p4info_text_path},
        {"name": "host0", "role": "host", "address": host.address,
         "p4info": gnb_builds["host"].p4info_text_path, "nic": "nic0", "vf": 0}])
    names = {role: Names(load_p4info(gnb_builds[role].p4info_text_path))
             for role in ("nic", "host")}
    return topology, {"nic0": (nic, names["nic"]), "host0": (host, names["host"])}


def read_table(target, names: Names, table: str) -> list[p4r.TableEntry]:
    client = target.client()
    entity = p4r.Entity(table_entry=p4r.TableEntry(table_id=names.tables[table].preamble.id))
    return [e.table_entry for e in client.read(entity)]


def values(entry: p4r.TableEntry, names: Names) -> tuple[dict, dict]:
    """(match {field: int}, params {name: int}) by P4Info name."""
    table = next(t for t in names.tables.values() if t.preamble.id == entry.table_id)
    fields = {f.id: f.name for f in table.match_fields}
    action = next(a for a in names.actions.values()
                  if a.preamble.id == entry.action.action.action_id)
    params = {p.id: p.name for p in action.params}
    return ({fields[m.field_id]: int.from_bytes(m.exact.value, "big") for m in entry.match},
            {params[p.param_id]: int.from_bytes(p.value, "big")
             for p in entry.action.action.params})


LOADED_DRBS = 8


@pytest.fixture
def loaded(two_targets, gnbctl):
    """two_targets with the pipelines pushed and the generated DRBs
    0 .. LOADED_DRBS - 1 loaded on both."""
    topology, targets = two_targets
    assert gnbctl(topology, "pipeline", "push")[0] == 0
    assert gnbctl(topology, "drb", "load", "--count", LOADED_DRBS)[0] == 0
    return topology, targets
