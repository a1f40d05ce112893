"""Multicast (the packet replication engine) through STF and the control
socket: testbench/p4/t4p4s/multicast.stf's frames are compared byte for byte
by test_stf_programs; here, what it drops and why, the control socket's
answers to bad groups, and the STF multicast commands' own errors."""
from pathlib import Path

import pytest

from t4p4s.stf import control
from t4p4s.stf.parser import StfError, parse_stf_text
from t4p4s.stf.resolve import Resolver

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "t4p4s" / "multicast.p4"


@pytest.mark.dpdk
@pytest.mark.stf
def test_multicast_drops_counted_by_reason(run_stf):
    outcome = run_stf(PROGRAM, PROGRAM.with_suffix(".stf"))
    assert outcome.passed, "\n".join(outcome.failures)
    drops = outcome.stats["drops"]
    # group 77 (never created) and group 1 after mc_mgrp_destroy; group 3
    # (created empty) and group 2 once its last node was destroyed; the
    # mark_to_drop packet and the rid 99 replica that egress drops
    assert (drops["mcast_no_group"], drops["mcast_empty_group"], drops["pipeline"]) == (2, 2, 2)
    # every replica but a group's last is a copy; none failed
    assert drops["clone_failed"] == 0


@pytest.fixture
def runtime(compiled, cache_root):
    run_dir = cache_root / "runs" / "mcast-control"
    eal = control.test_eal_args(run_dir.name) + ["--vdev", "net_ring0"]
    process = control.RuntimeProcess(compiled(PROGRAM).executable_path, eal,
                                     ["--governor", "nap"], run_dir)
    yield process
    assert process.stop() == 0


def _error(runtime, request) -> str:
    with pytest.raises(control.ControlError) as error:
        runtime.request(request)
    assert error.value.reply["message"]
    return error.value.reply["error"]


@pytest.mark.dpdk
def test_control_socket_groups(runtime):
    add = lambda group, *replicas, cmd="mcast_group_add": {  # noqa: E731
        "cmd": cmd, "group": group, "replicas": [{"port": p, "rid": r} for p, r in replicas]}
    runtime.request(add(3, (1, 7), (2, 7)))
    runtime.request({"cmd": "mcast_group_add", "group": 4})     # no replicas: an empty group
    assert runtime.request({"cmd": "mcast_group_read"})["groups"] == [
        {"group": 3, "replicas": [{"port": 1, "rid": 7}, {"port": 2, "rid": 7}]},
        {"group": 4, "replicas": []}]
    assert [_error(runtime, r) for r in (
        add(3, (1, 1)),                             # exists
        add(5, (1, 1), cmd="mcast_group_modify"),   # missing
        {"cmd": "mcast_group_delete", "group": 5},
        {"cmd": "mcast_group_read", "group": 5},
        add(0, (1, 1)),                             # 0: no multicast
        add(65536, (1, 1)),                         # mcast_grp is bit<16>
        add(5, (1, 1), (1, 1)),                     # the same replica twice
        add(5, (512, 1)),                           # ports are bit<9>
        add(5, (1, 65536)),                         # egress_rid is bit<16>
        {"cmd": "mcast_group_add", "group": 5, "replicas": [{"rid": 1}]},
        {"cmd": "mcast_group_add", "group": 5, "replicas": {"port": 1}},
    )] == ["EEXIST", "ENOENT", "ENOENT", "ENOENT"] + ["EINVAL"] * 7
    runtime.request(add(3, (9, 1), cmd="mcast_group_modify"))
    runtime.request({"cmd": "mcast_group_delete", "group": 4})
    assert runtime.request({"cmd": "mcast_group_read", "group": 3})["groups"] == [
        {"group": 3, "replicas": [{"port": 9, "rid": 1}]}]
    assert runtime.request({"cmd": "mcast_group_read"})["groups"] == [
        {"group": 3, "replicas": [{"port": 9, "rid": 1}]}]


class _NoNames:
    """The multicast commands resolve no P4 names."""


@pytest.mark.parametrize("text,message", [
    ("mc_node_associate 1 0", "no multicast group 1 (mc_mgrp_create it first)"),
    ("mc_mgrp_create 1\nmc_node_associate 1 0", "no multicast node 0"),
    ("mc_mgrp_create 1\nmc_mgrp_create 1", "multicast group 1 exists"),
    ("mc_mgrp_create 0", "multicast group 0 out of range"),
    ("mc_node_create 65536 1", "rid 65536 out of range"),
    ("mc_mgrp_create 1\nmc_mgrp_create 2\nmc_node_create 1 1\nmc_node_associate 1 0\n"
     "mc_node_associate 2 0", "multicast node 0 is already in group 1"),
    ("mc_mgrp_create 1\nmc_node_create 1 1\nmc_node_dissociate 1 0",
     "multicast node 0 is not in group 1"),
])
def test_stf_multicast_command_errors(text, message):
    resolver = Resolver(_NoNames())
    with pytest.raises(StfError) as error:
        for command in parse_stf_text(text, "t.stf"):
            resolver.control_command(command)
    assert message in str(error.value) and "t.stf:" in str(error.value)


@pytest.mark.parametrize("text,message", [
    ("mc_node_associate 1", "expected: mc_node_associate MGRP HANDLE"),
    ("mc_node_create", "expected: mc_node_create RID PORT..."),
    ("mc_mgrp_create 1 2", "expected: mc_mgrp_create MGRP"),
    ("mirroring_add_mc 5 1", "unsupported: mirroring_add_mc"),
])
def test_stf_multicast_syntax_errors(text, message):
    with pytest.raises(StfError) as error:
        parse_stf_text(text, "t.stf")
    assert message in str(error.value) and "t.stf:1" in str(error.value)


def test_stf_multicast_requests_follow_the_nodes():
    """A node's change re-sends each group it is in, replicas node by node
    in association order, ports in increasing order (as simple_switch)."""
    resolver = Resolver(_NoNames())
    text = ("mc_mgrp_create 9\nmc_node_create 5 3 1\nmc_node_create 6 2\n"
            "mc_node_associate 9 1\nmc_node_associate 9 0\nmc_node_update 0 4")
    requests = [resolver.control_command(c) for c in parse_stf_text(text)]
    assert requests == [
        [{"cmd": "mcast_group_add", "group": 9, "replicas": []}], [], [],
        [{"cmd": "mcast_group_modify", "group": 9, "replicas": [{"port": 2, "rid": 6}]}],
        [{"cmd": "mcast_group_modify", "group": 9, "replicas": [
            {"port": 2, "rid": 6}, {"port": 1, "rid": 5}, {"port": 3, "rid": 5}]}],
        [{"cmd": "mcast_group_modify", "group": 9, "replicas": [
            {"port": 2, "rid": 6}, {"port": 4, "rid": 5}]}]]
