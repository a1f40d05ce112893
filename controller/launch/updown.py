"""`gnbctl up` and `gnbctl down`: every process a topology file describes,
started detached from gnbctl and stopped again.

`up` starts, in this order, each NIC (its PFs on the `ports` of the
topology, a memif server pair per host behind it), each standalone host,
each hybrid host (the memif clients of its VF), then the BaaS and the power
sidecar if their tables say `launch = true`; it waits until each answers
(a target P4Runtime, a hybrid host also its two memif connections, the
sidecars their gRPC) before the next, and pushes nothing: `pipeline push`
and `drb load` are the user's next steps. The command lines are
processes.py's (TargetSpec, BaasSpec) and power.py's (PowerSpec), the same
the tests' HybridTopology runs.

Everything goes into the run directory ([run] dir):

    NAME.pid        the process's pid, while it runs
    NAME.log        its stdout and stderr (kept after `down`)
    NAME.ctl        a target's (or the BaaS's) control socket, unless the
                    topology names another (`control`)
    NAME.registers  a target's registers file (--registers-file): its SNs
                    outlive a restart by `up`; `down` removes it
    memif/          the NICs' memif sockets, NIC.vfN.sock

Each process runs in its own session (start_new_session): closing the
shell that ran `up` does not stop it. Its environment carries
GNBCTL_PROCESS=RUN_DIR/NAME, so that a pid file whose pid now belongs to
another process is known as stale. `up` on a topology whose processes all
run starts nothing and says so (exit code 1); a pid file whose process is
gone is cleaned (its EAL runtime directory, hugepage files, control socket)
and the process started anew, the others left running. A process that
exits or does not answer while starting stops what this `up` started.

`down` stops them in the reverse order, each group with SIGTERM (a clean
exit), SIGKILL for what still runs after the grace period, and removes
what they leave (processes.py's eal_leftovers: EAL runtime directories and
hugepage files) with the memif socket directory, the control sockets, a
sidecar's UNIX socket and the registers files. With nothing up it says so
and succeeds.
"""
from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from controller import baas as baas_client
from controller import power as power_client
from controller import targets
from controller.errors import GnbctlError, TargetUnreachable, TopologyError
from controller.launch import baas as baas_process
from controller.launch.power import REPO, PowerSpec
from controller.launch.processes import (eal_leftovers, host_spec, memif_connections, nic_spec,
                                         pf_vdevs, remove_paths)
from controller.topology import TargetConfig, Topology
from t4p4s.stf.control import FANOUT_ATTEMPTS, fanout_group_taken

MARKER_ENV = "GNBCTL_PROCESS"
GENERATION = 1              # one process per name and run directory: its EAL prefix's
STARTUP_TIMEOUT_S = 60.0    # to answer once started (a P4Runtime server, a gRPC sidecar)
POLL_S = 0.1
DEFAULT_GRACE_S = 10.0
EXIT_ALREADY_UP = 1


@dataclass
class Process:
    """One process of the topology as `up` starts it and `down` finds it."""
    name: str
    kind: str                        # nic, host, baas, power (or "unknown": a pid file
                                     # the topology no longer names)
    run_dir: Path
    address: str = ""                # where it answers: P4Runtime or gRPC
    control: Path | None = None
    config: object = None            # its TargetConfig, BaasConfig or PowerConfig
    pid: int | None = None           # while it runs
    state: str = ""                  # what up or down did with it
    popen: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.run_dir / f"{self.name}.log"

    @property
    def registers_file(self) -> Path:
        return self.run_dir / f"{self.name}.registers"

    @property
    def marker(self) -> str:
        return str(self.run_dir / self.name)

    @property
    def file_prefix(self) -> str:
        """Its EAL file prefix, without the generation: the run directory's
        digest keeps two topologies' processes of one name apart."""
        digest = hashlib.sha1(str(self.run_dir.resolve()).encode()).hexdigest()[:8]
        return f"gnbctl{digest}-{self.name}"

    @property
    def eal_prefix(self) -> str:
        return f"{self.file_prefix}-{GENERATION}"

    def running(self) -> int | None:
        """The pid its pid file names if that process runs and is this one
        (its environment carries our marker), else None."""
        try:
            pid = int(self.pid_file.read_text().split()[0])
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (OSError, ValueError, IndexError):
            return None
        if stat.rpartition(")")[2].split()[0] in ("Z", "X"):
            return None       # exited, not yet reaped by whoever inherited it
        return pid if f"{MARKER_ENV}={self.marker}".encode() in environ.split(b"\0") else None

    def leftovers(self) -> list[Path]:
        """What it leaves when it is gone: its pid file, EAL runtime
        directory and hugepage files, control socket, a sidecar's UNIX socket."""
        found = [self.pid_file] + eal_leftovers(self.eal_prefix)
        if self.control is not None:
            found.append(self.control)
        if self.address.startswith("unix:"):
            found.append(Path(self.address[len("unix:"):]))
        return [path for path in found if path.exists() or path.is_symlink()]

    def log_line(self) -> str:
        """What its log says went wrong, for a one-line error: the last line
        that names an error (the runtime's `error: ...`; a PMD's debug lines
        may follow it), else the last line."""
        try:
            lines = [line.strip() for line in
                     self.log_file.read_text(errors="replace").splitlines() if line.strip()]
        except OSError:
            return "(no log)"
        errors = [line for line in lines if "error" in line.lower()]
        return (errors or lines or ["(its log is empty)"])[-1]


def processes(topology: Topology) -> list[Process]:
    """The topology's processes in start order: NICs, standalone hosts,
    hybrid hosts, then the BaaS and the power sidecar when launched."""
    run = topology.run_dir
    order = ([t for t in topology.targets if t.role == "nic"]
             + [t for t in topology.targets if t.role == "host" and t.nic is None]
             + [t for t in topology.targets if t.role == "host" and t.nic is not None])
    found = [Process(t.name, t.role, run, t.address, t.control, t) for t in order]
    if topology.baas is not None and topology.baas.launch is not None:
        found.append(Process(topology.baas.name, "baas", run, topology.baas.address,
                             topology.baas.control, topology.baas))
    if topology.power is not None and topology.power.launch:
        found.append(Process(topology.power.name, "power", run, topology.power.address,
                             None, topology.power))
    return found


def _check_launchable(topology: Topology):
    for index, target in enumerate(topology.targets):
        if target.launch is None:
            raise TopologyError(f"{topology.path}: targets[{index}] ({target.name}): no launch "
                                "keys: gnbctl up starts every target, and needs its 'lcores' "
                                "(and a NIC's 'ports'; docs/operations.md, The topology file)")
    for nic in topology.nics():
        vfs = [h.vf for h in topology.hosts_behind(nic.name)]
        if vfs != list(range(len(vfs))):
            raise TopologyError(f"{topology.path}: the hosts behind {nic.name} are on VFs "
                                f"{', '.join(map(str, vfs))}: gnbctl up needs VFs 0 .. "
                                f"{len(vfs) - 1} (the NIC's P4 port N is its N-th vdev, so "
                                "its VF ports follow each other)")


def _note(text: str):
    """A progress line: on stderr, so that --json's stdout stays one document."""
    print(f"gnbctl: {text}", file=sys.stderr, flush=True)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def executable(config: TargetConfig) -> Path:
    """The target's program built (cached in build/t4p4s-cache): a line on
    stderr when it has to be compiled, which takes a minute or two."""
    from t4p4s.diagnostics import CompileError
    from t4p4s.stf.compile_cache import DEFAULT_CACHE_ROOT, MARKER, compile_cached, fingerprint
    cached = DEFAULT_CACHE_ROOT / f"{config.p4.stem}-{fingerprint(config.p4)}" / MARKER
    if not cached.is_file():
        _note(f"compiling {_shown(config.p4)} for {config.name} (once: the executable is cached "
              "in build/t4p4s-cache) ...")
    try:
        return Path(compile_cached(config.p4).executable_path)
    except CompileError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TopologyError(f"{config.name}: p4 = {config.p4} does not compile: {first}") \
            from None


def baas_executable() -> Path:
    built = REPO / "build" / "baas" / "baas"
    if not built.is_file():
        _note("building the BaaS (make -C baas) ...")
    try:
        return baas_process.build()
    except RuntimeError as e:
        errors = [line for line in str(e).splitlines() if "error" in line.lower()]
        raise GnbctlError(f"building the BaaS failed: {(errors or ['?'])[0].strip()} "
                          "(make -C baas shows all)") from None


def command(process: Process, topology: Topology, built: dict) -> tuple[list[str], dict]:
    """Its command line (the builders of processes.py, baas.py, power.py)
    and Popen's cwd/env beyond ours."""
    config = process.config
    if process.kind in ("nic", "host"):
        launch = config.launch
        common = dict(hugepages=launch.hugepages, name=config.name,
                      p4runtime_address=config.address, governor=launch.governor,
                      options=launch.options, file_prefix=process.file_prefix)
        if config.nic is None:
            # a NIC, or a standalone host on PFs of its own
            hosts = topology.hosts_behind(config.name) if config.role == "nic" else []
            spec = nic_spec(built[config.p4], process.run_dir, pf_vdevs(list(launch.ports)),
                            [topology.memif_socket(config.name, h.vf) for h in hosts],
                            launch.lcores, config.device_id,
                            registers_file=process.registers_file, **common)
        else:
            spec = host_spec(built[config.p4], process.run_dir, config.vf,
                             topology.memif_socket(config.nic, config.vf), launch.lcores,
                             config.device_id, **common)
        return spec.argv(GENERATION, config.control), {}
    if process.kind == "baas":
        launch = config.launch
        spec = baas_process.BaasSpec(
            built["baas"], pf_vdevs(list(launch.ports)), launch.lcores,
            process.run_dir / process.name, process.file_prefix, grpc=config.address,
            options=["--governor", launch.governor, *launch.options],
            hugepages=launch.hugepages)
        return spec.argv(GENERATION, config.control), {}
    governed = {t.name: t.control for t in topology.targets}
    if topology.baas is not None and topology.baas.control is not None:
        governed[topology.baas.name] = topology.baas.control     # its lcores govern too
    spec = PowerSpec(governed, process.run_dir, grpc=config.address)
    if config.period_ms is not None:
        spec.period_ms = config.period_ms
    return spec.argv(), {"cwd": REPO, "env": spec.environment()}


@contextmanager
def _locked(run_dir: Path):
    """One `up` or `down` at a time per run directory (the other waits)."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = open(run_dir / ".lock", "w")
    except OSError as e:
        raise GnbctlError(f"cannot use the run directory {run_dir}: {e.strerror} (give "
                          "another in the topology: [run] dir = ...)") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _spawn(process: Process, argv: list[str], popen: dict):
    environment = dict(popen.get("env") or os.environ)
    environment[MARKER_ENV] = process.marker
    for path in (process.control, process.pid_file):
        if path is not None:
            path.unlink(missing_ok=True)
    if process.address.startswith("unix:"):
        Path(process.address[len("unix:"):]).parent.mkdir(parents=True, exist_ok=True)
    with open(process.log_file, "wb") as log:
        process.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         cwd=popen.get("cwd"), env=environment)
    process.pid = process.popen.pid
    process.pid_file.write_text(f"{process.pid}\n")


async def _answers(process: Process) -> bool:
    """Whether it answers now: a target's P4Runtime server (and a hybrid
    host's two memif interfaces), a sidecar's gRPC."""
    if process.kind in ("nic", "host"):
        if not (await targets.probe(process.config, timeout=1.0)).answered:
            return False
        if process.config.nic is not None:
            log = process.log_file.read_text(errors="replace")
            return memif_connections(log) >= 2
        return True
    client_type = baas_client.Baas if process.kind == "baas" else power_client.Power
    try:
        async with client_type(process.address, process.name, timeout=1.0) as client:
            if process.kind == "baas":
                await client.stats()
            else:
                await client.get_consolidation()
        return True
    except TargetUnreachable:
        return False


async def _wait_ready(process: Process, timeout: float = STARTUP_TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while not await _answers(process):
        status = process.popen.poll()
        if status is not None:
            raise GnbctlError(f"{process.name} exited while starting (status {status}): "
                              f"{process.log_line()} (its log: {process.log_file})")
        if time.monotonic() > deadline:
            what = "P4Runtime" if process.kind in ("nic", "host") else "gRPC"
            waited = (" and its memif interfaces to connect to "
                      f"{process.config.nic}" if process.kind == "host"
                      and process.config.nic else "")
            raise TargetUnreachable(f"{process.name} (pid {process.pid}) did not answer "
                                    f"{what} at {process.address}{waited} within "
                                    f"{timeout:.0f} s (its log: {process.log_file})")
        await asyncio.sleep(POLL_S)


async def up(topology: Topology, out) -> dict:
    """Starts what is not running; raises (exit code 1) when all of it runs."""
    _check_launchable(topology)
    wanted = processes(topology)
    with _locked(topology.run_dir):
        for process in wanted:
            process.pid = process.running()
            if process.pid is not None:
                process.state = "already running"
            else:
                stale = process.leftovers()
                remove_paths(stale)
                process.state = "started again (stale pid file cleaned)" \
                    if process.pid_file in stale else "started"
        if all(p.state == "already running" for p in wanted):
            error = GnbctlError(f"{topology.path}: already up: "
                                f"{', '.join(f'{p.name} (pid {p.pid})' for p in wanted)}; "
                                f"nothing started (gnbctl down stops them)")
            error.exit_code = EXIT_ALREADY_UP
            error.result = _result(topology, wanted)
            raise error
        to_start = [p for p in wanted if p.pid is None]
        built = {}
        for process in to_start:
            if process.kind in ("nic", "host") and process.config.p4 not in built:
                built[process.config.p4] = executable(process.config)
            if process.kind == "baas":
                built["baas"] = baas_executable()
        (topology.run_dir / "memif").mkdir(exist_ok=True)
        started = []
        try:
            for process in to_start:
                for attempt in range(1, FANOUT_ATTEMPTS + 1):
                    _spawn(process, *command(process, topology, built))
                    started.append(process)
                    try:
                        await _wait_ready(process)
                        break
                    except GnbctlError:
                        # an af_packet fanout group id another process holds:
                        # a new process has another pid, so another group
                        if (attempt == FANOUT_ATTEMPTS or process.popen.poll() is None
                                or not fanout_group_taken(process.log_file.read_text(
                                    errors="replace"))):
                            raise
                        started.remove(process)
        except BaseException:
            # nothing half up: what this `up` started goes (its logs stay)
            await _stop(list(reversed(started)), DEFAULT_GRACE_S)
            raise
    result = _result(topology, wanted)
    out.table(f"up: {topology.path} (run directory {topology.run_dir})",
              ["name", "what", "pid", "address", "state", "log"],
              [[p["name"], p["kind"], p["pid"], p["address"], p["state"], p["log"]]
               for p in result["processes"]])
    return result


def _result(topology: Topology, found: list[Process]) -> dict:
    return {"topology": str(topology.path), "run_dir": str(topology.run_dir),
            "processes": [{"name": p.name, "kind": p.kind, "pid": p.pid,
                           "address": p.address, "state": p.state, "log": str(p.log_file)}
                          for p in found]}


def _signal(pid: int, signum: int):
    try:
        os.killpg(pid, signum)     # its session's group: what it started goes too
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(pid, signum)


async def _stop_group(group: list[Process], grace: float):
    """SIGTERM to each, SIGKILL to those still there after `grace` s."""
    running = [p for p in group if p.pid is not None and p.running() == p.pid]
    started = time.monotonic()
    for process in running:
        _signal(process.pid, signal.SIGTERM)
        process.state = "stopped"
    killed = False
    while running:
        for process in running:
            if process.popen is not None:
                process.popen.poll()     # our own child (a failed up): reap it
        running = [p for p in running if p.running() == p.pid]
        if not running:
            break
        if not killed and time.monotonic() - started > grace:
            for process in running:
                _signal(process.pid, signal.SIGKILL)
                process.state = f"killed (SIGKILL after {grace:g} s)"
            killed = True
        await asyncio.sleep(0.05)
    for process in group:
        remove_paths(process.leftovers())


async def _stop(found: list[Process], grace: float):
    """In groups, the reverse of the start order: sidecars, hosts, NICs."""
    for kinds in (("power",), ("baas",), ("unknown",), ("host",), ("nic",)):
        await _stop_group([p for p in found if p.kind in kinds], grace)


def _orphans(topology: Topology, known: set[str]) -> list[Process]:
    """Pid files in the run directory of processes the topology no longer
    names (edited since `up`): stopped as well."""
    return [Process(pid_file.stem, "unknown", topology.run_dir,
                    control=topology.run_dir / f"{pid_file.stem}.ctl")
            for pid_file in sorted(topology.run_dir.glob("*.pid"))
            if pid_file.stem not in known]


async def down(topology: Topology, out, grace: float = DEFAULT_GRACE_S) -> dict:
    if not topology.run_dir.is_dir():
        out.note(f"{topology.path}: nothing is up (no run directory {topology.run_dir})")
        return _result(topology, [])
    with _locked(topology.run_dir):
        found = processes(topology)
        found += _orphans(topology, {p.name for p in found})
        for process in found:
            process.pid = process.running()
            stale = process.pid is None and process.pid_file.exists()
            process.state = "stale pid file removed" if stale else \
                "not running" if process.pid is None else ""
        await _stop(found, grace)
        remove_paths([p.registers_file for p in found if p.registers_file.exists()]
                     + [topology.run_dir / "memif"])
    if not any(p.pid for p in found):
        out.note(f"{topology.path}: nothing was running"
                 + ("; stale pid files removed" if any(p.state.startswith("stale")
                                                       for p in found) else ""))
    else:
        out.table(f"down: {topology.path}", ["name", "what", "pid", "state"],
                  [[p.name, p.kind, p.pid, p.state] for p in found if p.pid or p.state])
    return _result(topology, found)
