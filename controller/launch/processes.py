"""The data-plane processes of the hybrid topology and their command lines:
TargetSpec and its builders (nic_spec, host_spec) are the one place a
target's EAL and runtime arguments are made, for the tests' and the demo's
HybridTopology and for `gnbctl up` (updown.py) alike.

The NIC process (`nic.p4` build): P4 ports 0..2 are the PFs (N3, radio,
BaaS), any DPDK vdevs: net_af_packet on the veth ends in the root namespace
for the functional tests, net_pcap/net_null for the benchmark; then for host i
two net_memif servers: port 3+2i carries offloaded N3 frames to the host
(the host's port 0), port 4+2i brings the host's radio frames back (the
host's port 1). A host process (`host.p4` build) has only those two memif
clients. Every process serves P4Runtime on its own TCP port and a JSON
control socket (statistics, the governor's state), polls on one lcore with
the napping governor by default (two cores are shared by everything here;
TopologyConfig.governor picks another) and has its own EAL file prefix.

The NIC keeps its registers (every DRB's PDCP and RLC transmit SNs) in a
registers file (`--registers-file`) that belongs to the topology, not to
one NIC process: a restarted NIC maps it again and numbers on where the
killed one stopped. The topology removes it at teardown.

Target is the supervisor of one process. What a process leaves on the
machine is removed once it is gone, however it ended: its EAL runtime
directory (/var/run/dpdk/PREFIX: DPDK 22.11 never removes it; the runtime
removes it at a clean exit, a process killed with SIGKILL leaves its
telemetry socket in it) and hugepage files of its prefix (none with
--no-huge or --in-memory, which these processes use). A memif server's
socket file is not the supervisor's: the PMD removes it on a clean exit,
and a restarted NIC's runtime removes one nobody listens on before the EAL
probes (t4p4s/runtime/src/ports.c); the topology removes the socket
directory at teardown.
"""
from __future__ import annotations

import glob
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


def dpdk_runtime_dir(prefix: str) -> Path:
    """Where EAL keeps a process's runtime files (eal_common_filesystem.c:
    /var/run for root, else $XDG_RUNTIME_DIR or /tmp)."""
    base = "/var/run" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return Path(base) / "dpdk" / prefix


def topology_eal_prefix(tag: str) -> str:
    """How the EAL file prefix of every process of the topology `tag`
    (run by this test process) begins."""
    return f"hy{os.getpid()}-{tag}-"


def hugetlbfs_mounts() -> list[Path]:
    with open("/proc/mounts") as mounts:
        return [Path(line.split()[1]) for line in mounts if line.split()[2] == "hugetlbfs"]


def hugepage_files(prefix: str) -> list[Path]:
    """Hugepage files EAL made for this prefix (PREFIXmap_N) in any
    hugetlbfs mount; the prefix may end in a glob `*`."""
    return [Path(f) for mount in hugetlbfs_mounts()
            for f in glob.glob(f"{glob.escape(str(mount))}/{prefix}map_*")]


def eal_leftovers(prefix: str) -> list[Path]:
    """What a DPDK process of this EAL file prefix has on the machine: its
    runtime directory and hugepage files. While it runs, what it uses; once
    it is gone, what it leaked (remove_paths)."""
    return [path for path in (dpdk_runtime_dir(prefix),) if path.exists()] \
        + hugepage_files(prefix)


def remove_paths(paths: list[Path]) -> list[Path]:
    """Removes these files and directories (gone already: fine); returns them."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return paths


def eal_memory_args(prefix: str, lcores: str, hugepages: bool) -> list[str]:
    """The EAL options every process here shares: its lcores, its file
    prefix, no PCI scan, quiet logs; hugepages `--in-memory` (a killed
    process leaves no hugepage files), or none (`--no-huge`, enough for
    functional runs)."""
    if hugepages:
        return ["-l", lcores, "--in-memory", "--no-pci", "--file-prefix", prefix,
                "--log-level", "*:warning"]
    return test_eal_args(prefix, lcores=lcores)


def memif_connections(log_text: str) -> int:
    """How many memif interfaces a process's log says have connected (the
    PMD's debug line, which MEMIF_LOG turns on; reconnections count too)."""
    return len(re.findall(r"memif\w*\(\): Connected\.", log_text))


def _memif(vdev_index: int, role: str, socket_path: Path, memif_id: int) -> str:
    return (f"net_memif{vdev_index},role={role},socket={socket_path},socket-abstract=no,"
            f"id={memif_id}")


@dataclass
class TargetSpec:
    """What a process is: everything needed to (re)start it."""
    name: str                 # "nic", "host0", ...
    executable: Path
    vdevs: list[str]
    lcore: int | str          # EAL -l: one lcore, or a list ("2-3", "2,4")
    p4runtime_address: str    # --p4runtime HOST:PORT
    device_id: int
    run_dir: Path
    hugepages: bool = False
    extra_mbufs: int = 0      # mbufs a vdev keeps for itself (net_pcap's infinite_rx copy)
    # --registers-file: the registers outlive the process (a restart keeps
    # them); the file is the topology's, not the process's (not in run_dir,
    # which each start empties)
    registers_file: Path | None = None
    governor: str = "nap"     # --governor: nap lets many processes share two cores
    options: tuple[str, ...] = ()   # more runtime options (a paced --rx-replay source, ...)
    # the EAL file prefix without its generation; None: the test topology's
    # (topology_eal_prefix of the run directory's parent, and the name)
    file_prefix: str | None = None

    def eal_prefix(self, generation: int) -> str:
        if self.file_prefix is not None:
            return f"{self.file_prefix}-{generation}"
        return f"{topology_eal_prefix(self.run_dir.parent.name)}{self.name}-{generation}"

    def eal_args(self, generation: int) -> list[str]:
        eal = ["--log-level", MEMIF_LOG] + eal_memory_args(
            self.eal_prefix(generation), str(self.lcore), self.hugepages)
        for vdev in self.vdevs:
            eal += ["--vdev", vdev]
        return eal

    def app_args(self) -> list[str]:
        args = ["--governor", self.governor, "--p4runtime", self.p4runtime_address,
                "--device-id", str(self.device_id)]
        if self.extra_mbufs:
            args += ["--mbufs", str(self.extra_mbufs)]
        if self.registers_file is not None:
            args += ["--registers-file", str(self.registers_file)]
        return args + list(self.options)

    def argv(self, generation: int, control: Path) -> list[str]:
        """The whole command line, as RuntimeProcess runs it (its control
        socket first among the runtime's options)."""
        return [str(self.executable), *self.eal_args(generation), "--",
                "--control", str(control), *self.app_args()]


VDEV_PREFIX = "net_"


def af_packet_vdev(port: int, interface: str) -> str:
    # A deep ring: on two shared cores the NIC may wait tens of ms for its lcore.
    return f"net_af_packet{port},iface={interface},framecnt={AF_PACKET_FRAMES}"


def pf_vdevs(ports: list[str]) -> list[str]:
    """The PFs, P4 port order: an interface name becomes a net_af_packet
    port on it, a DPDK vdev (`net_...`) is taken as it is."""
    return [port if port.startswith(VDEV_PREFIX) else af_packet_vdev(index, port)
            for index, port in enumerate(ports)]


def local_p4runtime_address() -> str:
    return f"127.0.0.1:{free_tcp_port()}"


def nic_spec(executable: Path, run_dir: Path, pf_vdevs: list[str], memif_sockets: list[Path],
             lcore: int | str, device_id: int = 1, hugepages: bool = False,
             extra_mbufs: int = 0, registers_file: Path | None = None, name: str = "nic",
             p4runtime_address: str | None = None, **more) -> TargetSpec:
    """A NIC: its PFs, then for host i (memif_sockets[i]) the VF pair. Also
    a standalone host (host.p4 on PFs of its own, no memif_sockets).
    `more`: TargetSpec's governor, options, file_prefix."""
    if len(pf_vdevs) != PF_PORTS:
        raise ValueError(f"the NIC has {PF_PORTS} PFs (N3, radio, BaaS), not {len(pf_vdevs)}")
    vdevs = list(pf_vdevs)
    for host, memif_socket in enumerate(memif_sockets):
        for memif_id, port in enumerate(nic_vf_ports(host)):
            vdevs.append(_memif(port, "server", memif_socket, memif_id))
    return TargetSpec(name, executable, vdevs, lcore,
                      p4runtime_address or local_p4runtime_address(), device_id,
                      run_dir / name, hugepages, extra_mbufs, registers_file, **more)


def host_spec(executable: Path, run_dir: Path, host_index: int, memif_socket: Path,
              lcore: int | str, device_id: int, hugepages: bool = False, name: str | None = None,
              p4runtime_address: str | None = None, **more) -> TargetSpec:
    """A hybrid host: the client ends of its VF pair on the NIC's memif
    socket. `more`: TargetSpec's governor, options, file_prefix."""
    name = name or f"host{host_index}"
    vdevs = [_memif(port, "client", memif_socket, port) for port in range(HOST_PORTS)]
    return TargetSpec(name, executable, vdevs, lcore,
                      p4runtime_address or local_p4runtime_address(), device_id,
                      run_dir / name, hugepages, **more)


class Target:
    """A running data-plane process; restart() brings it back with the same
    ports and P4Runtime address (empty tables: the controller refills them;
    registers as its registers file kept them, if it has one)."""

    def __init__(self, spec: TargetSpec):
        self.spec = spec
        self.generation = 0
        self.runtime: RuntimeProcess | None = None
        self.start()

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self):
        if self.runtime is not None and not self.alive():
            self.remove_leftovers()
        self.generation += 1
        if self.spec.run_dir.exists():
            shutil.rmtree(self.spec.run_dir)
        self.runtime = RuntimeProcess(self.spec.executable, self.spec.eal_args(self.generation),
                                      self.spec.app_args(), self.spec.run_dir)

    def alive(self) -> bool:
        return self.runtime is not None and self.runtime.alive()

    def kill(self) -> list[Path]:
        """Dies as a crash would: SIGKILL, no clean shutdown. Returns what
        the process left behind, which is removed (remove_leftovers)."""
        os.killpg(self.runtime.process.pid, signal.SIGKILL)
        self.runtime.process.wait()
        self.runtime.stop()
        return self.remove_leftovers()

    def restart(self):
        self.stop()         # a process already gone: its runtime closed, its leftovers removed
        self.start()

    def stop(self):
        if self.runtime is not None:
            self.runtime.stop()
            self.remove_leftovers()

    def leftovers(self, generation: int | None = None) -> list[Path]:
        """Files and directories the process of `generation` (default: the
        current one) has on the machine: while it runs, what it uses; once
        it is gone, what it leaked."""
        return eal_leftovers(
            self.spec.eal_prefix(self.generation if generation is None else generation))

    def remove_leftovers(self) -> list[Path]:
        """Removes what the current generation's process, which must be
        gone, left on the machine; returns what there was."""
        if self.alive():
            raise RuntimeError(f"{self.name} is running: its files are not leftovers")
        return remove_paths(self.leftovers())

    def stats(self) -> dict:
        return self.runtime.request({"cmd": "stats"})

    def request(self, command: dict) -> dict:
        return self.runtime.request(command)

    def memif_connections(self) -> int:
        """How many of its memif interfaces have connected so far (the
        PMD's log; counts reconnections too)."""
        return memif_connections(self.log_text())

    def log_text(self) -> str:
        return self.runtime.log_path.read_text(errors="replace")
