"""`gnbctl counters` and its filters (issue 17, item 6) on a NIC that
carried real frames: by default drops and totals with the number of DRBs
that counted (the per-DRB list of a loaded gNB was a line per DRB);
--nonzero lists the DRBs that counted, --drb N shows chosen DRBs zeros
included, --target picks targets, also after the subcommand."""
from __future__ import annotations

import subprocess

import pytest

from conftest import GNBCTL, target_on_veths, wait_for, write_topology
from testbench.gnb.frames import DownlinkPacket
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk
N3, RADIO, BAAS = range(3)
N_DRBS = 16


@pytest.fixture
def counted(start_target, gnb_builds, gnbctl, tmp_path):
    """(topology, {drb: (packets, bytes)}, unknown frame length): the NIC,
    its N3, radio and BaaS ports on veths, has forwarded three frames of DRB
    2 and one of DRB 5 and dropped one of an unknown TEID; host0 (a host
    build on net_null) has counted nothing."""
    host = start_target(vdevs=["net_null0,no-rx=1", "net_null1,no-rx=1"],
                        build=gnb_builds["host"])
    with target_on_veths(start_target, gnb_builds["nic"], 3) as (nic, capture):
        topology = write_topology(tmp_path / "topology.toml", [
            {"name": "nic0", "role": "nic", "address": nic.address,
             "p4info": gnb_builds["nic"].p4info_text_path},
            {"name": "host0", "role": "host", "address": host.address,
             "p4info": gnb_builds["host"].p4info_text_path, "nic": "nic0", "vf": 0}])
        assert gnbctl(topology, "pipeline", "push")[0] == 0
        assert gnbctl(topology, "drb", "load", "--count", N_DRBS)[0] == 0
        assert gnbctl(topology, "offload", "set", 0)[0] == 0
        packets = [DownlinkPacket(generated_drb(i), bytes([i]) * (40 + i)) for i in (2, 2, 2, 5)]
        frames = [p.n3_frame() for p in packets]
        unknown = DownlinkPacket(generated_drb(N_DRBS), b"lost" * 10).n3_frame()
        for frame in frames + [unknown]:
            capture.send(N3, frame)
        wait_for(capture, RADIO, len(frames))
        counts = {drb: (sum(p.drb.drb_index == drb for p in packets),
                        sum(len(f) for p, f in zip(packets, frames) if p.drb.drb_index == drb))
                  for drb in (2, 5)}
        yield topology, counts, len(unknown)


def piped(topology, *args) -> list[str]:
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def cell(packets_bytes: tuple[int, int]) -> dict:
    return {"packets": packets_bytes[0], "bytes": packets_bytes[1]}


def test_counters_by_default_and_filtered(counted, gnbctl):
    topology, counts, unknown_bytes = counted
    zero = {"packets": 0, "bytes": 0}

    code, out = gnbctl(topology, "counters", "--target", "nic0")
    assert code == 0
    [nic] = out["result"]
    assert nic["target"] == "nic0"
    assert nic["drops"] == {"unknown_teid": {"packets": 1, "bytes": unknown_bytes}}
    assert nic["downlink"] == {"total": {"packets": 4, "bytes": sum(b for _, b in
                                                                    counts.values())},
                               "drbs_counted": 2}
    assert nic["uplink"] == {"total": zero, "drbs_counted": 0}

    code, out = gnbctl(topology, "counters", "--target", "nic0", "--nonzero")
    assert {k: v for k, v in out["result"][0]["downlink"]["per_drb"].items()} == \
        {str(drb): cell(c) for drb, c in counts.items()}
    assert out["result"][0]["uplink"]["per_drb"] == {}

    code, out = gnbctl(topology, "counters", "--target", "nic0", "--drb", 5, "--drb", 9)
    assert out["result"][0]["downlink"]["per_drb"] == {"5": cell(counts[5]), "9": zero}
    assert out["result"][0]["uplink"]["per_drb"] == {"5": zero, "9": zero}
    code, out = gnbctl(topology, "counters", "--target", "nic0", "--drb", 5, "--drb", 9,
                       "--nonzero")
    assert out["result"][0]["downlink"]["per_drb"] == {"5": cell(counts[5])}

    # --target before and after the subcommand add up
    code, out = gnbctl(topology, "--target", "host0", "counters", "--target", "nic0")
    assert [r["target"] for r in out["result"]] == ["host0", "nic0"]
    code, out = gnbctl(topology, "counters", "--target", "host0")
    assert [r["target"] for r in out["result"]] == ["host0"]
    assert out["result"][0]["downlink"]["drbs_counted"] == 0

    # for people, into a pipe: a short summary, per-DRB lines only on request
    lines = piped(topology, "counters", "--target", "nic0")
    assert lines[:2] == ["nic0: drops", "reason        packets  bytes"]
    assert lines[2].split() == ["unknown_teid", "1", str(unknown_bytes)]
    assert "nic0: totals" in lines
    totals = lines[lines.index("nic0: totals") + 1:]
    assert totals[0].split() == ["counter", "packets", "bytes", "DRBs", "counted"]
    assert totals[1].split()[:2] == ["downlink", "4"] and totals[1].split()[-1] == "2"
    assert lines[-1] == "nic0: per DRB: --nonzero lists the DRBs that counted, --drb N shows one"
    assert len(lines) < 15
    lines = piped(topology, "counters", "--target", "nic0", "--nonzero")
    per_drb = lines[lines.index("nic0: DRBs") + 2:]
    assert [line.split() for line in per_drb] == [
        ["downlink", str(drb), str(c[0]), str(c[1])] for drb, c in counts.items()]
