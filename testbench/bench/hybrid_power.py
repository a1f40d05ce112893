"""`make bench` section "consolidation" (issue 15 item 9, the hybrid half):
the hybrid topology (the NIC and two hosts behind memif VFs) at a low
paced load, 50% offloaded, with core consolidation off and then on
(controller/consolidate.py, applied by `gnbctl run`), once per governor
mode of GOVERNORS: busy (DPDK's usual polling: the freed host's lcores are
set to adaptive by the fold), adaptive (Algorithm 1 everywhere) and
proportional.

The NIC's N3 port is net_null0 under the runtime's paced `--rx-replay`
(constant gaps, the gNB downlink pcap of every DRB), radio and BaaS
net_null. Every process runs the same --governor. One window
with the policy off, then `gnbctl power consolidate on` and, once the
watcher folded the hosts, one window with it on. Per process: the polling
thread's CPU time share (its own clock, the runtime's `power` command),
the governor's busy / paused / asleep shares and power/model.py's
estimate; and the frames offered, delivered on the radio port and lost.

On a 2-vCPU machine the hosts cannot each have a CPU of their own beside
the NIC: host1 shares the NIC's CPU (PLACEMENT). CPU time is measured, so
time a process waited for its CPU is not counted; the model, which reads
the governor's wall-clock accounting, counts it as C0 and so overstates
two processes that share a CPU."""
from __future__ import annotations

import os
import time
from pathlib import Path

from testbench.bench.dpdk import BenchError
from testbench.bench.gnb_traffic import downlink_pcap
from testbench.bench.workloads import GNB_DOWNLINK_REPLAY_VDEVS, N_EXACT_ENTRIES
from testbench.topology.gnbctl import Gnbctl, GnbctlError
from controller.launch.processes import nic_vf_ports
from controller.launch.topology import HybridTopology, TopologyConfig, TopologyError

DRBS = N_EXACT_ENTRIES
RATE_PPS = 100_000          # low: a few % of what the NIC alone forwards here
OFFLOAD_PERCENT = 50
GOVERNORS = ("busy", "adaptive", "proportional")
HOLD_S = 1
WARMUP_S = 2.0
WINDOW_S = 4.0
FOLD_LIMIT_S = 20.0
RADIO_PORT = 1


def _power(target) -> dict:
    """lcore -> the runtime's per-lcore power counters."""
    return {lc["lcore"]: lc for lc in target.request({"cmd": "power"})["lcores"]}


def _reading(topology) -> dict:
    nic_ports = topology.nic.stats()["ports"]
    return {"at_ns": time.monotonic_ns(),
            "power": {t.name: _power(t) for t in topology.targets},
            "backends": topology.nic.request({"cmd": "power"}),
            "radio_tx": nic_ports[RADIO_PORT]["tx"],
            "replay": nic_ports[0].get("rx_replay", {}),
            "to_hosts": [nic_ports[nic_vf_ports(i)[0]]["tx"] for i in range(len(topology.hosts))]}


def _process_shares(before: dict, after: dict, estimate) -> dict:
    window_ns = after["at_ns"] - before["at_ns"]
    backends = after["backends"]
    out = {}
    for name, lcores in after["power"].items():
        cpu = busy = paused = asleep = sleeps = 0
        watts = 0.0
        for lcore, new in lcores.items():
            old = before["power"][name].get(lcore, {})
            d = {k: new[k] - old.get(k, 0) for k in
                 ("cpu_time_ns", "busy_ns", "paused_ns", "asleep_ns", "sleeps")}
            cpu += d["cpu_time_ns"]
            busy, paused, asleep = busy + d["busy_ns"], paused + d["paused_ns"], \
                asleep + d["asleep_ns"]
            sleeps += d["sleeps"]
            if estimate is not None:
                residency = [n - o for n, o in zip(new["pstate_residency_ns"],
                                                   old.get("pstate_residency_ns",
                                                           [0] * len(new["pstate_residency_ns"])))]
                watts += estimate(d["busy_ns"], d["paused_ns"], d["asleep_ns"], d["sleeps"],
                                  residency, new["pstate"], backends["pstates_mhz"]).watts
        out[name] = {"cpu_share": cpu / window_ns, "busy_share": busy / window_ns,
                     "paused_share": paused / window_ns, "asleep_share": asleep / window_ns,
                     "sleeps_per_s": sleeps * 1e9 / window_ns,
                     "modelled_watts": watts if estimate is not None else None}
    return out


def _window(topology, estimate) -> dict:
    before = _reading(topology)
    time.sleep(WINDOW_S)
    after = _reading(topology)
    for target in topology.targets:
        if not target.alive():
            raise BenchError(f"{target.name} exited:\n{target.runtime.log_tail()}")
    seconds = (after["at_ns"] - before["at_ns"]) / 1e9
    offered = after["replay"].get("arrived", 0) - before["replay"].get("arrived", 0)
    lost = sum(after["replay"].get(k, 0) - before["replay"].get(k, 0)
               for k in ("ring_overflow", "no_mbuf"))
    processes = _process_shares(before, after, estimate)
    hosts = [t.name for t in topology.hosts]
    return {
        "seconds": seconds,
        "offered_pps": offered / seconds,
        "delivered_pps": (after["radio_tx"] - before["radio_tx"]) / seconds,
        "replay_lost": lost,
        "to_hosts_pps": [(a - b) / seconds for a, b in zip(after["to_hosts"], before["to_hosts"])],
        "processes": processes,
        "hosts_cpu_share": sum(processes[h]["cpu_share"] for h in hosts),
        "all_cpu_share": sum(p["cpu_share"] for p in processes.values()),
        "hosts_modelled_watts": (sum(processes[h]["modelled_watts"] for h in hosts)
                                 if estimate is not None else None),
    }


def _one_governor(governor: str, pcap: Path, cpus: list[int], build_dir: Path,
                  estimate) -> dict:
    nic_cpu, host0_cpu = cpus[0], cpus[1]
    config = TopologyConfig(
        n_hosts=2, nic_lcore=nic_cpu, host_lcores=(host0_cpu, nic_cpu), hugepages=True,
        pf_vdevs=GNB_DOWNLINK_REPLAY_VDEVS,
        nic_options=("--rx-replay", f"0:{pcap},rate={RATE_PPS},pattern=constant"),
        governor=governor, power=True, run_root=build_dir / "consolidation")
    with HybridTopology(config) as topology:
        gnbctl = Gnbctl(topology.gnbctl_topology)
        gnbctl("pipeline", "push")
        gnbctl("drb", "load", "--count", str(DRBS))
        gnbctl("offload", "set", str(OFFLOAD_PERCENT))
        watch = gnbctl.start_watch(topology.run_dir / "gnbctl-run.log")
        try:
            if watch.wait_event("watching", timeout=15) is None:
                raise BenchError(f"gnbctl run did not start:\n{watch.log_text()}")
            gnbctl("power", "consolidate", "off")
            time.sleep(WARMUP_S)
            off = _window(topology, estimate)
            asked = time.time()
            gnbctl("power", "consolidate", "on", "--hold-s", str(HOLD_S))
            folded = watch.wait_event("consolidated", after=asked, timeout=FOLD_LIMIT_S)
            if folded is None:
                raise BenchError(f"the hosts were not folded within {FOLD_LIMIT_S:g} s:\n"
                                 f"{watch.log_text()[-2000:]}")
            time.sleep(WARMUP_S)
            on = _window(topology, estimate)
            gnbctl("power", "consolidate", "off")
        finally:
            watch.stop()
    return {"off": off, "on": on, "folded": folded["detail"],
            "hosts_cpu_ratio": on["hosts_cpu_share"] / off["hosts_cpu_share"]
            if off["hosts_cpu_share"] else None}


def measure(build_dir: Path, cpu_model: str) -> dict:
    try:
        from power.model import estimate
    except ImportError:
        estimate = None
    build_dir = build_dir.resolve()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise BenchError("the consolidation section needs 2 CPUs (NIC, hosts)")
    pcap = downlink_pcap(build_dir / "traffic", DRBS)
    try:
        governors = {g: _one_governor(g, pcap, cpus, build_dir, estimate) for g in GOVERNORS}
    except (TopologyError, GnbctlError, OSError) as e:
        raise BenchError(f"hybrid topology: {e}") from e
    return {
        "description": (f"the hybrid topology (nic.p4 on CPU {cpus[0]}; host0 on CPU {cpus[1]}, "
                        f"host1 on CPU {cpus[0]} beside the NIC), {DRBS:,} DRBs, "
                        f"{OFFLOAD_PERCENT}% offloaded, {RATE_PPS:,} pps paced by --rx-replay "
                        f"(constant gaps), every process in one --governor mode "
                        f"({', '.join(GOVERNORS)}); one {WINDOW_S:g} s window with core "
                        "consolidation off, one with it on once gnbctl run folded the hosts"),
        "cpu_model": cpu_model,
        "settings": {"rate_pps": RATE_PPS, "offload_percent": OFFLOAD_PERCENT,
                     "governors": list(GOVERNORS), "hold_s": HOLD_S, "window_s": WINDOW_S,
                     "placement": {"nic": cpus[0], "host0": cpus[1], "host1": cpus[0]}},
        "governors": governors,
        "model_note": ("power/model.py over the governor's wall-clock busy/paused/asleep "
                       "accounting: overstates processes that share a CPU (host1 and the NIC)"
                       if estimate is not None else "power/model.py not importable"),
    }


def summary(results: dict) -> str:
    parts = []
    for governor, r in results["governors"].items():
        off, on = r["off"], r["on"]
        parts.append(f"{governor}: hosts' CPU {off['hosts_cpu_share']:.2f} -> "
                     f"{on['hosts_cpu_share']:.2f} CPUs (x{r['hosts_cpu_ratio']:.2f}), lost "
                     f"{off['replay_lost']} / {on['replay_lost']}")
    return "; ".join(parts)
