"""gnbctl's answer to a topology that disagrees with the running targets
(issue 17, item 3), against real NIC and host targets: a wrong device id
(finsy logged its traceback before gnbctl's message), a NIC entry given
host.p4, another controller holding our election id. Each is one line on
stderr and its documented exit code."""
from __future__ import annotations

import subprocess
import time

import pytest

from conftest import GNBCTL, REPO

pytestmark = pytest.mark.dpdk
HOST_P4 = REPO / "p4src" / "host.p4"


def run(topology, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(GNBCTL), "--topology", str(topology), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def retargeted(topology, tmp_path, name: str, old: str, new: str):
    path = tmp_path / name
    text = topology.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_wrong_device_id_is_the_topologys_error(two_targets, gnbctl, tmp_path):
    topology, targets = two_targets
    nic_address = targets["nic0"][0].address
    wrong = retargeted(topology, tmp_path, "device.toml", f'address = "{nic_address}"',
                       f'address = "{nic_address}"\ndevice_id = 7')
    # the server's words: its arbitration's (a write), its
    # GetForwardingPipelineConfig's (a read, without arbitration)
    said = {"write": "no device with id 7",
            "read": "no device with id 7 (this target is device 1)"}
    for command in (["counters"], ["pipeline", "push"], ["drb", "show", "1"], ["status"]):
        done = run(wrong, *command)
        assert done.returncode == 2, (command, done.stderr)
        kind = "write" if command[0] == "pipeline" else "read"
        assert one_line_error(done) == (
            f"gnbctl: error: nic0: the P4Runtime server at {nic_address} has no device id 7 "
            f"(NOT_FOUND: {said[kind]}); set device_id in the topology to the target's "
            "--device-id"), command
    code, out = gnbctl(wrong, "status")
    assert code == 2
    rows = {r["target"]: r for r in out["result"]}
    assert rows["host0"]["reachable"] and not rows["nic0"]["reachable"]


def test_a_nic_entry_given_host_p4(two_targets, gnb_builds, gnbctl, tmp_path):
    """Nothing is pushed, `run` refuses to start instead of failing every
    round, and the commands that only read still work."""
    topology, _ = two_targets
    wrong = retargeted(topology, tmp_path, "wrong.toml",
                       f'p4info = "{gnb_builds["nic"].p4info_text_path}"', f'p4 = "{HOST_P4}"')
    for command in (["pipeline", "push"], ["run"]):
        started = time.monotonic()
        done = run(wrong, *command, timeout=60)
        assert done.returncode == 2, (command, done.stderr)
        line = one_line_error(done)
        assert line.startswith("gnbctl: error: nic0: role nic, but its P4Info "), command
        assert line.endswith("is program host: it has no table offload_bucket, "
                             "host_return_port, so it is not a NIC program"), command
        assert time.monotonic() - started < 30
    code, out = gnbctl(wrong, "status")
    assert code == 0, out
    rows = {r["target"]: r for r in out["result"]}
    assert rows["nic0"]["pipeline_matches_topology"] is False
    assert rows["host0"]["pipeline_matches_topology"] is True
    assert gnbctl(wrong, "counters")[0] == 0


def test_another_controller_with_our_election_id(two_targets, tmp_path):
    topology, targets = two_targets
    nic = targets["nic0"][0]
    holder = nic.client()
    assert holder.arbitrate((0, 1)).status.code == 0     # gnbctl's election id, 1
    done = run(topology, "--target", "nic0", "offload", "set", "50")
    assert done.returncode == 1, done.stderr
    assert one_line_error(done) == (
        f"gnbctl: error: nic0: the P4Runtime server at {nic.address}: another controller is "
        "connected with our election id 1 (INVALID_ARGUMENT: another live controller uses "
        "this election id): a program other than gnbctl, or gnbctl with another topology "
        "file naming this target; stop it, or give this topology another election_id")
    # reads need no arbitration (test_gnbctl_side_by_side.py); the other target is not held
    assert run(topology, "--target", "nic0", "counters").returncode == 0
    assert run(topology, "--target", "host0", "pipeline", "push").returncode == 0
