"""The BaaS in the hybrid topology (issue 13), through the real processes:
NIC, hosts, BaaS, gnbctl, the UE emulator.

RLC AM over a lossy radio link, end to end: the BaaS on the NIC's BaaS PF
and the UE emulator behind the radio PF dropping 1% of the downlink radio
frames (retransmissions included). Every SDU the N3 side sent must reach
the UE exactly once and in order, whichever target processed it (half the
DRBs' frames are built by the hosts).

Faults: the BaaS killed, the targets forward as before (every radio frame
and BaaS copy checked); started again, it buffers new PDUs."""
from __future__ import annotations

import json
import subprocess
import time

from conftest import assert_clean
from testbench.topology.gnbctl import GNBCTL, wait_until
from controller.launch.topology import TopologyConfig
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


def baas_row(gnbctl) -> dict:
    """The BaaS's row of `gnbctl status --json` (exit 3 when something,
    the BaaS included, does not answer)."""
    done = subprocess.run([str(GNBCTL), "--topology", str(gnbctl.topology), "--json", "status"],
                          capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout)
    row = next(row for row in answer["result"] if row["role"] == "baas")
    assert done.returncode == (0 if row["reachable"] else 3), answer
    return row


def test_killed_baas_changes_nothing_for_the_targets_and_comes_back(hybrid):
    topology, gnbctl = hybrid.topology, hybrid.gnbctl
    assert baas_row(gnbctl)["reachable"] is True
    topology.baas.kill()
    assert baas_row(gnbctl)["reachable"] is False
    # the targets forward and copy as before: every radio frame and every
    # BaaS copy (captured on the BaaS PF's far end) checked frame by frame
    with hybrid.traffic(50) as run:
        run.run_for(1.5)
    assert_clean(run.result)
    # started again, it attaches and buffers new PDUs (nothing of before)
    topology.baas.start()
    assert baas_row(gnbctl)["reachable"] is True
    assert gnbctl("baas", "stats")["result"]["held"] == 0
    links = topology.network.links
    sender = PacedSender(links["n3"].netns.name, links["n3"].pair.test,
                         DownlinkFrames(hybrid.drbs[:8]), 200).start()
    sender.wait_sent(20, timeout=5)
    sent = sender.stop()
    assert wait_until(lambda: gnbctl("baas", "stats")["result"]["counters"]["pdus_received"]
                      >= sent, 5) is not None
    # nobody acknowledges them here: let go of them
    assert gnbctl("baas", "flush", "--all")["result"]["released"] >= 0
