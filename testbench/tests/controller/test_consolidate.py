"""Core consolidation's decision (controller/consolidate.py) and the VF
assignment it asks for (controller/offload.py): every branch of the rule
with the expected hosts written out, the hold time, the hysteresis, and
which buckets move. The watcher applying it under traffic is
testbench/tests/hybrid/test_hybrid_consolidation.py."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from controller import offload
from controller.consolidate import (Consolidator, HostLoad, Policy, WorkMeter,
                                    hosts_needed, modes_to_switch)

HOSTS = ["host0", "host1", "host2"]
ON = Policy(enabled=True, consolidate_below=0.5, spread_above=0.8, hold_s=3, min_hosts=1)


def loads(*work: float, lcores: int = 1) -> dict[str, HostLoad]:
    return {h: HostLoad(lcores, w) for h, w in zip(HOSTS, work)}


@pytest.mark.parametrize("work, lcores, fill, needed", [
    (0.0, [1, 1, 1], 0.5, 1),
    (0.5, [1, 1, 1], 0.5, 1),       # exactly at the fill fits
    (0.51, [1, 1, 1], 0.5, 2),
    (1.4, [1, 1, 1], 0.5, 3),       # more than every host at the fill: all
    (0.9, [2, 1], 0.5, 1),          # a host's lcores count, not hosts
])
def test_hosts_needed(work, lcores, fill, needed):
    assert hosts_needed(work, lcores, fill) == needed


def test_off_keeps_every_bucket_home():
    c = Consolidator(HOSTS)
    d = c.decide(Policy(enabled=False), HOSTS, loads(0.01, 0.01, 0.01), 0.0)
    assert d.active == () and "off" in d.reason


def test_fold_waits_hold_s_then_folds_to_the_fewest_leading_hosts():
    c = Consolidator(HOSTS)
    for t in (0.0, 1.0, 2.0):
        d = c.decide(ON, HOSTS, loads(0.2, 0.1, 0.1), t)
        assert d.active == (), (t, d)        # pending: 0.4 fits one host, not held 3 s yet
        assert "pending" in d.reason
    d = c.decide(ON, HOSTS, loads(0.2, 0.1, 0.1), 3.0)
    assert d.active == ("host0",), d


def test_a_dip_shorter_than_hold_s_folds_nothing():
    c = Consolidator(HOSTS)
    c.decide(ON, HOSTS, loads(0.1, 0.1, 0.1), 0.0)
    c.decide(ON, HOSTS, loads(0.1, 0.1, 0.1), 2.0)
    c.decide(ON, HOSTS, loads(0.6, 0.6, 0.6), 2.5)      # back up: the hold starts again
    d = c.decide(ON, HOSTS, loads(0.1, 0.1, 0.1), 3.5)
    assert d.active == () and "pending" in d.reason


def test_spread_is_at_once_and_to_where_the_work_fits_below_the_fold_fill():
    c = Consolidator(HOSTS, active=("host0",))
    # 0.9 lcores of work on one host: above spread_above 0.8; fits 2 hosts at 0.5
    d = c.decide(ON, HOSTS, {"host0": HostLoad(1, 0.9), "host1": HostLoad(1, 0.0),
                             "host2": HostLoad(1, 0.0)}, 0.0)
    assert d.active == ("host0", "host1"), d
    # then the same work on two hosts (0.45 each) neither folds nor spreads
    d = c.decide(ON, HOSTS, loads(0.45, 0.45, 0.0), 1.0)
    assert d.active == ("host0", "host1") and d.reason.startswith("kept 2")
    # more than two can carry: all three, written as "every bucket home"
    d = c.decide(ON, HOSTS, loads(0.9, 0.9, 0.0), 2.0)
    assert d.active == (), d


def test_hysteresis_between_fill_and_spread():
    """Work between consolidate_below and spread_above on one host stays."""
    c = Consolidator(HOSTS, active=("host0",))
    d = c.decide(ON, HOSTS, loads(0.7, 0.0, 0.0), 0.0)
    assert d.active == ("host0",) and d.reason.startswith("kept 1")


def test_min_hosts():
    c = Consolidator(HOSTS)
    policy = Policy(enabled=True, hold_s=0, min_hosts=2)
    assert c.decide(policy, HOSTS, loads(0.0, 0.0, 0.0), 0.0).active == ("host0", "host1")


def test_unknown_load_spreads():
    c = Consolidator(HOSTS, active=("host0",))
    d = c.decide(ON, HOSTS, {"host0": HostLoad(1, 0.1)}, 0.0)
    assert d.active == () and "host1" in d.reason
    c = Consolidator(HOSTS, active=("host0",))
    assert c.decide(ON, HOSTS, None, 0.0).active == ()


def test_only_live_hosts_count():
    c = Consolidator(HOSTS, active=("host0",))
    # host0 died: the live ones in order replace it
    d = c.decide(ON, ["host1", "host2"], loads(0.0, 0.1, 0.1), 0.0)
    assert d.active == (), d            # count 0 of the live -> all live, fold pending
    d = c.decide(ON, ["host1", "host2"], loads(0.0, 0.1, 0.1), 3.0)
    assert d.active == ("host1",), d
    assert c.decide(ON, ["host2"], loads(0.0, 0.0, 0.1), 4.0).active == ()


@dataclass
class Host:
    name: str
    vf_port: int


TOPOLOGY = [Host("host0", 4), Host("host1", 6), Host("host2", 8)]


def test_vf_assignment_moves_only_the_folded_hosts_buckets():
    home = offload.vf_assignment(TOPOLOGY)
    folded = offload.vf_assignment(TOPOLOGY, None, ("host0", "host1"))
    for bucket in range(offload.VF_BUCKETS):
        if home[bucket] in (4, 6):
            assert folded[bucket] == home[bucket], bucket
        else:               # host2's buckets, dealt over host0 and host1
            assert folded[bucket] == (4, 6)[bucket % 2], bucket
    assert set(offload.vf_assignment(TOPOLOGY, None, ("host1",)).values()) == {6}
    # a bucket whose (active) owner is not live stays on the NIC
    parked = offload.vf_assignment(TOPOLOGY, {"host1"}, ("host0", "host1"))
    assert {b for b, p in parked.items() if p is None} == \
        {b for b in range(offload.VF_BUCKETS) if folded[b] == 4}
    # no active host named: every bucket home
    assert offload.vf_assignment(TOPOLOGY, None, ()) == home


def test_work_meter_from_two_samples():
    meter = WorkMeter()

    def sample(t_ns, work):
        return {"time_ns": t_ns, "targets": [
            {"name": "host0", "reachable": True,
             "lcores": [{"lcore": 1, "work_ns": work}, {"lcore": 2, "work_ns": work}]},
            {"name": "host1", "reachable": False, "lcores": []}]}

    assert meter.loads(sample(10**9, 0), ["host0", "host1"]) == {}
    found = meter.loads(sample(2 * 10**9, 250_000_000), ["host0", "host1"])
    assert found == {"host0": HostLoad(lcores=2, work=0.5)}


def test_modes_to_switch_are_the_polling_ones():
    telemetry = {"targets": [
        {"name": "host1", "reachable": True, "lcores": [
            {"lcore": 1, "mode": "busy"}, {"lcore": 2, "mode": "nap"},
            {"lcore": 3, "mode": "adaptive"}, {"lcore": 4, "mode": "proportional"},
            {"lcore": 5, "mode": "pmgmt-pause"}]},
        {"name": "host2", "reachable": False, "lcores": []}]}
    assert modes_to_switch(telemetry, "host1") == {1: "busy", 2: "nap", 4: "proportional"}
    assert modes_to_switch(telemetry, "host2") == {}
    assert modes_to_switch(None, "host1") == {}
