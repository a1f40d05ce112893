"""What gnbctl shows of a hybrid gNB's runtime (issue 17 item 6): the NIC's
host_return_counter (radio frames its host built) in `counters`, in total
and per DRB; a host's clone_no_session, which grows with every frame it
makes since hosts have no BaaS clone session by design, as expected and not
as a drop, in `counters` and in `status`'s drop total; and each target's
lcore load (polls, empty polls, busy share) in `status`, read from the
control sockets the topology names (key `control`), nothing for a target
without one.

The NIC and the host run on veth pairs; the test carries the frames
between them as the wire would: NIC VF port -> host N3, host radio port ->
NIC return port."""
from __future__ import annotations

import subprocess

import pytest

from conftest import GNBCTL, receive, target_on_veths, write_controlled_topology
from t4p4s.stf.control import ControlClient, ControlError
from testbench.gnb.frames import DownlinkPacket
from testbench.topology.traffic import generated_drb

pytestmark = pytest.mark.dpdk
N3, RADIO, BAAS, VF0, RETURN0 = range(5)
N_DRBS = 8
N_FRAMES = 12


@pytest.fixture
def hybrid(start_target, gnb_builds, gnbctl, tmp_path):
    """(topology, nic, host, {drb: frames the host built}): N_FRAMES
    downlink G-PDUs offloaded by the NIC (100%), made into radio frames by
    the host, numbered and forwarded by the NIC; both targets' control
    sockets in the topology."""
    with target_on_veths(start_target, gnb_builds["nic"], 5) as (nic, nic_wire), \
            target_on_veths(start_target, gnb_builds["host"], 3) as (host, host_wire):
        topology = write_controlled_topology(tmp_path / "topology.toml", gnb_builds, nic, host)
        assert gnbctl(topology, "pipeline", "push")[0] == 0
        assert gnbctl(topology, "drb", "load", "--count", N_DRBS)[0] == 0
        assert gnbctl(topology, "offload", "set", 100)[0] == 0

        packets = [DownlinkPacket(generated_drb(i % N_DRBS), bytes([i]) * (30 + i))
                   for i in range(N_FRAMES)]
        for packet in packets:
            nic_wire.send(N3, packet.n3_frame())
        for frame in receive(nic_wire, VF0, N_FRAMES):
            host_wire.send(0, frame)
        built = receive(host_wire, 1, N_FRAMES)
        for frame in built:
            nic_wire.send(RETURN0, frame)
        receive(nic_wire, RADIO, N_FRAMES)
        by_drb = {}
        for packet, frame in zip(packets, built):
            by_drb.setdefault(packet.drb.drb_index, []).append(frame)
        yield topology, nic, host, by_drb


def power_lcores(target) -> dict[int, dict]:
    client = ControlClient(target.runtime.control_path)
    try:
        return {lc["lcore"]: lc for lc in client.request({"cmd": "power"})["lcores"]}
    finally:
        client.close()


def piped(topology, *args) -> list[str]:
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_counters_show_host_return_and_clone_no_session_as_expected(hybrid, gnbctl):
    topology, _, _, by_drb = hybrid
    code, out = gnbctl(topology, "counters", "--drb", 3, "--drb", 4)
    assert code == 0
    nic, host = out["result"]
    total_bytes = sum(len(f) for frames in by_drb.values() for f in frames)
    assert nic["host_return"]["total"] == {"packets": N_FRAMES, "bytes": total_bytes}
    assert nic["host_return"]["drbs_counted"] == N_DRBS
    assert nic["host_return"]["per_drb"] == {
        str(d): {"packets": len(by_drb[d]), "bytes": sum(map(len, by_drb[d]))} for d in (3, 4)}
    # the NIC counts in dl_drb_counter only what it processed itself
    assert nic["downlink"]["total"]["packets"] == 0
    assert host["downlink"]["total"]["packets"] == N_FRAMES
    assert "host_return" not in host
    # the host asked for a BaaS copy of each (RLC AM) frame and had no session:
    # expected there, no drop; the NIC, which has a session, counted none
    assert host["drops"] == {} and host["runtime_drops"]["drops"] == {}
    assert host["runtime_drops"]["expected"] == {"clone_no_session": {
        "packets": N_FRAMES, "why": host["runtime_drops"]["expected"]["clone_no_session"]["why"]}}
    assert "baas_clone = false" in host["runtime_drops"]["expected"]["clone_no_session"]["why"]
    assert nic["runtime_drops"] == {"drops": {}, "expected": {}}

    code, out = gnbctl(topology, "counters", "--nonzero", "--target", "nic0")
    assert out["result"][0]["host_return"]["per_drb"] == {
        str(d): {"packets": len(f), "bytes": sum(map(len, f))} for d, f in sorted(by_drb.items())}

    # for people: the host has no drops, and the expected count says why
    lines = piped(topology, "counters", "--target", "host0")
    assert lines[0] == "host0: no drops"
    at = lines.index("host0: expected, not drops")
    assert lines[at + 1].split()[:3] == ["reason", "packets", "why"]
    assert lines[at + 2].split()[:2] == ["clone_no_session", str(N_FRAMES)]
    lines = piped(topology, "counters", "--target", "nic0")
    totals = lines[lines.index("nic0: totals") + 2:]
    assert ["host-built", "frames", str(N_FRAMES), str(total_bytes), str(N_DRBS)] in \
        [line.split() for line in totals]


def test_status_shows_lcore_load_and_leaves_expected_counts_out_of_drops(hybrid, gnbctl,
                                                                        tmp_path):
    topology, nic, host, _ = hybrid
    before = {"nic0": power_lcores(nic), "host0": power_lcores(host)}
    code, out = gnbctl(topology, "status")
    after = {"nic0": power_lcores(nic), "host0": power_lcores(host)}
    assert code == 0, out
    rows = {r["target"]: r for r in out["result"]}
    assert rows["host0"]["runtime_drops"]["expected"]["clone_no_session"]["packets"] == N_FRAMES
    # the DRB counts from the control socket's table_count
    assert [rows[n]["drbs"] for n in ("nic0", "host0")] == \
        [{"dl_drb": N_DRBS, "ul_bearer": N_DRBS}] * 2
    for name, row in rows.items():
        load = row["lcore_load"]
        assert load["target"] == name and 0.2 <= load["window_s"] < 1.0
        assert [lc["lcore"] for lc in load["lcores"]] == sorted(before[name])
        for lc in load["lcores"]:
            b, a = before[name][lc["lcore"]], after[name][lc["lcore"]]
            for key in ("polls", "empty_polls", "packets", "work_ns"):
                assert b[key] <= lc[key] <= a[key], (name, key)
            assert lc["mode"] == "nap"
            # no traffic during the window: every poll empty, no work
            assert lc["empty_share"] == 1.0 and lc["busy_share"] == 0.0
    # what the lcores received: the NIC N3 and return frames, the host its N3 frames
    assert sum(lc["packets"] for lc in rows["nic0"]["lcore_load"]["lcores"]) == 2 * N_FRAMES
    assert sum(lc["packets"] for lc in rows["host0"]["lcore_load"]["lcores"]) == N_FRAMES

    lines = piped(topology, "status")
    targets = lines[lines.index("targets") + 2:lines.index("targets") + 4]
    # the drops column (the last): nothing dropped on either target
    assert [line.split()[0] for line in targets] == ["nic0", "host0"]
    assert [line.split()[-1] for line in targets] == ["0", "0"]
    at = next(i for i, line in enumerate(lines) if line.startswith("lcore load"))
    assert lines[at + 1].split() == ["target", "lcore", "mode", "polls", "empty", "polls",
                                     "packets", "empty", "%", "busy", "%"]
    shown = [line.split() for line in lines[at + 2:at + 4]]
    assert [(s[0], s[2], s[-2], s[-1]) for s in shown] == [("nic0", "nap", "100.0", "0.0"),
                                                           ("host0", "nap", "100.0", "0.0")]


def test_status_without_control_sockets_shows_no_lcore_load(hybrid, gnbctl, tmp_path):
    """A target without `control` shows nothing and no error; one whose
    socket does not answer is a note, not a failed status."""
    topology, nic, host, _ = hybrid
    text = topology.read_text()
    plain = tmp_path / "plain.toml"
    plain.write_text("\n".join(line for line in text.splitlines()
                               if not line.startswith("control")) + "\n")
    code, out = gnbctl(plain, "status")
    assert code == 0
    for row in out["result"]:
        assert not {"lcore_load", "runtime_drops", "control_error"} & set(row), row
        # counted over P4Runtime instead, to the same numbers
        assert row["drbs"] == {"dl_drb": N_DRBS, "ul_bearer": N_DRBS}
    lines = piped(plain, "status")
    assert not any(line.startswith("lcore load") for line in lines)

    wrong = tmp_path / "wrong.toml"
    wrong.write_text(text.replace(str(host.runtime.control_path), str(tmp_path / "none.sock")))
    code, out = gnbctl(wrong, "status")
    assert code == 0
    rows = {r["target"]: r for r in out["result"]}
    assert "lcore_load" in rows["nic0"] and "lcore_load" not in rows["host0"]
    assert "none.sock" in rows["host0"]["control_error"]
    assert rows["host0"]["drbs"] == {"dl_drb": N_DRBS, "ul_bearer": N_DRBS}
    lines = piped(wrong, "status")
    assert any(line.startswith("host0: no lcore load: host0: cannot reach its control "
                               "socket") for line in lines), lines


def test_table_count_counts_entries_and_refuses_what_is_no_table(hybrid):
    """The control socket's table_count (what status counts DRBs with)."""
    _, nic, _, _ = hybrid
    client = ControlClient(nic.runtime.control_path)
    try:
        tables = client.request({"cmd": "stats"})
        reply = client.request({"cmd": "table_count", "table": "dl_drb"})
        assert reply["entries"] == N_DRBS and reply["size"] >= 65536, reply
        for bad in ({"cmd": "table_count"}, {"cmd": "table_count", "table": "no_such_table"},
                    {"cmd": "table_count", "table": 7}):
            with pytest.raises(ControlError) as refused:
                client.request(bad)
            assert "table" in str(refused.value), (bad, refused.value)
        assert client.request({"cmd": "stats"}).keys() == tables.keys()   # still serving
    finally:
        client.close()


@pytest.mark.parametrize("json_output", [False, True])
def test_a_reader_that_stops_reading_ends_gnbctl_quietly(hybrid, json_output):
    """`gnbctl status | head -1`: stdout's reader gone before gnbctl
    prints (the read end closed at once) is exit code 141, as SIGPIPE
    ends other commands, and nothing on stderr: no internal error."""
    topology = hybrid[0]
    process = subprocess.Popen([str(GNBCTL), "--topology", str(topology),
                                *(["--json"] if json_output else []), "status"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (141, b"")
