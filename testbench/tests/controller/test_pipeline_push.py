"""`gnbctl pipeline push` is all or nothing as far as it can be checked
beforehand: a topology entry whose P4Info does not fit its role, a P4Info
the target does not run, or an unreachable target leave every target's
DRBs where they were, with a one-line error and its exit code. A commit
that fails after others succeeded names what was and was not pushed."""
from __future__ import annotations

import json
import subprocess

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from conftest import GNBCTL, LOADED_DRBS, read_table
from controller import cli, pipeline

pytestmark = pytest.mark.dpdk
N_DRBS = LOADED_DRBS


def drb_counts(targets) -> dict[str, int]:
    return {name: len(read_table(target, names, "dl_drb")) + len(read_table(target, names,
                                                                             "ul_bearer"))
            for name, (target, names) in targets.items()}


@pytest.fixture
def loaded(loaded):
    """The conftest's loaded targets, both tables full on both."""
    assert drb_counts(loaded[1]) == {"nic0": 2 * N_DRBS, "host0": 2 * N_DRBS}
    return loaded


def retargeted(topology, tmp_path, name, old, new):
    """A copy of the topology whose text has old replaced by new."""
    path = tmp_path / name
    text = topology.read_text()
    assert str(old) in text
    path.write_text(text.replace(str(old), str(new)))
    return path


def test_nic_entry_on_host_p4_pushes_nothing(loaded, gnbctl, gnb_builds, tmp_path):
    topology, targets = loaded
    nic_p4info, host_p4info = (gnb_builds[r].p4info_text_path for r in ("nic", "host"))
    # the NIC entry names host.p4's P4Info (issue 12, defect 5: host0 was
    # pushed, its DRBs wiped, then nic0 failed with a traceback)
    wrong_nic = retargeted(topology, tmp_path, "wrong-nic.toml", nic_p4info, host_p4info)
    code, out = gnbctl(wrong_nic, "pipeline", "push")
    assert code == 2, out
    assert out["error"] == (f"nic0: role nic, but its P4Info {host_p4info} is program host: "
                            "it has no table offload_bucket, host_return_port, so it is "
                            "not a NIC program")
    assert drb_counts(targets) == {"nic0": 2 * N_DRBS, "host0": 2 * N_DRBS}

    # the same without --json: one line on stderr, no traceback
    done = subprocess.run([str(GNBCTL), "--topology", str(wrong_nic), "pipeline", "push"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"gnbctl: error: {out['error']}"]

    # a host entry naming nic.p4's P4Info is refused the same way
    both_nic = retargeted(topology, tmp_path, "both-nic.toml", host_p4info, nic_p4info)
    code, out = gnbctl(both_nic, "pipeline", "push")
    assert code == 2, out
    assert out["error"].startswith("host0: role host, but its P4Info")
    assert out["error"].endswith("it has the NIC's table offload_bucket, host_return_port, "
                                 "so it is not a host program")
    assert drb_counts(targets) == {"nic0": 2 * N_DRBS, "host0": 2 * N_DRBS}


def test_p4info_the_target_does_not_run_pushes_nothing(loaded, gnbctl, gnb_builds,
                                                       tmp_path):
    """A NIC P4Info that fits the role but differs from the program the NIC
    runs: the NIC refuses it at VERIFY, before host0 is committed."""
    topology, targets = loaded
    nic_p4info = gnb_builds["nic"].p4info_text_path
    text = open(nic_p4info).read()
    assert 'name: "nic"' in text
    other = tmp_path / "other-nic.p4info.txtpb"
    other.write_text(text.replace('name: "nic"', 'name: "nic_v2"', 1))
    changed = retargeted(topology, tmp_path, "other.toml", nic_p4info, other)
    code, out = gnbctl(changed, "pipeline", "push")
    assert code == 4, out
    assert "\n" not in out["error"]
    assert out["error"].startswith("nic0: VERIFY of program nic_v2 failed: INVALID_ARGUMENT: "
                                   "this target runs nic and cannot load another pipeline")
    assert drb_counts(targets) == {"nic0": 2 * N_DRBS, "host0": 2 * N_DRBS}


def test_unreachable_target_pushes_nothing(loaded, gnbctl, tmp_path):
    topology, targets = loaded
    nic, _ = targets["nic0"]
    nic.stop()
    code, out = gnbctl(topology, "pipeline", "push")
    assert code == 3, out
    assert out["error"].startswith(f"nic0: cannot reach the P4Runtime server at {nic.address}")
    assert "\n" not in out["error"]
    host, names = targets["host0"]
    assert len(read_table(host, names, "dl_drb")) == N_DRBS


def test_commit_failing_midway_names_what_was_pushed(loaded, monkeypatch, capsys):
    """host0 dies after every check passed and nic0 was committed: nic0 is
    reset, the error says so and that host0 was not pushed."""
    topology, targets = loaded
    verify_and_commit = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    set_pipeline = pipeline._set_pipeline

    async def host_dies_before_its_commit(target, schema, action):
        if target.name == "host0" and action == verify_and_commit:
            targets["host0"][0].stop()
        await set_pipeline(target, schema, action)
    monkeypatch.setattr(pipeline, "_set_pipeline", host_dies_before_its_commit)

    code = cli.main(["--json", "--topology", str(topology), "pipeline", "push"])
    out = json.loads(capsys.readouterr().out)
    assert code == 3, out
    assert out["error"].startswith("host0: VERIFY_AND_COMMIT of program host failed: "
                                   "UNAVAILABLE")
    assert out["error"].endswith("; already pushed (state reset): nic0; not pushed: host0; "
                                 "push again to complete it")
    assert "\n" not in out["error"]
    nic, names = targets["nic0"]
    assert read_table(nic, names, "dl_drb") == []
