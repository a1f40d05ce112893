"""RLC AM over a lossy radio link, end to end (issue 13): the hybrid
topology with the BaaS on the NIC's BaaS PF and the UE emulator behind the
radio PF dropping 1% of the downlink radio frames (retransmissions
included). Every SDU the N3 side sent must reach the UE exactly once and
in order, whichever target processed it (half the DRBs' frames are built
by the hosts), through the real processes: NIC, hosts, BaaS, gnbctl."""
from __future__ import annotations

import time

from testbench.topology.gnbctl import wait_until
from testbench.topology.topology import TopologyConfig
from testbench.topology.traffic import DownlinkFrames, PacedSender
from testbench.ue.process import UeEmulatorProcess

TOPOLOGY_CONFIG = TopologyConfig(n_hosts=2, baas=True)
RATE_PPS = 4000
SECONDS = 3.0
LOSS = 0.01
SETTLE_S = 30.0


def test_one_percent_radio_loss_loses_no_sdu(hybrid, tmp_path):
    gnbctl, topology = hybrid.gnbctl, hybrid.topology
    gnbctl("offload", "set", "50")
    links = topology.network.links
    ue = UeEmulatorProcess(links["ran"].netns.name, links["ran"].pair.test, tmp_path / "ue.json",
                           loss=LOSS, seed=13).start()
    try:
        sender = PacedSender(links["n3"].netns.name, links["n3"].pair.test,
                             DownlinkFrames(hybrid.drbs), RATE_PPS).start()
        time.sleep(SECONDS)
        sent = sender.stop()
        # every PDU acknowledged: nothing left to retransmit
        settled = wait_until(lambda: gnbctl("baas", "stats")["result"]["held"] == 0, SETTLE_S)
        baas = gnbctl("baas", "stats")["result"]
    finally:
        summary = ue.stop()
    totals = summary["totals"]
    print(f"\nsent {sent} SDUs; the link dropped {summary['link']['downlink_dropped']} of "
          f"{summary['link']['downlink_frames']} radio frames; BaaS: {baas['counters']}; "
          f"UE: {totals}; settled after {settled} s")
    delivered = sorted(k for drb in summary["drbs"] for k in drb["delivered_k"])
    assert settled is not None, f"the BaaS still holds PDUs after {SETTLE_S} s: {baas}"
    assert summary["link"]["downlink_dropped"] > 0, summary["link"]
    assert delivered == list(range(sent)), \
        f"{sent - len(set(delivered))} SDUs lost, {totals['duplicate_k_count']} duplicated"
    assert (totals["duplicate_k_count"], totals["order_violation_count"]) == (0, 0)
    counters = baas["counters"]
    assert counters["retransmitted"] >= summary["link"]["downlink_dropped"] - counters["rlf"]
    assert (counters["rlf"], counters["nack_not_held"]) == (0, 0), counters
