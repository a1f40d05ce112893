"""gnbctl and the BaaS, through the real CLI and a real BaaS process
(build/baas/baas, controller/launch/baas.py's start_on_port): `gnbctl baas
stats/config/list/flush/events --json`, a topology without [baas] (exit
2), a BaaS that does not answer (exit 3, its address named), and with the
NIC and host targets, `drb del` flushing the DRB's bearer in the BaaS (or
warning when the BaaS is down) and `status` reporting the BaaS."""
from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from testbench.gnb.baas_frames import amd_frame
from controller.launch.baas import build, start_on_port

pytestmark = pytest.mark.dpdk
GNBCTL = Path(__file__).resolve().parents[3] / "controller" / "bin" / "gnbctl"

# what the BaaS holds at start: DRB 3 (ue_id 3, lcid 4: `drb load`'s
# generated DRB 3) SNs 0..4, DRB 5's SNs 0..1
HELD = {(3, 4): range(5), (5, 4): range(2)}


@pytest.fixture(scope="module")
def baas_executable(dpdk_environment, build_variant):
    return build(build_variant)


@pytest.fixture
def baas(baas_executable, tmp_path):
    process = start_on_port(baas_executable, tmp_path / "baas",
                                 [amd_frame(*drb, sn) for drb, sns in HELD.items() for sn in sns])
    try:
        process.wait_received(sum(len(s) for s in HELD.values()))
        yield process
    finally:
        if process.alive():
            assert process.stop() == 0, process.log_text()[-2000:]
        else:
            process.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_baas(topology, address: str, path=None):
    """The topology file with a [baas] table (in a copy at `path`)."""
    path = path or topology
    path.write_text(topology.read_text() + f'\n[baas]\naddress = "{address}"\n')
    return path


def offline_topology(tmp_path):
    """A topology whose one target nobody serves: the baas commands never
    reach the targets."""
    path = tmp_path / "topology.toml"
    path.write_text(f'timeout = 2.0\n[[targets]]\nname = "nic0"\nrole = "nic"\n'
                    f'address = "127.0.0.1:{free_port()}"\n')
    return path


def test_baas_commands(baas, gnbctl, tmp_path):
    topology = with_baas(offline_topology(tmp_path), baas.address)

    code, out = gnbctl(topology, "baas", "stats")
    assert code == 0, out
    stats = out["result"]
    assert (stats["n_drbs"], stats["held"], stats["counters"]["pdus_received"]) == (2, 7, 7)
    assert stats["counters"]["dropped"]["not_bearer"] == 0
    code, out = gnbctl(topology, "baas", "stats", "--drb", "3:4")
    assert code == 0
    assert (out["result"]["drb"], out["result"]["held"], out["result"]["tx_next"]) == \
        ({"ue_id": 3, "lcid": 4}, 5, 5)
    code, out = gnbctl(topology, "baas", "stats", "--drb", "9:4")
    assert (code, out["error"]) == (1, "baas: NOT_FOUND: no DRB ue_id=9 lcid=4")

    code, out = gnbctl(topology, "baas", "list")
    assert code == 0
    assert [(d["drb"]["ue_id"], d["drb"]["lcid"], d["held"]) for d in out["result"]] == \
        [(3, 4, 5), (5, 4, 2)]
    code, out = gnbctl(topology, "baas", "list", "--drb", "3:4")
    assert code == 0 and out["result"]["sns"] == [0, 1, 2, 3, 4]
    assert not out["result"]["truncated"]

    code, out = gnbctl(topology, "baas", "config")
    assert code == 0
    defaults = out["result"]
    assert defaults["t_poll_retransmit_ms"] == 60000 and defaults["max_pdus"] == 16384
    code, out = gnbctl(topology, "baas", "config", "--max-retx", 4)
    assert code == 0 and out["result"] == {**defaults, "max_retx_threshold": 4}
    defaults["max_retx_threshold"] = 4
    code, out = gnbctl(topology, "baas", "config", "--drb", "3:4", "--drb-max-pdus", 2)
    assert code == 0 and out["result"] == {**defaults, "drb_max_pdus": 2, "max_pdus": 0}
    assert gnbctl(topology, "baas", "config")[1]["result"] == defaults
    for flags, field in ((["--max-retx", 33], "max_retx_threshold"),
                         (["--t-poll-retransmit", 0], "t_poll_retransmit_ms"),
                         (["--drb-max-pdus", 131073], "drb_max_pdus")):
        code, out = gnbctl(topology, "baas", "config", *flags)
        assert code == 1 and out["error"].startswith("baas: INVALID_ARGUMENT: "), out
        assert field in out["error"]
    assert gnbctl(topology, "baas", "config")[1]["result"] == defaults
    code, out = gnbctl(topology, "baas", "config", "--drb", "9:4", "--max-retx", 2)
    assert (code, out["error"]) == (1, "baas: NOT_FOUND: no DRB ue_id=9 lcid=4")

    # the lowered bound released DRB 3's oldest 3 PDUs: one OVERFLOW event
    code, out = gnbctl(topology, "baas", "events")
    assert code == 0 and out["result"]["lost"] == 0
    assert [(e["type"], e["drb"], e["count"]) for e in out["result"]["events"]] == \
        [("OVERFLOW", {"ue_id": 3, "lcid": 4}, 3)]

    code, out = gnbctl(topology, "baas", "flush", "--drb", "3:4")
    assert code == 0 and out["result"] == {"drb": "3:4", "all": False, "released": 2}
    code, out = gnbctl(topology, "baas", "flush", "--drb", "3:4")
    assert (code, out["error"]) == (1, "baas: NOT_FOUND: no DRB ue_id=3 lcid=4")
    code, out = gnbctl(topology, "baas", "flush", "--all")
    assert code == 0 and out["result"] == {"drb": None, "all": True, "released": 2}
    assert gnbctl(topology, "baas", "list")[1]["result"] == []

    # for people: rich tables
    shown = subprocess.run([str(GNBCTL), "--topology", str(topology), "baas", "stats"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "held PDUs" in shown.stdout, shown


def test_no_baas_in_the_topology_or_none_answering(gnbctl, tmp_path):
    topology = offline_topology(tmp_path)
    commands = [["stats"], ["config"], ["config", "--max-retx", 2], ["list"],
                ["list", "--drb", "1:4"], ["flush", "--all"], ["events"]]
    for command in commands:
        code, out = gnbctl(topology, "baas", *command)
        assert code == 2, (command, out)
        assert "no [baas] table" in out["error"]

    dead = f"127.0.0.1:{free_port()}"
    with_baas(topology, dead)
    for command in commands:
        code, out = gnbctl(topology, "baas", *command)
        assert code == 3, (command, out)
        assert out["error"].startswith(f"baas: cannot reach the BaaS at {dead}: UNAVAILABLE")

    bad = tmp_path / "bad.toml"
    bad.write_text(topology.read_text().replace("[baas]", "[baas]\nport = 1"))
    code, out = gnbctl(bad, "baas", "stats")
    assert code == 2 and "[baas]: unknown keys port" in out["error"]


def test_drb_del_flushes_the_baas_and_status_shows_it(loaded, baas, gnbctl):
    topology, _ = loaded
    with_baas(topology, baas.address)

    code, out = gnbctl(topology, "status")
    assert code == 0, out
    rows = {r["target"]: r for r in out["result"]}
    assert rows["baas"]["role"] == "baas" and rows["baas"]["reachable"]
    assert (rows["baas"]["baas"]["held"], rows["baas"]["baas"]["n_drbs"]) == (7, 2)
    assert rows["nic0"]["reachable"] and rows["host0"]["reachable"]
    # --target picks targets: no BaaS row
    code, out = gnbctl(topology, "--target", "nic0", "status")
    assert code == 0 and [r["target"] for r in out["result"]] == ["nic0"]

    code, out = gnbctl(topology, "drb", "del", 3)
    assert code == 0, out
    assert out["result"] == {"drb": 3, "baas": {"drb": "3:4", "released": 5}}
    code, out = gnbctl(topology, "baas", "stats", "--drb", "3:4")
    assert code == 1 and "NOT_FOUND" in out["error"]
    assert gnbctl(topology, "baas", "stats")[1]["result"]["held"] == 2
    # nothing buffered for DRB 4: NOT_FOUND in the BaaS is no failure
    code, out = gnbctl(topology, "drb", "del", 4)
    assert code == 0 and out["result"]["baas"] == {"drb": "4:4", "released": 0}

    address = baas.address
    assert baas.stop() == 0
    code, out = gnbctl(topology, "drb", "del", 6)
    assert code == 0, out
    warning = out["result"]["baas"]["warning"]
    assert warning.startswith(f"DRB 6:4 not flushed in the BaaS: baas: cannot reach the "
                              f"BaaS at {address}"), warning
    code, out = gnbctl(topology, "drb", "show", 6)
    assert code == 1 and "NOT_FOUND on nic0, host0" in out["error"]

    code, out = gnbctl(topology, "status")
    assert code == 3
    rows = {r["target"]: r for r in out["result"]}
    assert not rows["baas"]["reachable"] and address in rows["baas"]["error"]
    assert rows["nic0"]["reachable"] and rows["host0"]["reachable"]
    assert f"cannot reach the BaaS at {address}" in out["error"]
