"""The hybrid section of `make bench`, paper 001 Fig. 9's analog: the
downlink throughput of the whole hybrid topology (the NIC process and host
processes behind memif VFs, controller/launch/) by offload percentage and
number of host processes.

The NIC's N3 PF replays the gNB downlink pcap (65,536 DRBs' 128-byte
GTP-U frames in random order) from memory without end, its radio and BaaS
PFs are net_null. gnbctl pushes the pipelines, loads the 65,536 DRBs and
moves the split live (`offload set P`); one topology per placement of the
processes on lcores serves every percentage. Throughput is what the NIC
transmits on its radio port per second, between two readings of every
process's statistics after a warm-up. The offered load is unbounded, so
this is the saturated rate, not paper 001's no-drop rate: what the system
cannot carry is dropped where it saturates, and the per-process rates and
drops recorded with each point show where that is."""
from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from t4p4s.stf.control import StfError
from testbench.bench.dpdk import BenchError
from testbench.bench.gnb_traffic import FRAME_BYTES, downlink_pcap
from testbench.bench.workloads import N_EXACT_ENTRIES, PCAP_REPLAY_MBUFS, gnb_downlink_vdevs
from testbench.topology.gnbctl import Gnbctl, GnbctlError
from controller.launch.namespaces import PF_ROLES
from controller.launch.processes import Target, nic_vf_ports
from controller.launch.topology import HybridTopology, TopologyConfig, TopologyError

DRBS = N_EXACT_ENTRIES
OFFLOAD_PERCENTS = (0, 25, 50, 75, 100)
HOST_COUNTS = (1, 2)
WARMUP_S = 1.0       # after `offload set`: the move itself and the rings filling up
WINDOW_S = 3.0
N3_ROLE, RADIO_ROLE = PF_ROLES[0], PF_ROLES[1]
HOST_PORT_ROLES = ("from_nic", "to_nic")     # host.p4's N3 side and radio side

# Paper 001, Sec. V-C and Fig. 9 (Agilio CX 2x40G + Xeon Silver 4114, DPDK):
# the end points of its curves.
PAPER_001_FIG9 = {
    "smartnic_alone_mpps": 14.0,
    "offload_100_percent_8_cores_mpps": 19.5,
    "note": "paper 001 Fig. 9: 14 Mpps with all gNB processing on the SmartNIC (Fig. 7 step 3), "
            "19.5 Mpps with 100% offloaded to 8 x86 cores (Fig. 8 step 4); no-drop rates "
            "measured by TRex at 40 Gbit/s",
}


@dataclass(frozen=True)
class Placement:
    """The lcore each process polls on."""
    nic_lcore: int
    host_lcores: tuple[int, ...]

    @property
    def lcores(self) -> dict[str, int]:
        return {"nic": self.nic_lcore, **{f"host{i}": lcore for i, lcore in enumerate(self.host_lcores)}}

    @property
    def shared_lcores(self) -> dict[int, list[str]]:
        """lcore -> the processes that take turns on it, where more than one does."""
        users: dict[int, list[str]] = {}
        for name, lcore in self.lcores.items():
            users.setdefault(lcore, []).append(name)
        return {lcore: names for lcore, names in users.items() if len(names) > 1}

    @property
    def label(self) -> str:
        hosts = len(self.host_lcores)
        text = f"{hosts} host{'s' if hosts > 1 else ''} on lcore{'s' if hosts > 1 else ''} " \
               f"{', '.join(map(str, self.host_lcores))}, NIC on {self.nic_lcore}"
        shared = ["+".join(names) for names in self.shared_lcores.values()]
        return text + (f" (shared: {'; '.join(shared)})" if shared else "")


def placements(cpus: list[int]) -> list[Placement]:
    """The NIC on the first CPU, the hosts on the others in turn. Where
    there are fewer others than hosts, the hosts share them, and the other
    way of doubling up is measured too: hosts spread over every CPU, the
    NIC's included (on 2 cores: hosts on 1 and 1, and on 1 and 0)."""
    if len(cpus) < 2:
        raise BenchError(f"the hybrid topology needs 2 CPUs (NIC and hosts apart); this process "
                         f"may run on {cpus}")
    nic, others = cpus[0], cpus[1:]
    result = [Placement(nic, tuple(others[i % len(others)] for i in range(n))) for n in HOST_COUNTS]
    if len(others) < max(HOST_COUNTS):
        everywhere = others + [nic]
        result.append(Placement(nic, tuple(everywhere[i % len(everywhere)]
                                           for i in range(max(HOST_COUNTS)))))
    return result


@dataclass(frozen=True)
class Reading:
    at: float                    # time.monotonic(), middle of the readings
    stats: dict[str, dict]       # process name -> its `stats` reply


def _read(targets: list[Target]) -> Reading:
    started = time.monotonic()
    stats = {target.name: target.stats() for target in targets}
    return Reading((started + time.monotonic()) / 2, stats)


def _port_roles(name: str, n_hosts: int) -> dict[int, str]:
    if name != "nic":
        return dict(enumerate(HOST_PORT_ROLES))
    roles = dict(enumerate(PF_ROLES))
    for host in range(n_hosts):
        to_host, from_host = nic_vf_ports(host)
        roles[to_host], roles[from_host] = f"to_host{host}", f"from_host{host}"
    return roles


def _empty_poll_shares(before: dict, after: dict) -> dict[int, float | None]:
    """Port -> the share of its rx polls that found nothing. Near 0: the
    process never catches up with that port. An empty poll costs far less
    than a full burst, so a high share does not mean as much idle time."""
    def totals(stats):
        polls: dict[int, list[int]] = {}
        for lcore in stats["lcores"]:
            for queue in lcore["queues"]:
                total = polls.setdefault(queue["port"], [0, 0])
                total[0] += queue["polls"]
                total[1] += queue["empty_polls"]
        return polls
    old, new = totals(before), totals(after)
    shares = {}
    for port, (polls, empty) in new.items():
        polled = polls - old[port][0]
        shares[port] = round((empty - old[port][1]) / polled, 3) if polled else None
    return shares


def _process_rates(before: dict, after: dict, seconds: float, roles: dict[int, str]) -> dict:
    """Per-port packet rates, rx idleness and per-reason drop rates of one process."""
    def rate(new, old):
        return round((new - old) / seconds)
    idle = _empty_poll_shares(before, after)
    ports = {roles[new["port"]]: {**{key: rate(new[key], old[key])
                                     for key in ("rx", "tx", "tx_dropped", "rx_dropped")},
                                  "empty_poll_share": idle.get(new["port"])}
             for old, new in zip(before["ports"], after["ports"])}
    drops = {reason: rate(after["drops"][reason], before["drops"][reason])
             for reason in after["drops"]}
    return {"ports_pps": ports, "drops_pps": {k: v for k, v in drops.items() if v}}


def _mpps(pps: float) -> float:
    return round(pps / 1e6, 3)


def _point(percent: float, before: Reading, after: Reading, placement: Placement) -> dict:
    seconds = after.at - before.at
    n_hosts = len(placement.host_lcores)
    processes = {name: {"lcore": placement.lcores[name],
                        **_process_rates(before.stats[name], after.stats[name], seconds,
                                         _port_roles(name, n_hosts))}
                 for name in after.stats}
    nic = processes["nic"]["ports_pps"]
    to_hosts = [nic[f"to_host{h}"] for h in range(n_hosts)]
    n3 = nic[N3_ROLE]["rx"]
    offloaded = sum(p["tx"] + p["tx_dropped"] for p in to_hosts)
    return {
        "offload_percent": percent,
        "radio_mpps": _mpps(nic[RADIO_ROLE]["tx"]),
        "n3_taken_mpps": _mpps(n3),
        "to_hosts_mpps": _mpps(sum(p["tx"] for p in to_hosts)),
        "to_hosts_dropped_mpps": _mpps(sum(p["tx_dropped"] for p in to_hosts)),
        "host_built_mpps": _mpps(sum(nic[f"from_host{h}"]["rx"] for h in range(n_hosts))),
        "offloaded_share": round(offloaded / n3, 3) if n3 else None,
        "window_s": round(seconds, 3),
        "processes": processes,
    }


def sweep(placement: Placement, pcap: Path, run_root: Path, percents=OFFLOAD_PERCENTS,
          warmup_s: float = WARMUP_S, window_s: float = WINDOW_S) -> dict:
    """One topology with this placement, every offload percentage in turn."""
    config = TopologyConfig(n_hosts=len(placement.host_lcores), nic_lcore=placement.nic_lcore,
                            host_lcores=placement.host_lcores, hugepages=True,
                            pf_vdevs=gnb_downlink_vdevs(pcap), nic_extra_mbufs=PCAP_REPLAY_MBUFS,
                            run_root=run_root)
    started = time.monotonic()
    with HybridTopology(config) as topology:
        up_s = time.monotonic() - started
        gnbctl = Gnbctl(topology.gnbctl_topology)
        gnbctl("pipeline", "push")
        loaded = gnbctl("drb", "load", "--count", str(DRBS))
        points = []
        for percent in percents:
            gnbctl("offload", "set", str(percent))
            time.sleep(warmup_s)
            before = _read(topology.targets)
            time.sleep(window_s)
            after = _read(topology.targets)
            for target in topology.targets:
                if not target.alive():
                    raise BenchError(f"{target.name} exited during the sweep:\n"
                                     f"{target.runtime.log_tail()}")
            points.append(_point(percent, before, after, placement))
        commands = {target.name: shlex.join(target.runtime.argv) for target in topology.targets}
    return {
        "label": placement.label,
        "hosts": len(placement.host_lcores),
        "lcores": placement.lcores,
        "shared_lcores": {str(lcore): names for lcore, names in placement.shared_lcores.items()},
        "bring_up_s": up_s,
        "drb_load_s": loaded["seconds"],          # gnbctl's own time for the whole command
        "sweep_s": time.monotonic() - started,
        "points": points,
        "commands": commands,
    }


def _loadavg() -> list[float]:
    return [float(value) for value in Path("/proc/loadavg").read_text().split()[:3]]


def measure(build_dir: Path) -> dict:
    started = time.monotonic()
    build_dir = build_dir.resolve()
    cpus = sorted(os.sched_getaffinity(0))
    pcap = downlink_pcap(build_dir / "traffic", DRBS)
    loadavg_before = _loadavg()
    try:
        configurations = [sweep(placement, pcap, build_dir / "hybrid")
                          for placement in placements(cpus)]
    except (TopologyError, GnbctlError, StfError, OSError) as e:
        raise BenchError(f"hybrid topology: {e}") from e
    return {
        "description": (
            f"paper 001 Fig. 9's analog: the hybrid gNB downlink (NIC process with nic.p4, "
            f"host processes with host.p4 behind net_memif VFs), {DRBS} DRBs loaded by gnbctl, "
            f"{FRAME_BYTES}-byte GTP-U frames of every DRB in random order replayed without end "
            f"by net_pcap on the NIC's N3 PF, radio and BaaS PFs net_null; `gnbctl offload set P` "
            f"live for each P. The machine has {len(cpus)} CPUs ({cpus}): the NIC polls on one, "
            f"the hosts on the others; where hosts outnumber them, two processes take turns on "
            f"one core (shared_lcores): a second host then adds no CPU, only a second memif "
            f"pair, or takes CPU from the NIC."),
        "throughput_definition": (
            "frames the NIC transmits on its radio port per second over the window (the BaaS "
            "port carries an equal number of AM copies, not counted); the offered load is "
            "unbounded, so this is the saturated rate: frames the hosts cannot take are "
            "dropped on the NIC's VF ports (to_hosts_dropped_mpps, the NIC's tx_full drops). "
            "A host's clone_no_session count is by design (no copy is made): the NIC makes the "
            "AM copies of host-built frames, hosts have no clone session"),
        "offload_percents": list(OFFLOAD_PERCENTS),
        "warmup_s": WARMUP_S,
        "window_s": WINDOW_S,
        "hugepages": True,
        "governor": "nap (a process sleeps 100 us only after 1,024 empty rounds in a row)",
        "loadavg_before": loadavg_before,
        "loadavg_after": _loadavg(),
        "paper_001_fig9": PAPER_001_FIG9,
        "configurations": configurations,
        "seconds": time.monotonic() - started,
    }
