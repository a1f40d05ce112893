"""The BaaS's DRB table through the real process: several DRBs of one UE
(baas/src/drb.h struct baas_ue: the UE's first DRB in its entry, the
others in its LCID table), each found with its own state, listed in
(ue_id, lcid) order, forgotten and made again in any order."""
from __future__ import annotations

import pytest

from controller import baas
from t4p4s.stf.control import ControlError
from testbench.gnb.baas_frames import amd_frame, status_frame

pb2, _ = baas.stubs()
UE, OTHER_UE = 3, 4


def send_copies(link, drb, n):
    before = link.counters()["pdus_received"]
    link.send(*(amd_frame(*drb, sn) for sn in range(n)))
    link.wait_counter("pdus_received", before + n)


def held(link, drb):
    return link.baas.drb(*drb)["result"]["held"]


def listed(stub):
    return [(d.drb.ue_id, d.drb.lcid, d.held)
            for r in stub.ListDrbs(pb2.ListDrbsRequest(), timeout=10) for d in r.drbs]


def flush(stub, drb):
    return stub.Flush(pb2.FlushRequest(drb=pb2.DrbKey(ue_id=drb[0], lcid=drb[1])),
                      timeout=10).released


def test_the_drbs_of_one_ue(link):
    stub = link.baas.stub()
    # made in this order: (UE, 5) is the UE's first, the others in its LCID table
    counts = {(UE, 5): 3, (UE, 1): 2, (UE, 63): 4, (UE, 0): 1, (OTHER_UE, 5): 5}
    for drb, n in counts.items():
        send_copies(link, drb, n)
    assert {drb: held(link, drb) for drb in counts} == counts
    assert listed(stub) == [(*drb, counts[drb]) for drb in sorted(counts)]

    link.send(status_frame(UE, 1, ack_sn=2))
    link.wait_counter("acked", 2, ue_id=UE, lcid=1)
    assert {drb: held(link, drb) for drb in counts} == {**counts, (UE, 1): 0}

    # the first forgotten: the others stay found; it comes back as a new DRB
    assert flush(stub, (UE, 5)) == 3
    with pytest.raises(ControlError, match="ENOENT"):
        link.baas.drb(UE, 5)
    assert (held(link, (UE, 63)), held(link, (UE, 0))) == (4, 1)
    send_copies(link, (UE, 7), 2)
    send_copies(link, (UE, 5), 1)
    assert (held(link, (UE, 5)), held(link, (UE, 7))) == (1, 2)
    assert flush(stub, (UE, 63)) == 4
    assert listed(stub) == [(UE, 0, 1), (UE, 1, 0), (UE, 5, 1), (UE, 7, 2), (OTHER_UE, 5, 5)]

    assert stub.Flush(pb2.FlushRequest(all=True), timeout=10).released == 9
    assert listed(stub) == []
    send_copies(link, (UE, 1), 1)
    assert listed(stub) == [(UE, 1, 1)]
