"""The data-plane processes of the hybrid topology and their command lines.

The NIC process (`nic.p4` build): P4 ports 0..2 are the PFs (N3, radio,
BaaS), any DPDK vdevs: net_af_packet on the veth ends in the root namespace
for the functional tests, net_pcap/net_null for the benchmark; then for host i
two net_memif servers: port 3+2i carries offloaded N3 frames to the host
(the host's port 0), port 4+2i brings the host's radio frames back (the
host's port 1). A host process (`host.p4` build) has only those two memif
clients. Every process serves P4Runtime on its own TCP port and a JSON
control socket (statistics), polls on one lcore with the napping governor
(two cores are shared by everything here) and has its own EAL file prefix.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
from dataclasses import dataclass
from pathlib import Path

from t4p4s.stf.control import RuntimeProcess, test_eal_args

PF_PORTS = 3
AF_PACKET_FRAMES = 8192      # per ring: 0.4 s at 20 kpps
HOST_PORTS = 2
# The memif PMD says "Connected." at debug level; EAL applies this pattern
# only when it comes before the "*:warning" of the common arguments.
MEMIF_LOG = "pmd.net.memif:debug"


def nic_vf_ports(host_index: int) -> tuple[int, int]:
    """(to-host port, from-host port) of host i on the NIC."""
    return PF_PORTS + HOST_PORTS * host_index, PF_PORTS + HOST_PORTS * host_index + 1


def free_tcp_port() -> int:
    """A port nobody listens on now; fixed for the topology's life so that a
    restarted host comes back at the address the controller knows."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _memif(vdev_index: int, role: str, socket_path: Path, memif_id: int) -> str:
    return (f"net_memif{vdev_index},role={role},socket={socket_path},socket-abstract=no,"
            f"id={memif_id}")


@dataclass
class TargetSpec:
    """What a process is: everything needed to (re)start it."""
    name: str                 # "nic", "host0", ...
    executable: Path
    vdevs: list[str]
    lcore: int
    p4runtime_port: int
    device_id: int
    run_dir: Path
    hugepages: bool = False
    extra_mbufs: int = 0      # mbufs a vdev keeps for itself (net_pcap's infinite_rx copy)

    @property
    def p4runtime_address(self) -> str:
        return f"127.0.0.1:{self.p4runtime_port}"

    def eal_args(self, generation: int) -> list[str]:
        prefix = f"hy{os.getpid()}-{self.run_dir.parent.name}-{self.name}-{generation}"
        eal = ["--log-level", MEMIF_LOG]
        if self.hugepages:
            eal += ["-l", str(self.lcore), "--in-memory", "--no-pci", "--file-prefix", prefix,
                    "--log-level", "*:warning"]
        else:
            eal += test_eal_args(prefix, lcores=str(self.lcore))
        for vdev in self.vdevs:
            eal += ["--vdev", vdev]
        return eal

    def app_args(self) -> list[str]:
        args = ["--governor", "nap", "--p4runtime", self.p4runtime_address,
                "--device-id", str(self.device_id)]
        if self.extra_mbufs:
            args += ["--mbufs", str(self.extra_mbufs)]
        return args


def af_packet_pf_vdevs(interfaces: list[str]) -> list[str]:
    """The NIC's PFs on these interfaces, P4 port order."""
    # A deep ring: on two shared cores the NIC may wait tens of ms for its lcore.
    return [f"net_af_packet{port},iface={iface},framecnt={AF_PACKET_FRAMES}"
            for port, iface in enumerate(interfaces)]


def nic_spec(executable: Path, run_dir: Path, pf_vdevs: list[str], memif_sockets: list[Path],
             lcore: int, device_id: int = 1, hugepages: bool = False,
             extra_mbufs: int = 0) -> TargetSpec:
    if len(pf_vdevs) != PF_PORTS:
        raise ValueError(f"the NIC has {PF_PORTS} PFs (N3, radio, BaaS), not {len(pf_vdevs)}")
    vdevs = list(pf_vdevs)
    for host, memif_socket in enumerate(memif_sockets):
        for memif_id, port in enumerate(nic_vf_ports(host)):
            vdevs.append(_memif(port, "server", memif_socket, memif_id))
    return TargetSpec("nic", executable, vdevs, lcore, free_tcp_port(), device_id,
                      run_dir / "nic", hugepages, extra_mbufs)


def host_spec(executable: Path, run_dir: Path, host_index: int, memif_socket: Path, lcore: int,
              device_id: int, hugepages: bool = False) -> TargetSpec:
    vdevs = [_memif(port, "client", memif_socket, port) for port in range(HOST_PORTS)]
    return TargetSpec(f"host{host_index}", executable, vdevs, lcore, free_tcp_port(), device_id,
                      run_dir / f"host{host_index}", hugepages)


class Target:
    """A running data-plane process; restart() brings it back with the same
    ports and P4Runtime address (empty tables: the controller refills them)."""

    def __init__(self, spec: TargetSpec):
        self.spec = spec
        self.generation = 0
        self.runtime: RuntimeProcess | None = None
        self.start()

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self):
        self.generation += 1
        if self.spec.run_dir.exists():
            shutil.rmtree(self.spec.run_dir)
        self.runtime = RuntimeProcess(self.spec.executable, self.spec.eal_args(self.generation),
                                      self.spec.app_args(), self.spec.run_dir)

    def alive(self) -> bool:
        return self.runtime is not None and self.runtime.alive()

    def kill(self):
        """Dies as a crash would: SIGKILL, no clean shutdown."""
        os.killpg(self.runtime.process.pid, signal.SIGKILL)
        self.runtime.process.wait()
        self.runtime.stop()

    def restart(self):
        if self.alive():
            self.stop()
        self.start()

    def stop(self):
        if self.runtime is not None:
            self.runtime.stop()

    def stats(self) -> dict:
        return self.runtime.request({"cmd": "stats"})

    def request(self, command: dict) -> dict:
        return self.runtime.request(command)

    def memif_connections(self) -> int:
        """How many of its memif interfaces have connected so far (the
        PMD's log; counts reconnections too)."""
        return len(re.findall(r"memif\w*\(\): Connected\.", self.log_text()))

    def log_text(self) -> str:
        return self.runtime.log_path.read_text(errors="replace")
