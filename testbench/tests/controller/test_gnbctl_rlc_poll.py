"""Per-DRB RLC poll configuration through gnbctl (issue 13, item 6): `drb
add --poll-pdu/--poll-byte` and `drb load`'s poll_pdu/poll_byte columns
write rlc_poll_config[drb] and zero rlc_poll_state[drb] on the targets
that number AMD PDUs (a NIC and a host without a NIC, not a hybrid host),
`drb del` writes both back to 0, `drb show` reads the configuration back,
and a value TS 38.331 does not have is refused with the allowed ones,
nothing written. Checked by reading the registers with a P4Runtime client
of our own; test_gnbctl_rlc_poll_traffic.py checks the poll bits the
configuration gives on the radio port."""
from __future__ import annotations

import pytest
from finsy.proto.p4.v1 import p4data_pb2, p4runtime_pb2 as p4r

from conftest import LOADED_DRBS, read_table, values, write_topology
from p4rt_client import Names, load_p4info, update

pytestmark = pytest.mark.dpdk
CSV_HEADER = "drb,teid,ue_id,lcid,rlc,rlc_sn,pdcp_sn,qfi,ue_mac,ul_teid,gnb_ip,upf_ip,upf_mac"
KB = 1000
INFINITY = 0xFFFF_FFFF


def cell(pdus: int, octets: int) -> int:
    return octets << 32 | pdus


def csv_line(drb: int, rlc: str = "am") -> str:
    return (f"{drb},{0x10000 + drb:#x},{drb},4,{rlc},18,18,9,02:00:00:00:00:{drb:02x},"
            f"{0x20000 + drb:#x},10.0.0.1,10.0.0.2,02:00:00:00:ff:ff")


@pytest.fixture
def three_targets(start_target, gnb_builds, tmp_path):
    """(topology, {name: (Target, Names)}): a NIC, a hybrid host behind it
    and a standalone host, pipelines pushed."""
    started = {"nic0": ("nic", start_target(vdevs=["net_ring0"], build=gnb_builds["nic"])),
               "host0": ("host", start_target(vdevs=["net_ring1"], build=gnb_builds["host"])),
               "solo": ("host", start_target(vdevs=["net_ring2"], build=gnb_builds["host"]))}
    extra = {"host0": {"nic": "nic0", "vf": 0}}
    topology = write_topology(tmp_path / "topology.toml", [
        {"name": name, "role": "nic" if name == "nic0" else "host", "address": t.address,
         "p4info": gnb_builds[role].p4info_text_path, **extra.get(name, {})}
        for name, (role, t) in started.items()])
    names = {role: Names(load_p4info(gnb_builds[role].p4info_text_path))
             for role in ("nic", "host")}
    return topology, {name: (t, names[role]) for name, (role, t) in started.items()}


def registers(target, names: Names, drb: int) -> tuple[int, int]:
    """(rlc_poll_config[drb], rlc_poll_state[drb]) as the target holds them."""
    found = []
    for register in ("rlc_poll_config", "rlc_poll_state"):
        entity = p4r.Entity(register_entry=p4r.RegisterEntry(
            register_id=names.registers[register].preamble.id, index=p4r.Index(index=drb)))
        (answer,) = target.client().read(entity)
        found.append(int.from_bytes(answer.register_entry.data.bitstring, "big"))
    return tuple(found)


def preset_state(target, names: Names, drb: int, value: int):
    """rlc_poll_state[drb] = value, as traffic would have left it."""
    client = target.primary((0, 2))
    client.write([update("MODIFY", register_entry=p4r.RegisterEntry(
        register_id=names.registers["rlc_poll_state"].preamble.id,
        index=p4r.Index(index=drb), data=p4data_pb2.P4Data(bitstring=value.to_bytes(8, "big"))))])
    client.close()


def all_registers(targets, drb: int) -> dict:
    return {name: registers(t, names, drb) for name, (t, names) in targets.items()}


def dl_drbs(targets) -> dict:
    return {name: sorted(values(e, names)[1]["drb_index"]
                         for e in read_table(t, names, "dl_drb"))
            for name, (t, names) in targets.items()}


def test_add_show_del_write_where_pdus_are_numbered(three_targets, gnbctl):
    topology, targets = three_targets
    code, out = gnbctl(topology, "pipeline", "push")
    assert code == 0, out
    # drb load --count: every generated DRB (all RLC AM) gets the options
    code, out = gnbctl(topology, "drb", "load", "--count", 2, "--poll-pdu", "p16")
    assert code == 0, out
    for drb in (0, 1):
        assert all_registers(targets, drb) == {"nic0": (cell(16, 0), 0), "host0": (0, 0),
                                               "solo": (cell(16, 0), 0)}

    for name in ("nic0", "solo"):
        preset_state(*targets[name], 3, cell(7, 7000))

    code, out = gnbctl(topology, "drb", "add", 3, "--poll-pdu", 4, "--poll-byte", "kB25")
    assert code == 0, out
    assert (out["result"]["poll_pdu"], out["result"]["poll_byte"]) == ("p4", "kB25")
    assert all_registers(targets, 3) == {"nic0": (cell(4, 25 * KB), 0), "host0": (0, 0),
                                         "solo": (cell(4, 25 * KB), 0)}
    code, out = gnbctl(topology, "drb", "show", 3)
    assert code == 0, out
    for name in ("nic0", "solo"):
        assert (out["result"][name]["poll_pdu"], out["result"][name]["poll_byte"]) == \
            ("p4", "kB25")
    assert "poll_pdu" not in out["result"]["host0"]     # its NIC polls for it

    # one trigger alone: the other field stays 0, the pipeline's default
    assert gnbctl(topology, "drb", "add", 4, "--poll-byte", "mB40")[0] == 0
    assert gnbctl(topology, "drb", "add", 5, "--poll-pdu", "infinity",
                  "--poll-byte", "INFINITY")[0] == 0
    assert registers(*targets["nic0"], 4) == (cell(0, 40_000_000), 0)
    assert registers(*targets["nic0"], 5) == (cell(INFINITY, INFINITY), 0)
    code, out = gnbctl(topology, "drb", "show", 4)
    assert (out["result"]["nic0"]["poll_pdu"], out["result"]["nic0"]["poll_byte"]) == \
        (None, "mB40")

    # without options nothing is written: the cells stay as they were
    preset_state(*targets["nic0"], 6, cell(3, 300))
    assert gnbctl(topology, "drb", "add", 6)[0] == 0
    assert registers(*targets["nic0"], 6) == (0, cell(3, 300))
    code, out = gnbctl(topology, "drb", "show", 6)
    assert (out["result"]["nic0"]["poll_pdu"], out["result"]["nic0"]["poll_byte"]) == \
        (None, None)

    # del: both registers back to 0 on the numbering targets
    assert gnbctl(topology, "drb", "del", 3)[0] == 0
    assert all_registers(targets, 3) == {name: (0, 0) for name in targets}
    # --target with only a hybrid host: nothing would use a poll configuration
    code, out = gnbctl(topology, "--target", "host0", "drb", "add", 9, "--poll-pdu", "p8")
    assert code == 1 and out["error"].startswith("nothing written: the RLC poll configuration")
    assert 9 not in dl_drbs(targets)["host0"]


BAD_VALUES = [
    (["--poll-pdu", 5], "poll_pdu: '5' is not a TS 38.331 pollPDU: one of p4, p8, p16, "),
    (["--poll-pdu", "p3"], "poll_pdu: 'p3' is not a TS 38.331 pollPDU"),
    (["--poll-byte", 25000], "poll_byte: '25000' is not a TS 38.331 pollByte: one of kB1, kB2, "),
    (["--poll-byte", "kB3"], "poll_byte: 'kB3' is not a TS 38.331 pollByte"),
    (["--rlc", "um", "--poll-pdu", "p4"], "poll_pdu and poll_byte apply to RLC AM DRBs only"),
]


def test_bad_values_write_nothing(loaded, gnbctl):
    topology, targets = loaded
    before = dl_drbs(targets)
    for options, error in BAD_VALUES:
        code, out = gnbctl(topology, "drb", "add", LOADED_DRBS, *options)
        assert code == 1, out
        assert out["error"].startswith(f"DRB {LOADED_DRBS}: {error}"), out["error"]
        if "pollPDU" in error:
            assert out["error"].endswith(
                "p65536, infinity (or the number of PDUs, e.g. 4 for p4)")
        if "pollByte" in error:
            assert "kB7500, mB8, " in out["error"] and out["error"].endswith(
                "mB40, infinity (1 kB = 1,000 bytes)")
        assert dl_drbs(targets) == before
        assert all_registers(targets, LOADED_DRBS) == {name: (0, 0) for name in targets}


def test_drb_load_poll_columns_and_options(three_targets, gnbctl, tmp_path):
    topology, targets = three_targets
    code, out = gnbctl(topology, "pipeline", "push")
    assert code == 0, out
    csv = tmp_path / "drbs.csv"
    csv.write_text("\n".join([f"{CSV_HEADER},poll_byte,poll_pdu",
                              csv_line(0) + ",kB1,p8",
                              csv_line(1) + ",,p16",          # pollByte: --poll-byte's
                              csv_line(2, "um") + ",,",       # UM: no poll configuration
                              csv_line(3) + ",,"]) + "\n")
    # a bad cell is named by its line, nothing is written
    bad = tmp_path / "bad.csv"
    bad.write_text(csv.read_text().replace(",,p16", ",,p17"))
    code, out = gnbctl(topology, "drb", "load", "--file", bad)
    assert code == 1 and out["error"].startswith(f"{bad}:3: poll_pdu: 'p17' is not a TS 38.331 "
                                                 "pollPDU: one of p4, p8"), out
    code, out = gnbctl(topology, "drb", "load", "--file", csv, "--poll-byte", "kbb")
    assert code == 1 and out["error"].startswith("'kbb' is not a TS 38.331 pollByte"), out
    assert dl_drbs(targets) == {name: [] for name in targets}

    code, out = gnbctl(topology, "drb", "load", "--file", csv, "--poll-byte", "kB50")
    assert code == 0, out
    assert {n: t["poll_configured"] for n, t in out["result"]["targets"].items()} == \
        {"nic0": 3, "host0": 0, "solo": 3}
    expected = {0: (cell(8, 1 * KB), 0), 1: (cell(16, 50 * KB), 0), 2: (0, 0),
                3: (cell(0, 50 * KB), 0)}
    for name in ("nic0", "solo"):
        assert {drb: registers(*targets[name], drb) for drb in range(4)} == expected, name
    assert {drb: registers(*targets["host0"], drb) for drb in range(4)} == \
        {drb: (0, 0) for drb in range(4)}
    assert gnbctl(topology, "drb", "del", 0)[0] == 0
    assert all_registers(targets, 0) == {name: (0, 0) for name in targets}
