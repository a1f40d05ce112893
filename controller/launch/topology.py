"""Bring-up and tear-down of the whole hybrid topology as one context
manager, and the topology file gnbctl reads (controller/topology.py).

    with HybridTopology(TopologyConfig(n_hosts=2)) as topo:
        topo.gnbctl_topology      # the TOML file for gnbctl --topology
        topo.nic, topo.hosts      # processes: stats(), kill(), restart()
        topo.network.links        # the namespaces: n3, ran, baas
        topo.baas                 # with TopologyConfig(baas=True): the buffering
                                  # service in the baas namespace, on the NIC's
                                  # BaaS PF; gRPC on a UNIX socket ([baas] in the
                                  # topology file)
        topo.power                # with TopologyConfig(power=True): the power
                                  # governor sidecar on every target's control
                                  # socket; gRPC on a UNIX socket ([power])

With `pf_vdevs` the NIC's PFs are those DPDK vdevs instead (the benchmark's
net_pcap replay and net_null sinks) and no namespaces are made.
"""
from __future__ import annotations

import itertools
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from t4p4s.stf.compile_cache import compile_cached
from controller.launch import baas as baas_process
from controller.launch.namespaces import TopologyNetwork
from controller.launch.power import PowerSidecar, PowerSpec
from controller.launch.processes import (AF_PACKET_FRAMES, Target, pf_vdevs,
                                          dpdk_runtime_dir, host_spec, hugepage_files, nic_spec,
                                          topology_eal_prefix)

REPO_ROOT = Path(__file__).resolve().parents[2]
P4SRC = REPO_ROOT / "p4src"
CACHE_ROOT = REPO_ROOT / "build" / "t4p4s-cache"
MEMIF_CONNECT_TIMEOUT_S = 20.0
MEMIF_RING_SLOTS = 1024     # net_memif's default ring (2^10 slots), one each way
BURST = 32
_runs = itertools.count()


class TopologyError(RuntimeError):
    """The topology could not be brought up; the message says why."""


@dataclass
class TopologyConfig:
    n_hosts: int = 2
    nic_lcore: int = 0
    host_lcores: tuple[int, ...] = (1,)     # host i runs on host_lcores[i % len]
    hugepages: bool = False
    # The NIC's PFs (N3, radio, BaaS) as DPDK vdevs; None: net_af_packet on
    # veth pairs into the namespaces of TopologyNetwork.
    pf_vdevs: tuple[str, ...] | None = None
    nic_extra_mbufs: int = 0                # for a net_pcap PF that replays from memory
    nic_options: tuple[str, ...] = ()       # more NIC runtime options (a paced --rx-replay)
    # the buffering service on the far end of the BaaS PF (namespaces only)
    baas: bool = False
    baas_lcore: int = 1
    baas_options: tuple[str, ...] = ("--max-pdus", "32768")
    # every target's (and the BaaS's) --governor, and the power sidecar on
    # their control sockets
    governor: str = "nap"
    power: bool = False
    power_period_ms: int = 100
    run_root: Path = field(default_factory=lambda: REPO_ROOT / "build" / "topology")


def _tag() -> str:
    """Unique among concurrent runs on the machine, short enough for
    interface names ("{tag}-baas" <= 15 characters)."""
    return f"h{os.getpid() % 0xFFFF:x}{next(_runs) % 0xF:x}"


class HybridTopology:
    def __init__(self, config: TopologyConfig | None = None):
        self.config = config or TopologyConfig()
        self.tag = _tag()
        self.run_dir = self.config.run_root / self.tag
        # memif socket paths must fit a UNIX socket address (108 bytes)
        self.socket_dir = Path("/run") / f"t4p4s-{self.tag}"
        # state that outlives a process of the topology (the NIC's registers
        # file): on tmpfs, so an lcore's stores never wait for a disk
        self.state_dir = Path("/dev/shm") / f"t4p4s-{self.tag}"
        self.network: TopologyNetwork | None = None
        self.nic: Target | None = None
        self.hosts: list[Target] = []
        self.baas: baas_process.Baas | None = None
        self.power: PowerSidecar | None = None
        self.nic_build = self.host_build = None

    @property
    def targets(self) -> list[Target]:
        return [t for t in (self.nic, *self.hosts) if t is not None]

    @property
    def gnbctl_topology(self) -> Path:
        return self.run_dir / "topology.toml"

    def __enter__(self) -> "HybridTopology":
        try:
            self._bring_up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _bring_up(self):
        config = self.config
        self.nic_build = compile_cached(P4SRC / "nic.p4", CACHE_ROOT)
        self.host_build = compile_cached(P4SRC / "host.p4", CACHE_ROOT)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        self.run_dir.mkdir(parents=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.state_dir.mkdir(parents=True)
        if config.pf_vdevs is None:
            self.network = TopologyNetwork(self.tag)
            pfs = pf_vdevs(self.network.pf_interfaces())
        else:
            pfs = list(config.pf_vdevs)
        memif_sockets = [self.socket_dir / f"host{i}.sock" for i in range(config.n_hosts)]
        spec = nic_spec(Path(self.nic_build.executable_path), self.run_dir, pfs,
                        memif_sockets, config.nic_lcore, hugepages=config.hugepages,
                        extra_mbufs=config.nic_extra_mbufs,
                        registers_file=self.nic_registers_file)
        spec.governor = config.governor
        spec.options = config.nic_options
        self.nic = Target(spec)
        for i, memif_socket in enumerate(memif_sockets):
            lcore = config.host_lcores[i % len(config.host_lcores)]
            spec = host_spec(Path(self.host_build.executable_path), self.run_dir, i,
                             memif_socket, lcore, device_id=2 + i, hugepages=config.hugepages)
            spec.governor = config.governor
            self.hosts.append(Target(spec))
        for host in self.hosts:
            self.wait_memif_connected(host)
        if config.baas:
            self.start_baas()
        if config.power:
            self.start_power()
        self.gnbctl_topology.write_text(self.gnbctl_toml())

    def start_baas(self):
        """The BaaS up (the bring-up does it with TopologyConfig(baas=True));
        the topology file then names it."""
        if self.baas is None:
            self.baas = baas_process.Baas(self.baas_spec())
        self.gnbctl_topology.write_text(self.gnbctl_toml())

    def start_power(self):
        """The power governor sidecar up on every target's control socket
        (the bring-up does it with TopologyConfig(power=True)); the topology
        file then names it. A restarted target keeps its control socket's
        path, and the sidecar connects again."""
        if self.power is None:
            governed = {t.name: t.runtime.control_path for t in self.targets}
            if self.baas is not None:       # its lcores run the same governor
                governed["baas"] = self.baas.process.control_path
            self.power = PowerSidecar(PowerSpec(
                governed, self.run_dir / "power",
                grpc=f"unix:{self.socket_dir / 'power.grpc'}",
                period_ms=self.config.power_period_ms))
        self.gnbctl_topology.write_text(self.gnbctl_toml())

    def baas_spec(self) -> baas_process.BaasSpec:
        if self.network is None:
            raise TopologyError("the BaaS runs on the far end of the BaaS PF's veth: "
                                "it needs the namespaces (no pf_vdevs)")
        link = self.network.links["baas"]
        return baas_process.BaasSpec(
            baas_process.build(), [f"net_af_packet0,iface={link.pair.test},"
                                   f"framecnt={AF_PACKET_FRAMES}"],
            lcore=self.config.baas_lcore, run_dir=self.run_dir / "baas",
            file_prefix=f"{topology_eal_prefix(self.tag)}baas",
            grpc=f"unix:{self.socket_dir / 'baas.grpc'}", netns=link.netns.name,
            options=["--governor", self.config.governor, *self.config.baas_options])

    @property
    def nic_registers_file(self) -> Path:
        """The NIC's registers (its SNs), kept across its restarts; removed
        at teardown."""
        return self.state_dir / "nic.registers"

    def wait_memif_connected(self, host: Target, timeout: float = MEMIF_CONNECT_TIMEOUT_S):
        """Until both of the host's memif interfaces are connected to the NIC."""
        deadline = time.monotonic() + timeout
        while host.memif_connections() < 2:
            if not host.alive():
                raise TopologyError(f"{host.name} exited:\n{host.runtime.log_tail()}")
            if time.monotonic() > deadline:
                raise TopologyError(f"{host.name}'s memif interfaces did not connect to the NIC "
                                    f"within {timeout:.0f} s:\n{host.runtime.log_tail()}")
            time.sleep(0.05)

    def restart_host(self, index: int) -> float:
        """Stops host `index` (if it runs) and starts it again; returns
        (time.time()) when it was ready: its control socket answers, so its
        P4Runtime server listens. Its memifs have connected too when this
        returns."""
        host = self.hosts[index]
        host.restart()
        ready_at = time.time()
        self.wait_memif_connected(host)
        return ready_at

    def frames_held(self, name: str) -> int:
        """At most how many frames sent before the process was killed die
        with it: those waiting in the rings it reads from or whose shared
        memory it owns, the bursts it works on and, for a host, the NIC's
        N3 ring (frames queued in the NIC before the kill go to the dead
        host's VF until the controller moves its share). A host owns its
        two memif rings (it is the client, which makes the region); the NIC
        has its N3 AF_PACKET ring, and its hosts' rings go down with it."""
        host = 2 * MEMIF_RING_SLOTS + 2 * BURST
        return AF_PACKET_FRAMES + (host if name != self.nic.name
                                   else len(self.hosts) * host + 2 * BURST)

    def target(self, name: str) -> Target:
        return next(t for t in self.targets if t.name == name)

    def leftovers(self) -> list[Path]:
        """What processes of this topology, of any generation, have on the
        machine: EAL runtime directories and hugepage files of their
        prefixes, the memif socket directory, the state directory (the
        NIC's registers file). Nothing once close() returned."""
        prefix = topology_eal_prefix(self.tag)
        found = sorted(dpdk_runtime_dir(prefix).parent.glob(f"{prefix}*"))
        found += hugepage_files(prefix + "*")
        return found + [d for d in (self.socket_dir, self.state_dir) if d.exists()]

    def gnbctl_toml(self) -> str:
        def target(name, role, spec, p4, extra=()):
            lines = ["[[targets]]", f'name = "{name}"', f'role = "{role}"',
                     f'address = "{spec.p4runtime_address}"', f"device_id = {spec.device_id}",
                     f'p4info = "{p4.p4info_text_path}"', *extra]
            return "\n".join(lines) + "\n"
        parts = [target("nic", "nic", self.nic.spec, self.nic_build)]
        parts += [target(host.name, "host", host.spec, self.host_build,
                         ('nic = "nic"', f"vf = {i}")) for i, host in enumerate(self.hosts)]
        if self.baas is not None:
            parts.append(f'[baas]\naddress = "{self.baas.spec.grpc}"\n')
        if self.power is not None:
            parts.append(f'[power]\naddress = "{self.power.address}"\n')
        return "\n".join(parts)

    def close(self):
        if self.power is not None:
            self.power.stop()
            self.power = None
        if self.baas is not None:
            self.baas.stop()
            self.baas = None
        for target in reversed(self.targets):
            target.stop()
        self.hosts.clear()
        self.nic = None
        if self.network is not None:
            self.network.close()
            self.network = None
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        shutil.rmtree(self.state_dir, ignore_errors=True)
