"""No two DRBs share a DRB index, a TEID or a (ue_id, lcid) bearer (issue
12, defect 3: `drb add` gave a second TEID an index in use, so both shared
its SN registers and counters). `drb add` and `drb load` refuse such a DRB
before writing anything, and `drb load` names each CSV line that repeats
an earlier line's key. Checked on a NIC and a host target by reading back
both tables."""
from __future__ import annotations

import subprocess

import pytest

from conftest import GNBCTL, LOADED_DRBS, read_table, values

pytestmark = pytest.mark.dpdk
N_DRBS = LOADED_DRBS
CSV_HEADER = "drb,teid,ue_id,lcid,rlc,rlc_sn,pdcp_sn,qfi,ue_mac,ul_teid,gnb_ip,upf_ip,upf_mac\n"


def csv_line(drb: int, teid: int, ue_id: int) -> str:
    return (f"{drb},{teid:#x},{ue_id},4,am,18,18,9,02:00:00:00:00:{drb:02x},{0x20000 + drb:#x},"
            "10.0.0.1,10.0.0.2,02:00:00:00:ff:ff\n")


def contents(targets) -> dict:
    """Every dl_drb and ul_bearer entry of every target, as values."""
    return {name: {table: sorted((values(e, names) for e in read_table(target, names, table)),
                                 key=repr)
                   for table in ("dl_drb", "ul_bearer")}
            for name, (target, names) in targets.items()}


def test_drb_add_refuses_keys_in_use(loaded, gnbctl):
    topology, targets = loaded
    before = contents(targets)
    assert all(len(t["dl_drb"]) == N_DRBS for t in before.values())
    both = "on nic0, host0"

    # the defect: a new TEID and bearer given DRB 3's index
    code, out = gnbctl(topology, "drb", "add", 3, "--teid", 0x30000, "--ue-id", 100)
    assert code == 4, out
    assert out["error"] == ("nothing written: DRB 3: DRB index 3 is in use by teid 0x10003, "
                            f"ue_id 3 lcid 4 {both}")
    # a new index with DRB 5's TEID, then with DRB 6's bearer
    code, out = gnbctl(topology, "drb", "add", 20, "--teid", 0x10005)
    assert code == 4, out
    assert out["error"] == f"nothing written: DRB 20: teid 0x10005 is DRB 5's {both}"
    code, out = gnbctl(topology, "drb", "add", 20, "--ue-id", 6)
    assert code == 4, out
    assert out["error"] == f"nothing written: DRB 20: ue_id 6 lcid 4 is DRB 6's {both}"
    # a DRB that is installed already: all three keys
    code, out = gnbctl(topology, "drb", "add", 5)
    assert code == 4, out
    assert out["error"] == ("nothing written: DRB 5: DRB index 5 is in use by teid 0x10005, "
                            f"ue_id 5 lcid 4 {both}; teid 0x10005 is DRB 5's {both}; "
                            f"ue_id 5 lcid 4 is DRB 5's {both}")
    assert contents(targets) == before

    # one line on stderr without --json, no traceback
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), "drb", "add", "3",
                           "--teid", "0x30000", "--ue-id", "100"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        f"gnbctl: error: nothing written: DRB 3: DRB index 3 is in use by teid 0x10003, "
        f"ue_id 3 lcid 4 {both}"]
    assert contents(targets) == before

    # the same DRB with keys of its own is added, and read back alone
    assert gnbctl(topology, "drb", "add", 20, "--teid", 0x30000, "--ue-id", 100)[0] == 0
    code, out = gnbctl(topology, "drb", "show", 20)
    assert code == 0
    assert {n: (d["teid"], d["ue_id"]) for n, d in out["result"].items()} == {
        "nic0": ("0x30000", 100), "host0": ("0x30000", 100)}
    after = contents(targets)
    for name in targets:
        assert len(after[name]["dl_drb"]) == len(after[name]["ul_bearer"]) == N_DRBS + 1


def test_drb_load_refuses_keys_in_use(loaded, gnbctl):
    """DRBs 0..15 over installed 0..7: refused whole, not half written."""
    topology, targets = loaded
    before = contents(targets)
    code, out = gnbctl(topology, "drb", "load", "--count", 2 * N_DRBS)
    assert code == 4, out
    both = "on nic0, host0"
    assert out["error"] == (
        f"nothing written: {N_DRBS} of {2 * N_DRBS} DRBs share keys with installed ones (the "
        f"first: DRB 0: DRB index 0 is in use by teid 0x10000, ue_id 0 lcid 4 {both}; "
        f"teid 0x10000 is DRB 0's {both}; ue_id 0 lcid 4 is DRB 0's {both}); "
        "`gnbctl drb load --replace` updates installed DRBs in place")
    assert contents(targets) == before


def test_drb_load_names_csv_lines_that_repeat_a_key(loaded, gnbctl, tmp_path):
    topology, targets = loaded
    before = contents(targets)
    csv = tmp_path / "drbs.csv"
    csv.write_text(CSV_HEADER
                   + csv_line(20, 0x30020, 120)      # line 2
                   + csv_line(20, 0x30021, 121)      # line 3: DRB index of line 2
                   + csv_line(22, 0x30020, 122)      # line 4: TEID of line 2
                   + csv_line(23, 0x30023, 120)      # line 5: bearer of line 2
                   + csv_line(24, 0x30024, 124))     # line 6: fine
    code, out = gnbctl(topology, "drb", "load", "--file", csv)
    assert code == 1, out
    assert out["error"].splitlines() == [f"{csv}:3: DRB index 20 is also on line 2",
                                         f"{csv}:4: teid 0x30020 is also on line 2",
                                         f"{csv}:5: ue_id 120 lcid 4 is also on line 2"]
    assert contents(targets) == before

    # duplicates and bad values are reported together, in line order
    csv.write_text(CSV_HEADER + csv_line(20, 0x30020, 120)
                   + csv_line(21, 0x30021, 121).replace(",am,", ",tm,")
                   + csv_line(22, 0x30020, 122))
    code, out = gnbctl(topology, "drb", "load", "--file", csv)
    assert code == 1, out
    assert out["error"].splitlines() == [f"{csv}:3: rlc must be am or um, not 'tm'",
                                         f"{csv}:4: teid 0x30020 is also on line 2"]
    assert contents(targets) == before
