"""The topology file is checked when it is loaded (issue 17, item 3): each
mistake is one TopologyError, on one line, naming the file, the target and
the key, before any target is contacted."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller import topology
from controller.errors import TopologyError

HOST_P4 = Path(__file__).resolve().parents[3] / "p4src" / "host.p4"


def nic(address: str = "127.0.0.1:9559", **keys) -> str:
    lines = ['[[targets]]', 'name = "nic0"', 'role = "nic"', f'address = "{address}"']
    return "\n".join(lines + [f"{k} = {json.dumps(v)}" for k, v in keys.items()]) + "\n"


def host(name: str = "host0", address: str = "127.0.0.1:9560", **keys) -> str:
    lines = ['[[targets]]', f'name = "{name}"', 'role = "host"', f'address = "{address}"']
    return "\n".join(lines + [f"{k} = {json.dumps(v)}" for k, v in keys.items()]) + "\n"


def topology_file(tmp_path, text: str):
    path = tmp_path / "topology.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ('timeout = "5s"\n' + nic(), "'timeout' must be a number of seconds above 0 (like "
                                 "timeout = 5.0), not '5s'"),
    (nic(p4="host.p4"), "targets[0] (nic0): p4 = 'host.p4': no such file "),
    (nic() + host(address="127.0.0.1:9559"), "nic0 and host0 both name the P4Runtime server "
                                             "127.0.0.1:9559, device id 1"),
    ("timeout = 0\n" + nic(), "'timeout' must be a number of seconds above 0"),
    ("timeout = true\n" + nic(), "'timeout' must be a number of seconds above 0"),
    ("timout = 5\n" + nic(), "unknown keys timout (known: baas, election_id, power, run, "
                             "targets, timeout)"),
    ("election_id = 0\n" + nic(), "'election_id' must be 1 or more"),
    ("election_id = \"1\"\n" + nic(), "'election_id' must be a non-negative integer"),
    (nic(address="127.0.0.1"), "targets[0] (nic0): 'address' must be HOST:PORT"),
    (nic(address="127.0.0.1:99999"), "'address' must be HOST:PORT"),
    (nic(device_id="1"), "'device_id' must be a non-negative integer"),
    (nic(baas_clone="false"), "'baas_clone' must be true or false, not 'false'"),
    (nic(p4=str(HOST_P4), p4info=str(HOST_P4)), "give 'p4info' or 'p4', not both"),
    (nic(p4=5), "'p4' must be a file name (a string)"),
    (nic(p4info="/nonexistent/x.txtpb"), "p4info = '/nonexistent/x.txtpb': no such file "
                                         "/nonexistent/x.txtpb"),
    (nic() + host(nic=1, vf=0), "'nic' must be a NIC target's name"),
    (nic() + host(nic="nic1", vf=0), "host0 is behind 'nic1', which is no NIC target"),
    (nic() + host(nic="nic0", vf=0) + host("host1", "127.0.0.1:9561", nic="nic0", vf=0),
     "two hosts on VF 0 of nic0"),
    ('[[targets]]\nname = "x"\nrole = "switch"\naddress = "a:1"\n',
     "role must be one of nic, host"),
    ("targets = 3\n", "no [[targets]]"),
    ("[targets\n", "Expected ']'"),
    # the launch keys (gnbctl up)
    (nic(lcores=1), "targets[0] (nic0): launch keys need 'p4' (the program gnbctl up runs"),
    (nic(p4=str(HOST_P4), ports=["a", "b", "c"]), "targets[0] (nic0): launch keys need "
                                                  "'lcores'"),
    (nic(p4=str(HOST_P4), lcores="2-", ports=["a", "b", "c"]),
     "'lcores' must be an EAL core list (like 2, \"2-3\" or \"2,4\"), not '2-'"),
    (nic(p4=str(HOST_P4), lcores=2), "targets[0] (nic0): launch keys need 'ports', a list "
                                     "of 3 interface names or DPDK vdevs"),
    (nic(p4=str(HOST_P4), lcores=2, ports=["a"]), "'ports' must be a list of 3 interface "
                                                  "names or DPDK vdevs"),
    (nic(p4=str(HOST_P4), lcores=2, ports=["n3", "radio", "a/b"]),
     "'ports': 'a/b' is neither an interface name"),
    (nic(p4=str(HOST_P4), lcores=2, ports=["n3", "radio", "baas"], governor="fast"),
     "'governor' must be one of busy, nap, adaptive"),
    (nic(p4=str(HOST_P4), lcores=2, ports=["n3", "radio", "baas"], hugepages="yes"),
     "'hugepages' must be true or false"),
    (nic(p4=str(HOST_P4), lcores=2, ports=["n3", "radio", "baas"], options="--mbufs 9"),
     "'options' must be a list of strings"),
    (nic() + host(nic="nic0", vf=0, p4=str(HOST_P4), lcores=3, ports=["a", "b", "c"]),
     "targets[1] (host0): a hybrid host takes no 'ports'"),
    (nic() + '[baas]\naddress = "127.0.0.1:9600"\nlcores = 1\n',
     "[baas]: lcores are for gnbctl up: add launch = true"),
    (nic() + '[baas]\naddress = "127.0.0.1:9600"\nlaunch = true\nlcores = 1\n',
     "[baas]: launch keys need 'ports', a list of 1 interface names"),
    (nic() + '[baas]\naddress = "baas"\nlaunch = true\nlcores = 1\nports = ["x"]\n',
     "[baas]: 'address' must be HOST:PORT or unix:PATH for gnbctl up to start it there"),
    (nic() + '[power]\naddress = "unix:/run/p.grpc"\nperiod_ms = 100\n',
     "[power]: 'period_ms' is for gnbctl up: add launch = true"),
    (nic() + '[power]\naddress = "unix:/run/p.grpc"\nlaunch = "yes"\n',
     "[power]: 'launch' must be true or false"),
    ('[run]\ndir = 5\n' + nic(), "[run] 'dir' must be a directory name"),
    ('[run]\ndir = "/tmp/' + "x" * 100 + '"\n' + nic(p4=str(HOST_P4), lcores=2,
                                                  ports=["a", "b", "c"]),
     "is longer than a UNIX socket address takes (107 bytes): give a shorter [run] dir"),
])
def test_topology_mistakes_are_found_at_load(tmp_path, text, message):
    path = topology_file(tmp_path, text)
    with pytest.raises(TopologyError) as raised:
        topology.load(path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_same_address_with_other_device_ids_is_allowed(tmp_path):
    """A P4Runtime server may hold several devices: only the same address
    and device id twice is certainly wrong."""
    loaded = topology.load(topology_file(tmp_path, nic() + host(address="127.0.0.1:9559",
                                                                device_id=2)))
    assert [(t.address, t.device_id) for t in loaded.targets] == [("127.0.0.1:9559", 1),
                                                                  ("127.0.0.1:9559", 2)]


def test_launch_keys_and_their_defaults(tmp_path):
    """What gnbctl up reads: a target's launch keys, a control socket and
    the run directory by default in RUN_DIR, relative paths from the file's
    directory."""
    text = ('[run]\ndir = "run"\n' + nic(p4=str(HOST_P4), lcores=2, ports=["n3", "radio",
                                                                        "net_null0"])
            + host(nic="nic0", vf=0, p4=str(HOST_P4), lcores="3-4", governor="nap",
                   hugepages=True, options=["--mbufs", "4096"], control="h.ctl")
            + '[baas]\naddress = "127.0.0.1:9600"\nlaunch = true\nlcores = 1\n'
              'ports = ["baas-svc"]\n'
            + '[power]\naddress = "unix:run/power.grpc"\nlaunch = true\nperiod_ms = 500\n')
    loaded = topology.load(topology_file(tmp_path, text))
    run = tmp_path / "run"
    assert loaded.run_dir == run
    nic0, host0 = loaded.targets
    assert (nic0.launch, nic0.control) == (topology.Launch("2", ("n3", "radio", "net_null0")),
                                           run / "nic0.ctl")
    assert (host0.launch, host0.control) == (
        topology.Launch("3-4", (), "nap", True, ("--mbufs", "4096")), tmp_path / "h.ctl")
    assert loaded.memif_socket("nic0", 0) == run / "memif" / "nic0.vf0.sock"
    assert (loaded.baas.launch, loaded.baas.control) == (topology.Launch("1", ("baas-svc",)),
                                                         run / "baas.ctl")
    assert (loaded.power.launch, loaded.power.period_ms) == (True, 500)
    # a relative unix: address is the file's directory's, wherever gnbctl runs
    assert loaded.power.address == f"unix:{run / 'power.grpc'}"
    # without launch keys: nothing to start, no control socket assumed
    plain = topology.load(topology_file(tmp_path, nic()))
    assert (plain.targets[0].launch, plain.targets[0].control) == (None, None)
    assert plain.run_dir == topology.default_run_root() / "topology"
