"""gnbctl commands side by side (issue 17, items 2 and 4), against a real
NIC and host target: reads claim no primary and take no lock, so they
work while a writer holds both and while another controller is primary;
writers of one topology take turns through its write lock, or one gives
up naming the other; `gnbctl run` and `offload set` work together; one
DRB is shown, deleted, added and replaced by key, every entry read back
and compared."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time

import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from conftest import GNBCTL, read_table, values
from controller import drb_keys, drbs, targets, topology as topology_file, write_lock
from controller.errors import WriteLockBusy

pytestmark = pytest.mark.dpdk
CSV_HEADER = ("drb,teid,ue_id,lcid,rlc,rlc_sn,pdcp_sn,qfi,ue_mac,ul_teid,gnb_ip,upf_ip,"
              "upf_mac,poll_pdu,poll_byte\n")


@pytest.fixture(autouse=True)
def lock_dir(tmp_path, monkeypatch):
    """The write locks of this test's topologies, where the gnbctl
    processes it starts (they inherit the environment) and the test look."""
    monkeypatch.setenv(write_lock.LOCK_DIR_ENV, str(tmp_path / "locks"))
    return tmp_path / "locks"


def start(topology, *args) -> subprocess.Popen:
    return subprocess.Popen([str(GNBCTL), "--topology", str(topology), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def set_timeout(topology, seconds: float) -> None:
    text = topology.read_text()
    line = next(line for line in text.splitlines() if line.startswith("timeout = "))
    topology.write_text(text.replace(line, f"timeout = {seconds}"))


def wait_for_holder(topology, pid: int, limit_s: float = 60.0) -> dict:
    """The lock file's record once process `pid` holds the write lock."""
    path = write_lock.lock_path(topology)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = write_lock.holder(path) if path.exists() else None
        if found and found["pid"] == pid:
            return found
        time.sleep(0.005)
    raise AssertionError(f"pid {pid} never held the write lock {path}")


def wait_for_writes(topology, above: int, limit_s: float = 60.0) -> None:
    """Until a target's dl_drb holds more than `above` entries: the writer
    has connected (arbitrated, primary) and is writing."""
    async def run():
        topo = topology_file.load(topology)
        deadline = time.monotonic() + limit_s
        async with targets.reading(topo, topo.targets) as readers:
            while time.monotonic() < deadline:
                counts = await asyncio.gather(*(drbs.counts(r) for r in readers))
                if any(c["dl_drb"] > above for c in counts):
                    return
                await asyncio.sleep(0.002)
        raise AssertionError(f"no target came to hold more than {above} DRBs")
    asyncio.run(run())


def entry_values(targets_, table: str) -> dict:
    """{target: sorted (match, params) of every entry of `table`}."""
    return {name: sorted((values(e, names) for e in read_table(target, names, table)),
                         key=repr)
            for name, (target, names) in targets_.items()}


def generated(i: int, **changes) -> tuple[tuple[dict, dict], tuple[dict, dict]]:
    """The dl_drb and ul_bearer (match, params) of generated DRB i."""
    d = drbs.Drb.generated(i)
    d = drbs.Drb(**{**d.__dict__, **changes})
    dl = ({"teid": d.teid}, {"drb_index": d.drb, "ue_id": d.ue_id, "lcid": d.lcid,
                             "rlc_am": 1, "rlc_sn18": 1, "pdcp_sn18": 1,
                             "default_qfi": d.qfi, "ue_mac": d.ue_mac})
    ul = ({"ue_id": d.ue_id, "lcid": d.lcid},
          {"drb_index": d.drb, "rlc_am": 1, "rlc_sn18": 1, "pdcp_sn18": 1, "teid": d.ul_teid,
           "gnb_ip": d.gnb_ip, "upf_ip": d.upf_ip, "upf_mac": d.upf_mac})
    return dl, ul


def located(topology, drb_index: int) -> dict:
    """{target: drb_keys.locate()} through gnbctl's own reader."""
    async def run():
        topo = topology_file.load(topology)
        async with targets.reading(topo, topo.targets) as readers:
            found = await asyncio.gather(*(drb_keys.locate(r, drb_index) for r in readers))
        return {r.name: f for r, f in zip(readers, found)}
    return asyncio.run(run())


# ---- readers and writers ----------------------------------------------------------

def test_a_writer_holding_the_lock_stops_writers_not_readers(loaded, gnbctl):
    """A `drb load` stopped (SIGSTOP) while it holds the write lock and
    primary on both targets: every read still answers; a second writer
    gives up after the topology's timeout naming the first, or, given time,
    writes once the first has finished."""
    topology, targets_ = loaded
    # the loader's own timeout: the time it spends stopped passes on its clock
    set_timeout(topology, 60)
    loader = start(topology, "--json", "drb", "load", "--count", 65536, "--replace")
    try:
        holder = wait_for_holder(topology, loader.pid)
        # stopped while it writes: it holds the lock and primary on both targets
        # (not while it connects: finsy's own 10 s deadlines would pass)
        wait_for_writes(topology, above=8)
        os.kill(loader.pid, signal.SIGSTOP)
        assert holder["command"] == "gnbctl drb load --count 65536 --replace"

        set_timeout(topology, 1.5)

        # reads: no lock, no primary
        # (one that waited for the lock would fail after 1.5 s: the loader keeps it)
        for command in (["counters"], ["drb", "show", 3], ["drb", "show"],
                        ["offload", "show"], ["status"]):
            code, out = gnbctl(topology, *command)
            assert code == 0, (command, out)
        rows = {r["target"]: r for r in out["result"]}
        # status names who is primary: the stopped loader, with the topology's election id
        assert rows["nic0"]["primary"] == rows["host0"]["primary"] == 1
        code, out = gnbctl(topology, "drb", "show", 3)
        assert out["result"]["nic0"]["teid"] == "0x10003"

        # a writer gives up after the timeout, in one line naming the holder
        started = time.monotonic()
        done = subprocess.run([str(GNBCTL), "--topology", str(topology), "offload", "set", "50"],
                              capture_output=True, text=True, timeout=60)
        waited = time.monotonic() - started
        assert done.returncode == WriteLockBusy.exit_code == 5, done.stderr
        assert one_line(done.stderr) == (
            f"gnbctl: error: gnbctl drb load --count 65536 --replace (pid {loader.pid}) holds "
            f"the write lock of {topology} (waited 1.5 s, the topology's timeout); retry when "
            "it ends")
        assert waited >= 1.5
        code, out = gnbctl(topology, "offload", "marker", "add", 9)
        assert code == 5 and out["exit_code"] == 5 and "holds the write lock" in out["error"]

        # given a longer timeout, the next writer waits for the loader and then writes
        set_timeout(topology, 60)
        setter = start(topology, "--json", "offload", "set", "50")
        time.sleep(1.0)
        assert setter.poll() is None          # waiting
        assert write_lock.holder(write_lock.lock_path(topology))["pid"] == loader.pid
    finally:
        os.kill(loader.pid, signal.SIGCONT)
    out, err = loader.communicate(timeout=120)
    assert loader.returncode == 0, (out, err)
    load = json.loads(out)["result"]
    assert {n: t["replaced"] for n, t in load["targets"].items()} == {"nic0": 8, "host0": 8}
    out, err = setter.communicate(timeout=120)
    assert setter.returncode == 0, err
    assert json.loads(out)["result"][0]["buckets"] == 512

    nic, nic_names = targets_["nic0"]
    assert len(read_table(nic, nic_names, "offload_bucket")) == 512
    for name, (target, names) in targets_.items():
        assert len(read_table(target, names, "dl_drb")) == 65536, name
        assert len(read_table(target, names, "ul_bearer")) == 65536, name
    # the lock is free again: its last holder removed its file
    assert not write_lock.lock_path(topology).exists()


def test_writers_at_once_take_turns(loaded, gnbctl):
    """Six writers started together all complete, each with its effect
    (that they hold the lock one at a time is shown by the stopped writer
    above; here none fails or is refused while it waits its turn)."""
    topology, targets_ = loaded
    writers = [start(topology, "--json", "offload", "marker", "add", 100 + i) for i in range(3)]
    writers += [start(topology, "--json", "drb", "del", i) for i in range(3)]
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, (out, err)
    nic, nic_names = targets_["nic0"]
    assert {values(e, nic_names)[0]["identification"]
            for e in read_table(nic, nic_names, "offload_ip_id")} == {100, 101, 102}
    for table in ("dl_drb", "ul_bearer"):
        assert {n: sorted(e[1]["drb_index"] for e in entries)
                for n, entries in entry_values(targets_, table).items()} == \
            {"nic0": [3, 4, 5, 6, 7], "host0": [3, 4, 5, 6, 7]}
    assert not write_lock.lock_path(topology).exists()


def test_a_killed_writer_leaves_a_free_lock(loaded, gnbctl):
    topology, targets_ = loaded
    loader = start(topology, "--json", "drb", "load", "--count", 65536, "--replace")
    wait_for_holder(topology, loader.pid)
    wait_for_writes(topology, above=8)
    loader.kill()
    loader.wait(timeout=30)
    path = write_lock.lock_path(topology)
    assert write_lock.holder(path)["pid"] == loader.pid      # its record stays ...
    code, out = gnbctl(topology, "offload", "set", 25)        # ... and binds nobody
    assert code == 0, out
    nic, nic_names = targets_["nic0"]
    assert len(read_table(nic, nic_names, "offload_bucket")) == 256
    assert not path.exists()


def test_reads_while_another_controller_is_primary(loaded, gnbctl):
    topology, targets_ = loaded
    nic = targets_["nic0"][0]

    # another program with our election id: writes refused in one line, reads answer
    same = nic.client()
    assert same.arbitrate((0, 1)).status.code == 0
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), "--target", "nic0",
                           "offload", "set", "50"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert one_line(done.stderr) == (
        f"gnbctl: error: nic0: the P4Runtime server at {nic.address}: another controller is "
        "connected with our election id 1 (INVALID_ARGUMENT: another live controller uses "
        "this election id): a program other than gnbctl, or gnbctl with another topology "
        "file naming this target; stop it, or give this topology another election_id")
    for command in (["counters"], ["drb", "show", 2], ["offload", "show"]):
        assert gnbctl(topology, *command)[0] == 0, command
    same.close()

    # another controller with a higher election id holds primary
    other = nic.client()
    assert other.arbitrate((0, 7)).status.code == 0
    code, out = gnbctl(topology, "status")
    assert code == 0, out
    rows = {r["target"]: r for r in out["result"]}
    assert (rows["nic0"]["primary"], rows["host0"]["primary"]) == (7, None)
    assert rows["nic0"]["drbs"] == rows["host0"]["drbs"] == {"dl_drb": 8, "ul_bearer": 8}
    code, out = gnbctl(topology, "drb", "show", 2)
    assert code == 0 and out["result"]["nic0"]["ue_mac"] == "02:00:00:00:00:02"
    code, out = gnbctl(topology, "counters")
    assert code == 0 and [r["target"] for r in out["result"]] == ["nic0", "host0"]
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), "drb", "del", "2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert one_line(done.stderr) == ("gnbctl: error: nic0: another controller is primary "
                                     "(election id 7, ours 1); raise election_id in the "
                                     "topology to take over")
    # nothing was deleted on either target (refused before any write)
    assert all(len(v) == 8 for v in entry_values(targets_, "dl_drb").values())
    other.close()


def test_run_and_offload_set_together(loaded, gnbctl, tmp_path):
    """`gnbctl run` holds no lock between its writes: an `offload set` from
    another shell goes through while it watches, and it keeps watching."""
    topology, targets_ = loaded
    nic, nic_names = targets_["nic0"]
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        watcher = subprocess.Popen([str(GNBCTL), "--topology", str(topology), "--json", "run"],
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while '"watching"' not in log.read_text():
            assert watcher.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        for percent, buckets in ((50, 512), (12.5, 128), (100, 1024)):
            code, out = gnbctl(topology, "offload", "set", percent)
            assert code == 0, out
            installed = {values(e, nic_names)[0]["bucket"]
                         for e in read_table(nic, nic_names, "offload_bucket")}
            assert installed == set(range(buckets))
            assert gnbctl(topology, "counters")[0] == 0
        vf = {values(e, nic_names)[0]["bucket"]: values(e, nic_names)[1]["port"]
              for e in read_table(nic, nic_names, "vf_bucket")}
        assert vf == {b: 3 for b in range(64)}      # every VF bucket on the live host0
        assert watcher.poll() is None
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=30)
    assert watcher.returncode == 0
    events = []
    for line in log.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue        # the closing JSON document spans lines
    events = [e for e in events if isinstance(e, dict) and "what" in e]
    assert [e["what"] for e in events][:1] == ["watching"], events
    assert not [e for e in events if e["what"] == "failed"], events


# ---- one DRB, by key ------------------------------------------------------------

def test_one_drb_among_65536_by_key(two_targets, gnbctl):
    topology, targets_ = two_targets
    assert gnbctl(topology, "pipeline", "push")[0] == 0
    assert gnbctl(topology, "drb", "load", "--count", 65536)[0] == 0
    seconds = {}

    # found by its generated keys: no table read whole
    assert {n: f.scanned for n, f in located(topology, 40000).items()} == \
        {"nic0": (), "host0": ()}
    code, out = gnbctl(topology, "drb", "show", 40000)
    assert code == 0, out
    seconds["show"] = out["seconds"]
    want = {k: v for k, v in drbs.Drb.generated(40000).as_dict().items()
            if k not in drbs.POLL_COLUMNS}
    assert out["result"]["host0"] == want
    assert {k: v for k, v in out["result"]["nic0"].items() if k not in drbs.POLL_COLUMNS} == want
    dl, ul = generated(40000)
    for name, (target, names) in targets_.items():
        client = target.client()
        entries = client.read(
            p4r.Entity(table_entry=names.table_entry("dl_drb", {"teid": 0x10000 + 40000})),
            p4r.Entity(table_entry=names.table_entry("ul_bearer", {"ue_id": 40000, "lcid": 4})))
        assert [values(e.table_entry, names) for e in entries] == [dl, ul], name

    code, out = gnbctl(topology, "drb", "del", 40000)
    assert code == 0, out
    seconds["del"] = out["seconds"]
    for name, (target, names) in targets_.items():
        client = target.client()
        assert client.read(p4r.Entity(table_entry=names.table_entry(
            "dl_drb", {"teid": 0x10000 + 40000}))) == [], name
        for neighbour in (39999, 40001):
            found = client.read(p4r.Entity(table_entry=names.table_entry(
                "dl_drb", {"teid": 0x10000 + neighbour})))
            assert [values(e.table_entry, names) for e in found] == [generated(neighbour)[0]]
        assert len(read_table(target, names, "dl_drb")) == 65535, name
        assert len(read_table(target, names, "ul_bearer")) == 65535, name
    code, out = gnbctl(topology, "drb", "show", 40000)
    assert code == 1 and out["error"] == "DRB 40000: NOT_FOUND on nic0, host0"

    # a free index with keys of its own: the index is known free by a scan, and
    # the bearer of DRB 7 it asks for is refused
    code, out = gnbctl(topology, "drb", "add", 40000, "--teid", 0x99999, "--ue-id", 7)
    assert code == 4
    assert out["error"] == "nothing written: DRB 40000: ue_id 7 lcid 4 is DRB 7's on nic0, host0"
    assert gnbctl(topology, "drb", "add", 40000, "--teid", 0x99999, "--lcid", 9)[0] == 0
    assert {n: f.scanned for n, f in located(topology, 40000).items()} == \
        {"nic0": ("dl_drb",), "host0": ("dl_drb",)}
    code, out = gnbctl(topology, "drb", "show", 40000)
    assert code == 0 and out["result"]["host0"]["teid"] == "0x99999"
    assert out["result"]["host0"]["lcid"] == 9
    assert gnbctl(topology, "drb", "del", 40000)[0] == 0

    code, out = gnbctl(topology, "drb", "add", 40000, "--qfi", 5)
    assert code == 0, out
    seconds["add"] = out["seconds"]
    code, out = gnbctl(topology, "drb", "add", 40000)
    assert code == 4
    assert out["error"] == ("nothing written: DRB 40000: DRB index 40000 is in use by teid "
                            "0x19c40, ue_id 40000 lcid 4 on nic0, host0; teid 0x19c40 is DRB "
                            "40000's on nic0, host0; ue_id 40000 lcid 4 is DRB 40000's on "
                            "nic0, host0")
    code, out = gnbctl(topology, "drb", "show", 40000)
    assert out["result"]["host0"]["qfi"] == 5
    code, out = gnbctl(topology, "status")
    assert code == 0, out
    seconds["status"] = out["seconds"]
    assert [r["drbs"] for r in out["result"]] == [{"dl_drb": 65536, "ul_bearer": 65536}] * 2
    print(f"\n65,536 DRBs on two targets, seconds inside gnbctl: {seconds}")


def test_one_drb_with_keys_of_its_own(loaded, gnbctl, tmp_path):
    """A CSV DRB whose TEID and bearer are not derived from its index:
    found by a scan, and `drb del` removes its two entries and nothing else."""
    topology, targets_ = loaded
    csv = tmp_path / "own.csv"
    csv.write_text(CSV_HEADER + "20,0x30020,120,5,um,12,12,3,02:aa:00:00:00:20,0x40020,"
                                "10.0.0.9,10.0.0.8,02:bb:00:00:00:01,,\n")
    assert gnbctl(topology, "drb", "load", "--file", csv)[0] == 0
    # dl_drb scanned for it; its entry names the bearer, read by key
    assert {n: f.scanned for n, f in located(topology, 20).items()} == \
        {"nic0": ("dl_drb",), "host0": ("dl_drb",)}
    code, out = gnbctl(topology, "drb", "show", 20)
    assert code == 0, out
    assert out["result"]["host0"] == {
        "drb": 20, "teid": "0x30020", "ue_id": 120, "lcid": 5, "rlc": "um", "rlc_sn": 12,
        "pdcp_sn": 12, "qfi": 3, "ue_mac": "02:aa:00:00:00:20", "ul_teid": "0x40020",
        "gnb_ip": "10.0.0.9", "upf_ip": "10.0.0.8", "upf_mac": "02:bb:00:00:00:01"}

    before = {t: entry_values(targets_, t) for t in ("dl_drb", "ul_bearer")}
    mine_dl = ({"teid": 0x30020}, {"drb_index": 20, "ue_id": 120, "lcid": 5, "rlc_am": 0,
                                   "rlc_sn18": 0, "pdcp_sn18": 0, "default_qfi": 3,
                                   "ue_mac": 0x02AA00000020})
    assert all(mine_dl in entries for entries in before["dl_drb"].values())
    code, out = gnbctl(topology, "drb", "del", 20)
    assert code == 0, out
    after = {t: entry_values(targets_, t) for t in ("dl_drb", "ul_bearer")}
    for table in ("dl_drb", "ul_bearer"):
        for name in targets_:
            gone = [e for e in before[table][name] if e[1]["drb_index"] == 20]
            assert len(gone) == 1
            assert after[table][name] == [e for e in before[table][name] if e not in gone]


def test_drb_load_replace(loaded, gnbctl, tmp_path):
    topology, targets_ = loaded
    before = {t: entry_values(targets_, t) for t in ("dl_drb", "ul_bearer")}
    csv = tmp_path / "replace.csv"
    csv.write_text(
        CSV_HEADER
        # DRB 3: every field but its keys changes, and a poll configuration
        + "3,0x10003,3,4,am,18,18,5,02:cc:00:00:00:03,0x29999,10.0.0.1,10.0.0.7,"
          "02:dd:00:00:00:01,p16,kB25\n"
        # DRB 4: a new TEID (the old dl_drb entry goes, the new one comes)
        + "4,0x40004,4,4,am,18,18,9,02:00:00:00:00:04,0x20004,10.0.0.1,10.0.0.2,"
          "02:00:00:00:ff:ff,,\n"
        # DRB 30: new
        + "30,0x1001e,30,4,am,18,18,9,02:00:00:00:00:1e,0x2001e,10.0.0.1,10.0.0.2,"
          "02:00:00:00:ff:ff,,\n")

    done = subprocess.run([str(GNBCTL), "--topology", str(topology), "drb", "load", "--file",
                           str(csv)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 4
    assert one_line(done.stderr) == (
        "gnbctl: error: nothing written: 2 of 3 DRBs share keys with installed ones (the "
        "first: DRB 3: DRB index 3 is in use by teid 0x10003, ue_id 3 lcid 4 on nic0, host0; "
        "teid 0x10003 is DRB 3's on nic0, host0; ue_id 3 lcid 4 is DRB 3's on nic0, host0); "
        "`gnbctl drb load --replace` updates installed DRBs in place")
    assert {t: entry_values(targets_, t) for t in ("dl_drb", "ul_bearer")} == before

    code, out = gnbctl(topology, "drb", "load", "--file", csv, "--replace")
    assert code == 0, out
    assert {n: (t["replaced"], t["deleted_first"]) for n, t in out["result"]["targets"].items()} \
        == {"nic0": (2, 1), "host0": (2, 1)}
    # only the NIC keeps poll configurations (the hybrid host's are its NIC's)
    assert {n: t["poll_configured"] for n, t in out["result"]["targets"].items()} == \
        {"nic0": 1, "host0": 0}

    dl3, ul3 = generated(3, qfi=5, ue_mac=0x02CC00000003, ul_teid=0x29999, upf_ip=0x0A000007,
                         upf_mac=0x02DD00000001)
    dl4, ul4 = generated(4, teid=0x40004)
    dl30, ul30 = generated(30)
    expected_dl = sorted([generated(i)[0] for i in (0, 1, 2, 5, 6, 7)] + [dl3, dl4, dl30],
                         key=repr)
    expected_ul = sorted([generated(i)[1] for i in (0, 1, 2, 4, 5, 6, 7)] + [ul3, ul30],
                         key=repr)
    assert entry_values(targets_, "dl_drb") == {"nic0": expected_dl, "host0": expected_dl}
    assert entry_values(targets_, "ul_bearer") == {"nic0": expected_ul, "host0": expected_ul}
    nic, nic_names = targets_["nic0"]
    register = nic_names.registers["rlc_poll_config"].preamble.id
    cell = nic.client().read(p4r.Entity(register_entry=p4r.RegisterEntry(
        register_id=register, index=p4r.Index(index=3))))[0].register_entry.data.bitstring
    assert int.from_bytes(cell, "big") == 25_000 << 32 | 16
    code, out = gnbctl(topology, "drb", "show", 3)
    assert (out["result"]["nic0"]["poll_pdu"], out["result"]["nic0"]["poll_byte"]) == \
        ("p16", "kB25")

    # replacing again changes nothing, and writes no poll register (none changed)
    code, out = gnbctl(topology, "drb", "load", "--file", csv, "--replace")
    assert code == 0, out
    assert {n: (t["replaced"], t["deleted_first"], t["poll_configured"])
            for n, t in out["result"]["targets"].items()} == {"nic0": (3, 0, 0),
                                                               "host0": (3, 0, 0)}
    assert entry_values(targets_, "dl_drb") == {"nic0": expected_dl, "host0": expected_dl}

    # --replace does not move a key from one DRB to another
    csv.write_text(CSV_HEADER + "31,0x10006,31,4,am,18,18,9,02:00:00:00:00:31,0x20031,"
                                "10.0.0.1,10.0.0.2,02:00:00:00:ff:ff,,\n")
    done = subprocess.run([str(GNBCTL), "--topology", str(topology), "drb", "load", "--file",
                           str(csv), "--replace"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 4
    assert one_line(done.stderr) == (
        "gnbctl: error: nothing written: DRB 31: teid 0x10006 is DRB 6's on nic0, host0; "
        "--replace updates a DRB of the same index, it does not move a key from one DRB to "
        "another: delete that DRB first")
    assert entry_values(targets_, "dl_drb") == {"nic0": expected_dl, "host0": expected_dl}
