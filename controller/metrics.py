"""`gnbctl metrics`: a Prometheus exporter (prometheus_client) of every
target's counters, the NICs' offload split, with the target's control
socket (topology key `control`) its ports, the runtime's own drops and its
lcores' load, and the BaaS's and the power sidecar's figures when the
topology has them, labelled by target.

How a scrape is answered: gnbctl's event loop reads everything every
--interval seconds (a refresh) and keeps the last snapshot; the exporter's
HTTP thread (prometheus_client's server) answers a scrape from that
snapshot and never waits for a target. Reading per scrape instead would
make a scrape last as long as the slowest target (an unreachable one: the
whole timeout, past a scraper's own deadline), would read every counter
array of every target once per scraper (two Prometheus servers: twice),
and those reads run on the target's P4Runtime threads, which share the
polling core with the data plane. So a value is at most --interval (plus
one refresh) old; `gnbctl_refresh_timestamp_seconds` says when it was
read.

Every read is a plain P4Runtime Read or GetForwardingPipelineConfig on a
channel of its own, without arbitration: the exporter never claims
primary, so it runs beside `gnbctl run`, `offload set` and any other
command. A target that does not answer, or whose read fails, is
`gnbctl_target_up{target=...} 0` in that refresh (its other series are
left out), never a failed scrape; a line on stderr says when a target
goes down and when it comes back.

docs/operations.md, "Prometheus metrics", lists every family."""
from __future__ import annotations

import asyncio
import errno
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from controller import baas, control_socket, counters, lcore_load, offload, power, targets
from controller.errors import GnbctlError
from controller.topology import TargetConfig, Topology

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

DEFAULT_INTERVAL_S = 5.0


# ---- --listen ----------------------------------------------------------------

@dataclass(frozen=True)
class Listen:
    """Where the exporter listens: --listen ADDR:PORT ([V6ADDR]:PORT;
    :PORT for every IPv4 address; port 0: any free port, announced)."""
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "Listen":
        """ValueError says what is wrong with the form."""
        host, colon, port = text.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        elif ":" in host:
            raise ValueError(f"{text!r}: write an IPv6 address in brackets, "
                             f"like [::1]:9464")
        if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"{text!r} is not ADDR:PORT (like 127.0.0.1:9464, "
                             f"[::1]:9464 or :9464; port 0..65535)")
        return cls(host or "0.0.0.0", int(port))

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}/metrics"


def _serve_http(listen: Listen, registry: CollectorRegistry):
    """prometheus_client's HTTP server on `listen`, in a thread of its
    own; an address it cannot listen on is one line (exit code 1)."""
    try:
        from prometheus_client import start_wsgi_server
        server, _thread = start_wsgi_server(listen.port, listen.host, registry)
    except OSError as e:
        why = e.strerror or str(e)
        hint = {"EADDRINUSE": ": another process listens there; give another port",
                "EADDRNOTAVAIL": ": not an address of this machine",
                "EACCES": ": ports below 1024 need privileges"}.get(
                    _errno_name(e), "")
        raise GnbctlError(f"metrics: cannot listen on {listen.host}:{listen.port}: "
                          f"{why}{hint}") from None
    return server


def _errno_name(e: OSError) -> str:
    if isinstance(e, socket.gaierror):
        return "EAI"
    return errno.errorcode.get(e.errno or 0, "")


# ---- reading the targets -------------------------------------------------------

@dataclass
class ControlReading:
    """A target's control socket in one refresh (the topology names one)."""
    up: bool
    error: str | None = None
    stats: dict | None = None           # the runtime's `stats`: ports, drops, parser errors
    load: dict | None = None            # lcore_load.read()


@dataclass
class TargetReading:
    """One target in one refresh: `up` when every P4Runtime read succeeded;
    `control` None when the topology gives it no control socket."""
    config: TargetConfig
    up: bool
    seconds: float
    error: str | None = None
    counters: dict | None = None        # counters.read()
    offload: dict | None = None         # offload.show() (NICs with the tables)
    control: ControlReading | None = None


@dataclass
class SidecarReading:
    name: str
    up: bool
    error: str | None = None
    stats: dict | None = None           # BaaS: GetStats
    telemetry: dict | None = None       # power: GetTelemetry
    readings: dict | None = None        # power: ReadPower


@dataclass
class Snapshot:
    time: float
    seconds: float
    targets: list[TargetReading]
    baas: SidecarReading | None = None
    power: SidecarReading | None = None


async def read_target(topology: Topology, config: TargetConfig,
                      per_drb: bool) -> TargetReading:
    """Everything the exporter shows of one target, read as `gnbctl
    counters` reads (targets.reading: the P4Info the target reports, no
    arbitration). Its P4Info must come within the topology's timeout (else
    it is down); the reads then have targets.RPC_TIMEOUT: a target whose
    P4Runtime threads share a busy core reads its 65,536-cell counter
    arrays slowly, and is slow, not down."""
    started = time.monotonic()
    control = asyncio.ensure_future(read_control(config))
    try:
        async with targets.reading(topology, [config]) as (reader,):
            reading = TargetReading(config, True, 0.0)
            # with --per-drb every DRB that counted something (as --nonzero):
            # a zero series for each of 65,536 DRBs would be most of a scrape
            reading.counters = await counters.read(reader, None, nonzero=per_drb)
            if config.role == "nic" and reader.has_table("offload_bucket"):
                reading.offload = await offload.show(reader,
                                                     topology.hosts_behind(config.name))
    except GnbctlError as e:
        reading = TargetReading(config, False, 0.0, error=str(e))
    # the control socket is a source of its own: it may answer when
    # P4Runtime does not, and the other way round
    reading.control = await control
    reading.seconds = time.monotonic() - started
    return reading


async def read_control(config: TargetConfig) -> ControlReading | None:
    """The runtime's `stats` and its lcores' load (controller/lcore_load.py,
    counters since start) from the target's control socket."""
    if config.control is None:
        return None
    try:
        stats, load = await asyncio.gather(control_socket.request(config, {"cmd": "stats"}),
                                           lcore_load.read(config))
    except GnbctlError as e:
        return ControlReading(False, error=str(e))
    return ControlReading(True, stats=stats, load=load)


async def read_baas(topology: Topology) -> SidecarReading:
    name = topology.baas.name
    try:
        async with baas.connect(topology) as client:
            return SidecarReading(name, True, stats=await client.stats())
    except GnbctlError as e:
        return SidecarReading(name, False, error=str(e))


async def read_power(topology: Topology) -> SidecarReading:
    name = topology.power.name
    try:
        async with power.connect(topology) as client:
            return SidecarReading(name, True, telemetry=await client.telemetry(),
                                  readings=await client.read_power())
    except GnbctlError as e:
        return SidecarReading(name, False, error=str(e))


async def refresh(topology: Topology, configs: list[TargetConfig], per_drb: bool) -> Snapshot:
    """Every target, the BaaS and the power sidecar, concurrently."""
    started = time.monotonic()
    reads = [read_target(topology, c, per_drb) for c in configs]
    with_baas, with_power = topology.baas is not None, topology.power is not None
    if with_baas:
        reads.append(read_baas(topology))
    if with_power:
        reads.append(read_power(topology))
    done = await asyncio.gather(*reads)
    power_reading = done.pop() if with_power else None
    baas_reading = done.pop() if with_baas else None
    return Snapshot(time.time(), time.monotonic() - started, done, baas_reading,
                    power_reading)


# ---- the families ----------------------------------------------------------------

@dataclass
class _Families:
    """The families of one scrape, made on first use, yielded in that order."""
    made: dict[str, object] = field(default_factory=dict)

    def _family(self, kind, name: str, doc: str, labels: tuple[str, ...]):
        family = self.made.get(name)
        if family is None:
            family = self.made[name] = kind(name, doc, labels=labels)
        return family

    # prometheus_client is imported by the first family, not with this
    # module: every gnbctl command imports the CLI, which imports this one
    def counter(self, name: str, doc: str, labels: dict, value: float):
        from prometheus_client.core import CounterMetricFamily
        self._family(CounterMetricFamily, name, doc, tuple(labels)).add_metric(
            [str(v) for v in labels.values()], value)

    def gauge(self, name: str, doc: str, labels: dict, value: float):
        from prometheus_client.core import GaugeMetricFamily
        self._family(GaugeMetricFamily, name, doc, tuple(labels)).add_metric(
            [str(v) for v in labels.values()], value)


def _target_families(f: _Families, r: TargetReading):
    t = {"target": r.config.name}
    f.gauge("gnbctl_target_up", "1 when the target's P4Runtime server answered and its "
            "counters were read in the last refresh, else 0", {**t, "role": r.config.role},
            1 if r.up else 0)
    f.gauge("gnbctl_target_read_duration_seconds", "how long the last refresh read the "
            "target", t, r.seconds)
    if r.control is not None:
        _control_families(f, r.config, r.control)
    if not r.up:
        return
    c = r.counters
    drops = {reason: {"packets": 0, "bytes": 0} for reason in counters.DROP_REASONS.values()}
    drops.update(c["drops"])
    for reason, cell in drops.items():
        labels = {**t, "reason": reason}
        f.counter("gnb_pipeline_drops_total", "packets the P4 pipeline dropped, by reason "
                  "(drop_counter; p4src/gnb/constants.p4 DROP_*)", labels, cell["packets"])
        f.counter("gnb_pipeline_dropped_bytes_total", "bytes of the packets the P4 pipeline "
                  "dropped, by reason", labels, cell["bytes"])
    for name, value in c.items():
        if not isinstance(value, dict) or name == "drops":
            continue
        labels = {**t, "counter": name}
        # a per-DRB counter array ({"total", "drbs_counted"[, "per_drb"]}) or a
        # single cell ({"packets", "bytes"}: ul_status_pdus)
        total = value.get("total", value)
        f.counter("gnb_packets_total", "packets a P4 counter counted, summed over its cells "
                  "(counter: downlink, uplink, ul_status_pdus, baas_retransmissions, as in "
                  "gnbctl counters)", labels, total["packets"])
        f.counter("gnb_bytes_total", "bytes a P4 counter counted, summed over its cells",
                  labels, total["bytes"])
        if "drbs_counted" in value:
            f.gauge("gnb_drbs_counted", "DRBs whose cell of the counter is not zero", labels,
                    value["drbs_counted"])
        for drb, cell in value.get("per_drb", {}).items():
            drb_labels = {**labels, "drb": drb}
            f.counter("gnb_drb_packets_total", "packets of one DRB (--per-drb: every DRB "
                      "that counted something)", drb_labels, cell["packets"])
            f.counter("gnb_drb_bytes_total", "bytes of one DRB (--per-drb)", drb_labels,
                      cell["bytes"])
    if r.offload is not None:
        o = r.offload
        f.gauge("gnb_offload_buckets", f"offload buckets (of {offload.OFFLOAD_BUCKETS}) whose "
                "downlink the NIC hands to its hosts", t, o["buckets"])
        f.gauge("gnb_offload_ratio", "the share of the NIC's downlink DRBs offloaded to its "
                "hosts (buckets / 1024; gnbctl offload show's percent / 100)", t,
                o["buckets"] / offload.OFFLOAD_BUCKETS)
        if o["mode"] is not None:
            f.gauge("gnb_offload_mode", "1 for the NIC's offload mode (ratio: by bucket, "
                    "marker: by IPv4 Identification)", {**t, "mode": o["mode"]}, 1)
        if o["markers"] is not None:
            f.gauge("gnb_offload_markers", "IPv4 Identifications marker mode offloads", t,
                    len(o["markers"]))
        for host, share in o["hosts"].items():
            labels = {**t, "host": host}
            f.gauge("gnb_offload_host_vf_buckets", f"VF buckets (of {offload.VF_BUCKETS}) "
                    "that send the NIC's offloaded downlink to this host", labels,
                    share["vf_buckets"])
            f.gauge("gnb_offload_host_ratio", "the share of the NIC's downlink DRBs this "
                    "host serves (gnbctl offload show's host percent / 100)", labels,
                    share["percent"] / 100)


def _control_families(f: _Families, config: TargetConfig, c: ControlReading):
    t = {"target": config.name}
    f.gauge("gnbctl_target_control_up", "1 when the target's control socket (topology key "
            "control) answered in the last refresh", t, 1 if c.up else 0)
    if not c.up:
        return
    for port in c.stats["ports"]:
        labels = {**t, "port": port["port"]}
        for key, name, doc in (
                ("rx", "gnb_port_received_packets_total",
                 "packets received on the port and handed to the pipeline"),
                ("tx", "gnb_port_transmitted_packets_total", "packets the port sent"),
                ("rx_dropped", "gnb_port_rx_dropped_packets_total",
                 "packets the port lost before the pipeline (missed, errors, no mbuf)"),
                ("tx_dropped", "gnb_port_tx_dropped_packets_total",
                 "packets the pipeline sent to the port that it did not send (tx ring full, "
                 "errors)")):
            f.counter(name, doc, labels, port[key])
    # as `gnbctl counters` splits them, zeros kept (a series exists from
    # the start): on a target without a BaaS clone session,
    # clone_no_session is by design, not a drop
    drops, expected = counters.split_runtime_drops(config, c.stats["drops"])
    for reason, n in drops.items():
        f.counter("gnb_runtime_drops_total", "packets the runtime dropped, by reason "
                  "(not the P4 program's: gnb_pipeline_drops_total)",
                  {**t, "reason": reason}, n)
    for reason, (n, _why) in expected.items():
        f.counter("gnb_runtime_expected_drops_total", "what the runtime counts as a drop "
                  "but this target does by design (clone_no_session without a BaaS "
                  "clone session: the frame is forwarded, no copy made); not a drop",
                  {**t, "reason": reason}, n)
    for error, n in sorted(c.stats["parser_errors"].items()):
        f.counter("gnb_parser_errors_total", "packets whose parsing ended in this P4 error",
                  {**t, "error": error}, n)
    for lc in c.load["lcores"]:
        labels = {**t, "lcore": lc["lcore"]}
        f.counter("gnb_lcore_polls_total", "rx polls (one per rx queue and round)", labels,
                  lc["polls"])
        f.counter("gnb_lcore_empty_polls_total", "rx polls that received nothing", labels,
                  lc["empty_polls"])
        f.counter("gnb_lcore_packets_total", "packets the lcore received", labels,
                  lc["packets"])
        f.counter("gnb_lcore_work_seconds_total", "time in rounds that received packets",
                  labels, lc["work_ns"] / 1e9)
        f.counter("gnb_lcore_seconds_total", "the lcore's time: working, polling empty, "
                  "paused and asleep", labels, lc["total_ns"] / 1e9)
        if lc["busy_share"] is not None:
            f.gauge("gnb_lcore_busy_ratio", "work over all of the lcore's time since it "
                    "started (over a window: rate(gnb_lcore_work_seconds_total) / "
                    "rate(gnb_lcore_seconds_total))", labels, lc["busy_share"])


# BaaS Counters fields (baas/proto/baas.proto) -> (family, help); a field not
# named here is exported as gnb_baas_<field>_total
_BAAS_COUNTERS = {
    "pdus_received": ("gnb_baas_received_pdus_total", "RLC AMD PDU copies buffered"),
    "bytes_received": ("gnb_baas_received_bytes_total", "frame bytes of the buffered copies"),
    "status_received": ("gnb_baas_status_pdus_total", "RLC STATUS PDUs applied"),
    "acked": ("gnb_baas_acked_pdus_total", "PDUs released by an ACK_SN"),
    "nacked": ("gnb_baas_nacked_sns_total", "NACKed SNs acted upon"),
    "retransmitted": ("gnb_baas_retransmissions_total",
                      "frames sent again (NACK or t-PollRetransmit)"),
    "poll_timeouts": ("gnb_baas_poll_timeouts_total", "t-PollRetransmit expiries"),
    "rlf": ("gnb_baas_rlf_events_total", "radio link failures (maxRetxThreshold reached)"),
    "nack_not_held": ("gnb_baas_nack_not_held_total", "NACKed SNs the BaaS did not hold"),
}
_BAAS_RELEASED = {"released_rlf": "rlf", "released_bound": "bound",
                  "released_flush": "flush"}
_BAAS_GAUGES = {"n_drbs": ("gnb_baas_drbs", "DRBs the BaaS holds state of"),
                "held": ("gnb_baas_held_pdus", "PDUs buffered, all DRBs"),
                "held_bytes": ("gnb_baas_held_bytes", "bytes buffered, all DRBs"),
                "pool_size": ("gnb_baas_pool_mbufs", "the BaaS's mbuf pool"),
                "pool_in_use": ("gnb_baas_pool_mbufs_in_use", "mbufs of the pool in use"),
                "n_lcores": ("gnb_baas_lcores", "the BaaS's lcores")}


def _baas_families(f: _Families, r: SidecarReading):
    b = {"baas": r.name}
    f.gauge("gnbctl_baas_up", "1 when the BaaS answered GetStats in the last refresh",
            b, 1 if r.up else 0)
    if not r.up:
        return
    for key, (name, doc) in _BAAS_GAUGES.items():
        f.gauge(name, doc, b, r.stats[key])
    for key, value in r.stats["counters"].items():
        if key == "dropped":
            for reason, n in sorted(value.items()):
                f.counter("gnb_baas_dropped_frames_total", "frames the BaaS dropped without "
                          "effect, by reason", {**b, "reason": reason}, n)
        elif key in _BAAS_RELEASED:
            f.counter("gnb_baas_released_pdus_total", "PDUs released other than by an ACK, "
                      "by cause (rlf, bound, flush)", {**b, "cause": _BAAS_RELEASED[key]},
                      value)
        else:
            name, doc = _BAAS_COUNTERS.get(key, (f"gnb_baas_{key}_total", f"BaaS {key}"))
            f.counter(name, doc, b, value)


def _power_families(f: _Families, r: SidecarReading, names: set[str]):
    p = {"power": r.name}
    f.gauge("gnbctl_power_up", "1 when the power sidecar answered in the last refresh", p,
            1 if r.up else 0)
    if not r.up:
        return
    for t in r.telemetry["targets"]:
        if t["name"] not in names:
            continue
        labels = {"target": t["name"]}
        f.gauge("gnb_power_target_up", "1 when the power sidecar reached the target's "
                "control socket", labels, 1 if t["reachable"] else 0)
        if not t["reachable"]:
            continue
        f.gauge("gnb_power_modelled_watts", "the target's lcores' modelled power above the "
                "deepest idle, over the sidecar's window", labels, t["modelled_watts"])
        for lc in t["lcores"]:
            lcore = {**labels, "lcore": lc["lcore"]}
            f.gauge("gnb_power_lcore_mode", "1 for the lcore's governor mode",
                    {**lcore, "mode": lc["mode"]}, 1)
            f.gauge("gnb_power_lcore_pstate", "the lcore's P-state (0: fastest)", lcore,
                    lc["pstate"])
            f.gauge("gnb_power_lcore_frequency_hertz", "the lcore's core frequency", lcore,
                    lc["freq_mhz"] * 1e6)
            f.gauge("gnb_power_lcore_modelled_watts", "the lcore's modelled power over the "
                    "sidecar's window", lcore, lc["model"]["watts"])
            f.counter("gnb_power_lcore_pstate_transitions_total", "P-state changes", lcore,
                      lc["pstate_transitions"])
            for state in ("busy", "paused", "asleep", "work"):
                f.counter(f"gnb_power_lcore_{state}_seconds_total", {
                    "busy": "time polling or working (the governor's busy)",
                    "paused": "time in pauses between empty polls",
                    "asleep": "time asleep",
                    "work": "time in rounds that received frames"}[state], lcore,
                    lc[f"{state}_ns"] / 1e9)
            if lc["proc"]["available"]:
                f.gauge("gnb_power_lcore_cpu_ratio", "the lcore thread's CPU time over the "
                        "sidecar's window / the window (1: a whole CPU)", lcore,
                        lc["proc"]["cpu_share"])
    for reading in r.readings["readings"]:
        if reading["watts"] is None or reading["source"] in ("model", "cpu_time"):
            continue
        f.gauge("gnb_power_meter_watts", "a power meter of the machine (rapl, "
                "acpi_power_meter, hwmon), averaged over its window",
                {"source": reading["source"], "name": reading["name"]}, reading["watts"])


class Collector:
    """The prometheus_client collector: the last snapshot as families. It
    runs in the HTTP server's thread; the snapshot is replaced whole, never
    changed, so a scrape sees one refresh. A snapshot's families are made
    once, at its first scrape: with --per-drb they can be 786,000 samples
    (65,536 DRBs counting in three counters on two targets), ~2.7 s to
    make on an AMD EPYC, which a second scrape or scraper of the same
    snapshot need not pay again (formatting them is prometheus_client's,
    per scrape)."""

    def __init__(self, configs: list[TargetConfig]):
        self.snapshot: Snapshot | None = None
        self.names = {c.name for c in configs}
        self._made: tuple[Snapshot, list] | None = None

    def collect(self):
        s = self.snapshot
        if s is None:
            return      # before the first refresh: nothing read yet
        made = self._made
        if made is None or made[0] is not s:
            made = self._made = (s, self._families(s))
        yield from made[1]

    def _families(self, s: Snapshot) -> list:
        f = _Families()
        f.gauge("gnbctl_refresh_timestamp_seconds", "when the last refresh ended (Unix "
                "time): the values are this old", {}, s.time)
        f.gauge("gnbctl_refresh_duration_seconds", "how long the last refresh took", {},
                s.seconds)
        for r in s.targets:
            _target_families(f, r)
        if s.baas is not None:
            _baas_families(f, s.baas)
        if s.power is not None:
            _power_families(f, s.power, self.names)
        return list(f.made.values())


# ---- the command ------------------------------------------------------------------

async def _first(awaitable, stop: asyncio.Event):
    """awaitable's result, or None once `stop` is set (it is cancelled)."""
    task = asyncio.ensure_future(awaitable)
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not task.done():
        task.cancel()
        return None
    return task.result()


def _transitions(before: Snapshot | None, now: Snapshot) -> list[str]:
    """One line for each target, BaaS or sidecar that went down (with why)
    or came back since the last refresh."""
    def states(s: Snapshot | None) -> dict[str, tuple[bool, str | None]]:
        if s is None:
            return {}
        found = {r.config.name: (r.up, r.error) for r in s.targets}
        for r in s.targets:
            if r.control is not None:
                found[f"{r.config.name} control socket"] = (r.control.up, r.control.error)
        for side in (s.baas, s.power):
            if side is not None:
                found[side.name] = (side.up, side.error)
        return found
    old, new = states(before), states(now)
    lines = []
    for name, (up, error) in new.items():
        was = old.get(name, (True, None))[0]
        if was and not up:
            lines.append(f"gnbctl metrics: {name} down: {error}")
        elif not was and up:
            lines.append(f"gnbctl metrics: {name} up again")
    return lines


async def serve(topology: Topology, configs: list[TargetConfig], listen: Listen,
                per_drb: bool, interval: float, stop: asyncio.Event, note) -> dict:
    """Listens on `listen`, then refreshes every `interval` seconds until
    `stop` is set; note(line) announces the address once the first
    refresh is there. {"listen", "refreshes"}."""
    if not interval > 0:
        raise GnbctlError(f"--interval must be a number of seconds above 0, not {interval:g}")
    collector = Collector(configs)
    from prometheus_client.registry import CollectorRegistry
    registry = CollectorRegistry()
    registry.register(collector)
    server = _serve_http(listen, registry)
    refreshes = 0
    try:
        while not stop.is_set():
            started = time.monotonic()
            snapshot = await _first(refresh(topology, configs, per_drb), stop)
            if snapshot is None:
                break
            for line in _transitions(collector.snapshot, snapshot):
                print(line, file=sys.stderr, flush=True)
            collector.snapshot = snapshot
            refreshes += 1
            if refreshes == 1:
                note(f"serving {listen.url(server.server_port)} (every {interval:g} s"
                     f"{', per DRB' if per_drb else ''}): {len(configs)} "
                     f"target{'' if len(configs) == 1 else 's'}"
                     f"{', the BaaS' if topology.baas else ''}"
                     f"{', the power sidecar' if topology.power else ''}")
            await _first(asyncio.sleep(max(0.0, interval - (time.monotonic() - started))),
                         stop)
    finally:
        server.shutdown()
        server.server_close()
    return {"listen": f"{listen.host}:{server.server_port}", "refreshes": refreshes}
