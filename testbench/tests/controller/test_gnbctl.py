"""gnbctl end to end against a running host and NIC target: pipeline push,
65,536 DRBs loaded and read back entry by entry on both, single DRBs,
the offload split read back from the NIC's table, and the errors a user
meets (unreachable target, rejected write, bad CSV line)."""
from __future__ import annotations

import socket

import pytest

from conftest import read_table, values

pytestmark = pytest.mark.dpdk
N_DRBS = 65536


def expected_dl(i: int) -> tuple[dict, dict]:
    return ({"teid": 0x10000 + i},
            {"drb_index": i, "ue_id": i, "lcid": 4, "rlc_am": 1, "rlc_sn18": 1,
             "pdcp_sn18": 1, "default_qfi": 9, "ue_mac": 0x020000000000 | i})


def expected_ul(i: int) -> tuple[dict, dict]:
    return ({"ue_id": i, "lcid": 4},
            {"drb_index": i, "rlc_am": 1, "rlc_sn18": 1, "pdcp_sn18": 1, "teid": 0x20000 + i,
             "gnb_ip": 0x0A000001, "upf_ip": 0x0A000002, "upf_mac": 0x02000000FFFF})


def test_drbs_and_offload_on_two_targets(two_targets, gnbctl):
    topology, targets = two_targets
    code, out = gnbctl(topology, "pipeline", "push")
    assert code == 0 and {r["program"] for r in out["result"]} == {"nic", "host"}

    code, out = gnbctl(topology, "drb", "load", "--count", N_DRBS)
    assert code == 0, out
    load = out["result"]
    assert set(load["targets"]) == {"nic0", "host0"}
    for per_target in load["targets"].values():
        assert per_target["entries"] == 2 * N_DRBS and per_target["entries_per_s"] > 0
    print(f"\ndrb load {N_DRBS}: {load['seconds']:.3f} s, {load['targets']}")

    for name, (target, names) in targets.items():
        dl = [values(e, names) for e in read_table(target, names, "dl_drb")]
        ul = [values(e, names) for e in read_table(target, names, "ul_bearer")]
        assert sorted(dl, key=lambda v: v[0]["teid"]) == [expected_dl(i)
                                                          for i in range(N_DRBS)], name
        assert sorted(ul, key=lambda v: v[0]["ue_id"]) == [expected_ul(i)
                                                           for i in range(N_DRBS)], name

    code, out = gnbctl(topology, "status")
    assert code == 0
    for row in out["result"]:
        # status claims no primary, and no other controller holds it now
        assert row["reachable"] and row["primary"] is None and row["pipeline_matches_topology"]
        assert row["drbs"] == {"dl_drb": N_DRBS, "ul_bearer": N_DRBS}

    # a DRB in use is refused before anything is written (test_drb_keys.py)
    code, out = gnbctl(topology, "drb", "add", 5)
    assert code == 4 and out["error"].startswith("nothing written: DRB 5: DRB index 5 is in use")

    assert gnbctl(topology, "drb", "del", 5)[0] == 0
    code, out = gnbctl(topology, "drb", "show", 5)
    assert code == 1 and "NOT_FOUND on nic0, host0" in out["error"]
    code, out = gnbctl(topology, "drb", "del", 5)
    assert code == 1 and "NOT_FOUND" in out["error"]
    assert gnbctl(topology, "drb", "add", 5, "--qfi", 7, "--ue-mac", "02:aa:00:00:00:05")[0] == 0
    code, out = gnbctl(topology, "drb", "show", 5)
    assert code == 0
    for name, (target, names) in targets.items():
        assert out["result"][name]["qfi"] == 7
        assert out["result"][name]["ue_mac"] == "02:aa:00:00:00:05"
        entry = next(values(e, names) for e in read_table(target, names, "dl_drb")
                     if values(e, names)[0]["teid"] == 0x10005)
        assert entry[1]["default_qfi"] == 7 and entry[1]["ue_mac"] == 0x02AA00000005

    nic, nic_names = targets["nic0"]
    for percent, buckets in ((50, 512), (100, 1024), (12.5, 128), (0, 0)):
        code, out = gnbctl(topology, "offload", "set", percent)
        assert code == 0, out
        installed = {values(e, nic_names)[0]["bucket"]
                     for e in read_table(nic, nic_names, "offload_bucket")}
        assert installed == set(range(buckets)), percent
        code, out = gnbctl(topology, "offload", "show")
        assert out["result"][0]["buckets"] == buckets
        assert out["result"][0]["percent"] == pytest.approx(100 * buckets / 1024)
        assert out["result"][0]["mode"] == "ratio"
        assert out["result"][0]["hosts"]["host0"]["vf_buckets"] == 64
    vf = {values(e, nic_names)[0]["bucket"]: values(e, nic_names)[1]["port"]
          for e in read_table(nic, nic_names, "vf_bucket")}
    assert vf == {b: 3 for b in range(64)}
    returns = {values(e, nic_names)[0]["port"]
               for e in read_table(nic, nic_names, "host_return_port")}
    assert returns == {4}

    code, out = gnbctl(topology, "offload", "set", 101)
    assert code == 1 and "0..100" in out["error"]

    # a rejected write names the entry, the table and the status
    assert gnbctl(topology, "offload", "marker", "add", 7)[0] == 0
    code, out = gnbctl(topology, "offload", "marker", "add", 7)
    assert code == 4
    assert out["error"].startswith("nic0: the target rejected 1 of 1 updates:\n"
                                   "  offload_ip_id (identification 7): ALREADY_EXISTS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_target_is_named(two_targets, gnbctl, tmp_path):
    topology, targets = two_targets
    dead = f"127.0.0.1:{free_port()}"
    text = topology.read_text().replace(targets["host0"][0].address, dead)
    broken = tmp_path / "broken.toml"
    broken.write_text(text.replace("timeout = 5.0", "timeout = 2.0"))
    for command in (["drb", "load", "--count", 16], ["counters"], ["status"]):
        code, out = gnbctl(broken, *command)
        assert code == 3, (command, out)
        assert f"host0: cannot reach the P4Runtime server at {dead}" in out["error"]
    # status still reports the target that answers
    code, out = gnbctl(broken, "status")
    rows = {r["target"]: r for r in out["result"]}
    assert rows["nic0"]["reachable"] and not rows["host0"]["reachable"]


def test_bad_input_is_reported_with_its_place(two_targets, gnbctl, tmp_path):
    topology, _ = two_targets
    csv = tmp_path / "drbs.csv"
    csv.write_text(
        "drb,teid,ue_id,lcid,rlc,rlc_sn,pdcp_sn,qfi,ue_mac,ul_teid,gnb_ip,upf_ip,upf_mac\n"
        "0,0x10000,0,4,am,18,18,9,02:00:00:00:00:00,0x20000,10.0.0.1,10.0.0.2,02:00:00:00:ff:ff\n"
        "1,0x10001,1,4,tm,18,18,9,02:00:00:00:00:01,0x20001,10.0.0.1,10.0.0.2,02:00:00:00:ff:ff\n"
        "2,0x10002,2,4,um,12,12,64,02:00:00:00:00:02,0x20002,10.0.0.1,10.0.0.2,02:00:00:00:ff:ff\n"
        "3,0x10003,3,4,am,18,18,9,02:00:00:00:00:03,0x20003,10.0.0.300,10.0.0.2,02:00:00:00:ff:ff\n")
    code, out = gnbctl(topology, "drb", "load", "--file", csv)
    assert code == 1
    assert f"{csv}:3: rlc must be am or um, not 'tm'" in out["error"]
    assert f"{csv}:4: qfi 64 does not fit in 6 bits" in out["error"]
    assert f"{csv}:5: gnb_ip:" in out["error"]

    # the good lines alone load, and read back through gnbctl
    csv.write_text("\n".join(csv.read_text().splitlines()[:2]) + "\n")
    assert gnbctl(topology, "drb", "load", "--file", csv)[0] == 0
    code, out = gnbctl(topology, "drb", "show", 0)
    assert out["result"]["nic0"]["upf_mac"] == "02:00:00:00:ff:ff"

    missing = tmp_path / "missing.toml"
    code, out = gnbctl(missing, "status")
    assert code == 2 and "cannot read the topology" in out["error"]
    bad_role = tmp_path / "bad.toml"
    bad_role.write_text('[[targets]]\nname = "x"\nrole = "switch"\naddress = "a:1"\n')
    code, out = gnbctl(bad_role, "status")
    assert code == 2 and "role must be one of nic, host" in out["error"]
