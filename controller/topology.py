"""The topology file (TOML): which targets gnbctl controls.

    election_id = 1      # optional: this controller's election id (default 1, >= 1)
    timeout = 5.0        # optional: seconds to reach a target (default 5, a number > 0)

    [[targets]]
    name = "nic0"
    role = "nic"                      # nic | host
    address = "127.0.0.1:9559"        # HOST:PORT of its P4Runtime server (--p4runtime)
    device_id = 1                     # optional, default 1 (the target's --device-id)
    p4info = "build/nic.p4info.txtpb" # or: p4 = "p4src/nic.p4" (compiled, cached)
    baas_clone = true                 # optional: clone session 1 -> BaaS port 2
                                      # (default: true for a NIC, false for a host)
    control = "/run/t4p4s/nic0.sock"  # optional: its JSON control socket (--control),
                                      # for lcore load in `status` and metrics
                                      # (default with lcores: RUN_DIR/NAME.ctl)
    # launch keys, for `gnbctl up` (all optional but lcores; none: up refuses)
    lcores = "2"                      # its EAL -l: "2", "2-3", "2,4" or 2
    ports = ["n3", "radio", "baas"]   # a NIC's (or standalone host's) 3 PFs, P4 port
                                      # order: an interface (net_af_packet on it) or a
                                      # DPDK vdev "net_..." as is; a hybrid host's two
                                      # ports are its VF's memif clients (no ports)
    governor = "busy"                 # its --governor (default busy)
    hugepages = false                 # true: EAL --in-memory on hugepages; false
                                      # (default): --no-huge -m 256
    options = []                      # more runtime options (after the second --)

    [[targets]]
    name = "host0"
    role = "host"
    address = "127.0.0.1:9560"
    p4 = "p4src/host.p4"
    nic = "nic0"                      # a hybrid host behind nic0 ...
    vf = 0                            # ... on NIC ports 3+2*vf (to it), 4+2*vf (back)
    lcores = 3

    [baas]                            # optional: the buffering service (baas/)
    address = "127.0.0.1:9600"        # its gRPC server (baas ... -- --grpc 9600),
                                      # or "unix:PATH" (--grpc unix:PATH)
    name = "baas"                     # optional: how gnbctl names it (default "baas")
    launch = true                     # optional: `gnbctl up` starts it (default false),
    ports = ["baas-svc"]              # with these launch keys, as a target's
    lcores = 1                        # (ports: its one port, the far end of the
    options = ["--max-pdus", "16384"] # NIC's BaaS PF); control too

    [power]                           # optional: the power governor sidecar (power/)
    address = "unix:/run/power.grpc"  # its gRPC server (python -m power --grpc ...),
                                      # or "HOST:PORT"
    name = "power"                    # optional: how gnbctl names it (default "power")
    launch = true                     # optional: `gnbctl up` starts it on every
                                      # target's (and a launched BaaS's) control socket
    period_ms = 1000                  # optional: its --period-ms (launched only)

    [run]                             # optional: where `gnbctl up` keeps pid files,
    dir = "/run/gnbctl/gnb"           # logs, sockets (default /run/gnbctl/STEM, STEM
                                      # the file's name without .toml; not root:
                                      # $XDG_RUNTIME_DIR/gnbctl/STEM or /tmp/gnbctl-UID/STEM)

Without a [baas] table, `gnbctl baas ...` is refused (exit code 2), `drb del`
flushes nothing and `status` shows no BaaS row; without a [power] table,
`gnbctl power ...` is refused the same way and `status` shows no power
columns.

Relative paths are relative to the file's directory. The P4Info is needed
only by `pipeline push` (and `status`, `run` compare or push it); every
other command uses the P4Info the target reports.

`gnbctl up` needs every target's launch keys and its `p4` (the program it
runs, compiled and cached); `gnbctl down` stops what `up` started
(controller/launch/updown.py).

Everything is checked when the file is loaded, so a mistake is one error
naming the file and the key (exit code 2) before any target is contacted:
unknown keys, types, a `p4info` or `p4` file that does not exist, two
targets with one address and device id (each target is its own P4Runtime
server), a host behind a missing NIC or on a VF already taken; launch keys
without `lcores` or `p4`, a NIC without its three `ports`, a run directory
too deep for the UNIX sockets `up` makes in it.
"""
from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from controller.errors import TopologyError

ENV_VAR = "GNBCTL_TOPOLOGY"
ROLES = ("nic", "host")
FIRST_VF_PORT = 3           # ports 0 .. 2 are the PFs: N3, radio, BaaS
# the runtime's --governor names (t4p4s/runtime/src/governor.c, policy_names)
GOVERNORS = ("busy", "nap", "adaptive", "proportional", "pmgmt-pause", "pmgmt-monitor",
             "pmgmt-scale")
DEFAULT_GOVERNOR = "busy"   # the runtime's own default
MAX_SOCKET_PATH = 107       # sun_path: 108 bytes with the terminating NUL


@dataclass(frozen=True)
class Launch:
    """How `gnbctl up` starts a process: a target's or a launched BaaS's
    launch keys."""
    lcores: str                       # EAL -l
    ports: tuple[str, ...] = ()       # interface names or "net_..." vdevs, port order
    governor: str = DEFAULT_GOVERNOR
    hugepages: bool = False
    options: tuple[str, ...] = ()     # more options of the process (after the second --)


@dataclass(frozen=True)
class TargetConfig:
    name: str
    role: str
    address: str
    device_id: int = 1
    p4info: Path | None = None
    p4: Path | None = None
    baas_clone: bool = False
    nic: str | None = None
    vf: int | None = None
    control: Path | None = None
    launch: Launch | None = None      # None: no launch keys, `gnbctl up` cannot start it

    @property
    def vf_port(self) -> int:
        """The NIC port that carries this host's offloaded downlink."""
        return FIRST_VF_PORT + 2 * self.vf

    def p4info_path(self) -> Path:
        if self.p4info is not None:
            if not self.p4info.is_file():
                raise TopologyError(f"{self.name}: no P4Info file {self.p4info}")
            return self.p4info
        if self.p4 is not None:
            return self._compiled_p4info()
        raise TopologyError(f"{self.name}: the topology names neither a p4info nor a p4 "
                            "source, so there is no pipeline to push")

    def _compiled_p4info(self) -> Path:
        """The P4Info of `p4`: the release build's when it is in the cache,
        else compiled that far only (under a second, where building the
        executable takes half a minute); a note on stderr while it runs."""
        import sys

        from t4p4s.diagnostics import CompileError
        from t4p4s.stf.compile_cache import p4info_cached

        def note():
            try:
                shown = self.p4.relative_to(Path.cwd())
            except ValueError:
                shown = self.p4
            print(f"gnbctl: compiling {shown} for its P4Info ...", file=sys.stderr, flush=True)

        try:
            return Path(p4info_cached(self.p4, on_compile=note).p4info_text_path)
        except CompileError as e:
            # the first diagnostic names the file and line; the rest follow from it
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise TopologyError(f"{self.name}: p4 = {self.p4} does not compile: {first}") \
                from None
        except OSError as e:
            raise TopologyError(f"{self.name}: cannot compile {self.p4}: {e.strerror}: "
                                f"{e.filename}") from None

    def read_p4info(self) -> p4info_pb2.P4Info:
        """The P4Info the topology names, parsed (a file that is no P4Info
        is a TopologyError)."""
        path = self.p4info_path()
        try:
            return text_format.Parse(path.read_text(), p4info_pb2.P4Info())
        except (text_format.ParseError, UnicodeDecodeError) as e:
            raise TopologyError(f"{self.name}: {path} is no P4Info (text format): {e}") \
                from None


@dataclass(frozen=True)
class BaasConfig:
    """The [baas] table: the BaaS's gRPC server; with launch = true how
    `gnbctl up` starts it."""
    address: str
    name: str = "baas"
    launch: Launch | None = None
    control: Path | None = None


@dataclass(frozen=True)
class PowerConfig:
    """The [power] table: the power governor sidecar's gRPC server; launch:
    `gnbctl up` starts it."""
    address: str
    name: str = "power"
    launch: bool = False
    period_ms: int | None = None      # its --period-ms; None: its default


@dataclass(frozen=True)
class Topology:
    path: Path
    targets: list[TargetConfig]
    election_id: int = 1
    timeout: float = 5.0
    baas: BaasConfig | None = None
    power: PowerConfig | None = None
    extra: dict = field(default_factory=dict)
    run_dir: Path | None = None       # where `gnbctl up` keeps pid files, logs, sockets

    def memif_socket(self, nic: str, vf: int) -> Path:
        """The memif socket of a NIC's VF (its server, the host's client),
        as `gnbctl up` starts them."""
        return memif_socket(self.run_dir, nic, vf)

    def select(self, names: list[str] | None) -> list[TargetConfig]:
        if not names:
            return list(self.targets)
        known = {t.name: t for t in self.targets}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise TopologyError(f"no target named {', '.join(unknown)} in {self.path} "
                                f"(it has {', '.join(known)})")
        return [known[n] for n in names]

    def nics(self) -> list[TargetConfig]:
        return [t for t in self.targets if t.role == "nic"]

    def hosts_behind(self, nic: str) -> list[TargetConfig]:
        return sorted((t for t in self.targets if t.role == "host" and t.nic == nic),
                      key=lambda t: t.vf)


_LAUNCH_KEYS = {"lcores", "ports", "governor", "hugepages", "options"}
_TARGET_KEYS = {"name", "role", "address", "device_id", "p4info", "p4", "baas_clone",
                "nic", "vf", "control"} | _LAUNCH_KEYS
_TOP_KEYS = {"election_id", "timeout", "targets", "baas", "power", "run"}
_RUN_KEYS = {"dir"}


def default_path() -> Path | None:
    value = os.environ.get(ENV_VAR)
    return Path(value) if value else None


def load(path: Path | None) -> Topology:
    if path is None:
        raise TopologyError(f"no topology: give --topology FILE or set {ENV_VAR}")
    try:
        document = tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise TopologyError(f"cannot read the topology {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TopologyError(f"{path}: not a TOML topology (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as e:
        raise TopologyError(f"{path}: {e}") from None
    base = Path(path).resolve().parent
    _check_table(f"{path}", document, _TOP_KEYS)
    run_dir = _run_dir(path, base, document.get("run"))
    raw_targets = document.get("targets")
    if not isinstance(raw_targets, list) or not raw_targets:
        raise TopologyError(f"{path}: no [[targets]]")
    targets = [_target(path, base, run_dir, i, t) for i, t in enumerate(raw_targets)]
    _check_links(path, targets)
    election_id = _int(path, "election_id", document.get("election_id", 1))
    if election_id == 0:
        # P4Runtime: election id 0 is no election id, which never becomes primary
        raise TopologyError(f"{path}: 'election_id' must be 1 or more (0 never becomes "
                            "primary)")
    topology = Topology(path=Path(path), targets=targets, election_id=election_id,
                        timeout=_timeout(path, document.get("timeout", 5.0)),
                        baas=_baas(path, base, run_dir, document.get("baas"), targets),
                        power=_power(path, base, document.get("power"), targets),
                        run_dir=run_dir)
    _check_socket_paths(topology)
    return topology


def default_run_root() -> Path:
    """Where run directories go by default: /run/gnbctl as root, else the
    user's runtime directory (as DPDK places its own)."""
    if os.geteuid() == 0:
        return Path("/run/gnbctl")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "gnbctl" if runtime else Path(f"/tmp/gnbctl-{os.getuid()}")


def _run_dir(path, base: Path, raw) -> Path:
    """[run] dir, or the default run root / the file's stem."""
    if raw is None:
        return default_run_root() / Path(path).stem
    _check_table(f"{path}: [run]", raw, _RUN_KEYS)
    if "dir" not in raw:
        return default_run_root() / Path(path).stem
    if not isinstance(raw["dir"], str) or not raw["dir"]:
        raise TopologyError(f"{path}: [run] 'dir' must be a directory name (a string)")
    return base / raw["dir"]


def memif_socket(run_dir: Path, nic: str, vf: int) -> Path:
    return run_dir / "memif" / f"{nic}.vf{vf}.sock"


def _check_socket_paths(topology: Topology):
    """The UNIX sockets `gnbctl up` makes in the run directory (memif
    sockets, default control sockets) must fit a socket address."""
    if not any(t.launch for t in topology.targets):
        return
    paths = [topology.memif_socket(t.nic, t.vf) for t in topology.targets if t.nic]
    paths += [t.control for t in topology.targets if t.control]
    if topology.baas is not None and topology.baas.control is not None:
        paths.append(topology.baas.control)
    for socket_path in paths:
        if len(os.fsencode(socket_path.resolve())) > MAX_SOCKET_PATH:
            raise TopologyError(f"{topology.path}: the socket {socket_path} is longer than a "
                                f"UNIX socket address takes ({MAX_SOCKET_PATH} bytes): give a "
                                f"shorter [run] dir (or control) than {topology.run_dir}")


def _timeout(path, value) -> float:
    # TOML gives int or float for a number; bool is an int to Python
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise TopologyError(f"{path}: 'timeout' must be a number of seconds above 0 "
                            f"(like timeout = 5.0), not {value!r}")
    return float(value)


_BAAS_KEYS = {"address", "name", "launch", "control"} | _LAUNCH_KEYS
_POWER_KEYS = {"address", "name", "launch", "period_ms"}


def _check_table(where: str, raw, keys: set[str]):
    """raw is a TOML table with none but these keys."""
    if not isinstance(raw, dict):
        raise TopologyError(f"{where} is not a table")
    unknown = set(raw) - keys
    if unknown:
        raise TopologyError(f"{where}: unknown keys {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(keys))})")


def _service(path, base: Path, raw, targets: list[TargetConfig], table: str, keys: set[str],
             cls):
    """A [baas] or [power] table: a gRPC server's address and a name (the
    caller reads the other keys); launch = true or false. A relative
    unix:PATH is relative to the file's directory, as every path in it."""
    if raw is None:
        return None
    where = f"{path}: [{table}]"
    _check_table(where, raw, keys)
    for key in ("address", "name"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key]):
            raise TopologyError(f"{where}: '{key}' must be a non-empty string")
    if "address" not in raw:
        raise TopologyError(f"{where}: 'address' (a string, \"HOST:PORT\") is required")
    if "launch" in raw and not isinstance(raw["launch"], bool):
        raise TopologyError(f"{where}: 'launch' must be true or false, not {raw['launch']!r}")
    address = raw["address"]
    if address.startswith("unix:") and not Path(address[len("unix:"):]).is_absolute():
        address = f"unix:{base / address[len('unix:'):]}"
    config = cls(address=address, name=raw.get("name", table))
    if config.name in {t.name for t in targets}:
        raise TopologyError(f"{where}: the name {config.name!r} is also a target's")
    return config


def _launched_address(where: str, address: str):
    """A service `gnbctl up` starts listens where its address says, so the
    address must be one it can listen on: HOST:PORT with a port, or unix:PATH."""
    if address.startswith("unix:"):
        if len(address) > len("unix:"):
            return
    else:
        host, colon, port = address.rpartition(":")
        if colon and host and port.isdigit() and 0 < int(port) < 65536:
            return
    raise TopologyError(f"{where}: 'address' must be HOST:PORT or unix:PATH for gnbctl up to "
                        f"start it there, not {address!r}")


def _baas(path, base: Path, run_dir: Path, raw,
          targets: list[TargetConfig]) -> BaasConfig | None:
    config = _service(path, base, raw, targets, "baas", _BAAS_KEYS, BaasConfig)
    if config is None:
        return None
    where = f"{path}: [baas]"
    launched = raw.get("launch", False)
    if launched:
        _launched_address(where, config.address)
    else:
        given = sorted(_LAUNCH_KEYS & set(raw))
        if given:
            raise TopologyError(f"{where}: {', '.join(given)} are for gnbctl up: add "
                                "launch = true (or drop them)")
    return replace(config, launch=_launch(where, raw, needs_ports=1) if launched else None,
                   control=_control(where, base, raw, run_dir,
                                    config.name if launched else None))


def _power(path, base: Path, raw, targets: list[TargetConfig]) -> PowerConfig | None:
    config = _service(path, base, raw, targets, "power", _POWER_KEYS, PowerConfig)
    if config is None:
        return None
    where = f"{path}: [power]"
    launched = raw.get("launch", False)
    if launched:
        _launched_address(where, config.address)
    if "period_ms" not in raw:
        return replace(config, launch=launched)
    if not launched:
        raise TopologyError(f"{where}: 'period_ms' is for gnbctl up: add launch = true "
                            "(or drop it)")
    if _int(where, "period_ms", raw["period_ms"]) == 0:
        raise TopologyError(f"{where}: 'period_ms' must be 1 or more (milliseconds)")
    return replace(config, launch=True, period_ms=raw["period_ms"])


def _string(where: str, key: str, value, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise TopologyError(f"{where}: '{key}' must be {what} (a string)")
    return value


def _control(where: str, base: Path, raw: dict, run_dir: Path, launched_as: str | None):
    """`control`, or for a process `gnbctl up` starts (launched_as its
    name) RUN_DIR/NAME.ctl."""
    if "control" in raw:
        return base / _string(where, "control", raw["control"],
                              "the path of its control socket (its --control)")
    return run_dir / f"{launched_as}.ctl" if launched_as else None


def _launch(where: str, raw: dict, needs_ports: int | None) -> Launch:
    """The launch keys of a target or the BaaS; needs_ports: how many
    `ports` it must have (None: none allowed, a hybrid host's are derived)."""
    if "lcores" not in raw:
        raise TopologyError(f"{where}: launch keys need 'lcores' (its EAL -l, like "
                            "lcores = \"2\")")
    lcores = raw["lcores"]
    if isinstance(lcores, int) and not isinstance(lcores, bool) and lcores >= 0:
        lcores = str(lcores)
    if not isinstance(lcores, str) or not _LCORES.fullmatch(lcores):
        raise TopologyError(f"{where}: 'lcores' must be an EAL core list (like 2, \"2-3\" or "
                            f"\"2,4\"), not {raw['lcores']!r}")
    if needs_ports is None:
        if "ports" in raw:
            raise TopologyError(f"{where}: a hybrid host takes no 'ports': its two are the "
                                "memif clients of its VF on the NIC (nic, vf)")
        ports = ()
    else:
        ports = raw.get("ports")
        if ports is None:
            raise TopologyError(f"{where}: launch keys need 'ports', a list of {needs_ports} "
                                f"interface names or DPDK vdevs (\"net_...\"), P4 port order")
        if (not isinstance(ports, list) or len(ports) != needs_ports
                or not all(isinstance(p, str) and p for p in ports)):
            raise TopologyError(f"{where}: 'ports' must be a list of {needs_ports} interface "
                                f"names or DPDK vdevs (\"net_...\"), P4 port order, not "
                                f"{ports!r}")
        for port in ports:
            if not port.startswith("net_") and not _INTERFACE.fullmatch(port):
                raise TopologyError(f"{where}: 'ports': {port!r} is neither an interface name "
                                    "(1-15 characters, no '/', ':', ',', '=' or spaces) nor a "
                                    "DPDK vdev (\"net_...\")")
    governor = raw.get("governor", DEFAULT_GOVERNOR)
    if governor not in GOVERNORS:
        raise TopologyError(f"{where}: 'governor' must be one of {', '.join(GOVERNORS)}, "
                            f"not {governor!r}")
    if "hugepages" in raw and not isinstance(raw["hugepages"], bool):
        raise TopologyError(f"{where}: 'hugepages' must be true or false, "
                            f"not {raw['hugepages']!r}")
    options = raw.get("options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TopologyError(f"{where}: 'options' must be a list of strings (more options "
                            f"of the process, like [\"--mbufs\", \"65536\"]), not {options!r}")
    return Launch(lcores=lcores, ports=tuple(ports), governor=governor,
                  hugepages=raw.get("hugepages", False), options=tuple(options))


_LCORES = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")
_INTERFACE = re.compile(r"[^/:,=\s]{1,15}")


def _target(path, base: Path, run_dir: Path, index: int, raw: dict) -> TargetConfig:
    where = f"{path}: targets[{index}]"
    _check_table(where, raw, _TARGET_KEYS)
    for key in ("name", "role", "address"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise TopologyError(f"{where}: '{key}' (a string) is required")
    if raw["role"] not in ROLES:
        raise TopologyError(f"{where}: role must be one of {', '.join(ROLES)}, "
                            f"not {raw['role']!r}")
    where = f"{path}: targets[{index}] ({raw['name']})"
    _check_address(where, raw["address"])
    is_nic = raw["role"] == "nic"
    if not is_nic and ("nic" in raw) != ("vf" in raw):
        raise TopologyError(f"{where}: a hybrid host needs both 'nic' and 'vf'")
    if is_nic and ("nic" in raw or "vf" in raw):
        raise TopologyError(f"{where}: 'nic' and 'vf' belong to hosts")
    if "nic" in raw and (not isinstance(raw["nic"], str) or not raw["nic"]):
        raise TopologyError(f"{where}: 'nic' must be a NIC target's name (a string)")
    if "baas_clone" in raw and not isinstance(raw["baas_clone"], bool):
        raise TopologyError(f"{where}: 'baas_clone' must be true or false, "
                            f"not {raw['baas_clone']!r}")
    if "p4info" in raw and "p4" in raw:
        raise TopologyError(f"{where}: give 'p4info' or 'p4', not both")
    if "control" in raw and (not isinstance(raw["control"], str) or not raw["control"]):
        raise TopologyError(f"{where}: 'control' must be the path of the target's control "
                            "socket (a string, its --control)")
    launch = None
    if _LAUNCH_KEYS & set(raw):
        if "p4" not in raw:
            raise TopologyError(f"{where}: launch keys need 'p4' (the program gnbctl up "
                                "runs; a 'p4info' names no program)")
        # hybrid hosts' ports are derived; a NIC and a standalone host have the PFs
        launch = _launch(where, raw, None if "nic" in raw else FIRST_VF_PORT)

    def existing(key) -> Path | None:
        """The file a p4info or p4 key names, which must exist now: found
        missing only at `pipeline push` it would be a late surprise."""
        if key not in raw:
            return None
        if not isinstance(raw[key], str) or not raw[key]:
            raise TopologyError(f"{where}: '{key}' must be a file name (a string)")
        file = (base / raw[key]).resolve()
        if not file.is_file():
            relative = "" if Path(raw[key]).is_absolute() else \
                " (relative paths are relative to the topology's directory)"
            raise TopologyError(f"{where}: {key} = {raw[key]!r}: no such file {file}{relative}")
        return file

    return TargetConfig(
        name=raw["name"], role=raw["role"], address=raw["address"],
        device_id=_int(where, "device_id", raw.get("device_id", 1)),
        p4info=existing("p4info"), p4=existing("p4"),
        baas_clone=raw.get("baas_clone", is_nic),
        nic=raw.get("nic"), vf=_int(where, "vf", raw["vf"]) if "vf" in raw else None,
        # the socket exists only while the target runs: not checked here
        control=_control(where, base, raw, run_dir, raw["name"] if launch else None),
        launch=launch)


def _check_address(where: str, address: str):
    """HOST:PORT, as the target's --p4runtime [ADDR:]PORT listens."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TopologyError(f"{where}: 'address' must be HOST:PORT (its P4Runtime server, "
                            f"the target's --p4runtime), not {address!r}")


def _check_links(path, targets: list[TargetConfig]):
    names = [t.name for t in targets]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise TopologyError(f"{path}: target names must be unique: {', '.join(duplicates)}")
    by_device: dict[tuple[str, int], str] = {}
    for t in targets:
        other = by_device.setdefault((t.address, t.device_id), t.name)
        if other != t.name:
            # both sessions would claim the one device with one election id:
            # the server refuses the second ("election id in use")
            raise TopologyError(f"{path}: {other} and {t.name} both name the P4Runtime "
                                f"server {t.address}, device id {t.device_id}: each target "
                                "process serves its own (give each its --p4runtime port)")
    nics = {t.name for t in targets if t.role == "nic"}
    seen_vfs = set()
    for t in targets:
        if t.nic is None:
            continue
        if t.nic not in nics:
            raise TopologyError(f"{path}: {t.name} is behind {t.nic!r}, which is no NIC "
                                "target of this topology")
        if (t.nic, t.vf) in seen_vfs:
            raise TopologyError(f"{path}: two hosts on VF {t.vf} of {t.nic}")
        seen_vfs.add((t.nic, t.vf))


def _int(where, key, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TopologyError(f"{where}: '{key}' must be a non-negative integer")
    return value
